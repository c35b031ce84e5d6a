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

// ---------------------------------------------------------------------------------------------
// Output conversion (docs/formats.md, §Arithmetic: f16 and bf16 outputs): the clamped f32
// results are rounded to the family's output type right before the store. `f32` stores them as
// they are; `f16` narrows with `FCVTN` (base Armv8.0, no FEAT_FP16); `bf16` rounds to nearest
// even with integer operations (every core: `out_prep!` adds `bit16 - 1` to the bits, then
// `RSHRN #16` adds 0x8000 and keeps the top half; NaN lanes get `-0x8000` instead, so they keep
// their top half, quiet as the clamp left them, exactly as `BFCVTN` does); `bf16cvt` narrows
// with `BFCVTN` (FEAT_BF16: its kernels need that feature). Registers are numbers as strings
// (`"20"` for v20).
// ---------------------------------------------------------------------------------------------

/// The Rust element type of output kind `$out` (`bf16cvt` outputs are bf16).
macro_rules! out_type {
    (f32) => {
        f32
    };
    (f16) => {
        half::f16
    };
    (bf16) => {
        half::bf16
    };
    (bf16cvt) => {
        half::bf16
    };
}
pub(crate) use out_type;

/// Prepares register v`$r` (4 clamped f32) for the narrowing of output type `$out`; only
/// `bf16` has work to do, with the two temporaries v`$t`, v`$m`.
#[rustfmt::skip]
macro_rules! out_prep {
    (bf16, $r:literal, $t:literal, $m:literal) => {
        concat!(
            "fcmeq v", $m, ".4s, v", $r, ".4s, v", $r, ".4s\n",   // lanes that are not NaN
            "shl v", $t, ".4s, v", $r, ".4s, #15\n",              // bit 16 to the sign bit
            "cmge v", $t, ".4s, v", $t, ".4s, #0\n",              // bit16 - 1: 0 or -1
            "and v", $t, ".16b, v", $t, ".16b, v", $m, ".16b\n",
            "mvn v", $m, ".16b, v", $m, ".16b\n",                 // NaN lanes: -0x8000
            "shl v", $m, ".4s, v", $m, ".4s, #15\n",
            "orr v", $t, ".16b, v", $t, ".16b, v", $m, ".16b\n",
            "add v", $r, ".4s, v", $r, ".4s, v", $t, ".4s\n",
        )
    };
    ($out:ident, $r:literal, $t:literal, $m:literal) => {
        ""
    };
}

/// Narrows v`$s` (4 f32, prepared by [`out_prep!`]) into the low half of v`$d` (4 x 16 bits).
#[rustfmt::skip]
macro_rules! out_lo {
    (f16, $d:literal, $s:literal) => { concat!("fcvtn v", $d, ".4h, v", $s, ".4s\n") };
    (bf16, $d:literal, $s:literal) => { concat!("rshrn v", $d, ".4h, v", $s, ".4s, #16\n") };
    (bf16cvt, $d:literal, $s:literal) => { concat!("bfcvtn v", $d, ".4h, v", $s, ".4s\n") };
}

/// Narrows v`$s` (4 f32, prepared by [`out_prep!`]) into the high half of v`$d`.
#[rustfmt::skip]
macro_rules! out_hi {
    (f16, $d:literal, $s:literal) => { concat!("fcvtn2 v", $d, ".8h, v", $s, ".4s\n") };
    (bf16, $d:literal, $s:literal) => { concat!("rshrn2 v", $d, ".8h, v", $s, ".4s, #16\n") };
    (bf16cvt, $d:literal, $s:literal) => { concat!("bfcvtn2 v", $d, ".8h, v", $s, ".4s\n") };
}

/// Converts and stores one row of 4 outputs held in v`$r` at `[{out}]`, then advances `{out}`
/// by `{stride}` (the GEMM stores); temporaries v`$t`, v`$m` (bf16).
#[rustfmt::skip]
macro_rules! out_row4 {
    (f32, $r:literal, $t:literal, $m:literal) => {
        concat!("st1 {{v", $r, ".4s}}, [{out}], {stride}\n")
    };
    ($out:ident, $r:literal, $t:literal, $m:literal) => {
        concat!(
            out_prep!($out, $r, $t, $m),
            out_lo!($out, $r, $r),
            "st1 {{v", $r, ".4h}}, [{out}], {stride}\n",
        )
    };
}

/// Converts and stores 4, 8 or 16 consecutive outputs held in the listed registers (4 each)
/// at `[{out}]` (`$post`: `post` advances `{out}` past them, `keep` leaves it); temporaries
/// v`$t`, v`$m` (bf16).
#[rustfmt::skip]
macro_rules! out_cols {
    (f32, keep, [$a:literal], $t:literal, $m:literal) => {
        concat!("str q", $a, ", [{out}]\n")
    };
    (f32, post, [$a:literal], $t:literal, $m:literal) => {
        concat!("str q", $a, ", [{out}], #16\n")
    };
    (f32, keep, [$a:literal, $b:literal], $t:literal, $m:literal) => {
        concat!("stp q", $a, ", q", $b, ", [{out}]\n")
    };
    (f32, post, [$a:literal, $b:literal], $t:literal, $m:literal) => {
        concat!("stp q", $a, ", q", $b, ", [{out}], #32\n")
    };
    (f32, keep, [$a:literal, $b:literal, $c:literal, $d:literal], $t:literal, $m:literal) => {
        concat!("stp q", $a, ", q", $b, ", [{out}]\n", "stp q", $c, ", q", $d, ", [{out}, #32]\n")
    };
    ($out:ident, $post:ident, [$a:literal], $t:literal, $m:literal) => {
        concat!(
            out_prep!($out, $a, $t, $m),
            out_lo!($out, $a, $a),
            out_cols!(@store $post, "str d", $a, "8"),
        )
    };
    ($out:ident, $post:ident, [$a:literal, $b:literal], $t:literal, $m:literal) => {
        concat!(
            out_prep!($out, $a, $t, $m),
            out_prep!($out, $b, $t, $m),
            out_lo!($out, $a, $a),
            out_hi!($out, $a, $b),
            out_cols!(@store $post, "str q", $a, "16"),
        )
    };
    ($out:ident, keep, [$a:literal, $b:literal, $c:literal, $d:literal], $t:literal, $m:literal) => {
        concat!(
            out_prep!($out, $a, $t, $m),
            out_prep!($out, $b, $t, $m),
            out_prep!($out, $c, $t, $m),
            out_prep!($out, $d, $t, $m),
            out_lo!($out, $a, $a),
            out_hi!($out, $a, $b),
            out_lo!($out, $c, $c),
            out_hi!($out, $c, $d),
            "stp q", $a, ", q", $c, ", [{out}]\n",
        )
    };
    (@store keep, $op:literal, $a:literal, $n:literal) => { concat!($op, $a, ", [{out}]\n") };
    (@store post, $op:literal, $a:literal, $n:literal) => { concat!($op, $a, ", [{out}], #", $n, "\n") };
}

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
