# codecal's check of one example a prompt shows (`task/examples.rs`),
# appended after `value_checks.py`. The call runs in the answer's own scope;
# the expected value is a literal read without the answer's names. The
# result must be made of literal types, as the judge requires, and equals
# the expected value by `==`, as HumanEval's and MBPP's tests compare; two
# floats (or a float and an int) may differ by 1e-6, relative or absolute,
# the tolerance HumanEval's own float tests allow (e.g. HumanEval/4, /32).
def _codecal_example(source, expected):
    import math
    want = eval(compile(expected, "<expected>", "eval"), {})
    got = eval(compile(source, "<example>", "eval"), globals())
    if not _codecal_plain(got):
        raise AssertionError("the example's value is a %s, not a literal's type" % type(got).__name__)
    if got == want:
        return
    numbers = (int, float)
    if (type(got) in numbers and type(want) in numbers and float in (type(got), type(want))
            and math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-6)):
        return
    raise AssertionError("example %s: expected %s, got %r" % (source[:200], expected[:200], got))
