"""Makes Turbulence instances for another parameter seed, as JSON lines in the
layout of the published `neighbourhoods_seed1.jsonl`.

The paper's rule: each question's hand-picked rows (`manually_chosen_params.txt`,
31 questions have them) come first, then seeded random valuations, 100 in all,
shuffled with the seed; every row of a neighbourhood is distinct and valid
(§IV-C), and a question that cannot have `--count` such rows is named and
nothing is written. The random rows come from codecal's own oracles
(`oracles/qNN.py`, `random_params`, which follows each question's README), so a
seed other than "1" gives codecal's neighbourhoods, not upstream's; for seed "1"
use the published file. Every row is checked with the oracle's `valid`.

--check-published instantiates every published row's parameters into its
question template and requires the published prompt, character for character.

Usage:
  python3 turbulence/instances.py --seed S --out FILE [--data DIR] [--count 100]
  python3 turbulence/instances.py --check-published [--data DIR]
"""
import argparse
import json
import pathlib
import random
import re
import sys

from selftest import HERE, load


def text_of(value):
    """A parameter as the question text shows it (strings bare, lists as Python shows them)."""
    return value if isinstance(value, str) else str(value)


def instantiate(template, params):
    return re.sub(r"\$(\d+)", lambda m: text_of(params[int(m.group(1))]), template).strip()


def manual_rows(folder, valid=lambda row: True):
    """The hand-picked rows; a token reads as an int where the row is then
    valid, else as the character or word it is (Q30's "0 a" is two characters)."""
    path = folder / "manually_chosen_params.txt"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        tokens = line.split()
        if not tokens:
            continue
        numbers = [int(t) if re.fullmatch(r"-?\d+", t) else t for t in tokens]
        rows.append(numbers if valid(numbers) or not valid(tokens) else tokens)
    return rows


class CannotDraw(Exception):
    """Fewer distinct valid parameter rows than asked for (§IV-C wants each
    instance of a neighbourhood distinct and valid)."""

    def __init__(self, question, found, count, draws):
        super().__init__(
            f"Q{question}: only {found} distinct valid parameter rows in {draws} draws; "
            f"cannot draw {count}"
        )


def distinct_rows(question, folder, seed, count, oracle):
    """The hand-picked rows (valid, each once, in file order), then seeded
    random valuations until `count` distinct valid rows, or CannotDraw."""
    rows, seen = [], set()
    for row in manual_rows(folder, oracle.valid):
        key = json.dumps(row)
        if oracle.valid(row) and key not in seen and len(rows) < count:
            seen.add(key)
            rows.append(row)
    rng = random.Random(f"{seed}:{question}")
    draws = 100 * count
    for _ in range(draws):
        if len(rows) >= count:
            break
        row = oracle.random_params(rng)
        key = json.dumps(row)
        if oracle.valid(row) and key not in seen:
            seen.add(key)
            rows.append(row)
    if len(rows) < count:
        raise CannotDraw(question, len(rows), count, draws)
    return rows


def neighbourhood(question, folder, seed, count, oracle=None):
    oracle = oracle or load(question)
    rows = distinct_rows(question, folder, seed, count, oracle)
    random.Random(f"{seed}").shuffle(rows)
    template = (folder / "question.txt.template").read_text()
    return [
        {
            "question": question,
            "instance": number,
            "function_name": oracle.FUNCTION,
            "params": params,
            "prompt": instantiate(template, params),
        }
        for number, params in enumerate(rows, start=1)
    ]


def check_published(data):
    mismatches = 0
    for line in open(data / "neighbourhoods_seed1.jsonl"):
        row = json.loads(line)
        template = (data / "questions" / f"Q{row['question']}" / "question.txt.template").read_text()
        if instantiate(template, row["params"]) != row["prompt"]:
            mismatches += 1
            if mismatches <= 5:
                print(f"Q{row['question']}/{row['instance']}: instantiated text differs from the published prompt")
    print(f"published prompts reproduced: {'all' if not mismatches else f'{mismatches} differ'}")
    return mismatches == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(HERE.parent.parent / "shared" / "data" / "turbulence"))
    parser.add_argument("--seed")
    parser.add_argument("--out")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--check-published", action="store_true")
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    if args.check_published:
        sys.exit(0 if check_published(data) else 1)
    if args.seed is None or args.out is None:
        parser.error("--seed and --out are needed (or --check-published)")
    lines, refused = [], []
    for question in range(1, 61):
        folder = data / "questions" / f"Q{question}"
        try:
            rows = neighbourhood(question, folder, args.seed, args.count)
        except CannotDraw as e:
            refused.append(str(e))
            continue
        lines += [json.dumps(row) for row in rows]
    if refused:
        print("\n".join(refused), file=sys.stderr)
        sys.exit(1)
    out = pathlib.Path(args.out)
    partial = out.with_name(out.name + ".partial")
    partial.write_text("\n".join(lines) + "\n")
    partial.replace(out)
    print(f"{len(lines)} instances for seed {args.seed!r} in {out}")


if __name__ == "__main__":
    main()
