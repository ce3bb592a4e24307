"""Seeded fuzzing of reval/judge.py's reply parsers, from the real answers.

What it is: the REval part of codecal's fuzz campaign. It traces a few
DREval HumanEval (program, input) pairs, takes the canonical answers that
truth mode writes (and the dataset's output assertions), mutates each reply
(characters flipped, dropped, repeated, or replaced with the tokens a messy
model writes: tags, quotes, ``<class 'int'>``, ``list[int]``, ``Nil``...)
and judges it. A crash is any exception that escapes judging a coverage,
state or path reply, or the checks on an output reply before it would run
(extraction, padding, triviality, ``escapes_the_assertion``). Running an
output answer is the sandbox's business, not the parser's, so it is not done.

What it is not: a sandbox. Mutated state values are ``eval``'d here, as in
the judge; each case has a 2 s alarm and one that runs out is counted as
slow, not as a crash (in codecal the sandbox's timeout ends it).

Usage, from the repository root:
``python3 reval/fuzz_parsers.py [--cases N] [--seed S] [--pairs K]``; it
prints one line with the figures and exits 1 on any crash.
"""

import argparse
import json
import os
import random
import signal
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import judge  # noqa: E402
import selftest  # noqa: E402

TOKENS = ["[ANSWER]", "[/ANSWER]", ";", "'", '"', "\u201c", "\u201d", "\u2018", "<class '",
          "'>", "list[int]", "Nil", "None", "-1", "\n", "(", ")", "[", "]", "{", "}", ",",
          "string", "integer", "tuple", "YES", "NO", "assert", "==", "??", " ", "\t", "\\",
          "0.1", "nan", "inf", "numpy.ndarray", "é", "\x00", "#", "*", "."]


class Slow(Exception):
    pass


def mutate(text, rng):
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        at = rng.randint(0, len(chars))
        if op == 0 and chars:
            del chars[min(at, len(chars) - 1)]
        elif op == 1:
            chars[at:at] = list(rng.choice(TOKENS))
        elif op == 2 and chars:
            end = min(len(chars), at + rng.randint(1, 8))
            chars[at:at] = chars[at:end]
        elif op == 3 and chars:
            chars[min(at, len(chars) - 1)] = chr(rng.randrange(32, 0x2FF))
        else:
            chars = chars[:at]
    return "".join(chars)


def seeds(pairs):
    """(program, question, reply) for each question of the first HumanEval pairs."""
    cases = []
    data = {d["task_id"]: d for d in selftest.load("DREval_data.jsonl")}
    humaneval = [r for r in selftest.load("DREval_tasks.jsonl") if int(r["task_id"].split("/")[1]) < 85]
    points = [(r, t) for r in humaneval for t in r["tasks"]][:pairs]
    for record, task in points:
        source = data[record["task_id"]]
        job = {"mode": "truth", "kind": "humaneval", "code": source["code"],
               "entry_point": source["entry_point"], "input": source["inputs"][task["input_idx"]],
               "test": source["test"], "questions": selftest.questions_for(task)}
        program = judge.Program(job)
        output = source["outputs"][task["input_idx"]]
        for q, truth in zip(job["questions"], judge.truth_results(program, job["questions"])):
            answer = q["question"].replace("??", output) if q["task"] == "output" else truth["answer"]
            cases.append((program, q, selftest.wrap(answer)))
    return cases


def judge_reply(program, q, reply):
    if q["task"] != "output":
        return judge.judge_question(program, dict(q, reply=reply))
    text = judge.pad_answer(q["question"] or "", judge.extract_answer(reply))
    return judge.is_trivial(text), judge.escapes_the_assertion(text, q["question"] or "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pairs", type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    cases = seeds(args.pairs)

    def alarm(*_):
        raise Slow()
    signal.signal(signal.SIGALRM, alarm)
    # Mutated values make Python warn about odd literals; that is not news.
    warnings.simplefilter("ignore")
    crashes, slow, right = [], 0, 0
    for _ in range(args.cases):
        program, q, reply = rng.choice(cases)
        reply = mutate(reply, rng)
        signal.alarm(2)
        try:
            verdict = judge_reply(program, q, reply)
            right += isinstance(verdict, dict) and verdict["correct"]
        except Slow:
            slow += 1
        except Exception:
            crashes.append((q["task"], reply, traceback.format_exc(limit=3)))
        finally:
            signal.alarm(0)
    print("reval parsers: %d mutated replies from %d seeds (seed %d), %d still judged right, "
          "%d crashes, %d slow, %.1f s" % (args.cases, len(cases), args.seed, right, len(crashes),
                                           slow, time.monotonic() - started))
    for task, reply, trace in crashes[:5]:
        print("crash on a %s reply %s\n%s" % (task, json.dumps(reply), trace))
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
