"""Q38 'find_subset_of_length_n': how many subsets of size $0 the given set has.

Reading: the answer is the number C(len(s), $0), an int: 1 for size 0 (the
empty subset), 0 when the set has fewer than $0 elements. It is a count, not the
subsets themselves. Elements are ints or strings (one kind per set). Sets are
kept near size $0 (or small) so that the count stays meaningful; an answer that
enumerates the subsets instead of computing C(n, k) can run out of time on the
larger instances. README: a non-negative integer.
"""
import math
import random

FUNCTION = "find_subset_of_length_n"


def arity(params):
    return 1


def valid(params):
    return isinstance(params, list) and len(params) == 1 and type(params[0]) is int and params[0] >= 0


def random_params(rng):
    return [rng.choice([0, 1, 2, rng.randint(0, 20), rng.randint(0, 300)])]


def solution(params):
    (k,) = params

    def find_subset_of_length_n(s):
        return math.comb(len(s), k)

    return find_subset_of_length_n


def _a_set(rng, size):
    if rng.random() < 0.3:
        return {f"e{v}" for v in rng.sample(range(10 * size + 10), size)}
    return set(rng.sample(range(-5 * size - 5, 5 * size + 5), size))


def inputs(params, seed):
    (k,) = params
    rng = random.Random(f"q38-{seed}")
    if seed == 0:
        size = max(k - 1, 0)  # one short (for k = 0: the empty set)
    elif seed == 1:
        size = k  # exactly one subset: the set itself
    elif seed == 2:
        size = k + 1
    elif seed == 3:
        size = 0  # the empty set
    elif seed == 4:
        size = 1
    elif seed % 3 == 0:
        size = rng.randint(0, 12)
    else:
        size = max(0, k + rng.randint(-4, 10))
    return (_a_set(rng, size),)


EXAMPLES = [
    ([2], ({1, 2, 3},), 3),
    ([0], (set(),), 1),
    ([5], ({1, 2},), 0),
    ([3], ({"a", "b", "c"},), 1),
    ([1], ({7, 8, 9, 10},), 4),
    ([2], ({1, 2, 3, 4, 5},), 10),
]


def correct_answer(params):
    (k,) = params
    return (
        f"def find_subset_of_length_n(elements):\n"
        f"    n = len(elements)\n"
        f"    r = {k}\n"
        f"    if r > n:\n"
        f"        return 0\n"
        f"    r = min(r, n - r)\n"
        f"    result = 1\n"
        f"    for t in range(1, r + 1):\n"
        f"        result = result * (n - r + t) // t\n"
        f"    return result\n"
    )


def wrong_answer(params):
    (k,) = params
    # Returns the subsets themselves instead of how many there are.
    return (
        f"from itertools import combinations\n"
        f"def find_subset_of_length_n(s):\n"
        f"    return [set(c) for c in combinations(s, {k})]\n"
    )
