//! A fixed decision rule named before any label is seen, "accept iff the
//! measure is at least v" (e.g. "the answer passes every example its prompt
//! shows"), and its certificate: at each target precision one exact
//! one-sided binomial test of "the mistake rate among accepted items is
//! above α". One hypothesis per target, so no walk over candidates and no
//! share of δ lost to multiplicity: the rule is certified iff
//! P(Binomial(n, α) ≤ k) ≤ δ for its n accepted items and k mistakes.
//!
//! Not here: cutoffs chosen among candidates from the labels (`procedures`).

use serde::{Deserialize, Serialize};

use super::procedures::{Tally, p_value};
use super::{Cutoff, CutoffParams, Cutoffs};
use crate::calibrate::binomial::clopper_pearson_upper;

/// A rule a user names in a config: accept an item iff `measure ≥ at_least`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedRule {
    pub name: String,
    pub measure: String,
    pub at_least: f64,
}

/// A rule that cannot be tested, named by its key.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum RuleError {
    #[error("a rule needs a name of letters, digits, '-' or '_', got {0:?}")]
    Name(String),
    #[error("rule {name:?}: at_least must be a finite number, got {value}")]
    AtLeast { name: String, value: f64 },
}

/// The rule at one target precision on the calibration items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleTest {
    pub target_precision: f64,
    /// Items the rule saw.
    pub items: usize,
    pub accepted: usize,
    /// Accepted items that were wrong.
    pub mistakes: usize,
    /// P(Binomial(accepted, 1 − target) ≤ mistakes): 1 where nothing is accepted.
    pub p_value: f64,
    /// Whether `p_value` ≤ δ: the rule's precision is at least the target
    /// with probability 1 − δ over exchangeable calibration items.
    pub certified: bool,
    /// The one-sided Clopper–Pearson upper bound on the mistake rate at 1 − δ.
    pub mistake_bound: Option<f64>,
}

impl RuleTest {
    pub fn coverage(&self) -> f64 {
        if self.items == 0 {
            0.0
        } else {
            self.accepted as f64 / self.items as f64
        }
    }

    pub fn realised_precision(&self) -> Option<f64> {
        (self.accepted > 0).then(|| 1.0 - self.mistakes as f64 / self.accepted as f64)
    }
}

impl FixedRule {
    pub fn check(&self) -> Result<(), RuleError> {
        let name_ok = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return Err(RuleError::Name(self.name.clone()));
        }
        if !self.at_least.is_finite() {
            return Err(RuleError::AtLeast {
                name: self.name.clone(),
                value: self.at_least,
            });
        }
        Ok(())
    }

    /// Whether the rule accepts an item of confidence `p`.
    pub fn accepts(&self, p: f64) -> bool {
        p >= self.at_least
    }

    /// The rule's exact test at `target` and level `delta`.
    pub fn test(&self, confidence: &[f64], correct: &[bool], target: f64, delta: f64) -> RuleTest {
        let (mut accepted, mut mistakes) = (0, 0);
        for (&p, &y) in confidence.iter().zip(correct) {
            if self.accepts(p) {
                accepted += 1;
                mistakes += usize::from(!y);
            }
        }
        let tally = Tally {
            cutoff: self.at_least,
            decided: accepted,
            mistakes,
        };
        let p = p_value(&tally, 1.0 - target);
        RuleTest {
            target_precision: target,
            items: confidence.len(),
            accepted,
            mistakes,
            p_value: p,
            certified: accepted > 0 && p <= delta,
            mistake_bound: (accepted > 0).then(|| clopper_pearson_upper(mistakes, accepted, delta)),
        }
    }

    /// The rule's test at every target of `params`, in their order.
    pub fn tests(
        &self,
        params: &CutoffParams,
        confidence: &[f64],
        correct: &[bool],
    ) -> Vec<RuleTest> {
        params
            .target_precisions
            .iter()
            .map(|&target| self.test(confidence, correct, target, params.delta))
            .collect()
    }

    /// The cutoffs its `tests` (one per target of `params`) give, as a
    /// calibrator keeps them: the rule's own value where it is certified,
    /// none (review all) where it is not, so `apply` deploys exactly the
    /// tested rule.
    pub fn cutoffs(&self, params: &CutoffParams, tests: &[RuleTest]) -> Cutoffs {
        let n = tests.first().map_or(0, |t| t.items);
        let accept = tests
            .iter()
            .map(|test| {
                let target = test.target_precision;
                if !test.certified {
                    return Cutoff::none(target);
                }
                Cutoff {
                    target_precision: target,
                    cutoff: Some(self.at_least),
                    decided: test.accepted,
                    mistakes: test.mistakes,
                    tested: test.accepted,
                    tested_mistakes: test.mistakes,
                    mistake_bound: test.mistake_bound,
                    coverage: test.coverage(),
                    coverage_bound: Some(
                        1.0 - clopper_pearson_upper(n - test.accepted, n, params.delta),
                    ),
                    realised_precision: test.realised_precision(),
                    calibrated_cutoff: None,
                    unmet: None,
                }
            })
            .collect();
        Cutoffs {
            delta: params.delta,
            grid: params.grid,
            procedure: params.procedure,
            min_coverage: None,
            items: n,
            accept,
            reject: None,
            groups: None,
            rule: Some(self.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> FixedRule {
        FixedRule {
            name: "examples-pass".into(),
            measure: "spec_examples_all".into(),
            at_least: 1.0,
        }
    }

    /// 55 accepted with 2 wrong at α = 0.1: P(Bin(55, 0.1) ≤ 2) = 0.07743
    /// (the binomial sum Σ_{i≤2} C(55, i) 0.1^i 0.9^(55−i)), certified at
    /// δ = 0.1; at α = 0.05 it is 0.47680, not certified.
    #[test]
    fn one_exact_test_per_target() {
        let mut confidence = vec![1.0; 55];
        let mut correct = vec![true; 55];
        correct[0] = false;
        correct[1] = false;
        confidence.extend(vec![0.0; 109]);
        correct.extend(vec![false; 109]);
        let at_90 = rule().test(&confidence, &correct, 0.9, 0.1);
        assert_eq!((at_90.accepted, at_90.mistakes, at_90.items), (55, 2, 164));
        assert!(
            (at_90.p_value - 0.077_434).abs() < 1e-5,
            "{}",
            at_90.p_value
        );
        assert!(at_90.certified);
        let at_95 = rule().test(&confidence, &correct, 0.95, 0.1);
        assert!(
            (at_95.p_value - 0.476_803).abs() < 1e-5,
            "{}",
            at_95.p_value
        );
        assert!(!at_95.certified);
        let params = CutoffParams {
            target_precisions: vec![0.9, 0.95],
            ..CutoffParams::default()
        };
        let tests = rule().tests(&params, &confidence, &correct);
        assert_eq!(tests[0], at_90);
        let cutoffs = rule().cutoffs(&params, &tests);
        assert_eq!(cutoffs.accept[0].cutoff, Some(1.0));
        assert_eq!(cutoffs.accept[0].decided, 55);
        assert_eq!(cutoffs.accept[1].cutoff, None);
    }

    #[test]
    fn a_rule_that_accepts_nothing_certifies_nothing() {
        let test = rule().test(&[0.0, 0.5], &[true, true], 0.9, 0.1);
        assert_eq!(
            (test.accepted, test.p_value, test.certified),
            (0, 1.0, false)
        );
    }

    #[test]
    fn bad_rules_name_their_key() {
        let bad = FixedRule {
            at_least: f64::NAN,
            ..rule()
        };
        assert!(bad.check().unwrap_err().to_string().contains("at_least"));
        let bad = FixedRule {
            name: "a b".into(),
            ..rule()
        };
        assert!(bad.check().is_err());
    }
}
