"""Q25 'insert_at_index': the given list with the object $0 inserted so that it sits at
index $1 (the elements from index $1 on move one place right); one element longer.

Reading: $0 is inserted as ONE element even when it is a list (not spliced in); the
list has at least $1 elements (the question presumes index $1 exists in the result;
with exactly $1 elements the object goes at the end). Returning the given list
mutated or a new list are both fine (only the returned value is compared). README:
i any object, j an integer with 0 <= j.
"""
import random

FUNCTION = "insert_at_index"


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

    def insert_at_index(xs):
        out = list(xs)
        out.insert(j, obj)
        return out

    return insert_at_index


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
    if seed == 0:  # exactly j elements: the object goes at the end
        length = j
    elif seed == 1:  # one element past index j
        length = j + 1
    else:
        length = j + rng.randint(1, 12)
    if seed == 2:
        xs = [0] * length
    else:
        xs = [_element(rng) for _ in range(length)]
    return (xs,)


EXAMPLES = [
    ([99, 2], ([1, 2, 3],), [1, 2, 99, 3]),
    ([0, 0], ([],), [0]),
    ([[1, 7], 3], (["a", "b", "c"],), ["a", "b", "c", [1, 7]]),
    ([5.5, 0], ([1],), [5.5, 1]),
    ([[3, 8], 1], ([[3, 8], 4],), [[3, 8], [3, 8], 4]),
]


def correct_answer(params):
    obj, j = params
    return (
        f"def insert_at_index(items):\n"
        f"    return items[:{j}] + [{obj!r}] + items[{j}:]\n"
    )


def wrong_answer(params):
    obj, j = params
    # Off by one: inserts after index j instead of at it.
    return (
        f"def insert_at_index(items):\n"
        f"    result = list(items)\n"
        f"    result.insert({j} + 1, {obj!r})\n"
        f"    return result\n"
    )
