//! Weight preparation for examples/minilm.rs `--gptq` and `--quant-table`: every method of
//! `qgemm::quant` (round to nearest, GGML's signed maximum, the search, the importance-weighted
//! search, GPTQ, and AWQ input scales with GPTQ) for the four symmetric weight formats, each layer
//! packed for the operator layer.

use qgemm::half::{bf16, f16};
use qgemm::op::Linear;
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::quant::gptq::{self, Hessian};
use qgemm::quant::{self, Method, Weights};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::Int8Source;
use qgemm::rhs::{Int4Encoding, Int4Source, Layout};

use crate::minilm::{Dense, Packed};

/// Block length of the per-block formats.
const BL: usize = 32;

/// GPTQ damping (a fraction of the mean of the Hessian's diagonal).
const DAMP: f32 = 0.01;

/// The exponents AWQ tries: activation multipliers `rms_j^-alpha` (rms of input `j` over the
/// calibration rows), 0 being plain GPTQ.
pub const AWQ_ALPHAS: [f32; 6] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];

/// A symmetric weight format and the family that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `qsi4cxp` (`qai8dxp_qsi4cxp`).
    Int4Channel,
    /// `qsi4c32p`, bf16 block scales (`qai8dxp_qsi4c32p`).
    Int4Block,
    /// GGML `Q4_0` (`qsi8d32p_qsi4c32p`).
    Q4_0,
    /// `qsi8cxp` (`qai8dxp_qsi8cxp`).
    Int8Channel,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Int4Channel, Format::Int4Block, Format::Q4_0, Format::Int8Channel];

    pub fn name(self) -> &'static str {
        match self {
            Format::Int4Channel => "int4 per channel (`qsi4cxp`)",
            Format::Int4Block => "int4 per block of 32, bf16 scales (`qsi4c32p`)",
            Format::Q4_0 => "Q4_0 (`q4_0`, `qsi8d32p` activations)",
            Format::Int8Channel => "int8 per channel (`qsi8cxp`)",
        }
    }
}

/// How a layer's weights are prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prep {
    RoundToNearest,
    SignedMax,
    Search,
    /// The search weighted by the diagonal of the layer's calibration Hessian.
    WeightedSearch,
    /// `quant::gptq` with the Hessian (block scales by the weighted search).
    Gptq,
    /// AWQ input scales chosen per layer among [`AWQ_ALPHAS`], then GPTQ.
    AwqGptq,
}

impl Prep {
    pub const ALL: [Prep; 6] =
        [Prep::RoundToNearest, Prep::SignedMax, Prep::Search, Prep::WeightedSearch, Prep::Gptq, Prep::AwqGptq];

    pub fn name(self) -> &'static str {
        match self {
            Prep::RoundToNearest => "round to nearest",
            Prep::SignedMax => "signed max",
            Prep::Search => "search",
            Prep::WeightedSearch => "weighted search",
            Prep::Gptq => "GPTQ",
            Prep::AwqGptq => "AWQ + GPTQ",
        }
    }
}

/// `w` (`d`'s shape) quantized in `format`, by GPTQ with `h` when given (else by `method`),
/// packed with `d`'s bias, and the dequantized weights.
fn quantize(
    d: &Dense,
    w: &[f32],
    format: Format,
    method: Option<Method<'_>>,
    h: Option<&Hessian<'_>>,
) -> (Packed, Vec<f32>) {
    let (n, k) = (d.n, d.k);
    let ww = Weights::nxk(w, k);
    let mut work = match h {
        Some(_) => vec![0f64; gptq::workspace_len(n, k).unwrap()],
        None => Vec::new(),
    };
    let m = method.unwrap_or(Method::RoundToNearest);
    let nibble = |codes: &[u8], e: usize| {
        let b = codes[e / k * k / 2 + e % k / 2];
        f32::from((((b >> (4 * (e % k % 2))) & 0xf) << 4) as i8 >> 4)
    };
    match format {
        Format::Int4Channel => {
            let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![0f32; n]);
            match h {
                Some(h) => gptq::qsi4cxp(method, n, k, &ww, h, DAMP, &mut work, &mut codes, &mut scale).unwrap(),
                None => quant::qsi4cxp::quantize(m, n, k, &ww, &mut codes, &mut scale).unwrap(),
            }
            let deq = (0..n * k).map(|e| nibble(&codes, e) * scale[e / k]).collect();
            let mut buf = vec![0u8; Linear::<Qai8dxpQsi4cxp>::packed_size(n, k).unwrap()];
            let src = Int4Source::nxk(&codes, k, Int4Encoding::Signed);
            Linear::<Qai8dxpQsi4cxp>::pack(n, k, &src, &scale, Some(&d.b), &mut buf).unwrap();
            (Packed::Int4Channel(buf), deq)
        }
        Format::Int4Block => {
            let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![bf16::ZERO; n * k / BL]);
            match h {
                Some(h) => gptq::qsi4c32p(method, n, k, BL, &ww, h, DAMP, &mut work, &mut codes, &mut scale).unwrap(),
                None => quant::qsi4c32p::quantize(m, n, k, BL, &ww, &mut codes, &mut scale).unwrap(),
            }
            let deq = (0..n * k).map(|e| nibble(&codes, e) * scale[e / BL].to_f32()).collect();
            let mut buf = vec![0u8; Linear::<Qai8dxpQsi4c32p>::packed_size(n, k, BL).unwrap()];
            let src = Int4Source::nxk(&codes, k, Int4Encoding::Signed);
            let bs = BlockScales::dense(&scale, k / BL);
            Linear::<Qai8dxpQsi4c32p>::pack(n, k, BL, &src, &bs, Some(&d.b), &mut buf).unwrap();
            (Packed::Int4Block(buf), deq)
        }
        Format::Q4_0 => {
            let mut blocks = vec![0u8; quant::q4_0::size(n, k, BL).unwrap()];
            match h {
                Some(h) => gptq::q4_0(method, n, k, BL, &ww, h, DAMP, &mut work, &mut blocks).unwrap(),
                None => quant::q4_0::quantize(m, n, k, BL, &ww, &mut blocks).unwrap(),
            }
            let deq = (0..n * k)
                .map(|e| {
                    let (c, j) = (e / k, e % k);
                    let blk = &blocks[(c * k / BL + j / BL) * 18..];
                    let jj = j % BL;
                    let u = (blk[2 + jj % 16] >> (4 * (jj / 16))) & 0xf;
                    (i32::from(u) - 8) as f32 * f16::from_le_bytes([blk[0], blk[1]]).to_f32()
                })
                .collect();
            let mut buf = vec![0u8; Linear::<Qsi8d32pQsi4c32p>::packed_size(n, k, BL).unwrap()];
            Linear::<Qsi8d32pQsi4c32p>::pack(n, k, BL, &blocks, k / BL * 18, &mut buf).unwrap();
            (Packed::Q4_0(buf), deq)
        }
        Format::Int8Channel => {
            let (mut q, mut scale) = (vec![0i8; n * k], vec![0f32; n]);
            match h {
                Some(h) => gptq::qsi8cxp(method, n, k, &ww, h, DAMP, &mut work, &mut q, &mut scale).unwrap(),
                None => quant::qsi8cxp::quantize(m, n, k, &ww, &mut q, &mut scale).unwrap(),
            }
            let deq = (0..n * k).map(|e| f32::from(q[e]) * scale[e / k]).collect();
            let mut buf = vec![0u8; Linear::<Qai8dxpQsi8cxp>::packed_size(n, k).unwrap()];
            Linear::<Qai8dxpQsi8cxp>::pack(n, k, &Int8Source::nxk(&q, k), &scale, Some(&d.b), &mut buf).unwrap();
            (Packed::Int8Channel(buf), deq)
        }
    }
}

/// `sum_c (w_c - q_c)^T H (w_c - q_c)`: the squared output error of the weights `q` instead of
/// `w` (`n x k`) summed over the calibration rows of `h`.
fn output_error(h: &Hessian<'_>, n: usize, k: usize, w: &[f32], q: &[f32]) -> f64 {
    let dense: Vec<f64> = (0..k * k).map(|e| h.get(e / k, e % k).unwrap()).collect();
    let mut total = 0f64;
    let mut diff = vec![0f64; k];
    for c in 0..n {
        for (j, v) in diff.iter_mut().enumerate() {
            *v = f64::from(w[c * k + j]) - f64::from(q[c * k + j]);
        }
        for i in 0..k {
            let row = &dense[i * k..(i + 1) * k];
            total += diff[i] * row.iter().zip(&diff).map(|(a, b)| a * b).sum::<f64>();
        }
    }
    total
}

/// The layer `d` prepared by `prep` in `format`, with its calibration Hessian `h`; for
/// [`Prep::AwqGptq`] also the chosen exponent.
pub fn prepare(d: &Dense, format: Format, prep: Prep, h: &Hessian<'_>) -> (Packed, Option<f32>) {
    let (n, k) = (d.n, d.k);
    let mut diag = vec![0f32; k];
    h.diagonal(&mut diag).unwrap();
    let plain = |m: Method<'_>| quantize(d, &d.w, format, Some(m), None).0;
    match prep {
        Prep::RoundToNearest => (plain(Method::RoundToNearest), None),
        Prep::SignedMax => (plain(Method::SignedMax), None),
        Prep::Search => (plain(Method::Search), None),
        Prep::WeightedSearch => (plain(Method::WeightedSearch(&diag)), None),
        Prep::Gptq => (quantize(d, &d.w, format, None, Some(h)).0, None),
        Prep::AwqGptq => {
            // rms of each input over the rows; a dead input keeps multiplier 1.
            let rows = h.rows().max(1) as f64;
            let rms: Vec<f64> = diag.iter().map(|&v| (f64::from(v) / rows).sqrt()).collect();
            let mut best: Option<(f64, Packed, Vec<f32>, f32)> = None;
            let mut hbuf = vec![0f64; Hessian::buffer_len(k).unwrap()];
            for alpha in AWQ_ALPHAS {
                // rms^-alpha, divided by its geometric mean over the live inputs.
                let live: Vec<f64> = rms.iter().filter(|&&r| r > 0.0).map(|r| r.ln()).collect();
                let mean_ln = live.iter().sum::<f64>() / live.len().max(1) as f64;
                let mult: Vec<f32> = rms
                    .iter()
                    .map(|&r| if r > 0.0 { (-f64::from(alpha) * (r.ln() - mean_ln)).exp() as f32 } else { 1.0 })
                    .collect();
                let mut ws = d.w.clone();
                quant::divide_depths(n, k, &mut ws, Layout::NxK, k, &mult).unwrap();
                let mut hs = h.copy_to(&mut hbuf).unwrap();
                hs.scale_inputs(&mult).unwrap();
                let (packed, deq) = quantize(d, &ws, format, None, Some(&hs));
                let err = output_error(&hs, n, k, &ws, &deq);
                if best.as_ref().is_none_or(|b| err < b.0) {
                    best = Some((err, packed, mult, alpha));
                }
            }
            let (_, packed, mult, alpha) = best.unwrap();
            (Packed::Scaled(Box::new(packed), mult), Some(alpha))
        }
    }
}
