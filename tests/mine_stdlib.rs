//! Mining the local Python standard library: the embedded default corpus.

use codecal::corpus::mine::{Language, MineOptions, mine_tree, python_stdlib};

#[test]
fn the_python_standard_library_yields_thousands_of_documented_functions() {
    let stdlib = match python_stdlib() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("SKIPPED: no local Python 3 standard library: {why}");
            return;
        }
    };
    let options = MineOptions {
        language: Language::Python,
        repo_depth: 1,
        undocumented: false,
    };
    let (records, report) = mine_tree(&stdlib, options).unwrap();
    let modules: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.repo.as_str()).collect();
    assert!(records.len() > 3000, "{} records", records.len());
    assert!(modules.len() > 50, "{} modules", modules.len());
    assert!(report.skipped["test function"] > 0);
    for record in &records {
        let name = record.func_name.rsplit('.').next().unwrap_or("");
        assert!(
            !name.starts_with("test"),
            "a test function was mined: {}",
            record.id
        );
        assert!(
            record.reference.split_whitespace().count() >= 3,
            "{}",
            record.id
        );
    }
    // First sentences of well-known docstrings (CPython 3.x).
    for (module, function, reference) in [
        (
            "json",
            "dumps",
            "Serialize ``obj`` to a JSON formatted ``str``.",
        ),
        (
            "textwrap",
            "dedent",
            "Remove any common leading whitespace from every line in `text`.",
        ),
        (
            "shutil",
            "copyfile",
            "Copy data from src to dst in the most efficient way possible.",
        ),
        (
            "posixpath",
            "join",
            "Join two or more pathname components, inserting '/' as needed.",
        ),
    ] {
        let record = records
            .iter()
            .find(|r| r.repo == module && r.func_name == function)
            .unwrap_or_else(|| panic!("{module}.{function} not mined"));
        assert_eq!(record.reference, reference);
        assert!(
            !record.code.contains(reference),
            "the docstring is gone from the code"
        );
    }
}

/// Line completion's problems from the standard library: many, reproducible
/// by seed, each a real body line of its function, and each target judged
/// right when given back and wrong when another line is given.
#[test]
fn line_completion_problems_come_from_the_standard_library() {
    use codecal::task::datasets::Dataset;
    use codecal::task::{Problem, judge_all};
    let stdlib = match python_stdlib() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("SKIPPED: no local Python 3 standard library: {why}");
            return;
        }
    };
    let problems = Dataset::LineCompletion.read(&stdlib, 7).unwrap();
    assert!(problems.len() > 10_000, "{} problems", problems.len());
    assert_eq!(problems, Dataset::LineCompletion.read(&stdlib, 7).unwrap());
    let other = Dataset::LineCompletion.read(&stdlib, 8).unwrap();
    let moved = problems
        .iter()
        .zip(&other)
        .filter(|(a, b)| a.reference_answer != b.reference_answer)
        .count();
    assert!(
        moved > problems.len() / 4,
        "only {moved} targets moved with the seed"
    );
    for problem in problems.iter().take(2000) {
        let target = problem.reference_answer.trim();
        assert!(
            !target.is_empty() && !target.starts_with('#'),
            "{}",
            problem.id
        );
        assert!(
            problem.prompt.trim_start().starts_with("def ")
                || problem.prompt.trim_start().starts_with("async def "),
            "{}",
            problem.id
        );
        assert!(!problem.id.contains("/test_"), "{}", problem.id);
    }
    let pairs: Vec<(&Problem, &str)> = problems
        .iter()
        .map(|p| (p, p.reference_answer.as_str()))
        .collect();
    assert!(
        judge_all(&pairs, None, 1)
            .unwrap()
            .iter()
            .all(|v| v.correct)
    );
    let shifted: Vec<(&Problem, &str)> = problems
        .iter()
        .map(|p| (p, "pass  # not the line"))
        .collect();
    assert!(
        judge_all(&shifted, None, 1)
            .unwrap()
            .iter()
            .all(|v| !v.correct)
    );
}
