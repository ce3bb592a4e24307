"""Q2 'all_ints_exclusive': the elements of a list from index $0 to $1, both exclusive.

Reading: "both exclusive" means the indices strictly between $0 and $1, i.e. the
slice xs[$0 + 1 : $1]; for $1 == $0 + 1 that is always []. The list is long enough
to hold index $1 (the question presumes it; inputs have length >= $1 + 1). Returns a
list in the original order. README: 0 <= i < j.
"""
import random

FUNCTION = "all_ints_exclusive"


def arity(params):
    return 1


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 2:
        return False
    i, j = params
    return _is_int(i) and _is_int(j) and 0 <= i < j


def random_params(rng):
    i = rng.choice([0, 0, rng.randint(0, 10), rng.randint(0, 100)])
    return [i, i + 1 + rng.choice([0, 0, 1, 2, rng.randint(0, 10), rng.randint(0, 100)])]


def solution(params):
    i, j = params

    def all_ints_exclusive(xs):
        return xs[i + 1 : j]

    return all_ints_exclusive


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"all_ints_exclusive/{seed}")
    if seed == 0:  # exactly long enough, small values with duplicates
        return ([rng.randint(-3, 3) for _ in range(j + 1)],)
    if seed == 1:  # exactly long enough, the index as the value (easy to read)
        return (list(range(j + 1)),)
    if seed == 2:  # one past j, all zeros except at i and j
        return ([7 if k in (i, j) else 0 for k in range(j + 2)],)
    if seed == 3:  # negatives only
        return ([rng.randint(-1000, -1) for _ in range(j + 1 + rng.randint(0, 5))],)
    length = j + 1 + (0 if rng.random() < 0.3 else rng.randint(1, 20))
    m = rng.choice([5, 1000])
    return ([rng.randint(-m, m) for _ in range(length)],)


EXAMPLES = [
    ([0, 1], ([5, 6, 7],), []),
    ([1, 4], ([10, 20, 30, 40, 50, 60],), [30, 40]),
    ([0, 2], ([-1, 0, -1],), [0]),
    ([2, 5], ([1, 2, 3, 3, -4, 5],), [3, -4]),
    ([8, 9], ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9],), []),
]


def correct_answer(params):
    i, j = params
    return (
        f"def all_ints_exclusive(lst):\n"
        f"    result = []\n"
        f"    k = {i} + 1\n"
        f"    while k < {j}:\n"
        f"        result.append(lst[k])\n"
        f"        k += 1\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, j = params
    # Half-open slice: index i wrongly included.
    return f"def all_ints_exclusive(lst):\n    return lst[{i}:{j}]\n"
