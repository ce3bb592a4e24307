"""Q21 'all_ints_div_by_num': the integers of a list at indices $1..$2 (both
inclusive) that are divisible by $0, in list order; [] when none.

Reading: the list holds index $2 (the question presumes it), so the range is
xs[$1 : $2 + 1]; "divisible" is Python's x % i == 0, so 0 and negative multiples
count and the sign of i does not matter. The result is a list in element order
(strict). README: i != 0, 0 <= j <= k.
"""
import random

FUNCTION = "all_ints_div_by_num"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 3 and all(_is_int(p) for p in params)):
        return False
    i, j, k = params
    return i != 0 and 0 <= j <= k


def random_params(rng):
    i = rng.choice([-1, 1]) * rng.randint(1, 150)
    j = rng.randint(0, 150)
    return [i, j, rng.randint(j, 250)]


def solution(params):
    i, j, k = params

    def all_ints_div_by_num(xs):
        return [x for x in xs[j : k + 1] if x % i == 0]

    return all_ints_div_by_num


def inputs(params, seed):
    i, j, k = params
    rng = random.Random(seed)
    length = k + 1 + (0 if seed % 4 == 0 else rng.randint(1, 10))

    def multiple():  # nonzero
        return i * rng.choice([-5, -3, -2, -1, 1, 2, 3, 7])

    def other():  # not divisible (any value when |i| == 1)
        for _ in range(100):
            x = rng.randint(-1000, 1000)
            if x % i:
                return x
        return rng.randint(-1000, 1000)

    if seed == 0:  # nothing divisible (when possible): empty result
        xs = [other() for _ in range(length)]
    elif seed == 1:  # everything divisible
        xs = [multiple() for _ in range(length)]
    elif seed == 2:  # only the ends and their outside neighbours divisible
        xs = [other() for _ in range(length)]
        for p in (j - 1, j, k, k + 1):
            if 0 <= p < length:
                xs[p] = multiple()
    elif seed == 3:  # zeros and negative multiples
        xs = [rng.choice([0, -abs(i), -2 * abs(i), other()]) for _ in range(length)]
        xs[j] = 0
    else:
        xs = [multiple() if rng.random() < 0.4 else other() for _ in range(length)]
    return (xs,)


EXAMPLES = [
    ([3, 1, 4], ([3, 6, 7, 9, -12, 15],), [6, 9, -12]),
    ([1, 0, 0], ([5],), [5]),
    ([7, 0, 2], ([1, 2, 3, 14],), []),
    ([-4, 2, 2], ([4, 8, 0, 12],), [0]),
    ([2, 0, 3], ([2, 4, 6, 8, 10],), [2, 4, 6, 8]),
]


def correct_answer(params):
    i, j, k = params
    return (
        f"def all_ints_div_by_num(numbers):\n"
        f"    found = []\n"
        f"    for pos in range(len(numbers)):\n"
        f"        if pos < {j} or pos > {k}:\n"
        f"            continue\n"
        f"        if numbers[pos] % abs({i}) == 0:\n"
        f"            found.append(numbers[pos])\n"
        f"    return found\n"
    )


def wrong_answer(params):
    i, j, k = params
    # Off by one: treats index k as exclusive.
    return (
        f"def all_ints_div_by_num(lst):\n"
        f"    return [x for x in lst[{j}:{k}] if x % {i} == 0]\n"
    )
