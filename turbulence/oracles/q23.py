"""Q23 'find_divisors_in_range': the positive divisors d of a positive integer n with
$0 <= d <= $1 (both inclusive), as a list; [] when there are none.

Reading: the question does not fix the order of the list, so `same` accepts the
divisors in any order (the model solution lists them ascending), but the result must
be a list (strict on the type) holding each divisor once. README: 0 < i < j.
"""
import random

FUNCTION = "find_divisors_in_range"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 2 and all(_is_int(p) for p in params)):
        return False
    i, j = params
    return 0 < i < j


def random_params(rng):
    i = rng.randint(1, 500)
    return [i, rng.randint(i + 1, 1000)]


def solution(params):
    i, j = params

    def find_divisors_in_range(n):
        return [d for d in range(i, min(j, n) + 1) if n % d == 0]

    return find_divisors_in_range


def same(got, want):
    if not isinstance(got, list):
        return False
    try:
        return sorted(got) == sorted(want)
    except TypeError:
        return False


_RICH = [720, 5040, 55440, 83160, 27720, 2520, 10080, 45360, 1680, 65520]


def inputs(params, seed):
    i, j = params
    rng = random.Random(seed)
    fixed = [1, i, j, i * j, max(1, i - 1), j + 1, 2 * j, i * (j - 1)]
    if seed < len(fixed):
        return (fixed[seed],)
    r = seed % 5
    if r == 0:
        n = rng.choice(_RICH)
    elif r == 1:  # a product of a number in the range with a small factor
        n = rng.randint(i, j) * rng.randint(1, 40)
    elif r == 2:  # two numbers of the range (or near it)
        n = rng.randint(max(1, i - 2), j + 2) * rng.randint(max(1, i - 2), j + 2)
    elif r == 3:
        n = rng.randint(1, 2 * j)
    else:
        n = rng.randint(1, 10**5)
    return (min(n, 10**6),)


EXAMPLES = [
    ([10, 55], (60,), [10, 12, 15, 20, 30]),
    ([1, 2], (1,), [1]),
    ([7, 8], (6,), []),
    ([3, 9], (9,), [3, 9]),
    ([84, 86], (7225,), [85]),
]


def correct_answer(params):
    i, j = params
    return (
        f"def find_divisors_in_range(n):\n"
        f"    divisors = set()\n"
        f"    d = 1\n"
        f"    while d * d <= n:\n"
        f"        if n % d == 0:\n"
        f"            divisors.add(d)\n"
        f"            divisors.add(n // d)\n"
        f"        d += 1\n"
        f"    return sorted(x for x in divisors if {i} <= x <= {j})\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: the upper bound treated as exclusive.
    return (
        f"def find_divisors_in_range(n):\n"
        f"    return [d for d in range({i}, {j}) if n % d == 0]\n"
    )
