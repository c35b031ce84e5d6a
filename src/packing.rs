//! Packing parameters and the packed-layout helpers every packer and kernel shares.

use crate::error::{Dim, Error, Param, Result};

/// Packing parameters shared by the LHS packer, the RHS packer and a kernel
/// (docs/kernels.md).
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

/// Largest `mr` and `nr` the packers accept (KleidiAI uses at most 16).
const MAX_TILE: usize = 64;

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

    /// Whether the RHS sides of the two packings are the same (`nr`, `kr`, `sr`; `mr` is the LHS
    /// side), so weights packed for one serve kernels of the other.
    pub const fn same_rhs(&self, other: &Packing) -> bool {
        self.nr == other.nr && self.kr == other.kr && self.sr == other.sr
    }

    /// `n_idx % nr == 0`.
    pub(crate) fn check_n_start(&self, n_idx: usize) -> Result<()> {
        if !n_idx.is_multiple_of(self.nr) {
            return Err(Error::MisalignedStart { dim: Dim::NIdx, value: n_idx, step: self.nr });
        }
        Ok(())
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
