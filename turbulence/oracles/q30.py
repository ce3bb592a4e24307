"""Q30 'insert_before_character': the given string with the character '$0' inserted
immediately before every occurrence of the character '$1'.

Reading: "any occurrences" means every occurrence; matching is case-sensitive (the
characters are named exactly, and the published rows pair 'o'/'O', 'a'/'A', ...);
when $0 == $1 every occurrence is doubled (inserted characters are not matched again).
README: two string parameters (one character each in every published row; `valid`
asks for one character each).
"""
import random

FUNCTION = "insert_before_character"


def arity(params):
    return 1


def valid(params):
    return (
        isinstance(params, list)
        and len(params) == 2
        and all(isinstance(p, str) and len(p) == 1 for p in params)
    )


_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?-_"


def random_params(rng):
    return [rng.choice(_ALPHABET), rng.choice(_ALPHABET)]


def solution(params):
    new, target = params

    def insert_before_character(s):
        return s.replace(target, new + target)

    return insert_before_character


def inputs(params, seed):
    new, target = params
    rng = random.Random(seed)
    fixed = [
        "",
        target,
        target * 3,
        "".join(c for c in "The quick brown fox, 42!" if c != target),
        target + new + "x" + target + target + "y" + new + target,
        target.swapcase() + target + target.swapcase(),
        new * 2 + target + new,
    ]
    if seed < len(fixed):
        return (fixed[seed],)
    pool = [target, target, target.swapcase(), new, new.swapcase(), " ", "a", "Z", "5", "."]
    pool += list(rng.sample(_ALPHABET, 6))
    length = rng.randint(0, 25)
    return ("".join(rng.choice(pool) for _ in range(length)),)


EXAMPLES = [
    (["T", "U"], ("UAU",), "TUATU"),
    (["a", "a"], ("banana",), "baanaanaa"),
    (["0", "a"], ("",), ""),
    (["u", "U"], ("uU u",), "uuU u"),
    (["x", "y"], ("abc",), "abc"),
    ([" ", " "], ("a b",), "a  b"),
]


def correct_answer(params):
    new, target = params
    return (
        f"def insert_before_character(text):\n"
        f"    pieces = []\n"
        f"    for ch in text:\n"
        f"        if ch == {target!r}:\n"
        f"            pieces.append({new!r})\n"
        f"        pieces.append(ch)\n"
        f"    return ''.join(pieces)\n"
    )


def wrong_answer(params):
    new, target = params
    # Inserts only before the first occurrence.
    return (
        f"def insert_before_character(text):\n"
        f"    return text.replace({target!r}, {new!r} + {target!r}, 1)\n"
    )
