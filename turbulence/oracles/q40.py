"""Q40 'return_n_smallest_chars': the $0 characters with the smallest ASCII values, sorted in $1 order.

Reading: the string holds distinct characters and at least $0 of them (the
question asks for exactly $0); the answer is a list of one-character strings
(not a joined string), ordered by code point ('ascending': smallest first). Inputs
use printable ASCII (space included); only for $0 above 95 do non-ASCII
characters appear, compared by code point. README: i > 1, j in
{"ascending", "descending"}.
"""
import random

FUNCTION = "return_n_smallest_chars"

PRINTABLE = [chr(c) for c in range(32, 127)]


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, list) or len(params) != 2:
        return False
    k, order = params
    return type(k) is int and k > 1 and order in ("ascending", "descending")


def random_params(rng):
    return [rng.randint(2, 90), rng.choice(["ascending", "descending"])]


def solution(params):
    k, order = params

    def return_n_smallest_chars(s):
        low = sorted(s)[:k]
        return low if order == "ascending" else low[::-1]

    return return_n_smallest_chars


def _pool(size):
    pool = list(PRINTABLE)
    extra = 0x00A1
    while len(pool) < size:
        pool.append(chr(extra))
        extra += 1
    return pool


def inputs(params, seed):
    k, order = params
    rng = random.Random(f"q40-{seed}")
    if seed == 0:
        size = k  # exactly k characters: all of them, sorted
    elif seed == 1:
        size = k + 1  # one to leave out
    else:
        size = k + rng.randint(0, 20)
    pool = _pool(size)
    if seed == 2 and size <= 95:
        # Both cases of letters, digits and space always there: 'a' > 'Z' > '9' > ' '.
        chars = [" ", "9", "Z", "a"] + rng.sample([c for c in pool if c not in " 9Za"], size - 4) if size >= 4 else rng.sample(pool, size)
        rng.shuffle(chars)
    elif seed % 2 and size <= 95:
        # Contiguous block of code points, shuffled.
        start = rng.randint(0, len(PRINTABLE) - size)
        chars = pool[start : start + size]
        rng.shuffle(chars)
    else:
        chars = rng.sample(pool, size)
    return ("".join(chars),)


EXAMPLES = [
    ([2, "ascending"], ("abc",), ["a", "b"]),
    ([2, "descending"], ("Zab",), ["a", "Z"]),
    ([3, "ascending"], ("!a~",), ["!", "a", "~"]),
    ([3, "descending"], ("cA1b",), ["b", "A", "1"]),
    ([4, "descending"], (" 9Zz0",), ["Z", "9", "0", " "]),
]


def correct_answer(params):
    k, order = params
    return (
        f"def return_n_smallest_chars(s):\n"
        f"    chars = list(s)\n"
        f"    chars.sort(key=ord)\n"
        f"    chosen = chars[:{k}]\n"
        f"    if {order!r} == 'descending':\n"
        f"        chosen.sort(key=ord, reverse=True)\n"
        f"    return chosen\n"
    )


def wrong_answer(params):
    k, order = params
    # Sort direction swapped.
    return (
        f"def return_n_smallest_chars(s):\n"
        f"    low = sorted(s)[:{k}]\n"
        f"    return sorted(low, reverse={order!r} == 'ascending')\n"
    )
