//! The float families in C (`qgemm_float_*`, `qgemm_rhs_<float format>_*`,
//! `qgemm_lhs_bf16p*_*`): the Rust `FloatFamily` kernels, their packers and `op::FloatLinear`.
//!
//! The float families are not `Family`s (their kernels read an unpacked f32/f16 LHS or a packed
//! bf16 one, and take an LHS row stride), so they have their own codes
//! (`QGEMM_FLOAT_FAMILY_*`), kernel handle ([`qgemm_float_kernel`]), run arguments
//! ([`qgemm_float_args`]) and operator ([`qgemm_float_linear`]), with the conventions of the
//! rest of layer 1: typed statuses, out pointers written only on `QGEMM_OK`, buffers as pointer
//! and length in elements, checked alignment and overlap.
//!
//! * Formats are codes: `QGEMM_FLOAT_RHS_*` (the packed weights, [`RHS_FORMATS`]) and
//!   `QGEMM_FLOAT_LHS_*` (`QGEMM_FLOAT_LHS_NONE` for the kernels that read the f32/f16 rows
//!   unpacked, [`LHS_FORMATS`]).
//! * Element types: f32 values are `float`, f16 values `uint16_t` bit patterns (2-byte
//!   aligned). The activations, weights, biases and outputs of a family have one C type:
//!   `float` for `F32_*`, `uint16_t` for `F16_*`; the functions without suffix take `float`,
//!   the `_u16` ones `uint16_t`; the other type is `QGEMM_ERROR_WRONG_DST_TYPE`.
//!
//! Everything that depends on the family comes from one table, [`float_families!`], as
//! [`families!`] does for the quantized families; the format codes are the indices of
//! [`RHS_FORMATS`] and [`LHS_FORMATS`].

use core::ffi::c_void;

use qgemm::f16_bf16p_bf16p::F16Bf16pBf16p;
use qgemm::f16_f16_f16p::F16F16F16p;
use qgemm::f32_bf16p_bf16p::F32Bf16pBf16p;
use qgemm::f32_f32_f32p::F32F32F32p;
use qgemm::float::{FloatArgs, FloatFamily, FloatKernel, LhsFormat, RhsFormat};
use qgemm::lhs::bf16p;
use qgemm::op::{FloatLinear, FloatOperator};
use qgemm::rhs::{FloatSource, bf16p12, f16p, f32p};

use super::linear::{check_part, qgemm_rect};
use super::*;

// ---- codes --------------------------------------------------------------------------------

/// `f32_f32_f32p`: f32 activations read unpacked (row stride), f32 weights packed with their f32
/// bias (`QGEMM_FLOAT_RHS_F32P16`, `F32P8`), f32 output.
pub const QGEMM_FLOAT_FAMILY_F32_F32_F32P: u32 = 0;
/// `f16_f16_f16p`: f16 activations read unpacked, f16 weights packed with their f16 bias
/// (`QGEMM_FLOAT_RHS_F16P32`, `F16P16`), f16 output.
pub const QGEMM_FLOAT_FAMILY_F16_F16_F16P: u32 = 1;
/// `f32_bf16p_bf16p`: activations packed to bf16 (`QGEMM_FLOAT_LHS_BF16P8X4`, `BF16P1X4`),
/// weights to bf16 with f32 bias (`QGEMM_FLOAT_RHS_BF16P12_B32`), f32 output.
pub const QGEMM_FLOAT_FAMILY_F32_BF16P_BF16P: u32 = 2;
/// `f16_bf16p_bf16p`: activations packed to bf16 (`QGEMM_FLOAT_LHS_BF16P8X4`), weights to bf16
/// with f16 bias (`QGEMM_FLOAT_RHS_BF16P12_B16`), f16 output.
pub const QGEMM_FLOAT_FAMILY_F16_BF16P_BF16P: u32 = 3;

/// RHS format `f32p16`: f32 values in tiles of 16 channels, each led by 16 f32 biases.
pub const QGEMM_FLOAT_RHS_F32P16: u32 = 0;
/// RHS format `f32p8`: f32 values in tiles of 8 channels, each led by 8 f32 biases.
pub const QGEMM_FLOAT_RHS_F32P8: u32 = 1;
/// RHS format `f16p32`: f16 values in tiles of 32 channels, each led by 32 f16 biases.
pub const QGEMM_FLOAT_RHS_F16P32: u32 = 2;
/// RHS format `f16p16`: f16 values in tiles of 16 channels, each led by 16 f16 biases.
pub const QGEMM_FLOAT_RHS_F16P16: u32 = 3;
/// RHS format `bf16p12_b32`: bf16 values in tiles of 12 channels and blocks of 4 depths, f32
/// biases.
pub const QGEMM_FLOAT_RHS_BF16P12_B32: u32 = 4;
/// RHS format `bf16p12_b16`: bf16 values in tiles of 12 channels and blocks of 4 depths, f16
/// biases.
pub const QGEMM_FLOAT_RHS_BF16P12_B16: u32 = 5;

/// LHS "format" of the kernels that read the f32/f16 activation rows themselves (unpacked).
pub const QGEMM_FLOAT_LHS_NONE: u32 = 0;
/// LHS format `bf16p1x4`: one row per tile, blocks of 4 depths, bf16 (the last `k % 4` values of
/// a row truncated).
pub const QGEMM_FLOAT_LHS_BF16P1X4: u32 = 1;
/// LHS format `bf16p8x4`: eight rows per tile, blocks of 4 depths, bf16.
pub const QGEMM_FLOAT_LHS_BF16P8X4: u32 = 2;

/// The RHS formats, indexed by their `QGEMM_FLOAT_RHS_*` code.
const RHS_FORMATS: [RhsFormat; 6] =
    [f32p::F32P16, f32p::F32P8, f16p::F16P32, f16p::F16P16, bf16p12::BF16P12_B32, bf16p12::BF16P12_B16];

/// The packed LHS formats, indexed by their `QGEMM_FLOAT_LHS_*` code (`None`: unpacked).
const LHS_FORMATS: [Option<LhsFormat>; 3] = [None, Some(bf16p::BF16P1X4), Some(bf16p::BF16P8X4)];

// The codes are the table indices.
const _: () = {
    assert!(same_str(RHS_FORMATS[QGEMM_FLOAT_RHS_F32P16 as usize].name, "f32p16"));
    assert!(same_str(RHS_FORMATS[QGEMM_FLOAT_RHS_F32P8 as usize].name, "f32p8"));
    assert!(same_str(RHS_FORMATS[QGEMM_FLOAT_RHS_F16P32 as usize].name, "f16p32"));
    assert!(same_str(RHS_FORMATS[QGEMM_FLOAT_RHS_F16P16 as usize].name, "f16p16"));
    assert!(same_str(RHS_FORMATS[QGEMM_FLOAT_RHS_BF16P12_B32 as usize].name, "bf16p12_b32"));
    assert!(same_str(RHS_FORMATS[QGEMM_FLOAT_RHS_BF16P12_B16 as usize].name, "bf16p12_b16"));
    assert!(LHS_FORMATS[QGEMM_FLOAT_LHS_NONE as usize].is_none());
    assert!(matches!(LHS_FORMATS[QGEMM_FLOAT_LHS_BF16P1X4 as usize], Some(f) if same_str(f.name, "bf16p1x4")));
    assert!(matches!(LHS_FORMATS[QGEMM_FLOAT_LHS_BF16P8X4 as usize], Some(f) if same_str(f.name, "bf16p8x4")));
};

/// The format of RHS code `code`.
fn rhs_format(code: u32) -> Status<RhsFormat> {
    RHS_FORMATS.get(code as usize).copied().ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

/// The format of LHS code `code`.
fn lhs_format(code: u32) -> Status<Option<LhsFormat>> {
    LHS_FORMATS.get(code as usize).copied().ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

/// The code of an RHS format of the table.
fn rhs_code(f: &RhsFormat) -> u32 {
    RHS_FORMATS.iter().position(|g| g == f).map_or(u32::MAX, |i| i as u32)
}

/// The code of an LHS format of the table.
fn lhs_code(f: &Option<LhsFormat>) -> u32 {
    LHS_FORMATS.iter().position(|g| g == f).map_or(u32::MAX, |i| i as u32)
}

// ---- the family table ---------------------------------------------------------------------

/// The element type of a float kernel's LHS as the C run functions take it (`float`, `uint16_t`
/// f16 bits, or the bytes of a packed LHS). Every bit pattern is a valid value.
trait LhsBits: Copy + 'static {}

impl LhsBits for f32 {}
impl LhsBits for f16 {}
impl LhsBits for u8 {}

/// What layer 1 knows of a float family beyond the core's `FloatOperator`.
trait CFloat: FloatOperator<Src: DstElem, Bias: DstElem, Dst: DstElem, Lhs: LhsBits> {
    /// `QGEMM_FLOAT_FAMILY_*`.
    const CODE: u32;
}

/// The float families of layer 1, one row each, in code order:
/// `(C code, name, Rust family type)`. Invoked with a callback macro, as [`families!`].
macro_rules! float_families {
    ($then:ident ! ($($args:tt)*)) => {
        $then! { ($($args)*)
            (QGEMM_FLOAT_FAMILY_F32_F32_F32P, "f32_f32_f32p", F32F32F32p)
            (QGEMM_FLOAT_FAMILY_F16_F16_F16P, "f16_f16_f16p", F16F16F16p)
            (QGEMM_FLOAT_FAMILY_F32_BF16P_BF16P, "f32_bf16p_bf16p", F32Bf16pBf16p)
            (QGEMM_FLOAT_FAMILY_F16_BF16P_BF16P, "f16_bf16p_bf16p", F16Bf16pBf16p)
        }
    };
}

/// The [`CFloat`] impls of the rows, and compile-time checks: codes `0, 1, ...` in row order,
/// names the Rust families' `NAME`.
macro_rules! float_impls {
    (() $(($code:ident, $name:literal, $fam:ty))*) => {
        $(
            impl CFloat for $fam {
                const CODE: u32 = $code;
            }
            const _: () = assert!(same_str(<$fam as FloatFamily>::NAME, $name), "float family table: name");
        )*
        const _: () = {
            let codes = [$($code),*];
            let mut i = 0;
            while i < codes.len() {
                assert!(codes[i] == i as u32, "float family table: codes must be 0, 1, 2, ... in row order");
                i += 1;
            }
        };
    };
}

float_families!(float_impls!());

/// The arms of [`match_float!`].
macro_rules! match_float_arms {
    (($family:expr, $F:ident, $body:expr) $(($code:ident, $name:literal, $fam:ty))*) => {
        match $family {
            $($code => {
                type $F = $fam;
                $body
            })*
            _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
        }
    };
}

/// `$body` (a [`Status`]) with the type alias `$F` naming the float family of code `$family`;
/// `QGEMM_ERROR_INVALID_ARGUMENT` for a code no row has.
macro_rules! match_float {
    ($family:expr, $F:ident => $body:expr) => {
        float_families!(match_float_arms!($family, $F, $body))
    };
}

/// `$body` with `$k` bound to the `&'static FloatKernel<F>` a float kernel handle names.
macro_rules! with_float_kernel {
    ($handle:expr, $k:ident => $body:expr) => {{
        let h: qgemm_float_kernel = $handle;
        match_float!(h.family, Fam => float_entry::<Fam>(h.index).and_then(|$k| $body))
    }};
}

/// A float kernel: its family (`QGEMM_FLOAT_FAMILY_*`) and its index in the family's catalogue
/// (`qgemm_float_kernel_at`). Plain data, checked on every use.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_float_kernel {
    /// `QGEMM_FLOAT_FAMILY_*`.
    pub family: u32,
    /// Index in the family's catalogue.
    pub index: u32,
}

/// What a float kernel is.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_float_kernel_info {
    /// NUL-terminated name, KleidiAI style (`matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla`).
    pub name: [c_char; QGEMM_KERNEL_NAME_MAX],
    /// `QGEMM_TIER_*`.
    pub tier: u32,
    /// Output rows per iteration: sub-rectangles start at multiples of it.
    pub m_step: usize,
    /// Output columns per iteration: sub-rectangles start at multiples of it.
    pub n_step: usize,
    /// `QGEMM_FLOAT_LHS_*`: the packed LHS it reads (`QGEMM_FLOAT_LHS_NONE`: the rows unpacked).
    pub lhs_format: u32,
    /// `QGEMM_FLOAT_RHS_*`: the packed weights it reads.
    pub rhs_format: u32,
}

/// The rectangle a float run computes (the Rust `MatmulArgs` of a float kernel).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_float_args {
    /// Rows of the rectangle.
    pub m: usize,
    /// Columns (output channels) of the rectangle.
    pub n: usize,
    /// Depth, as given to the packers.
    pub k: usize,
    /// First row: a multiple of the kernel's `m_step`.
    pub m_idx: usize,
    /// First column: a multiple of the kernel's `n_step`.
    pub n_idx: usize,
    /// Unpacked LHS (`QGEMM_FLOAT_LHS_NONE`): distance between activation rows, in elements
    /// (`>= k`). Ignored for a packed LHS.
    pub lhs_stride_row: usize,
    /// Distance between output rows, in output elements (`>= n`).
    pub dst_stride_row: usize,
    /// Clamp lower bound (`-FLT_MAX` or `-INFINITY` for none).
    pub clamp_min: f32,
    /// Clamp upper bound.
    pub clamp_max: f32,
}

/// Catalogue entry `index` of float family `F`.
fn float_entry<F: FloatFamily>(index: u32) -> Status<&'static FloatKernel<F>> {
    F::kernels().get(index as usize).copied().ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

/// The handle of a catalogue kernel of float family `F`.
fn float_handle<F: CFloat>(kernel: &'static FloatKernel<F>) -> Status<qgemm_float_kernel> {
    let index = F::kernels().iter().position(|k| core::ptr::eq(*k, kernel));
    let index = index.ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
    Ok(qgemm_float_kernel { family: F::CODE, index: index as u32 })
}

/// The best kernel of `F` on `cpu` for the operator's formats (the family's `select`). Every
/// format pair has a scalar kernel, which every CPU runs, so there always is one.
fn preferred<F: CFloat>(cpu: &CpuFeatures) -> Status<&'static FloatKernel<F>> {
    let ks = F::kernels();
    let best = ks.iter().copied().find(|k| k.rhs_format() == F::RHS && k.lhs_format() == F::LHS && k.is_available(cpu));
    best.ok_or(qgemm_status::QGEMM_ERROR_UNSUPPORTED)
}

fn float_info<F: FloatFamily>(k: &FloatKernel<F>) -> qgemm_float_kernel_info {
    let mut name = [0 as c_char; QGEMM_KERNEL_NAME_MAX];
    for (d, s) in name.iter_mut().zip(k.name().bytes().take(QGEMM_KERNEL_NAME_MAX - 1)) {
        *d = s as c_char;
    }
    qgemm_float_kernel_info {
        name,
        tier: tier_code(k.tier()),
        m_step: k.m_step(),
        n_step: k.n_step(),
        lhs_format: lhs_code(&k.lhs_format()),
        rhs_format: rhs_code(&k.rhs_format()),
    }
}

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

// ---- catalogue ----------------------------------------------------------------------------

/// Writes the number of kernels in float `family`'s catalogue to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_kernel_count(family: u32, out: *mut usize) -> qgemm_status {
    let count = match_float!(family, F => Ok(F::kernels().len()));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(count, out) }
}

/// Writes the handle of kernel `index` (`< qgemm_float_kernel_count`) of float `family` to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_kernel_at(
    family: u32,
    index: usize,
    out: *mut qgemm_float_kernel,
) -> qgemm_status {
    let kernel = match_float!(family, F => match u32::try_from(index) {
        Ok(i) if index < F::kernels().len() => Ok(qgemm_float_kernel { family, index: i }),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(kernel, out) }
}

/// Writes what `kernel` is (name, tier, steps, formats) to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_kernel_get_info(
    kernel: qgemm_float_kernel,
    out: *mut qgemm_float_kernel_info,
) -> qgemm_status {
    let info = with_float_kernel!(kernel, k => Ok(float_info(k)));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(info, out) }
}

/// Writes whether `kernel` may run on a CPU with `features` to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_kernel_is_available(
    kernel: qgemm_float_kernel,
    features: u32,
    out: *mut bool,
) -> qgemm_status {
    let available = with_float_kernel!(kernel, k => Ok(k.is_available(&self::features(features)?)));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(available, out) }
}

/// Writes the best kernel of float `family` on a CPU with `features` for the family's preferred
/// formats (the operator's: `f32p16`, `f16p32`, `bf16p8x4` + `bf16p12_*`) to `*out`; the scalar
/// kernel when no SIMD tier runs.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_select(family: u32, features: u32, out: *mut qgemm_float_kernel) -> qgemm_status {
    let kernel =
        self::features(features).and_then(|cpu| match_float!(family, F => float_handle(preferred::<F>(&cpu)?)));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(kernel, out) }
}

/// Writes the best kernel of float `family` on a CPU with `features` that reads the LHS format
/// `lhs_format` (`QGEMM_FLOAT_LHS_*`) and the RHS format `rhs_format` (`QGEMM_FLOAT_RHS_*`) to
/// `*out`. `QGEMM_ERROR_UNSUPPORTED` if no kernel of the family reads that pair (every pair a
/// kernel reads has a scalar kernel, so a supported pair always gives one).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_select_for(
    family: u32,
    features: u32,
    lhs_format: u32,
    rhs_format: u32,
    out: *mut qgemm_float_kernel,
) -> qgemm_status {
    let select = || {
        let cpu = self::features(features)?;
        let (lhs, rhs) = (self::lhs_format(lhs_format)?, self::rhs_format(rhs_format)?);
        let none = qgemm_status::QGEMM_ERROR_UNSUPPORTED;
        match_float!(family, F => {
            let k = F::kernels().iter().copied().find(|k| k.rhs_format() == rhs && k.lhs_format() == lhs && k.is_available(&cpu));
            float_handle(k.ok_or(none)?)
        })
    };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(select(), out) }
}

/// Writes to `*out` the element offset in `dst` of output `(m_idx, n_idx)` with rows
/// `dst_stride_row` elements apart (starts must be multiples of the kernel's steps).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_kernel_dst_offset(
    kernel: qgemm_float_kernel,
    m_idx: usize,
    n_idx: usize,
    dst_stride_row: usize,
    out: *mut usize,
) -> qgemm_status {
    let offset = with_float_kernel!(kernel, k => Ok(k.dst_offset(m_idx, n_idx, dst_stride_row)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(offset, out) }
}

// ---- run ----------------------------------------------------------------------------------

/// The body of `qgemm_float_kernel_run` and `_u16` for the kernel's family `F`.
///
/// # Safety
///
/// `lhs` is null or valid for `lhs_len` reads of `F::Lhs`, `rhs` for `rhs_len` reads, `dst` for
/// `dst_len` writes of `T`, `args` null or valid for a read.
#[allow(clippy::too_many_arguments)]
unsafe fn float_run<F: CFloat, T: CElem>(
    kern: &FloatKernel<F>,
    features: u32,
    (lhs, lhs_len): (*const c_void, usize),
    (rhs, rhs_len): (*const u8, usize),
    (dst, dst_len): (*mut T, usize),
    args: *const qgemm_float_args,
) -> Status {
    let dst = dst_as::<F::Dst, T>(dst)?;
    let cpu = self::features(features)?;
    // SAFETY: `args` is null or valid for a read (this function's contract).
    let a = unsafe { read_in(args) }?;
    let clamp = Clamp::new(a.clamp_min, a.clamp_max)?;
    let args = MatmulArgs::new(a.m, a.n, a.k)
        .with_rect(a.m_idx, a.n_idx, a.m, a.n)
        .with_lhs_stride(a.lhs_stride_row)
        .with_dst_stride(a.dst_stride_row)
        .with_clamp(clamp);
    // SAFETY: `lhs` is null or valid for `lhs_len` reads of `F::Lhs`, any bit pattern of which is
    // valid (this function's contract, `LhsBits`); `input` checks its alignment.
    let (lhs, lhs_span) = unsafe { input(lhs.cast::<F::Lhs>(), lhs_len) }?;
    // SAFETY: `rhs` is null or valid for `rhs_len` reads (this function's contract).
    let (rhs, rhs_span) = unsafe { input(rhs, rhs_len) }?;
    // SAFETY: `dst` is null or valid for `dst_len` writes of `T`, which are `dst_len` `F::Dst`
    // (`dst_as`); `output` checks that it overlaps neither input.
    let dst = unsafe { output(dst, dst_len, &[lhs_span, rhs_span]) }?;
    Ok(kern.run(&cpu, lhs, rhs, dst, &args)?)
}

/// Runs `kernel` on the rectangle `*args` describes, f32 output (`QGEMM_FLOAT_FAMILY_F32_*`):
///
/// * `lhs`, `lhs_len` elements of the kernel's LHS type: for `QGEMM_FLOAT_LHS_NONE` the
///   activations themselves (`float` for `F32_F32_F32P`, `uint16_t` f16 bits for
///   `F16_F16_F16P`), row `i` at element `i * args->lhs_stride_row`, from row 0; for a packed
///   LHS the bytes of the whole packed LHS (row 0 onward) in the kernel's LHS format. Aligned to
///   its element type.
/// * `rhs_packed`, `rhs_packed_len` bytes: the whole packed weights in the kernel's RHS format.
/// * `dst`, `dst_len` floats: from output element `(m_idx, n_idx)`, holding
///   `(m - 1) * dst_stride_row + n` elements; exactly the `m x n` rectangle is written.
///
/// A kernel with f16 output: `QGEMM_ERROR_WRONG_DST_TYPE` (use `qgemm_float_kernel_run_u16`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (`lhs`: `lhs_len` elements of the kernel's LHS type), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_kernel_run(
    kernel: qgemm_float_kernel,
    features: u32,
    lhs: *const c_void,
    lhs_len: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut f32,
    dst_len: usize,
    args: *const qgemm_float_args,
) -> qgemm_status {
    status(|| {
        with_float_kernel!(kernel, k => {
            // SAFETY: the arguments as this function's contract says, which is `float_run`'s.
            unsafe { float_run(k, features, (lhs, lhs_len), (rhs_packed, rhs_packed_len), (dst, dst_len), args) }
        })
    })
}

/// As `qgemm_float_kernel_run`, for the kernels with f16 output (`QGEMM_FLOAT_FAMILY_F16_*`):
/// `dst` receives `uint16_t` bit patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (`lhs`: `lhs_len` elements of the kernel's LHS type), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_kernel_run_u16(
    kernel: qgemm_float_kernel,
    features: u32,
    lhs: *const c_void,
    lhs_len: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut u16,
    dst_len: usize,
    args: *const qgemm_float_args,
) -> qgemm_status {
    status(|| {
        with_float_kernel!(kernel, k => {
            // SAFETY: the arguments as this function's contract says, which is `float_run`'s.
            unsafe { float_run(k, features, (lhs, lhs_len), (rhs_packed, rhs_packed_len), (dst, dst_len), args) }
        })
    })
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
    unsafe { answer_size(f32p::F32P16.packed_size(n, k), out) }
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
    unsafe { answer_size(f32p::F32P16.packed_offset(n_idx, k), out) }
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
    unsafe { answer_size(f32p::F32P8.packed_size(n, k), out) }
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
    unsafe { answer_size(f32p::F32P8.packed_offset(n_idx, k), out) }
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
    unsafe { answer_size(f16p::F16P32.packed_size(n, k), out) }
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
    unsafe { answer_size(f16p::F16P32.packed_offset(n_idx, k), out) }
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
    unsafe { answer_size(f16p::F16P16.packed_size(n, k), out) }
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
    unsafe { answer_size(f16p::F16P16.packed_offset(n_idx, k), out) }
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
    unsafe { answer_size(bf16p12::BF16P12_B32.packed_size(n, k), out) }
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
    unsafe { answer_size(bf16p12::BF16P12_B32.packed_offset(n_idx, k), out) }
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
    unsafe { answer_size(bf16p12::BF16P12_B16.packed_size(n, k), out) }
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
    unsafe { answer_size(bf16p12::BF16P12_B16.packed_offset(n_idx, k), out) }
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
    format: &LhsFormat,
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
    unsafe { answer_size(bf16p::BF16P1X4.packed_size(m, k), out) }
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
    unsafe { answer_size(bf16p::BF16P1X4.packed_offset(m_idx, k), out) }
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
    unsafe { answer_size(bf16p::BF16P8X4.packed_size(m, k), out) }
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
    unsafe { answer_size(bf16p::BF16P8X4.packed_offset(m_idx, k), out) }
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

// ---- the operator -------------------------------------------------------------------------

/// A float linear layer (`y = x W^T + b`, the Rust `op::FloatLinear`): plain data, filled by
/// `qgemm_float_linear_pack` or `qgemm_float_linear_from_packed` and checked on every use.
/// `weights` must stay valid and unchanged while the layer is used.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_float_linear {
    /// `QGEMM_FLOAT_FAMILY_*`.
    pub family: u32,
    /// Output channels.
    pub n: usize,
    /// Depth.
    pub k: usize,
    /// The packed weights (the family's `qgemm_float_linear_rhs_format`).
    pub weights: *const u8,
    /// Bytes of `weights` the layer uses (`qgemm_float_linear_packed_size`).
    pub weights_len: usize,
}

/// A prepared call of a float layer (`qgemm_float_linear_prepare`): the kernel chosen on
/// `features`, the activations as the kernel reads them and the clamp. Plain data, checked on
/// every use.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_float_linear_call {
    /// The layer.
    pub layer: qgemm_float_linear,
    /// The kernel the parts run.
    pub kernel: qgemm_float_kernel,
    /// `QGEMM_FEATURE_*` bits of the CPUs the parts run on.
    pub features: u32,
    /// Rows of the call.
    pub m: usize,
    /// The activations as the kernel reads them: the caller's `x` (`F32_F32_F32P`,
    /// `F16_F16_F16P`) or the bf16 packing of it in the caller's scratch (the bf16 families).
    /// Must stay valid and unchanged until the last part has run.
    pub lhs: *const c_void,
    /// Elements at `lhs` (of the kernel's LHS type: `float`, `uint16_t` or bytes).
    pub lhs_len: usize,
    /// Clamp lower bound (`-INFINITY` for none).
    pub clamp_min: f32,
    /// Clamp upper bound (`INFINITY` for none).
    pub clamp_max: f32,
}

/// The `FloatLinear` a C layer describes, and the byte range of its weights.
///
/// # Safety
///
/// `l.weights` is null or valid for `l.weights_len` reads that nothing writes during the call.
unsafe fn float_layer_of<'a, F: CFloat>(l: &qgemm_float_linear) -> Status<(FloatLinear<'a, F>, Span)> {
    if l.family != F::CODE {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: this function's contract.
    let (w, span) = unsafe { input(l.weights, l.weights_len) }?;
    Ok((FloatLinear::<F>::from_packed(l.n, l.k, w)?, span))
}

/// Writes to `*out` the RHS format (`QGEMM_FLOAT_RHS_*`) the operator packs float `family`'s
/// weights in (the family's preferred one): `qgemm_rhs_<format>_pack` of that format, or
/// KleidiAI's packer of it, gives weights `qgemm_float_linear_from_packed` takes.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_rhs_format(family: u32, out: *mut u32) -> qgemm_status {
    let code = match_float!(family, F => Ok(rhs_code(&F::RHS)));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(code, out) }
}

/// Writes to `*out` the bytes of float `family`'s packed weights for `n` channels of depth `k`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_packed_size(
    family: u32,
    n: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = match_float!(family, F => FloatLinear::<F>::packed_size(n, k).map_err(qgemm_status::from));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// The body of `qgemm_float_linear_pack` and `_u16` for the family `F`.
///
/// # Safety
///
/// Each pointer is null or valid for the reads or writes of its length.
unsafe fn float_pack_family<F: CFloat, T: CElem>(
    (w, w_len, layout, stride): (*const T, usize, u32, usize),
    (n, k): (usize, usize),
    (bias, bias_len): (*const T, usize),
    (buf, buf_len): (*mut u8, usize),
) -> Status<qgemm_float_linear> {
    let layout = super::layout(layout)?;
    // SAFETY: `w` is null or valid for `w_len` reads (this function's contract).
    let (data, w_span) = unsafe { elems::<F::Src, T>(w, w_len) }?;
    // SAFETY: `bias` is null or valid for `bias_len` reads (this function's contract).
    let (bias, b_span) = unsafe { optional_elems::<F::Bias, T>(bias, bias_len) }?;
    // SAFETY: `buf` is null or valid for `buf_len` writes (this function's contract); `output`
    // checks that it overlaps neither input.
    let buf = unsafe { output(buf, buf_len, &[w_span, b_span]) }?;
    let layer = FloatLinear::<F>::pack(n, k, &FloatSource { data, layout, stride }, bias, buf)?;
    let used = layer.weights();
    Ok(qgemm_float_linear { family: F::CODE, n, k, weights: used.as_ptr(), weights_len: used.len() })
}

/// The body of `qgemm_float_linear_pack` and `_u16`.
///
/// # Safety
///
/// Each pointer is null or valid for the reads or writes of its length (`out`: one).
#[allow(clippy::too_many_arguments)]
unsafe fn float_pack_body<T: CElem>(
    family: u32,
    w: (*const T, usize, u32, usize),
    nk: (usize, usize),
    bias: (*const T, usize),
    buf: (*mut u8, usize),
    out: *mut qgemm_float_linear,
) -> qgemm_status {
    // `out` first: nothing is packed for a call that cannot return its layer.
    if out.is_null() {
        return qgemm_status::QGEMM_ERROR_NULL_POINTER;
    }
    if !out.is_aligned() {
        return qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER;
    }
    // SAFETY: the pointers as this function's contract says, which is the family body's.
    let layer = match_float!(family, F => unsafe { float_pack_family::<F, T>(w, nk, bias, buf) });
    // SAFETY: `out` is valid for a write (this function's contract).
    unsafe { answer(layer, out) }
}

/// Packs the weights of a layer of an f32 float family (`QGEMM_FLOAT_FAMILY_F32_*`) into `buf`
/// and fills `*out` (the layer over `buf`): `w` (`w_len` floats) holds the `n x k` weights in
/// `layout` (`QGEMM_LAYOUT_NXK` or `QGEMM_LAYOUT_KXN`), rows `stride` floats apart; `bias`: `n`
/// floats or NULL (zeros); `buf`: at least `qgemm_float_linear_packed_size` bytes, which must
/// stay valid and unchanged while the layer is used. An f16 family:
/// `QGEMM_ERROR_WRONG_DST_TYPE` (use `qgemm_float_linear_pack_u16`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_linear_pack(
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
    out: *mut qgemm_float_linear,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is the body's.
    unsafe { float_pack_body(family, (w, w_len, layout, stride), (n, k), (bias, bias_len), (buf, buf_len), out) }
}

/// As `qgemm_float_linear_pack`, for the f16 float families (`QGEMM_FLOAT_FAMILY_F16_*`): `w`
/// and `bias` hold `uint16_t` f16 bit patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_linear_pack_u16(
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
    out: *mut qgemm_float_linear,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is the body's.
    unsafe { float_pack_body(family, (w, w_len, layout, stride), (n, k), (bias, bias_len), (buf, buf_len), out) }
}

/// Fills `*out` with a layer of float `family` over weights packed earlier in its
/// `qgemm_float_linear_rhs_format` (by `qgemm_rhs_<format>_pack`, `qgemm_float_linear_pack` or
/// KleidiAI's packer): `weights`, `weights_len` bytes, at least `qgemm_float_linear_packed_size`.
/// The bytes are trusted to be such a packing.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_from_packed(
    family: u32,
    n: usize,
    k: usize,
    weights: *const u8,
    weights_len: usize,
    out: *mut qgemm_float_linear,
) -> qgemm_status {
    let l = qgemm_float_linear { family, n, k, weights, weights_len };
    // SAFETY: `weights` is null or valid for `weights_len` reads (this function's contract).
    let used = match_float!(family, F => unsafe { float_layer_of::<F>(&l) }.map(|(layer, _)| layer.weights().len()));
    let layer = used.map(|weights_len| qgemm_float_linear { weights_len, ..l });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(layer, out) }
}

/// Writes to `*out` the bytes of scratch `qgemm_float_linear_run` and `_prepare` need for `m`
/// rows: 0 for `F32_F32_F32P` and `F16_F16_F16P` (they read the activations in place), the bf16
/// packing of the activations for the bf16 families.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_scratch_size(
    layer: *const qgemm_float_linear,
    m: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = (|| {
        // SAFETY: `layer` is null or valid for a read (this function's contract).
        let l = unsafe { read_in(layer) }?;
        // SAFETY: the layer's weights as this function's contract says.
        match_float!(l.family, F => Ok(unsafe { float_layer_of::<F>(&l) }?.0.scratch_size(m)?))
    })();
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// A scratch buffer: null is allowed with length 0 (the unpacked families need none).
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

/// The body of `qgemm_float_linear_run` and `_u16` for the layer's family `F`.
///
/// # Safety
///
/// `l`'s weights as [`float_layer_of`] says; `x`, `y` and `scratch` are null or valid for reads
/// (`x`) or writes of their lengths.
unsafe fn float_run_family<F: CFloat, T: CElem>(
    l: &qgemm_float_linear,
    cpu: &CpuFeatures,
    m: usize,
    (x, x_len): (*const T, usize),
    (y, y_len): (*mut T, usize),
    (scratch, scratch_len): (*mut u8, usize),
) -> Status {
    // SAFETY: the weights as this function's contract says.
    let (layer, w_span) = unsafe { float_layer_of::<F>(l) }?;
    // SAFETY: `x` is null or valid for `x_len` reads (this function's contract).
    let (x, x_span) = unsafe { elems::<F::Src, T>(x, x_len) }?;
    // SAFETY: `scratch` is null or valid for `scratch_len` writes (this function's contract).
    let (scratch, s_span) = unsafe { scratch_out(scratch, scratch_len, &[w_span, x_span]) }?;
    let y = dst_as::<F::Dst, T>(y)?;
    // SAFETY: `y` is null or valid for `y_len` writes of `T`, which are `y_len` `F::Dst`
    // (`dst_as`); `output` checks it overlaps none of the other buffers.
    let y = unsafe { output(y, y_len, &[w_span, x_span, s_span]) }?;
    Ok(layer.run(cpu, m, x, y, scratch)?)
}

/// `y = x W^T + b` for `m` rows of a layer of an f32 float family: `x` (`x_len` floats, `m x k`
/// dense), `y` (`y_len` floats, `m x n` dense), `scratch` (`qgemm_float_linear_scratch_size`
/// bytes; NULL with 0 where that is 0); the kernel is the best of the layer's formats on
/// `features`; clamp `[-FLT_MAX, FLT_MAX]` (the Rust `Clamp::NONE`: finite results pass
/// unchanged, an infinite one saturates; `qgemm_float_linear_prepare` takes any clamp). `m = 0`
/// writes nothing.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_linear_run(
    layer: *const qgemm_float_linear,
    features: u32,
    m: usize,
    x: *const f32,
    x_len: usize,
    y: *mut f32,
    y_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `layer` is null or valid for a read (this function's contract).
        let l = unsafe { read_in(layer) }?;
        let cpu = self::features(features)?;
        // SAFETY: forwarded (this function's contract).
        match_float!(l.family, F => unsafe { float_run_family::<F, f32>(&l, &cpu, m, (x, x_len), (y, y_len), (scratch, scratch_len)) })
    })
}

/// As `qgemm_float_linear_run`, for the f16 float families: `x` and `y` hold `uint16_t` bit
/// patterns. The f16 kernels round the clamp bounds to f16, where `±FLT_MAX` become
/// `±infinity`: an overflowing result stays infinite.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_linear_run_u16(
    layer: *const qgemm_float_linear,
    features: u32,
    m: usize,
    x: *const u16,
    x_len: usize,
    y: *mut u16,
    y_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `layer` is null or valid for a read (this function's contract).
        let l = unsafe { read_in(layer) }?;
        let cpu = self::features(features)?;
        // SAFETY: forwarded (this function's contract).
        match_float!(l.family, F => unsafe { float_run_family::<F, u16>(&l, &cpu, m, (x, x_len), (y, y_len), (scratch, scratch_len)) })
    })
}

/// The body of `qgemm_float_linear_prepare` and `_u16` for the layer's family `F`: the kernel's
/// handle and the activations as it reads them.
///
/// # Safety
///
/// As [`float_run_family`], without `y`.
unsafe fn float_prepare_family<F: CFloat, T: CElem>(
    l: &qgemm_float_linear,
    cpu: &CpuFeatures,
    m: usize,
    (x, x_len): (*const T, usize),
    (scratch, scratch_len): (*mut u8, usize),
) -> Status<(qgemm_float_kernel, *const c_void, usize)> {
    // SAFETY: the weights as this function's contract says.
    let (layer, w_span) = unsafe { float_layer_of::<F>(l) }?;
    // SAFETY: `x` is null or valid for `x_len` reads (this function's contract).
    let (x, x_span) = unsafe { elems::<F::Src, T>(x, x_len) }?;
    // SAFETY: `scratch` is null or valid for `scratch_len` writes (this function's contract).
    let (scratch, _) = unsafe { scratch_out(scratch, scratch_len, &[w_span, x_span]) }?;
    let packed = scratch.as_ptr();
    let kernel = layer.prepare(cpu, m, x, scratch)?.kernel();
    let (lhs, lhs_len): (*const c_void, usize) = match F::LHS {
        None => (x.as_ptr().cast(), m.checked_mul(layer.k()).ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?),
        Some(f) => (packed.cast(), if m == 0 { 0 } else { f.packed_size(m, layer.k())? }),
    };
    Ok((float_handle(kernel)?, lhs, lhs_len))
}

/// The body of `qgemm_float_linear_prepare` and `_u16`.
///
/// # Safety
///
/// `layer` is null or valid for a read, its weights as [`float_layer_of`] says; `x` and
/// `scratch` as [`float_run_family`].
unsafe fn float_prepare_body<T: CElem>(
    layer: *const qgemm_float_linear,
    features: u32,
    m: usize,
    x: (*const T, usize),
    scratch: (*mut u8, usize),
    (clamp_min, clamp_max): (f32, f32),
) -> Status<qgemm_float_linear_call> {
    // SAFETY: `layer` is null or valid for a read (this function's contract).
    let l = unsafe { read_in(layer) }?;
    let cpu = self::features(features)?;
    Clamp::new(clamp_min, clamp_max)?;
    let (kernel, lhs, lhs_len) = match_float!(l.family, F => {
        // SAFETY: forwarded (this function's contract).
        unsafe { float_prepare_family::<F, T>(&l, &cpu, m, x, scratch) }
    })?;
    Ok(qgemm_float_linear_call { layer: l, kernel, features, m, lhs, lhs_len, clamp_min, clamp_max })
}

/// Prepares a call on `m` rows of f32 activations (`x`, `x_len` floats, `m x k` dense) of a
/// layer of an f32 float family and fills `*out`: the kernel on `features`, the activations
/// (the bf16 family packs them into `scratch`, `qgemm_float_linear_scratch_size` bytes; the
/// unpacked family reads `x` itself: `x`, or `scratch`, must stay unchanged until the last
/// part has run), and the clamp (`clamp_min <= clamp_max`, no NaN; `-INFINITY, INFINITY` for
/// none; `-FLT_MAX, FLT_MAX`, the clamp of `qgemm_float_linear_run`, gives its bits). Run its
/// parts with `qgemm_float_linear_split` and `qgemm_float_linear_run_part`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_linear_prepare(
    layer: *const qgemm_float_linear,
    features: u32,
    m: usize,
    x: *const f32,
    x_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
    clamp_min: f32,
    clamp_max: f32,
    out: *mut qgemm_float_linear_call,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is the body's.
    let call =
        unsafe { float_prepare_body(layer, features, m, (x, x_len), (scratch, scratch_len), (clamp_min, clamp_max)) };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(call, out) }
}

/// As `qgemm_float_linear_prepare`, for the f16 float families: `x` holds `uint16_t` bit
/// patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say; the layer's
/// weights stay valid and unchanged.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_float_linear_prepare_u16(
    layer: *const qgemm_float_linear,
    features: u32,
    m: usize,
    x: *const u16,
    x_len: usize,
    scratch: *mut u8,
    scratch_len: usize,
    clamp_min: f32,
    clamp_max: f32,
    out: *mut qgemm_float_linear_call,
) -> qgemm_status {
    // SAFETY: the arguments as this function's contract says, which is the body's.
    let call =
        unsafe { float_prepare_body(layer, features, m, (x, x_len), (scratch, scratch_len), (clamp_min, clamp_max)) };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(call, out) }
}

/// A checked float call.
struct FloatCall<'a, F: CFloat> {
    layer: FloatLinear<'a, F>,
    kernel: &'static FloatKernel<F>,
    lhs: &'a [F::Lhs],
    clamp: Clamp,
    spans: [Span; 2],
}

/// Checks a C float call struct: the layer, a kernel of its family that reads its formats and
/// runs on the call's features, the activations' length, the clamp.
///
/// # Safety
///
/// `c.layer.weights` as [`float_layer_of`] says; `c.lhs` is null or valid for `c.lhs_len` reads
/// of the kernel's LHS type that nothing writes during the call.
unsafe fn float_call_of<'a, F: CFloat>(c: &qgemm_float_linear_call) -> Status<FloatCall<'a, F>> {
    // SAFETY: this function's contract.
    let (layer, w_span) = unsafe { float_layer_of::<F>(&c.layer) }?;
    if c.kernel.family != F::CODE {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    let kernel = float_entry::<F>(c.kernel.index)?;
    if kernel.rhs_format() != F::RHS || kernel.lhs_format() != F::LHS {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    let cpu = self::features(c.features)?;
    if let Some(needs) = kernel.missing_feature(&cpu) {
        return Err(qgemm::Error::UnsupportedCpu { needs }.into());
    }
    let clamp = Clamp::new(c.clamp_min, c.clamp_max)?;
    let needed = match F::LHS {
        _ if c.m == 0 => 0,
        None => c.m.checked_mul(layer.k()).ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?,
        Some(f) => f.packed_size(c.m, layer.k())?,
    };
    if needed == 0 {
        return Ok(FloatCall { layer, kernel, lhs: &[], clamp, spans: [w_span, NO_SPAN] });
    }
    // SAFETY: this function's contract.
    let (lhs, lhs_span) = unsafe { input(c.lhs.cast::<F::Lhs>(), c.lhs_len) }?;
    if lhs.len() < needed {
        let e = qgemm::Error::BufferTooShort { buffer: qgemm::error::Buffer::Lhs, given: lhs.len(), needed };
        return Err(e.into());
    }
    Ok(FloatCall { layer, kernel, lhs: &lhs[..needed], clamp, spans: [w_span, lhs_span] })
}

/// Cuts the call's `m x n` output into at most `parts` rectangles (0 counts as 1, more than 64
/// as 64) on the kernel's steps (the Rust `FloatPrepared::split`): writes them to `rects`
/// (`rects_len` elements; 64 always suffice) and their number to `*count`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_split(
    call: *const qgemm_float_linear_call,
    parts: usize,
    rects: *mut qgemm_rect,
    rects_len: usize,
    count: *mut usize,
) -> qgemm_status {
    if count.is_null() {
        // Checked first: nothing is written unless the whole call succeeds.
        return qgemm_status::QGEMM_ERROR_NULL_POINTER;
    }
    let body = || {
        // SAFETY: `call` is null or valid for a read (this function's contract).
        let c = unsafe { read_in(call) }?;
        let (n, m_step, n_step, spans) = match_float!(c.layer.family, F => {
            // SAFETY: the call's buffers as this function's contract says.
            let fc = unsafe { float_call_of::<F>(&c) }?;
            Ok((fc.layer.n(), fc.kernel.m_step(), fc.kernel.n_step(), fc.spans))
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
    };
    // SAFETY: `count` is null or valid for a write (this function's contract).
    unsafe { answer(body(), count) }
}

/// The body of `qgemm_float_linear_run_part` and `_u16` for the call's family `F`: one
/// rectangle of the output, written through raw pointers (other threads may be writing the
/// other rectangles of `y`).
///
/// # Safety
///
/// The call's buffers as [`float_call_of`] says; `y` is null or valid for writes of `y_len`
/// elements, and while this runs nothing else accesses the elements of `rect` in `y`.
unsafe fn float_run_part_family<F: CFloat, T: CElem>(
    c: &qgemm_float_linear_call,
    rect: qgemm_rect,
    y: *mut T,
    y_len: usize,
) -> Status {
    // SAFETY: the call's buffers as this function's contract says.
    let call = unsafe { float_call_of::<F>(c) }?;
    let (layer, kernel) = (&call.layer, call.kernel);
    let (m, n, k) = (c.m, layer.n(), layer.k());
    let y = dst_as::<F::Dst, T>(y)?;
    check_part(y, y_len, &call.spans, (m, n), &rect)?;
    let dst_offset = kernel.dst_offset(rect.m_idx, rect.n_idx, n)?;
    if rect.m == 0 || rect.n == 0 {
        return Ok(());
    }
    let lhs_offset = match F::LHS {
        None => rect.m_idx * k,
        Some(f) => f.packed_offset(rect.m_idx, k)?,
    };
    let rhs_offset = F::RHS.packed_offset(rect.n_idx, k)?;
    // In bounds: `rect.m_idx < m` is a multiple of `m_step` (a multiple of `mr`), so the LHS from
    // `lhs_offset` holds the rectangle's rows (unpacked: `rect.m` rows of `k`) or whole tiles
    // within the call's `m` rows (`float_call_of`); the same for the weights from `rhs_offset`
    // (`from_packed` checked their length for `n` channels).
    let (Some(lhs), Some(rhs)) = (call.lhs.get(lhs_offset..), layer.weights().get(rhs_offset..)) else {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    };
    let args = FloatArgs {
        m: rect.m,
        n: rect.n,
        k,
        lhs: lhs.as_ptr(),
        lhs_stride_row: k * size_of::<F::Lhs>(),
        rhs_packed: rhs.as_ptr(),
        // In `y`: `dst_offset + (rect.m - 1) * n + rect.n <= m * n <= y_len`.
        dst: y.wrapping_add(dst_offset),
        dst_stride_row: n * size_of::<F::Dst>(),
        clamp_min: call.clamp.min(),
        clamp_max: call.clamp.max(),
    };
    // SAFETY: `run_unchecked`'s contract: the CPU has the kernel's features (`float_call_of`
    // checked the call's feature bits, which the caller vouches for, as for every layer-1 run);
    // `rect.m, rect.n >= 1` (checked above) and `k >= 1` (`from_packed`); the LHS holds the
    // rectangle's `rect.m` dense rows of `k` (unpacked) or its tiles in the kernel's LHS format
    // (packed: `prepare` packed them with the layer's format, which is the kernel's, checked
    // in `float_call_of`); the weights hold the rectangle's tiles in the kernel's RHS format;
    // `dst` row `i < rect.m` starts at element `dst_offset + i * n` of `y` and its `rect.n`
    // elements end within the `m * n <= y_len` elements `y` is valid for (this function's
    // contract), disjoint from the inputs (checked above), and nothing else accesses them (this
    // function's contract); the clamp is a valid `Clamp`.
    unsafe { kernel.run_unchecked(&args) };
    Ok(())
}

/// Computes the rectangle `rect` (one of `qgemm_float_linear_split`'s, or any rectangle inside
/// the output whose start is a multiple of the kernel's steps) of an f32 float call's output
/// into `y`: the whole `m x n` output (`y_len >= m * n` floats, dense), of which only `rect` is
/// written. Threads may run the rectangles of one split at the same time on the same `y`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say, except that other
/// threads may write `y` outside `rect` meanwhile; the call's weights and `lhs` stay valid and
/// unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_run_part(
    call: *const qgemm_float_linear_call,
    rect: qgemm_rect,
    y: *mut f32,
    y_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `call` is null or valid for a read (this function's contract).
        let c = unsafe { read_in(call) }?;
        // SAFETY: forwarded (this function's contract).
        match_float!(c.layer.family, F => unsafe { float_run_part_family::<F, f32>(&c, rect, y, y_len) })
    })
}

/// As `qgemm_float_linear_run_part`, for the f16 float families: `y` holds `uint16_t` bit
/// patterns.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say, except that other
/// threads may write `y` outside `rect` meanwhile; the call's weights and `lhs` stay valid and
/// unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_float_linear_run_part_u16(
    call: *const qgemm_float_linear_call,
    rect: qgemm_rect,
    y: *mut u16,
    y_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `call` is null or valid for a read (this function's contract).
        let c = unsafe { read_in(call) }?;
        // SAFETY: forwarded (this function's contract).
        match_float!(c.layer.family, F => unsafe { float_run_part_family::<F, u16>(&c, rect, y, y_len) })
    })
}
