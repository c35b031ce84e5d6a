//! LHS (activation) formats and their quantize-and-pack routines. One module per packed format.
//!
//! Activations are quantized and packed on every call, with the `mr, kr, sr` of the kernel that
//! will consume them ([`Kernel::packing`](crate::Kernel::packing)).

pub mod bf16p;
pub mod qai8dxp;
pub mod qsi8d32p;
pub mod qsi8d32pscalef32;
pub(crate) mod quant;

use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Result, Stride};
use crate::packing::Packing;

/// Bytes of the packed LHS for `m` rows in tiles of `mr` rows, `tile_stride(mr)` bytes each
/// (every format's `packed_size`).
pub(crate) fn tiles_size(m: usize, packing: &Packing, tile_stride: impl Fn(usize) -> Result<usize>) -> Result<usize> {
    packing.check_lhs()?;
    m.div_ceil(packing.mr).checked_mul(tile_stride(packing.mr)?).ok_or(Error::SizeOverflow)
}

/// Byte offset of the tile that holds row `m_idx`, a multiple of `mr` (every format's
/// `packed_offset`).
pub(crate) fn tile_offset(
    m_idx: usize,
    packing: &Packing,
    tile_stride: impl Fn(usize) -> Result<usize>,
) -> Result<usize> {
    packing.check_lhs()?;
    if !m_idx.is_multiple_of(packing.mr) {
        return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: packing.mr });
    }
    (m_idx / packing.mr).checked_mul(tile_stride(packing.mr)?).ok_or(Error::SizeOverflow)
}

/// The layout checks every LHS packer makes before writing (`m >= 1`): the row stride, the
/// length of the source (f32, f16 or bf16), the length of the packed output for the
/// `ceil((m_idx_start % mr + m) / mr)` tiles the call touches. Returns the tile slot of the first
/// row (`m_idx_start % mr`). Finiteness is each packer's own first pass over the rows (with
/// [`check_finite_row`] for the error), before it writes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_layout<S: Element>(
    mr: usize,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[S],
    lhs_stride: usize,
    packed_len: usize,
    tile_stride: usize,
) -> Result<usize> {
    if lhs_stride < k {
        return Err(Error::StrideTooSmall { stride: Stride::Lhs, given: lhs_stride, needed: k });
    }
    let needed_in = (m - 1).checked_mul(lhs_stride).and_then(|v| v.checked_add(k));
    let needed_in = needed_in.ok_or(Error::SizeOverflow)?;
    if lhs.len() < needed_in {
        return Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: lhs.len(), needed: needed_in });
    }
    let first_slot = m_idx_start % mr;
    let needed_out = first_slot.checked_add(m).map(|rows| rows.div_ceil(mr)).and_then(|t| t.checked_mul(tile_stride));
    let needed_out = needed_out.ok_or(Error::SizeOverflow)?;
    if packed_len < needed_out {
        return Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: packed_len, needed: needed_out });
    }
    Ok(first_slot)
}

/// [`Error::NonFinite`] at the first NaN or infinity of `row` (element `at` of the caller's
/// source), for a row that holds one: a plain search, for error paths.
pub(crate) fn non_finite<S: Element>(row: &[S], at: usize) -> Error {
    Error::NonFinite { buffer: Buffer::Lhs, index: at + row.iter().position(|x| !x.is_finite()).unwrap_or(0) }
}

/// [`Error::NonFinite`] at the first NaN or infinity of `row` (which starts at element `at` of
/// the caller's source).
pub(crate) fn check_finite_row<S: Element>(row: &[S], at: usize) -> Result<()> {
    // A branch-free test per chunk (it vectorizes), the search only in a failing chunk.
    for (c, chunk) in row.chunks(64).enumerate() {
        if !chunk.iter().fold(true, |ok, x| ok & x.is_finite()) {
            let j = c * 64 + chunk.iter().position(|x| !x.is_finite()).unwrap_or(0);
            return Err(Error::NonFinite { buffer: Buffer::Lhs, index: at + j });
        }
    }
    Ok(())
}
