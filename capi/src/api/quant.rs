//! Weight quantization in C (`qgemm_quant_*`): the Rust `qgemm::quant` quantizers, from float
//! weights to the raw inputs of the `qgemm_rhs_*_pack` functions, in caller buffers.
//!
//! * The weights are a [`qgemm_weights`]: `float`, or f16 / bf16 as `uint16_t` bit patterns
//!   (`elem`: `QGEMM_WEIGHTS_F32`, `_F16`, `_BF16`), NxK or KxN with a row stride in elements.
//! * The symmetric formats (`qsi4cxp`, `qsi4c32p`, `q4_0`, `qsi8cxp`) take a scale rule
//!   `QGEMM_QUANT_*` and an importance vector used only by `QGEMM_QUANT_WEIGHTED_SEARCH` (`k`
//!   non-negative floats; `NULL` with every other rule, else `QGEMM_ERROR_INVALID_ARGUMENT`).
//! * `qai4c32p` takes `QGEMM_QUANT_QAI4C32P_MIN_MAX` or `_FITTED`, `qsu2cxp` a 4-entry table
//!   (`NULL`: `{-2, -1, 0, 1}`); both read NxK weights only (KxN: `QGEMM_ERROR_UNSUPPORTED`).
//! * GPTQ: a [`qgemm_quant_hessian`] (plain data over a caller `double` buffer) accumulates
//!   `X^T X` from activation rows; `qgemm_quant_gptq_*` quantize with it, a damping and a
//!   caller `double` workspace.
//!
//! Every call checks everything before it writes anything; the outputs must not overlap the
//! inputs or each other (`QGEMM_ERROR_BUFFERS_OVERLAP`).

use core::ffi::c_void;

use qgemm::Element;
use qgemm::quant::{self, Method, Weights, gptq};

use super::*;

/// Weights of `float` elements.
pub const QGEMM_WEIGHTS_F32: u32 = 0;
/// Weights of f16 elements (`uint16_t` bit patterns).
pub const QGEMM_WEIGHTS_F16: u32 = 1;
/// Weights of bf16 elements (`uint16_t` bit patterns).
pub const QGEMM_WEIGHTS_BF16: u32 = 2;

/// Scale rule: `scale = max |w| / L` (`L` = 7 for int4, 127 for int8; rounded to the stored
/// type), `code = round(w / scale)` (ties away from zero) clamped to `[-L - 1, L]`.
pub const QGEMM_QUANT_ROUND_TO_NEAREST: u32 = 0;
/// Scale rule: GGML's `Q4_0` rule (`d = m / -(L + 1)`, `m` the group's first value of largest
/// magnitude); `qgemm_quant_q4_0` with it gives `quantize_row_q4_0_ref`'s bytes.
pub const QGEMM_QUANT_SIGNED_MAX: u32 = 1;
/// Scale rule: the error-minimizing search over candidate scales.
pub const QGEMM_QUANT_SEARCH: u32 = 2;
/// Scale rule: the search with the squared error of depth `j` weighted by `importance[j]`.
pub const QGEMM_QUANT_WEIGHTED_SEARCH: u32 = 3;
/// Scale rule of `qgemm_quant_gptq_*` only: the weighted search with the Hessian's diagonal as
/// the importance (GPTQ's default).
pub const QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH: u32 = 4;

/// `qai4c32p` rule: the block's `[min, max]` in 15 steps (GGML `Q4_1`).
pub const QGEMM_QUANT_QAI4C32P_MIN_MAX: u32 = 0;
/// `qai4c32p` rule: min-max, then the least-squares scale and offset for those codes.
pub const QGEMM_QUANT_QAI4C32P_FITTED: u32 = 1;

/// A float weight matrix of `n` output channels by `k` depths.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_weights {
    /// The values: `float` (`QGEMM_WEIGHTS_F32`) or `uint16_t` (`_F16`, `_BF16`), aligned to
    /// their type.
    pub data: *const c_void,
    /// Elements at `data`.
    pub len: usize,
    /// `QGEMM_WEIGHTS_F32`, `QGEMM_WEIGHTS_F16` or `QGEMM_WEIGHTS_BF16`.
    pub elem: u32,
    /// `QGEMM_LAYOUT_NXK` (channel `c` is row `c`) or `QGEMM_LAYOUT_KXN` (depth `j` is row `j`).
    pub layout: u32,
    /// Row stride in elements: at least `k` (NxK) or `n` (KxN).
    pub stride: usize,
}

/// The accumulator of `H = X^T X` for GPTQ: plain data over the caller's storage, filled by
/// `qgemm_quant_hessian_init` and updated by `qgemm_quant_hessian_add` (checked on every use).
/// `data` must stay valid, and change only through those calls, while the Hessian is used.
/// The GPTQ quantizers and `qgemm_quant_hessian_diagonal` only read it: several of them may run
/// on one Hessian at once (threads), and `data` may be read-only memory for them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_quant_hessian {
    /// The packed upper triangle of `H` (`qgemm_quant_hessian_len(k)` doubles used).
    pub data: *mut f64,
    /// Doubles at `data`.
    pub len: usize,
    /// Input features (depth of the layer).
    pub k: usize,
    /// Activation rows accumulated so far.
    pub rows: usize,
}

/// The weights of a C [`qgemm_weights`], by element type.
enum AnyWeights<'a> {
    F32(Weights<'a, f32>),
    F16(Weights<'a, f16>),
    Bf16(Weights<'a, bf16>),
}

/// Runs `$body` with `$w` bound to the [`Weights`] of an [`AnyWeights`], whatever its type.
macro_rules! with_weights {
    ($any:expr, |$w:ident| $body:expr) => {
        match $any {
            AnyWeights::F32($w) => $body,
            AnyWeights::F16($w) => $body,
            AnyWeights::Bf16($w) => $body,
        }
    };
}

/// The Rust view of a C weight matrix and its byte range.
///
/// # Safety
///
/// `w` is null or valid for a read of a struct whose `data` is null or valid for `len` reads
/// of its element type that nothing writes during the call.
unsafe fn weights_in<'a>(w: *const qgemm_weights) -> Status<(AnyWeights<'a>, Span)> {
    // SAFETY: `w` is null or valid for a read (this function's contract).
    let s = unsafe { read_in(w) }?;
    let layout = layout(s.layout)?;
    /// The slice of `T`s at `data`.
    ///
    /// # Safety
    ///
    /// `data` is null or valid for `len` reads of `T`.
    unsafe fn view<'a, T>(data: *const c_void, len: usize) -> Status<(&'a [T], Span)> {
        // SAFETY: this function's contract is `input`'s.
        unsafe { input(data.cast::<T>(), len) }
    }
    Ok(match s.elem {
        QGEMM_WEIGHTS_F32 => {
            // SAFETY: `data` is null or valid for `len` reads of `float` (this function's
            // contract, `elem` naming the type).
            let (data, span) = unsafe { view::<f32>(s.data, s.len) }?;
            (AnyWeights::F32(Weights { data, layout, stride: s.stride }), span)
        }
        QGEMM_WEIGHTS_F16 => {
            // SAFETY: `data` is null or valid for `len` reads of `uint16_t` (this function's
            // contract); `f16` is a `repr(transparent)` `u16` (same size and alignment, every
            // bit pattern valid).
            let (data, span) = unsafe { view::<f16>(s.data, s.len) }?;
            (AnyWeights::F16(Weights { data, layout, stride: s.stride }), span)
        }
        QGEMM_WEIGHTS_BF16 => {
            // SAFETY: as for f16: `bf16` is a `repr(transparent)` `u16`.
            let (data, span) = unsafe { view::<bf16>(s.data, s.len) }?;
            (AnyWeights::Bf16(Weights { data, layout, stride: s.stride }), span)
        }
        _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    })
}

/// The NxK rows and row stride of weights for the quantizers that take NxK only (`qai4c32p`,
/// `qsu2cxp`); KxN is `QGEMM_ERROR_UNSUPPORTED`.
fn nxk_only<'a, S: Element>(w: &Weights<'a, S>) -> Status<(&'a [S], usize)> {
    match w.layout {
        Layout::NxK => Ok((w.data, w.stride)),
        Layout::KxN => Err(qgemm_status::QGEMM_ERROR_UNSUPPORTED),
    }
}

/// The scale rule of a `QGEMM_QUANT_*` code and its importance vector (null unless the rule is
/// `QGEMM_QUANT_WEIGHTED_SEARCH`), with the vector's byte range. `None` is
/// `QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH`, accepted only when `gptq` is set.
///
/// # Safety
///
/// `importance` is null or valid for `importance_len` reads that nothing writes during the call.
unsafe fn method_in<'a>(
    code: u32,
    importance: *const f32,
    importance_len: usize,
    gptq: bool,
) -> Status<(Option<Method<'a>>, Span)> {
    let plain = |m: Method<'a>| {
        if importance.is_null() { Ok((Some(m), NO_SPAN)) } else { Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT) }
    };
    match code {
        QGEMM_QUANT_ROUND_TO_NEAREST => plain(Method::RoundToNearest),
        QGEMM_QUANT_SIGNED_MAX => plain(Method::SignedMax),
        QGEMM_QUANT_SEARCH => plain(Method::Search),
        QGEMM_QUANT_WEIGHTED_SEARCH => {
            // SAFETY: `importance` is null or valid for `importance_len` reads (this
            // function's contract); null is an error here.
            let (imp, span) = unsafe { input(importance, importance_len) }?;
            Ok((Some(Method::WeightedSearch(imp)), span))
        }
        QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH if gptq => {
            if importance.is_null() {
                Ok((None, NO_SPAN))
            } else {
                Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
            }
        }
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    }
}

/// The symmetric rule of a plain (not GPTQ) quantizer.
///
/// # Safety
///
/// As [`method_in`].
unsafe fn plain_method_in<'a>(code: u32, importance: *const f32, len: usize) -> Status<(Method<'a>, Span)> {
    // SAFETY: this function's contract is `method_in`'s.
    let (m, span) = unsafe { method_in(code, importance, len, false) }?;
    // `method_in` gives `None` only with `gptq` set.
    Ok((m.ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?, span))
}

/// [`output`] and the byte range of the output (for the overlap checks of a later output).
///
/// # Safety
///
/// As [`output`].
unsafe fn output_span<'a, T>(p: *mut T, len: usize, inputs: &[Span]) -> Status<(&'a mut [T], Span)> {
    let range = span(p, len)?;
    // SAFETY: this function's contract is `output`'s.
    Ok((unsafe { output(p, len, inputs) }?, range))
}

/// Writes `a` through `out_a` and `b` through `out_b` (both checked before either is written).
///
/// # Safety
///
/// Each pointer is null or valid for a write of a `usize`.
unsafe fn put_pair(value: qgemm::Result<(usize, usize)>, out_a: *mut usize, out_b: *mut usize) -> qgemm_status {
    status(|| {
        for p in [out_a, out_b] {
            span(p, 1)?;
        }
        let (a, b) = value?;
        // SAFETY: each pointer is null or valid for a write (this function's contract).
        unsafe { put(out_a, a) }?;
        // SAFETY: as above.
        unsafe { put(out_b, b) }
    })
}

/// Writes `value` through `out`.
///
/// # Safety
///
/// `out` is null or valid for a write of a `usize`.
unsafe fn put_one(value: qgemm::Result<usize>, out: *mut usize) -> qgemm_status {
    status(|| {
        span(out, 1)?;
        // SAFETY: `out` is null or valid for a write (this function's contract).
        unsafe { put(out, value?) }
    })
}

// ---- size queries -------------------------------------------------------------------------

/// Writes the sizes of the `qsi4cxp` quantizer's outputs for `n x k` weights: `*codes_len =
/// n * ceil(k/2)` bytes, `*scale_len = n` floats.
///
/// # Safety
///
/// Every pointer argument is null or valid for a write of one element, as the module
/// conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_qsi4cxp_sizes(
    n: usize,
    k: usize,
    codes_len: *mut usize,
    scale_len: *mut usize,
) -> qgemm_status {
    // SAFETY: the out pointers as this function's contract says.
    unsafe { put_pair(quant::qsi4cxp::sizes(n, k), codes_len, scale_len) }
}

/// Writes the sizes of the `qsi4c32p` quantizer's outputs for `n x k` weights in blocks of `bl`
/// (a multiple of 32 dividing `k`): `*codes_len = n * k/2` bytes, `*scale_len = n * k/bl` bf16
/// scales (`uint16_t`).
///
/// # Safety
///
/// Every pointer argument is null or valid for a write of one element, as the module
/// conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_qsi4c32p_sizes(
    n: usize,
    k: usize,
    bl: usize,
    codes_len: *mut usize,
    scale_len: *mut usize,
) -> qgemm_status {
    // SAFETY: the out pointers as this function's contract says.
    unsafe { put_pair(quant::qsi4c32p::sizes(n, k, bl), codes_len, scale_len) }
}

/// Writes the bytes of the `Q4_0` blocks of `n x k` weights in blocks of `bl`:
/// `n * (k/bl) * (2 + bl/2)` (the row stride `qgemm_rhs_qsi4c32pscalef16_pack` takes is
/// `(k/bl) * (2 + bl/2)`).
///
/// # Safety
///
/// `out` is null or valid for a write of one element, as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_q4_0_size(n: usize, k: usize, bl: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` as this function's contract says.
    unsafe { put_one(quant::q4_0::size(n, k, bl), out) }
}

/// Writes the sizes of the `qsi8cxp` quantizer's outputs: `*codes_len = n * k` int8 codes,
/// `*scale_len = n` floats.
///
/// # Safety
///
/// Every pointer argument is null or valid for a write of one element, as the module
/// conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_qsi8cxp_sizes(
    n: usize,
    k: usize,
    codes_len: *mut usize,
    scale_len: *mut usize,
) -> qgemm_status {
    // SAFETY: the out pointers as this function's contract says.
    unsafe { put_pair(quant::qsi8cxp::sizes(n, k), codes_len, scale_len) }
}

/// Writes the sizes of the `qai4c32p` quantizer's outputs: `*codes_len = n * k/2` bytes,
/// `*params_len = n * k/bl` floats for each of `zero` and `scale`.
///
/// # Safety
///
/// Every pointer argument is null or valid for a write of one element, as the module
/// conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_qai4c32p_sizes(
    n: usize,
    k: usize,
    bl: usize,
    codes_len: *mut usize,
    params_len: *mut usize,
) -> qgemm_status {
    // SAFETY: the out pointers as this function's contract says.
    unsafe { put_pair(quant::qai4c32p::sizes(n, k, bl), codes_len, params_len) }
}

/// Writes the sizes of the `qsu2cxp` quantizer's outputs (`k` a multiple of 4):
/// `*codes_len = n * k/4` bytes, `*scale_len = n` floats.
///
/// # Safety
///
/// Every pointer argument is null or valid for a write of one element, as the module
/// conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_qsu2cxp_sizes(
    n: usize,
    k: usize,
    codes_len: *mut usize,
    scale_len: *mut usize,
) -> qgemm_status {
    // SAFETY: the out pointers as this function's contract says.
    unsafe { put_pair(quant::qsu2cxp::sizes(n, k), codes_len, scale_len) }
}

// ---- the plain quantizers -----------------------------------------------------------------

/// The inputs of a plain symmetric quantizer: the weights, the rule and the byte ranges of both.
///
/// # Safety
///
/// `weights` is null or a readable struct whose `data` is null or valid for `len` reads, and
/// `importance` null or valid for `importance_len` reads, that nothing writes during the call.
unsafe fn plain_in<'a>(
    weights: *const qgemm_weights,
    (method, importance, importance_len): (u32, *const f32, usize),
) -> Status<(AnyWeights<'a>, Method<'a>, [Span; 2])> {
    // SAFETY: this function's contract.
    let (w, w_span) = unsafe { weights_in(weights) }?;
    // SAFETY: this function's contract.
    let (m, imp_span) = unsafe { plain_method_in(method, importance, importance_len) }?;
    Ok((w, m, [w_span, imp_span]))
}

/// The codes and the scales of a quantizer (pointer and length each), checked to overlap none
/// of `inputs` (byte ranges) nor each other.
///
/// # Safety
///
/// Both pointers are null or valid for their lengths' writes that nothing else accesses during
/// the call, except through the buffers `inputs` describes.
unsafe fn codes_and_scales<'a, C, S>(
    (codes, codes_len): (*mut C, usize),
    (scale, scale_len): (*mut S, usize),
    inputs: &[Span],
) -> Status<(&'a mut [C], &'a mut [S])> {
    // SAFETY: this function's contract; `output_span` checks the codes overlap no input.
    let (c, (c0, c1)) = unsafe { output_span(codes, codes_len, inputs) }?;
    let (s0, s1) = span(scale, scale_len)?;
    if s0 < c1 && c0 < s1 {
        return Err(qgemm_status::QGEMM_ERROR_BUFFERS_OVERLAP);
    }
    // SAFETY: this function's contract; disjoint from the codes (above) and, as `output`
    // checks, from every input.
    let s = unsafe { output(scale, scale_len, inputs) }?;
    Ok((c, s))
}

/// Quantizes `n x k` weights per channel to symmetric int4 (`qsi4cxp`), the raw input of
/// `qgemm_rhs_qsi4cxp_pack` (`QGEMM_LAYOUT_NXK`, `QGEMM_INT4_SIGNED`, stride `ceil(k/2)`).
///
/// * `weights`: every value finite (`QGEMM_ERROR_NON_FINITE`).
/// * `method`: `QGEMM_QUANT_*`; `importance`, `importance_len` floats: `k` non-negative finite
///   values for `QGEMM_QUANT_WEIGHTED_SEARCH`, `NULL` otherwise.
/// * `codes`, `codes_len` bytes and `scale`, `scale_len` floats: `qgemm_quant_qsi4cxp_sizes`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_qsi4cxp(
    n: usize,
    k: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    codes: *mut u8,
    codes_len: usize,
    scale: *mut f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: the pointer arguments as this function's contract says.
        let (w, m, inputs) = unsafe { plain_in(weights, (method, importance, importance_len)) }?;
        // SAFETY: as above.
        let (c, s) = unsafe { codes_and_scales((codes, codes_len), (scale, scale_len), &inputs) }?;
        Ok(with_weights!(w, |w| quant::qsi4cxp::quantize(m, n, k, &w, c, s))?)
    })
}

/// Quantizes `n x k` weights per block of `bl` depths (a multiple of 32 dividing `k`) to
/// symmetric int4 with bf16 scales (`qsi4c32p`), the raw input of `qgemm_rhs_qsi4c32p_pack`
/// (`QGEMM_LAYOUT_NXK`, `QGEMM_INT4_SIGNED`, stride `k/2`; scales dense, stride `k/bl`).
/// Arguments as `qgemm_quant_qsi4cxp`; `scale`, `scale_len`: bf16 bit patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_qsi4c32p(
    n: usize,
    k: usize,
    bl: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    codes: *mut u8,
    codes_len: usize,
    scale: *mut u16,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: the pointer arguments as this function's contract says.
        let (w, m, inputs) = unsafe { plain_in(weights, (method, importance, importance_len)) }?;
        // SAFETY: as above; `bf16` is a `repr(transparent)` `u16`.
        let scale = (scale.cast::<bf16>(), scale_len);
        // SAFETY: as above.
        let (c, s) = unsafe { codes_and_scales((codes, codes_len), scale, &inputs) }?;
        Ok(with_weights!(w, |w| quant::qsi4c32p::quantize(m, n, k, bl, &w, c, s))?)
    })
}

/// Quantizes `n x k` weights per block of `bl` depths to GGML `Q4_0` blocks (f16 scale, then
/// `bl/2` bytes of `code + 8`, depth `q` in the low nibble of byte `q` and `q + bl/2` in its high
/// one), the input of `qgemm_rhs_qsi4c32pscalef16_pack`. With `QGEMM_QUANT_SIGNED_MAX` and
/// `bl = 32`: `quantize_row_q4_0_ref`'s bytes. A block whose scale overflows f16:
/// `QGEMM_ERROR_SCALE_OVERFLOW`. Other arguments as `qgemm_quant_qsi4cxp`; `blocks`,
/// `blocks_len` bytes: `qgemm_quant_q4_0_size`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_q4_0(
    n: usize,
    k: usize,
    bl: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    blocks: *mut u8,
    blocks_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: the pointer arguments as this function's contract says.
        let (w, m, inputs) = unsafe { plain_in(weights, (method, importance, importance_len)) }?;
        // SAFETY: `blocks` is null or valid for `blocks_len` writes (this function's
        // contract); `output` checks it overlaps no input.
        let b = unsafe { output(blocks, blocks_len, &inputs) }?;
        Ok(with_weights!(w, |w| quant::q4_0::quantize(m, n, k, bl, &w, b))?)
    })
}

/// Quantizes `n x k` weights per channel to symmetric int8 (`qsi8cxp`), the raw input of
/// `qgemm_rhs_qsi8cxp_pack` (`QGEMM_LAYOUT_NXK`, stride `k`). Arguments as
/// `qgemm_quant_qsi4cxp`; `codes`, `codes_len`: `n * k` int8 codes.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_qsi8cxp(
    n: usize,
    k: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    codes: *mut i8,
    codes_len: usize,
    scale: *mut f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: the pointer arguments as this function's contract says.
        let (w, m, inputs) = unsafe { plain_in(weights, (method, importance, importance_len)) }?;
        // SAFETY: as above.
        let (c, s) = unsafe { codes_and_scales((codes, codes_len), (scale, scale_len), &inputs) }?;
        Ok(with_weights!(w, |w| quant::qsi8cxp::quantize(m, n, k, &w, c, s))?)
    })
}

/// Quantizes NxK weights (`QGEMM_LAYOUT_KXN`: `QGEMM_ERROR_UNSUPPORTED`) per block of `bl`
/// depths to asymmetric int4 (`qai4c32p`), the raw input of `qgemm_rhs_qai4c32p_pack`: `codes`
/// (`n` rows of `k/2` bytes, s0s1 order, unsigned `u`), `zero` and `scale` (`n * k/bl` floats
/// each, dense), `w ~ (u - 8) * scale + zero`. `method`: `QGEMM_QUANT_QAI4C32P_*`. Sizes:
/// `qgemm_quant_qai4c32p_sizes`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_qai4c32p(
    n: usize,
    k: usize,
    bl: usize,
    weights: *const qgemm_weights,
    method: u32,
    codes: *mut u8,
    codes_len: usize,
    zero: *mut f32,
    zero_len: usize,
    scale: *mut f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        let m = match method {
            QGEMM_QUANT_QAI4C32P_MIN_MAX => quant::qai4c32p::Method::MinMax,
            QGEMM_QUANT_QAI4C32P_FITTED => quant::qai4c32p::Method::Fitted,
            _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
        };
        // SAFETY: `weights` is null or a readable struct whose `data` is null or valid for
        // `len` reads (this function's contract).
        let (w, w_span) = unsafe { weights_in(weights) }?;
        // SAFETY: `codes`, `zero` and `scale` are null or valid for their lengths' writes
        // (this function's contract); `output_span` checks they overlap no input nor each
        // other.
        let (c, c_span) = unsafe { output_span(codes, codes_len, &[w_span]) }?;
        // SAFETY: as above.
        let (z, z_span) = unsafe { output_span(zero, zero_len, &[w_span, c_span]) }?;
        // SAFETY: as above.
        let s = unsafe { output(scale, scale_len, &[w_span, c_span, z_span]) }?;
        with_weights!(w, |w| {
            let (data, stride) = nxk_only(&w)?;
            Ok(quant::qai4c32p::quantize(m, n, k, bl, data, stride, c, z, s)?)
        })
    })
}

/// Quantizes NxK weights (`QGEMM_LAYOUT_KXN`: `QGEMM_ERROR_UNSUPPORTED`) per channel to 2-bit
/// codes through the table `lut` (`qsu2cxp`), the raw input of `qgemm_rhs_qsu2cxp_pack` (`k` a
/// multiple of 4; of 32 for the packer): `codes` (`n` rows of `k/4` bytes, the first depth in
/// the lowest bits) and `scale` (`n` floats), `w ~ scale * lut[u]`. `lut`: 4 `int32_t` in
/// `[-64, 63]`, not all zero (`QGEMM_ERROR_LUT_OUT_OF_RANGE`), or `NULL` for `{-2, -1, 0, 1}`;
/// pack and run with the same table. Sizes: `qgemm_quant_qsu2cxp_sizes`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs, 4 for `lut`), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_qsu2cxp(
    n: usize,
    k: usize,
    weights: *const qgemm_weights,
    lut: *const i32,
    codes: *mut u8,
    codes_len: usize,
    scale: *mut f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `weights` is null or a readable struct whose `data` is null or valid for
        // `len` reads (this function's contract).
        let (w, w_span) = unsafe { weights_in(weights) }?;
        // SAFETY: `lut` is null or valid for 4 reads (this function's contract).
        let (table, lut_span) = unsafe { lut_in(lut) }?;
        // SAFETY: `codes` and `scale` are null or valid for their lengths' writes (this
        // function's contract); `output_span` checks they overlap no input nor each other.
        let (c, c_span) = unsafe { output_span(codes, codes_len, &[w_span, lut_span]) }?;
        // SAFETY: as above.
        let s = unsafe { output(scale, scale_len, &[w_span, lut_span, c_span]) }?;
        with_weights!(w, |w| {
            let (data, stride) = nxk_only(&w)?;
            Ok(quant::qsu2cxp::quantize(n, k, data, stride, table.as_ref(), c, s)?)
        })
    })
}

// ---- GPTQ ---------------------------------------------------------------------------------

/// Writes the doubles a Hessian of `k` input features needs: `k * (k + 1) / 2`.
///
/// # Safety
///
/// `out` is null or valid for a write of one element, as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_hessian_len(k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` as this function's contract says.
    unsafe { put_one(gptq::Hessian::buffer_len(k), out) }
}

/// Starts an empty Hessian of `k` input features in `data` (`data_len` doubles, at least
/// `qgemm_quant_hessian_len(k)`; those are zeroed) and fills `*hessian`. `hessian` must not
/// overlap `data`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the writes of the length given with it (one
/// element for `hessian`), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_hessian_init(
    hessian: *mut qgemm_quant_hessian,
    data: *mut f64,
    data_len: usize,
    k: usize,
) -> qgemm_status {
    status(|| {
        let h_span = span(hessian, 1)?;
        // SAFETY: `data` is null or valid for `data_len` writes (this function's contract);
        // `output` checks it does not overlap `*hessian`.
        let buf = unsafe { output(data, data_len, &[h_span]) }?;
        gptq::Hessian::new(buf, k)?;
        // SAFETY: `hessian` is null or valid for a write (this function's contract).
        unsafe { put(hessian, qgemm_quant_hessian { data, len: data_len, k, rows: 0 }) }
    })
}

/// The Rust Hessian of a C one, its storage checked not to overlap `inputs` nor the struct
/// itself, and the byte range of its storage.
///
/// # Safety
///
/// `h.data` is null or valid for `h.len` reads and writes that nothing else accesses during
/// the call, except through the buffers `inputs` describes.
unsafe fn hessian_of<'a>(h: &qgemm_quant_hessian, inputs: &[Span]) -> Status<(gptq::Hessian<'a>, Span)> {
    // SAFETY: this function's contract is `output_span`'s.
    let (buf, range) = unsafe { output_span(h.data, h.len, inputs) }?;
    Ok((gptq::Hessian::from_parts(buf, h.k, h.rows)?, range))
}

/// The read-only Rust view of a C Hessian, for the calls that only read it (GPTQ, the
/// diagonal): a shared slice, so concurrent calls may share the storage and it may be mapped
/// read-only. Its storage is checked not to overlap `inputs` nor the struct (as the writers'),
/// and its byte range returned for the checks of the outputs.
///
/// # Safety
///
/// `h.data` is null or valid for `h.len` reads that nothing writes during the call.
unsafe fn hessian_view_of<'a>(h: &qgemm_quant_hessian, inputs: &[Span]) -> Status<(gptq::HessianRef<'a>, Span)> {
    // SAFETY: `h.data` is null or valid for `h.len` reads that nothing writes during the call
    // (this function's contract), which is `input`'s.
    let (buf, (start, end)) = unsafe { input(h.data.cast_const(), h.len) }?;
    if inputs.iter().any(|&(s, e)| start < e && s < end) {
        return Err(qgemm_status::QGEMM_ERROR_BUFFERS_OVERLAP);
    }
    Ok((gptq::HessianRef::from_parts(buf, h.k, h.rows)?, (start, end)))
}

/// Adds `m` activation rows of `k` floats to `*hessian` (`x`, `x_len` floats, row `r` at
/// `x[r * x_stride]`, `x_stride >= k`; every value finite, else `QGEMM_ERROR_NON_FINITE`) and
/// updates `hessian->rows`. `m == 0` adds nothing. The rows may come in any number of calls: the
/// sums are the same.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for `hessian`, `hessian->len` reads and writes for `hessian->data`), as the
/// module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_hessian_add(
    hessian: *mut qgemm_quant_hessian,
    x: *const f32,
    x_len: usize,
    m: usize,
    x_stride: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `hessian` is null or valid for a read (this function's contract).
        let h = unsafe { read_in(hessian) }?;
        let h_span = span(hessian, 1)?;
        // SAFETY: `x` is null or valid for `x_len` reads (this function's contract).
        let (x, x_span) = unsafe { input(x, x_len) }?;
        // SAFETY: `h.data` is null or valid for `h.len` reads and writes (this function's
        // contract); `hessian_of` checks it overlaps neither `x` nor `*hessian`.
        let (mut rust, _) = unsafe { hessian_of(&h, &[x_span, h_span]) }?;
        rust.add(x, m, x_stride)?;
        let rows = rust.rows();
        // SAFETY: `hessian` is non-null and aligned (read above) and valid for a write (this
        // function's contract); `rust`'s storage does not overlap it (checked above).
        unsafe { put(hessian, qgemm_quant_hessian { rows, ..h }) }
    })
}

/// Writes the diagonal of `*hessian` (the sums of squares of each input feature, as floats
/// saturated at `FLT_MAX`) into `out`, `out_len` floats (at least `k`): the `importance` of
/// `QGEMM_QUANT_WEIGHTED_SEARCH`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for `hessian`, `hessian->len` reads for `hessian->data`, which is only read:
/// concurrent calls may share it, and it may be read-only memory), as the module conventions
/// say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_hessian_diagonal(
    hessian: *const qgemm_quant_hessian,
    out: *mut f32,
    out_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `hessian` is null or valid for a read (this function's contract).
        let h = unsafe { read_in(hessian) }?;
        let h_span = span(hessian, 1)?;
        // SAFETY: `h.data` is null or valid for `h.len` reads that nothing writes during the
        // call (this function's contract); `hessian_view_of` checks it does not overlap
        // `*hessian`.
        let (rust, data_span) = unsafe { hessian_view_of(&h, &[h_span]) }?;
        // SAFETY: `out` is null or valid for `out_len` writes (this function's contract);
        // `output` checks it overlaps neither the Hessian nor its storage.
        let out = unsafe { output(out, out_len, &[h_span, data_span]) }?;
        Ok(rust.diagonal(out)?)
    })
}

/// Turns `*hessian` (`X^T X`) into the Hessian of the activations multiplied by `scale` (`k`
/// finite floats, `scale_len` given; AWQ's multipliers, `qgemm_linear_set_input_scale`):
/// `H[i][j] * scale[i] * scale[j]` in double precision, equal to accumulating the scaled rows up
/// to rounding. Copy the `data` first (`memcpy`) to try several scales on one calibration.
/// Short or non-finite `scale`: `QGEMM_ERROR_BUFFER_TOO_SHORT` / `QGEMM_ERROR_NON_FINITE`,
/// nothing changed.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for `hessian`, `hessian->len` reads and writes for `hessian->data`), as the
/// module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_hessian_scale_inputs(
    hessian: *const qgemm_quant_hessian,
    scale: *const f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `hessian` is null or valid for a read (this function's contract).
        let h = unsafe { read_in(hessian) }?;
        let h_span = span(hessian, 1)?;
        // SAFETY: `scale` is null or valid for `scale_len` reads (this function's contract).
        let (scale, s_span) = unsafe { input(scale, scale_len) }?;
        // SAFETY: `h.data` is null or valid for `h.len` reads and writes (this function's
        // contract); `hessian_of` checks it overlaps neither `scale` nor `*hessian`.
        let (mut rust, _) = unsafe { hessian_of(&h, &[s_span, h_span]) }?;
        Ok(rust.scale_inputs(scale)?)
    })
}

/// Divides depth `j` of every channel of the `n x k` float weights at `w` (`w_len` floats,
/// `layout` `QGEMM_LAYOUT_NXK` or `QGEMM_LAYOUT_KXN`, rows `stride` floats apart) by `scale[j]`
/// in place (`scale_len` floats, at least `k`, each finite and non-zero, else
/// `QGEMM_ERROR_NON_FINITE`): the weights to quantize for a layer run with
/// `qgemm_linear_set_input_scale(scale)` (AWQ). Nothing is written on an error.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it,
/// as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_divide_depths(
    n: usize,
    k: usize,
    w: *mut f32,
    w_len: usize,
    layout: u32,
    stride: usize,
    scale: *const f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        let layout = super::layout(layout)?;
        // SAFETY: `scale` is null or valid for `scale_len` reads (this function's contract).
        let (scale, s_span) = unsafe { input(scale, scale_len) }?;
        // SAFETY: `w` is null or valid for `w_len` reads and writes (this function's contract);
        // `output` checks it does not overlap `scale`.
        let w = unsafe { output(w, w_len, &[s_span]) }?;
        Ok(quant::divide_depths(n, k, w, layout, stride, scale)?)
    })
}

/// Writes the doubles of the GPTQ workspace for `n x k` weights: `k * k + k`.
///
/// # Safety
///
/// `out` is null or valid for a write of one element, as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_quant_gptq_workspace_len(n: usize, k: usize, out: *mut usize) -> qgemm_status {
    // SAFETY: `out` as this function's contract says.
    unsafe { put_one(gptq::workspace_len(n, k), out) }
}

/// The checked inputs of a GPTQ call: the weights, the rule, the Hessian, the workspace and the
/// byte ranges the outputs must not overlap.
struct GptqIn<'a> {
    w: AnyWeights<'a>,
    method: Option<Method<'a>>,
    hessian: gptq::HessianRef<'a>,
    work: &'a mut [f64],
    spans: [Span; 5],
}

/// [`GptqIn`] of the C arguments.
///
/// # Safety
///
/// As the `qgemm_quant_gptq_*` functions: every pointer argument is null or valid for the reads
/// or writes of the length given with it.
unsafe fn gptq_in<'a>(
    weights: *const qgemm_weights,
    (method, importance, importance_len): (u32, *const f32, usize),
    hessian: *const qgemm_quant_hessian,
    work: *mut f64,
    work_len: usize,
) -> Status<GptqIn<'a>> {
    // SAFETY: `weights` is null or a readable struct whose `data` is null or valid for `len`
    // reads (this function's contract).
    let (w, w_span) = unsafe { weights_in(weights) }?;
    // SAFETY: `importance` is null or valid for `importance_len` reads (this function's
    // contract).
    let (method, imp_span) = unsafe { method_in(method, importance, importance_len, true) }?;
    // SAFETY: `hessian` is null or valid for a read (this function's contract).
    let h = unsafe { read_in(hessian) }?;
    let h_span = span(hessian, 1)?;
    // SAFETY: `h.data` is null or valid for `h.len` reads that nothing writes during the call
    // (this function's contract); `hessian_view_of` checks it overlaps no other input.
    let (hessian, data_span) = unsafe { hessian_view_of(&h, &[w_span, imp_span, h_span]) }?;
    let inputs = [w_span, imp_span, h_span, data_span];
    // SAFETY: `work` is null or valid for `work_len` writes (this function's contract);
    // `output_span` checks it overlaps no input.
    let (work, work_span) = unsafe { output_span(work, work_len, &inputs) }?;
    Ok(GptqIn { w, method, hessian, work, spans: [w_span, imp_span, h_span, data_span, work_span] })
}

/// Quantizes `n x k` weights like `qgemm_quant_qsi4cxp` (same outputs), by GPTQ:
///
/// * `hessian`: accumulated over calibration activations of this `k` (another `k`:
///   `QGEMM_ERROR_DIM_MISMATCH`; no rows: `QGEMM_ERROR_ZERO_DIM`).
/// * `method`: `QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH` (the default rule) or any `QGEMM_QUANT_*`
///   (`importance` as in `qgemm_quant_qsi4cxp`).
/// * `damp` (typically 0.01): `damp * mean(diag H)` is added to the diagonal; negative or not
///   finite: `QGEMM_ERROR_INVALID_DAMPING`. A Hessian that is still singular:
///   `QGEMM_ERROR_NOT_POSITIVE_DEFINITE` (raise `damp` or add rows).
/// * `work`, `work_len` doubles: `qgemm_quant_gptq_workspace_len`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs, `hessian->len` reads for `hessian->data`, which is only read:
/// concurrent calls may share it, and it may be read-only memory), as the module conventions
/// say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_gptq_qsi4cxp(
    n: usize,
    k: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    hessian: *const qgemm_quant_hessian,
    damp: f32,
    work: *mut f64,
    work_len: usize,
    codes: *mut u8,
    codes_len: usize,
    scale: *mut f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        let rule = (method, importance, importance_len);
        // SAFETY: the pointer arguments as this function's contract says.
        let g = unsafe { gptq_in(weights, rule, hessian, work, work_len) }?;
        // SAFETY: `codes` and `scale` are null or valid for their lengths' writes (this
        // function's contract).
        let (c, s) = unsafe { codes_and_scales((codes, codes_len), (scale, scale_len), &g.spans) }?;
        let (m, h, work) = (g.method, g.hessian, g.work);
        Ok(with_weights!(g.w, |w| gptq::qsi4cxp(m, n, k, &w, h, damp, work, c, s))?)
    })
}

/// Quantizes like `qgemm_quant_qsi4c32p` (same outputs), by GPTQ; the GPTQ arguments as
/// `qgemm_quant_gptq_qsi4cxp`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs, `hessian->len` reads for `hessian->data`, which is only read:
/// concurrent calls may share it, and it may be read-only memory), as the module conventions
/// say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_gptq_qsi4c32p(
    n: usize,
    k: usize,
    bl: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    hessian: *const qgemm_quant_hessian,
    damp: f32,
    work: *mut f64,
    work_len: usize,
    codes: *mut u8,
    codes_len: usize,
    scale: *mut u16,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        let rule = (method, importance, importance_len);
        // SAFETY: the pointer arguments as this function's contract says.
        let g = unsafe { gptq_in(weights, rule, hessian, work, work_len) }?;
        // SAFETY: `codes` and `scale` are null or valid for their lengths' writes (this
        // function's contract) (`bf16` is a `repr(transparent)` `u16`).
        let (c, s) = unsafe { codes_and_scales((codes, codes_len), (scale.cast::<bf16>(), scale_len), &g.spans) }?;
        let (m, h, work) = (g.method, g.hessian, g.work);
        Ok(with_weights!(g.w, |w| gptq::qsi4c32p(m, n, k, bl, &w, h, damp, work, c, s))?)
    })
}

/// Quantizes like `qgemm_quant_q4_0` (same blocks), by GPTQ; the GPTQ arguments as
/// `qgemm_quant_gptq_qsi4cxp`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs, `hessian->len` reads for `hessian->data`, which is only read:
/// concurrent calls may share it, and it may be read-only memory), as the module conventions
/// say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_gptq_q4_0(
    n: usize,
    k: usize,
    bl: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    hessian: *const qgemm_quant_hessian,
    damp: f32,
    work: *mut f64,
    work_len: usize,
    blocks: *mut u8,
    blocks_len: usize,
) -> qgemm_status {
    status(|| {
        let rule = (method, importance, importance_len);
        // SAFETY: the pointer arguments as this function's contract says.
        let g = unsafe { gptq_in(weights, rule, hessian, work, work_len) }?;
        // SAFETY: `blocks` is null or valid for `blocks_len` writes (this function's contract);
        // `output` checks it overlaps no input.
        let b = unsafe { output(blocks, blocks_len, &g.spans) }?;
        let (m, h, work) = (g.method, g.hessian, g.work);
        Ok(with_weights!(g.w, |w| gptq::q4_0(m, n, k, bl, &w, h, damp, work, b))?)
    })
}

/// Quantizes like `qgemm_quant_qsi8cxp` (same outputs), by GPTQ; the GPTQ arguments as
/// `qgemm_quant_gptq_qsi4cxp`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for structs, `hessian->len` reads for `hessian->data`, which is only read:
/// concurrent calls may share it, and it may be read-only memory), as the module conventions
/// say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_quant_gptq_qsi8cxp(
    n: usize,
    k: usize,
    weights: *const qgemm_weights,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    hessian: *const qgemm_quant_hessian,
    damp: f32,
    work: *mut f64,
    work_len: usize,
    codes: *mut i8,
    codes_len: usize,
    scale: *mut f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        let rule = (method, importance, importance_len);
        // SAFETY: the pointer arguments as this function's contract says.
        let g = unsafe { gptq_in(weights, rule, hessian, work, work_len) }?;
        // SAFETY: `codes` and `scale` are null or valid for their lengths' writes (this
        // function's contract).
        let (c, s) = unsafe { codes_and_scales((codes, codes_len), (scale, scale_len), &g.spans) }?;
        let (m, h, work) = (g.method, g.hessian, g.work);
        Ok(with_weights!(g.w, |w| gptq::qsi8cxp(m, n, k, &w, h, damp, work, c, s))?)
    })
}
