"""Q28 'return_nth_smallest_ascii': among the characters of a string of distinct
characters at indices $1..$2 (both inclusive), the one with the $0-th smallest ASCII
value (1-based: the 1st smallest is the minimum), returned as a one-character string.

Reading: the string holds index $2 and the range holds at least $0 characters (the
question presumes both; the README only says 4 <= i and 0 <= j < k, so `valid` also
asks i <= k - j + 1, which every published row meets). Inputs use printable ASCII
(32..126), so at most 95 distinct characters; rows with k >= 95 would need more and get
code points past 126. README: integers with 4 <= i and 0 <= j < k.
"""
import random

FUNCTION = "return_nth_smallest_ascii"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 3 and all(_is_int(p) for p in params)):
        return False
    i, j, k = params
    return 4 <= i and 0 <= j < k and i <= k - j + 1


def random_params(rng):
    j = rng.randint(0, 70)
    k = rng.randint(j + 3, 90)
    return [rng.randint(4, min(20, k - j + 1)), j, k]


def solution(params):
    i, j, k = params

    def return_nth_smallest_ascii(s):
        return sorted(s[j : k + 1], key=ord)[i - 1]

    return return_nth_smallest_ascii


def inputs(params, seed):
    i, j, k = params
    rng = random.Random(seed)
    length = k + 1 + (0 if seed % 3 == 0 else rng.randint(1, 4))
    pool = [chr(c) for c in range(32, 127)]
    length = max(k + 1, min(length, len(pool)))
    if length > len(pool):  # only for rows with k >= 95, none of them published
        pool += [chr(c) for c in range(161, 161 + length - len(pool))]
    chars = rng.sample(pool, length)
    if seed == 0:  # ascending
        chars.sort()
    elif seed == 1:  # descending: s[k] is the smallest of the range
        chars.sort(reverse=True)
    elif seed == 2:  # the range holds the largest characters
        chars.sort()
        size = k - j + 1
        big = chars[length - size :][::-1]
        small = chars[: length - size]
        rng.shuffle(small)
        chars = small[:j] + big + small[j:]
    elif seed == 3:  # the range holds the smallest characters
        chars.sort()
        size = k - j + 1
        small = chars[:size][::-1]
        big = chars[size:]
        rng.shuffle(big)
        chars = big[:j] + small + big[j:]
    elif seed == 4:  # letters only (mixed case) when enough of them
        letters = [chr(c) for c in range(65, 91)] + [chr(c) for c in range(97, 123)]
        if length <= len(letters):
            chars = rng.sample(letters, length)
    elif seed == 5 and length <= 95:  # the range holds as many letters as it can, then
        # the non-letters closest above 'Z'/'z', then those below 'A' from '@' down
        size = k - j + 1
        letters = [chr(c) for c in range(65, 91)] + [chr(c) for c in range(97, 123)]
        rng.shuffle(letters)
        others = [chr(c) for c in (91, 92, 93, 94, 95, 96, 123, 124, 125, 126)]
        others += [chr(c) for c in range(64, 31, -1)]
        ordered = letters + others
        inside = ordered[:size]
        rng.shuffle(inside)
        outside = ordered[size:length]
        rng.shuffle(outside)
        chars = outside[:j] + inside + outside[j:]
    return ("".join(chars),)


EXAMPLES = [
    ([4, 0, 3], ("dcba",), "d"),
    ([4, 1, 5], ("zEbDaCy",), "a"),
    ([5, 0, 4], ("a1B ?",), "a"),
    ([4, 2, 6], ("XY4321Z",), "4"),
    ([6, 1, 6], ("!fedcba",), "f"),
]


def correct_answer(params):
    i, j, k = params
    return (
        f"def return_nth_smallest_ascii(text):\n"
        f"    codes = [ord(c) for c in text[{j}:{k} + 1]]\n"
        f"    codes.sort()\n"
        f"    return chr(codes[{i} - 1])\n"
    )


def wrong_answer(params):
    i, j, k = params
    # Off by one: treats index k as exclusive.
    return (
        f"def return_nth_smallest_ascii(text):\n"
        f"    return sorted(text[{j}:{k}])[{i} - 1]\n"
    )
