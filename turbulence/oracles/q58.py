"""Q58 'submatrix_with_n_numbers': how many submatrices of a 2-D numpy matrix hold exactly $0 integers.

Reading: a submatrix is a contiguous block m[r1:r2, c1:c2] (consecutive rows by
consecutive columns), the usual reading in programming; "contain $0 integers" means
it has $0 entries (height x width = $0), whatever their values; every position counts
once, so the answer is the sum over h * w = $0 of (R - h + 1) * (C - w + 1) for the
blocks that fit. An int; 0 when none fits. The input is a 2-D numpy integer array
(np.ndarray with ndim 2, at least 1x1; "two-dimensional numpy matrix" is read as a
2-D array, not necessarily the np.matrix class). Plain == (a numpy integer equal to
the count is accepted).
Not accepted: the linear-algebra reading of "submatrix" (any subset of rows and of
columns, not necessarily adjacent, which would count C(R, h) * C(C, w)); the text gives
no sign of it.
"""
import random

import numpy as np

FUNCTION = "submatrix_with_n_numbers"


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 1:
        return False
    return type(params[0]) is int and params[0] > 0


def random_params(rng):
    return [rng.randint(1, 30) if rng.random() < 0.5 else rng.randint(1, 200)]


def solution(params):
    (n,) = params

    def submatrix_with_n_numbers(m):
        rows, cols = m.shape
        count = 0
        for h in range(1, min(rows, n) + 1):
            if n % h == 0 and n // h <= cols:
                count += (rows - h + 1) * (cols - n // h + 1)
        return count

    return submatrix_with_n_numbers


def _divisor_pairs(n):
    return [(h, n // h) for h in range(1, n + 1) if n % h == 0]


def inputs(params, seed):
    (n,) = params
    rng = random.Random(f"q58-{seed}")
    pairs = _divisor_pairs(n)
    if seed == 0:
        shape = (1, n)  # one row of exactly n: 1
    elif seed == 1:
        shape = (n, 1)  # one column of exactly n: 1
    elif seed == 2:
        shape = (1, 1)
    elif seed == 3:
        # Too few entries: 0 (for n = 1 a 1x2 row instead, answer 2).
        shape = (1, n - 1) if n > 1 else (1, 2)
    elif seed == 4:
        # The most square factorisation, exactly: the whole matrix once (plus others).
        shape = min(pairs, key=lambda p: abs(p[0] - p[1]))
    elif seed == 5:
        # A bit larger than a factorisation in both directions.
        h, w = rng.choice(pairs)
        shape = (h + 1, w + 2)
    elif seed == 6:
        # Wide but too short for a row of n when n > 3: only blocks of height >= 2.
        shape = (2, max(1, (n + 1) // 2))
    else:
        r = rng.random()
        if r < 0.5:
            h, w = rng.choice(pairs)
            if rng.random() < 0.5:
                h, w = w, h
            shape = (h + rng.randint(0, 3), w + rng.randint(0, 3))
        elif r < 0.8:
            shape = (rng.randint(1, 15), rng.randint(1, 15))
        else:
            side = rng.randint(1, 40)
            shape = (rng.randint(1, 4), side) if rng.random() < 0.5 else (side, rng.randint(1, 4))
    rows, cols = shape
    grid = np.array([[rng.randint(-9, 9) for _ in range(cols)] for _ in range(rows)], dtype=np.int64)
    return (grid,)


EXAMPLES = [
    ([1], (np.array([[7]]),), 1),
    ([2], (np.array([[1, 2], [3, 4]]),), 4),
    ([5], (np.array([[1, 2], [3, 4]]),), 0),
    ([4], (np.zeros((4, 4), dtype=int),), 17),
    ([3], (np.array([[1, 2, 3]]),), 1),
    ([6], (np.array([[1, 2, 3], [4, 5, 6]]),), 1),
    ([1], (np.array([[1, 2, 3], [4, 5, 6]]),), 6),
]


def correct_answer(params):
    (n,) = params
    return (
        f"def submatrix_with_n_numbers(matrix):\n"
        f"    R = len(matrix)\n"
        f"    C = len(matrix[0]) if R else 0\n"
        f"    total = 0\n"
        f"    for height in range(1, R + 1):\n"
        f"        for width in range(1, C + 1):\n"
        f"            if height * width == {n}:\n"
        f"                for top in range(R - height + 1):\n"
        f"                    for left in range(C - width + 1):\n"
        f"                        total += 1\n"
        f"    return total\n"
    )


def wrong_answer(params):
    (n,) = params
    # Off by one: blocks that reach the last row or the last column are never counted.
    return (
        f"def submatrix_with_n_numbers(matrix):\n"
        f"    rows, cols = matrix.shape\n"
        f"    count = 0\n"
        f"    for i in range(rows):\n"
        f"        for j in range(cols):\n"
        f"            for h in range(1, rows - i):\n"
        f"                for w in range(1, cols - j):\n"
        f"                    if h * w == {n}:\n"
        f"                        count += 1\n"
        f"    return count\n"
    )
