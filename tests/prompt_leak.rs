//! No prompt may show the model its own query's reference: the shared Python
//! sample's code fields still hold their docstrings, which `corpus` removes.

mod common;

use codecal::corpus::read_codexglue;
use codecal::prompt::{Prompt, PromptStyle, Shot, Template, build};
use codecal::retrieve::{Exclude, rank_bm25};

#[test]
fn no_prompt_contains_its_own_querys_reference() {
    let Some(path) = common::shared_data("fewshot-codexglue/Python/test.jsonl") else {
        return;
    };
    let (records, _) = read_codexglue(&path, true).unwrap();
    let raw: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let hits = rank_bm25(&records, &records, true, 3, Exclude::SelfOnly);
    let template = Template::seed();
    let (mut checked, mut written_twice) = (0, 0);
    for ((query, hits), raw) in records.iter().zip(&hits).zip(&raw) {
        let docstring = raw["docstring"].as_str().unwrap();
        let shots: Vec<Shot> = hits
            .iter()
            .map(|h| Shot {
                code: &records[h.pool_index].code,
                reference: &records[h.pool_index].reference,
            })
            .collect();
        let Prompt::Completion(prompt) = build(
            &template,
            PromptStyle::Completion,
            &shots,
            &query.code,
            None,
        ) else {
            unreachable!("completion style")
        };
        // The query's block is the prompt's tail: its code with the instruction.
        let query_block = template.query.replace("{code}", &query.code);
        assert!(prompt.ends_with(&query_block));
        // A developer may repeat the summary in a comment: that is code, not the docstring.
        let code_outside_docstring = raw["code"].as_str().unwrap().replacen(docstring, "", 1);
        if code_outside_docstring.contains(&query.reference) {
            written_twice += 1;
        } else {
            assert!(
                !query_block.contains(&query.reference),
                "{}: reference in its own prompt",
                query.id
            );
        }
        let quoted = [
            format!("\"\"\"{docstring}\"\"\""),
            format!("'''{docstring}'''"),
        ];
        assert!(
            quoted.iter().all(|q| !prompt.contains(q.as_str())),
            "{}: docstring literal in the prompt",
            query.id
        );
        checked += 1;
    }
    assert_eq!(checked, 1000);
    assert!(
        written_twice <= 10,
        "{written_twice} references also written in the code"
    );
}
