"""Q48 'return_binary_or_hexa': with a = t[$0] and b = t[$1], the sum of the integers
a+1 .. b-1 that are missing from the tuple between those indices; an odd sum as a
binary string, an even one as a hexadecimal string, '' when none is missing.

Reading:
- The tuple is long enough to hold index $1 (the question presumes it). As the tuple is
  sorted and distinct, "present in the tuple between indices $0 and $1" (inclusive or
  not) is the same as present in the tuple at all.
- No prefix, no leading zeros; hex letters in either case. As upstream's harness does,
  `same` upper-cases the answer's output before comparing (so it must be a str).
- A missing integer is at least a + 1 >= 1, so a nonempty set of missing integers has a
  positive sum; "" exactly when none is missing (including b == a + 1).
README: 0 <= i < j - 1. NOTE: the published params contradict it: instance row [6, 7]
(also one of the upstream manual rows) has j = i + 1. The question is still well
defined there (no element strictly between, so every integer of a+1..b-1 is missing);
`valid` therefore accepts 0 <= i < j.
"""
import random

FUNCTION = "return_binary_or_hexa"


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, (list, tuple)) and len(params) == 2):
        return False
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in params):
        return False
    i, j = params
    # README says i < j - 1; the published row [6, 7] needs i < j.
    return 0 <= i < j


def random_params(rng):
    i = rng.randint(0, 100)
    return [i, rng.randint(i + 2, i + 120)]


def solution(params):
    i, j = params

    def return_binary_or_hexa(t):
        a, b = t[i], t[j]
        present = set(t[i : j + 1])
        missing = [x for x in range(a + 1, b) if x not in present]
        if not missing:
            return ""
        total = sum(missing)
        if total % 2 == 1:
            return bin(total)[2:]
        return format(total, "X")

    return return_binary_or_hexa


def same(got, want):
    return isinstance(got, str) and got.upper() == want.upper()


def _build(rng, size, gaps_at):
    """Ascending distinct nonnegative ints; gaps_at(k) gives t[k] - t[k-1] (>= 1)."""
    value = rng.choice([0, 0, rng.randint(0, 20)])
    out = [value]
    for k in range(1, size):
        value += gaps_at(k)
        out.append(value)
    return tuple(out)


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"q48-{seed}")
    size = j + 1 + (0 if seed % 2 == 0 else rng.randint(1, 5))
    if seed == 0:  # nothing missing
        return (_build(rng, size, lambda k: 1),)
    if seed == 1:  # one missing integer just after a
        return (_build(rng, size, lambda k: 2 if k == i + 1 else 1),)
    if seed == 2:  # one missing integer just before b
        return (_build(rng, size, lambda k: 2 if k == j else 1),)
    if seed == 3:  # gaps only outside [i, j]
        return (_build(rng, size, lambda k: 1 if i < k <= j else rng.randint(2, 9)),)
    if seed == 4:  # a wide gap just before b
        return (_build(rng, size, lambda k: rng.randint(3, 40) if k == j else 1),)
    if seed == 5:  # a wide gap just after a
        return (_build(rng, size, lambda k: rng.randint(3, 40) if k == i + 1 else 1),)
    if seed == 6:  # starts at 0, gaps of two everywhere
        t = _build(rng, size, lambda k: 2)
        return (tuple(x - t[0] for x in t),)
    # random gaps: mostly 1, sometimes wider
    weights = rng.choice([(0.8, 0.15), (0.5, 0.4), (0.2, 0.5)])

    def gap(k):
        r = rng.random()
        if r < weights[0]:
            return 1
        if r < weights[0] + weights[1]:
            return rng.randint(2, 4)
        return rng.randint(5, 60)

    return (_build(rng, size, gap),)


EXAMPLES = [
    ([0, 2], ((1, 2, 5),), "111"),
    ([0, 3], ((0, 1, 2, 3),), ""),
    ([6, 7], ((0, 1, 2, 3, 4, 5, 10, 20),), "10000111"),
    ([1, 3], ((0, 2, 5, 8),), "14"),
    ([0, 2], ((0, 4, 12),), "3E"),
    ([2, 4], ((1, 2, 3, 4, 5, 100),), ""),
]


def correct_answer(params):
    i, j = params
    return (
        "def return_binary_or_hexa(nums):\n"
        f"    a = nums[{i}]\n"
        f"    b = nums[{j}]\n"
        "    count = (b - a - 1) - (" + f"{j} - {i} - 1" + ")\n"
        "    if count <= 0:\n"
        "        return ''\n"
        f"    total = (a + b) * (b - a - 1) // 2 - sum(nums[{i} + 1:{j}])\n"
        "    base = 2 if total % 2 else 16\n"
        "    digits = '0123456789abcdef'\n"
        "    out = ''\n"
        "    while total:\n"
        "        out = digits[total % base] + out\n"
        "        total //= base\n"
        "    return out\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: stops at b - 2 (range end taken as b - 1, exclusive).
    return (
        "def return_binary_or_hexa(t):\n"
        f"    a, b = t[{i}], t[{j}]\n"
        f"    seen = set(t[{i}:{j} + 1])\n"
        "    s = sum(x for x in range(a + 1, b - 1) if x not in seen)\n"
        "    if s == 0:\n"
        "        return ''\n"
        "    return bin(s)[2:] if s % 2 else hex(s)[2:]\n"
    )
