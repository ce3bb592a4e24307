//! BM25 retrieval at scale: codecal's tantivy index beside the Python
//! `rank_bm25` and `bm25s` packages, on the same pool of over 200,000 real
//! Python functions, the same 5,000 queries, the same tokens, the same
//! machine and the same run.
//!
//! The pool is mined (as `codecal corpus mine` does) from the local Python
//! standard library and the `.py` files of the wheels pinned in
//! benches/requirements-corpus.txt, downloaded by pip with --require-hashes
//! into target/bench-corpus/ on first run. Queries: a seeded sample of 5,000
//! pool functions, each excluded from its own results. Each engine runs in a
//! child process of its own, timed inside for indexing and searching. rank_bm25
//! scores every document in Python for each query, so it searches only the
//! first 100 queries and its time for 5,000 is extrapolated (and labelled so).
//! Peak memory is each child's maximum resident set, as the kernel reports it.
//! Results go to stdout and target/bench-results/retrieve.json.
//!
//! Run: cargo bench --bench retrieve

#[path = "common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use codecal::corpus::mine::{Language, MineOptions, mine_tree, python_stdlib};
use codecal::corpus::{Record, read_codexglue, to_jsonl};
use codecal::retrieve::{Exclude, tantivy};
use rand::SeedableRng;
use serde_json::{Value, json};

const QUERIES: usize = 5_000;
const RANK_BM25_QUERIES: usize = 100;
const K: usize = 3;
const PHASE: &str = "CODECAL_BENCH_RETRIEVE_PHASE";

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = root.join("target/bench-corpus");
    let pool_path = work.join("pool.jsonl");
    let queries_path = work.join("queries.txt");
    if std::env::var_os(PHASE).is_some() {
        return tantivy_phase(&pool_path, &queries_path, &work.join("result-codecal.json"));
    }
    if !pool_path.exists() {
        build_pool(root, &work, &pool_path);
    }
    let pool = read_pool(&pool_path);
    write_queries(pool.len(), &queries_path);
    println!("pool: {} functions; {QUERIES} queries, top {K}", pool.len());

    let codecal = measured(Command::new(std::env::current_exe().unwrap()).env(PHASE, "1"));
    let codecal_result = read_json(&work.join("result-codecal.json"));
    let python = common::baseline_python(
        root,
        "bench-venv-bm25",
        "requirements-bm25.txt",
        "rank_bm25, bm25s",
    );
    let mut results = vec![engine_row(
        "codecal tantivy",
        &codecal_result,
        codecal,
        QUERIES,
    )];
    let mut bm25s_hits = Value::Null;
    for (library, limit) in [("bm25s", QUERIES), ("rank_bm25", RANK_BM25_QUERIES)] {
        let out = work.join(format!("result-{library}.json"));
        let mut command = Command::new(&python);
        command
            .arg(root.join("benches/bm25_baseline.py"))
            .arg(&pool_path)
            .arg(&queries_path);
        command
            .args([library, &K.to_string(), &limit.to_string()])
            .arg(&out);
        let peak = measured(&mut command);
        let result = read_json(&out);
        results.push(engine_row(library, &result, peak, limit));
        if library == "bm25s" {
            bm25s_hits = result["hits"].clone();
        }
    }
    let agreement = top_k_agreement(&codecal_result["hits"], &bm25s_hits);
    report(&pool, &results, agreement, root);
}

/// The child process: load the pool, build a fresh index, search.
fn tantivy_phase(pool_path: &Path, queries_path: &Path, out: &Path) {
    let pool = read_pool(pool_path);
    let queries: Vec<Record> = std::fs::read_to_string(queries_path)
        .unwrap()
        .lines()
        .map(|line| pool[line.parse::<usize>().unwrap()].clone())
        .collect();
    let index_dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    // Building: `tantivy` opens or builds; a query list of one builds only.
    tantivy(
        &pool,
        &queries[..1],
        index_dir.path(),
        "bench",
        K,
        Exclude::SelfOnly,
    )
    .unwrap();
    let index_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let hits = tantivy(
        &pool,
        &queries,
        index_dir.path(),
        "bench",
        K,
        Exclude::SelfOnly,
    )
    .unwrap();
    let query_s = start.elapsed().as_secs_f64();
    let hits: Vec<Vec<usize>> = hits
        .iter()
        .map(|row| row.iter().map(|hit| hit.pool_index).collect())
        .collect();
    let result =
        json!({"index_s": index_s, "query_s": query_s, "queries": queries.len(), "hits": hits});
    std::fs::write(out, result.to_string()).unwrap();
}

fn read_pool(path: &Path) -> Vec<Record> {
    read_codexglue(path, true).expect("the bench pool").0
}

/// Downloads the pinned wheels, takes their `.py` files, and mines them with
/// the standard library into one record file.
fn build_pool(root: &Path, work: &Path, pool_path: &Path) {
    let wheels = work.join("wheels");
    let sources = work.join("src");
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--require-hashes",
            "-r",
        ])
        .arg(root.join("benches/requirements-corpus.txt"))
        .arg("-d")
        .arg(&wheels)
        .status()
        .expect("pip runs");
    assert!(status.success(), "pip download of the corpus wheels failed");
    let extract = "import pathlib, sys, zipfile\n\
                   for wheel in sorted(pathlib.Path(sys.argv[1]).glob('*.whl')):\n\
                   \x20   target = pathlib.Path(sys.argv[2]) / wheel.name.split('-')[0]\n\
                   \x20   with zipfile.ZipFile(wheel) as z:\n\
                   \x20       z.extractall(target, [m for m in z.namelist() if m.endswith('.py')])\n";
    let status = Command::new("python3")
        .args(["-c", extract])
        .arg(&wheels)
        .arg(&sources)
        .status()
        .unwrap();
    assert!(status.success(), "extracting the wheels failed");
    let options = MineOptions {
        language: Language::Python,
        repo_depth: 1,
        undocumented: false,
    };
    let mut records = mine_tree(&python_stdlib().unwrap(), options).unwrap().0;
    records.extend(mine_tree(&sources, options).unwrap().0);
    codecal::artifact::write_atomic(pool_path, to_jsonl(&records).as_bytes()).unwrap();
}

fn write_queries(pool_size: usize, path: &Path) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let chosen = rand::seq::index::sample(&mut rng, pool_size, QUERIES.min(pool_size));
    let lines: String = chosen.iter().map(|i| format!("{i}\n")).collect();
    std::fs::write(path, lines).unwrap();
}

/// Runs a command to its end; its peak resident memory in MB, from the
/// kernel's account of the finished child (wait4's ru_maxrss).
// wait4 below reaps the child, which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn measured(command: &mut Command) -> f64 {
    let child = command.spawn().expect("the engine starts");
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{:?} failed",
        command.get_program()
    );
    usage.ru_maxrss as f64 / 1024.0
}

fn read_json(path: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn engine_row(name: &str, result: &Value, peak_mb: f64, searched: usize) -> Value {
    let query_s = result["query_s"].as_f64().unwrap();
    let qps = searched as f64 / query_s;
    json!({
        "engine": name,
        "index_s": result["index_s"],
        "queries_searched": searched,
        "query_s": query_s,
        "queries_per_s": qps,
        "all_5000_s": QUERIES as f64 / qps,
        "extrapolated": searched < QUERIES,
        "peak_mb": peak_mb,
    })
}

/// The share of queries whose top-k sets agree between two engines.
fn top_k_agreement(ours: &Value, theirs: &Value) -> f64 {
    let set = |row: &Value| -> BTreeSet<u64> {
        row.as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_u64)
            .collect()
    };
    let (ours, theirs) = (ours.as_array().unwrap(), theirs.as_array().unwrap());
    let same = ours
        .iter()
        .zip(theirs)
        .filter(|(a, b)| set(a) == set(b))
        .count();
    same as f64 / ours.len().max(1) as f64
}

fn report(pool: &[Record], results: &[Value], agreement: f64, root: &Path) {
    println!("| engine | index | queries/s | 5,000 queries | peak memory |");
    println!("|---|---|---|---|---|");
    for r in results {
        let mark = if r["extrapolated"].as_bool() == Some(true) {
            format!(" (extrapolated from {})", r["queries_searched"])
        } else {
            String::new()
        };
        println!(
            "| {} | {:.1} s | {:.1} | {:.1} s{mark} | {:.0} MB |",
            r["engine"].as_str().unwrap(),
            r["index_s"].as_f64().unwrap(),
            r["queries_per_s"].as_f64().unwrap(),
            r["all_5000_s"].as_f64().unwrap(),
            r["peak_mb"].as_f64().unwrap()
        );
    }
    println!(
        "top-{K} sets equal between codecal tantivy and bm25s (k1 1.2, b 0.75): {:.1}%",
        agreement * 100.0
    );
    let out = root.join("target/bench-results");
    std::fs::create_dir_all(&out).unwrap();
    let summary = json!({"pool": pool.len(), "queries": QUERIES, "k": K, "engines": results, "top_k_agreement_with_bm25s": agreement});
    std::fs::write(
        out.join("retrieve.json"),
        serde_json::to_string_pretty(&summary).unwrap(),
    )
    .unwrap();
}
