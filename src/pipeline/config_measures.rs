//! The checks of a run config's measures: each named confidence is one the
//! task has, and the learned combination and the fixed rules name measures
//! the run calibrates. Not the other keys (`config_check`).

use super::config::*;
use crate::confidence::TOKEN_MEASURES;
use crate::task::TaskKind;
use crate::task::examples::written::{DUAL_AGREEMENT, WRITTEN_MEASURES};
use crate::task::examples::{SPEC_EXAMPLES_SAMPLES, SPEC_MEASURES};

impl RunConfig {
    /// Each `calibration.confidence` entry is a measure of this task, with
    /// what it needs (samples, model-written tests) asked for; and tests are
    /// asked for only where a measure reads them.
    pub(super) fn check_measures(&self) -> Result<(), ConfigError> {
        let synthesis = self.task() == TaskKind::Synthesis;
        let error = |message: String| Err(key_error("calibration.confidence", message));
        for name in &self.calibration.confidence {
            let name = name.as_str();
            let baseline = name == LENGTH_BASELINE && self.task() != TaskKind::Summarize;
            let spec = SPEC_MEASURES.contains(&name);
            let written = WRITTEN_MEASURES.contains(&name);
            if (spec || written) && !synthesis {
                return error(format!(
                    "{name:?} runs the answer on the prompt's examples or the model's tests: \
                     only a synthesis task has them"
                ));
            }
            let sampled = [SPEC_EXAMPLES_SAMPLES, DUAL_AGREEMENT].contains(&name);
            if sampled && self.generation.samples == 0 {
                return error(format!(
                    "{name:?} needs sampled answers: set [generation] samples"
                ));
            }
            if written && self.generation.tests == 0 {
                return error(format!(
                    "{name:?} needs model-written tests: set [generation] tests"
                ));
            }
            if !TOKEN_MEASURES.contains(&name) && !baseline && !spec && !written {
                let mut known = TOKEN_MEASURES.to_vec();
                if synthesis {
                    known.extend(SPEC_MEASURES);
                    known.extend(WRITTEN_MEASURES);
                }
                return error(format!(
                    "unknown measure {name:?} (expected one of: {})",
                    known.join(", ")
                ));
            }
        }
        let reads_tests = self
            .calibration
            .confidence
            .iter()
            .any(|m| WRITTEN_MEASURES.contains(&m.as_str()));
        if self.generation.tests > 0 && !reads_tests {
            return Err(key_error(
                "generation.tests",
                format!(
                    "asks the model for tests that no measure reads: name {} in \
                     calibration.confidence",
                    WRITTEN_MEASURES.join(" or ")
                ),
            ));
        }
        Ok(())
    }

    /// The measures a task run calibrates, before any combination: the
    /// configured ones, the reflective ones, and agreement with samples.
    fn calibrated_measures(&self) -> Vec<String> {
        let mut known: Vec<String> = self
            .calibration
            .confidence
            .iter()
            .cloned()
            .chain(
                self.generation
                    .reflective
                    .iter()
                    .map(|m| m.name().to_owned()),
            )
            .collect();
        if self.generation.samples > 0 {
            known.extend(crate::confidence::agreement::CODE_MEASURES.map(String::from));
        }
        known
    }

    /// Each fixed rule is well formed, named once, on a measure the run
    /// calibrates (or the learned combination), in a task run.
    pub(super) fn check_rules(&self) -> Result<(), ConfigError> {
        let rules = &self.calibration.rules;
        if rules.is_empty() {
            return Ok(());
        }
        if self.task() == TaskKind::Summarize {
            return Err(key_error(
                "calibration.rules",
                "fixed rules are certified in task runs only",
            ));
        }
        let mut known = self.calibrated_measures();
        if !self.calibration.combine.is_empty() {
            known.push(COMBINATION.to_owned());
        }
        for (i, rule) in rules.iter().enumerate() {
            let key = format!("calibration.rules[{i}]");
            rule.check().map_err(|e| key_error(&key, e.to_string()))?;
            if !known.contains(&rule.measure) {
                return Err(key_error(
                    &format!("{key}.measure"),
                    format!(
                        "{:?} is not a measure this run calibrates (it calibrates: {})",
                        rule.measure,
                        known.join(", ")
                    ),
                ));
            }
            if rules[..i].iter().any(|r| r.name == rule.name) {
                return Err(key_error(
                    &format!("{key}.name"),
                    format!("rule {:?} is named twice", rule.name),
                ));
            }
        }
        Ok(())
    }

    /// Every measure to combine is one the run calibrates, and there are two.
    pub(super) fn check_combine(&self) -> Result<(), ConfigError> {
        let combine = &self.calibration.combine;
        if combine.is_empty() {
            return Ok(());
        }
        if self.task() == TaskKind::Summarize {
            return Err(key_error(
                "calibration.combine",
                "a learned combination is made in task runs only",
            ));
        }
        let known = self.calibrated_measures();
        if let Some(unknown) = combine.iter().find(|m| !known.contains(m)) {
            return Err(key_error(
                "calibration.combine",
                format!(
                    "{unknown:?} is not a measure this run calibrates (it calibrates: {})",
                    known.join(", ")
                ),
            ));
        }
        let mut distinct = combine.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() < 2 {
            return Err(key_error(
                "calibration.combine",
                "name at least two different measures",
            ));
        }
        Ok(())
    }
}
