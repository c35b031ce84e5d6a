//! Layer 1: the safe C API (`qgemm_*`).
//!
//! Conventions, for every function:
//!
//! * The return value is a [`qgemm_status`]; results go through out pointers, which are
//!   written only on `QGEMM_OK`. A packer or run that fails has written nothing.
//! * Buffers are a pointer and a length **in elements** of the pointer's type. A required
//!   pointer that is null is `QGEMM_ERROR_NULL_POINTER` (also with length 0); a pointer not
//!   aligned to its element type is `QGEMM_ERROR_MISALIGNED_POINTER`; an output that overlaps
//!   an input of the same call is `QGEMM_ERROR_BUFFERS_OVERLAP`. Nothing outside
//!   `[ptr, ptr + len)` is read or written.
//! * Feature sets are `QGEMM_FEATURE_*` bit sets ([`crate::cpu`]); a bit outside
//!   `QGEMM_FEATURE_ALL` is `QGEMM_ERROR_INVALID_ARGUMENT`. The caller vouches for the bits:
//!   a feature the CPU lacks makes a kernel of that tier execute an undefined instruction.
//!
//! Every exported function has the same `# Safety` contract: each pointer argument is null or
//! valid for the reads or writes of the length given with it (one element for out pointers and
//! structs), and an input is not written by anyone during the call. The `unsafe` blocks below
//! are the places that rely on it: turning a checked C pointer into a Rust reference or slice
//! ([`read_in`], [`put`], [`input`], [`output`]).
//!
//! # Families
//!
//! Everything that depends on the family is generated from one table, [`families!`]: a row
//! names the `QGEMM_FAMILY_*` code, the family's name, its Rust `Family` type, its `select`
//! function, its LHS packer and the element type of its output. The rows implement
//! [`CFamily`]; [`match_family!`] and [`with_kernel!`] turn a family code or a kernel handle
//! into a call of generic code on the family's type. No function below matches on a family
//! code by hand. Adding a family is a `QGEMM_FAMILY_*` constant (cbindgen does not expand
//! macros, so the C constants are written out) and a row; a family with a new RHS format also
//! needs its `qgemm_rhs_<format>_*` functions (their C signatures differ by format).
//!
//! The float families (`qgemm::float`, not `Family`s) have their own table, `float_families!`,
//! and functions (`qgemm_float_*`) in `api/float.rs`.

use core::ffi::c_char;
use core::mem::{align_of, size_of};

use half::{bf16, f16};
use qgemm::bf16_qai8dxp_qsi4c32p::{self, Bf16Qai8dxpQsi4c32p};
use qgemm::bf16_qai8dxp_qsi4cxp::{self, Bf16Qai8dxpQsi4cxp};
use qgemm::f16_qai8dxp_qsi4cxp::{self, F16Qai8dxpQsi4cxp};
use qgemm::f16_qai8dxp_qsi8cxp::{self, F16Qai8dxpQsi8cxp};
use qgemm::f16_qsi8d32p_qai4c32p::{self, F16Qsi8d32pQai4c32p};
use qgemm::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::qai8dxp_qsi4c32p::{self, Qai8dxpQsi4c32p};
use qgemm::qai8dxp_qsi4cxp::{self, Qai8dxpQsi4cxp};
use qgemm::qai8dxp_qsi8cxp::{self, Qai8dxpQsi8cxp};
use qgemm::qai8dxp_qsu2cxp::{self, Qai8dxpQsu2cxp};
use qgemm::qsi8d32p_qai4c32p::{self, Qsi8d32pQai4c32p};
use qgemm::qsi8d32p_qsi4c32p::{self, Qsi8d32pQsi4c32p};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::{self, Int8Source};
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsu2cxp};
use qgemm::{Clamp, CpuFeatures, Family, Kernel, MatmulArgs, Packing, Tier};

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

/// The feature set of C bits.
fn features(bits: u32) -> Status<CpuFeatures> {
    crate::cpu::from_bits(bits).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
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

// ---- output element types -----------------------------------------------------------------

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

/// The `dst` element type of a C run function: `float` (`qgemm_kernel_run`) or `uint16_t`
/// (`qgemm_kernel_run_u16`).
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

/// The output element type of a family's kernels (the `dst` column of [`families!`]) and the
/// C type its values travel as. Every bit pattern is a valid value of both.
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

/// `dst` as a pointer to the kernel's output element `D`, if the C run function's element
/// type `T` is the one `D` travels as; else `QGEMM_ERROR_WRONG_DST_TYPE`. A pointer cast only:
/// [`output`] checks the buffer. As `D` and `T` then have the same size and alignment, `len`
/// elements of `T` are `len` elements of `D`.
fn dst_as<D: DstElem, T: CElem>(dst: *mut T) -> Status<*mut D> {
    let ((), ()) = (D::SAME_LAYOUT, T::SAME_LAYOUT);
    if D::C == T::C { Ok(dst.cast()) } else { Err(qgemm_status::QGEMM_ERROR_WRONG_DST_TYPE) }
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
/// (`qsu2cxp`) × int8 per-row activations (`qai8dxp`). Its kernels take the table:
/// `qgemm_kernel_run_lut`, `qgemm_linear_set_lut`.
pub const QGEMM_FAMILY_QAI8DXP_QSU2CXP: u32 = 10;

/// The families of layer 1, one row each, in code order:
///
/// `(C code, name, Rust family type, select function, LHS packer (qgemm::lhs), output element)`
///
/// The output element type is the core's `Family::Dst` once the core has it: `f32`, or
/// `half::f16` / `half::bf16` (which [`qgemm_kernel_run_u16`] serves). Invoked with a callback
/// macro (`families!(callback!(args))`), which receives `(args)` and the rows.
macro_rules! families {
    ($then:ident ! ($($args:tt)*)) => {
        $then! { ($($args)*)
            (QGEMM_FAMILY_QAI8DXP_QSI4CXP, "qai8dxp_qsi4cxp", Qai8dxpQsi4cxp, qai8dxp_qsi4cxp::select, qai8dxp, f32)
            (QGEMM_FAMILY_QAI8DXP_QSI4C32P, "qai8dxp_qsi4c32p", Qai8dxpQsi4c32p, qai8dxp_qsi4c32p::select, qai8dxp, f32)
            (QGEMM_FAMILY_QSI8D32P_QSI4C32P, "qsi8d32p_qsi4c32p", Qsi8d32pQsi4c32p, qsi8d32p_qsi4c32p::select, qsi8d32p, f32)
            (QGEMM_FAMILY_QAI8DXP_QSI8CXP, "qai8dxp_qsi8cxp", Qai8dxpQsi8cxp, qai8dxp_qsi8cxp::select, qai8dxp, f32)
            (QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP, "f16_qai8dxp_qsi4cxp", F16Qai8dxpQsi4cxp, f16_qai8dxp_qsi4cxp::select, qai8dxp, f16)
            (QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP, "f16_qai8dxp_qsi8cxp", F16Qai8dxpQsi8cxp, f16_qai8dxp_qsi8cxp::select, qai8dxp, f16)
            (QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP, "bf16_qai8dxp_qsi4cxp", Bf16Qai8dxpQsi4cxp, bf16_qai8dxp_qsi4cxp::select, qai8dxp, bf16)
            (QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P, "bf16_qai8dxp_qsi4c32p", Bf16Qai8dxpQsi4c32p, bf16_qai8dxp_qsi4c32p::select, qai8dxp, bf16)
            (QGEMM_FAMILY_QSI8D32P_QAI4C32P, "qsi8d32p_qai4c32p", Qsi8d32pQai4c32p, qsi8d32p_qai4c32p::select, qsi8d32pscalef32, f32)
            (QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P, "f16_qsi8d32p_qai4c32p", F16Qsi8d32pQai4c32p, f16_qsi8d32p_qai4c32p::select, qsi8d32pscalef32, f16)
            (QGEMM_FAMILY_QAI8DXP_QSU2CXP, "qai8dxp_qsu2cxp", Qai8dxpQsu2cxp, qai8dxp_qsu2cxp::select, qai8dxp, f32)
        }
    };
}

/// What layer 1 knows of a family beyond the core's [`Family`]: one impl per table row.
trait CFamily: Family<Dst: DstElem> {
    /// `QGEMM_FAMILY_*`.
    const CODE: u32;
    /// Element type of its kernels' output.
    type Out: DstElem;
    /// The family's `select`: its best kernel for `m` rows with its preferred RHS packing.
    fn select(cpu: &CpuFeatures, m: usize) -> &'static Kernel<Self>;
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
/// `0, 1, 2, ...` in row order, each name is the Rust family's `NAME`, each LHS packer exists.
macro_rules! family_impls {
    (() $(($code:ident, $name:literal, $fam:ty, $select:path, $lhs:ident, $dst:ty))*) => {
        $(
            impl CFamily for $fam {
                const CODE: u32 = $code;
                type Out = $dst;
                fn select(cpu: &CpuFeatures, m: usize) -> &'static Kernel<Self> {
                    $select(cpu, m)
                }
            }
            const _: () = assert!(same_str(<$fam as Family>::NAME, $name), "family table: name");
            const _: () = {
                #[allow(unused_imports)]
                use qgemm::lhs::$lhs as _;
            };
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
    (($family:expr, $F:ident, $body:expr) $(($code:ident, $name:literal, $fam:ty, $select:path, $lhs:ident, $dst:ty))*) => {
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

/// `$body` (a [`Status`]) with `$k` bound to the `&'static Kernel<F>` a kernel handle names;
/// `QGEMM_ERROR_INVALID_ARGUMENT` for a handle that names no kernel.
macro_rules! with_kernel {
    ($handle:expr, $k:ident => $body:expr) => {{
        let h: qgemm_kernel = $handle;
        match_family!(h.family, Fam => entry::<Fam>(h.index).and_then(|$k| $body))
    }};
}

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

/// A kernel: its family (`QGEMM_FAMILY_*`) and its index in the family's catalogue
/// (`qgemm_kernel_at`). Plain data, checked on every use.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct qgemm_kernel {
    /// `QGEMM_FAMILY_*`.
    pub family: u32,
    /// Index in the family's catalogue.
    pub index: u32,
}

/// Packing parameters (see the Rust `Packing`): rows per LHS tile, channels per RHS tile,
/// depth per inner step and split ratio.
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

/// Bytes of `qgemm_kernel_info::name`, NUL included.
pub const QGEMM_KERNEL_NAME_MAX: usize = 96;

/// What a kernel is.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct qgemm_kernel_info {
    /// NUL-terminated name, KleidiAI style (`matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm`).
    pub name: [c_char; QGEMM_KERNEL_NAME_MAX],
    /// `QGEMM_TIER_*`.
    pub tier: u32,
    /// Output rows per iteration: sub-rectangles start at multiples of it.
    pub m_step: usize,
    /// Output columns per iteration: sub-rectangles start at multiples of it.
    pub n_step: usize,
    /// The packing both operands must be packed with.
    pub packing: qgemm_packing,
}

/// Catalogue entry `index` of family `F`.
fn entry<F: Family>(index: u32) -> Status<&'static Kernel<F>> {
    F::kernels().get(index as usize).copied().ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

/// The handle of a catalogue kernel of family `F`.
fn handle<F: CFamily>(kernel: &'static Kernel<F>) -> Status<qgemm_kernel> {
    let index = F::kernels().iter().position(|k| core::ptr::eq(*k, kernel));
    let index = index.ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
    Ok(qgemm_kernel { family: F::CODE, index: index as u32 })
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

fn info_of<F: Family>(k: &Kernel<F>) -> qgemm_kernel_info {
    let mut name = [0 as c_char; QGEMM_KERNEL_NAME_MAX];
    for (d, s) in name.iter_mut().zip(k.name().bytes().take(QGEMM_KERNEL_NAME_MAX - 1)) {
        *d = s as c_char;
    }
    qgemm_kernel_info {
        name,
        tier: tier_code(k.tier()),
        m_step: k.m_step(),
        n_step: k.n_step(),
        packing: k.packing().into(),
    }
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

/// Writes the handle of kernel `index` (`< qgemm_kernel_count`) of `family` to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_at(family: u32, index: usize, out: *mut qgemm_kernel) -> qgemm_status {
    let kernel = match_family!(family, F => match u32::try_from(index) {
        Ok(i) if index < F::kernels().len() => Ok(qgemm_kernel { family, index: i }),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    });
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(kernel, out) }
}

/// Writes what `kernel` is (name, tier, steps, packing) to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_get_info(kernel: qgemm_kernel, out: *mut qgemm_kernel_info) -> qgemm_status {
    let info = with_kernel!(kernel, k => Ok(info_of(k)));
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
pub unsafe extern "C" fn qgemm_kernel_is_available(
    kernel: qgemm_kernel,
    features: u32,
    out: *mut bool,
) -> qgemm_status {
    let available = with_kernel!(kernel, k => Ok(k.is_available(&self::features(features)?)));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(available, out) }
}

/// Writes the best kernel of `family` for `m` rows on a CPU with `features` to `*out`
/// (packing chosen by the library: pack both operands with the kernel's packing).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_select(family: u32, features: u32, m: usize, out: *mut qgemm_kernel) -> qgemm_status {
    let kernel = self::features(features).and_then(|cpu| match_family!(family, F => handle(F::select(&cpu, m))));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(kernel, out) }
}

/// Writes the best kernel of `family` for `m` rows on a CPU with `features` that consumes an RHS
/// already packed with `*rhs_packing` (its `nr`, `kr`, `sr`) to `*out`.
/// `QGEMM_ERROR_UNSUPPORTED` if no kernel of the family consumes that packing.
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
    rhs_packing: *const qgemm_packing,
    out: *mut qgemm_kernel,
) -> qgemm_status {
    let select = || {
        let cpu = self::features(features)?;
        // SAFETY: `rhs_packing` is null or valid for a read (this function's contract).
        let p = unsafe { packing_in(rhs_packing) }?;
        let none = qgemm_status::QGEMM_ERROR_UNSUPPORTED;
        match_family!(family, F => handle(qgemm::matmul::select_for::<F>(&cpu, m, &p).ok_or(none)?))
    };
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(select(), out) }
}

/// Writes to `*out`: bytes of the packed LHS for `m` rows of depth `k` (`bl`: block length of the per-block
/// families, 0 otherwise). A `k` or `bl` that `qgemm_kernel_run` rejects gets the same status here and in the
/// other size and offset queries of a kernel.
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
    let size = with_kernel!(kernel, kern => Ok(kern.lhs_packed_size(m, k, bl)?));
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
    let size = with_kernel!(kernel, kern => Ok(kern.rhs_packed_size(n, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
}

/// Writes to `*out`: byte offset in the packed LHS of the tile holding row `m_idx` (a multiple of `mr`).
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
    let offset = with_kernel!(kernel, kern => Ok(kern.lhs_packed_offset(m_idx, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(offset, out) }
}

/// Writes to `*out`: byte offset in the packed RHS of the tile holding channel `n_idx` (a multiple of `nr`).
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
    let offset = with_kernel!(kernel, kern => Ok(kern.rhs_packed_offset(n_idx, k, bl)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(offset, out) }
}

/// Writes to `*out`: element offset in `dst` of output `(m_idx, n_idx)` with rows `dst_stride_row` elements
/// apart (starts must be multiples of the kernel's steps).
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
    let offset = with_kernel!(kernel, kern => Ok(kern.dst_offset(m_idx, n_idx, dst_stride_row)?));
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
    let size = with_kernel!(kernel, kern => Ok(kern.dst_size(m, n)?));
    // SAFETY: `out` is null or valid for a write (this function's contract).
    unsafe { answer(size, out) }
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
}

/// The operands of a run: packed LHS and RHS (bytes) and the C output buffer of `T`.
struct RunBuffers<T> {
    lhs: (*const u8, usize),
    rhs: (*const u8, usize),
    dst: (*mut T, usize),
}

/// The body of `qgemm_kernel_run` and `qgemm_kernel_run_u16`: runs `kern` if its output
/// element type travels as `T`.
///
/// `F::Out` is the core's `Family::Dst` (the table's output column must name it), so the
/// f32 and the 16-bit rows run here alike.
///
/// # Safety
///
/// Each pointer of `bufs` is null or valid for the reads (`lhs`, `rhs`) or writes (`dst`) of
/// its length; `args` is null or valid for a read.
unsafe fn run<F: CFamily<Out = <F as Family>::Dst>, T: CElem>(
    kern: &Kernel<F>,
    features: u32,
    bufs: RunBuffers<T>,
    args: *const qgemm_matmul_args,
    lut: *const i32,
) -> Status {
    let dst = dst_as::<F::Dst, T>(bufs.dst.0)?;
    let cpu = self::features(features)?;
    // SAFETY: `args` is null or valid for a read (this function's contract).
    let a = unsafe { read_in(args) }?;
    let clamp = Clamp::new(a.clamp_min, a.clamp_max)?;
    // SAFETY: `lut` is null or valid for 4 reads (this function's contract).
    let (table, lut_span) = unsafe { lut_in(lut) }?;
    if table.is_some() && !F::TAKES_LUT {
        return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
    }
    let args = MatmulArgs::new(a.m, a.n, a.k)
        .with_block_len(a.bl)
        .with_rect(a.m_idx, a.n_idx, a.m, a.n)
        .with_dst_stride(a.dst_stride_row)
        .with_clamp(clamp)
        .with_lut(table.unwrap_or(qsu2cxp::DEFAULT_LUT));
    // SAFETY: `lhs` is null or valid for its length in reads (this function's contract).
    let (lhs, lhs_span) = unsafe { input(bufs.lhs.0, bufs.lhs.1) }?;
    // SAFETY: `rhs` is null or valid for its length in reads (this function's contract).
    let (rhs, rhs_span) = unsafe { input(bufs.rhs.0, bufs.rhs.1) }?;
    // SAFETY: `bufs.dst` is null or valid for writes of its length in `T` elements (this
    // function's contract); `dst_as` gave a pointer to `F::Out` only where `F::Out` has the
    // size and alignment of `T`, so the same memory is that many `F::Out` elements, and every
    // bit pattern the kernel stores is a valid `T` for the caller.
    let dst = unsafe { output(dst, bufs.dst.1, &[lhs_span, rhs_span, lut_span]) }?;
    kern.run(&cpu, lhs, rhs, dst, &args)?;
    Ok(())
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

/// Computes the rectangle `*args` describes with `kernel` on a CPU with `features`, for a
/// kernel whose output is f32 (the families without an `F16_`/`BF16_` prefix).
///
/// * `lhs_packed`, `lhs_packed_len` bytes: the whole packed LHS (row 0 onward).
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
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_kernel_run(
    kernel: qgemm_kernel,
    features: u32,
    lhs_packed: *const u8,
    lhs_packed_len: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut f32,
    dst_len: usize,
    args: *const qgemm_matmul_args,
) -> qgemm_status {
    let bufs = RunBuffers { lhs: (lhs_packed, lhs_packed_len), rhs: (rhs_packed, rhs_packed_len), dst: (dst, dst_len) };
    // SAFETY: the buffers and `args` as this function's contract says, which is `run`'s (no table).
    status(|| with_kernel!(kernel, k => unsafe { run(k, features, bufs, args, core::ptr::null()) }))
}

/// As `qgemm_kernel_run`, with the 2-bit weights' look-up table `lut` (4 `int32_t`, code `u`
/// stands for `lut[u]`; every entry in `[-64, 63]`, else `QGEMM_ERROR_LUT_OUT_OF_RANGE`) for a
/// kernel of `QGEMM_FAMILY_QAI8DXP_QSU2CXP`: pass the table given to `qgemm_rhs_qsu2cxp_pack`
/// (the packed weights keep the codes; the kernels apply the table). `lut = NULL` is the default
/// table `{-2, -1, 0, 1}`, as `qgemm_kernel_run` uses. A table for a kernel of a family without
/// one: `QGEMM_ERROR_INVALID_ARGUMENT`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs, 4 elements for `lut`), as the module conventions
/// say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_kernel_run_lut(
    kernel: qgemm_kernel,
    features: u32,
    lhs_packed: *const u8,
    lhs_packed_len: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut f32,
    dst_len: usize,
    args: *const qgemm_matmul_args,
    lut: *const i32,
) -> qgemm_status {
    let bufs = RunBuffers { lhs: (lhs_packed, lhs_packed_len), rhs: (rhs_packed, rhs_packed_len), dst: (dst, dst_len) };
    // SAFETY: the buffers, `args` and `lut` as this function's contract says, which is `run`'s.
    status(|| with_kernel!(kernel, k => unsafe { run(k, features, bufs, args, lut) }))
}

/// As `qgemm_kernel_run`, for a kernel whose output is f16 or bf16: `dst`, `dst_len`
/// `uint16_t` elements receive the values' bit patterns. A kernel with f32 output:
/// `QGEMM_ERROR_WRONG_DST_TYPE` (use `qgemm_kernel_run`). The 16-bit families:
/// `QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP`, `QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP`,
/// `QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P` (f16) and `QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP`,
/// `QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P` (bf16);
/// `args->clamp_min`/`clamp_max` stay f32 (the clamp is applied before the conversion).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qgemm_kernel_run_u16(
    kernel: qgemm_kernel,
    features: u32,
    lhs_packed: *const u8,
    lhs_packed_len: usize,
    rhs_packed: *const u8,
    rhs_packed_len: usize,
    dst: *mut u16,
    dst_len: usize,
    args: *const qgemm_matmul_args,
) -> qgemm_status {
    let bufs = RunBuffers { lhs: (lhs_packed, lhs_packed_len), rhs: (rhs_packed, rhs_packed_len), dst: (dst, dst_len) };
    // SAFETY: the buffers and `args` as this function's contract says, which is `run`'s (no table).
    status(|| with_kernel!(kernel, k => unsafe { run(k, features, bufs, args, core::ptr::null()) }))
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
///   the same table to the kernels (`qgemm_kernel_run_lut`, `qgemm_linear_set_lut`).
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

mod linear;
mod quant_method;
pub use linear::{qgemm_linear, qgemm_linear_call, qgemm_rect};

// ---- the float families -------------------------------------------------------------------

mod float;
pub use float::{
    qgemm_float_args, qgemm_float_kernel, qgemm_float_kernel_info, qgemm_float_linear, qgemm_float_linear_call,
};

// ---- weight quantization ------------------------------------------------------------------

mod quant;
pub use quant::{qgemm_quant_hessian, qgemm_weights};
