//! Mines documented functions from a source tree with tree-sitter, in the
//! manner of CodeSearchNet: the reference is the first sentence of the doc
//! comment (Python docstring, Javadoc), and the code is the function without it.
//!
//! Skipped, and counted by reason: functions under 3 lines, test functions,
//! functions without a doc comment (undocumented constructors among them), and
//! references under 3 tokens. This is how a user calibrates on their own code,
//! and how codecal gets a real corpus with no download (the local Python
//! standard library, [`python_stdlib`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use rayon::prelude::*;
use tree_sitter::{Node, Parser};

use super::{CorpusError, ReadReport, Record};
use files::{skip_special, source_files};

mod files;

/// The languages the miner parses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Python,
    Java,
}

crate::choices!(Language { Python => "python", Java => "java" });

impl Language {
    fn extension(self) -> &'static str {
        match self {
            Language::Python => "py",
            Language::Java => "java",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Java => "java",
        }
    }
}

/// How to mine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MineOptions {
    pub language: Language,
    /// A record's `repo` is this many leading path components (a file's extension dropped).
    pub repo_depth: usize,
    /// Keep functions with no doc comment, or a reference under 3 tokens, as
    /// records with what reference they have (`codecal summarize` summarises
    /// exactly those); the default skips them, as CodeSearchNet does.
    pub undocumented: bool,
}

/// The records of every documented function under `root`, files in path order.
pub fn mine_tree(
    root: &Path,
    options: MineOptions,
) -> Result<(Vec<Record>, ReadReport), CorpusError> {
    let (files, special) = source_files(root, options)?;
    let mined: Vec<(Vec<Record>, ReadReport)> = files
        .par_iter()
        .map(|path| mine_file(root, path, options))
        .collect();
    let mut records = Vec::new();
    let mut report = ReadReport::default();
    skip_special(&mut report, special);
    for (file_records, file_report) in mined {
        records.extend(file_records);
        for (reason, count) in file_report.skipped {
            *report.skipped.entry(reason).or_insert(0) += count;
        }
        report.skipped_files.extend(file_report.skipped_files);
    }
    report.records = records.len();
    Ok((records, report))
}

/// A Python function as written, docstring and indentation kept: what the
/// line-completion task cuts prompts from.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionSource {
    /// As a mined record's: `path#Lline:Class.name`.
    pub id: String,
    pub repo: String,
    pub func_name: String,
    /// From the start of the `def` line to the end of the function.
    pub text: String,
    /// The first line of `text` (0-based) after the signature and any
    /// docstring: where the body's statements begin.
    pub body_start: usize,
}

/// Every Python function under `root` that is 3 lines or more and not a
/// test, documented or not, files in path order.
pub fn python_function_sources(
    root: &Path,
    repo_depth: usize,
) -> Result<(Vec<FunctionSource>, ReadReport), CorpusError> {
    let options = MineOptions {
        language: Language::Python,
        repo_depth,
        undocumented: true,
    };
    let (files, special) = source_files(root, options)?;
    let mut functions = Vec::new();
    let mut report = ReadReport::default();
    skip_special(&mut report, special);
    for path in files {
        match parse_file(root, &path, options) {
            Ok((file, tree)) => visit(
                tree.root_node(),
                &file.source,
                &mut Vec::new(),
                &mut |node, classes| match function_source(node, classes, &file) {
                    Ok(function) => functions.push(function),
                    Err(reason) => skip(&mut report, reason),
                },
            ),
            Err(reason) => skip(&mut report, reason),
        }
    }
    report.records = functions.len();
    Ok((functions, report))
}

fn function_source(
    node: Node,
    classes: &[String],
    file: &FileContext,
) -> Result<FunctionSource, &'static str> {
    let name = node
        .child_by_field_name("name")
        .map_or("", |n| text(n, &file.source));
    if let Some(reason) = unwanted(node, name, file) {
        return Err(reason);
    }
    let body = node.child_by_field_name("body").ok_or("no body")?;
    let mut statements = body
        .named_children(&mut body.walk())
        .collect::<Vec<_>>()
        .into_iter();
    let first = statements.next().ok_or("no body")?;
    let is_docstring = first.kind() == "expression_statement"
        && first.named_child(0).is_some_and(|n| n.kind() == "string");
    let start = if is_docstring {
        statements.next().ok_or("nothing after the docstring")?
    } else {
        first
    };
    let line_start = file.source[..node.start_byte()]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let mut qualified = classes.to_vec();
    qualified.push(name.to_owned());
    let row = node.start_position().row;
    Ok(FunctionSource {
        id: format!("{}#L{}:{}", file.relative, row + 1, qualified.join(".")),
        repo: file.repo.clone(),
        func_name: qualified.join("."),
        text: file.source[line_start..node.end_byte()].to_owned(),
        body_start: start.start_position().row - row,
    })
}

/// The standard library directory of the local `python3`.
pub fn python_stdlib() -> Result<PathBuf, CorpusError> {
    let script = "import sysconfig; print(sysconfig.get_paths()['stdlib'])";
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .map_err(|source| CorpusError::Io {
            path: PathBuf::from("python3"),
            source,
        })?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !path.is_dir() {
        return Err(CorpusError::Io {
            path,
            source: std::io::Error::other("python3 did not name its standard library"),
        });
    }
    Ok(path)
}

/// The largest source file mined: far above any hand-written module; a
/// bigger one is generated or data, and a single line of it would hold the
/// parser for minutes.
const SOURCE_CAP_BYTES: u64 = 8 << 20;

fn skip(report: &mut ReadReport, reason: &str) {
    *report.skipped.entry(reason.to_owned()).or_insert(0) += 1;
}

fn mine_file(root: &Path, path: &Path, options: MineOptions) -> (Vec<Record>, ReadReport) {
    let mut report = ReadReport::default();
    let mut records = Vec::new();
    match parse_file(root, path, options) {
        Ok((file, tree)) => visit(
            tree.root_node(),
            &file.source,
            &mut Vec::new(),
            &mut |node, classes| mine_function(node, classes, &file, &mut records, &mut report),
        ),
        Err(reason) => {
            skip(&mut report, reason);
            let shown = path.strip_prefix(root).unwrap_or(path);
            report
                .skipped_files
                .push((shown.display().to_string(), reason.to_owned()));
        }
    }
    (records, report)
}

/// Reads and parses one source file; the reason to skip it where that fails.
fn parse_file(
    root: &Path,
    path: &Path,
    options: MineOptions,
) -> Result<(FileContext, tree_sitter::Tree), &'static str> {
    let bytes = crate::artifact::read_regular(path, SOURCE_CAP_BYTES)
        .map_err(|_| "not a regular file, unreadable, or over 8 MiB")?;
    let source = String::from_utf8(bytes).map_err(|_| "file not readable as UTF-8")?;
    let mut parser = Parser::new();
    let grammar = match options.language {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
    };
    let tree = parser
        .set_language(&grammar)
        .ok()
        .and_then(|_| parser.parse(&source, None))
        .ok_or("file did not parse")?;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let file = FileContext {
        relative: relative.to_string_lossy().replace('\\', "/"),
        repo: repo_of(relative, options.repo_depth),
        language: options.language,
        test_file: is_test_path(relative),
        source,
        options,
    };
    Ok((file, tree))
}

struct FileContext {
    source: String,
    relative: String,
    repo: String,
    language: Language,
    test_file: bool,
    options: MineOptions,
}

fn repo_of(relative: &Path, depth: usize) -> String {
    let parts: Vec<String> = relative
        .iter()
        .take(depth.max(1))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let joined = parts.join("/");
    joined
        .strip_suffix(".py")
        .or_else(|| joined.strip_suffix(".java"))
        .unwrap_or(&joined)
        .to_owned()
}

fn is_test_path(relative: &Path) -> bool {
    relative.iter().any(|part| {
        let part = part.to_string_lossy();
        part == "test"
            || part == "tests"
            || part.starts_with("test_")
            || part.ends_with("_test.py")
            || part.ends_with("Test.java")
            || part == "idle_test"
    })
}

/// Walks the tree, tracking enclosing class names, and hands each function
/// to `on_function` with the names of its classes.
///
/// Iterative, with a tree cursor: a generated file with a 40,000-term
/// expression is a syntax tree 40,000 levels deep, which a recursive walk
/// would overflow the stack on and end the whole mining run.
fn visit(
    node: Node,
    source: &str,
    classes: &mut Vec<String>,
    on_function: &mut dyn FnMut(Node, &[String]),
) {
    let is_class = |n: Node| {
        matches!(
            n.kind(),
            "class_definition" | "class_declaration" | "interface_declaration" | "enum_declaration"
        )
    };
    // Whether each open class node pushed a name, so leaving it pops one.
    let mut pushed: Vec<bool> = Vec::new();
    let mut cursor = node.walk();
    loop {
        let current = cursor.node();
        if matches!(
            current.kind(),
            "function_definition" | "method_declaration" | "constructor_declaration"
        ) {
            on_function(current, classes);
        }
        let named = is_class(current)
            && current
                .child_by_field_name("name")
                .map(|n| classes.push(text(n, source).to_owned()))
                .is_some();
        if cursor.goto_first_child() {
            pushed.push(named);
            continue;
        }
        if named {
            classes.pop();
        }
        // Up until a sibling exists, closing each class on the way.
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
            if pushed.pop() == Some(true) {
                classes.pop();
            }
            if cursor.node() == node {
                return;
            }
        }
    }
}

fn text<'s>(node: Node, source: &'s str) -> &'s str {
    &source[node.byte_range()]
}

fn mine_function(
    node: Node,
    classes: &[String],
    file: &FileContext,
    records: &mut Vec<Record>,
    report: &mut ReadReport,
) {
    let name = node
        .child_by_field_name("name")
        .map_or("", |n| text(n, &file.source));
    let mut qualified = classes.to_vec();
    qualified.push(name.to_owned());
    let func_name = qualified.join(".");
    if let Some(reason) = unwanted(node, name, file) {
        return skip(report, reason);
    }
    let found = match file.language {
        Language::Python => python_docstring(node, &file.source),
        Language::Java => javadoc(node, &file.source),
    };
    let (reference, code) = match found {
        Some((doc, code)) => (first_sentence(&doc), code),
        None if file.options.undocumented => (String::new(), text(node, &file.source).to_owned()),
        None => {
            let reason = if node.kind() == "constructor_declaration" {
                "constructor without docs"
            } else {
                "no doc comment"
            };
            return skip(report, reason);
        }
    };
    if reference.split_whitespace().count() < 3 && !file.options.undocumented {
        return skip(report, "reference under 3 tokens");
    }
    records.push(Record {
        id: format!(
            "{}#L{}:{}",
            file.relative,
            node.start_position().row + 1,
            func_name
        ),
        repo: file.repo.clone(),
        path: file.relative.clone(),
        func_name,
        language: file.language.name().to_owned(),
        code,
        reference,
    });
}

/// Why a function is passed over whatever its docs: too short, or a test.
fn unwanted(node: Node, name: &str, file: &FileContext) -> Option<&'static str> {
    let lines = node.end_position().row - node.start_position().row + 1;
    if lines < 3 {
        return Some("under 3 lines");
    }
    if file.test_file || name.starts_with("test") || has_test_annotation(node, &file.source) {
        return Some("test function");
    }
    None
}

fn has_test_annotation(node: Node, source: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|c| c.kind() == "modifiers")
        .any(|m| text(m, source).contains("@Test"))
}

/// The docstring of a Python function and the function's code without it.
fn python_docstring(node: Node, source: &str) -> Option<(String, String)> {
    let body = node.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let literal = first.named_child(0).filter(|n| n.kind() == "string")?;
    let raw = text(literal, source);
    let doc = raw
        .trim_start_matches(['r', 'R', 'u', 'U'])
        .trim_start_matches("\"\"\"")
        .trim_start_matches("'''")
        .trim_start_matches(['"', '\''])
        .trim_end_matches("\"\"\"")
        .trim_end_matches("'''")
        .trim_end_matches(['"', '\'']);
    // Cut the docstring statement with its line: from the start of its line to the next line.
    let function = node.byte_range();
    let line_start = source[..first.start_byte()]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line_end = source[first.end_byte()..]
        .find('\n')
        .map_or(source.len(), |i| first.end_byte() + i + 1);
    let code = format!(
        "{}{}",
        &source[function.start..line_start.max(function.start)],
        &source[line_end.min(function.end)..function.end]
    );
    Some((doc.to_owned(), code))
}

/// The Javadoc right before a Java method, without its markers, and the method's code.
fn javadoc(node: Node, source: &str) -> Option<(String, String)> {
    let comment = node
        .prev_named_sibling()
        .filter(|c| c.kind() == "block_comment")?;
    let raw = text(comment, source);
    let body = raw.strip_prefix("/**")?.trim_end_matches("*/");
    let lines: Vec<&str> = body
        .lines()
        .map(|l| l.trim().trim_start_matches('*').trim())
        .take_while(|l| !l.starts_with('@'))
        .collect();
    Some((lines.join("\n"), text(node, source).to_owned()))
}

/// The first sentence of the first paragraph, whitespace collapsed.
pub fn first_sentence(doc: &str) -> String {
    let paragraph: Vec<&str> = doc
        .trim()
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let flat = paragraph.join(" ");
    let end = flat
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .next()
        .unwrap_or(flat.len());
    flat[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_of_the_first_paragraph() {
        assert_eq!(
            first_sentence(
                "Join two or more pathname components, inserting '/' as needed. If any\n    component is absolute, ...\n\n    More."
            ),
            "Join two or more pathname components, inserting '/' as needed."
        );
        assert_eq!(
            first_sentence("\n  Returns the\n  value  \n"),
            "Returns the value"
        );
    }

    #[test]
    fn a_40000_term_expression_neither_overflows_the_stack_nor_hides_functions() {
        let sum = vec!["1"; 40_000].join(" + ");
        let text = format!(
            "class Outer:\n    class Inner:\n        def deep(self):\n            \"\"\"Return a very long sum of ones.\"\"\"\n            x = 0\n            return {sum}\n\n    def after(self):\n        \"\"\"Come after the deep method here.\"\"\"\n        y = 1\n        return y\n"
        );
        // A small stack, as a worker thread has: the walk must not recurse.
        let records = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || mine_text("deep.py", &text, Language::Python).0)
            .unwrap()
            .join()
            .expect("mining a deep file must not overflow the stack");
        let names: Vec<&str> = records.iter().map(|r| r.func_name.as_str()).collect();
        assert_eq!(names, ["Outer.Inner.deep", "Outer.after"]);
    }

    fn mine_text(name: &str, text: &str, language: Language) -> (Vec<Record>, ReadReport) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("pkg").join(name), text).unwrap();
        mine_tree(
            dir.path(),
            MineOptions {
                language,
                repo_depth: 1,
                undocumented: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn python_functions_lose_their_docstring_and_keep_their_class() {
        let source = "class Box:\n    def size(self):\n        \"\"\"Return the number of items.\n\n        Details.\"\"\"\n        n = len(self.items)\n        return n\n\n    def test_size(self):\n        \"\"\"Check the size of it.\"\"\"\n        assert True\n        return None\n\ndef tiny():\n    return 1\n\ndef bare(x):\n    y = x\n    return y\n";
        let (records, report) = mine_text("box.py", source, Language::Python);
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!((r.func_name.as_str(), r.repo.as_str()), ("Box.size", "pkg"));
        assert_eq!(r.reference, "Return the number of items.");
        assert!(!r.code.contains("Return the number"), "{}", r.code);
        assert_eq!(
            r.code,
            "def size(self):\n        n = len(self.items)\n        return n"
        );
        assert_eq!(report.skipped["test function"], 1);
        assert_eq!(report.skipped["under 3 lines"], 1);
        assert_eq!(report.skipped["no doc comment"], 1);
    }

    #[test]
    fn java_methods_take_their_javadoc() {
        let source = "class Box {\n  /**\n   * Returns the number of items in this box.\n   * @return the count\n   */\n  public int size() {\n    int n = items.length;\n    return n;\n  }\n\n  public Box() {\n    items = new int[0];\n    other = 1;\n  }\n}\n";
        let (records, report) = mine_text("Box.java", source, Language::Java);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].func_name, "Box.size");
        assert_eq!(
            records[0].reference,
            "Returns the number of items in this box."
        );
        assert!(records[0].code.starts_with("public int size()"));
        assert_eq!(report.skipped["constructor without docs"], 1);
    }
}
