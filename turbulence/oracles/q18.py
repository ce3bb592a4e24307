"""Q18 'sum_ints_div_by_either_nums': the sum of the integers of a list at indices
$2..$3 (both inclusive) that are divisible by $0 or by $1 (or both); 0 when none.

Reading: the list is long enough to hold index $3 (the question presumes it), so the
range is xs[$2 : $3 + 1]; "either ... or" is the inclusive or (an integer divisible
by both counts once); "divisible by" is Python's x % m == 0, so 0 and negative
multiples count and the sign of m, n does not matter. README: m != n, m != 0, n != 0,
0 <= i <= j.
"""
import random

FUNCTION = "sum_ints_div_by_either_nums"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 4 and all(_is_int(p) for p in params)):
        return False
    m, n, i, j = params
    return m != n and m != 0 and n != 0 and 0 <= i <= j


def random_params(rng):
    while True:
        m = rng.choice([-1, 1]) * rng.randint(1, 120)
        n = rng.choice([-1, 1]) * rng.randint(1, 120)
        if m != n:
            break
    i = rng.randint(0, 150)
    return [m, n, i, rng.randint(i, 250)]


def solution(params):
    m, n, i, j = params

    def sum_ints_div_by_either_nums(xs):
        return sum(x for x in xs[i : j + 1] if x % m == 0 or x % n == 0)

    return sum_ints_div_by_either_nums


def inputs(params, seed):
    m, n, i, j = params
    rng = random.Random(seed)
    length = j + 1 + (0 if seed % 4 == 0 else rng.randint(1, 10))

    def matching():  # nonzero, divisible by m or by n
        return rng.choice([m, n]) * rng.choice([-3, -2, -1, 1, 2, 3])

    def not_matching():  # divisible by neither (any value when impossible)
        for _ in range(100):
            x = rng.randint(-1000, 1000)
            if x % m and x % n:
                return x
        return rng.randint(-1000, 1000)

    if seed == 0:  # nothing qualifies (when possible)
        xs = [not_matching() for _ in range(length)]
    elif seed == 1:  # everything qualifies
        xs = [matching() for _ in range(length)]
    elif seed == 2:  # only the ends of the range and their outside neighbours qualify
        xs = [not_matching() for _ in range(length)]
        for k in (i - 1, i, j, j + 1):
            if 0 <= k < length:
                xs[k] = matching()
    elif seed == 3:  # only index j qualifies
        xs = [not_matching() for _ in range(length)]
        xs[j] = matching()
    elif seed == 4:  # only index i qualifies
        xs = [not_matching() for _ in range(length)]
        xs[i] = matching()
    elif seed == 5:  # multiples of m only (not of n), zeros included
        xs = []
        for _ in range(length):
            x = m * rng.randint(-20, 20)
            xs.append(x if x % n else not_matching())
    elif seed == 6:  # multiples of n only (not of m)
        xs = []
        for _ in range(length):
            x = n * rng.randint(-20, 20)
            xs.append(x if x % m else not_matching())
    else:
        xs = []
        for _ in range(length):
            r = rng.random()
            if r < 0.25:
                xs.append(m * rng.randint(-20, 20))
            elif r < 0.5:
                xs.append(n * rng.randint(-20, 20))
            elif r < 0.6:
                xs.append(m * n * rng.randint(-3, 3))
            else:
                xs.append(rng.randint(-1000, 1000))
    return (xs,)


EXAMPLES = [
    ([2, 3, 1, 4], ([6, 12, 5, 18, 9, 24, 30],), 39),
    ([1, -1, 0, 0], ([7, 8],), 7),
    ([4, 6, 0, 3], ([1, 5, 7, 11, 12],), 0),
    ([-5, 7, 1, 3], ([35, -10, 14, 3, 70],), 4),
    ([10, 100, 0, 9], ([100, 10, 20, 5, 0, -30, 7, 1000, 15, 110, 10],), 1210),
]


def correct_answer(params):
    m, n, i, j = params
    return (
        f"def sum_ints_div_by_either_nums(numbers):\n"
        f"    total = 0\n"
        f"    for position, value in enumerate(numbers):\n"
        f"        if {i} <= position <= {j}:\n"
        f"            if value % {m} == 0:\n"
        f"                total += value\n"
        f"            elif value % {n} == 0:\n"
        f"                total += value\n"
        f"    return total\n"
    )


def wrong_answer(params):
    m, n, i, j = params
    # Off by one: treats index j as exclusive.
    return (
        f"def sum_ints_div_by_either_nums(lst):\n"
        f"    return sum(x for x in lst[{i}:{j}] if x % {m} == 0 or x % {n} == 0)\n"
    )
