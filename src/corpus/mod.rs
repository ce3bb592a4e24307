//! Code records with their reference summaries, and the readers that make them.
//!
//! A [`Record`] is one function: its code (without the reference in it) and
//! the developer's summary. [`read_codexglue`] reads CodeXGLUE code-to-text /
//! CodeSearchNet JSONL (plain or gzip), or codecal's own record JSONL; `mine`
//! makes records from a source tree. Retrieval over records is `retrieve`.

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod code_metrics;
pub mod mine;

/// One function and its reference summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The CodeXGLUE `url` where there is one, else repo/path/func_name.
    pub id: String,
    pub repo: String,
    pub path: String,
    pub func_name: String,
    pub language: String,
    /// The function's code, its docstring removed (Python).
    pub code: String,
    /// `docstring_tokens` joined by single spaces, as CodeXGLUE's references.
    pub reference: String,
}

/// What a reader read and what it passed over, with reasons.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadReport {
    pub records: usize,
    /// Skipped lines by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Whole files skipped (relative path, reason), in path order.
    pub skipped_files: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Malformed {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// The fields of a CodeXGLUE line that codecal uses.
#[derive(Deserialize)]
struct CodexglueLine {
    repo: String,
    path: String,
    func_name: String,
    language: String,
    code: String,
    #[serde(default)]
    docstring: String,
    docstring_tokens: Vec<String>,
    #[serde(default)]
    url: Option<String>,
}

/// Reads CodeXGLUE / CodeSearchNet JSONL, or codecal's record JSONL (`.gz`
/// is decompressed). A malformed
/// line is skipped and counted, or with `strict` an error naming file and line.
pub fn read_codexglue(path: &Path, strict: bool) -> Result<(Vec<Record>, ReadReport), CorpusError> {
    let text = read_text(path)?;
    let mut records = Vec::new();
    let mut report = ReadReport::default();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // A CodeXGLUE line, or else one of codecal's own records (as `mine` writes).
        let parsed = serde_json::from_str::<CodexglueLine>(line)
            .map(record)
            .or_else(|e| serde_json::from_str::<Record>(line).map_err(|_| e));
        match parsed {
            Ok(record) => records.push(record),
            Err(e) if strict => {
                return Err(CorpusError::Malformed {
                    path: path.to_owned(),
                    line: number + 1,
                    reason: e.to_string(),
                });
            }
            Err(e) => {
                let reason = if e.is_data() {
                    "missing or mistyped field"
                } else {
                    "not valid JSON"
                };
                *report.skipped.entry(reason.to_owned()).or_insert(0) += 1;
            }
        }
    }
    report.records = records.len();
    Ok((records, report))
}

pub(crate) fn read_text(path: &Path) -> Result<String, CorpusError> {
    let io = |source| CorpusError::Io {
        path: path.to_owned(),
        source,
    };
    let bytes = std::fs::read(path).map_err(io)?;
    let mut text = String::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .map_err(io)?;
    } else {
        text = String::from_utf8(bytes)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    }
    Ok(text)
}

fn record(raw: CodexglueLine) -> Record {
    let code = if raw.language == "python" {
        strip_docstring(&raw.code, &raw.docstring)
    } else {
        raw.code
    };
    Record {
        id: raw
            .url
            .unwrap_or_else(|| format!("{}/{}/{}", raw.repo, raw.path, raw.func_name)),
        repo: raw.repo,
        path: raw.path,
        func_name: raw.func_name,
        language: raw.language,
        code,
        reference: raw.docstring_tokens.join(" "),
    }
}

/// Removes `docstring` from `code` with the string literal around it: in
/// CodeXGLUE's Python records the code still holds the docstring, which is the
/// reference itself, and a model shown it would read the answer.
pub fn strip_docstring(code: &str, docstring: &str) -> String {
    let Some(start) = code.find(docstring).filter(|_| !docstring.is_empty()) else {
        return code.to_owned();
    };
    let end = start + docstring.len();
    let before = code[..start].trim_end();
    let after = code[end..].trim_start();
    for quote in ["\"\"\"", "'''", "\"", "'"] {
        if let (Some(open), true) = (before.strip_suffix(quote), after.starts_with(quote)) {
            let open = open.trim_end_matches(['r', 'u', 'R', 'U', 'b', 'B']);
            let rest = after[quote.len()..].trim_start_matches([' ', '\t']);
            let rest = rest.strip_prefix('\n').unwrap_or(rest);
            let head = open.trim_end_matches([' ', '\t']);
            let joint = if head.ends_with('\n') { "" } else { "\n" };
            return format!("{head}{joint}{rest}");
        }
    }
    format!("{}{}", &code[..start], &code[end..])
}

/// Records as JSONL, one per line.
pub fn to_jsonl(records: &[Record]) -> String {
    records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap_or_default() + "\n")
        .collect()
}

/// A seeded split: `queries` records drawn at random, the rest the pool; with
/// `exclude_query_repos`, pool records from the queries' repositories are dropped.
pub fn sample(
    records: &[Record],
    queries: usize,
    seed: u64,
    exclude_query_repos: bool,
) -> (Vec<Record>, Vec<Record>) {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let (picked, rest) = order.split_at(queries.min(records.len()));
    let query_repos: HashSet<&str> = picked.iter().map(|&i| records[i].repo.as_str()).collect();
    let pool = rest
        .iter()
        .filter(|&&i| !exclude_query_repos || !query_repos.contains(records[i].repo.as_str()))
        .map(|&i| records[i].clone())
        .collect();
    (picked.iter().map(|&i| records[i].clone()).collect(), pool)
}

/// Keeps the first record of each id; returns how many were dropped.
pub fn dedupe(records: &mut Vec<Record>) -> usize {
    let before = records.len();
    let mut seen = HashSet::new();
    records.retain(|r| seen.insert(r.id.clone()));
    before - records.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_is_seeded_and_can_keep_query_repos_out_of_the_pool() {
        let records: Vec<Record> = (0..20)
            .map(|i| Record {
                id: format!("r{i}"),
                repo: format!("repo{}", i % 5),
                path: String::new(),
                func_name: String::new(),
                language: "python".into(),
                code: String::new(),
                reference: String::new(),
            })
            .collect();
        let (q1, p1) = sample(&records, 3, 9, false);
        let (q2, _) = sample(&records, 3, 9, false);
        assert_eq!(q1, q2);
        assert_eq!((q1.len(), p1.len()), (3, 17));
        let (queries, pool) = sample(&records, 3, 9, true);
        assert!(
            pool.iter()
                .all(|p| queries.iter().all(|q| q.repo != p.repo))
        );
    }

    #[test]
    fn records_round_trip_through_jsonl() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let record = Record {
            id: "a.py#L1:f".into(),
            repo: "a".into(),
            path: "a.py".into(),
            func_name: "f".into(),
            language: "python".into(),
            code: "def f():\n    pass".into(),
            reference: "Does nothing at all.".into(),
        };
        std::fs::write(&path, to_jsonl(std::slice::from_ref(&record))).unwrap();
        assert_eq!(read_codexglue(&path, true).unwrap().0, vec![record]);
    }

    #[test]
    fn docstring_and_its_quotes_are_removed() {
        let code = "def f(x):\n    \"\"\"Return x plus one.\"\"\"\n    return x + 1";
        let stripped = strip_docstring(code, "Return x plus one.");
        assert_eq!(stripped, "def f(x):\n    return x + 1");
        let raw = "def g():\n    r'''\n    Doc here.\n    '''\n    pass";
        assert_eq!(strip_docstring(raw, "Doc here."), "def g():\n    pass");
        assert_eq!(strip_docstring("x = 1", "absent"), "x = 1");
    }

    #[test]
    fn malformed_lines_are_counted_or_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let good = r#"{"repo":"a/b","path":"p.java","func_name":"f","language":"java","code":"int f() { return 1; }","docstring":"One.","docstring_tokens":["One","."],"url":"u1"}"#;
        std::fs::write(&path, format!("{good}\n{{oops\n{{\"repo\": 1}}\n")).unwrap();
        let (records, report) = read_codexglue(&path, false).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].reference, "One .");
        assert_eq!(report.skipped["not valid JSON"], 1);
        assert_eq!(report.skipped["missing or mistyped field"], 1);
        let err = read_codexglue(&path, true).unwrap_err();
        assert!(err.to_string().contains("t.jsonl:2: "), "{err}");
    }

    #[test]
    fn shared_python_records_lose_their_own_reference() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/fewshot-codexglue/Python/test.jsonl");
        if !path.is_file() {
            eprintln!("SKIPPED: {} is not there", path.display());
            return;
        }
        let (records, report) = read_codexglue(&path, true).unwrap();
        assert_eq!(report.records, 1000);
        let raw: Vec<CodexglueLine> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The docstring literal goes; the same words elsewhere (a comment) stay.
        for (record, raw) in records.iter().zip(&raw) {
            let count = |code: &str| code.matches(raw.docstring.as_str()).count();
            assert_eq!(count(&record.code), count(&raw.code) - 1, "{}", record.id);
        }
    }
}
