//! Intel AMX tiles for 8-bit products: which CPUs have them (and whether
//! Linux lets this process use them), the tile shapes, and the few tile
//! instructions the tiled kernels use, as inline assembly (Rust's AMX
//! intrinsics are not stable). A tile multiply-add takes a 16-row tile of
//! activation bytes and a tile of weight bytes laid out four to a 32-bit
//! lane, as the panels already lie, and adds each of 16 × 16 i32 dot
//! products into a result tile. Not here: any kernel
//! (`kquant_panels::tiled`), or the integer sums' scaling.

use std::arch::asm;

/// Activation rows per tile, and weight rows per result tile's row.
pub(super) const TILE_ROWS: usize = 16;

/// Whether the tiled kernels run here: a CPU with AMX (tiles and 8-bit
/// products), AVX512-VNNI and the paired 512-bit kernels, Linux's permission for this
/// process to use the tiles' state, and `CODECAL_LOCAL_TILES` not "off"
/// (a switch for measuring the tiles against the vectors; both give the
/// same bits).
pub(super) fn has_tiles() -> bool {
    static TILES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TILES.get_or_init(|| {
        std::env::var("CODECAL_LOCAL_TILES").as_deref() != Ok("off")
            && super::pair_vectors::has_pair_kernels()
            && std::arch::is_x86_feature_detected!("avx512vnni")
            && cpu_has_amx()
            && linux_allows_tiles()
    })
}

/// CPUID leaf 7's AMX-TILE and AMX-INT8 bits.
fn cpu_has_amx() -> bool {
    // SAFETY: leaf 0 exists on every x86-64 CPU, and leaf 7 where leaf 0
    // says so. (Newer Rust calls `__cpuid` safe; the MSRV's needs the block.)
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{__cpuid, __cpuid_count};
        if __cpuid(0).eax < 7 {
            return false;
        }
        let edx = __cpuid_count(7, 0).edx;
        edx & (1 << 24) != 0 && edx & (1 << 25) != 0
    }
}

/// Asks Linux for the tiles' state (`ARCH_REQ_XCOMP_PERM` for
/// `XFEATURE_XTILEDATA`), which a process must have before its first tile
/// instruction; false where the kernel refuses or predates it.
fn linux_allows_tiles() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with this request only changes what the process
    // may use; it reads and writes no memory of ours.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

/// A tile configuration: each tile's rows and bytes a row.
#[repr(C, align(64))]
pub(super) struct Shapes([u8; 64]);

impl Shapes {
    /// Tiles `(tile, rows, bytes a row)`; the others unused.
    pub(super) const fn new(shapes: &[(u8, usize, usize)]) -> Shapes {
        let mut bytes = [0u8; 64];
        bytes[0] = 1; // palette 1: eight tiles of up to 16 rows of 64 bytes
        let mut i = 0;
        while i < shapes.len() {
            let (tile, rows, width) = shapes[i];
            assert!(tile < 8 && rows <= 16 && width <= 64);
            bytes[16 + 2 * tile as usize] = width as u8;
            bytes[48 + tile as usize] = rows as u8;
            i += 1;
        }
        Shapes(bytes)
    }
}

/// Loads `shapes` into this thread's tile configuration (zeroing every
/// tile); [`release`] undoes it.
///
/// # Safety
/// [`has_tiles`] is true.
#[inline]
pub(super) unsafe fn configure(shapes: &Shapes) {
    // SAFETY: the caller's; `shapes` is a valid palette-1 configuration.
    unsafe { asm!("ldtilecfg [{0}]", in(reg) shapes.0.as_ptr(), options(nostack, readonly)) };
}

/// Gives the tiles' state back, so that a context switch need not save it.
///
/// # Safety
/// [`has_tiles`] is true.
#[inline]
pub(super) unsafe fn release() {
    // SAFETY: the caller's.
    unsafe { asm!("tilerelease", options(nostack, nomem)) };
}

/// Tile `T`'s rows from `at`, `stride` bytes apart (0: every row the same).
///
/// # Safety
/// The tiles are configured, and every row of `T` is readable there.
#[inline]
pub(super) unsafe fn load<const T: u8>(at: *const u8, stride: usize) {
    // SAFETY: the caller's.
    unsafe {
        asm!("tileloadd tmm{t}, [{at} + {stride}*1]", t = const T, at = in(reg) at,
            stride = in(reg) stride, options(nostack, readonly))
    };
}

/// Tile `T`'s rows to `at`, 64 bytes apart.
///
/// # Safety
/// The tiles are configured, and `at` holds 16 writable rows of 64 bytes.
#[inline]
pub(super) unsafe fn store<const T: u8>(at: *mut i32) {
    // SAFETY: the caller's.
    unsafe {
        asm!("tilestored [{at} + {stride}*1], tmm{t}", t = const T, at = in(reg) at,
            stride = in(reg) 64usize, options(nostack))
    };
}

/// Zeroes tile `T`.
///
/// # Safety
/// The tiles are configured.
#[inline]
pub(super) unsafe fn zero<const T: u8>() {
    // SAFETY: the caller's.
    unsafe { asm!("tilezero tmm{t}", t = const T, options(nostack, nomem)) };
}

/// Adds the signed 8-bit products of tile `A`'s rows and tile `B`'s
/// columns of four into the i32 tile `C`.
///
/// # Safety
/// The tiles are configured with matching shapes.
#[inline]
pub(super) unsafe fn dot<const C: u8, const A: u8, const B: u8>() {
    // SAFETY: the caller's.
    unsafe {
        asm!("tdpbssd tmm{c}, tmm{a}, tmm{b}", c = const C, a = const A, b = const B,
            options(nostack, nomem))
    };
}
