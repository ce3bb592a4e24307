//! Smooth ECE (Błasiok and Nakkiran, ICLR 2024), computed as the reference
//! package `relplot` 1.0.3 computes it, so that the two agree to 1e-9.
//!
//! For a bandwidth σ, the residuals f − y and the item counts are spread on
//! a grid of M = max(2000, round(20/σ)) div 2 + 1 points (each item split
//! linearly between its two neighbours), smoothed with a Gaussian kernel of
//! width σ truncated at distance ½ and reflected at 0 and 1, and read at
//! E = max(round(10/σ), 200) evaluation points t; smECE_σ is Σ|N(t)| /
//! Σ(D(t) + 10⁻⁴). The bandwidth σ* is the fixed point smECE_σ = σ, found
//! by ten halvings of [0, 1] (`relplot/metrics.py`); σ* is the upper end,
//! a multiple of 1/1024, and the reported value is smECE at σ*.
//!
//! Not here: the binned ECE (`metrics`), and drawing (`report`).

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use serde::Serialize;

/// relplot's additive floor on the smoothed density.
const DENSITY_FLOOR: f64 = 1e-4;

/// Smooth ECE and the bandwidth it was read at.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SmoothEce {
    pub value: f64,
    pub sigma: f64,
}

/// One point of the smoothed reliability curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SmoothPoint {
    pub confidence: f64,
    /// The kernel-smoothed success rate at `confidence`.
    pub accuracy: f64,
    /// The kernel density of the confidences there (integrates to about 1).
    pub density: f64,
}

/// numpy's `linspace(0, 1, n)`: i·(1/(n−1)), the last point exactly 1.
fn linspace01(n: usize) -> impl Iterator<Item = f64> {
    let step = 1.0 / (n - 1) as f64;
    (0..n).map(move |i| if i + 1 == n { 1.0 } else { i as f64 * step })
}

/// The grid size relplot uses at bandwidth σ.
fn grid_size(sigma: f64) -> usize {
    ((20.0 / sigma).round_ties_even() as usize).max(2000) / 2 + 1
}

/// Items spread onto a grid of `m` points: (left index, right share) each.
struct Spread {
    m: usize,
    left: Vec<u32>,
    share: Vec<f64>,
}

impl Spread {
    fn new(confidence: &[f64], m: usize) -> Spread {
        let (mut left, mut share) = (Vec::with_capacity(confidence.len()), Vec::new());
        for &f in confidence {
            let position = f * (m - 1) as f64;
            let k = (position.floor().max(0.0) as usize).min(m - 2);
            left.push(k as u32);
            share.push(position - k as f64);
        }
        Spread { m, left, share }
    }

    /// The residual grid (Σ w·(f − y)) and the count grid (Σ w) in one pass.
    fn residual_and_count(&self, residual: &[f64], weight: impl Fn(usize) -> f64) -> [Vec<f64>; 2] {
        let (mut sums, mut counts) = (vec![0.0; self.m], vec![0.0; self.m]);
        // No test for a zero weight: it adds nothing, and the branch would
        // be mispredicted on a bootstrap's weights.
        for (i, ((&k, &a), &r)) in self.left.iter().zip(&self.share).zip(residual).enumerate() {
            let w = weight(i);
            let (k, v) = (k as usize, w * r);
            sums[k] += (1.0 - a) * v;
            sums[k + 1] += a * v;
            counts[k] += (1.0 - a) * w;
            counts[k + 1] += a * w;
        }
        [sums, counts]
    }

    /// The grid of `value(i)` summed over items, each split between neighbours.
    fn grid(&self, value: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut grid = vec![0.0; self.m];
        for (i, (&k, &a)) in self.left.iter().zip(&self.share).enumerate() {
            let v = value(i);
            if v != 0.0 {
                grid[k as usize] += (1.0 - a) * v;
                grid[k as usize + 1] += a * v;
            }
        }
        grid
    }
}

/// The reflected, Gaussian-smoothed grids of one grid size and bandwidth.
///
/// relplot convolves each grid, reflected past 0 and 1 (`q ↦ −q` and
/// `q ↦ 2·last − q`), with the Gaussian density of width σ sampled at the
/// grid's points and centred on its middle point, so that it reaches half the
/// axis each way. That is one linear convolution of the reflected grid
/// (3m − 2 points) with the m kernel points, done here by FFT: the two grids
/// of a pair travel as the real and imaginary parts of one complex sequence
/// (the kernel is real), and the reflected grids' spectrum is computed once
/// per grid size, whatever σ. Each smoothed value is the direct sum's to
/// within about 1e-16 of the grid's largest smoothed value (a test checks
/// 1e-12), which leaves smECE's sums unchanged to 1e-12; the drawn curve,
/// computed once, keeps the direct sums (`smooth`), whose near-empty
/// stretches FFT rounding would otherwise swamp.
struct Reflected {
    m: usize,
    /// The spectrum of each pair of reflected grids (a lone last grid pairs with zeros).
    spectra: Vec<Vec<Complex<f64>>>,
}

/// The FFT length: room for the reflected grid, so that the circular
/// convolution equals the linear one at every point read.
fn fft_len(m: usize) -> usize {
    (3 * m - 2).next_power_of_two()
}

thread_local! {
    static PLANNER: RefCell<FftPlanner<f64>> = RefCell::new(FftPlanner::new());
}

fn plan(len: usize, inverse: bool) -> Arc<dyn Fft<f64>> {
    PLANNER.with(|planner| {
        let mut planner = planner.borrow_mut();
        if inverse {
            planner.plan_fft_inverse(len)
        } else {
            planner.plan_fft_forward(len)
        }
    })
}

impl Reflected {
    fn new(grids: &[&[f64]]) -> Reflected {
        let m = grids[0].len();
        let last = m as isize - 1;
        let len = fft_len(m);
        let forward = plan(len, false);
        let spectra = grids
            .chunks(2)
            .map(|pair| {
                let mut buffer = vec![Complex::new(0.0, 0.0); len];
                for q in -last..=2 * last {
                    let r = q.abs();
                    let r = (if r > last { 2 * last - r } else { r }) as usize;
                    let imaginary = pair.get(1).map_or(0.0, |grid| grid[r]);
                    buffer[(q + last) as usize] = Complex::new(pair[0][r], imaginary);
                }
                forward.process(&mut buffer);
                buffer
            })
            .collect();
        Reflected { m, spectra }
    }

    /// Each grid smoothed at bandwidth σ, at every grid point.
    fn smoothed(&self, sigma: f64) -> Vec<Vec<f64>> {
        let (m, last) = (self.m, self.m - 1);
        let len = fft_len(m);
        let mut kernel = vec![Complex::new(0.0, 0.0); len];
        for (slot, u) in kernel.iter_mut().zip(linspace01(m)) {
            slot.re = (-(u - 0.5) * (u - 0.5) / (2.0 * sigma * sigma)).exp()
                / ((2.0 * std::f64::consts::PI).sqrt() * sigma);
        }
        plan(len, false).process(&mut kernel);
        let inverse = plan(len, true);
        let scale = 1.0 / len as f64;
        // Grid point k of the result is the convolution at k + centre + last.
        let offset = m / 2 + last;
        let mut out = Vec::with_capacity(2 * self.spectra.len());
        for spectrum in &self.spectra {
            let mut product: Vec<Complex<f64>> =
                spectrum.iter().zip(&kernel).map(|(a, b)| a * b).collect();
            inverse.process(&mut product);
            let window = &product[offset..offset + m];
            out.push(window.iter().map(|c| c.re * scale).collect());
            out.push(window.iter().map(|c| c.im * scale).collect());
        }
        out
    }
}

/// relplot's reflected, truncated Gaussian smoothing of each grid (all of
/// one size), read by linear interpolation at `points` evaluation points.
///
/// Only the grid values the read-out needs are smoothed, the grids share
/// one pass, and sparse grids (few items) are smoothed from their non-zero
/// points: the same sums as relplot's dense convolution, in another order.
fn smooth<const G: usize>(grids: [&[f64]; G], sigma: f64, points: usize) -> [Vec<f64>; G] {
    let m = grids[0].len();
    let last = m - 1;
    let kernel: Vec<f64> = linspace01(m)
        .map(|u| {
            (-(u - 0.5) * (u - 0.5) / (2.0 * sigma * sigma)).exp()
                / ((2.0 * std::f64::consts::PI).sqrt() * sigma)
        })
        .collect();
    let centre = m / 2;
    let reads = read_points(m, points);
    let mut needed = vec![false; m];
    for &(k, _) in &reads {
        needed[k] = true;
        needed[k + 1] = true;
    }
    let nonzero: Vec<usize> = (0..m)
        .filter(|&g| grids.iter().any(|grid| grid[g] != 0.0))
        .collect();
    let mut smoothed: [Vec<f64>; G] = std::array::from_fn(|_| vec![0.0; m]);
    // Terms past 40σ are below e^-800 of the centre: exactly 0 in f64.
    let reach = ((40.0 * sigma) * last as f64).ceil() as usize;
    let (first, end) = (centre.saturating_sub(reach), (centre + reach).min(last));
    if 3 * nonzero.len() < m {
        // s[k] = Σ_g grid[g] Σ_{q ∈ images of g} kernel[k + centre − q], the
        // images being g and its reflections −g and 2·last − g: one
        // contiguous multiply-add per image, which vectorizes.
        for &g in &nonzero {
            let g_signed = g as isize;
            let left = (g > 0).then_some(-g_signed);
            let right = (g < last).then_some(2 * last as isize - g_signed);
            for q in [Some(g_signed), left, right].into_iter().flatten() {
                // kernel index j = k + centre − q must lie in [first, end].
                let shift = centre as isize - q;
                let lo = (first as isize - shift).max(0);
                let hi = (end as isize - shift).min(last as isize);
                if lo > hi {
                    continue;
                }
                let (lo, hi) = (lo as usize, hi as usize);
                let j0 = (lo as isize + shift) as usize;
                let weights = &kernel[j0..j0 + (hi - lo) + 1];
                for (out, grid) in smoothed.iter_mut().zip(&grids) {
                    let value = grid[g];
                    if value != 0.0 {
                        for (o, w) in out[lo..=hi].iter_mut().zip(weights) {
                            *o += value * w;
                        }
                    }
                }
            }
        }
    } else {
        // Each grid reflected past both ends, so each value is one contiguous
        // dot product: s[k] = Σ_j kernel[j] · grid[refl(k + centre − j)].
        let offset = last as isize;
        let extended: Vec<Vec<f64>> = grids
            .iter()
            .map(|grid| {
                (-offset..=2 * offset)
                    .map(|q| {
                        let q = q.abs();
                        grid[(if q > offset { 2 * offset - q } else { q }) as usize]
                    })
                    .collect()
            })
            .collect();
        for k in (0..m).filter(|&k| needed[k]) {
            let top = k + centre + last;
            for (out, extended) in smoothed.iter_mut().zip(&extended) {
                out[k] = reversed_dot(&kernel[first..=end], &extended[top - end..=top - first]);
            }
        }
    }
    smoothed.map(|s| interpolate(&s, &reads))
}

/// Σ a[i] · b[len − 1 − i], in four running sums so that the compiler can
/// keep them in vector registers (f64 addition is not reassociated for us).
fn reversed_dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let chunks = a.len() / 4;
    let n = b.len();
    for c in 0..chunks {
        for (lane, sum) in sums.iter_mut().enumerate() {
            let i = 4 * c + lane;
            *sum += a[i] * b[n - 1 - i];
        }
    }
    let mut total = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    for i in 4 * chunks..a.len() {
        total += a[i] * b[n - 1 - i];
    }
    total
}

/// Each smoothed grid read at `points` evenly spaced points by linear
/// interpolation between its neighbours, as `numpy.interp` reads it.
fn read_at<const G: usize>(smoothed: &[Vec<f64>], points: usize) -> [Vec<f64>; G] {
    let reads = read_points(smoothed[0].len(), points);
    std::array::from_fn(|g| interpolate(&smoothed[g], &reads))
}

/// Where each of `points` evenly spaced points falls on a grid of `m`: its
/// left grid point and its share of the way to the next.
fn read_points(m: usize, points: usize) -> Vec<(usize, f64)> {
    let last = m - 1;
    let step = 1.0 / last as f64;
    linspace01(points)
        .map(|t| {
            let k = ((t * last as f64) as usize).min(m - 2);
            (k, (t - k as f64 * step) / step)
        })
        .collect()
}

/// The grid `s` read at `reads` by linear interpolation.
fn interpolate(s: &[f64], reads: &[(usize, f64)]) -> Vec<f64> {
    reads
        .iter()
        .map(|&(k, r)| s[k] * (1.0 - r) + s[k + 1] * r)
        .collect()
}

/// What smooth ECE needs of a sample that does not depend on the weights:
/// each item's residual f − y, and the spread at the grid size of every
/// σ ≥ 0.01 (the one nearly every bisection stays on). Prepared once, it
/// serves every bootstrap resample.
pub struct SmoothItems {
    confidence: Vec<f64>,
    residual: Vec<f64>,
    spread: Spread,
    /// Spreads at the other grid sizes a bisection has visited (σ < 0.01),
    /// kept for the next resample, which mostly visits the same ones.
    other_spreads: Mutex<Vec<Arc<Spread>>>,
}

impl SmoothItems {
    pub fn new(confidence: &[f64], correct: &[bool]) -> SmoothItems {
        SmoothItems {
            confidence: confidence.to_vec(),
            residual: confidence
                .iter()
                .zip(correct)
                .map(|(&f, &y)| f - if y { 1.0 } else { 0.0 })
                .collect(),
            spread: Spread::new(confidence, grid_size(1.0)),
            other_spreads: Mutex::new(Vec::new()),
        }
    }

    /// The spread at grid size `m`, made once and shared.
    fn spread_at(&self, m: usize) -> Arc<Spread> {
        let mut spreads = self.other_spreads.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(spread) = spreads.iter().find(|s| s.m == m) {
            return Arc::clone(spread);
        }
        let spread = Arc::new(Spread::new(&self.confidence, m));
        spreads.push(Arc::clone(&spread));
        spread
    }

    /// Smooth ECE with each item counted `weight(i)` times.
    pub fn smooth_ece(&self, weight: impl Fn(usize) -> f64) -> SmoothEce {
        let mut evaluator = Evaluator {
            items: self,
            weight,
            reflected: Vec::new(),
        };
        let holds = |e: &mut Evaluator<_>, sigma: f64| sigma < 0.001 || sigma < e.at(sigma);
        if holds(&mut evaluator, 1.0) {
            return SmoothEce {
                value: evaluator.at(1.0),
                sigma: 1.0,
            };
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..10 {
            let mid = (hi + lo) / 2.0;
            if holds(&mut evaluator, mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        SmoothEce {
            value: evaluator.at(hi),
            sigma: hi,
        }
    }
}

/// The evaluation of smECE at any σ, reusing each grid size's grids and
/// their spectrum.
struct Evaluator<'a, W: Fn(usize) -> f64> {
    items: &'a SmoothItems,
    weight: W,
    reflected: Vec<Reflected>,
}

impl<W: Fn(usize) -> f64> Evaluator<'_, W> {
    /// The residual and count grids at grid size `m`, spread and transformed once.
    fn reflected(&mut self, m: usize) -> &Reflected {
        if let Some(at) = self.reflected.iter().position(|r| r.m == m) {
            return &self.reflected[at];
        }
        let items = self.items;
        let grids = if items.spread.m == m {
            items
                .spread
                .residual_and_count(&items.residual, &self.weight)
        } else {
            items
                .spread_at(m)
                .residual_and_count(&items.residual, &self.weight)
        };
        self.reflected.push(Reflected::new(&[&grids[0], &grids[1]]));
        self.reflected.last().expect("just pushed")
    }

    fn at(&mut self, sigma: f64) -> f64 {
        let points = ((10.0 / sigma).round_ties_even() as usize).max(200);
        let smoothed = self.reflected(grid_size(sigma)).smoothed(sigma);
        let [numerator, density] = read_at::<2>(&smoothed, points);
        let total_residual: f64 = numerator.iter().map(|n| n.abs()).sum();
        let total_density: f64 = density.iter().map(|d| d + DENSITY_FLOOR).sum();
        total_residual / total_density
    }
}

/// Smooth ECE of `confidence` against `correct`, each item counted
/// `weight(i)` times (bootstrap counts; 1 for a plain evaluation).
pub fn smooth_ece(
    confidence: &[f64],
    correct: &[bool],
    weight: impl Fn(usize) -> f64,
) -> SmoothEce {
    SmoothItems::new(confidence, correct).smooth_ece(weight)
}

/// The smoothed reliability curve and confidence density at `points`
/// evenly spaced confidences, with bandwidth `sigma` (relplot's
/// `rel_diagram` without its unseeded bagging).
pub fn smooth_curve(
    confidence: &[f64],
    correct: &[bool],
    sigma: f64,
    points: usize,
) -> Vec<SmoothPoint> {
    let n = confidence.len() as f64;
    let spread = Spread::new(confidence, grid_size(sigma));
    let successes = spread.grid(|i| if correct[i] { 1.0 } else { 0.0 });
    let count = spread.grid(|_| 1.0);
    let mass = spread.grid(|_| 1.0 / n);
    let [successes, count, mass] = smooth([&successes, &count, &mass], sigma, points);
    linspace01(points)
        .zip(successes.iter().zip(&count).zip(&mass))
        .map(|(t, ((s, c), d))| SmoothPoint {
            confidence: t,
            accuracy: s / (c + DENSITY_FLOOR),
            density: *d,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;

    /// The FFT convolution against the direct one, at grid sizes from the
    /// default to a small σ's, on the fixture and on 20,000 skewed items.
    #[test]
    fn the_fft_smoothing_is_the_direct_smoothing() {
        let f = fixture();
        let skewed: Vec<f64> = (0..20_000).map(|i| (i as f64 / 20_000.0).powi(3)).collect();
        let labels: Vec<bool> = (0..20_000).map(|i| (i * 7919) % 10 < 6).collect();
        for (confidence, correct) in [(&f.confidence, &f.correct), (&skewed, &labels)] {
            for sigma in [1.0, 0.3, 0.05, 0.01, 0.004] {
                let m = grid_size(sigma);
                let spread = Spread::new(confidence, m);
                let residuals: Vec<f64> = confidence
                    .iter()
                    .zip(correct.iter())
                    .map(|(&p, &y)| p - f64::from(u8::from(y)))
                    .collect();
                let [residual, count] = spread.residual_and_count(&residuals, |_| 1.0);
                let points = ((10.0 / sigma).round_ties_even() as usize).max(200);
                let fft: [Vec<f64>; 2] = read_at(
                    &Reflected::new(&[&residual, &count]).smoothed(sigma),
                    points,
                );
                let direct = smooth([&residual, &count], sigma, points);
                for (a, b) in fft.iter().zip(&direct) {
                    let scale = b.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
                    for (x, y) in a.iter().zip(b) {
                        assert!((x - y).abs() <= 1e-12 * scale, "σ {sigma}: {x} vs {y}");
                    }
                }
            }
        }
    }

    // Expected values: tests/metrics_expected.py, relplot 1.0.3's smECE.
    #[test]
    fn matches_relplot_on_the_small_fixture() {
        let f = fixture();
        let s = smooth_ece(&f.confidence, &f.correct, |_| 1.0);
        assert_eq!(s.sigma, 0.115234375);
        assert!((s.value - 0.11452663233429981).abs() < 1e-9, "{}", s.value);
    }

    #[test]
    fn weights_count_items_that_many_times() {
        let f = fixture();
        let weights: Vec<f64> = (0..f.confidence.len()).map(|i| (i % 3) as f64).collect();
        let weighted = smooth_ece(&f.confidence, &f.correct, |i| weights[i]);
        let (mut confidence, mut correct) = (Vec::new(), Vec::new());
        for (i, &w) in weights.iter().enumerate() {
            for _ in 0..w as usize {
                confidence.push(f.confidence[i]);
                correct.push(f.correct[i]);
            }
        }
        let repeated = smooth_ece(&confidence, &correct, |_| 1.0);
        assert_eq!(weighted.sigma, repeated.sigma);
        assert!((weighted.value - repeated.value).abs() < 1e-12);
    }
}
