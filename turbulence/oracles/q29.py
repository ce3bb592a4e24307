"""Q29 'gcf_two_nums': the greatest common factor (gcd) of the integers at indices $0
and $1 of a list of positive integers.

Reading: the list holds both indices (the question presumes it); the result is a
positive int. README contradiction: the README says i != j, but the published rows
include [0, 0] (instance of seed "1"), so `valid` accepts i == j; the answer there is
the element itself (gcd(x, x) = x), which is unambiguous. Values are kept below 10^5 so
that a trial-division answer stays fast. README: non-negative integers i, j, i != j.
"""
import random

FUNCTION = "gcf_two_nums"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 2 and all(_is_int(p) for p in params)):
        return False
    i, j = params
    return i >= 0 and j >= 0  # README: i != j; the published [0, 0] has i == j


def random_params(rng):
    i = rng.randint(0, 300)
    while True:
        j = rng.randint(0, 300)
        if j != i:
            return [i, j]


def solution(params):
    i, j = params

    def gcf_two_nums(xs):
        a, b = xs[i], xs[j]
        while b:
            a, b = b, a % b
        return a

    return gcf_two_nums


def inputs(params, seed):
    i, j = params
    rng = random.Random(seed)
    length = max(i, j) + 1 + (0 if seed % 3 == 0 else rng.randint(1, 6))
    xs = [rng.randint(1, 1000) for _ in range(length)]
    g = rng.randint(2, 60)
    if seed == 0:  # equal values
        xs[i] = xs[j] = rng.randint(2, 5000)
    elif seed == 1:  # one divides the other
        xs[i] = g
        xs[j] = g * rng.randint(2, 50)
    elif seed == 2:  # the other way round
        xs[j] = g
        xs[i] = g * rng.randint(2, 50)
    elif seed == 3:  # coprime: 1
        xs[i], xs[j] = 64, 81
    elif seed == 4:  # a 1
        xs[i] = 1
        xs[j] = rng.randint(2, 1000)
    elif seed == 5:
        xs[i] = xs[j] = 1
    elif seed % 2 == 0:  # a large common factor; neighbours unrelated primes
        xs[i] = g * rng.randint(1, 1500)
        xs[j] = g * rng.randint(1, 1500)
        for p in (i - 1, i + 1, j - 1, j + 1):
            if 0 <= p < length and p not in (i, j):
                xs[p] = rng.choice([97, 101, 103, 107, 109, 113, 127, 131])
    else:
        xs[i] = rng.randint(1, 99999)
        xs[j] = rng.randint(1, 99999)
    return (xs,)


EXAMPLES = [
    ([0, 1], ([12, 18],), 6),
    ([0, 0], ([7, 3],), 7),
    ([2, 0], ([5, 100, 13],), 1),
    ([1, 3], ([4, 9, 2, 27, 8],), 9),
    ([3, 1], ([1, 1, 1, 1],), 1),
]


def correct_answer(params):
    i, j = params
    return (
        f"def gcf_two_nums(numbers):\n"
        f"    a = numbers[{i}]\n"
        f"    b = numbers[{j}]\n"
        f"    for f in range(min(a, b), 0, -1):\n"
        f"        if a % f == 0 and b % f == 0:\n"
        f"            return f\n"
    )


def wrong_answer(params):
    i, j = params
    # Counts the indices from 1 instead of 0.
    return (
        f"import math\n"
        f"def gcf_two_nums(numbers):\n"
        f"    return math.gcd(numbers[{i} - 1], numbers[{j} - 1])\n"
    )
