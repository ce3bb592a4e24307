"""Q26 'sum_in_range': the sum of the elements x of a list of integers with
$0 <= x <= $1 (both inclusive, a range of values, not of indices); 0 when none.

Reading: every occurrence counts (duplicates are summed each time). README: i < j.
"""
import random

FUNCTION = "sum_in_range"


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
    i = rng.randint(-1000, 1000)
    return [i, rng.randint(i + 1, min(i + 1000, 1500))]


def solution(params):
    i, j = params

    def sum_in_range(xs):
        return sum(x for x in xs if i <= x <= j)

    return sum_in_range


def inputs(params, seed):
    i, j = params
    rng = random.Random(seed)
    fixed = {
        0: [],
        1: [i, j],
        2: [i - 1, j + 1, i - 5, j + 100],  # just outside: 0
        3: [i, i, i],
        4: [j],
        5: [j, j + 1, i - 1],
        6: [i, i - 1, j + 1],
    }
    if seed in fixed:
        return (fixed[seed],)
    length = rng.randint(1, 30)
    xs = []
    for _ in range(length):
        r = rng.random()
        if r < 0.15:
            xs.append(rng.choice([i, j]))
        elif r < 0.3:
            xs.append(rng.choice([i - 1, j + 1, i + 1, j - 1]))
        elif r < 0.7:
            xs.append(rng.randint(i, j))
        else:
            xs.append(rng.randint(min(i, -1000) - 100, max(j, 1000) + 100))
    return (xs,)


EXAMPLES = [
    ([2, 5], ([1, 2, 3, 5, 6],), 10),
    ([4, 5], ([],), 0),
    ([-9, -7], ([-10, -6, 0],), 0),
    ([-8, 8], ([-8, 8, 9, -9, 3],), 3),
    ([1, 8], ([8, 8, 1, 0],), 17),
]


def correct_answer(params):
    i, j = params
    return (
        f"def sum_in_range(nums):\n"
        f"    total = 0\n"
        f"    for n in nums:\n"
        f"        if n < {i} or n > {j}:\n"
        f"            continue\n"
        f"        total = total + n\n"
        f"    return total\n"
    )


def wrong_answer(params):
    i, j = params
    # Reads "between" as exclusive at both ends.
    return (
        f"def sum_in_range(nums):\n"
        f"    return sum(n for n in nums if {i} < n < {j})\n"
    )
