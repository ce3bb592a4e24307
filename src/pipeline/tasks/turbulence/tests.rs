//! Tests of the Turbulence report's tables.

use super::*;

fn answer(question: u32, instance: u32, correct: bool) -> Answer {
    Answer {
        id: format!("Q{question}/{instance}/1"),
        question,
        instance,
        params: format!("[{instance}]"),
        correct,
        reason: if correct { "passed" } else { "fuzzing-failure" }.into(),
    }
}

#[test]
fn classes_follow_section_iv_b() {
    let all = |pattern: &[(u32, bool)]| -> Vec<Answer> {
        pattern.iter().map(|&(i, c)| answer(1, i, c)).collect()
    };
    let classify = |answers: Vec<Answer>| {
        let refs: Vec<&Answer> = answers.iter().collect();
        class(&refs)
    };
    assert_eq!(
        classify(all(&[(1, true), (1, true), (2, true)])),
        "perfect success"
    );
    assert_eq!(classify(all(&[(1, false), (2, false)])), "perfect failure");
    // Instance 2 fails in both rounds while instance 1 is solved.
    assert_eq!(
        classify(all(&[(1, true), (1, true), (2, false), (2, false)])),
        "consistent failure"
    );
    // Every instance solved at least once.
    assert_eq!(
        classify(all(&[(1, true), (1, false), (2, false), (2, true)])),
        "random failure"
    );
}

#[test]
fn histogram_keeps_0_and_1_apart() {
    assert_eq!(histogram_bin(0.0), 0);
    assert_eq!(histogram_bin(0.05), 1);
    assert_eq!(histogram_bin(0.1), 2);
    assert_eq!(histogram_bin(0.999), 10);
    assert_eq!(histogram_bin(1.0), 11);
}
