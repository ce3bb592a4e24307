"""Q45 'palindromes_between_indices': every palindrome of length >= $0 that the letters of s[$1 .. $2] can form.

Reading: take the English letters (ASCII a-z, A-Z; other characters ignored) at
indices $1 .. $2 (both included), case-folded; the answer is the set of all
palindromes of length at least $0 that can be spelled with some of those letters
(each used at most as often as it occurs: any arrangement of any selection of
them), as a set of strings. The text leaves two things open, and `same` accepts
each reading:
  * case: the palindromes in lower case, or all in upper case;
  * "any possible arrangement of the letters" as arrangements of *all* the
    letters: then the set holds the palindromic orderings of the whole
    selection (empty unless it can form a palindrome and has >= $0 letters).
    That set follows from the main reading's: its longest words, or the empty
    set when those longest words have two or more different middle letters.
The string is at least $2 + 1 characters long; at most 7 letters fall in the
range (8 in some inputs when $0 is 7), so that an answer trying every
permutation stays quick (the README keeps the range at 10 characters or fewer
for the same reason). README: 3 <= i,
0 <= j <= k <= 9 (the row is [i, j, k]).
"""
import random
from collections import Counter
from itertools import product

FUNCTION = "palindromes_between_indices"

LETTERS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
OTHERS = list("0123456789 !?.,;:-_#@*()[]{}'\"/\\+=~")


def arity(params):
    return 1


def valid(params):
    if not isinstance(params, list) or len(params) != 3:
        return False
    if not all(type(x) is int for x in params):
        return False
    i, j, k = params
    return 3 <= i and 0 <= j <= k <= 9


def random_params(rng):
    j = rng.randint(0, 9)
    k = rng.randint(j, 9)
    return [rng.randint(3, 8), j, k]


def _arrangements(counts):
    """Every distinct ordering of the multiset `counts` (letter -> count)."""
    total = sum(counts.values())
    if total == 0:
        yield ""
        return
    for letter in sorted(counts):
        if counts[letter]:
            counts[letter] -= 1
            for rest in _arrangements(counts):
                yield letter + rest
            counts[letter] += 1


def solution(params):
    least, j, k = params

    def palindromes_between_indices(s):
        counts = Counter(c.lower() for c in s[j : k + 1] if c in LETTERS)
        keys = sorted(counts)
        found = set()
        for halves in product(*(range(counts[c] // 2 + 1) for c in keys)):
            half = dict(zip(keys, halves))
            size = 2 * sum(halves)
            middles = [""] + [c for c in keys if counts[c] - 2 * half[c] >= 1]
            middles = [m for m in middles if size + len(m) >= least]
            if not middles:
                continue
            for left in _arrangements(dict(half)):
                for middle in middles:
                    found.add(left + middle + left[::-1])
        return found

    return palindromes_between_indices


def _whole_arrangements(want):
    """The other reading's answer, worked out from the main reading's."""
    if not want:
        return set()
    longest = max(len(w) for w in want)
    top = {w for w in want if len(w) == longest}
    if longest % 2 and len({w[longest // 2] for w in top}) > 1:
        return set()
    return top


def same(got, want):
    if not isinstance(got, (set, frozenset)):
        return False
    other = _whole_arrangements(want)
    for candidate in (want, other):
        if got == candidate or got == {w.upper() for w in candidate}:
            return True
    return False


def inputs(params, seed):
    least, j, k = params
    rng = random.Random(f"q45-{seed}")
    length = k + 1 + (0 if seed < 3 else rng.randint(0, 5))
    span = list(range(j, k + 1))
    # At most 7 letters; 8 for some inputs when $0 is 7, so that longer palindromes can exist.
    cap = 8 if least == 7 and (seed == 1 or seed % 4 == 0) else 7
    room = min(cap, len(span))
    # Outside the range: letters that must be ignored.
    s = [rng.choice("aAbBzZ") if pos < j or pos > k else rng.choice(OTHERS) for pos in range(length)]

    def place(letters):
        spots = sorted(rng.sample(span, len(letters)))
        rng.shuffle(letters)
        for pos, ch in zip(spots, letters):
            s[pos] = ch.upper() if rng.random() < 0.4 else ch

    if seed == 0:
        pass  # no letter in the range: the empty set
    elif seed == 1:
        # As many letters as fit, able to form one palindrome using them all.
        pairs = [rng.choice("abc") for _ in range(room // 2)]
        letters = pairs * 2 + ([rng.choice("abcd")] if room % 2 else [])
        place(letters)
    elif seed == 2:
        # One letter, upper and lower case.
        place(["a"] * room)
    elif seed == 3:
        # Distinct letters only: no palindrome of length 3 or more.
        place(rng.sample("abcdefghij", room))
    elif seed == 4:
        # Two letters of odd count: the longest palindromes leave one out.
        base = ["a", "a", "b", "c", "b", "b", "d"]
        place(base[:room])
    else:
        count = rng.randint(max(0, room - 3), room)
        alphabet = rng.sample("abcdefgxyz", rng.randint(1, 4))
        place([rng.choice(alphabet) for _ in range(count)])
    return ("".join(s),)


EXAMPLES = [
    ([3, 0, 2], ("aba",), {"aba"}),
    ([3, 0, 2], ("AbA",), {"aba"}),
    ([3, 2, 3], ("abcd",), set()),
    ([4, 0, 4], ("a1a!b",), set()),
    ([3, 0, 4], ("aabbc",), {"aba", "aca", "bab", "bcb", "abba", "baab", "abcba", "bacab"}),
    ([5, 0, 5], ("abcab?",), {"abcba", "bacab"}),
    ([3, 1, 4], ("xaaay",), {"aaa", "aya"}),
]


def correct_answer(params):
    least, j, k = params
    return (
        f"from itertools import permutations\n"
        f"\n"
        f"def palindromes_between_indices(s):\n"
        f"    letters = [ch.lower() for ch in s[{j}:{k} + 1] if ('a' <= ch <= 'z') or ('A' <= ch <= 'Z')]\n"
        f"    count = {{}}\n"
        f"    for ch in letters:\n"
        f"        count[ch] = count.get(ch, 0) + 1\n"
        f"    pairs = []\n"
        f"    for ch in count:\n"
        f"        pairs += [ch] * (count[ch] // 2)\n"
        f"    found = set()\n"
        f"    for r in range(len(pairs) + 1):\n"
        f"        for half in set(permutations(pairs, r)):\n"
        f"            left = ''.join(half)\n"
        f"            if 2 * r >= {least}:\n"
        f"                found.add(left + left[::-1])\n"
        f"            if 2 * r + 1 >= {least}:\n"
        f"                for ch in count:\n"
        f"                    if count[ch] - 2 * half.count(ch) >= 1:\n"
        f"                        found.add(left + ch + left[::-1])\n"
        f"    return found\n"
    )


def wrong_answer(params):
    least, j, k = params
    # Collects the palindromes in a list, not a set.
    return (
        f"from itertools import permutations\n"
        f"\n"
        f"def palindromes_between_indices(s):\n"
        f"    letters = [c.lower() for c in s[{j}:{k} + 1] if c.isalpha()]\n"
        f"    result = []\n"
        f"    for r in range({least}, len(letters) + 1):\n"
        f"        for p in permutations(letters, r):\n"
        f"            w = ''.join(p)\n"
        f"            if w == w[::-1] and w not in result:\n"
        f"                result.append(w)\n"
        f"    return result\n"
    )
