//! Unpacking a pair of K-quant panels' block into the tiles' weight rows
//! (Q4_K's quants times their scales' two parts of three bits, Q6_K's
//! quants as they lie), with the scales and offsets that the vectors
//! apply to the tiles' sums. Not here: the tile products, or their
//! scaling (`tiled`).

use std::arch::x86_64::*;

use super::super::super::pair_vectors::load_pair;
use super::super::{
    PANEL, Panels, Q4K_BYTES, Q4K_OFFSET_BYTES, Q4K_SCALE_BYTES, Q6K_BYTES, Q6K_SCALE_BYTES,
};

/// A pair of panels' block as tile rows of sixteen weight rows' four
/// bytes, 64 rows of 64 bytes each.
#[repr(C, align(64))]
pub(super) struct Unpacked {
    /// Q4_K: quants times their scales' high three bits; Q6_K: quants.
    pub(super) weights: [u8; 4096],
    /// Q4_K: quants times their scales' low three bits.
    pub(super) low: [u8; 4096],
    /// Q6_K: each group's scales in i32 lanes.
    pub(super) scales: [__m512i; 16],
    /// The offsets of groups 2p and 2p + 1 in each weight row's two i16
    /// lanes: Q4_K's sub-block mins (four pairs), Q6_K's group scales
    /// (eight).
    pub(super) offset_pairs: [__m512i; 8],
}

impl Unpacked {
    /// Room for a block, zeroed.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    pub(super) fn new() -> Unpacked {
        Unpacked {
            weights: [0; 4096],
            low: [0; 4096],
            scales: [_mm512_setzero_si512(); 16],
            offset_pairs: [_mm512_setzero_si512(); 8],
        }
    }
}

impl Panels {
    /// A pair of panels' Q4_K block `index` as tile rows: chunk c of 64
    /// weights (sub-blocks 2c and 2c + 1) in rows 16c..16c + 16.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    pub(super) fn unpack_q4k(&self, index: [usize; 2], unpacked: &mut Unpacked) {
        let quants = index.map(|i| self.quants[i * Q4K_BYTES..][..Q4K_BYTES].as_ptr());
        let scales = index.map(|i| self.scales[i * Q4K_SCALE_BYTES..][..Q4K_SCALE_BYTES].as_ptr());
        let mins = index.map(|i| self.offsets[i * Q4K_OFFSET_BYTES..][..Q4K_OFFSET_BYTES].as_ptr());
        // Each sub-block's scales' high and low bits, in the two i16 lanes
        // of each weight row's four bytes.
        let mut high = [_mm512_setzero_si512(); 8];
        let mut low = [_mm512_setzero_si512(); 8];
        for sub in 0..8 {
            // SAFETY: eight sub-blocks' eight bytes per panel block.
            let scale = _mm512_cvtepu8_epi32(unsafe { sixteen(scales, sub) });
            let twice = _mm512_or_si512(scale, _mm512_slli_epi32::<16>(scale));
            high[sub] = _mm512_srli_epi16::<3>(twice);
            low[sub] = _mm512_and_si512(twice, _mm512_set1_epi16(7));
        }
        for (p, pair) in unpacked.offset_pairs[..4].iter_mut().enumerate() {
            // SAFETY: as above, for the mins.
            *pair = unsafe { interleaved_pair(mins, p) };
        }
        let mask = _mm512_set1_epi8(0x0F);
        for vector in 0..Q4K_BYTES / 32 {
            // Vector (pair, step) holds sub-block 2 · pair in its low nibbles
            // and 2 · pair + 1 in its high ones.
            let (pair, step) = (vector / 8, vector % 8);
            // SAFETY: 32 vectors of 32 bytes per panel block.
            let v = unsafe { load_pair(quants[0].add(32 * vector), quants[1].add(32 * vector)) };
            let nibbles = [
                _mm512_and_si512(v, mask),
                _mm512_and_si512(_mm512_srli_epi16::<4>(v), mask),
            ];
            for (half, q) in nibbles.into_iter().enumerate() {
                let (sub, row) = (2 * pair + half, 16 * pair + 8 * half + step);
                // A quant times three bits is at most 105: each byte's
                // product stays in its byte of the i16 lane.
                // SAFETY: 64 rows of 64 bytes in each.
                unsafe {
                    let at = 64 * row;
                    let times_high = _mm512_mullo_epi16(q, high[sub]);
                    let times_low = _mm512_mullo_epi16(q, low[sub]);
                    _mm512_store_si512(unpacked.weights[at..].as_mut_ptr().cast(), times_high);
                    _mm512_store_si512(unpacked.low[at..].as_mut_ptr().cast(), times_low);
                }
            }
        }
    }

    /// A pair of panels' Q6_K block `index` as tile rows: group g's four
    /// rows from row 4g; and its scales.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    pub(super) fn unpack_q6k(&self, index: [usize; 2], unpacked: &mut Unpacked) {
        let quants = index.map(|i| self.quants[i * Q6K_BYTES..][..Q6K_BYTES].as_ptr());
        let scales = index.map(|i| self.scales[i * Q6K_SCALE_BYTES..][..Q6K_SCALE_BYTES].as_ptr());
        for group in 0..16 {
            // SAFETY: sixteen groups' eight bytes per panel block.
            unpacked.scales[group] = _mm512_cvtepi8_epi32(unsafe { sixteen(scales, group) });
        }
        for (p, pair) in unpacked.offset_pairs.iter_mut().enumerate() {
            // SAFETY: as above.
            *pair = unsafe { interleaved_pair(scales, p) };
        }
        for step in 0..Q6K_BYTES / 32 {
            // SAFETY: 64 vectors of 32 bytes per panel block and 64 rows of
            // 64 bytes.
            unsafe {
                let v = load_pair(quants[0].add(32 * step), quants[1].add(32 * step));
                _mm512_store_si512(unpacked.weights[64 * step..].as_mut_ptr().cast(), v);
            }
        }
    }
}

/// Group `g`'s eight bytes of each of two panel blocks, as sixteen.
///
/// # Safety
/// Both point at readable bytes up to 8 · g + 8.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
unsafe fn sixteen(bytes: [*const i8; 2], g: usize) -> __m128i {
    // SAFETY: the caller's.
    unsafe {
        _mm_unpacklo_epi64(
            _mm_loadl_epi64(bytes[0].add(PANEL * g).cast()),
            _mm_loadl_epi64(bytes[1].add(PANEL * g).cast()),
        )
    }
}

/// Groups 2p and 2p + 1's bytes of sixteen weight rows, sign-extended
/// and interleaved: row n's in i16 lanes 2n and 2n + 1.
///
/// # Safety
/// As [`sixteen`] for group 2p + 1.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
unsafe fn interleaved_pair(bytes: [*const i8; 2], p: usize) -> __m512i {
    // SAFETY: the caller's.
    let (even, odd) = unsafe { (sixteen(bytes, 2 * p), sixteen(bytes, 2 * p + 1)) };
    let interleaved = _mm256_set_m128i(_mm_unpackhi_epi8(even, odd), _mm_unpacklo_epi8(even, odd));
    _mm512_cvtepi8_epi16(interleaved)
}
