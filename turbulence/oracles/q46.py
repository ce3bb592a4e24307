"""Q46 'gcf_three_nums': the greatest common factor of xs[$0], xs[$1] and xs[$2].

Reading: the answer is an int, the greatest common divisor of the three
elements (1 when they share no factor). The list has positive elements and
reaches past the largest of the three indices (the question presumes they
exist); values stay at most 10,000 so that an answer that tries every candidate
divisor is quick. README: i, j, k >= 0, pairwise distinct.
"""
import math
import random

FUNCTION = "gcf_three_nums"


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, list) or len(params) != 3:
        return False
    if not all(type(x) is int and x >= 0 for x in params):
        return False
    i, j, k = params
    return i != j and i != k and j != k


def random_params(rng):
    top = rng.choice([5, 20, 100, 300])
    return rng.sample(range(0, top + 1), 3)


def solution(params):
    i, j, k = params

    def gcf_three_nums(xs):
        return math.gcd(math.gcd(xs[i], xs[j]), xs[k])

    return gcf_three_nums


def _triple(rng, seed):
    if seed == 0:
        v = rng.randint(2, 500)
        return v, v, v  # all equal: the value itself
    if seed == 1:
        return 1, rng.randint(2, 9999), rng.randint(2, 9999)
    if seed == 2:
        g = rng.randint(2, 100)
        return g, g * rng.randint(2, 50), g * rng.randint(2, 50)  # the smallest divides the others
    if seed == 3:
        return 6, 10, 15  # pairwise common factors, none shared by all three
    if seed == 4:
        return 9973, 9973, 2 * 9973  # a large prime shared by all three
    g = rng.choice([1, 1, rng.randint(2, 12), rng.randint(2, 200)])
    limit = 10_000 // g
    values = [g * rng.randint(1, limit) for _ in range(3)]
    if rng.random() < 0.3:
        values[rng.randrange(3)] = g  # the smallest is the factor itself
    return tuple(values)


def inputs(params, seed):
    i, j, k = params
    rng = random.Random(f"q46-{seed}")
    length = max(params) + 1 + (0 if seed % 2 == 0 else rng.randint(1, 6))
    xs = [rng.randint(1, 10_000) for _ in range(length)]
    triple = list(_triple(rng, seed))
    rng.shuffle(triple)
    xs[i], xs[j], xs[k] = triple
    return (xs,)


EXAMPLES = [
    ([0, 1, 2], ([12, 18, 24],), 6),
    ([2, 0, 1], ([7, 5, 3],), 1),
    ([0, 1, 2], ([5, 5, 5],), 5),
    ([4, 0, 8], ([6, 1, 1, 1, 9, 1, 1, 1, 15],), 3),
    ([1, 2, 0], ([4, 8, 16],), 4),
    ([0, 2, 3], ([6, 99, 10, 15],), 1),
]


def correct_answer(params):
    i, j, k = params
    return (
        f"def gcf_three_nums(nums):\n"
        f"    def gcd(a, b):\n"
        f"        while b:\n"
        f"            a, b = b, a % b\n"
        f"        return a\n"
        f"    values = [nums[{i}], nums[{j}], nums[{k}]]\n"
        f"    result = values[0]\n"
        f"    for v in values[1:]:\n"
        f"        result = gcd(result, v)\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, j, k = params
    # Tries candidate factors up to, but not including, the smallest value.
    return (
        f"def gcf_three_nums(lst):\n"
        f"    a, b, c = lst[{i}], lst[{j}], lst[{k}]\n"
        f"    best = 1\n"
        f"    for d in range(1, min(a, b, c)):\n"
        f"        if a % d == 0 and b % d == 0 and c % d == 0:\n"
        f"            best = d\n"
        f"    return best\n"
    )
