"""Q43 'find_primes_between_indices': the primes among xs[$0 .. $1] (inclusive), sorted in $2 order.

Reading: primes are the integers > 1 with no divisor other than 1 and themselves
(so 0, 1 and negative numbers are never prime). The list is at least $1 + 1
long (the question presumes index $1 exists). "The sorted list of all prime
numbers" may keep each occurrence (a prime found twice appears twice) or list
each prime once; `same` accepts both, in the asked order, as a list (strict
type). README: 0 <= i <= j, k in {'descending', 'ascending'}.
"""
import random

FUNCTION = "find_primes_between_indices"


def _sieve(limit):
    flags = bytearray([1]) * (limit + 1)
    flags[0] = flags[1] = 0
    for p in range(2, int(limit**0.5) + 1):
        if flags[p]:
            flags[p * p :: p] = bytearray(len(flags[p * p :: p]))
    return flags


LIMIT = 2000
IS_PRIME = _sieve(LIMIT)
PRIMES = [p for p in range(LIMIT + 1) if IS_PRIME[p]]
NON_PRIMES = [n for n in range(-30, 200) if n < 2 or not IS_PRIME[n]]


def _is_prime(n):
    if n < 2:
        return False
    if n <= LIMIT:
        return bool(IS_PRIME[n])
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, list) or len(params) != 3:
        return False
    i, j, order = params
    return type(i) is int and type(j) is int and 0 <= i <= j and order in ("ascending", "descending")


def random_params(rng):
    i = rng.randint(0, 150)
    return [i, rng.randint(i, i + 120), rng.choice(["ascending", "descending"])]


def solution(params):
    i, j, order = params

    def find_primes_between_indices(xs):
        return sorted((x for x in xs[i : j + 1] if _is_prime(x)), reverse=order == "descending")

    return find_primes_between_indices


def same(got, want):
    if type(got) is not list:
        return False
    if got == want:
        return True
    once = []
    for x in want:
        if not once or once[-1] != x:
            once.append(x)
    return got == once


def inputs(params, seed):
    i, j, order = params
    rng = random.Random(f"q43-{seed}")
    length = j + 1 if seed in (0, 1, 3) else j + 1 + rng.randint(0, 12)
    if seed == 0:
        # No prime in the range (0, 1, negatives of primes, composites);
        # primes just outside it.
        xs = [rng.choice([0, 1, -2, -3, -7, 4, 9, 15, 91, 1000]) for _ in range(length)]
        xs[i] = rng.choice([-2, -3, -7])
        if i > 0:
            xs[i - 1] = 2
    elif seed == 1:
        # Exactly j + 1 elements; the only prime of the range sits at index j.
        xs = [rng.choice(NON_PRIMES) for _ in range(length)]
        xs[j] = rng.choice(PRIMES[:100])
    elif seed == 2:
        # A prime at index i and another at index j (one element when i == j),
        # another one just past j.
        xs = [rng.choice(NON_PRIMES) for _ in range(length)]
        xs[i] = 2
        xs[j] = 97 if j != i else 2
        if j + 1 < length:
            xs[j + 1] = 3
    elif seed == 3:
        # Primes repeated.
        xs = [rng.choice([2, 3, 3, 5, 5, 5, 4, 1]) for _ in range(length)]
    elif seed == 4:
        # Every element prime.
        xs = [rng.choice(PRIMES[:200]) for _ in range(length)]
    else:
        kind = seed % 3
        if kind == 0:
            xs = [rng.randint(-20, 100) for _ in range(length)]
        elif kind == 1:
            xs = [rng.choice(PRIMES) if rng.random() < 0.4 else rng.choice(NON_PRIMES) for _ in range(length)]
        else:
            xs = [rng.randint(-1000, LIMIT) for _ in range(length)]
        for pos in (i, j, i - 1, j + 1):
            if 0 <= pos < length and rng.random() < 0.5:
                xs[pos] = rng.choice(PRIMES[:60])
    return (xs,)


EXAMPLES = [
    ([0, 3, "ascending"], ([7, 4, 2, 9],), [2, 7]),
    ([0, 3, "descending"], ([7, 4, 2, 9],), [7, 2]),
    ([1, 1, "ascending"], ([2, 4, 3],), []),
    ([0, 4, "ascending"], ([-7, 0, 1, 13, 13],), [13, 13]),
    ([2, 2, "descending"], ([1, 1, 2],), [2]),
]


def correct_answer(params):
    i, j, order = params
    return (
        f"def find_primes_between_indices(nums):\n"
        f"    def is_prime(n):\n"
        f"        if n <= 1:\n"
        f"            return False\n"
        f"        d = 2\n"
        f"        while d * d <= n:\n"
        f"            if n % d == 0:\n"
        f"                return False\n"
        f"            d += 1\n"
        f"        return True\n"
        f"    primes = []\n"
        f"    for idx in range({i}, {j} + 1):\n"
        f"        if idx < len(nums) and is_prime(nums[idx]):\n"
        f"            primes.append(nums[idx])\n"
        f"    primes.sort()\n"
        f"    if {order!r} == 'descending':\n"
        f"        primes.reverse()\n"
        f"    return primes\n"
    )


def wrong_answer(params):
    i, j, order = params
    # Index j taken as exclusive.
    return (
        f"def find_primes_between_indices(lst):\n"
        f"    def is_prime(n):\n"
        f"        return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n"
        f"    return sorted([x for x in lst[{i}:{j}] if is_prime(x)], reverse={order == 'descending'})\n"
    )
