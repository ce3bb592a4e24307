"""Q20 'find_n_th_smallest_num': the $0-th smallest (1-based: the 1st smallest is the
minimum) of the numbers at indices $1..$2, both inclusive, of a list of distinct numbers.

Reading: the list holds index $2 (the question presumes it); the README's
3 < i <= k - j + 1 makes the range hold at least i numbers. "Numbers" are ints and
floats (the inputs mix both); the answer is the element itself (compared with ==, so
5 and 5.0 are the same). README: non-negative integers with j < k and 3 < i <= k - j + 1.
"""
import random

FUNCTION = "find_n_th_smallest_num"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 3 and all(_is_int(p) for p in params)):
        return False
    i, j, k = params
    return 0 <= j < k and 3 < i <= k - j + 1


def random_params(rng):
    j = rng.randint(0, 150)
    k = rng.randint(j + 3, j + 100)
    return [rng.randint(4, min(20, k - j + 1)), j, k]


def solution(params):
    i, j, k = params

    def find_n_th_smallest_num(xs):
        return sorted(xs[j : k + 1])[i - 1]

    return find_n_th_smallest_num


def inputs(params, seed):
    i, j, k = params
    rng = random.Random(seed)
    length = k + 1 + (0 if seed % 3 == 0 else rng.randint(1, 10))
    values = rng.sample(range(-5000, 5000), length)
    if seed == 0:  # ascending: the answer is xs[j + i - 1]
        values.sort()
    elif seed == 1:  # descending: xs[k] is the smallest of the range
        values.sort(reverse=True)
    elif seed == 2:  # the range holds the largest numbers, outside it the smallest
        values.sort()
        values = values[: length - (k - j + 1)]  # small ones
        big = sorted(rng.sample(range(6000, 9000), k - j + 1), reverse=True)
        values = values[:j] + big + values[j:]
    elif seed == 3:  # the range holds the smallest numbers, outside it the largest
        values.sort(reverse=True)
        small = rng.sample(range(-9000, -6000), k - j + 1)
        values = values[: length - (k - j + 1)]
        values = values[:j] + small + values[j:]
    elif seed % 3 == 1:  # floats (distinct: distinct integer parts)
        values = [v + round(rng.random(), 2) for v in values]
    elif seed % 3 == 2:  # small magnitudes, negatives and zero
        values = rng.sample(range(-length, length + 1), length)
    return (values,)


EXAMPLES = [
    ([4, 0, 3], ([4, 1, 3, 2],), 4),
    ([4, 1, 5], ([100, 5, 3, 9, 1, 7, -50],), 7),
    ([5, 2, 7], ([10, 20, -1.5, 2.5, 0, 7, -3, 4, 99],), 4),
    ([6, 0, 5], ([6, 5, 4, 3, 2, 1],), 6),
    ([4, 2, 6], ([-100, -200, 0.5, 0.25, 0.75, 1, 0],), 0.75),
]


def correct_answer(params):
    i, j, k = params
    return (
        f"def find_n_th_smallest_num(nums):\n"
        f"    window = list(nums[{j}:{k + 1}])\n"
        f"    for _ in range({i} - 1):\n"
        f"        window.remove(min(window))\n"
        f"    return min(window)\n"
    )


def wrong_answer(params):
    i, j, k = params
    # Off by one: treats index k as exclusive.
    return (
        f"def find_n_th_smallest_num(nums):\n"
        f"    return sorted(nums[{j}:{k}])[{i} - 1]\n"
    )
