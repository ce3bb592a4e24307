//! The house rules of ARCHITECTURE.md, checked on the source: which module
//! may name which. Every `crate::`, `super::`, `self::` and `codecal::` path
//! in `src/` (outside `#[cfg(test)]` code) is resolved to the module it
//! names and held against the **Invariant:** lines. In the manner of
//! rust-analyzer's tidy test: a grep of the code, not a build.

use std::path::{Path, PathBuf};

/// A path one module names, resolved from the crate root.
#[derive(Debug)]
struct Reference {
    file: String,
    line: usize,
    from: Vec<String>,
    to: Vec<String>,
}

/// Modules that only wire stages together; no stage may name them.
const WIRING: [&str; 2] = ["pipeline", "commands"];

/// What `generate` holds beyond plain data: asking, caching, backends.
const GENERATE_MACHINERY: [&str; 6] = ["batch", "cache", "local", "openai", "stage", "Backend"];

/// Modules that deal in text or models, which `calibrate` must not name.
const TEXT_AND_MODELS: [&str; 10] = [
    "score",
    "generate",
    "prompt",
    "retrieve",
    "corpus",
    "models",
    "confidence",
    "task",
    "sandbox",
    "thresholds",
];

/// Each broken rule, as one line naming file, line and rule.
fn violations(references: &[Reference]) -> Vec<String> {
    let mut out = Vec::new();
    for r in references {
        let from = |i: usize| r.from.get(i).map(String::as_str);
        let to = |i: usize| r.to.get(i).map(String::as_str);
        let mut broken = |rule: &str| {
            out.push(format!(
                "{}:{}: {} names {}: {rule}",
                r.file,
                r.line,
                r.from.join("::"),
                r.to.join("::")
            ))
        };
        // A flow is a folder under pipeline/; its siblings are other flows.
        if from(0) == Some("pipeline")
            && to(0) == Some("pipeline")
            && is_flow(from(1))
            && is_flow(to(1))
            && from(1) != to(1)
        {
            broken("no file of one flow imports another flow's");
        }
        let stage = from(0).is_some_and(|m| !WIRING.contains(&m) && m != "main");
        if stage && to(0).is_some_and(|m| WIRING.contains(&m)) {
            broken("no stage module imports `pipeline` or `commands`");
        }
        if from(0) == Some("confidence")
            && to(0) == Some("generate")
            && to(1).is_some_and(|m| GENERATE_MACHINERY.contains(&m))
        {
            broken("`confidence` does not import `generate`'s backends or cache");
        }
        if from(0) == Some("calibrate") && to(0).is_some_and(|m| TEXT_AND_MODELS.contains(&m)) {
            broken("`calibrate` does no text or model work");
        }
    }
    out
}

fn is_flow(module: Option<&str>) -> bool {
    module.is_some_and(|m| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/pipeline")
            .join(m)
            .is_dir()
    })
}

/// The module path of a source file: `src/pipeline/tasks/mod.rs` is
/// `pipeline::tasks`; `src/main.rs` and `src/lib.rs` are the roots.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .skip(1)
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    let root = parts.is_empty() && (stem == "lib" || stem == "main");
    if stem != "mod" && !root {
        parts.push(stem.to_owned());
    }
    if root && stem == "main" {
        return vec!["main".to_owned()];
    }
    parts
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else {
        return vec![path.trim().to_owned()];
    };
    let prefix = &path[..open];
    let inner = &path[open + 1..path.rfind('}').unwrap_or(path.len())];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .flat_map(|item| expand(&format!("{prefix}{item}")))
        .collect()
}

/// Resolves `path` (as written in `module`) to segments from the crate root.
fn resolve(module: &[String], path: &str) -> Option<Vec<String>> {
    let mut segments = path.split("::").map(str::trim);
    let mut out: Vec<String> = match segments.next()? {
        "crate" | "codecal" => Vec::new(),
        "self" => module.to_vec(),
        "super" => {
            let mut m = module.to_vec();
            m.pop();
            m
        }
        _ => return None,
    };
    for segment in segments {
        match segment {
            "super" => {
                out.pop();
            }
            "self" => {}
            s => out.push(s.split_whitespace().next().unwrap_or("").to_owned()),
        }
    }
    Some(out)
}

/// Every path a file names, by line; `use` statements may span lines.
fn references_in(file: &str, text: &str, module: &[String]) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let code = line.split("//").next().unwrap_or("").trim();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        let mut statement = code.to_owned();
        if let Some(rest) = code
            .strip_prefix("pub use ")
            .or_else(|| code.strip_prefix("pub(crate) use "))
            .or_else(|| code.strip_prefix("use "))
        {
            statement = rest.to_owned();
            while !statement.contains(';') {
                let Some((_, next)) = lines.next() else { break };
                statement += next.trim();
            }
            statement = statement.trim_end_matches(';').to_owned();
            for path in expand(&statement) {
                push(&mut out, file, i + 1, module, &path);
            }
            continue;
        }
        for start in path_starts(&statement) {
            let path: String = statement[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            push(&mut out, file, i + 1, module, &path);
        }
    }
    out
}

fn push(out: &mut Vec<Reference>, file: &str, line: usize, module: &[String], path: &str) {
    if let Some(to) = resolve(module, path) {
        out.push(Reference {
            file: file.to_owned(),
            line,
            from: module.to_vec(),
            to,
        });
    }
}

/// Where an inline `crate::`, `super::` or `codecal::` path starts.
fn path_starts(code: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    for prefix in ["crate::", "super::", "codecal::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(prefix) {
            let at = from + at;
            let boundary = at == 0
                || !code[..at]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            if boundary {
                starts.push(at);
            }
            from = at + prefix.len();
        }
    }
    starts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable src/")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn crate_references() -> Vec<Reference> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut out = Vec::new();
    for path in files {
        let relative = path.strip_prefix(root).expect("under the crate");
        // The binary's `commands` sits beside the library's modules here:
        // `codecal::` paths name the library, as `crate::` paths do.
        let module = module_of(relative);
        let text = std::fs::read_to_string(&path).expect("readable source");
        let file = relative.display().to_string();
        out.extend(references_in(&file, &text, &module));
    }
    out
}

#[test]
fn the_source_keeps_the_architecture_invariants() {
    let references = crate_references();
    // The checker must see the code it guards, or it would pass vacuously.
    assert!(
        references
            .iter()
            .any(|r| r.from.starts_with(&["pipeline".into(), "tasks".into()])
                && r.to.starts_with(&["pipeline".into(), "generation".into()])),
        "the tidy test found no reference from pipeline::tasks to the shared generation module"
    );
    let broken = violations(&references);
    assert!(
        broken.is_empty(),
        "ARCHITECTURE.md's invariants are broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn each_rule_catches_a_broken_import() {
    let cases = [
        (
            "src/pipeline/summarize/report.rs",
            "use crate::pipeline::tasks::read_problems;\n",
            "another flow",
        ),
        (
            "src/pipeline/tasks/mod.rs",
            "use super::summarize::{run, report::x};\n",
            "another flow",
        ),
        (
            "src/score/mod.rs",
            "    let x = crate::pipeline::config::X;\n",
            "`pipeline` or `commands`",
        ),
        (
            "src/confidence/reflective.rs",
            "use crate::generate::{\n    Params,\n    batch::ask,\n};\n",
            "backends or cache",
        ),
        (
            "src/calibrate/cv.rs",
            "use crate::score::Pair;\n",
            "text or model work",
        ),
    ];
    for (file, text, rule) in cases {
        let module = module_of(Path::new(file));
        let references = references_in(file, text, &module);
        let broken = violations(&references);
        assert!(
            broken.iter().any(|b| b.contains(rule)),
            "{file}: {text:?} should break the rule about {rule}, got {broken:?}"
        );
    }
    // Allowed: a flow using the shared modules, confidence using plain data,
    // and test code.
    for (file, text) in [
        (
            "src/pipeline/tasks/mod.rs",
            "use super::generation::{backend_label, generations};\n",
        ),
        (
            "src/confidence/mod.rs",
            "use crate::generate::{Params, Token};\n",
        ),
        (
            "src/calibrate/mod.rs",
            "#[cfg(test)]\nmod tests { use crate::score::Pair; }\n",
        ),
    ] {
        let module = module_of(Path::new(file));
        let references = references_in(file, text, &module);
        assert_eq!(
            violations(&references),
            Vec::<String>::new(),
            "{file}: {text:?}"
        );
    }
}

/// The most lines a source file may have.
const MAX_LINES: usize = 600;

/// The most lines a function may have, from its `fn` line to its closing brace.
const MAX_FUNCTION_LINES: usize = 120;

/// Whether `code` names a `Result` whose error type is `String`.
fn string_error(code: &str) -> bool {
    code.match_indices("Result<").any(|(start, _)| {
        let mut depth = 0;
        let mut last_comma = None;
        for (i, c) in code[start + "Result".len()..].char_indices() {
            match c {
                '<' | '(' => depth += 1,
                '>' | ')' => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = &code[start + "Result".len() + 1..start + "Result".len() + i];
                        return last_comma.is_some_and(|comma: usize| {
                            inner[comma - 1..].trim_start_matches(',').trim() == "String"
                        });
                    }
                }
                ',' if depth == 1 => last_comma = Some(i),
                _ => {}
            }
        }
        false
    })
}

/// Each function of `code` (already cut before its tests) longer than
/// [`MAX_FUNCTION_LINES`]: its first line (1-based), name and length. A
/// function ends at the first line that is its own indentation and `}`, as
/// rustfmt lays code out.
fn long_functions(code: &[&str]) -> Vec<(usize, String, usize)> {
    let mut out = Vec::new();
    for (start, line) in code.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = trimmed
            .split_once("fn ")
            .filter(|(before, _)| {
                before
                    .split_whitespace()
                    .all(|w| w.starts_with("pub") || ["const", "async", "unsafe"].contains(&w))
            })
            .map(|(_, after)| after);
        let Some(after) = signature else { continue };
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // A declaration without a body (a trait's) ends in `;` before any `{`.
        let Some(open) = (start..code.len()).find(|&i| {
            let l = code[i].trim_end();
            l.ends_with('{') || l.ends_with(';')
        }) else {
            continue;
        };
        if code[open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (open + 1..code.len()).find(|&i| code[i] == close) {
            let length = end - start + 1;
            if length > MAX_FUNCTION_LINES {
                out.push((start + 1, name, length));
            }
        }
    }
    out
}

/// The rules of ARCHITECTURE.md that are about what a file's own code holds,
/// not what it imports: each broken one as a line naming file, line and rule.
/// Test modules (from the first `#[cfg(test)]` on) are not checked.
fn text_violations(file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_LINES {
        out.push(format!(
            "{file}: {lines} lines: no source file over {MAX_LINES} lines"
        ));
    }
    let code: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .collect();
    for (line, name, length) in long_functions(&code) {
        out.push(format!(
            "{file}:{line}: `{name}` is {length} lines: no function over {MAX_FUNCTION_LINES} lines"
        ));
    }
    let cli = file == "src/main.rs" || file.starts_with("src/commands/");
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if code.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let mut broken = |rule: &str| out.push(format!("{file}:{}: {rule}", i + 1));
        if !cli && string_error(code) {
            broken(
                "no `Result<_, String>` in the library: its errors are typed and keep their sources",
            );
        }
        if !cli && code.contains("anyhow") {
            broken("only the CLI uses `anyhow`; the library's errors are typed");
        }
        if !cli && code.contains("clap") {
            broken(
                "only the CLI uses `clap`; the library's choices are `choice::Choice`s, which the CLI adapts",
            );
        }
        if file.starts_with("src/task/") && code.contains("Command::new") {
            broken("`task` starts no process; the sandbox runs code");
        }
        if file.starts_with("src/calibrate/")
            && file != "src/calibrate/calibrator.rs"
            && code.contains("std::fs")
        {
            broken("`calibrate` does no file IO outside the calibrator file");
        }
        if !file.starts_with("src/report/") && (code.contains("<svg") || code.contains("{tabular}"))
        {
            broken("SVG and LaTeX tables are drawn only in `report`");
        }
        let table_rule = code.contains("|---") || code.contains("---|");
        if file != "src/report/table.rs" && (code.contains("{tabular}") || table_rule) {
            broken(
                "a Markdown or LaTeX table is drawn only by `report::table` (`grid_markdown`, `grid_latex`)",
            );
        }
        if file != "src/report/svg.rs" && (code.contains("<svg") || code.contains("<text")) {
            broken(
                "an SVG document and its text are opened only by `report::svg` (`Svg`, whose `text` escapes)",
            );
        }
        if !file.starts_with("src/report/") && code.contains("csv::Writer") {
            broken("CSV is written (and quoted) only by `report::table::grid_csv`");
        }
        let writes_markup = ["write!(", "writeln!(", "push_str(", ".push("]
            .iter()
            .any(|w| code.contains(w));
        if file == "src/report/html.rs" && writes_markup {
            broken(
                "the page is written through `report::markup::Html` only, which escapes every string that is not markup from the source",
            );
        }
        let trusting = code.contains("Html::trusted(");
        if trusting && file != "src/report/html.rs" && file != "src/report/markup.rs" {
            broken("only the page's own renderers hand trusted markup to `Html`");
        }
        let untyped_json =
            (code.contains("serde_json") && code.contains("Value")) || code.contains("json!");
        if file.starts_with("src/pipeline/") && untyped_json {
            broken(
                "`pipeline` reads and writes typed rows (`GenerationRow`, `VerdictRow`): no `serde_json::Value`",
            );
        }
    }
    out
}

#[test]
fn the_source_keeps_the_rules_about_its_own_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(
        files.len() > 100,
        "the tidy test found only {} files",
        files.len()
    );
    let mut broken = Vec::new();
    for path in files {
        let file = path
            .strip_prefix(root)
            .expect("under the crate")
            .display()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("readable source");
        broken.extend(text_violations(&file, &text));
    }
    assert!(
        broken.is_empty(),
        "ARCHITECTURE.md's invariants are broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_front_pages_stay_short() {
    // The house issue: ARCHITECTURE.md is a map (at most 150 lines) and the
    // README a front page (at most 200); the rest is in the book.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, most) in [("ARCHITECTURE.md", 150), ("README.md", 200)] {
        let lines = std::fs::read_to_string(root.join(file))
            .expect("readable")
            .lines()
            .count();
        assert!(lines <= most, "{file} is {lines} lines: at most {most}");
    }
}

#[test]
fn each_rule_about_a_files_own_code_catches_a_break() {
    let long = "fn f() {}\n".repeat(MAX_LINES + 1);
    let long_function = format!(
        "impl A {{\n    pub(crate) fn grown(\n        x: u8,\n    ) -> u8 {{\n{}        x\n    }}\n}}\n",
        "        let _ = x;\n".repeat(MAX_FUNCTION_LINES)
    );
    let cases = [
        ("src/score/bleu.rs", long.as_str(), "over 600 lines"),
        (
            "src/score/bleu.rs",
            long_function.as_str(),
            "`grown` is 125 lines: no function over 120 lines",
        ),
        (
            "src/generate/local/kquant_int8.rs",
            long.as_str(),
            "601 lines: no source file over 600 lines",
        ),
        (
            "src/score/bleu.rs",
            "fn f() -> anyhow::Result<()> {}\n",
            "only the CLI uses `anyhow`",
        ),
        (
            "src/score/bleu.rs",
            "fn f() -> Result<Vec<(u8, u8)>, String> {}\n",
            "no `Result<_, String>`",
        ),
        (
            "src/score/embed.rs",
            "#[derive(Clone, Copy, clap::ValueEnum)]\n",
            "only the CLI uses `clap`",
        ),
        (
            "src/task/humaneval.rs",
            "let c = std::process::Command::new(\"python3\");\n",
            "starts no process",
        ),
        (
            "src/calibrate/cv.rs",
            "let t = std::fs::read(p);\n",
            "no file IO",
        ),
        (
            "src/pipeline/tables.rs",
            "let s = format!(\"<svg width='1'>\");\n",
            "only in `report`",
        ),
        (
            "src/report/bar_chart.rs",
            "let s = format!(\"<text x='1'>{}</text>\", label);\n",
            "opened only by `report::svg`",
        ),
        (
            "src/calibrate/mod.rs",
            "let s = \"\\\\begin{tabular}{ll}\";\n",
            "only in `report`",
        ),
        (
            "src/report/mod.rs",
            "out += \"\\\\begin{tabular}{lr}\\n\";\n",
            "only by `report::table`",
        ),
        (
            "src/commands/monitor.rs",
            "let rule = \"|---|---|\\n\";\n",
            "only by `report::table`",
        ),
        (
            "src/apply.rs",
            "let mut w = csv::Writer::from_writer(Vec::new());\n",
            "only by `report::table::grid_csv`",
        ),
        (
            "src/report/html.rs",
            "let _ = write!(out, \"<td>{}</td>\", value);\n",
            "through `report::markup::Html` only",
        ),
        (
            "src/report/decisions.rs",
            "let h = Html::trusted(text.to_owned());\n",
            "trusted markup",
        ),
        (
            "src/pipeline/tasks/items.rs",
            "fn f(row: &serde_json::Value) {}\n",
            "no `serde_json::Value`",
        ),
        (
            "src/pipeline/sampled.rs",
            "let line = serde_json::json!({ \"id\": id });\n",
            "typed rows",
        ),
    ];
    for (file, text, rule) in cases {
        let broken = text_violations(file, text);
        assert!(
            broken.iter().any(|b| b.contains(rule)),
            "{file}: should break the rule about {rule}, got {broken:?}"
        );
    }
    // Allowed: the CLI's anyhow, the calibrator's file, the report's SVG,
    // and test code.
    for (file, text) in [
        ("src/commands/run.rs", "use anyhow::Context;\n"),
        ("src/commands/mod.rs", "use clap::Args;\n"),
        ("src/calibrate/calibrator.rs", "let t = std::fs::read(p);\n"),
        ("src/report/svg.rs", "let s = \"<svg\";\n"),
        ("src/manifest.rs", "config: serde_json::Value,\n"),
        (
            "src/task/mod.rs",
            "#[cfg(test)]\nmod tests { fn t() { Command::new(\"x\"); } }\n",
        ),
    ] {
        assert_eq!(
            text_violations(file, text),
            Vec::<String>::new(),
            "{file}: {text:?}"
        );
    }
}

#[test]
fn a_result_with_a_typed_error_is_not_taken_for_a_string_one() {
    for code in [
        "fn f() -> Result<String, E> {}",
        "fn f() -> std::io::Result<String> {}",
        "fn f() -> Result<Vec<String>, TableError> {}",
        "fn f() -> Result<(String, f64), E> {}",
    ] {
        assert!(!string_error(code), "{code}");
    }
    assert!(string_error("fn f() -> Result<(String, f64), String> {}"));
}
