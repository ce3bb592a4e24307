"""REval (DREval) worker for codecal: ground truth by tracing, and scoring of answers.

What it is: one self-contained Python 3 file (standard library only; numpy is
touched only when the traced program itself has imported it). codecal runs it
in its sandbox as ONE program, this file's text followed by a line
``run_job(<JSON text as a Python string literal>)``, on ``python3 -I``. The
job names a DREval program (HumanEval function or ClassEval class), one input,
and questions of four kinds (coverage, state, path, output). The sandbox reads
how the program ended (normal end = pass, uncaught AssertionError = wrong
answer, other exception = runtime error) and keeps the LAST stderr line, so
``run_job`` writes exactly one JSON line to stderr as its last act.

What it is not: REval's own code (that repository has no licence and was not
read). Everything here follows the description in
``../shared/data/reval/SOURCE.md`` (beside the repository), section "How REval computes ground
truth and scores answers", plus the choices below where that text is silent.
It is no sandbox either: model answers are ``eval``'d and ``exec``'d here, so
it must only ever run inside codecal's sandbox.

Running the program
  * The program text is compiled with the fixed file name ``<reval-program>``
    and executed (untraced) into a fresh namespace whose ``__name__`` is
    ``__reval__`` (so ``if __name__ == "__main__"`` blocks stay quiet).
  * HumanEval (``kind`` "humaneval"): ``entry_point(*eval(input))`` is traced.
  * ClassEval ("classeval"): the ``test`` source is executed in a copy of that
    namespace; the input snippet runs like the body of a test method: ``self``
    is an instance of the TestCase class whose test method matches the snippet
    (compared after ``ast.unparse`` with ``self.assertX`` -> ``assertX``; best
    statement overlap when none matches exactly; plain ``unittest.TestCase``
    when nothing overlaps), its ``setUp`` (if any) runs first, and the bare
    ``assert*`` names are bound to that instance's methods. The tracer is on
    during ``setUp`` as well, because REval runs the input "as a test method
    (after setUp)" and the prompts show the setUp to the model.
  * ``random.seed(0)`` before every run, so truth and judge runs agree.
  * Only frames whose code comes from ``<reval-program>`` are traced (test
    code, snippet, libraries are not), with ``sys.settrace``; the events used
    are ``line``, ``return`` and ``exception``. An exception escaping the
    invocation ends the run; the trace up to there still counts.

Ground truth
  * Coverage: line L is among the line events.
  * State after L: for each execution of L, the state at the next event of the
    SAME frame (a later line of that frame, or its return/exception event);
    when no such event ever comes, the frame's locals when tracing stopped.
    Every execution gives one state, so loops give several. Locals are
    deep-copied (falling back to the object itself when deepcopy fails), but
    only the names that the question's ``var`` mentions, and only at the
    events that can serve as a state: the result is the same as copying all
    locals at every event, at a fraction of the cost. ``var`` may be an
    expression (names, attributes with private-name mangling, subscripts,
    constants, tuples, simple arithmetic on indices); it is evaluated over
    every combination of the recorded values of its names (the per-execution
    combinations first, then the cross product, capped at MAX_COMBINATIONS).
    No value at all -> ``Nil``.
  * Path after L: the line number of the next line event in the program's
    code (any frame) after each execution of L; -1 when that execution is the
    last line event, or {-1} when L never runs.

Canonical answers (truth mode), in the ``direct_*`` prompts' formats:
coverage "YES"/"NO"; state ``repr(value); typename`` for the first recorded
value (the first later value that this judge accepts when the first one's repr
cannot be read back; a class is written by its name, ``str; type``; numpy
arrays in full, not summarised), or "Nil"; path the stripped text of the line
that followed the first execution, or "-1"; output null (codecal uses the
dataset's ``outputs``). The line is kept under MAX_LINE bytes: state listings
are cut first, then (rarely) a canonical answer too long to fit is dropped
and marked ``answer_dropped``.

Scoring (judge mode), as SOURCE.md states it
  * The answer is the text after ``[ANSWER]`` (or the whole reply when the
    tag is missing) up to ``[/ANSWER]`` (or the end when that is missing).
  * Coverage: first 3 upper-cased characters; YES if they contain YES and
    not NO, anything else (NO, empty, ambiguous) is NO.
  * State: unicode quotes made ASCII; ``Nil`` alone is Nil; else split at the
    last ``;``. Type lower-cased, ``<class 'x'>`` -> x, module prefix
    dropped, generics dropped (``list[int]`` -> list), ``string`` -> str,
    ``integer`` -> int, a comma or ``tuple`` -> tuple. Value: ``str`` is
    eval'd when possible (else the raw text), None/NoneType give None, other
    builtin types eval the text, other types eval it and then call the type on
    it (or on the raw text when eval fails). Correct when both are Nil, or the
    type names one of the recorded values' types and the value equals one of
    the recorded values: floats within 1e-6 (also inside lists, tuples and
    dicts, a choice SOURCE.md does not spell out), numpy arrays by allclose.
    Values are read with ``literal_eval``, else ``eval`` with module names
    first (``datetime.datetime(...)``), then the program's names, builtins and,
    if the program imported numpy, numpy's names. Where a value cannot be
    read back into an equal object (bs4 tag lists, say), an answer whose
    value text is exactly the repr of a recorded value also counts (our
    addition: otherwise no answer at all could be right there).
  * Only the state after a line whose ``var`` never has a value (the line
    never runs, or the name is not in that frame) is Nil; 24 of the 3,152
    DREval points run their line and still have no value, and count as Nil.
  * Path: ``-1``, or every line number whose stripped text equals the
    stripped answer; correct when any of them is among the truth.
  * Output: an answer with fewer lines than the question is padded with the
    question's first lines; it fails if trivial (``assert True/False``,
    ``assertTrue(True)``, ``assertFalse(False)``, ``True == True``-style
    self-comparisons, found on the AST), if it has fewer ``assert`` than the
    question, or if running it (after the program, and for ClassEval after
    the test source and setUp, untraced) raises anything. Our addition: it
    also fails if it defines or imports anything, reaches a dunder name, or
    calls ``type``, ``exec``, ``eval``, ``setattr`` and the like, where the
    question's text does not already (``escapes_the_assertion``): with those,
    an answer can make ``==`` always true. Likewise a state answer whose value is neither of a recorded
    value's type nor made of literal types never equals a recorded value.
"""

import ast
import builtins
import contextlib
import copy
import io
import itertools
import json
import math
import operator
import random
import re
import sys

PROGRAM_FILE = "<reval-program>"
TEST_FILE = "<reval-test-source>"
SNIPPET_FILE = "<reval-input>"
ANSWER_FILE = "<reval-answer>"

MAX_COMBINATIONS = 2000  # cap on evaluations of one state expression
MAX_LISTED_VALUES = 20  # state values shown in the truth listing
MAX_REPR = 300  # characters of one repr in listings and details
MAX_LINE = 60000  # bytes of the one stderr line (codecal keeps 64 KiB)
FLOAT_TOLERANCE = 1e-6


# --------------------------------------------------------------------------
# Entry point


def run_job(text):
    """Runs one job (a JSON text) and writes its one-line JSON result to stderr."""
    job = json.loads(text)
    questions = job.get("questions") or []
    program = Program(job)
    if job.get("mode") == "truth":
        _emit(truth_results(program, questions))
        return
    if job.get("mode") != "judge":
        raise ValueError("mode must be 'truth' or 'judge', not %r" % job.get("mode"))
    results = [judge_question(program, q) for q in questions]
    _emit(results)
    if len(results) == 1 and not results[0]["correct"]:
        raise AssertionError(results[0]["detail"])


def _emit(results):
    """Writes the results as one JSON line, shrinking listings to fit."""
    line = json.dumps(results)
    if len(line) > MAX_LINE:
        # Listings first, then (only if still needed) the long canonical answers.
        for entry in results:
            if isinstance(entry.get("truth"), dict) and "values" in entry["truth"]:
                entry["truth"]["values"] = entry["truth"]["values"][:3]
        line = json.dumps(results)
    while len(line) > MAX_LINE:
        longest = max(results, key=lambda e: len(json.dumps(e)))
        for key in ("answer", "parsed", "detail"):
            if isinstance(longest.get(key), str) and len(longest[key]) > MAX_REPR:
                longest[key] = None
                longest[key + "_dropped"] = True
                break
        else:
            break
        line = json.dumps(results)
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------
# Loading and running the program


class Program:
    """One DREval program with one input: loads it, traces it, runs answers."""

    def __init__(self, job):
        self.kind = job.get("kind")
        self.code = job["code"]
        self.entry_point = job.get("entry_point")
        self.input = job.get("input") or ""
        self.test = job.get("test")
        self.lines = re.split(r"\r\n|\r|\n", self.code)
        self._code_object = compile(self.code, PROGRAM_FILE, "exec")
        self._trace = None
        self._watch = {}
        for q in job.get("questions") or []:
            if q.get("task") == "state" and q.get("lineno") is not None:
                names = _names_in(q.get("var") or "")
                self._watch.setdefault(q["lineno"], set()).update(names)
        # Load once now so that a program that cannot even be defined (an
        # ImportError, say) fails the job as a runtime error at once.
        self.fresh_scope()

    def fresh_scope(self):
        """A new namespace with the program (and the test source) defined."""
        namespace = {"__name__": "__reval__", "__builtins__": builtins}
        with _quiet():
            exec(self._code_object, namespace)
            if self.kind == "classeval" and self.test:
                exec(compile(self.test, TEST_FILE, "exec"), namespace)
        return namespace

    def trace(self):
        """The trace of the input (computed once)."""
        if self._trace is None:
            tracer = Tracer(self._watch)
            namespace = self.fresh_scope()
            random.seed(0)
            try:
                with _quiet():
                    if self.kind == "classeval":
                        scope = self._test_scope(namespace, tracer)
                        snippet = compile(self.input, SNIPPET_FILE, "exec")
                        with tracer:
                            exec(snippet, scope)
                    else:
                        function = namespace[self.entry_point]
                        args = eval(self.input, namespace)
                        with tracer:
                            function(*args)
            except (Exception, SystemExit) as error:  # the program's own failure: keep the trace
                tracer.raised = _short("%s: %s" % (type(error).__name__, error))
            self._trace = tracer.finish()
        return self._trace

    def _test_scope(self, namespace, tracer=None):
        """Globals for a ClassEval snippet: self, bare assert*, after setUp."""
        import unittest  # ClassEval only; part of the standard library

        case_class = _pick_testcase(self.test, self.input, namespace, unittest)
        case = case_class("runTest")
        scope = dict(namespace)
        scope["self"] = case
        for name in dir(case):
            if name.startswith("assert") or name == "fail":
                scope[name] = getattr(case, name)
        if type(case).setUp is not unittest.TestCase.setUp:
            with tracer if tracer is not None else contextlib.nullcontext():
                case.setUp()
        return scope

    def run_answer(self, text):
        """Runs an output answer untraced; returns None or the error text."""
        namespace = self.fresh_scope()
        random.seed(0)
        try:
            with _quiet():
                scope = self._test_scope(namespace) if self.kind == "classeval" else namespace
                exec(compile(text, ANSWER_FILE, "exec"), scope)
        except BaseException as error:  # SystemExit too: the answer must run to its end
            if isinstance(error, KeyboardInterrupt):
                raise
            return _short("%s: %s" % (type(error).__name__, error))
        return None

    def eval_scope(self):
        """Names for reading state answers back: the program's, plus modules."""
        if not hasattr(self, "_eval_scope"):
            self._eval_scope = self.fresh_scope()
        return self._eval_scope


@contextlib.contextmanager
def _quiet():
    """Hides what the program prints: only our last stderr line matters."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def _pick_testcase(test_source, snippet, namespace, unittest):
    """The TestCase class whose test method the input snippet came from."""
    try:
        wanted = _statements(ast.parse(snippet).body)
        tree = ast.parse(test_source or "")
    except SyntaxError:
        return unittest.TestCase
    best, best_score = None, 0
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for method in node.body:
            if isinstance(method, ast.FunctionDef) and method.name.startswith("test"):
                have = _statements(method.body)
                if have == wanted:
                    return _testcase_named(node.name, namespace, unittest)
                score = len(set(have) & set(wanted))
                if score > best_score:
                    best, best_score = node.name, score
    return _testcase_named(best, namespace, unittest) if best else unittest.TestCase


def _statements(body):
    # ClassEval inputs are test method bodies with ``self.assertX`` made bare.
    return [ast.unparse(s).replace("self.assert", "assert") for s in body]


def _testcase_named(name, namespace, unittest):
    found = namespace.get(name)
    if isinstance(found, type) and issubclass(found, unittest.TestCase):
        return found
    return unittest.TestCase


# --------------------------------------------------------------------------
# Tracing


class Tracer:
    """sys.settrace recorder for the frames of <reval-program>.

    ``watch`` maps a line number to the names whose values are wanted after
    it (from the state questions on that line)."""

    def __init__(self, watch):
        self.watch = watch
        self.lines = []  # line numbers of all line events, in order
        self.states = {lineno: [] for lineno in watch}  # lineno -> [snapshot]
        self.raised = None
        self._pending = {}  # frame id -> line numbers waiting for their state
        self._frames = {}  # frame id -> frame; kept alive so ids stay unique

    def __enter__(self):
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._previous)
        return False

    def _on_call(self, frame, event, arg):
        if frame.f_code.co_filename != PROGRAM_FILE:
            return None
        self._frames[id(frame)] = frame
        return self._on_event

    def _on_event(self, frame, event, arg):
        if event not in ("line", "return", "exception"):
            return self._on_event
        key = id(frame)
        waiting = self._pending.pop(key, None)
        if waiting:
            # This is the next event of the frame after each waiting line.
            names = set().union(*(self.watch[lineno] for lineno in waiting))
            snapshot = _snapshot(frame, names)
            for lineno in waiting:
                self.states[lineno].append(snapshot)
        if event == "line":
            lineno = frame.f_lineno
            self.lines.append(lineno)
            if lineno in self.watch:
                self._pending.setdefault(key, []).append(lineno)
        return self._on_event

    def finish(self):
        """Closes lines that never saw a later event of their frame."""
        for key, waiting in self._pending.items():
            frame = self._frames[key]
            names = set().union(*(self.watch[lineno] for lineno in waiting))
            snapshot = _snapshot(frame, names)
            for lineno in waiting:
                self.states[lineno].append(snapshot)
        self._pending = {}
        self._frames = {}
        self.line_set = set(self.lines)
        return self


def _snapshot(frame, names):
    """Deep copies of the wanted names as the frame sees them now."""
    local_names, global_names = frame.f_locals, frame.f_globals
    found = {}
    for name in names:
        if name in local_names:
            found[name] = local_names[name]
        elif name in global_names:
            found[name] = global_names[name]
    try:
        return copy.deepcopy(found)  # one memo: aliasing between names survives
    except Exception:
        copied = {}
        for name, value in found.items():
            try:
                copied[name] = copy.deepcopy(value)
            except Exception:
                copied[name] = value
        return copied


# --------------------------------------------------------------------------
# State expressions over recorded values

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def _names_in(var):
    try:
        tree = ast.parse(var.strip(), mode="eval")
    except SyntaxError:
        return {var.strip()}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def state_values(var, snapshots):
    """Every value ``var`` takes over the recorded snapshots, first one first."""
    try:
        tree = ast.parse(var.strip(), mode="eval").body
    except SyntaxError:
        tree = ast.Name(id=var.strip())
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
    values, seen = [], set()

    def add(env):
        try:
            value = _evaluate(tree, env)
        except Exception:
            return
        key = _dedup_key(value)
        if key is None or key not in seen:
            if key is not None:
                seen.add(key)
            values.append(value)

    budget = MAX_COMBINATIONS
    # The combinations that really occurred together come first.
    for snapshot in snapshots:
        if budget <= 0:
            break
        if all(name in snapshot for name in names):
            add(snapshot)
            budget -= 1
    if len(names) > 1:
        columns = []
        for name in names:
            column, keys = [], set()
            for snapshot in snapshots:
                if name in snapshot:
                    key = _dedup_key(snapshot[name])
                    if key is None or key not in keys:
                        keys.add(key)
                        column.append(snapshot[name])
            columns.append(column)
        for combination in itertools.product(*columns):
            if budget <= 0:
                break
            add(dict(zip(names, combination)))
            budget -= 1
    return values


def _dedup_key(value):
    try:
        return (type(value).__name__, repr(value))
    except Exception:
        return None


def _evaluate(node, env):
    """Evaluates the small expression language of REval's ``var`` fields."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Attribute):
        return _get_attribute(_evaluate(node.value, env), node.attr)
    if isinstance(node, ast.Subscript):
        return _evaluate(node.value, env)[_evaluate(node.slice, env)]
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, env) for e in node.elts)
    if isinstance(node, ast.Slice):
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else _evaluate(p, env) for p in parts))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, env)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left, env), _evaluate(node.right, env))
    raise ValueError("unsupported expression: " + ast.dump(node))


def _get_attribute(obj, name):
    try:
        return getattr(obj, name)
    except AttributeError:
        # ``self.__x`` in a class body is stored mangled as ``_Class__x``.
        if name.startswith("__") and not name.endswith("__"):
            for cls in type(obj).__mro__:
                mangled = "_%s%s" % (cls.__name__.lstrip("_"), name)
                if hasattr(obj, mangled):
                    return getattr(obj, mangled)
        raise


# --------------------------------------------------------------------------
# Truth mode


def truth_results(program, questions):
    trace = program.trace()
    results = []
    for q in questions:
        task = q.get("task")
        entry = {"task": task, "lineno": q.get("lineno"), "var": q.get("var")}
        if task == "coverage":
            entry["truth"] = coverage_truth(trace, q["lineno"])
            entry["answer"] = "YES" if entry["truth"] else "NO"
        elif task == "state":
            values = state_values(q["var"], trace.states.get(q["lineno"], []))
            entry["truth"] = {
                "executed": coverage_truth(trace, q["lineno"]),
                "count": len(values),
                "values": [_describe(v) for v in values[:MAX_LISTED_VALUES]],
            }
            entry["answer"] = canonical_state(program, values)
        elif task == "path":
            entry["truth"] = sorted(path_truth(trace, q["lineno"]))
            entry["answer"] = canonical_path(program, trace, q["lineno"])
        elif task == "output":
            entry["truth"] = None
            entry["answer"] = None
        else:
            raise ValueError("unknown task %r" % task)
        entry["raised"] = trace.raised
        results.append(entry)
    return results


def coverage_truth(trace, lineno):
    return lineno in trace.line_set


def path_truth(trace, lineno):
    """Line numbers of the line events right after each execution of ``lineno``."""
    following = set()
    lines = trace.lines
    for index, seen in enumerate(lines):
        if seen == lineno:
            following.add(lines[index + 1] if index + 1 < len(lines) else -1)
    return following or {-1}


def canonical_path(program, trace, lineno):
    lines = trace.lines
    for index, seen in enumerate(lines):
        if seen == lineno:
            if index + 1 < len(lines):
                return program.lines[lines[index + 1] - 1].strip()
            return "-1"
    return "-1"


def canonical_state(program, values):
    """``repr; type`` of the first value this judge can read back, or Nil."""
    if not values:
        return "Nil"
    first = None
    for value in values[:5]:
        text = _full_repr(value)
        if text is None:
            continue
        answer = "%s; %s" % (text, type(value).__name__)
        first = first or answer
        if judge_state_answer(program, answer, values)[0]:
            return answer
    return first or "Nil"


def _full_repr(value):
    if isinstance(value, type):
        # A class reads back by its name (``str; type``), not ``<class 'str'>``.
        if value.__module__ in ("builtins", "__reval__"):
            return value.__qualname__
        return "%s.%s" % (value.__module__, value.__qualname__)
    try:
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            # A perfect answer spells out the whole array, not numpy's summary.
            with numpy.printoptions(threshold=sys.maxsize):
                return repr(value)
        return repr(value)
    except Exception:
        return None


def _describe(value):
    return {"repr": _short(_full_repr(value) or "<unrepresentable>"), "type": type(value).__name__}


def _short(text, limit=MAX_REPR):
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------
# Judge mode


def extract_answer(reply):
    """The text between [ANSWER] and [/ANSWER]; either tag may be missing."""
    reply = reply or ""
    start = reply.find("[ANSWER]")
    text = reply[start + len("[ANSWER]"):] if start >= 0 else reply
    end = text.find("[/ANSWER]")
    if end >= 0:
        text = text[:end]
    return text.strip()


def judge_question(program, q):
    task = q.get("task")
    answer = extract_answer(q.get("reply"))
    if task == "coverage":
        return judge_coverage(program, q, answer)
    if task == "state":
        return judge_state(program, q, answer)
    if task == "path":
        return judge_path(program, q, answer)
    if task == "output":
        return judge_output(program, q, answer)
    raise ValueError("unknown task %r" % task)


def parse_yes_no(answer):
    head = answer.upper()[:3]
    return "YES" if "YES" in head and "NO" not in head else "NO"


def judge_coverage(program, q, answer):
    parsed = parse_yes_no(answer)
    truth = coverage_truth(program.trace(), q["lineno"])
    expected = "YES" if truth else "NO"
    correct = parsed == expected
    return _result(correct, parsed, "coverage: expected %s, got %s" % (expected, parsed))


def judge_path(program, q, answer):
    truth = path_truth(program.trace(), q["lineno"])
    parsed = parse_path(program, answer)
    correct = bool(truth & set(parsed))
    return _result(correct, parsed, "path: expected one of %s, got %s" % (sorted(truth), parsed))


def parse_path(program, answer):
    text = answer.strip()
    if text == "-1":
        return [-1]
    return [n for n, line in enumerate(program.lines, 1) if line.strip() == text]


def judge_state(program, q, answer):
    values = state_values(q["var"], program.trace().states.get(q["lineno"], []))
    correct, parsed = judge_state_answer(program, answer, values)
    expected = "Nil" if not values else _short(
        "; ".join("%s (%s)" % (d["repr"], d["type"]) for d in map(_describe, values[:3])), 200)
    return _result(correct, parsed, "state: expected %s, got %s" % (expected, _short(json.dumps(parsed), 200)))


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_BUILTIN_TYPES = {name.lower() for name in dir(builtins) if isinstance(getattr(builtins, name), type)}


def normalise_type(text):
    """REval's type-name normalisation (SOURCE.md), lower-cased."""
    name = text.strip().lower()
    match = re.fullmatch(r"<(?:class|type)\s+['\"]?([^'\"]*)['\"]?\s*>", name)
    if match:
        name = match.group(1).strip()
    name = name.split("[", 1)[0].strip()  # generics dropped: list[int] -> list
    if "," in name or "tuple" in name:
        return "tuple"
    name = name.rsplit(".", 1)[-1]  # numpy.ndarray -> ndarray
    return {"string": "str", "integer": "int"}.get(name, name)


def parse_state(program, answer, values):
    """(kind, type name, value): kind is 'nil', 'value' or 'bad'."""
    text = answer.translate(_QUOTES).strip()
    if ";" not in text:
        return ("nil", None, None) if text.lower() == "nil" else ("bad", None, text)
    value_text, type_text = text.rsplit(";", 1)
    value_text = value_text.strip()
    type_name = normalise_type(type_text)
    if type_name in ("none", "nonetype"):
        return "value", "nonetype", None
    if type_name == "str":
        ok, value = _read_value(program, value_text, values)
        return "value", type_name, value if ok else value_text
    ok, value = _read_value(program, value_text, values)
    if type_name in _BUILTIN_TYPES:
        return ("value", type_name, value) if ok else ("bad", type_name, value_text)
    cls = _find_type(program, type_name, values)
    if cls is not None and not (ok and isinstance(value, cls)):
        try:
            return "value", type_name, cls(value if ok else value_text)
        except Exception:
            pass
    return "value", type_name, value if ok else value_text


def judge_state_answer(program, answer, values):
    """(correct, parsed) for one state answer against the recorded values."""
    kind, type_name, value = parse_state(program, answer, values)
    if kind == "nil":
        return not values, "Nil"
    if type_name is None or not values:  # no "value; type" shape, or truth is Nil
        return False, {"type": type_name, "value": _short(value, 200)}
    parsed = {"type": type_name, "value": _short(_full_repr(value) or "?", 200)}
    types = {type(v).__name__.lower() for v in values}
    if type_name not in types:
        return False, parsed
    if kind == "value" and any(same_value(value, v) for v in values):
        return True, parsed
    # A value that cannot be read back (an HTML tag list, say) is still right
    # when its text is exactly the repr of a recorded value.
    text = _value_text(answer)
    return any(text in (_safe_repr(v), _full_repr(v)) for v in values), parsed


def _value_text(answer):
    text = answer.translate(_QUOTES).strip()
    return text.rsplit(";", 1)[0].strip() if ";" in text else text


def _safe_repr(value):
    try:
        return repr(value)
    except Exception:
        return None


def _read_value(program, text, values):
    """(ok, value): literal_eval, else eval with the program's and modules' names."""
    try:
        return True, ast.literal_eval(text)
    except Exception:
        pass
    for names in _value_namespaces(program, values):
        try:
            return True, eval(text, {"__builtins__": builtins}, names)
        except Exception:
            continue
    return False, None


def _value_namespaces(program, values):
    """Modules by their names first (``datetime.datetime(...)``), then the program's.

    numpy's names (``array``, ``matrix``, ``int64``...) come last, after the
    builtins, and only when the program itself has imported numpy."""
    modules = {}
    for cls in _types_within(values):
        root = (getattr(cls, "__module__", None) or "").split(".")[0]
        if root and root in sys.modules and root != "builtins":
            modules[root] = sys.modules[root]
    extras = {"nan": float("nan"), "inf": float("inf")}
    numpy = sys.modules.get("numpy")
    numpy_names = vars(numpy) if numpy is not None else {}
    if numpy is not None:
        extras.update({"np": numpy, "numpy": numpy})
    program_names = program.eval_scope()
    builtin_names = vars(builtins)
    return [
        _Chain(modules, extras, program_names, builtin_names, numpy_names),
        _Chain(program_names, modules, extras, builtin_names, numpy_names),
    ]


def _types_within(values, limit=10000):
    """The types of the values and of what their lists, dicts, sets hold."""
    found, stack, seen = set(), list(values), 0
    while stack and seen < limit:
        value = stack.pop()
        seen += 1
        found.add(type(value))
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
    return found


class _Chain(dict):
    """A read-only lookup through several dicts, for eval's locals."""

    def __init__(self, *maps):
        super().__init__()
        self.maps = maps

    def __missing__(self, key):
        for names in self.maps:
            if key in names:
                return names[key]
        raise KeyError(key)


def _find_type(program, type_name, values):
    for value in values:
        if type(value).__name__.lower() == type_name:
            return type(value)
    for value in program.eval_scope().values():
        if isinstance(value, type) and value.__name__.lower() == type_name:
            return value
    return None


def same_value(answer, recorded):
    """Equality as REval scores it: floats within 1e-6, arrays by allclose."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and (isinstance(answer, numpy.ndarray) or isinstance(recorded, numpy.ndarray)):
        try:
            a, r = numpy.asarray(answer), numpy.asarray(recorded)
            if a.shape != r.shape:
                return False
            try:
                return bool(numpy.allclose(a, r, atol=FLOAT_TOLERANCE, equal_nan=True))
            except TypeError:
                return bool(numpy.array_equal(a, r))
        except Exception:
            return False
    if _is_real(answer) and _is_real(recorded) and (isinstance(answer, float) or isinstance(recorded, float)):
        a, r = float(answer), float(recorded)
        if math.isnan(a) or math.isnan(r):
            return math.isnan(a) and math.isnan(r)
        return a == r or abs(a - r) <= FLOAT_TOLERANCE
    if isinstance(answer, (list, tuple)) and type(answer) is type(recorded):
        return len(answer) == len(recorded) and all(map(same_value, answer, recorded))
    if isinstance(answer, dict) and isinstance(recorded, dict):
        return answer.keys() == recorded.keys() and all(
            same_value(answer[k], recorded[k]) for k in answer)
    # An answer's own class whose __eq__ always says yes is not a value the
    # program recorded: compare only plain values, or values of the recorded
    # value's own type (whose __eq__ is the program's).
    if type(answer) is not type(recorded) and not _is_plain(answer):
        return False
    try:
        return bool(answer == recorded)
    except Exception:
        return False


PLAIN_TYPES = (bool, int, float, complex, str, bytes, type(None), list, tuple, dict, set, frozenset)


def _is_plain(value, limit=1000000):
    """True when the value is made only of Python's literal types.

    The same walk as `_codecal_plain` in src/task/value_checks.py, written
    again because this file also runs on its own (selftest.py, test_judge.py)
    and each sandboxed program is one self-contained text."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if type(item) not in PLAIN_TYPES or seen > limit:
            return False
        if type(item) is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif type(item) in (list, tuple, set, frozenset):
            stack.extend(item)
    return True


def _is_real(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, (numpy.integer, numpy.floating))


def judge_output(program, q, answer):
    question = (q.get("question") or "").strip()
    text = pad_answer(question, answer)
    if is_trivial(text):
        return _result(False, _short(text), "output: trivial assertion")
    if text.count("assert") < question.count("assert"):
        return _result(False, _short(text), "output: fewer assertions than the question")
    escape = escapes_the_assertion(text, question)
    if escape:
        return _result(False, _short(text), "output: the answer " + escape)
    error = program.run_answer(text)
    if error is not None:
        return _result(False, _short(text), "output: " + _short(error, 200))
    return _result(True, _short(text), "output: ran without error")


def pad_answer(question, answer):
    """Pads an answer shorter than the question with the question's first lines."""
    question_lines = question.split("\n")
    answer_lines = answer.strip().split("\n")
    missing = len(question_lines) - len(answer_lines)
    if missing > 0:
        answer_lines = question_lines[:missing] + answer_lines
    return "\n".join(answer_lines)


def is_trivial(text):
    """assert True/False, assertTrue(True), assertFalse(False), True == True..."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        # Cannot be read as code, so it will fail when run; textual check anyway.
        return bool(re.search(r"assert\s+(True|False)\b|assertTrue\(\s*True\s*\)|assertFalse\(\s*False\s*\)", text))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and _bool_constant(node.test) is not None:
            return True
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
            if _same_bool(node.left, node.comparators[0]):
                return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args = node.args
            if name == "assertTrue" and args and _bool_constant(args[0]) is True:
                return True
            if name == "assertFalse" and args and _bool_constant(args[0]) is False:
                return True
            if name in ("assertEqual", "assertIs") and len(args) >= 2 and _same_bool(args[0], args[1]):
                return True
    return False


ESCAPE_CALLS = {"type", "exec", "eval", "compile", "setattr", "getattr", "delattr",
                "globals", "locals", "vars", "__import__", "breakpoint", "open"}


DEFINITION_KEYWORDS = {ast.ClassDef: "class", ast.FunctionDef: "def", ast.AsyncFunctionDef: "def",
                       ast.Import: "import", ast.ImportFrom: "import", ast.Global: "global",
                       ast.Nonlocal: "nonlocal"}


def escapes_the_assertion(text, question=""):
    """Why an output answer does more than fill in values, or None.

    REval runs the filled-in assertion; codecal also refuses an answer that
    defines or imports anything, reaches a dunder name, or calls a builtin
    that builds classes, runs code or rewrites attributes, unless the
    question's own text already does (ClassEval's tests call
    ``m.__getitem__(k)``): a value the assertion compares never needs them,
    and with them an answer can make any assertion pass (a class whose
    ``__eq__`` always says yes)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None  # it fails when run

    def new(word):
        return re.search(r"(?<!\w)%s(?!\w)" % re.escape(word), question) is None

    for node in ast.walk(tree):
        keyword = DEFINITION_KEYWORDS.get(type(node))
        if keyword and new(keyword):
            return "defines or imports something (%s)" % type(node).__name__
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name.startswith("__") and name.endswith("__") and new(name):
            return "reaches the dunder name %s" % name
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ESCAPE_CALLS and new(node.func.id)):
            return "calls %s()" % node.func.id
    return None


def _bool_constant(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def _same_bool(left, right):
    a, b = _bool_constant(left), _bool_constant(right)
    return a is not None and a == b


def _result(correct, parsed, detail):
    return {"correct": bool(correct), "parsed": parsed, "detail": _short(detail, 240)}
