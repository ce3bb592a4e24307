//! Every number the book quotes from a seed paper, held against a committed
//! list of the paper's values, so that a quoted figure cannot drift from the
//! paper it quotes (issue "Faithful to the papers, third pass", item 9).
//!
//! The list is `tests/fixtures/paper_values.toml`: one `[[fact]]` per quoted
//! row of a paper's table (a book row that joins two of the paper's tables,
//! raw and Platt, has one fact for each) or per figure quoted in prose, with
//! the seed file, the table, the row, the columns, the values as the paper
//! prints them, the book page and the exact text of the page that quotes them.
//!
//! - `quotes_are_on_their_pages`: each fact's `quote` is on its `page`, and its
//!   `values` are among the quote's numbers, in order.
//! - `every_paper_row_has_a_fact`: every table row under `docs/src` (and in
//!   `README.md`) whose label says "(paper)" or "(seed)", or that sits in a
//!   table whose header marks its columns so, is quoted by some fact, and each
//!   number in its cells is among those facts' values; a new paper row without
//!   a fact fails here.
//! - `values_are_printed_in_the_seeds`: where `../shared/seeds` is present,
//!   each fact's values appear, in order, on one line of its seed paper's text.
//!   Where it is absent the check says why and passes, unless
//!   `CODECAL_REQUIRE_DATA` is set.
//!
//! Numbers are compared as printed, digit for digit ("0.50" is not "0.5",
//! "-0.000" is not "0.000"); only a leading "+" and thousands separators
//! ("30,000") are ignored. A "-" is a sign only where no letter, digit or point
//! comes before it, so "0.88-0.90" is two positive numbers.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// What marks a row or a column of a book table as the paper's.
const MARKERS: [&str; 2] = ["(paper)", "(seed)"];

const FACTS: &str = "tests/fixtures/paper_values.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fact {
    /// The seed paper's file in ../shared/seeds, e.g. "003_c5cc20d8faa973f1.txt".
    seed: String,
    /// The paper's table (or section, for a figure from its text).
    table: String,
    /// The paper's row, e.g. "DeepSeek-Chat / intrinsic / CRUXEval-O".
    row: String,
    /// The paper's column for each value.
    columns: Vec<String>,
    /// The values as the paper prints them.
    values: Vec<String>,
    /// The book page that quotes them, from the repository root.
    page: String,
    /// The text of the page that quotes them (for a table row, the row).
    quote: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Facts {
    fact: Vec<Fact>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn facts() -> Vec<Fact> {
    let path = root().join(FACTS);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let facts: Facts =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
    assert!(!facts.fact.is_empty(), "{FACTS} holds no [[fact]]");
    facts.fact
}

/// `s` with every run of white space, line breaks included, as one space.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A number as it is compared: no leading "+", no thousands separators.
fn norm(v: &str) -> String {
    let v = v.replace(',', "");
    match v.strip_prefix('+') {
        Some(rest) => rest.to_string(),
        None => v,
    }
}

/// The numbers printed in `text`, in order, each through [`norm`].
fn numbers(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let signed = (c[i] == '-' || c[i] == '+')
            && i + 1 < c.len()
            && c[i + 1].is_ascii_digit()
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '.' || c[i - 1] == '_'));
        if !signed && !c[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = if signed { i + 1 } else { i };
        while j < c.len() && c[j].is_ascii_digit() {
            j += 1;
        }
        // Thousands groups: ",ddd" with no digit after it.
        while j + 3 < c.len()
            && c[j] == ','
            && c[j + 1..j + 4].iter().all(|d| d.is_ascii_digit())
            && (j + 4 == c.len() || !c[j + 4].is_ascii_digit())
        {
            j += 4;
        }
        if j + 1 < c.len() && c[j] == '.' && c[j + 1].is_ascii_digit() {
            j += 1;
            while j < c.len() && c[j].is_ascii_digit() {
                j += 1;
            }
        }
        out.push(norm(&c[start..j].iter().collect::<String>()));
        i = j;
    }
    out
}

/// The first of `values` that is not found, in order, among `tokens`; None
/// when all are.
fn first_out_of_order<'a>(values: &'a [String], tokens: &[String]) -> Option<&'a str> {
    let mut rest = tokens.iter();
    values
        .iter()
        .find(|v| !rest.any(|t| *t == norm(v)))
        .map(String::as_str)
}

/// The cells of a Markdown table row, trimmed.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    row.split('|').map(|c| c.trim().to_string()).collect()
}

/// A cell that holds numbers, not a label: it begins with a digit or a sign.
fn numeric_cell(cell: &str) -> bool {
    let mut ch = cell.chars();
    match ch.next() {
        Some(d) if d.is_ascii_digit() => true,
        Some('-') | Some('+') => ch.next().is_some_and(|d| d.is_ascii_digit()),
        _ => false,
    }
}

fn separator(row: &str) -> bool {
    let row = row.trim();
    row.starts_with('|') && row.contains('-') && row.chars().all(|c| "|-: ".contains(c))
}

fn values_list(values: &[String]) -> String {
    values.join(", ")
}

/// The Markdown pages the book is made of, and README.md, from the root.
fn book_pages() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join("docs/src"), &mut paths);
    paths.push(root().join("README.md"));
    paths
        .iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect()
}

#[test]
fn quotes_are_on_their_pages() {
    let facts = facts();
    let mut pages: HashMap<String, Option<String>> = HashMap::new();
    let mut failures = Vec::new();
    for f in &facts {
        let at = format!("{}: row \"{}\" ({}, {})", f.page, f.row, f.seed, f.table);
        if f.seed.contains('/') || !f.seed.ends_with(".txt") {
            failures.push(format!(
                "{at}: seed \"{}\" is not a file name in ../shared/seeds",
                f.seed
            ));
        }
        if f.values.is_empty() || f.values.len() != f.columns.len() {
            failures.push(format!(
                "{at}: {} column(s) {:?} for {} value(s) [{}]",
                f.columns.len(),
                f.columns,
                f.values.len(),
                values_list(&f.values)
            ));
        }
        for v in &f.values {
            if numbers(v) != [norm(v)] {
                failures.push(format!("{at}: value \"{v}\" is not one printed number"));
            }
        }
        let page = pages.entry(f.page.clone()).or_insert_with(|| {
            std::fs::read_to_string(root().join(&f.page))
                .ok()
                .map(|t| squash(&t))
        });
        let Some(page) = page else {
            failures.push(format!(
                "{at}: page {} is missing (its values: {})",
                f.page,
                values_list(&f.values)
            ));
            continue;
        };
        let quote = squash(&f.quote);
        if !page.contains(&quote) {
            failures.push(format!(
                "{at}: the quote of {} is not on the page: `{}`",
                values_list(&f.values),
                f.quote
            ));
            continue;
        }
        if let Some(v) = first_out_of_order(&f.values, &numbers(&quote)) {
            failures.push(format!(
                "{at}: {v} (of {}) is not in the quote, in order: `{}`",
                values_list(&f.values),
                f.quote
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} facts in {FACTS} do not match the book:\n{}",
        failures.len(),
        facts.len(),
        failures.join("\n")
    );
}

#[test]
fn every_paper_row_has_a_fact() {
    let facts = facts();
    let mut by_page: BTreeMap<&str, Vec<&Fact>> = BTreeMap::new();
    for f in &facts {
        by_page.entry(f.page.as_str()).or_default().push(f);
    }
    let mut failures = Vec::new();
    let mut rows_seen = 0;
    for page in book_pages() {
        let text = std::fs::read_to_string(root().join(&page)).unwrap();
        let page_facts = by_page.get(page.as_str()).cloned().unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if !lines[i].trim_start().starts_with('|') {
                i += 1;
                continue;
            }
            let start = i;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                i += 1;
            }
            let table = &lines[start..i];
            let (header, body) = if table.len() > 1 && separator(table[1]) {
                (Some(table[0]), &table[2..])
            } else {
                (None, table)
            };
            // The last column the header marks as the paper's, if any.
            let marked_to = header.and_then(|h| {
                cells(h)
                    .iter()
                    .rposition(|c| MARKERS.iter().any(|m| c.contains(m)))
            });
            for (k, row) in body.iter().enumerate() {
                let line_no = start + k + 1 + if header.is_some() { 2 } else { 0 };
                let row_cells = cells(row);
                let label = row_cells
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" / ");
                let row_marked = MARKERS.iter().any(|m| row.contains(m));
                if !row_marked && marked_to.is_none() {
                    continue;
                }
                rows_seen += 1;
                let row_squashed = squash(row);
                // Facts that quote the whole row, or (a row in a table whose
                // header marks the paper's columns) the row up to the last
                // marked column at least.
                let covering: Vec<&&Fact> = page_facts
                    .iter()
                    .filter(|f| {
                        let q = squash(&f.quote);
                        if row_marked {
                            q == row_squashed
                        } else {
                            row_squashed.starts_with(&q) && cells(&q).len() > marked_to.unwrap_or(0)
                        }
                    })
                    .collect();
                let numbers_in_row: Vec<String> = row_cells
                    .iter()
                    .filter(|c| numeric_cell(c))
                    .flat_map(|c| numbers(c))
                    .collect();
                if covering.is_empty() {
                    failures.push(format!(
                        "{page}:{line_no}: row \"{label}\" quotes the paper but no fact in {FACTS} quotes it (its numbers: {})",
                        numbers_in_row.join(", ")
                    ));
                    continue;
                }
                let known: BTreeSet<String> = covering
                    .iter()
                    .flat_map(|f| f.values.iter().map(|v| norm(v)))
                    .collect();
                // The cells the facts quote: the whole row, or the longest
                // quoted prefix.
                let quoted_cells = covering
                    .iter()
                    .map(|f| cells(&squash(&f.quote)).len())
                    .max()
                    .unwrap_or(0);
                for cell in row_cells.iter().take(quoted_cells) {
                    if !numeric_cell(cell) {
                        continue;
                    }
                    for n in numbers(cell) {
                        if !known.contains(&n) {
                            failures.push(format!(
                                "{page}:{line_no}: row \"{label}\": {n} is in none of the values of the facts that quote the row"
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        rows_seen > 0,
        "no table row under docs/src is marked (paper) or (seed): is the marker still {MARKERS:?}?"
    );
    assert!(
        failures.is_empty(),
        "{} of {rows_seen} paper rows of the book are not covered by {FACTS}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn values_are_printed_in_the_seeds() {
    let dir = root().join("../shared/seeds");
    if !dir.is_dir() {
        let why = format!(
            "{} is absent, so the facts are not checked against the papers' text",
            dir.display()
        );
        if std::env::var_os("CODECAL_REQUIRE_DATA").is_some() {
            panic!("{why}, and CODECAL_REQUIRE_DATA is set");
        }
        eprintln!("skipped: {why}");
        return;
    }
    let facts = facts();
    let mut seeds: HashMap<String, Option<Vec<Vec<String>>>> = HashMap::new();
    let mut failures = Vec::new();
    for f in &facts {
        let at = format!("{}: row \"{}\" ({}, {})", f.page, f.row, f.seed, f.table);
        let lines = seeds.entry(f.seed.clone()).or_insert_with(|| {
            std::fs::read_to_string(dir.join(&f.seed))
                .ok()
                .map(|t| t.lines().map(numbers).collect())
        });
        let Some(lines) = lines else {
            failures.push(format!(
                "{at}: no seed file {} in {} (its values: {})",
                f.seed,
                dir.display(),
                values_list(&f.values)
            ));
            continue;
        };
        if lines
            .iter()
            .any(|l| first_out_of_order(&f.values, l).is_none())
        {
            continue;
        }
        let anywhere: BTreeSet<&String> = lines.iter().flatten().collect();
        match f.values.iter().find(|v| !anywhere.contains(&norm(v))) {
            Some(v) => failures.push(format!(
                "{at}: {v} is not printed anywhere in {} (values: {})",
                f.seed,
                values_list(&f.values)
            )),
            None => failures.push(format!(
                "{at}: {} are printed in {}, but on no one line in this order",
                values_list(&f.values),
                f.seed
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} facts in {FACTS} are not what the papers print:\n{}",
        failures.len(),
        facts.len(),
        failures.join("\n")
    );
}

#[test]
fn numbers_are_read_as_printed() {
    let n = numbers;
    assert_eq!(
        n("| 0.337 | -1.886 | 30,000 each |"),
        ["0.337", "-1.886", "30000"]
    );
    assert_eq!(n("raw ECE 0.88-0.90"), ["0.88", "0.90"]);
    assert_eq!(n("+0.38 to +0.43"), ["0.38", "0.43"]);
    assert_eq!(n("0.289 ± 0.003 / 0.248"), ["0.289", "0.003", "0.248"]);
    assert_eq!(n("[-0.343, -0.043]"), ["-0.343", "-0.043"]);
    assert_eq!(n("-0.000 and 0.50"), ["-0.000", "0.50"]);
    assert_eq!(
        first_out_of_order(&["0.5".to_string()], &n("0.50")),
        Some("0.5")
    );
    assert_eq!(
        first_out_of_order(&["0.2".to_string(), "0.1".to_string()], &n("0.1 0.2")),
        Some("0.1")
    );
}
