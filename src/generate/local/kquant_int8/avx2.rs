//! The AVX2 kernels of `kquant_int8`: Q4_K and Q6_K super-blocks against
//! 8-bit activation rows in integers. Chosen at run time where the CPU has
//! AVX2; `kquant_int8`'s portable loop gives the same sums.

use super::super::packed::horizontal_sum;
use super::{GROUPS, KFormat, SUPER_BLOCK, SuperRows};
use std::arch::x86_64::*;

/// Up to this many rows go through the unpacked weight row together.
const ROWS: usize = 4;

/// How far ahead of the block in hand the weights are prefetched, in
/// bytes (a prefetch never faults, so it may point past the matrix).
const PREFETCH_AHEAD: usize = 2048;

/// i16 lanes of a block's chunk scales: eight per group.
const SCALE_LANES: usize = 8 * GROUPS;

/// A weight row unpacked once for all the activation rows: per block,
/// the quants, the scales laid out for each 32-weight chunk (16 lanes:
/// eight of group 2c, eight of 2c + 1), the offsets, d and dmin. One per
/// thread, refilled for each weight row, so that a product allocates
/// nothing.
#[derive(Default)]
struct UnpackedRow {
    quants: Vec<u8>,
    chunk_scales: Vec<i16>,
    offsets: Vec<i16>,
    d: Vec<f32>,
    dmin: Vec<f32>,
}

std::thread_local! {
    static ROW: std::cell::RefCell<UnpackedRow> = std::cell::RefCell::default();
}

impl UnpackedRow {
    #[target_feature(enable = "avx2,fma,f16c")]
    fn fill(&mut self, format: KFormat, weight_row: &[u8]) {
        let blocks = weight_row.len() / format.block_bytes();
        self.quants.resize(blocks * SUPER_BLOCK, 0);
        self.chunk_scales.resize(blocks * SCALE_LANES, 0);
        self.offsets.resize(blocks * GROUPS, 0);
        self.d.clear();
        self.dmin.clear();
        for (b, block) in weight_row.chunks_exact(format.block_bytes()).enumerate() {
            // Reading the weights is a decode step's cost: ask for them
            // ahead of the unpacking, past the row's end into the next.
            for line in (0..format.block_bytes()).step_by(64) {
                let ahead = block.as_ptr().wrapping_add(PREFETCH_AHEAD + line);
                _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
            }
            let quants = &mut self.quants[b * SUPER_BLOCK..(b + 1) * SUPER_BLOCK];
            let scales = &mut self.chunk_scales[b * SCALE_LANES..(b + 1) * SCALE_LANES];
            let offsets = &mut self.offsets[b * GROUPS..(b + 1) * GROUPS];
            let (d, dmin) = match format {
                KFormat::Q4K => {
                    unpack_q4k(block, quants);
                    q4k_scales(block, scales, offsets)
                }
                KFormat::Q6K => {
                    unpack_q6k(block, quants);
                    q6k_scales(block, scales, offsets)
                }
            };
            self.d.push(d);
            self.dmin.push(dmin);
        }
    }
}

/// The two f16 values of a word (low half first), widened exactly.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn halves(pair: u32) -> (f32, f32) {
    let wide = _mm_cvtph_ps(_mm_cvtsi32_si128(pair as i32));
    (
        _mm_cvtss_f32(wide),
        _mm_cvtss_f32(_mm_shuffle_ps::<1>(wide, wide)),
    )
}

/// A Q4_K block's chunk scales (chunk c is sub-block c) and group
/// offsets (sub-block j's min for groups 2j and 2j + 1), from its 12
/// bytes of 6-bit values unpacked in three words as llama.cpp does;
/// returns d and dmin.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn q4k_scales(block: &[u8], scales: &mut [i16], offsets: &mut [i16]) -> (f32, f32) {
    const LOW6: u32 = 0x3f3f_3f3f;
    const LOW4: u32 = 0x0f0f_0f0f;
    const LOW2: u32 = 0x0303_0303;
    let word = |k: usize| {
        u32::from_le_bytes([
            block[4 + 4 * k],
            block[5 + 4 * k],
            block[6 + 4 * k],
            block[7 + 4 * k],
        ])
    };
    let (a, b, c) = (word(0), word(1), word(2));
    // Bytes: the eight scales, then the eight mins.
    let words = [
        a & LOW6,
        (c & LOW4) | (((a >> 6) & LOW2) << 4),
        b & LOW6,
        ((c >> 4) & LOW4) | (((b >> 6) & LOW2) << 4),
    ];
    let packed = _mm_set_epi32(
        words[3] as i32,
        words[2] as i32,
        words[1] as i32,
        words[0] as i32,
    );
    let wide = _mm256_cvtepu8_epi16(packed);
    let (sc, mins) = (
        _mm256_castsi256_si128(wide),
        _mm256_extracti128_si256::<1>(wide),
    );
    let both = _mm256_set_m128i(sc, sc);
    for chunk in 0..8 {
        // Lane pair (2·chunk, 2·chunk + 1) is scale `chunk` as an i16.
        let pick = _mm256_set1_epi16((2 * chunk as i16) | ((2 * chunk as i16 + 1) << 8));
        // SAFETY: scales holds 128 i16, chunk's 16 of them from 16 · chunk.
        unsafe {
            let out = scales.as_mut_ptr().add(16 * chunk).cast();
            _mm256_storeu_si256(out, _mm256_shuffle_epi8(both, pick));
        }
    }
    let doubled = _mm256_set_m128i(
        _mm_unpackhi_epi16(mins, mins),
        _mm_unpacklo_epi16(mins, mins),
    );
    // SAFETY: offsets holds sixteen i16.
    unsafe { _mm256_storeu_si256(offsets.as_mut_ptr().cast(), doubled) };
    halves(u32::from_le_bytes([block[0], block[1], block[2], block[3]]))
}

/// A Q6_K block's chunk scales (chunk c: eight lanes of group 2c's
/// signed scale, eight of 2c + 1's) and offsets (32 · scale); returns
/// d twice.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn q6k_scales(block: &[u8], scales: &mut [i16], offsets: &mut [i16]) -> (f32, f32) {
    // SAFETY: the sixteen scales are bytes 192..208 of a Q6_K block.
    let bytes = unsafe { _mm_loadu_si128(block.as_ptr().add(192).cast()) };
    let wide = _mm256_cvtepi8_epi16(bytes);
    // SAFETY: offsets holds sixteen i16.
    unsafe { _mm256_storeu_si256(offsets.as_mut_ptr().cast(), _mm256_slli_epi16::<5>(wide)) };
    let halves_of = [
        _mm256_permute2x128_si256::<0x00>(wide, wide),
        _mm256_permute2x128_si256::<0x11>(wide, wide),
    ];
    for chunk in 0..8 {
        let (first, second) = ((2 * chunk % 8) as i16, (2 * chunk % 8 + 1) as i16);
        let pick = _mm256_set_m128i(
            _mm_set1_epi16((2 * second) | ((2 * second + 1) << 8)),
            _mm_set1_epi16((2 * first) | ((2 * first + 1) << 8)),
        );
        let source = halves_of[chunk / 4];
        // SAFETY: scales holds 128 i16, chunk's 16 of them from 16 · chunk.
        unsafe {
            let out = scales.as_mut_ptr().add(16 * chunk).cast();
            _mm256_storeu_si256(out, _mm256_shuffle_epi8(source, pick));
        }
    }
    let (d, _) = halves(u32::from(u16::from_le_bytes([block[208], block[209]])));
    (d, d)
}

/// A Q4_K block's nibbles in weight order: per 32 bytes, the low
/// nibbles are one sub-block and the high ones the next.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn unpack_q4k(block: &[u8], quants: &mut [u8]) {
    let mask = _mm256_set1_epi8(0x0F);
    for pair in 0..4 {
        // SAFETY: a Q4_K block's nibbles are bytes 16..144 and quants
        // holds 256 bytes.
        unsafe {
            let q = _mm256_loadu_si256(block.as_ptr().add(16 + 32 * pair).cast());
            let out = quants.as_mut_ptr().add(64 * pair);
            _mm256_storeu_si256(out.cast(), _mm256_and_si256(q, mask));
            let high = _mm256_and_si256(_mm256_srli_epi16::<4>(q), mask);
            _mm256_storeu_si256(out.add(32).cast(), high);
        }
    }
}

/// A Q6_K block's 6-bit quants in weight order: per half, the low
/// nibbles of two 32-byte runs and the bit pairs of one.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn unpack_q6k(block: &[u8], quants: &mut [u8]) {
    let (low, bits) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(0x30));
    for h in 0..2 {
        // SAFETY: ql is bytes 0..128 and qh bytes 128..192 of a Q6_K
        // block, and quants holds 256 bytes.
        unsafe {
            let ql0 = _mm256_loadu_si256(block.as_ptr().add(64 * h).cast());
            let ql1 = _mm256_loadu_si256(block.as_ptr().add(64 * h + 32).cast());
            let qh = _mm256_loadu_si256(block.as_ptr().add(128 + 32 * h).cast());
            let chunks = [
                (_mm256_and_si256(ql0, low), _mm256_slli_epi16::<4>(qh)),
                (_mm256_and_si256(ql1, low), _mm256_slli_epi16::<2>(qh)),
                (_mm256_and_si256(_mm256_srli_epi16::<4>(ql0), low), qh),
                (
                    _mm256_and_si256(_mm256_srli_epi16::<4>(ql1), low),
                    _mm256_srli_epi16::<2>(qh),
                ),
            ];
            for (k, (nibbles, high)) in chunks.into_iter().enumerate() {
                let q = _mm256_or_si256(nibbles, _mm256_and_si256(high, bits));
                _mm256_storeu_si256(quants.as_mut_ptr().add(128 * h + 32 * k).cast(), q);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn dot_rows(
    format: KFormat,
    weight_row: &[u8],
    x: &SuperRows,
    first_row: usize,
    sums: &mut [f32],
) {
    ROW.with_borrow_mut(|row| {
        row.fill(format, weight_row);
        for (index, out) in sums.chunks_mut(ROWS).enumerate() {
            let first = first_row + index * ROWS;
            match out.len() {
                1 => rows::<1>(row, x, first, out),
                2 => rows::<2>(row, x, first, out),
                3 => rows::<3>(row, x, first, out),
                _ => rows::<ROWS>(row, x, first, out),
            }
        }
    });
}

/// `G` rows from `first`; `G` is a constant so that each row's
/// accumulators stay in registers. Per 32-weight chunk, the weights and
/// their scales are loaded once for the `G` rows: unsigned weights times
/// signed activations into pairs of i16 (at most 2 · 63 · 127), then
/// times the scales into i32 lanes, summed over the block. The offsets'
/// products go into the same f32 lanes, as llama.cpp keeps its mins in
/// a vector, so that a block ends without a horizontal sum. Raw pointers
/// rather than slices: sixteen slices in flight spill the registers the
/// products need.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn rows<const G: usize>(row: &UnpackedRow, x: &SuperRows, first: usize, out: &mut [f32]) {
    assert!(first + G <= x.rows() && row.d.len() == x.blocks_per_row);
    let stride = x.blocks_per_row;
    let mut acc = [_mm256_setzero_ps(); G];
    for b in 0..row.d.len() {
        // Block b of each of the G rows, as an index into the blocks.
        let index: [usize; G] = std::array::from_fn(|g| (first + g) * stride + b);
        let mut sums = [_mm256_setzero_si256(); G];
        for c in 0..SUPER_BLOCK / 32 {
            // SAFETY: the weight row holds `stride` blocks of 256 quants and
            // 128 scale lanes, and each activation row `stride` blocks of
            // 256 quants (asserted above); chunk c is 32 of them.
            unsafe {
                let w =
                    _mm256_loadu_si256(row.quants.as_ptr().add(b * SUPER_BLOCK + 32 * c).cast());
                let s = _mm256_loadu_si256(
                    row.chunk_scales
                        .as_ptr()
                        .add(b * SCALE_LANES + 16 * c)
                        .cast(),
                );
                for g in 0..G {
                    let q = x.quants.as_ptr().add(index[g] * SUPER_BLOCK + 32 * c);
                    let pairs = _mm256_maddubs_epi16(w, _mm256_loadu_si256(q.cast()));
                    sums[g] = _mm256_add_epi32(sums[g], _mm256_madd_epi16(pairs, s));
                }
            }
        }
        // SAFETY: sixteen offsets per weight block and sixteen group sums
        // per activation block, inside the sizes asserted above.
        unsafe {
            let offsets = _mm256_loadu_si256(row.offsets.as_ptr().add(b * GROUPS).cast());
            for g in 0..G {
                let scale = *x.scales.get_unchecked(index[g]);
                let group_sums = x.group_sums.as_ptr().add(index[g] * GROUPS);
                let offset = _mm256_madd_epi16(offsets, _mm256_loadu_si256(group_sums.cast()));
                let d = _mm256_set1_ps(scale * row.d[b]);
                acc[g] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums[g]), acc[g]);
                let dmin = _mm256_set1_ps(scale * row.dmin[b]);
                acc[g] = _mm256_fnmadd_ps(dmin, _mm256_cvtepi32_ps(offset), acc[g]);
            }
        }
    }
    for g in 0..G {
        out[g] = horizontal_sum(acc[g]);
    }
}
