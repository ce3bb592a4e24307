
# codecal's behaviour probe, appended to a program that defines the function
# under test (or to nothing, for a value). It writes one line to standard
# error: "codecal-behaviour " and a JSON list with a short digest of what
# happened on each input. Values are written canonically (sets and dicts in
# sorted order, floats to 9 significant digits, no memory addresses), so
# that the digest does not depend on hash randomisation or on where an
# object sits.
import hashlib as _codecal_hashlib
import json as _codecal_json
import signal as _codecal_signal
import sys as _codecal_sys


def _codecal_canonical(value, depth=0):
    if depth > 30:
        return "..."
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return "nan" if value != value else format(value, ".9g")
    if isinstance(value, complex):
        return "complex(%s,%s)" % (_codecal_canonical(value.real), _codecal_canonical(value.imag))
    if isinstance(value, (str, bytes)):
        return repr(value)
    if isinstance(value, list):
        return "[%s]" % ",".join(_codecal_canonical(v, depth + 1) for v in value)
    if isinstance(value, tuple):
        return "(%s)" % ",".join(_codecal_canonical(v, depth + 1) for v in value)
    if isinstance(value, (set, frozenset)):
        return "{%s}" % ",".join(sorted(_codecal_canonical(v, depth + 1) for v in value))
    if isinstance(value, dict):
        items = (
            _codecal_canonical(k, depth + 1) + ":" + _codecal_canonical(v, depth + 1)
            for k, v in value.items()
        )
        return "dict{%s}" % ",".join(sorted(items))
    name = type(value).__name__
    try:
        text = repr(value)
    except BaseException:
        return "<%s>" % name
    return "<%s>" % name if " at 0x" in text else text


class _CodecalTimeout(BaseException):
    pass


def _codecal_alarm(signum, frame):
    raise _CodecalTimeout()


def _codecal_outcome(thunk, seconds):
    """What calling thunk gave: '=' and its canonical value, or '!' and the
    exception's type, or '!timeout' past the time allowed."""
    _codecal_signal.signal(_codecal_signal.SIGALRM, _codecal_alarm)
    try:
        _codecal_signal.setitimer(_codecal_signal.ITIMER_REAL, seconds)
        try:
            return "=" + _codecal_canonical(thunk())
        finally:
            _codecal_signal.setitimer(_codecal_signal.ITIMER_REAL, 0)
    except _CodecalTimeout:
        return "!timeout"
    except BaseException as error:
        return "!" + type(error).__name__


def _codecal_report(outcomes):
    digests = [
        _codecal_hashlib.sha256(o.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        for o in outcomes
    ]
    _codecal_sys.stderr.write("codecal-behaviour " + _codecal_json.dumps(digests) + "\n")


def _codecal_arguments(*args, **kwargs):
    return args, kwargs


def _codecal_call_each(function, inputs, seconds):
    """Calls function on each argument list (source text, evaluated afresh
    for every call so that a mutating call cannot change the next input)."""
    def call(source):
        args, kwargs = eval("_codecal_arguments(" + source + ")", {"_codecal_arguments": _codecal_arguments})
        return function(*args, **kwargs)
    _codecal_report([_codecal_outcome(lambda: call(s), seconds) for s in inputs])


def _codecal_value(source, arguments, seconds):
    """The value of an answer that is an expression (CRUXEval's output) or
    an argument list (CRUXEval's input)."""
    if arguments:
        thunk = lambda: eval("_codecal_arguments(" + source + ")", {"_codecal_arguments": _codecal_arguments})
    else:
        thunk = lambda: eval(source, {})
    _codecal_report([_codecal_outcome(thunk, seconds)])
