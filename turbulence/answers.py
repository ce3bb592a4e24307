"""Writes each oracle's correct and wrong answers for some instances, as JSON lines.

codecal's tests use it to judge the oracles' own answers in the sandbox:
one line per (question, instance) with `question`, `instance`, `params`,
`correct` and `wrong` (answer source code), or `unavailable` with the reason
where the oracle cannot be loaded here (Q57 and Q58 need numpy).

Usage: python3 turbulence/answers.py INSTANCES_JSONL OUT_JSONL [--per-question K]
"""
import argparse
import json

from selftest import load


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("instances")
    parser.add_argument("out")
    parser.add_argument("--per-question", type=int, default=2)
    args = parser.parse_args()
    lines = []
    for line in open(args.instances):
        row = json.loads(line)
        if row["instance"] > args.per_question:
            continue
        try:
            oracle = load(row["question"])
        except ImportError as error:  # Q57/Q58 without numpy
            lines.append(json.dumps({"question": row["question"], "instance": row["instance"], "unavailable": str(error)}))
            continue
        lines.append(json.dumps({
            "question": row["question"],
            "instance": row["instance"],
            "params": row["params"],
            "correct": oracle.correct_answer(row["params"]),
            "wrong": oracle.wrong_answer(row["params"]),
        }))
    with open(args.out, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
