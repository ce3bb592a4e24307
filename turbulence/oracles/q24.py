"""Q24 'sum_of_divisors_in_range': the sum of the positive divisors d of a positive
integer n with $0 <= d <= $1 (both inclusive); 0 when there are none.

Reading: only positive divisors count, so when $0 <= 0 (the README allows it: it only
asks i < j) the range starts at 1. README: i < j (integers).
"""
import random

FUNCTION = "sum_of_divisors_in_range"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 2 and all(_is_int(p) for p in params)):
        return False
    i, j = params
    return i < j


def random_params(rng):
    if rng.random() < 0.1:
        i = rng.randint(-20, 0)
        return [i, rng.randint(i + 1, 100)]
    i = rng.randint(1, 500)
    return [i, rng.randint(i + 1, 1000)]


def solution(params):
    i, j = params

    def sum_of_divisors_in_range(n):
        return sum(d for d in range(max(i, 1), min(j, n) + 1) if n % d == 0)

    return sum_of_divisors_in_range


_RICH = [720, 5040, 55440, 83160, 27720, 2520, 10080, 45360, 1680, 65520]


def inputs(params, seed):
    i, j = params
    rng = random.Random(seed)
    lo = max(i, 1)
    fixed = [1, lo, j, lo * j, max(1, lo - 1), j + 1, 2 * j, lo * (j - 1) if j > 1 else 2]
    if seed < len(fixed):
        return (max(1, fixed[seed]),)
    r = seed % 5
    if r == 0:
        n = rng.choice(_RICH)
    elif r == 1:
        n = rng.randint(lo, max(lo, j)) * rng.randint(1, 40)
    elif r == 2:
        n = rng.randint(max(1, lo - 2), j + 2) * rng.randint(max(1, lo - 2), j + 2)
    elif r == 3:
        n = rng.randint(1, 2 * max(j, 1))
    else:
        n = rng.randint(1, 10**5)
    return (max(1, min(n, 10**6)),)


EXAMPLES = [
    ([10, 55], (60,), 87),
    ([1, 2], (1,), 1),
    ([7, 8], (6,), 0),
    ([3, 9], (9,), 12),
    ([-5, 3], (6,), 6),
]


def correct_answer(params):
    i, j = params
    return (
        f"def sum_of_divisors_in_range(num):\n"
        f"    total = 0\n"
        f"    for d in range(1, num + 1):\n"
        f"        if d > {j}:\n"
        f"            break\n"
        f"        if d >= {i} and num % d == 0:\n"
        f"            total += d\n"
        f"    return total\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: the upper bound treated as exclusive.
    return (
        f"def sum_of_divisors_in_range(num):\n"
        f"    return sum(d for d in range(max({i}, 1), {j}) if num % d == 0)\n"
    )
