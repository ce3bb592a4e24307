//! The K-quant panels' product with a prompt's rows on AMX tiles: sixteen
//! activation rows against a pair of panels (sixteen weight rows) at a
//! time. A pair's quants already lie as a tile's weight bytes, four to a
//! lane, so each block's are unpacked once (`unpack`) and used by every
//! tile of rows in a block of the pass. Q4_K's scales are folded into its
//! weights in two parts of three bits (scale = 8 · high + low; a 4-bit
//! quant times either fits a signed byte), so two tiles of products sum a
//! whole block with no stop per sub-block, and two tiles of rows go at a
//! time to keep four chains busy. Q6_K's 8-bit scales times 6-bit quants
//! do not fit, so its tiles give each group of 16's dot products for the
//! vectors to scale. The offsets (Q4_K's mins, Q6_K's 32 · scale) are
//! VNNI vector products of the rows' group sums. Every integer is the
//! vector kernels' own, and the f32 sums are theirs in the same order, so
//! the outputs are the same bits. Only where `tiles::has_tiles`. Not
//! here: the tile instructions (`tiles`), or decode steps' few rows.

use std::arch::x86_64::*;

use rayon::prelude::*;

use super::super::kquant_int8::SuperRows;
use super::super::pair_vectors::load_pair_ps;
use super::super::panel_rows;
use super::super::tiles::{self, Shapes, TILE_ROWS};
use super::{KFormat, PANEL, Panels, RowGroup, SUPER_BLOCK};
use unpack::Unpacked;

mod unpack;

/// The tile registers, the same for both formats: two tiles of activation
/// rows, two of weights and two pairs of sums. Q4_K multiplies two tiles
/// of rows with its weights times their scales' high and low bits: four
/// independent chains of multiply-adds, which the tiles need to keep busy.
/// Q6_K takes two groups' rows and weights at a time, two groups summed
/// while two are read out.
mod registers {
    pub(super) const ACTIVATIONS: [u8; 2] = [0, 1];
    pub(super) const WEIGHTS: [u8; 2] = [2, 3];
    pub(super) const SUMS: [[u8; 2]; 2] = [[4, 5], [6, 7]];
}

/// The tiles' shapes for multiply-adds over `piece` weights of a row
/// ([`group`]): sixteen activation rows of `piece` bytes, sixteen weight
/// rows' `piece` bytes as `piece / 4` rows of four bytes each, and sixteen
/// rows of sixteen i32 sums.
fn shapes(piece: usize) -> Shapes {
    use registers::{ACTIVATIONS, SUMS, WEIGHTS};
    Shapes::new(&[
        (ACTIVATIONS[0], TILE_ROWS, piece),
        (ACTIVATIONS[1], TILE_ROWS, piece),
        (WEIGHTS[0], piece / 4, 64),
        (WEIGHTS[1], piece / 4, 64),
        (SUMS[0][0], TILE_ROWS, 64),
        (SUMS[0][1], TILE_ROWS, 64),
        (SUMS[1][0], TILE_ROWS, 64),
        (SUMS[1][1], TILE_ROWS, 64),
    ])
}

/// A result tile as stored: sixteen rows of sixteen i32.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Sums([i32; TILE_ROWS * TILE_ROWS]);

impl Sums {
    /// Tile `T` as stored.
    ///
    /// # Safety
    /// The tiles are configured.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    unsafe fn of<const T: u8>() -> Sums {
        let mut sums = std::mem::MaybeUninit::<Sums>::uninit();
        // SAFETY: the caller's; `sums` holds sixteen rows of 64 bytes, all
        // of which the store writes, and any bits are i32s.
        unsafe {
            tiles::store::<T>(sums.as_mut_ptr().cast());
            sums.assume_init()
        }
    }

    /// Row `r`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn row(&self, r: usize) -> __m512i {
        let row = &self.0[TILE_ROWS * r..][..TILE_ROWS];
        // SAFETY: the sixteen i32 just sliced, 64-byte aligned.
        unsafe { _mm512_load_si512(row.as_ptr().cast()) }
    }
}

/// What a block of a pair of panels scales its integer sums by.
struct Block<'a> {
    b: usize,
    d: __m512,
    dmin: __m512,
    /// Every activation row's block scales.
    scales: &'a [f32],
}

impl Block<'_> {
    /// A tile of rows' sums for this block, from row `row` on, added to
    /// their accumulators as the vector kernels add them.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn add(
        &self,
        blocks: usize,
        row: usize,
        acc: &mut [__m512],
        products: &[__m512i; TILE_ROWS],
        offsets: &[__m512i; TILE_ROWS],
    ) {
        for (r, a) in acc.iter_mut().enumerate() {
            let scale = _mm512_set1_ps(self.scales[(row + r) * blocks + self.b]);
            let products = _mm512_cvtepi32_ps(products[r]);
            *a = _mm512_fmadd_ps(_mm512_mul_ps(self.d, scale), products, *a);
            let offsets = _mm512_cvtepi32_ps(offsets[r]);
            *a = _mm512_fnmadd_ps(_mm512_mul_ps(self.dmin, scale), offsets, *a);
        }
    }
}

impl Panels {
    /// Whether a pass over `rows` rows goes through the tiles.
    pub(super) fn takes_tiles(&self, rows: usize) -> bool {
        rows >= 2 * TILE_ROWS && (self.outputs / PANEL).is_multiple_of(2) && tiles::has_tiles()
    }

    /// `matmul` on the tiles: whole tiles of rows in blocks split across
    /// threads, and the rows after the last whole tile through the vector
    /// kernels.
    pub(super) fn tiled_matmul(&self, x: &SuperRows) -> Vec<f32> {
        let (rows, outputs) = (x.rows(), self.outputs);
        assert!(self.takes_tiles(rows));
        let tiled = rows / TILE_ROWS * TILE_ROWS;
        let mut y = vec![0f32; rows * outputs];
        let (head, tail) = y.split_at_mut(tiled * outputs);
        let block = panel_rows::block_rows(TILE_ROWS, tiled, rayon::current_num_threads());
        head.par_chunks_mut(block * outputs)
            .enumerate()
            .for_each(|(index, out)| {
                let tiles = out.len() / outputs / TILE_ROWS;
                // SAFETY: `takes_tiles` (asserted) checked `has_tiles`, and
                // `out` holds the block's rows.
                unsafe { self.tile_block(x, index * block, tiles, out) };
            });
        if tiled < rows {
            let rest = panel_rows::matmul(self, rows - tiled, outputs, |first, count| RowGroup {
                x,
                first: tiled + first,
                count,
            });
            tail.copy_from_slice(&rest);
        }
        y
    }

    /// Rows `first..first + 16 · tiles` of `x` against every pair of
    /// panels, into `out` (those rows' outputs).
    ///
    /// # Safety
    /// `tiles::has_tiles` is true.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma,f16c")]
    unsafe fn tile_block(&self, x: &SuperRows, first: usize, tiles: usize, out: &mut [f32]) {
        let (quants, scales, group_sums) = x.parts();
        let inputs = self.blocks * SUPER_BLOCK;
        assert!(first + tiles * TILE_ROWS <= x.rows());
        assert_eq!(out.len(), tiles * TILE_ROWS * self.outputs);
        let piece = group(self.format);
        // SAFETY: the caller's.
        unsafe { tiles::configure(&shapes(piece)) };
        let tile_rows = tile_rows(
            &quants[first * inputs..][..tiles * TILE_ROWS * inputs],
            inputs,
            piece,
        );
        let sum_pairs = sum_pairs(
            self.format,
            &group_sums[first * self.blocks * 16..][..tiles * TILE_ROWS * self.blocks * 16],
        );
        let pairs_per_block = sum_pairs.len() / (tiles * TILE_ROWS * self.blocks);
        let mut unpacked = Unpacked::new();
        let mut acc = vec![_mm512_setzero_ps(); tiles * TILE_ROWS];
        let mut products = [[_mm512_setzero_si512(); TILE_ROWS]; 2];
        let mut offsets = [_mm512_setzero_si512(); TILE_ROWS];
        // Tiles of rows taken at once: two for Q4_K (a last odd one twice,
        // its second copy's sums unused), one for Q6_K.
        let step = match self.format {
            KFormat::Q4K => 2,
            KFormat::Q6K => 1,
        };
        for pair in (0..self.outputs / PANEL).step_by(2) {
            acc.fill(_mm512_setzero_ps());
            for b in 0..self.blocks {
                let index = [pair * self.blocks + b, (pair + 1) * self.blocks + b];
                match self.format {
                    KFormat::Q4K => self.unpack_q4k(index, &mut unpacked),
                    KFormat::Q6K => self.unpack_q6k(index, &mut unpacked),
                }
                let block = self.block(index, b, scales);
                let activations = |t: usize| tile_rows[(t * self.blocks + b) * 4096..].as_ptr();
                for t in (0..tiles).step_by(step) {
                    let both = [t, (t + 1).min(tiles - 1)];
                    // SAFETY: the tiles are configured for this format, and
                    // each tile's block lies as `tile_rows` lays it.
                    unsafe {
                        match self.format {
                            KFormat::Q4K => {
                                q4k_products(both.map(activations), &unpacked, &mut products)
                            }
                            KFormat::Q6K => {
                                q6k_products(activations(t), &unpacked, &mut products[0])
                            }
                        }
                    };
                    for (&t, products) in both.iter().zip(&products).take((tiles - t).min(step)) {
                        for (r, offsets) in offsets.iter_mut().enumerate() {
                            let row = (t * TILE_ROWS + r) * self.blocks + b;
                            let sums = &sum_pairs[row * pairs_per_block..][..pairs_per_block];
                            *offsets = offset_sums(self.format, sums, &unpacked.offset_pairs);
                        }
                        let acc = &mut acc[t * TILE_ROWS..][..TILE_ROWS];
                        block.add(self.blocks, first + t * TILE_ROWS, acc, products, &offsets);
                    }
                }
            }
            for (r, sums) in acc.iter().enumerate() {
                let out = &mut out[r * self.outputs + pair * PANEL..][..2 * PANEL];
                // SAFETY: `out` holds the sixteen values just sliced.
                unsafe { _mm512_storeu_ps(out.as_mut_ptr(), *sums) };
            }
        }
        // SAFETY: the caller's.
        unsafe { tiles::release() };
    }

    /// Block `b` of the pair of panels' blocks `index`: its d and dmin.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn block<'a>(&self, index: [usize; 2], b: usize, scales: &'a [f32]) -> Block<'a> {
        // SAFETY: eight d and dmin per panel block.
        unsafe {
            Block {
                b,
                d: load_pair_ps(
                    self.d[index[0] * PANEL..].as_ptr(),
                    self.d[index[1] * PANEL..].as_ptr(),
                ),
                dmin: load_pair_ps(
                    self.dmin[index[0] * PANEL..].as_ptr(),
                    self.dmin[index[1] * PANEL..].as_ptr(),
                ),
                scales,
            }
        }
    }
}

/// Two tiles of rows' Q4_K Σ_s scale_s · Σ q_w q_x for one block into
/// `products`, each row's in i32 lanes by weight row: scale = 8 · high +
/// low, so each tile of rows sums the weights times the high bits and
/// times the low bits.
///
/// # Safety
/// The tiles are configured with `shapes(64)`, and each of
/// `activations` is a tile of rows' block as [`tile_rows`] lays it.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
unsafe fn q4k_products(
    activations: [*const u8; 2],
    unpacked: &Unpacked,
    products: &mut [[__m512i; TILE_ROWS]; 2],
) {
    use registers::{ACTIVATIONS, SUMS, WEIGHTS};
    // SAFETY: the caller's; each chunk's tile rows are 16 of 64 bytes.
    let sums = unsafe {
        tiles::zero::<{ SUMS[0][0] }>();
        tiles::zero::<{ SUMS[0][1] }>();
        tiles::zero::<{ SUMS[1][0] }>();
        tiles::zero::<{ SUMS[1][1] }>();
        for chunk in 0..SUPER_BLOCK / 64 {
            let at = 1024 * chunk;
            tiles::load::<{ ACTIVATIONS[0] }>(activations[0].add(1024 * chunk), 64);
            tiles::load::<{ ACTIVATIONS[1] }>(activations[1].add(1024 * chunk), 64);
            tiles::load::<{ WEIGHTS[0] }>(unpacked.weights[at..].as_ptr(), 64);
            tiles::load::<{ WEIGHTS[1] }>(unpacked.low[at..].as_ptr(), 64);
            tiles::dot::<{ SUMS[0][0] }, { ACTIVATIONS[0] }, { WEIGHTS[0] }>();
            tiles::dot::<{ SUMS[1][0] }, { ACTIVATIONS[1] }, { WEIGHTS[0] }>();
            tiles::dot::<{ SUMS[0][1] }, { ACTIVATIONS[0] }, { WEIGHTS[1] }>();
            tiles::dot::<{ SUMS[1][1] }, { ACTIVATIONS[1] }, { WEIGHTS[1] }>();
        }
        [
            [Sums::of::<{ SUMS[0][0] }>(), Sums::of::<{ SUMS[0][1] }>()],
            [Sums::of::<{ SUMS[1][0] }>(), Sums::of::<{ SUMS[1][1] }>()],
        ]
    };
    for (products, [high, low]) in products.iter_mut().zip(&sums) {
        for (r, p) in products.iter_mut().enumerate() {
            *p = _mm512_add_epi32(_mm512_slli_epi32::<3>(high.row(r)), low.row(r));
        }
    }
}

/// A row's Σ_g offset_g · Σ q_x for one block, in i32 lanes by weight
/// row, from its pairs of sums (`sum_pairs`) and the block's
/// `offset_pairs`: Q4_K's over sub-blocks, Q6_K's over groups with its
/// offset, its scale times 32.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma,f16c")]
fn offset_sums(format: KFormat, sum_pairs: &[i32], offset_pairs: &[__m512i; 8]) -> __m512i {
    let mut sums = _mm512_setzero_si512();
    for (&two, &offsets) in sum_pairs.iter().zip(offset_pairs) {
        sums = _mm512_dpwssd_epi32(sums, offsets, _mm512_set1_epi32(two));
    }
    match format {
        KFormat::Q4K => sums,
        KFormat::Q6K => _mm512_slli_epi32::<5>(sums),
    }
}

/// Each row's and block's pairs of activation sums, the low and high i16
/// of an i32, from its sixteen group sums: Q4_K's four pairs of sub-block
/// sums (two groups each), Q6_K's eight pairs of group sums.
fn sum_pairs(format: KFormat, group_sums: &[i16]) -> Vec<i32> {
    let pair = |even: i16, odd: i16| i32::from(even as u16) | (i32::from(odd as u16) << 16);
    match format {
        KFormat::Q4K => group_sums
            .chunks_exact(4)
            .map(|g| pair(g[0] + g[1], g[2] + g[3]))
            .collect(),
        KFormat::Q6K => group_sums
            .chunks_exact(2)
            .map(|g| pair(g[0], g[1]))
            .collect(),
    }
}

/// Sixteen rows' Q6_K Σ_g scale_g · Σ q_w q_x for one block into
/// `products`, each row's in i32 lanes by weight row. Groups go two at a
/// time into one of two pairs of product tiles, the next two groups'
/// multiply-adds issued before the last two's products are read out, so
/// that the tiles work while the vectors scale.
///
/// # Safety
/// The tiles are configured with `shapes(16)`, and `activations` is a
/// tile of rows' block as [`tile_rows`] lays it.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
unsafe fn q6k_products(
    activations: *const u8,
    unpacked: &Unpacked,
    products: &mut [__m512i; TILE_ROWS],
) {
    use registers::SUMS;
    *products = [_mm512_setzero_si512(); TILE_ROWS];
    let mut stored = [[std::mem::MaybeUninit::<Sums>::uninit(); 2]; 2];
    // SAFETY (all below): the caller's.
    unsafe { q6k_dots::<{ SUMS[0][0] }, { SUMS[0][1] }>(activations, unpacked, 0) };
    for two in 0..=8 {
        if two < 8 {
            // Store groups 2 · two and 2 · two + 1's products, then set the
            // next two going.
            let [first, second] = &mut stored[two % 2];
            let next = 2 * two + 2;
            unsafe {
                if two % 2 == 0 {
                    tiles::store::<{ SUMS[0][0] }>(first.as_mut_ptr().cast());
                    tiles::store::<{ SUMS[0][1] }>(second.as_mut_ptr().cast());
                    if next < 16 {
                        q6k_dots::<{ SUMS[1][0] }, { SUMS[1][1] }>(activations, unpacked, next);
                    }
                } else {
                    tiles::store::<{ SUMS[1][0] }>(first.as_mut_ptr().cast());
                    tiles::store::<{ SUMS[1][1] }>(second.as_mut_ptr().cast());
                    if next < 16 {
                        q6k_dots::<{ SUMS[0][0] }, { SUMS[0][1] }>(activations, unpacked, next);
                    }
                }
            }
        }
        if two == 0 {
            continue;
        }
        // Read out the two groups stored the time before, by now in cache.
        let group = 2 * (two - 1);
        for (turn, sums) in stored[(two - 1) % 2].iter().enumerate() {
            // SAFETY: stored in the last pass, every byte.
            let sums = unsafe { sums.assume_init_ref() };
            let scales = unpacked.scales[group + turn];
            for (r, p) in products.iter_mut().enumerate() {
                *p = _mm512_add_epi32(*p, _mm512_mullo_epi32(sums.row(r), scales));
            }
        }
    }
}

/// Groups `group` and `group + 1`'s dot products into tiles `S0` and `S1`.
///
/// # Safety
/// As [`q6k_products`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
unsafe fn q6k_dots<const S0: u8, const S1: u8>(
    activations: *const u8,
    unpacked: &Unpacked,
    group: usize,
) {
    use registers::{ACTIVATIONS, WEIGHTS};
    let weights = |g: usize| unpacked.weights[256 * g..].as_ptr();
    // SAFETY: the caller's; each group's activations are sixteen rows of
    // 16 bytes, its weights four rows of 64.
    unsafe {
        tiles::load::<{ ACTIVATIONS[0] }>(activations.add(256 * group), 16);
        tiles::load::<{ ACTIVATIONS[1] }>(activations.add(256 * (group + 1)), 16);
        tiles::load::<{ WEIGHTS[0] }>(weights(group), 64);
        tiles::load::<{ WEIGHTS[1] }>(weights(group + 1), 64);
        tiles::zero::<S0>();
        tiles::zero::<S1>();
        tiles::dot::<S0, { ACTIVATIONS[0] }, { WEIGHTS[0] }>();
        tiles::dot::<S1, { ACTIVATIONS[1] }, { WEIGHTS[1] }>();
    }
}

/// Weights of a row that one tile multiply-add takes: Q4_K's 64 (two
/// sub-blocks, the scales being folded into the weights), Q6_K's group of
/// 16.
fn group(format: KFormat) -> usize {
    match format {
        KFormat::Q4K => 64,
        KFormat::Q6K => 16,
    }
}

/// Tiles of activation rows laid out for the tiles' loads: tile t's block
/// b in 4,096 bytes from (t · blocks + b) · 4,096, as its pieces of `piece`
/// weights, each sixteen rows of `piece` bytes. A tile load then reads
/// contiguous bytes, where rows `inputs` apart made it wait on the cache.
fn tile_rows(quants: &[i8], inputs: usize, piece: usize) -> Vec<u8> {
    let blocks = inputs / SUPER_BLOCK;
    let tiles = quants.len() / inputs / TILE_ROWS;
    let mut laid = vec![0u8; quants.len()];
    for t in 0..tiles {
        for r in 0..TILE_ROWS {
            let row = &quants[(t * TILE_ROWS + r) * inputs..][..inputs];
            for (p, piece_of_row) in row.chunks_exact(piece).enumerate() {
                let (b, within) = (p * piece / SUPER_BLOCK, p % (SUPER_BLOCK / piece));
                let at = (t * blocks + b) * 4096 + within * TILE_ROWS * piece + r * piece;
                for (to, &from) in laid[at..at + piece].iter_mut().zip(piece_of_row) {
                    *to = from as u8;
                }
            }
        }
    }
    laid
}
