//! Raw float weights and the shared copy packer of the float formats (docs/formats.md, §Float
//! formats).

use crate::element::{Element, check_finite_rows};
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::packing::{MAX_TILE, RhsPacking};
use crate::rhs::{Layout, check_nk};

/// Raw f32 or f16 weights of an `n x k` matrix (`B[k][n]` in docs/formats.md, §Float formats).
///
/// NxK: column (output channel) `c` at `data[c * stride..][..k]`. KxN: depth `j` at
/// `data[j * stride..][..n]`. `stride` is in elements.
#[derive(Debug, Clone, Copy)]
pub struct FloatSource<'a, T> {
    /// The values.
    pub data: &'a [T],
    /// Orientation.
    pub layout: Layout,
    /// Row stride in elements: at least `k` (NxK) or `n` (KxN).
    pub stride: usize,
}

impl<'a, T: Element> FloatSource<'a, T> {
    /// Dense NxK weights: `n` rows of `k` values.
    pub const fn nxk(data: &'a [T], k: usize) -> Self {
        FloatSource { data, layout: Layout::NxK, stride: k }
    }

    /// Dense KxN weights: `k` rows of `n` values.
    pub const fn kxn(data: &'a [T], n: usize) -> Self {
        FloatSource { data, layout: Layout::KxN, stride: n }
    }

    /// Checks the stride and the length of `data` for `n` columns of depth `k` (both `>= 1`).
    pub(crate) fn check(&self, n: usize, k: usize) -> Result<()> {
        let (rows, row) = match self.layout {
            Layout::NxK => (n, k),
            Layout::KxN => (k, n),
        };
        if self.stride < row {
            let (given, needed) = (self.stride.saturating_mul(T::SIZE), row.saturating_mul(T::SIZE));
            return Err(Error::StrideTooSmall { stride: Stride::Rhs, given, needed });
        }
        let needed = (rows - 1).checked_mul(self.stride).and_then(|v| v.checked_add(row));
        let needed = needed.ok_or(Error::SizeOverflow)?;
        if self.data.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: self.data.len(), needed });
        }
        Ok(())
    }

    /// `B[j][c]` (the caller has checked the source for `c < n`, `j < k`).
    #[inline]
    pub(crate) fn at(&self, c: usize, j: usize) -> T {
        match self.layout {
            Layout::NxK => self.data[c * self.stride + j],
            Layout::KxN => self.data[j * self.stride + c],
        }
    }
}

/// Bytes of one tile of a float format: `nr * (bias_size + roundup(k, kr) * value_size)`
/// (docs/formats.md, §Float formats); `k >= 1`, `nr` in `1..=MAX_TILE`, `kr` 1 or 4, `sr` 1.
pub(crate) fn tile_stride(p: &RhsPacking, k: usize) -> Result<usize> {
    let Some((value, bias)) = p.format.float_sizes() else {
        return Err(Error::Unsupported { param: Param::Kr, value: p.kr });
    };
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if p.nr == 0 || p.nr > MAX_TILE {
        return Err(Error::Unsupported { param: Param::Nr, value: p.nr });
    }
    if p.sr != 1 {
        return Err(Error::Unsupported { param: Param::Sr, value: p.sr });
    }
    let kr_ok = if value == 4 || p.format == crate::packing::RhsFormat::F16p { p.kr == 1 } else { p.kr == 4 };
    if !kr_ok {
        return Err(Error::Unsupported { param: Param::Kr, value: p.kr });
    }
    k.div_ceil(p.kr)
        .checked_mul(p.kr * value)
        .and_then(|v| v.checked_add(bias))
        .and_then(|v| v.checked_mul(p.nr))
        .ok_or(Error::SizeOverflow)
}

/// The common checks of a float RHS packer: `n, k >= 1`, the source, a bias of at least `n`
/// values, the format's sizes against `out`, then every value the packer reads finite
/// ([`Error::NonFinite`]: a weight on [`Buffer::Rhs`] at its index in `src.data`, a bias on
/// [`Buffer::Bias`]). Returns the packed size.
pub(crate) fn check_pack<T: Element, B: Element>(
    format: &RhsPacking,
    n: usize,
    k: usize,
    src: &FloatSource<'_, T>,
    bias: Option<&[B]>,
    out: &[u8],
) -> Result<usize> {
    if format.nr == 0 || format.nr > MAX_TILE {
        return Err(Error::Unsupported { param: Param::Nr, value: format.nr });
    }
    check_nk(n, k)?;
    format.tile_stride(k, 0)?;
    src.check(n, k)?;
    if let Some(b) = bias
        && b.len() < n
    {
        return Err(Error::BufferTooShort { buffer: Buffer::Bias, given: b.len(), needed: n });
    }
    let size = format.packed_size(n, k, 0)?;
    if out.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: out.len(), needed: size });
    }
    let (rows, row) = match src.layout {
        Layout::NxK => (n, k),
        Layout::KxN => (k, n),
    };
    check_finite_rows(src.data, rows, row, src.stride, Buffer::Rhs)?;
    if let Some(b) = bias {
        check_finite_rows(b, 1, n, n, Buffer::Bias)?;
    }
    Ok(size)
}

/// Writes the little-endian bits of `v` at `out[at..]`.
#[inline]
pub(crate) fn put<T: Element>(out: &mut [u8], at: usize, v: T) {
    let b = v.to_bits32().to_le_bytes();
    out[at..at + T::SIZE].copy_from_slice(&b[..T::SIZE]);
}

/// Packs a `kr = 1` copy format (`f32p16`, `f32p8`, `f16p32`, `f16p16`, docs/formats.md,
/// §Float formats): biases and values (finite, [`check_pack`]) copied bit for bit, padding
/// columns and their bias slots 0.
pub(crate) fn pack_copy<T: Element>(
    format: &RhsPacking,
    n: usize,
    k: usize,
    src: &FloatSource<'_, T>,
    bias: Option<&[T]>,
    out: &mut [u8],
) -> Result<()> {
    if format.kr != 1 || format.format.float_sizes() != Some((T::SIZE, T::SIZE)) {
        return Err(Error::Unsupported { param: Param::Kr, value: format.kr });
    }
    let size = check_pack(format, n, k, src, bias, out)?;
    let out = &mut out[..size];
    let nr = format.nr;
    let ts = format.tile_stride(k, 0)?;
    for (t, tile) in out.chunks_exact_mut(ts).enumerate() {
        let (head, data) = tile.split_at_mut(nr * T::SIZE);
        for cc in 0..nr {
            let c = t * nr + cc;
            let b = match bias {
                Some(b) if c < n => b[c],
                _ => T::default(),
            };
            put(head, cc * T::SIZE, b);
        }
        for (j, row) in data.chunks_exact_mut(nr * T::SIZE).enumerate() {
            for cc in 0..nr {
                let c = t * nr + cc;
                let v = if c < n { src.at(c, j) } else { T::default() };
                put(row, cc * T::SIZE, v);
            }
        }
    }
    Ok(())
}
