
# codecal's behaviour probe, appended to a program that defines the function
# under test (or to nothing, for a value), after `canonical.py`. It writes
# one line to standard error: "codecal-behaviour " and a JSON list with a
# short digest of what happened on each input. Values are written by
# `_codecal_canonical`, so that the digest does not depend on hash
# randomisation or on where an object sits. Each call is limited in CPU
# seconds, not wall-clock ones, so that a key does not depend on how busy
# the machine is (a call that sleeps is stopped by the sandbox's wall clock).
import hashlib as _codecal_hashlib
import json as _codecal_json
import signal as _codecal_signal
import sys as _codecal_sys


class _CodecalTimeout(BaseException):
    pass


def _codecal_alarm(signum, frame):
    raise _CodecalTimeout()


def _codecal_outcome(thunk, seconds):
    """What calling thunk gave: '=' and its canonical value, or '!' and the
    exception's type, or '!timeout' past the CPU seconds allowed."""
    _codecal_signal.signal(_codecal_signal.SIGPROF, _codecal_alarm)
    try:
        _codecal_signal.setitimer(_codecal_signal.ITIMER_PROF, seconds)
        try:
            return "=" + _codecal_canonical(thunk())
        finally:
            _codecal_signal.setitimer(_codecal_signal.ITIMER_PROF, 0)
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
