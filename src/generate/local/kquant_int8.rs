//! Products of 8-bit activation rows with weight rows kept in K-quant
//! super-blocks (Q4_K, Q6_K), in integers, as llama.cpp computes them on a
//! CPU: each activation row is quantized per 256 values to its Q8_K blocks
//! (`quantize_row_q8_K_ref`: scale max/−127 kept as f32, quants rounded to
//! nearest-even, sums per 16), and a super-block's product is
//! d_x · (d · Σ_g scale_g Σ q_w q_x − dmin · Σ_g offset_g Σ q_x) over its
//! sixteen groups of 16 weights (`ggml_vec_dot_q4_K_q8_K`,
//! `ggml_vec_dot_q6_K_q8_K`).
//!
//! This is the quantized layout's arithmetic for the Qwen files: with the
//! weights' 4.5–6.6 bits per value and one multiply-add instruction per 32
//! products, a decode step costs what llama.cpp's does, where the f32
//! expansion of `kquants.rs` costs several instructions per weight. Each
//! output is computed the same way whatever the number of rows, so a
//! sequence gets the same bits alone as in a batch. Not here: the f32
//! arithmetic (`kquants.rs`) or the 32-weight formats (`packed.rs`).

use super::kquants::{KFormat, SUPER_BLOCK, half, scale_min};

/// Values per group that shares one scale (and one sum of the activations).
const GROUP: usize = 16;
const GROUPS: usize = SUPER_BLOCK / GROUP;

/// Activation rows as llama.cpp's Q8_K blocks.
pub(super) struct SuperRows {
    quants: Vec<i8>,
    scales: Vec<f32>,
    /// Σ quants of each group of 16.
    group_sums: Vec<i16>,
    blocks_per_row: usize,
}

impl SuperRows {
    /// `x` holds rows of `inputs` values, a multiple of 256.
    pub(super) fn quantize(x: &[f32], inputs: usize) -> SuperRows {
        #[cfg(target_arch = "x86_64")]
        if super::packed::has_avx2_kernels() {
            // SAFETY: the features the function is compiled for were just detected.
            return unsafe { Self::quantize_avx2(x, inputs) };
        }
        Self::quantize_inline(x, inputs)
    }

    /// The same body, compiled where rounding to nearest-even is one
    /// instruction rather than a call.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn quantize_avx2(x: &[f32], inputs: usize) -> SuperRows {
        Self::quantize_inline(x, inputs)
    }

    #[inline(always)]
    fn quantize_inline(x: &[f32], inputs: usize) -> SuperRows {
        let blocks = x.len() / SUPER_BLOCK;
        let mut rows = SuperRows {
            quants: Vec::with_capacity(x.len()),
            scales: Vec::with_capacity(blocks),
            group_sums: Vec::with_capacity(blocks * GROUPS),
            blocks_per_row: inputs / SUPER_BLOCK,
        };
        for block in x.chunks_exact(SUPER_BLOCK) {
            // The value of largest magnitude, the first of equals, with its sign.
            let extreme = block
                .iter()
                .fold(0f32, |m, &v| if v.abs() > m.abs() { v } else { m });
            if extreme == 0.0 {
                rows.quants.extend([0i8; SUPER_BLOCK]);
                rows.scales.push(0.0);
                rows.group_sums.extend([0i16; GROUPS]);
                continue;
            }
            let inverse = -127.0 / extreme;
            let start = rows.quants.len();
            rows.quants.extend(
                block
                    .iter()
                    .map(|&v| ((inverse * v).round_ties_even() as i32).min(127) as i8),
            );
            rows.group_sums.extend(
                rows.quants[start..]
                    .chunks_exact(GROUP)
                    .map(|g| g.iter().map(|&q| i16::from(q)).sum::<i16>()),
            );
            rows.scales.push(1.0 / inverse);
        }
        rows
    }

    pub(super) fn rows(&self) -> usize {
        self.scales.len() / self.blocks_per_row.max(1)
    }

    /// Row `r`'s block `b`: its 256 quants, scale and group sums.
    fn block(&self, r: usize, b: usize) -> (&[i8], f32, &[i16]) {
        let index = r * self.blocks_per_row + b;
        (
            &self.quants[index * SUPER_BLOCK..(index + 1) * SUPER_BLOCK],
            self.scales[index],
            &self.group_sums[index * GROUPS..(index + 1) * GROUPS],
        )
    }
}

/// One super-block in integers: weight i is
/// d · scales[i / 16] · quants[i] − dmin · offsets[i / 16].
#[derive(Clone, Copy)]
pub(super) struct Unpacked {
    /// Unsigned: 0..15 (Q4_K) or 0..63 (Q6_K, whose −32 is in the offsets).
    pub(super) quants: [u8; SUPER_BLOCK],
    pub(super) header: Header,
}

/// A super-block's d, dmin and per-group scales and offsets.
#[derive(Clone, Copy)]
pub(super) struct Header {
    pub(super) scales: [i16; GROUPS],
    pub(super) offsets: [i16; GROUPS],
    pub(super) d: f32,
    pub(super) dmin: f32,
}

impl Header {
    pub(super) fn new(format: KFormat, block: &[u8]) -> Header {
        let mut header = Header {
            scales: [0; GROUPS],
            offsets: [0; GROUPS],
            d: 0.0,
            dmin: 0.0,
        };
        match format {
            // Sub-block j (32 weights) has scale and min j.
            KFormat::Q4K => {
                (header.d, header.dmin) = (half(&block[0..2]), half(&block[2..4]));
                for j in 0..8 {
                    let (scale, min) = scale_min(j, &block[4..16]);
                    header.scales[2 * j..2 * j + 2].fill(i16::from(scale));
                    header.offsets[2 * j..2 * j + 2].fill(i16::from(min));
                }
            }
            // Group g has signed scale g; the quants' −32 is the offset
            // 32 · scale in units of d.
            KFormat::Q6K => {
                for (g, &scale) in block[192..208].iter().enumerate() {
                    header.scales[g] = i16::from(scale as i8);
                    header.offsets[g] = 32 * i16::from(scale as i8);
                }
                header.d = half(&block[208..210]);
                header.dmin = header.d;
            }
        }
        header
    }
}

impl Unpacked {
    pub(super) fn new(format: KFormat, block: &[u8]) -> Unpacked {
        let mut unpacked = Unpacked {
            quants: [0; SUPER_BLOCK],
            header: Header::new(format, block),
        };
        match format {
            KFormat::Q4K => unpacked.fill_q4k(block),
            KFormat::Q6K => unpacked.fill_q6k(block),
        }
        unpacked
    }

    /// Nibbles as `expand_q4k`.
    fn fill_q4k(&mut self, block: &[u8]) {
        for (pair, q) in block[16..144].chunks_exact(32).enumerate() {
            for (l, &byte) in q.iter().enumerate() {
                self.quants[pair * 64 + l] = byte & 0x0F;
                self.quants[pair * 64 + 32 + l] = byte >> 4;
            }
        }
    }

    /// The 6-bit quants as `expand_q6k`.
    fn fill_q6k(&mut self, block: &[u8]) {
        let (ql, qh) = (&block[0..128], &block[128..192]);
        for h in 0..2 {
            let (ql, qh) = (&ql[64 * h..], &qh[32 * h..]);
            let out = &mut self.quants[128 * h..128 * h + 128];
            for l in 0..32 {
                out[l] = (ql[l] & 0xF) | ((qh[l] & 3) << 4);
                out[l + 32] = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
                out[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                out[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
            }
        }
    }

    /// (Σ_g scale_g Σ q_w q_x, Σ_g offset_g Σ q_x) against one block of a row.
    pub(super) fn integer_sums(&self, quants: &[i8], group_sums: &[i16]) -> (i32, i32) {
        let mut scaled = 0i32;
        for (g, scale) in self.header.scales.iter().enumerate() {
            let products: i32 = self.quants[g * GROUP..(g + 1) * GROUP]
                .iter()
                .zip(&quants[g * GROUP..(g + 1) * GROUP])
                .map(|(&w, &x)| i32::from(w) * i32::from(x))
                .sum();
            scaled += i32::from(*scale) * products;
        }
        let offset = self
            .header
            .offsets
            .iter()
            .zip(group_sums)
            .map(|(&o, &s)| i32::from(o) * i32::from(s))
            .sum();
        (scaled, offset)
    }
}

/// One weight row (as super-blocks) against the quantized rows from
/// `first`, one per sum.
pub(super) fn dot_rows(
    format: KFormat,
    weight_row: &[u8],
    x: &SuperRows,
    first: usize,
    sums: &mut [f32],
) {
    debug_assert!(first + sums.len() <= x.rows());
    #[cfg(target_arch = "x86_64")]
    if super::packed::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        unsafe { avx2::dot_rows(format, weight_row, x, first, sums) };
        return;
    }
    portable_dot_rows(format, weight_row, x, first, sums);
}

pub(super) fn portable_dot_rows(
    format: KFormat,
    weight_row: &[u8],
    x: &SuperRows,
    first: usize,
    sums: &mut [f32],
) {
    sums.fill(0.0);
    for (b, block) in weight_row.chunks_exact(format.block_bytes()).enumerate() {
        let w = Unpacked::new(format, block);
        for (r, sum) in sums.iter_mut().enumerate() {
            let (quants, scale, group_sums) = x.block(first + r, b);
            let (scaled, offset) = w.integer_sums(quants, group_sums);
            let Header { d, dmin, .. } = w.header;
            *sum += scale * d * scaled as f32 - scale * dmin * offset as f32;
        }
    }
}

/// Row `r` of `x` against a weight row, summed exactly in f64 from the
/// same integers: the kernels' oracle.
#[cfg(test)]
pub(super) fn exact_dot(format: KFormat, weight_row: &[u8], x: &SuperRows, r: usize) -> f64 {
    weight_row
        .chunks_exact(format.block_bytes())
        .enumerate()
        .map(|(b, block)| {
            let w = Unpacked::new(format, block);
            let (quants, scale, group_sums) = x.block(r, b);
            let (scaled, offset) = w.integer_sums(quants, group_sums);
            f64::from(scale)
                * (f64::from(w.header.d) * f64::from(scaled)
                    - f64::from(w.header.dmin) * f64::from(offset))
        })
        .sum()
}

/// One weight row against every row through the AVX2 kernel, or None
/// where this CPU lacks it: the tests hold it to the oracle beside the
/// portable path.
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) fn simd_dot_rows(format: KFormat, weight_row: &[u8], x: &SuperRows) -> Option<Vec<f32>> {
    let mut sums = vec![0f32; x.rows()];
    // SAFETY: the kernel's features were just detected.
    super::packed::has_avx2_kernels()
        .then(|| unsafe { avx2::dot_rows(format, weight_row, x, 0, &mut sums) })?;
    Some(sums)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
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
    /// times the scales into i32 lanes, summed over the block.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn rows<const G: usize>(row: &UnpackedRow, x: &SuperRows, first: usize, out: &mut [f32]) {
        let mut acc = [_mm256_setzero_ps(); G];
        let mut offsets = [0f32; G];
        for b in 0..row.d.len() {
            let quants = &row.quants[b * SUPER_BLOCK..(b + 1) * SUPER_BLOCK];
            let scales = &row.chunk_scales[b * SCALE_LANES..(b + 1) * SCALE_LANES];
            let blocks: [_; G] = std::array::from_fn(|g| x.block(first + g, b));
            let mut sums = [_mm256_setzero_si256(); G];
            for c in 0..SUPER_BLOCK / 32 {
                // SAFETY: quants holds 256 bytes and scales 128 i16, so chunk
                // c's 32 bytes and 16 i16 lie inside them.
                let (w, s) = unsafe {
                    (
                        _mm256_loadu_si256(quants.as_ptr().add(32 * c).cast()),
                        _mm256_loadu_si256(scales.as_ptr().add(16 * c).cast()),
                    )
                };
                for g in 0..G {
                    // SAFETY: a row's block holds 256 quants.
                    let q = unsafe { _mm256_loadu_si256(blocks[g].0.as_ptr().add(32 * c).cast()) };
                    let pairs = _mm256_maddubs_epi16(w, q);
                    sums[g] = _mm256_add_epi32(sums[g], _mm256_madd_epi16(pairs, s));
                }
            }
            let block_offsets = &row.offsets[b * GROUPS..(b + 1) * GROUPS];
            for g in 0..G {
                let (_, scale, group_sums) = blocks[g];
                let d = _mm256_set1_ps(scale * row.d[b]);
                acc[g] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums[g]), acc[g]);
                offsets[g] += scale * row.dmin[b] * offset_sum(block_offsets, group_sums) as f32;
            }
        }
        for g in 0..G {
            out[g] = horizontal_sum(acc[g]) - offsets[g];
        }
    }

    /// Σ_g offset_g Σ q_x over the sixteen groups of one block.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn offset_sum(offsets: &[i16], group_sums: &[i16]) -> i32 {
        // SAFETY: both slices hold sixteen i16.
        let (o, s) = unsafe {
            (
                _mm256_loadu_si256(offsets.as_ptr().cast()),
                _mm256_loadu_si256(group_sums.as_ptr().cast()),
            )
        };
        let products = _mm256_madd_epi16(o, s);
        let half = _mm_add_epi32(
            _mm256_castsi256_si128(products),
            _mm256_extracti128_si256::<1>(products),
        );
        let pair = _mm_add_epi32(half, _mm_unpackhi_epi64(half, half));
        _mm_cvtsi128_si32(_mm_add_epi32(pair, _mm_shuffle_epi32::<1>(pair)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q8_K quantization as llama.cpp's reference: the extreme value maps
    /// to −127, ties go to even, and the group sums are the quants' sums.
    #[test]
    fn activations_are_quantized_as_llama_cpp_q8_k() {
        let mut x: Vec<f32> = (0..2 * SUPER_BLOCK)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
            .collect();
        x[3] = 127.0; // the first block's extreme: scale 127 / −127 = −1
        x[5] = 2.5; // a tie: −2.5 rounds to −2, not −3
        x[6] = 3.5; // and −3.5 to −4
        x[SUPER_BLOCK..].fill(0.0);
        let rows = SuperRows::quantize(&x, 2 * SUPER_BLOCK);
        let (quants, scale, sums) = rows.block(0, 0);
        assert_eq!(scale, -1.0);
        assert_eq!((quants[3], quants[5], quants[6]), (-127, -2, -4));
        for (g, &s) in sums.iter().enumerate() {
            let want: i16 = quants[g * 16..(g + 1) * 16]
                .iter()
                .map(|&q| i16::from(q))
                .sum();
            assert_eq!(s, want);
        }
        let (quants, scale, sums) = rows.block(0, 1);
        assert_eq!(scale, 0.0);
        assert!(quants.iter().all(|&q| q == 0) && sums.iter().all(|&s| s == 0));
    }
}
