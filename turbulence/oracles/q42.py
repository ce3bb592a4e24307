"""Q42 'prime_factors': the set of the distinct prime factors of the list's element at index $0.

Reading: the answer is a set of ints (1 has none: set(); a prime p gives {p}).
The list has at least $0 + 1 elements (the question presumes index $0 exists)
and all elements are positive; values stay at most 100,000 so that a plain
trial-division answer is quick. README: 0 <= i.
"""
import random

FUNCTION = "prime_factors"

LIMIT = 100_000


def _sieve(limit):
    flags = bytearray([1]) * (limit + 1)
    flags[0] = flags[1] = 0
    for p in range(2, int(limit**0.5) + 1):
        if flags[p]:
            flags[p * p :: p] = bytearray(len(flags[p * p :: p]))
    return [p for p in range(limit + 1) if flags[p]]


PRIMES = _sieve(LIMIT)
BIG_PRIMES = [p for p in PRIMES if p > 300]
HALF_PRIME = max(p for p in PRIMES if 2 * p <= LIMIT)


def arity(params):
    return 1


def valid(params):
    return isinstance(params, list) and len(params) == 1 and type(params[0]) is int and params[0] >= 0


def random_params(rng):
    return [rng.choice([0, 1, 2, rng.randint(0, 20), rng.randint(0, 300)])]


def solution(params):
    (i,) = params

    def prime_factors(xs):
        n = xs[i]
        found = set()
        for p in PRIMES:
            if p * p > n:
                break
            while n % p == 0:
                found.add(p)
                n //= p
        if n > 1:
            found.add(n)
        return found

    return prime_factors


def _value(rng, seed):
    if seed == 0:
        return 1
    if seed == 1:
        return 2
    if seed == 2:
        return BIG_PRIMES[-1]  # 99991, a prime
    if seed == 3:
        return 2**16
    if seed == 4:
        return 2 * 3 * 5 * 7 * 11 * 13  # 30030
    if seed == 5:
        return 313 * 313  # square of a prime
    if seed == 6:
        return 2 * HALF_PRIME  # small prime times a large one
    kind = seed % 5
    if kind == 0:
        return rng.randint(1, LIMIT)
    if kind == 1:
        return rng.choice(PRIMES)
    if kind == 2:
        p = rng.choice(BIG_PRIMES)
        return p * rng.randint(1, LIMIT // p)
    if kind == 3:
        p = rng.choice(PRIMES[:25])
        return p ** rng.randint(1, 5) if p ** 5 <= LIMIT else p ** rng.randint(1, 3)
    return rng.randint(1, 60)


def inputs(params, seed):
    (i,) = params
    rng = random.Random(f"q42-{seed}")
    length = i + 1 if seed % 2 == 0 else i + 1 + rng.randint(1, 8)
    xs = [rng.randint(1, 1000) for _ in range(length)]
    xs[i] = _value(rng, seed)
    return (xs,)


EXAMPLES = [
    ([0], ([12],), {2, 3}),
    ([1], ([5, 1],), set()),
    ([2], ([4, 6, 97],), {97}),
    ([0], ([2],), {2}),
    ([1], ([3, 360, 5],), {2, 3, 5}),
    ([3], ([1, 1, 1, 1001],), {7, 11, 13}),
]


def correct_answer(params):
    (i,) = params
    return (
        f"def is_prime(k):\n"
        f"    if k < 2:\n"
        f"        return False\n"
        f"    d = 2\n"
        f"    while d * d <= k:\n"
        f"        if k % d == 0:\n"
        f"            return False\n"
        f"        d += 1\n"
        f"    return True\n"
        f"\n"
        f"def prime_factors(numbers):\n"
        f"    n = numbers[{i}]\n"
        f"    result = set()\n"
        f"    d = 1\n"
        f"    while d * d <= n:\n"
        f"        if n % d == 0:\n"
        f"            for f in (d, n // d):\n"
        f"                if is_prime(f):\n"
        f"                    result.add(f)\n"
        f"        d += 1\n"
        f"    return result\n"
    )


def wrong_answer(params):
    (i,) = params
    # Trial division up to the square root, forgetting the prime left over at the end.
    return (
        f"def prime_factors(lst):\n"
        f"    n = lst[{i}]\n"
        f"    factors = set()\n"
        f"    d = 2\n"
        f"    while d * d <= n:\n"
        f"        while n % d == 0:\n"
        f"            factors.add(d)\n"
        f"            n //= d\n"
        f"        d += 1\n"
        f"    return factors\n"
    )
