"""Q60 'all_left_right_truncatable_prime': left-and-right-truncatable primes <= x = tup[$0], in $1 order.

Reading: the argument is a tuple of positive integers long enough to hold index $0;
x = tup[$0]. A number qualifies when it is prime, has no digit 0, and removing its
first and last digit together, again and again, leaves a prime at every step until a
one- or two-digit number remains (which must be prime too). So every one- and two-digit
prime qualifies (it is already "down to a one- or two-digit prime"), a three-digit one
needs a prime middle digit (127, 131, ...), a four-digit one needs its middle two
digits to form a prime (1117, ...). The bound is inclusive (x itself counts). The list
is sorted ascending or descending as $1 says, and is empty when there is none (x < 2).
Plain list equality.
README: "a positive integer parameter i", but the published instances include i = 0
(a valid tuple index), so `valid` accepts i >= 0.
"""
import random

FUNCTION = "all_left_right_truncatable_prime"

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

    def all_left_right_truncatable_prime(tup):
        x = tup[i]
        # Build outwards: wrap a qualifying core of k digits in one non-zero digit
        # on each side (k + 2 digits), keep the primes.
        cores = {1: [p for p in range(2, 10) if _is_prime(p)], 2: [p for p in range(10, 100) if _is_prime(p)]}
        found = cores[1] + cores[2]
        width = 3
        while width <= len(str(x)):
            level = []
            for c in cores[width - 2]:
                for a in range(1, 10):
                    for b in range(1, 10):
                        q = a * 10 ** (width - 1) + c * 10 + b
                        if q <= x and _is_prime(q):
                            level.append(q)
            cores[width] = level
            found += level
            width += 1
        found = [p for p in found if p <= x]
        return sorted(found, reverse=(order == "descending"))

    return all_left_right_truncatable_prime


# The qualifying primes below 2 * 10**4, used only to pick interesting x values.
_NOTABLE = sorted(solution([0, "ascending"])((2 * 10**4,)))


def inputs(params, seed):
    i, order = params
    rng = random.Random(f"q60-{seed}")
    fixed = [1, 2, 3, 97, 96, 127, 126, 140, 11, 10, 1117, 1116, 100, 1000, 5, 7, 8, 2]
    if seed < len(fixed):
        x = fixed[seed]
    else:
        r = rng.random()
        if r < 0.35:
            x = rng.choice(_NOTABLE[:80]) + rng.choice((0, 0, 1, -1))
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


_TWO_DIGIT = [11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97]

EXAMPLES = [
    ([0, "ascending"], ((2,),), [2]),
    ([0, "descending"], ((1,),), []),
    ([1, "ascending"], ((5, 30),), [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]),
    ([0, "ascending"], ((140,),), [2, 3, 5, 7] + _TWO_DIGIT + [127, 131, 137, 139]),
    ([2, "descending"], ((3, 3, 127, 3),), [127] + _TWO_DIGIT[::-1] + [7, 5, 3, 2]),
    ([0, "descending"], ((12,),), [11, 7, 5, 3, 2]),
]


def correct_answer(params):
    i, order = params
    return (
        f"def all_left_right_truncatable_prime(t):\n"
        f"    x = t[{i}]\n"
        f"    if x < 2:\n"
        f"        return []\n"
        f"    flags = bytearray([1]) * (x + 1)\n"
        f"    flags[0] = flags[1] = 0\n"
        f"    for k in range(2, int(x ** 0.5) + 1):\n"
        f"        if flags[k]:\n"
        f"            flags[k * k::k] = bytearray(len(range(k * k, x + 1, k)))\n"
        f"    result = []\n"
        f"    for n in range(2, x + 1):\n"
        f"        if not flags[n]:\n"
        f"            continue\n"
        f"        s = str(n)\n"
        f"        if '0' in s:\n"
        f"            continue\n"
        f"        good = True\n"
        f"        while len(s) > 2:\n"
        f"            s = s[1:-1]\n"
        f"            if not flags[int(s)]:\n"
        f"                good = False\n"
        f"                break\n"
        f"        if good:\n"
        f"            result.append(n)\n"
        f"    if {order!r} == 'descending':\n"
        f"        result = result[::-1]\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, order = params
    # Exclusive bound: "less than x" instead of "less than or equal to x".
    return (
        f"def all_left_right_truncatable_prime(t):\n"
        f"    def is_prime(n):\n"
        f"        return n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1))\n"
        f"    out = []\n"
        f"    for n in range(2, t[{i}]):\n"
        f"        s = str(n)\n"
        f"        if '0' in s:\n"
        f"            continue\n"
        f"        while len(s) > 2 and is_prime(int(s)):\n"
        f"            s = s[1:-1]\n"
        f"        if is_prime(int(s)) and is_prime(n):\n"
        f"            out.append(n)\n"
        f"    return sorted(out, reverse={order!r} == 'descending')\n"
    )
