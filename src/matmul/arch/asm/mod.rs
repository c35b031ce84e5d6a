//! What every `asm!` tier (dotprod, i8mm) shares: the tile drivers and the one tile-argument
//! type ([`driver`]), the one clobber macro (`asm_v!`), the one table of constants the kernels load
//! instead of building them on the SIMD pipes, and the copy of a partial scratch tile to the
//! output.
#![cfg(target_arch = "aarch64")]

use crate::element::Element;

mod driver;
pub(crate) use driver::{Layout, MAX_TILES, Tile, TileFn, TileKernel, gemm, gemv};

/// `asm!` with the given template and operands, `options(nostack)`, and the vector registers it
/// writes declared clobbered: `asm_v!(all; ...)` declares v0-v31 (the tile kernels use almost
/// all of them), `asm_v!(["v0", "v4", ...]; ...)` exactly the listed ones (a kernel that leaves
/// some of v8-v15 alone spares the caller saving them).
macro_rules! asm_v {
    (all; $($args:tt)*) => {
        $crate::matmul::arch::asm::asm_v!([
            "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7",
            "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
            "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
            "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
        ]; $($args)*)
    };
    ([$($v:tt),* $(,)?]; $($args:tt)*) => {
        ::core::arch::asm!(
            $($args)*
            $(out($v) _,)*
            options(nostack),
        )
    };
}
pub(crate) use asm_v;

/// 16-byte aligned constant bytes.
#[repr(C, align(16))]
pub(crate) struct Consts(pub [u8; 80]);

/// The constants the kernels load (load pipes) rather than build with `MOVI` (SIMD pipes):
/// [`ZEROS_AT`] 64 zero bytes (resets of integer accumulators), then at [`MASK_F0_AT`] 16
/// bytes `0xF0` (the high-nibble unpack mask).
pub(crate) static CONSTS: Consts = Consts({
    let mut c = [0u8; 80];
    let mut i = MASK_F0_AT;
    while i < MASK_F0_AT + 16 {
        c[i] = 0xF0;
        i += 1;
    }
    c
});

/// Offset of the 64 zero bytes in [`CONSTS`].
#[allow(dead_code)] // documents the layout; the zeros start the table
pub(crate) const ZEROS_AT: usize = 0;

/// Offset of the 16 `0xF0` bytes in [`CONSTS`] (`#64` in the asm text).
pub(crate) const MASK_F0_AT: usize = 64;

/// Stores the first `rows x cols` elements of a scratch tile of `width` columns to `out`.
///
/// # Safety
///
/// `out` is writable for `cols` elements at each of the `rows` rows `out + i * out_stride`
/// bytes, and does not overlap `tmp`.
pub(crate) unsafe fn copy_out<O: Element>(
    tmp: &[O],
    width: usize,
    rows: usize,
    cols: usize,
    out: *mut O,
    out_stride: usize,
) {
    for (i, row) in tmp.chunks_exact(width).take(rows).enumerate() {
        // SAFETY: row `i < rows` of the region the caller made writable, `cols` elements,
        // disjoint from `tmp`; copied as bytes, so `out` needs no alignment.
        unsafe {
            let dst = out.byte_add(i * out_stride).cast::<u8>();
            core::ptr::copy_nonoverlapping(row.as_ptr().cast::<u8>(), dst, O::SIZE * cols);
        }
    }
}
