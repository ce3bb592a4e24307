# codecal's canonical text of a Python value, shared by the behaviour probe
# (`behaviour.py`) and the Turbulence judge's fingerprint
# (`turbulence/judge.py`), each program this text followed by its own: sets
# and dicts in sorted order, floats to 9 significant digits, no memory
# addresses, so that equal plain values give equal texts whatever the hash
# seed, and a text never depends on a reference answer.


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


