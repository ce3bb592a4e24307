//! Seed 000's length baseline (its §4.1.3): a confidence that reads nothing
//! of the model but the length of its answer, the shorter the surer.
//!
//! confidence = (Lmax_ref - L) / (Lmax_ref - Lmin_ref), clipped to [0, 1],
//! where Lmin_ref and Lmax_ref are the shortest and longest reference
//! answers of the dataset. Lengths are whatever unit the caller counts in
//! (codecal counts characters of the answer text, for generations and
//! references alike); a measure that does no better than this one has
//! learnt nothing about correctness beyond length.

/// The baseline fitted to a dataset's reference answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LengthBaseline {
    shortest: f64,
    longest: f64,
}

impl LengthBaseline {
    /// Fits to the reference answers' lengths; `None` unless there are at
    /// least two different lengths, since the ratio is undefined otherwise.
    pub fn fit(reference_lengths: &[usize]) -> Option<LengthBaseline> {
        let shortest = *reference_lengths.iter().min()? as f64;
        let longest = *reference_lengths.iter().max()? as f64;
        (longest > shortest).then_some(LengthBaseline { shortest, longest })
    }

    /// The confidence in an answer of `length`.
    pub fn confidence(&self, length: usize) -> f64 {
        ((self.longest - length as f64) / (self.longest - self.shortest)).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::LengthBaseline;

    #[test]
    fn shorter_answers_are_surer_and_the_ends_are_clipped() {
        let baseline = LengthBaseline::fit(&[30, 10, 20]).unwrap();
        let confidences: Vec<f64> = [5, 10, 20, 30, 40]
            .into_iter()
            .map(|length| baseline.confidence(length))
            .collect();
        assert_eq!(confidences, [1.0, 1.0, 0.5, 0.0, 0.0]);
    }

    #[test]
    fn one_reference_length_fits_nothing() {
        assert_eq!(LengthBaseline::fit(&[7, 7]), None);
        assert_eq!(LengthBaseline::fit(&[]), None);
    }
}
