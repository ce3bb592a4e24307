//! k-means over embedding vectors, for a group feature made of clusters
//! (issue "multicalibration": the code's SentenceBERT embedding in k
//! clusters). Seeded k-means++ initialisation, then Lloyd's iterations to a
//! fixed point; ties go to the lower cluster index, so the same vectors and
//! seed give the same clusters. Not the embedding (the pipeline's, with
//! `score`), and no grouping beyond the cluster index.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Lloyd's iterations at most.
const MAX_ITERATIONS: usize = 300;

fn distance2(a: &[f32], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, c)| (f64::from(*x) - c).powi(2))
        .sum()
}

/// The cluster of each point among `k` (fewer where there are fewer
/// distinct points), numbered by each cluster's first point in input order.
pub fn kmeans(points: &[Vec<f32>], k: usize, seed: u64) -> Vec<usize> {
    if points.is_empty() || k == 0 {
        return vec![0; points.len()];
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut centres = plus_plus(points, k, &mut rng);
    let mut assignment = vec![usize::MAX; points.len()];
    for _ in 0..MAX_ITERATIONS {
        let next: Vec<usize> = points.iter().map(|p| nearest(p, &centres)).collect();
        if next == assignment {
            break;
        }
        assignment = next;
        centres = means(points, &assignment, &centres);
    }
    renumber(&assignment)
}

/// k-means++: the first centre at random, each next one drawn with
/// probability proportional to the squared distance to the nearest chosen.
fn plus_plus(points: &[Vec<f32>], k: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
    let as_centre = |p: &Vec<f32>| p.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let mut centres = vec![as_centre(&points[rng.random_range(0..points.len())])];
    while centres.len() < k {
        let d2: Vec<f64> = points
            .iter()
            .map(|p| {
                centres
                    .iter()
                    .map(|c| distance2(p, c))
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let total: f64 = d2.iter().sum();
        if total <= 0.0 {
            break;
        }
        let mut target = rng.random_range(0.0..total);
        let chosen = d2
            .iter()
            .position(|&d| {
                target -= d;
                target < 0.0
            })
            .unwrap_or(points.len() - 1);
        centres.push(as_centre(&points[chosen]));
    }
    centres
}

fn nearest(point: &[f32], centres: &[Vec<f64>]) -> usize {
    let mut best = (0, f64::INFINITY);
    for (i, c) in centres.iter().enumerate() {
        let d = distance2(point, c);
        if d < best.1 {
            best = (i, d);
        }
    }
    best.0
}

/// Each cluster's mean; an emptied cluster keeps its old centre.
fn means(points: &[Vec<f32>], assignment: &[usize], old: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut sums = vec![vec![0.0; old[0].len()]; old.len()];
    let mut counts = vec![0usize; old.len()];
    for (p, &a) in points.iter().zip(assignment) {
        counts[a] += 1;
        for (s, &x) in sums[a].iter_mut().zip(p) {
            *s += f64::from(x);
        }
    }
    sums.into_iter()
        .zip(counts)
        .zip(old)
        .map(|((sum, n), old)| {
            if n == 0 {
                old.clone()
            } else {
                sum.into_iter().map(|s| s / n as f64).collect()
            }
        })
        .collect()
}

fn renumber(assignment: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::new();
    assignment
        .iter()
        .map(|a| match order.iter().position(|o| o == a) {
            Some(i) => i,
            None => {
                order.push(*a);
                order.len() - 1
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separated_blobs_are_found_whatever_the_seed() {
        let mut points = Vec::new();
        for (cx, cy) in [(0.0f32, 0.0f32), (10.0, 0.0), (0.0, 10.0)] {
            for i in 0..10 {
                let jitter = i as f32 * 0.05;
                points.push(vec![cx + jitter, cy - jitter]);
            }
        }
        for seed in 0..5 {
            let labels = kmeans(&points, 3, seed);
            for blob in 0..3 {
                let first = labels[blob * 10];
                assert!(
                    labels[blob * 10..blob * 10 + 10]
                        .iter()
                        .all(|&l| l == first)
                );
            }
            assert_eq!(labels[0], 0);
            assert_eq!((labels[10], labels[20]), (1, 2), "numbered by first point");
        }
        assert_eq!(kmeans(&points, 3, 7), kmeans(&points, 3, 7));
        // Fewer distinct points than clusters.
        assert_eq!(kmeans(&[vec![1.0], vec![1.0]], 4, 0), vec![0, 0]);
    }
}
