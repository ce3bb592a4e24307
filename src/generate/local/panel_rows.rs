//! How a weight matrix kept as panels of eight weight rows (the K-quants'
//! `kquant_panels`, the 32-weight blocks' `packed/panels`) is multiplied by
//! activation rows: which rows go through a panel together, and how the
//! work is split across rayon's threads. A pass over a prompt is split by
//! groups of rows, each group prepared once and taken through every panel;
//! a decode step's few rows by panels. Each output is computed the same way
//! whatever the split, so a row gets the same bits alone as in a batch. Not
//! here: any kernel, or how a group of rows is prepared.

use rayon::prelude::*;

/// Weight rows per panel: one output per f32 lane.
pub(super) const PANEL: usize = 8;
/// Activation rows that go through a panel together.
pub(super) const ROWS: usize = 4;

/// x · Wᵀ as `rows` rows of `outputs` values, `outputs` a multiple of
/// [`PANEL`]. `prepare(first, count)` readies rows `first..first + count`
/// (at most [`ROWS`]) for the kernel; `panel(p, group, out, stride)` writes
/// each prepared row a's eight outputs of panel p to `out[a · stride..]`.
pub(super) fn matmul<G: Sync>(
    rows: usize,
    outputs: usize,
    prepare: impl Fn(usize, usize) -> G + Sync,
    panel: impl Fn(usize, &G, &mut [f32], usize) + Sync,
) -> Vec<f32> {
    debug_assert_eq!(outputs % PANEL, 0);
    let mut y = vec![0f32; rows * outputs];
    let panels = outputs / PANEL;
    if rows.div_ceil(ROWS) >= 2 * rayon::current_num_threads() {
        y.par_chunks_mut(ROWS * outputs)
            .enumerate()
            .for_each(|(group, out)| {
                let count = out.len() / outputs;
                let rows = prepare(group * ROWS, count);
                for p in 0..panels {
                    panel(p, &rows, &mut out[PANEL * p..], outputs);
                }
            });
        return y;
    }
    // Panel-major: per panel, each row's eight outputs in turn.
    const CHUNK: usize = 16;
    for first in (0..rows).step_by(ROWS) {
        let count = (rows - first).min(ROWS);
        let group = prepare(first, count);
        let mut sums = vec![0f32; panels * count * PANEL];
        sums.par_chunks_mut(CHUNK * count * PANEL)
            .enumerate()
            .for_each(|(chunk, out)| {
                for (i, out) in out.chunks_mut(count * PANEL).enumerate() {
                    panel(CHUNK * chunk + i, &group, out, PANEL);
                }
            });
        for (p, sums) in sums.chunks(count * PANEL).enumerate() {
            for (a, sums) in sums.chunks(PANEL).enumerate() {
                let at = (first + a) * outputs + PANEL * p;
                y[at..at + PANEL].copy_from_slice(sums);
            }
        }
    }
    y
}

/// Each four of `quants` repeated [`PANEL`] times: the 32 bytes that a
/// panel's vector of four weights per row is multiplied with, so that a
/// kernel loads them rather than spending a shuffle on each.
pub(super) fn expand_fours(quants: &[i8]) -> Vec<i8> {
    const STEP: usize = 4;
    let mut expanded = vec![0i8; quants.len() * PANEL];
    for (four, out) in quants
        .chunks_exact(STEP)
        .zip(expanded.chunks_exact_mut(STEP * PANEL))
    {
        for copy in out.chunks_exact_mut(STEP) {
            copy.copy_from_slice(four);
        }
    }
    expanded
}
