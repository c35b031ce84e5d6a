//! Layer 2: KleidiAI's `kai_*` symbols for the families qgemm implements.
//!
//! Every KleidiAI kernel name keeps KleidiAI's getters (`m_step`, `n_step`, `mr`, `nr`, `kr`,
//! `sr`, the offsets and sizes) and runs the best qgemm kernel with the same packing
//! (`mr`, `nr`, `kr`, `sr`) that the CPU supports ([`crate::cpu::layer2`]). All tiers of a
//! packing give identical bits, so the result is KleidiAI's; a KleidiAI dotprod or i8mm name
//! called on a CPU without that extension runs a lower tier instead of faulting. A qgemm kernel
//! accepts any start on a packed tile boundary, so every KleidiAI `m_step` x `n_step` grid runs.
//!
//! KleidiAI's functions receive raw pointers without lengths: like KleidiAI, layer 2 trusts the
//! caller that each buffer holds what the arguments describe. Everything else KleidiAI asserts
//! (and leaves undefined in release builds) is checked, and a violation calls the error hook
//! ([`crate::hook`]) instead of computing. A parameter KleidiAI's code never reads (not even in
//! an assert) is ignored, whatever its value, as by KleidiAI (docs/c-api.md, "Parameters
//! KleidiAI does not read").

// `fail!(f, (), ...)` returns `()` from the void KleidiAI functions.
#![allow(clippy::unused_unit)]

use core::ffi::c_void;

use qgemm::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::rhs::{qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsi8cxp, qsu2cxp};
use qgemm::{Clamp, CpuFeatures, Family, Kernel, LhsFormat, Packing, RhsFormat, UncheckedArgs};

use crate::hook::{Arg, report};

/// `enum kai_datatype` value of bf16 (KleidiAI's `kai_dt_bf16`).
pub const KAI_DT_BF16: u32 = 0x0213;

/// `struct kai_rhs_pack_qs4cxs1s0_param`: also the parameter struct of
/// `rhs_pack_{nxk,kxn}_qsi4cxp_qs4cxs1s0`, `rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0`,
/// `rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon` and
/// `rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon`.
#[repr(C)]
pub struct kai_rhs_pack_qs4cxs1s0_param {
    /// Must be 1.
    pub lhs_zero_point: i8,
    /// 8: unsigned nibbles (value `u - 8`); 0: two's-complement nibbles; 2 for the 2-bit packer.
    pub rhs_zero_point: u8,
}

/// `struct kai_rhs_pack_{nxk,kxn}_qsi4c32p_qsu4c32s1s0_params`.
#[repr(C)]
pub struct kai_rhs_pack_qsi4c32p_qsu4c32s1s0_params {
    /// Must be 1.
    pub lhs_zero_point: i8,
    /// Must be 8.
    pub rhs_zero_point: u8,
    /// `enum kai_datatype` of the scales: must be `kai_dt_bf16`.
    pub scale_dt: u32,
}

/// `struct kai_rhs_pack_qsi8cx_params`: the parameter struct of
/// `rhs_pack_{nxk,kxn}_qsi8cxp_qsi8cx_neon`.
#[repr(C)]
pub struct kai_rhs_pack_qsi8cx_params {
    /// Must be 1 (KleidiAI multiplies the packed row sums by it; the `qai8dxp` LHS needs 1).
    pub lhs_zero_point: i32,
    /// Ignored, as by KleidiAI.
    pub scale_multiplier: f32,
}

/// Reports the reason `$template` with its `{}`s replaced by the `$arg`s (numbers, text, a
/// `qgemm::Error`: [`crate::hook::Arg`]; no `core::fmt`) for `$f` to the hook and returns `$ret`
/// (if a custom hook returns).
macro_rules! fail {
    ($f:expr, $ret:expr, $template:literal $(, $arg:expr)* $(,)?) => {{
        report($f, $template, &[$($crate::hook::Arg::from(&$arg)),*]);
        return $ret;
    }};
}

/// Unwraps a qgemm `Result`, or reports its error and returns `$ret`.
macro_rules! check {
    ($f:expr, $ret:expr, $e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => fail!($f, $ret, "{}", e),
        }
    };
}

/// The RHS-side packing of an RHS packer call (`mr` is not part of the RHS format).
const fn rhs_packing(nr: usize, kr: usize, sr: usize) -> Packing {
    Packing { mr: 1, nr, kr, sr }
}

/// The LHS-side packing of an LHS packer call (`nr` is not part of the LHS format).
const fn lhs_packing(mr: usize, kr: usize, sr: usize) -> Packing {
    Packing { mr, nr: 1, kr, sr }
}

/// `a * b` or the hook.
fn mul(f: &str, a: usize, b: usize) -> Option<usize> {
    let v = a.checked_mul(b);
    if v.is_none() {
        report(f, "{} * {} overflows size_t", &[Arg::from(&a), Arg::from(&b)]);
    }
    v
}

/// `a * b + c` elements of `size` bytes, or the hook and `None`: the count must not overflow
/// `size_t` and its bytes must fit an `isize` (the most a slice, hence any real buffer, holds).
/// The length of every strided raw buffer a packer views.
pub(crate) fn elements(f: &str, a: usize, b: usize, c: usize, size: usize) -> Option<usize> {
    let v = a.checked_mul(b).and_then(|v| v.checked_add(c));
    let v = v.filter(|&v| v.checked_mul(size).is_some_and(|bytes| bytes <= isize::MAX as usize));
    if v.is_none() {
        report(f, "a buffer size overflows (more than isize::MAX bytes)", &[]);
    }
    v
}

/// The formats of family `F`'s kernels (every layer-2 family has one LHS and one RHS format:
/// its first kernel's, and its preferred packing's).
pub(crate) fn formats<F: Family>() -> (LhsFormat, RhsFormat) {
    let lhs = F::kernels().first().map_or(LhsFormat::Qai8dxp, |d| d.shape().lhs);
    (lhs, F::PREFERRED_RHS.format)
}

/// The qgemm kernel a KleidiAI name runs for an `m`-row rectangle: the one selection policy
/// ([`qgemm::matmul::select_from`]) among the kernels of family `F` with exactly `packing` (both
/// sides) that `cpu` supports. Every candidate gives the same bits; the policy only picks the
/// tier and the tile.
pub(crate) fn kernel_for<F: Family>(packing: &Packing, cpu: &CpuFeatures, m: usize) -> Option<Kernel<F>> {
    let (lf, rf) = formats::<F>();
    qgemm::matmul::select_from(F::kernels(), cpu, m, Some(&packing.rhs(rf)), Some(&packing.lhs(lf)))
}

/// A KleidiAI matmul kernel name: its catalogue constants.
pub(crate) struct KaiKernel {
    pub(crate) m_step: usize,
    pub(crate) n_step: usize,
    pub(crate) packing: Packing,
    /// KleidiAI declares `m == 1` as a precondition of `run`.
    pub(crate) m_is_1: bool,
    /// Bytes of one output element (KleidiAI's `dst_stride_col`): 4 for `matmul_clamp_f32_*`,
    /// 2 for `matmul_clamp_f16_*` and `matmul_clamp_bf16_*`.
    pub(crate) dst_bytes: usize,
}

impl KaiKernel {
    fn dst_offset(&self, f: &str, m_idx: usize, n_idx: usize, dst_stride: usize) -> usize {
        if !m_idx.is_multiple_of(self.m_step) || !n_idx.is_multiple_of(self.n_step) {
            fail!(
                f,
                0,
                "(m_idx, n_idx) = ({}, {}) is not a multiple of (m_step, n_step) = ({}, {})",
                m_idx,
                n_idx,
                self.m_step,
                self.n_step
            );
        }
        let col = n_idx.checked_mul(self.dst_bytes);
        let v = m_idx.checked_mul(dst_stride).and_then(|r| col.and_then(|c| r.checked_add(c)));
        match v {
            Some(v) => v,
            None => fail!(f, 0, "the offset overflows size_t"),
        }
    }

    fn dst_size(&self, f: &str, m: usize, n: usize) -> usize {
        mul(f, m, n).and_then(|mn| mul(f, mn, self.dst_bytes)).unwrap_or(0)
    }

    /// `run_matmul`: checks what KleidiAI asserts, then runs the qgemm kernel of the packing.
    ///
    /// # Safety
    ///
    /// KleidiAI's contract for the buffers: `lhs` and `rhs` point at packed tiles of this
    /// packing, `k` and `bl` covering the `m x n` rectangle, and `dst` is writable for it with
    /// `dst_stride_row` bytes between rows, not overlapping the packed buffers; `lut` null (the
    /// default table) or readable for 4 `int32_t` (the 2-bit kernels' table; the other families
    /// pass null).
    #[allow(clippy::too_many_arguments)]
    unsafe fn run<F: Family<Params: crate::params::CParams>>(
        &self,
        f: &str,
        (m, n, k, bl): (usize, usize, usize, usize),
        lhs: *const c_void,
        rhs: *const c_void,
        dst: *mut F::Dst,
        (dst_stride_row, dst_stride_col): (usize, usize),
        (clamp_min, clamp_max): (f32, f32),
        lut: *const i32,
    ) {
        let e = self.dst_bytes;
        if m == 0 || n == 0 {
            return; // KleidiAI returns on m == 0; n == 0 is an empty rectangle too.
        }
        if self.m_is_1 && m != 1 {
            fail!(f, (), "m = {}: this kernel requires m == 1 (call it once per row)", m);
        }
        if lhs.is_null() || rhs.is_null() || dst.is_null() {
            fail!(f, (), "null pointer (lhs_packed, rhs_packed or dst)");
        }
        if dst_stride_col != e {
            fail!(f, (), "dst_stride_col = {}, must be the output element size, {}", dst_stride_col, e);
        }
        if !dst_stride_row.is_multiple_of(e) || n.checked_mul(e).is_none_or(|row| dst_stride_row < row) {
            fail!(
                f,
                (),
                "dst_stride_row = {} bytes: must be a multiple of {} and >= {} * n = {} * {}",
                dst_stride_row,
                e,
                e,
                e,
                n
            );
        }
        if !(dst as usize).is_multiple_of(e) {
            fail!(f, (), "dst is not {}-byte aligned", e);
        }
        let clamp = check!(f, (), Clamp::new(clamp_min, clamp_max));
        if k == 0 {
            fail!(f, (), "k = 0");
        }
        // The formats' checks of k and bl (bl % 32, k % bl, the 2-bit k % 32) and of the size
        // arithmetic.
        let (lf, rf) = formats::<F>();
        check!(f, (), self.packing.lhs(lf).tile_stride(k, bl));
        check!(f, (), self.packing.rhs(rf).tile_stride(k, bl));
        // The 2-bit family's table: KleidiAI's default for null; entries outside [-64, 63] (which
        // KleidiAI narrows to int8 silently) go to the hook.
        let lut = if lut.is_null() {
            None
        } else {
            // SAFETY: the caller's contract: a non-null `lut` points at 4 `int32_t` (read
            // unaligned: no alignment is assumed beyond KleidiAI's).
            let t = unsafe { [0, 1, 2, 3].map(|i| lut.add(i).read_unaligned()) };
            check!(f, (), qsu2cxp::check_lut(&t));
            Some(t)
        };
        // Only the 2-bit kernel names take a table (the others pass null).
        let Some(params) = <F::Params as crate::params::CParams>::from_c(lut, 0) else {
            fail!(f, (), "a look-up table for a family without one");
        };
        let cpu = crate::cpu::layer2();
        let Some(kernel) = kernel_for::<F>(&self.packing, &cpu, m) else {
            fail!(f, (), "no qgemm kernel for this packing on this CPU");
        };
        let args = UncheckedArgs {
            m,
            n,
            k,
            bl,
            lhs: lhs.cast(),
            rhs_packed: rhs.cast(),
            dst,
            dst_stride_row,
            clamp_min: clamp.min(),
            clamp_max: clamp.max(),
            params,
        };
        // SAFETY: the kernel was resolved for `cpu` (`kernel_for`); m, n, k >= 1 and bl were
        // validated by the formats; the clamp is valid; the stride is a multiple of the element
        // size and at least n elements; the buffers are the caller's contract (see `# Safety`),
        // which is `run_unchecked`'s for a kernel of exactly this packing.
        unsafe { kernel.run_unchecked(&args) }
    }
}

/// The arguments of [`KaiFns::run`]: a `kai_run_*` call's, `bl` and `lut` ignored by the kernels
/// that take none.
#[doc(hidden)] // for the fuzz target (fuzz/fuzz_targets/capi.rs) only: not API
#[derive(Clone, Copy)]
pub struct KaiRunArgs {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub bl: usize,
    pub lhs_packed: *const c_void,
    pub rhs_packed: *const c_void,
    pub dst: *mut c_void,
    pub dst_stride_row: usize,
    pub dst_stride_col: usize,
    pub scalar_min: f32,
    pub scalar_max: f32,
    pub lut: *const i32,
}

/// One KleidiAI matmul kernel name's `kai_*` functions, for iterating them (the fuzz target):
/// its name, the getters, the two offset getters over their arguments by name
/// (`lhs_args`, `rhs_args`: `m_idx`, `n_idx`, `k`, `bl`) and `kai_run_*` through
/// [`KaiRunArgs`]. `KERNELS` of each family module lists them.
#[doc(hidden)] // for the fuzz target only: not API
pub struct KaiFns {
    pub name: &'static str,
    pub getters: [extern "C-unwind" fn() -> usize; 6],
    pub lhs_args: &'static [&'static str],
    pub rhs_args: &'static [&'static str],
    pub lhs_packed_offset: fn(&[usize]) -> usize,
    pub rhs_packed_offset: fn(&[usize]) -> usize,
    pub dst_offset: extern "C-unwind" fn(usize, usize, usize) -> usize,
    pub dst_size: extern "C-unwind" fn(usize, usize) -> usize,
    /// # Safety
    ///
    /// The `kai_run_*` function's contract, on the pointers of the arguments.
    pub run: unsafe fn(&KaiRunArgs),
}

/// Defines the eleven `kai_*` functions of one KleidiAI matmul kernel name: one row of a
/// [`kai_family!`] table, with the family's parameter lists.
macro_rules! kai_kernel {
    (
        family: $fam:ty, dst: $dst:ty,
        lhs_offset($($lp:ident),*) => $lhs:path,
        rhs_offset($($rp:ident),*) => $rhs:path,
        run($m:ident, $n:ident, $k:ident $(, $bl:ident)? $(; $lut:ident)?),
        ($name:ident, $isa:ident, $ms:expr, $ns:expr, $mr:expr, $nr:expr, $kr:expr, $sr:expr $(, $m1:ident)?)
    ) => {
        paste::paste! {
            #[allow(non_upper_case_globals)]
            const [<SPEC_ $name>]: KaiKernel = KaiKernel {
                m_step: $ms,
                n_step: $ns,
                packing: Packing { mr: $mr, nr: $nr, kr: $kr, sr: $sr },
                m_is_1: kai_kernel!(@m1 $($m1)?),
                dst_bytes: core::mem::size_of::<$dst>(),
            };
            #[doc = concat!("KleidiAI `kai_get_m_step_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_m_step_ $name>]() -> usize { $ms }
            #[doc = concat!("KleidiAI `kai_get_n_step_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_n_step_ $name>]() -> usize { $ns }
            #[doc = concat!("KleidiAI `kai_get_mr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_mr_ $name>]() -> usize { $mr }
            #[doc = concat!("KleidiAI `kai_get_nr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_nr_ $name>]() -> usize { $nr }
            #[doc = concat!("KleidiAI `kai_get_kr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_kr_ $name>]() -> usize { $kr }
            #[doc = concat!("KleidiAI `kai_get_sr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_sr_ $name>]() -> usize { $sr }
            #[doc = concat!("KleidiAI `kai_get_lhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_offset_ $name>]($($lp: usize),*) -> usize {
                let f = stringify!([<kai_get_lhs_packed_offset_ $name>]);
                check!(f, 0, $lhs($($lp,)* &[<SPEC_ $name>].packing))
            }
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>]($($rp: usize),*) -> usize {
                let f = stringify!([<kai_get_rhs_packed_offset_ $name>]);
                check!(f, 0, $rhs($($rp,)* &[<SPEC_ $name>].packing))
            }
            #[doc = concat!("KleidiAI `kai_get_dst_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_dst_offset_ $name>](m_idx: usize, n_idx: usize, dst_stride: usize) -> usize {
                [<SPEC_ $name>].dst_offset(stringify!([<kai_get_dst_offset_ $name>]), m_idx, n_idx, dst_stride)
            }
            #[doc = concat!("KleidiAI `kai_get_dst_size_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_dst_size_ $name>](m: usize, n: usize) -> usize {
                [<SPEC_ $name>].dst_size(stringify!([<kai_get_dst_size_ $name>]), m, n)
            }
            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `lhs_packed` and `rhs_packed` point at the packed tiles of the
            /// rectangle's first row and column (this kernel's packing, this `k` and `bl`), and
            /// `dst` is writable for `m` rows of `n` elements, `dst_stride_row` bytes apart.
            #[unsafe(no_mangle)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                $m: usize, $n: usize, $k: usize, $($bl: usize,)? lhs_packed: *const c_void, rhs_packed: *const c_void,
                dst: *mut $dst, dst_stride_row: usize, dst_stride_col: usize, scalar_min: f32, scalar_max: f32,
                $($lut: *const i32,)?
            ) {
                // SAFETY: forwarded from the caller's contract (see `# Safety`; the 2-bit kernels'
                // `lut` is null or points at 4 `int32_t`).
                unsafe {
                    [<SPEC_ $name>].run::<$fam>(stringify!([<kai_run_ $name>]), ($m, $n, $k, kai_kernel!(@bl $($bl)?)),
                        lhs_packed, rhs_packed, dst, (dst_stride_row, dst_stride_col), (scalar_min, scalar_max),
                        kai_kernel!(@lut $($lut)?))
                }
            }
            #[allow(non_upper_case_globals)]
            #[doc(hidden)]
            pub const [<FNS_ $name>]: KaiFns = KaiFns {
                name: stringify!($name),
                getters: [[<kai_get_m_step_ $name>], [<kai_get_n_step_ $name>], [<kai_get_mr_ $name>],
                    [<kai_get_nr_ $name>], [<kai_get_kr_ $name>], [<kai_get_sr_ $name>]],
                lhs_args: &[$(stringify!($lp)),*],
                rhs_args: &[$(stringify!($rp)),*],
                lhs_packed_offset: |a| match *a {
                    [$($lp),*] => [<kai_get_lhs_packed_offset_ $name>]($($lp),*),
                    _ => 0,
                },
                rhs_packed_offset: |a| match *a {
                    [$($rp),*] => [<kai_get_rhs_packed_offset_ $name>]($($rp),*),
                    _ => 0,
                },
                dst_offset: [<kai_get_dst_offset_ $name>],
                dst_size: [<kai_get_dst_size_ $name>],
                run: |a| {
                    let ($m, $n, $k) = (a.m, a.n, a.k);
                    $(let $bl = a.bl;)?
                    $(let $lut = a.lut;)?
                    // SAFETY: the caller's contract (`KaiFns::run`) is `kai_run_*`'s.
                    unsafe {
                        [<kai_run_ $name>]($m, $n, $k, $($bl,)? a.lhs_packed, a.rhs_packed, a.dst.cast(),
                            a.dst_stride_row, a.dst_stride_col, a.scalar_min, a.scalar_max, $($lut)?)
                    }
                },
            };
        }
    };
    // The `KaiFns` of a table row.
    (@fns ($name:ident, $($rest:tt)*)) => {
        paste::paste! { [<FNS_ $name>] }
    };
    // `bl` of a `run` call: the argument, or 0 for a family without blocks.
    (@bl $bl:ident) => { $bl };
    (@bl) => { 0 };
    // `lut` of a `run` call: the argument of the 2-bit kernels, or null (the default table).
    (@lut $lut:ident) => { $lut };
    (@lut) => { core::ptr::null() };
    (@m1 m_is_1) => { true };
    (@m1) => { false };
}

/// One KleidiAI matmul family (`matmul_clamp_<dst>_<lhs>_<rhs>`): its qgemm family type, its
/// output element type, the packers whose offsets its getters return and the parameter lists
/// that differ between families; then one row per KleidiAI kernel: name, ISA (documentation
/// only: the CPU decides the tier), `m_step, n_step`, `mr, nr, kr, sr`, and `m_is_1` where
/// KleidiAI requires `m == 1`. Adding a kernel is a row; the C declarations are data of
/// `capi/gen_kai_headers.py`.
macro_rules! kai_family {
    (
        $(#[$doc:meta])*
        pub mod $module:ident {
            family: $fam:ty, dst: $dst:ty,
            lhs_offset $lp:tt => $lhs:path,
            rhs_offset $rp:tt => $rhs:path,
            run $run:tt,
            kernels: [$($row:tt),* $(,)?]
        }
    ) => {
        $(#[$doc])*
        pub mod $module {
            use super::*;
            $(
                kai_kernel!(family: $fam, dst: $dst, lhs_offset $lp => $lhs, rhs_offset $rp => $rhs, run $run, $row);
            )*

            /// Every kernel name of the family (for the fuzz target).
            #[doc(hidden)]
            pub const KERNELS: &[KaiFns] = &[$(kai_kernel!(@fns $row)),*];
        }
    };
}

kai_family! {
    /// `matmul_clamp_f32_qai8dxp_qsi4cxp`.
    pub mod qai8dxp_qsi4cxp {
        family: qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp, dst: f32,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k) => qsi4cxp::packed_offset,
        run(m, n, k),
        kernels: [
            (matmul_clamp_f32_qai8dxp1x4_qsi4cxp4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 2),
            (matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod, dotprod, 1, 8, 1, 8, 16, 2),
            (matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_8x8x32_neon_dotprod, dotprod, 8, 8, 4, 8, 8, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x4_16x4x32_neon_dotprod, dotprod, 16, 4, 4, 4, 8, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm, i8mm, 4, 4, 4, 4, 16, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_8x4x32_neon_i8mm, i8mm, 8, 4, 4, 4, 16, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8x32_neon_i8mm, i8mm, 4, 8, 4, 8, 16, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_8x8x32_neon_i8mm, i8mm, 8, 8, 4, 8, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f32_qai8dxp_qsi4c32p`.
    pub mod qai8dxp_qsi4c32p {
        family: qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p, dst: f32,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k, bl) => qsi4c32p::packed_offset,
        run(m, n, k, bl),
        kernels: [
            (matmul_clamp_f32_qai8dxp1x4_qsi4c32p4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 2),
            (matmul_clamp_f32_qai8dxp1x4_qsi4c32p8x4_1x8_neon_dotprod, dotprod, 1, 8, 1, 8, 8, 2),
            (matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_f32_qai8dxp1x8_qsi4c32p8x8_1x8_neon_dotprod, dotprod, 1, 8, 1, 8, 16, 2),
            (matmul_clamp_f32_qai8dxp1x8_qsi4c32p8x8_1x8x32_neon_dotprod, dotprod, 1, 8, 1, 8, 16, 2),
            (matmul_clamp_f32_qai8dxp4x4_qsi4c32p4x4_16x4_neon_dotprod, dotprod, 16, 4, 4, 4, 8, 2),
            (matmul_clamp_f32_qai8dxp4x4_qsi4c32p8x4_4x8_neon_dotprod, dotprod, 4, 8, 4, 8, 8, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_16x4x32_neon_i8mm, i8mm, 16, 4, 4, 4, 16, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_8x4x32_neon_i8mm, i8mm, 8, 4, 4, 4, 16, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4c32p8x8_4x8_neon_i8mm, i8mm, 4, 8, 4, 8, 16, 2),
            (matmul_clamp_f32_qai8dxp4x8_qsi4c32p8x8_4x8x32_neon_i8mm, i8mm, 4, 8, 4, 8, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f32_qsi8d32p_qsi4c32p`.
    pub mod qsi8d32p_qsi4c32p {
        family: qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p, dst: f32,
        lhs_offset(m_idx, k, bl) => qsi8d32p::packed_offset,
        rhs_offset(n_idx, k, bl) => qsi4c32pscalef16::packed_offset,
        run(m, n, k, bl),
        kernels: [
            (matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 2, m_is_1),
            (matmul_clamp_f32_qsi8d32p1x8_qsi4c32p4x8_1x4x32_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_f32_qsi8d32p4x4_qsi4c32p4x4_16x4_neon_dotprod, dotprod, 16, 4, 4, 4, 8, 2),
            (matmul_clamp_f32_qsi8d32p4x8_qsi4c32p4x8_16x4_neon_i8mm, i8mm, 16, 4, 4, 4, 16, 2),
            (matmul_clamp_f32_qsi8d32p4x8_qsi4c32p4x8_8x4x32_neon_i8mm, i8mm, 8, 4, 4, 4, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f32_qai8dxp_qsi8cxp`.
    pub mod qai8dxp_qsi8cxp {
        family: qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp, dst: f32,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k) => qsi8cxp::packed_offset,
        run(m, n, k),
        kernels: [
            (matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 4, 1),
            (matmul_clamp_f32_qai8dxp1x8_qsi8cxp4x8_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 1),
            (matmul_clamp_f32_qai8dxp4x4_qsi8cxp4x4_16x4_neon_dotprod, dotprod, 16, 4, 4, 4, 4, 1),
            (matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm, i8mm, 16, 4, 4, 4, 8, 1),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f16_qai8dxp_qsi4cxp`: f16 in and out.
    pub mod f16_qai8dxp_qsi4cxp {
        family: qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp, dst: half::f16,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k) => qsi4cxp::packed_offset,
        run(m, n, k),
        kernels: [
            (matmul_clamp_f16_qai8dxp1x4_qsi4cxp4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 2),
            (matmul_clamp_f16_qai8dxp1x8_qsi4cxp4x8_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_f16_qai8dxp4x4_qsi4cxp4x4_16x4_neon_dotprod, dotprod, 16, 4, 4, 4, 8, 2),
            (matmul_clamp_f16_qai8dxp4x8_qsi4cxp4x8_16x4_neon_i8mm, i8mm, 16, 4, 4, 4, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f16_qai8dxp_qsi8cxp`: f16 in and out.
    pub mod f16_qai8dxp_qsi8cxp {
        family: qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp, dst: half::f16,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k) => qsi8cxp::packed_offset,
        run(m, n, k),
        kernels: [
            (matmul_clamp_f16_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 4, 1),
            (matmul_clamp_f16_qai8dxp1x8_qsi8cxp4x8_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 1),
            (matmul_clamp_f16_qai8dxp4x4_qsi8cxp4x4_16x4_neon_dotprod, dotprod, 16, 4, 4, 4, 4, 1),
            (matmul_clamp_f16_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm, i8mm, 16, 4, 4, 4, 8, 1),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_bf16_qai8dxp_qsi4cxp`: bf16 in and out.
    pub mod bf16_qai8dxp_qsi4cxp {
        family: qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp, dst: half::bf16,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k) => qsi4cxp::packed_offset,
        run(m, n, k),
        kernels: [
            (matmul_clamp_bf16_qai8dxp1x8_qsi4cxp8x8_1x8_neon_dotprod, dotprod, 1, 8, 1, 8, 16, 2),
            (matmul_clamp_bf16_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm, i8mm, 8, 8, 4, 8, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_bf16_qai8dxp_qsi4c32p`: bf16 in and out.
    pub mod bf16_qai8dxp_qsi4c32p {
        family: qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p, dst: half::bf16,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k, bl) => qsi4c32p::packed_offset,
        run(m, n, k, bl),
        kernels: [
            (matmul_clamp_bf16_qai8dxp1x8_qsi4c32p4x8_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_bf16_qai8dxp4x8_qsi4c32p4x8_16x4_neon_i8mm, i8mm, 16, 4, 4, 4, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f32_qsi8d32p_qai4c32p`. KleidiAI's two GEMV kernels declare `m == 1` and
    /// write only row 0 of a call with `m > 1`; these compute every row (no `m_is_1`).
    pub mod qsi8d32p_qai4c32p {
        family: qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p, dst: f32,
        lhs_offset(m_idx, k, bl) => qsi8d32pscalef32::packed_offset,
        rhs_offset(n_idx, k, bl) => qai4c32p::packed_offset,
        run(m, n, k, bl),
        kernels: [
            (matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 2),
            (matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_f32_qsi8d32p4x4_qai4c32p4x4_8x4_neon_dotprod, dotprod, 8, 4, 4, 4, 8, 2),
            (matmul_clamp_f32_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm, i8mm, 8, 4, 4, 4, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f16_qsi8d32p_qai4c32p`: f16 in and out.
    pub mod f16_qsi8d32p_qai4c32p {
        family: qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p, dst: half::f16,
        lhs_offset(m_idx, k, bl) => qsi8d32pscalef32::packed_offset,
        rhs_offset(n_idx, k, bl) => qai4c32p::packed_offset,
        run(m, n, k, bl),
        kernels: [
            (matmul_clamp_f16_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 8, 2),
            (matmul_clamp_f16_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 16, 2),
            (matmul_clamp_f16_qsi8d32p4x4_qai4c32p4x4_8x4_neon_dotprod, dotprod, 8, 4, 4, 4, 8, 2),
            (matmul_clamp_f16_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm, i8mm, 8, 4, 4, 4, 16, 2),
        ]
    }
}

kai_family! {
    /// `matmul_clamp_f32_qai8dxp_qsu2cxp`: 2-bit weight codes through a look-up table
    /// (`run_matmul` takes `const int32_t* lut`, null for KleidiAI's default `{-2, -1, 0, 1}`).
    /// KleidiAI's GEMV kernel declares `m == 1` and writes only row 0 of a call with `m > 1`; this
    /// one computes every row (no `m_is_1`).
    pub mod qai8dxp_qsu2cxp {
        family: qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp, dst: f32,
        lhs_offset(m_idx, k) => qai8dxp::packed_offset,
        rhs_offset(n_idx, k) => qsu2cxp::packed_offset,
        run(m, n, k; lut),
        kernels: [
            (matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod, dotprod, 1, 4, 1, 4, 4, 1),
            (matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod, dotprod, 8, 4, 4, 4, 4, 1),
        ]
    }
}

pub mod pack;

pub mod float;
