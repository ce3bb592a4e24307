"""Q53 'palindrome_of_length_at_least_n': the set of substrings of length >= $0 that are
palindromes (case-insensitive) made only of English letters.

Reading:
- Every substring counts, so a long palindrome brings the shorter ones at its centre
  (length >= $0) along with it.
- "Only English letters": every character of the substring is an ASCII letter. The fuzz
  strings are ASCII only, so str.isalpha() and an ascii_letters test agree.
- Case-insensitive: a substring counts when its lower-cased form reads the same
  backwards. The text does not say in which case to return the palindromes: `same`
  accepts the substrings as they occur in the string (what `solution` returns), or all of
  them lower-cased, or all upper-cased. The result must be a set (frozenset compares
  equal too); an empty set when there is none.
README: i > 2.
"""
import random
import string

FUNCTION = "palindrome_of_length_at_least_n"
LETTERS = frozenset(string.ascii_letters)
NON_LETTERS = "0123456789 .,;:!?-_#@*"


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, (list, tuple)) and len(params) == 1):
        return False
    i = params[0]
    return isinstance(i, int) and not isinstance(i, bool) and i > 2


def random_params(rng):
    return [rng.choice([rng.randint(3, 12), rng.randint(3, 150)])]


def solution(params):
    n = params[0]

    def palindrome_of_length_at_least_n(s):
        low = s.lower()
        size = len(s)
        out = set()
        for c2 in range(2 * size - 1):  # centres, on letters and between them
            lo = c2 // 2
            hi = lo + c2 % 2
            while lo >= 0 and hi < size and s[lo] in LETTERS and s[hi] in LETTERS and low[lo] == low[hi]:
                if hi - lo + 1 >= n:
                    out.add(s[lo : hi + 1])
                lo -= 1
                hi += 1
        return out

    return palindrome_of_length_at_least_n


def same(got, want):
    if not isinstance(got, (set, frozenset)):
        return False
    return got == want or got == {w.lower() for w in want} or got == {w.upper() for w in want}


def _random_case(rng, ch):
    return ch.upper() if rng.random() < 0.5 else ch


def _palindrome(rng, length, mixed=True, middle=None):
    half = [rng.choice(string.ascii_lowercase) for _ in range(length // 2)]
    mid = [middle if middle is not None else rng.choice(string.ascii_lowercase)] if length % 2 else []
    chars = [_random_case(rng, c) for c in half + mid + half[::-1]]
    if mixed and length >= 2:
        # not a palindrome when case matters
        chars[0] = chars[0].lower()
        chars[-1] = chars[-1].upper()
    return chars


def _cyclic(rng, length):
    """Letters in alphabet order, random case: no palindrome of length >= 2."""
    start = rng.randrange(26)
    return [_random_case(rng, string.ascii_lowercase[(start + k) % 26]) for k in range(length)]


def _noise(rng, length, letter_share):
    return [
        _random_case(rng, rng.choice(string.ascii_lowercase)) if rng.random() < letter_share else rng.choice(NON_LETTERS)
        for _ in range(length)
    ]


def _plant(s, start, chars):
    if start >= 0 and start + len(chars) <= len(s):
        s[start : start + len(chars)] = chars


def inputs(params, seed):
    n = params[0]
    rng = random.Random(f"q53-{seed}")
    if seed == 0:
        return ("",)
    if seed == 1:  # one letter repeated, one short of the length
        return ("".join(_random_case(rng, "a") for _ in range(n - 1)),)
    if seed == 2:  # the whole string is one palindrome of exactly the length
        return ("".join(_palindrome(rng, n)),)
    if seed == 3:  # only a palindrome one shorter than the length
        s = _cyclic(rng, n + 8)
        _plant(s, 2, _palindrome(rng, n - 1))
        return ("".join(s),)
    if seed == 4:  # long enough, but a non-letter inside
        s = _cyclic(rng, n + rng.randint(2, 10))
        pal = _palindrome(rng, n, middle=rng.choice(NON_LETTERS))
        if n % 2 == 0:
            pal[n // 2 - 1] = pal[n // 2] = rng.choice(NON_LETTERS)
        _plant(s, 1, pal)
        return ("".join(s),)
    if seed == 5:  # the same palindrome twice, in different case, and a longer one
        s = _cyclic(rng, 3 * n + 12)
        pal = _palindrome(rng, n)
        _plant(s, 0, pal)
        _plant(s, n + 4, [c.swapcase() if rng.random() < 0.5 else c for c in pal])
        _plant(s, 2 * n + 8, _palindrome(rng, n + 3))
        return ("".join(s),)
    if seed == 6:  # a palindrome of length n + 1 exactly (no length-n one inside it)
        s = _cyclic(rng, n + rng.randint(3, 12))
        _plant(s, rng.randint(0, len(s) - n - 1), _palindrome(rng, n + 1))
        return ("".join(s),)
    if seed == 7:  # a block of one letter in mixed case
        letter = rng.choice(string.ascii_lowercase)
        return ("".join(_random_case(rng, letter) for _ in range(n + rng.randint(0, 8))),)
    size = max(0, n + rng.randint(-2, 30))
    share = rng.choice([0.5, 0.7, 0.9])
    s = _noise(rng, size, share) if rng.random() < 0.6 else _cyclic(rng, size)
    for _ in range(rng.randint(1, 4)):
        length = n + rng.choice([-2, -1, 0, 0, 1, 2, 3, 6])
        if length <= size:
            _plant(s, rng.randint(0, size - length), _palindrome(rng, length, mixed=rng.random() < 0.7))
    return ("".join(s),)


EXAMPLES = [
    ([3], ("racecar",), {"cec", "aceca", "racecar"}),
    ([3], ("abc",), set()),
    ([4], ("xAbBay",), {"AbBa"}),
    ([3], ("aaaa",), {"aaa", "aaaa"}),
    ([3], ("aa1aa",), set()),
    ([5], ("Noon level",), {"level"}),
]


def correct_answer(params):
    n = params[0]
    return (
        "def palindrome_of_length_at_least_n(s):\n"
        "    found = set()\n"
        "    for a in range(len(s)):\n"
        "        b = a\n"
        "        while b < len(s) and s[b].isascii() and s[b].isalpha():\n"
        "            b += 1\n"
        f"        for e in range(a + {n}, b + 1):\n"
        "            w = s[a:e].lower()\n"
        "            if w == w[::-1]:\n"
        "                found.add(w)\n"
        "    return found\n"
    )


def wrong_answer(params):
    n = params[0]
    # Off by one: "longer than" instead of "at least".
    return (
        "def palindrome_of_length_at_least_n(s):\n"
        "    result = set()\n"
        "    for a in range(len(s)):\n"
        f"        for b in range(a + {n} + 1, len(s) + 1):\n"
        "            sub = s[a:b]\n"
        "            if sub.isalpha() and sub.lower() == sub.lower()[::-1]:\n"
        "                result.add(sub)\n"
        "    return result\n"
    )
