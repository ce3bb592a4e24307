"""Q14 'find_second_smallest_num': the second smallest element from index $0 to $1, both inclusive.

Reading: the list holds distinct numbers (inputs never repeat a value; ints, floats
or both) and is long enough to hold index $1 (the question presumes it; inputs have
length >= $1 + 1). "No such an element" happens exactly when the range holds a
single element ($0 == $1). The question says return 'None' with quotes: both the
string 'None' and the object None are accepted there (`same`); the model solution
returns the string. Otherwise the element itself, compared with ==.
README: 0 <= i <= j.
"""
import random

FUNCTION = "find_second_smallest_num"


def arity(params):
    return 1


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def valid(params):
    if not isinstance(params, (list, tuple)) or len(params) != 2:
        return False
    i, j = params
    return _is_int(i) and _is_int(j) and 0 <= i <= j


def random_params(rng):
    i = rng.choice([0, 0, rng.randint(0, 10), rng.randint(0, 100)])
    return [i, i + rng.choice([0, 0, 1, 2, rng.randint(0, 10), rng.randint(0, 100)])]


def solution(params):
    i, j = params

    def find_second_smallest_num(xs):
        part = sorted(xs[i : j + 1])
        if len(part) < 2:
            return "None"
        return part[1]

    return find_second_smallest_num


def same(got, want):
    if want is None or want == "None":
        return got is None or got == "None"
    return got == want


def _distinct(rng, n, kind):
    """n distinct numbers, largest first."""
    span = max(20, 3 * n)
    if kind == "neg":
        values = rng.sample(range(-span, 0), n)
    elif kind == "float":
        values = [v / 4 for v in rng.sample(range(-4 * span, 4 * span), n)]
    else:
        values = rng.sample(range(-span, span), n)
    return sorted(values, reverse=True)


def _place(rng, n, order, kind="int"):
    """A list of n distinct numbers whose largest values sit at the positions in
    `order` (largest first); the rest in random positions."""
    values = _distinct(rng, n, kind)
    xs = [None] * n
    used = []
    for p in order:
        if 0 <= p < n and p not in used:
            used.append(p)
    for p, v in zip(used, values):
        xs[p] = v
    rest = values[len(used):]
    rng.shuffle(rest)
    free = [k for k in range(n) if xs[k] is None]
    for p, v in zip(free, rest):
        xs[p] = v
    return xs


def _up(i, j, seed, rng):
    """An input for the second largest (Q13's generator); flipped in sign below."""
    n = j + 2 + rng.randint(0, 10)  # one element past j, at least
    if seed == 0:  # exactly long enough, random
        return _place(rng, j + 1, [])
    if seed == 1:  # larger values just outside; largest inside at j, second at i
        return _place(rng, n, [j + 1, i - 1, j, i])
    if seed == 2:  # larger values just outside; largest inside at i, second at j
        return _place(rng, n, [i - 1, j + 1, i, j])
    if seed == 3:  # decreasing
        return sorted(_distinct(rng, n, "int"), reverse=True)
    if seed == 4:  # increasing
        return sorted(_distinct(rng, n, "int"))
    if seed == 5:  # negative numbers only, larger ones just outside
        return _place(rng, n, [j + 1, i - 1], "neg")
    if seed == 6:  # floats, larger ones just outside
        return _place(rng, n, [i - 1, j + 1, j, i], "float")
    if seed == 7:  # exactly long enough, increasing
        return sorted(_distinct(rng, j + 1, "int"))
    if rng.random() < 0.3:
        n = j + 1
    kind = rng.choice(["int", "int", "float", "neg"])
    order = []
    if rng.random() < 0.6:
        order = [i - 1, i, i + 1, j - 1, j, j + 1]
        rng.shuffle(order)
        order = order[: rng.randint(1, 6)]
    return _place(rng, n, order, kind)


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"find_second_smallest_num/{seed}")
    # The mirror image of the second-largest inputs: every edge case (extremes at
    # i and j, smaller values just outside the range) carries over.
    return ([-x for x in _up(i, j, seed, rng)],)


EXAMPLES = [
    ([1, 3], ([-100, 5, 9, 7, -50],), 7),
    ([0, 0], ([3, 8],), "None"),
    ([2, 4], ([0, 1, 5, 2.5, 9, -4],), 5),
    ([0, 1], ([20, 10],), 20),
    ([6, 6], ([1, 2, 3, 4, 5, 6, 7],), "None"),
]


def correct_answer(params):
    i, j = params
    return (
        f"import heapq\n"
        f"def find_second_smallest_num(numbers):\n"
        f"    window = [numbers[k] for k in range({i}, {j} + 1)]\n"
        f"    if len(window) < 2:\n"
        f"        return 'None'\n"
        f"    return heapq.nsmallest(2, window)[1]\n"
    )


def wrong_answer(params):
    i, j = params
    # Off by one: the loop runs one past index j.
    return (
        f"def find_second_smallest_num(lst):\n"
        f"    vals = [lst[k] for k in range({i}, {j} + 2) if k < len(lst)]\n"
        f"    vals.sort()\n"
        f"    return vals[1] if len(vals) > 1 else 'None'\n"
    )
