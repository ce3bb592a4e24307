"""Q47 'palindromes_of_specific_lengths': the set of letter-only palindromes, case-
insensitive, of lengths $2..$3 (both inclusive) lying inside s[$0 .. $1] (both inclusive).

Reading:
- The string is long enough to hold index $1 (the question presumes it); the window is
  s[$0 : $1 + 1] and a palindrome counts only when it lies wholly inside it.
- "Only English letters": every character of the palindrome is an ASCII letter. The
  fuzz strings are ASCII only, so str.isalpha() and an ascii_letters test agree.
- Case-insensitive: a substring counts when its lower-cased form reads the same
  backwards. The text does not say in which case to return the palindromes: `same`
  accepts the substrings as they occur in the string (what `solution` returns), or all of
  them lower-cased, or all upper-cased. The result must be a set (frozenset compares
  equal too); an empty set when there is none.
README: 0 <= i < j and 3 <= m < n (no row of the published 100 has a window shorter
than m).
"""
import random
import string

FUNCTION = "palindromes_of_specific_lengths"
LETTERS = frozenset(string.ascii_letters)
NON_LETTERS = "0123456789 .,;:!?-_#@*"


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, (list, tuple)) and len(params) == 4):
        return False
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in params):
        return False
    i, j, m, n = params
    return 0 <= i < j and 3 <= m < n


def random_params(rng):
    i = rng.randint(0, 150)
    j = rng.randint(i + 1, min(300, i + 150))
    m = rng.randint(3, 40)
    return [i, j, m, rng.randint(m + 1, m + 60)]


def solution(params):
    i, j, m, n = params

    def palindromes_of_specific_lengths(s):
        w = s[i : j + 1]
        low = w.lower()
        size = len(w)
        out = set()
        k = 0
        while k < size:
            if w[k] not in LETTERS:
                k += 1
                continue
            e = k
            while e < size and w[e] in LETTERS:
                e += 1
            # letter run w[k:e]: expand around every centre inside it
            for c2 in range(2 * k, 2 * e - 1):
                lo = c2 // 2
                hi = lo + c2 % 2
                while lo >= k and hi < e and low[lo] == low[hi]:
                    length = hi - lo + 1
                    if length > n:
                        break
                    if length >= m:
                        out.add(w[lo : hi + 1])
                    lo -= 1
                    hi += 1
            k = e
        return out

    return palindromes_of_specific_lengths


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
    i, j, m, n = params
    rng = random.Random(f"q47-{seed}")
    window = j - i + 1
    top = max(1, min(n, window))  # longest length that fits and counts
    extra = 0 if seed % 3 == 0 else rng.randint(1, 12)
    size = j + 1 + extra
    if seed == 0:  # no palindrome at all
        return ("".join(_cyclic(rng, size)),)
    if seed == 1:  # shortest length, ending exactly at j
        s = _cyclic(rng, size)
        _plant(s, j - m + 1, _palindrome(rng, m))
        return ("".join(s),)
    if seed == 2:  # longest length that fits, starting exactly at i
        s = _cyclic(rng, size)
        _plant(s, i, _palindrome(rng, top))
        return ("".join(s),)
    if seed == 3:  # lengths just outside [m, n]
        s = _cyclic(rng, size)
        if window >= n + 1:
            _plant(s, i, _palindrome(rng, n + 1))
        _plant(s, j - (m - 1) + 1, _palindrome(rng, m - 1))
        return ("".join(s),)
    if seed == 4:  # palindromes crossing the window's ends
        size = j + 1 + m
        s = _cyclic(rng, size)
        _plant(s, i - 1, _palindrome(rng, m))
        _plant(s, j - m + 2, _palindrome(rng, m))
        return ("".join(s),)
    if seed == 5:  # in range but with a non-letter inside
        s = _cyclic(rng, size)
        length = m if m % 2 else m + 1
        if length > window:
            length = m
        pal = _palindrome(rng, length, middle=rng.choice(NON_LETTERS))
        if length % 2 == 0:
            pal[length // 2 - 1] = pal[length // 2] = rng.choice(NON_LETTERS)
        other = min(top, m)
        if i + other <= j - length + 1:
            _plant(s, i, _palindrome(rng, other, mixed=False))
        _plant(s, j - length + 1, pal)
        return ("".join(s),)
    if seed == 6:  # a block of one letter in mixed case, ending at j
        s = _cyclic(rng, size)
        block = min(window, m + 6)
        letter = rng.choice(string.ascii_lowercase)
        _plant(s, j - block + 1, [_random_case(rng, letter) for _ in range(block)])
        return ("".join(s),)
    if seed == 7:  # the same palindrome twice, once in another case
        s = _cyclic(rng, size)
        pal = _palindrome(rng, m)
        _plant(s, i, pal)
        _plant(s, j - m + 1, [c.swapcase() if rng.random() < 0.5 else c for c in pal])
        return ("".join(s),)
    # random strings with planted palindromes of lengths around [m, n]
    share = rng.choice([0.5, 0.7, 0.9])
    s = _noise(rng, size, share) if rng.random() < 0.6 else _cyclic(rng, size)
    for _ in range(rng.randint(1, 4)):
        length = rng.randint(max(1, m - 2), n + 2)
        if length > size:
            continue
        lo, hi = max(0, i - 3), min(size - length, j + 4 - length)
        if hi < lo:
            continue
        start = rng.randint(lo, hi)
        middle = rng.choice(NON_LETTERS) if length % 2 and rng.random() < 0.3 else None
        _plant(s, start, _palindrome(rng, length, mixed=rng.random() < 0.7, middle=middle))
    length = rng.randint(m, top) if top >= m else m
    if seed % 2:
        _plant(s, j - length + 1, _palindrome(rng, length))
    else:
        _plant(s, i, _palindrome(rng, length))
    return ("".join(s),)


EXAMPLES = [
    ([0, 4, 3, 4], ("abaXY",), {"aba"}),
    ([0, 5, 3, 5], ("Abba1racecar",), {"Abba"}),
    ([0, 6, 3, 6], ("a1a2b3b4",), set()),
    ([2, 8, 3, 4], ("xxabaxyzzy",), {"aba"}),
    ([0, 7, 4, 5], ("abacdDcz",), {"cdDc"}),
]


def correct_answer(params):
    i, j, m, n = params
    return (
        "def palindromes_of_specific_lengths(s):\n"
        f"    text = s[{i}:{j} + 1]\n"
        "    result = set()\n"
        "    for a in range(len(text)):\n"
        "        end = a\n"
        "        while end < len(text) and text[end].isascii() and text[end].isalpha():\n"
        "            end += 1\n"
        f"        for b in range(a + {m}, min(a + {n}, end) + 1):\n"
        "            piece = text[a:b].lower()\n"
        "            if piece == piece[::-1]:\n"
        "                result.add(piece)\n"
        "    return result\n"
    )


def wrong_answer(params):
    i, j, m, n = params
    # Off by one: treats index j as exclusive.
    return (
        "def palindromes_of_specific_lengths(s):\n"
        f"    text = s[{i}:{j}]\n"
        "    result = set()\n"
        f"    for length in range({m}, {n} + 1):\n"
        "        for a in range(len(text) - length + 1):\n"
        "            piece = text[a:a + length]\n"
        "            if piece.isalpha() and piece.lower() == piece.lower()[::-1]:\n"
        "                result.add(piece.lower())\n"
        "    return result\n"
    )
