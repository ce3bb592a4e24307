use super::*;

fn calls_of(prompt: &str, entry: &str) -> Vec<(String, String)> {
    parse_examples(prompt, entry)
        .examples
        .into_iter()
        .map(|e| match e {
            Example::Call { call, expected, .. } => (call, expected),
            Example::Assert { statement } => (statement, String::new()),
        })
        .collect()
}

fn pair(call: &str, expected: &str) -> (String, String) {
    (call.to_owned(), expected.to_owned())
}

#[test]
fn doctests_give_the_call_and_the_printed_value() {
    let prompt = "def f(xs):\n    \"\"\" Sum.\n    >>> f([1, 2])\n    3\n    >>> f([])\n\n    >>> f(['a',\n    'b'])\n    'ab'\n    \"\"\"\n";
    // The second shows no output: doctest prints nothing for None. The third
    // spans lines (a continuation doctest has no `...` here: not read).
    let got = calls_of(prompt, "f");
    assert_eq!(got[0], pair("f([1, 2])", "3"));
    assert_eq!(got[1], pair("f([])", "None"));
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(parse_examples(prompt, "f").skipped.len(), 1);
}

#[test]
fn each_prose_form_is_read() {
    let prompt = r#"
    Examples:
    f(5, 2, 7) ➞ True
    f(3, -2) ==> [3, -2]
    f("a b") == {'a': 1, 'b': 1}
    f(1) => 1.5
    f(2) -> -4
    f(3) should return "x".
    f(4) returns (1, 2)
    f(6) = []
    For lst = [1,2,3] the output should be 14
    For a = 1, b = "q", the output should be 'c'.
    Example 1:
        Input: arr = [4,2,3], k = 2
        Output: [2, 1]
    Example 2:
        Input:
            grid : [[0,1], [1,1]]
            bucket_capacity : 1
        Output: 6
    "#;
    let got = calls_of(prompt, "f");
    assert_eq!(
        got,
        vec![
            pair("f(5, 2, 7)", "True"),
            pair("f(3, -2)", "[3, -2]"),
            pair("f(\"a b\")", "{'a': 1, 'b': 1}"),
            pair("f(1)", "1.5"),
            pair("f(2)", "-4"),
            pair("f(3)", "\"x\""),
            pair("f(4)", "(1, 2)"),
            pair("f(6)", "[]"),
            pair("f([1,2,3])", "14"),
            pair("f(1, \"q\")", "'c'"),
            pair("f([4,2,3], 2)", "[2, 1]"),
            pair("f([[0,1], [1,1]], 1)", "6"),
        ]
    );
}

#[test]
fn lines_that_are_not_examples_yield_none() {
    let prompt = r#"def g(n):
    """Return the n-th number.
    g(n) is defined as g(n - 1) + g(n - 2).
    For example, a list is sorted.
    >>> helper(3)
    4
    >>> x = g(2)

    Note: gg(3) == 4 and obj.g(2) == 1 are other functions.
    Input: a string
    """
"#;
    let shown = parse_examples(prompt, "g");
    assert_eq!(shown.examples, vec![], "{shown:?}");
    // `g(n) is ...` has no operator; `x = g(2)` is an assignment, not a value;
    // "Input: a string" has no Output and names no literal.
    assert_eq!(shown.skipped, vec![">>> x = g(2)", "Input: a string"]);
}

#[test]
fn values_that_are_not_literals_are_skipped_not_guessed() {
    let prompt =
        "tri(3) = [1, 3, 2, 8]\ntri(2) = 1 + (2 / 2) = 2\ntri(3) = tri(2) + tri(1)\nf(2) == g(2)\n";
    let shown = parse_examples(prompt, "tri");
    assert_eq!(shown.examples.len(), 1);
    assert_eq!(shown.skipped.len(), 2);
}

#[test]
fn an_mbpp_prompt_shows_its_first_test_as_an_assertion() {
    let prompt = "You are an expert Python programmer, and here is your task: Write a function. Your code should pass this test:\n\nassert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)\n";
    let shown = parse_examples(prompt, "similar_elements");
    assert_eq!(
        shown.examples,
        vec![Example::Assert {
            statement: "assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)".into()
        }]
    );
    // An assertion about another function is not this problem's example.
    assert!(
        parse_examples("assert other(1) == 2\n", "f")
            .examples
            .is_empty()
    );
}

#[test]
fn the_literal_reader_takes_values_and_refuses_code() {
    for text in [
        "1",
        "-4",
        "1.5e-3",
        "'a'",
        "\"it's\"",
        "[1, [2, (3,)]]",
        "{'a': 1}",
        "True",
        "None",
        "()",
        "(1, 2)",
        "0x1F",
        "'''x'''",
    ] {
        assert!(is_literal(text), "{text}");
    }
    for text in [
        "",
        "x",
        "1 2",
        "f(1)",
        "[1, 2",
        "1 + 2",
        "'a' 'b'",
        "[1,,2]",
        "{1: }",
        "True False",
        "'open",
    ] {
        assert!(!is_literal(text), "{text}");
    }
}
