//! How a weight matrix kept as panels of eight weight rows (the K-quants'
//! `kquant_panels`, the 32-weight blocks' `packed/panels`) is multiplied by
//! activation rows: which rows go through a panel together, and how the
//! work is split across rayon's threads. A pass over a prompt is split by
//! blocks of rows, each panel taken through a block's groups of four rows
//! while it is in cache; a decode step's few rows by panels. Where the
//! kernel has pairs (512-bit vectors of two panels), panels go two at a
//! time. Each output is computed the same way whatever the split or the
//! pairing, so a row gets the same bits alone as in a batch. Not here: any
//! kernel, or how a group of rows is prepared.

use rayon::prelude::*;

/// Weight rows per panel: one output per f32 lane.
pub(super) const PANEL: usize = 8;
/// Activation rows that go through a panel together.
pub(super) const ROWS: usize = 4;

/// A panel kernel: one panel of eight weight rows against 1 to [`ROWS`]
/// prepared activation rows.
pub(super) trait Kernel<'a>: Sync {
    /// Activation rows made ready for the kernel.
    type Rows: Sync + 'a;

    /// How many rows `rows` holds.
    fn count(rows: &Self::Rows) -> usize;

    /// Panel `panel` against `A` = [`Kernel::count`] rows; row a's eight
    /// outputs go to `out[a · stride..]`. `A` is a constant so that each
    /// row's accumulators stay in registers.
    ///
    /// # Safety
    /// The CPU has AVX2, FMA and F16C, and `out` holds at least
    /// (A - 1) · stride + 8 values.
    unsafe fn rows<const A: usize>(
        &self,
        panel: usize,
        rows: &Self::Rows,
        out: &mut [f32],
        stride: usize,
    );

    /// Whether [`Kernel::pair_rows`] runs on this CPU.
    fn pairs(&self) -> bool;

    /// Panels `panel` and `panel + 1` at once, each row's sixteen outputs
    /// to `out[a · stride..]`, the same bits as two calls of
    /// [`Kernel::rows`].
    ///
    /// # Safety
    /// [`Kernel::pairs`] is true, `panel + 1` is a panel, and `out` holds
    /// at least (A - 1) · stride + 16 values.
    unsafe fn pair_rows<const A: usize>(
        &self,
        panel: usize,
        rows: &Self::Rows,
        out: &mut [f32],
        stride: usize,
    );
}

/// One panel against prepared rows, through the kernel for their count.
fn panel<'a, K: Kernel<'a>>(
    kernel: &K,
    panel: usize,
    rows: &K::Rows,
    out: &mut [f32],
    stride: usize,
) {
    let count = K::count(rows);
    assert!((1..=ROWS).contains(&count));
    assert!(out.len() >= (count - 1) * stride + PANEL);
    // SAFETY: a kernel exists only where the CPU has AVX2 (its constructor
    // checks), and `out` holds every row's eight outputs (asserted above).
    unsafe {
        match count {
            1 => kernel.rows::<1>(panel, rows, out, stride),
            2 => kernel.rows::<2>(panel, rows, out, stride),
            3 => kernel.rows::<3>(panel, rows, out, stride),
            _ => kernel.rows::<ROWS>(panel, rows, out, stride),
        }
    }
}

/// Panels `first` and `first + 1` against prepared rows, through the
/// paired kernel for their count.
fn panel_pair<'a, K: Kernel<'a>>(
    kernel: &K,
    first: usize,
    rows: &K::Rows,
    out: &mut [f32],
    stride: usize,
) {
    let count = K::count(rows);
    assert!(kernel.pairs() && (1..=ROWS).contains(&count));
    assert!(out.len() >= (count - 1) * stride + 2 * PANEL);
    // SAFETY: `pairs` said the CPU runs the paired kernel, the caller
    // passes a first panel that has a next, and `out` holds every row's
    // sixteen outputs (asserted above).
    unsafe {
        match count {
            1 => kernel.pair_rows::<1>(first, rows, out, stride),
            2 => kernel.pair_rows::<2>(first, rows, out, stride),
            3 => kernel.pair_rows::<3>(first, rows, out, stride),
            _ => kernel.pair_rows::<ROWS>(first, rows, out, stride),
        }
    }
}

/// Rows per block of a pass over `rows` rows, in whole units of `unit`
/// rows (a group of [`ROWS`], or the tiled kernel's tile of 16): the rows
/// that go through each panel while it is in cache, so that the weights
/// are read once per block rather than once per unit (a 1.5B model's 1 GB
/// per four prompt tokens made a pass wait on memory). At most
/// [`MAX_BLOCK_ROWS`], so that a block's activations stay in the core's
/// cache, and fewer where that leaves each thread at least two blocks.
pub(super) fn block_rows(unit: usize, rows: usize, threads: usize) -> usize {
    let units = rows.div_ceil(unit).div_ceil(2 * threads);
    unit * units.clamp(1, MAX_BLOCK_ROWS / unit)
}

/// Rows per block, at most: 64 rows of 8,960 8-bit values (Qwen 1.5B's
/// widest input) are 573 KB, within a core's L2 here (1 MB). Each block
/// streams every panel from memory once, so 64 rows halve what 32 read:
/// three 1,934-token prompts on 1.5B took 66.3-66.7 s against 68.2-69.7 s
/// (docs/src/benchmarks.md).
const MAX_BLOCK_ROWS: usize = 64;

/// x · Wᵀ as `rows` rows of `outputs` values, `outputs` a multiple of
/// [`PANEL`]: `prepare(first, count)` readies rows `first..first + count`
/// (at most [`ROWS`]) for `kernel`.
pub(super) fn matmul<'a, K: Kernel<'a>>(
    kernel: &K,
    rows: usize,
    outputs: usize,
    prepare: impl Fn(usize, usize) -> K::Rows + Sync,
) -> Vec<f32> {
    debug_assert_eq!(outputs % PANEL, 0);
    let mut y = vec![0f32; rows * outputs];
    let panels = outputs / PANEL;
    let threads = rayon::current_num_threads();
    if rows.div_ceil(ROWS) >= 2 * threads {
        let block = block_rows(ROWS, rows, threads);
        y.par_chunks_mut(block * outputs)
            .enumerate()
            .for_each(|(index, out)| {
                let (first, count) = (index * block, out.len() / outputs);
                let groups: Vec<K::Rows> = (first..first + count)
                    .step_by(ROWS)
                    .map(|start| prepare(start, (first + count - start).min(ROWS)))
                    .collect();
                // Two panels at a time where the kernel has pairs.
                let width = if kernel.pairs() { 2 } else { 1 };
                for p in (0..panels).step_by(width) {
                    for (g, rows) in groups.iter().enumerate() {
                        let out = &mut out[g * ROWS * outputs + PANEL * p..];
                        if p + 1 < panels && width == 2 {
                            panel_pair(kernel, p, rows, out, outputs);
                        } else {
                            panel(kernel, p, rows, out, outputs);
                        }
                    }
                }
            });
        return y;
    }
    // Unit-major: per unit of one panel, or of two where the kernel has
    // pairs and the panels pair up, each row's outputs of the unit in turn.
    let width = if kernel.pairs() && panels.is_multiple_of(2) {
        2
    } else {
        1
    };
    let (unit, units) = (width * PANEL, panels / width);
    const CHUNK_PANELS: usize = 16;
    for first in (0..rows).step_by(ROWS) {
        let count = (rows - first).min(ROWS);
        let group = prepare(first, count);
        let mut sums = vec![0f32; units * count * unit];
        sums.par_chunks_mut(CHUNK_PANELS / width * count * unit)
            .enumerate()
            .for_each(|(chunk, out)| {
                for (i, out) in out.chunks_mut(count * unit).enumerate() {
                    let u = CHUNK_PANELS / width * chunk + i;
                    if width == 2 {
                        panel_pair(kernel, 2 * u, &group, out, unit);
                    } else {
                        panel(kernel, u, &group, out, unit);
                    }
                }
            });
        for (u, sums) in sums.chunks(count * unit).enumerate() {
            for (a, sums) in sums.chunks(unit).enumerate() {
                let at = (first + a) * outputs + unit * u;
                y[at..at + unit].copy_from_slice(sums);
            }
        }
    }
    y
}

/// An activation row's four 8-bit values at `four`, repeated in each of
/// the eight rows' lanes: what a panel's vector of four weights per row
/// is multiplied with. A broadcast from memory is a load, not a shuffle,
/// so the rows stay as quantized (copies repeated eight times made every
/// pass read eight times the activations).
///
/// # Safety
/// `four` points at four readable bytes, and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn broadcast_four(four: *const i8) -> std::arch::x86_64::__m256i {
    // SAFETY: the caller's.
    std::arch::x86_64::_mm256_set1_epi32(unsafe { four.cast::<i32>().read_unaligned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prompt's rows go in blocks of whole groups: at most sixteen groups
    /// (a block's activations stay in a core's cache), and fewer where a
    /// short pass would otherwise leave a thread without two blocks.
    #[test]
    fn blocks_are_whole_groups_capped_and_shared_between_threads() {
        assert_eq!(block_rows(ROWS, 643, 2), 16 * ROWS);
        assert_eq!(block_rows(ROWS, 16, 2), ROWS);
        // 40 rows: ten groups over four blocks' worth of work, three a block.
        assert_eq!(block_rows(ROWS, 40, 2), 3 * ROWS);
        assert_eq!(block_rows(ROWS, 10_000, 16), 16 * ROWS);
        for (rows, threads) in [(17, 2), (100, 2), (643, 4), (5, 1)] {
            let block = block_rows(ROWS, rows, threads);
            assert_eq!(block % ROWS, 0);
            assert!((ROWS..=MAX_BLOCK_ROWS).contains(&block));
        }
        // The tiled kernel's units: 643 rows in blocks of four tiles; the
        // 144 tiled rows of a 150-row pass in blocks of three.
        assert_eq!(block_rows(16, 643, 2), 64);
        assert_eq!(block_rows(16, 144, 2), 48);
    }
}
