"""Q1 'all_ints_inclusive': the elements of a list from index $0 to $1, both inclusive.

Reading: the list is long enough to hold index $1 (the question presumes it), so
the answer is the slice xs[$0 : $1 + 1]. README: 0 <= i <= j.
"""
import random

FUNCTION = "all_ints_inclusive"


def arity(params):
    return 1


def valid(params):
    i, j = params
    return isinstance(i, int) and isinstance(j, int) and 0 <= i <= j


def random_params(rng):
    i = rng.randint(0, 100)
    return [i, rng.randint(i, 200)]


def solution(params):
    i, j = params

    def all_ints_inclusive(xs):
        return xs[i : j + 1]

    return all_ints_inclusive


def inputs(params, seed):
    i, j = params
    rng = random.Random(seed)
    # Seed 0: exactly long enough; later seeds add up to 20 elements past j.
    length = j + 1 + (0 if seed == 0 else rng.randint(0, 20))
    return ([rng.randint(-1000, 1000) for _ in range(length)],)


EXAMPLES = [
    ([2, 4], ([10, 20, 30, 40, 50, 60],), [30, 40, 50]),
    ([0, 0], ([7],), [7]),
    ([3, 3], ([1, 2, 3, -4, 5],), [-4]),
    ([0, 5], ([5, -5, 0, 0, 9, 1],), [5, -5, 0, 0, 9, 1]),
]


def correct_answer(params):
    i, j = params
    return (
        f"def all_ints_inclusive(lst):\n"
        f"    out = []\n"
        f"    for k in range({i}, {j} + 1):\n"
        f"        out.append(lst[k])\n"
        f"    return out\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: stops before index j.
    return f"def all_ints_inclusive(lst):\n    return lst[{i}:{j}]\n"
