"""Q49 'if_decimal_is_divisible': whether the integer written in binary (most
significant digit first) is divisible by the $0-th Fibonacci number, counting
0 as the first (F1 = 0, F2 = 1, F3 = 1, F4 = 2, F5 = 3, ...).

Reading: "true"/"false" are Python's True/False (compared with ==, as upstream does).
The strings are plain binary with no prefix and no leading zeros ("0" for zero); 0 is
divisible by every Fibonacci number used here (i > 3 gives a divisor >= 2).
README: i > 3.
"""
import random

FUNCTION = "if_decimal_is_divisible"


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, (list, tuple)) and len(params) == 1):
        return False
    i = params[0]
    return isinstance(i, int) and not isinstance(i, bool) and i > 3


def random_params(rng):
    return [rng.randint(4, 200)]


def _fib(k):
    """k-th Fibonacci number with the first one (k = 1) being 0."""
    a, b = 0, 1
    for _ in range(k - 1):
        a, b = b, a + b
    return a


def solution(params):
    divisor = _fib(params[0])

    def if_decimal_is_divisible(s):
        return int(s, 2) % divisor == 0

    return if_decimal_is_divisible


def inputs(params, seed):
    i = params[0]
    f = _fib(i)
    rng = random.Random(f"q49-{seed}")
    fixed = [0, 1, f, f - 1, f + 1, 2 * f, _fib(i + 1), _fib(i - 1), _fib(i + 2), f * f, 3 * f - 1]
    if seed < len(fixed):
        x = fixed[seed]
    else:
        kind = rng.randrange(5)
        if kind == 0:  # a multiple of F_i
            x = f * rng.randint(1, 1 << 20)
        elif kind == 1:  # a multiple of F_i plus a small offset
            x = f * rng.randint(0, 1 << 20) + rng.choice([-1, 1, 2, f - 1, f // 2])
        elif kind == 2:  # a multiple of a neighbouring Fibonacci number
            x = _fib(i + rng.choice([-2, -1, 1, 2])) * rng.randint(1, 1 << 12)
        elif kind == 3:  # a random number of about the size of F_i
            x = rng.randint(0, 4 * f)
        else:  # a small number
            x = rng.randint(0, 300)
        x = max(x, 0)
    return (bin(x)[2:],)


EXAMPLES = [
    ([4], ("0",), True),
    ([4], ("110",), True),
    ([5], ("111",), False),
    ([6], ("1010",), True),
    ([10], ("100010",), True),
    ([10], ("100001",), False),
    ([11], ("100010",), False),
]


def correct_answer(params):
    i = params[0]
    return (
        "def if_decimal_is_divisible(binary):\n"
        "    fib = [0, 1]\n"
        f"    while len(fib) < {i}:\n"
        "        fib.append(fib[-1] + fib[-2])\n"
        f"    d = fib[{i} - 1]\n"
        "    r = 0\n"
        "    for ch in binary:\n"
        "        r = (r * 2 + (ch == '1')) % d\n"
        "    return r == 0\n"
    )


def wrong_answer(params):
    i = params[0]
    # Off by one: counts the Fibonacci numbers from index 0 (takes F_{i+1}).
    return (
        "def if_decimal_is_divisible(s):\n"
        "    a, b = 0, 1\n"
        f"    for _ in range({i}):\n"
        "        a, b = b, a + b\n"
        "    return int(s, 2) % a == 0\n"
    )
