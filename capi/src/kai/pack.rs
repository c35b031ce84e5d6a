//! KleidiAI's packers: `lhs_quant_pack_*` and `rhs_pack_*`, over qgemm's checked packers.
//!
//! A packer call builds slices of exactly the lengths KleidiAI's contract implies from the
//! arguments, then runs the qgemm packer, which validates everything else (packing
//! parameters, `bl`, finiteness of every input value) before its first write. A rejected call
//! goes to the error hook.
//!
//! The packers are the rows of the [`kai_packers!`] table at the end: a KleidiAI packer name,
//! the format whose functions it gets ([`kai_packer!`] has one arm per format) and, for an
//! RHS format, the layout of the raw weights. A packer of an existing format is one row; a new
//! format is an arm and a row.

use core::ffi::c_void;
use core::mem::align_of;
use core::slice;

use half::bf16;
use qgemm::Element;
use qgemm::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::{self, Int8Source};
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsu2cxp};

use super::{
    KAI_DT_BF16, elements, kai_rhs_pack_qs4cxs1s0_param, kai_rhs_pack_qsi4c32p_qsu4c32s1s0_params,
    kai_rhs_pack_qsi8cx_params, lhs_packing, mul, rhs_packing,
};

/// `(kr, sr)` standing for the `kr` and `sr` of the `qai8dxp` size and offset getters, which
/// KleidiAI does not read (the sizes depend on `mr` and `k` alone): any pair the format accepts
/// gives the same value.
const ANY_KR_SR: (usize, usize) = (1, 1);

/// `sr` standing for the `sr` of the per-block LHS getters (`qsi8d32p`, `qsi8d32pscalef32`),
/// which KleidiAI does not read: 2, the split ratio of every KleidiAI kernel of these formats
/// (`kr`, which KleidiAI asserts, is still checked with it).
const BLOCK_SR: usize = 2;
use crate::hook::report;

// ---- LHS packers --------------------------------------------------------------------------

/// The rows of an LHS packer call: `m` rows of `k` values of `T` (f32, f16 or bf16),
/// `lhs_stride` bytes apart.
///
/// # Safety
///
/// `lhs` is valid for reads of those rows (KleidiAI's contract); `m >= 1`.
unsafe fn lhs_rows<'a, T: Element>(
    f: &str,
    m: usize,
    k: usize,
    lhs: *const T,
    lhs_stride: usize,
) -> Option<(&'a [T], usize)> {
    let e = T::SIZE;
    if lhs.is_null() {
        fail!(f, None, "lhs is null");
    }
    if !lhs_stride.is_multiple_of(e) || !(lhs as usize).is_multiple_of(e) {
        fail!(
            f,
            None,
            "lhs_stride = {} and the lhs address must be multiples of sizeof({}), {}",
            lhs_stride,
            T::NAME,
            e
        );
    }
    let stride = lhs_stride / e;
    if stride < k {
        fail!(f, None, "lhs_stride = {} bytes is less than a row of k = {} values of {} bytes", lhs_stride, k, e);
    }
    let len = elements(f, m - 1, stride, k, e)?;
    // SAFETY: the caller's contract: `m` rows of `k` values, `stride` values apart; the
    // address is aligned for `T` (checked above); `len * e` bytes fit an `isize` (`elements`).
    Some((unsafe { slice::from_raw_parts(lhs, len) }, stride))
}

/// The packed LHS tiles a call writes: the tiles holding rows `m_idx_start .. m_idx_start + m`.
///
/// # Safety
///
/// `lhs_packed` is valid for writes of those tiles (KleidiAI's contract).
unsafe fn lhs_tiles<'a>(
    f: &str,
    mr: usize,
    m: usize,
    m_idx_start: usize,
    tile: usize,
    lhs_packed: *mut c_void,
) -> Option<&'a mut [u8]> {
    if lhs_packed.is_null() {
        fail!(f, None, "lhs_packed is null");
    }
    let tiles = (m_idx_start % mr).checked_add(m).map(|r| r.div_ceil(mr));
    let len = tiles.and_then(|t| t.checked_mul(tile));
    let Some(len) = len else { fail!(f, None, "size overflows size_t") };
    // SAFETY: the caller's contract: the packed LHS from `get_lhs_packed_offset(m_idx_start)`
    // holds these tiles.
    Some(unsafe { slice::from_raw_parts_mut(lhs_packed.cast::<u8>(), len) })
}

/// The input rows and the output tiles of an LHS packer call (`m, k, mr, m_idx_start`):
/// [`lhs_rows`] and [`lhs_tiles`].
///
/// # Safety
///
/// As [`lhs_rows`] and [`lhs_tiles`]; `m >= 1`.
unsafe fn lhs_buffers<'a, T: Element>(
    f: &str,
    (m, k, mr, m_idx_start): (usize, usize, usize, usize),
    tile: usize,
    lhs: *const T,
    lhs_stride: usize,
    lhs_packed: *mut c_void,
) -> Option<(&'a [T], usize, &'a mut [u8])> {
    // SAFETY: forwarded from the caller's contract.
    let (rows, stride) = unsafe { lhs_rows(f, m, k, lhs, lhs_stride)? };
    // SAFETY: forwarded from the caller's contract.
    let out = unsafe { lhs_tiles(f, mr, m, m_idx_start, tile, lhs_packed)? };
    Some((rows, stride, out))
}

// ---- RHS packers --------------------------------------------------------------------------

/// The nibble encoding of a `kai_rhs_pack_qs4cxs1s0_param`, or the hook.
///
/// # Safety
///
/// `params` is null or points at a readable struct.
unsafe fn qs4cx_encoding(
    f: &str,
    params: *const kai_rhs_pack_qs4cxs1s0_param,
    allow_signed: bool,
) -> Option<Int4Encoding> {
    // SAFETY: forwarded from the caller: null or readable.
    let Some(p) = (unsafe { params.as_ref() }) else { fail!(f, None, "params is null") };
    if p.lhs_zero_point != 1 {
        fail!(f, None, "params->lhs_zero_point = {}, must be 1", p.lhs_zero_point);
    }
    match p.rhs_zero_point {
        8 => Some(Int4Encoding::ZeroPoint8),
        0 if allow_signed => Some(Int4Encoding::Signed),
        z => fail!(f, None, "params->rhs_zero_point = {}, must be {}", z, if allow_signed { "0 or 8" } else { "8" }),
    }
}

/// `num_groups == 1` and `extra_bytes == 0`, or the hook.
fn check_groups(f: &str, num_groups: usize, extra_bytes: usize) -> Option<()> {
    if num_groups != 1 || extra_bytes != 0 {
        fail!(f, None, "num_groups = {}, extra_bytes = {}: must be 1 and 0", num_groups, extra_bytes);
    }
    Some(())
}

/// `scale_dt == kai_dt_bf16`, or the hook.
fn check_scale_dt(f: &str, scale_dt: u32) -> Option<()> {
    if scale_dt != KAI_DT_BF16 {
        fail!(f, None, "scale_dt = {:#06x}, only kai_dt_bf16 (0x0213) is supported", scale_dt);
    }
    Some(())
}

/// `n` floats at `p`, or `None` for a null `p`.
///
/// # Safety
///
/// `p` is null or valid for reads of `n` floats.
unsafe fn floats<'a>(p: *const f32, n: usize) -> Option<&'a [f32]> {
    // SAFETY: forwarded from the caller.
    (!p.is_null()).then(|| unsafe { slice::from_raw_parts(p, n) })
}

/// The packed RHS a packer call writes: `packed_size` bytes at `rhs_packed`.
///
/// # Safety
///
/// `rhs_packed` is valid for writes of `size` bytes.
unsafe fn rhs_out<'a>(f: &str, rhs_packed: *mut c_void, size: usize) -> Option<&'a mut [u8]> {
    if rhs_packed.is_null() {
        fail!(f, None, "rhs_packed is null");
    }
    // SAFETY: forwarded from the caller.
    Some(unsafe { slice::from_raw_parts_mut(rhs_packed.cast::<u8>(), size) })
}

/// `(rows, bytes per row)` of dense raw weights of `n` channels, depth `k`, with `per_byte`
/// values in a byte (2 for int4, 1 for int8): NxK `n` rows of `ceil(k / per_byte)` bytes, KxN
/// `k` rows of `ceil(n / per_byte)`.
const fn raw_rows(layout: Layout, n: usize, k: usize, per_byte: usize) -> (usize, usize) {
    match layout {
        Layout::NxK => (n, k.div_ceil(per_byte)),
        Layout::KxN => (k, n.div_ceil(per_byte)),
    }
}

/// The raw-weight offset of channel `n_idx` with `per_byte` values in a byte: NxK
/// `n_idx * rhs_stride`, KxN `n_idx / per_byte` (`n_idx` must then be a multiple of
/// `per_byte`).
fn raw_rhs_offset(f: &str, layout: Layout, per_byte: usize, n_idx: usize, rhs_stride: usize) -> usize {
    match layout {
        Layout::NxK => mul(f, n_idx, rhs_stride).unwrap_or(0),
        Layout::KxN => {
            if !n_idx.is_multiple_of(per_byte) {
                fail!(f, 0, "n_idx = {} must be a multiple of {} ({} channels per byte)", n_idx, per_byte, per_byte);
            }
            n_idx / per_byte
        }
    }
}

// ---- the table of the packers, for the fuzz target ---------------------------------------

/// The arguments of every KleidiAI packer function (getters and `run`) by name, for
/// [`KaiPackFns`]: each function reads those it takes. `src` is `lhs` or `rhs`, `packed`
/// `lhs_packed` or `rhs_packed`, `idx` the `m_idx` or `n_idx` of an offset getter.
#[doc(hidden)] // for the fuzz target (fuzz/fuzz_targets/capi/kai.rs) only: not API
#[derive(Clone, Copy)]
pub struct KaiPackArgs {
    pub num_groups: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub bl: usize,
    pub mr: usize,
    pub nr: usize,
    pub kr: usize,
    pub sr: usize,
    pub idx: usize,
    pub m_idx_start: usize,
    pub src_stride: usize,
    pub scale_stride: usize,
    pub extra_bytes: usize,
    pub scale_dt: u32,
    pub src: *const c_void,
    pub bias: *const c_void,
    pub scale: *const c_void,
    pub zero: *const c_void,
    pub packed: *mut c_void,
    pub params: *const c_void,
    pub lut: *const i32,
}

/// One KleidiAI packer name's `kai_*` functions, for iterating them (the fuzz target): its name,
/// the row's format (`qai8dxp_f16`, `qsi4c32p`, ...; `float_lhs` / `float_rhs` for the float
/// packers) and raw-weight layout (`NxK`, `KxN`, empty for an LHS packer), the element sizes of
/// the raw source and of the bias, and every getter it has (`get_m_step` / `get_n_step`,
/// `get_lhs_offset` / `get_rhs_offset`, `get_bias_offset`, `get_rhs_packed_stride`, the packed
/// offset and size), each over [`KaiPackArgs`], and `kai_run_*`. `PACKERS` of `kai::pack` and
/// `kai::float` lists them.
#[doc(hidden)] // for the fuzz target only: not API
pub struct KaiPackFns {
    pub name: &'static str,
    pub format: &'static str,
    pub layout: &'static str,
    pub elem: usize,
    pub bias_elem: usize,
    pub step: Option<fn(&KaiPackArgs) -> usize>,
    pub src_offset: fn(&KaiPackArgs) -> usize,
    pub bias_offset: Option<fn(&KaiPackArgs) -> usize>,
    pub packed_stride: Option<fn(&KaiPackArgs) -> usize>,
    pub packed_offset: fn(&KaiPackArgs) -> usize,
    pub packed_size: fn(&KaiPackArgs) -> usize,
    /// # Safety
    ///
    /// The `kai_run_*` function's contract, on the pointers of the arguments.
    pub run: unsafe fn(&KaiPackArgs),
}

// ---- the packer functions, by format ------------------------------------------------------

/// The `kai_*` functions of one KleidiAI packer `$name`, by its format.
macro_rules! kai_packer {
    // The two getters every LHS packer has.
    (@lhs_common $name:ident) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_m_step_", stringify!($name), "`: `mr`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_m_step_ $name>](mr: usize) -> usize {
                mr
            }

            #[doc = concat!("KleidiAI `kai_get_lhs_offset_", stringify!($name), "`: `m_idx * lhs_stride`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_offset_ $name>](m_idx: usize, lhs_stride: usize) -> usize {
                mul(stringify!([<kai_get_lhs_offset_ $name>]), m_idx, lhs_stride).unwrap_or(0)
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STEP_ $name>]: Option<fn(&KaiPackArgs) -> usize> = Some(|a| [<kai_get_m_step_ $name>](a.mr));
            #[allow(non_upper_case_globals)]
            const [<PK_SRC_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_lhs_offset_ $name>](a.idx, a.src_stride);
            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> = None;
        }
    };
    // The `n_step` and raw-offset getters of an RHS packer with `$per_byte` values per byte.
    (@rhs_common $name:ident, $layout:ident, $per_byte:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_n_step_", stringify!($name), "`: `nr`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_n_step_ $name>](nr: usize) -> usize {
                nr
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STEP_ $name>]: Option<fn(&KaiPackArgs) -> usize> = Some(|a| [<kai_get_n_step_ $name>](a.nr));
        }
        kai_packer!(@rhs_offset $name, $layout, $per_byte);
    };
    // The raw-offset getter alone (the packers without `get_n_step`).
    (@rhs_offset $name:ident, $layout:ident, $per_byte:expr) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_offset_", stringify!($name), "`: NxK `n_idx * rhs_stride`, KxN `n_idx` over the values per byte.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_offset_ $name>](n_idx: usize, rhs_stride: usize) -> usize {
                raw_rhs_offset(stringify!([<kai_get_rhs_offset_ $name>]), Layout::$layout, $per_byte, n_idx, rhs_stride)
            }

            #[allow(non_upper_case_globals)]
            const [<PK_SRC_ $name>]: fn(&KaiPackArgs) -> usize = |a| [<kai_get_rhs_offset_ $name>](a.idx, a.src_stride);
        }
    };
    // The size, offset and stride getters of an RHS format whose getters take `(nr, kr, sr)`.
    // KleidiAI reads neither `kr` nor `sr` there (the sizes depend on `nr` and `k` alone), so
    // they are ignored: `($kr, $sr)`, a pair the format accepts, stands for every value.
    (@rhs_sizes $name:ident, $format:ident, ignoring kr, sr as ($kr:expr, $sr:expr)) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_stride_", stringify!($name), "`: bytes of one packed tile (`kr`, `sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_stride_ $name>](k: usize, nr: usize, _kr: usize, _sr: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_stride_ $name>]);
                check!(f, 0, $format::packed_size(1, k, &rhs_packing(nr, $kr, $sr)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "` (`kr`, `sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](n_idx: usize, k: usize, nr: usize, _kr: usize, _sr: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_offset_ $name>]);
                check!(f, 0, $format::packed_offset(n_idx, k, &rhs_packing(nr, $kr, $sr)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_size_", stringify!($name), "` (`kr`, `sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_size_ $name>](n: usize, k: usize, nr: usize, _kr: usize, _sr: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_size_ $name>]);
                check!(f, 0, $format::packed_size(n, k, &rhs_packing(nr, $kr, $sr)))
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> =
                Some(|a| [<kai_get_rhs_packed_stride_ $name>](a.k, a.nr, a.kr, a.sr));
            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_offset_ $name>](a.idx, a.k, a.nr, a.kr, a.sr);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_size_ $name>](a.n, a.k, a.nr, a.kr, a.sr);
        }
    };

    // `lhs_quant_pack_qai8dxp_f32`, `_f16_neon`, `_bf16_neon`: per-row int8 from f32 (`lhs` is
    // `const float*`), f16 or bf16 (`const void*` in KleidiAI's header).
    (qai8dxp, $name:ident) => {
        kai_packer!(@qai8dxp $name, f32, quantize_pack);
    };
    (qai8dxp_f16, $name:ident) => {
        kai_packer!(@qai8dxp $name, half::f16, quantize_pack_f16);
    };
    (qai8dxp_bf16, $name:ident) => {
        kai_packer!(@qai8dxp $name, half::bf16, quantize_pack_bf16);
    };
    (@qai8dxp $name:ident, $elem:ty, $packer:ident) => {
        kai_packer!(@lhs_common $name);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_lhs_packed_offset_", stringify!($name), "`: the tile holding row `m_idx` (any row: a packing call may start mid-tile); `kr`, `sr` ignored, as by KleidiAI.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_offset_ $name>](m_idx: usize, k: usize, mr: usize, _kr: usize, _sr: usize) -> usize {
                let f = stringify!([<kai_get_lhs_packed_offset_ $name>]);
                check!(f, 0, qai8dxp::packed_size(1, k, &lhs_packing(mr, ANY_KR_SR.0, ANY_KR_SR.1)));
                let tile = check!(f, 0, qai8dxp::tile_stride(k, mr));
                mul(f, m_idx / mr, tile).unwrap_or(0)
            }

            #[doc = concat!("KleidiAI `kai_get_lhs_packed_size_", stringify!($name), "` (`kr`, `sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_size_ $name>](m: usize, k: usize, mr: usize, _kr: usize, _sr: usize) -> usize {
                let f = stringify!([<kai_get_lhs_packed_size_ $name>]);
                check!(f, 0, qai8dxp::packed_size(m, k, &lhs_packing(mr, ANY_KR_SR.0, ANY_KR_SR.1)))
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: quantizes and packs `m` rows; `lhs` points at the first row to pack, `lhs_stride` in bytes, `lhs_packed` at `get_lhs_packed_offset(m_idx_start)`.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `lhs` holds `m` rows of `k` values `lhs_stride` bytes apart and
            /// `lhs_packed` the tiles of rows `m_idx_start .. m_idx_start + m`.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                m: usize,
                k: usize,
                mr: usize,
                kr: usize,
                sr: usize,
                m_idx_start: usize,
                lhs: *const $elem,
                lhs_stride: usize,
                lhs_packed: *mut c_void,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                if m == 0 {
                    return;
                }
                let p = lhs_packing(mr, kr, sr);
                check!(f, (), qai8dxp::packed_size(1, k, &p));
                let tile = check!(f, (), qai8dxp::tile_stride(k, mr));
                // SAFETY: forwarded from the caller's contract; m >= 1.
                let bufs = unsafe { lhs_buffers(f, (m, k, mr, m_idx_start), tile, lhs, lhs_stride, lhs_packed) };
                let Some((rows, stride, out)) = bufs else { return };
                check!(f, (), qai8dxp::$packer(&p, m, k, m_idx_start, rows, stride, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_lhs_packed_offset_ $name>](a.idx, a.k, a.mr, a.kr, a.sr);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_lhs_packed_size_ $name>](a.m, a.k, a.mr, a.kr, a.sr);
            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = core::mem::size_of::<$elem>();
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe {
                    [<kai_run_ $name>](a.m, a.k, a.mr, a.kr, a.sr, a.m_idx_start, a.src.cast(), a.src_stride, a.packed)
                }
            };
        }
    };

    // `lhs_quant_pack_qsi8d32p_f32`: int8 per block of `bl` with f16 scales; the packed offset
    // of any row is its tile's (KleidiAI declares no `m_idx % mr` there).
    (qsi8d32p, $name:ident) => {
        kai_packer!(@per_block_lhs $name, qsi8d32p, f32, quantize_pack);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_lhs_packed_offset_", stringify!($name), "`: the tile holding row `m_idx` (`sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_offset_ $name>](
                m_idx: usize,
                k: usize,
                bl: usize,
                mr: usize,
                kr: usize,
                _sr: usize,
            ) -> usize {
                let f = stringify!([<kai_get_lhs_packed_offset_ $name>]);
                check!(f, 0, qsi8d32p::packed_size(1, k, bl, &lhs_packing(mr, kr, BLOCK_SR)));
                let tile = check!(f, 0, qsi8d32p::tile_stride(k, bl, mr));
                mul(f, m_idx / mr, tile).unwrap_or(0)
            }

            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_lhs_packed_offset_ $name>](a.idx, a.k, a.bl, a.mr, a.kr, a.sr);
        }
    };

    // `lhs_quant_pack_qsi8d32pscalef32_f32_neon`, `_f16_neon`: int8 per block of `bl` with f32
    // scales and block sums, from f32 (`const float*`) or f16 (`const void*` in KleidiAI's
    // header) activations; the packed offset requires `m_idx % mr == 0`, as KleidiAI declares.
    (qsi8d32pscalef32, $name:ident) => {
        kai_packer!(@per_block_lhs $name, qsi8d32pscalef32, f32, quantize_pack);
        kai_packer!(@lhs_packed_offset_on_tile $name, qsi8d32pscalef32);
    };
    (qsi8d32pscalef32_f16, $name:ident) => {
        kai_packer!(@per_block_lhs $name, qsi8d32pscalef32, half::f16, quantize_pack_f16);
        kai_packer!(@lhs_packed_offset_on_tile $name, qsi8d32pscalef32);
    };
    (@lhs_packed_offset_on_tile $name:ident, $format:ident) => {
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_lhs_packed_offset_", stringify!($name), "`: the tile holding row `m_idx`, a multiple of `mr` (`sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_offset_ $name>](
                m_idx: usize,
                k: usize,
                bl: usize,
                mr: usize,
                kr: usize,
                _sr: usize,
            ) -> usize {
                let f = stringify!([<kai_get_lhs_packed_offset_ $name>]);
                check!(f, 0, $format::packed_offset(m_idx, k, bl, &lhs_packing(mr, kr, BLOCK_SR)))
            }

            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_lhs_packed_offset_ $name>](a.idx, a.k, a.bl, a.mr, a.kr, a.sr);
        }
    };
    // The functions of a per-block LHS packer of `$format` (a module of `qgemm::lhs`) but its
    // packed offset: `lhs` (of `$elem`) points at row 0 of the matrix.
    (@per_block_lhs $name:ident, $format:ident, $elem:ty, $packer:ident) => {
        kai_packer!(@lhs_common $name);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_lhs_packed_size_", stringify!($name), "` (`sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_lhs_packed_size_ $name>](m: usize, k: usize, bl: usize, mr: usize, kr: usize, _sr: usize) -> usize {
                let f = stringify!([<kai_get_lhs_packed_size_ $name>]);
                check!(f, 0, $format::packed_size(m, k, bl, &lhs_packing(mr, kr, BLOCK_SR)))
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: quantizes and packs `m` rows in blocks of `bl`. Unlike the qai8dxp packers, `lhs` points at row 0 of the matrix and row `m_idx_start + i` is read.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `lhs` holds rows `m_idx_start .. m_idx_start + m` of `k` values,
            /// `lhs_stride` bytes apart from row 0, and `lhs_packed` the tiles of those rows.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                m: usize,
                k: usize,
                bl: usize,
                mr: usize,
                kr: usize,
                sr: usize,
                m_idx_start: usize,
                lhs: *const $elem,
                lhs_stride: usize,
                lhs_packed: *mut c_void,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                if m == 0 {
                    return;
                }
                let p = lhs_packing(mr, kr, sr);
                check!(f, (), $format::packed_size(1, k, bl, &p));
                let tile = check!(f, (), $format::tile_stride(k, bl, mr));
                if lhs.is_null() {
                    fail!(f, (), "lhs is null");
                }
                let Some(skip) = mul(f, m_idx_start, lhs_stride) else { return };
                // SAFETY: the caller's contract: row `m_idx_start` starts `m_idx_start * lhs_stride`
                // bytes after `lhs`.
                let first = unsafe { lhs.byte_add(skip) };
                // SAFETY: forwarded from the caller's contract; m >= 1.
                let bufs = unsafe { lhs_buffers(f, (m, k, mr, m_idx_start), tile, first, lhs_stride, lhs_packed) };
                let Some((rows, stride, out)) = bufs else { return };
                check!(f, (), $format::$packer(&p, m, k, bl, m_idx_start, rows, stride, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_lhs_packed_size_ $name>](a.m, a.k, a.bl, a.mr, a.kr, a.sr);
            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = core::mem::size_of::<$elem>();
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe {
                    [<kai_run_ $name>](a.m, a.k, a.bl, a.mr, a.kr, a.sr, a.m_idx_start, a.src.cast(), a.src_stride,
                        a.packed)
                }
            };
        }
    };

    // `rhs_pack_{nxk,kxn}_qsi4cxp_qs4cxs1s0`: int4, per-channel f32 scales, optional bias.
    (qsi4cxp, $name:ident, $layout:ident) => {
        kai_packer!(@rhs_common $name, $layout, 2);
        kai_packer!(@rhs_sizes $name, qsi4cxp, ignoring kr, sr as (2, 2));
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` channels of int4 weights, per-channel f32 scales and an optional bias.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds the raw nibbles (NxK: `n` rows of `ceil(k/2)` bytes;
            /// KxN: `k` rows of `ceil(n/2)`), `scale` `n` floats, `bias` null or `n` floats,
            /// `rhs_packed` `get_rhs_packed_size(n, ...)` bytes, `params` a readable struct.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                rhs: *const u8,
                bias: *const f32,
                scale: *const f32,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const kai_rhs_pack_qs4cxs1s0_param,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                let Some(()) = check_groups(f, num_groups, extra_bytes) else { return };
                // SAFETY: forwarded from the caller's contract.
                let Some(encoding) = (unsafe { qs4cx_encoding(f, params, true) }) else { return };
                let p = rhs_packing(nr, kr, sr);
                let size = check!(f, (), qsi4cxp::packed_size(n, k, &p));
                if rhs.is_null() || scale.is_null() {
                    fail!(f, (), "rhs or scale is null");
                }
                let (rows, row_bytes) = raw_rows(Layout::$layout, n, k, 2);
                let Some(len) = mul(f, rows, row_bytes) else { return };
                // SAFETY: the caller's contract: dense raw rows (see `# Safety`).
                let data = unsafe { slice::from_raw_parts(rhs, len) };
                let src = Int4Source { data, layout: Layout::$layout, stride: row_bytes, encoding };
                // SAFETY: the caller's contract: `n` scales, and `n` biases unless null.
                let (scale, bias) = unsafe { (slice::from_raw_parts(scale, n), floats(bias, n)) };
                // SAFETY: the caller's contract: the packed size.
                let Some(out) = (unsafe { rhs_out(f, rhs_packed, size) }) else { return };
                check!(f, (), qsi4cxp::pack(&p, n, k, &src, scale, bias, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = 1;
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe { [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.src.cast(), a.bias.cast(), a.scale.cast(), a.packed,
                    a.extra_bytes, a.params.cast()) }
            };
        }
    };

    // `rhs_pack_{nxk,kxn}_qsi4c32p_qsu4c32s1s0`: int4, per-block bf16 scales, optional bias; its
    // getters ignore `sr`, as KleidiAI's (2, the format's, stands for it).
    (qsi4c32p, $name:ident, $layout:ident) => {
        kai_packer!(@rhs_common $name, $layout, 2);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_stride_", stringify!($name), "`: bytes of one packed tile (`sr` ignored, as by KleidiAI: it is 2).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_stride_ $name>](k: usize, nr: usize, kr: usize, _sr: usize, bl: usize, scale_dt: u32) -> usize {
                let f = stringify!([<kai_get_rhs_packed_stride_ $name>]);
                let Some(()) = check_scale_dt(f, scale_dt) else { return 0 };
                check!(f, 0, qsi4c32p::packed_size(1, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "` (`sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](
                n_idx: usize,
                k: usize,
                nr: usize,
                kr: usize,
                _sr: usize,
                bl: usize,
                scale_dt: u32,
            ) -> usize {
                let f = stringify!([<kai_get_rhs_packed_offset_ $name>]);
                let Some(()) = check_scale_dt(f, scale_dt) else { return 0 };
                check!(f, 0, qsi4c32p::packed_offset(n_idx, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_size_", stringify!($name), "` (`sr` ignored, as by KleidiAI).")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_size_ $name>](
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                _sr: usize,
                bl: usize,
                scale_dt: u32,
            ) -> usize {
                let f = stringify!([<kai_get_rhs_packed_size_ $name>]);
                let Some(()) = check_scale_dt(f, scale_dt) else { return 0 };
                check!(f, 0, qsi4c32p::packed_size(n, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` channels of int4 weights with per-block bf16 scales and an optional bias.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds the raw nibbles (NxK: `n` rows of `ceil(k/2)` bytes,
            /// KxN: `k` rows of `ceil(n/2)`, `rhs_stride` bytes apart), `scale` `n` rows of `k/bl`
            /// bf16 values `scale_stride` bytes apart, `bias` null or `n` floats, `rhs_packed`
            /// `get_rhs_packed_size(n, ...)` bytes, `params` a readable struct.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                bl: usize,
                rhs: *const u8,
                rhs_stride: usize,
                bias: *const f32,
                scale: *const c_void,
                scale_stride: usize,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const kai_rhs_pack_qsi4c32p_qsu4c32s1s0_params,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                let Some(()) = check_groups(f, num_groups, extra_bytes) else { return };
                // SAFETY: the caller's contract: null or a readable struct.
                let Some(prm) = (unsafe { params.as_ref() }) else { fail!(f, (), "params is null") };
                if prm.lhs_zero_point != 1 || prm.rhs_zero_point != 8 {
                    fail!(f, (), "params zero points = ({}, {}), must be (1, 8)", prm.lhs_zero_point, prm.rhs_zero_point);
                }
                let Some(()) = check_scale_dt(f, prm.scale_dt) else { return };
                let p = rhs_packing(nr, kr, sr);
                let size = check!(f, (), qsi4c32p::packed_size(n, k, bl, &p));
                if n == 0 || k == 0 {
                    fail!(f, (), "n = {}, k = {}: both must be at least 1", n, k);
                }
                if rhs.is_null() || scale.is_null() {
                    fail!(f, (), "rhs or scale is null");
                }
                if !scale_stride.is_multiple_of(2) || !(scale as usize).is_multiple_of(2) {
                    fail!(f, (), "scale and scale_stride = {} must be multiples of sizeof(bf16) = 2", scale_stride);
                }
                let (rows, row_bytes) = raw_rows(Layout::$layout, n, k, 2);
                if rhs_stride < row_bytes {
                    fail!(f, (), "rhs_stride = {} is less than a row of {} bytes", rhs_stride, row_bytes);
                }
                let Some(len) = elements(f, rows - 1, rhs_stride, row_bytes, 1) else { return };
                // SAFETY: the caller's contract: `rows` raw rows `rhs_stride` bytes apart.
                let data = unsafe { slice::from_raw_parts(rhs, len) };
                let src = Int4Source { data, layout: Layout::$layout, stride: rhs_stride, encoding: Int4Encoding::ZeroPoint8 };
                let per_channel = k / bl; // bl was validated by packed_size
                let scale_elems = scale_stride / 2;
                let Some(scale_len) = elements(f, n - 1, scale_elems, per_channel, 2) else { return };
                // SAFETY: the caller's contract: `n` rows of `k/bl` bf16 scales, `scale_stride` bytes
                // apart; the address is 2-byte aligned (checked above) and bf16 is a plain u16.
                let values = unsafe { slice::from_raw_parts(scale.cast::<bf16>(), scale_len) };
                let scales = BlockScales { values, stride: scale_elems };
                // SAFETY: the caller's contract: `n` biases unless null.
                let bias = unsafe { floats(bias, n) };
                // SAFETY: the caller's contract: the packed size.
                let Some(out) = (unsafe { rhs_out(f, rhs_packed, size) }) else { return };
                check!(f, (), qsi4c32p::pack(&p, n, k, bl, &src, &scales, bias, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> =
                Some(|a| [<kai_get_rhs_packed_stride_ $name>](a.k, a.nr, a.kr, a.sr, a.bl, a.scale_dt));
            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_offset_ $name>](a.idx, a.k, a.nr, a.kr, a.sr, a.bl, a.scale_dt);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_size_ $name>](a.n, a.k, a.nr, a.kr, a.sr, a.bl, a.scale_dt);

            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = 1;
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe { [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.bl, a.src.cast(), a.src_stride, a.bias.cast(),
                    a.scale, a.scale_stride, a.packed, a.extra_bytes, a.params.cast()) }
            };
        }
    };

    // `rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0`: GGML `Q4_0` blocks; its getters take no
    // `sr` (it is 2) and no `n_step` getter exists.
    (qsi4c32pscalef16, $name:ident, NxK) => {
        kai_packer!(@rhs_offset $name, NxK, 2);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_stride_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_stride_ $name>](k: usize, nr: usize, kr: usize, bl: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_stride_ $name>]);
                check!(f, 0, qsi4c32pscalef16::packed_size(1, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](n_idx: usize, k: usize, nr: usize, kr: usize, bl: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_offset_ $name>]);
                check!(f, 0, qsi4c32pscalef16::packed_offset(n_idx, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_size_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_size_ $name>](n: usize, k: usize, nr: usize, kr: usize, bl: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_size_ $name>]);
                check!(f, 0, qsi4c32pscalef16::packed_size(n, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` channels of `Q4_0`-style blocks (f16 scale + `bl/2` bytes). The format has no bias: `bias` must be null.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds `n` rows of `(k/bl) * (bl/2 + 2)` bytes, `rhs_packed`
            /// `get_rhs_packed_size(n, ...)` bytes, `params` a readable struct.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                bl: usize,
                rhs: *const u8,
                bias: *const f32,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const kai_rhs_pack_qs4cxs1s0_param,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                let Some(()) = check_groups(f, num_groups, extra_bytes) else { return };
                // SAFETY: forwarded from the caller's contract.
                let Some(_) = (unsafe { qs4cx_encoding(f, params, false) }) else { return };
                if !bias.is_null() {
                    fail!(f, (), "bias must be null (the format has no bias)");
                }
                let p = rhs_packing(nr, kr, sr);
                let size = check!(f, (), qsi4c32pscalef16::packed_size(n, k, bl, &p));
                if rhs.is_null() {
                    fail!(f, (), "rhs is null");
                }
                let row = (k / bl) * qsi4c32pscalef16::raw_block_bytes(bl); // fits: packed_size checked it
                let Some(len) = mul(f, n, row) else { return };
                // SAFETY: the caller's contract: `n` dense raw rows.
                let data = unsafe { slice::from_raw_parts(rhs, len) };
                // SAFETY: the caller's contract: the packed size.
                let Some(out) = (unsafe { rhs_out(f, rhs_packed, size) }) else { return };
                check!(f, (), qsi4c32pscalef16::pack(&p, n, k, bl, data, row, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STEP_ $name>]: Option<fn(&KaiPackArgs) -> usize> = None;
            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> =
                Some(|a| [<kai_get_rhs_packed_stride_ $name>](a.k, a.nr, a.kr, a.bl));
            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_offset_ $name>](a.idx, a.k, a.nr, a.kr, a.bl);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_size_ $name>](a.n, a.k, a.nr, a.kr, a.bl);

            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = 1;
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe { [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.bl, a.src.cast(), a.bias.cast(), a.packed,
                    a.extra_bytes, a.params.cast()) }
            };
        }
    };

    // `rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon`: asymmetric int4 (s0s1 unsigned
    // nibbles), an f32 scale and an f32 offset per block, optional f32 bias; its getters take no
    // `sr` (it is 2) and no `n_step` or stride getter exists.
    (qai4c32p, $name:ident, NxK) => {
        kai_packer!(@rhs_offset $name, NxK, 2);
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_get_rhs_packed_offset_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_offset_ $name>](n_idx: usize, k: usize, nr: usize, kr: usize, bl: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_offset_ $name>]);
                check!(f, 0, qai4c32p::packed_offset(n_idx, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_get_rhs_packed_size_", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn [<kai_get_rhs_packed_size_ $name>](n: usize, k: usize, nr: usize, kr: usize, bl: usize) -> usize {
                let f = stringify!([<kai_get_rhs_packed_size_ $name>]);
                check!(f, 0, qai4c32p::packed_size(n, k, bl, &rhs_packing(nr, kr, 2)))
            }

            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` channels of asymmetric int4 blocks: s0s1 unsigned nibbles, f32 offsets (`zero`) and scales per block, an optional f32 bias.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds `n` rows of `k/2` bytes, `zero` and `scale` `n * (k/bl)`
            /// floats each, `bias` null or `n` floats, `rhs_packed` `get_rhs_packed_size(n, ...)` bytes,
            /// `params` a readable struct.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                bl: usize,
                rhs: *const u8,
                zero: *const c_void,
                bias: *const c_void,
                scale: *const c_void,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const kai_rhs_pack_qs4cxs1s0_param,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                let Some(()) = check_groups(f, num_groups, extra_bytes) else { return };
                // SAFETY: forwarded from the caller's contract.
                let Some(_) = (unsafe { qs4cx_encoding(f, params, false) }) else { return };
                let p = rhs_packing(nr, kr, sr);
                let size = check!(f, (), qai4c32p::packed_size(n, k, bl, &p));
                if n == 0 {
                    fail!(f, (), "n = 0: must be at least 1");
                }
                if rhs.is_null() || zero.is_null() || scale.is_null() {
                    fail!(f, (), "rhs, zero or scale is null");
                }
                let aligned = |v: *const c_void| (v as usize).is_multiple_of(align_of::<f32>());
                if !aligned(zero) || !aligned(scale) || !aligned(bias) {
                    fail!(f, (), "zero, scale and bias must be 4-byte aligned (f32)");
                }
                let row = k / 2; // k is a non-zero multiple of bl, so even (packed_size checked it)
                let Some(len) = mul(f, n, row) else { return };
                // SAFETY: the caller's contract: `n` dense raw rows of `k/2` bytes.
                let data = unsafe { slice::from_raw_parts(rhs, len) };
                let Some(blocks) = mul(f, n, k / bl) else { return };
                // SAFETY: the caller's contract: `n * (k/bl)` offsets and scales; both addresses are
                // 4-byte aligned (checked above).
                let (zero, scale) = unsafe {
                    (slice::from_raw_parts(zero.cast::<f32>(), blocks), slice::from_raw_parts(scale.cast::<f32>(), blocks))
                };
                // SAFETY: the caller's contract: `n` biases unless null; aligned (checked above).
                let bias = unsafe { floats(bias.cast::<f32>(), n) };
                // SAFETY: the caller's contract: the packed size.
                let Some(out) = (unsafe { rhs_out(f, rhs_packed, size) }) else { return };
                check!(f, (), qai4c32p::pack(&p, n, k, bl, data, row, zero, scale, bias, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_STEP_ $name>]: Option<fn(&KaiPackArgs) -> usize> = None;
            #[allow(non_upper_case_globals)]
            const [<PK_STRIDE_ $name>]: Option<fn(&KaiPackArgs) -> usize> = None;
            #[allow(non_upper_case_globals)]
            const [<PK_OFF_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_offset_ $name>](a.idx, a.k, a.nr, a.kr, a.bl);
            #[allow(non_upper_case_globals)]
            const [<PK_SIZE_ $name>]: fn(&KaiPackArgs) -> usize =
                |a| [<kai_get_rhs_packed_size_ $name>](a.n, a.k, a.nr, a.kr, a.bl);

            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = 1;
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe { [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.bl, a.src.cast(), a.zero, a.bias, a.scale, a.packed,
                    a.extra_bytes, a.params.cast()) }
            };
        }
    };

    // `rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon`: 2-bit codes (four per byte, first depth in
    // the low bits), per-channel f32 scales, optional f32 bias, and a 4-entry int32 look-up table.
    (qsu2cxp, $name:ident, NxK) => {
        kai_packer!(@rhs_common $name, NxK, 4);
        kai_packer!(@rhs_sizes $name, qsu2cxp, ignoring kr, sr as (4, 1));
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` channels of 2-bit codes, per-channel f32 scales, an optional bias and the row sums of the table's values (`lut_arg`, null for `{-2, -1, 0, 1}`).")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds `n` rows of `k/4` bytes, `scale` `n` floats, `bias`
            /// null or `n` floats, `rhs_packed` `get_rhs_packed_size(n, ...)` bytes, `params` a
            /// readable struct, `lut_arg` null or 4 `int32_t`.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                rhs: *const u8,
                bias: *const f32,
                scale: *const f32,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const kai_rhs_pack_qs4cxs1s0_param,
                lut_arg: *const i32,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                let Some(()) = check_groups(f, num_groups, extra_bytes) else { return };
                // SAFETY: the caller's contract: null or a readable struct.
                let Some(prm) = (unsafe { params.as_ref() }) else { fail!(f, (), "params is null") };
                if prm.lhs_zero_point != 1 || prm.rhs_zero_point != 2 {
                    fail!(f, (), "params zero points = ({}, {}), must be (1, 2)", prm.lhs_zero_point, prm.rhs_zero_point);
                }
                let lut = if lut_arg.is_null() {
                    None
                } else {
                    // SAFETY: the caller's contract: a non-null `lut_arg` points at 4 `int32_t`
                    // (read unaligned: no alignment is assumed beyond KleidiAI's).
                    Some(unsafe { [0, 1, 2, 3].map(|i| lut_arg.add(i).read_unaligned()) })
                };
                let p = rhs_packing(nr, kr, sr);
                let size = check!(f, (), qsu2cxp::packed_size(n, k, &p));
                if n == 0 {
                    fail!(f, (), "n = 0: must be at least 1");
                }
                if rhs.is_null() || scale.is_null() {
                    fail!(f, (), "rhs or scale is null");
                }
                if !(scale as usize).is_multiple_of(align_of::<f32>()) || !(bias as usize).is_multiple_of(align_of::<f32>()) {
                    fail!(f, (), "scale and bias must be 4-byte aligned (f32)");
                }
                let row = k / 4; // k is a non-zero multiple of 32 (packed_size checked it)
                let Some(len) = mul(f, n, row) else { return };
                // SAFETY: the caller's contract: `n` dense raw rows of `k/4` bytes.
                let data = unsafe { slice::from_raw_parts(rhs, len) };
                // SAFETY: the caller's contract: `n` scales, and `n` biases unless null; both
                // addresses are 4-byte aligned (checked above).
                let (scale, bias) = unsafe { (slice::from_raw_parts(scale, n), floats(bias, n)) };
                // SAFETY: the caller's contract: the packed size.
                let Some(out) = (unsafe { rhs_out(f, rhs_packed, size) }) else { return };
                check!(f, (), qsu2cxp::pack(&p, n, k, data, row, scale, bias, lut.as_ref(), out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = 1;
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe { [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.src.cast(), a.bias.cast(), a.scale.cast(), a.packed,
                    a.extra_bytes, a.params.cast(), a.lut) }
            };
        }
    };

    // `rhs_pack_{nxk,kxn}_qsi8cxp_qsi8cx_neon`: int8, per-channel f32 scales, optional bias.
    (qsi8cxp, $name:ident, $layout:ident) => {
        kai_packer!(@rhs_common $name, $layout, 1);
        kai_packer!(@rhs_sizes $name, qsi8cxp, ignoring kr, sr as (1, 1));
        paste::paste! {
            #[doc = concat!("KleidiAI `kai_run_", stringify!($name), "`: packs `n` channels of int8 weights, per-channel f32 scales and an optional bias.")]
            ///
            /// # Safety
            ///
            /// KleidiAI's contract: `rhs` holds the raw values (NxK: `n` rows of `k` bytes; KxN:
            /// `k` rows of `n`), `scale` `n` floats, `bias` null or `n` floats, `rhs_packed`
            /// `get_rhs_packed_size(n, ...)` bytes, `params` a readable struct.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C-unwind" fn [<kai_run_ $name>](
                num_groups: usize,
                n: usize,
                k: usize,
                nr: usize,
                kr: usize,
                sr: usize,
                rhs: *const i8,
                bias: *const f32,
                scale: *const f32,
                rhs_packed: *mut c_void,
                extra_bytes: usize,
                params: *const kai_rhs_pack_qsi8cx_params,
            ) {
                let f = stringify!([<kai_run_ $name>]);
                let Some(()) = check_groups(f, num_groups, extra_bytes) else { return };
                // SAFETY: the caller's contract: null or a readable struct.
                let Some(prm) = (unsafe { params.as_ref() }) else { fail!(f, (), "params is null") };
                // KleidiAI multiplies the row sums by it: only 1 is right with the qai8dxp LHS.
                // `scale_multiplier` is ignored, as by KleidiAI.
                if prm.lhs_zero_point != 1 {
                    fail!(f, (), "params->lhs_zero_point = {}, must be 1", prm.lhs_zero_point);
                }
                let p = rhs_packing(nr, kr, sr);
                let size = check!(f, (), qsi8cxp::packed_size(n, k, &p));
                if rhs.is_null() || scale.is_null() {
                    fail!(f, (), "rhs or scale is null");
                }
                let (rows, row_bytes) = raw_rows(Layout::$layout, n, k, 1);
                let Some(len) = mul(f, rows, row_bytes) else { return };
                // SAFETY: the caller's contract: dense raw rows (see `# Safety`).
                let data = unsafe { slice::from_raw_parts(rhs, len) };
                let src = Int8Source { data, layout: Layout::$layout, stride: row_bytes };
                // SAFETY: the caller's contract: `n` scales, and `n` biases unless null.
                let (scale, bias) = unsafe { (slice::from_raw_parts(scale, n), floats(bias, n)) };
                // SAFETY: the caller's contract: the packed size.
                let Some(out) = (unsafe { rhs_out(f, rhs_packed, size) }) else { return };
                check!(f, (), qsi8cxp::pack(&p, n, k, &src, scale, bias, out));
            }

            #[allow(non_upper_case_globals)]
            const [<PK_ELEM_ $name>]: usize = 1;
            #[allow(non_upper_case_globals)]
            const [<PK_RUN_ $name>]: unsafe fn(&KaiPackArgs) = |a| {
                // SAFETY: the caller's contract (`KaiPackFns::run`) is `kai_run_*`'s.
                unsafe { [<kai_run_ $name>](a.num_groups, a.n, a.k, a.nr, a.kr, a.sr, a.src.cast(), a.bias.cast(), a.scale.cast(), a.packed,
                    a.extra_bytes, a.params.cast()) }
            };
        }
    };
}

/// The KleidiAI packers layer 2 exports, one row each: `name: format` for an LHS packer,
/// `name: format, layout` for an RHS packer (the layout of the raw weights). The C
/// declarations are data of `capi/gen_kai_headers.py`.
macro_rules! kai_packers {
    ($($name:ident: $format:ident $(, $layout:ident)?;)*) => {
        $(kai_packer!($format, $name $(, $layout)?);)*

        /// Every packer name (for the fuzz target).
        #[doc(hidden)]
        pub const PACKERS: &[KaiPackFns] = &[$(paste::paste! {
            KaiPackFns {
                name: stringify!($name),
                format: stringify!($format),
                layout: concat!($(stringify!($layout))?),
                elem: [<PK_ELEM_ $name>],
                bias_elem: 4,
                step: [<PK_STEP_ $name>],
                src_offset: [<PK_SRC_ $name>],
                bias_offset: None,
                packed_stride: [<PK_STRIDE_ $name>],
                packed_offset: [<PK_OFF_ $name>],
                packed_size: [<PK_SIZE_ $name>],
                run: [<PK_RUN_ $name>],
            }
        }),*];
    };
}

kai_packers! {
    lhs_quant_pack_qai8dxp_f32: qai8dxp;
    lhs_quant_pack_qai8dxp_f16_neon: qai8dxp_f16;
    lhs_quant_pack_qai8dxp_bf16_neon: qai8dxp_bf16;
    lhs_quant_pack_qsi8d32p_f32: qsi8d32p;
    lhs_quant_pack_qsi8d32pscalef32_f32_neon: qsi8d32pscalef32;
    lhs_quant_pack_qsi8d32pscalef32_f16_neon: qsi8d32pscalef32_f16;
    rhs_pack_nxk_qsi4cxp_qs4cxs1s0: qsi4cxp, NxK;
    rhs_pack_kxn_qsi4cxp_qs4cxs1s0: qsi4cxp, KxN;
    rhs_pack_nxk_qsi4c32p_qsu4c32s1s0: qsi4c32p, NxK;
    rhs_pack_kxn_qsi4c32p_qsu4c32s1s0: qsi4c32p, KxN;
    rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0: qsi4c32pscalef16, NxK;
    rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon: qai4c32p, NxK;
    rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon: qsu2cxp, NxK;
    rhs_pack_nxk_qsi8cxp_qsi8cx_neon: qsi8cxp, NxK;
    rhs_pack_kxn_qsi8cxp_qsi8cx_neon: qsi8cxp, KxN;
}
