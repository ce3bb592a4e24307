"""Q37 'filter_chars': drop every character found at indices $2..$3 (inclusive) that lies between '$0' and '$1' (inclusive).

Reading: the characters at indices $2 .. $3 (both included) that are >= '$0'
and <= '$1' (plain code-point comparison, so case matters) are removed
everywhere in the string, including outside the range; the other characters
keep their order. The string is at least $3 + 1 characters long (the question
presumes index $3 exists). README: m + 1 < n, 0 <= i <= j (the row is
[m, n, i, j]).
"""
import random

FUNCTION = "filter_chars"

PRINTABLE = [chr(c) for c in range(32, 127)]


def arity(params):
    return 1


def _char(c):
    return isinstance(c, str) and len(c) == 1


def valid(params):
    if not isinstance(params, list) or len(params) != 4:
        return False
    m, n, i, j = params
    return (
        _char(m)
        and _char(n)
        and ord(m) + 1 < ord(n)
        and type(i) is int
        and type(j) is int
        and 0 <= i <= j
    )


def random_params(rng):
    a = rng.randint(33, 124)
    b = rng.randint(a + 2, 126)
    i = rng.randint(0, 150)
    return [chr(a), chr(b), i, rng.randint(i, i + 120)]


def solution(params):
    m, n, i, j = params

    def filter_chars(s):
        drop = {c for c in s[i : j + 1] if m <= c <= n}
        return "".join(c for c in s if c not in drop)

    return filter_chars


def _pools(m, n):
    inside = [chr(c) for c in range(ord(m), ord(n) + 1)]  # bounds included
    outside = [c for c in PRINTABLE if c < m or c > n] or ["\t", "\n", chr(127)]
    edges = [chr(c) for c in (ord(m) - 1, ord(n) + 1) if 32 <= c < 127 or c == 127]
    return inside, outside, edges


def inputs(params, seed):
    m, n, i, j = params
    rng = random.Random(f"q37-{seed}")
    inside, outside, edges = _pools(m, n)
    bounds = [m, n]
    length = j + 1 if seed in (0, 1, 2) else j + 1 + rng.randint(0, 12)
    if seed == 0:
        s = [rng.choice(inside + outside) for _ in range(length)]
    elif seed == 1:
        # Nothing to remove inside the range; removable characters elsewhere stay.
        s = [rng.choice(inside) for _ in range(length)]
        for pos in range(i, j + 1):
            s[pos] = rng.choice(outside + edges)
    elif seed == 2:
        # Exactly j + 1 characters; the only removable one in the range is at
        # index j (a bound), with copies of it outside the range.
        s = [rng.choice(outside) for _ in range(length)]
        s[j] = rng.choice(bounds)
        for pos in range(0, i):
            s[pos] = s[j] if pos % 2 == 0 else rng.choice(inside)
    elif seed == 3:
        # The only removable one in the range is at index i (the other bound).
        s = [rng.choice(outside) for _ in range(length)]
        s[i] = bounds[1] if rng.random() < 0.5 else bounds[0]
        for pos in range(j + 1, length):
            s[pos] = rng.choice(inside + [s[i]] * 3)
    elif seed == 4:
        # Everything removable: only characters outside the range may survive.
        s = [rng.choice(inside) for _ in range(length)]
    else:
        style = seed % 3
        if style == 0:
            pool = inside + outside
        elif style == 1:
            pool = bounds * 3 + edges * 3 + inside[1:3] + outside[:4]
        else:
            pool = rng.sample(PRINTABLE, rng.randint(3, 12)) + bounds + edges
        s = [rng.choice(pool) for _ in range(length)]
        # Removable characters right on (or just past) the edges of the range.
        if rng.random() < 0.5:
            s[j] = rng.choice(bounds)
        if rng.random() < 0.5:
            s[i] = rng.choice(bounds)
        if j + 1 < length and rng.random() < 0.5:
            s[j + 1] = rng.choice(inside)
        if i > 0 and rng.random() < 0.5:
            s[i - 1] = rng.choice(inside)
    return ("".join(s),)


EXAMPLES = [
    (["a", "c", 0, 2], ("abcd",), "d"),
    (["a", "c", 1, 1], ("bab",), "bb"),
    (["a", "c", 0, 1], ("dzab",), "dzab"),
    (["7", "o", 4, 4], ("7777o",), "7777"),
    (["B", "H", 7, 8], ("xyzxyzxHI",), "xyzxyzxI"),
]


def correct_answer(params):
    m, n, i, j = params
    return (
        f"def filter_chars(s):\n"
        f"    targets = set()\n"
        f"    for idx, ch in enumerate(s):\n"
        f"        if {i} <= idx <= {j} and ord({m!r}) <= ord(ch) <= ord({n!r}):\n"
        f"            targets.add(ch)\n"
        f"    out = []\n"
        f"    for ch in s:\n"
        f"        if ch in targets:\n"
        f"            continue\n"
        f"        out.append(ch)\n"
        f"    return ''.join(out)\n"
    )


def wrong_answer(params):
    m, n, i, j = params
    # Index j taken as exclusive.
    return (
        f"def filter_chars(s):\n"
        f"    chars = {{c for c in s[{i}:{j}] if {m!r} <= c <= {n!r}}}\n"
        f"    return ''.join(c for c in s if c not in chars)\n"
    )
