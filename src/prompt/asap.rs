//! ASAP's static-analysis products for a summarization prompt (seed 001
//! §IV-C, "Automatic Semantic Augmentation of Prompt", after Ahmed et al.,
//! ICSE 2024): the function's repository and file path, its identifiers
//! tagged with their kind and scope, and its data flow (which definition of
//! a variable reaches which use), for Java and Python, by tree-sitter.
//!
//! [`augment`] appends these facts to a function's code, for the exemplars
//! and the query alike, so the prompt template is unchanged.
//!
//! What it is not: a compiler's analysis. The data flow links each use of a
//! name to the nearest definition of that name before it in the text (a
//! parameter, an assignment or declaration, a loop variable), as a reader
//! scanning straight down would: branches are not joined and loops do not
//! carry a definition back to an earlier line. Names with no definition in
//! the function (globals, imports, methods) have no edges.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Node, Parser};

/// What an identifier is, in ASAP's tagging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IdentifierKind {
    /// The name of a function or method.
    Function,
    Parameter,
    /// A variable bound in a function's body.
    Local,
    /// An attribute of the receiver: `self.x`, `this.x`.
    Field,
}

impl IdentifierKind {
    fn plural(self) -> &'static str {
        match self {
            IdentifierKind::Function => "functions",
            IdentifierKind::Parameter => "parameters",
            IdentifierKind::Local => "locals",
            IdentifierKind::Field => "fields",
        }
    }
}

/// One tagged identifier: its name, kind and scope (the innermost function
/// around it; a function's own name is in the scope around the function,
/// `<top>` at the top level).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Identifier {
    pub name: String,
    pub kind: IdentifierKind,
    pub scope: String,
}

/// A definition of `name` on line `from` (1-based, in the code as given)
/// that reaches a use on line `to`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowEdge {
    pub name: String,
    pub from: usize,
    pub to: usize,
}

/// The static-analysis products of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticFacts {
    /// In order of first appearance, each (name, kind, scope) once.
    pub identifiers: Vec<Identifier>,
    /// Sorted by use line, then definition line and name; each once.
    pub flows: Vec<FlowEdge>,
}

/// The facts of `code` in `language` ("java" or "python"); `None` for
/// another language. A Java method is parsed inside a class, as CodeXGLUE
/// keeps methods without theirs.
pub fn analyse(code: &str, language: &str) -> Option<StaticFacts> {
    let (grammar, prefix, rules): (tree_sitter::Language, &str, &Rules) = match language {
        "python" => (tree_sitter_python::LANGUAGE.into(), "", &PYTHON),
        "java" => (tree_sitter_java::LANGUAGE.into(), "class C {\n", &JAVA),
        _ => return None,
    };
    let text = format!("{prefix}{code}\n}}");
    let text = if prefix.is_empty() { code } else { &text };
    let mut parser = Parser::new();
    parser.set_language(&grammar).ok()?;
    let tree = parser.parse(text, None)?;
    let mut walk = Walk {
        text,
        rules,
        line_offset: prefix.lines().count(),
        scopes: Vec::new(),
        seen: BTreeSet::new(),
        facts: StaticFacts::default(),
        definitions: BTreeMap::new(),
    };
    walk.visit(tree.root_node());
    walk.facts
        .flows
        .sort_by(|a, b| (a.to, a.from, &a.name).cmp(&(b.to, b.from, &b.name)));
    walk.facts.flows.dedup();
    Some(walk.facts)
}

/// `code` followed by its ASAP facts: repository, path, tagged
/// identifiers and data flow. Code in a language [`analyse`] does not read
/// gets the repository and path alone.
pub fn augment(code: &str, language: &str, repo: &str, path: &str) -> String {
    let mut lines = vec![format!("Repository: {repo}"), format!("Path: {path}")];
    if let Some(facts) = analyse(code, language) {
        lines.push(format!(
            "Identifiers: {}",
            identifiers_line(&facts.identifiers)
        ));
        lines.push(format!(
            "Data flow (name definition-line->use-line): {}",
            flows_line(&facts.flows)
        ));
    }
    format!("{code}\n{}", lines.join("\n"))
}

/// `name, name (kind of scope); ...`, grouped by kind and scope in order of
/// first appearance.
fn identifiers_line(identifiers: &[Identifier]) -> String {
    let mut groups: Vec<((IdentifierKind, &str), Vec<&str>)> = Vec::new();
    for identifier in identifiers {
        let key = (identifier.kind, identifier.scope.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(&identifier.name),
            None => groups.push((key, vec![&identifier.name])),
        }
    }
    if groups.is_empty() {
        return "none".into();
    }
    groups
        .iter()
        .map(|((kind, scope), names)| {
            format!("{} ({} of {scope})", names.join(", "), kind.plural())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn flows_line(flows: &[FlowEdge]) -> String {
    if flows.is_empty() {
        return "none".into();
    }
    flows
        .iter()
        .map(|e| format!("{} {}->{}", e.name, e.from, e.to))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which node kinds and fields play which part, per grammar.
struct Rules {
    /// Function or method definitions, whose `name` field names them.
    functions: &'static [&'static str],
    /// Nodes that bind parameters, with the field (or `None`: every
    /// identifier below) that holds the bound name.
    parameters: &'static [(&'static str, Option<&'static str>)],
    /// Nodes that bind locals: (kind, the bound side's field, the value's
    /// field visited first so that `x = x + 1` reads the old `x`).
    bindings: &'static [(&'static str, &'static str, Option<&'static str>)],
    /// Attribute access: (kind, object field, attribute field, receiver).
    attribute: (&'static str, &'static str, &'static str, &'static str),
    /// (kind, field) pairs whose identifier is a name but not a variable:
    /// a called method, a keyword argument, an attribute.
    not_variables: &'static [(&'static str, &'static str)],
}

const PYTHON: Rules = Rules {
    functions: &["function_definition"],
    parameters: &[("parameters", None), ("lambda_parameters", None)],
    bindings: &[
        ("assignment", "left", Some("right")),
        ("augmented_assignment", "left", Some("right")),
        ("for_statement", "left", Some("right")),
        ("for_in_clause", "left", Some("right")),
        ("as_pattern", "alias", None),
        ("named_expression", "name", Some("value")),
    ],
    attribute: ("attribute", "object", "attribute", "self"),
    not_variables: &[("keyword_argument", "name"), ("attribute", "attribute")],
};

const JAVA: Rules = Rules {
    functions: &["method_declaration", "constructor_declaration"],
    parameters: &[
        ("formal_parameter", Some("name")),
        ("spread_parameter", None),
        ("catch_formal_parameter", Some("name")),
        ("inferred_parameters", None),
    ],
    bindings: &[
        ("variable_declarator", "name", Some("value")),
        ("assignment_expression", "left", Some("right")),
        ("enhanced_for_statement", "name", Some("value")),
    ],
    attribute: ("field_access", "object", "field", "this"),
    not_variables: &[
        ("method_invocation", "name"),
        ("field_access", "field"),
        ("labeled_statement", "identifier"),
    ],
};

struct Walk<'t> {
    text: &'t str,
    rules: &'static Rules,
    /// Lines of the wrapper before the code (Java's class line).
    line_offset: usize,
    scopes: Vec<String>,
    seen: BTreeSet<Identifier>,
    facts: StaticFacts,
    /// Each name's latest definition line so far.
    definitions: BTreeMap<String, usize>,
}

impl Walk<'_> {
    fn name_of(&self, node: Node) -> String {
        self.text[node.byte_range()].to_owned()
    }

    fn line(&self, node: Node) -> usize {
        node.start_position().row + 1 - self.line_offset
    }

    fn scope(&self) -> String {
        self.scopes
            .last()
            .cloned()
            .unwrap_or_else(|| "<top>".into())
    }

    fn tag(&mut self, name: String, kind: IdentifierKind, scope: String) {
        let identifier = Identifier { name, kind, scope };
        if self.seen.insert(identifier.clone()) {
            self.facts.identifiers.push(identifier);
        }
    }

    fn define(&mut self, node: Node, kind: IdentifierKind) {
        let name = self.name_of(node);
        self.definitions.insert(name.clone(), self.line(node));
        self.tag(name, kind, self.scope());
    }

    fn use_name(&mut self, node: Node) {
        let name = self.name_of(node);
        if let Some(&from) = self.definitions.get(&name) {
            let to = self.line(node);
            self.facts.flows.push(FlowEdge { name, from, to });
        }
    }

    fn visit(&mut self, node: Node) {
        let kind = node.kind();
        if self.rules.functions.contains(&kind) {
            return self.visit_function(node);
        }
        if let Some((_, field)) = self.rules.parameters.iter().find(|(k, _)| *k == kind) {
            return self.bind_parameters(node, *field);
        }
        if let Some(&(_, bound, value)) = self.rules.bindings.iter().find(|(k, ..)| *k == kind) {
            return self.visit_binding(node, bound, value);
        }
        if self.is_receiver_attribute(node) {
            return self.receiver_attribute(node, false);
        }
        if kind == "identifier" {
            return self.use_name(node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if !self.is_not_variable(node, child) {
                self.visit(child);
            }
        }
    }

    fn visit_function(&mut self, node: Node) {
        let name = node.child_by_field_name("name");
        if let Some(name) = name {
            let text = self.name_of(name);
            self.tag(text, IdentifierKind::Function, self.scope());
        }
        self.scopes
            .push(name.map_or_else(|| "<lambda>".into(), |n| self.name_of(n)));
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children.into_iter().filter(|c| Some(*c) != name) {
            self.visit(child);
        }
        self.scopes.pop();
    }

    fn bind_parameters(&mut self, node: Node, field: Option<&str>) {
        match field.and_then(|f| node.child_by_field_name(f)) {
            Some(name) if name.kind() == "identifier" => {
                self.define(name, IdentifierKind::Parameter)
            }
            // Default values are not read: they belong to the definition,
            // not to a call.
            _ => {
                for name in self.bound_identifiers(node) {
                    self.define(name, IdentifierKind::Parameter);
                }
            }
        }
    }

    fn visit_binding(&mut self, node: Node, bound: &str, value: Option<&str>) {
        let value = value.and_then(|v| node.child_by_field_name(v));
        if let Some(value) = value {
            self.visit(value);
        }
        let target = node.child_by_field_name(bound);
        let compound = node.kind() == "augmented_assignment"
            || node
                .child_by_field_name("operator")
                .is_some_and(|o| &self.text[o.byte_range()] != "=");
        if compound && let Some(target) = target {
            self.visit(target);
        }
        if let Some(target) = target {
            if self.is_receiver_attribute(target) {
                self.receiver_attribute(target, true);
            } else {
                for name in self.bound_identifiers(target) {
                    self.define(name, IdentifierKind::Local);
                }
                // A subscript or attribute target reads its object.
                if !matches!(target.kind(), "identifier")
                    && self.bound_identifiers(target).is_empty()
                {
                    self.visit(target);
                }
            }
        }
        let mut cursor = node.walk();
        let rest: Vec<Node> = node
            .children(&mut cursor)
            .filter(|c| Some(*c) != value && Some(*c) != target)
            .collect();
        for child in rest {
            self.visit(child);
        }
    }

    /// The identifiers a binding target binds: itself, or those of a tuple
    /// or list pattern, not those inside an attribute or subscript.
    fn bound_identifiers<'n>(&self, node: Node<'n>) -> Vec<Node<'n>> {
        match node.kind() {
            "identifier" => vec![node],
            "attribute" | "subscript" | "field_access" | "array_access" | "call" => Vec::new(),
            "default_parameter" | "typed_default_parameter" => node
                .child_by_field_name("name")
                .map(|n| self.bound_identifiers(n))
                .unwrap_or_default(),
            "typed_parameter" => {
                let mut cursor = node.walk();
                let first = node.named_children(&mut cursor).next();
                first.map(|n| self.bound_identifiers(n)).unwrap_or_default()
            }
            _ => {
                let mut cursor = node.walk();
                let children: Vec<Node<'n>> = node.named_children(&mut cursor).collect();
                children
                    .into_iter()
                    .filter(|c| !matches!(c.kind(), "type" | "type_identifier" | "generic_type"))
                    .flat_map(|c| self.bound_identifiers(c))
                    .collect()
            }
        }
    }

    fn is_receiver_attribute(&self, node: Node) -> bool {
        let (kind, object, _, receiver) = self.rules.attribute;
        node.kind() == kind
            && node
                .child_by_field_name(object)
                .is_some_and(|o| self.text[o.byte_range()] == *receiver)
    }

    fn receiver_attribute(&mut self, node: Node, defines: bool) {
        let (_, _, attribute, receiver) = self.rules.attribute;
        let Some(field) = node.child_by_field_name(attribute) else {
            return;
        };
        let name = format!("{receiver}.{}", self.name_of(field));
        let scope = self.scope();
        self.tag(name.clone(), IdentifierKind::Field, scope);
        let line = self.line(node);
        if defines {
            self.definitions.insert(name, line);
        } else if let Some(&from) = self.definitions.get(&name) {
            self.facts.flows.push(FlowEdge {
                name,
                from,
                to: line,
            });
        }
    }

    fn is_not_variable(&self, parent: Node, child: Node) -> bool {
        self.rules.not_variables.iter().any(|(kind, field)| {
            parent.kind() == *kind && parent.child_by_field_name(field) == Some(child)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identifier(name: &str, kind: IdentifierKind, scope: &str) -> Identifier {
        Identifier {
            name: name.into(),
            kind,
            scope: scope.into(),
        }
    }

    fn edge(name: &str, from: usize, to: usize) -> FlowEdge {
        FlowEdge {
            name: name.into(),
            from,
            to,
        }
    }

    use IdentifierKind::*;

    /// A Python method worked by hand: every identifier with its kind and
    /// scope, and every definition-to-use edge (issue "fidelity, third
    /// pass", item 10).
    #[test]
    fn a_python_method_is_tagged_and_its_flow_is_the_hand_worked_one() {
        let code = "def total(self, items, rate=0.5):\n    \
                    count = len(items)\n    \
                    self.seen = count\n    \
                    for item in items:\n        \
                    count = count + item.price(key=rate)\n    \
                    return count * self.seen\n";
        let facts = analyse(code, "python").unwrap();
        assert_eq!(
            facts.identifiers,
            vec![
                identifier("total", Function, "<top>"),
                identifier("self", Parameter, "total"),
                identifier("items", Parameter, "total"),
                identifier("rate", Parameter, "total"),
                identifier("count", Local, "total"),
                identifier("self.seen", Field, "total"),
                identifier("item", Local, "total"),
            ]
        );
        assert_eq!(
            facts.flows,
            vec![
                edge("items", 1, 2),
                edge("count", 2, 3),
                edge("items", 1, 4),
                edge("rate", 1, 5),
                edge("count", 2, 5),
                edge("item", 4, 5),
                edge("self.seen", 3, 6),
                edge("count", 5, 6),
            ]
        );
    }

    /// A Java method worked by hand, parsed inside a class as CodeXGLUE
    /// keeps methods without theirs; lines count from the method's first.
    #[test]
    fn a_java_method_is_tagged_and_its_flow_is_the_hand_worked_one() {
        let code = "public int sum(int[] values, int start) {\n    \
                    int total = start;\n    \
                    for (int v : values) {\n        \
                    total += v;\n    \
                    }\n    \
                    this.last = total;\n    \
                    return Math.max(total, this.last);\n\
                    }";
        let facts = analyse(code, "java").unwrap();
        assert_eq!(
            facts.identifiers,
            vec![
                identifier("sum", Function, "<top>"),
                identifier("values", Parameter, "sum"),
                identifier("start", Parameter, "sum"),
                identifier("total", Local, "sum"),
                identifier("v", Local, "sum"),
                identifier("this.last", Field, "sum"),
            ]
        );
        assert_eq!(
            facts.flows,
            vec![
                edge("start", 1, 2),
                edge("values", 1, 3),
                edge("total", 2, 4),
                edge("v", 3, 4),
                edge("total", 4, 6),
                edge("total", 4, 7),
                edge("this.last", 6, 7),
            ]
        );
    }

    #[test]
    fn augmented_code_keeps_the_code_and_names_repository_and_path() {
        let code = "def f(x):\n    return x\n";
        let text = augment(code, "python", "octo/repo", "pkg/mod.py");
        assert!(text.starts_with(code));
        assert!(text.contains("Repository: octo/repo\nPath: pkg/mod.py\n"));
        assert!(text.contains("Identifiers: f (functions of <top>); x (parameters of f)"));
        assert!(text.ends_with("Data flow (name definition-line->use-line): x 1->2"));
        let other = augment("fn f() {}", "rust", "r", "p.rs");
        assert_eq!(other, "fn f() {}\nRepository: r\nPath: p.rs");
    }
}
