//! Packing parameters, the identities of the packed formats, the tile shapes of kernels (fixed
//! or scaled by the vector length) and the packed-layout helpers every packer and kernel shares.

use crate::cpu::CpuFeatures;
use crate::error::{Dim, Error, Param, Result};

/// Packing parameters shared by the LHS packer, the RHS packer and a kernel
/// (docs/kernels.md). These are the numbers only; which layout they parameterize is the
/// kernel's [`LhsFormat`] and [`RhsFormat`] ([`LhsPacking`], [`RhsPacking`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Packing {
    /// LHS rows per packed tile.
    pub mr: usize,
    /// Output channels per packed RHS tile.
    pub nr: usize,
    /// Depth one row or column contributes per inner step (int4: nibbles).
    pub kr: usize,
    /// Split ratio: `kr` is stored as `sr` chunks of `kr / sr` bytes (int4 weights: 2).
    pub sr: usize,
}

/// Largest `mr` and `nr` the packers accept: a tile of 4 vectors of 2048 bits in 32-bit lanes
/// (KleidiAI's NEON kernels use at most 16).
pub const MAX_TILE: usize = 256;

impl Packing {
    /// An int4 packing (`sr = 2`).
    pub const fn int4(mr: usize, nr: usize, kr: usize) -> Packing {
        Packing { mr, nr, kr, sr: 2 }
    }

    /// An int8-weight packing (`sr = 1`, so `bd = kr`).
    pub const fn int8(mr: usize, nr: usize, kr: usize) -> Packing {
        Packing { mr, nr, kr, sr: 1 }
    }

    /// `bd = kr / sr`: bytes (int4 RHS) or values (int8) one row or column contributes to an
    /// interleaved chunk.
    pub const fn block_depth(&self) -> usize {
        self.kr / self.sr
    }

    fn check_common(&self) -> Result<()> {
        if self.mr == 0 || self.mr > MAX_TILE {
            return Err(Error::Unsupported { param: Param::Mr, value: self.mr });
        }
        if self.nr == 0 || self.nr > MAX_TILE {
            return Err(Error::Unsupported { param: Param::Nr, value: self.nr });
        }
        if self.sr == 0 || self.sr > 2 {
            return Err(Error::Unsupported { param: Param::Sr, value: self.sr });
        }
        if self.kr == 0 || !self.kr.is_multiple_of(self.sr) {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// Legal for the LHS formats: `bd` must divide 32 (the padding granule of `qai8dxp`, the
    /// smallest block of `qsi8d32p`).
    pub(crate) fn check_lhs(&self) -> Result<()> {
        self.check_common()?;
        if 32 % self.block_depth() != 0 {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// Legal for the int4 RHS formats: `sr = 2` and `bd` dividing the 16 bytes of a 32-depth
    /// group.
    pub(crate) fn check_rhs_int4(&self) -> Result<()> {
        self.check_common()?;
        if self.sr != 2 {
            return Err(Error::Unsupported { param: Param::Sr, value: self.sr });
        }
        if 16 % self.block_depth() != 0 {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// Legal for the int8 RHS format: `sr = 1` and `kr` dividing the 32 depths of a padding
    /// granule.
    pub(crate) fn check_rhs_int8(&self) -> Result<()> {
        self.check_common()?;
        if self.sr != 1 {
            return Err(Error::Unsupported { param: Param::Sr, value: self.sr });
        }
        if 32 % self.kr != 0 {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// Whether the RHS sides of the two packings have the same parameters (`nr`, `kr`, `sr`;
    /// `mr` is the LHS side). Whether weights packed for one serve kernels of the other also
    /// takes the same [`RhsFormat`]: compare [`RhsPacking`]s.
    pub const fn same_rhs(&self, other: &Packing) -> bool {
        self.nr == other.nr && self.kr == other.kr && self.sr == other.sr
    }

    /// The RHS side in format `format`.
    pub const fn rhs(&self, format: RhsFormat) -> RhsPacking {
        RhsPacking { format, nr: self.nr, kr: self.kr, sr: self.sr }
    }

    /// The LHS side in format `format`.
    pub const fn lhs(&self, format: LhsFormat) -> LhsPacking {
        LhsPacking { format, mr: self.mr, kr: self.kr, sr: self.sr }
    }

    /// `n_idx % nr == 0`.
    pub(crate) fn check_n_start(&self, n_idx: usize) -> Result<()> {
        if !n_idx.is_multiple_of(self.nr) {
            return Err(Error::MisalignedStart { dim: Dim::NIdx, value: n_idx, step: self.nr });
        }
        Ok(())
    }
}

/// What a kernel reads as its LHS: the identity of a packed LHS layout (the format names of
/// docs/formats.md), or the activations themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum LhsFormat {
    /// int8 per row with an f32 scale and int32 offset ([`lhs::qai8dxp`](crate::lhs::qai8dxp)).
    Qai8dxp,
    /// int8 per block of 32 with an f16 scale ([`lhs::qsi8d32p`](crate::lhs::qsi8d32p)).
    Qsi8d32p,
    /// int8 per block with an f32 scale and block sums
    /// ([`lhs::qsi8d32pscalef32`](crate::lhs::qsi8d32pscalef32)).
    Qsi8d32pscalef32,
    /// bf16 in tiles of `mr` rows and blocks of 4 depths ([`lhs::bf16p`](crate::lhs::bf16p)).
    Bf16p,
    /// f32 rows read in place, with a row stride (not packed).
    F32,
    /// f16 rows read in place, with a row stride (not packed).
    F16,
}

impl LhsFormat {
    /// The format's name in docs/formats.md (`"qai8dxp"`, `"bf16p"`; `"f32"`, `"f16"` for
    /// unpacked rows).
    pub const fn name(self) -> &'static str {
        match self {
            LhsFormat::Qai8dxp => "qai8dxp",
            LhsFormat::Qsi8d32p => "qsi8d32p",
            LhsFormat::Qsi8d32pscalef32 => "qsi8d32pscalef32",
            LhsFormat::Bf16p => "bf16p",
            LhsFormat::F32 => "f32",
            LhsFormat::F16 => "f16",
        }
    }

    /// Whether the kernels read a packed buffer (bytes), not the activations themselves.
    pub const fn is_packed(self) -> bool {
        !matches!(self, LhsFormat::F32 | LhsFormat::F16)
    }
}

/// The identity of a packed weight (RHS) layout: which packer writes it (the format names of
/// docs/formats.md). Two kernels read the same weights only with the same format and parameters
/// ([`RhsPacking`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum RhsFormat {
    /// int4, one f32 scale per channel ([`rhs::qsi4cxp`](crate::rhs::qsi4cxp)).
    Qsi4cxp,
    /// int4, a bf16 scale per block ([`rhs::qsi4c32p`](crate::rhs::qsi4c32p)).
    Qsi4c32p,
    /// int4 GGML `Q4_0` blocks with f16 scales ([`rhs::qsi4c32pscalef16`](crate::rhs::qsi4c32pscalef16)).
    Qsi4c32pscalef16,
    /// int8, one f32 scale per channel ([`rhs::qsi8cxp`](crate::rhs::qsi8cxp)).
    Qsi8cxp,
    /// asymmetric int4, f32 scale and offset per block ([`rhs::qai4c32p`](crate::rhs::qai4c32p)).
    Qai4c32p,
    /// 2-bit codes through a look-up table ([`rhs::qsu2cxp`](crate::rhs::qsu2cxp)).
    Qsu2cxp,
    /// f32 values with f32 biases ([`rhs::f32p`](crate::rhs::f32p)).
    F32p,
    /// f16 values with f16 biases ([`rhs::f16p`](crate::rhs::f16p)).
    F16p,
    /// bf16 values in blocks of 4 depths with f32 biases ([`rhs::bf16p12`](crate::rhs::bf16p12)).
    Bf16pB32,
    /// bf16 values in blocks of 4 depths with f16 biases ([`rhs::bf16p12`](crate::rhs::bf16p12)).
    Bf16pB16,
}

impl RhsFormat {
    /// The format's name in docs/formats.md (`"qsi4cxp"`, `"f32p"`, `"bf16p_b32"`).
    pub const fn name(self) -> &'static str {
        match self {
            RhsFormat::Qsi4cxp => "qsi4cxp",
            RhsFormat::Qsi4c32p => "qsi4c32p",
            RhsFormat::Qsi4c32pscalef16 => "qsi4c32pscalef16",
            RhsFormat::Qsi8cxp => "qsi8cxp",
            RhsFormat::Qai4c32p => "qai4c32p",
            RhsFormat::Qsu2cxp => "qsu2cxp",
            RhsFormat::F32p => "f32p",
            RhsFormat::F16p => "f16p",
            RhsFormat::Bf16pB32 => "bf16p_b32",
            RhsFormat::Bf16pB16 => "bf16p_b16",
        }
    }

    /// Float formats: bytes of one packed value and of one bias; `None` for the quantized ones.
    pub const fn float_sizes(self) -> Option<(usize, usize)> {
        match self {
            RhsFormat::F32p => Some((4, 4)),
            RhsFormat::F16p => Some((2, 2)),
            RhsFormat::Bf16pB32 => Some((2, 4)),
            RhsFormat::Bf16pB16 => Some((2, 2)),
            _ => None,
        }
    }
}

/// A packed weight layout: its format and parameters. Weights packed in one are read by every
/// kernel whose [`rhs_packing`](crate::matmul::Kernel::rhs_packing) equals it, and only by those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RhsPacking {
    /// The layout's identity.
    pub format: RhsFormat,
    /// Output channels per tile.
    pub nr: usize,
    /// Depth per inner step.
    pub kr: usize,
    /// Split ratio.
    pub sr: usize,
}

impl RhsPacking {
    /// A float format's packing (`sr = 1`).
    pub const fn float(format: RhsFormat, nr: usize, kr: usize) -> RhsPacking {
        RhsPacking { format, nr, kr, sr: 1 }
    }

    /// The parameters as a [`Packing`] with `mr = 1` (for the packers, which ignore `mr`).
    pub const fn packing(&self) -> Packing {
        Packing { mr: 1, nr: self.nr, kr: self.kr, sr: self.sr }
    }
}

impl RhsPacking {
    /// Bytes of one packed tile of `nr` channels of depth `k` (`bl`: the block length of the
    /// per-block formats, ignored by the others), after the format's checks of the parameters:
    /// the one formula per format every kernel, packer and operator uses.
    pub fn tile_stride(&self, k: usize, bl: usize) -> Result<usize> {
        let p = self.packing();
        match self.format {
            RhsFormat::Qsi4cxp => {
                p.check_rhs_int4()?;
                crate::rhs::qsi4cxp::tile_stride(k, self.nr)
            }
            RhsFormat::Qsi4c32p => {
                p.check_rhs_int4()?;
                crate::rhs::qsi4c32p::tile_stride(k, bl, self.nr)
            }
            RhsFormat::Qsi4c32pscalef16 => {
                p.check_rhs_int4()?;
                crate::rhs::qsi4c32pscalef16::tile_stride(k, bl, self.nr)
            }
            RhsFormat::Qsi8cxp => {
                p.check_rhs_int8()?;
                crate::rhs::qsi8cxp::tile_stride(k, self.nr)
            }
            RhsFormat::Qai4c32p => {
                p.check_rhs_int4()?;
                crate::rhs::qai4c32p::tile_stride(k, bl, self.nr)
            }
            RhsFormat::Qsu2cxp => {
                crate::rhs::qsu2cxp::check_packing(&p)?;
                crate::rhs::qsu2cxp::tile_stride(k, self.nr)
            }
            RhsFormat::F32p | RhsFormat::F16p | RhsFormat::Bf16pB32 | RhsFormat::Bf16pB16 => {
                crate::rhs::float::tile_stride(self, k)
            }
        }
    }

    /// Bytes of a packed RHS of `n` channels: `ceil(n / nr)` tiles.
    pub fn packed_size(&self, n: usize, k: usize, bl: usize) -> Result<usize> {
        let ts = self.tile_stride(k, bl)?;
        n.div_ceil(self.nr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Byte offset of the tile holding channel `n_idx` (a multiple of `nr`).
    pub fn packed_offset(&self, n_idx: usize, k: usize, bl: usize) -> Result<usize> {
        let ts = self.tile_stride(k, bl)?;
        self.packing().check_n_start(n_idx)?;
        (n_idx / self.nr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }
}

impl LhsPacking {
    /// Bytes of one packed tile of `mr` rows of depth `k` (`bl`: the block length of the
    /// per-block formats, ignored by the others), after the format's checks of the parameters;
    /// 0 for rows read in place.
    pub fn tile_stride(&self, k: usize, bl: usize) -> Result<usize> {
        let p = Packing { mr: self.mr, nr: 1, kr: self.kr, sr: self.sr };
        match self.format {
            LhsFormat::Qai8dxp => {
                p.check_lhs()?;
                crate::lhs::qai8dxp::tile_stride(k, self.mr)
            }
            LhsFormat::Qsi8d32p => {
                p.check_lhs()?;
                crate::lhs::qsi8d32p::tile_stride(k, bl, self.mr)
            }
            LhsFormat::Qsi8d32pscalef32 => {
                p.check_lhs()?;
                crate::lhs::qsi8d32pscalef32::tile_stride(k, bl, self.mr)
            }
            LhsFormat::Bf16p => crate::lhs::bf16p::tile_stride(self, k),
            LhsFormat::F32 | LhsFormat::F16 => {
                if k == 0 {
                    return Err(Error::ZeroDim { dim: Dim::K });
                }
                if self.mr != 1 {
                    return Err(Error::Unsupported { param: Param::Mr, value: self.mr });
                }
                Ok(0)
            }
        }
    }

    /// Bytes of a packed LHS of `m` rows: `ceil(m / mr)` tiles (0 for rows read in place).
    pub fn packed_size(&self, m: usize, k: usize, bl: usize) -> Result<usize> {
        let ts = self.tile_stride(k, bl)?;
        m.div_ceil(self.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Byte offset of the tile holding row `m_idx` (a multiple of `mr`).
    pub fn packed_offset(&self, m_idx: usize, k: usize, bl: usize) -> Result<usize> {
        let ts = self.tile_stride(k, bl)?;
        if !m_idx.is_multiple_of(self.mr) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: self.mr });
        }
        (m_idx / self.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }
}

impl core::fmt::Display for RhsPacking {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}{}x{}", self.format.name(), self.nr, self.kr)
    }
}

/// A packed activation layout: its format and parameters (`mr = 1` for unpacked rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LhsPacking {
    /// The layout's identity.
    pub format: LhsFormat,
    /// Rows per tile.
    pub mr: usize,
    /// Depth per inner step.
    pub kr: usize,
    /// Split ratio.
    pub sr: usize,
}

impl core::fmt::Display for LhsPacking {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.format.is_packed() {
            write!(f, "{}{}x{}", self.format.name(), self.mr, self.kr)
        } else {
            f.write_str(self.format.name())
        }
    }
}

/// One extent of a kernel's tile (`m_step`, `n_step`, `mr`, `nr`): a fixed number, or a
/// multiple of the streaming vector length known only at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Extent {
    /// The same on every CPU.
    Fixed(usize),
    /// `times * svl / lane_bytes`: `times` vectors of `lane_bytes`-byte lanes
    /// (KleidiAI's `1vl`, `4vl` in 32-bit lanes: `times` 1 or 4, `lane_bytes` 4).
    Vl {
        /// Vectors.
        times: usize,
        /// Bytes per lane.
        lane_bytes: usize,
    },
}

impl Extent {
    /// The value on `cpu`: `None` for a vector-length extent when `cpu` has no known streaming
    /// vector length.
    pub const fn resolve(self, cpu: &CpuFeatures) -> Option<usize> {
        match self {
            Extent::Fixed(v) => Some(v),
            Extent::Vl { times, lane_bytes } => match cpu.svl_bytes() {
                Some(svl) if lane_bytes > 0 => Some(times * (svl / lane_bytes)),
                _ => None,
            },
        }
    }

    /// Whether the extent is the same on every CPU.
    pub const fn is_fixed(self) -> bool {
        matches!(self, Extent::Fixed(_))
    }

    /// The largest value on any CPU (the value at a 2048-bit vector).
    pub const fn max(self) -> usize {
        match self {
            Extent::Fixed(v) => v,
            Extent::Vl { times, lane_bytes } => match crate::cpu::MAX_SVL_BYTES.checked_div(lane_bytes) {
                Some(lanes) => times * lanes,
                None => 0,
            },
        }
    }
}

/// A kernel's tile shape and packed formats before resolution for a CPU
/// ([`Descriptor::shape`](crate::matmul::Descriptor::shape)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Shape {
    /// The LHS format.
    pub lhs: LhsFormat,
    /// The RHS format.
    pub rhs: RhsFormat,
    /// Output rows per kernel iteration.
    pub m_step: Extent,
    /// Output columns per kernel iteration.
    pub n_step: Extent,
    /// LHS rows per packed tile.
    pub mr: Extent,
    /// Output channels per packed RHS tile.
    pub nr: Extent,
    /// Depth per inner step.
    pub kr: usize,
    /// Split ratio.
    pub sr: usize,
}

impl Shape {
    /// A fixed shape: steps `(m_step, n_step)` on `packing`.
    pub const fn fixed(lhs: LhsFormat, rhs: RhsFormat, (m_step, n_step): (usize, usize), p: Packing) -> Shape {
        Shape {
            lhs,
            rhs,
            m_step: Extent::Fixed(m_step),
            n_step: Extent::Fixed(n_step),
            mr: Extent::Fixed(p.mr),
            nr: Extent::Fixed(p.nr),
            kr: p.kr,
            sr: p.sr,
        }
    }

    /// The steps and packing on `cpu` (`None`: a vector-length extent and no known vector
    /// length).
    pub const fn resolve(&self, cpu: &CpuFeatures) -> Option<(usize, usize, Packing)> {
        let (Some(ms), Some(ns), Some(mr), Some(nr)) =
            (self.m_step.resolve(cpu), self.n_step.resolve(cpu), self.mr.resolve(cpu), self.nr.resolve(cpu))
        else {
            return None;
        };
        Some((ms, ns, Packing { mr, nr, kr: self.kr, sr: self.sr }))
    }

    /// Whether a kernel of this shape reads weights packed as `rhs` on some CPU: same format,
    /// `kr` and `sr`, and a fixed `nr` equal to `rhs.nr` or one scaling with the vector length
    /// that equals it at some length. Cheaper than resolving (which decides for one CPU).
    pub fn may_read(&self, rhs: &RhsPacking) -> bool {
        if self.rhs != rhs.format || self.kr != rhs.kr || self.sr != rhs.sr {
            return false;
        }
        match self.nr {
            Extent::Fixed(nr) => nr == rhs.nr,
            Extent::Vl { times, lane_bytes } => {
                let mut svl = 16;
                while svl <= crate::cpu::MAX_SVL_BYTES {
                    if lane_bytes > 0 && times * (svl / lane_bytes) == rhs.nr {
                        return true;
                    }
                    svl *= 2;
                }
                false
            }
        }
    }

    /// Whether every extent is fixed.
    pub const fn is_fixed(&self) -> bool {
        self.m_step.is_fixed() && self.n_step.is_fixed() && self.mr.is_fixed() && self.nr.is_fixed()
    }
}

/// `Kp`: `k` rounded up to a multiple of 32, the padded depth of the per-channel formats.
pub(crate) fn padded_k(k: usize) -> Result<usize> {
    k.checked_next_multiple_of(32).ok_or(Error::SizeOverflow)
}

/// Checks `bl` and `k` for the per-block formats: `bl` a non-zero multiple of 32, `k` a
/// non-zero multiple of `bl`.
pub(crate) fn check_blocks(k: usize, bl: usize) -> Result<()> {
    if bl == 0 {
        return Err(Error::ZeroDim { dim: Dim::BlockLen });
    }
    if !bl.is_multiple_of(32) {
        return Err(Error::NotMultiple { dim: Dim::BlockLen, value: bl, multiple_of: 32 });
    }
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if !k.is_multiple_of(bl) {
        return Err(Error::NotMultiple { dim: Dim::K, value: k, multiple_of: bl });
    }
    Ok(())
}

/// Stores byte `j` of `b` at `dst + (j / BD) * step + j % BD`: 16 packed bytes as chunks of
/// `BD` bytes (4, 8 or 16), one chunk per row or column slot of a tile, `step` bytes apart;
/// one 16-byte store when the chunks are contiguous (`step == BD`).
///
/// # Safety
///
/// `dst + t * step` is writable for `BD` bytes for every `t < 16 / BD`.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[inline(always)]
pub(crate) unsafe fn store_chunks<const BD: usize>(b: core::arch::aarch64::uint8x16_t, dst: *mut u8, step: usize) {
    // SAFETY: the caller's contract; contiguous chunks are the 16 bytes at `dst`.
    unsafe {
        if step == BD {
            core::arch::aarch64::vst1q_u8(dst, b);
        } else {
            store_chunks_strided::<BD>(b, dst, step);
        }
    }
}

/// [`store_chunks`] without the test for contiguous chunks (for callers whose `step` is never
/// `BD` unless `BD == 16`). Unaligned stores: a packed buffer has any alignment.
///
/// # Safety
///
/// As [`store_chunks`].
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[inline(always)]
pub(crate) unsafe fn store_chunks_strided<const BD: usize>(
    b: core::arch::aarch64::uint8x16_t,
    dst: *mut u8,
    step: usize,
) {
    use core::arch::aarch64::*;
    // SAFETY: NEON is enabled for the whole target; every store is one of the caller's chunks.
    unsafe {
        if BD == 16 {
            vst1q_u8(dst, b);
        } else if BD == 8 {
            let d = vreinterpretq_u64_u8(b);
            dst.cast::<u64>().write_unaligned(vgetq_lane_u64::<0>(d));
            dst.add(step).cast::<u64>().write_unaligned(vgetq_lane_u64::<1>(d));
        } else {
            let w = vreinterpretq_u32_u8(b);
            dst.cast::<u32>().write_unaligned(vgetq_lane_u32::<0>(w));
            dst.add(step).cast::<u32>().write_unaligned(vgetq_lane_u32::<1>(w));
            dst.add(2 * step).cast::<u32>().write_unaligned(vgetq_lane_u32::<2>(w));
            dst.add(3 * step).cast::<u32>().write_unaligned(vgetq_lane_u32::<3>(w));
        }
    }
}
