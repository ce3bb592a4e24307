"""Q22 'find_sum_of_multiples': the sum of the first $0 positive multiples of a given
positive integer n, i.e. n + 2n + ... + $0*n = n * $0 * ($0 + 1) / 2.

Reading: the multiples start at n itself (1*n), not at 0; the result is an int
(compared with ==, so an integral float such as 9.0 also matches). README: 2 <= i.
"""
import random

FUNCTION = "find_sum_of_multiples"


def arity(params):
    return 1


def valid(params):
    return (
        isinstance(params, list)
        and len(params) == 1
        and isinstance(params[0], int)
        and not isinstance(params[0], bool)
        and params[0] >= 2
    )


def random_params(rng):
    return [rng.randint(2, 500)]


def solution(params):
    (i,) = params

    def find_sum_of_multiples(n):
        return n * i * (i + 1) // 2

    return find_sum_of_multiples


def inputs(params, seed):
    rng = random.Random(seed)
    fixed = [1, 2, 3, 10, 7, 100]
    if seed < len(fixed):
        return (fixed[seed],)
    if seed % 3 == 0:
        return (rng.randint(1000, 10**6),)
    return (rng.randint(1, 200),)


EXAMPLES = [
    ([2], (3,), 9),
    ([51], (1,), 1326),
    ([3], (10,), 60),
    ([2], (1,), 3),
    ([4], (5,), 50),
]


def correct_answer(params):
    (i,) = params
    return (
        f"def find_sum_of_multiples(num):\n"
        f"    total = 0\n"
        f"    for k in range(1, {i} + 1):\n"
        f"        total += num * k\n"
        f"    return total\n"
    )


def wrong_answer(params):
    (i,) = params
    # Off by one: range(n, n * i, n) stops before the i-th multiple.
    return (
        f"def find_sum_of_multiples(num):\n"
        f"    return sum(range(num, num * {i}, num))\n"
    )
