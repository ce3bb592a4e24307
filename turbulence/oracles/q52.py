"""Q52 'palindrome_of_length_n': the set of substrings of length exactly $0 that are
palindromes (case-insensitive) made only of English letters.

Reading:
- "Only English letters": every character of the substring is an ASCII letter. The fuzz
  strings are ASCII only, so str.isalpha() and an ascii_letters test agree.
- Case-insensitive: a substring counts when its lower-cased form reads the same
  backwards. The text does not say in which case to return the palindromes: `same`
  accepts the substrings as they occur in the string (what `solution` returns), or all of
  them lower-cased, or all upper-cased. The result must be a set (frozenset compares
  equal too); an empty set when there is none (also for strings shorter than $0).
README: i > 2.
"""
import random
import string

FUNCTION = "palindrome_of_length_n"
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
    return [rng.choice([rng.randint(3, 12), rng.randint(3, 120), rng.randint(3, 480)])]


def solution(params):
    n = params[0]

    def palindrome_of_length_n(s):
        # letters_up_to[k]: number of consecutive letters ending at position k - 1
        run = [0] * (len(s) + 1)
        for k, ch in enumerate(s):
            run[k + 1] = run[k] + 1 if ch in LETTERS else 0
        out = set()
        for end in range(n, len(s) + 1):
            if run[end] >= n:
                piece = s[end - n : end]
                low = piece.lower()
                if low == low[::-1]:
                    out.add(piece)
        return out

    return palindrome_of_length_n


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
    rng = random.Random(f"q52-{seed}")
    if seed == 0:
        return ("",)
    if seed == 1:  # one letter repeated, one short of the length
        return ("".join(_random_case(rng, "a") for _ in range(n - 1)),)
    if seed == 2:  # the whole string is one palindrome of the length
        return ("".join(_palindrome(rng, n)),)
    if seed == 3:  # palindromes one shorter and one longer only
        s = _cyclic(rng, 2 * n + 8)
        _plant(s, 1, _palindrome(rng, n - 1))
        _plant(s, n + 3, _palindrome(rng, n + 1))
        return ("".join(s),)
    if seed == 4:  # right length, but a non-letter inside
        s = _cyclic(rng, n + rng.randint(2, 10))
        pal = _palindrome(rng, n, middle=rng.choice(NON_LETTERS))
        if n % 2 == 0:
            pal[n // 2 - 1] = pal[n // 2] = rng.choice(NON_LETTERS)
        _plant(s, 1, pal)
        return ("".join(s),)
    if seed == 5:  # the same palindrome twice, in different case
        s = _cyclic(rng, 2 * n + 6)
        pal = _palindrome(rng, n)
        _plant(s, 0, pal)
        _plant(s, n + 6, [c.swapcase() if rng.random() < 0.5 else c for c in pal])
        return ("".join(s),)
    if seed == 6:  # a longer palindrome holds one of the length at its centre
        s = _cyclic(rng, n + rng.randint(4, 12))
        _plant(s, rng.randint(0, len(s) - n - 2), _palindrome(rng, n + 2))
        return ("".join(s),)
    if seed == 7:  # a block of one letter in mixed case
        letter = rng.choice(string.ascii_lowercase)
        return ("".join(_random_case(rng, letter) for _ in range(n + rng.randint(0, 6))),)
    size = max(0, n + rng.randint(-2, 30))
    share = rng.choice([0.5, 0.7, 0.9])
    s = _noise(rng, size, share) if rng.random() < 0.6 else _cyclic(rng, size)
    for _ in range(rng.randint(1, 4)):
        length = n + rng.choice([-1, 0, 0, 0, 1, 2])
        if length <= size:
            _plant(s, rng.randint(0, size - length), _palindrome(rng, length, mixed=rng.random() < 0.7))
    return ("".join(s),)


EXAMPLES = [
    ([3], ("abcba",), {"bcb"}),
    ([3], ("",), set()),
    ([4], ("Abba racecar",), {"Abba"}),
    ([5], ("racecar",), {"aceca"}),
    ([3], ("a1a aba ABA",), {"aba", "ABA"}),
    ([3], ("ab",), set()),
]


def correct_answer(params):
    n = params[0]
    return (
        "import re\n"
        "def palindrome_of_length_n(text):\n"
        "    found = set()\n"
        "    for run in re.findall('[A-Za-z]+', text):\n"
        f"        for k in range(len(run) - {n} + 1):\n"
        f"            word = run[k:k + {n}].lower()\n"
        "            lo, hi = 0, len(word) - 1\n"
        "            while lo < hi and word[lo] == word[hi]:\n"
        "                lo += 1\n"
        "                hi -= 1\n"
        "            if lo >= hi:\n"
        "                found.add(word)\n"
        "    return found\n"
    )


def wrong_answer(params):
    n = params[0]
    # Forgets case-insensitivity.
    return (
        "def palindrome_of_length_n(s):\n"
        "    result = set()\n"
        f"    for k in range(len(s) - {n} + 1):\n"
        f"        sub = s[k:k + {n}]\n"
        "        if sub.isalpha() and sub == sub[::-1]:\n"
        "            result.add(sub)\n"
        "    return result\n"
    )
