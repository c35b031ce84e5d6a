//! The float formats' packers in C (`qgemm_rhs_<float format>_*`, `qgemm_lhs_bf16p*_*`): the
//! packed layouts the float families' kernels read (`QGEMM_RHS_FORMAT_F32P`, `_F16P`,
//! `_BF16P_B32`, `_BF16P_B16`; `QGEMM_LHS_FORMAT_BF16P`). The kernels and the operator are the
//! families' (`qgemm_kernel_*`, `qgemm_linear_*`), as for every family.
//!
//! Element types: f32 values are `float`, f16 values `uint16_t` bit patterns (2-byte aligned);
//! the other type is `QGEMM_ERROR_WRONG_DST_TYPE`.

use qgemm::lhs::bf16p;
use qgemm::rhs::{FloatSource, bf16p12, f16p, f32p};

use super::*;

/// A C pointer to `T` values as a pointer to `D` (the family's element type), if `T` is the C
/// type `D` travels as; else `QGEMM_ERROR_WRONG_DST_TYPE`. A cast only: [`input`] and
/// [`output`] check the buffer.
fn as_elem<D: DstElem, T: CElem>(p: *const T) -> Status<*const D> {
    Ok(dst_as::<D, T>(p.cast_mut())?.cast_const())
}

/// An optional input of `D` values through a C pointer of `T`: null means none.
///
/// # Safety
///
/// `p` is null or valid for `len` reads of `T` that nothing writes during the call.
unsafe fn optional_elems<'a, D: DstElem, T: CElem>(p: *const T, len: usize) -> Status<(Option<&'a [D]>, Span)> {
    if p.is_null() {
        return Ok((None, NO_SPAN));
    }
    let p = as_elem::<D, T>(p)?;
    // SAFETY: `p` is valid for `len` reads of `T` (this function's contract), which are `len`
    // valid `D` (`as_elem`: same size and alignment, every bit pattern valid).
    let (values, range) = unsafe { input(p, len) }?;
    Ok((Some(values), range))
}

/// Required input of `D` values through a C pointer of `T`.
///
/// # Safety
///
/// As [`optional_elems`].
unsafe fn elems<'a, D: DstElem, T: CElem>(p: *const T, len: usize) -> Status<(&'a [D], Span)> {
    let p = as_elem::<D, T>(p)?;
    // SAFETY: as in `optional_elems`.
    unsafe { input(p, len) }
}

// ---- packers ------------------------------------------------------------------------------

/// Writes `size` (computed first: its error wins) through `out`.
///
/// # Safety
///
/// `out` is null or valid for a write.
unsafe fn answer_size(size: qgemm::Result<usize>, out: *mut usize) -> qgemm_status {
    // SAFETY: this function's contract.
    unsafe { answer(size.map_err(qgemm_status::from), out) }
}

/// The body of the float RHS packers: checks and views the C buffers, then calls `pack` on
/// them. `rhs` holds `rhs_len` values of C type `T` (the weights, `layout`, rows `stride`
/// values apart), `bias` `bias_len` values of C type `TB` or null.
///
/// # Safety
///
/// Each pointer is null or valid for the reads or writes of its length.
unsafe fn rhs_pack<V: DstElem, B: DstElem, T: CElem, TB: CElem>(
    (rhs, rhs_len, layout, stride): (*const T, usize, u32, usize),
    (bias, bias_len): (*const TB, usize),
    (out, out_len): (*mut u8, usize),
    pack: impl FnOnce(&FloatSource<'_, V>, Option<&[B]>, &mut [u8]) -> qgemm::Result<()>,
) -> qgemm_status {
    status(|| {
        let layout = super::layout(layout)?;
        // SAFETY: `rhs` is null or valid for `rhs_len` reads (this function's contract).
        let (data, r_span) = unsafe { elems::<V, T>(rhs, rhs_len) }?;
        // SAFETY: `bias` is null or valid for `bias_len` reads (this function's contract).
        let (bias, b_span) = unsafe { optional_elems::<B, TB>(bias, bias_len) }?;
        // SAFETY: `out` is null or valid for `out_len` writes (this function's contract);
        // `output` checks that it overlaps neither input.
        let out = unsafe { output(out, out_len, &[r_span, b_span]) }?;
        Ok(pack(&FloatSource { data, layout, stride }, bias, out)?)
    })
}

/// Writes to `*out` the bytes of weights packed in `f32p16` for `n` channels of depth `k`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f32p16_packed_size(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f32p::F32P16.packed_size(n, k, 0), out) }
}

/// Writes to `*out` the byte offset, in weights packed in `f32p16`, of the tile holding channel
/// `n_idx` (a multiple of the format's tile width).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f32p16_packed_offset(n_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f32p::F32P16.packed_offset(n_idx, k, 0), out) }
}

/// Packs `n` channels of depth `k` into `f32p16` (tiles of 16 channels, f32 values and biases
/// copied bit for bit): `rhs` (`rhs_len` values) holds the `n x k` weights in `layout`
/// (`QGEMM_LAYOUT_NXK`: `n` rows of `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `rhs_stride`
/// values apart; `bias`: `n` values or NULL (zeros); `rhs_packed`: at least
/// `qgemm_rhs_f32p16_packed_size` bytes, every one of which is written (padding 0). KleidiAI:
/// `rhs_pack_kxn_x32p16x1b_x32_x32_neon`, `rhs_pack_nxk_x32p16x1bx32_x32_x32_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_f32p16_pack(
    n: usize,
    k: usize,
    rhs: *const f32,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f32, f32, f32, f32>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| f32p::pack(&f32p::F32P16, n, k, s, b, o),
        )
    }
}

/// Writes to `*out` the bytes of weights packed in `f32p8` for `n` channels of depth `k`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f32p8_packed_size(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f32p::F32P8.packed_size(n, k, 0), out) }
}

/// Writes to `*out` the byte offset, in weights packed in `f32p8`, of the tile holding channel
/// `n_idx` (a multiple of the format's tile width).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f32p8_packed_offset(n_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f32p::F32P8.packed_offset(n_idx, k, 0), out) }
}

/// Packs `n` channels of depth `k` into `f32p8` (tiles of 8 channels, f32 values and biases copied
/// bit for bit): `rhs` (`rhs_len` values) holds the `n x k` weights in `layout`
/// (`QGEMM_LAYOUT_NXK`: `n` rows of `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `rhs_stride`
/// values apart; `bias`: `n` values or NULL (zeros); `rhs_packed`: at least
/// `qgemm_rhs_f32p8_packed_size` bytes, every one of which is written (padding 0). KleidiAI:
/// `rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_f32p8_pack(
    n: usize,
    k: usize,
    rhs: *const f32,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f32, f32, f32, f32>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| f32p::pack(&f32p::F32P8, n, k, s, b, o),
        )
    }
}

/// Writes to `*out` the bytes of weights packed in `f16p32` for `n` channels of depth `k`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f16p32_packed_size(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f16p::F16P32.packed_size(n, k, 0), out) }
}

/// Writes to `*out` the byte offset, in weights packed in `f16p32`, of the tile holding channel
/// `n_idx` (a multiple of the format's tile width).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f16p32_packed_offset(n_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f16p::F16P32.packed_offset(n_idx, k, 0), out) }
}

/// Packs `n` channels of depth `k` into `f16p32` (tiles of 32 channels, f16 values and biases
/// copied bit for bit): `rhs` (`rhs_len` values) holds the `n x k` weights in `layout`
/// (`QGEMM_LAYOUT_NXK`: `n` rows of `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `rhs_stride`
/// values apart; `bias`: `n` values or NULL (zeros); `rhs_packed`: at least
/// `qgemm_rhs_f16p32_packed_size` bytes, every one of which is written (padding 0). KleidiAI:
/// `rhs_pack_kxn_x16p32x1b_x16_x16_neon`, `rhs_pack_nxk_x16p32x1bx16_x16_x16_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_f16p32_pack(
    n: usize,
    k: usize,
    rhs: *const u16,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const u16,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f16, f16, u16, u16>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| f16p::pack(&f16p::F16P32, n, k, s, b, o),
        )
    }
}

/// Writes to `*out` the bytes of weights packed in `f16p16` for `n` channels of depth `k`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f16p16_packed_size(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f16p::F16P16.packed_size(n, k, 0), out) }
}

/// Writes to `*out` the byte offset, in weights packed in `f16p16`, of the tile holding channel
/// `n_idx` (a multiple of the format's tile width).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_f16p16_packed_offset(n_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(f16p::F16P16.packed_offset(n_idx, k, 0), out) }
}

/// Packs `n` channels of depth `k` into `f16p16` (tiles of 16 channels, f16 values and biases
/// copied bit for bit): `rhs` (`rhs_len` values) holds the `n x k` weights in `layout`
/// (`QGEMM_LAYOUT_NXK`: `n` rows of `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `rhs_stride`
/// values apart; `bias`: `n` values or NULL (zeros); `rhs_packed`: at least
/// `qgemm_rhs_f16p16_packed_size` bytes, every one of which is written (padding 0). KleidiAI:
/// `rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_f16p16_pack(
    n: usize,
    k: usize,
    rhs: *const u16,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const u16,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f16, f16, u16, u16>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| f16p::pack(&f16p::F16P16, n, k, s, b, o),
        )
    }
}

/// Writes to `*out` the bytes of weights packed in `bf16p12_b32` for `n` channels of depth `k`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b32_packed_size(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p12::BF16P12_B32.packed_size(n, k, 0), out) }
}

/// Writes to `*out` the byte offset, in weights packed in `bf16p12_b32`, of the tile holding
/// channel `n_idx` (a multiple of the format's tile width).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b32_packed_offset(n_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p12::BF16P12_B32.packed_offset(n_idx, k, 0), out) }
}

/// Packs `n` channels of depth `k` into `bf16p12_b32` (f32 weights rounded to bf16, to nearest
/// even; f32 biases): `rhs` (`rhs_len` values) holds the `n x k` weights in `layout`
/// (`QGEMM_LAYOUT_NXK`: `n` rows of `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `rhs_stride`
/// values apart; `bias`: `n` values or NULL (zeros); `rhs_packed`: at least
/// `qgemm_rhs_bf16p12_b32_packed_size` bytes, every one of which is written (padding 0). KleidiAI:
/// `rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b32_pack(
    n: usize,
    k: usize,
    rhs: *const f32,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f32, f32, f32, f32>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| bf16p12::pack_b32(n, k, s, b, o),
        )
    }
}

/// As `qgemm_rhs_bf16p12_b32_pack`, from f16 weights: `rhs` holds `uint16_t` bit patterns
/// (widened exactly, then rounded to bf16 to nearest even); `bias` stays `n` floats or NULL.
/// KleidiAI: `rhs_pack_kxn_bf16p12x4biasf32_f16_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it,
/// as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b32_pack_f16(
    n: usize,
    k: usize,
    rhs: *const u16,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f16, f32, u16, f32>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| bf16p12::pack_b32(n, k, s, b, o),
        )
    }
}

/// Writes to `*out` the bytes of weights packed in `bf16p12_b16` for `n` channels of depth `k`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b16_packed_size(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p12::BF16P12_B16.packed_size(n, k, 0), out) }
}

/// Writes to `*out` the byte offset, in weights packed in `bf16p12_b16`, of the tile holding
/// channel `n_idx` (a multiple of the format's tile width).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b16_packed_offset(n_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p12::BF16P12_B16.packed_offset(n_idx, k, 0), out) }
}

/// Packs `n` channels of depth `k` into `bf16p12_b16` (f16 weights rounded to bf16; f16 biases):
/// `rhs` (`rhs_len` values) holds the `n x k` weights in `layout` (`QGEMM_LAYOUT_NXK`: `n` rows of
/// `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `rhs_stride` values apart; `bias`: `n` values or
/// NULL (zeros); `rhs_packed`: at least `qgemm_rhs_bf16p12_b16_packed_size` bytes, every one of
/// which is written (padding 0). KleidiAI: `rhs_pack_kxn_bf16p12x4biasf16_f16_neon`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_bf16p12_b16_pack(
    n: usize,
    k: usize,
    rhs: *const u16,
    rhs_len: usize,
    layout: u32,
    rhs_stride: usize,
    bias: *const u16,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `rhs_pack`'s.
    unsafe {
        rhs_pack::<f16, f16, u16, u16>(
            (rhs, rhs_len, layout, rhs_stride),
            (bias, bias_len),
            (rhs_packed, rhs_packed_len),
            |s, b, o| bf16p12::pack_b16(n, k, s, b, o),
        )
    }
}

/// The body of the bf16 LHS packers.
///
/// # Safety
///
/// Each pointer is null or valid for the reads or writes of its length.
unsafe fn lhs_pack<V: DstElem + qgemm::Element, T: CElem>(
    format: &LhsPacking,
    (m, k): (usize, usize),
    (lhs, lhs_len, stride): (*const T, usize, usize),
    (out, out_len): (*mut u8, usize),
) -> qgemm_status {
    status(|| {
        // SAFETY: `lhs` is null or valid for `lhs_len` reads (this function's contract).
        let (x, x_span) = unsafe { elems::<V, T>(lhs, lhs_len) }?;
        // SAFETY: `out` is null or valid for `out_len` writes (this function's contract);
        // `output` checks that it overlaps the input not.
        let out = unsafe { output(out, out_len, &[x_span]) }?;
        Ok(bf16p::pack(format, m, k, x, stride, out)?)
    })
}

/// Writes to `*out` the bytes of `m` rows of depth `k` packed in `bf16p1x4`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p1x4_packed_size(m: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p::BF16P1X4.packed_size(m, k, 0), out) }
}

/// Writes to `*out` the byte offset, in an LHS packed in `bf16p1x4`, of the tile holding row
/// `m_idx` (a multiple of the format's rows per tile).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p1x4_packed_offset(m_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p::BF16P1X4.packed_offset(m_idx, k, 0), out) }
}

/// Packs `m` rows of depth `k` of f32 activations (`lhs`, `lhs_len` floats, row `i` at `lhs[i *
/// lhs_stride]`, `lhs_stride >= k`) into `bf16p1x4` (one row per tile; the last `k % 4` values of a
/// row truncated to bf16, the others rounded to nearest even, as KleidiAI's
/// `lhs_quant_pack_bf16p1x4_f32_neon` built with GCC): `lhs_packed`, at least
/// `qgemm_lhs_bf16p1x4_packed_size` bytes, every one of which is written. Rows are the matrix rows
/// from a tile start: to pack rows from `m0` (a multiple of the rows per tile) separately, pass
/// `lhs + m0 * lhs_stride` and `lhs_packed + qgemm_lhs_bf16p1x4_packed_offset(m0)`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p1x4_pack(
    m: usize,
    k: usize,
    lhs: *const f32,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `lhs_pack`'s.
    unsafe { lhs_pack::<f32, f32>(&bf16p::BF16P1X4, (m, k), (lhs, lhs_len, lhs_stride), (lhs_packed, lhs_packed_len)) }
}

/// As `qgemm_lhs_bf16p1x4_pack`, from f16 activations (`uint16_t` bit patterns, widened exactly).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it,
/// as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p1x4_pack_f16(
    m: usize,
    k: usize,
    lhs: *const u16,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `lhs_pack`'s.
    unsafe { lhs_pack::<f16, u16>(&bf16p::BF16P1X4, (m, k), (lhs, lhs_len, lhs_stride), (lhs_packed, lhs_packed_len)) }
}

/// Writes to `*out` the bytes of `m` rows of depth `k` packed in `bf16p8x4`.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p8x4_packed_size(m: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p::BF16P8X4.packed_size(m, k, 0), out) }
}

/// Writes to `*out` the byte offset, in an LHS packed in `bf16p8x4`, of the tile holding row
/// `m_idx` (a multiple of the format's rows per tile).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p8x4_packed_offset(m_idx: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer_size(bf16p::BF16P8X4.packed_offset(m_idx, k, 0), out) }
}

/// Packs `m` rows of depth `k` of f32 activations (`lhs`, `lhs_len` floats, row `i` at `lhs[i *
/// lhs_stride]`, `lhs_stride >= k`) into `bf16p8x4` (eight rows per tile, rounded to nearest even;
/// rows past `m` in the last tile repeat its first row (KleidiAI
/// `lhs_quant_pack_bf16p8x4_f32_neon`, `lhs_pack_bf16p8x4_f16_neon`)): `lhs_packed`, at least
/// `qgemm_lhs_bf16p8x4_packed_size` bytes, every one of which is written. Rows are the matrix rows
/// from a tile start: to pack rows from `m0` (a multiple of the rows per tile) separately, pass
/// `lhs + m0 * lhs_stride` and `lhs_packed + qgemm_lhs_bf16p8x4_packed_offset(m0)`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it, as
/// the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p8x4_pack(
    m: usize,
    k: usize,
    lhs: *const f32,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `lhs_pack`'s.
    unsafe { lhs_pack::<f32, f32>(&bf16p::BF16P8X4, (m, k), (lhs, lhs_len, lhs_stride), (lhs_packed, lhs_packed_len)) }
}

/// As `qgemm_lhs_bf16p8x4_pack`, from f16 activations (`uint16_t` bit patterns, widened exactly).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it,
/// as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_bf16p8x4_pack_f16(
    m: usize,
    k: usize,
    lhs: *const u16,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    // SAFETY: the pointers as this function's contract says, which is `lhs_pack`'s.
    unsafe { lhs_pack::<f16, u16>(&bf16p::BF16P8X4, (m, k), (lhs, lhs_len, lhs_stride), (lhs_packed, lhs_packed_len)) }
}
