"""Q54 'all_right_truncatable_prime': right-truncatable primes below x = tup[$0], sorted in $1 order.

Reading: the argument is a tuple of positive integers long enough to hold index $0;
x = tup[$0]. The answer is the list of primes p < x (strictly less) such that every
number obtained by repeatedly dropping the last digit is prime as well. The one-digit
primes 2, 3, 5, 7 count (nothing is left to test after them; this is the usual
definition, OEIS A024770); 1 is not prime. The result is a list sorted ascending or
descending as $1 says; an empty list when there is none (x <= 2). Plain list equality.
README: "a positive integer parameter i", but the published instances include i = 0
(a valid tuple index), so `valid` accepts i >= 0.
"""
import random

FUNCTION = "all_right_truncatable_prime"

ORDERS = ("descending", "ascending")


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 2:
        return False
    i, j = params
    return type(i) is int and i >= 0 and isinstance(j, str) and j in ORDERS


def random_params(rng):
    i = rng.randint(1, 100) if rng.random() < 0.7 else rng.randint(1, 1000)
    return [i, rng.choice(ORDERS)]


def _is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


def solution(params):
    i, order = params

    def all_right_truncatable_prime(tup):
        x = tup[i]
        # Grow right-truncatable primes by appending digits; appending only makes
        # the number larger, so a branch stops at the first value >= x.
        found = []
        level = [p for p in (2, 3, 5, 7) if p < x]
        while level:
            found.extend(level)
            nxt = []
            for p in level:
                for d in range(10):
                    q = p * 10 + d
                    if q < x and _is_prime(q):
                        nxt.append(q)
            level = nxt
        return sorted(found, reverse=(order == "descending"))

    return all_right_truncatable_prime


# The right-truncatable primes up to 10**5, used only to pick interesting x values.
_NOTABLE = sorted(solution([0, "ascending"])((10**5,)))


def inputs(params, seed):
    i, order = params
    rng = random.Random(f"q54-{seed}")
    fixed = [1, 2, 3, 23, 24, 8, 7, 739, 740, 2333, 2334, 100, 10, 4, 80, 1000, 6]
    if seed < len(fixed):
        x = fixed[seed]
    else:
        r = rng.random()
        if r < 0.35:
            x = rng.choice(_NOTABLE[:40]) + rng.choice((0, 0, 1, -1))
        elif r < 0.75:
            x = rng.randint(1, 1000)
        elif r < 0.95:
            x = rng.randint(1, 10000)
        else:
            x = rng.randint(1, 20000)
        x = max(x, 1)
    extra = 0 if seed == 0 else rng.randint(0, 6)
    tup = [rng.randint(1, 20000) for _ in range(i + 1 + extra)]
    tup[i] = x
    # Neighbours differ from x so that reading the wrong index shows.
    if i > 0 and tup[i - 1] == x:
        tup[i - 1] = x + 97
    if i + 1 < len(tup) and tup[i + 1] == x:
        tup[i + 1] = x + 89
    return (tuple(tup),)


EXAMPLES = [
    ([0, "ascending"], ((24,),), [2, 3, 5, 7, 23]),
    ([1, "descending"], ((5, 23, 9),), [7, 5, 3, 2]),
    ([2, "ascending"], ((100, 50, 2),), []),
    ([0, "descending"], ((1,),), []),
    ([0, "descending"], ((80,),), [79, 73, 71, 59, 53, 37, 31, 29, 23, 7, 5, 3, 2]),
    (
        [3, "ascending"],
        ((1, 1, 1, 300, 1),),
        [2, 3, 5, 7, 23, 29, 31, 37, 53, 59, 71, 73, 79, 233, 239, 293],
    ),
]


def correct_answer(params):
    i, order = params
    return (
        f"def all_right_truncatable_prime(t):\n"
        f"    x = t[{i}]\n"
        f"    if x <= 2:\n"
        f"        return []\n"
        f"    sieve = [True] * x\n"
        f"    sieve[0] = False\n"
        f"    if x > 1:\n"
        f"        sieve[1] = False\n"
        f"    k = 2\n"
        f"    while k * k < x:\n"
        f"        if sieve[k]:\n"
        f"            sieve[k * k::k] = [False] * len(range(k * k, x, k))\n"
        f"        k += 1\n"
        f"    res = []\n"
        f"    for n in range(2, x):\n"
        f"        if not sieve[n]:\n"
        f"            continue\n"
        f"        s = str(n)\n"
        f"        if all(sieve[int(s[:m])] for m in range(1, len(s))):\n"
        f"            res.append(n)\n"
        f"    if {order!r} == 'descending':\n"
        f"        res.reverse()\n"
        f"    return res\n"
    )


def wrong_answer(params):
    i, order = params
    # Inclusive bound: also keeps x itself when x is right-truncatable.
    return (
        f"def all_right_truncatable_prime(t):\n"
        f"    def isp(n):\n"
        f"        if n < 2:\n"
        f"            return False\n"
        f"        for d in range(2, int(n ** 0.5) + 1):\n"
        f"            if n % d == 0:\n"
        f"                return False\n"
        f"        return True\n"
        f"    found = []\n"
        f"    level = [2, 3, 5, 7]\n"
        f"    while level:\n"
        f"        level = [p for p in level if p <= t[{i}]]\n"
        f"        found += level\n"
        f"        level = [p * 10 + d for p in level for d in range(10) if isp(p * 10 + d)]\n"
        f"    return sorted(found, reverse={order!r} == 'descending')\n"
    )
