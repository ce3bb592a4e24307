"""Q17 'all_ints_div_by_both_two_nums': the integers of a list at indices $2..$3 (both
inclusive) that are divisible by both $0 and $1, in list order; [] when there are none.

Reading: the list is long enough to hold index $3 (the question presumes it), so the
range is xs[$2 : $3 + 1]; "divisible by" is Python's x % m == 0, so 0 and negative
multiples count and the sign of m, n does not matter. The result is a list in the
order of the elements (strict: a tuple or another order is wrong). README: m != n,
m != 0, n != 0, 0 <= i <= j.
"""
import math
import random

FUNCTION = "all_ints_div_by_both_two_nums"


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

    def all_ints_div_by_both_two_nums(xs):
        return [x for x in xs[i : j + 1] if x % m == 0 and x % n == 0]

    return all_ints_div_by_both_two_nums


def inputs(params, seed):
    m, n, i, j = params
    rng = random.Random(seed)
    both = math.lcm(abs(m), abs(n))
    length = j + 1 + (0 if seed % 4 == 0 else rng.randint(1, 10))

    def matching():
        return both * rng.choice([-3, -2, -1, 1, 2, 3])

    def not_matching():
        # Divisible by neither, by m only or by n only; any value when both == 1.
        for _ in range(100):
            x = rng.choice([m, n, 1]) * rng.randint(-60, 60) + rng.choice([0, 0, 1, -1])
            if x % m or x % n:
                return x
        return rng.randint(-1000, 1000)

    if seed == 0:  # nothing qualifies (when possible)
        xs = [not_matching() for _ in range(length)]
    elif seed == 1:  # everything qualifies
        xs = [matching() for _ in range(length)]
    elif seed == 2:  # zeros and negative multiples
        xs = [rng.choice([0, -both, -2 * both]) for _ in range(length)]
    elif seed == 3:  # only the two ends and their outside neighbours qualify
        xs = [not_matching() for _ in range(length)]
        for k in (i - 1, i, j, j + 1):
            if 0 <= k < length:
                xs[k] = matching()
    elif seed == 4:  # multiples of only one of the two numbers
        xs = [rng.choice([m, n]) * rng.randint(-30, 30) for _ in range(length)]
    else:
        xs = []
        for _ in range(length):
            r = rng.random()
            if r < 0.35:
                xs.append(matching())
            elif r < 0.55:
                xs.append(m * rng.randint(-20, 20))
            elif r < 0.75:
                xs.append(n * rng.randint(-20, 20))
            else:
                xs.append(rng.randint(-1000, 1000))
    return (xs,)


EXAMPLES = [
    ([2, 3, 1, 4], ([6, 12, 5, 18, 9, 24, 30],), [12, 18]),
    ([1, -1, 0, 0], ([7, 8],), [7]),
    ([4, 6, 0, 3], ([1, 2, 3, 5, 12],), []),
    ([-2, 5, 2, 4], ([10, 20, 0, -30, 15, 40],), [0, -30]),
    ([17, -5, 200, 200], ([0] * 200 + [85],), [85]),
]


def correct_answer(params):
    m, n, i, j = params
    return (
        f"def all_ints_div_by_both_two_nums(numbers):\n"
        f"    result = []\n"
        f"    idx = {i}\n"
        f"    while idx <= {j}:\n"
        f"        value = numbers[idx]\n"
        f"        if value % ({m}) == 0:\n"
        f"            if value % ({n}) == 0:\n"
        f"                result.append(value)\n"
        f"        idx += 1\n"
        f"    return result\n"
    )


def wrong_answer(params):
    m, n, i, j = params
    # Off by one: treats index j as exclusive.
    return (
        f"def all_ints_div_by_both_two_nums(lst):\n"
        f"    return [x for x in lst[{i}:{j}] if x % {m} == 0 and x % {n} == 0]\n"
    )
