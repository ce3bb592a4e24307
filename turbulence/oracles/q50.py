"""Q50 'if_contains_anagrams': True when the list holds at least $0 pairs of anagrams,
counting only strings of length >= 3 and comparing case-insensitively.

Reading:
- A pair is an unordered pair of list positions whose strings are anagrams of each
  other (same letters with the same counts after lower-casing), so a group of k mutual
  anagrams makes k*(k-1)/2 pairs (the upstream manual rows 10, 15 and 276 are such
  counts). "true"/"false" are Python's True/False, compared with ==.
- Left open by the text, and kept out of the fuzz inputs so every reading agrees:
  whether two equal strings (equal up to case) form an anagram pair -- no two strings of
  length >= 3 in an input are equal ignoring case; and whether non-letters (spaces,
  digits) take part -- the inputs hold only ASCII letters. Short strings (length 0-2)
  may repeat and be anagrams of each other; they never count.
README: i > 1.
"""
import itertools
import random
import string

FUNCTION = "if_contains_anagrams"


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
            if len(w) >= 3:
                key = "".join(sorted(w.lower()))
                groups[key] = groups.get(key, 0) + 1
        pairs = sum(c * (c - 1) // 2 for c in groups.values())
        return pairs >= need

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


def _words(rng, pairs, shorts=0, singles=0):
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
    rng.shuffle(words)
    return words


def inputs(params, seed):
    need = params[0]
    rng = random.Random(f"q50-{seed}")
    if seed == 0:
        return ([],)
    if seed == 1:  # exactly enough
        return (_words(rng, need, shorts=2, singles=2),)
    if seed == 2:  # one pair short
        return (_words(rng, need - 1, shorts=2, singles=2),)
    if seed == 3:  # one pair short, many short anagrams that must not count
        return (_words(rng, need - 1, shorts=need + 6, singles=1),)
    if seed == 4:  # only one pair
        return (_words(rng, 1, shorts=3, singles=3),)
    if seed == 5:  # one more than needed
        return (_words(rng, need + 1, shorts=0, singles=0),)
    if seed == 6:  # only short strings and singles
        return (_words(rng, 0, shorts=8, singles=5),)
    r = rng.random()
    if r < 0.7:
        pairs = rng.randint(max(0, need - 3), need + 3)
    else:
        pairs = rng.randint(0, 2 * need + 5)
    return (_words(rng, pairs, shorts=rng.randint(0, 8), singles=rng.randint(0, 6)),)


EXAMPLES = [
    ([2], (["listen", "Silent", "enlist", "abc"],), True),
    ([2], (["ab", "ba", "AB", "xyz", "zyx"],), False),
    ([3], (["Tea", "eat", "ATE", "tan", "nat"],), True),
    ([3], ([],), False),
    ([4], (["abc", "cab", "bca", "xyz"],), False),
]


def correct_answer(params):
    need = params[0]
    return (
        "from collections import Counter\n"
        "def if_contains_anagrams(strings):\n"
        "    items = [Counter(s.lower()) for s in strings if len(s) >= 3]\n"
        "    count = 0\n"
        "    for a in range(len(items)):\n"
        "        for b in range(a + 1, len(items)):\n"
        "            if items[a] == items[b]:\n"
        "                count += 1\n"
        f"    return count >= {need}\n"
    )


def wrong_answer(params):
    need = params[0]
    # Off by one: "more than" instead of "at least".
    return (
        "def if_contains_anagrams(words):\n"
        "    seen = {}\n"
        "    pairs = 0\n"
        "    for w in words:\n"
        "        if len(w) < 3:\n"
        "            continue\n"
        "        key = ''.join(sorted(w.lower()))\n"
        "        pairs += seen.get(key, 0)\n"
        "        seen[key] = seen.get(key, 0) + 1\n"
        f"    return pairs > {need}\n"
    )
