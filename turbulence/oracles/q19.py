"""Q19 'all_ints_not_div_by_num': the integers of a list strictly between indices $1
and $2 (both exclusive) that are not divisible by $0, in list order; [] when none.

Reading: the range is indices $1 + 1 .. $2 - 1, i.e. xs[$1 + 1 : $2]; the list holds
index $2 (the question presumes it). "Divisible" is Python's x % i == 0, so 0 is
divisible by everything and the sign of i does not matter. The result is a list in
element order (strict).

README contradiction: the README says 0 <= j < k, but the published rows include
[2, 2, 2] (a manually chosen row, instance of seed "1"), so `valid` accepts j == k;
there the range is empty and the only answer is []. For i = 1 or -1 every integer is
divisible, so the answer is always []: no range mistake can show there, and for those
two published instances ([1, 0, 1], [-1, 0, 1]) `wrong_answer` is instead an answer
that returns None when nothing qualifies.
"""
import random

FUNCTION = "all_ints_not_div_by_num"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 3 and all(_is_int(p) for p in params)):
        return False
    i, j, k = params
    return i != 0 and 0 <= j <= k  # README: j < k; the published [2, 2, 2] has j == k


def random_params(rng):
    i = rng.choice([-1, 1]) * rng.randint(1, 150)
    j = rng.randint(0, 150)
    return [i, j, rng.randint(j + 1, 250)]


def solution(params):
    i, j, k = params

    def all_ints_not_div_by_num(xs):
        return [x for x in xs[j + 1 : k] if x % i != 0]

    return all_ints_not_div_by_num


def inputs(params, seed):
    i, j, k = params
    rng = random.Random(seed)
    length = k + 1 + (0 if seed % 4 == 0 else rng.randint(1, 10))

    def multiple():
        return i * rng.randint(-20, 20)

    def other():  # not divisible by i (any value when |i| == 1)
        for _ in range(100):
            x = rng.randint(-1000, 1000)
            if x % i:
                return x
        return rng.randint(-1000, 1000)

    if seed == 0:  # everything divisible: empty result
        xs = [multiple() for _ in range(length)]
    elif seed == 1:  # nothing divisible: the whole range
        xs = [other() for _ in range(length)]
    elif seed == 2:  # only indices j and k (the excluded ends) and their inside neighbours qualify
        xs = [multiple() for _ in range(length)]
        for p in (j, j + 1, k - 1, k):
            if 0 <= p < length:
                xs[p] = other()
    elif seed == 3:  # only the excluded ends qualify
        xs = [multiple() for _ in range(length)]
        xs[j] = other()
        xs[k] = other()
    elif seed == 4:  # zeros, negatives
        xs = [rng.choice([0, -abs(i), other(), -abs(other())]) for _ in range(length)]
    else:
        xs = [multiple() if rng.random() < 0.4 else other() for _ in range(length)]
    return (xs,)


EXAMPLES = [
    ([2, 0, 4], ([1, 3, 4, 5, 7, 9],), [3, 5]),
    ([1, 0, 5], ([1, 2, 3, 4, 5, 6],), []),
    ([2, 2, 2], ([1, 3, 5],), []),
    ([-3, 0, 2], ([9, -4, 6],), [-4]),
    ([5, 1, 4], ([5, 10, 15, 20, 7],), []),
]


def correct_answer(params):
    i, j, k = params
    return (
        f"def all_ints_not_div_by_num(numbers):\n"
        f"    out = []\n"
        f"    for index in range({j} + 1, {k}):\n"
        f"        if numbers[index] % {i}:\n"
        f"            out.append(numbers[index])\n"
        f"    return out\n"
    )


def wrong_answer(params):
    i, j, k = params
    if abs(i) == 1:
        # Every integer is divisible by +-1, so the answer is always []; the mistake
        # that shows is returning None when nothing qualifies.
        return (
            f"def all_ints_not_div_by_num(lst):\n"
            f"    result = [x for x in lst[{j} + 1:{k}] if x % {i} != 0]\n"
            f"    return result if result else None\n"
        )
    # Reads "both exclusive" as both inclusive.
    return (
        f"def all_ints_not_div_by_num(lst):\n"
        f"    return [x for x in lst[{j}:{k} + 1] if x % {i} != 0]\n"
    )
