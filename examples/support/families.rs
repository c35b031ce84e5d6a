//! The kernel families behind one trait, packed from raw inputs through the public
//! packers only: shared (`#[path]`-included) by the differential soak (`examples/soak.rs`) and
//! the guard-page tests (`tests/guard_pages.rs`), which pass every raw input as a borrowed slice
//! so that it can live anywhere (a guarded mapping, an odd address).

use qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
use qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
use qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p;
use qgemm::half::{bf16, f16};
use qgemm::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::{self, Int8Source};
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsu2cxp};
use qgemm::{Element, Family, Packing, Params, Result};

/// Raw RHS inputs of any family, borrowed; a family ignores the fields it does not use.
#[derive(Clone, Copy)]
pub struct RhsRaw<'a> {
    /// int4 weights (`qsi4cxp`, `qsi4c32p`), int8 weights as bytes (`qsi8cxp`), raw `Q4_0`
    /// blocks (`qsi4c32pscalef16`) or 2-bit codes, four per byte (`qsu2cxp`).
    pub data: &'a [u8],
    /// Orientation of the weights (NxK for `Q4_0` blocks).
    pub layout: Layout,
    /// Row stride of `data` in bytes.
    pub stride: usize,
    /// Nibble encoding of the int4 weights.
    pub encoding: Int4Encoding,
    /// Per-channel f32 scales (`qsi4cxp`, `qsi8cxp`, `qsu2cxp`), or per-block ones (`qai4c32p`, `n * k/bl`).
    pub scale_f32: &'a [f32],
    /// Per-block f32 offsets (`qai4c32p`, `n * k/bl`).
    pub zero_f32: &'a [f32],
    /// Per-block bf16 scales (`qsi4c32p`), `scale_stride` per channel.
    pub scale_bf16: &'a [bf16],
    /// Distance between two channels' scale rows, in elements (`qsi4c32p`).
    pub scale_stride: usize,
    /// Optional f32 bias (not `Q4_0`).
    pub bias: Option<&'a [f32]>,
    /// The look-up table of the 2-bit codes (`qsu2cxp`): given to the packer and, through
    /// `MatmulArgs::with_lut`, to every kernel run on the packed weights. The other families
    /// have [`qsu2cxp::DEFAULT_LUT`], which their kernels ignore.
    pub lut: [i32; 4],
}

/// Owned raw RHS inputs ([`RhsRaw`] borrows them).
#[derive(Clone, Debug)]
pub struct RhsOwned {
    pub data: Vec<u8>,
    pub layout: Layout,
    pub stride: usize,
    pub encoding: Int4Encoding,
    pub scale_f32: Vec<f32>,
    pub zero_f32: Vec<f32>,
    pub scale_bf16: Vec<bf16>,
    pub scale_stride: usize,
    pub bias: Option<Vec<f32>>,
    pub lut: [i32; 4],
}

impl RhsOwned {
    /// The borrowed view.
    pub fn view(&self) -> RhsRaw<'_> {
        RhsRaw {
            data: &self.data,
            layout: self.layout,
            stride: self.stride,
            encoding: self.encoding,
            scale_f32: &self.scale_f32,
            zero_f32: &self.zero_f32,
            scale_bf16: &self.scale_bf16,
            scale_stride: self.scale_stride,
            bias: self.bias.as_deref(),
            lut: self.lut,
        }
    }
}

/// How the weights' scales are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleStyle {
    /// Log-uniform magnitudes in about 2^-14 .. 2^-3, some negative.
    Normal,
    /// Every fourth scale exactly zero, the rest normal.
    SomeZero,
    /// Every third scale subnormal in the scale's format, the rest normal.
    Subnormal,
    /// Every scale zero.
    AllZero,
}

/// How the weights are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightStyle {
    /// Uniform random values.
    Random,
    /// Every weight at the negative extreme (int4 -8, int8 -128).
    AllMin,
    /// Every weight at the positive extreme (int4 +7, int8 +127).
    AllMax,
    /// Random choice of the two extremes per weight.
    Extremes,
}

/// The family parameters of a run on weights packed from raw inputs with look-up table
/// `lut`: the 2-bit family's [`Lut`](qgemm::Lut) (the table its kernels apply), nothing for
/// the other families.
pub trait FromLut: Sized {
    /// The parameters for table `lut`.
    fn from_lut(lut: [i32; 4]) -> Self;
}

impl FromLut for () {
    fn from_lut(_lut: [i32; 4]) {}
}

impl FromLut for qgemm::Lut {
    fn from_lut(lut: [i32; 4]) -> qgemm::Lut {
        qgemm::Lut(lut)
    }
}

/// A family the soak and the guard tests can pack and run.
pub trait Fam {
    /// The qgemm family marker.
    type F: Family<Lhs = u8, Params: FromLut>;
    /// The activation element type of the family's LHS packer.
    type Src: Element;

    /// Whether the LHS packer may start at matrix row `m_start` with `p` (the f16/bf16
    /// packers with `mr = 4` start at multiples of 4 only).
    fn splits_at(_p: &Packing, _m_start: usize) -> bool {
        true
    }

    /// Bytes of the packed LHS for `m` rows.
    fn lhs_packed_size(p: &Packing, m: usize, k: usize, bl: usize) -> Result<usize>;

    /// The family's LHS packer: `m` rows of `x` (row stride `stride` elements) starting at
    /// matrix row `m_start`, into `out` (which starts at the tile holding row `m_start`).
    #[allow(clippy::too_many_arguments)]
    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        m_start: usize,
        x: &[Self::Src],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()>;

    /// Bytes of the packed RHS for `n` channels.
    fn rhs_packed_size(p: &Packing, n: usize, k: usize, bl: usize) -> Result<usize>;

    /// The family's RHS packer on `raw`.
    fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()>;

    /// Random raw RHS inputs for an `n x k` problem (`bl` for the per-block families):
    /// `next` draws 64 random bits; `layout` is honoured where the family has a choice.
    #[allow(clippy::too_many_arguments)]
    fn random_rhs(
        next: &mut dyn FnMut() -> u64,
        n: usize,
        k: usize,
        bl: usize,
        layout: Layout,
        weights: WeightStyle,
        scales: ScaleStyle,
        bias: bool,
    ) -> RhsOwned;
}

/// `x` rounded to the activation type `S`.
pub fn to_src<S: Element>(x: &[f32]) -> Vec<S> {
    x.iter().map(|&v| S::from_f32(v)).collect()
}

/// A signalling NaN of type `T` (kernels store only quiet NaNs): marks untouched outputs.
pub fn canary<T: Element>() -> T {
    T::from_bits32(match T::SIZE {
        4 => 0x7fa5_a5a5,
        _ if T::NAME == "f16" => 0x7ca5,
        _ => 0x7fa5,
    })
}

/// Random bits as a value in `[0, 1)`.
fn unit(next: &mut dyn FnMut() -> u64) -> f32 {
    (next() >> 40) as f32 / (1u64 << 24) as f32
}

/// One nibble drawn by `style`, as the raw zero-point-8 code (`value + 8`).
fn nibble(next: &mut dyn FnMut() -> u64, style: WeightStyle) -> u8 {
    match style {
        WeightStyle::Random => (next() & 0xf) as u8,
        WeightStyle::AllMin => 0x0,
        WeightStyle::AllMax => 0xf,
        WeightStyle::Extremes => {
            if next() & 1 == 0 {
                0x0
            } else {
                0xf
            }
        }
    }
}

/// `len` bytes of two nibbles each.
fn nibble_bytes(next: &mut dyn FnMut() -> u64, len: usize, style: WeightStyle) -> Vec<u8> {
    (0..len).map(|_| nibble(next, style) | (nibble(next, style) << 4)).collect()
}

/// A scale magnitude of `style` for index `i` (as f32; subnormal in `subnormal_at`'s format).
fn scale_value(next: &mut dyn FnMut() -> u64, i: usize, style: ScaleStyle, subnormal: f32) -> f32 {
    let mag = 2f32.powf(-14.0 + 11.0 * unit(next));
    let normal = if next().is_multiple_of(5) { -mag } else { mag };
    match style {
        ScaleStyle::Normal => normal,
        ScaleStyle::SomeZero if i % 4 == 1 => 0.0,
        ScaleStyle::Subnormal if i % 3 == 2 => subnormal * (1.0 + unit(next)),
        ScaleStyle::AllZero => 0.0,
        _ => normal,
    }
}

fn random_bias(next: &mut dyn FnMut() -> u64, n: usize, bias: bool) -> Option<Vec<f32>> {
    bias.then(|| (0..n).map(|_| -1.0 + 2.0 * unit(next)).collect())
}

/// Raw int4 weights for `n x k` in `layout`, with one spare byte per row (a padded stride).
fn int4_weights(
    next: &mut dyn FnMut() -> u64,
    n: usize,
    k: usize,
    layout: Layout,
    style: WeightStyle,
) -> (Vec<u8>, usize) {
    let (rows, row_bytes) = match layout {
        Layout::NxK => (n, k.div_ceil(2)),
        Layout::KxN => (k, n.div_ceil(2)),
    };
    let stride = row_bytes + (next() % 2) as usize;
    (nibble_bytes(next, (rows - 1) * stride + row_bytes, style), stride)
}

/// Raw int8 weights for `n x k` in `layout` (as bytes), with one spare byte per row at random.
fn int8_weights(
    next: &mut dyn FnMut() -> u64,
    n: usize,
    k: usize,
    layout: Layout,
    style: WeightStyle,
) -> (Vec<u8>, usize) {
    let (rows, row) = match layout {
        Layout::NxK => (n, k),
        Layout::KxN => (k, n),
    };
    let stride = row + (next() % 2) as usize;
    let byte = |next: &mut dyn FnMut() -> u64| match style {
        WeightStyle::Random => next() as u8,
        WeightStyle::AllMin => 0x80,
        WeightStyle::AllMax => 0x7f,
        WeightStyle::Extremes => [0x80, 0x7f][(next() & 1) as usize],
    };
    ((0..(rows - 1) * stride + row).map(|_| byte(next)).collect(), stride)
}

/// Family `qai8dxp_qsi4cxp`.
pub struct Qsi4cxp;
/// Family `qai8dxp_qsi8cxp`.
pub struct Qsi8cxp;
/// Family `qai8dxp_qsi4c32p`.
pub struct Qsi4c32p;
/// Family `qsi8d32p_qsi4c32p`.
pub struct Q40;
/// Family `f16_qai8dxp_qsi4cxp`.
pub struct F16Qsi4cxp;
/// Family `f16_qai8dxp_qsi8cxp`.
pub struct F16Qsi8cxp;
/// Family `bf16_qai8dxp_qsi4cxp`.
pub struct Bf16Qsi4cxp;
/// Family `bf16_qai8dxp_qsi4c32p`.
pub struct Bf16Qsi4c32p;
/// Family `qsi8d32p_qai4c32p`.
pub struct Qai4c32p;
/// Family `f16_qsi8d32p_qai4c32p`.
pub struct F16Qai4c32p;
/// Family `qai8dxp_qsu2cxp` (2-bit codes through a look-up table).
pub struct Qsu2cxp;

/// An asymmetric int4 family (`qai4c32p` weights, `qsi8d32pscalef32` activations of type `$src`
/// from the packer `$packer`).
macro_rules! qai4c32p_fam {
    ($fam:ident, $marker:ty, $src:ty, $packer:ident) => {
        impl Fam for $fam {
            type F = $marker;
            type Src = $src;

            fn lhs_packed_size(p: &Packing, m: usize, k: usize, bl: usize) -> Result<usize> {
                qsi8d32pscalef32::packed_size(m, k, bl, p)
            }

            fn pack_lhs(
                p: &Packing,
                m: usize,
                k: usize,
                bl: usize,
                m_start: usize,
                x: &[$src],
                stride: usize,
                out: &mut [u8],
            ) -> Result<()> {
                qsi8d32pscalef32::$packer(p, m, k, bl, m_start, x, stride, out)
            }

            fn rhs_packed_size(p: &Packing, n: usize, k: usize, bl: usize) -> Result<usize> {
                qai4c32p::packed_size(n, k, bl, p)
            }

            fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
                qai4c32p::pack(p, n, k, bl, raw.data, raw.stride, raw.zero_f32, raw.scale_f32, raw.bias, out)
            }

            fn random_rhs(
                next: &mut dyn FnMut() -> u64,
                n: usize,
                k: usize,
                bl: usize,
                _layout: Layout,
                weights: WeightStyle,
                scales: ScaleStyle,
                bias: bool,
            ) -> RhsOwned {
                let (data, stride) = int4_weights(next, n, k, Layout::NxK, weights);
                let nb = k / bl;
                let scale_f32: Vec<f32> = (0..n * nb).map(|i| scale_value(next, i, scales, 1e-40)).collect();
                // Offsets of the order of a few codes' worth of the block's scale.
                let zero_f32 = scale_f32.iter().map(|s| s * (8.0 * unit(next) - 4.0)).collect();
                RhsOwned {
                    data,
                    layout: Layout::NxK,
                    stride,
                    encoding: Int4Encoding::ZeroPoint8,
                    scale_f32,
                    zero_f32,
                    scale_bf16: Vec::new(),
                    scale_stride: 0,
                    bias: random_bias(next, n, bias),
                    lut: qsu2cxp::DEFAULT_LUT,
                }
            }
        }
    };
}

qai4c32p_fam!(Qai4c32p, Qsi8d32pQai4c32p, f32, quantize_pack);
qai4c32p_fam!(F16Qai4c32p, F16Qsi8d32pQai4c32p, f16, quantize_pack_f16);

/// A family with f16 or bf16 activations and outputs: the weights of its f32 twin `$twin`, the
/// activations of the `qai8dxp` packer `$packer` for `$src` (tile-aligned starts only).
macro_rules! half_twin {
    ($fam:ident, $marker:ty, $src:ty, $twin:ident, $packer:ident) => {
        impl Fam for $fam {
            type F = $marker;
            type Src = $src;

            fn splits_at(p: &Packing, m_start: usize) -> bool {
                m_start.is_multiple_of(p.mr)
            }

            fn lhs_packed_size(p: &Packing, m: usize, k: usize, _bl: usize) -> Result<usize> {
                qai8dxp::packed_size(m, k, p)
            }

            fn pack_lhs(
                p: &Packing,
                m: usize,
                k: usize,
                _bl: usize,
                m_start: usize,
                x: &[$src],
                stride: usize,
                out: &mut [u8],
            ) -> Result<()> {
                qai8dxp::$packer(p, m, k, m_start, x, stride, out)
            }

            fn rhs_packed_size(p: &Packing, n: usize, k: usize, bl: usize) -> Result<usize> {
                $twin::rhs_packed_size(p, n, k, bl)
            }

            fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
                $twin::pack_rhs(p, n, k, bl, raw, out)
            }

            fn random_rhs(
                next: &mut dyn FnMut() -> u64,
                n: usize,
                k: usize,
                bl: usize,
                layout: Layout,
                weights: WeightStyle,
                scales: ScaleStyle,
                bias: bool,
            ) -> RhsOwned {
                $twin::random_rhs(next, n, k, bl, layout, weights, scales, bias)
            }
        }
    };
}

half_twin!(F16Qsi4cxp, F16Qai8dxpQsi4cxp, f16, Qsi4cxp, quantize_pack_f16);
half_twin!(F16Qsi8cxp, F16Qai8dxpQsi8cxp, f16, Qsi8cxp, quantize_pack_f16);
half_twin!(Bf16Qsi4cxp, Bf16Qai8dxpQsi4cxp, bf16, Qsi4cxp, quantize_pack_bf16);
half_twin!(Bf16Qsi4c32p, Bf16Qai8dxpQsi4c32p, bf16, Qsi4c32p, quantize_pack_bf16);

impl Fam for Qsi4cxp {
    type F = Qai8dxpQsi4cxp;
    type Src = f32;

    fn lhs_packed_size(p: &Packing, m: usize, k: usize, _bl: usize) -> Result<usize> {
        qai8dxp::packed_size(m, k, p)
    }

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        m_start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack(p, m, k, m_start, x, stride, out)
    }

    fn rhs_packed_size(p: &Packing, n: usize, k: usize, _bl: usize) -> Result<usize> {
        qsi4cxp::packed_size(n, k, p)
    }

    fn pack_rhs(p: &Packing, n: usize, k: usize, _bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
        let src = Int4Source { data: raw.data, layout: raw.layout, stride: raw.stride, encoding: raw.encoding };
        qsi4cxp::pack(p, n, k, &src, raw.scale_f32, raw.bias, out)
    }

    fn random_rhs(
        next: &mut dyn FnMut() -> u64,
        n: usize,
        k: usize,
        _bl: usize,
        layout: Layout,
        weights: WeightStyle,
        scales: ScaleStyle,
        bias: bool,
    ) -> RhsOwned {
        let (data, stride) = int4_weights(next, n, k, layout, weights);
        let scale_f32 = (0..n).map(|i| scale_value(next, i, scales, 1e-40)).collect();
        RhsOwned {
            data,
            layout,
            stride,
            encoding: Int4Encoding::ZeroPoint8,
            scale_f32,
            zero_f32: Vec::new(),
            scale_bf16: Vec::new(),
            scale_stride: 0,
            bias: random_bias(next, n, bias),
            lut: qsu2cxp::DEFAULT_LUT,
        }
    }
}

impl Fam for Qsi4c32p {
    type F = Qai8dxpQsi4c32p;
    type Src = f32;

    fn lhs_packed_size(p: &Packing, m: usize, k: usize, _bl: usize) -> Result<usize> {
        qai8dxp::packed_size(m, k, p)
    }

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        m_start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack(p, m, k, m_start, x, stride, out)
    }

    fn rhs_packed_size(p: &Packing, n: usize, k: usize, bl: usize) -> Result<usize> {
        qsi4c32p::packed_size(n, k, bl, p)
    }

    fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
        let src = Int4Source { data: raw.data, layout: raw.layout, stride: raw.stride, encoding: raw.encoding };
        let scales = BlockScales { values: raw.scale_bf16, stride: raw.scale_stride };
        qsi4c32p::pack(p, n, k, bl, &src, &scales, raw.bias, out)
    }

    fn random_rhs(
        next: &mut dyn FnMut() -> u64,
        n: usize,
        k: usize,
        bl: usize,
        layout: Layout,
        weights: WeightStyle,
        scales: ScaleStyle,
        bias: bool,
    ) -> RhsOwned {
        let (data, stride) = int4_weights(next, n, k, layout, weights);
        let nb = k / bl;
        let scale_stride = nb + (next() % 2) as usize;
        let len = (n - 1) * scale_stride + nb;
        // bf16 has f32's exponent range: 1e-40 is subnormal in both.
        let scale_bf16 = (0..len).map(|i| bf16::from_f32(scale_value(next, i, scales, 1e-40))).collect();
        RhsOwned {
            data,
            layout,
            stride,
            encoding: Int4Encoding::ZeroPoint8,
            scale_f32: Vec::new(),
            zero_f32: Vec::new(),
            scale_bf16,
            scale_stride,
            bias: random_bias(next, n, bias),
            lut: qsu2cxp::DEFAULT_LUT,
        }
    }
}

impl Fam for Q40 {
    type F = Qsi8d32pQsi4c32p;
    type Src = f32;

    fn lhs_packed_size(p: &Packing, m: usize, k: usize, bl: usize) -> Result<usize> {
        qsi8d32p::packed_size(m, k, bl, p)
    }

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        m_start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qsi8d32p::quantize_pack(p, m, k, bl, m_start, x, stride, out)
    }

    fn rhs_packed_size(p: &Packing, n: usize, k: usize, bl: usize) -> Result<usize> {
        qsi4c32pscalef16::packed_size(n, k, bl, p)
    }

    fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
        qsi4c32pscalef16::pack(p, n, k, bl, raw.data, raw.stride, out)
    }

    fn random_rhs(
        next: &mut dyn FnMut() -> u64,
        n: usize,
        k: usize,
        bl: usize,
        _layout: Layout,
        weights: WeightStyle,
        scales: ScaleStyle,
        _bias: bool,
    ) -> RhsOwned {
        let nb = k / bl;
        let row_bytes = nb * qsi4c32pscalef16::raw_block_bytes(bl);
        let stride = row_bytes + (next() % 3) as usize;
        let mut data = Vec::with_capacity(n * stride);
        for c in 0..n {
            for b in 0..nb {
                // 2^-20 is an f16 subnormal.
                let s = f16::from_f32(scale_value(next, c * nb + b, scales, 2f32.powi(-20)));
                data.extend_from_slice(&s.to_le_bytes());
                data.extend(nibble_bytes(next, bl / 2, weights));
            }
            if c + 1 < n {
                data.extend(std::iter::repeat_n(0xeeu8, stride - row_bytes));
            }
        }
        RhsOwned {
            data,
            layout: Layout::NxK,
            stride,
            encoding: Int4Encoding::ZeroPoint8,
            scale_f32: Vec::new(),
            zero_f32: Vec::new(),
            scale_bf16: Vec::new(),
            scale_stride: 0,
            bias: None,
            lut: qsu2cxp::DEFAULT_LUT,
        }
    }
}

impl Fam for Qsi8cxp {
    type F = Qai8dxpQsi8cxp;
    type Src = f32;

    fn lhs_packed_size(p: &Packing, m: usize, k: usize, _bl: usize) -> Result<usize> {
        qai8dxp::packed_size(m, k, p)
    }

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        m_start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack(p, m, k, m_start, x, stride, out)
    }

    fn rhs_packed_size(p: &Packing, n: usize, k: usize, _bl: usize) -> Result<usize> {
        qsi8cxp::packed_size(n, k, p)
    }

    fn pack_rhs(p: &Packing, n: usize, k: usize, _bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
        // SAFETY: `i8` and `u8` have the same size and alignment and every bit pattern is valid
        // for both; the new slice covers exactly the bytes of `raw.data`, borrowed as long.
        let data = unsafe { core::slice::from_raw_parts(raw.data.as_ptr().cast::<i8>(), raw.data.len()) };
        let src = Int8Source { data, layout: raw.layout, stride: raw.stride };
        qsi8cxp::pack(p, n, k, &src, raw.scale_f32, raw.bias, out)
    }

    fn random_rhs(
        next: &mut dyn FnMut() -> u64,
        n: usize,
        k: usize,
        _bl: usize,
        layout: Layout,
        weights: WeightStyle,
        scales: ScaleStyle,
        bias: bool,
    ) -> RhsOwned {
        let (data, stride) = int8_weights(next, n, k, layout, weights);
        let scale_f32 = (0..n).map(|i| scale_value(next, i, scales, 1e-40) / 16.0).collect();
        RhsOwned {
            data,
            layout,
            stride,
            encoding: Int4Encoding::Signed,
            scale_f32,
            zero_f32: Vec::new(),
            scale_bf16: Vec::new(),
            scale_stride: 0,
            bias: random_bias(next, n, bias),
            lut: qsu2cxp::DEFAULT_LUT,
        }
    }
}

/// The tables the 2-bit fixture draws from (besides a random one): the default `{-2, -1, 0, 1}`,
/// KleidiAI's custom-table golden one, and one with both ends of the accepted range.
pub const LUTS: [[i32; 4]; 3] = [qsu2cxp::DEFAULT_LUT, [-3, -1, 1, 3], [qsu2cxp::LUT_MIN, qsu2cxp::LUT_MAX, 0, -1]];

/// A table for the 2-bit codes: one of [`LUTS`] or (one time in four) four random entries in
/// `[LUT_MIN, LUT_MAX]`. Three draws in four are not the default, so a kernel that ignored
/// the table it is given would differ from the scalar reference.
fn draw_lut(next: &mut dyn FnMut() -> u64) -> [i32; 4] {
    match (next() % 4) as usize {
        3 => core::array::from_fn(|_| qsu2cxp::LUT_MIN + (next() % 128) as i32),
        i => LUTS[i],
    }
}

/// For the tests with a few fixed-seed cases: case `i` of a family with a table gets
/// `LUTS[i % 4]`, every fourth case keeps its drawn one, so any three consecutive cases cover
/// the default and two other tables. The other families keep the default.
pub fn cycle_lut<X: Fam>(raw: &mut RhsOwned, i: usize) {
    let takes_lut = <<X::F as Family>::Params as FromLut>::from_lut(LUTS[1]) != <X::F as Family>::Params::DEFAULT;
    if takes_lut && i % 4 < LUTS.len() {
        raw.lut = LUTS[i % 4];
    }
}

/// One byte of four 2-bit codes drawn by `style` (codes 0 and 3 are the table's first and last
/// entries, the extremes of the default table).
fn code_byte(next: &mut dyn FnMut() -> u64, style: WeightStyle) -> u8 {
    match style {
        WeightStyle::Random => next() as u8,
        WeightStyle::AllMin => 0x00,
        WeightStyle::AllMax => 0xff,
        WeightStyle::Extremes => (0..4).map(|i| if next() & 1 == 0 { 0 } else { 3 << (2 * i) }).sum(),
    }
}

impl Fam for Qsu2cxp {
    type F = Qai8dxpQsu2cxp;
    type Src = f32;

    fn lhs_packed_size(p: &Packing, m: usize, k: usize, _bl: usize) -> Result<usize> {
        qai8dxp::packed_size(m, k, p)
    }

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        m_start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack(p, m, k, m_start, x, stride, out)
    }

    fn rhs_packed_size(p: &Packing, n: usize, k: usize, _bl: usize) -> Result<usize> {
        qsu2cxp::packed_size(n, k, p)
    }

    fn pack_rhs(p: &Packing, n: usize, k: usize, _bl: usize, raw: &RhsRaw<'_>, out: &mut [u8]) -> Result<()> {
        qsu2cxp::pack(p, n, k, raw.data, raw.stride, raw.scale_f32, raw.bias, Some(&raw.lut), out)
    }

    /// NxK codes only (`layout` is ignored), `k / 4` bytes per row plus one spare byte at
    /// random; per-channel f32 scales; a table from [`draw_lut`].
    fn random_rhs(
        next: &mut dyn FnMut() -> u64,
        n: usize,
        k: usize,
        _bl: usize,
        _layout: Layout,
        weights: WeightStyle,
        scales: ScaleStyle,
        bias: bool,
    ) -> RhsOwned {
        let row_bytes = k / 4;
        let stride = row_bytes + (next() % 2) as usize;
        let data = (0..(n - 1) * stride + row_bytes).map(|_| code_byte(next, weights)).collect();
        let scale_f32 = (0..n).map(|i| scale_value(next, i, scales, 1e-40)).collect();
        let bias = random_bias(next, n, bias);
        RhsOwned {
            data,
            layout: Layout::NxK,
            stride,
            encoding: Int4Encoding::ZeroPoint8,
            scale_f32,
            zero_f32: Vec::new(),
            scale_bf16: Vec::new(),
            scale_stride: 0,
            bias,
            lut: draw_lut(next),
        }
    }
}

/// Whether the family takes a block length.
pub fn blocked<X: Fam>() -> bool {
    <X::F as Family>::BLOCKED
}

/// `k` rounded up to a depth family `X` accepts: a multiple of [`Family::K_MULTIPLE`] (32 for
/// the 2-bit family, whose format has no K padding; 1 for the others).
pub fn depth<X: Fam>(k: usize) -> usize {
    k.next_multiple_of(<X::F as Family>::K_MULTIPLE)
}

/// Every packing some kernel of `X` consumes, in catalogue order.
pub fn packings<X: Fam>() -> Vec<Packing> {
    let mut v: Vec<Packing> = Vec::new();
    for k in <X::F as Family>::kernels() {
        let p = k.packing_on(&qgemm::CpuFeatures::NONE).expect("a fixed shape");
        if !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// The run arguments of family `F` with the parameters of table `lut` ([`FromLut`]).
pub fn args_with_lut<F: Family<Params: FromLut>>(
    args: qgemm::MatmulArgs<F::Params>,
    lut: [i32; 4],
) -> qgemm::MatmulArgs<F::Params> {
    args.with_params(<F::Params as FromLut>::from_lut(lut))
}
