"""Q31 'if_perfect_num': whether the integer at index $0 of a list of positive integers
is a perfect number (equal to the sum of its proper divisors: 6, 28, 496, 8128, ...).

Reading: "true"/"false" are Python's True/False; `same` also accepts the strings
'true'/'false' in any case (the text spells the words in lower case), but not 1/0 or
other values. 1 is not perfect (its proper divisors sum to 0). The list holds index $0
(the question presumes it). Values are kept up to 10^4 (so the perfect numbers 6, 28,
496 and 8128 occur, 33550336 not) so that an answer summing divisors one by one stays
fast. README: a non-negative integer i.
"""
import random

FUNCTION = "if_perfect_num"


def arity(params):
    return 1


def valid(params):
    return (
        isinstance(params, list)
        and len(params) == 1
        and isinstance(params[0], int)
        and not isinstance(params[0], bool)
        and params[0] >= 0
    )


def random_params(rng):
    return [rng.randint(0, 1000)]


def solution(params):
    (i,) = params

    def if_perfect_num(xs):
        n = xs[i]
        if n < 2:
            return False
        total = 1
        d = 2
        while d * d <= n:
            if n % d == 0:
                total += d
                if d != n // d:
                    total += n // d
            d += 1
        return total == n

    return if_perfect_num


def same(got, want):
    if isinstance(got, bool):
        return got == want
    if isinstance(got, str):
        return got.lower() == ("true" if want else "false")
    return False


_PERFECT = [6, 28, 496, 8128]
_NEAR = [1, 2, 5, 12, 24, 27, 29, 120, 495, 497, 8127, 8129, 945, 4, 9, 16, 25, 36, 9999, 10000]


def inputs(params, seed):
    (i,) = params
    rng = random.Random(seed)
    length = i + 1 + (0 if seed % 3 == 0 else rng.randint(1, 6))
    xs = [rng.randint(1, 10000) for _ in range(length)]
    fixed = [6, 1, 28, 496, 8128, 12, 7, 2, 27, 945]
    if seed < len(fixed):
        xs[i] = fixed[seed]
        if seed in (1, 5, 6):  # the neighbours perfect, the element not
            for p in (i - 1, i + 1):
                if 0 <= p < length:
                    xs[p] = rng.choice(_PERFECT)
        return (xs,)
    r = rng.random()
    if r < 0.4:
        xs[i] = rng.choice(_PERFECT)
    elif r < 0.7:
        xs[i] = rng.choice(_NEAR)
    # otherwise the random value stays
    for p in (i - 1, i + 1):
        if 0 <= p < length and rng.random() < 0.5:
            xs[p] = rng.choice(_PERFECT + [1, 12])
    return (xs,)


EXAMPLES = [
    ([0], ([6],), True),
    ([1], ([6, 28, 5],), True),
    ([2], ([28, 6, 1],), False),
    ([0], ([12],), False),
    ([3], ([1, 2, 3, 496],), True),
]


def correct_answer(params):
    (i,) = params
    return (
        f"def if_perfect_num(nums):\n"
        f"    n = nums[{i}]\n"
        f"    return sum(d for d in range(1, n) if n % d == 0) == n\n"
    )


def wrong_answer(params):
    (i,) = params
    # Starts the divisor sum at 1 for every n, so 1 counts as perfect.
    return (
        f"def if_perfect_num(nums):\n"
        f"    n = nums[{i}]\n"
        f"    total = 1\n"
        f"    for d in range(2, int(n ** 0.5) + 1):\n"
        f"        if n % d == 0:\n"
        f"            total += d\n"
        f"            if d != n // d:\n"
        f"                total += n // d\n"
        f"    return total == n\n"
    )
