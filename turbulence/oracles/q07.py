"""Q7 'all_even_ints_inclusive': the even integers from index $0 to $1, both inclusive.

Reading: The range is the indices $0 .. $1 with both ends included. The list is long enough to hold index $1
(the question presumes it; inputs have length >= $1 + 1). Even includes 0 and negative even numbers.
Returns a list in the original order, duplicates kept ([] when there is none,
as the question says).
README: 0 <= i <= j.
"""
import random

FUNCTION = 'all_even_ints_inclusive'
GAP = 0  # j - i at least
EDGE = -2  # the qualifying value nearest the boundary


def QUALIFY(rng, m):
    return 2 * rng.randint(-m // 2, m // 2)


def FAIL(rng, m):
    return 2 * rng.randint(-m // 2, m // 2) + 1


def TRICKY(rng):
    """Zero (even) and small negative numbers."""
    return rng.choice([-3, -2, -1, 0, 0, 1, 2])


def arity(params):
    return 1


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 2:
        return False
    i, j = params
    return _is_int(i) and _is_int(j) and 0 <= i and i + GAP <= j


def random_params(rng):
    i = rng.choice([0, 0, rng.randint(0, 10), rng.randint(0, 100)])
    j = i + GAP + rng.choice([0, 0, 1, 2, rng.randint(0, 10), rng.randint(0, 100)])
    return [i, j]


def _value(rng, good, big):
    """A random integer that satisfies the question's condition (good) or not."""
    m = 1000 if big else 12
    return QUALIFY(rng, m) if good else FAIL(rng, m)


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"{FUNCTION}/{seed}")
    n = j + 2 + rng.randint(0, 10)  # one element past j, at least
    if seed == 0:  # exactly long enough, nothing qualifies: the empty result
        return ([_value(rng, False, False) for _ in range(j + 1)],)
    if seed == 1:  # exactly long enough, everything qualifies
        return ([_value(rng, True, False) for _ in range(j + 1)],)
    if seed == 2:  # qualifying numbers only outside the range
        good = lambda k: k < i or k > j
    elif seed == 3:  # qualifying at the two end indices i and j (and past j)
        good = lambda k: k in (i, j) or k > j
    elif seed == 4:  # qualifying just inside the ends only
        good = lambda k: k in (i + 1, j - 1) and i < k < j
    elif seed == 5:  # the tricky values only (see TRICKY)
        return ([TRICKY(rng) for _ in range(n)],)
    elif seed == 6:  # qualifying only at index i and just before it
        good = lambda k: k in (i - 1, i)
    elif seed == 7:  # qualifying only at index j and just past it
        good = lambda k: k in (j, j + 1)
    elif seed == 8:  # every element the same boundary value (see EDGE): duplicates
        return ([EDGE] * n,)
    else:
        if rng.random() < 0.3:
            n = j + 1
        p = rng.choice([0.2, 0.5, 0.8])
        big = rng.random() < 0.4
        xs = [_value(rng, rng.random() < p, big) for _ in range(n)]
        if rng.random() < 0.3:
            xs = [TRICKY(rng) if rng.random() < 0.5 else x for x in xs]
        return (xs,)
    return ([_value(rng, good(k), False) for k in range(n)],)


def solution(params):
    i, j = params

    def all_even_ints_inclusive(xs):
        return [x for x in xs[i:j + 1] if x % 2 == 0]

    return all_even_ints_inclusive


EXAMPLES = [
    ([0, 3], ([1, 2, 3, 4, 6],), [2, 4]),
    ([1, 1], ([2, 3, 4],), []),
    ([0, 4], ([0, -2, -3, 7, 10],), [0, -2, 10]),
    ([2, 4], ([4, 4, -1, 5, 9, 8],), []),
]


def correct_answer(params):
    i, j = params
    return (
        f"def all_even_ints_inclusive(numbers):\n"
        f"    result = []\n"
        f"    for idx in range({i}, {j} + 1):\n"
        f"        if numbers[idx] % 2 == 0:\n"
        f"            result.append(numbers[idx])\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: starts after index i.
    return f"def all_even_ints_inclusive(lst):\n    return [x for x in lst[{i} + 1:{j} + 1] if x % 2 == 0]\n"
