//! The one-call path from float weights to a [`Linear`] layer ([`QuantizePack`] and each
//! family's inherent `Linear::quantize_workspace_size` / `Linear::quantize_pack`).

use core::mem::{align_of, size_of};

use half::bf16;

use super::{Linear, Operator};
use crate::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use crate::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
use crate::element::Element;
use crate::error::{Buffer, Error, Param, Result};
use crate::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
use crate::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use crate::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p;
use crate::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use crate::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use crate::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use crate::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use crate::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use crate::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use crate::quant::{self, Method, Weights};
use crate::rhs::qsi4c32p::BlockScales;
use crate::rhs::qsi8cxp::Int8Source;
use crate::rhs::{Int4Encoding, Int4Source, Layout};

/// A family whose layer can be made from float weights in one call: quantize (by
/// [`quant`](crate::quant)) and pack (by the family's `Linear::pack`),
/// [`QuantizePack::quantize_pack_weights`], with the codes and scales in between held in a byte
/// workspace the caller provides ([`QuantizePack::quantize_workspace_size`] bytes; a packer
/// cannot read and write one buffer, and the library does not allocate).
///
/// Every family implements [`QuantizePack`] (for code generic over the families, such as the C
/// layer); each family's `Linear` also has inherent `quantize_workspace_size` and
/// `quantize_pack` functions with the family's own arguments (no `bl` for the per-channel
/// families, no bias for `qsi8d32p_qsi4c32p`, a look-up table for the 2-bit family). The
/// weight format and its rules:
///
/// | family | format (quantizer) | `Method` |
/// |---|---|---|
/// | `*qai8dxp_qsi4cxp` | [`quant::qsi4cxp`] | [`quant::Method`] |
/// | `*qai8dxp_qsi4c32p` | [`quant::qsi4c32p`] | [`quant::Method`] |
/// | `qsi8d32p_qsi4c32p` | [`quant::q4_0`] | [`quant::Method`] |
/// | `*qai8dxp_qsi8cxp` | [`quant::qsi8cxp`] | [`quant::Method`] |
/// | `*qsi8d32p_qai4c32p` | [`quant::qai4c32p`] | [`quant::qai4c32p::Method`] |
/// | `qai8dxp_qsu2cxp` | [`quant::qsu2cxp`] | the look-up table (`Option<&[i32; 4]>`) |
///
/// The packed bytes are those of the format's quantizer followed by the family's `pack`, to the
/// bit. Every check (shapes, `bl`, the lengths of `buf`, `workspace` and `bias`, the weights,
/// the method's input) is made before anything is written to `buf`; `workspace` is scratch,
/// written only after the shape and length checks, its contents unspecified after the call.
///
/// ```
/// use qgemm::op::Linear;
/// use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
/// use qgemm::quant::{Method, Weights};
/// use qgemm::CpuFeatures;
///
/// let (n, k, bl) = (8, 64, 32);
/// let w: Vec<f32> = (0..n * k).map(|i| ((i * 7) % 13) as f32 / 13.0 - 0.5).collect();
/// type L<'w> = Linear<'w, Qai8dxpQsi4c32p>;
/// let mut workspace = vec![0u8; L::quantize_workspace_size(n, k, bl)?];
/// let mut packed = vec![0u8; L::packed_size(n, k, bl)?];
/// let layer = L::quantize_pack(&Weights::nxk(&w, k), n, k, bl, Method::Search, None, &mut workspace, &mut packed)?;
///
/// let (m, x) = (1, vec![1.0f32; k]);
/// let mut scratch = vec![0u8; layer.scratch_size(m)?];
/// let mut y = vec![0f32; m * n];
/// layer.run(&CpuFeatures::from_target(), m, &x, &mut y, &mut scratch)?;
/// let exact: f32 = w[..k].iter().sum();
/// assert!((y[0] - exact).abs() < 0.05 * w[..k].iter().map(|v| v.abs()).sum::<f32>());
/// # Ok::<(), qgemm::Error>(())
/// ```
///
pub trait QuantizePack: Operator {
    /// How the weights are quantized: [`quant::Method`] for the symmetric formats,
    /// [`quant::qai4c32p::Method`] for the asymmetric one, the look-up table
    /// (`Option<&[i32; 4]>`, `None`: the default `{-2, -1, 0, 1}`) for the 2-bit one.
    type Method<'a>: Copy;

    /// Bytes of workspace [`QuantizePack::quantize_pack_weights`] needs for `n` channels of depth `k`
    /// (`bl`: the block length of the per-block families, 0 for the others): the format's codes
    /// and scales (and, for the asymmetric and 2-bit formats, one channel of `k` f32 weights for
    /// KxN input) plus up to 3 bytes of alignment slack per scale array.
    fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize>;

    /// Quantizes the `n x k` weights `w` (every value finite) by `method` into `workspace` (at
    /// least [`QuantizePack::quantize_workspace_size`] bytes, any alignment) and packs them with
    /// `bias` (`n` finite values, or `None`; `Some` for `qsi8d32p_qsi4c32p`, which has no bias:
    /// [`Error::Unsupported`] with [`Param::Bias`]) into `buf` (at least the family's
    /// `packed_size` bytes, [`Linear::weights_size`]). The errors of the quantizer and of the
    /// packer; [`Error::BufferTooShort`] with [`Buffer::Workspace`] or [`Buffer::RhsPacked`] for
    /// short buffers. Nothing is written to `buf` unless every check passes.
    #[allow(clippy::too_many_arguments)]
    fn quantize_pack_weights<'w, S: Element>(
        w: &Weights<'_, S>,
        n: usize,
        k: usize,
        bl: usize,
        method: Self::Method<'_>,
        bias: Option<&[f32]>,
        workspace: &mut [u8],
        buf: &'w mut [u8],
    ) -> Result<Linear<'w, Self>>;
}

/// Element types a workspace byte range may be viewed as.
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value of the type.
unsafe trait Plain: Copy {}

// SAFETY: f32, bf16 (a `u16` bit pattern, `repr(transparent)`), i8 and u8 are plain numbers:
// every bit pattern is a value.
unsafe impl Plain for f32 {}
// SAFETY: as above.
unsafe impl Plain for bf16 {}
// SAFETY: as above.
unsafe impl Plain for i8 {}
// SAFETY: as above.
unsafe impl Plain for u8 {}

/// Bytes of workspace for `len` values of `T` wherever the part starts: the values and the
/// alignment slack.
fn part<T: Plain>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).and_then(|b| b.checked_add(align_of::<T>() - 1)).ok_or(Error::SizeOverflow)
}

/// The sum of the parts' sizes.
fn total(parts: &[Result<usize>]) -> Result<usize> {
    parts.iter().try_fold(0usize, |a, p| a.checked_add((*p)?).ok_or(Error::SizeOverflow))
}

/// The workspace, cut into consecutive typed parts.
struct Cut<'a> {
    rest: &'a mut [u8],
    given: usize,
    needed: usize,
}

impl<'a> Cut<'a> {
    /// The next `len` values of `T` (at the first offset aligned for `T`);
    /// [`Error::BufferTooShort`] when they do not fit (never after the up-front length check,
    /// whose size counts the alignment slack).
    fn take<T: Plain>(&mut self, len: usize) -> Result<&'a mut [T]> {
        let short = Error::BufferTooShort { buffer: Buffer::Workspace, given: self.given, needed: self.needed };
        let bytes = core::mem::take(&mut self.rest);
        // `align_offset` may answer `usize::MAX` (then the checked sum fails: an error).
        let skip = bytes.as_ptr().align_offset(align_of::<T>());
        let size = len.checked_mul(size_of::<T>()).ok_or(Error::SizeOverflow)?;
        let end = skip.checked_add(size).filter(|&e| e <= bytes.len()).ok_or(short)?;
        let (head, rest) = bytes.split_at_mut(end);
        self.rest = rest;
        let head = &mut head[skip..];
        // SAFETY: `head` is `len * size_of::<T>()` bytes of one exclusively borrowed slice,
        // starting at an address aligned for `T` (`align_offset`); every bit pattern is a `T`
        // (`T: Plain`), so the bytes are `len` valid values; the returned slice takes over
        // `head`'s borrow for `'a` (nothing else refers to those bytes).
        Ok(unsafe { core::slice::from_raw_parts_mut(head.as_mut_ptr().cast::<T>(), len) })
    }
}

/// The checks every family makes before quantizing: the shape and `bl` (the packed size), the
/// lengths of `buf` and `workspace` (of `ws_size` bytes needed), the bias. The workspace, cut.
fn start<'a, F: Operator>(
    n: usize,
    k: usize,
    bl: usize,
    ws_size: usize,
    bias: Option<&[f32]>,
    workspace: &'a mut [u8],
    buf: &[u8],
) -> Result<Cut<'a>> {
    let size = Linear::<F>::size(n, k, bl)?;
    if buf.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: buf.len(), needed: size });
    }
    if workspace.len() < ws_size {
        return Err(Error::BufferTooShort { buffer: Buffer::Workspace, given: workspace.len(), needed: ws_size });
    }
    crate::rhs::check_bias(n, bias)?;
    Ok(Cut { given: workspace.len(), needed: ws_size, rest: workspace })
}

/// Channel `c` of `w` (checked) into `row` (`k` f32, exact widening).
fn gather<S: Element>(w: &Weights<'_, S>, c: usize, row: &mut [f32]) {
    for (j, v) in row.iter_mut().enumerate() {
        *v = w.at(c, j);
    }
}

/// `QuantizePack` and the inherent functions of the families with symmetric per-channel
/// weights: format `$format` with codes of type `$code`, given to the packer as `$source`.
macro_rules! per_channel_symmetric {
    ($format:ident, $code:ty, |$c:ident, $k:ident| $source:expr, $what:literal: $($family:ident),+) => {$(
        impl QuantizePack for $family {
            type Method<'a> = Method<'a>;

            fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                Linear::<Self>::size(n, k, bl)?;
                let (codes, scales) = quant::$format::sizes(n, k)?;
                total(&[part::<f32>(scales), part::<$code>(codes)])
            }

            fn quantize_pack_weights<'w, S: Element>(
                w: &Weights<'_, S>,
                n: usize,
                k: usize,
                bl: usize,
                method: Method<'_>,
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Result<Linear<'w, Self>> {
                let ws_size = Self::quantize_workspace_size(n, k, bl)?;
                let mut cut = start::<Self>(n, k, bl, ws_size, bias, workspace, buf)?;
                let (codes, scales) = quant::$format::sizes(n, k)?;
                let scale = cut.take::<f32>(scales)?;
                let $c = cut.take::<$code>(codes)?;
                quant::$format::quantize(method, n, k, w, $c, scale)?;
                let ($c, $k) = (&*$c, k);
                Linear::<Self>::pack(n, k, &$source, scale, bias, buf)
            }
        }

        impl<'w> Linear<'w, $family> {
            #[doc = concat!("Bytes of workspace [`Linear::quantize_pack`] needs for `n` channels of depth `k`: the ",
                $what, " codes and f32 scales of [`quant::", stringify!($format), "`] and 3 bytes of alignment slack.")]
            pub fn quantize_workspace_size(n: usize, k: usize) -> Result<usize> {
                <$family as QuantizePack>::quantize_workspace_size(n, k, 0)
            }

            #[doc = concat!("Quantizes the `n x k` float weights `w` (every value finite) per channel by `method` ",
                "([`quant::", stringify!($format), "::quantize`]) into `workspace` (at least ",
                "[`Linear::quantize_workspace_size`] bytes, any alignment) and packs them with `bias` (`n` values ",
                "or `None`) into `buf` (at least [`Linear::packed_size`] bytes): the bytes of that quantizer ",
                "followed by [`Linear::pack`]. See [`QuantizePack::quantize_pack_weights`] for the errors; nothing is ",
                "written to `buf` unless every check passes.")]
            #[allow(clippy::too_many_arguments)]
            pub fn quantize_pack<S: Element>(
                w: &Weights<'_, S>,
                n: usize,
                k: usize,
                method: Method<'_>,
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Result<Self> {
                <$family as QuantizePack>::quantize_pack_weights(w, n, k, 0, method, bias, workspace, buf)
            }
        }
    )+};
}

per_channel_symmetric!(qsi4cxp, u8, |codes, k| Int4Source::nxk(codes, k, Int4Encoding::Signed), "int4":
    Qai8dxpQsi4cxp, F16Qai8dxpQsi4cxp, Bf16Qai8dxpQsi4cxp);
per_channel_symmetric!(qsi8cxp, i8, |codes, k| Int8Source::nxk(codes, k), "int8":
    Qai8dxpQsi8cxp, F16Qai8dxpQsi8cxp);

/// `QuantizePack` and the inherent functions of the families with `qsi4c32p` weights (int4 per
/// block, bf16 scales).
macro_rules! qsi4c32p_family {
    ($($family:ident),+) => {$(
        impl QuantizePack for $family {
            type Method<'a> = Method<'a>;

            fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                Linear::<Self>::size(n, k, bl)?;
                let (codes, scales) = quant::qsi4c32p::sizes(n, k, bl)?;
                total(&[part::<bf16>(scales), part::<u8>(codes)])
            }

            fn quantize_pack_weights<'w, S: Element>(
                w: &Weights<'_, S>,
                n: usize,
                k: usize,
                bl: usize,
                method: Method<'_>,
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Result<Linear<'w, Self>> {
                let ws_size = Self::quantize_workspace_size(n, k, bl)?;
                let mut cut = start::<Self>(n, k, bl, ws_size, bias, workspace, buf)?;
                let (codes, scales) = quant::qsi4c32p::sizes(n, k, bl)?;
                let scale = cut.take::<bf16>(scales)?;
                let codes = cut.take::<u8>(codes)?;
                quant::qsi4c32p::quantize(method, n, k, bl, w, codes, scale)?;
                let src = Int4Source::nxk(codes, k, Int4Encoding::Signed);
                Linear::<Self>::pack(n, k, bl, &src, &BlockScales::dense(scale, k / bl), bias, buf)
            }
        }

        impl<'w> Linear<'w, $family> {
            /// Bytes of workspace [`Linear::quantize_pack`] needs for `n` channels of depth `k`
            /// in blocks of `bl`: the int4 codes and bf16 scales of [`quant::qsi4c32p`] and 1
            /// byte of alignment slack.
            pub fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                <$family as QuantizePack>::quantize_workspace_size(n, k, bl)
            }

            /// Quantizes the `n x k` float weights `w` (every value finite) per block of `bl` by
            /// `method` ([`quant::qsi4c32p::quantize`], bf16 scales) into `workspace` (at least
            /// [`Linear::quantize_workspace_size`] bytes, any alignment) and packs them with
            /// `bias` (`n` values or `None`) into `buf` (at least [`Linear::packed_size`]
            /// bytes): the bytes of that quantizer followed by [`Linear::pack`]. See
            /// [`QuantizePack::quantize_pack_weights`] for the errors; nothing is written to `buf`
            /// unless every check passes.
            #[allow(clippy::too_many_arguments)]
            pub fn quantize_pack<S: Element>(
                w: &Weights<'_, S>,
                n: usize,
                k: usize,
                bl: usize,
                method: Method<'_>,
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Result<Self> {
                <$family as QuantizePack>::quantize_pack_weights(w, n, k, bl, method, bias, workspace, buf)
            }
        }
    )+};
}

qsi4c32p_family!(Qai8dxpQsi4c32p, Bf16Qai8dxpQsi4c32p);

impl QuantizePack for Qsi8d32pQsi4c32p {
    type Method<'a> = Method<'a>;

    fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
        Linear::<Self>::size(n, k, bl)?;
        quant::q4_0::size(n, k, bl)
    }

    fn quantize_pack_weights<'w, S: Element>(
        w: &Weights<'_, S>,
        n: usize,
        k: usize,
        bl: usize,
        method: Method<'_>,
        bias: Option<&[f32]>,
        workspace: &mut [u8],
        buf: &'w mut [u8],
    ) -> Result<Linear<'w, Self>> {
        if let Some(b) = bias {
            return Err(Error::Unsupported { param: Param::Bias, value: b.len() });
        }
        let ws_size = Self::quantize_workspace_size(n, k, bl)?;
        let mut cut = start::<Self>(n, k, bl, ws_size, None, workspace, buf)?;
        let blocks = cut.take::<u8>(ws_size)?;
        quant::q4_0::quantize(method, n, k, bl, w, blocks)?;
        let stride = k / bl * crate::rhs::qsi4c32pscalef16::raw_block_bytes(bl);
        Linear::<Self>::pack(n, k, bl, blocks, stride, buf)
    }
}

impl<'w> Linear<'w, Qsi8d32pQsi4c32p> {
    /// Bytes of workspace [`Linear::quantize_pack`] needs for `n` channels of depth `k` in
    /// blocks of `bl`: the GGML `Q4_0` blocks of [`quant::q4_0`].
    pub fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
        <Qsi8d32pQsi4c32p as QuantizePack>::quantize_workspace_size(n, k, bl)
    }

    /// Quantizes the `n x k` float weights `w` (every value finite) per block of `bl` by
    /// `method` into GGML `Q4_0` blocks ([`quant::q4_0::quantize`], f16 scales) in `workspace`
    /// (at least [`Linear::quantize_workspace_size`] bytes) and packs them into `buf` (at least
    /// [`Linear::packed_size`] bytes; this family has no bias): the bytes of that quantizer
    /// followed by [`Linear::pack`]. See [`QuantizePack::quantize_pack_weights`] for the errors; nothing
    /// is written to `buf` unless every check passes.
    pub fn quantize_pack<S: Element>(
        w: &Weights<'_, S>,
        n: usize,
        k: usize,
        bl: usize,
        method: Method<'_>,
        workspace: &mut [u8],
        buf: &'w mut [u8],
    ) -> Result<Self> {
        <Qsi8d32pQsi4c32p as QuantizePack>::quantize_pack_weights(w, n, k, bl, method, None, workspace, buf)
    }
}

/// `QuantizePack` and the inherent functions of the asymmetric int4 families (`qai4c32p`).
macro_rules! qai4c32p_family {
    ($($family:ident),+) => {$(
        impl QuantizePack for $family {
            type Method<'a> = quant::qai4c32p::Method;

            fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                Linear::<Self>::size(n, k, bl)?;
                let (codes, params) = quant::qai4c32p::sizes(n, k, bl)?;
                let params = params.checked_mul(2).ok_or(Error::SizeOverflow)?;
                total(&[part::<f32>(params), part::<f32>(k), part::<u8>(codes)])
            }

            fn quantize_pack_weights<'w, S: Element>(
                w: &Weights<'_, S>,
                n: usize,
                k: usize,
                bl: usize,
                method: quant::qai4c32p::Method,
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Result<Linear<'w, Self>> {
                let ws_size = Self::quantize_workspace_size(n, k, bl)?;
                let mut cut = start::<Self>(n, k, bl, ws_size, bias, workspace, buf)?;
                let (code_bytes, params) = quant::qai4c32p::sizes(n, k, bl)?;
                let (zero, scale) = cut.take::<f32>(2 * params)?.split_at_mut(params);
                let row = cut.take::<f32>(k)?;
                let codes = cut.take::<u8>(code_bytes)?;
                let nb = k / bl;
                // The quantizer reads NxK rows; KxN weights go channel by channel through `row`
                // (checked first, so that error indices are into `w.data`).
                w.check(n, k)?;
                match w.layout {
                    Layout::NxK => quant::qai4c32p::quantize(method, n, k, bl, w.data, w.stride, codes, zero, scale)?,
                    Layout::KxN => {
                        for c in 0..n {
                            gather(w, c, row);
                            let (z, s) = (&mut zero[c * nb..], &mut scale[c * nb..]);
                            quant::qai4c32p::quantize(method, 1, k, bl, row, k, &mut codes[c * (k / 2)..], z, s)?;
                        }
                    }
                }
                Linear::<Self>::pack(n, k, bl, codes, k / 2, zero, scale, bias, buf)
            }
        }

        impl<'w> Linear<'w, $family> {
            /// Bytes of workspace [`Linear::quantize_pack`] needs for `n` channels of depth `k`
            /// in blocks of `bl`: the codes, f32 offsets and scales of [`quant::qai4c32p`], one
            /// channel of `k` f32 (KxN weights are quantized channel by channel) and 6 bytes of
            /// alignment slack.
            pub fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                <$family as QuantizePack>::quantize_workspace_size(n, k, bl)
            }

            /// Quantizes the `n x k` float weights `w` (every value finite) per block of `bl` by
            /// `method` ([`quant::qai4c32p::quantize`]: asymmetric int4, f32 scale and offset per
            /// block) into `workspace` (at least [`Linear::quantize_workspace_size`] bytes, any
            /// alignment) and packs them with `bias` (`n` values or `None`) into `buf` (at least
            /// [`Linear::packed_size`] bytes): the bytes of that quantizer followed by
            /// [`Linear::pack`]. See [`QuantizePack::quantize_pack_weights`] for the errors; nothing is
            /// written to `buf` unless every check passes.
            #[allow(clippy::too_many_arguments)]
            pub fn quantize_pack<S: Element>(
                w: &Weights<'_, S>,
                n: usize,
                k: usize,
                bl: usize,
                method: quant::qai4c32p::Method,
                bias: Option<&[f32]>,
                workspace: &mut [u8],
                buf: &'w mut [u8],
            ) -> Result<Self> {
                <$family as QuantizePack>::quantize_pack_weights(w, n, k, bl, method, bias, workspace, buf)
            }
        }
    )+};
}

qai4c32p_family!(Qsi8d32pQai4c32p, F16Qsi8d32pQai4c32p);

impl QuantizePack for Qai8dxpQsu2cxp {
    type Method<'a> = Option<&'a [i32; 4]>;

    fn quantize_workspace_size(n: usize, k: usize, bl: usize) -> Result<usize> {
        Linear::<Self>::size(n, k, bl)?;
        let (codes, scales) = quant::qsu2cxp::sizes(n, k)?;
        total(&[part::<f32>(scales), part::<f32>(k), part::<u8>(codes)])
    }

    fn quantize_pack_weights<'w, S: Element>(
        w: &Weights<'_, S>,
        n: usize,
        k: usize,
        bl: usize,
        lut: Option<&[i32; 4]>,
        bias: Option<&[f32]>,
        workspace: &mut [u8],
        buf: &'w mut [u8],
    ) -> Result<Linear<'w, Self>> {
        let ws_size = Self::quantize_workspace_size(n, k, bl)?;
        let mut cut = start::<Self>(n, k, bl, ws_size, bias, workspace, buf)?;
        let (code_bytes, scales) = quant::qsu2cxp::sizes(n, k)?;
        let scale = cut.take::<f32>(scales)?;
        let row = cut.take::<f32>(k)?;
        let codes = cut.take::<u8>(code_bytes)?;
        // The table and the weights first (the quantizer's checks), so that no channel of KxN
        // weights is quantized before a bad table is rejected and error indices are into `w.data`.
        quant::qsu2cxp::check_table(lut)?;
        w.check(n, k)?;
        match w.layout {
            Layout::NxK => quant::qsu2cxp::quantize(n, k, w.data, w.stride, lut, codes, scale)?,
            Layout::KxN => {
                for c in 0..n {
                    gather(w, c, row);
                    quant::qsu2cxp::quantize(1, k, row, k, lut, &mut codes[c * (k / 4)..], &mut scale[c..])?;
                }
            }
        }
        Linear::<Self>::pack(n, k, codes, k / 4, scale, bias, lut, buf)
    }
}

impl<'w> Linear<'w, Qai8dxpQsu2cxp> {
    /// Bytes of workspace [`Linear::quantize_pack`] needs for `n` channels of depth `k`: the
    /// 2-bit codes and f32 scales of [`quant::qsu2cxp`], one channel of `k` f32 (KxN weights
    /// are quantized channel by channel) and 6 bytes of alignment slack.
    pub fn quantize_workspace_size(n: usize, k: usize) -> Result<usize> {
        <Qai8dxpQsu2cxp as QuantizePack>::quantize_workspace_size(n, k, 0)
    }

    /// Quantizes the `n x k` float weights `w` (every value finite) per channel to 2-bit codes
    /// of the table `lut` (`None`: the default `{-2, -1, 0, 1}`; [`quant::qsu2cxp::quantize`])
    /// in `workspace` (at least [`Linear::quantize_workspace_size`] bytes, any alignment) and
    /// packs them with `bias` (`n` values or `None`) into `buf` (at least
    /// [`Linear::packed_size`] bytes); the layer carries the table ([`Linear::lut`]). The bytes
    /// of that quantizer followed by [`Linear::pack`]. See [`QuantizePack::quantize_pack_weights`] for
    /// the errors; nothing is written to `buf` unless every check passes.
    pub fn quantize_pack<S: Element>(
        w: &Weights<'_, S>,
        n: usize,
        k: usize,
        bias: Option<&[f32]>,
        lut: Option<&[i32; 4]>,
        workspace: &mut [u8],
        buf: &'w mut [u8],
    ) -> Result<Self> {
        <Qai8dxpQsu2cxp as QuantizePack>::quantize_pack_weights(w, n, k, 0, lut, bias, workspace, buf)
    }
}
