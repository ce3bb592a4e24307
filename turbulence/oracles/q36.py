"""Q36 'filter_chars': drop every character found strictly between indices $2 and $3 that lies strictly between '$0' and '$1'.

Reading: the characters at indices $2 + 1 .. $3 - 1 (both indices exclusive)
that are > '$0' and < '$1' (strict, plain code-point comparison, so case
matters) are removed everywhere in the string, including outside the range;
the other characters keep their order. The string is at least $3 characters
long (the question presumes the indices exist). README: m + 1 < n,
0 <= i + 1 < j (the row is [m, n, i, j]).
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
        and 0 <= i
        and i + 1 < j
    )


def random_params(rng):
    a = rng.randint(33, 124)
    b = rng.randint(a + 2, 126)
    i = rng.randint(0, 150)
    return [chr(a), chr(b), i, rng.randint(i + 2, i + 120)]


def solution(params):
    m, n, i, j = params

    def filter_chars(s):
        drop = {c for c in s[i + 1 : j] if m < c < n}
        return "".join(c for c in s if c not in drop)

    return filter_chars


def _pools(m, n):
    inside = [chr(c) for c in range(ord(m) + 1, ord(n))]
    outside = [c for c in PRINTABLE if c < m or c > n] or ["\t", "\n", chr(127)]
    return inside, [m, n], outside


def inputs(params, seed):
    m, n, i, j = params
    rng = random.Random(f"q36-{seed}")
    inside, bounds, outside = _pools(m, n)
    near = [inside[0], inside[-1]] + bounds
    length = j if seed in (0, 1) else j + rng.randint(0, 12)
    if seed == 0:
        s = [rng.choice(inside + bounds + outside) for _ in range(length)]
    elif seed == 1:
        # Only the bounds themselves inside the range: nothing is removed.
        s = [rng.choice(inside + outside) for _ in range(length)]
        for pos in range(i + 1, j):
            s[pos] = rng.choice(bounds)
    elif seed == 2:
        # Characters to remove sit at index i and at index j, and elsewhere
        # outside the range, but not inside it: nothing is removed.
        s = [rng.choice(outside + bounds) for _ in range(length)]
        s[i] = rng.choice(inside)
        if j < length:
            s[j] = rng.choice(inside)
        for pos in range(0, i):
            s[pos] = rng.choice(inside)
    elif seed == 3:
        # Everything lies strictly between the bounds: the range's characters go everywhere.
        s = [rng.choice(inside) for _ in range(length)]
    else:
        style = seed % 3
        if style == 0:
            pool = inside + bounds + outside
        elif style == 1:
            pool = near * 3 + outside[:5] + inside[:3]
        else:
            pool = rng.sample(PRINTABLE, rng.randint(3, 12)) + near
        s = [rng.choice(pool) for _ in range(length)]
        # Characters to keep or remove right on the edges of the range.
        if rng.random() < 0.6:
            s[i] = rng.choice(inside)
        if j < length and rng.random() < 0.6:
            s[j] = rng.choice(inside)
        if rng.random() < 0.5:
            s[rng.randint(i + 1, j - 1)] = rng.choice(near)
    return ("".join(s),)


EXAMPLES = [
    (["a", "e", 0, 4], ("abcde",), "ae"),
    (["a", "e", 0, 4], ("aeae",), "aeae"),
    (["A", "Z", 1, 3], ("QbQzQ",), "bz"),
    (["$", "?", 0, 3], ("1%?1",), "1?1"),
    (["h", "k", 2, 7], ("iijjhkij",), "hk"),
]


def correct_answer(params):
    m, n, i, j = params
    return (
        f"def filter_chars(text):\n"
        f"    low, high = ord({m!r}), ord({n!r})\n"
        f"    remove = []\n"
        f"    for k in range({i} + 1, {j}):\n"
        f"        if k < len(text) and low < ord(text[k]) < high and text[k] not in remove:\n"
        f"            remove.append(text[k])\n"
        f"    return ''.join(filter(lambda ch: ch not in remove, text))\n"
    )


def wrong_answer(params):
    m, n, i, j = params
    # Index i taken as inside the range (inclusive start).
    return (
        f"def filter_chars(s):\n"
        f"    chars = set(c for c in s[{i}:{j}] if {m!r} < c < {n!r})\n"
        f"    return ''.join(c for c in s if c not in chars)\n"
    )
