//! Cross-validation splits for fitting rescalers out of fold.
//!
//! Each strategy turns n items (with labels and optional groups) into test
//! folds; an item's training set is every item not in its test fold. Items no
//! fold tests (possible only with `seed-balanced`) are reported, never hidden.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// The splitting strategies `codecal calibrate --cv` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CvStrategy {
    /// Seeded shuffle, then k contiguous folds of near-equal size.
    Kfold,
    /// Seeded shuffle within each class, then round-robin, so each fold keeps the base rate.
    Stratified,
    /// Each group in exactly one test fold; largest groups first into the lightest fold
    /// (scikit-learn's GroupKFold).
    Group,
    /// The summarization seed's replication code: groups by size, descending, fill each
    /// fold up to n/k items; groups that never fit are never tested.
    SeedBalanced,
    /// Fit and evaluate on all items (for checks against other tools; not a fair estimate).
    None,
}

crate::choices!(CvStrategy { Kfold => "kfold", Stratified => "stratified", Group => "group", SeedBalanced => "seed-balanced", None => "none" });

impl CvStrategy {
    pub fn needs_groups(self) -> bool {
        matches!(self, CvStrategy::Group | CvStrategy::SeedBalanced)
    }
}

/// Why no split could be made.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum CvError {
    #[error("--folds must be at least 2, got {0}")]
    TooFewFolds(usize),
    #[error("{items} items cannot fill {folds} folds")]
    TooFewItems { items: usize, folds: usize },
    #[error("--cv {cv} needs --group")]
    GroupsRequired { cv: &'static str },
    #[error("{groups} distinct groups cannot fill {folds} folds; lower --folds or use --cv kfold")]
    TooFewGroups { groups: usize, folds: usize },
    #[error(
        "the smallest class has {members} items, fewer than {folds} folds; lower --folds or use --cv kfold"
    )]
    TooFewInClass { members: usize, folds: usize },
}

/// Test folds over item indices, and the items no fold tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Folds {
    /// Item indices of each test fold, ascending. With `CvStrategy::None`, one fold of all items.
    pub test: Vec<Vec<usize>>,
    /// `true` when training uses the test items too (`CvStrategy::None`).
    pub in_sample: bool,
    pub untested: usize,
}

impl Folds {
    /// The training items of fold `f`: everything outside its test set.
    pub fn train(&self, f: usize, n: usize) -> Vec<usize> {
        if self.in_sample {
            return (0..n).collect();
        }
        let mut in_test = vec![false; n];
        for &i in &self.test[f] {
            in_test[i] = true;
        }
        (0..n).filter(|&i| !in_test[i]).collect()
    }
}

/// Splits `labels.len()` items into `k` test folds by `strategy`.
pub fn split(
    strategy: CvStrategy,
    k: usize,
    labels: &[bool],
    groups: Option<&[String]>,
    seed: u64,
) -> Result<Folds, CvError> {
    let n = labels.len();
    if strategy == CvStrategy::None {
        return Ok(Folds {
            test: vec![(0..n).collect()],
            in_sample: true,
            untested: 0,
        });
    }
    if k < 2 {
        return Err(CvError::TooFewFolds(k));
    }
    if n < k {
        return Err(CvError::TooFewItems { items: n, folds: k });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut test = match strategy {
        CvStrategy::Kfold => {
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut rng);
            contiguous_folds(&order, k)
        }
        CvStrategy::Stratified => stratified(labels, k, &mut rng)?,
        CvStrategy::Group | CvStrategy::SeedBalanced => {
            let sizes = group_members(strategy, groups, k)?;
            if strategy == CvStrategy::Group {
                lightest_fold_first(&sizes, k)
            } else {
                seed_balanced(&sizes, k, n)
            }
        }
        CvStrategy::None => unreachable!("handled above"),
    };
    for fold in &mut test {
        fold.sort_unstable();
    }
    let tested: usize = test.iter().map(Vec::len).sum();
    Ok(Folds {
        test,
        in_sample: false,
        untested: n - tested,
    })
}

/// numpy's `array_split` of `order` into `k` parts.
/// Parts the items are dealt into for a held-out fit: the fit takes one,
/// the test the rest. A rescaler or a learned combination has a handful of
/// parameters, so a third of the items fits them; the test, whose power
/// grows with its items, keeps two thirds.
pub const HELD_OUT_PARTS: usize = 3;

/// The items a deployed map is fitted on and the items its cutoffs are
/// tested on, dealt as [`split`] deals folds (whole groups with
/// [`CvStrategy::Group`]): one part of [`HELD_OUT_PARTS`] and the rest, each
/// ascending. With [`CvStrategy::None`] (fit and evaluate on every item, for
/// checks against other tools) both are every item, as asked.
pub fn held_out(
    strategy: CvStrategy,
    labels: &[bool],
    groups: Option<&[String]>,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>), CvError> {
    let parts = split(strategy, HELD_OUT_PARTS, labels, groups, seed)?;
    if parts.in_sample {
        let all: Vec<usize> = (0..labels.len()).collect();
        return Ok((all.clone(), all));
    }
    let mut tested: Vec<usize> = parts.test[1..].concat();
    tested.sort_unstable();
    Ok((parts.test[0].clone(), tested))
}

fn contiguous_folds(order: &[usize], k: usize) -> Vec<Vec<usize>> {
    let (base, extra) = (order.len() / k, order.len() % k);
    let mut start = 0;
    (0..k)
        .map(|f| {
            let len = base + usize::from(f < extra);
            let fold = order[start..start + len].to_vec();
            start += len;
            fold
        })
        .collect()
}

fn stratified(labels: &[bool], k: usize, rng: &mut ChaCha8Rng) -> Result<Vec<Vec<usize>>, CvError> {
    let mut positives: Vec<usize> = (0..labels.len()).filter(|&i| labels[i]).collect();
    let mut negatives: Vec<usize> = (0..labels.len()).filter(|&i| !labels[i]).collect();
    let members = positives.len().min(negatives.len());
    if members < k {
        return Err(CvError::TooFewInClass { members, folds: k });
    }
    positives.shuffle(rng);
    negatives.shuffle(rng);
    let mut folds = vec![Vec::new(); k];
    // One round-robin across both classes keeps fold sizes within one item.
    for (slot, &i) in positives.iter().chain(&negatives).enumerate() {
        folds[slot % k].push(i);
    }
    Ok(folds)
}

/// Members of each group, largest group first (ties broken by group name).
fn group_members(
    strategy: CvStrategy,
    groups: Option<&[String]>,
    k: usize,
) -> Result<Vec<Vec<usize>>, CvError> {
    let cv = match strategy {
        CvStrategy::Group => "group",
        _ => "seed-balanced",
    };
    let groups = groups.ok_or(CvError::GroupsRequired { cv })?;
    let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate() {
        members.entry(g).or_default().push(i);
    }
    if members.len() < k {
        return Err(CvError::TooFewGroups {
            groups: members.len(),
            folds: k,
        });
    }
    let mut by_size: Vec<Vec<usize>> = members.into_values().collect();
    by_size.sort_by_key(|m| std::cmp::Reverse(m.len()));
    Ok(by_size)
}

/// scikit-learn's GroupKFold: each group, largest first, joins the fold with fewest items.
fn lightest_fold_first(groups: &[Vec<usize>], k: usize) -> Vec<Vec<usize>> {
    let mut folds = vec![Vec::new(); k];
    for members in groups {
        let lightest = (0..k).min_by_key(|&f| folds[f].len()).unwrap_or(0);
        folds[lightest].extend_from_slice(members);
    }
    folds
}

/// The summarization seed's folds: each fold takes every unused group that still fits in n/k.
fn seed_balanced(groups: &[Vec<usize>], k: usize, n: usize) -> Vec<Vec<usize>> {
    let capacity = n as f64 / k as f64;
    let mut used = vec![false; groups.len()];
    (0..k)
        .map(|_| {
            let mut fold = Vec::new();
            for (g, members) in groups.iter().enumerate() {
                if !used[g] && (fold.len() + members.len()) as f64 <= capacity {
                    used[g] = true;
                    fold.extend_from_slice(members);
                }
            }
            fold
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;

    fn names(folds: &Folds, groups: &[String]) -> Vec<Vec<String>> {
        folds
            .test
            .iter()
            .map(|fold| {
                let mut g: Vec<String> = fold.iter().map(|&i| groups[i].clone()).collect();
                g.sort();
                g.dedup();
                g
            })
            .collect()
    }

    // Expected: python3 tests/sklearn_expected.py, GroupKFold(n_splits=5) test groups.
    #[test]
    fn group_folds_match_scikit_learn_group_kfold() {
        let f = fixture();
        let folds = split(CvStrategy::Group, 5, &f.correct, Some(&f.repo), 0).unwrap();
        assert_eq!(
            names(&folds, &f.repo),
            vec![
                vec!["repo7"],
                vec!["repo6"],
                vec!["repo0", "repo5"],
                vec!["repo1", "repo4"],
                vec!["repo2", "repo3"],
            ]
        );
        assert_eq!(folds.untested, 0);
    }

    #[test]
    fn seed_balanced_leaves_out_groups_that_never_fit() {
        // Sizes 6, 3, 1 with n = 10, k = 2: capacity 5, so the group of 6 never fits.
        let groups: Vec<String> = ["a"; 6]
            .iter()
            .chain(&["b"; 3])
            .chain(&["c"])
            .map(|s| s.to_string())
            .collect();
        let labels = vec![true; 10];
        let folds = split(CvStrategy::SeedBalanced, 2, &labels, Some(&groups), 0).unwrap();
        assert_eq!(folds.untested, 6);
        assert_eq!(names(&folds, &groups), vec![vec!["b", "c"], vec![]]);
    }

    #[test]
    fn kfold_is_seeded_and_covers_every_item_once() {
        let labels = vec![false; 23];
        let a = split(CvStrategy::Kfold, 5, &labels, None, 7).unwrap();
        let b = split(CvStrategy::Kfold, 5, &labels, None, 7).unwrap();
        let c = split(CvStrategy::Kfold, 5, &labels, None, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut all: Vec<usize> = a.test.concat();
        all.sort();
        assert_eq!(all, (0..23).collect::<Vec<_>>());
        assert_eq!(
            a.test.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![5, 5, 5, 4, 4]
        );
    }

    #[test]
    fn stratified_folds_keep_both_classes() {
        let f = fixture();
        let folds = split(CvStrategy::Stratified, 5, &f.correct, None, 1).unwrap();
        for fold in &folds.test {
            let positives = fold.iter().filter(|&&i| f.correct[i]).count();
            // 42 positives over 5 folds: 8 or 9 in each.
            assert!((8..=9).contains(&positives), "{positives}");
            assert_eq!(fold.len(), 16);
        }
    }

    #[test]
    fn each_impossible_split_has_its_error() {
        let labels = vec![true, false, true];
        let groups: Vec<String> = vec!["a".into(), "a".into(), "b".into()];
        assert_eq!(
            split(CvStrategy::Kfold, 1, &labels, None, 0),
            Err(CvError::TooFewFolds(1))
        );
        assert_eq!(
            split(CvStrategy::Kfold, 4, &labels, None, 0),
            Err(CvError::TooFewItems { items: 3, folds: 4 })
        );
        assert_eq!(
            split(CvStrategy::Group, 2, &labels, None, 0),
            Err(CvError::GroupsRequired { cv: "group" })
        );
        assert_eq!(
            split(CvStrategy::Group, 3, &labels, Some(&groups), 0),
            Err(CvError::TooFewGroups {
                groups: 2,
                folds: 3
            })
        );
        assert_eq!(
            split(CvStrategy::Stratified, 2, &labels, None, 0),
            Err(CvError::TooFewInClass {
                members: 1,
                folds: 2
            })
        );
    }
}
