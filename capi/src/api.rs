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

use core::ffi::c_char;
use core::mem::size_of;

use half::bf16;
use qgemm::lhs::{qai8dxp, qsi8d32p};
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qsi4c32p, qsi4c32pscalef16, qsi4cxp};
use qgemm::{Clamp, CpuFeatures, Family, Kernel, MatmulArgs, Packing, Tier};

use crate::status::qgemm_status;

type Status<T = ()> = Result<T, qgemm_status>;

/// A buffer's byte range `[start, end)`, for the overlap checks.
type Span = (usize, usize);

/// Runs `body` and turns its result into a status.
fn status(body: impl FnOnce() -> Status) -> qgemm_status {
    match body() {
        Ok(()) => qgemm_status::QGEMM_OK,
        Err(s) => s,
    }
}

/// Writes `v` through `out`, or `QGEMM_ERROR_NULL_POINTER`.
///
/// # Safety
///
/// `out` is null or valid for a write of a `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, v: T) -> qgemm_status {
    if out.is_null() {
        return qgemm_status::QGEMM_ERROR_NULL_POINTER;
    }
    if !out.is_aligned() {
        return qgemm_status::QGEMM_ERROR_MISALIGNED_POINTER;
    }
    // SAFETY: the C caller passes a valid, writable pointer or null (checked above), aligned
    // (checked above).
    unsafe { out.write(v) };
    qgemm_status::QGEMM_OK
}

/// Reads `*p` (a caller struct), or `QGEMM_ERROR_NULL_POINTER`.
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
    // SAFETY: non-null and aligned; the C caller passes a readable struct.
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

/// `len` elements at `p` as a slice; null, misaligned and overflowing arguments are errors.
///
/// # Safety
///
/// `p` is null or valid for reads of `len` elements that nothing writes during the call.
unsafe fn input<'a, T>(p: *const T, len: usize) -> Status<&'a [T]> {
    span(p, len)?;
    // SAFETY: non-null, aligned, `len * size_of::<T>() <= isize::MAX` (checked by `span`); the
    // C caller guarantees `len` readable elements, not written during the call.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// `len` elements at `p` as a mutable slice, after checking it overlaps none of `inputs`
/// (byte ranges).
///
/// # Safety
///
/// `p` is null or valid for writes of `len` elements that nothing else accesses during the
/// call, except through `inputs`.
unsafe fn output<'a, T>(p: *mut T, len: usize, inputs: &[Span]) -> Status<&'a mut [T]> {
    let (start, end) = span(p, len)?;
    if inputs.iter().any(|&(s, e)| start < e && s < end) {
        return Err(qgemm_status::QGEMM_ERROR_BUFFERS_OVERLAP);
    }
    // SAFETY: non-null, aligned, in range (checked by `span`), disjoint from every input slice
    // of the call (checked above); the C caller guarantees `len` writable elements.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// The feature set of C bits.
fn features(bits: u32) -> Status<CpuFeatures> {
    crate::cpu::from_bits(bits).ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

// ---- families and kernels -----------------------------------------------------------------

/// `qai8dxp_qsi4cxp`: int4 weights with per-channel f32 scales × int8 per-row activations.
pub const QGEMM_FAMILY_QAI8DXP_QSI4CXP: u32 = 0;
/// `qai8dxp_qsi4c32p`: int4 weights with per-block bf16 scales × int8 per-row activations.
pub const QGEMM_FAMILY_QAI8DXP_QSI4C32P: u32 = 1;
/// `qsi8d32p_qsi4c32p`: GGML `Q4_0` weights × int8 per-block activations.
pub const QGEMM_FAMILY_QSI8D32P_QSI4C32P: u32 = 2;

/// Tier of a kernel: portable Rust.
pub const QGEMM_TIER_SCALAR: u32 = 0;
/// Tier of a kernel: NEON intrinsics (any ARMv8-A).
pub const QGEMM_TIER_NEON: u32 = 1;
/// Tier of a kernel: `SDOT` assembly (FEAT_DotProd).
pub const QGEMM_TIER_DOTPROD: u32 = 2;
/// Tier of a kernel: `SMMLA` assembly (FEAT_I8MM).
pub const QGEMM_TIER_I8MM: u32 = 3;

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
    /// Split ratio (2 for the int4 formats).
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

/// A kernel of one of the three families.
#[derive(Clone, Copy)]
enum AnyKernel {
    Cx(&'static Kernel<Qai8dxpQsi4cxp>),
    C32(&'static Kernel<Qai8dxpQsi4c32p>),
    D32(&'static Kernel<Qsi8d32pQsi4c32p>),
}

/// `$body` with `$k` bound to the concrete kernel of `$any`.
macro_rules! with_kernel {
    ($any:expr, $k:ident => $body:expr) => {
        match $any {
            AnyKernel::Cx($k) => $body,
            AnyKernel::C32($k) => $body,
            AnyKernel::D32($k) => $body,
        }
    };
}

fn catalogue_entry<F: Family>(index: u32) -> Status<&'static Kernel<F>> {
    F::kernels().get(index as usize).copied().ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)
}

fn resolve(k: qgemm_kernel) -> Status<AnyKernel> {
    Ok(match k.family {
        QGEMM_FAMILY_QAI8DXP_QSI4CXP => AnyKernel::Cx(catalogue_entry(k.index)?),
        QGEMM_FAMILY_QAI8DXP_QSI4C32P => AnyKernel::C32(catalogue_entry(k.index)?),
        QGEMM_FAMILY_QSI8D32P_QSI4C32P => AnyKernel::D32(catalogue_entry(k.index)?),
        _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    })
}

/// The handle of a catalogue kernel of family `F`.
fn handle<F: Family>(family: u32, kernel: &'static Kernel<F>) -> Status<qgemm_kernel> {
    let index = F::kernels().iter().position(|k| core::ptr::eq(*k, kernel));
    let index = index.ok_or(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT)?;
    Ok(qgemm_kernel { family, index: index as u32 })
}

fn family_len(family: u32) -> Status<usize> {
    Ok(match family {
        QGEMM_FAMILY_QAI8DXP_QSI4CXP => Qai8dxpQsi4cxp::kernels().len(),
        QGEMM_FAMILY_QAI8DXP_QSI4C32P => Qai8dxpQsi4c32p::kernels().len(),
        QGEMM_FAMILY_QSI8D32P_QSI4C32P => Qsi8d32pQsi4c32p::kernels().len(),
        _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    })
}

/// Writes `query(kernel)` through `out`: the shared body of the kernel size and offset queries.
///
/// # Safety
///
/// `out` is null or valid for a write.
unsafe fn kernel_query(
    kernel: qgemm_kernel,
    out: *mut usize,
    query: impl FnOnce(AnyKernel) -> qgemm::Result<usize>,
) -> qgemm_status {
    status(|| {
        let v = query(resolve(kernel)?)?;
        // SAFETY: forwarded from this function's contract.
        ok_status(unsafe { write_out(out, v) })
    })
}

/// Writes `query(packing)` through `out`: the shared body of the format size and offset
/// queries.
///
/// # Safety
///
/// `packing` is null or readable; `out` is null or valid for a write.
unsafe fn packing_query(
    packing: *const qgemm_packing,
    out: *mut usize,
    query: impl FnOnce(&Packing) -> qgemm::Result<usize>,
) -> qgemm_status {
    status(|| {
        // SAFETY: forwarded from this function's contract.
        let p: Packing = unsafe { read_in(packing)? }.into();
        let v = query(&p)?;
        // SAFETY: forwarded from this function's contract.
        ok_status(unsafe { write_out(out, v) })
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
    status(|| {
        let n = family_len(family)?;
        // SAFETY: `out` is null or writable (this function's contract).
        ok_status(unsafe { write_out(out, n) })
    })
}

/// Writes the handle of kernel `index` (`< qgemm_kernel_count`) of `family` to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_at(family: u32, index: usize, out: *mut qgemm_kernel) -> qgemm_status {
    status(|| {
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let len = family_len(family)?;
            if index >= len {
                return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT);
            }
            ok_status(write_out(out, qgemm_kernel { family, index: index as u32 }))
        }
    })
}

/// `Ok` for `QGEMM_OK`, else the status as an error (adapts [`write_out`] inside `status`).
fn ok_status(s: qgemm_status) -> Status {
    if s == qgemm_status::QGEMM_OK { Ok(()) } else { Err(s) }
}

fn tier_code(t: Tier) -> u32 {
    match t {
        Tier::Scalar => QGEMM_TIER_SCALAR,
        Tier::Neon => QGEMM_TIER_NEON,
        Tier::Dotprod => QGEMM_TIER_DOTPROD,
        Tier::I8mm => QGEMM_TIER_I8MM,
        // `Tier` is non-exhaustive; a future tier reports as the most capable one.
        _ => QGEMM_TIER_I8MM,
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

/// Writes what `kernel` is (name, tier, steps, packing) to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as the module conventions say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_kernel_get_info(kernel: qgemm_kernel, out: *mut qgemm_kernel_info) -> qgemm_status {
    status(|| {
        let any = resolve(kernel)?;
        // SAFETY: `out` is null or writable (this function's contract).
        ok_status(unsafe { write_out(out, with_kernel!(any, k => info_of(k))) })
    })
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
    status(|| {
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let any = resolve(kernel)?;
            let cpu = self::features(features)?;
            ok_status(write_out(out, with_kernel!(any, k => k.is_available(&cpu))))
        }
    })
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
    status(|| {
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let cpu = self::features(features)?;
            let h = match family {
                QGEMM_FAMILY_QAI8DXP_QSI4CXP => handle(family, qgemm::qai8dxp_qsi4cxp::select(&cpu, m))?,
                QGEMM_FAMILY_QAI8DXP_QSI4C32P => handle(family, qgemm::qai8dxp_qsi4c32p::select(&cpu, m))?,
                QGEMM_FAMILY_QSI8D32P_QSI4C32P => handle(family, qgemm::qsi8d32p_qsi4c32p::select(&cpu, m))?,
                _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
            };
            ok_status(write_out(out, h))
        }
    })
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
    status(|| {
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let cpu = self::features(features)?;
            let p: Packing = read_in(rhs_packing)?.into();
            let none = qgemm_status::QGEMM_ERROR_UNSUPPORTED;
            let h = match family {
                QGEMM_FAMILY_QAI8DXP_QSI4CXP => {
                    handle(family, qgemm::matmul::select_for::<Qai8dxpQsi4cxp>(&cpu, m, &p).ok_or(none)?)?
                }
                QGEMM_FAMILY_QAI8DXP_QSI4C32P => {
                    handle(family, qgemm::matmul::select_for::<Qai8dxpQsi4c32p>(&cpu, m, &p).ok_or(none)?)?
                }
                QGEMM_FAMILY_QSI8D32P_QSI4C32P => {
                    handle(family, qgemm::matmul::select_for::<Qsi8d32pQsi4c32p>(&cpu, m, &p).ok_or(none)?)?
                }
                _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
            };
            ok_status(write_out(out, h))
        }
    })
}

/// Writes to `*out`: bytes of the packed LHS for `m` rows of depth `k` (`bl`: block length of the per-block
/// families, 0 otherwise).
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
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { kernel_query(kernel, out, |any| with_kernel!(any, kern => kern.lhs_packed_size(m, k, bl))) }
}

/// Writes to `*out`: bytes of the packed RHS for `n` channels of depth `k`.
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
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { kernel_query(kernel, out, |any| with_kernel!(any, kern => kern.rhs_packed_size(n, k, bl))) }
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
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { kernel_query(kernel, out, |any| with_kernel!(any, kern => kern.lhs_packed_offset(m_idx, k, bl))) }
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
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { kernel_query(kernel, out, |any| with_kernel!(any, kern => kern.rhs_packed_offset(n_idx, k, bl))) }
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
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { kernel_query(kernel, out, |any| with_kernel!(any, kern => kern.dst_offset(m_idx, n_idx, dst_stride_row))) }
}

/// Writes the number of f32 elements of an `m x n` dense output to `*out`.
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
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { kernel_query(kernel, out, |any| with_kernel!(any, kern => kern.dst_size(m, n))) }
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
    /// Distance between output rows, in f32 elements (`>= n`).
    pub dst_stride_row: usize,
    /// Clamp lower bound (`-FLT_MAX` or `-INFINITY` for none).
    pub clamp_min: f32,
    /// Clamp upper bound.
    pub clamp_max: f32,
}

/// Computes the rectangle `*args` describes with `kernel` on a CPU with `features`.
///
/// * `lhs_packed`, `lhs_packed_len` bytes: the whole packed LHS (row 0 onward).
/// * `rhs_packed`, `rhs_packed_len` bytes: the whole packed RHS (channel 0 onward).
/// * `dst`, `dst_len` floats: starts at output element `(m_idx, n_idx)`
///   (`qgemm_kernel_dst_offset`) and holds `(m - 1) * dst_stride_row + n` elements. Exactly the
///   `m x n` rectangle is written.
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
    status(|| {
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let any = resolve(kernel)?;
            let cpu = self::features(features)?;
            let a = read_in(args)?;
            let clamp = Clamp::new(a.clamp_min, a.clamp_max)?;
            let args = MatmulArgs::new(a.m, a.n, a.k)
                .with_block_len(a.bl)
                .with_rect(a.m_idx, a.n_idx, a.m, a.n)
                .with_dst_stride(a.dst_stride_row)
                .with_clamp(clamp);
            let lhs = input(lhs_packed, lhs_packed_len)?;
            let rhs = input(rhs_packed, rhs_packed_len)?;
            let dst = output(dst, dst_len, &[span(lhs_packed, lhs_packed_len)?, span(rhs_packed, rhs_packed_len)?])?;
            with_kernel!(any, k => k.run(&cpu, lhs, rhs, dst, &args))?;
            Ok(())
        }
    })
}

// ---- LHS packers --------------------------------------------------------------------------

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
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let p: Packing = read_in(packing)?.into();
            let src = input(lhs, lhs_len)?;
            let out = output(lhs_packed, lhs_packed_len, &[span(lhs, lhs_len)?])?;
            Ok(qai8dxp::quantize_pack(&p, m, k, m_idx_start, src, lhs_stride, out)?)
        }
    })
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
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let p: Packing = read_in(packing)?.into();
            let src = input(lhs, lhs_len)?;
            let out = output(lhs_packed, lhs_packed_len, &[span(lhs, lhs_len)?])?;
            Ok(qsi8d32p::quantize_pack(&p, m, k, bl, m_idx_start, src, lhs_stride, out)?)
        }
    })
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

/// The Rust view of a C int4 source and its byte range.
///
/// # Safety
///
/// `src` is null or points at a readable struct whose `data` is null or valid for `len` reads.
unsafe fn int4_source<'a>(src: *const qgemm_int4_source) -> Status<(Int4Source<'a>, Span)> {
    // SAFETY: `src` is null or readable (this function's contract).
    let s = unsafe { read_in(src)? };
    let layout = match s.layout {
        QGEMM_LAYOUT_NXK => Layout::NxK,
        QGEMM_LAYOUT_KXN => Layout::KxN,
        _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    };
    let encoding = match s.encoding {
        QGEMM_INT4_SIGNED => Int4Encoding::Signed,
        QGEMM_INT4_ZERO_POINT_8 => Int4Encoding::ZeroPoint8,
        _ => return Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    };
    // SAFETY: `data` is null or valid for `len` reads (this function's contract).
    let data = unsafe { input(s.data, s.len)? };
    Ok((Int4Source { data, layout, stride: s.stride, encoding }, span(s.data, s.len)?))
}

/// An optional f32 slice: null means "none" (length ignored).
///
/// # Safety
///
/// As [`input`].
unsafe fn optional<'a>(p: *const f32, len: usize) -> Status<(Option<&'a [f32]>, Span)> {
    if p.is_null() {
        return Ok((None, (0, 0)));
    }
    // SAFETY: `p` is valid for `len` reads (this function's contract).
    Ok((Some(unsafe { input(p, len)? }), span(p, len)?))
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
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let p: Packing = read_in(packing)?.into();
            let (src, src_span) = int4_source(rhs)?;
            let scales = input(scale, scale_len)?;
            let (bias, bias_span) = optional(bias, bias_len)?;
            let inputs = [src_span, span(scale, scale_len)?, bias_span];
            let out = output(rhs_packed, rhs_packed_len, &inputs)?;
            Ok(qsi4cxp::pack(&p, n, k, &src, scales, bias, out)?)
        }
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
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let p: Packing = read_in(packing)?.into();
            let (src, src_span) = int4_source(rhs)?;
            let values: &[bf16] = input(scale.cast::<bf16>(), scale_len)?;
            let (bias, bias_span) = optional(bias, bias_len)?;
            let inputs = [src_span, span(scale, scale_len)?, bias_span];
            let out = output(rhs_packed, rhs_packed_len, &inputs)?;
            let scales = BlockScales { values, stride: scale_stride };
            Ok(qsi4c32p::pack(&p, n, k, bl, &src, &scales, bias, out)?)
        }
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
        // SAFETY: the pointers are forwarded under this function's contract (each null or valid
        // for its length), which is what `input`, `output`, `read_in` and `write_out` require.
        unsafe {
            let p: Packing = read_in(packing)?.into();
            let src = input(rhs, rhs_len)?;
            let out = output(rhs_packed, rhs_packed_len, &[span(rhs, rhs_len)?])?;
            Ok(qsi4c32pscalef16::pack(&p, n, k, bl, src, rhs_stride, out)?)
        }
    })
}
