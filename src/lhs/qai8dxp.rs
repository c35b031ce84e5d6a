//! `qai8dxp`: f32, f16 or bf16 activations quantized per row to asymmetric int8 and packed in
//! tiles of `mr` rows (`lhs_quant_pack_qai8dxp_f32`, `_f16_neon`, `_bf16_neon`; docs/formats.md,
//! §LHS and §Arithmetic: qai8dxp quantization).
//!
//! Tile layout (`Kp = roundup(k, 32)`, `bd = kr / sr`, tile stride `mr * (Kp + 8)` bytes):
//!
//! ```text
//! 0            mr*Kp   int8 q[r][j] at (j/bd)*mr*bd + r*bd + j%bd   (K padding repeats q[r][k-1])
//! mr*Kp        4*mr    i32 offset[r] = -zero_point[r]
//! mr*Kp+4*mr   4*mr    f32 dq_scale[r] = 1 / multiplier[r]
//! ```

use half::{bf16, f16};

use crate::arith::{round_even, write_u32};
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result};
use crate::lhs::quant::{self, Round};
use crate::packing::{Packing, padded_k};

/// Bytes of one packed tile of `mr` rows: `mr * (Kp + 8)`.
pub fn tile_stride(k: usize, mr: usize) -> Result<usize> {
    padded_k(k)?.checked_add(8).and_then(|r| r.checked_mul(mr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed LHS for `m` rows (`get_lhs_packed_size`).
pub fn packed_size(m: usize, k: usize, packing: &Packing) -> Result<usize> {
    super::tiles_size(m, packing, |mr| tile_stride(k, mr))
}

/// Byte offset of the tile that holds row `m_idx` (`get_lhs_packed_offset`); `m_idx` must be a
/// multiple of `mr`.
pub fn packed_offset(m_idx: usize, k: usize, packing: &Packing) -> Result<usize> {
    super::tile_offset(m_idx, packing, |mr| tile_stride(k, mr))
}

/// Rows whose min and max the f32 packer keeps from its checking pass (8 bytes each on the
/// stack); later rows are scanned again.
const ROW_CACHE: usize = 64;

/// Quantization parameters of one row (docs/formats.md, §Arithmetic: qai8dxp quantization).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RowQuant {
    /// Quantization multiplier: `q = round_away(x * multiplier) + zero_point`.
    pub(crate) multiplier: f32,
    /// Integer zero point in `[-128, 127]`.
    pub(crate) zero_point: i32,
    /// Stored dequantization scale: `1 / multiplier`, or 0.
    pub(crate) dq_scale: f32,
}

/// The per-row quantizer of docs/formats.md, §Arithmetic: qai8dxp quantization, step by step.
pub(crate) fn row_quant(vmin: f32, vmax: f32) -> RowQuant {
    let rmin = vmin.min(0.0);
    let rmax = vmax.max(0.0);
    let multiplier = if rmin == rmax { 1.0 } else { 255.0 / (rmax - rmin) };
    let dq_scale = if multiplier != 0.0 { 1.0 / multiplier } else { 0.0 };
    let dmin = rmin * multiplier;
    let dmax = rmax * multiplier;
    let emin = -128.0 + dmin;
    let emax = 127.0 + dmax;
    let zpf = if emin + emax > 0.0 { -128.0 - dmin } else { 127.0 - dmax };
    // C fmaxf/fminf: a NaN operand is ignored (Rust's f32::max/min do the same, `clamp`
    // would propagate it).
    #[allow(clippy::manual_clamp)]
    let zpf = zpf.max(-128.0).min(127.0);
    RowQuant { multiplier, zero_point: round_even(zpf) as i32, dq_scale }
}

/// `clamp(round_away(x * multiplier) + zero_point, -128, 127)`.
#[cfg(test)]
fn quantize(x: f32, rq: &RowQuant) -> i8 {
    quant::quantize_one(x, rq.multiplier, rq.zero_point, -128, 127)
}

/// Quantizes and packs `m` rows of f32 activations (`lhs_quant_pack_qai8dxp_f32`).
///
/// * `lhs`: row 0 of the call is `lhs[0..k]`, row `i` starts at `lhs[i * lhs_stride]`
///   (`lhs_stride` in elements, `>= k`); it is the matrix row `m_idx_start + i`.
/// * `lhs_packed`: starts at the tile that holds row `m_idx_start`
///   (`&whole[packed_offset(m_idx_start / mr * mr)..]`) and must hold every tile the call touches
///   (`ceil((m_idx_start % mr + m) / mr)` tiles).
/// * Row `i` lands in slot `(m_idx_start + i) % mr`. Packing `[0, m1)` and then `[m1, m)` gives
///   the same bytes as one call, for any `m1`. Bytes of slots that no call writes keep their
///   contents.
///
/// Every value must be finite: on NaN or ±Inf the call returns [`Error::NonFinite`] and writes
/// nothing.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[f32],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
) -> Result<()> {
    pack_f32::<false>(packing, m, k, m_idx_start, lhs, lhs_stride, &[], lhs_packed)
}

/// [`quantize_pack`] of the activations multiplied by one f32 value per depth,
/// `lhs[i][j] * scale[j]` (one f32 multiply, the activation-aware scaling of
/// [`op::Linear::with_input_scale`](crate::op::Linear::with_input_scale)), in the packer's own
/// passes: the same bytes as [`quantize_pack`] on the products, without storing them.
///
/// `scale`: `k` finite values ([`Error::BufferTooShort`] / [`Error::NonFinite`] on
/// [`Buffer::InputScale`]); a product that is not finite (a NaN activation or an overflow) is
/// [`Error::NonFinite`] on [`Buffer::Lhs`] at the activation's index. Nothing is written on an
/// error.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack_scaled(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[f32],
    lhs_stride: usize,
    scale: &[f32],
    lhs_packed: &mut [u8],
) -> Result<()> {
    // A branch-free test (it vectorizes), the search only when it fails; a short `scale` is the
    // error of the call below.
    if let Some(s) = scale.get(..k)
        && !s.iter().fold(true, |ok, v| ok & v.is_finite())
    {
        let index = s.iter().position(|v| !v.is_finite()).unwrap_or(0);
        return Err(Error::NonFinite { buffer: Buffer::InputScale, index });
    }
    quantize_pack_prescaled(packing, m, k, m_idx_start, lhs, lhs_stride, scale, lhs_packed)
}

/// [`quantize_pack_scaled`] of a `scale` whose values are already checked finite (the
/// operator's, by [`Linear::with_input_scale`](crate::op::Linear::with_input_scale)); its
/// length is checked here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn quantize_pack_prescaled(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[f32],
    lhs_stride: usize,
    scale: &[f32],
    lhs_packed: &mut [u8],
) -> Result<()> {
    let scale =
        scale.get(..k).ok_or(Error::BufferTooShort { buffer: Buffer::InputScale, given: scale.len(), needed: k })?;
    pack_f32::<true>(packing, m, k, m_idx_start, lhs, lhs_stride, scale, lhs_packed)
}

/// [`quantize_pack`], of `lhs[i][j] * scale[j]` when `SCALED` (`scale`: `k` values; unused
/// otherwise, so the plain packer compiles without the multiplications).
#[allow(clippy::too_many_arguments)]
fn pack_f32<const SCALED: bool>(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[f32],
    lhs_stride: usize,
    scale: &[f32],
    lhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_lhs()?;
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if m == 0 {
        return Ok(());
    }
    let mr = packing.mr;
    let ts = tile_stride(k, mr)?;
    // All or nothing: every check, including finiteness, before writing a byte. The first pass
    // takes each row's min and max (which show a NaN or an infinity) and keeps them for the
    // first `ROW_CACHE` rows.
    let first_slot = super::check_layout(mr, m, k, m_idx_start, lhs, lhs_stride, lhs_packed.len(), ts)?;
    let cache =
        if SCALED { row_min_max_scaled(m, k, lhs, lhs_stride, scale)? } else { row_min_max(m, k, lhs, lhs_stride)? };

    let kp = padded_k(k)?;
    let bd = packing.block_depth();
    // Whole 32-value groups go through the 16-value NEON quantizer, the last partial group (and
    // every group off aarch64) through the group quantizer.
    // (chunks of 4 or 8 bytes, or one row per tile; other block depths take the group path).
    let fast = cfg!(all(target_arch = "aarch64", target_feature = "neon")) && (mr == 1 || bd == 4 || bd == 8);
    let whole = if fast { k / quant::GROUP } else { 0 };
    let mut scaled = [0f32; quant::GROUP];
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let (vmin, vmax) = if SCALED {
            // Finite (the first pass checked every product).
            cache.get(i).copied().or_else(|| quant::min_max_finite_scaled(row, scale)).unwrap_or((0.0, 0.0))
        } else {
            cached_min_max(&cache, i, row)
        };
        let rq = row_quant(vmin, vmax);
        let slot_abs = first_slot + i;
        let tile = &mut lhs_packed[(slot_abs / mr) * ts..(slot_abs / mr + 1) * ts];
        let r = slot_abs % mr;
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        {
            // One row per tile: the row's bytes are contiguous, whatever `bd`.
            let (bd, step) = if mr == 1 { (4, 4) } else { (bd, mr * bd) };
            let base = tile.as_mut_ptr().wrapping_add(r * bd);
            let (x, blocks, mult, zp) = (row.as_ptr(), 2 * whole, rq.multiplier, rq.zero_point as i16);
            // SAFETY: block `h < 2 * whole` reads the 16 values `row[16h..16h + 16]`
            // (`16h + 16 <= 32 * whole <= k`) and writes chunks `t < 16 / bd` of depth
            // `16h + bd t` at `base + (16h / bd + t) * mr * bd`: the row's `bd` bytes of that
            // chunk, inside the tile's `mr * kp` data bytes. `zero_point` is in `[-128, 127]`.
            // `SCALED`: the same 16 values of `scale` (`k` long) are read.
            unsafe {
                use quant::neon::{AWAY, quantize_i8_chunks as q, quantize_i8_chunks_scaled as qs};
                match (bd, SCALED) {
                    (4, false) => q::<_, 4, false, AWAY>(x, blocks, mult, zp, base, step),
                    (8, false) => q::<_, 8, false, AWAY>(x, blocks, mult, zp, base, step),
                    (4, true) => qs::<4>(x, scale.as_ptr(), blocks, mult, zp, base, step),
                    (8, true) => qs::<8>(x, scale.as_ptr(), blocks, mult, zp, base, step),
                    _ => {} // `whole` is 0
                }
            }
        }
        for g in whole..kp / quant::GROUP {
            let (start, end) = (g * quant::GROUP, k.min((g + 1) * quant::GROUP));
            let part = if SCALED {
                for ((o, &v), &f) in scaled.iter_mut().zip(&row[start..end]).zip(&scale[start..end]) {
                    *o = v * f;
                }
                &scaled[..end - start]
            } else {
                &row[start..end]
            };
            let mut q = quant::quantize_group(part, rq.multiplier, rq.zero_point, -128, 127);
            // K padding repeats the last real value (only the last group can be partial).
            let last = q[part.len() - 1];
            q[part.len()..].fill(last);
            for (t, chunk) in q.chunks_exact(bd).enumerate() {
                let at = (g * quant::GROUP / bd + t) * mr * bd + r * bd;
                for (dst, &v) in tile[at..at + bd].iter_mut().zip(chunk) {
                    *dst = v as u8;
                }
            }
        }
        write_u32(tile, mr * kp + 4 * r, (-rq.zero_point) as u32);
        write_u32(tile, mr * kp + 4 * mr + 4 * r, rq.dq_scale.to_bits());
    }
    Ok(())
}

/// The first pass of every `qai8dxp` packer, before anything is written: each row's min and max
/// (widened to f32), whose NaN or infinity is reported by [`Error::NonFinite`] at its index; the
/// first [`ROW_CACHE`] rows' are kept for the packing pass.
fn row_min_max<S: Element>(m: usize, k: usize, lhs: &[S], lhs_stride: usize) -> Result<[(f32, f32); ROW_CACHE]> {
    let mut cache = [(0f32, 0f32); ROW_CACHE];
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        // `None` only when a value is NaN or infinite.
        let Some(mm) = quant::min_max_finite(row) else {
            return Err(super::non_finite(row, i * lhs_stride));
        };
        if let Some(c) = cache.get_mut(i) {
            *c = mm;
        }
    }
    Ok(cache)
}

/// [`row_min_max`] of the products `x[j] * scale[j]` of f32 rows: a product that is not finite
/// is [`Error::NonFinite`] at its activation's index.
fn row_min_max_scaled(
    m: usize,
    k: usize,
    lhs: &[f32],
    lhs_stride: usize,
    scale: &[f32],
) -> Result<[(f32, f32); ROW_CACHE]> {
    let mut cache = [(0f32, 0f32); ROW_CACHE];
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let Some(mm) = quant::min_max_finite_scaled(row, scale) else {
            let j = row.iter().zip(scale).position(|(v, s)| !(v * s).is_finite()).unwrap_or(0);
            return Err(Error::NonFinite { buffer: Buffer::Lhs, index: i * lhs_stride + j });
        };
        if let Some(c) = cache.get_mut(i) {
            *c = mm;
        }
    }
    Ok(cache)
}

/// Row `i`'s min and max: from the cache, else computed again (rows past [`ROW_CACHE`]: finite,
/// the first pass checked every value, so the `unwrap_or` is never taken).
fn cached_min_max<S: Element>(cache: &[(f32, f32); ROW_CACHE], i: usize, row: &[S]) -> (f32, f32) {
    cache.get(i).copied().or_else(|| quant::min_max_finite(row)).unwrap_or((0.0, 0.0))
}

/// The rounding rule of one packer call (docs/formats.md, §Arithmetic: qai8dxp from f16 and
/// bf16): each row rounds its first values one way and the rest away from zero.
#[derive(Clone, Copy, Debug)]
struct Rule {
    /// Elements `j < even_below` of a row round to even (the vectorized part), the rest away.
    even_below: usize,
    /// Rows `i < grouped` of the call (f16, `mr = 4`: whole groups of four) instead truncate
    /// `j < 8 * floor(k / 8)` and round the rest away.
    grouped: usize,
    /// `8 * floor(k / 8)`.
    vec8: usize,
}

impl Rule {
    /// Row `i` of the call: its values `j < split` round by the returned mode, the rest away.
    fn row(&self, i: usize) -> (Round, usize) {
        if i < self.grouped { (Round::Zero, self.vec8) } else { (Round::Even, self.even_below) }
    }
}

/// The checks and the packing shared by the f16 and bf16 packers: `rule` gives the rounding of
/// each element; the zero point is always the row's own.
#[allow(clippy::too_many_arguments)]
fn pack_half<S: Element>(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[S],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
    rule: impl Fn(usize) -> Rule,
) -> Result<()> {
    packing.check_lhs()?;
    let mr = packing.mr;
    if mr != 1 && mr != 4 {
        return Err(Error::Unsupported { param: Param::Mr, value: mr });
    }
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    // KleidiAI's packers assume a group of four rows starts at slot 0 of a tile and corrupt the
    // buffer otherwise: qgemm takes tile-aligned starts only.
    if !m_idx_start.is_multiple_of(mr) {
        return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx_start, step: mr });
    }
    if m == 0 {
        return Ok(());
    }
    let ts = tile_stride(k, mr)?;
    // All or nothing: the layout checks, then one min/max pass per row over the widened values
    // (which shows a NaN or an infinity), kept for the first `ROW_CACHE` rows.
    super::check_layout(mr, m, k, m_idx_start, lhs, lhs_stride, lhs_packed.len(), ts)?;
    let cache = row_min_max(m, k, lhs, lhs_stride)?;
    let rule = rule(m);
    let kp = padded_k(k)?;
    let bd = packing.block_depth();
    let mut wide = [0f32; quant::GROUP];
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let (vmin, vmax) = cached_min_max(&cache, i, row);
        let rq = row_quant(vmin, vmax);
        let (first, split) = rule.row(i);
        let tile = &mut lhs_packed[(i / mr) * ts..(i / mr + 1) * ts];
        let r = i % mr;
        // Whole groups rounded one way go through NEON in two runs, 16 values at a time straight
        // into their chunks: groups `[0, g1)` lie below `split` (rounded by `first`), groups
        // `[g2, whole)` at or past it (away). The group that straddles `split` and the last
        // partial group take the group path (as does every group off aarch64).
        let whole = if cfg!(all(target_arch = "aarch64", target_feature = "neon")) { k / quant::GROUP } else { 0 };
        let g1 = (split / quant::GROUP).min(whole);
        let g2 = split.div_ceil(quant::GROUP).clamp(g1, whole);
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        for (groups, round) in [(0..g1, first), (g2..whole, Round::Away)] {
            if groups.is_empty() {
                continue;
            }
            let start = groups.start * quant::GROUP;
            // `bd` is 4 or 8; one row per tile: contiguous 4-byte chunks.
            let (bd, step) = if mr == 1 { (4, 4) } else { (bd, mr * bd) };
            let dst = tile.as_mut_ptr().wrapping_add((start / bd) * step + r * bd);
            let (x, mult, zp) = (row[start..].as_ptr(), rq.multiplier, rq.zero_point as i16);
            // SAFETY: reads the values `row[start..32 * groups.end]` (`32 * groups.end <= 32 *
            // whole <= k`) and writes chunks `t < 32 * groups.len() / bd` of depth `start + bd t`
            // at `dst + t * step`: the row's `bd` bytes of that chunk, inside the tile's
            // `mr * kp` data bytes. The zero point is in `[-128, 127]`.
            unsafe { quantize_run(x, 2 * groups.len(), round, bd, mult, zp, dst, step) };
        }
        for g in (g1..g2).chain(whole..kp / quant::GROUP) {
            let start = g * quant::GROUP;
            let own = split.saturating_sub(start);
            // Never empty: `kp` is `k` rounded up to a multiple of the group.
            let part = &row[start..k.min(start + quant::GROUP)];
            S::widen(part, &mut wide);
            let (mult, zp) = (rq.multiplier, rq.zero_point);
            let mut q = quant::quantize_group_split(&wide[..part.len()], mult, zp, -128, 127, first, own);
            // K padding: x[k - 1] again, rounded away, with the row's own zero point (only
            // the last group can be partial).
            if part.len() < quant::GROUP {
                let last = quant::quantize_one(row[k - 1].to_f32(), rq.multiplier, rq.zero_point, -128, 127);
                q[part.len()..].fill(last);
            }
            for (t, chunk) in q.chunks_exact(bd).enumerate() {
                let at = (start / bd + t) * mr * bd + r * bd;
                for (dst, &v) in tile[at..at + bd].iter_mut().zip(chunk) {
                    *dst = v as u8;
                }
            }
        }
        write_u32(tile, mr * kp + 4 * r, (-rq.zero_point) as u32);
        write_u32(tile, mr * kp + 4 * mr + 4 * r, rq.dq_scale.to_bits());
    }
    Ok(())
}

/// `16 * blocks` values of one row of a half-precision packer quantized with rounding `round`,
/// stored as [`quant::neon::quantize_i8_chunks`] does (`bd` 4 or 8).
///
/// # Safety
///
/// `x` is aligned for `S` and readable for `16 * blocks` values and `dst + t * step` writable
/// for `bd` bytes, `t < 16 * blocks / bd`.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[allow(clippy::too_many_arguments)]
unsafe fn quantize_run<S: Element>(
    x: *const S,
    blocks: usize,
    round: Round,
    bd: usize,
    mult: f32,
    zp: i16,
    dst: *mut u8,
    step: usize,
) {
    use quant::neon::{AWAY, EVEN, ZERO, quantize_i8_chunks as q};
    // SAFETY: the caller's contract.
    unsafe {
        match (bd, round) {
            (4, Round::Away) => q::<S, 4, false, AWAY>(x, blocks, mult, zp, dst, step),
            (4, Round::Even) => q::<S, 4, false, EVEN>(x, blocks, mult, zp, dst, step),
            (4, Round::Zero) => q::<S, 4, false, ZERO>(x, blocks, mult, zp, dst, step),
            (_, Round::Away) => q::<S, 8, false, AWAY>(x, blocks, mult, zp, dst, step),
            (_, Round::Even) => q::<S, 8, false, EVEN>(x, blocks, mult, zp, dst, step),
            (_, Round::Zero) => q::<S, 8, false, ZERO>(x, blocks, mult, zp, dst, step),
        }
    }
}

/// Quantizes and packs `m` rows of f16 activations (`lhs_quant_pack_qai8dxp_f16_neon`), for the
/// `f16_qai8dxp_*` families; arguments as [`quantize_pack`] (strides in elements).
///
/// The values are widened to f32 exactly and quantized as in [`quantize_pack`], except for the
/// rounding of `x * multiplier`, which follows KleidiAI's f16 packer (docs/formats.md,
/// §Arithmetic: qai8dxp from f16 and bf16): with `mr = 4`, rows in whole groups of four of
/// the call truncate the first `8 * floor(k / 8)` values and round the rest away from zero;
/// every other row rounds values `j < bd * floor(k / bd) - 8` to even and the rest away. So the
/// bytes of a row depend on `mr`, `kr / sr` and whether the call packed it in a group.
///
/// **Divergence from KleidiAI:** every row adds its own zero point. KleidiAI's packer, with
/// `mr = 4` and `kr / sr = 4`, adds the zero point of another row of the group to the first
/// `8 * floor(k / 8)` values (formats.md lists which), so its quantized rows are off by the
/// difference of the two zero points; its `qai8dxp4x4_qsi4cxp4x4` and `qai8dxp4x4_qsi8cxp4x4`
/// kernels then give results off by orders of magnitude. qgemm's bytes equal KleidiAI's wherever
/// the zero points of a group agree, and the kernels of every packing run KleidiAI's bytes
/// unchanged.
///
/// Checks: `kr / sr` 4 or 8 ([`Error::Unsupported`] `Kr`), `mr` 1 or 4 (`Mr`), and
/// `m_idx_start` a multiple of `mr` ([`Error::MisalignedStart`]; KleidiAI corrupts the buffer
/// there). Packing `[0, m1)` and `[m1, m)` with `m1` a multiple of `mr` gives the bytes of one
/// call. NaN or infinite values: [`Error::NonFinite`], nothing written.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack_f16(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[f16],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
) -> Result<()> {
    // `kr / sr` needs a legal `sr` (0 would divide by zero): the general checks first.
    packing.check_lhs()?;
    let bd = packing.block_depth();
    if bd != 4 && bd != 8 {
        return Err(Error::Unsupported { param: Param::Kr, value: packing.kr });
    }
    let grouped = packing.mr == 4;
    let rule = |m: usize| Rule {
        even_below: (bd * (k / bd)).saturating_sub(8),
        grouped: if grouped { 4 * (m / 4) } else { 0 },
        vec8: 8 * (k / 8),
    };
    pack_half(packing, m, k, m_idx_start, lhs, lhs_stride, lhs_packed, rule)
}

/// Quantizes and packs `m` rows of bf16 activations (`lhs_quant_pack_qai8dxp_bf16_neon`), for the
/// `bf16_qai8dxp_*` families; arguments as [`quantize_pack`] (strides in elements).
///
/// The values are widened to f32 exactly and quantized as in [`quantize_pack`], except for the
/// rounding of `x * multiplier`: to even for the first `8 * floor(k / 8)` values of every row,
/// away from zero for the last `k % 8` (KleidiAI's bf16 packer).
///
/// Checks: `kr / sr` must be 8, `mr` 1 or 4 ([`Error::Unsupported`]), `m_idx_start` a multiple
/// of `mr` ([`Error::MisalignedStart`]; KleidiAI corrupts the buffer there). NaN or infinite
/// values: [`Error::NonFinite`], nothing written.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack_bf16(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[bf16],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_lhs()?;
    if packing.block_depth() != 8 {
        return Err(Error::Unsupported { param: Param::Kr, value: packing.kr });
    }
    let rule = |_m: usize| Rule { even_below: 8 * (k / 8), grouped: 0, vec8: 8 * (k / 8) };
    pack_half(packing, m, k, m_idx_start, lhs, lhs_stride, lhs_packed, rule)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// `sr = 0` is a typed error for every source type, as for f32 (the f16 and bf16 packers
    /// divided `kr` by it; found by fuzzing).
    #[test]
    fn split_ratio_zero_is_rejected_for_every_source() {
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 0 };
        let sr0 = Err(Error::Unsupported { param: Param::Sr, value: 0 });
        let mut out = [0xa5u8; 64];
        assert_eq!(quantize_pack(&p, 1, 4, 0, &[1.0; 4], 4, &mut out), sr0);
        assert_eq!(quantize_pack_f16(&p, 1, 4, 0, &[f16::ONE; 4], 4, &mut out), sr0);
        assert_eq!(quantize_pack_bf16(&p, 1, 4, 0, &[bf16::ONE; 4], 4, &mut out), sr0);
        assert!(out.iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn spec_numeric_example() {
        // docs/formats.md, §LHS: mr = 1, k = 4, x = [-1, 0.5, 2, 0].
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 2 };
        let mut out = [0u8; 40];
        quantize_pack(&p, 1, 4, 0, &[-1.0, 0.5, 2.0, 0.0], 4, &mut out).unwrap();
        assert_eq!(&out[0..4], &[0x80, 0x00, 0x7f, 0xd5]);
        assert!(out[4..32].iter().all(|&b| b == 0xd5));
        assert_eq!(&out[32..40], &[0x2b, 0, 0, 0, 0xc1, 0xc0, 0x40, 0x3c]);
    }

    #[test]
    fn zero_row_and_constant_row() {
        let z = row_quant(0.0, 0.0);
        assert_eq!((z.multiplier, z.zero_point, z.dq_scale), (1.0, 127, 1.0));
        let c = row_quant(0.7, 0.7);
        assert_eq!(c.zero_point, -128);
        assert_eq!(quantize(0.7, &c), 127);
    }

    /// The packing of docs/formats.md written out element by element, for comparison.
    fn reference_pack(p: &Packing, m: usize, k: usize, start: usize, x: &[f32], stride: usize, out: &mut [u8]) {
        let (mr, bd, kp) = (p.mr, p.block_depth(), k.div_ceil(32) * 32);
        let ts = tile_stride(k, mr).unwrap();
        for i in 0..m {
            let row = &x[i * stride..i * stride + k];
            let (lo, hi) = row.iter().fold((row[0], row[0]), |(a, b), &v| (a.min(v), b.max(v)));
            let rq = row_quant(lo, hi);
            let (slot, tile) = ((start % mr + i) % mr, (start % mr + i) / mr);
            for j in 0..kp {
                let q = quantize(row[j.min(k - 1)], &rq);
                out[tile * ts + (j / bd) * mr * bd + slot * bd + j % bd] = q as u8;
            }
            write_u32(&mut out[tile * ts..], mr * kp + 4 * slot, (-rq.zero_point) as u32);
            write_u32(&mut out[tile * ts..], mr * kp + 4 * mr + 4 * slot, rq.dq_scale.to_bits());
        }
    }

    #[test]
    fn every_block_depth_and_row_count_matches_the_reference() {
        let mut s = 7u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 6.0 - 2.5
        };
        // 70 rows pass the 64-row min/max cache; k covers whole groups, tails and one group.
        for (m, k) in [(1, 32), (3, 100), (70, 64), (5, 4096), (2, 33), (66, 31)] {
            let stride = k + 3;
            let mut x: Vec<f32> = (0..m * stride).map(|_| next()).collect();
            x[0] = 1.0e30; // a huge value: codes saturate nowhere else
            for (mr, kr, sr) in
                [(1, 4, 1), (1, 16, 2), (4, 4, 1), (4, 16, 2), (4, 8, 1), (2, 32, 1), (3, 2, 1), (4, 32, 2)]
            {
                let p = Packing { mr, nr: 4, kr, sr };
                for start in [0, 1] {
                    let size = tile_stride(k, mr).unwrap() * (start % mr + m).div_ceil(mr);
                    let (mut got, mut want) = (vec![0x5au8; size], vec![0x5au8; size]);
                    quantize_pack(&p, m, k, start, &x, stride, &mut got).unwrap();
                    reference_pack(&p, m, k, start, &x, stride, &mut want);
                    assert_eq!(got, want, "m {m} k {k} mr {mr} kr {kr} sr {sr} start {start}");
                }
            }
            // A non-finite value anywhere (also in a row past the cache) is reported at its index
            // and nothing is written.
            for at in [0, m * stride - 4, (m - 1) * stride + k / 2] {
                let mut bad = x.clone();
                bad[at] = if at % 2 == 0 { f32::NAN } else { f32::INFINITY };
                let p = Packing { mr: 4, nr: 4, kr: 4, sr: 1 };
                let mut out = vec![0x5au8; tile_stride(k, 4).unwrap() * m.div_ceil(4)];
                let e = quantize_pack(&p, m, k, 0, &bad, stride, &mut out);
                if at % stride < k {
                    assert_eq!(e, Err(Error::NonFinite { buffer: crate::error::Buffer::Lhs, index: at }));
                    assert!(out.iter().all(|&b| b == 0x5a));
                } else {
                    assert_eq!(e, Ok(()), "a value between rows is not read");
                }
            }
        }
    }

    /// The f16/bf16 packers written out element by element: the row's min/max of the widened
    /// values, each value rounded by the position rule, K padding `x[k - 1]` rounded away.
    #[test]
    fn scaled_packer_is_the_packer_on_the_products() {
        // Every block depth and `mr`, k tails (a partial group, no whole group, whole groups
        // only), more rows than the min/max cache, a start inside a tile.
        let mut seed = 0x5eed_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for (mr, kr, sr) in [(1, 16, 2), (4, 16, 2), (4, 8, 2), (8, 8, 1), (4, 4, 1)] {
            let p = Packing { mr, nr: 4, kr, sr };
            for (m, k, start) in [(3, 64, 0), (5, 83, 1), (2, 7, 0), (ROW_CACHE + 3, 40, 2)] {
                let stride = k + 3;
                let x: Vec<f32> = (0..m * stride).map(|_| (next() % 2001) as f32 / 100.0 - 10.0).collect();
                let scale: Vec<f32> =
                    (0..k).map(|j| if j % 5 == 0 { 0.5 } else { 0.1 + (next() % 300) as f32 / 97.0 }).collect();
                let products: Vec<f32> =
                    x.iter().enumerate().map(|(e, v)| v * scale[(e % stride).min(k - 1)]).collect();
                let size = (start % mr + m).div_ceil(mr) * tile_stride(k, mr).unwrap();
                let (mut a, mut b) = (vec![0x5au8; size], vec![0x5au8; size]);
                quantize_pack(&p, m, k, start, &products, stride, &mut a).unwrap();
                quantize_pack_scaled(&p, m, k, start, &x, stride, &scale, &mut b).unwrap();
                assert_eq!(a, b, "mr {mr} kr {kr} sr {sr} m {m} k {k} start {start}");
                // Errors: the scale, then a product that overflows (at its activation), and
                // nothing written.
                let mut bad = scale.clone();
                bad[k - 1] = f32::NAN;
                let e = quantize_pack_scaled(&p, m, k, start, &x, stride, &bad, &mut b).unwrap_err();
                assert_eq!(e, Error::NonFinite { buffer: Buffer::InputScale, index: k - 1 });
                let e = quantize_pack_scaled(&p, m, k, start, &x, stride, &scale[..k - 1], &mut b).unwrap_err();
                assert!(matches!(e, Error::BufferTooShort { buffer: Buffer::InputScale, .. }));
                bad[k - 1] = f32::MAX;
                let mut xo = x.clone();
                for i in 0..m {
                    xo[i * stride + k - 1] = if i == m - 1 { 3.0 } else { 0.5 };
                }
                b.fill(0x5a);
                let e = quantize_pack_scaled(&p, m, k, start, &xo, stride, &bad, &mut b).unwrap_err();
                assert_eq!(e, Error::NonFinite { buffer: Buffer::Lhs, index: (m - 1) * stride + k - 1 });
                assert!(b.iter().all(|&v| v == 0x5a));
            }
        }
    }

    fn reference_pack_half<S: Element>(p: &Packing, m: usize, k: usize, x: &[S], stride: usize, rule: Rule) -> Vec<u8> {
        let (mr, bd, kp) = (p.mr, p.block_depth(), k.div_ceil(32) * 32);
        let ts = tile_stride(k, mr).unwrap();
        let mut out = vec![0x5au8; ts * m.div_ceil(mr)];
        for i in 0..m {
            let row: Vec<f32> = x[i * stride..i * stride + k].iter().map(|v| v.to_f32()).collect();
            let (lo, hi) = row.iter().fold((row[0], row[0]), |(a, b), &v| (a.min(v), b.max(v)));
            let rq = row_quant(lo, hi);
            let (first, split) = rule.row(i);
            let (slot, tile) = (i % mr, i / mr);
            for j in 0..kp {
                let round = if j < split && j < k { first } else { Round::Away };
                let q = round.apply(row[j.min(k - 1)] * rq.multiplier).saturating_add(rq.zero_point).clamp(-128, 127);
                out[tile * ts + (j / bd) * mr * bd + slot * bd + j % bd] = q as u8;
            }
            write_u32(&mut out[tile * ts..], mr * kp + 4 * slot, (-rq.zero_point) as u32);
            write_u32(&mut out[tile * ts..], mr * kp + 4 * mr + 4 * slot, rq.dq_scale.to_bits());
        }
        out
    }

    #[test]
    fn half_packers_match_the_reference_rule() {
        let mut s = 11u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s >> 8
        };
        // Rows of half-integers in [-127.5, 127.5] make `x * multiplier` a tie (multiplier 1),
        // so ties to even, away and truncation all differ; other rows are random. 70 rows pass
        // the 64-row min/max cache; k covers whole groups, tails of every length class.
        for (m, k) in [(1, 32), (4, 64), (5, 100), (70, 40), (8, 4096), (3, 7), (9, 264), (4, 33)] {
            let stride = k + 5;
            let x: Vec<f32> = (0..m * stride)
                .map(|e| {
                    let r = next();
                    if (e / stride) % 3 == 0 {
                        let v = (r % 256) as f32 - 127.5;
                        if e % stride == 0 {
                            127.5
                        } else if e % stride == 1 {
                            -127.5
                        } else {
                            v
                        }
                    } else {
                        (r as f32 / (1u32 << 24) as f32 - 0.4) * 30.0
                    }
                })
                .collect();
            let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
            let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
            for (mr, kr, sr) in [(1, 4, 1), (1, 8, 1), (4, 4, 1), (4, 8, 1), (4, 16, 2), (1, 16, 2)] {
                let p = Packing { mr, nr: 4, kr, sr };
                let bd = p.block_depth();
                let size = tile_stride(k, mr).unwrap() * m.div_ceil(mr);
                let mut got = vec![0x5au8; size];
                let rule = Rule {
                    even_below: (bd * (k / bd)).saturating_sub(8),
                    grouped: if mr == 4 { 4 * (m / 4) } else { 0 },
                    vec8: 8 * (k / 8),
                };
                quantize_pack_f16(&p, m, k, 0, &xh, stride, &mut got).unwrap();
                assert_eq!(got, reference_pack_half(&p, m, k, &xh, stride, rule), "f16 m {m} k {k} mr {mr} kr {kr}");
                if bd == 8 {
                    let rule = Rule { even_below: 8 * (k / 8), grouped: 0, vec8: 8 * (k / 8) };
                    got.fill(0x5a);
                    quantize_pack_bf16(&p, m, k, 0, &xb, stride, &mut got).unwrap();
                    assert_eq!(got, reference_pack_half(&p, m, k, &xb, stride, rule), "bf16 m {m} k {k} mr {mr}");
                }
            }
            // A non-finite value (also in a row past the cache) is reported at its index and
            // nothing is written.
            for at in [0, (m - 1) * stride + k - 1, (m - 1) * stride + k / 2] {
                let mut bad = xh.clone();
                bad[at] = if at % 2 == 0 { f16::NAN } else { f16::NEG_INFINITY };
                let p = Packing { mr: 4, nr: 4, kr: 8, sr: 1 };
                let mut out = vec![0x5au8; tile_stride(k, 4).unwrap() * m.div_ceil(4)];
                let e = quantize_pack_f16(&p, m, k, 0, &bad, stride, &mut out);
                assert_eq!(e, Err(Error::NonFinite { buffer: crate::error::Buffer::Lhs, index: at }));
                assert!(out.iter().all(|&b| b == 0x5a));
                let mut bad = xb.clone();
                bad[at] = if at % 2 == 0 { bf16::NAN } else { bf16::INFINITY };
                let e = quantize_pack_bf16(&p, m, k, 0, &bad, stride, &mut out);
                assert_eq!(e, Err(Error::NonFinite { buffer: crate::error::Buffer::Lhs, index: at }));
                assert!(out.iter().all(|&b| b == 0x5a));
            }
        }
    }

    #[test]
    fn worked_offset_example() {
        // docs/formats.md, §LHS: mr = 4, kr = 16, sr = 2, k = 40: TL = 288.
        let p = Packing { mr: 4, nr: 8, kr: 16, sr: 2 };
        assert_eq!(tile_stride(40, 4).unwrap(), 288);
        assert_eq!(packed_offset(4, 40, &p).unwrap(), 288);
        assert_eq!(packed_size(5, 40, &p).unwrap(), 576);
    }
}
