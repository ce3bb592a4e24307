//! What multicalibration changed, group by group, out of fold: a table of
//! every group (n, base rate, ECE, smooth ECE, skill; raw, base-rescaled and
//! multicalibrated), the worst group before and after with intervals, the
//! multicalibration error and the grouping loss.
//!
//! Not here: the fit (`multical`), the out-of-fold predictions (`sides`).

use serde::Serialize;

use super::{FeatureColumn, Multicalibrated, codes_of};
use crate::calibrate::bins::equal_width_bin;
use crate::calibrate::bootstrap::{draws_of, percentile_interval};
use crate::calibrate::metrics::{BinSpec, Binning, Sample};

/// One value for each of the three confidences.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sides {
    pub raw: f64,
    pub base: f64,
    pub multicalibrated: f64,
}

/// A group's calibration under the three confidences (out of fold).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupRow {
    pub group: String,
    pub n: usize,
    pub base_rate: f64,
    pub ece: Sides,
    pub smooth_ece: Sides,
    /// Brier skill against the group's own base rate; NaN in a one-class group.
    pub skill_score: Sides,
}

/// A value with its percentile-bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WithInterval {
    pub value: f64,
    pub ci: Option<[f64; 2]>,
}

/// The multicalibration section of `calibrate`'s report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MulticalibrationReport {
    /// The final fit's patches (on every item).
    pub patches: usize,
    pub converged: bool,
    /// Groups with at least `min_items` items, worst base-rescaled ECE first.
    pub groups: Vec<GroupRow>,
    /// The group with the largest base-rescaled ECE, and its ECE before
    /// (base) and after (multicalibrated), intervals over its items.
    pub worst_group: Option<String>,
    pub worst_before: Option<WithInterval>,
    pub worst_after: Option<WithInterval>,
    /// Brier skill of the base rescaler and of multicalibration on every
    /// tested item, paired resamples.
    pub skill_base: WithInterval,
    pub skill_multicalibrated: WithInterval,
    pub multicalibration_error: Sides,
    pub grouping_loss: Sides,
}

/// The out-of-fold confidences the report compares, on the tested items.
pub struct Compared<'a> {
    pub items: &'a [usize],
    pub raw: &'a [f64],
    pub base: &'a [f64],
    pub multicalibrated: &'a [f64],
    pub correct: &'a [bool],
}

impl MulticalibrationReport {
    /// Diagnostics of `compared`, with the groups of `fit` (the final fit:
    /// its encoders, learned on every item), `bins` equal-width bins for
    /// ECE, `resamples` for the intervals.
    pub fn new(
        fit: &Multicalibrated,
        columns: &[FeatureColumn],
        compared: &Compared,
        bins: usize,
        resamples: usize,
        seed: u64,
    ) -> MulticalibrationReport {
        let codes: Vec<Vec<Option<u32>>> = compared
            .items
            .iter()
            .map(|&i| codes_of(&fit.encoders, columns, i))
            .collect();
        let members: Vec<Vec<usize>> = fit
            .groups
            .iter()
            .map(|g| {
                (0..codes.len())
                    .filter(|&k| g.contains(&codes[k]))
                    .collect()
            })
            .collect();
        let mut rows: Vec<(usize, GroupRow)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.is_empty())
            .map(|(g, m)| {
                (
                    g,
                    group_row(fit.groups[g].name(&fit.encoders), m, compared, bins),
                )
            })
            .collect();
        rows.sort_by(|a, b| b.1.ece.base.total_cmp(&a.1.ece.base));
        let worst = rows
            .first()
            .map(|(g, row)| (row.group.clone(), &members[*g]));
        let (worst_before, worst_after) = match &worst {
            Some((_, m)) => {
                let [before, after] = paired_intervals(m, compared, resamples, seed, |p, y, w| {
                    weighted_ece(p, y, w, bins)
                });
                (Some(before), Some(after))
            }
            None => (None, None),
        };
        let all: Vec<usize> = (0..compared.items.len()).collect();
        let [skill_base, skill_multicalibrated] =
            paired_intervals(&all, compared, resamples, seed, weighted_skill);
        let side = |f: &dyn Fn(&[f64]) -> f64| Sides {
            raw: f(compared.raw),
            base: f(compared.base),
            multicalibrated: f(compared.multicalibrated),
        };
        MulticalibrationReport {
            patches: fit.patches.len(),
            converged: fit.converged,
            worst_group: worst.map(|(name, _)| name),
            worst_before,
            worst_after,
            skill_base,
            skill_multicalibrated,
            multicalibration_error: side(&|p| {
                multicalibration_error(&members, p, compared.correct, bins)
            }),
            grouping_loss: side(&|p| grouping_loss(&codes, p, compared.correct, bins)),
            groups: rows.into_iter().map(|(_, row)| row).collect(),
        }
    }
}

fn group_row(group: String, members: &[usize], compared: &Compared, bins: usize) -> GroupRow {
    let correct: Vec<bool> = members.iter().map(|&k| compared.correct[k]).collect();
    let metrics = |p: &[f64]| {
        let p: Vec<f64> = members.iter().map(|&k| p[k]).collect();
        let spec = BinSpec {
            count: bins,
            binning: Binning::EqualWidth,
        };
        Sample::new(&p, &correct, None, spec).metrics(None)
    };
    let (raw, base, multicalibrated) = (
        metrics(compared.raw),
        metrics(compared.base),
        metrics(compared.multicalibrated),
    );
    let side = |f: fn(&crate::calibrate::Metrics) -> f64| Sides {
        raw: f(&raw),
        base: f(&base),
        multicalibrated: f(&multicalibrated),
    };
    GroupRow {
        group,
        n: members.len(),
        base_rate: raw.base_rate,
        ece: side(|m| m.ece),
        smooth_ece: side(|m| m.smooth_ece),
        skill_score: side(|m| m.skill_score.unwrap_or(f64::NAN)),
    }
}

/// `statistic` of the base and the multicalibrated confidence on
/// `members`, with intervals from the same multinomial resamples (the
/// bootstrap's own draws: resample b of `seed` is its own stream).
fn paired_intervals(
    members: &[usize],
    compared: &Compared,
    resamples: usize,
    seed: u64,
    statistic: impl Fn(&[f64], &[bool], &[f64]) -> f64,
) -> [WithInterval; 2] {
    let y: Vec<bool> = members.iter().map(|&k| compared.correct[k]).collect();
    let base: Vec<f64> = members.iter().map(|&k| compared.base[k]).collect();
    let after: Vec<f64> = members
        .iter()
        .map(|&k| compared.multicalibrated[k])
        .collect();
    let ones = vec![1.0; members.len()];
    let mut draws = [Vec::with_capacity(resamples), Vec::with_capacity(resamples)];
    for b in 0..resamples {
        let weights: Vec<f64> = draws_of(seed, b, members.len())
            .into_iter()
            .map(f64::from)
            .collect();
        draws[0].push(statistic(&base, &y, &weights));
        draws[1].push(statistic(&after, &y, &weights));
    }
    let [d0, d1] = draws;
    [
        WithInterval {
            value: statistic(&base, &y, &ones),
            ci: percentile_interval(d0, 0.95),
        },
        WithInterval {
            value: statistic(&after, &y, &ones),
            ci: percentile_interval(d1, 0.95),
        },
    ]
}

/// Equal-width ECE with item weights.
fn weighted_ece(p: &[f64], y: &[bool], w: &[f64], bins: usize) -> f64 {
    let (mut weight, mut gap) = (vec![0.0; bins], vec![0.0; bins]);
    for ((&p, &y), &w) in p.iter().zip(y).zip(w) {
        let b = equal_width_bin(p, bins);
        weight[b] += w;
        gap[b] += w * (f64::from(u8::from(y)) - p);
    }
    let total: f64 = weight.iter().sum();
    gap.iter().map(|g| g.abs()).sum::<f64>() / total
}

/// Brier skill against the weighted base rate.
fn weighted_skill(p: &[f64], y: &[bool], w: &[f64]) -> f64 {
    let (mut total, mut right, mut brier) = (0.0, 0.0, 0.0);
    for ((&p, &y), &w) in p.iter().zip(y).zip(w) {
        let y = f64::from(u8::from(y));
        total += w;
        right += w * y;
        brier += w * (p - y) * (p - y);
    }
    let rate = right / total;
    1.0 - brier / total / (rate * (1.0 - rate))
}

/// The largest group-and-bin gap weighted by the cell's share of the items:
/// max over groups and equal-width bins of |Σ (y − p)| / n. Zero means
/// calibrated in every cell; a cell holding a tenth of the items off by 0.1
/// gives 0.01.
pub fn multicalibration_error(members: &[Vec<usize>], p: &[f64], y: &[bool], bins: usize) -> f64 {
    let n = p.len() as f64;
    let mut worst: f64 = 0.0;
    let mut residual = vec![0.0; bins];
    for group in members {
        residual.fill(0.0);
        for &k in group {
            let b = equal_width_bin(p[k], bins);
            residual[b] += f64::from(u8::from(y[k])) - p[k];
        }
        worst = residual.iter().fold(worst, |m, r| m.max(r.abs() / n));
    }
    worst
}

type Cells<'a> = std::collections::BTreeMap<(usize, &'a [Option<u32>]), (f64, f64)>;

/// A lower bound on the grouping loss (Perez-Lebel, Le Morvan and
/// Varoquaux, "Beyond calibration: estimating the grouping loss of modern
/// neural networks", ICLR 2023): the variance of the success rate across
/// regions of items that share a confidence level, which no rescaling of
/// the confidence alone can remove. Levels are equal-width bins; regions are
/// the items' full combination of group-feature levels. The between-region
/// sum of squares is debiased by its expectation under no grouping,
/// (J − 1)·ȳ(1 − ȳ)·n_b/(n_b − 1) for J regions, and floored at 0 per bin.
pub fn grouping_loss(codes: &[Vec<Option<u32>>], p: &[f64], y: &[bool], bins: usize) -> f64 {
    // (bin, region) → (items, successes).
    let mut cells: Cells = std::collections::BTreeMap::new();
    for ((&p, &y), codes) in p.iter().zip(y).zip(codes) {
        let b = equal_width_bin(p, bins);
        let cell = cells.entry((b, codes.as_slice())).or_default();
        cell.0 += 1.0;
        cell.1 += f64::from(u8::from(y));
    }
    let mut loss = 0.0;
    for b in 0..bins {
        let regions: Vec<(f64, f64)> = cells
            .range((b, &[][..])..)
            .take_while(|((bin, _), _)| *bin == b)
            .map(|(_, &v)| v)
            .collect();
        let n: f64 = regions.iter().map(|r| r.0).sum();
        if regions.len() < 2 || n < 2.0 {
            continue;
        }
        let rate = regions.iter().map(|r| r.1).sum::<f64>() / n;
        let between: f64 = regions
            .iter()
            .map(|&(count, right)| count * (right / count - rate).powi(2))
            .sum();
        let noise = (regions.len() as f64 - 1.0) * rate * (1.0 - rate) * n / (n - 1.0);
        loss += (between - noise).max(0.0);
    }
    loss / p.len() as f64
}
