//! What the paired panel kernels (`kquant_panels::avx512`,
//! `packed::panels::avx512`) share: which CPUs run them, and 512-bit
//! vectors made of two panels' 256-bit halves as they are loaded. Not here:
//! any kernel.

use std::arch::x86_64::*;

/// Whether this CPU runs the paired kernel: AVX-512 (F and BW) besides the
/// 256-bit kernels' features, on an Intel CPU. AMD's Zen 4 runs AVX-512 as
/// two 256-bit halves, where pairs of panels measured slower than single
/// ones (0.78x against 0.87x of llama.cpp's prefill); on the 2-core Intel
/// Xeon a 512-bit multiply-add with add does 1.6 times the 8-bit products
/// a second of a 256-bit one.
pub(super) fn has_pair_kernels() -> bool {
    static PAIRS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAIRS.get_or_init(|| {
        super::packed::has_avx2_kernels()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && is_intel()
    })
}

/// The CPU vendor string is "GenuineIntel".
fn is_intel() -> bool {
    // SAFETY: leaf 0 of `cpuid` exists on every x86-64 CPU. (Newer Rust
    // calls `__cpuid` safe; the MSRV's needs the block.)
    #[allow(unused_unsafe)]
    let leaf = unsafe { __cpuid(0) };
    let vendor: Vec<u8> = [leaf.ebx, leaf.edx, leaf.ecx]
        .iter()
        .flat_map(|part| part.to_le_bytes())
        .collect();
    vendor == b"GenuineIntel"
}

/// Two 256-bit halves as one vector: `low` in lanes 0-7.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
pub(super) fn join(low: __m256i, high: __m256i) -> __m512i {
    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
}

/// A 256-bit load at `first` and one at `second`, as one vector.
///
/// # Safety
/// Both point at 32 readable bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
pub(super) unsafe fn load_pair(first: *const u8, second: *const u8) -> __m512i {
    // SAFETY: the caller's.
    unsafe {
        join(
            _mm256_loadu_si256(first.cast()),
            _mm256_loadu_si256(second.cast()),
        )
    }
}

/// Eight f32 at `first` and eight at `second`, as one vector.
///
/// # Safety
/// Both point at eight readable values.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
pub(super) unsafe fn load_pair_ps(first: *const f32, second: *const f32) -> __m512 {
    // SAFETY: the caller's.
    unsafe {
        _mm512_insertf32x8::<1>(
            _mm512_castps256_ps512(_mm256_loadu_ps(first)),
            _mm256_loadu_ps(second),
        )
    }
}

/// Eight f16 values at `first` and eight at `second`, as sixteen f32.
///
/// # Safety
/// Both point at eight readable values.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
pub(super) unsafe fn load_pair_f16(first: *const u16, second: *const u16) -> __m512 {
    // SAFETY: the caller's.
    let halves = unsafe {
        _mm256_set_m128i(
            _mm_loadu_si128(second.cast()),
            _mm_loadu_si128(first.cast()),
        )
    };
    _mm512_cvtph_ps(halves)
}

/// An activation row's four 8-bit values at `four` in every 32-bit lane of
/// a 512-bit vector (a broadcast load).
///
/// # Safety
/// `four` points at four readable bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
pub(super) unsafe fn broadcast_four(four: *const i8) -> __m512i {
    // SAFETY: the caller's.
    _mm512_set1_epi32(unsafe { four.cast::<i32>().read_unaligned() })
}
