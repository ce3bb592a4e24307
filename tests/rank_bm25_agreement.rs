//! The rank-bm25 mode against the Python `rank_bm25` package: top-3 exemplars
//! for each of the 2,206 distinct Java records of ../shared/data/fewshot-codexglue/,
//! the pool being every other record. The expected positions come from
//! tests/rank_bm25_expected.py (rank_bm25 0.2.2) in tests/fixtures/rank_bm25_java_top3.txt.

mod common;

use std::path::Path;

use codecal::corpus::{dedupe, read_codexglue};
use codecal::retrieve::{Bm25Okapi, Bm25Params, split_on_spaces};

const FOLDERS: [&str; 5] = ["Java", "wildfly", "orientdb", "jain-slee", "geopackage"];

#[test]
fn top3_agrees_with_rank_bm25_on_the_java_sample() {
    let Some(data) = common::shared_data("fewshot-codexglue") else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut records = Vec::new();
    for folder in FOLDERS {
        let (mut read, _) = read_codexglue(&data.join(folder).join("test.jsonl"), true).unwrap();
        records.append(&mut read);
    }
    dedupe(&mut records);
    assert_eq!(records.len(), 2206);
    let tokens: Vec<Vec<&str>> = records.iter().map(|r| split_on_spaces(&r.code)).collect();
    let index = Bm25Okapi::new(&tokens, Bm25Params::default());
    let expected =
        std::fs::read_to_string(root.join("tests/fixtures/rank_bm25_java_top3.txt")).unwrap();
    let mut agree = 0;
    let mut total = 0;
    for line in expected.lines() {
        let ids: Vec<usize> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        let query = ids[0];
        let ours: Vec<usize> = index
            .top_k_leave_one_out(query, &tokens[query], 3)
            .iter()
            .map(|&(d, _)| d)
            .collect();
        total += 1;
        agree += usize::from(ours == ids[1..]);
    }
    assert_eq!(total, 2206);
    let rate = agree as f64 / total as f64;
    println!(
        "rank-bm25 mode: top-3 equal to rank_bm25 for {agree} of {total} queries ({:.2}%)",
        100.0 * rate
    );
    assert!(rate >= 0.99, "agreement {rate}");
}
