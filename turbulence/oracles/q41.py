"""Q41 'identical_elements': the set of elements found in both lists' slices [$0 .. $1] (inclusive).

Reading: an element counts when it occurs somewhere in a[$0 .. $1] and somewhere
in b[$0 .. $1] (not necessarily at the same index), so the answer is
set(a[$0:$1 + 1]) & set(b[$0:$1 + 1]), a set. Both lists have the same length,
at least $1 + 1 (the question presumes the indices exist). The published test
file (which does not compile) would also call it with two empty lists, where
the slice reading gives set(); the fuzz inputs here never go shorter than the
range. Elements are ints, or strings in some inputs. README: 0 <= i <= j.
"""
import random

FUNCTION = "identical_elements"


def arity(params):
    return 2


def valid(params):
    if not isinstance(params, list) or len(params) != 2:
        return False
    i, j = params
    return type(i) is int and type(j) is int and 0 <= i <= j


def random_params(rng):
    i = rng.randint(0, 150)
    return [i, rng.randint(i, i + 120)]


def solution(params):
    i, j = params

    def identical_elements(a, b):
        return set(a[i : j + 1]) & set(b[i : j + 1])

    return identical_elements


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"q41-{seed}")
    length = j + 1 if seed in (0, 1) else j + 1 + rng.randint(0, 12)
    if seed == 0:
        # Disjoint values except one shared element at index j of both lists.
        a = [rng.randint(1, 1000) for _ in range(length)]
        b = [-rng.randint(1, 1000) for _ in range(length)]
        a[j] = b[j] = 0
    elif seed == 1:
        # Nothing in common.
        a = [rng.randint(0, 50) * 2 for _ in range(length)]
        b = [rng.randint(0, 50) * 2 + 1 for _ in range(length)]
    elif seed == 2:
        # Shared elements only outside the range (before i and after j).
        a = [rng.randint(1, 500) for _ in range(length)]
        b = [-rng.randint(1, 500) for _ in range(length)]
        for pos in list(range(0, i)) + list(range(j + 1, length)):
            a[pos] = b[pos] = 1000 + pos
        if j + 1 < length:
            a[j + 1] = b[j] if rng.random() < 0.5 else a[j + 1]
    elif seed == 3:
        # Shared across different positions: a[i] == b[j] and a[j] == b[i].
        a = [rng.randint(1, 500) for _ in range(length)]
        b = [-rng.randint(1, 500) for _ in range(length)]
        a[i], b[j] = 7, 7
        a[j], b[i] = -7, -7
    elif seed == 4:
        # Few distinct values, many duplicates.
        a = [rng.randint(0, 3) for _ in range(length)]
        b = [rng.randint(2, 5) for _ in range(length)]
    elif seed == 5:
        # Strings.
        a = [rng.choice(["x", "y", "z", "X", "a"]) for _ in range(length)]
        b = [rng.choice(["x", "Y", "Z", "b", "c"]) for _ in range(length)]
    else:
        spread = rng.choice([3, 10, 50, 1000])
        a = [rng.randint(-spread, spread) for _ in range(length)]
        b = [rng.randint(-spread, spread) for _ in range(length)]
        # Share an element at the edges of the range (or just outside it).
        for pos in (i, j, i - 1, j + 1):
            if 0 <= pos < length and rng.random() < 0.5:
                value = rng.randint(10**6, 10**6 + 5)
                a[pos] = value
                b[rng.choice([pos, i, j])] = value
    return (a, b)


EXAMPLES = [
    ([0, 0], ([1], [1]), {1}),
    ([0, 0], ([1, 2], [2, 1]), set()),
    ([1, 2], ([5, 1, 2, 9], [9, 2, 3, 5]), {2}),
    ([0, 3], ([1, 1, 2, 3], [3, 3, 1, 0]), {1, 3}),
    ([2, 2], ([1, 2, 3], [3, 2, 1]), set()),
]


def correct_answer(params):
    i, j = params
    return (
        f"def identical_elements(list1, list2):\n"
        f"    in_second = {{}}\n"
        f"    for k in range({i}, min({j}, len(list2) - 1) + 1):\n"
        f"        in_second[list2[k]] = True\n"
        f"    result = set()\n"
        f"    for k in range({i}, min({j}, len(list1) - 1) + 1):\n"
        f"        if list1[k] in in_second:\n"
        f"            result.add(list1[k])\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, j = params
    # Index j taken as exclusive.
    return (
        f"def identical_elements(list1, list2):\n"
        f"    return set(list1[{i}:{j}]).intersection(list2[{i}:{j}])\n"
    )
