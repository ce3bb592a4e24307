"""Hand-worked unit tests for reval/judge.py, calling run_job directly (no sandbox).

Run from the repository root: ``python3 -m unittest reval/test_judge.py``.
Every expectation below was worked out by hand from the program text; the
comments give the line events and values that the expectation rests on.
"""

import contextlib
import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import judge  # noqa: E402

# Line numbers are 1-based, as in DREval.
LOOP = """def f(xs):
    total = 0
    for x in xs:
        total += x
    if total > 100:
        total = 100
    return total
"""
# f([1, 2, 3]): line events 2, 3, 4, 3, 4, 3, 4, 3, 5, 7 (line 6 never runs).

FLOAT = """def g(a):
    y = a / 3
    return y * 3
"""
# g(1.0): y = 0.3333333333333333 after line 2.

TEXT = """def h(s):
    t = s.upper()
    pair = (t, len(t))
    return t + "!"
"""
# h('ab'): t = 'AB' after line 2, pair = ('AB', 2) after line 3.

DUPLICATE = """def d(n):
    n += 1
    if n > 5:
        n += 1
    return n
"""
# d(9): events 2, 3, 4, 5; lines 2 and 4 have the same text "n += 1".

COUNTER = """class Counter:
    def __init__(self, start):
        self.count = start
        self.log = []

    def add(self, n):
        for i in range(n):
            self.count += 1
            self.log.append(i)
        return self.count

    def reset(self):
        self.count = 0
"""
COUNTER_TEST = """import unittest

class CounterTestReset(unittest.TestCase):
    def test_reset(self):
        c = Counter(3)
        c.reset()
        self.assertEqual(c.count, 0)

class CounterTestAdd(unittest.TestCase):
    def setUp(self):
        self.c = Counter(5)

    def test_add(self):
        self.assertEqual(self.c.add(2), 7)
"""
COUNTER_INPUT = "assertEqual(self.c.add(2), 7)\n"
# The input is CounterTestAdd.test_add, so its setUp runs first (traced):
# events 3, 4 (Counter(5)), then add(2): 7, 8, 9, 7, 8, 9, 7, 10.
# self.count after line 8: 6 then 7; self.log after line 9: [0] then [0, 1].


def run(mode, code, inp, questions, kind="humaneval", entry="f", test=None):
    """Runs one job in-process; returns (parsed last stderr line, exception or None)."""
    job = {"mode": mode, "kind": kind, "code": code, "entry_point": entry,
           "input": inp, "test": test, "questions": questions}
    captured = io.StringIO()
    error = None
    with contextlib.redirect_stderr(captured):
        try:
            judge.run_job(json.dumps(job))
        except Exception as exc:  # the sandbox would see this
            error = exc
    lines = [line for line in captured.getvalue().splitlines() if line.strip()]
    return json.loads(lines[-1]), error


def q(task, lineno=None, var=None, reply=None, question=None):
    return {"task": task, "lineno": lineno, "var": var, "reply": reply, "question": question}


def verdicts(code, inp, questions, **kw):
    results, _ = run("judge", code, inp, questions, **kw)
    return [r["correct"] for r in results]


def answer(text):
    return "[ANSWER]\n%s\n[/ANSWER]" % text


class CoverageTest(unittest.TestCase):
    def test_truth(self):
        # Lines 4 (loop body) and 7 (last line) run; line 6 never does (total = 6).
        results, _ = run("truth", LOOP, "([1, 2, 3],)", [q("coverage", 4), q("coverage", 6), q("coverage", 7)])
        self.assertEqual([r["truth"] for r in results], [True, False, True])
        self.assertEqual([r["answer"] for r in results], ["YES", "NO", "YES"])

    def test_judge_yes_no(self):
        # Line 4 runs: YES right, NO wrong. Line 6 does not: NO right.
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("coverage", 4, reply=answer("YES")),
            q("coverage", 4, reply=answer("NO")),
            q("coverage", 6, reply=answer("NO")),
            q("coverage", 6, reply=answer("YES")),
        ])
        self.assertEqual(got, [True, False, True, False])

    def test_first_three_characters(self):
        # "Yes, ..." -> YES; "NOT sure" -> NO; "" and "N/A" count as NO;
        # "  no" is stripped first, so "NO".
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("coverage", 4, reply=answer("Yes, it is executed")),
            q("coverage", 6, reply=answer("NOT executed")),
            q("coverage", 6, reply=answer("")),
            q("coverage", 4, reply=answer("N/A")),
            q("coverage", 6, reply="[ANSWER]\n  no"),
        ])
        self.assertEqual(got, [True, True, True, False, True])

    def test_missing_closing_tag_and_no_tags(self):
        # [/ANSWER] missing -> the rest of the reply; no tags at all -> the whole reply.
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("coverage", 7, reply="[ANSWER]\nYES"),
            q("coverage", 7, reply="YES"),
            q("coverage", 6, reply="NO\n[/ANSWER]\nmore text"),
        ])
        self.assertEqual(got, [True, True, True])

    def test_classeval_setup_lines_count(self):
        # Line 3 runs during setUp (Counter(5)); line 13 (reset) never runs.
        results, _ = run("truth", COUNTER, COUNTER_INPUT,
                         [q("coverage", 3), q("coverage", 9), q("coverage", 13)],
                         kind="classeval", entry="Counter", test=COUNTER_TEST)
        self.assertEqual([r["answer"] for r in results], ["YES", "YES", "NO"])

    def test_single_wrong_question_raises(self):
        # One question answered wrong: the job itself fails with AssertionError.
        _, error = run("judge", LOOP, "([1, 2, 3],)", [q("coverage", 6, reply=answer("YES"))])
        self.assertIsInstance(error, AssertionError)
        _, error = run("judge", LOOP, "([1, 2, 3],)", [q("coverage", 6, reply=answer("NO"))])
        self.assertIsNone(error)


class StateTest(unittest.TestCase):
    def test_loop_values(self):
        # total after line 4 is 1, 3, 6 (read at the following line-3 events).
        results, _ = run("truth", LOOP, "([1, 2, 3],)", [q("state", 4, "total")])
        self.assertEqual([v["repr"] for v in results[0]["truth"]["values"]], ["1", "3", "6"])
        self.assertEqual(results[0]["answer"], "1; int")
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("state", 4, "total", answer("1; int")),
            q("state", 4, "total", answer("3; int")),
            q("state", 4, "total", answer("6; int")),
            q("state", 4, "total", answer("2; int")),
            q("state", 4, "total", answer("6; float")),  # 6 == 6.0 but no value has type float
        ])
        self.assertEqual(got, [True, True, True, False, False])

    def test_never_runs_is_nil(self):
        # Line 6 never runs: Nil is right, any value is wrong; a line that runs
        # is never Nil. "nil" is accepted in any case.
        results, _ = run("truth", LOOP, "([1, 2, 3],)", [q("state", 6, "total")])
        self.assertEqual(results[0]["answer"], "Nil")
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("state", 6, "total", answer("Nil")),
            q("state", 6, "total", answer("nil")),
            q("state", 6, "total", answer("100; int")),
            q("state", 4, "total", answer("Nil")),
        ])
        self.assertEqual(got, [True, True, False, False])

    def test_last_line_and_loop_header(self):
        # After line 7 (return) the frame's return event has total = 6. After
        # line 3, x is 1, 2, 3 (the exhausted header leaves x = 3).
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("state", 7, "total", answer("6; int")),
            q("state", 3, "x", answer("3; int")),
            q("state", 3, "x", answer("4; int")),
        ])
        self.assertEqual(got, [True, True, False])

    def test_float_tolerance(self):
        # y = 1/3: 0.3333333 is within 1e-6, 0.333 is not.
        got = verdicts(FLOAT, "(1.0,)", [
            q("state", 2, "y", answer("0.3333333; float")),
            q("state", 2, "y", answer("0.333; float")),
            q("state", 2, "y", answer("0.3333333333333333; float")),
        ], entry="g")
        self.assertEqual(got, [True, False, True])

    def test_messy_types_and_quotes(self):
        # t = 'AB', total takes 6: <class 'int'>, integer, string, unicode
        # quotes, unquoted str text (eval fails -> raw text), a typing generic.
        got = verdicts(TEXT, "('ab',)", [
            q("state", 2, "t", answer("'AB'; string")),
            q("state", 2, "t", answer("\u2018AB\u2019; str")),
            q("state", 2, "t", answer("\u201cAB\u201d; <class 'str'>")),
            q("state", 2, "t", answer("AB; str")),
            q("state", 2, "t", answer("'ab'; str")),
            q("state", 3, "pair", answer("('AB', 2); Tuple[str, int]")),
            q("state", 3, "pair", answer("('AB', 2); (str, int)")),
        ], entry="h")
        self.assertEqual(got, [True, True, True, True, False, True, True])
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("state", 4, "total", answer("6; <class 'int'>")),
            q("state", 4, "total", answer("6; integer")),
            q("state", 4, "total", "[ANSWER]\n6; int"),  # missing [/ANSWER]
        ])
        self.assertEqual(got, [True, True, True])

    def test_an_always_equal_value_fails(self):
        # total is 6 after line 4's last run; an object whose __eq__ always
        # says yes is not 6, even when its declared type is int.
        always = "type('A', (), {'__eq__': lambda s, o: True})()"
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("state", 4, "total", answer(always + "; int")),
            q("state", 4, "total", answer(always + "; A")),
            q("state", 4, "total", answer("6; int")),
        ])
        self.assertEqual(got, [False, False, True])

    def test_classeval_attributes_and_expressions(self):
        # self.log after line 9: [0], [0, 1]; self.count after line 8: 6, 7;
        # self.log[0] after 9: 0; (i, self.count) after 8 over every
        # combination: (0, 6), (1, 7), and also (0, 7), (1, 6).
        kw = dict(kind="classeval", entry="Counter", test=COUNTER_TEST)
        got = verdicts(COUNTER, COUNTER_INPUT, [
            q("state", 9, "self.log", answer("[0, 1]; list[int]")),
            q("state", 9, "self.log", answer("[0]; List")),
            q("state", 8, "self.count", answer("7; int")),
            q("state", 8, "self.count", answer("5; int")),
            q("state", 9, "self.log[0]", answer("0; int")),
            q("state", 8, "(i, self.count)", answer("(1, 7); tuple")),
            q("state", 8, "(i, self.count)", answer("(0, 7); tuple")),
            q("state", 8, "(i, self.count)", answer("(2, 8); tuple")),
        ], **kw)
        self.assertEqual(got, [True, True, True, False, True, True, True, False])
        results, _ = run("truth", COUNTER, COUNTER_INPUT, [q("state", 3, "self.count")], **kw)
        self.assertEqual(results[0]["answer"], "5; int")  # set during setUp


class PathTest(unittest.TestCase):
    def test_truth(self):
        # Events 2, 3, 4, 3, 4, 3, 4, 3, 5, 7: after 3 come 4 and 5; after 4
        # comes 3; 7 is the last event (-1); 6 never runs (-1).
        results, _ = run("truth", LOOP, "([1, 2, 3],)",
                         [q("path", 3), q("path", 4), q("path", 7), q("path", 6), q("path", 5)])
        self.assertEqual([r["truth"] for r in results], [[4, 5], [3], [-1], [-1], [7]])
        self.assertEqual([r["answer"] for r in results],
                         ["total += x", "for x in xs:", "-1", "-1", "return total"])

    def test_judge(self):
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("path", 3, reply=answer("total += x")),
            q("path", 3, reply=answer("    if total > 100:")),  # stripped before matching
            q("path", 3, reply=answer("return total")),
            q("path", 7, reply=answer("-1")),
            q("path", 6, reply=answer("return total")),
            q("path", 6, reply="[ANSWER]\n-1"),  # missing [/ANSWER]
        ])
        self.assertEqual(got, [True, True, False, True, False, True])

    def test_same_text_on_two_lines(self):
        # d(9): events 2, 3, 4, 5. "n += 1" names lines 2 and 4; after line 3
        # comes 4, so the answer is right; after 4 comes 5 only.
        got = verdicts(DUPLICATE, "(9,)", [
            q("path", 3, reply=answer("n += 1")),
            q("path", 4, reply=answer("n += 1")),
            q("path", 4, reply=answer("return n")),
        ], entry="d")
        self.assertEqual(got, [True, False, True])

    def test_into_another_method(self):
        # ClassEval: after line 4 (end of __init__ in setUp) the next line
        # event is line 7 (first line of add); after 10 nothing runs.
        kw = dict(kind="classeval", entry="Counter", test=COUNTER_TEST)
        results, _ = run("truth", COUNTER, COUNTER_INPUT, [q("path", 4), q("path", 10), q("path", 9)], **kw)
        self.assertEqual([r["truth"] for r in results], [[7], [-1], [7]])
        got = verdicts(COUNTER, COUNTER_INPUT, [
            q("path", 9, reply=answer("for i in range(n):")),
            q("path", 10, reply=answer("-1")),
            q("path", 13, reply=answer("-1")),
            q("path", 8, reply=answer("self.count = 0")),
        ], **kw)
        self.assertEqual(got, [True, True, True, False])

    def test_recursion_returns_to_caller(self):
        # r(1): events 2, 3 (r(0)) -> 2, 4 (returns 0), then line 3 of the
        # caller is done and its next event is... none: line 3 is the return.
        code = "def r(n):\n    if n > 0:\n        return r(n - 1) + 1\n    return 0\n"
        results, _ = run("truth", code, "(1,)", [q("path", 4), q("path", 3)], entry="r")
        self.assertEqual([r["truth"] for r in results], [[-1], [2]])


class OutputTest(unittest.TestCase):
    def test_humaneval(self):
        # f([1, 2, 3]) returns 6.
        question = "assert f([1, 2, 3]) == ??"
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("output", question=question, reply=answer("assert f([1, 2, 3]) == 6")),
            q("output", question=question, reply=answer("assert f([1, 2, 3]) == 7")),
            q("output", question=question, reply=answer("assert f([1, 2, 3]) == ??")),
            q("output", question=question, reply="[ANSWER]\nassert f([1, 2, 3]) == 6"),
        ])
        self.assertEqual(got, [True, False, False, True])

    def test_trivial_answers_fail(self):
        # All of these would run without error, but are trivial.
        question = "assert f([1, 2, 3]) == ??"
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("output", question=question, reply=answer("assert True")),
            q("output", question=question, reply=answer("assert True == True")),
            q("output", question=question, reply=answer("assert f([1, 2, 3]) == 6\nassert True")),
            q("output", question=question, reply=answer("f([1, 2, 3])")),  # no assert at all
        ])
        self.assertEqual(got, [False, False, False, False])

    def test_true_output_is_not_trivial(self):
        # p(1) is True: "== True" against a call is a real answer, not a
        # True == True self-comparison; "== False" is simply wrong.
        code = "def p(x):\n    return x > 0\n"
        got = verdicts(code, "(1,)", [
            q("output", question="assert p(1) == ??", reply=answer("assert p(1) == True")),
            q("output", question="assert p(1) == ??", reply=answer("assert p(1) == False")),
        ], entry="p")
        self.assertEqual(got, [True, False])

    def test_answers_that_rewrite_equality_fail(self):
        # f([1, 2, 3]) returns 6. Each answer below makes the assertion pass
        # when run as text, without predicting 6; codecal refuses them.
        question = "assert f([1, 2, 3]) == ??"
        always = "type('A', (), {'__eq__': lambda s, o: True})()"
        got = verdicts(LOOP, "([1, 2, 3],)", [
            q("output", question=question, reply=answer("assert f([1, 2, 3]) == " + always)),
            q("output", question=question, reply=answer(
                "class A:\n    def __eq__(s, o):\n        return True\nassert f([1, 2, 3]) == A()")),
            q("output", question=question, reply=answer(
                "assert f([1, 2, 3]) == __import__('unittest.mock').mock.ANY")),
            q("output", question=question, reply=answer("assert f([1, 2, 3]) == 6")),
        ])
        self.assertEqual(got, [False, False, False, True])

    def test_dunder_names_the_question_already_uses_are_allowed(self):
        # ClassEval's tests call dunder methods themselves (DREval/98:
        # `assertEqual(m.__getitem__('first_name'), ??)`); an answer that keeps
        # them only fills in the value. One that adds `__eq__` does more.
        question = "assertEqual(m.__getitem__('a'), ??)"
        self.assertIsNone(judge.escapes_the_assertion(
            "assertEqual(m.__getitem__('a'), 'John')", question))
        self.assertEqual(
            judge.escapes_the_assertion("assertEqual(m.__getitem__('a'), m.__eq__)", question),
            "reaches the dunder name __eq__")
        self.assertEqual(
            judge.escapes_the_assertion("import os\nassertEqual(m.__getitem__('a'), 1)", question),
            "defines or imports something (Import)")

    def test_classeval_with_setup(self):
        # setUp makes self.c = Counter(5); add(2) gives 7. assertTrue(True)
        # is trivial; fewer asserts than the question fails.
        kw = dict(kind="classeval", entry="Counter", test=COUNTER_TEST)
        question = "assertEqual(self.c.add(2), ??)"
        got = verdicts(COUNTER, COUNTER_INPUT, [
            q("output", question=question, reply=answer("assertEqual(self.c.add(2), 7)")),
            q("output", question=question, reply=answer("assertEqual(self.c.add(2), 8)")),
            q("output", question=question, reply=answer("assertTrue(True)")),
            # Unicode quotes are normalised for state answers only: here a SyntaxError.
            q("output", question=question, reply=answer("assertEqual(self.c.add(2), \u20187\u2019)")),
        ], **kw)
        self.assertEqual(got, [True, False, False, False])

    def test_padding_and_assert_count(self):
        # The question has 3 lines and 2 asserts. A 1-line answer is padded
        # with the first 2 question lines: "c2 = Counter(1)" and the first
        # assert, which still has ?? -> fails. A 2-line answer is padded with
        # the first line only and then holds both asserts -> c2.add(1) gives
        # 2 and then 3. An answer that drops one assert fails the count.
        kw = dict(kind="classeval", entry="Counter", test=COUNTER_TEST)
        question = "c2 = Counter(1)\nassertEqual(c2.add(1), ??)\nassertEqual(c2.add(1), ??)"
        got = verdicts(COUNTER, COUNTER_INPUT, [
            q("output", question=question, reply=answer("assertEqual(c2.add(1), 3)")),
            q("output", question=question, reply=answer("assertEqual(c2.add(1), 2)\nassertEqual(c2.add(1), 3)")),
            q("output", question=question, reply=answer("c2 = Counter(1)\nc2.add(1)\nassertEqual(c2.add(1), 3)")),
            q("output", question=question, reply=answer(
                "c2 = Counter(1)\nassertEqual(c2.add(1), 2)\nassertEqual(c2.add(1), 3)")),
        ], **kw)
        self.assertEqual(got, [False, True, False, True])


class LimitsTest(unittest.TestCase):
    def test_line_fits_and_huge_answer_is_dropped(self):
        # x after line 2 is list(range(30000)): its repr alone is ~190 KB, so
        # the canonical answer cannot fit the 60,000-byte line and is dropped.
        code = "def f():\n    x = list(range(30000))\n    return len(x)\n"
        results, _ = run("truth", code, "()", [q("state", 2, "x"), q("coverage", 2)])
        self.assertLess(len(json.dumps(results)), 64 * 1024)
        self.assertIsNone(results[0]["answer"])
        self.assertTrue(results[0]["answer_dropped"])
        self.assertEqual(results[1]["answer"], "YES")


class LoadTest(unittest.TestCase):
    def test_missing_module_is_a_runtime_error(self):
        # A program that cannot even be defined fails the job with its own error.
        code = "import reval_no_such_module\ndef f():\n    return 1\n"
        with self.assertRaises(ImportError):
            judge.run_job(json.dumps({"mode": "truth", "kind": "humaneval", "code": code,
                                      "entry_point": "f", "input": "()", "test": None,
                                      "questions": [q("coverage", 3)]}))


if __name__ == "__main__":
    unittest.main()
