"""Q59 'all_left_truncatable_prime': left-truncatable primes below x = tup[$0], sorted in $1 order.

Reading: the argument is a tuple of positive integers long enough to hold index $0;
x = tup[$0]. The answer is the list of primes p < x (strictly less) with no digit 0
such that every number obtained by repeatedly removing the leading digit is prime.
The one-digit primes 2, 3, 5, 7 count (usual definition, OEIS A024785); 103 does not
(it contains a 0, although 3 is prime). The list is sorted ascending or descending as
$1 says, and is empty when there is none (x <= 2). Plain list equality.
README: "a positive integer parameter i", but the published instances include i = 0
(a valid tuple index), so `valid` accepts i >= 0.
"""
import random

FUNCTION = "all_left_truncatable_prime"

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

    def all_left_truncatable_prime(tup):
        x = tup[i]
        # Grow left-truncatable primes by putting a non-zero digit in front; that
        # only makes the number larger, so a branch stops at the first value >= x.
        found = []
        level = [p for p in (2, 3, 5, 7) if p < x]
        scale = 10
        while level:
            found.extend(level)
            nxt = []
            for p in level:
                for d in range(1, 10):
                    q = d * scale + p
                    if q < x and _is_prime(q):
                        nxt.append(q)
            level = nxt
            scale *= 10
        return sorted(found, reverse=(order == "descending"))

    return all_left_truncatable_prime


# The left-truncatable primes below 10**5, used only to pick interesting x values.
_NOTABLE = sorted(solution([0, "ascending"])((10**5,)))


def inputs(params, seed):
    i, order = params
    rng = random.Random(f"q59-{seed}")
    fixed = [1, 2, 3, 110, 13, 14, 8, 7, 104, 108, 1000, 998, 1224, 100, 10, 4, 320, 6]
    if seed < len(fixed):
        x = fixed[seed]
    else:
        r = rng.random()
        if r < 0.3:
            x = rng.choice(_NOTABLE[:120]) + rng.choice((0, 0, 1, -1))
        elif r < 0.45:
            # Just above a number with a 0 whose truncations are prime (103, 307, 1013...).
            x = rng.choice((104, 108, 308, 310, 504, 508, 704, 1014, 2004, 3004, 4004)) + rng.randint(0, 30)
        elif r < 0.8:
            x = rng.randint(1, 1000)
        elif r < 0.97:
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
    ([0, "ascending"], ((14,),), [2, 3, 5, 7, 13]),
    ([1, "descending"], ((4, 2),), []),
    ([0, "ascending"], ((8,),), [2, 3, 5, 7]),
    ([0, "ascending"], ((7,),), [2, 3, 5]),
    (
        [0, "ascending"],
        ((110,),),
        [2, 3, 5, 7, 13, 17, 23, 37, 43, 47, 53, 67, 73, 83, 97],
    ),
    (
        [2, "descending"],
        ((9, 9, 120, 9),),
        [113, 97, 83, 73, 67, 53, 47, 43, 37, 23, 17, 13, 7, 5, 3, 2],
    ),
]


def correct_answer(params):
    i, order = params
    return (
        f"def all_left_truncatable_prime(t):\n"
        f"    x = t[{i}]\n"
        f"    if x < 3:\n"
        f"        return []\n"
        f"    is_p = [False, False] + [True] * (x - 2)\n"
        f"    for a in range(2, int(x ** 0.5) + 1):\n"
        f"        if is_p[a]:\n"
        f"            for b in range(a * a, x, a):\n"
        f"                is_p[b] = False\n"
        f"    out = []\n"
        f"    for n in range(2, x):\n"
        f"        if not is_p[n]:\n"
        f"            continue\n"
        f"        s = str(n)\n"
        f"        if '0' in s:\n"
        f"            continue\n"
        f"        if all(is_p[int(s[k:])] for k in range(1, len(s))):\n"
        f"            out.append(n)\n"
        f"    out.sort(reverse=({order!r} == 'descending'))\n"
        f"    return out\n"
    )


def wrong_answer(params):
    i, order = params
    # Forgets the "contains no 0" rule: 103 (-> 03 = 3) and 107 slip in.
    return (
        f"def all_left_truncatable_prime(t):\n"
        f"    def isp(n):\n"
        f"        if n < 2:\n"
        f"            return False\n"
        f"        for d in range(2, int(n ** 0.5) + 1):\n"
        f"            if n % d == 0:\n"
        f"                return False\n"
        f"        return True\n"
        f"    res = []\n"
        f"    for n in range(2, t[{i}]):\n"
        f"        s = str(n)\n"
        f"        if all(isp(int(s[k:])) for k in range(len(s))):\n"
        f"            res.append(n)\n"
        f"    return sorted(res, reverse={order!r} == 'descending')\n"
    )
