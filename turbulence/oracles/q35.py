"""Q35 'remove_repeat_chars': drop every character that repeats strictly between indices $0 and $1.

Reading: a character "occurs more than once between the indices $0 and $1, both
exclusive" when it appears at least twice in s[$0 + 1 : $1]; every occurrence of
such a character is removed from the whole string (also outside the range), the
rest keep their order. Characters are compared exactly (case-sensitive: 'a' and
'A' differ). The string is at least $1 characters long (the question presumes
the indices exist). README: 0 <= i + 1 < j.
"""
import random
from collections import Counter

FUNCTION = "remove_repeat_chars"

PRINTABLE = [chr(c) for c in range(32, 127)]
# Distinct characters beyond ASCII for ranges longer than the printable set.
WIDE = PRINTABLE + [chr(c) for c in range(0x00C0, 0x0250)] + [chr(c) for c in range(0x0400, 0x0500)]


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, list) or len(params) != 2:
        return False
    i, j = params
    return type(i) is int and type(j) is int and 0 <= i and i + 1 < j


def random_params(rng):
    i = rng.randint(0, 150)
    return [i, rng.randint(i + 2, i + 120)]


def solution(params):
    i, j = params

    def remove_repeat_chars(s):
        counts = Counter(s[i + 1 : j])
        repeated = {c for c, n in counts.items() if n > 1}
        return "".join(c for c in s if c not in repeated)

    return remove_repeat_chars


def inputs(params, seed):
    i, j = params
    rng = random.Random(f"q35-{seed}")
    length = j if seed in (0, 2) else j + rng.randint(0, 12)
    inner = list(range(i + 1, j))  # the positions that count
    if seed == 0:
        s = [rng.choice("abcabcAB1 ") for _ in range(length)]
    elif seed == 1:
        # One character everywhere: removed entirely when the range holds two or more.
        s = ["x"] * length
    elif seed == 2:
        # Range of distinct characters; repeats only outside it: nothing removed.
        distinct = rng.sample(WIDE, len(inner)) if len(inner) <= len(WIDE) else WIDE * (len(inner) // len(WIDE) + 1)
        s = [rng.choice("ab") for _ in range(length)]
        for pos, c in zip(inner, distinct):
            s[pos] = c
        for pos in range(length):
            if pos <= i or pos >= j:
                s[pos] = distinct[0] if pos % 2 else distinct[-1]
    elif seed == 3:
        # The character at index i (and at j) also occurs once inside the range:
        # it must stay; an answer that counts index i or j removes it.
        distinct = rng.sample(WIDE, min(len(inner), len(WIDE)))
        s = [rng.choice(WIDE) for _ in range(length)]
        for pos, c in zip(inner, distinct):
            s[pos] = c
        s[i] = s[i + 1]
        if j < length:
            s[j] = s[j - 1]
    elif seed == 4:
        # Upper and lower case of the same letters.
        s = [rng.choice("aAbB") for _ in range(length)]
    else:
        style = seed % 4
        if style == 0:
            alphabet = rng.sample(PRINTABLE, rng.randint(2, 6))
        elif style == 1:
            alphabet = rng.sample(WIDE, max(2, min(len(WIDE), len(inner) + rng.randint(0, 3))))
        elif style == 2:
            alphabet = list("aAbBcC")
        else:
            alphabet = PRINTABLE
        s = [rng.choice(alphabet) for _ in range(length)]
        # Echo the characters on the edges of the range, or just outside it.
        if rng.random() < 0.5:
            s[i] = s[rng.choice(inner)]
        if j < length and rng.random() < 0.5:
            s[j] = s[rng.choice(inner)]
    return ("".join(s),)


EXAMPLES = [
    ([0, 2], ("aab",), "aab"),
    ([0, 4], ("abcba",), "aca"),
    ([1, 6], ("xaxaxyy",), "aayy"),
    ([2, 5], ("aAaAaA",), "aAaAaA"),
    ([0, 5], ("abab!",), "aa!"),
    ([200, 202], ("z" * 202,), "z" * 202),
]


def correct_answer(params):
    i, j = params
    return (
        f"def remove_repeat_chars(string):\n"
        f"    window = string[{i} + 1:{j}]\n"
        f"    to_remove = []\n"
        f"    for ch in window:\n"
        f"        if window.count(ch) > 1 and ch not in to_remove:\n"
        f"            to_remove.append(ch)\n"
        f"    result = ''\n"
        f"    for ch in string:\n"
        f"        if ch not in to_remove:\n"
        f"            result += ch\n"
        f"    return result\n"
    )


def wrong_answer(params):
    i, j = params
    # Index i counted as inside the range (inclusive start).
    return (
        f"def remove_repeat_chars(s):\n"
        f"    part = s[{i}:{j}]\n"
        f"    rep = set(c for c in part if part.count(c) > 1)\n"
        f"    return ''.join(c for c in s if c not in rep)\n"
    )
