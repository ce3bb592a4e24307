//! BLEU-1 against the precomputed `b1` column of the Haque et al. (ICPC 2022)
//! human-study data in ../shared/data/haque2022-similarity/final_megafile.csv.
//! Rows with source = baseline hold the generated summary in `text` and the
//! reference in `text.1` (see that folder's SOURCE.md).

mod common;

use codecal::score::{Tokenization, lexical_scores};
use codecal::table::Table;

#[test]
fn bleu1_equals_haque_b1_for_every_function() {
    let Some(path) = common::shared_data("haque2022-similarity/final_megafile.csv") else {
        return;
    };
    let table = Table::read(&path, None).unwrap();
    let columns =
        ["source", "function_id", "text", "text.1", "b1"].map(|c| table.column(c).unwrap());
    let [source, function, generated, reference, b1] = &columns;
    let mut functions = std::collections::BTreeSet::new();
    for row in 0..table.len() {
        if source.text(row).unwrap() != "baseline" {
            continue;
        }
        let tokenize = |column: &codecal::table::Column| {
            Tokenization::Whitespace.tokenize(column.text(row).unwrap_or(""))
        };
        let scores = lexical_scores(&tokenize(reference), &tokenize(generated));
        let expected = b1.number(row).unwrap();
        assert!(
            (scores.bleu[0] - expected).abs() < 1e-6,
            "line {}: {} vs {expected}",
            b1.location(row).line,
            scores.bleu[0]
        );
        functions.insert(function.text(row).unwrap().to_owned());
    }
    assert_eq!(
        functions.len(),
        210,
        "every function of the study is checked"
    );
}
