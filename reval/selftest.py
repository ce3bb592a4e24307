"""Self-test of reval/judge.py over the whole DREval set, run as codecal runs it.

For every (program, input) pair in DREval_tasks.jsonl it builds the questions
codecal asks (coverage, state, path for each (lineno, var) point, and one
output question), then runs three jobs, each in a fresh ``python3 -I``
process whose program text (on stdin) is judge.py's source followed by a
``run_job(...)`` line, reading the last stderr line:

1. truth mode: ground truth and canonical answers;
2. judge mode with the canonical answers fed back (and, for HumanEval output
   questions, ``output_pred`` with ``??`` replaced by the dataset's output;
   for ClassEval, the original input snippet, reported apart as it is not
   a required check): all must be judged correct;
3. judge mode with one deliberately wrong answer per question: all must be
   judged wrong.

It is not a sandbox: run it only on the trusted dataset. Usage, from the
repository root: ``python3 reval/selftest.py [--limit N] [--only DREval/12]``.
The interpreter is CODECAL_PYTHON, else /usr/bin/python3 (the one codecal's
sandbox picks), else this one.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The shared data sits beside the repository (``../shared``), as in CI;
# CODECAL_REVAL_DATA names another REval directory.
DATA = os.environ.get("CODECAL_REVAL_DATA") or os.path.join(
    HERE, os.pardir, os.pardir, "shared", "data", "reval")
WRONG_VALUE = "'__reval_wrong__'"
KINDS = ("coverage", "state", "path", "output")


def interpreter():
    if os.environ.get("CODECAL_PYTHON"):
        return os.environ["CODECAL_PYTHON"]
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def load(name):
    with open(os.path.join(DATA, name)) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def run_job(source, job, workdir):
    """Runs one job like codecal: returns (exit status, last stderr line, seconds)."""
    program = source + "\nrun_job(%r)\n" % json.dumps(job)
    started = time.monotonic()
    try:
        done = subprocess.run(
            [interpreter(), "-I", "-"], input=program, capture_output=True,
            text=True, cwd=workdir, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "timed out after 300 s", time.monotonic() - started
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return done.returncode, (lines[-1] if lines else ""), time.monotonic() - started


def questions_for(task):
    questions = []
    for point in task["task"]:
        for kind in ("coverage", "state", "path"):
            questions.append({"task": kind, "lineno": point["lineno"], "var": point["var"],
                              "question": None, "reply": None})
    questions.append({"task": "output", "lineno": None, "var": None,
                      "question": task["output_pred"], "reply": None})
    return questions


def wrap(text):
    return "[ANSWER]\n%s\n[/ANSWER]" % text


def wrong_answer(question, truth, code_lines):
    kind = question["task"]
    if kind == "coverage":
        return "NO" if truth["truth"] else "YES"
    if kind == "state":
        return WRONG_VALUE + "; str"
    if kind == "path":
        following = set(truth["truth"])
        if -1 not in following:
            return "-1"
        for line in code_lines:  # a real code line that never follows
            text = line.strip()
            numbers = {n for n, other in enumerate(code_lines, 1) if other.strip() == text}
            if text and not numbers & following:
                return text
    return None


# A value that makes each kind of ClassEval assertion fail (a plain sentinel
# would pass assertTrue, assertIsNotNone and the like).
WRONG_FOR = {"assertTrue": "False", "assertFalse": "True", "assertIsNone": "1",
             "assertIsNotNone": "None"}


def wrong_output(question, classeval):
    if not classeval:
        return question.replace("??", "(%s,)" % WRONG_VALUE)
    lines = []
    for line in question.split("\n"):
        match = re.search(r"(assert\w+)\(", line)
        lines.append(line.replace("??", WRONG_FOR.get(match.group(1), WRONG_VALUE) if match else WRONG_VALUE))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="first N programs only")
    parser.add_argument("--only", action="append", default=[], help="task_id to run")
    args = parser.parse_args()

    with open(os.path.join(HERE, "judge.py")) as handle:
        source = handle.read()
    data = {record["task_id"]: record for record in load("DREval_data.jsonl")}
    tasks = load("DREval_tasks.jsonl")
    if args.only:
        tasks = [t for t in tasks if t["task_id"] in args.only]
    if args.limit:
        tasks = tasks[: args.limit]

    asked = dict.fromkeys(KINDS, 0)
    right = dict.fromkeys(KINDS, 0)
    caught = dict.fromkeys(KINDS, 0)
    classeval_output = [0, 0]
    humaneval_output = [0, 0]
    unavailable, failures, slowest = {}, [], (0.0, "")
    pairs = 0
    longest_line, executed_nil = (0, ""), []
    started = time.monotonic()
    print("interpreter:", interpreter(), flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for record in tasks:
            program = data[record["task_id"]]
            classeval = int(record["task_id"].split("/")[1]) >= 85
            for task in record["tasks"]:
                pairs += 1
                index = task["input_idx"]
                tag = "%s#%d" % (record["task_id"], index)
                job = {"mode": "truth", "kind": "classeval" if classeval else "humaneval",
                       "code": program["code"], "entry_point": program["entry_point"],
                       "input": program["inputs"][index], "test": program["test"],
                       "questions": questions_for(task)}
                for q in job["questions"]:
                    asked[q["task"]] += 1
                status, line, seconds = run_job(source, job, workdir)
                slowest = max(slowest, (seconds, tag + " truth"))
                try:
                    truths = json.loads(line)
                    assert status == 0 and isinstance(truths, list)
                except Exception:
                    unavailable.setdefault(record["task_id"], "%s (exit %s)" % (line[:200], status))
                    continue
                longest_line = max(longest_line, (len(line), tag))
                for truth in truths:
                    if truth["task"] == "state" and truth["truth"]["executed"] and truth["answer"] == "Nil":
                        executed_nil.append("%s line %s var %s" % (tag, truth["lineno"], truth["var"]))
                for truth in truths:
                    if truth.get("raised"):
                        failures.append("%s: the program raised %s" % (tag, truth["raised"]))
                        break

                # 2. canonical answers fed back
                judge = dict(job, mode="judge")
                judge["questions"] = [dict(q) for q in job["questions"]]
                for q, truth in zip(judge["questions"], truths):
                    if q["task"] != "output":
                        q["reply"] = wrap(truth["answer"])
                    elif classeval:
                        q["reply"] = wrap(program["inputs"][index].strip())
                    else:
                        q["reply"] = wrap(q["question"].replace("??", program["outputs"][index]))
                status, line, seconds = run_job(source, judge, workdir)
                slowest = max(slowest, (seconds, tag + " judge"))
                try:
                    verdicts = json.loads(line)
                except Exception:
                    failures.append("%s: judge job failed: %s" % (tag, line[:200]))
                    continue
                for q, truth, verdict in zip(judge["questions"], truths, verdicts):
                    if q["task"] == "output":
                        tally = classeval_output if classeval else humaneval_output
                        tally[0] += verdict["correct"]
                        tally[1] += 1
                        if not classeval:
                            right["output"] += verdict["correct"]
                        if not verdict["correct"]:
                            failures.append("%s output%s: %s" % (
                                tag, " (ClassEval, informational)" if classeval else "", verdict["detail"]))
                        continue
                    right[q["task"]] += verdict["correct"]
                    if not verdict["correct"]:
                        failures.append("%s %s line %s var %s: answer %r: %s" % (
                            tag, q["task"], q["lineno"], q["var"], (truth["answer"] or "")[:80], verdict["detail"]))

                # 3. one deliberately wrong answer per question
                wrong = dict(job, mode="judge")
                wrong["questions"] = [dict(q) for q in job["questions"]]
                code_lines = program["code"].split("\n")
                for q, truth in zip(wrong["questions"], truths):
                    if q["task"] == "output":
                        q["reply"] = wrap(wrong_output(q["question"], classeval))
                    else:
                        q["reply"] = wrap(wrong_answer(q, truth, code_lines) or "")
                status, line, seconds = run_job(source, wrong, workdir)
                slowest = max(slowest, (seconds, tag + " wrong"))
                try:
                    verdicts = json.loads(line)
                except Exception:
                    failures.append("%s: wrong-answer job failed: %s" % (tag, line[:200]))
                    continue
                for q, verdict in zip(wrong["questions"], verdicts):
                    caught[q["task"]] += not verdict["correct"]
                    if verdict["correct"]:
                        failures.append("%s %s line %s: wrong answer %r judged correct" % (
                            tag, q["task"], q["lineno"], verdict["parsed"]))
            print("  done %s (%.0f s so far)" % (record["task_id"], time.monotonic() - started), flush=True)

    elapsed = time.monotonic() - started
    print()
    print("programs: %d, (program, input) pairs: %d" % (len(tasks), pairs))
    print("questions: " + ", ".join("%s %d" % (k, asked[k]) for k in KINDS))
    print("unavailable programs: %s" % (", ".join(sorted(unavailable, key=lambda t: int(t.split("/")[1]))) or "none"))
    for task_id, why in sorted(unavailable.items()):
        print("  %s: %s" % (task_id, why))
    print("canonical answers judged correct: " + ", ".join(
        "%s %d/%d" % (k, right[k], asked[k]) for k in ("coverage", "state", "path")))
    print("output, HumanEval with dataset outputs: %d/%d" % tuple(humaneval_output))
    print("output, ClassEval with the original input snippet (informational): %d/%d" % tuple(classeval_output))
    print("deliberately wrong answers judged wrong: " + ", ".join(
        "%s %d/%d" % (k, caught[k], asked[k]) for k in KINDS))
    print("state points whose line runs but whose var never has a value (truth Nil): %d" % len(executed_nil))
    for point in executed_nil[:20]:
        print("  " + point)
    print("longest truth line: %d bytes (%s)" % longest_line)
    print("problems: %d" % len(failures))
    for failure in failures[:60]:
        print("  " + failure)
    print("slowest job: %.1f s (%s); total %.0f s" % (slowest[0], slowest[1], elapsed))
    # A failure or a program that cannot run fails the check (CI runs it).
    return 1 if failures or unavailable else 0


if __name__ == "__main__":
    sys.exit(main())
