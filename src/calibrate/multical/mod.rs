//! Multicalibration: after a base rescaler, corrections that make the
//! confidence calibrated in every group at once (every level of every group
//! feature, and their intersections up to a depth), not only on average.
//!
//! The fit is the patching algorithm of Hébert-Johnson, Kim, Reingold and
//! Rothblum ("Multicalibration: Calibration for the (Computationally-
//! Identifiable) Masses", ICML 2018, Algorithm 1), greedy in its choice:
//! confidence is cut into `bins` equal-width bins (lo, hi], the project's one
//! definition (`bins::equal_width_bin`), of its *current* value;
//! a cell is a group's items in one bin. While some cell of at least
//! `min_items` training items has a gap |mean(y) − mean(p)| above both
//! `alpha` and `z` of its standard errors, the cell whose correction lowers
//! the training squared error most (n·gap²) is shifted by its gap, clipped
//! to [0, 1]. Each patch lowers the training Brier sum by at least
//! `min_items · alpha²`, so there are at most n·Brier₀ / (min_items·alpha²)
//! of them, and `max_rounds` bounds them too.
//!
//! **Guarantee** (on the training items, when the fit stops before
//! `max_rounds`): every group-and-bin cell with at least `min_items` items
//! has a gap of at most max(alpha, z·se). Out of fold it holds only
//! approximately; `calibrate` reports it out of fold. The standard-error
//! gate is this module's addition to the paper's rule: it keeps the fit
//! from chasing noise in small cells (the test on data calibrated in every
//! group checks that it then changes nearly nothing).
//!
//! The fitted patches replay in order on a new item, with the same
//! arithmetic, so `apply` reproduces the fitted values exactly.
//!
//! Not here: the base rescaler (`rescale`), the cross-validation that fits
//! this inside each fold (`sides`), the group tables (`diagnostics`).

pub mod diagnostics;
mod groups;
pub mod kmeans;

use serde::{Deserialize, Serialize};

use super::bins::equal_width_bin;

pub use diagnostics::{
    GroupRow, MulticalibrationReport, Sides, grouping_loss, multicalibration_error,
};
pub use groups::{
    Encoding, FeatureColumn, FeatureEncoder, FeatureValue, FeatureValues, Group, codes_of,
    conjunctions,
};

/// Settings of the multicalibration fit; see the module's documentation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MulticalibrationParams {
    /// Gap a cell may keep.
    pub alpha: f64,
    /// Fewest training items in a cell (and in a categorical level) for it to count.
    pub min_items: usize,
    /// Standard errors a gap must exceed too.
    pub z: f64,
    /// Equal-width bins of the current confidence.
    pub bins: usize,
    /// Most features in one intersection.
    pub depth: usize,
    /// Quantile bins of a numeric feature.
    pub quantiles: usize,
    pub max_rounds: usize,
}

impl Default for MulticalibrationParams {
    fn default() -> Self {
        MulticalibrationParams {
            alpha: 0.02,
            min_items: 50,
            z: 3.0,
            bins: 10,
            depth: 2,
            quantiles: 4,
            max_rounds: 500,
        }
    }
}

/// A setting out of range.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum MulticalibrationParamError {
    #[error("multicalibration alpha must be in (0, 1), got {0}")]
    Alpha(f64),
    #[error("multicalibration needs at least one item per cell (min items), got 0")]
    MinItems,
    #[error("multicalibration z must be finite and not negative, got {0}")]
    Z(f64),
    #[error("multicalibration needs 1 to 1000 bins, got {0}")]
    Bins(usize),
    #[error("multicalibration needs 2 to 100 quantile bins, got {0}")]
    Quantiles(usize),
    #[error("multicalibration depth must be 1 to 4, got {0}")]
    Depth(usize),
}

impl MulticalibrationParams {
    pub fn check(&self) -> Result<(), MulticalibrationParamError> {
        use MulticalibrationParamError as E;
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(E::Alpha(self.alpha));
        }
        if self.min_items == 0 {
            return Err(E::MinItems);
        }
        if !(self.z.is_finite() && self.z >= 0.0) {
            return Err(E::Z(self.z));
        }
        if !(1..=1000).contains(&self.bins) {
            return Err(E::Bins(self.bins));
        }
        if !(2..=100).contains(&self.quantiles) {
            return Err(E::Quantiles(self.quantiles));
        }
        if !(1..=4).contains(&self.depth) {
            return Err(E::Depth(self.depth));
        }
        Ok(())
    }

    /// Fits patches on `items` (indices into `columns` and `labels`), whose
    /// base-rescaled confidences are `base` (in the order of `items`).
    pub fn fit(
        &self,
        base: &[f64],
        labels: &[bool],
        columns: &[FeatureColumn],
        items: &[usize],
    ) -> Multicalibrated {
        let encoders: Vec<FeatureEncoder> = columns
            .iter()
            .map(|c| FeatureEncoder::fit(c, items, self.quantiles, self.min_items))
            .collect();
        let codes: Vec<Vec<Option<u32>>> = items
            .iter()
            .map(|&i| codes_of(&encoders, columns, i))
            .collect();
        // Only groups that could hold a cell of min_items: the rest never patch.
        let (groups, members): (Vec<Group>, Vec<Vec<u32>>) = conjunctions(&encoders, self.depth)
            .into_iter()
            .map(|g| {
                let members: Vec<u32> = (0..items.len() as u32)
                    .filter(|&k| g.contains(&codes[k as usize]))
                    .collect();
                (g, members)
            })
            .filter(|(_, members)| members.len() >= self.min_items)
            .unzip();
        let y: Vec<f64> = items
            .iter()
            .map(|&i| f64::from(u8::from(labels[i])))
            .collect();
        let mut p = base.to_vec();
        let mut patches = Vec::new();
        let mut converged = false;
        for _ in 0..self.max_rounds {
            let Some(worst) = self.worst_cell(&members, &p, &y) else {
                converged = true;
                break;
            };
            for &k in &members[worst.group] {
                let k = k as usize;
                if equal_width_bin(p[k], self.bins) == worst.bin {
                    p[k] = shifted(p[k], worst.shift);
                }
            }
            patches.push(Patch {
                group: worst.group as u32,
                bin: worst.bin as u32,
                shift: worst.shift,
            });
        }
        Multicalibrated {
            params: self.clone(),
            encoders,
            groups,
            patches,
            converged,
        }
    }

    /// The violating cell whose correction lowers the squared error most.
    fn worst_cell(&self, members: &[Vec<u32>], p: &[f64], y: &[f64]) -> Option<Cell> {
        let mut worst: Option<(f64, Cell)> = None;
        let (mut count, mut residual, mut confidence) = (
            vec![0.0; self.bins],
            vec![0.0; self.bins],
            vec![0.0; self.bins],
        );
        for (group, items) in members.iter().enumerate() {
            count.fill(0.0);
            residual.fill(0.0);
            confidence.fill(0.0);
            for &k in items {
                let k = k as usize;
                let b = equal_width_bin(p[k], self.bins);
                count[b] += 1.0;
                residual[b] += y[k] - p[k];
                confidence[b] += p[k];
            }
            for b in 0..self.bins {
                let n = count[b];
                if n < self.min_items as f64 {
                    continue;
                }
                let gap = residual[b] / n;
                let mean = confidence[b] / n;
                let standard_error = (mean * (1.0 - mean) / n).sqrt();
                if gap.abs() <= self.alpha.max(self.z * standard_error) {
                    continue;
                }
                let gain = n * gap * gap;
                if worst.as_ref().is_none_or(|(best, _)| gain > *best) {
                    worst = Some((
                        gain,
                        Cell {
                            group,
                            bin: b,
                            shift: gap,
                        },
                    ));
                }
            }
        }
        worst.map(|(_, cell)| cell)
    }
}

struct Cell {
    group: usize,
    bin: usize,
    shift: f64,
}

/// One correction: the items of `group` whose current confidence is in
/// `bin` move by `shift`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Patch {
    pub group: u32,
    pub bin: u32,
    pub shift: f64,
}

/// A fitted multicalibration: the encoders, the groups and the patches in
/// the order they were made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Multicalibrated {
    pub params: MulticalibrationParams,
    pub encoders: Vec<FeatureEncoder>,
    pub groups: Vec<Group>,
    pub patches: Vec<Patch>,
    /// False when the fit stopped at `max_rounds` with a cell still off.
    pub converged: bool,
}

impl Multicalibrated {
    /// What makes a saved fit unusable, naming the key (a hand-edited
    /// file; codecal writes none of these).
    pub fn defect(&self) -> Option<String> {
        if let Err(e) = self.params.check() {
            return Some(format!("multicalibration.params: {e}"));
        }
        if let Some(defect) = self.encoders.iter().enumerate().find_map(encoder_defect) {
            return Some(defect);
        }
        let features = self.encoders.len() as u32;
        if let Some(g) = self
            .groups
            .iter()
            .position(|g| g.levels.iter().any(|&(f, _)| f >= features))
        {
            return Some(format!(
                "multicalibration.groups[{g}] names a feature beyond the {features} encoders"
            ));
        }
        self.patches.iter().enumerate().find_map(|(k, patch)| {
            let bad = patch.group as usize >= self.groups.len()
                || patch.bin as usize >= self.params.bins
                || !patch.shift.is_finite();
            bad.then(|| format!("multicalibration.patches[{k}] names no group or bin, or its shift is not finite"))
        })
    }

    /// Whether feature `feature` (in the encoders' order) is cut into
    /// numeric bins.
    pub fn is_numeric(&self, feature: usize) -> bool {
        self.encoders
            .get(feature)
            .is_some_and(|e| matches!(e.encoding, groups::Encoding::Quantile { .. }))
    }

    /// The feature names an item must have.
    pub fn feature_names(&self) -> impl Iterator<Item = &str> {
        self.encoders.iter().map(|e| e.name.as_str())
    }

    /// The multicalibrated confidence of an item whose base-rescaled
    /// confidence is `base` and whose feature levels are `codes`.
    pub fn predict_codes(&self, base: f64, codes: &[Option<u32>]) -> f64 {
        let member: Vec<bool> = self.groups.iter().map(|g| g.contains(codes)).collect();
        let mut p = base;
        for patch in &self.patches {
            if member[patch.group as usize]
                && equal_width_bin(p, self.params.bins) == patch.bin as usize
            {
                p = shifted(p, patch.shift);
            }
        }
        p
    }

    /// [`predict_codes`](Self::predict_codes) for item `item` of `columns`
    /// (in the encoders' order).
    pub fn predict(&self, base: f64, columns: &[FeatureColumn], item: usize) -> f64 {
        self.predict_codes(base, &codes_of(&self.encoders, columns, item))
    }

    /// For one row: `values` in the encoders' order.
    pub fn predict_values(&self, base: f64, values: &[FeatureValue]) -> f64 {
        let codes: Vec<Option<u32>> = self
            .encoders
            .iter()
            .zip(values)
            .map(|(e, v)| e.level(v))
            .collect();
        self.predict_codes(base, &codes)
    }
}

/// What is wrong with encoder `k` as saved: no name, or levels a lookup
/// would misread (categorical levels not strictly sorted, so the binary
/// search misses some; cut points not finite and strictly increasing).
fn encoder_defect((k, encoder): (usize, &groups::FeatureEncoder)) -> Option<String> {
    let key = format!("multicalibration.encoders[{k}]");
    if encoder.name.trim().is_empty() {
        return Some(format!("{key}.name is empty"));
    }
    let ordered = match &encoder.encoding {
        groups::Encoding::Categorical { levels } => levels.windows(2).all(|w| w[0] < w[1]),
        groups::Encoding::Quantile { cuts } => {
            cuts.iter().all(|c| c.is_finite()) && cuts.windows(2).all(|w| w[0] < w[1])
        }
    };
    (!ordered).then(|| format!("{key}: its levels or cuts are not strictly increasing"))
}

fn shifted(p: f64, shift: f64) -> f64 {
    (p + shift).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests;
