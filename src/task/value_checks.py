
# codecal's checks on the values an answer gives, appended to the programs
# that judge HumanEval, MBPP and CRUXEval answers.
#
# HumanEval's `check(candidate)` and MBPP's `assert f(x) == y` compare the
# answer's results with `==`. A function that returns an object whose
# `__eq__` always says yes passes every such test, so the function is
# wrapped: each result must be made of Python's literal types, as every
# HumanEval reference's is (or a regex match, for three sanitized-MBPP
# references). Four MBPP references return a Counter or a
# defaultdict; those become plain dicts first (the tests compare them with
# dict literals, which a dict equals just as well), so that a patched
# `Counter.__eq__` cannot answer for them.
#
# The CRUXEval authors' scorer executes
# `assert OUTPUT == ANSWER` (output mode) or `assert OUTPUT == f(ANSWER)`
# (input mode). Executed as text, that assertion passes for answers that
# predict nothing: `0 or 1` (the assertion becomes `(OUTPUT == 0) or 1`), a
# second statement after the value, or an object whose `__eq__` always says
# yes. This check reads the same assertion with `ast`, insists on one
# equality between the dataset's output and one value (in input mode, the
# value of one call of `f`), and compares the two only when that value is
# made of Python's literal types. An answer the authors' scorer judges by
# equality of plain values gets the same verdict here.

# reval/judge.py's `_is_plain` is the same walk (that file also runs on its own).
def _codecal_plain(value, limit=1000000, also=()):
    plain = (bool, int, float, complex, str, bytes, type(None), list, tuple, dict, set, frozenset) + also
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        # A literal cannot hold itself, so a value too large to walk is not one.
        if type(item) not in plain or seen > limit:
            return False
        if type(item) is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif type(item) in (list, tuple, set, frozenset):
            stack.extend(item)
    return True


def _codecal_returns_plain(function):
    import collections
    import re

    def checked(*args, **kwargs):
        value = function(*args, **kwargs)
        if type(value) in (collections.Counter, collections.defaultdict):
            value = dict(value)
        # Three sanitized-MBPP references return a regex match, which their
        # tests only test for truth; the type is final and compares by identity.
        if not _codecal_plain(value, also=(re.Match,)):
            raise AssertionError("the function returned a %s, not a literal's type" % type(value).__name__)
        return value
    return checked


def _codecal_call(call, function, scope):
    # The input an answer predicts must be plain values too: an argument
    # whose `__eq__` always says yes steers `f` down whichever branch it likes.
    # Three of the dataset's own inputs hold a `range` or a lambda, which
    # compare by identity, so those are allowed as well.
    import ast
    keys = [None if named.arg is None else ast.Constant(named.arg) for named in call.keywords]
    parts = ast.Tuple([ast.Tuple(call.args, ast.Load()),
                       ast.Dict(keys, [named.value for named in call.keywords])], ast.Load())
    tree = ast.fix_missing_locations(ast.copy_location(ast.Expression(parts), call))
    positional, named = eval(compile(tree, "<answer>", "eval"), scope)
    if not _codecal_plain((positional, named), also=(range, type(lambda: 0))):
        raise AssertionError("the answer's input is not made of literals' types")
    return function(*positional, **named)


def _codecal_check(source, call_name):
    import ast
    tree = ast.parse(source, "<answer>")
    statement = tree.body[0] if len(tree.body) == 1 else None
    test = statement.test if isinstance(statement, ast.Assert) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        raise AssertionError("the answer is not one value compared with the output")
    answer = test.comparators[0]
    if call_name and not (isinstance(answer, ast.Call) and isinstance(answer.func, ast.Name)
                          and answer.func.id == call_name):
        raise AssertionError("the answer is not one call of %s" % call_name)
    scope = globals()
    expected = eval(compile(ast.Expression(test.left), "<output>", "eval"), scope)
    if call_name:
        value = _codecal_call(answer, scope[call_name], scope)
    else:
        value = eval(compile(ast.Expression(answer), "<answer>", "eval"), scope)
    if not _codecal_plain(value):
        raise AssertionError("the answer's value is a %s, not a literal's type" % type(value).__name__)
    assert expected == value
