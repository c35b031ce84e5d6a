//! The operator in C (`qgemm_linear_*`): the Rust `op::Linear` for every family of layer 1,
//! quantized and float, through one layer struct and one set of functions.
//!
//! * A layer is plain data ([`qgemm_linear`]): the family, the packing its weights are in, `n`,
//!   `k`, `bl`, the caller's weight buffer, the family's parameters and an optional input scale,
//!   checked again on every use. The library keeps no memory and no state. Its `size` field is
//!   `sizeof(qgemm_linear)` (the functions that fill a layer set it): a layer of another size is
//!   `QGEMM_ERROR_STRUCT_SIZE`.
//! * Weights: packed earlier in a layout a kernel of the family reads (`qgemm_rhs_*_pack`,
//!   KleidiAI's packers; `qgemm_linear_from_packed` records the packing and refuses one no
//!   kernel reads with `QGEMM_ERROR_PACKING_MISMATCH`), quantized from float weights
//!   (`qgemm_linear_quantize_pack`, the quantized families) or converted from float weights
//!   (`qgemm_linear_pack` / `_u16`, the float families), both in the family's preferred
//!   packing (`qgemm_linear_rhs_packing`).
//! * `qgemm_linear_run` (`_u16` for the families with 16-bit activations) packs `m` rows of
//!   activations into the caller's scratch (`qgemm_linear_scratch_size` bytes; the families that
//!   read the rows in place need none), picks the kernel for `m` on the given CPU features among
//!   those that read the layer's packing and writes the `m x n` output.
//! * Threads: `qgemm_linear_prepare` packs once and fills a [`qgemm_linear_call`] (plain data
//!   again); `qgemm_linear_split` cuts the output into rectangles; each thread runs its
//!   rectangle with `qgemm_linear_run_part` (same bits as one `qgemm_linear_run`, in any order
//!   and concurrently: the parts of one split write disjoint elements and the library takes no
//!   reference to the whole output).
//! * The 2-bit family (`QGEMM_FAMILY_QAI8DXP_QSU2CXP`): the layer carries the weights' look-up
//!   table ([`qgemm_linear_params::lut`]): `qgemm_linear_from_packed` sets the default
//!   `{-2, -1, 0, 1}`, `qgemm_linear_set_lut` the table the weights were packed with
//!   (validated, checked again on every use). The other families ignore the field. Its
//!   results depend on `m`: the GEMV kernel (`m = 1`) and the GEMM kernels scale in different
//!   orders (docs/formats.md), so one row computed alone can differ in the last bit from the
//!   same row in a larger call.
//!
//! Activations and outputs are `float` for the families with f32 outputs and `uint16_t` bit
//! patterns for the `F16_`/`BF16_` ones; the other function: `QGEMM_ERROR_WRONG_DST_TYPE`. A
//! call struct whose kernel is not one of its layer's family, or does not read its weights:
//! `QGEMM_ERROR_INVALID_ARGUMENT` / `QGEMM_ERROR_PACKING_MISMATCH`.

use qgemm::UncheckedArgs;
use qgemm::op::{Linear, MAX_PARTS, Operator, QuantizePack};
use qgemm::quant::Weights;
use qgemm::rhs::FloatSource;

use super::*;

/// The family parameters a layer carries (the Rust `Linear::params`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_linear_params {
    /// The look-up table of the 2-bit family's weight codes (`QGEMM_FAMILY_QAI8DXP_QSU2CXP`;
    /// code `u` stands for `lut[u]`): `{-2, -1, 0, 1}` from `qgemm_linear_from_packed`, another
    /// table with `qgemm_linear_set_lut`. Ignored by the other families.
    pub lut: [i32; 4],
}

/// A linear layer (`y = x W^T + b`): plain data, filled by `qgemm_linear_from_packed`,
/// `qgemm_linear_quantize_pack` or `qgemm_linear_pack` and checked on every use. `weights` must
/// stay valid and unchanged while the layer is used.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_linear {
    /// `sizeof(qgemm_linear)`: set by the functions that fill a layer.
    pub size: usize,
    /// `QGEMM_FAMILY_*`.
    pub family: u32,
    /// The layout the weights are packed in: only kernels that read it run the layer.
    pub packing: qgemm_rhs_packing,
    /// Output channels.
    pub n: usize,
    /// Depth.
    pub k: usize,
    /// Block length of the per-block families, 0 for the others.
    pub bl: usize,
    /// The packed weights.
    pub weights: *const u8,
    /// Bytes of `weights` the layer uses (`qgemm_kernel_rhs_packed_size` of its packing).
    pub weights_len: usize,
    /// The family's parameters.
    pub params: qgemm_linear_params,
    /// The per-input-channel activation multipliers (AWQ; `Linear::with_input_scale`): `NULL`
    /// (none) from the functions that fill a layer, `k` floats with
    /// `qgemm_linear_set_input_scale`. Must stay valid and unchanged while the layer is used.
    pub input_scale: *const f32,
    /// Floats at `input_scale` (0 when it is `NULL`).
    pub input_scale_len: usize,
}

/// A prepared call of a layer (`qgemm_linear_prepare`): the activations as the kernel reads
/// them, the kernel chosen for `m` on `features`, and the clamp. Plain data, checked on every
/// use.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_linear_call {
    /// `sizeof(qgemm_linear_call)`: set by `qgemm_linear_prepare`.
    pub size: usize,
    /// The layer.
    pub layer: qgemm_linear,
    /// The kernel the parts run.
    pub kernel: qgemm_kernel,
    /// `QGEMM_FEATURE_*` bits of the CPUs the parts run on.
    pub features: u32,
    /// Rows of the call.
    pub m: usize,
    /// The activations as the kernel reads them: packed in the caller's scratch, or the
    /// caller's `x` itself for the families that read the rows in place (the scaled copy in the
    /// scratch with an input scale). Must stay valid and unchanged until the last part has run.
    pub lhs: *const c_void,
    /// Bytes at `lhs`.
    pub lhs_size: usize,
    /// Clamp lower bound (`-INFINITY` for none).
    pub clamp_min: f32,
    /// Clamp upper bound (`INFINITY` for none).
    pub clamp_max: f32,
}

/// A rectangle of the output: `m x n` elements from row `m_idx`, column `n_idx`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_rect {
    /// First row.
    pub m_idx: usize,
    /// First column.
    pub n_idx: usize,
    /// Rows.
    pub m: usize,
    /// Columns.
    pub n: usize,
}

/// What the operator needs of a layer-1 family: its `op::Linear`, whose activations are of its
/// output type (true of every row of [`families!`]), and how its layers are made from float
/// weights ([`FromFloat`]).
trait LinearFamily: CFamily + Operator<Src = <Self as Family>::Dst> + FromFloat {}

impl<F: CFamily + Operator<Src = <F as Family>::Dst> + FromFloat> LinearFamily for F {}

/// How a family's layers are made from float weights: quantized (`qgemm_linear_quantize_pack`,
/// the Rust `QuantizePack`) or packed as they are (`qgemm_linear_pack`, the float families'
/// `Linear::pack`). Each family has one of the two; the other is `QGEMM_ERROR_UNSUPPORTED`.
trait FromFloat: Operator + Sized {
    /// Bytes of workspace `quantize` needs.
    fn quantize_workspace_size(_n: usize, _k: usize, _bl: usize) -> Status<usize> {
        Err(qgemm_status::QGEMM_ERROR_UNSUPPORTED)
    }

    /// Quantizes and packs `w` by the method of `code` (with `importance`) into `buf`.
    #[allow(clippy::too_many_arguments)]
    fn quantize<'w>(
        _w: &Weights<'_, f32>,
        _shape: (usize, usize, usize),
        _method: (u32, Option<&[f32]>),
        _bias: Option<&[f32]>,
        _workspace: &mut [u8],
        _buf: &'w mut [u8],
    ) -> Status<Linear<'w, Self>> {
        Err(qgemm_status::QGEMM_ERROR_UNSUPPORTED)
    }

    /// Packs `w` (values of the family's activation type) and `bias` as they are into `buf`.
    fn pack<'w>(
        _w: &FloatSource<'_, Self::Src>,
        _nk: (usize, usize),
        _bias: Option<&[Self::Src]>,
        _buf: &'w mut [u8],
    ) -> Status<Linear<'w, Self>> {
        Err(qgemm_status::QGEMM_ERROR_UNSUPPORTED)
    }
}

/// The [`FromFloat`] impl of a quantized family: its `QuantizePack`, with the C method codes
/// of its weight format (`$method`: `symmetric` or `asymmetric`, [`super::quant_method`]; `lut`
/// for the 2-bit family, which takes no method: the default table, importance NULL).
macro_rules! quantized_from_float {
    ($fam:ty, $method:ident) => {
        impl FromFloat for $fam {
            fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Status<usize> {
                Ok(<$fam as QuantizePack>::quantize_workspace_size(n, k, bl)?)
            }
            fn quantize<'w>(
                w: &Weights<'_, f32>,
                (n, k, bl): (usize, usize, usize),
                (code, importance): (u32, Option<&[f32]>),
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Status<Linear<'w, Self>> {
                let method = quantized_from_float!(@method $method, code, importance)?;
                Ok(<$fam as QuantizePack>::quantize_pack_weights(w, n, k, bl, method, bias, workspace, buf)?)
            }
        }
    };
    (@method symmetric, $code:expr, $imp:expr) => { super::quant_method::symmetric($code, $imp) };
    (@method asymmetric, $code:expr, $imp:expr) => { super::quant_method::asymmetric($code, $imp) };
    (@method lut, $code:expr, $imp:expr) => {
        match ($code, $imp) {
            (_, None) => Ok(None),
            (_, Some(_)) => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
        }
    };
}

/// The [`FromFloat`] impl of a float family: its `Linear::pack`.
macro_rules! float_from_float {
    ($fam:ty) => {
        impl FromFloat for $fam {
            fn pack<'w>(
                w: &FloatSource<'_, Self::Src>,
                (n, k): (usize, usize),
                bias: Option<&[Self::Src]>,
                buf: &'w mut [u8],
            ) -> Status<Linear<'w, Self>> {
                Ok(Linear::<$fam>::pack(n, k, w, bias, buf)?)
            }
        }
    };
}

quantized_from_float!(Qai8dxpQsi4cxp, symmetric);
quantized_from_float!(Qai8dxpQsi4c32p, symmetric);
quantized_from_float!(Qsi8d32pQsi4c32p, symmetric);
quantized_from_float!(Qai8dxpQsi8cxp, symmetric);
quantized_from_float!(F16Qai8dxpQsi4cxp, symmetric);
quantized_from_float!(F16Qai8dxpQsi8cxp, symmetric);
quantized_from_float!(Bf16Qai8dxpQsi4cxp, symmetric);
quantized_from_float!(Bf16Qai8dxpQsi4c32p, symmetric);
quantized_from_float!(Qsi8d32pQai4c32p, asymmetric);
quantized_from_float!(F16Qsi8d32pQai4c32p, asymmetric);
quantized_from_float!(Qai8dxpQsu2cxp, lut);
float_from_float!(F32F32F32p);
float_from_float!(F16F16F16p);
float_from_float!(F32Bf16pBf16p);
float_from_float!(F16Bf16pBf16p);

/// The size check of a caller's struct: its `size` field must be this version's.
fn check_size(size: usize, expected: usize) -> Status {
    if size == expected { Ok(()) } else { Err(qgemm_status::QGEMM_ERROR_STRUCT_SIZE) }
}

/// The C layer of a Rust layer of family `F`.
fn layer_struct<F: LinearFamily>(layer: &Linear<'_, F>) -> qgemm_linear {
    let used = layer.weights();
    let lut = layer.params().lut().unwrap_or(qsu2cxp::DEFAULT_LUT);
    qgemm_linear {
        size: size_of::<qgemm_linear>(),
        family: F::CODE,
        packing: layer.packing().into(),
        n: layer.n(),
        k: layer.k(),
        bl: layer.bl(),
        weights: used.as_ptr(),
        weights_len: used.len(),
        params: qgemm_linear_params { lut },
        input_scale: core::ptr::null(),
        input_scale_len: 0,
    }
}

/// Whether family `F`'s parameters are a look-up table (the 2-bit family).
fn takes_lut<F: LinearFamily>() -> bool {
    F::Params::KIND == CKind::Lut
}

/// The family parameters of a C layer: the 2-bit family's table, the others' defaults.
fn layer_params<F: LinearFamily>(l: &qgemm_linear) -> Status<F::Params> {
    let lut = takes_lut::<F>().then_some(l.params.lut);
    F::Params::from_c(lut, 0).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

/// The `Linear` a C layer describes, and the byte ranges of its weights and input scale.
///
/// # Safety
///
/// `l.weights` is null or valid for `l.weights_len` reads, and `l.input_scale` null or valid for
/// `l.input_scale_len` reads, that nothing writes during the call.
unsafe fn layer_of<'a, F: LinearFamily>(l: &qgemm_linear) -> Status<(Linear<'a, F>, [Span; 2])> {
    check_size(l.size, size_of::<qgemm_linear>())?;
    if l.family != F::CODE {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    let packing = l.packing.to_rust()?;
    // SAFETY: this function's contract.
    let (w, span) = unsafe { input(l.weights, l.weights_len) }?;
    let layer = Linear::<F>::from_packed_in(packing, l.n, l.k, l.bl, w)?.with_params(layer_params::<F>(l)?)?;
    if l.input_scale.is_null() {
        return Ok((layer, [span, NO_SPAN]));
    }
    // SAFETY: this function's contract.
    let (scale, scale_span) = unsafe { input(l.input_scale, l.input_scale_len) }?;
    Ok((layer.with_input_scale(scale)?, [span, scale_span]))
}

/// `x`, `len` activations of the C type `T` as the family's element type, if `T` is the type
/// they travel as; else `QGEMM_ERROR_WRONG_DST_TYPE`.
///
/// # Safety
///
/// `x` is null or valid for `len` reads of `T` that nothing writes during the call.
unsafe fn activations<'a, F: LinearFamily, T: CElem>(x: *const T, len: usize) -> Status<(&'a [F::Dst], Span)> {
    let x = dst_as::<F::Dst, T>(x.cast_mut())?.cast_const();
    // SAFETY: this function's contract; `dst_as` gave a pointer to `F::Dst` only where it has the
    // size, alignment and every bit pattern of `T`, so the memory is `len` valid `F::Dst`.
    unsafe { input(x, len) }
}

/// A scratch buffer and its byte range: null is allowed with length 0 (the families that read
/// the rows in place need none without an input scale).
///
/// # Safety
///
/// `p` is null or valid for `len` writes that nothing else accesses during the call, except
/// through the buffers `inputs` describes.
unsafe fn scratch_out<'a>(p: *mut u8, len: usize, inputs: &[Span]) -> Status<(&'a mut [u8], Span)> {
    if p.is_null() && len == 0 {
        return Ok((&mut [], NO_SPAN));
    }
    let range = span(p, len)?;
    // SAFETY: this function's contract.
    Ok((unsafe { output(p, len, inputs) }?, range))
}

/// The body of `qgemm_linear_run` and `_u16`.
///
/// # Safety
///
/// `layer` is null or valid for a read, its weights and input scale as [`layer_of`] says; `x`,
/// `y` and `scratch` are null or valid for reads (`x`) or writes of their lengths.
#[allow(clippy::too_many_arguments)]
unsafe fn run_body<T: CElem>(
    layer: *const qgemm_linear,
    features: u32,
    m: usize,
    (x, x_len): (*const T, usize),
    (y, y_len): (*mut T, usize),
    (scratch, scratch_len): (*mut u8, usize),
) -> Status {
    // SAFETY: `layer` is null or valid for a read (this function's contract).
    let l = unsafe { read_in(layer) }?;
    let cpu = self::features(features)?;
    // SAFETY: forwarded (this function's contract).
    match_family!(l.family, F => unsafe { run_family::<F, T>(&l, &cpu, m, (x, x_len), (y, y_len), (scratch, scratch_len)) })
}

/// [`run_body`] for the layer's family `F`.
///
/// # Safety
///
/// As [`run_body`].
unsafe fn run_family<F: LinearFamily, T: CElem>(
    l: &qgemm_linear,
    cpu: &CpuFeatures,
    m: usize,
    (x, x_len): (*const T, usize),
    (y, y_len): (*mut T, usize),
    (scratch, scratch_len): (*mut u8, usize),
) -> Status {
    let cpu = &for_family::<F>(*cpu);
    // SAFETY: the weights as this function's contract says.
    let (layer, [w_span, s_span]) = unsafe { layer_of::<F>(l) }?;
    // SAFETY: `x` is null or valid for `x_len` reads (this function's contract).
    let (x, x_span) = unsafe { activations::<F, T>(x, x_len) }?;
    // SAFETY: `scratch` is null or valid for `scratch_len` writes (this function's contract);
    // `scratch_out` checks it overlaps neither the weights, the input scale nor `x`.
    let (scratch, scratch_span) = unsafe { scratch_out(scratch, scratch_len, &[w_span, s_span, x_span]) }?;
    let y = dst_as::<F::Dst, T>(y)?;
    // SAFETY: `y` is null or valid for `y_len` writes of `T`, which are `y_len` `F::Dst`
    // (`dst_as`); `output` checks it overlaps none of the other buffers.
    let y = unsafe { output(y, y_len, &[w_span, s_span, x_span, scratch_span]) }?;
    Ok(layer.run(cpu, m, x, y, scratch)?)
}

/// The body of `qgemm_linear_prepare` and `_u16`.
///
/// # Safety
///
/// As [`run_body`], without `y`.
unsafe fn prepare_body<T: CElem>(
    layer: *const qgemm_linear,
    features: u32,
    m: usize,
    (x, x_len): (*const T, usize),
    (scratch, scratch_len): (*mut u8, usize),
    (clamp_min, clamp_max): (f32, f32),
) -> Status<qgemm_linear_call> {
    // SAFETY: `layer` is null or valid for a read (this function's contract).
    let l = unsafe { read_in(layer) }?;
    let cpu = self::features(features)?;
    Clamp::new(clamp_min, clamp_max)?;
    let (kernel, lhs, lhs_size) = match_family!(l.family, F => {
        // SAFETY: forwarded (this function's contract).
        unsafe { prepare_family::<F, T>(&l, &cpu, m, (x, x_len), (scratch, scratch_len)) }
    })?;
    let size = size_of::<qgemm_linear_call>();
    Ok(qgemm_linear_call { size, layer: l, kernel, features, m, lhs, lhs_size, clamp_min, clamp_max })
}

/// [`prepare_body`] for the layer's family `F`: the kernel's handle and the activations as it
/// reads them (pointer and bytes).
///
/// # Safety
///
/// As [`prepare_body`].
unsafe fn prepare_family<F: LinearFamily, T: CElem>(
    l: &qgemm_linear,
    cpu: &CpuFeatures,
    m: usize,
    (x, x_len): (*const T, usize),
    (scratch, scratch_len): (*mut u8, usize),
) -> Status<(qgemm_kernel, *const c_void, usize)> {
    let cpu = &for_family::<F>(*cpu);
    // SAFETY: the weights as this function's contract says.
    let (layer, [w_span, s_span]) = unsafe { layer_of::<F>(l) }?;
    // SAFETY: `x` is null or valid for `x_len` reads (this function's contract).
    let (x, x_span) = unsafe { activations::<F, T>(x, x_len) }?;
    // SAFETY: `scratch` is null or valid for `scratch_len` writes (this function's contract);
    // `scratch_out` checks it overlaps neither the weights, the input scale nor `x`.
    let (scratch, _) = unsafe { scratch_out(scratch, scratch_len, &[w_span, s_span, x_span]) }?;
    let prepared = layer.prepare(cpu, m, x, scratch)?;
    let lhs = prepared.lhs();
    let handle = resolved_handle(&prepared.kernel(), cpu)?;
    Ok((handle, lhs.as_ptr().cast(), size_of_val(lhs)))
}

/// A checked call: its layer, kernel, activations and family parameters.
struct Call<'a, F: LinearFamily> {
    layer: Linear<'a, F>,
    kernel: Kernel<F>,
    lhs: &'a [F::Lhs],
    params: F::Params,
    clamp: Clamp,
    spans: [Span; 3],
}

/// Checks a C call struct: the layer, a kernel of its family that reads its weights and runs
/// on the call's features, the activations' length, the clamp.
///
/// # Safety
///
/// `c.layer`'s buffers as [`layer_of`] says; `c.lhs` is null or valid for `c.lhs_size` bytes of
/// reads that nothing writes during the call.
unsafe fn call_of<'a, F: LinearFamily>(c: &qgemm_linear_call) -> Status<Call<'a, F>> {
    check_size(c.size, size_of::<qgemm_linear_call>())?;
    // SAFETY: this function's contract.
    let (layer, w_spans) = unsafe { layer_of::<F>(&c.layer) }?;
    if c.kernel.family != F::CODE {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    let cpu = for_family::<F>(self::features(c.features)?);
    let kernel = Handle::<F>::of(&c.kernel)?.to_run(&cpu)?;
    if kernel.rhs_packing() != layer.packing() {
        return Err(qgemm::Error::PackingMismatch { weights: layer.packing(), kernel: kernel.rhs_packing() }.into());
    }
    let clamp = Clamp::new(c.clamp_min, c.clamp_max)?;
    let (k, bl) = (layer.k(), layer.bl());
    let params = layer.params().check(k)?;
    // Elements the kernel reads: `m` dense rows of `k` (rows read in place) or the packed
    // tiles of `m` rows.
    let needed = match params.lhs_stride() {
        _ if c.m == 0 => 0,
        Some(_) => c.m.checked_mul(k).ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?,
        None => kernel.lhs_packed_size(c.m, k, bl)?,
    };
    if needed == 0 {
        return Ok(Call { layer, kernel, lhs: &[], params, clamp, spans: [w_spans[0], w_spans[1], NO_SPAN] });
    }
    // SAFETY: this function's contract.
    let (lhs, lhs_span) = unsafe { lhs_in::<F::Lhs>(c.lhs, c.lhs_size) }?;
    if lhs.len() < needed {
        let buffer =
            if params.lhs_stride().is_some() { qgemm::error::Buffer::Lhs } else { qgemm::error::Buffer::LhsPacked };
        return Err(qgemm::Error::BufferTooShort { buffer, given: lhs.len(), needed }.into());
    }
    Ok(Call { layer, kernel, lhs: &lhs[..needed], params, clamp, spans: [w_spans[0], w_spans[1], lhs_span] })
}

/// The body of `qgemm_linear_split`.
///
/// # Safety
///
/// `call` is null or valid for a read, its buffers as [`call_of`] says; `rects` is null or valid
/// for `rects_len` writes.
unsafe fn split_body(
    call: *const qgemm_linear_call,
    parts: usize,
    rects: *mut qgemm_rect,
    rects_len: usize,
) -> Status<usize> {
    // SAFETY: `call` is null or valid for a read (this function's contract).
    let c = unsafe { read_in(call) }?;
    let (n, m_step, n_step, spans) = match_family!(c.layer.family, F => {
        // SAFETY: the call's buffers as this function's contract says.
        let call = unsafe { call_of::<F>(&c) }?;
        Ok((call.layer.n(), call.kernel.m_step(), call.kernel.n_step(), call.spans))
    })?;
    let list = qgemm::op::split(c.m, n, m_step, n_step, parts)?;
    if rects_len < list.len() {
        return Err(qgemm_status::QGEMM_ERROR_BUFFER_TOO_SHORT);
    }
    // SAFETY: `rects` is null or valid for `rects_len` writes (this function's contract);
    // `output` refuses it if it overlaps the call's weights or activations.
    let out = unsafe { output(rects, rects_len, &spans) }?;
    for (o, r) in out.iter_mut().zip(&list) {
        *o = qgemm_rect { m_idx: r.m_idx, n_idx: r.n_idx, m: r.m, n: r.n };
    }
    Ok(list.len())
}

/// The checks of a part's output: `y` (`y_len` elements) overlaps none of the call's input
/// `spans` and holds the whole `m x n` output, and `rect` lies inside it (its start on the
/// kernel's steps is checked by the kernel's `dst_offset`).
fn check_part<D>(y: *mut D, y_len: usize, spans: &[Span], (m, n): (usize, usize), rect: &qgemm_rect) -> Status {
    let (start, end) = span(y, y_len)?;
    if spans.iter().any(|&(s, e)| start < e && s < end) {
        return Err(qgemm_status::QGEMM_ERROR_BUFFERS_OVERLAP);
    }
    let needed = m.checked_mul(n).ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?;
    if y_len < needed {
        let e = qgemm::Error::BufferTooShort { buffer: qgemm::error::Buffer::Dst, given: y_len, needed };
        return Err(e.into());
    }
    let inside = |idx: usize, len: usize, total: usize| idx.checked_add(len).is_some_and(|end| end <= total);
    if !inside(rect.m_idx, rect.m, m) || !inside(rect.n_idx, rect.n, n) {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    Ok(())
}

/// The body of `qgemm_linear_run_part` and `_u16`: one rectangle of the call's output, written
/// through raw pointers (other threads may be writing the other rectangles of `y`).
///
/// # Safety
///
/// `call` is null or valid for a read, its buffers as [`call_of`] says; `y` is null or valid for
/// writes of `y_len` elements, and while this runs nothing else accesses the elements of `rect`
/// in `y`.
unsafe fn run_part_body<T: CElem>(call: *const qgemm_linear_call, rect: qgemm_rect, y: *mut T, y_len: usize) -> Status {
    // SAFETY: `call` is null or valid for a read (this function's contract).
    let c = unsafe { read_in(call) }?;
    // SAFETY: forwarded (this function's contract).
    match_family!(c.layer.family, F => unsafe { run_part_family::<F, T>(&c, rect, y, y_len) })
}

/// [`run_part_body`] for the call's family `F`.
///
/// # Safety
///
/// As [`run_part_body`].
unsafe fn run_part_family<F: LinearFamily, T: CElem>(
    c: &qgemm_linear_call,
    rect: qgemm_rect,
    y: *mut T,
    y_len: usize,
) -> Status {
    // SAFETY: the call's buffers as this function's contract says.
    let call = unsafe { call_of::<F>(c) }?;
    let (layer, kernel) = (&call.layer, &call.kernel);
    let (m, n, k, bl) = (c.m, layer.n(), layer.k(), layer.bl());
    let y = dst_as::<F::Dst, T>(y)?;
    check_part(y, y_len, &call.spans, (m, n), &rect)?;
    let dst_offset = kernel.dst_offset(rect.m_idx, rect.n_idx, n)?;
    if rect.m == 0 || rect.n == 0 {
        return Ok(());
    }
    // The rectangle's first row: `m_idx` rows of `k` into the rows read in place (dense, the
    // stride `check` made `k`), or its tile of the packed LHS.
    let lhs_offset = match call.params.lhs_stride() {
        Some(stride) => rect.m_idx.checked_mul(stride).ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?,
        None => kernel.lhs_packed_offset(rect.m_idx, k, bl)?,
    };
    let rhs_offset = kernel.rhs_packed_offset(rect.n_idx, k, bl)?;
    // In bounds: `rect.m_idx < m` is a multiple of `m_step` (a multiple of `mr`), so the LHS
    // from `lhs_offset` holds the rectangle's rows or whole tiles within the call's `m` rows
    // (`call_of` checked their length); the same for the weights from `rhs_offset`
    // (`from_packed_in` checked their length for `n` channels).
    let (Some(lhs), Some(rhs)) = (call.lhs.get(lhs_offset..), layer.weights().get(rhs_offset..)) else {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    };
    let args = UncheckedArgs {
        m: rect.m,
        n: rect.n,
        k,
        bl,
        lhs: lhs.as_ptr().cast::<u8>(),
        rhs_packed: rhs.as_ptr(),
        // In `y`: `dst_offset + (rect.m - 1) * n + rect.n <= m * n <= y_len`.
        dst: y.wrapping_add(dst_offset),
        dst_stride_row: n * size_of::<F::Dst>(),
        clamp_min: call.clamp.min(),
        clamp_max: call.clamp.max(),
        params: call.params,
    };
    // SAFETY: `run_unchecked`'s contract: the kernel was resolved for the call's feature bits,
    // which the caller vouches for, as for every layer-1 run (`call_of`); `rect.m, rect.n >= 1`
    // (checked above) and `k`, `bl` legal (`from_packed_in`); the parameters passed `check`;
    // the LHS holds the rectangle's rows (`k` elements apart) or tiles in the kernel's LHS
    // packing (`prepare` packed them for this kernel), the weights its tiles in the kernel's
    // RHS packing (`call_of` checked it is the layer's); `dst` row `i < rect.m` starts at
    // element `dst_offset + i * n` of `y` and its `rect.n` elements end within the
    // `m * n <= y_len` elements `y` is valid for (this function's contract), disjoint from the
    // inputs (checked above), and nothing else accesses them (this function's contract); the
    // clamp is a valid `Clamp`.
    unsafe { kernel.run_unchecked(&args) };
    Ok(())
}

/// Writes to `*out` the packing the operator packs `family`'s weights in (its preferred RHS
/// packing, which its GEMV and GEMM kernels of every tier read): give it to the
/// `qgemm_rhs_<format>_pack` function of its format, or to KleidiAI's packer.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_rhs_packing(family: u32, out: *mut qgemm_rhs_packing) -> qgemm_status {
    let p = match_family!(family, F => Ok(qgemm_rhs_packing::from(F::PREFERRED_RHS)));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(p, out) }
}

/// Writes to `*out` the bytes of `family`'s packed weights for `n` channels of depth `k` (`bl`:
/// the block length of the per-block families, 0 for the others) in its preferred packing.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_packed_size(
    family: u32,
    n: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = match_family!(family, F => Linear::<F>::weights_size(n, k, bl).map_err(qgemm_status::from));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// Fills `*out` with a layer of `family` over weights packed in `*packing` (NULL: the family's
/// preferred packing, `qgemm_linear_rhs_packing`) by `qgemm_rhs_*_pack` or KleidiAI's packer:
/// `weights`, `weights_len` bytes, at least the packed size of `n` channels. A packing no
/// kernel of the family reads: `QGEMM_ERROR_PACKING_MISMATCH`. The bytes are trusted to be such
/// a packing (any bytes are memory-safe; wrong ones give wrong numbers).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_from_packed(
    family: u32,
    packing: *const qgemm_rhs_packing,
    n: usize,
    k: usize,
    bl: usize,
    weights: *const u8,
    weights_len: usize,
    out: *mut qgemm_linear,
) -> qgemm_status {
    let layer = (|| {
        let packing = if packing.is_null() {
            None
        } else {
            // SAFETY: `packing` is non-null, so valid for a read (this function's contract).
            Some(unsafe { read_in(packing) }?.to_rust()?)
        };
        // SAFETY: `weights` is null or valid for `weights_len` reads (this function's contract).
        let (w, _) = unsafe { input(weights, weights_len) }?;
        match_family!(family, F => {
            let layer = Linear::<F>::from_packed_in(packing.unwrap_or(F::PREFERRED_RHS), n, k, bl, w)?;
            Ok(layer_struct(&layer))
        })
    })();
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(layer, out) }
}

/// Sets the look-up table of a `QGEMM_FAMILY_QAI8DXP_QSU2CXP` layer (the family whose kernels
/// take one) (`*layer`, filled by `qgemm_linear_from_packed`, which gives it the default
/// `{-2, -1, 0, 1}`) to `lut` (4 `int32_t`): the table its weights were packed with
/// (`qgemm_rhs_qsu2cxp_pack`, KleidiAI's `kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon`).
/// `lut = NULL` restores the default. An entry outside `[-64, 63]`:
/// `QGEMM_ERROR_LUT_OUT_OF_RANGE`; a layer of another family: `QGEMM_ERROR_INVALID_ARGUMENT`;
/// `*layer` unchanged on error.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs, 4 elements for `lut`), as the module conventions
/// say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_set_lut(layer: *mut qgemm_linear, lut: *const i32) -> qgemm_status {
    status(|| {
        // SAFETY: `layer` is null or valid for a read (this function's contract).
        let mut l = unsafe { read_in(layer.cast_const()) }?;
        check_size(l.size, size_of::<qgemm_linear>())?;
        // Only a family whose kernels take a table (an unknown code: INVALID_ARGUMENT too).
        let bad = qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT;
        match_family!(l.family, F => if takes_lut::<F>() { Ok(()) } else { Err(bad) })?;
        // SAFETY: `lut` is null or valid for 4 reads (this function's contract).
        let (table, _) = unsafe { lut_in(lut) }?;
        let table = table.unwrap_or(qsu2cxp::DEFAULT_LUT);
        qsu2cxp::check_lut(&table)?;
        l.params.lut = table;
        // SAFETY: `layer` is valid for a write (it was read above; this function's contract).
        unsafe { put(layer, l) }
    })
}

/// Sets the activation multipliers of `*layer` (any family; AWQ, `op::Linear::with_input_scale`)
/// to the `scale_len` floats at `scale` (at least the layer's `k`, every one finite): every run
/// and prepare then uses `x[i][j] * scale[j]` (product in f32, rounded to the activation type),
/// so the weights must have been quantized from `W[c][j] / scale[j]`
/// (`qgemm_quant_divide_depths`). `scale = NULL` removes them. Short:
/// `QGEMM_ERROR_BUFFER_TOO_SHORT`; a value not finite: `QGEMM_ERROR_NON_FINITE`; `*layer`
/// unchanged on error. The floats are not copied: they must stay valid and unchanged while the
/// layer is used (outputs and scratch may not overlap them: `QGEMM_ERROR_BUFFERS_OVERLAP`).
/// The f32 `QAI8DXP` families multiply inside the activation packer; the other packed-LHS
/// families stage a tile of scaled rows in the scratch, the families that read the rows in place
/// all `m` rows (`qgemm_linear_scratch_size` counts either).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_set_input_scale(
    layer: *mut qgemm_linear,
    scale: *const f32,
    scale_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `layer` is null or valid for a read (this function's contract).
        let mut l = unsafe { read_in(layer.cast_const()) }?;
        let (input_scale, input_scale_len) = if scale.is_null() { (core::ptr::null(), 0) } else { (scale, scale_len) };
        l.input_scale = input_scale;
        l.input_scale_len = input_scale_len;
        // Validated as every use will: the weights, then the scale.
        // SAFETY: the layer's weights and `scale` are null or valid for their lengths (this
        // function's contract).
        match_family!(l.family, F => unsafe { layer_of::<F>(&l) }.map(|_| ()))?;
        // SAFETY: `layer` is valid for a write (it was read above; this function's contract).
        unsafe { put(layer, l) }
    })
}

/// The body of `qgemm_linear_quantize_pack` for the family `F`: the filled layer.
///
/// # Safety
///
/// Every pointer is null or valid for the reads or writes of the length given with it, as the
/// module conventions say.
#[allow(clippy::too_many_arguments)]
unsafe fn quantize_pack_family<F: LinearFamily>(
    (weights, weights_len): (*const f32, usize),
    (layout, stride): (u32, usize),
    shape: (usize, usize, usize),
    method: u32,
    (importance, importance_len): (*const f32, usize),
    (bias, bias_len): (*const f32, usize),
    (workspace, workspace_len): (*mut u8, usize),
    (buf, buf_len): (*mut u8, usize),
) -> Status<qgemm_linear> {
    // SAFETY: `weights` is null or valid for `weights_len` reads (this function's contract).
    let (data, w_span) = unsafe { input(weights, weights_len) }?;
    let w = Weights { data, layout: super::layout(layout)?, stride };
    // SAFETY: `importance` is null or valid for `importance_len` reads (this function's contract).
    let (importance, i_span) = unsafe { optional(importance, importance_len) }?;
    // SAFETY: `bias` is null or valid for `bias_len` reads (this function's contract).
    let (bias, b_span) = unsafe { optional(bias, bias_len) }?;
    let ws_span = span(workspace, workspace_len)?;
    // SAFETY: `workspace` is null or valid for `workspace_len` writes (this function's
    // contract); `output` checks it overlaps none of the inputs.
    let workspace = unsafe { output(workspace, workspace_len, &[w_span, i_span, b_span]) }?;
    // SAFETY: `buf` is null or valid for `buf_len` writes (this function's contract); `output`
    // checks it overlaps neither the inputs nor the workspace.
    let buf = unsafe { output(buf, buf_len, &[w_span, i_span, b_span, ws_span]) }?;
    let layer = F::quantize(&w, shape, (method, importance), bias, workspace, buf)?;
    Ok(layer_struct(&layer))
}

/// Writes to `*out` the bytes of workspace `qgemm_linear_quantize_pack` needs for a layer of
/// `family` with `n` channels of depth `k` (`bl`: the block length of the per-block families, 0
/// for the others): the codes and scales between the quantizer and the packer. A float family:
/// `QGEMM_ERROR_UNSUPPORTED` (it packs the weights as they are: `qgemm_linear_pack`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_quantize_workspace_size(
    family: u32,
    n: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = match_family!(family, F => <F as FromFloat>::quantize_workspace_size(n, k, bl));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// Quantizes `float` weights and packs them for a layer of a quantized `family`, filling `*out`
/// (the layer over `buf`): `weights` (`weights_len` floats) holds the `n x k` matrix in `layout`
/// (`QGEMM_LAYOUT_NXK`: `n` rows of `k`; `QGEMM_LAYOUT_KXN`: `k` rows of `n`), rows `stride`
/// floats apart; `bl` as in `qgemm_linear_packed_size`. `method`: a `QGEMM_QUANT_*` code, the
/// symmetric ones (`ROUND_TO_NEAREST`, `SIGNED_MAX`, `SEARCH`, `WEIGHTED_SEARCH`) for the int4 and
/// int8 families, `QGEMM_QUANT_QAI4C32P_MIN_MAX` or `QGEMM_QUANT_QAI4C32P_FITTED` for the
/// `QSI8D32P_QAI4C32P` ones, ignored by `QAI8DXP_QSU2CXP` (default table). `importance`
/// (`importance_len >= k` floats, non-negative) only with `QGEMM_QUANT_WEIGHTED_SEARCH`, else
/// NULL. `bias`: `n` floats or NULL (NULL for `QSI8D32P_QSI4C32P`, which has none:
/// `QGEMM_ERROR_UNSUPPORTED`). `workspace`: at least `qgemm_linear_quantize_workspace_size`
/// bytes, any alignment, contents unspecified afterwards; `buf`: at least
/// `qgemm_linear_packed_size` bytes, which must stay valid and unchanged while the layer is
/// used. NaN or infinite weights: `QGEMM_ERROR_NON_FINITE`. A float family:
/// `QGEMM_ERROR_UNSUPPORTED` (`qgemm_linear_pack`). Nothing is written to `buf` or `*out`
/// unless every check passes.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_quantize_pack(
    family: u32,
    weights: *const f32,
    weights_len: usize,
    layout: u32,
    stride: usize,
    n: usize,
    k: usize,
    bl: usize,
    method: u32,
    importance: *const f32,
    importance_len: usize,
    bias: *const f32,
    bias_len: usize,
    workspace: *mut u8,
    workspace_len: usize,
    buf: *mut u8,
    buf_len: usize,
    out: *mut qgemm_linear,
) -> qgemm_status {
    // `out` first: nothing is packed for a call that cannot return its layer.
    if out.is_null() {
        return qgemm_status::QGEMM_ERROR_NULL_POINTER;
    }
    if !out.is_aligned() {
        return qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER;
    }
    let layer = match_family!(family, F => {
        // SAFETY: the pointers as this function's contract says, which is the body's.
        unsafe {
            quantize_pack_family::<F>(
                (weights, weights_len),
                (layout, stride),
                (n, k, bl),
                method,
                (importance, importance_len),
                (bias, bias_len),
                (workspace, workspace_len),
                (buf, buf_len),
            )
        }
    });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(layer, out) }
}

/// The body of `qgemm_linear_pack` and `_u16` for the family `F`.
///
/// # Safety
///
/// Each pointer is null or valid for the reads or writes of its length.
unsafe fn pack_family<F: LinearFamily, T: CElem>(
    (w, w_len, layout, stride): (*const T, usize, u32, usize),
    nk: (usize, usize),
    (bias, bias_len): (*const T, usize),
    (buf, buf_len): (*mut u8, usize),
) -> Status<qgemm_linear> {
    let layout = super::layout(layout)?;
    // SAFETY: `w` is null or valid for `w_len` reads (this function's contract).
    let (data, w_span) = unsafe { activations::<F, T>(w, w_len) }?;
    let bias = if bias.is_null() {
        (None, NO_SPAN)
    } else {
        // SAFETY: `bias` is non-null, so valid for `bias_len` reads (this function's contract).
        let (b, span) = unsafe { activations::<F, T>(bias, bias_len) }?;
        (Some(b), span)
    };
    // SAFETY: `buf` is null or valid for `buf_len` writes (this function's contract); `output`
    // checks that it overlaps neither input.
    let buf = unsafe { output(buf, buf_len, &[w_span, bias.1]) }?;
    let layer = F::pack(&FloatSource { data, layout, stride }, nk, bias.0, buf)?;
    Ok(layer_struct(&layer))
}

/// The body of `qgemm_linear_pack` and `_u16`.
///
/// # Safety
///
/// Each pointer is null or valid for the reads or writes of its length (`out`: one).
unsafe fn pack_body<T: CElem>(
    family: u32,
    w: (*const T, usize, u32, usize),
    nk: (usize, usize),
    bias: (*const T, usize),
    buf: (*mut u8, usize),
    out: *mut qgemm_linear,
) -> qgemm_status {
    // `out` first: nothing is packed for a call that cannot return its layer.
    if out.is_null() {
        return qgemm_status::QGEMM_ERROR_NULL_POINTER;
    }
    if !out.is_aligned() {
        return qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER;
    }
    // SAFETY: the pointers as this function's contract says, which is the family body's.
    let layer = match_family!(family, F => unsafe { pack_family::<F, T>(w, nk, bias, buf) });
    // SAFETY: `out` is valid for a write (this function's contract).
    unsafe { answer(layer, out) }
}

/// Packs the weights of a layer of a float family with f32 activations
/// (`QGEMM_FAMILY_F32_F32_F32P`, `QGEMM_FAMILY_F32_BF16P_BF16P`) into `buf` in its preferred
/// packing and fills `*out` (the layer over `buf`): `w` (`w_len` floats) holds the `n x k`
/// weights in `layout` (`QGEMM_LAYOUT_NXK` or `QGEMM_LAYOUT_KXN`), rows `stride` floats apart;
/// `bias`: `n` floats or NULL (zeros); `buf`: at least `qgemm_linear_packed_size` bytes, which
/// must stay valid and unchanged while the layer is used. A family with f16 activations:
/// `QGEMM_ERROR_WRONG_DST_TYPE` (`qgemm_linear_pack_u16`); a quantized family:
/// `QGEMM_ERROR_UNSUPPORTED` (`qgemm_linear_quantize_pack`). NaN or infinite values:
/// `QGEMM_ERROR_NON_FINITE`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_pack(
    family: u32,
    w: *const f32,
    w_len: usize,
    layout: u32,
    stride: usize,
    n: usize,
    k: usize,
    bias: *const f32,
    bias_len: usize,
    buf: *mut u8,
    buf_len: usize,
    out: *mut qgemm_linear,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is the body's.
    unsafe { pack_body(family, (w, w_len, layout, stride), (n, k), (bias, bias_len), (buf, buf_len), out) }
}

/// As `qgemm_linear_pack`, for the float families with f16 activations
/// (`QGEMM_FAMILY_F16_F16_F16P`, `QGEMM_FAMILY_F16_BF16P_BF16P`): `w` and `bias` hold `uint16_t`
/// f16 bit patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_pack_u16(
    family: u32,
    w: *const u16,
    w_len: usize,
    layout: u32,
    stride: usize,
    n: usize,
    k: usize,
    bias: *const u16,
    bias_len: usize,
    buf: *mut u8,
    buf_len: usize,
    out: *mut qgemm_linear,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is the body's.
    unsafe { pack_body(family, (w, w_len, layout, stride), (n, k), (bias, bias_len), (buf, buf_len), out) }
}

/// Writes to `*out` the bytes of scratch `qgemm_linear_run` and `qgemm_linear_prepare` need for
/// `m` rows, on any CPU (0 for the families that read the rows in place, unless an input scale
/// is set).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_scratch_size(
    layer: *const qgemm_linear,
    m: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = (|| {
        // SAFETY: `layer` is null or valid for a read (this function's contract).
        let l = unsafe { read_in(layer) }?;
        // SAFETY: the layer's weights as this function's contract says.
        match_family!(l.family, F => Ok(unsafe { layer_of::<F>(&l) }?.0.scratch_size(m)?))
    })();
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// `y = x W^T + b` for `m` rows of a family with f32 activations and outputs: packs `x` (`x_len`
/// floats, `m x k` dense) into `scratch` (`qgemm_linear_scratch_size` bytes; NULL with 0 where
/// that is 0), picks the kernel for `m` on `features` among those that read the layer's packing
/// and writes the `m x n` output `y` (`y_len` floats, dense), clamped to `[-FLT_MAX, FLT_MAX]`
/// (the Rust `Clamp::NONE`: finite results pass unchanged, an infinite one saturates to
/// `±FLT_MAX`; `qgemm_linear_prepare` with that clamp gives the same bits, with
/// `-INFINITY, INFINITY` it keeps infinities). `m = 0` writes nothing.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_run(
    layer: *const qgemm_linear,
    features: u32,
    m: usize,
    x: *const f32,
    x_len: usize,
    y: *mut f32,
    y_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is `run_body`'s.
    status(|| unsafe { run_body(layer, features, m, (x, x_len), (y, y_len), (scratch, scratch_len)) })
}

/// As `qgemm_linear_run`, for the families with f16 or bf16 activations and outputs: `x` and
/// `y` hold `uint16_t` bit patterns. The clamp to `[-FLT_MAX, FLT_MAX]` is applied in f32 before
/// the rounding to f16 or bf16 (by the f16 float kernels in f16), which turns `±FLT_MAX` (so an
/// infinite result) into `±infinity`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_run_u16(
    layer: *const qgemm_linear,
    features: u32,
    m: usize,
    x: *const u16,
    x_len: usize,
    y: *mut u16,
    y_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is `run_body`'s.
    status(|| unsafe { run_body(layer, features, m, (x, x_len), (y, y_len), (scratch, scratch_len)) })
}

/// Packs `m` rows of f32 activations (`x`, `x_len` floats, dense) into `scratch` once (the
/// families that read the rows in place use `x` itself: it must then stay unchanged until the
/// last part has run, as `scratch` must) and fills `*out` with the call: the kernel for `m` on
/// `features` and the clamp (`clamp_min <= clamp_max`, no NaN; `-INFINITY, INFINITY` for none;
/// `-FLT_MAX, FLT_MAX`, the clamp of `qgemm_linear_run`, gives its bits). Run its parts with
/// `qgemm_linear_split` and `qgemm_linear_run_part`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_prepare(
    layer: *const qgemm_linear,
    features: u32,
    m: usize,
    x: *const f32,
    x_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
    clamp_min: f32,
    clamp_max: f32,
    out: *mut qgemm_linear_call,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is `prepare_body`'s.
    let call = unsafe { prepare_body(layer, features, m, (x, x_len), (scratch, scratch_len), (clamp_min, clamp_max)) };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(call, out) }
}

/// As `qgemm_linear_prepare`, for the families with f16 or bf16 activations: `x` holds
/// `uint16_t` bit patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_linear_prepare_u16(
    layer: *const qgemm_linear,
    features: u32,
    m: usize,
    x: *const u16,
    x_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
    clamp_min: f32,
    clamp_max: f32,
    out: *mut qgemm_linear_call,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is `prepare_body`'s.
    let call = unsafe { prepare_body(layer, features, m, (x, x_len), (scratch, scratch_len), (clamp_min, clamp_max)) };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(call, out) }
}

/// Cuts the call's `m x n` output into at most `parts` rectangles (0 counts as 1, more than 64
/// as 64) aligned to the kernel's steps with balanced work (the Rust `Prepared::split`): writes
/// them to `rects` (`rects_len` elements; 64 always suffice) and their number to `*count`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_split(
    call: *const qgemm_linear_call,
    parts: usize,
    rects: *mut qgemm_rect,
    rects_len: usize,
    count: *mut usize,
) -> qgemm_status {
    if count.is_null() {
        // Checked first: nothing is written unless the whole call succeeds.
        return qgemm_status::QGEMM_ERROR_NULL_POINTER;
    }
    // SAFETY: the arguments as this function's contract says, which is `split_body`'s.
    let n = unsafe { split_body(call, parts, rects, rects_len) };
    // SAFETY: `count` is null or valid for a write (this function's contract).
    unsafe { answer(n, count) }
}

/// Computes the rectangle `rect` (one of `qgemm_linear_split`'s, or any rectangle inside the
/// output whose start is a multiple of the kernel's steps) of an f32 call's output into `y`:
/// the whole `m x n` output (`y_len >= m * n` floats, dense), of which only `rect` is written.
/// Threads may run the rectangles of one split at the same time on the same `y`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say, except that other
/// threads may write `y` outside `rect` meanwhile; the call's weights and `lhs` stay valid and
/// unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_run_part(
    call: *const qgemm_linear_call,
    rect: qgemm_rect,
    y: *mut f32,
    y_len: usize,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is `run_part_body`'s.
    status(|| unsafe { run_part_body(call, rect, y, y_len) })
}

/// As `qgemm_linear_run_part`, for the families with f16 or bf16 outputs: `y` holds `uint16_t`
/// bit patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say, except that other
/// threads may write `y` outside `rect` meanwhile; the call's weights and `lhs` stay valid and
/// unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_linear_run_part_u16(
    call: *const qgemm_linear_call,
    rect: qgemm_rect,
    y: *mut u16,
    y_len: usize,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is `run_part_body`'s.
    status(|| unsafe { run_part_body(call, rect, y, y_len) })
}

// At most `MAX_PARTS` rectangles: the documented 64.
const _: () = assert!(MAX_PARTS == 64);
