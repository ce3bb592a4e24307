"""Q56 'all_substring_of_size_n': distinct substrings of length $0 whose characters are all different.

Reading: substrings are contiguous runs s[k:k+$0]; one qualifies when its $0
characters are pairwise different (case-sensitive: 'a' and 'A' are different
characters). Each qualifying substring appears once in the result ("distinct"), as a
list of str; [] when the string is shorter than $0 or no run qualifies. Order does not
matter, so `same` compares sorted lists; a result with a repeated entry is wrong.
Inputs are any Python strings (for lengths above the 94 printable ASCII characters the
generator also uses Greek and Cyrillic letters).
"""
import random
import string

FUNCTION = "all_substring_of_size_n"

# A pool of distinct characters: printable ASCII (letters of both cases first) then
# Greek and Cyrillic letters, enough for windows of more than 150 distinct characters.
_POOL = (
    string.ascii_lowercase
    + string.ascii_uppercase
    + string.digits
    + string.punctuation
    + " "
    + "".join(chr(c) for c in range(0x3B1, 0x3CA))
    + "".join(chr(c) for c in range(0x391, 0x3AA) if c != 0x3A2)
    + "".join(chr(c) for c in range(0x430, 0x450))
    + "".join(chr(c) for c in range(0x410, 0x430))
)
assert len(set(_POOL)) == len(_POOL)


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 1:
        return False
    return type(params[0]) is int and params[0] > 1


def random_params(rng):
    return [rng.randint(2, 20) if rng.random() < 0.6 else rng.randint(2, 150)]


def solution(params):
    (n,) = params

    def all_substring_of_size_n(s):
        seen = set()
        out = []
        for k in range(len(s) - n + 1):
            piece = s[k : k + n]
            if len(set(piece)) == n and piece not in seen:
                seen.add(piece)
                out.append(piece)
        return out

    return all_substring_of_size_n


def same(got, want):
    if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
        return False
    return sorted(got) == sorted(want)


def _alphabet(size, rng, mixed_case=True):
    size = min(size, len(_POOL))
    if mixed_case and size <= 52 and rng.random() < 0.5:
        # Pairs like 'a'/'A' so that a case-insensitive answer shows.
        letters = []
        for c in string.ascii_lowercase:
            letters += [c, c.upper()]
        return letters[:size]
    chars = list(_POOL[: max(size, 40)])
    rng.shuffle(chars)
    return chars[:size]


def _walk(length, window, alphabet, rng, slip):
    """A string that mostly avoids repeating a character within `window`, slipping sometimes."""
    out = []
    for _ in range(length):
        recent = set(out[-(window - 1):]) if window > 1 else set()
        fresh = [c for c in alphabet if c not in recent]
        if fresh and rng.random() >= slip:
            out.append(rng.choice(fresh))
        else:
            out.append(rng.choice(alphabet))
    return "".join(out)


def inputs(params, seed):
    (n,) = params
    rng = random.Random(f"q56-{seed}")
    distinct = list(_POOL[:n]) if n <= len(_POOL) else list(_POOL)
    if seed == 0:
        return ("",)
    if seed == 1:
        # One character too short.
        return ("".join(distinct[: n - 1]),)
    if seed == 2:
        # Exactly one window, all distinct.
        return ("".join(distinct[:n]),)
    if seed == 3:
        # w + w: the window w appears twice (at 0 and at n), must be listed once.
        w = "".join(distinct[:n])
        return (w + w,)
    if seed == 4:
        return ("a" * (2 * n),)
    if seed == 5:
        # Case sensitivity: 'aAbB...' has distinct characters only when case counts.
        letters = "".join(c + c.upper() for c in string.ascii_lowercase)
        return ((letters * (n // 52 + 2))[: n + 3],)
    if seed == 6:
        # A repeated character right at the last position of the only full window.
        w = distinct[: n - 1] + [distinct[0]]
        return ("".join(w),)
    if seed == 7:
        # Windows repeat periodically (alphabet of exactly n characters).
        return (_walk(3 * n, n, distinct[:n], rng, 0.0),)
    length = rng.randint(max(0, n - 2), 3 * n + 5) if rng.random() < 0.2 else rng.randint(n, 2 * n + 5)
    size = rng.randint(max(2, n - 2), n + 4) if rng.random() < 0.3 else rng.randint(n, n + 4)
    alphabet = _alphabet(size, rng)
    slip = rng.choice((0.0, 0.0, 0.5 / n, 1.0 / n, 3.0 / n, 0.3))
    s = _walk(length, n, alphabet, rng, slip)
    if rng.random() < 0.3 and s:
        # Copy a chunk further on, so that some window occurs twice.
        a = rng.randrange(len(s))
        b = rng.randint(a, len(s))
        s = s + s[a:b]
    return (s,)


EXAMPLES = [
    ([2], ("",), []),
    ([3], ("abcabc",), ["abc", "bca", "cab"]),
    ([2], ("aaa",), []),
    ([2], ("aAa",), ["aA", "Aa"]),
    ([4], ("abc",), []),
    ([5], ("hello world",), [" worl", "world"]),
    ([3], ("abc",), ["abc"]),
]


def correct_answer(params):
    (n,) = params
    return (
        f"def all_substring_of_size_n(text):\n"
        f"    n = {n}\n"
        f"    found = set()\n"
        f"    left = 0\n"
        f"    last = {{}}\n"
        f"    for right, ch in enumerate(text):\n"
        f"        if ch in last and last[ch] >= left:\n"
        f"            left = last[ch] + 1\n"
        f"        last[ch] = right\n"
        f"        if right - left + 1 >= n:\n"
        f"            found.add(text[right - n + 1:right + 1])\n"
        f"    return sorted(found)\n"
    )


def wrong_answer(params):
    (n,) = params
    # Forgets "distinct": a substring that occurs twice is listed twice.
    return (
        f"def all_substring_of_size_n(s):\n"
        f"    return [s[i:i + {n}] for i in range(len(s) - {n} + 1) if len(set(s[i:i + {n}])) == {n}]\n"
    )
