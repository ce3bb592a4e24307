"""Q27 'insert_after_index': the given list with the object $0 inserted at index
$1 + 1 (right after the element at index $1); one element longer.

Reading: $0 is inserted as ONE element even when it is a list (not spliced in); the
list holds index $1 (the question presumes it; when $1 is the last index the object
goes at the end). Returning the given list mutated or a new list are both fine.
README: i any object, j an integer with 0 <= j.
"""
import random

FUNCTION = "insert_after_index"


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, list) and len(params) == 2):
        return False
    obj, j = params
    return isinstance(j, int) and not isinstance(j, bool) and j >= 0


def random_params(rng):
    kind = rng.randrange(4)
    if kind == 0:
        obj = rng.randint(0, 1000)
    elif kind == 1:
        obj = round(rng.uniform(0, 1000), 2)
    elif kind == 2:
        obj = [rng.randint(0, 1000), rng.randint(0, 1000)]
    else:
        obj = rng.choice(["x", "hello", None, True, (1, 2)])
    return [obj, rng.randint(0, 300)]


def solution(params):
    obj, j = params

    def insert_after_index(xs):
        out = list(xs)
        out.insert(j + 1, obj)
        return out

    return insert_after_index


def _element(rng):
    r = rng.random()
    if r < 0.6:
        return rng.randint(-1000, 1000)
    if r < 0.7:
        return round(rng.uniform(-100, 100), 2)
    if r < 0.8:
        return rng.choice(["a", "b", "xyz", ""])
    if r < 0.9:
        return [rng.randint(0, 9), rng.randint(0, 9)]
    return None


def inputs(params, seed):
    obj, j = params
    rng = random.Random(seed)
    if seed == 0:  # index j is the last: the object goes at the end
        length = j + 1
    elif seed == 1:
        length = j + 2
    else:
        length = j + 1 + rng.randint(1, 12)
    if seed == 2:
        xs = [0] * length
    else:
        xs = [_element(rng) for _ in range(length)]
    return (xs,)


EXAMPLES = [
    ([99, 0], ([1, 2, 3],), [1, 99, 2, 3]),
    ([0, 0], ([5],), [5, 0]),
    ([[3, 8], 2], ([1, 2, 3],), [1, 2, 3, [3, 8]]),
    ([7.5, 1], (["x", "y", "z"],), ["x", "y", 7.5, "z"]),
    (["a", 1], (["a", "a", "a"],), ["a", "a", "a", "a"]),
]


def correct_answer(params):
    obj, j = params
    return (
        f"def insert_after_index(items):\n"
        f"    result = []\n"
        f"    for position, item in enumerate(items):\n"
        f"        result.append(item)\n"
        f"        if position == {j}:\n"
        f"            result.append({obj!r})\n"
        f"    return result\n"
    )


def wrong_answer(params):
    obj, j = params
    # Inserts at index j (before the element at j) instead of after it.
    return (
        f"def insert_after_index(items):\n"
        f"    items.insert({j}, {obj!r})\n"
        f"    return items\n"
    )
