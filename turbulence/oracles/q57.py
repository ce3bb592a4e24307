"""Q57 'submatrix_with_particular_sum': all submatrices of a 2-D numpy matrix whose entries sum to $0.

Reading: a submatrix is a contiguous block m[r1:r2, c1:c2] (consecutive rows by
consecutive columns, at least 1x1), the usual reading in programming; every position
counts separately, so equal blocks found at different places all appear. The input
is a 2-D numpy integer array (np.ndarray with ndim 2, at least 1x1; "two-dimensional
numpy matrix" is read as a 2-D array, not necessarily the np.matrix class). The result
is a list; its entries may be numpy arrays, numpy matrices or nested lists, each must
be two-dimensional (a 1xk block is [[a, b]], not [a, b]); `same` compares the lists as
multisets of (shape, values), ignoring order. [] when no block has that sum.
Not accepted: the linear-algebra reading of "submatrix" (any subset of rows and of
columns, not necessarily adjacent); the text gives no sign of it and `same` cannot
tell the two apart from the outputs alone.
"""
import random
from collections import Counter

import numpy as np

FUNCTION = "submatrix_with_particular_sum"


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 1:
        return False
    return type(params[0]) is int


def random_params(rng):
    if rng.random() < 0.7:
        return [rng.randint(-100, 100)]
    return [rng.randint(-1000, 1000)]


def solution(params):
    (n,) = params

    def submatrix_with_particular_sum(m):
        rows, cols = m.shape
        out = []
        for r1 in range(rows):
            for r2 in range(r1 + 1, rows + 1):
                for c1 in range(cols):
                    for c2 in range(c1 + 1, cols + 1):
                        block = m[r1:r2, c1:c2]
                        if int(block.sum()) == n:
                            out.append(block.copy())
        return out

    return submatrix_with_particular_sum


def _key(block):
    try:
        a = np.asarray(block)
    except Exception:
        return None
    if a.ndim != 2 or a.dtype == object:
        return None
    return (a.shape, tuple(v.item() if hasattr(v, "item") else v for v in a.ravel()))


def same(got, want):
    if not isinstance(got, list):
        return False
    kg = [_key(b) for b in got]
    if any(k is None for k in kg):
        return False
    return Counter(kg) == Counter(_key(b) for b in want)


def _matrix(rows, cols, lo, hi, rng):
    return [[rng.randint(lo, hi) for _ in range(cols)] for _ in range(rows)]


def _plant(grid, n, rng, r1=None, c1=None, r2=None, c2=None):
    """Change one cell of a block so that the block sums to n."""
    rows, cols = len(grid), len(grid[0])
    if r1 is None:
        r1 = rng.randrange(rows)
        r2 = rng.randint(r1 + 1, rows)
        c1 = rng.randrange(cols)
        c2 = rng.randint(c1 + 1, cols)
    total = sum(grid[r][c] for r in range(r1, r2) for c in range(c1, c2))
    r = rng.randrange(r1, r2)
    c = rng.randrange(c1, c2)
    grid[r][c] += n - total


def inputs(params, seed):
    (n,) = params
    rng = random.Random(f"q57-{seed}")
    if seed == 0:
        grid = [[n]]
    elif seed == 1:
        grid = [[n + 1]]
    elif seed == 2:
        # One row; the matching run touches the right edge.
        grid = _matrix(1, 5, -4, 4, rng)
        _plant(grid, n, rng, 0, 3, 1, 5)
    elif seed == 3:
        # One column; the matching run touches the bottom edge.
        grid = _matrix(5, 1, -4, 4, rng)
        _plant(grid, n, rng, 3, 0, 5, 1)
    elif seed == 4:
        # The whole matrix sums to n.
        grid = _matrix(2, 3, -5, 5, rng)
        _plant(grid, n, rng, 0, 0, 2, 3)
    elif seed == 5:
        # Equal blocks at different places.
        grid = [[n, 0], [0, n]]
    elif seed == 6:
        # No block can reach n: every entry has the wrong sign (or n = 0 with positives).
        sign = -1 if n > 0 else 1
        grid = [[sign * rng.randint(1, 9) for _ in range(3)] for _ in range(3)]
    elif seed == 7:
        # Bottom-right corner cell only.
        grid = _matrix(3, 3, -3, 3, rng)
        grid[2][2] = n
        for r in range(3):
            for c in range(3):
                if (r, c) != (2, 2) and grid[r][c] == n:
                    grid[r][c] = n + 1
    elif seed == 8:
        grid = [[0] * 3 for _ in range(2)]
        grid[1][2] = n
    else:
        rows = rng.randint(1, 5)
        cols = rng.randint(1, 5)
        span = rng.choice((3, 5, 10, max(3, abs(n) // 4)))
        grid = _matrix(rows, cols, -span, span, rng)
        for _ in range(rng.randint(0, 3)):
            _plant(grid, n, rng)
    return (np.array(grid, dtype=np.int64),)


EXAMPLES = [
    ([5], (np.array([[5]]),), [[[5]]]),
    ([4], (np.array([[5]]),), []),
    ([3], (np.array([[1, 2], [3, 0]]),), [[[1, 2]], [[3, 0]], [[3]]]),
    ([0], (np.array([[1, -1, 0]]),), [[[0]], [[1, -1]], [[1, -1, 0]]]),
    ([2], (np.array([[1], [1], [1]]),), [[[1], [1]], [[1], [1]]]),
    ([-7], (np.array([[1, 2], [3, 4]]),), []),
]


def correct_answer(params):
    (n,) = params
    return (
        f"import numpy as np\n"
        f"\n"
        f"def submatrix_with_particular_sum(matrix):\n"
        f"    a = np.array(matrix)\n"
        f"    R, C = a.shape\n"
        f"    pre = [[0] * (C + 1) for _ in range(R + 1)]\n"
        f"    for i in range(R):\n"
        f"        for j in range(C):\n"
        f"            pre[i + 1][j + 1] = int(a[i, j]) + pre[i][j + 1] + pre[i + 1][j] - pre[i][j]\n"
        f"    res = []\n"
        f"    for top in range(R):\n"
        f"        for left in range(C):\n"
        f"            for bottom in range(top, R):\n"
        f"                for right in range(left, C):\n"
        f"                    s = pre[bottom + 1][right + 1] - pre[top][right + 1] - pre[bottom + 1][left] + pre[top][left]\n"
        f"                    if s == {n}:\n"
        f"                        res.append(a[top:bottom + 1, left:right + 1].tolist())\n"
        f"    return res\n"
    )


def wrong_answer(params):
    (n,) = params
    # Off by one: the exclusive end never reaches the last row / column.
    return (
        f"import numpy as np\n"
        f"\n"
        f"def submatrix_with_particular_sum(matrix):\n"
        f"    rows, cols = matrix.shape\n"
        f"    result = []\n"
        f"    for i in range(rows):\n"
        f"        for j in range(i + 1, rows):\n"
        f"            for k in range(cols):\n"
        f"                for l in range(k + 1, cols):\n"
        f"                    sub = matrix[i:j, k:l]\n"
        f"                    if np.sum(sub) == {n}:\n"
        f"                        result.append(sub)\n"
        f"    return result\n"
    )
