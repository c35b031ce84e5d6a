//! RHS (weight) formats and their packers. One module per packed format.
//!
//! Weights are packed once per weight matrix, with the `nr, kr, sr` of the kernel that will
//! consume them ([`Kernel::packing`](crate::Kernel::packing)).

pub mod bf16p12;
pub mod f16p;
pub mod f32p;
pub(crate) mod float;
pub mod qai4c32p;
pub mod qsi4c32p;
pub mod qsi4c32pscalef16;
pub mod qsi4cxp;
pub mod qsi8cxp;
pub mod qsu2cxp;

use crate::error::{Buffer, Dim, Error, Result, Stride};

pub use float::FloatSource;

/// Orientation of a raw weight matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Layout {
    /// One row per output channel (`n` rows of `k` values).
    NxK,
    /// One row per depth (`k` rows of `n` values).
    KxN,
}

/// How a raw int4 nibble encodes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Int4Encoding {
    /// Two's-complement nibble, value in `[-8, 7]` (KleidiAI `rhs_zero_point = 0`).
    Signed,
    /// Unsigned nibble `u` with zero point 8, value `u - 8` (KleidiAI `rhs_zero_point = 8`).
    ZeroPoint8,
}

/// Raw int4 weights in s1s0 nibble order: two consecutive elements of a row per byte, the
/// first in the low nibble (bits 0-3).
///
/// NxK: element `(c, j)` is nibble `j % 2` of byte `c * stride + j / 2`.
/// KxN: element `(c, j)` is nibble `c % 2` of byte `j * stride + c / 2`.
#[derive(Debug, Clone, Copy)]
pub struct Int4Source<'a> {
    /// The bytes.
    pub data: &'a [u8],
    /// Orientation.
    pub layout: Layout,
    /// Row stride in bytes: at least `ceil(k/2)` (NxK) or `ceil(n/2)` (KxN).
    pub stride: usize,
    /// Nibble meaning.
    pub encoding: Int4Encoding,
}

impl<'a> Int4Source<'a> {
    /// Dense NxK weights: `n` rows of `ceil(k/2)` bytes.
    pub const fn nxk(data: &'a [u8], k: usize, encoding: Int4Encoding) -> Self {
        Int4Source { data, layout: Layout::NxK, stride: k.div_ceil(2), encoding }
    }

    /// Dense KxN weights: `k` rows of `ceil(n/2)` bytes.
    pub const fn kxn(data: &'a [u8], n: usize, encoding: Int4Encoding) -> Self {
        Int4Source { data, layout: Layout::KxN, stride: n.div_ceil(2), encoding }
    }

    /// Checks the stride and the length of `data` for an `n x k` weight matrix.
    pub(crate) fn check(&self, n: usize, k: usize) -> Result<()> {
        let (rows, row_bytes) = match self.layout {
            Layout::NxK => (n, k.div_ceil(2)),
            Layout::KxN => (k, n.div_ceil(2)),
        };
        if self.stride < row_bytes {
            return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: self.stride, needed: row_bytes });
        }
        let needed = (rows - 1).checked_mul(self.stride).and_then(|v| v.checked_add(row_bytes));
        let needed = needed.ok_or(Error::SizeOverflow)?;
        if self.data.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: self.data.len(), needed });
        }
        Ok(())
    }

    /// The raw 4-bit code that channel `c` (which may be a padding channel `>= n`) takes at
    /// depth `j`, following KleidiAI's padding rules (docs/formats.md, §RHS): NxK padding channels
    /// copy channel `n - 1`; KxN padding channel `c` reads nibble `c % 2` of the byte that holds
    /// channel `n - 1`.
    #[inline]
    pub(crate) fn nibble(&self, n: usize, c: usize, j: usize) -> u8 {
        let cc = c.min(n - 1);
        match self.layout {
            Layout::NxK => (self.data[cc * self.stride + j / 2] >> (4 * (j % 2))) & 0xf,
            Layout::KxN => (self.data[j * self.stride + cc / 2] >> (4 * (c % 2))) & 0xf,
        }
    }

    /// The int4 value (`[-8, 7]`) of [`Int4Source::nibble`].
    #[inline]
    pub(crate) fn value(&self, n: usize, c: usize, j: usize) -> i8 {
        self.decode(self.nibble(n, c, j))
    }

    #[inline]
    fn decode(&self, u: u8) -> i8 {
        match self.encoding {
            Int4Encoding::ZeroPoint8 => u as i8 - 8,
            Int4Encoding::Signed => ((u << 4) as i8) >> 4,
        }
    }

    /// The 32 values of channel `c` at depths `32*g .. 32*g + 32` (0 past `k`), with the
    /// padding rules of [`Int4Source::nibble`].
    pub(crate) fn group(&self, n: usize, k: usize, c: usize, g: usize) -> [i8; 32] {
        let mut out = [0i8; 32];
        let base = 32 * g;
        let len = k.saturating_sub(base).min(32);
        match self.layout {
            Layout::NxK => {
                // Two consecutive depths per byte: decode whole bytes, then the odd tail.
                let row = &self.data[c.min(n - 1) * self.stride + base / 2..];
                for (t, &byte) in row[..len / 2].iter().enumerate() {
                    out[2 * t] = self.decode(byte & 0xf);
                    out[2 * t + 1] = self.decode(byte >> 4);
                }
                if len % 2 == 1 {
                    out[len - 1] = self.decode(row[len / 2] & 0xf);
                }
            }
            Layout::KxN => {
                for (j, v) in out[..len].iter_mut().enumerate() {
                    *v = self.value(n, c, base + j);
                }
            }
        }
        out
    }
}

/// Packs the 32 values of one depth group into 16 bytes: byte `q` holds value `q` in its low
/// nibble and value `q + 16` in its high nibble (docs/formats.md, §RHS).
#[inline]
pub(crate) fn pair_group(values: &[i8; 32]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (q, b) in out.iter_mut().enumerate() {
        *b = (values[q] as u8 & 0xf) | ((values[q + 16] as u8) << 4);
    }
    out
}

/// `n >= 1` and `k >= 1`.
pub(crate) fn check_nk(n: usize, k: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::ZeroDim { dim: Dim::N });
    }
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    Ok(())
}

/// The per-channel parameters of `n` channels: at least `n` finite scales and, if given, `n`
/// finite bias values.
pub(crate) fn check_channel_params(n: usize, scale: &[f32], bias: Option<&[f32]>) -> Result<()> {
    if scale.len() < n {
        return Err(Error::BufferTooShort { buffer: Buffer::Scale, given: scale.len(), needed: n });
    }
    check_finite(&scale[..n], Buffer::Scale)?;
    check_bias(n, bias)
}

/// An optional bias of `n` channels: at least `n` finite values.
pub(crate) fn check_bias(n: usize, bias: Option<&[f32]>) -> Result<()> {
    if let Some(b) = bias {
        if b.len() < n {
            return Err(Error::BufferTooShort { buffer: Buffer::Bias, given: b.len(), needed: n });
        }
        check_finite(&b[..n], Buffer::Bias)?;
    }
    Ok(())
}

/// Every value finite, else [`Error::NonFinite`] with the first bad index.
pub(crate) fn check_finite(values: &[f32], buffer: Buffer) -> Result<()> {
    // A branch-free scan the compiler vectorizes (the largest magnitude bit pattern: above
    // `f32::MAX`'s for infinities and NaN), then the search for the first bad value only when
    // there is one.
    let mut largest = 0u32;
    for x in values {
        largest = largest.max(x.to_bits() & 0x7fff_ffff);
    }
    if largest <= f32::MAX.to_bits() {
        return Ok(());
    }
    match values.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(Error::NonFinite { buffer, index }),
        None => Ok(()),
    }
}
