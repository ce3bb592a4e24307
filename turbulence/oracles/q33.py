"""Q33 'return_vowels': the vowels of s[$0:$1] that are > '$2' and <= '$3', as a list.

Reading: the vowels are the ten English vowel letters a, e, i, o, u and A, E, I,
O, U ('y' is not one); "greater than" / "smaller than or equal to" are plain
character (code point) comparisons, so case matters ('a' > 'Z'). The list keeps
every occurrence (duplicates included) in string order; it is a list (strict).
The string is at least $1 characters long (the question presumes index $1 - 1
exists), so slicing and indexing answers agree. README: 0 <= i < j, m < n
(the row is [i, j, m, n]).
"""
import random

FUNCTION = "return_vowels"

VOWELS = "aeiouAEIOU"
PRINTABLE = [chr(c) for c in range(32, 127)]
CONSONANTS = "bcdfghjklmnpqrstvwxyzBCDFGHJKLMNPQRSTVWXYZ"


def arity(params):
    return 1


def _char(c):
    return isinstance(c, str) and len(c) == 1


def valid(params):
    if not isinstance(params, list) or len(params) != 4:
        return False
    i, j, m, n = params
    return (
        type(i) is int
        and type(j) is int
        and 0 <= i < j
        and _char(m)
        and _char(n)
        and m < n
    )


def random_params(rng):
    i = rng.randint(0, 150)
    j = rng.randint(i + 1, i + 120)
    a, b = sorted(rng.sample(range(33, 127), 2))
    return [i, j, chr(a), chr(b)]


def solution(params):
    i, j, m, n = params

    def return_vowels(s):
        return [c for c in s[i:j] if c in VOWELS and m < c <= n]

    return return_vowels


def _interesting(m, n):
    """Characters that sit on the edges of the comparison."""
    out = [m, n]
    for c in (ord(m) - 1, ord(m) + 1, ord(n) - 1, ord(n) + 1):
        if 32 <= c < 127:
            out.append(chr(c))
    return out


def inputs(params, seed):
    i, j, m, n = params
    rng = random.Random(f"q33-{seed}")
    length = j if seed in (0, 1) else j + rng.randint(0, 12)
    inside = [v for v in VOWELS if m < v <= n]  # vowels the answer must keep
    edges = _interesting(m, n)
    if seed == 0:
        # Exactly j characters, plenty of vowels of both cases.
        pool = list(VOWELS) * 3 + edges + PRINTABLE
        s = [rng.choice(pool) for _ in range(length)]
    elif seed == 1:
        # No vowel at all: the result is empty.
        pool = list(CONSONANTS) + [c for c in PRINTABLE if c not in VOWELS]
        s = [rng.choice(pool) for _ in range(length)]
    elif seed == 2:
        # Only vowels, both cases.
        s = [rng.choice(VOWELS) for _ in range(length)]
    elif seed == 3:
        # Kept vowels only outside the range (before i, at j and after):
        # the result is empty unless the range holds some by chance (it does not).
        others = [c for c in PRINTABLE if c not in inside]
        s = [rng.choice(others) for _ in range(length)]
        for k in range(length):
            if (k < i or k >= j) and inside:
                s[k] = rng.choice(inside)
    elif seed == 4:
        # The bounds themselves (m is excluded, n included) and their neighbours.
        s = [rng.choice(edges + list(VOWELS) + ["y", "Y"]) for _ in range(length)]
    else:
        style = seed % 4
        if style == 0:
            pool = PRINTABLE
        elif style == 1:
            pool = list(VOWELS) * 4 + list(CONSONANTS) + edges * 2
        elif style == 2:
            pool = (inside or list(VOWELS)) * 3 + list(VOWELS) + edges * 3 + ["y", "Y"]
        else:
            pool = list("aeiouAEIOU") + list(CONSONANTS) + list("0123456789 !?.,")
        s = [rng.choice(pool) for _ in range(length)]
        # Sometimes put kept vowels right at the edges of the range.
        if inside and rng.random() < 0.6:
            s[i] = rng.choice(inside)
            if j < length:
                s[j] = rng.choice(inside)
            if i > 0:
                s[i - 1] = rng.choice(inside)
            s[j - 1] = rng.choice(inside)
        # 'y' is no vowel.
        if rng.random() < 0.3:
            s[rng.randint(i, j - 1)] = rng.choice("yY")
    return ("".join(s),)


EXAMPLES = [
    ([0, 5, "a", "z"], ("aeiou",), ["e", "i", "o", "u"]),
    ([1, 4, "A", "z"], ("AEbOa",), ["E", "O"]),
    ([0, 3, "#", "("], ("a#e",), []),
    ([2, 6, "E", "e"], ("xxEeaAeE",), ["e", "a"]),
    ([5, 6, "3", "^"], ("uuuuuU",), ["U"]),
    ([0, 4, "a", "u"], ("eeoe",), ["e", "e", "o", "e"]),
]


def correct_answer(params):
    i, j, m, n = params
    return (
        f"def return_vowels(text):\n"
        f"    result = []\n"
        f"    for k in range({i}, min({j}, len(text))):\n"
        f"        ch = text[k]\n"
        f"        if ch.lower() in ('a', 'e', 'i', 'o', 'u') and ch.isascii() and ord(ch) > {ord(m)} and ord(ch) <= {ord(n)}:\n"
        f"            result.append(ch)\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, j, m, n = params
    # Index j taken as inclusive (walks one index too far).
    return (
        f"def return_vowels(s):\n"
        f"    out = []\n"
        f"    for k in range({i}, {j} + 1):\n"
        f"        if s[k] in 'aeiouAEIOU' and {m!r} < s[k] <= {n!r}:\n"
        f"            out.append(s[k])\n"
        f"    return out\n"
    )
