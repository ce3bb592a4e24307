//! Groups as features: each item's group-feature values, the encoders that
//! turn them into levels (categorical values as given, numbers in quantile
//! bins), and the groups, intersections of levels up to a depth.
//!
//! Not here: the fit that corrects the groups (`fit`), their diagnostics
//! (`diagnostics`), reading the columns from a file (`data`).

use serde::{Deserialize, Serialize};

/// One group feature's values, item by item.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureColumn {
    pub name: String,
    pub values: FeatureValues,
}

/// A column is numeric when every cell is a finite number; it is then cut
/// into quantile bins. Otherwise each distinct text is a level.
#[derive(Clone, Debug, PartialEq)]
pub enum FeatureValues {
    Categorical(Vec<String>),
    Numeric(Vec<f64>),
}

impl FeatureValues {
    /// Numeric where every cell parses as a finite number, else categorical.
    pub fn from_cells(cells: Vec<String>) -> FeatureValues {
        let numbers: Option<Vec<f64>> = cells
            .iter()
            .map(|c| c.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect();
        match numbers {
            Some(numbers) => FeatureValues::Numeric(numbers),
            None => FeatureValues::Categorical(cells),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            FeatureValues::Categorical(v) => v.len(),
            FeatureValues::Numeric(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One item's value of one feature, as `apply` reads it from a row.
#[derive(Clone, Debug, PartialEq)]
pub enum FeatureValue<'a> {
    Text(&'a str),
    Number(f64),
}

impl FeatureColumn {
    pub fn value(&self, item: usize) -> FeatureValue<'_> {
        match &self.values {
            FeatureValues::Categorical(v) => FeatureValue::Text(&v[item]),
            FeatureValues::Numeric(v) => FeatureValue::Number(v[item]),
        }
    }
}

/// How one feature's values become levels, learned on the training items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureEncoder {
    pub name: String,
    #[serde(flatten)]
    pub encoding: Encoding,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "encoding", rename_all = "lowercase")]
pub enum Encoding {
    /// The levels with enough training items, sorted; any other value is in
    /// no group of this feature.
    Categorical { levels: Vec<String> },
    /// Level k holds the values with exactly k cut points at or below them.
    Quantile { cuts: Vec<f64> },
}

impl FeatureEncoder {
    /// Learns levels from `column`'s values on `items`: categorical levels
    /// with at least `min_items` items, or the cut points of `quantiles`
    /// equal-mass bins (ties merged, so there may be fewer).
    pub fn fit(
        column: &FeatureColumn,
        items: &[usize],
        quantiles: usize,
        min_items: usize,
    ) -> FeatureEncoder {
        let encoding = match &column.values {
            FeatureValues::Categorical(values) => {
                let mut counts = std::collections::BTreeMap::<&str, usize>::new();
                for &i in items {
                    *counts.entry(values[i].as_str()).or_default() += 1;
                }
                let levels = counts
                    .into_iter()
                    .filter(|&(_, n)| n >= min_items)
                    .map(|(level, _)| level.to_owned())
                    .collect();
                Encoding::Categorical { levels }
            }
            FeatureValues::Numeric(values) => {
                let mut sorted: Vec<f64> = items.iter().map(|&i| values[i]).collect();
                sorted.sort_by(f64::total_cmp);
                let mut cuts: Vec<f64> = (1..quantiles)
                    .filter_map(|q| sorted.get(q * sorted.len() / quantiles).copied())
                    .collect();
                cuts.dedup();
                // A cut at the smallest value would leave its bin empty.
                cuts.retain(|&c| sorted.first().is_some_and(|&lo| c > lo));
                Encoding::Quantile { cuts }
            }
        };
        FeatureEncoder {
            name: column.name.clone(),
            encoding,
        }
    }

    /// The level of `value`, if it has one.
    pub fn level(&self, value: &FeatureValue) -> Option<u32> {
        match (&self.encoding, value) {
            (Encoding::Categorical { levels }, FeatureValue::Text(text)) => levels
                .binary_search_by(|l| l.as_str().cmp(text))
                .ok()
                .map(|k| k as u32),
            // NaN and the infinities are in no bin: they were never learned.
            (Encoding::Quantile { cuts }, FeatureValue::Number(x)) => x
                .is_finite()
                .then(|| cuts.partition_point(|&c| c <= *x) as u32),
            // A number where text was learned (or the reverse) reads as its text.
            (Encoding::Categorical { .. }, FeatureValue::Number(_)) => None,
            (Encoding::Quantile { .. }, FeatureValue::Text(text)) => text
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|x| self.level(&FeatureValue::Number(x))),
        }
    }

    fn level_count(&self) -> usize {
        match &self.encoding {
            Encoding::Categorical { levels } => levels.len(),
            Encoding::Quantile { cuts } => cuts.len() + 1,
        }
    }

    /// A level's name for tables: the category, or its value range.
    pub fn level_name(&self, level: u32) -> String {
        let k = level as usize;
        match &self.encoding {
            Encoding::Categorical { levels } => levels[k].clone(),
            Encoding::Quantile { cuts } => match (k.checked_sub(1).map(|j| cuts[j]), cuts.get(k)) {
                (None, Some(hi)) => format!("< {hi}"),
                (Some(lo), Some(hi)) => format!("[{lo}, {hi})"),
                (Some(lo), None) => format!(">= {lo}"),
                (None, None) => "all".to_owned(),
            },
        }
    }
}

/// A group: the items whose features take every one of these levels (by
/// feature index, ascending). The empty conjunction is every item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub levels: Vec<(u32, u32)>,
}

impl Group {
    pub fn contains(&self, codes: &[Option<u32>]) -> bool {
        self.levels
            .iter()
            .all(|&(f, level)| codes[f as usize] == Some(level))
    }

    /// "language = python ∧ length ∈ [12, 30)", or "all items".
    pub fn name(&self, encoders: &[FeatureEncoder]) -> String {
        if self.levels.is_empty() {
            return "all items".to_owned();
        }
        let parts: Vec<String> = self
            .levels
            .iter()
            .map(|&(f, level)| {
                let encoder = &encoders[f as usize];
                format!("{} = {}", encoder.name, encoder.level_name(level))
            })
            .collect();
        parts.join(" & ")
    }
}

/// Every conjunction of levels of distinct features, up to `depth` of them,
/// the empty one (all items) first, in a fixed order.
pub fn conjunctions(encoders: &[FeatureEncoder], depth: usize) -> Vec<Group> {
    let mut groups = vec![Group { levels: Vec::new() }];
    let mut frontier = groups.clone();
    for _ in 0..depth {
        let mut next = Vec::new();
        for group in &frontier {
            let first_free = group.levels.last().map_or(0, |&(f, _)| f as usize + 1);
            for (f, encoder) in encoders.iter().enumerate().skip(first_free) {
                for level in 0..encoder.level_count() as u32 {
                    let mut levels = group.levels.clone();
                    levels.push((f as u32, level));
                    next.push(Group { levels });
                }
            }
        }
        groups.extend(next.iter().cloned());
        frontier = next;
    }
    groups
}

/// Each item's level of each feature (`None`: in no group of that feature).
pub fn codes_of(
    encoders: &[FeatureEncoder],
    columns: &[FeatureColumn],
    item: usize,
) -> Vec<Option<u32>> {
    encoders
        .iter()
        .zip(columns)
        .map(|(encoder, column)| encoder.level(&column.value(item)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(name: &str, values: &[f64]) -> FeatureColumn {
        FeatureColumn {
            name: name.into(),
            values: FeatureValues::Numeric(values.to_vec()),
        }
    }

    #[test]
    fn quantile_levels_split_at_the_training_quantiles() {
        let column = numeric("length", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        let items: Vec<usize> = (0..8).collect();
        let encoder = FeatureEncoder::fit(&column, &items, 4, 1);
        assert_eq!(
            encoder.encoding,
            Encoding::Quantile {
                cuts: vec![3.0, 5.0, 7.0]
            }
        );
        let levels: Vec<Option<u32>> = (0..8).map(|i| encoder.level(&column.value(i))).collect();
        let expected = [0, 0, 1, 1, 2, 2, 3, 3].map(Some);
        assert_eq!(levels, expected);
        assert_eq!(encoder.level_name(0), "< 3");
        assert_eq!(encoder.level_name(3), ">= 7");
    }

    #[test]
    fn rare_categories_join_no_group_and_text_columns_stay_text() {
        let cells: Vec<String> = ["py", "py", "go", "py", "rs"].map(String::from).to_vec();
        let column = FeatureColumn {
            name: "language".into(),
            values: FeatureValues::from_cells(cells),
        };
        let encoder = FeatureEncoder::fit(&column, &[0, 1, 2, 3, 4], 4, 2);
        assert_eq!(
            encoder.encoding,
            Encoding::Categorical {
                levels: vec!["py".into()]
            }
        );
        assert_eq!(encoder.level(&FeatureValue::Text("py")), Some(0));
        assert_eq!(encoder.level(&FeatureValue::Text("go")), None);
    }

    #[test]
    fn conjunctions_count_every_intersection_once() {
        let a = FeatureEncoder {
            name: "a".into(),
            encoding: Encoding::Quantile { cuts: vec![1.0] },
        };
        let b = FeatureEncoder {
            name: "b".into(),
            encoding: Encoding::Categorical {
                levels: vec!["x".into(), "y".into(), "z".into()],
            },
        };
        let encoders = [a, b];
        // all + 2 + 3 singles + 2·3 pairs.
        assert_eq!(conjunctions(&encoders, 2).len(), 1 + 5 + 6);
        assert_eq!(conjunctions(&encoders, 1).len(), 1 + 5);
        let pair = &conjunctions(&encoders, 2)[7];
        assert_eq!(pair.name(&encoders), "a = < 1 & b = y");
        assert!(pair.contains(&[Some(0), Some(1)]));
        assert!(!pair.contains(&[Some(0), None]));
    }
}
