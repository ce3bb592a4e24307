"""Q51 'if_contains_anagrams': True when the list holds at most $0 pairs of anagrams,
counting only strings of English letters of length >= 3, compared case-insensitively.

Reading:
- A pair is an unordered pair of list positions whose strings are anagrams of each
  other (same letters with the same counts after lower-casing), so a group of k mutual
  anagrams makes k*(k-1)/2 pairs (the upstream manual rows 10, 15 and 276 are such
  counts). "true"/"false" are Python's True/False, compared with ==.
- "Only the anagrams of the English letters": a string with any non-letter takes no part.
- Left open by the text, and kept out of the fuzz inputs so every reading agrees:
  whether two equal strings (equal up to case) form an anagram pair -- no two letter
  strings of length >= 3 in an input are equal ignoring case; and whether a string
  mixing letters with other characters is dropped or has its letters compared -- such
  strings in the inputs have a letter content that matches no other string. Strings made
  only of digits/punctuation (anagrams among themselves, never counted) and short
  strings (length 0-2, repeats allowed) are there to be ignored. Inputs are ASCII, so
  str.isalpha() and an ascii_letters test agree.
README: i > 1.
"""
import itertools
import random
import string

FUNCTION = "if_contains_anagrams"
LETTERS = frozenset(string.ascii_letters)
OTHERS = "0123456789!@#$%&*-+?"


def arity(params):
    return 1


def valid(params):
    if not (isinstance(params, (list, tuple)) and len(params) == 1):
        return False
    i = params[0]
    return isinstance(i, int) and not isinstance(i, bool) and i > 1


def random_params(rng):
    return [rng.randint(2, 300)]


def solution(params):
    need = params[0]

    def if_contains_anagrams(words):
        groups = {}
        for w in words:
            if len(w) >= 3 and all(c in LETTERS for c in w):
                key = "".join(sorted(w.lower()))
                groups[key] = groups.get(key, 0) + 1
        pairs = sum(c * (c - 1) // 2 for c in groups.values())
        return pairs <= need

    return if_contains_anagrams


# ---- input generation -------------------------------------------------------------


def _case(rng, word):
    return "".join(c.upper() if rng.random() < 0.5 else c for c in word)


def _new_key(rng, length, used):
    while True:
        key = "".join(sorted(rng.sample(string.ascii_lowercase, length)))
        if key not in used:
            used.add(key)
            return key


def _group(rng, size, used):
    """`size` distinct (ignoring case) anagrams of one new letter multiset."""
    length = 3
    while length < 8 and _fact(length) < 2 * size:
        length += 1
    length = min(8, length + rng.choice([0, 0, 1]))
    if size <= 6 and rng.random() < 0.5:
        length = 3
    key = _new_key(rng, length, used)
    if length <= 5:
        perms = ["".join(p) for p in itertools.permutations(key)]
        words = rng.sample(perms, size)
    else:
        seen, words = set(), []
        while len(words) < size:
            letters = list(key)
            rng.shuffle(letters)
            w = "".join(letters)
            if w not in seen:
                seen.add(w)
                words.append(w)
    return [_case(rng, w) for w in words]


def _fact(n):
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out


def _sizes(rng, pairs):
    """Group sizes whose pair counts k*(k-1)/2 add up to `pairs`."""
    sizes = []
    while pairs > 0:
        kmax = 2
        while (kmax + 1) * kmax // 2 <= pairs:
            kmax += 1
        k = kmax if rng.random() < 0.7 else rng.randint(2, kmax)
        sizes.append(k)
        pairs -= k * (k - 1) // 2
    return sizes


def _short(rng, count):
    """Strings of length 0-2, with anagrams and repeats among them."""
    out = []
    for _ in range(count):
        base = rng.choice(["ab", "ba", "xy", "yx", "a", "", "to", "ot", "Ab", "BA"])
        out.append(_case(rng, base))
    return out


def _others(rng, groups):
    """Groups of anagrams made of digits and punctuation only."""
    out = []
    for _ in range(groups):
        base = rng.sample(OTHERS, rng.randint(3, 5))
        for _ in range(rng.randint(2, 4)):
            rng.shuffle(base)
            out.append("".join(base))
    return out


def _words(rng, pairs, shorts=0, singles=0, others=0, mixed=0):
    used = set()
    words = []
    for k in _sizes(rng, pairs):
        words += _group(rng, k, used)
    for _ in range(singles):
        key = _new_key(rng, rng.randint(3, 7), used)
        letters = list(key)
        rng.shuffle(letters)
        words.append(_case(rng, "".join(letters)))
    words += _short(rng, shorts)
    words += _others(rng, others)
    for _ in range(mixed):
        letters = list(_new_key(rng, rng.randint(3, 6), used))
        letters += rng.sample(OTHERS, rng.randint(1, 3))
        rng.shuffle(letters)
        words.append(_case(rng, "".join(letters)))
    rng.shuffle(words)
    return words


def inputs(params, seed):
    most = params[0]
    rng = random.Random(f"q51-{seed}")
    if seed == 0:
        return ([],)
    if seed == 1:  # exactly at the bound
        return (_words(rng, most, shorts=2, singles=2, others=1, mixed=1),)
    if seed == 2:  # one pair over
        return (_words(rng, most + 1, shorts=2, singles=2),)
    if seed == 3:  # at the bound, plus non-letter anagrams and mixed strings
        return (_words(rng, most, shorts=1, singles=1, others=3, mixed=3),)
    if seed == 4:  # at the bound, plus many short anagrams that must not count
        return (_words(rng, most, shorts=most + 6, singles=1),)
    if seed == 5:  # one pair under
        return (_words(rng, most - 1, shorts=2, singles=2, others=1, mixed=1),)
    if seed == 6:  # one pair only
        return (_words(rng, 1, shorts=3, singles=3, others=1, mixed=2),)
    r = rng.random()
    if r < 0.7:
        pairs = rng.randint(max(0, most - 3), most + 3)
    else:
        pairs = rng.randint(0, 2 * most + 5)
    return (
        _words(
            rng,
            pairs,
            shorts=rng.randint(0, 8),
            singles=rng.randint(0, 6),
            others=rng.randint(0, 3),
            mixed=rng.randint(0, 3),
        ),
    )


EXAMPLES = [
    ([2], ([],), True),
    ([2], (["abc", "cba", "bac"],), False),
    ([2], (["abc", "cba", "123", "321", "312", "xy", "yx"],), True),
    ([3], (["Tea", "eat", "ATE", "no", "on"],), True),
    ([3], (["Tea", "eat", "ATE", "tan", "NAT"],), False),
    ([2], (["ab1", "1ba", "b1a", "Dusty", "study"],), True),
]


def correct_answer(params):
    need = params[0]
    return (
        "from collections import Counter\nimport string\n"
        "def if_contains_anagrams(strings):\n"
        "    items = [Counter(s.lower()) for s in strings\n"
        "             if len(s) >= 3 and all(c in string.ascii_letters for c in s)]\n"
        "    count = 0\n"
        "    for a in range(len(items)):\n"
        "        for b in range(a + 1, len(items)):\n"
        "            if items[a] == items[b]:\n"
        "                count += 1\n"
        f"    return count <= {need}\n"
    )


def wrong_answer(params):
    need = params[0]
    # Off by one: "fewer than" instead of "at most".
    return (
        "def if_contains_anagrams(words):\n"
        "    seen = {}\n"
        "    pairs = 0\n"
        "    for w in words:\n"
        "        if len(w) < 3 or not w.isalpha():\n"
        "            continue\n"
        "        key = ''.join(sorted(w.lower()))\n"
        "        pairs += seen.get(key, 0)\n"
        "        seen[key] = seen.get(key, 0) + 1\n"
        f"    return pairs < {need}\n"
    )
