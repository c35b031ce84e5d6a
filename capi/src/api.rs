//! Layer 1: the safe C API (`qgemm_*`).
//!
//! Conventions, for every function:
//!
//! * The return value is a [`qgemm_status`]; results go through out pointers, which are
//!   written only on `QGEMM_OK`. A packer or run that fails has written nothing.
//! * Buffers are a pointer and a length **in elements** of the pointer's type (bytes for
//!   `uint8_t *` and `void *`). A required pointer that is null is `QGEMM_ERROR_NULL_POINTER`
//!   (also with length 0); a pointer not aligned to its element type is
//!   `QGEMM_ERROR_MISALIGNED_POINTER`; an output that overlaps an input of the same call is
//!   `QGEMM_ERROR_BUFFERS_OVERLAP`. Nothing outside `[ptr, ptr + len)` is read or written.
//! * Feature sets are `QGEMM_FEATURE_*` bit sets ([`crate::cpu`]); a bit outside
//!   `QGEMM_FEATURE_ALL` is `QGEMM_ERROR_INVALID_ARGUMENT`. The caller vouches for the bits:
//!   a feature the CPU lacks makes a kernel of that tier execute an undefined instruction (and,
//!   for `QGEMM_FEATURE_SME`, the library reads the streaming vector length with `RDSVL` when
//!   it resolves a kernel of a family with a kernel whose tile scales with it: on Linux only
//!   where the kernel reports SME, on bare metal wherever the bit is set).
//!
//! Every exported function has the same `# Safety` contract: each pointer argument is null or
//! valid for the reads or writes of the length given with it (one element for out pointers and
//! structs), and an input is not written by anyone during the call. The `unsafe` blocks below
//! are the places that rely on it: turning a checked C pointer into a Rust reference or slice
//! ([`read_in`], [`put`], [`input`], [`output`]).
//!
//! # Families
//!
//! One code space for every family, quantized and float (`QGEMM_FAMILY_*`), and one table,
//! [`families!`]: a row names the code, the family's name, its Rust `Family` type and the
//! element type of its output. The rows implement [`CFamily`]; [`match_family!`] and
//! [`with_kernel!`] turn a family code or a kernel handle into a call of generic code on the
//! family's type. No function below matches on a family code by hand. What differs between
//! families lives in the Rust family (its formats, its `Params`), never in a second set of C
//! functions: one kernel handle, one run, one operator ([`linear`]). Adding a family is a
//! `QGEMM_FAMILY_*` constant (cbindgen does not expand macros, so the C constants are written
//! out) and a row; a family with a new RHS format also needs its `qgemm_rhs_<format>_*`
//! functions (their C signatures differ by format).

use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of};

use half::{bf16, f16};
use qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
use qgemm::f16_bf16p_bf16p::F16Bf16pBf16p;
use qgemm::f16_f16_f16p::F16F16F16p;
use qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
use qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p;
use qgemm::f32_bf16p_bf16p::F32Bf16pBf16p;
use qgemm::f32_f32_f32p::F32F32F32p;
use qgemm::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::{self, Int8Source};
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsu2cxp};
use qgemm::{
    Clamp, CpuFeatures, Descriptor, Family, Kernel, LhsFormat, LhsPacking, MatmulArgs, Packing, Params, RhsFormat,
    RhsPacking, Tier,
};

use crate::params::{CKind, CParams};
use crate::status::qgemm_status;

type Status<T = ()> = Result<T, qgemm_status>;

/// A buffer's byte range `[start, end)`, for the overlap checks.
type Span = (usize, usize);

/// The byte range of no buffer (an absent optional input).
const NO_SPAN: Span = (0, 0);

/// Runs `body` and turns its result into a status.
fn status(body: impl FnOnce() -> Status) -> qgemm_status {
    match body() {
        Ok(()) => qgemm_status::QGEMM_OK,
        Err(s) => s,
    }
}

/// Writes `v` through `out`; a null or misaligned `out` is an error.
///
/// # Safety
///
/// `out` is null or valid for a write of a `T`.
unsafe fn put<T>(out: *mut T, v: T) -> Status {
    if out.is_null() {
        return Err(qgemm_status::QGEMM_ERROR_NULL_POINTER);
    }
    if !out.is_aligned() {
        return Err(qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER);
    }
    // SAFETY: non-null and aligned (checked above) and valid for a write of a `T` (this
    // function's contract).
    unsafe { out.write(v) };
    Ok(())
}

/// [`put`] as a status (for [`crate::cpu`]).
///
/// # Safety
///
/// `out` is null or valid for a write of a `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, v: T) -> qgemm_status {
    // SAFETY: this function's contract is `put`'s.
    status(|| unsafe { put(out, v) })
}

/// Reads `*p` (a caller struct); a null or misaligned `p` is an error.
///
/// # Safety
///
/// `p` is null or valid for a read of a `T`.
unsafe fn read_in<T: Copy>(p: *const T) -> Status<T> {
    if p.is_null() {
        return Err(qgemm_status::QGEMM_ERROR_NULL_POINTER);
    }
    if !p.is_aligned() {
        return Err(qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER);
    }
    // SAFETY: non-null and aligned (checked above) and valid for a read of a `T` (this
    // function's contract).
    Ok(unsafe { p.read() })
}

/// Checks a C buffer (non-null, aligned, `len` elements addressable) and returns its byte range.
fn span<T>(p: *const T, len: usize) -> Status<Span> {
    if p.is_null() {
        return Err(qgemm_status::QGEMM_ERROR_NULL_POINTER);
    }
    if !p.is_aligned() {
        return Err(qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER);
    }
    let bytes = len.checked_mul(size_of::<T>()).filter(|b| *b <= isize::MAX as usize);
    let bytes = bytes.ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?;
    let start = p as usize;
    let end = start.checked_add(bytes).ok_or(qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW)?;
    Ok((start, end))
}

/// `len` elements at `p` as a slice, and their byte range; null, misaligned and overflowing
/// arguments are errors.
///
/// # Safety
///
/// `p` is null or valid for reads of `len` elements that nothing writes during the call.
unsafe fn input<'a, T>(p: *const T, len: usize) -> Status<(&'a [T], Span)> {
    let range = span(p, len)?;
    // SAFETY: non-null, aligned, `len * size_of::<T>() <= isize::MAX` and not wrapping around
    // the address space (checked by `span`); valid for `len` reads that nothing writes during
    // the call (this function's contract).
    Ok((unsafe { core::slice::from_raw_parts(p, len) }, range))
}

/// `len` elements at `p` as a mutable slice, after checking that it overlaps none of `inputs`
/// (byte ranges).
///
/// # Safety
///
/// `p` is null or valid for writes of `len` elements that nothing else accesses during the
/// call, except through the buffers `inputs` describes.
unsafe fn output<'a, T>(p: *mut T, len: usize, inputs: &[Span]) -> Status<&'a mut [T]> {
    let (start, end) = span(p, len)?;
    if inputs.iter().any(|&(s, e)| start < e && s < end) {
        return Err(qgemm_status::QGEMM_ERROR_BUFFERS_OVERLAP);
    }
    // SAFETY: non-null, aligned, in range (checked by `span`), disjoint from every input
    // slice of the call (checked above), so this is the only live reference to it; valid for
    // `len` writes (this function's contract).
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// The feature set of C bits (without the streaming vector length: [`for_family`]).
fn features(bits: u32) -> Status<CpuFeatures> {
    crate::cpu::from_bits(bits).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

/// `cpu` for resolving kernels of family `F`: with the streaming vector length (`RDSVL`, where
/// `cpu` claims SME) only if a kernel of `F` has a tile that scales with it.
fn for_family<F: Family>(cpu: CpuFeatures) -> CpuFeatures {
    crate::cpu::with_svl_where(cpu, F::kernels().iter().any(|d| !d.shape().is_fixed()))
}

/// `Packing` of a C packing struct.
///
/// # Safety
///
/// `p` is null or valid for a read.
unsafe fn packing_in(p: *const qgemm_packing) -> Status<Packing> {
    // SAFETY: this function's contract is `read_in`'s.
    Ok(unsafe { read_in(p) }?.into())
}

// ---- element types ------------------------------------------------------------------------

/// The element type of a C output buffer. C has no portable 16-bit float type: f16 and bf16
/// outputs travel as `uint16_t` bit patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CType {
    /// `float`.
    F32,
    /// `uint16_t`, the bits of an f16 or a bf16.
    U16,
}

impl CType {
    /// Size and alignment in bytes.
    const fn bytes(self) -> usize {
        match self {
            CType::F32 => 4,
            CType::U16 => 2,
        }
    }
}

/// The element type of a C function's activations and outputs: `float` (the functions
/// without suffix) or `uint16_t` (the `_u16` ones).
trait CElem: Sized {
    const C: CType;
    /// Evaluated where used: `Self` has the size and alignment of [`Self::C`](CElem::C).
    const SAME_LAYOUT: () = assert!(layout_is::<Self>(Self::C));
}

impl CElem for f32 {
    const C: CType = CType::F32;
}

impl CElem for u16 {
    const C: CType = CType::U16;
}

/// A family's output (and activation) element type and the C type its values travel as.
/// Every bit pattern is a valid value of both.
trait DstElem: Sized {
    const C: CType;
    /// Evaluated where used: `Self` has the size and alignment of [`Self::C`](DstElem::C).
    const SAME_LAYOUT: () = assert!(layout_is::<Self>(Self::C));
}

impl DstElem for f32 {
    const C: CType = CType::F32;
}

impl DstElem for f16 {
    const C: CType = CType::U16;
}

impl DstElem for bf16 {
    const C: CType = CType::U16;
}

/// Whether `T` has the size and alignment of the C type `c`.
const fn layout_is<T>(c: CType) -> bool {
    size_of::<T>() == c.bytes() && align_of::<T>() == c.bytes()
}

// The impls not used yet are checked too.
const _: () = (<f16 as DstElem>::SAME_LAYOUT, <bf16 as DstElem>::SAME_LAYOUT).0;

/// `dst` as a pointer to the family's element `D`, if the C function's element type `T` is
/// the one `D` travels as; else `QGEMM_ERROR_WRONG_DST_TYPE`. A pointer cast only: [`output`]
/// checks the buffer. As `D` and `T` then have the same size and alignment, `len` elements of
/// `T` are `len` elements of `D`.
fn dst_as<D: DstElem, T: CElem>(dst: *mut T) -> Status<*mut D> {
    let ((), ()) = (D::SAME_LAYOUT, T::SAME_LAYOUT);
    if D::C == T::C { Ok(dst.cast()) } else { Err(qgemm_status::QGEMM_ERROR_WRONG_DST_TYPE) }
}

/// What a kernel reads as its LHS ([`Family::Lhs`]): the bytes of a packed LHS, or f32 / f16
/// activation rows.
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value of the type.
unsafe trait LhsBits: Copy + 'static {}

// SAFETY: plain numbers (f16 is a `u16` bit pattern): every bit pattern is a value.
unsafe impl LhsBits for u8 {}
// SAFETY: as above.
unsafe impl LhsBits for f32 {}
// SAFETY: as above.
unsafe impl LhsBits for f16 {}

/// `len` bytes at `p` as the LHS elements `L` they hold (`len / size_of::<L>()` of them), and
/// their byte range; `p` must be aligned for `L`.
///
/// # Safety
///
/// `p` is null or valid for `len` reads that nothing writes during the call.
unsafe fn lhs_in<'a, L: LhsBits>(p: *const c_void, len: usize) -> Status<(&'a [L], Span)> {
    // SAFETY: `p` is valid for `len` bytes (this function's contract), so for the
    // `len / size_of::<L>()` whole elements inside them, every bit pattern of which is an `L`
    // (`LhsBits`); `input` checks the alignment.
    unsafe { input(p.cast::<L>(), len / size_of::<L>()) }
}

// ---- the family table ---------------------------------------------------------------------

/// `qai8dxp_qsi4cxp`: int4 weights with per-channel f32 scales × int8 per-row activations.
pub const QGEMM_FAMILY_QAI8DXP_QSI4CXP: u32 = 0;
/// `qai8dxp_qsi4c32p`: int4 weights with per-block bf16 scales × int8 per-row activations.
pub const QGEMM_FAMILY_QAI8DXP_QSI4C32P: u32 = 1;
/// `qsi8d32p_qsi4c32p`: GGML `Q4_0` weights × int8 per-block activations.
pub const QGEMM_FAMILY_QSI8D32P_QSI4C32P: u32 = 2;
/// `qai8dxp_qsi8cxp`: int8 weights with per-channel f32 scales × int8 per-row activations.
pub const QGEMM_FAMILY_QAI8DXP_QSI8CXP: u32 = 3;
/// `f16_qai8dxp_qsi4cxp`: f16 activations and outputs, int4 weights with per-channel f32 scales.
pub const QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP: u32 = 4;
/// `f16_qai8dxp_qsi8cxp`: f16 activations and outputs, int8 weights with per-channel f32 scales.
pub const QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP: u32 = 5;
/// `bf16_qai8dxp_qsi4cxp`: bf16 activations and outputs, int4 weights with per-channel f32 scales.
pub const QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP: u32 = 6;
/// `bf16_qai8dxp_qsi4c32p`: bf16 activations and outputs, int4 weights with per-block bf16 scales.
pub const QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P: u32 = 7;
/// `qsi8d32p_qai4c32p`: asymmetric int4 weights with an f32 scale and an f32 offset per block
/// (`qai4c32p`, GGML `Q4_1`-like) × int8 per-block activations with f32 scales
/// (`qsi8d32pscalef32`).
pub const QGEMM_FAMILY_QSI8D32P_QAI4C32P: u32 = 8;
/// `f16_qsi8d32p_qai4c32p`: f16 activations and outputs, the weights and arithmetic of
/// `qsi8d32p_qai4c32p`.
pub const QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P: u32 = 9;
/// `qai8dxp_qsu2cxp`: 2-bit weight codes through a 4-entry int32 look-up table (code `u` stands
/// for `lut[u]`, entries in `[-64, 63]`; default `{-2, -1, 0, 1}`) with per-channel f32 scales
/// (`qsu2cxp`) × int8 per-row activations (`qai8dxp`). Its kernels take the table as their
/// parameters ([`qgemm_lut_params`], `qgemm_linear_set_lut`).
pub const QGEMM_FAMILY_QAI8DXP_QSU2CXP: u32 = 10;
/// `f32_f32_f32p`: f32 activations read in place (row stride: [`qgemm_lhs_stride_params`]),
/// f32 weights packed with their f32 bias (`QGEMM_RHS_FORMAT_F32P`), f32 output.
pub const QGEMM_FAMILY_F32_F32_F32P: u32 = 11;
/// `f16_f16_f16p`: f16 activations read in place, f16 weights packed with their f16 bias
/// (`QGEMM_RHS_FORMAT_F16P`), f16 output.
pub const QGEMM_FAMILY_F16_F16_F16P: u32 = 12;
/// `f32_bf16p_bf16p`: activations packed to bf16 (`QGEMM_LHS_FORMAT_BF16P`), weights to bf16
/// with f32 bias (`QGEMM_RHS_FORMAT_BF16P_B32`), f32 output.
pub const QGEMM_FAMILY_F32_BF16P_BF16P: u32 = 13;
/// `f16_bf16p_bf16p`: activations packed to bf16, weights to bf16 with f16 bias
/// (`QGEMM_RHS_FORMAT_BF16P_B16`), f16 output.
pub const QGEMM_FAMILY_F16_BF16P_BF16P: u32 = 14;

/// Every family of layer 1, one row each, in code order:
///
/// `(C code, name, Rust family type, activation and output element)`
///
/// The element type is the core's `Family::Dst`: `f32`, or `half::f16` / `half::bf16` (which
/// the `_u16` functions serve). Invoked with a callback macro (`families!(callback!(args))`),
/// which receives `(args)` and the rows.
macro_rules! families {
    ($then:ident ! ($($args:tt)*)) => {
        $then! { ($($args)*)
            (QGEMM_FAMILY_QAI8DXP_QSI4CXP, "qai8dxp_qsi4cxp", Qai8dxpQsi4cxp, f32)
            (QGEMM_FAMILY_QAI8DXP_QSI4C32P, "qai8dxp_qsi4c32p", Qai8dxpQsi4c32p, f32)
            (QGEMM_FAMILY_QSI8D32P_QSI4C32P, "qsi8d32p_qsi4c32p", Qsi8d32pQsi4c32p, f32)
            (QGEMM_FAMILY_QAI8DXP_QSI8CXP, "qai8dxp_qsi8cxp", Qai8dxpQsi8cxp, f32)
            (QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP, "f16_qai8dxp_qsi4cxp", F16Qai8dxpQsi4cxp, f16)
            (QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP, "f16_qai8dxp_qsi8cxp", F16Qai8dxpQsi8cxp, f16)
            (QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP, "bf16_qai8dxp_qsi4cxp", Bf16Qai8dxpQsi4cxp, bf16)
            (QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P, "bf16_qai8dxp_qsi4c32p", Bf16Qai8dxpQsi4c32p, bf16)
            (QGEMM_FAMILY_QSI8D32P_QAI4C32P, "qsi8d32p_qai4c32p", Qsi8d32pQai4c32p, f32)
            (QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P, "f16_qsi8d32p_qai4c32p", F16Qsi8d32pQai4c32p, f16)
            (QGEMM_FAMILY_QAI8DXP_QSU2CXP, "qai8dxp_qsu2cxp", Qai8dxpQsu2cxp, f32)
            (QGEMM_FAMILY_F32_F32_F32P, "f32_f32_f32p", F32F32F32p, f32)
            (QGEMM_FAMILY_F16_F16_F16P, "f16_f16_f16p", F16F16F16p, f16)
            (QGEMM_FAMILY_F32_BF16P_BF16P, "f32_bf16p_bf16p", F32Bf16pBf16p, f32)
            (QGEMM_FAMILY_F16_BF16P_BF16P, "f16_bf16p_bf16p", F16Bf16pBf16p, f16)
        }
    };
}

/// What layer 1 knows of a family beyond the core's [`Family`]: one impl per table row.
trait CFamily: Family<Dst: DstElem, Lhs: LhsBits, Params: CParams> {
    /// `QGEMM_FAMILY_*`.
    const CODE: u32;
}

/// Whether two strings are equal, in a constant.
const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The [`CFamily`] impls of the rows, and compile-time checks of the table: the codes are
/// `0, 1, 2, ...` in row order, each name is the Rust family's `NAME`, each element type its
/// `Dst`.
macro_rules! family_impls {
    (() $(($code:ident, $name:literal, $fam:ty, $dst:ty))*) => {
        $(
            impl CFamily for $fam {
                const CODE: u32 = $code;
            }
            const _: () = assert!(same_str(<$fam as Family>::NAME, $name), "family table: name");
            const _: fn(<$fam as Family>::Dst) -> $dst = |d| d;
        )*
        const _: () = {
            let codes = [$($code),*];
            let mut i = 0;
            while i < codes.len() {
                assert!(codes[i] == i as u32, "family table: codes must be 0, 1, 2, ... in row order");
                i += 1;
            }
        };
    };
}

families!(family_impls!());

/// The arms of [`match_family!`].
macro_rules! match_family_arms {
    (($family:expr, $F:ident, $body:expr) $(($code:ident, $name:literal, $fam:ty, $dst:ty))*) => {
        match $family {
            $($code => {
                type $F = $fam;
                $body
            })*
            _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
        }
    };
}

/// `$body` (a [`Status`]) with the type alias `$F` naming the family of code `$family`;
/// `QGEMM_ERROR_INVALID_ARGUMENT` for a code no row has.
macro_rules! match_family {
    ($family:expr, $F:ident => $body:expr) => {
        families!(match_family_arms!($family, $F, $body))
    };
}

/// `$body` (a [`Status`]) with `$k` bound to the [`Handle`] a kernel handle names;
/// `QGEMM_ERROR_INVALID_ARGUMENT` for a handle that names no kernel.
macro_rules! with_kernel {
    ($handle:expr, $k:ident => $body:expr) => {{
        let h: qgemm_kernel = $handle;
        match_family!(h.family, Fam => Handle::<Fam>::of(&h).and_then(|$k| $body))
    }};
}

// ---- tiers, formats, packings -------------------------------------------------------------

/// Tier of a kernel: portable Rust.
pub const QGEMM_TIER_SCALAR: u32 = 0;
/// Tier of a kernel: NEON intrinsics (any ARMv8-A).
pub const QGEMM_TIER_NEON: u32 = 1;
/// Tier of a kernel: `SDOT` assembly (FEAT_DotProd).
pub const QGEMM_TIER_DOTPROD: u32 = 2;
/// Tier of a kernel: `SMMLA` assembly (FEAT_I8MM).
pub const QGEMM_TIER_I8MM: u32 = 3;
/// Tier of a kernel: half-precision arithmetic (FEAT_FP16; the float families' f16 `FMLA`).
pub const QGEMM_TIER_FP16: u32 = 4;
/// Tier of a kernel: BFloat16 arithmetic (FEAT_BF16; the float families' `BFMMLA`, `BFDOT`).
pub const QGEMM_TIER_BF16: u32 = 5;
/// Tier of a kernel: one this version of the header does not name (the Rust `Tier` is
/// non-exhaustive; a newer core's tier reports as this until the header names it).
pub const QGEMM_TIER_UNKNOWN: u32 = 255;

/// LHS format `qai8dxp`: int8 per row with an f32 scale and an int32 offset.
pub const QGEMM_LHS_FORMAT_QAI8DXP: u32 = 0;
/// LHS format `qsi8d32p`: int8 per block of 32 with an f16 scale.
pub const QGEMM_LHS_FORMAT_QSI8D32P: u32 = 1;
/// LHS format `qsi8d32pscalef32`: int8 per block with an f32 scale and block sums.
pub const QGEMM_LHS_FORMAT_QSI8D32PSCALEF32: u32 = 2;
/// LHS format `bf16p`: bf16 in tiles of `mr` rows and blocks of 4 depths (`mr = 1`: the last
/// `k % 4` values of a row truncated).
pub const QGEMM_LHS_FORMAT_BF16P: u32 = 3;
/// LHS "format" of the kernels that read f32 activation rows in place (not packed).
pub const QGEMM_LHS_FORMAT_F32: u32 = 4;
/// LHS "format" of the kernels that read f16 activation rows in place (not packed).
pub const QGEMM_LHS_FORMAT_F16: u32 = 5;
/// The format code of a format this version of the header does not name.
pub const QGEMM_FORMAT_UNKNOWN: u32 = 255;

/// RHS format `qsi4cxp`: int4, one f32 scale per channel.
pub const QGEMM_RHS_FORMAT_QSI4CXP: u32 = 0;
/// RHS format `qsi4c32p`: int4, a bf16 scale per block.
pub const QGEMM_RHS_FORMAT_QSI4C32P: u32 = 1;
/// RHS format `qsi4c32pscalef16`: int4 GGML `Q4_0` blocks with f16 scales.
pub const QGEMM_RHS_FORMAT_QSI4C32PSCALEF16: u32 = 2;
/// RHS format `qsi8cxp`: int8, one f32 scale per channel.
pub const QGEMM_RHS_FORMAT_QSI8CXP: u32 = 3;
/// RHS format `qai4c32p`: asymmetric int4, an f32 scale and offset per block.
pub const QGEMM_RHS_FORMAT_QAI4C32P: u32 = 4;
/// RHS format `qsu2cxp`: 2-bit codes through a look-up table, one f32 scale per channel.
pub const QGEMM_RHS_FORMAT_QSU2CXP: u32 = 5;
/// RHS format `f32p`: f32 values with f32 biases (tiles of `nr` channels).
pub const QGEMM_RHS_FORMAT_F32P: u32 = 6;
/// RHS format `f16p`: f16 values with f16 biases.
pub const QGEMM_RHS_FORMAT_F16P: u32 = 7;
/// RHS format `bf16p_b32`: bf16 values in blocks of 4 depths with f32 biases.
pub const QGEMM_RHS_FORMAT_BF16P_B32: u32 = 8;
/// RHS format `bf16p_b16`: bf16 values in blocks of 4 depths with f16 biases.
pub const QGEMM_RHS_FORMAT_BF16P_B16: u32 = 9;

/// The LHS formats, indexed by their `QGEMM_LHS_FORMAT_*` code.
const LHS_FORMATS: [LhsFormat; 6] = [
    LhsFormat::Qai8dxp,
    LhsFormat::Qsi8d32p,
    LhsFormat::Qsi8d32pscalef32,
    LhsFormat::Bf16p,
    LhsFormat::F32,
    LhsFormat::F16,
];

/// The RHS formats, indexed by their `QGEMM_RHS_FORMAT_*` code.
const RHS_FORMATS: [RhsFormat; 10] = [
    RhsFormat::Qsi4cxp,
    RhsFormat::Qsi4c32p,
    RhsFormat::Qsi4c32pscalef16,
    RhsFormat::Qsi8cxp,
    RhsFormat::Qai4c32p,
    RhsFormat::Qsu2cxp,
    RhsFormat::F32p,
    RhsFormat::F16p,
    RhsFormat::Bf16pB32,
    RhsFormat::Bf16pB16,
];

// The codes are the table indices (checked by name).
const _: () = {
    assert!(same_str(LHS_FORMATS[QGEMM_LHS_FORMAT_QAI8DXP as usize].name(), "qai8dxp"));
    assert!(same_str(LHS_FORMATS[QGEMM_LHS_FORMAT_QSI8D32P as usize].name(), "qsi8d32p"));
    assert!(same_str(LHS_FORMATS[QGEMM_LHS_FORMAT_QSI8D32PSCALEF32 as usize].name(), "qsi8d32pscalef32"));
    assert!(same_str(LHS_FORMATS[QGEMM_LHS_FORMAT_BF16P as usize].name(), "bf16p"));
    assert!(same_str(LHS_FORMATS[QGEMM_LHS_FORMAT_F32 as usize].name(), "f32"));
    assert!(same_str(LHS_FORMATS[QGEMM_LHS_FORMAT_F16 as usize].name(), "f16"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_QSI4CXP as usize].name(), "qsi4cxp"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_QSI4C32P as usize].name(), "qsi4c32p"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_QSI4C32PSCALEF16 as usize].name(), "qsi4c32pscalef16"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_QSI8CXP as usize].name(), "qsi8cxp"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_QAI4C32P as usize].name(), "qai4c32p"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_QSU2CXP as usize].name(), "qsu2cxp"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_F32P as usize].name(), "f32p"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_F16P as usize].name(), "f16p"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_BF16P_B32 as usize].name(), "bf16p_b32"));
    assert!(same_str(RHS_FORMATS[QGEMM_RHS_FORMAT_BF16P_B16 as usize].name(), "bf16p_b16"));
};

/// The code of an LHS format.
fn lhs_code(f: LhsFormat) -> u32 {
    LHS_FORMATS.iter().position(|g| *g == f).map_or(QGEMM_FORMAT_UNKNOWN, |i| i as u32)
}

/// The code of an RHS format.
fn rhs_code(f: RhsFormat) -> u32 {
    RHS_FORMATS.iter().position(|g| *g == f).map_or(QGEMM_FORMAT_UNKNOWN, |i| i as u32)
}

/// Packing parameters of a packer call (see the Rust `Packing`): rows per LHS tile, channels
/// per RHS tile, depth per inner step and split ratio. The packer's name gives the format.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_packing {
    /// LHS rows per packed tile.
    pub mr: usize,
    /// Output channels per packed RHS tile.
    pub nr: usize,
    /// Depth per inner step (int4: nibbles).
    pub kr: usize,
    /// Split ratio (2 for the int4 formats, 1 for int8).
    pub sr: usize,
}

impl From<qgemm_packing> for Packing {
    fn from(p: qgemm_packing) -> Packing {
        Packing { mr: p.mr, nr: p.nr, kr: p.kr, sr: p.sr }
    }
}

impl From<Packing> for qgemm_packing {
    fn from(p: Packing) -> qgemm_packing {
        qgemm_packing { mr: p.mr, nr: p.nr, kr: p.kr, sr: p.sr }
    }
}

/// A packed weight layout (the Rust `RhsPacking`): its format and parameters. Weights packed
/// in one are read by exactly the kernels whose `qgemm_kernel_info::rhs` equals it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_rhs_packing {
    /// `QGEMM_RHS_FORMAT_*`.
    pub format: u32,
    /// Output channels per tile.
    pub nr: usize,
    /// Depth per inner step.
    pub kr: usize,
    /// Split ratio.
    pub sr: usize,
}

/// An activation layout (the Rust `LhsPacking`): its format and parameters (`QGEMM_LHS_FORMAT_F32`
/// / `_F16` with `mr = kr = sr = 1` for the rows read in place).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_lhs_packing {
    /// `QGEMM_LHS_FORMAT_*`.
    pub format: u32,
    /// Rows per tile.
    pub mr: usize,
    /// Depth per inner step.
    pub kr: usize,
    /// Split ratio.
    pub sr: usize,
}

impl From<RhsPacking> for qgemm_rhs_packing {
    fn from(p: RhsPacking) -> qgemm_rhs_packing {
        qgemm_rhs_packing { format: rhs_code(p.format), nr: p.nr, kr: p.kr, sr: p.sr }
    }
}

impl From<LhsPacking> for qgemm_lhs_packing {
    fn from(p: LhsPacking) -> qgemm_lhs_packing {
        qgemm_lhs_packing { format: lhs_code(p.format), mr: p.mr, kr: p.kr, sr: p.sr }
    }
}

impl qgemm_rhs_packing {
    /// The Rust packing; an unknown format code is `QGEMM_ERROR_INVALID_ARGUMENT`.
    fn to_rust(self) -> Status<RhsPacking> {
        let format = *RHS_FORMATS.get(self.format as usize).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
        Ok(RhsPacking { format, nr: self.nr, kr: self.kr, sr: self.sr })
    }
}

impl qgemm_lhs_packing {
    /// The Rust packing; an unknown format code is `QGEMM_ERROR_INVALID_ARGUMENT`.
    fn to_rust(self) -> Status<LhsPacking> {
        let format = *LHS_FORMATS.get(self.format as usize).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
        Ok(LhsPacking { format, mr: self.mr, kr: self.kr, sr: self.sr })
    }
}

// ---- kernels ------------------------------------------------------------------------------

/// A kernel: its family (`QGEMM_FAMILY_*`), its index in the family's catalogue
/// (`qgemm_kernel_at`) and the streaming vector length it was resolved for. Plain data, checked
/// on every use.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_kernel {
    /// `QGEMM_FAMILY_*`.
    pub family: u32,
    /// Index in the family's catalogue.
    pub index: u32,
    /// For a kernel whose tile scales with SME's streaming vector length: that length in bytes
    /// (`qgemm_select`, `qgemm_kernel_resolve`), 0 while unresolved (`qgemm_kernel_at`). Always
    /// 0 for a kernel of fixed shape.
    pub svl_bytes: u32,
}

/// Bytes of `qgemm_kernel_info::name`, NUL included.
pub const QGEMM_KERNEL_NAME_MAX: usize = 96;

/// What a kernel is. For a kernel whose tile scales with the streaming vector length and a
/// handle not resolved for one, the steps and the tile sizes (`lhs.mr`, `rhs.nr`) are 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_kernel_info {
    /// NUL-terminated name, KleidiAI style (`matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm`).
    pub name: [c_char; QGEMM_KERNEL_NAME_MAX],
    /// `QGEMM_FAMILY_*`.
    pub family: u32,
    /// `QGEMM_TIER_*`.
    pub tier: u32,
    /// `QGEMM_FEATURE_*` bits of every CPU feature the kernel needs.
    pub requires: u32,
    /// Output rows per iteration: sub-rectangles start at multiples of it.
    pub m_step: usize,
    /// Output columns per iteration: sub-rectangles start at multiples of it.
    pub n_step: usize,
    /// The parameters to give the packers of both operands (`qgemm_lhs_<format>_*`,
    /// `qgemm_rhs_<format>_*`): `lhs.mr`, `rhs.nr`, `rhs.kr`, `rhs.sr`.
    pub packing: qgemm_packing,
    /// The activation layout it reads (`lhs` of `qgemm_kernel_run`).
    pub lhs: qgemm_lhs_packing,
    /// The weight layout it reads.
    pub rhs: qgemm_rhs_packing,
}

/// A checked kernel handle: the family's descriptor and the vector length it was resolved for.
struct Handle<F: Family + 'static> {
    desc: &'static Descriptor<F>,
    svl: usize,
}

impl<F: CFamily> Handle<F> {
    /// The descriptor `h` names (its family must be `F`), with a vector length that is 0 or a
    /// legal one (a power of two in 16..=256 bytes) for a kernel that scales with it, and 0 for
    /// one of fixed shape.
    fn of(h: &qgemm_kernel) -> Status<Handle<F>> {
        let desc = *F::kernels().get(h.index as usize).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
        let svl = h.svl_bytes as usize;
        let legal = svl == 0
            || (!desc.shape().is_fixed() && svl.is_power_of_two() && (16..=qgemm::cpu::MAX_SVL_BYTES).contains(&svl));
        if h.family != F::CODE || !legal {
            return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
        }
        Ok(Handle { desc, svl })
    }

    /// The kernel's geometry at the handle's vector length: a `Kernel` resolved for a feature
    /// set that claims the kernel's features, **for its sizes, offsets and steps only**: it is
    /// never run. `QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN` for a kernel that scales with the vector
    /// length and a handle not resolved for one.
    fn geometry(&self) -> Status<Kernel<F>> {
        let mut cpu = CpuFeatures::NONE;
        for f in self.desc.requires().iter() {
            // SAFETY: `with`'s contract concerns running kernels: this set only resolves the
            // descriptor's shape (steps, packing), and the `Kernel` made from it is used for its
            // size and offset arithmetic and dropped, never run (`geometry`'s contract, kept by
            // every caller in this module), so no instruction of a claimed feature executes.
            cpu = unsafe { cpu.with(f) };
        }
        if self.svl != 0 {
            // SAFETY: as above: the length only sizes the shape; nothing runs with this set.
            cpu = unsafe { cpu.with(qgemm::Feature::Sme).with_svl(self.svl) }.unwrap_or(cpu);
        }
        Ok(self.desc.resolve(&cpu)?)
    }

    /// `cpu` for this family ([`for_family`]).
    fn cpu(&self, cpu: CpuFeatures) -> CpuFeatures {
        for_family::<F>(cpu)
    }

    /// The kernel resolved for the caller's `cpu`, to run: its geometry must be the handle's
    /// (a kernel resolved for another vector length than the buffers were sized for:
    /// `QGEMM_ERROR_PACKING_MISMATCH`).
    fn to_run(&self, cpu: &CpuFeatures) -> Status<Kernel<F>> {
        let k = self.desc.resolve(cpu)?;
        if !self.desc.shape().is_fixed() {
            let g = self.geometry()?;
            if (g.m_step(), g.n_step(), g.packing()) != (k.m_step(), k.n_step(), k.packing()) {
                let e = qgemm::Error::PackingMismatch { weights: g.rhs_packing(), kernel: k.rhs_packing() };
                return Err(e.into());
            }
        }
        Ok(k)
    }
}

fn tier_code(t: Tier) -> u32 {
    match t {
        Tier::Scalar => QGEMM_TIER_SCALAR,
        Tier::Neon => QGEMM_TIER_NEON,
        Tier::Dotprod => QGEMM_TIER_DOTPROD,
        Tier::I8mm => QGEMM_TIER_I8MM,
        Tier::Fp16 => QGEMM_TIER_FP16,
        Tier::Bf16 => QGEMM_TIER_BF16,
        // `Tier` is non-exhaustive (a match in another crate needs this arm): every tier the
        // core has is named above; one added later reports as unknown, not as another tier.
        _ => QGEMM_TIER_UNKNOWN,
    }
}

fn info_of<F: CFamily>(h: &Handle<F>) -> Status<qgemm_kernel_info> {
    let d = h.desc;
    let mut name = [0 as c_char; QGEMM_KERNEL_NAME_MAX];
    for (o, s) in name.iter_mut().zip(d.name().bytes().take(QGEMM_KERNEL_NAME_MAX - 1)) {
        *o = s as c_char;
    }
    let s = d.shape();
    let (m_step, n_step, packing) = match h.geometry() {
        Ok(k) => (k.m_step(), k.n_step(), k.packing()),
        Err(qgemm_status::QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN) => (0, 0, Packing { mr: 0, nr: 0, kr: s.kr, sr: s.sr }),
        Err(e) => return Err(e),
    };
    Ok(qgemm_kernel_info {
        name,
        family: F::CODE,
        tier: tier_code(d.tier()),
        requires: crate::cpu::set_to_bits(d.requires()),
        m_step,
        n_step,
        packing: packing.into(),
        lhs: packing.lhs(s.lhs).into(),
        rhs: packing.rhs(s.rhs).into(),
    })
}

/// Writes `value` (computed first: its error wins) through `out`: the shared tail of the
/// queries.
///
/// # Safety
///
/// `out` is null or valid for a write of a `T`.
unsafe fn answer<T>(value: Status<T>, out: *mut T) -> qgemm_status {
    status(|| {
        let v = value?;
        // SAFETY: `out` is null or valid for a write (this function's contract).
        unsafe { put(out, v) }
    })
}

/// Writes the number of kernels in `family`'s catalogue to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_count(family: u32, out: *mut usize) -> qgemm_status {
    let count = match_family!(family, F => Ok(F::kernels().len()));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(count, out) }
}

/// Writes the handle of kernel `index` (`< qgemm_kernel_count`) of `family` to `*out`
/// (`svl_bytes = 0`: resolve it with `qgemm_kernel_resolve` for a kernel whose tile scales
/// with the vector length).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_at(family: u32, index: usize, out: *mut qgemm_kernel) -> qgemm_status {
    let kernel = match_family!(family, F => match u32::try_from(index) {
        Ok(i) if index < F::kernels().len() => Ok(qgemm_kernel { family, index: i, svl_bytes: 0 }),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(kernel, out) }
}

/// Writes `kernel` resolved for a CPU with `features` to `*out`: the same kernel with the
/// streaming vector length of the running CPU (`QGEMM_FEATURE_SME` set: read with `RDSVL`)
/// where its tile scales with it. `QGEMM_ERROR_UNSUPPORTED_CPU` when `features` lack one the
/// kernel needs, `QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN` when its tile needs a vector length the
/// features do not give.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_resolve(
    kernel: qgemm_kernel,
    features: u32,
    out: *mut qgemm_kernel,
) -> qgemm_status {
    let resolved = with_kernel!(kernel, h => {
        let cpu = h.cpu(self::features(features)?);
        let k = h.desc.resolve(&cpu)?;
        resolved_handle(&k, &cpu)
    });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(resolved, out) }
}

/// The handle of `k`, resolved for `cpu`.
fn resolved_handle<F: CFamily>(k: &Kernel<F>, cpu: &CpuFeatures) -> Status<qgemm_kernel> {
    let index = F::kernels().iter().position(|d| core::ptr::eq(*d, k.descriptor()));
    let index = index.ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
    let svl = if k.descriptor().shape().is_fixed() { 0 } else { cpu.svl_bytes().unwrap_or(0) };
    Ok(qgemm_kernel { family: F::CODE, index: index as u32, svl_bytes: svl as u32 })
}

/// Writes what `kernel` is (name, family, tier, required features, steps, layouts) to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_get_info(kernel: qgemm_kernel, out: *mut qgemm_kernel_info) -> qgemm_status {
    let info = with_kernel!(kernel, h => info_of(&h));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(info, out) }
}

/// Writes whether `kernel` may run on a CPU with `features` (every feature it needs, and a
/// known vector length where its tile scales with one) to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_is_available(
    kernel: qgemm_kernel,
    features: u32,
    out: *mut bool,
) -> qgemm_status {
    let available = with_kernel!(kernel, h => Ok(h.desc.is_available(&h.cpu(self::features(features)?))));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(available, out) }
}

/// Writes the best kernel of `family` for `m` rows on a CPU with `features` to `*out`,
/// resolved for it (the family's preferred packings: pack both operands as its
/// `qgemm_kernel_info` says). The selection policy of every layer (the Rust `select_from`): a
/// GEMV kernel for `m <= 1`, a GEMM kernel otherwise, then the highest tier, then catalogue
/// order. Every family has a scalar kernel, so there always is one.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_select(family: u32, features: u32, m: usize, out: *mut qgemm_kernel) -> qgemm_status {
    let kernel = self::features(features).and_then(|cpu| {
        match_family!(family, F => {
            let cpu = for_family::<F>(cpu);
            let k = qgemm::matmul::select_for::<F>(&cpu, m, &F::PREFERRED_RHS).ok_or(qgemm_status::QGEMM_ERROR_UNSUPPORTED_CPU)?;
            resolved_handle(&k, &cpu)
        })
    });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(kernel, out) }
}

/// As `qgemm_select`, among the kernels that read weights packed as `*rhs` (format and
/// parameters) and activations packed as `*lhs` (NULL: the family's preferred activation
/// layout, where it has one, else any). `QGEMM_ERROR_UNSUPPORTED` if no kernel of the family
/// runs on `features` with those layouts.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_select_for(
    family: u32,
    features: u32,
    m: usize,
    rhs: *const qgemm_rhs_packing,
    lhs: *const qgemm_lhs_packing,
    out: *mut qgemm_kernel,
) -> qgemm_status {
    let select = || {
        let cpu = self::features(features)?;
        // SAFETY: `rhs` is null or valid for a read (this function's contract).
        let r = unsafe { read_in(rhs) }?.to_rust()?;
        // SAFETY: `lhs` is null or valid for a read (this function's contract).
        let l = if lhs.is_null() { None } else { Some(unsafe { read_in(lhs) }?.to_rust()?) };
        let none = qgemm_status::QGEMM_ERROR_UNSUPPORTED;
        match_family!(family, F => {
            let cpu = for_family::<F>(cpu);
            let l = l.or(F::PREFERRED_LHS);
            let k = qgemm::matmul::select_from(F::kernels(), &cpu, m, Some(&r), l.as_ref()).ok_or(none)?;
            resolved_handle(&k, &cpu)
        })
    };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(select(), out) }
}

/// Writes to `*out`: bytes of the packed LHS for `m` rows of depth `k` (`bl`: block length of
/// the per-block families, 0 otherwise); 0 for a kernel that reads the rows in place. A `k` or
/// `bl` that `qgemm_kernel_run` rejects gets the same status here and in the other size and
/// offset queries of a kernel.
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_lhs_packed_size(
    kernel: qgemm_kernel,
    m: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = with_kernel!(kernel, h => Ok(h.geometry()?.lhs_packed_size(m, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// Writes to `*out`: bytes of the packed RHS for `n` channels of depth `k` (`bl` as for
/// `qgemm_kernel_lhs_packed_size`).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_rhs_packed_size(
    kernel: qgemm_kernel,
    n: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = with_kernel!(kernel, h => Ok(h.geometry()?.rhs_packed_size(n, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// Writes to `*out`: byte offset in the packed LHS of the tile holding row `m_idx` (a multiple
/// of `mr`; 0 for a kernel that reads the rows in place).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_lhs_packed_offset(
    kernel: qgemm_kernel,
    m_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    let offset = with_kernel!(kernel, h => Ok(h.geometry()?.lhs_packed_offset(m_idx, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(offset, out) }
}

/// Writes to `*out`: byte offset in the packed RHS of the tile holding channel `n_idx` (a
/// multiple of `nr`).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_rhs_packed_offset(
    kernel: qgemm_kernel,
    n_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    let offset = with_kernel!(kernel, h => Ok(h.geometry()?.rhs_packed_offset(n_idx, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(offset, out) }
}

/// Writes to `*out`: element offset in `dst` of output `(m_idx, n_idx)` with rows
/// `dst_stride_row` elements apart (starts must be multiples of the kernel's steps).
///
/// # Safety
///
/// `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_dst_offset(
    kernel: qgemm_kernel,
    m_idx: usize,
    n_idx: usize,
    dst_stride_row: usize,
    out: *mut usize,
) -> qgemm_status {
    let offset = with_kernel!(kernel, h => Ok(h.geometry()?.dst_offset(m_idx, n_idx, dst_stride_row)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(offset, out) }
}

/// Writes the number of output elements (of the kernel's output type) of an `m x n` dense
/// output to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_dst_size(
    kernel: qgemm_kernel,
    m: usize,
    n: usize,
    out: *mut usize,
) -> qgemm_status {
    let size = with_kernel!(kernel, h => Ok(h.geometry()?.dst_size(m, n)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

// ---- run ----------------------------------------------------------------------------------

/// The parameters of a `QGEMM_FAMILY_QAI8DXP_QSU2CXP` kernel (`qgemm_matmul_args::params`): the
/// look-up table its weights were packed with (code `u` stands for `lut[u]`, every entry in
/// `[-64, 63]`, else `QGEMM_ERROR_LUT_OUT_OF_RANGE`). `params = NULL`: the default
/// `{-2, -1, 0, 1}`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_lut_params {
    /// The table.
    pub lut: [i32; 4],
}

/// The parameters of a kernel that reads f32 / f16 activation rows in place
/// (`QGEMM_FAMILY_F32_F32_F32P`, `QGEMM_FAMILY_F16_F16_F16P`; `qgemm_matmul_args::params`):
/// the distance between rows in elements (`>= k`; 0: dense, `k`). `params = NULL`: dense.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_lhs_stride_params {
    /// Elements from one activation row to the next (0: `k`).
    pub lhs_stride_row: usize,
}

/// The rectangle a run computes (see the Rust `MatmulArgs`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_matmul_args {
    /// Rows of the rectangle.
    pub m: usize,
    /// Columns (output channels) of the rectangle.
    pub n: usize,
    /// Depth, as given to the packers.
    pub k: usize,
    /// Block length of the per-block families (a multiple of 32 dividing `k`); 0 otherwise.
    pub bl: usize,
    /// First row: a multiple of the kernel's `m_step`.
    pub m_idx: usize,
    /// First column: a multiple of the kernel's `n_step`.
    pub n_idx: usize,
    /// Distance between output rows, in output elements (`>= n`).
    pub dst_stride_row: usize,
    /// Clamp lower bound (`-FLT_MAX` or `-INFINITY` for none).
    pub clamp_min: f32,
    /// Clamp upper bound.
    pub clamp_max: f32,
    /// The family's parameters, or NULL for their defaults: a `const qgemm_lut_params *` for
    /// `QGEMM_FAMILY_QAI8DXP_QSU2CXP`, a `const qgemm_lhs_stride_params *` for the families
    /// that read the activation rows in place; must be NULL for the others
    /// (`QGEMM_ERROR_INVALID_ARGUMENT`).
    pub params: *const c_void,
}

/// The family parameters a run's `params` pointer gives (see [`qgemm_matmul_args::params`]),
/// and the byte range they occupy.
///
/// # Safety
///
/// `p` is null or valid for a read of the family's parameter struct.
unsafe fn params_in<P: CParams>(p: *const c_void) -> Status<(P, Span)> {
    let bad = qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT;
    if p.is_null() {
        return Ok((P::DEFAULT, NO_SPAN));
    }
    let (lut, stride, span) = match P::KIND {
        CKind::None => return Err(bad),
        CKind::Lut => {
            // SAFETY: non-null, so valid for a read of a `qgemm_lut_params` (this function's
            // contract); `input` checks the alignment.
            let (v, span) = unsafe { input(p.cast::<qgemm_lut_params>(), 1) }?;
            (Some(v[0].lut), 0, span)
        }
        CKind::LhsStride => {
            // SAFETY: as above, for a `qgemm_lhs_stride_params`.
            let (v, span) = unsafe { input(p.cast::<qgemm_lhs_stride_params>(), 1) }?;
            (None, v[0].lhs_stride_row, span)
        }
    };
    Ok((P::from_c(lut, stride).ok_or(bad)?, span))
}

/// The operands of a run: the LHS (bytes: packed, or the activation rows), the packed RHS
/// (bytes) and the C output buffer of `T`.
struct RunBuffers<T> {
    lhs: (*const c_void, usize),
    rhs: (*const u8, usize),
    dst: (*mut T, usize),
}

/// The body of `qgemm_kernel_run` and `qgemm_kernel_run_u16`: runs the kernel `h` names,
/// resolved for `features`, if its output element type travels as `T`.
///
/// # Safety
///
/// Each pointer of `bufs` is null or valid for the reads (`lhs`, `rhs`) or writes (`dst`) of
/// its length (bytes for `lhs`); `args` is null or valid for a read, and its `params` as
/// [`params_in`] says.
unsafe fn run<F: CFamily, T: CElem>(
    h: &Handle<F>,
    features: u32,
    bufs: RunBuffers<T>,
    args: *const qgemm_matmul_args,
) -> Status {
    let dst = dst_as::<F::Dst, T>(bufs.dst.0)?;
    let cpu = for_family::<F>(self::features(features)?);
    let kernel = h.to_run(&cpu)?;
    // SAFETY: `args` is null or valid for a read (this function's contract).
    let a = unsafe { read_in(args) }?;
    let clamp = Clamp::new(a.clamp_min, a.clamp_max)?;
    // SAFETY: `a.params` as this function's contract says.
    let (params, p_span) = unsafe { params_in::<F::Params>(a.params) }?;
    let args = MatmulArgs::new(a.m, a.n, a.k)
        .with_block_len(a.bl)
        .with_rect(a.m_idx, a.n_idx, a.m, a.n)
        .with_dst_stride(a.dst_stride_row)
        .with_clamp(clamp)
        .with_params(params);
    // SAFETY: `lhs` is null or valid for its length in bytes (this function's contract).
    let (lhs, lhs_span) = unsafe { lhs_in::<F::Lhs>(bufs.lhs.0, bufs.lhs.1) }?;
    // SAFETY: `rhs` is null or valid for its length in reads (this function's contract).
    let (rhs, rhs_span) = unsafe { input(bufs.rhs.0, bufs.rhs.1) }?;
    // SAFETY: `bufs.dst` is null or valid for writes of its length in `T` elements (this
    // function's contract); `dst_as` gave a pointer to `F::Dst` only where it has the size and
    // alignment of `T`, so the same memory is that many `F::Dst` elements, and every bit
    // pattern the kernel stores is a valid `T` for the caller.
    let dst = unsafe { output(dst, bufs.dst.1, &[lhs_span, rhs_span, p_span]) }?;
    kernel.run(lhs, rhs, dst, &args)?;
    Ok(())
}

/// Computes the rectangle `*args` describes with `kernel` (resolved for a CPU with
/// `features`), for a kernel whose output is f32:
///
/// * `lhs`, `lhs_size` bytes: the whole packed LHS (row 0 onward) in the kernel's
///   `qgemm_kernel_info::lhs` layout; for a kernel that reads the rows in place
///   (`QGEMM_LHS_FORMAT_F32` / `_F16`), the activations from row 0, row `i` at element
///   `i * stride` (`args->params`: `qgemm_lhs_stride_params`, default `k`), aligned to their
///   element.
/// * `rhs_packed`, `rhs_packed_len` bytes: the whole packed RHS (channel 0 onward).
/// * `dst`, `dst_len` floats: starts at output element `(m_idx, n_idx)`
///   (`qgemm_kernel_dst_offset`) and holds `(m - 1) * dst_stride_row + n` elements. Exactly the
///   `m x n` rectangle is written.
///
/// A kernel with 16-bit output: `QGEMM_ERROR_WRONG_DST_TYPE` (use `qgemm_kernel_run_u16`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs; `args->params` as its documentation says), as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_kernel_run(
    kernel: qgemm_kernel,
    features: u32,
    lhs: *const c_void,
    lhs_size: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut f32,
    dst_len: usize,
    args: *const qgemm_matmul_args,
) -> qgemm_status {
    let bufs = RunBuffers { lhs: (lhs, lhs_size), rhs: (rhs_packed, rhs_packed_len), dst: (dst, dst_len) };
    // SAFETY: the buffers and `args` as this function's contract says, which is `run`'s.
    status(|| with_kernel!(kernel, h => unsafe { run(&h, features, bufs, args) }))
}

/// As `qgemm_kernel_run`, for a kernel whose output is f16 or bf16: `dst`, `dst_len`
/// `uint16_t` elements receive the values' bit patterns (and an f16 LHS read in place holds
/// `uint16_t` bit patterns). A kernel with f32 output: `QGEMM_ERROR_WRONG_DST_TYPE` (use
/// `qgemm_kernel_run`). The 16-bit families: `QGEMM_FAMILY_F16_*` (f16) and
/// `QGEMM_FAMILY_BF16_*` (bf16); `args->clamp_min`/`clamp_max` stay f32 (the clamp is applied
/// before the conversion, or, by the f16 float kernels, in f16).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs; `args->params` as its documentation says), as
/// the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_kernel_run_u16(
    kernel: qgemm_kernel,
    features: u32,
    lhs: *const c_void,
    lhs_size: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut u16,
    dst_len: usize,
    args: *const qgemm_matmul_args,
) -> qgemm_status {
    let bufs = RunBuffers { lhs: (lhs, lhs_size), rhs: (rhs_packed, rhs_packed_len), dst: (dst, dst_len) };
    // SAFETY: the buffers and `args` as this function's contract says, which is `run`'s.
    status(|| with_kernel!(kernel, h => unsafe { run(&h, features, bufs, args) }))
}

/// A caller's 2-bit look-up table: null is `None` (the default table), else the 4 entries
/// (checked by the kernels and packers that use them) and their byte range.
///
/// # Safety
///
/// `lut` is null or valid for 4 reads of `int32_t`.
unsafe fn lut_in(lut: *const i32) -> Status<(Option<[i32; 4]>, Span)> {
    if lut.is_null() {
        return Ok((None, NO_SPAN));
    }
    // SAFETY: non-null, so valid for 4 reads (this function's contract); `input` checks the
    // alignment.
    let (v, span) = unsafe { input(lut, 4) }?;
    Ok((Some([v[0], v[1], v[2], v[3]]), span))
}

// ---- LHS packers --------------------------------------------------------------------------

/// Writes `query(packing)` through `out`: the shared body of the format size and offset
/// queries.
///
/// # Safety
///
/// `packing` is null or valid for a read; `out` is null or valid for a write.
unsafe fn packing_query(
    packing: *const qgemm_packing,
    out: *mut usize,
    query: impl FnOnce(&Packing) -> qgemm::Result<usize>,
) -> qgemm_status {
    // SAFETY: `packing` is null or valid for a read (this function's contract).
    let value = unsafe { packing_in(packing) }.and_then(|p| Ok(query(&p)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(value, out) }
}

/// Writes the bytes of a `qai8dxp` packed LHS of `m` rows, depth `k`, to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_qai8dxp_packed_size(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qai8dxp::packed_size(m, k, p)) }
}

/// Writes the byte offset of the `qai8dxp` tile holding row `m_idx` (a multiple of `mr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_qai8dxp_packed_offset(
    packing: *const qgemm_packing,
    m_idx: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qai8dxp::packed_offset(m_idx, k, p)) }
}

/// Quantizes and packs `m` rows of f32 activations (`qai8dxp`, per-row int8).
///
/// * `lhs`, `lhs_len` floats: row `i` of the call (matrix row `m_idx_start + i`) starts at
///   `lhs[i * lhs_stride]` (`lhs_stride` in elements, `>= k`).
/// * `lhs_packed`, `lhs_packed_len` bytes: starts at the tile holding row `m_idx_start`
///   (`qgemm_lhs_qai8dxp_packed_offset` of `m_idx_start` rounded down to `mr`).
///
/// NaN or infinite activations: `QGEMM_ERROR_NON_FINITE`, nothing written.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_lhs_qai8dxp_quantize_pack(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: *const f32,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `lhs` is null or valid for `lhs_len` reads (this function's contract).
        let (src, src_span) = unsafe { input(lhs, lhs_len) }?;
        // SAFETY: `lhs_packed` is null or valid for `lhs_packed_len` writes (this function's
        // contract); `output` checks that it does not overlap `lhs`.
        let out = unsafe { output(lhs_packed, lhs_packed_len, &[src_span]) }?;
        Ok(qai8dxp::quantize_pack(&p, m, k, m_idx_start, src, lhs_stride, out)?)
    })
}

/// The core's f16 or bf16 `qai8dxp` packer (`quantize_pack_f16`, `quantize_pack_bf16`).
type HalfPacker<T> = fn(&Packing, usize, usize, usize, &[T], usize, &mut [u8]) -> qgemm::Result<()>;

/// The body of `qgemm_lhs_qai8dxp_quantize_pack_f16` and `_bf16`: `lhs` holds `lhs_len`
/// `uint16_t` bit patterns of `T`, read as `T`, quantized and packed with `packer`.
///
/// (The two C functions are written out, not generated by a macro: cbindgen declares only
/// functions it sees in the source.)
///
/// # Safety
///
/// As the two C functions: every pointer argument is null or valid for the reads or writes
/// of the length given with it.
#[allow(clippy::too_many_arguments)]
unsafe fn quantize_pack_half<T: DstElem>(
    packer: HalfPacker<T>,
    packing: *const qgemm_packing,
    (m, k, m_idx_start): (usize, usize, usize),
    lhs: *const u16,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `lhs` is null or valid for `lhs_len` reads of `u16` (this function's
        // contract); `T` has the size, alignment and every bit pattern of `u16`
        // (`#[repr(transparent)]`, checked by `DstElem`), so the same memory is `lhs_len` `T`s.
        let (src, src_span) = unsafe { input(lhs.cast::<T>(), lhs_len) }?;
        // SAFETY: `lhs_packed` is null or valid for `lhs_packed_len` writes (this function's
        // contract); `output` checks that it does not overlap `lhs`.
        let out = unsafe { output(lhs_packed, lhs_packed_len, &[src_span]) }?;
        Ok(packer(&p, m, k, m_idx_start, src, lhs_stride, out)?)
    })
}

/// Quantizes and packs `m` rows of f16 activations, given as `uint16_t` bit patterns, for the
/// `f16_qai8dxp_*` families; buffers as in `qgemm_lhs_qai8dxp_quantize_pack`. KleidiAI's f16
/// packer's rounding, each row with its own zero point (KleidiAI's packing with `mr = 4` and
/// `kr / sr = 4` adds another row's: docs/c-api.md). `kr / sr` must be 4 or 8
/// (`QGEMM_ERROR_UNSUPPORTED`) and `m_idx_start` a multiple of `mr`
/// (`QGEMM_ERROR_MISALIGNED_START`: KleidiAI corrupts the buffer there).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_lhs_qai8dxp_quantize_pack_f16(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: *const u16,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    let packer: HalfPacker<f16> = qai8dxp::quantize_pack_f16;
    // SAFETY: this function's contract is `quantize_pack_half`'s.
    unsafe {
        quantize_pack_half(packer, packing, (m, k, m_idx_start), lhs, lhs_len, lhs_stride, lhs_packed, lhs_packed_len)
    }
}

/// Quantizes and packs `m` rows of bf16 activations, given as `uint16_t` bit patterns, for the
/// `bf16_qai8dxp_*` families (KleidiAI's bf16 packer's rounding); buffers as in
/// `qgemm_lhs_qai8dxp_quantize_pack`. `kr / sr` must be 8 (`QGEMM_ERROR_UNSUPPORTED`) and
/// `m_idx_start` a multiple of `mr` (`QGEMM_ERROR_MISALIGNED_START`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_lhs_qai8dxp_quantize_pack_bf16(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: *const u16,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    let packer: HalfPacker<bf16> = qai8dxp::quantize_pack_bf16;
    // SAFETY: this function's contract is `quantize_pack_half`'s.
    unsafe {
        quantize_pack_half(packer, packing, (m, k, m_idx_start), lhs, lhs_len, lhs_stride, lhs_packed, lhs_packed_len)
    }
}

/// Writes the bytes of a `qsi8d32p` packed LHS of `m` rows, depth `k`, block length `bl`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32p_packed_size(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi8d32p::packed_size(m, k, bl, p)) }
}

/// Writes the byte offset of the `qsi8d32p` tile holding row `m_idx` (a multiple of `mr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32p_packed_offset(
    packing: *const qgemm_packing,
    m_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi8d32p::packed_offset(m_idx, k, bl, p)) }
}

/// Quantizes and packs `m` rows of f32 activations in blocks of `bl` (`qsi8d32p`); buffers as
/// in `qgemm_lhs_qai8dxp_quantize_pack`. A block whose scale overflows f16:
/// `QGEMM_ERROR_SCALE_OVERFLOW`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32p_quantize_pack(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    bl: usize,
    m_idx_start: usize,
    lhs: *const f32,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `lhs` is null or valid for `lhs_len` reads (this function's contract).
        let (src, src_span) = unsafe { input(lhs, lhs_len) }?;
        // SAFETY: `lhs_packed` is null or valid for `lhs_packed_len` writes (this function's
        // contract); `output` checks that it does not overlap `lhs`.
        let out = unsafe { output(lhs_packed, lhs_packed_len, &[src_span]) }?;
        Ok(qsi8d32p::quantize_pack(&p, m, k, bl, m_idx_start, src, lhs_stride, out)?)
    })
}

/// Writes the bytes of a `qsi8d32pscalef32` packed LHS (the activations of the
/// `qsi8d32p_qai4c32p` families) of `m` rows, depth `k`, block length `bl`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32pscalef32_packed_size(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi8d32pscalef32::packed_size(m, k, bl, p)) }
}

/// Writes the byte offset of the `qsi8d32pscalef32` tile holding row `m_idx` (a multiple of
/// `mr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32pscalef32_packed_offset(
    packing: *const qgemm_packing,
    m_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi8d32pscalef32::packed_offset(m_idx, k, bl, p)) }
}

/// The core's `qsi8d32pscalef32` packer of activations of type `T` (`quantize_pack`,
/// `quantize_pack_f16`).
type BlockPacker<T> = fn(&Packing, usize, usize, usize, usize, &[T], usize, &mut [u8]) -> qgemm::Result<()>;

/// The body of `qgemm_lhs_qsi8d32pscalef32_quantize_pack` and `_f16`: `lhs` holds `lhs_len`
/// elements of the C type `C` (`float`, or `uint16_t` bit patterns), read as the core's `T`,
/// quantized and packed with `packer`.
///
/// (The two C functions are written out, not generated by a macro: cbindgen declares only
/// functions it sees in the source.)
///
/// # Safety
///
/// As the two C functions: every pointer argument is null or valid for the reads or writes
/// of the length given with it.
#[allow(clippy::too_many_arguments)]
unsafe fn quantize_pack_blocks<T: DstElem, C: CElem>(
    packer: BlockPacker<T>,
    packing: *const qgemm_packing,
    (m, k, bl, m_idx_start): (usize, usize, usize, usize),
    lhs: *const C,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // A cast only: `dst_as` accepts it where `T` travels as `C` (size, alignment, every bit
        // pattern valid), which each caller's pair does.
        let lhs = dst_as::<T, C>(lhs.cast_mut())?.cast_const();
        // SAFETY: `lhs` is null or valid for `lhs_len` reads of `C` (this function's contract),
        // which are `lhs_len` valid `T` (`dst_as` above).
        let (src, src_span) = unsafe { input(lhs, lhs_len) }?;
        // SAFETY: `lhs_packed` is null or valid for `lhs_packed_len` writes (this function's
        // contract); `output` checks that it does not overlap `lhs`.
        let out = unsafe { output(lhs_packed, lhs_packed_len, &[src_span]) }?;
        Ok(packer(&p, m, k, bl, m_idx_start, src, lhs_stride, out)?)
    })
}

/// Quantizes and packs `m` rows of f32 activations in blocks of `bl` with an f32 scale and an
/// f32 block sum per row and block (`qsi8d32pscalef32`, for `QGEMM_FAMILY_QSI8D32P_QAI4C32P`;
/// KleidiAI's `lhs_quant_pack_qsi8d32pscalef32_f32_neon`, ties to even); buffers as in
/// `qgemm_lhs_qai8dxp_quantize_pack` (`lhs` starts at the first row to pack, `lhs_stride` in
/// elements). A block whose sum of dequantized values overflows f32:
/// `QGEMM_ERROR_SCALE_OVERFLOW`; NaN or infinite activations: `QGEMM_ERROR_NON_FINITE`; nothing
/// written.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32pscalef32_quantize_pack(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    bl: usize,
    m_idx_start: usize,
    lhs: *const f32,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    let packer: BlockPacker<f32> = qsi8d32pscalef32::quantize_pack;
    let shape = (m, k, bl, m_idx_start);
    // SAFETY: this function's contract is `quantize_pack_blocks`'s.
    unsafe { quantize_pack_blocks(packer, packing, shape, lhs, lhs_len, lhs_stride, lhs_packed, lhs_packed_len) }
}

/// As `qgemm_lhs_qsi8d32pscalef32_quantize_pack`, from f16 activations given as `uint16_t` bit
/// patterns, for `QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P` (KleidiAI's
/// `lhs_quant_pack_qsi8d32pscalef32_f16_neon`, ties away from zero; no FEAT_FP16 needed).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(
    packing: *const qgemm_packing,
    m: usize,
    k: usize,
    bl: usize,
    m_idx_start: usize,
    lhs: *const u16,
    lhs_len: usize,
    lhs_stride: usize,
    lhs_packed: *mut u8,
    lhs_packed_len: usize,
) -> qgemm_status {
    let packer: BlockPacker<f16> = qsi8d32pscalef32::quantize_pack_f16;
    let shape = (m, k, bl, m_idx_start);
    // SAFETY: this function's contract is `quantize_pack_blocks`'s.
    unsafe { quantize_pack_blocks(packer, packing, shape, lhs, lhs_len, lhs_stride, lhs_packed, lhs_packed_len) }
}

// ---- RHS packers --------------------------------------------------------------------------

/// Raw weights: one row per output channel (`n` rows of `k` values).
pub const QGEMM_LAYOUT_NXK: u32 = 0;
/// Raw weights: one row per depth (`k` rows of `n` values).
pub const QGEMM_LAYOUT_KXN: u32 = 1;
/// Int4 nibble: two's complement, value in `[-8, 7]`.
pub const QGEMM_INT4_SIGNED: u32 = 0;
/// Int4 nibble: unsigned `u` with zero point 8, value `u - 8`.
pub const QGEMM_INT4_ZERO_POINT_8: u32 = 1;

/// Raw int4 weights in s1s0 nibble order (two consecutive elements of a row per byte, the
/// first in the low nibble).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_int4_source {
    /// The bytes.
    pub data: *const u8,
    /// Bytes at `data`.
    pub len: usize,
    /// `QGEMM_LAYOUT_NXK` or `QGEMM_LAYOUT_KXN`.
    pub layout: u32,
    /// Row stride in bytes: at least `ceil(k/2)` (NxK) or `ceil(n/2)` (KxN).
    pub stride: usize,
    /// `QGEMM_INT4_SIGNED` or `QGEMM_INT4_ZERO_POINT_8`.
    pub encoding: u32,
}

/// Raw int8 weights, one signed value per byte.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_int8_source {
    /// The values.
    pub data: *const i8,
    /// Values (bytes) at `data`.
    pub len: usize,
    /// `QGEMM_LAYOUT_NXK` or `QGEMM_LAYOUT_KXN`.
    pub layout: u32,
    /// Row stride in values (bytes): at least `k` (NxK) or `n` (KxN).
    pub stride: usize,
}

/// The `Layout` of a `QGEMM_LAYOUT_*` code.
fn layout(code: u32) -> Status<Layout> {
    match code {
        QGEMM_LAYOUT_NXK => Ok(Layout::NxK),
        QGEMM_LAYOUT_KXN => Ok(Layout::KxN),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    }
}

/// The Rust view of a C int4 source and its byte range.
///
/// # Safety
///
/// `src` is null or valid for a read of a struct whose `data` is null or valid for `len` reads.
unsafe fn int4_source<'a>(src: *const qgemm_int4_source) -> Status<(Int4Source<'a>, Span)> {
    // SAFETY: `src` is null or valid for a read (this function's contract).
    let s = unsafe { read_in(src) }?;
    let layout = layout(s.layout)?;
    let encoding = match s.encoding {
        QGEMM_INT4_SIGNED => Int4Encoding::Signed,
        QGEMM_INT4_ZERO_POINT_8 => Int4Encoding::ZeroPoint8,
        _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    };
    // SAFETY: `data` is null or valid for `len` reads (this function's contract).
    let (data, range) = unsafe { input(s.data, s.len) }?;
    Ok((Int4Source { data, layout, stride: s.stride, encoding }, range))
}

/// The Rust view of a C int8 source and its byte range.
///
/// # Safety
///
/// `src` is null or valid for a read of a struct whose `data` is null or valid for `len` reads.
unsafe fn int8_source<'a>(src: *const qgemm_int8_source) -> Status<(Int8Source<'a>, Span)> {
    // SAFETY: `src` is null or valid for a read (this function's contract).
    let s = unsafe { read_in(src) }?;
    let layout = layout(s.layout)?;
    // SAFETY: `data` is null or valid for `len` reads (this function's contract).
    let (data, range) = unsafe { input(s.data, s.len) }?;
    Ok((Int8Source { data, layout, stride: s.stride }, range))
}

/// An optional f32 slice: null means "none" (length ignored).
///
/// # Safety
///
/// As [`input`].
unsafe fn optional<'a>(p: *const f32, len: usize) -> Status<(Option<&'a [f32]>, Span)> {
    if p.is_null() {
        return Ok((None, NO_SPAN));
    }
    // SAFETY: `p` is valid for `len` reads (this function's contract).
    let (values, range) = unsafe { input(p, len) }?;
    Ok((Some(values), range))
}

/// The f32 scales (per channel, or per block for `qai4c32p`) and optional bias of the
/// `qsi4cxp`, `qsi8cxp`, `qai4c32p` and `qsu2cxp` packers, and their byte ranges.
struct ChannelParams<'a> {
    scale: &'a [f32],
    bias: Option<&'a [f32]>,
    spans: [Span; 2],
}

/// [`ChannelParams`] of `scale_len` scales at `scale` and `bias_len` biases at `bias` (null: none).
///
/// # Safety
///
/// `scale` is null or valid for `scale_len` reads, `bias` null or valid for `bias_len` reads.
unsafe fn channel_params<'a>(
    (scale, scale_len): (*const f32, usize),
    (bias, bias_len): (*const f32, usize),
) -> Status<ChannelParams<'a>> {
    // SAFETY: `scale` is null or valid for `scale_len` reads (this function's contract).
    let (scale, scale_span) = unsafe { input(scale, scale_len) }?;
    // SAFETY: `bias` is null or valid for `bias_len` reads (this function's contract).
    let (bias, bias_span) = unsafe { optional(bias, bias_len) }?;
    Ok(ChannelParams { scale, bias, spans: [scale_span, bias_span] })
}

/// Writes the bytes of a `qsi4cxp` packed RHS of `n` channels, depth `k`, to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi4cxp_packed_size(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi4cxp::packed_size(n, k, p)) }
}

/// Writes the byte offset of the `qsi4cxp` tile holding channel `n_idx` (a multiple of `nr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi4cxp_packed_offset(
    packing: *const qgemm_packing,
    n_idx: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi4cxp::packed_offset(n_idx, k, p)) }
}

/// Packs `n` channels of int4 weights with per-channel f32 scales (`qsi4cxp`).
///
/// * `scale`, `scale_len` floats: `n` scales; `bias`, `bias_len`: `n` floats, or `bias = NULL`
///   for none (packs zeros). All finite.
/// * `rhs_packed`, `rhs_packed_len` bytes: at least `qgemm_rhs_qsi4cxp_packed_size`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_qsi4cxp_pack(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    rhs: *const qgemm_int4_source,
    scale: *const f32,
    scale_len: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `rhs` is null or a readable struct whose `data` is null or valid for `len`
        // reads (this function's contract).
        let (src, src_span) = unsafe { int4_source(rhs) }?;
        // SAFETY: `scale` and `bias` as this function's contract says.
        let c = unsafe { channel_params((scale, scale_len), (bias, bias_len)) }?;
        // SAFETY: `rhs_packed` is null or valid for `rhs_packed_len` writes (this function's
        // contract); `output` checks that it overlaps none of the inputs.
        let out = unsafe { output(rhs_packed, rhs_packed_len, &[src_span, c.spans[0], c.spans[1]]) }?;
        Ok(qsi4cxp::pack(&p, n, k, &src, c.scale, c.bias, out)?)
    })
}

/// Writes the bytes of a `qsi4c32p` packed RHS of `n` channels, depth `k`, block length `bl`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi4c32p_packed_size(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi4c32p::packed_size(n, k, bl, p)) }
}

/// Writes the byte offset of the `qsi4c32p` tile holding channel `n_idx` (a multiple of `nr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi4c32p_packed_offset(
    packing: *const qgemm_packing,
    n_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi4c32p::packed_offset(n_idx, k, bl, p)) }
}

/// Packs `n` channels of int4 weights with per-block bf16 scales (`qsi4c32p`).
///
/// * `scale`, `scale_len` bf16 values (raw `uint16_t` bits): block `b` of channel `c` is
///   `scale[c * scale_stride + b]` (`scale_stride >= k / bl`, in elements).
/// * `bias`, `bias_len`: `n` floats or `bias = NULL`. Scales and bias finite.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_qsi4c32p_pack(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    bl: usize,
    rhs: *const qgemm_int4_source,
    scale: *const u16,
    scale_len: usize,
    scale_stride: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `rhs` is null or a readable struct whose `data` is null or valid for `len`
        // reads (this function's contract).
        let (src, src_span) = unsafe { int4_source(rhs) }?;
        // SAFETY: `scale` is null or valid for `scale_len` reads of `uint16_t` (this function's
        // contract); `bf16` is a `repr(transparent)` `u16` (same size and alignment, every bit
        // pattern valid).
        let (values, scale_span) = unsafe { input(scale.cast::<bf16>(), scale_len) }?;
        // SAFETY: `bias` is null or valid for `bias_len` reads (this function's contract).
        let (bias, bias_span) = unsafe { optional(bias, bias_len) }?;
        // SAFETY: `rhs_packed` is null or valid for `rhs_packed_len` writes (this function's
        // contract); `output` checks that it overlaps none of the inputs.
        let out = unsafe { output(rhs_packed, rhs_packed_len, &[src_span, scale_span, bias_span]) }?;
        let scales = BlockScales { values, stride: scale_stride };
        Ok(qsi4c32p::pack(&p, n, k, bl, &src, &scales, bias, out)?)
    })
}

/// Writes the bytes of a `qsi4c32pscalef16` packed RHS of `n` channels, depth `k`, block
/// length `bl`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi4c32pscalef16_packed_size(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi4c32pscalef16::packed_size(n, k, bl, p)) }
}

/// Writes the byte offset of the `qsi4c32pscalef16` tile holding channel `n_idx`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi4c32pscalef16_packed_offset(
    packing: *const qgemm_packing,
    n_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi4c32pscalef16::packed_offset(n_idx, k, bl, p)) }
}

/// Packs `n` channels of GGML `Q4_0`-style blocks (`qsi4c32pscalef16`): `rhs`, `rhs_len` bytes,
/// `n` rows `rhs_stride` bytes apart (`>= (k/bl) * (2 + bl/2)`), each `k/bl` blocks of an f16
/// scale and `bl/2` bytes. Every block scale must be finite. The format has no bias.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_qsi4c32pscalef16_pack(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    bl: usize,
    rhs: *const u8,
    rhs_len: usize,
    rhs_stride: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `rhs` is null or valid for `rhs_len` reads (this function's contract).
        let (src, src_span) = unsafe { input(rhs, rhs_len) }?;
        // SAFETY: `rhs_packed` is null or valid for `rhs_packed_len` writes (this function's
        // contract); `output` checks that it does not overlap `rhs`.
        let out = unsafe { output(rhs_packed, rhs_packed_len, &[src_span]) }?;
        Ok(qsi4c32pscalef16::pack(&p, n, k, bl, src, rhs_stride, out)?)
    })
}

/// Writes the bytes of a `qai4c32p` packed RHS of `n` channels, depth `k`, block length `bl`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qai4c32p_packed_size(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qai4c32p::packed_size(n, k, bl, p)) }
}

/// Writes the byte offset of the `qai4c32p` tile holding channel `n_idx` (a multiple of `nr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qai4c32p_packed_offset(
    packing: *const qgemm_packing,
    n_idx: usize,
    k: usize,
    bl: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qai4c32p::packed_offset(n_idx, k, bl, p)) }
}

/// Packs `n` channels of asymmetric int4 weights with an f32 scale and an f32 offset per block
/// of `bl` depths (`qai4c32p`, GGML `Q4_1`-like: block `b` of channel `c` is
/// `(u - 8) * scale[c][b] + zero[c][b]`).
///
/// * `rhs`, `rhs_len` bytes: `n` rows `rhs_stride` bytes apart (`>= k/2`), two depths per byte
///   in s0s1 order (depth `2i` in the high nibble of byte `i`, `2i + 1` in the low one),
///   unsigned nibbles `u`.
/// * `zero`, `zero_len` and `scale`, `scale_len` floats: `n * (k/bl)` each, dense
///   (`[c * (k/bl) + b]`). `bias`, `bias_len`: `n` floats or `bias = NULL` (zeros). All finite.
/// * `rhs_packed`, `rhs_packed_len` bytes: at least `qgemm_rhs_qai4c32p_packed_size`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_qai4c32p_pack(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    bl: usize,
    rhs: *const u8,
    rhs_len: usize,
    rhs_stride: usize,
    zero: *const f32,
    zero_len: usize,
    scale: *const f32,
    scale_len: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `rhs` is null or valid for `rhs_len` reads (this function's contract).
        let (src, src_span) = unsafe { input(rhs, rhs_len) }?;
        // SAFETY: `zero` is null or valid for `zero_len` reads (this function's contract).
        let (zero, zero_span) = unsafe { input(zero, zero_len) }?;
        // SAFETY: `scale` and `bias` as this function's contract says.
        let c = unsafe { channel_params((scale, scale_len), (bias, bias_len)) }?;
        let inputs = [src_span, zero_span, c.spans[0], c.spans[1]];
        // SAFETY: `rhs_packed` is null or valid for `rhs_packed_len` writes (this function's
        // contract); `output` checks that it overlaps none of the inputs.
        let out = unsafe { output(rhs_packed, rhs_packed_len, &inputs) }?;
        Ok(qai4c32p::pack(&p, n, k, bl, src, rhs_stride, zero, c.scale, c.bias, out)?)
    })
}

/// Writes the bytes of a `qsu2cxp` packed RHS (2-bit codes, `QGEMM_FAMILY_QAI8DXP_QSU2CXP`) of
/// `n` channels, depth `k`, to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsu2cxp_packed_size(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsu2cxp::packed_size(n, k, p)) }
}

/// Writes the byte offset of the `qsu2cxp` tile holding channel `n_idx` (a multiple of `nr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsu2cxp_packed_offset(
    packing: *const qgemm_packing,
    n_idx: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsu2cxp::packed_offset(n_idx, k, p)) }
}

/// Packs `n` channels of 2-bit weight codes with per-channel f32 scales (`qsu2cxp`, KleidiAI's
/// `rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon`; packing `nr = 4`, `kr = 4`, `sr = 1`).
///
/// * `rhs`, `rhs_len` bytes: `n` rows `rhs_stride` bytes apart (`>= k/4`), four codes per byte,
///   the first depth in the lowest two bits; `k` a multiple of 32.
/// * `scale`, `scale_len` floats: `n`; `bias`, `bias_len`: `n` floats or `bias = NULL` (zeros).
///   All finite.
/// * `lut`: 4 `int32_t`, code `u` stands for `lut[u]`, every entry in `[-64, 63]` (else
///   `QGEMM_ERROR_LUT_OUT_OF_RANGE`; KleidiAI narrows to int8 silently), or `NULL` for the default
///   `{-2, -1, 0, 1}`. The packed bytes hold the codes and a row sum of the table's values: give
///   the same table to the kernels (`qgemm_lut_params` of `qgemm_kernel_run`, `qgemm_linear_set_lut`).
/// * `rhs_packed`, `rhs_packed_len` bytes: at least `qgemm_rhs_qsu2cxp_packed_size`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs, 4 elements for `lut`), as the module conventions
/// say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_qsu2cxp_pack(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    rhs: *const u8,
    rhs_len: usize,
    rhs_stride: usize,
    scale: *const f32,
    scale_len: usize,
    bias: *const f32,
    bias_len: usize,
    lut: *const i32,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `rhs` is null or valid for `rhs_len` reads (this function's contract).
        let (src, src_span) = unsafe { input(rhs, rhs_len) }?;
        // SAFETY: `scale` and `bias` as this function's contract says.
        let c = unsafe { channel_params((scale, scale_len), (bias, bias_len)) }?;
        // SAFETY: `lut` is null or valid for 4 reads (this function's contract).
        let (table, lut_span) = unsafe { lut_in(lut) }?;
        let inputs = [src_span, c.spans[0], c.spans[1], lut_span];
        // SAFETY: `rhs_packed` is null or valid for `rhs_packed_len` writes (this function's
        // contract); `output` checks that it overlaps none of the inputs.
        let out = unsafe { output(rhs_packed, rhs_packed_len, &inputs) }?;
        Ok(qsu2cxp::pack(&p, n, k, src, rhs_stride, c.scale, c.bias, table.as_ref(), out)?)
    })
}

/// Writes the bytes of a `qsi8cxp` packed RHS of `n` channels, depth `k`, to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi8cxp_packed_size(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi8cxp::packed_size(n, k, p)) }
}

/// Writes the byte offset of the `qsi8cxp` tile holding channel `n_idx` (a multiple of `nr`).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_rhs_qsi8cxp_packed_offset(
    packing: *const qgemm_packing,
    n_idx: usize,
    k: usize,
    out: *mut usize,
) -> qgemm_status {
    // SAFETY: `packing` and `out` as this function's contract says.
    unsafe { packing_query(packing, out, |p| qsi8cxp::packed_offset(n_idx, k, p)) }
}

/// Packs `n` channels of int8 weights with per-channel f32 scales (`qsi8cxp`, packing with
/// `sr = 1`).
///
/// * `rhs`: the raw weights (`qgemm_int8_source`, NxK or KxN).
/// * `scale`, `scale_len` floats: `n` scales; `bias`, `bias_len`: `n` floats, or `bias = NULL`
///   for none (packs zeros). All finite.
/// * `rhs_packed`, `rhs_packed_len` bytes: at least `qgemm_rhs_qsi8cxp_packed_size`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_rhs_qsi8cxp_pack(
    packing: *const qgemm_packing,
    n: usize,
    k: usize,
    rhs: *const qgemm_int8_source,
    scale: *const f32,
    scale_len: usize,
    bias: *const f32,
    bias_len: usize,
    rhs_packed: *mut u8,
    rhs_packed_len: usize,
) -> qgemm_status {
    status(|| {
        // SAFETY: `packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(packing) }?;
        // SAFETY: `rhs` is null or a readable struct whose `data` is null or valid for `len`
        // reads (this function's contract).
        let (src, src_span) = unsafe { int8_source(rhs) }?;
        // SAFETY: `scale` and `bias` as this function's contract says.
        let c = unsafe { channel_params((scale, scale_len), (bias, bias_len)) }?;
        // SAFETY: `rhs_packed` is null or valid for `rhs_packed_len` writes (this function's
        // contract); `output` checks that it overlaps none of the inputs.
        let out = unsafe { output(rhs_packed, rhs_packed_len, &[src_span, c.spans[0], c.spans[1]]) }?;
        Ok(qsi8cxp::pack(&p, n, k, &src, c.scale, c.bias, out)?)
    })
}

// ---- the operator -------------------------------------------------------------------------

#[doc(hidden)] // public for the fuzz target (fuzz/fuzz_targets/capi.rs) only: not API
pub mod linear;
#[doc(hidden)] // public for the fuzz target (fuzz/fuzz_targets/capi.rs) only: not API
pub mod quant_method;
pub use linear::{qgemm_linear, qgemm_linear_call, qgemm_linear_params, qgemm_rect};

// ---- the float formats' packers ------------------------------------------------------------

#[doc(hidden)] // public for the fuzz target (fuzz/fuzz_targets/capi.rs) only: not API
pub mod float;

// ---- weight quantization ------------------------------------------------------------------

#[doc(hidden)] // public for the fuzz target (fuzz/fuzz_targets/capi.rs) only: not API
pub mod quant;
pub use quant::{qgemm_quant_hessian, qgemm_weights};
