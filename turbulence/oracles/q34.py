"""Q34 'find_original_set': the smallest set containing each of $0 given sets, i.e. their union.

Reading: the answer takes exactly $0 arguments (the judge also accepts a
variadic `*sets`; `arity` is $0), each a set of integers, all distinct from one
another; the smallest superset of all of them is their union, returned as a set
(a frozenset compares equal to it; a list does not). README: a positive integer.
"""
import random

FUNCTION = "find_original_set"


def arity(params):
    return params[0]


def valid(params):
    return isinstance(params, list) and len(params) == 1 and type(params[0]) is int and params[0] >= 1


def random_params(rng):
    return [rng.choice([1, 2, 3, rng.randint(1, 30), rng.randint(1, 300)])]


def solution(params):
    def find_original_set(*sets):
        return set().union(*sets)

    return find_original_set


def _distinct_sets(rng, count, draw, seen=None):
    """`count` distinct sets from `draw()`, widening the value range if it runs dry."""
    seen = set() if seen is None else seen
    out = []
    widen = 0
    misses = 0
    while len(out) < count:
        s = frozenset(draw(widen))
        if s in seen:
            misses += 1
            if misses > 20:
                widen += 1
                misses = 0
            continue
        seen.add(s)
        out.append(set(s))
    return out


def inputs(params, seed):
    (count,) = params
    rng = random.Random(f"q34-{seed}")
    if seed == 0:
        # The empty set is one of the arguments (for one argument: the only one).
        rest = _distinct_sets(
            rng, count - 1, lambda w: rng.sample(range(-3 - w * 10, 4 + w * 10), rng.randint(1, 2)), {frozenset()}
        )
        sets = [set()] + rest
    elif seed == 1:
        # A nested chain {0} < {0, 1} < ... , then small sets mostly inside the last one.
        chain = [set(range(0, k + 1)) for k in range(min(count, 8))]
        seen = {frozenset(c) for c in chain}
        big = sorted(set().union(*chain))
        rest = _distinct_sets(rng, count - len(chain), lambda w: rng.sample(big + list(range(100, 100 + w * 10)), rng.randint(0, min(3, len(big)))), seen)
        sets = chain + rest
    elif seed == 2:
        # Singletons of negative numbers, zero and positives.
        values = list(range(-count // 2 - 1, count // 2 + 2))
        rng.shuffle(values)
        sets = [{v} for v in values[:count]]
    elif seed == 3:
        # Pairwise disjoint sets.
        sets = []
        start = -5
        for _ in range(count):
            size = rng.randint(1, 3)
            sets.append(set(range(start, start + size)))
            start += size
    else:
        spread = rng.choice([3, 10, 100, 10**6])
        biggest = rng.choice([2, 4, 6])

        def draw(w):
            r = spread + w * 10
            return rng.choices(range(-r, r + 1), k=int(rng.random() * (biggest + 1)))

        sets = _distinct_sets(rng, count, draw)
        rng.shuffle(sets)
    return tuple(sets)


EXAMPLES = [
    ([1], ({1, 2},), {1, 2}),
    ([1], (set(),), set()),
    ([3], ({1}, {2, 3}, {-1, 1}), {-1, 1, 2, 3}),
    ([2], ({0}, set()), {0}),
    ([4], ({1, 2}, {2, 3}, {3, 4}, {1, 4}), {1, 2, 3, 4}),
]


def correct_answer(params):
    (count,) = params
    names = [f"s{k}" for k in range(1, count + 1)]
    return (
        f"def find_original_set({', '.join(names)}):\n"
        f"    result = set()\n"
        f"    for given in ({', '.join(names)},):\n"
        f"        for x in given:\n"
        f"            result.add(x)\n"
        f"    return result\n"
    )


def wrong_answer(params):
    # Returns the union as a sorted list, not a set.
    return (
        "def find_original_set(*sets):\n"
        "    result = set()\n"
        "    for s in sets:\n"
        "        result |= s\n"
        "    return sorted(result)\n"
    )
