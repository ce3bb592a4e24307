"""Turbulence worker for codecal: judges one answer to one question instance.

What it is: one Python 3 file that codecal's sandbox runs as ONE program,
after ``../canonical.py`` (``_codecal_canonical``, the value's text the
fingerprint digests) and followed by ``run_job(<JSON text as a Python string
literal>)`` on ``python3 -I``. The job holds the instance (question number,
function name, parameters), the answer's code, the oracle (codecal's own
``turbulence/oracles/qNN.py`` source, or an upstream checkout's instantiated
solution, fuzz-input generator and tests) and the fuzzing settings. A passed
answer ends the program normally after writing ``passed\\t<notes>\\t<fingerprint>``
to stderr; any other outcome raises ``TurbulenceVerdict`` whose message is
``<outcome>\\t<detail>\\t<fingerprint>``: the last line the sandbox keeps. The
fingerprint is a digest of the answer's results on every fuzz input, written
canonically and never compared with the reference's (or its failing stage),
equal for answers that behave alike, so that rounds can be compared
(self-consistency). An oracle that cannot run here (Q57 and Q58
without numpy) gives ``unavailable``.

What it is not: the Turbulence harness (its code was not read). The order of
the checks is the one ``../shared/data/turbulence/SOURCE.md`` states for the
harness: the answer parses, holds a function, of the requested name, with the
requested count of parameters; then the static check, the instantiated tests
and the fuzz step. The first failing check gives one of the paper's ten
outcomes (Table II of 002_c9cbfe9d1661ed8e.txt): syntax error, no function,
wrong function name, wrong count of arguments, static type error, resource
exhaustion, runtime error, assertion error, fuzzing failure, passed. It is no sandbox: it executes the answer, so it must
only run inside codecal's.

The static check is Pylint's, as the paper's (seed 002 §V): its
error-category messages (E-codes, ``--errors-only``) on the answer, which
Pylint reads without running it. Where the sandbox's Python has no Pylint
(``codecal setup`` installs Debian's, pinned), or the job asks for it, the
fallback is Python's own ``symtable``: a name read in the answer that no
scope binds and that is no builtin (Pylint's E0602). It catches far less
(neither ``sum = sum(xs)`` nor calling a non-callable) and its verdicts
say that they come from the fallback. Pylint runs with one checker of ours
(E9501, numpy-unexpected-keyword-arg): a keyword that a numpy function's
documented signature does not take, which Pylint alone misses for numpy's
compiled functions (the paper's ``numpy.arange(..., axis=0)``).

Time limits, as the harness's: the answer has one allowance of
``answer_seconds`` (7 s upstream) for everything it runs (defining it, the
fixed tests, the fuzz calls); past it, resource exhaustion. The model
solution's calls have an allowance of their own, never charged to the
answer; an input on which the solution fails or runs out of its allowance
is skipped, and an answer compared on fewer than ``min_compared`` inputs is
``unavailable``, not passed.

Choices where the sources are silent:
  * An answer that raises ``MemoryError``, ``RecursionError`` or runs out of
    its allowance is resource exhaustion; any other exception, an
    ``AssertionError`` of the answer's own included, is a runtime error. The
    assertion-error outcome belongs to the fixed tests (upstream oracles).
  * A result must be plain data (None, numbers, strings, bytes, containers of
    them, numpy arrays for Q57/Q58), so that an object whose ``__eq__`` always
    says yes is a fuzzing failure, not a pass.
  * Pylint's own time is bounded by ``static_seconds``; past it the answer
    is not statically checked, and its verdict says so.
"""

import ast
import builtins
import copy
import hashlib
import json
import os
import re
import signal
import symtable
import sys
import tempfile
import time
import types

OUTCOMES = (
    "no-function",
    "wrong-function-name",
    "wrong-argument-count",
    "syntax-error",
    "static-type-error",
    "resource-exhaustion",
    "runtime-error",
    "assertion-error",
    "fuzzing-failure",
    "passed",
)
DETAIL_CHARS = 240


class TurbulenceVerdict(Exception):
    """The answer's outcome, raised as the program's last act."""


class CallTimeout(BaseException):
    """An allowance ran out; a BaseException so that `except Exception` in an answer cannot swallow it."""


def one_line(detail):
    detail = " ".join(str(detail).split())
    if len(detail) > DETAIL_CHARS:
        detail = detail[: DETAIL_CHARS - 3] + "..."
    return detail


def verdict(outcome, detail, fingerprint=None):
    """Ends the judging: `<outcome>\t<detail>\t<fingerprint>`."""
    raise TurbulenceVerdict(f"{outcome}\t{one_line(detail)}\t{fingerprint or outcome}")


# ---- the answer's shape ----------------------------------------------------

DEF_LINE = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.M)


def signature_count(code, name):
    """(count, variadic) of the first `def name(...)`, or None when unreadable."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return count_arguments(node.args)
    # The answer does not parse: read the def line alone.
    for match in DEF_LINE.finditer(code):
        if match.group(1) != name:
            continue
        header = code[match.start() :].split(":\n", 1)[0].strip()
        try:
            node = ast.parse(header.lstrip() + ": pass").body[0]
        except (SyntaxError, ValueError, IndexError):
            return None
        return count_arguments(node.args)
    return None


def count_arguments(args):
    count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
    count += (args.vararg is not None) + (args.kwarg is not None)
    return count, args.vararg is not None


def check_shape(code, name, arity, variadic_question):
    # The harness's order (SOURCE.md's steps 1-4): the answer parses, then
    # it holds a function, of the requested name, with the requested count
    # of parameters. An unparsable answer is a syntax error whatever its
    # def line says.
    try:
        compiled = compile(code, "<answer>", "exec")
    except (SyntaxError, ValueError) as error:
        verdict("syntax-error", f"{type(error).__name__}: {error}")
    names = DEF_LINE.findall(code)
    if not names:
        verdict("no-function", "the answer defines no function")
    if name not in names:
        verdict("wrong-function-name", f"expected `{name}`, found {', '.join(names[:5])}")
    counted = signature_count(code, name)
    if counted is not None:
        count, has_vararg = counted
        if not (count == arity or (variadic_question and has_vararg)):
            verdict("wrong-argument-count", f"`{name}` takes {count} parameters, the question {arity}")
    return compiled


# ---- the static check -------------------------------------------------------


def undefined_names(code):
    """Names the answer reads that nothing in it binds and that are no builtins."""
    if re.search(r"^\s*from\s+\S+\s+import\s+\*", code, re.M):
        return []
    top = symtable.symtable(code, "<answer>", "exec")
    bound = set(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__", "__spec__"}
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            if symbol.is_global() or table is top or symbol.is_declared_global():
                if symbol.is_assigned() or symbol.is_imported() or is_definition(table, symbol):
                    bound.add(symbol.get_name())
    missing = []
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            global_read = table is top or symbol.is_global()
            if global_read and symbol.is_referenced() and symbol.get_name() not in bound:
                missing.append(symbol.get_name())
    return sorted(set(missing))


def is_definition(table, symbol):
    return any(child.get_name() == symbol.get_name() for child in table.get_children())


def pylint_errors(code, seconds):
    """Pylint's error-category messages on the answer, as `E0601 used-before-assignment
    (line 2): ...` lines; None where Pylint is not installed."""
    try:
        from pylint.lint import Run
        from pylint.reporters import CollectingReporter
    except ImportError:
        return None
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "generated_answer.py")
    rcfile = os.path.join(folder, "pylintrc")
    with open(path, "w", encoding="utf-8") as file:
        file.write(code)
    with open(rcfile, "w", encoding="utf-8") as file:
        file.write("[MAIN]\n")
    reporter = CollectingReporter()
    arguments = [path, "--errors-only", "--persistent=n", "--score=n", "--jobs=1", f"--rcfile={rcfile}"]
    if install_numpy_plugin():
        arguments.append(f"--load-plugins={NUMPY_PLUGIN}")
    limited(seconds, lambda: Run(arguments, reporter=reporter, exit=False))
    return [f"{m.msg_id} {m.symbol} (line {m.line}): {m.msg}" for m in reporter.messages if m.msg_id.startswith("E")]


# ---- numpy's compiled functions, for Pylint ----------------------------------
#
# astroid models few of numpy's compiled functions, so Pylint alone does not
# see that `np.arange(0, 3, axis=0)` passes a keyword arange does not take:
# seed 002 §V's own example of a static type error. This Pylint checker reads
# the signature numpy documents for the function called (`inspect.signature`,
# else the docstring's head, "arange([start,] stop[, step,], dtype=None, *,
# like=None)") and reports a keyword that is not in it. It imports numpy,
# never the answer, and says nothing where the signature is unknown or takes
# **kwargs.

NUMPY_PLUGIN = "codecal_numpy_signatures"
IDENTIFIER = re.compile(r"([A-Za-z_]\w*)\s*(?:=|$)")


def documented_keywords(function, name):
    """The keyword names `function` accepts; None when unknown or open-ended."""
    import inspect

    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        parameters = None
    if parameters is not None and not any(p.kind is p.VAR_KEYWORD for p in parameters):
        return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    # A compiled function, or a dispatcher's (*args, **kwargs): its docstring.
    doc = (getattr(function, "__doc__", None) or "").lstrip()
    if not doc.startswith(name + "("):
        return None
    inner = parenthesised(doc[len(name) :])
    if inner is None:
        return None
    keywords = set()
    for item in split_top_level(inner.replace("[", "").replace("]", "")):
        item = item.strip()
        if item.startswith("**"):
            return None
        match = IDENTIFIER.match(item)
        if match and not item.startswith("*"):
            keywords.add(match.group(1))
    return keywords


def parenthesised(text):
    """What the parentheses opening `text` hold, or None when they never close."""
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[1:index]
    return None


def split_top_level(text):
    items, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return items


def numpy_aliases(module):
    """Names the answer binds to numpy or to something in it, with their dotted paths."""
    from astroid import nodes

    aliases = {}
    for node in module.nodes_of_class((nodes.Import, nodes.ImportFrom)):
        if isinstance(node, nodes.Import):
            for name, alias in node.names:
                if name == "numpy" or name.startswith("numpy."):
                    aliases[alias or "numpy"] = name.split(".") if alias else ["numpy"]
        elif node.modname == "numpy" or node.modname.startswith("numpy."):
            for name, alias in node.names:
                if name != "*":
                    aliases[alias or name] = node.modname.split(".") + [name]
    return aliases


def dotted(expression):
    from astroid import nodes

    if isinstance(expression, nodes.Name):
        return [expression.name]
    if isinstance(expression, nodes.Attribute):
        head = dotted(expression.expr)
        return head + [expression.attrname] if head else None
    return None


def numpy_object(path):
    try:
        import importlib

        value = importlib.import_module(path[0])
        for part in path[1:]:
            value = getattr(value, part)
    except (ImportError, AttributeError):
        return None
    return value


def install_numpy_plugin():
    """Makes the checker loadable by name; False where Pylint's API is not the expected one."""
    try:
        from pylint.checkers import BaseChecker
    except ImportError:
        return False

    class NumpySignatureChecker(BaseChecker):
        name = "codecal-numpy-signatures"
        msgs = {
            "E9501": (
                "Unexpected keyword argument %r in %s call (numpy documents %s)",
                "numpy-unexpected-keyword-arg",
                "A keyword argument that the numpy function's documented signature does not take.",
            )
        }

        def visit_module(self, node):
            self.aliases = numpy_aliases(node)

        def visit_call(self, node):
            path = dotted(node.func)
            if not path or path[0] not in getattr(self, "aliases", {}):
                return
            given = [keyword.arg for keyword in node.keywords or [] if keyword.arg is not None]
            if not given:
                return
            target = self.aliases[path[0]] + path[1:]
            function = numpy_object(target)
            if function is None or isinstance(function, type) or not callable(function):
                return
            accepted = documented_keywords(function, target[-1])
            if accepted is None:
                return
            for keyword in given:
                if keyword not in accepted:
                    shown = ", ".join(sorted(accepted)) or "no keywords"
                    self.add_message("numpy-unexpected-keyword-arg", node=node, args=(keyword, ".".join(target), shown))

    module = types.ModuleType(NUMPY_PLUGIN)
    module.register = lambda linter: linter.register_checker(NumpySignatureChecker(linter))
    sys.modules[NUMPY_PLUGIN] = module
    return True


def check_static(code, job):
    """Ends the judging with a static type error, or returns a note on how the check went."""
    if job.get("static_check", "pylint") == "pylint":
        try:
            errors = pylint_errors(code, job.get("static_seconds", 20.0))
        except CallTimeout:
            return f"not statically checked: Pylint ran past {job.get('static_seconds', 20.0)} s"
        except Exception as error:  # Pylint itself failed on this answer
            return f"not statically checked: Pylint failed ({type(error).__name__})"
        if errors is not None:
            if errors:
                verdict("static-type-error", "Pylint " + "; ".join(errors))
            return ""
        fallback = "symtable fallback (Pylint is not installed in the sandbox's Python)"
    else:
        fallback = "symtable fallback (asked for)"
    try:
        missing = undefined_names(code)
    except (SyntaxError, ValueError):
        return fallback
    if missing:
        verdict("static-type-error", f"{fallback}: undefined name(s): {', '.join(missing)}")
    return fallback


# ---- running with limits ----------------------------------------------------


def on_alarm(signum, frame):
    raise CallTimeout()


def limited(seconds, function, *args):
    """function(*args) under a wall-clock limit; exceptions pass through."""
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return function(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


class Allowance:
    """Seconds of wall-clock time that every call made through it spends."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.left = seconds

    def call(self, function, *args):
        if self.left <= 0:
            raise CallTimeout()
        start = time.monotonic()
        try:
            return limited(self.left, function, *args)
        finally:
            self.left -= time.monotonic() - start


def failure_of(error, allowance):
    """The outcome of an exception the answer raised."""
    if isinstance(error, CallTimeout):
        return "resource-exhaustion", f"the answer ran past its {allowance.seconds:g} s"
    if isinstance(error, (MemoryError, RecursionError)):
        return "resource-exhaustion", type(error).__name__
    return "runtime-error", f"{type(error).__name__}: {error}"


def load_answer(compiled, name, allowance):
    namespace = {"__name__": "generated_answer", "__builtins__": builtins}
    try:
        allowance.call(exec, compiled, namespace)
    except BaseException as error:  # the answer's import-time code failed
        verdict(*failure_of(error, allowance))
    function = namespace.get(name)
    if not callable(function):
        verdict("wrong-function-name", f"`{name}` is not a function after the answer ran")
    return namespace, function


# ---- comparing results --------------------------------------------------------

PLAIN = (type(None), bool, int, float, complex, str, bytes)


def is_plain(value, depth=0):
    if depth > 50:
        return False
    if type(value) in PLAIN:
        return True
    if type(value) in (list, tuple, set, frozenset):
        return all(is_plain(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(is_plain(k, depth + 1) and is_plain(v, depth + 1) for k, v in value.items())
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic))


def multiset(items):
    return sorted(repr(item) for item in items)


def matrices(items):
    return sorted(repr(getattr(item, "tolist", lambda: item)()) for item in items)


# Upstream harness's equality where it is not `==` (SOURCE.md, step 6).
UPSTREAM_SAME = {
    48: lambda got, want: isinstance(got, str) and got.upper() == str(want).upper(),
    55: lambda got, want: isinstance(got, list) and multiset(got) == multiset(want),
    56: lambda got, want: isinstance(got, list) and multiset(got) == multiset(want),
    57: lambda got, want: isinstance(got, list) and matrices(got) == matrices(want),
}


def equal(same, got, want):
    try:
        result = same(got, want) if same else want == got
        return bool(result)
    except Exception:
        return False


# ---- the fixed tests (upstream oracles) --------------------------------------


def run_tests(tests, name, function, allowance, collection_error_passes):
    """Calls each `test_*` of the instantiated test file with the answer in scope."""
    body = "\n".join(line for line in tests.splitlines() if not re.match(r"\s*from\s+\S+\s+import\s+" + re.escape(name) + r"\s*$", line))
    try:
        compiled = compile(body, "<tests>", "exec")
    except (SyntaxError, ValueError) as error:
        if collection_error_passes:
            return f"tests did not compile ({type(error).__name__}); judged by fuzzing alone"
        verdict("assertion-error", f"the fixed tests do not compile ({type(error).__name__}) and collection errors count as failures")
    namespace = {"__name__": "tests", name: function}
    exec(compiled, namespace)
    for test_name in sorted(k for k, v in namespace.items() if k.startswith("test") and callable(v)):
        try:
            allowance.call(namespace[test_name])
        except AssertionError as error:
            verdict("assertion-error", f"{test_name}: {error}")
        except BaseException as error:
            outcome, detail = failure_of(error, allowance)
            verdict(outcome, f"{test_name}: {detail}")
    return ""


# ---- the oracle ----------------------------------------------------------------


def own_oracle(job):
    module = types.ModuleType("turbulence_oracle")
    exec(compile(job["oracle"], f"<oracle Q{job['question']}>", "exec"), module.__dict__)
    params = job["params"]
    return {
        "arity": module.arity(params),
        "solution": module.solution(params),
        "inputs": lambda seed: module.inputs(params, seed),
        "same": getattr(module, "same", None),
    }


def upstream_oracle(job):
    solution_space = {"__name__": "solution"}
    exec(compile(job["solution"], "<upstream solution>", "exec"), solution_space)
    generator_space = {"__name__": "gen_function_params"}
    exec(compile(job["generator"], "<upstream generator>", "exec"), generator_space)
    solution = solution_space[job["function"]]
    node = next(
        n for n in ast.walk(ast.parse(job["solution"])) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == job["function"]
    )
    params = job["params"]
    generate = generator_space["input_generator"]
    arity = count_arguments(node.args)[0]
    return {
        "arity": arity,
        "solution": solution,
        # One input per call: the one argument itself, or a tuple of them.
        "inputs": lambda seed: spread(generate(params, seed), arity),
        "same": UPSTREAM_SAME.get(job["question"]),
    }


def spread(value, arity):
    return tuple(value) if arity != 1 and isinstance(value, (tuple, list)) else (value,)


def fuzz(oracle, function, job, answer_allowance):
    """Compares the answer with the model solution on inputs 0..fuzz-1.

    The first failing input decides the outcome; later inputs still run
    (except after resource exhaustion) so that the fingerprint, a digest of
    every result, lets rounds that behave alike be recognised. Inputs on
    which the solution fails, or that its allowance leaves unanswered, are
    skipped; an answer compared on fewer than `min_compared` is unavailable.
    Returns (skipped inputs, fingerprint).
    """
    count = job["fuzz"]
    solution_allowance = Allowance(job.get("solution_seconds", 30.0))
    skipped, first, digest = 0, None, hashlib.sha256()
    for seed in range(count):
        arguments = tuple(oracle["inputs"](seed))
        try:
            want = solution_allowance.call(oracle["solution"], *copy.deepcopy(arguments))
        except BaseException:
            skipped += 1
            continue
        shown = short(arguments)
        try:
            got = answer_allowance.call(function, *copy.deepcopy(arguments))
        except BaseException as error:
            outcome, detail = failure_of(error, answer_allowance)
            digest.update(f"{seed}:raised {type(error).__name__}\n".encode())
            first = first or (outcome, f"input {seed}: {detail}; arguments {shown}")
            if outcome == "resource-exhaustion":
                break
            continue
        if not is_plain(got):
            digest.update(f"{seed}:{type(got).__name__}\n".encode())
            first = first or ("fuzzing-failure", f"input {seed}: returned a {type(got).__name__}, not plain data; arguments {shown}")
            continue
        agrees = equal(oracle["same"], got, want)
        # The answer's own value, never whether it agrees: a key that knew
        # the reference would carry the label into a confidence.
        digest.update(f"{seed}:{_codecal_canonical(got)}\n".encode())
        if not agrees:
            first = first or ("fuzzing-failure", f"input {seed}: expected {short(want)}, got {short(got)}; arguments {shown}")
    fingerprint = "fuzz:" + digest.hexdigest()[:16]
    if first:
        verdict(*first, fingerprint)
    compared, needed = count - skipped, job.get("min_compared", 0)
    if compared < needed:
        verdict(
            "unavailable",
            f"compared on {compared} of {count} fuzz inputs, fewer than the {needed} needed: the model solution failed or ran out of time on {skipped}",
            fingerprint,
        )
    return skipped, fingerprint


def short(value, chars=60):
    """The repr of a value cut to `chars`, marked where cut."""
    text = safe_repr(value)
    return text if len(text) <= chars else text[: chars - 3] + "..."


def safe_repr(value):
    try:
        return repr(value)
    except BaseException:
        return f"<{type(value).__name__}>"


def run_job(text):
    job = json.loads(text)
    signal.signal(signal.SIGALRM, on_alarm)
    sys.setrecursionlimit(5000)
    try:
        oracle = upstream_oracle(job) if job.get("solution") is not None else own_oracle(job)
    except BaseException as error:
        verdict("unavailable", f"the oracle cannot run here: {type(error).__name__}: {error}")
    code, name = job["answer"], job["function"]
    compiled = check_shape(code, name, oracle["arity"], job.get("variadic", False))
    notes = [note for note in [check_static(code, job)] if note]
    answer_allowance = Allowance(job["answer_seconds"])
    _, function = load_answer(compiled, name, answer_allowance)
    if job.get("tests") is not None:
        note = run_tests(job["tests"], name, function, answer_allowance, job.get("collection_error_passes", True))
        if note:
            notes.append(note)
    skipped, fingerprint = fuzz(oracle, function, job, answer_allowance)
    if skipped:
        notes.append(f"{skipped} inputs skipped: the model solution failed on them")
    sys.stderr.write(f"passed\t{one_line('; '.join(notes))}\t{fingerprint}\n")
