"""Checks codecal's Turbulence oracles (oracles/qNN.py) without the sandbox.

For each question: the hand-worked EXAMPLES against `solution`; `valid` on every
published instance of seed "1"; 200 `random_params` rows valid; on every instance,
`correct_answer` agrees with `solution` on fuzz inputs 0..N-1 and `wrong_answer`
disagrees on at least one (or raises). Prints one line per question and exits 1 on
any failure.

With --judge, codecal's judge (src/task/turbulence/judge.py, outside the sandbox)
also judges both answers of every instance: the correct one passes, the wrong one
does not.

Usage: python3 turbulence/selftest.py [--data DIR] [--fuzz N] [--judge] [QUESTION ...]
"""
import argparse
import contextlib
import copy
import io
import importlib.util
import json
import types
import pathlib
import random
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def load(question):
    path = HERE / "oracles" / f"q{question:02d}.py"
    spec = importlib.util.spec_from_file_location(f"q{question:02d}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def function_of(source, name):
    namespace = {"__name__": "answer"}
    exec(compile(source, "<answer>", "exec"), namespace)
    return namespace[name]


def agrees(oracle, got, want):
    same = getattr(oracle, "same", None)
    return same(got, want) if same else got == want


def call(function, args):
    try:
        return ("value", function(*copy.deepcopy(args)))
    except Exception as error:  # a wrong answer may raise; that is caught
        return ("raised", type(error).__name__)


def check(question, instances, fuzz):
    oracle = load(question)
    problems = []
    for params, args, expected in oracle.EXAMPLES:
        got = oracle.solution(params)(*copy.deepcopy(args))
        if not agrees(oracle, got, expected):
            problems.append(f"example {params} {args!r}: solution gives {got!r}, hand-worked {expected!r}")
    rng = random.Random(question)
    for _ in range(200):
        row = oracle.random_params(rng)
        if not oracle.valid(row):
            problems.append(f"random_params gave {row!r}, which valid refuses")
            break
    wrong_missed = []
    for row in instances:
        params = row["params"]
        if row["function_name"] != oracle.FUNCTION:
            problems.append(f"FUNCTION {oracle.FUNCTION!r} but instances name {row['function_name']!r}")
            break
        if not oracle.valid(params):
            problems.append(f"instance {row['instance']} params {params!r} not valid")
            continue
        reference = oracle.solution(params)
        correct = function_of(oracle.correct_answer(params), oracle.FUNCTION)
        wrong = function_of(oracle.wrong_answer(params), oracle.FUNCTION)
        caught = False
        for seed in range(fuzz):
            args = oracle.inputs(params, seed)
            want = reference(*copy.deepcopy(args))
            kind, got = call(correct, args)
            if kind != "value" or not agrees(oracle, got, want):
                problems.append(
                    f"instance {row['instance']} {params!r} input {seed}: correct_answer {kind} {got!r}, solution {want!r}"
                )
                break
            if not caught:
                kind, got = call(wrong, args)
                caught = kind != "value" or not agrees(oracle, got, want)
        if not caught:
            wrong_missed.append(row["instance"])
    if wrong_missed:
        problems.append(f"wrong_answer not caught on instances {wrong_missed[:10]} ({len(wrong_missed)} in all)")
    return problems


def judged(question, instances, fuzz):
    """Runs codecal's judge (src/task/turbulence/judge.py) in this process on
    every instance: correct_answer must pass, wrong_answer must not."""
    # The program the sandbox runs: the canonical text of values, then the judge.
    source = "".join((HERE.parent / "src/task" / part).read_text() for part in ("canonical.py", "turbulence/judge.py"))
    judge = types.ModuleType("turbulence_judge")
    exec(compile(source, "<judge>", "exec"), judge.__dict__)
    oracle_text = (HERE / "oracles" / f"q{question:02d}.py").read_text()
    oracle = load(question)
    problems = []
    for row in instances:
        for kind in ("correct", "wrong"):
            answer = getattr(oracle, f"{kind}_answer")(row["params"])
            job = {"question": question, "function": row["function_name"], "params": row["params"],
                   "answer": answer, "oracle": oracle_text, "fuzz": fuzz, "min_compared": (fuzz + 1) // 2,
                   "answer_seconds": 7.0, "variadic": question == 34,
                   # Pylint's check is tests/turbulence.rs's; here it would cost
                   # a second for each of 12,000 answers.
                   "static_check": "symtable"}
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    judge.run_job(json.dumps(job))
                outcome = "passed"
            except judge.TurbulenceVerdict as verdict:
                outcome = str(verdict).split("\t")[0]
            if (outcome == "passed") != (kind == "correct"):
                problems.append(f"instance {row['instance']}: the {kind} answer judged {outcome}")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(HERE.parent.parent / "shared" / "data" / "turbulence"))
    parser.add_argument("--fuzz", type=int, default=100)
    parser.add_argument("--judge", action="store_true", help="also judge both answers of every instance with judge.py")
    parser.add_argument("questions", nargs="*", type=int)
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(pathlib.Path(args.data) / "neighbourhoods_seed1.jsonl")]
    questions = args.questions or sorted({row["question"] for row in rows})
    failed = 0
    for question in questions:
        started = time.time()
        if not (HERE / "oracles" / f"q{question:02d}.py").exists():
            print(f"Q{question}: MISSING oracles/q{question:02d}.py")
            failed += 1
            continue
        instances = [row for row in rows if row["question"] == question]
        problems = check(question, instances, args.fuzz)
        if args.judge and not problems:
            problems = judged(question, instances, args.fuzz)
        took = time.time() - started
        if problems:
            failed += 1
            print(f"Q{question}: FAIL ({took:.1f} s)")
            for problem in problems[:5]:
                print(f"    {problem}")
        else:
            print(f"Q{question}: ok, {len(instances)} instances x {args.fuzz} inputs ({took:.1f} s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
