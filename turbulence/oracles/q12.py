"""Q12 'find_smallest_num': the smallest element of a list from index $0 to $1, both inclusive.

Reading: the list is long enough to hold index $1 (the question presumes it; inputs
have length >= $1 + 1), so the range is never empty. "A list of numbers": inputs mix
ints and floats (some inputs all ints, some all floats, some mixed). The answer is
the element itself (its own type); ties return any of the equal values (compared
with ==). README: 0 <= i <= j.
"""
import random

FUNCTION = "find_smallest_num"


def arity(params):
    return 1


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 2:
        return False
    i, j = params
    return _is_int(i) and _is_int(j) and 0 <= i <= j


def random_params(rng):
    i = rng.choice([0, 0, rng.randint(0, 10), rng.randint(0, 100)])
    return [i, i + rng.choice([0, 0, 1, 2, rng.randint(0, 10), rng.randint(0, 100)])]


def solution(params):
    i, j = params

    def find_smallest_num(xs):
        return min(xs[i : j + 1])

    return find_smallest_num


def _num(rng, lo, hi, kind):
    if kind == "int" or (kind == "mixed" and rng.random() < 0.5):
        return rng.randint(lo, hi)
    return round(rng.uniform(lo, hi), 2)


def _up(i, j, seed, rng):
    """An input for the largest element (Q11's generator); flipped in sign below."""
    n = j + 2 + rng.randint(0, 10)  # one element past j, at least
    if seed == 0:  # exactly long enough, all tied
        return [5] * (j + 1)
    if seed == 5:  # exactly long enough, increasing: the extreme is the last element
        return [k - j // 2 for k in range(j + 1)]
    if seed == 6:  # decreasing: larger values just before i
        return [n - 2 * k for k in range(n)]
    if seed == 7:  # the extreme tied at both ends i and j, larger values outside
        xs = [rng.randint(60, 100) if k < i or k > j else rng.randint(-50, 50) for k in range(n)]
        xs[i] = xs[j] = 55
        return xs
    kind = "int" if seed in (1, 2, 3) else rng.choice(["int", "float", "mixed"])
    if seed == 3:  # only negative numbers inside, non-negative ones outside
        return [rng.randint(0, 100) if k < i or k > j else rng.randint(-100, -1) for k in range(n)]
    if seed == 1:
        at, outside_larger = j, True  # extreme at j, larger outside
    elif seed == 2:
        at, outside_larger = i, True  # extreme at i, larger outside
    elif seed == 4:
        at, outside_larger, kind = rng.choice([i, j]), True, "float"
    else:
        if rng.random() < 0.3:
            n = j + 1
        at = rng.choice([i, j, rng.randint(i, j), None])
        outside_larger = rng.random() < 0.6
    m = rng.choice([10, 1000])
    xs = []
    for k in range(n):
        if outside_larger and (k < i or k > j):
            xs.append(_num(rng, m + 10, 2 * m + 10, kind))
        else:
            xs.append(_num(rng, -m, m, kind))
    if at is not None:
        xs[at] = _num(rng, m + 1, m + 5, kind)
    return xs


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"find_smallest_num/{seed}")
    # The mirror image of the largest-element inputs: every edge case (extreme at
    # i or at j, smaller values just outside the range, ties) carries over.
    return ([-x for x in _up(i, j, seed, rng)],)


EXAMPLES = [
    ([1, 3], ([-9, 2, 7, 4, -10],), 2),
    ([0, 0], ([5, -100],), 5),
    ([2, 4], ([1, 1, 3.5, 2.25, 8, 0],), 2.25),
    ([0, 2], ([-4, -4, -4],), -4),
    ([1, 2], ([0, -0.5, 3],), -0.5),
]


def correct_answer(params):
    i, j = params
    return (
        f"def find_smallest_num(numbers):\n"
        f"    smallest = None\n"
        f"    for k, value in enumerate(numbers):\n"
        f"        if {i} <= k <= {j} and (smallest is None or value < smallest):\n"
        f"            smallest = value\n"
        f"    return smallest\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: starts after index i.
    return f"def find_smallest_num(lst):\n    return min(lst[{i} + 1:{j} + 1])\n"
