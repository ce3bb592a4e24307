//! Two measures of a function's code, by tree-sitter, for grouping items
//! (multicalibration's group features): McCabe's cyclomatic complexity and
//! the number of distinct identifiers.
//!
//! Not here: mining functions (`mine`), or what the groups are for
//! (`calibrate::multical`).

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser};

/// Complexity and distinct identifiers of one piece of code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodeMetrics {
    /// 1 + the decision points: branches, loops, handlers, conditional
    /// expressions, comprehension clauses, boolean operators (`and`, `or`,
    /// `&&`, `||`) and match/switch cases, as radon and PMD count them.
    pub complexity: usize,
    pub identifiers: usize,
}

/// The metrics of `code` in `language` ("python" or "java"); `None` for
/// another language. Code that does not parse whole (a body without its
/// signature) is measured over what tree-sitter recovers.
pub fn code_metrics(code: &str, language: &str) -> Option<CodeMetrics> {
    let grammar = match language {
        "python" => tree_sitter_python::LANGUAGE.into(),
        "java" => tree_sitter_java::LANGUAGE.into(),
        _ => return None,
    };
    let mut parser = Parser::new();
    parser.set_language(&grammar).ok()?;
    let tree = parser.parse(code, None)?;
    let mut decisions = 0;
    let mut names = BTreeSet::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        decisions += usize::from(is_decision(node, code));
        if node.kind() == "identifier" {
            names.insert(&code[node.byte_range()]);
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    Some(CodeMetrics {
        complexity: 1 + decisions,
        identifiers: names.len(),
    })
}

fn is_decision(node: Node, code: &str) -> bool {
    match node.kind() {
        // Python.
        "if_statement"
        | "elif_clause"
        | "for_statement"
        | "while_statement"
        | "except_clause"
        | "conditional_expression"
        | "boolean_operator"
        | "for_in_clause"
        | "if_clause"
        | "case_clause"
        | "assert_statement" => true,
        // Java (if, for and while share the Python names above).
        "enhanced_for_statement"
        | "do_statement"
        | "catch_clause"
        | "ternary_expression"
        | "switch_label" => !node
            .utf8_text(code.as_bytes())
            .is_ok_and(|t| t.starts_with("default")),
        "binary_expression" => node
            .child_by_field_name("operator")
            .and_then(|op| op.utf8_text(code.as_bytes()).ok())
            .is_some_and(|op| op == "&&" || op == "||"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_decisions_are_counted_as_radon_counts_them() {
        let code = "def f(xs, limit):\n    total = 0\n    for x in xs:\n        if x > limit and x % 2:\n            total += x\n        elif x < 0:\n            total -= 1\n    return [y for y in xs if y] if total else None\n";
        // for, if, and, elif, comprehension for, comprehension if, conditional: 7.
        let m = code_metrics(code, "python").unwrap();
        assert_eq!(m.complexity, 8);
        // f, xs, limit, total, x, y.
        assert_eq!(m.identifiers, 6);
        let straight = code_metrics("def g(a):\n    return a + 1\n", "python").unwrap();
        assert_eq!(straight.complexity, 1);
    }

    #[test]
    fn java_decisions_include_cases_but_not_default() {
        let code = "int f(int a, boolean b) { if (a > 0 && b) { return 1; } switch (a) { case 1: return 2; case 2: return 3; default: return 0; } }";
        // if, &&, case 1, case 2: 4.
        assert_eq!(code_metrics(code, "java").unwrap().complexity, 5);
        assert_eq!(code_metrics("x", "go"), None);
    }
}
