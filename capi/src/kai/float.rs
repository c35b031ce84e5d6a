//! KleidiAI's float families (`matmul_clamp_f32_f32_f32p`, `matmul_clamp_f16_f16_f16p`,
//! `matmul_clamp_f32_bf16p_bf16p`, `matmul_clamp_f16_bf16p_bf16p`) and their packers, over
//! qgemm's float kernels (`qgemm::float`) and packers (`qgemm::rhs::{f32p, f16p, bf16p12}`,
//! `qgemm::lhs::bf16p`).
//!
//! A KleidiAI kernel name runs the best qgemm kernel of its family that reads the same packed
//! formats and that the CPU supports; every format pair has a scalar kernel with the same bits,
//! so a FEAT_FP16 or FEAT_BF16 name runs (slower) on a CPU without the feature instead of
//! faulting. Two KleidiAI contracts are widened (docs/c-api.md): the 1x36 BFDOT kernel and the
//! `bf16p1x4` LHS packer accept any `m` and process every row (KleidiAI's process row 0 only).
//! Padding bytes KleidiAI leaves unwritten or fills with a register's leftover are written 0.

// `fail!(f, (), ...)` returns `()` from the void KleidiAI functions.
#![allow(clippy::unused_unit)]

use core::ffi::c_void;
use core::slice;

use half::f16;
use qgemm::lhs::bf16p::{self, BF16P1X4, BF16P8X4};
use qgemm::rhs::bf16p12::{self, BF16P12_B16, BF16P12_B32};
use qgemm::rhs::f16p::{self, F16P16, F16P32};
use qgemm::rhs::f32p::{self, F32P8, F32P16};
use qgemm::rhs::{FloatSource, Layout};
use qgemm::{Clamp, Element, Family, LhsPacking, Packing, RhsPacking, UncheckedArgs};

use super::pack::{KaiPackArgs, KaiPackFns};
use super::{KaiKernel, elements, mul};
use crate::hook::report;
use crate::params::CParams;

/// A KleidiAI float kernel name: its catalogue constants and the formats it reads.
pub(crate) struct KaiFloat {
    /// Steps, element size of the output (the getters shared with the quantized families).
    base: KaiKernel,
    /// The packed LHS layout, `None` for the kernels that read f32/f16 rows.
    lhs: Option<LhsPacking>,
    /// The packed RHS layout.
    rhs: RhsPacking,
    /// Whether KleidiAI's `run_matmul` asserts `dst_stride_col` (most names; those it never
    /// reads ignore it here too).
    checks_dst_stride_col: bool,
}

impl KaiFloat {
    const fn new(
        (m_step, n_step): (usize, usize),
        lhs: Option<LhsPacking>,
        rhs: RhsPacking,
        dst_bytes: usize,
        checks_dst_stride_col: bool,
    ) -> Self {
        let mr = match lhs {
            Some(l) => l.mr,
            None => 1,
        };
        KaiFloat {
            base: KaiKernel {
                m_step,
                n_step,
                packing: Packing { mr, nr: rhs.nr, kr: rhs.kr, sr: 1 },
                m_is_1: false,
                dst_bytes,
            },
            lhs,
            rhs,
            checks_dst_stride_col,
        }
    }

    /// `get_lhs_offset(m_idx, lhs_stride)` of an unpacked-LHS kernel: `m_idx * lhs_stride`,
    /// `m_idx` a multiple of `m_step`.
    fn lhs_offset(&self, f: &str, m_idx: usize, lhs_stride: usize) -> usize {
        if !m_idx.is_multiple_of(self.base.m_step) {
            fail!(f, 0, "m_idx = {} is not a multiple of m_step = {}", m_idx, self.base.m_step);
        }
        mul(f, m_idx, lhs_stride).unwrap_or(0)
    }

    /// `get_lhs_packed_offset(m_idx, k)` of a packed-LHS kernel: the tile holding row `m_idx`
    /// (any row for the one-row tiles of `bf16p1x4`, where KleidiAI allows only 0).
    fn lhs_packed_offset(&self, f: &str, m_idx: usize, k: usize) -> usize {
        let Some(l) = self.lhs else { fail!(f, 0, "this kernel reads the LHS unpacked") };
        if !m_idx.is_multiple_of(self.base.m_step) {
            fail!(f, 0, "m_idx = {} is not a multiple of m_step = {}", m_idx, self.base.m_step);
        }
        check!(f, 0, l.packed_offset(m_idx, k, 0))
    }

    /// `get_rhs_packed_offset(n_idx, k)`: the tile holding column `n_idx` (a multiple of `nr`).
    fn rhs_packed_offset(&self, f: &str, n_idx: usize, k: usize) -> usize {
        check!(f, 0, self.rhs.packed_offset(n_idx, k, 0))
    }

    /// `run_matmul`: checks what KleidiAI asserts, then runs the qgemm kernel of the formats.
    ///
    /// # Safety
    ///
    /// KleidiAI's contract for the buffers: an unpacked `lhs` holds `m` rows of `k` elements
    /// `lhs_stride` bytes apart, a packed one the tiles of the `m` rows; `rhs` the packed tiles of
    /// the `n` columns for this `k`; `dst` is writable for `m` rows of `n` elements
    /// `dst_stride_row` bytes apart and overlaps neither input.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run<F: Family<Params: CParams>>(
        &self,
        f: &str,
        (m, n, k): (usize, usize, usize),
        (lhs, lhs_stride): (*const c_void, usize),
        rhs: *const c_void,
        dst: *mut c_void,
        (dst_stride_row, dst_stride_col): (usize, usize),
        (clamp_min, clamp_max): (f32, f32),
    ) {
        let e = self.base.dst_bytes;
        if m == 0 || n == 0 {
            return; // KleidiAI returns on m == 0; n == 0 is an empty rectangle too.
        }
        if lhs.is_null() || rhs.is_null() || dst.is_null() {
            fail!(f, (), "null pointer (lhs, rhs_packed or dst)");
        }
        if self.checks_dst_stride_col && dst_stride_col != e {
            fail!(f, (), "dst_stride_col = {}, must be the output element size, {}", dst_stride_col, e);
        }
        // One row: the row strides are not read (KleidiAI's 1x36 kernel ignores `dst_stride_row`,
        // the unpacked ones only use both to step to the next row).
        let Some(row_bytes) = n.checked_mul(e) else { fail!(f, (), "n * {} overflows size_t", e) };
        let dst_stride_row = if m == 1 {
            row_bytes
        } else {
            if !dst_stride_row.is_multiple_of(e) || dst_stride_row < row_bytes {
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
            dst_stride_row
        };
        if !(dst as usize).is_multiple_of(e) {
            fail!(f, (), "dst is not {}-byte aligned", e);
        }
        let clamp = check!(f, (), Clamp::new(clamp_min, clamp_max));
        if k == 0 {
            fail!(f, (), "k = 0");
        }
        check!(f, (), self.rhs.tile_stride(k, 0));
        // The row families' stride in elements (their `LhsStride`); 0 (unused) for a packed LHS.
        let lhs_stride_row = match self.lhs {
            Some(l) => {
                check!(f, (), l.tile_stride(k, 0));
                0
            }
            None => {
                let le = core::mem::size_of::<F::Lhs>();
                if !(lhs as usize).is_multiple_of(le) {
                    fail!(f, (), "the lhs address must be a multiple of {}", le);
                }
                if m == 1 {
                    // Not read (there is no next row): a dense row's.
                    if k.checked_mul(le).is_none() {
                        fail!(f, (), "k * {} overflows size_t", le);
                    }
                    k
                } else {
                    // KleidiAI accepts any stride (rows may overlap); only its alignment matters.
                    if !lhs_stride.is_multiple_of(le) {
                        fail!(f, (), "lhs_stride = {} must be a multiple of {}", lhs_stride, le);
                    }
                    lhs_stride / le
                }
            }
        };
        let Some(params) = F::Params::from_c(None, lhs_stride_row) else {
            fail!(f, (), "no parameters for this family");
        };
        let cpu = crate::cpu::layer2();
        // The one selection policy, among the kernels reading exactly these layouts.
        let Some(kernel) = qgemm::matmul::select_from(F::kernels(), &cpu, m, Some(&self.rhs), self.lhs.as_ref()) else {
            fail!(f, (), "no qgemm kernel for these formats on this CPU");
        };
        let args = UncheckedArgs {
            m,
            n,
            k,
            bl: 0,
            lhs: lhs.cast::<u8>(),
            rhs_packed: rhs.cast::<u8>(),
            dst: dst.cast::<F::Dst>(),
            dst_stride_row,
            clamp_min: clamp.min(),
            clamp_max: clamp.max(),
            params,
        };
        // SAFETY: the kernel was resolved for `cpu` (`select_from`); m, n, k >= 1; the clamp is
        // a valid `Clamp`; the output stride is a multiple of the element size and at least n
        // elements, `dst` aligned to it; an unpacked LHS's stride is whole elements and its
        // address aligned for the element; the buffers are the caller's contract (see
        // `# Safety`), which is `run_unchecked`'s for a kernel of exactly these layouts.
        unsafe { kernel.run_unchecked(&args) }
    }
}

/// The arguments of a float `kai_run_*` call, for [`KaiFloatFns::run`]: `lhs` is the LHS rows
/// (`lhs_stride` bytes apart) of an unpacked-LHS kernel, the packed LHS of a packed one.
#[doc(hidden)] // for the fuzz target (fuzz/fuzz_targets/capi/kai.rs) only: not API
#[derive(Clone, Copy)]
pub struct KaiFloatRunArgs {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lhs: *const c_void,
    pub lhs_stride: usize,
    pub rhs_packed: *const c_void,
    pub dst: *mut c_void,
    pub dst_stride_row: usize,
    pub dst_stride_col: usize,
    pub clamp_min: f32,
    pub clamp_max: f32,
}

/// One KleidiAI float kernel name's `kai_*` functions, for iterating them (the fuzz target):
/// the getters (`m_step`, `n_step`, `nr`, `kr`, `sr`; `mr` and `get_lhs_packed_offset` of a
/// packed-LHS kernel, `get_lhs_offset` of an unpacked one), the element sizes of the LHS rows
/// and of `dst`, and `kai_run_*` through [`KaiFloatRunArgs`]. `KERNELS` of each float family
/// module lists them.
#[doc(hidden)] // for the fuzz target only: not API
pub struct KaiFloatFns {
    pub name: &'static str,
    pub getters: [extern "C-unwind" fn() -> usize; 5],
    pub mr: Option<extern "C-unwind" fn() -> usize>,
    pub lhs_offset: Option<extern "C-unwind" fn(usize, usize) -> usize>,
    pub lhs_packed_offset: Option<extern "C-unwind" fn(usize, usize) -> usize>,
    pub rhs_packed_offset: extern "C-unwind" fn(usize, usize) -> usize,
    pub dst_offset: extern "C-unwind" fn(usize, usize, usize) -> usize,
    pub dst_size: extern "C-unwind" fn(usize, usize) -> usize,
    /// Bytes of one LHS row element of an unpacked-LHS kernel (f32: 4, f16: 2).
    pub lhs_bytes: usize,
    pub dst_bytes: usize,
    /// # Safety
    ///
    /// The `kai_run_*` function's contract, on the pointers of the arguments.
    pub run: unsafe fn(&KaiFloatRunArgs),
}

/// The `kai_*` functions of one KleidiAI float kernel name: a row of [`kai_float_family!`].
macro_rules! kai_float_kernel {
    // The getters every kernel has.
    (@common $name:ident, $ms:expr, $ns:expr, $lhs:expr, $rhs:expr, $dst:ty $(, $ignores:ident)?) => {
        paste::paste! {
            #[allow(non_upper_case_globals)]
            const [<SPEC_ $name>]: KaiFloat =
                KaiFloat::new(($ms, $ns), $lhs, $rhs, core::mem::size_of::<$dst>(), kai_float_kernel!(@checks $($ignores)?));
            #[doc = concat!("KleidiAI `kai_get_m_step_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_m_step_ $name>]() -> usize { $ms }
            #[doc = concat!("KleidiAI `kai_get_n_step_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_n_step_ $name>]() -> usize { $ns }
            #[doc = concat!("KleidiAI `kai_get_nr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_nr_ $name>]() -> usize { $rhs.nr }
            #[doc = concat!("KleidiAI `kai_get_kr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_kr_ $name>]() -> usize { $rhs.kr }
            #[doc = concat!("KleidiAI `kai_get_sr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_sr_ $name>]() -> usize { 1 }
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](n_idx: usize, k: usize) -> usize {
                [<SPEC_ $name>].rhs_packed_offset(stringify!([<kai_get_rhs_packed_offset_ $name>]), n_idx, k)
            }
            #[doc = concat!("KleidiAI `kai_get_dst_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_dst_offset_ $name>](m_idx: usize, n_idx: usize, dst_stride: usize) -> usize {
                [<SPEC_ $name>].base.dst_offset(stringify!([<kai_get_dst_offset_ $name>]), m_idx, n_idx, dst_stride)
            }
            #[doc = concat!("KleidiAI `kai_get_dst_size_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_dst_size_ $name>](m: usize, n: usize) -> usize {
                [<SPEC_ $name>].base.dst_size(stringify!([<kai_get_dst_size_ $name>]), m, n)
            }
        }
    };
    // `dst_stride_col` checked, or not read (`ignores_dst_stride_col`, where KleidiAI ignores it).
    (@checks ignores_dst_stride_col) => { false };
    (@checks) => { true };
    // A kernel that reads f32/f16 rows: `get_lhs_offset`, `run_matmul(..., lhs, lhs_stride, ...)`.
    (unpacked, $fam:ty, $dst:ty, ($name:ident, $ms:expr, $ns:expr, $rhs:expr $(, $ignores:ident)?)) => {
        kai_float_kernel!(@common $name, $ms, $ns, None, $rhs, $dst $(, $ignores)?);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_lhs_offset_", stringify!($name), "`: `m_idx * stride`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_offset_ $name>](m_idx: usize, stride: usize) -> usize {
                [<SPEC_ $name>].lhs_offset(stringify!([<kai_get_lhs_offset_ $name>]), m_idx, stride)
            }
            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `lhs` holds `m` rows of `k` elements `lhs_stride` bytes apart,
            /// `rhs_packed` the packed tiles of the `n` columns (this `k`), and `dst` is writable for
            /// `m` rows of `n` elements, `dst_stride_row` bytes apart.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                m: usize, n: usize, k: usize, lhs: *const c_void, lhs_stride: usize, rhs_packed: *const c_void,
                dst: *mut c_void, dst_stride_row: usize, dst_stride_col: usize, clamp_min: f32, clamp_max: f32,
            ) {
                // SAFETY: forwarded from the caller's contract (see `# Safety`).
                unsafe {
                    [<SPEC_ $name>].run::<$fam>(stringify!([<kai_run_ $name>]), (m, n, k), (lhs, lhs_stride),
                        rhs_packed, dst, (dst_stride_row, dst_stride_col), (clamp_min, clamp_max))
                }
            }
            #[allow(non_upper_case_globals)]
            #[doc(hidden)]
            pub const [<FNS_ $name>]: KaiFloatFns = KaiFloatFns {
                lhs_offset: Some([<kai_get_lhs_offset_ $name>]),
                lhs_packed_offset: None,
                mr: None,
                lhs_bytes: core::mem::size_of::<<$fam as Family>::Lhs>(),
                run: |a| {
                    // SAFETY: the caller's contract (`KaiFloatFns::run`) is `kai_run_*`'s.
                    unsafe {
                        [<kai_run_ $name>](a.m, a.n, a.k, a.lhs, a.lhs_stride, a.rhs_packed, a.dst,
                            a.dst_stride_row, a.dst_stride_col, a.clamp_min, a.clamp_max)
                    }
                },
                ..kai_float_kernel!(@fns_common $name, $dst)
            };
        }
    };
    // A kernel on a packed bf16 LHS: `get_mr`, `get_lhs_packed_offset`, `run_matmul(..., lhs_packed, ...)`.
    (packed, $fam:ty, $dst:ty, ($name:ident, $ms:expr, $ns:expr, $lhs:expr, $rhs:expr $(, $ignores:ident)?)) => {
        kai_float_kernel!(@common $name, $ms, $ns, Some($lhs), $rhs, $dst $(, $ignores)?);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_mr_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_mr_ $name>]() -> usize { $lhs.mr }
            #[doc = concat!("KleidiAI `kai_get_lhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_offset_ $name>](m_idx: usize, k: usize) -> usize {
                [<SPEC_ $name>].lhs_packed_offset(stringify!([<kai_get_lhs_packed_offset_ $name>]), m_idx, k)
            }
            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `lhs_packed` holds the packed tiles of the `m` rows and
            /// `rhs_packed` those of the `n` columns (this `k`), and `dst` is writable for `m` rows
            /// of `n` elements, `dst_stride_row` bytes apart.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                m: usize, n: usize, k: usize, lhs_packed: *const c_void, rhs_packed: *const c_void,
                dst: *mut c_void, dst_stride_row: usize, dst_stride_col: usize, clamp_min: f32, clamp_max: f32,
            ) {
                // SAFETY: forwarded from the caller's contract (see `# Safety`).
                unsafe {
                    [<SPEC_ $name>].run::<$fam>(stringify!([<kai_run_ $name>]), (m, n, k), (lhs_packed, 0),
                        rhs_packed, dst, (dst_stride_row, dst_stride_col), (clamp_min, clamp_max))
                }
            }
            #[allow(non_upper_case_globals)]
            #[doc(hidden)]
            pub const [<FNS_ $name>]: KaiFloatFns = KaiFloatFns {
                lhs_offset: None,
                lhs_packed_offset: Some([<kai_get_lhs_packed_offset_ $name>]),
                mr: Some([<kai_get_mr_ $name>]),
                lhs_bytes: 2,
                run: |a| {
                    // SAFETY: the caller's contract (`KaiFloatFns::run`) is `kai_run_*`'s.
                    unsafe {
                        [<kai_run_ $name>](a.m, a.n, a.k, a.lhs, a.rhs_packed, a.dst, a.dst_stride_row,
                            a.dst_stride_col, a.clamp_min, a.clamp_max)
                    }
                },
                ..kai_float_kernel!(@fns_common $name, $dst)
            };
        }
    };
    // The fields of a row's `KaiFloatFns` both kinds share (a value to complete, never used alone).
    (@fns_common $name:ident, $dst:ty) => {
        paste::paste! {
            KaiFloatFns {
                name: stringify!($name),
                getters: [[<kai_get_m_step_ $name>], [<kai_get_n_step_ $name>], [<kai_get_nr_ $name>],
                    [<kai_get_kr_ $name>], [<kai_get_sr_ $name>]],
                mr: None,
                lhs_offset: None,
                lhs_packed_offset: None,
                rhs_packed_offset: [<kai_get_rhs_packed_offset_ $name>],
                dst_offset: [<kai_get_dst_offset_ $name>],
                dst_size: [<kai_get_dst_size_ $name>],
                lhs_bytes: 0,
                dst_bytes: core::mem::size_of::<$dst>(),
                run: |_| {},
            }
        }
    };
    // The `KaiFloatFns` of a table row.
    (@fns ($name:ident, $($rest:tt)*)) => {
        paste::paste! { [<FNS_ $name>] }
    };
}

/// One KleidiAI float family: its qgemm family type, output element type, whether its kernels
/// read the LHS `unpacked` or `packed`, and one row per KleidiAI kernel: name, `m_step`,
/// `n_step`, [the packed LHS format,] the packed RHS format[, `ignores_dst_stride_col` where
/// KleidiAI's `run_matmul` never reads `dst_stride_col`]. The C declarations are data of
/// `capi/gen_kai_headers.py`.
macro_rules! kai_float_family {
    (
        $(#[$doc:meta])*
        pub mod $module:ident {
            family: $fam:ty, dst: $dst:ty, $kind:ident,
            kernels: [$($row:tt),* $(,)?]
        }
    ) => {
        $(#[$doc])*
        pub mod $module {
            use super::*;
            $(
                kai_float_kernel!($kind, $fam, $dst, $row);
            )*

            /// Every kernel name of the family (for the fuzz target).
            #[doc(hidden)]
            pub const KERNELS: &[KaiFloatFns] = &[$(kai_float_kernel!(@fns $row)),*];
        }
    };
}

kai_float_family! {
    /// `matmul_clamp_f32_f32_f32p`: f32 rows x packed f32 weights with f32 bias.
    pub mod f32_f32_f32p {
        family: qgemm::f32_f32_f32p::F32F32F32p, dst: f32, unpacked,
        kernels: [
            (matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla, 6, 16, F32P16, ignores_dst_stride_col),
            (matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla_cortexa55, 6, 16, F32P16, ignores_dst_stride_col),
            (matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla, 6, 8, F32P8),
        ]
    }
}

kai_float_family! {
    /// `matmul_clamp_f16_f16_f16p`: f16 rows x packed f16 weights with f16 bias (FEAT_FP16 names;
    /// a CPU without it runs the scalar kernel, same bits).
    pub mod f16_f16_f16p {
        family: qgemm::f16_f16_f16p::F16F16F16p, dst: f16, unpacked,
        kernels: [
            (matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla, 6, 32, F16P32, ignores_dst_stride_col),
            (matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla_cortexa55, 6, 32, F16P32, ignores_dst_stride_col),
            (matmul_clamp_f16_f16_f16p16x1biasf16_6x16x8_neon_mla, 6, 16, F16P16),
        ]
    }
}

kai_float_family! {
    /// `matmul_clamp_f32_bf16p_bf16p`: bf16 LHS x bf16 weights with f32 bias, f32 output. The 1x36
    /// BFDOT kernel computes every row of any `m` (KleidiAI's writes row 0 only).
    pub mod f32_bf16p_bf16p {
        family: qgemm::f32_bf16p_bf16p::F32Bf16pBf16p, dst: f32, packed,
        kernels: [
            (matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot, 1, 36, BF16P1X4, BF16P12_B32, ignores_dst_stride_col),
            (matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla, 8, 12, BF16P8X4, BF16P12_B32),
        ]
    }
}

kai_float_family! {
    /// `matmul_clamp_f16_bf16p_bf16p`: bf16 LHS x bf16 weights with f16 bias, f16 output.
    pub mod f16_bf16p_bf16p {
        family: qgemm::f16_bf16p_bf16p::F16Bf16pBf16p, dst: f16, packed,
        kernels: [
            (matmul_clamp_f16_bf16p8x4_bf16p12x4b_8x12_neon_mmla, 8, 12, BF16P8X4, BF16P12_B16),
        ]
    }
}

// ---- packers ------------------------------------------------------------------------------

/// `get_rhs_packed_stride(k)` of the NxK copy packers: bytes of one packed column (bias and `k`
/// values), KleidiAI's value; the other packers' is the tile's.
fn column_stride(f: &str, fmt: &RhsPacking, k: usize) -> usize {
    check!(f, 0, fmt.tile_stride(k, 0)) / fmt.nr
}

/// The checks KleidiAI asserts on `nr, kr, sr` of a packer call, or the hook.
fn check_nr_kr(f: &str, fmt: &RhsPacking, nr: usize, kr: usize) -> Option<()> {
    if nr != fmt.nr || kr != fmt.kr {
        fail!(f, None, "(nr, kr) = ({}, {}): this packer's are ({}, {})", nr, kr, fmt.nr, fmt.kr);
    }
    Some(())
}

/// `get_rhs_offset(n_idx)` of a KxN packer: `n_idx * esz`, `n_idx` a multiple of `nr`; of an
/// NxK packer `n_idx * rhs_stride`.
fn raw_offset(f: &str, fmt: &RhsPacking, n_idx: usize, per_column: usize) -> usize {
    if !n_idx.is_multiple_of(fmt.nr) {
        fail!(f, 0, "n_idx = {} is not a multiple of nr = {}", n_idx, fmt.nr);
    }
    mul(f, n_idx, per_column).unwrap_or(0)
}

/// A qgemm float RHS packer: `(n, k, source, bias, out)`.
type FloatPack<T, B> = fn(usize, usize, &FloatSource<'_, T>, Option<&[B]>, &mut [u8]) -> qgemm::Result<()>;

/// The body of every float RHS packer's `run`: checks KleidiAI's assertions and the strides,
/// builds the slices KleidiAI's contract implies, and runs `pack`.
///
/// # Safety
///
/// KleidiAI's contract: `rhs` holds the raw weights (`layout`, `rhs_stride` bytes per row), `bias`
/// is null or holds `n` values of `B`, `rhs_packed` is writable for `get_rhs_packed_size(n, k)`
/// bytes.
#[allow(clippy::too_many_arguments)]
unsafe fn rhs_pack<T: Element, B: Element>(
    f: &str,
    fmt: &RhsPacking,
    layout: Layout,
    bias_required: bool,
    (num_groups, n, k, nr, kr, sr): (usize, usize, usize, usize, usize, usize),
    (rhs_stride, rhs, bias): (usize, *const c_void, *const c_void),
    (scale, rhs_packed, extra_bytes, params): (*const c_void, *mut c_void, usize, *const c_void),
    pack: FloatPack<T, B>,
) {
    if num_groups != 1 || extra_bytes != 0 {
        fail!(f, (), "num_groups = {}, extra_bytes = {}: must be 1 and 0", num_groups, extra_bytes);
    }
    let Some(()) = check_nr_kr(f, fmt, nr, kr) else { return };
    if sr != 1 {
        fail!(f, (), "sr = {}, must be 1", sr);
    }
    if !scale.is_null() || !params.is_null() {
        fail!(f, (), "scale and params must be NULL");
    }
    if rhs.is_null() || rhs_packed.is_null() {
        fail!(f, (), "rhs or rhs_packed is null");
    }
    if bias_required && bias.is_null() {
        fail!(f, (), "bias is null: this packer requires a bias");
    }
    let size = check!(f, (), fmt.packed_size(n, k, 0));
    if n == 0 {
        fail!(f, (), "n = 0: must be at least 1");
    }
    let (e, be) = (T::SIZE, B::SIZE);
    if !rhs_stride.is_multiple_of(e) || !(rhs as usize).is_multiple_of(e) || !(bias as usize).is_multiple_of(be) {
        fail!(f, (), "rhs_stride and the rhs address must be multiples of {}, the bias address of {}", e, be);
    }
    let (rows, row) = match layout {
        Layout::NxK => (n, k),
        Layout::KxN => (k, n),
    };
    let stride = rhs_stride / e;
    if stride < row {
        fail!(f, (), "rhs_stride = {} bytes is less than a row of {} values of {} bytes", rhs_stride, row, e);
    }
    let Some(len) = elements(f, rows - 1, stride, row, e) else { return };
    let Some(_) = elements(f, n, 1, 0, be).and(elements(f, size, 1, 0, 1)) else { return };
    // SAFETY: the caller's contract: `rows` rows of `row` values, `stride` values apart; the
    // address is aligned for `T` (checked above); `len * e` bytes fit an `isize` (`elements`).
    let data = unsafe { slice::from_raw_parts(rhs.cast::<T>(), len) };
    let src = FloatSource { data, layout, stride };
    // SAFETY: the caller's contract: null or `n` values of `B`; aligned (checked above); `n * be`
    // bytes fit an `isize` (`elements`).
    let bias = (!bias.is_null()).then(|| unsafe { slice::from_raw_parts(bias.cast::<B>(), n) });
    // SAFETY: the caller's contract: the packed size, whose bytes fit an `isize` (`elements`).
    let out = unsafe { slice::from_raw_parts_mut(rhs_packed.cast::<u8>(), size) };
    check!(f, (), pack(n, k, &src, bias, out));
}

/// The body of every float LHS packer's `run`.
///
/// # Safety
///
/// KleidiAI's contract: `lhs` holds `m` rows of `k` values of `T`, `lhs_stride` bytes apart
/// (unused when `m == 1`), `lhs_packed` is writable for `get_lhs_packed_size(m, k, ...)` bytes.
#[allow(clippy::too_many_arguments)]
unsafe fn lhs_pack<T: Element>(
    f: &str,
    fmt: &LhsPacking,
    (m, k, mr, kr, sr, m_idx_start): (usize, usize, usize, usize, usize, usize),
    lhs: *const c_void,
    lhs_stride: usize,
    lhs_packed: *mut c_void,
) {
    if m == 0 {
        return;
    }
    let Some(()) = check_lhs_params(f, fmt, mr, kr, sr) else { return };
    if m_idx_start != 0 {
        fail!(f, (), "m_idx_start = {}, must be 0 (pass lhs and lhs_packed at the first row's offsets)", m_idx_start);
    }
    if lhs.is_null() || lhs_packed.is_null() {
        fail!(f, (), "lhs or lhs_packed is null");
    }
    let size = check!(f, (), fmt.packed_size(m, k, 0));
    let e = T::SIZE;
    if !(lhs as usize).is_multiple_of(e) {
        fail!(f, (), "the lhs address must be a multiple of {}", e);
    }
    // One row: the stride is not read (KleidiAI's 1x4 packer ignores it).
    let stride = if m == 1 {
        k
    } else {
        if !lhs_stride.is_multiple_of(e) || lhs_stride / e < k {
            fail!(
                f,
                (),
                "lhs_stride = {} bytes: must be a multiple of {} and >= {} * k = {} * {}",
                lhs_stride,
                e,
                e,
                e,
                k
            );
        }
        lhs_stride / e
    };
    let Some(len) = elements(f, m - 1, stride, k, e) else { return };
    let Some(_) = elements(f, size, 1, 0, 1) else { return };
    // SAFETY: the caller's contract: `m` rows of `k` values, `stride` values apart; aligned;
    // `len * e` bytes fit an `isize` (`elements`).
    let rows = unsafe { slice::from_raw_parts(lhs.cast::<T>(), len) };
    // SAFETY: the caller's contract: the packed size, whose bytes fit an `isize` (`elements`).
    let out = unsafe { slice::from_raw_parts_mut(lhs_packed.cast::<u8>(), size) };
    check!(f, (), bf16p::pack(fmt, m, k, rows, stride, out));
}

/// `mr`, `kr`, `sr` of an LHS packer call against the format's (KleidiAI asserts them).
fn check_lhs_params(f: &str, fmt: &LhsPacking, mr: usize, kr: usize, sr: usize) -> Option<()> {
    if mr != fmt.mr || kr != fmt.kr || sr != fmt.sr {
        fail!(f, None, "(mr, kr, sr) = ({}, {}, {}): this packer's are ({}, 4, 1)", mr, kr, sr, fmt.mr);
    }
    Some(())
}

/// The `kai_*` functions of one KleidiAI float packer.
macro_rules! kai_float_packer {
    // RHS: `get_n_step`, `get_rhs_offset`, `get_bias_offset`, [`get_rhs_packed_stride`],
    // `get_rhs_packed_offset`, `get_rhs_packed_size`, `run`.
    (rhs $name:ident: $t:ty, $b:ty, $fmt:expr, $layout:ident, stride $stride:ident, bias $bias:ident, sizes $sizes:ident, $pack:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_n_step_", stringify!($name), "`: `nr`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_n_step_ $name>]() -> usize {
                $fmt.nr
            }

            #[doc = concat!("KleidiAI `kai_get_bias_offset_", stringify!($name), "`: `n_idx` biases.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_bias_offset_ $name>](n_idx: usize) -> usize {
                mul(stringify!([<kai_get_bias_offset_ $name>]), n_idx, core::mem::size_of::<$b>()).unwrap_or(0)
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` columns (raw rows `rhs_stride` bytes apart) and their bias; `scale` and `params` must be NULL.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds the raw weights (NxK: `n` rows of `k` values; KxN: `k`
            /// rows of `n`), `bias` null (where allowed) or `n` values, `rhs_packed`
            /// `get_rhs_packed_size(n, k)` bytes.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                rhs_stride: usize,
                rhs: *const c_void,
                bias: *const c_void,
                scale: *const c_void,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const c_void,
            ) {
                // SAFETY: forwarded from the caller's contract.
                unsafe {
                    rhs_pack::<$t, $b>(
                        stringify!([<kai_run_ $name>]),
                        &$fmt,
                        Layout::$layout,
                        kai_float_packer!(@required $bias),
                        (num_groups, n, k, nr, kr, sr),
                        (rhs_stride, rhs, bias),
                        (scale, rhs_packed, extra_bytes, params),
                        $pack,
                    )
                }
            }

            #[allow(non_upper_case_globals)]
            #[doc(hidden)]
            pub const [<PKFNS_ $name>]: KaiPackFns = KaiPackFns {
                name: stringify!($name),
                format: "float_rhs",
                layout: stringify!($layout),
                elem: core::mem::size_of::<$t>(),
                bias_elem: core::mem::size_of::<$b>(),
                step: Some(|_| [<kai_get_n_step_ $name>]()),
                src_offset: [<PK_SRC_ $name>],
                bias_offset: Some(|a| [<kai_get_bias_offset_ $name>](a.idx)),
                packed_stride: [<PK_STRIDE_ $name>],
                packed_offset: [<PK_OFF_ $name>],
                packed_size: [<PK_SIZE_ $name>],
                run: |a| {
                    // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                    unsafe {
                        [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.src_stride, a.src, a.bias,
                            a.scale, a.packed, a.extra_bytes, a.params)
                    }
                },
            };
        }
        kai_float_packer!(@raw $name, $t, $fmt, $layout);
        kai_float_packer!(@stride $stride, $name, $fmt);
        kai_float_packer!(@sizes $sizes, $name, $fmt);
    };
    (@required required) => { true };
    (@required optional) => { false };
    (@raw $name:ident, $t:ty, $fmt:expr, KxN) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_offset_", stringify!($name), "`: `n_idx` elements into a raw row (`n_idx` a multiple of `nr`).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_offset_ $name>](n_idx: usize) -> usize {
                raw_offset(stringify!([<kai_get_rhs_offset_ $name>]), &$fmt, n_idx, core::mem::size_of::<$t>())
            }

            #[allow(non_upper_case_globals)]
            const [<PK_SRC_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_rhs_offset_ $name>](a.idx);
        }
    };
    (@raw $name:ident, $t:ty, $fmt:expr, NxK) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_offset_", stringify!($name), "`: `n_idx * rhs_stride` (`n_idx` a multiple of `nr`).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_offset_ $name>](n_idx: usize, rhs_stride: usize) -> usize {
                raw_offset(stringify!([<kai_get_rhs_offset_ $name>]), &$fmt, n_idx, rhs_stride)
            }

            #[allow(non_upper_case_globals)]
            const [<PK_SRC_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_rhs_offset_ $name>](a.idx, a.src_stride);
        }
    };
    (@stride none, $name:ident, $fmt:expr) => {
        paste::paste! {
            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> = None;
        }
    };
    (@stride tile, $name:ident, $fmt:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_stride_", stringify!($name), "`: bytes of one packed tile.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_stride_ $name>](k: usize) -> usize {
                check!(stringify!([<kai_get_rhs_packed_stride_ $name>]), 0, $fmt.tile_stride(k, 0))
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> =
                Some(|a| [<kai_get_rhs_packed_stride_ $name>](a.k));
        }
    };
    (@stride column, $name:ident, $fmt:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_stride_", stringify!($name), "`: bytes of one packed **column** (bias and values; KleidiAI's value for this packer).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_stride_ $name>](k: usize) -> usize {
                column_stride(stringify!([<kai_get_rhs_packed_stride_ $name>]), &$fmt, k)
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> =
                Some(|a| [<kai_get_rhs_packed_stride_ $name>](a.k));
        }
    };
    (@sizes plain, $name:ident, $fmt:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](n_idx: usize, k: usize) -> usize {
                check!(stringify!([<kai_get_rhs_packed_offset_ $name>]), 0, $fmt.packed_offset(n_idx, k, 0))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_size_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_size_ $name>](n: usize, k: usize) -> usize {
                check!(stringify!([<kai_get_rhs_packed_size_ $name>]), 0, $fmt.packed_size(n, k, 0))
            }

            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_rhs_packed_offset_ $name>](a.idx, a.k);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_rhs_packed_size_ $name>](a.n, a.k);
        }
    };
    (@sizes nr_kr, $name:ident, $fmt:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "`: `nr` and `kr` must be the packer's.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](n_idx: usize, k: usize, nr: usize, kr: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_offset_ $name>]);
                let Some(()) = check_nr_kr(f, &$fmt, nr, kr) else { return 0 };
                check!(f, 0, $fmt.packed_offset(n_idx, k, 0))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_size_", stringify!($name), "`: `nr` and `kr` must be the packer's.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_size_ $name>](n: usize, k: usize, nr: usize, kr: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_size_ $name>]);
                let Some(()) = check_nr_kr(f, &$fmt, nr, kr) else { return 0 };
                check!(f, 0, $fmt.packed_size(n, k, 0))
            }

            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_offset_ $name>](a.idx, a.k, a.nr, a.kr);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_rhs_packed_size_ $name>](a.n, a.k, a.nr, a.kr);
        }
    };
    // LHS: `get_m_step`, `get_lhs_offset`, `get_lhs_packed_offset`, `get_lhs_packed_size`, `run`.
    (lhs $name:ident: $t:ty, $fmt:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_m_step_", stringify!($name), "`: `mr` (must be the packer's).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_m_step_ $name>](mr: usize) -> usize {
                if mr != $fmt.mr {
                    fail!(stringify!([<kai_get_m_step_ $name>]), 0, "mr = {mr}, this packer's is {}", $fmt.mr);
                }
                mr
            }

            #[doc = concat!("KleidiAI `kai_get_lhs_offset_", stringify!($name), "`: `m_idx * lhs_stride`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_offset_ $name>](m_idx: usize, lhs_stride: usize) -> usize {
                mul(stringify!([<kai_get_lhs_offset_ $name>]), m_idx, lhs_stride).unwrap_or(0)
            }

            #[doc = concat!("KleidiAI `kai_get_lhs_packed_offset_", stringify!($name), "`: the tile holding row `m_idx` (a multiple of `mr`).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_offset_ $name>](m_idx: usize, k: usize, mr: usize, kr: usize, sr: usize) -> usize {
                let f = stringify!([<kai_get_lhs_packed_offset_ $name>]);
                let Some(()) = check_lhs_params(f, &$fmt, mr, kr, sr) else { return 0 };
                check!(f, 0, $fmt.packed_offset(m_idx, k, 0))
            }

            #[doc = concat!("KleidiAI `kai_get_lhs_packed_size_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_size_ $name>](m: usize, k: usize, mr: usize, kr: usize, sr: usize) -> usize {
                let f = stringify!([<kai_get_lhs_packed_size_ $name>]);
                let Some(()) = check_lhs_params(f, &$fmt, mr, kr, sr) else { return 0 };
                check!(f, 0, $fmt.packed_size(m, k, 0))
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: converts `m` rows to bf16 and packs them; `m_idx_start` must be 0 (to pack rows from `m0`, pass `lhs` + `get_lhs_offset(m0)` and `lhs_packed` + `get_lhs_packed_offset(m0)`).")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `lhs` holds `m` rows of `k` values `lhs_stride` bytes apart
            /// (`lhs_stride` unused for one row) and `lhs_packed` `get_lhs_packed_size(m, ...)` bytes.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                m: usize,
                k: usize,
                mr: usize,
                kr: usize,
                sr: usize,
                m_idx_start: usize,
                lhs: *const c_void,
                lhs_stride: usize,
                lhs_packed: *mut c_void,
            ) {
                // SAFETY: forwarded from the caller's contract.
                unsafe {
                    lhs_pack::<$t>(stringify!([<kai_run_ $name>]), &$fmt, (m, k, mr, kr, sr, m_idx_start), lhs,
                        lhs_stride, lhs_packed)
                }
            }

            #[allow(non_upper_case_globals)]
            #[doc(hidden)]
            pub const [<PKFNS_ $name>]: KaiPackFns = KaiPackFns {
                name: stringify!($name),
                format: "float_lhs",
                layout: "",
                elem: core::mem::size_of::<$t>(),
                bias_elem: 0,
                step: Some(|a| [<kai_get_m_step_ $name>](a.mr)),
                src_offset: |a| [<kai_get_lhs_offset_ $name>](a.idx, a.src_stride),
                bias_offset: None,
                packed_stride: None,
                packed_offset: |a| [<kai_get_lhs_packed_offset_ $name>](a.idx, a.k, a.mr, a.kr, a.sr),
                packed_size: |a| [<kai_get_lhs_packed_size_ $name>](a.m, a.k, a.mr, a.kr, a.sr),
                run: |a| {
                    // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                    unsafe {
                        [<kai_run_ $name>](a.m, a.k, a.mr, a.kr, a.sr, a.m_idx_start, a.src, a.src_stride, a.packed)
                    }
                },
            };
        }
    };
}

/// The float packers, one row each (a [`kai_float_packer!`] call), and their table.
macro_rules! kai_float_packers {
    ($(($($row:tt)*);)*) => {
        $(kai_float_packer!($($row)*);)*

        /// Every float packer name (for the fuzz target).
        #[doc(hidden)]
        pub const PACKERS: &[KaiPackFns] = &[$(kai_float_packers!(@fns $($row)*)),*];
    };
    (@fns $kind:ident $name:ident: $($rest:tt)*) => {
        paste::paste! { [<PKFNS_ $name>] }
    };
}

kai_float_packers! {
    (rhs rhs_pack_kxn_x32p16x1b_x32_x32_neon: f32, f32, F32P16, KxN, stride tile, bias optional,
        sizes plain, |n, k, s, b, o| f32p::pack(&F32P16, n, k, s, b, o));
    (rhs rhs_pack_nxk_x32p16x1bx32_x32_x32_neon: f32, f32, F32P16, NxK, stride column, bias optional,
        sizes plain, |n, k, s, b, o| f32p::pack(&F32P16, n, k, s, b, o));
    (rhs rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon: f32, f32, F32P8, KxN, stride none, bias required,
        sizes plain, |n, k, s, b, o| f32p::pack(&F32P8, n, k, s, b, o));
    (rhs rhs_pack_kxn_x16p32x1b_x16_x16_neon: f16, f16, F16P32, KxN, stride tile, bias optional,
        sizes plain, |n, k, s, b, o| f16p::pack(&F16P32, n, k, s, b, o));
    (rhs rhs_pack_nxk_x16p32x1bx16_x16_x16_neon: f16, f16, F16P32, NxK, stride column, bias optional,
        sizes plain, |n, k, s, b, o| f16p::pack(&F16P32, n, k, s, b, o));
    (rhs rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon: f16, f16, F16P16, KxN, stride none, bias required,
        sizes plain, |n, k, s, b, o| f16p::pack(&F16P16, n, k, s, b, o));
    (rhs rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon: f32, f32, BF16P12_B32, KxN, stride none,
        bias optional, sizes nr_kr, bf16p12::pack_b32::<f32>);
    (rhs rhs_pack_kxn_bf16p12x4biasf32_f16_neon: f16, f32, BF16P12_B32, KxN, stride none,
        bias optional, sizes plain, bf16p12::pack_b32::<f16>);
    (rhs rhs_pack_kxn_bf16p12x4biasf16_f16_neon: f16, f16, BF16P12_B16, KxN, stride tile,
        bias optional, sizes plain, bf16p12::pack_b16);
    (lhs lhs_quant_pack_bf16p1x4_f32_neon: f32, BF16P1X4);
    (lhs lhs_quant_pack_bf16p8x4_f32_neon: f32, BF16P8X4);
    (lhs lhs_pack_bf16p8x4_f16_neon: f16, BF16P8X4);
}
