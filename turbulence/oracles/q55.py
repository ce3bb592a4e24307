"""Q55 'lists_with_product_equal_n': contiguous sublists of a circular list whose product is $0.

Reading: a sublist starts at any position s (0 <= s < L) and takes k consecutive
elements going forward around the circle (wrapping from the tail to the head),
1 <= k <= L, in that order; each (start, length) pair is one sublist, so equal
sublists found at different positions all appear (the question asks for duplicates).
The empty sublist is not one (its product would be 1). An empty input gives [].
The result is a list of lists, compared ignoring order but keeping multiplicity.

Open point, both accepted by `same`: for k = L the L starting positions give the L
rotations of the whole list. The solution lists all L of them (each start is a
different contiguous run of the circle); an answer that lists the whole list only once
(a single full-length entry, any one of the rotations) is also accepted. `same` sees
only the outputs, so it treats the longest entries of the expected answer as this
full-length group when there are exactly m of them of length m and they are the m
rotations of one another (it can also match that pattern by coincidence for a shorter
length, which only makes it slightly more lenient on that one input).
"""
import random
from collections import Counter

FUNCTION = "lists_with_product_equal_n"


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 1:
        return False
    return type(params[0]) is int


def random_params(rng):
    if rng.random() < 0.8:
        return [rng.randint(-100, 100)]
    return [rng.randint(-1000, 1000)]


def solution(params):
    (n,) = params

    def lists_with_product_equal_n(lst):
        size = len(lst)
        out = []
        for start in range(size):
            for k in range(1, size + 1):
                sub = [lst[(start + t) % size] for t in range(k)]
                product = 1
                for v in sub:
                    product *= v
                if product == n:
                    out.append(sub)
        return out

    return lists_with_product_equal_n


def _key_list(xs):
    if not isinstance(xs, list):
        return None
    keys = []
    for sub in xs:
        if not isinstance(sub, list):
            return None
        keys.append(tuple(sub))
    return keys


def _rotations(t):
    return [t[s:] + t[:s] for s in range(len(t))]


def same(got, want):
    g = _key_list(got)
    w = _key_list(want)
    if g is None or w is None:
        return False
    cg, cw = Counter(g), Counter(w)
    if cg == cw:
        return True
    if not w:
        return False
    m = max(len(t) for t in w)
    group = [t for t in w if len(t) == m]
    if m < 2 or len(group) != m or Counter(group) != Counter(_rotations(group[0])):
        return False
    # Whole list listed once instead of once per starting position.
    rest = cw - Counter(group)
    full_in_got = [t for t in g if len(t) == m]
    if len(full_in_got) != 1 or full_in_got[0] not in group:
        return False
    return cg == rest + Counter(full_in_got)


def _factors(n, parts, rng):
    """`parts` integers whose product is n (n != 0), prime factors spread at random."""
    out = [1] * parts
    m = abs(n)
    d = 2
    while d * d <= m:
        while m % d == 0:
            out[rng.randrange(parts)] *= d
            m //= d
        d += 1
    if m > 1:
        out[rng.randrange(parts)] *= m
    # Signs: flip an even number of signs, then one more if n < 0.
    for _ in range(rng.randint(0, parts)):
        a, b = rng.randrange(parts), rng.randrange(parts)
        if a != b:
            out[a], out[b] = -out[a], -out[b]
    if n < 0:
        k = rng.randrange(parts)
        out[k] = -out[k]
    return out


def _segment(n, parts, rng):
    if n == 0:
        seg = [rng.choice((-3, -2, -1, 1, 2, 5, 7)) for _ in range(parts)]
        seg[rng.randrange(parts)] = 0
        return seg
    return _factors(n, parts, rng)


def inputs(params, seed):
    (n,) = params
    rng = random.Random(f"q55-{seed}")
    junk = 2 if n != 2 else 3
    if seed == 0:
        return ([],)
    if seed == 1:
        # The run [1, n] exists only by wrapping from the tail to the head.
        return ([n, junk, 1],)
    if seed == 2:
        return ([n],)
    if seed == 3:
        # No sublist has product n.
        return ([0, 0, 0] if n != 0 else [2, -3, 5],)
    if seed == 4:
        # The whole list (every rotation) has product n.
        return (_segment(n, 3, rng),)
    if seed == 5:
        # Duplicates, signs and ones.
        return ([n, 1, n, -1, -n, 1],)
    if seed == 6:
        return ([1] * 4 + [n],)
    if seed == 7:
        # Only the wrap-around run reaches n: split n across the tail and the head.
        a, b = _segment(n, 2, rng)
        return ([b, junk + 5, junk + 7, a],)
    if seed == 8:
        return ([-1, n, -1],)
    size = rng.randint(1, 8)
    pool = [-1, 1, 0, 2, -2, 3, rng.randint(-20, 20)]
    lst = [rng.choice(pool) if rng.random() < 0.5 else rng.randint(-12, 12) for _ in range(size)]
    if n != 0 and rng.random() < 0.7:
        lst = [v if v != 0 else rng.choice((1, -1, 2)) for v in lst]
    for _ in range(rng.randint(1, 2)):
        k = rng.randint(1, size)
        seg = _segment(n, k, rng)
        start = rng.randrange(size)
        for t in range(k):
            lst[(start + t) % size] = seg[t]
    return (lst,)


EXAMPLES = [
    ([6], ([],), []),
    ([6], ([2, 3],), [[2, 3], [3, 2]]),
    ([5], ([5, 2, 1],), [[5], [1, 5]]),
    ([-4], ([2, -2, 1],), [[2, -2], [2, -2, 1], [-2, 1, 2], [1, 2, -2]]),
    ([0], ([0, 3],), [[0], [0, 3], [3, 0]]),
    ([7], ([7, 7],), [[7], [7]]),
    ([10], ([1, 1, 1],), []),
]


def correct_answer(params):
    (n,) = params
    return (
        f"def lists_with_product_equal_n(nums):\n"
        f"    L = len(nums)\n"
        f"    doubled = nums + nums\n"
        f"    result = []\n"
        f"    for i in range(L):\n"
        f"        prod = 1\n"
        f"        for j in range(i, i + L):\n"
        f"            prod *= doubled[j]\n"
        f"            if prod == {n}:\n"
        f"                result.append(doubled[i:j + 1])\n"
        f"    return result\n"
    )


def wrong_answer(params):
    (n,) = params
    # Treats the list as linear: misses the runs that wrap from the tail to the head.
    return (
        f"def lists_with_product_equal_n(nums):\n"
        f"    result = []\n"
        f"    for i in range(len(nums)):\n"
        f"        for j in range(i + 1, len(nums) + 1):\n"
        f"            prod = 1\n"
        f"            for v in nums[i:j]:\n"
        f"                prod *= v\n"
        f"            if prod == {n}:\n"
        f"                result.append(nums[i:j])\n"
        f"    return result\n"
    )
