"""Q44 'composite_nums_between_indices': the set of composite numbers among xs[$0 .. $1] (inclusive).

Reading: a composite number is a positive integer > 1 that is not prime (4, 6,
8, 9, ...); 1 is neither prime nor composite. The answer is a set of ints. The
list has at least $1 + 1 positive elements (the question presumes index $1
exists). README: 0 <= i <= j.
"""
import random

FUNCTION = "composite_nums_between_indices"


def _sieve(limit):
    flags = bytearray([1]) * (limit + 1)
    flags[0] = flags[1] = 0
    for p in range(2, int(limit**0.5) + 1):
        if flags[p]:
            flags[p * p :: p] = bytearray(len(flags[p * p :: p]))
    return flags


LIMIT = 5000
IS_PRIME = _sieve(LIMIT)
PRIMES = [p for p in range(2, LIMIT + 1) if IS_PRIME[p]]
COMPOSITES = [n for n in range(4, LIMIT + 1) if not IS_PRIME[n]]


def _composite(n):
    if n <= LIMIT:
        return n > 1 and not IS_PRIME[n]
    return any(n % d == 0 for d in range(2, int(n**0.5) + 1))


def arity(params):
    return 1


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

    def composite_nums_between_indices(xs):
        return {x for x in xs[i : j + 1] if _composite(x)}

    return composite_nums_between_indices


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"q44-{seed}")
    length = j + 1 if seed in (0, 1, 2) else j + 1 + rng.randint(0, 12)
    if seed == 0:
        # Only 1 and primes in the range, 1 at index i: the result is empty.
        xs = [rng.choice([1, 2, 3, 5, 7, 97]) for _ in range(length)]
        xs[i] = 1
    elif seed == 1:
        # Only 1s.
        xs = [1] * length
    elif seed == 2:
        # The only composite of the range at index j; composites just before i.
        xs = [rng.choice([1] + PRIMES[:30]) for _ in range(length)]
        xs[j] = 4
        if i > 0:
            xs[i - 1] = 6
    elif seed == 3:
        # A composite at index i, others after j; squares of primes.
        xs = [rng.choice([1, 2, 3]) for _ in range(length)]
        xs[i] = 9
        for pos in range(j + 1, length):
            xs[pos] = 25
    elif seed == 4:
        # Composites repeated.
        xs = [rng.choice([4, 4, 6, 9, 9, 2]) for _ in range(length)]
    else:
        kind = seed % 3
        if kind == 0:
            xs = [rng.randint(1, 30) for _ in range(length)]
        elif kind == 1:
            xs = [rng.choice([1, 1, rng.choice(PRIMES), rng.choice(COMPOSITES)]) for _ in range(length)]
        else:
            xs = [rng.randint(1, LIMIT) for _ in range(length)]
        for pos in (i, j, i - 1, j + 1):
            if 0 <= pos < length and rng.random() < 0.5:
                xs[pos] = rng.choice([1, 1, 4, 6, 8, 9, 10, 49])
    return (xs,)


EXAMPLES = [
    ([0, 3], ([4, 5, 6, 1],), {4, 6}),
    ([1, 1], ([4, 1, 9],), set()),
    ([0, 2], ([2, 3, 5],), set()),
    ([2, 4], ([8, 9, 9, 4, 10, 12],), {4, 9, 10}),
    ([0, 0], ([1],), set()),
]


def correct_answer(params):
    i, j = params
    return (
        f"def composite_nums_between_indices(numbers):\n"
        f"    found = set()\n"
        f"    for n in numbers[{i}:{j} + 1]:\n"
        f"        for d in range(2, int(n ** 0.5) + 1):\n"
        f"            if n % d == 0:\n"
        f"                found.add(n)\n"
        f"                break\n"
        f"    return found\n"
    )


def wrong_answer(params):
    i, j = params
    # Treats every non-prime as composite, so 1 counts.
    return (
        f"def composite_nums_between_indices(lst):\n"
        f"    def is_prime(n):\n"
        f"        if n < 2:\n"
        f"            return False\n"
        f"        for d in range(2, int(n ** 0.5) + 1):\n"
        f"            if n % d == 0:\n"
        f"                return False\n"
        f"        return True\n"
        f"    return {{x for x in lst[{i}:{j} + 1] if not is_prime(x)}}\n"
    )
