//! all-MiniLM-L6-v2 (a 6-layer BERT encoder, hidden 384, 12 heads of 32, FFN 1536, mean pooling,
//! L2 normalization) in plain Rust, with its 36 linear layers either in f32 or through the
//! qgemm operator layer (`qgemm::op::Linear`). Shared by examples/minilm.rs and tests/minilm.rs
//! (`#[path]`). The model files come from the cache ci/fetch_minilm.sh fills.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use qgemm::MatmulArgs;
use qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use qgemm::f32_f32_f32p;
use qgemm::half::bf16;
use qgemm::op::{Linear, Operator};
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::quant::{self, Method, Weights as QWeights};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::Int8Source;
use qgemm::rhs::{FloatSource, Layout, f32p};
use qgemm::rhs::{Int4Encoding, Int4Source};
use qgemm::{CpuFeatures, Element};

pub const HIDDEN: usize = 384;
pub const HEADS: usize = 12;
pub const HEAD_DIM: usize = HIDDEN / HEADS;
pub const FFN: usize = 1536;
pub const LAYERS: usize = 6;
const EPS: f32 = 1e-12;

/// The model cache: `$QGEMM_MINILM_DIR`, else `${XDG_CACHE_HOME:-~/.cache}/qgemm/all-MiniLM-L6-v2`
/// (as ci/fetch_minilm.sh), if it holds the model and the tokenizer.
pub fn model_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("QGEMM_MINILM_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            cache.join("qgemm").join("all-MiniLM-L6-v2")
        }
    };
    (dir.join("model.safetensors").is_file() && dir.join("tokenizer.json").is_file()).then_some(dir)
}

/// The sentences of tests/data/minilm/sentences.txt.
pub fn sentences() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minilm/sentences.txt");
    std::fs::read_to_string(path).expect(path).lines().filter(|l| !l.trim().is_empty()).map(String::from).collect()
}

/// The calibration sentences of tests/data/minilm/calibration.txt (everyday English, disjoint
/// from the evaluation sentences).
#[allow(dead_code)] // examples/minilm.rs --gptq only
pub fn calibration_sentences() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minilm/calibration.txt");
    std::fs::read_to_string(path).expect(path).lines().filter(|l| !l.trim().is_empty()).map(String::from).collect()
}

/// The PyTorch embeddings of the sentences (tests/data/minilm/reference_f32.bin, made by
/// ci/minilm_reference.py): one row of 384 per sentence.
pub fn pytorch_reference() -> Vec<Vec<f32>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minilm/reference_f32.bin");
    let b = std::fs::read(path).expect(path);
    b.chunks_exact(4 * HIDDEN)
        .map(|r| r.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
        .collect()
}

/// A dense layer `y = x W^T + b`, `W` row-major `n x k`.
pub struct Dense {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
    pub n: usize,
    pub k: usize,
}

struct Norm {
    g: Vec<f32>,
    b: Vec<f32>,
}

struct Layer {
    /// query, key, value, attention output, FFN up, FFN down.
    dense: [Dense; 6],
    attn_norm: Norm,
    ffn_norm: Norm,
}

/// The f32 weights.
pub struct Weights {
    word: Vec<f32>,
    pos: Vec<f32>,
    typ: Vec<f32>,
    emb_norm: Norm,
    layers: Vec<Layer>,
}

/// Names of the 6 dense layers of an encoder layer, in `Layer::dense` order.
pub const DENSE: [&str; 6] = [
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
];

impl Weights {
    /// Loads `model.safetensors` (f32 tensors, BERT names).
    pub fn load(dir: &std::path::Path) -> Result<Weights, String> {
        let bytes = std::fs::read(dir.join("model.safetensors")).map_err(|e| e.to_string())?;
        let st = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| e.to_string())?;
        let get = |name: &str| -> Result<Vec<f32>, String> {
            let t = st.tensor(name).map_err(|e| format!("{name}: {e}"))?;
            if t.dtype() != safetensors::Dtype::F32 {
                return Err(format!("{name}: {:?}, expected F32", t.dtype()));
            }
            Ok(t.data().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
        };
        let norm = |p: &str| -> Result<Norm, String> {
            Ok(Norm { g: get(&format!("{p}.weight"))?, b: get(&format!("{p}.bias"))? })
        };
        let mut layers = Vec::new();
        for l in 0..LAYERS {
            let p = format!("encoder.layer.{l}");
            let dense = |i: usize| -> Result<Dense, String> {
                let (n, k) = match i {
                    4 => (FFN, HIDDEN),
                    5 => (HIDDEN, FFN),
                    _ => (HIDDEN, HIDDEN),
                };
                let w = get(&format!("{p}.{}.weight", DENSE[i]))?;
                let b = get(&format!("{p}.{}.bias", DENSE[i]))?;
                if w.len() != n * k || b.len() != n {
                    return Err(format!("{p}.{}: unexpected shape", DENSE[i]));
                }
                Ok(Dense { w, b, n, k })
            };
            layers.push(Layer {
                dense: [dense(0)?, dense(1)?, dense(2)?, dense(3)?, dense(4)?, dense(5)?],
                attn_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                ffn_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Weights {
            word: get("embeddings.word_embeddings.weight")?,
            pos: get("embeddings.position_embeddings.weight")?,
            typ: get("embeddings.token_type_embeddings.weight")?,
            emb_norm: norm("embeddings.LayerNorm")?,
            layers,
        })
    }

    /// The dense layers in order: layer 0 query .. layer 5 FFN down (36).
    pub fn dense(&self) -> impl Iterator<Item = &Dense> {
        self.layers.iter().flat_map(|l| l.dense.iter())
    }
}

/// How the linear layers compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Plain f32.
    F32,
    /// int4 per-block (bl = 32, bf16 scales): `qai8dxp_qsi4c32p`.
    Int4Block,
    /// int4 per-channel (f32 scales): `qai8dxp_qsi4cxp`.
    Int4Channel,
    /// int8 per-channel (f32 scales): `qai8dxp_qsi8cxp`.
    Int8Channel,
    /// int4 per-block as `Int4Block`, but the two most sensitive layers of each encoder layer,
    /// V and FFN up, int8 per-channel as `Int8Channel`: two families in one model.
    Int4BlockVUpInt8,
    /// f16 activations and outputs (each linear layer's input rounded to f16, its output widened
    /// back to f32), int8 per-channel weights: `f16_qai8dxp_qsi8cxp`.
    Int8ChannelF16,
    /// bf16 activations and outputs, int4 per-block weights: `bf16_qai8dxp_qsi4c32p`.
    Int4BlockBf16,
    /// int4 per-block (bl = 32), asymmetric (an f32 scale and offset per block, quantized by
    /// `qgemm::quant::qai4c32p` with `Method::Fitted`): `qsi8d32p_qai4c32p`.
    Int4BlockAsym,
}

impl Variant {
    pub const ALL: [Variant; 8] = [
        Variant::F32,
        Variant::Int4Block,
        Variant::Int4Channel,
        Variant::Int8Channel,
        Variant::Int4BlockVUpInt8,
        Variant::Int8ChannelF16,
        Variant::Int4BlockBf16,
        Variant::Int4BlockAsym,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::F32 => "f32",
            Variant::Int4Block => "int4 per-block bl=32 (qai8dxp_qsi4c32p)",
            Variant::Int4Channel => "int4 per-channel (qai8dxp_qsi4cxp)",
            Variant::Int8Channel => "int8 per-channel (qai8dxp_qsi8cxp)",
            Variant::Int4BlockVUpInt8 => "int4 per-block, V and FFN up int8 per-channel",
            Variant::Int8ChannelF16 => "f16 activations, int8 per-channel (f16_qai8dxp_qsi8cxp)",
            Variant::Int4BlockBf16 => "bf16 activations, int4 per-block bl=32 (bf16_qai8dxp_qsi4c32p)",
            Variant::Int4BlockAsym => "int4 asymmetric per-block bl=32 (qsi8d32p_qai4c32p)",
        }
    }
}

/// A dense layer's weights packed for the operator layer of one family.
pub enum Packed {
    Int4Block(Vec<u8>),
    Int4Channel(Vec<u8>),
    Int8Channel(Vec<u8>),
    Int8ChannelF16(Vec<u8>),
    Int4BlockBf16(Vec<u8>),
    Int4BlockAsym(Vec<u8>),
    /// GGML `Q4_0` blocks with `qsi8d32p` activations (`qsi8d32p_qsi4c32p`, no packed bias:
    /// the bias is added after the layer).
    #[allow(dead_code)] // examples/minilm.rs --quant-table only
    Q4_0(Vec<u8>),
    /// Weights quantized from `W / s` run with the activation multipliers `s`
    /// (`Linear::with_input_scale`, AWQ).
    #[allow(dead_code)] // examples/minilm.rs --gptq only
    Scaled(Box<Packed>, Vec<f32>),
}

/// int4 per-block quantization (bl = 32, bf16 scales) of `d` by the library's error-minimizing
/// search: the signed nibbles and the scales.
fn int4_block(d: &Dense, bl: usize) -> (Vec<u8>, Vec<bf16>) {
    let (code_bytes, scales) = quant::qsi4c32p::sizes(d.n, d.k, bl).unwrap();
    let (mut codes, mut scale) = (vec![0u8; code_bytes], vec![bf16::ZERO; scales]);
    quant::qsi4c32p::quantize(Method::Search, d.n, d.k, bl, &QWeights::nxk(&d.w, d.k), &mut codes, &mut scale).unwrap();
    (codes, scale)
}

/// int8 per-channel quantization (f32 scales) of `d` by the library's search: the values row by
/// row and the scales.
fn int8_channel(d: &Dense) -> (Vec<i8>, Vec<f32>) {
    let (mut codes, mut scale) = (vec![0i8; d.n * d.k], vec![0f32; d.n]);
    quant::qsi8cxp::quantize(Method::Search, d.n, d.k, &QWeights::nxk(&d.w, d.k), &mut codes, &mut scale).unwrap();
    (codes, scale)
}

impl Packed {
    /// Quantizes and packs `d` for `variant` (a single-family variant: not `F32` nor
    /// `Int4BlockVUpInt8`).
    pub fn new(d: &Dense, variant: Variant) -> Packed {
        let (n, k, bl) = (d.n, d.k, 32);
        macro_rules! int4_block {
            ($family:ty) => {{
                let (nib, scales) = int4_block(d, bl);
                let src = Int4Source::nxk(&nib, k, Int4Encoding::Signed);
                let mut buf = vec![0u8; Linear::<$family>::packed_size(n, k, bl).unwrap()];
                let sc = BlockScales::dense(&scales, k / bl);
                Linear::<$family>::pack(n, k, bl, &src, &sc, Some(&d.b), &mut buf).unwrap();
                buf
            }};
        }
        macro_rules! int8_channel {
            ($family:ty) => {{
                let (q, scales) = int8_channel(d);
                let mut buf = vec![0u8; Linear::<$family>::packed_size(n, k).unwrap()];
                Linear::<$family>::pack(n, k, &Int8Source::nxk(&q, k), &scales, Some(&d.b), &mut buf).unwrap();
                buf
            }};
        }
        match variant {
            Variant::Int4Block => Packed::Int4Block(int4_block!(Qai8dxpQsi4c32p)),
            Variant::Int4BlockBf16 => Packed::Int4BlockBf16(int4_block!(Bf16Qai8dxpQsi4c32p)),
            Variant::Int4Channel => {
                let (code_bytes, _) = quant::qsi4cxp::sizes(n, k).unwrap();
                let (mut nib, mut scales) = (vec![0u8; code_bytes], vec![0f32; n]);
                quant::qsi4cxp::quantize(Method::Search, n, k, &QWeights::nxk(&d.w, k), &mut nib, &mut scales).unwrap();
                let src = Int4Source::nxk(&nib, k, Int4Encoding::Signed);
                let mut buf = vec![0u8; Linear::<Qai8dxpQsi4cxp>::packed_size(n, k).unwrap()];
                Linear::<Qai8dxpQsi4cxp>::pack(n, k, &src, &scales, Some(&d.b), &mut buf).unwrap();
                Packed::Int4Channel(buf)
            }
            Variant::Int8Channel => Packed::Int8Channel(int8_channel!(Qai8dxpQsi8cxp)),
            Variant::Int8ChannelF16 => Packed::Int8ChannelF16(int8_channel!(F16Qai8dxpQsi8cxp)),
            Variant::Int4BlockAsym => {
                use qgemm::quant::qai4c32p::{self, Method};
                let (code_bytes, params) = qai4c32p::sizes(n, k, bl).unwrap();
                let (mut codes, mut zero, mut scale) = (vec![0u8; code_bytes], vec![0f32; params], vec![0f32; params]);
                qai4c32p::quantize(Method::Fitted, n, k, bl, &d.w, k, &mut codes, &mut zero, &mut scale).unwrap();
                let mut buf = vec![0u8; Linear::<Qsi8d32pQai4c32p>::packed_size(n, k, bl).unwrap()];
                Linear::<Qsi8d32pQai4c32p>::pack(n, k, bl, &codes, k / 2, &zero, &scale, Some(&d.b), &mut buf).unwrap();
                Packed::Int4BlockAsym(buf)
            }
            Variant::F32 | Variant::Int4BlockVUpInt8 => unreachable!("not a single-family variant"),
        }
    }

    /// Runs the layer on `m` rows of `x` through the operator layer (for the f16 and bf16
    /// families: `x` rounded to the activation type, the outputs widened back to f32).
    fn run(&self, d: &Dense, cpu: &CpuFeatures, m: usize, x: &[f32], out: &mut [f32], scratch: &mut Vec<u8>) {
        self.run_scaled(d, None, cpu, m, x, out, scratch)
    }

    /// [`Packed::run`] with the activation multipliers `input_scale`.
    #[allow(clippy::too_many_arguments)]
    fn run_scaled(
        &self,
        d: &Dense,
        input_scale: Option<&[f32]>,
        cpu: &CpuFeatures,
        m: usize,
        x: &[f32],
        out: &mut [f32],
        scratch: &mut Vec<u8>,
    ) {
        fn go<F: Operator<Src = f32> + qgemm::Family<Dst = f32>>(
            l: Linear<'_, F>,
            cpu: &CpuFeatures,
            m: usize,
            x: &[f32],
            out: &mut [f32],
            s: &mut Vec<u8>,
        ) {
            let need = l.scratch_size(m).unwrap();
            if s.len() < need {
                s.resize(need, 0);
            }
            l.run(cpu, m, x, out, s).unwrap();
        }
        fn go_half<T: Element, F: Operator<Src = T> + qgemm::Family<Dst = T>>(
            l: Linear<'_, F>,
            cpu: &CpuFeatures,
            m: usize,
            x: &[f32],
            out: &mut [f32],
            s: &mut Vec<u8>,
        ) {
            let need = l.scratch_size(m).unwrap();
            if s.len() < need {
                s.resize(need, 0);
            }
            let xh: Vec<T> = x.iter().map(|&v| T::from_f32(v)).collect();
            let mut oh = vec![T::default(); out.len()];
            l.run(cpu, m, &xh, &mut oh, s).unwrap();
            for (o, h) in out.iter_mut().zip(&oh) {
                *o = h.to_f32();
            }
        }
        let (n, k) = (d.n, d.k);
        macro_rules! layer {
            ($family:ty, $bl:expr, $w:expr) => {{
                let l = Linear::<$family>::from_packed(n, k, $bl, $w).unwrap();
                match input_scale {
                    Some(s) => l.with_input_scale(s).unwrap(),
                    None => l,
                }
            }};
        }
        match self {
            Packed::Scaled(inner, s) => inner.run_scaled(d, Some(s), cpu, m, x, out, scratch),
            Packed::Q4_0(w) => {
                go(layer!(Qsi8d32pQsi4c32p, 32, w), cpu, m, x, out, scratch);
                for row in out.chunks_exact_mut(n) {
                    row.iter_mut().zip(&d.b).for_each(|(y, b)| *y += b);
                }
            }
            Packed::Int4Block(w) => go(layer!(Qai8dxpQsi4c32p, 32, w), cpu, m, x, out, scratch),
            Packed::Int4Channel(w) => go(layer!(Qai8dxpQsi4cxp, 0, w), cpu, m, x, out, scratch),
            Packed::Int8Channel(w) => go(layer!(Qai8dxpQsi8cxp, 0, w), cpu, m, x, out, scratch),
            Packed::Int8ChannelF16(w) => go_half(layer!(F16Qai8dxpQsi8cxp, 0, w), cpu, m, x, out, scratch),
            Packed::Int4BlockBf16(w) => go_half(layer!(Bf16Qai8dxpQsi4c32p, 32, w), cpu, m, x, out, scratch),
            Packed::Int4BlockAsym(w) => go(layer!(Qsi8d32pQai4c32p, 32, w), cpu, m, x, out, scratch),
        }
    }
}

/// f32 `y = x W^T + b` (8 partial sums per dot product).
fn dense_f32(d: &Dense, m: usize, x: &[f32], out: &mut [f32]) {
    for i in 0..m {
        let xi = &x[i * d.k..(i + 1) * d.k];
        for c in 0..d.n {
            let w = &d.w[c * d.k..(c + 1) * d.k];
            let mut acc = [0f32; 8];
            for (xs, ws) in xi.chunks_exact(8).zip(w.chunks_exact(8)) {
                for t in 0..8 {
                    acc[t] += xs[t] * ws[t];
                }
            }
            out[i * d.n + c] = acc.iter().sum::<f32>() + d.b[c];
        }
    }
}

fn layer_norm(x: &mut [f32], n: &Norm) {
    for row in x.chunks_exact_mut(HIDDEN) {
        let mean = row.iter().sum::<f32>() / HIDDEN as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / HIDDEN as f32;
        let inv = 1.0 / (var + EPS).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&n.g).zip(&n.b) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * core::f32::consts::FRAC_1_SQRT_2))
}

/// Time spent per part of the encoder.
#[derive(Default, Clone, Copy, Debug)]
pub struct Times {
    /// The 36 linear layers (with the activation quantization).
    pub linear: Duration,
    /// Attention scores, softmax and context.
    pub attention: Duration,
    /// Embeddings, layer norms, GELU, residuals, pooling.
    pub other: Duration,
}

/// The encoder with one variant of its linear layers.
/// A view of each linear layer's input: `(layer index, rows, activations)`.
pub type Tap<'t> = &'t mut dyn FnMut(usize, usize, &[f32]);

pub struct Encoder<'a> {
    w: &'a Weights,
    packed: Vec<Packed>,
    cpu: CpuFeatures,
    scratch: Vec<u8>,
    /// One attention head's packed K or V.
    head_pack: Vec<u8>,
}

impl<'a> Encoder<'a> {
    /// Packs the 36 linear layers for `variant` (nothing for `F32`).
    pub fn new(w: &'a Weights, variant: Variant, cpu: CpuFeatures) -> Encoder<'a> {
        let family = |i: usize| match variant {
            // V (2) and FFN up (4) of every encoder layer in int8, the rest int4 per block.
            Variant::Int4BlockVUpInt8 if i % 6 == 2 || i % 6 == 4 => Variant::Int8Channel,
            Variant::Int4BlockVUpInt8 => Variant::Int4Block,
            v => v,
        };
        let packed = if variant == Variant::F32 {
            Vec::new()
        } else {
            w.dense().enumerate().map(|(i, d)| Packed::new(d, family(i))).collect()
        };
        Encoder { w, packed, cpu, scratch: Vec::new(), head_pack: Vec::new() }
    }

    /// An encoder whose 36 linear layers run the given packed weights (in `Weights::dense`
    /// order).
    #[allow(dead_code)] // examples/minilm.rs --gptq only
    pub fn with_packed(w: &'a Weights, packed: Vec<Packed>, cpu: CpuFeatures) -> Encoder<'a> {
        Encoder { w, packed, cpu, scratch: Vec::new(), head_pack: Vec::new() }
    }

    fn linear(&mut self, layer: usize, i: usize, m: usize, x: &[f32], out: &mut [f32], tap: Tap<'_>) {
        tap(6 * layer + i, m, x);
        let d = &self.w.layers[layer].dense[i];
        match self.packed.get(6 * layer + i) {
            Some(p) => p.run(d, &self.cpu, m, x, out, &mut self.scratch),
            None => dense_f32(d, m, x, out),
        }
    }

    /// One attention head (columns `o .. o + HEAD_DIM` of `q`, `k`, `v`, `ctx`, rows `HIDDEN`
    /// apart) over `l` tokens, with both products through qgemm's f32 family: `scores = Q Kᵀ`
    /// (K packed as an `l x HEAD_DIM` NxK matrix), a softmax per row, `ctx = scores V` (V packed
    /// KxN), each written in place through the kernels' strides.
    #[allow(clippy::too_many_arguments)]
    fn attention_head(
        &mut self,
        o: usize,
        l: usize,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        ctx: &mut [f32],
        scores: &mut [f32],
    ) {
        let kernel = f32_f32_f32p::select(&self.cpu, l);
        let fmt = kernel.rhs_packing();
        let keys = FloatSource { data: &k[o..], layout: Layout::NxK, stride: HIDDEN };
        self.head_pack.resize(fmt.packed_size(l, HEAD_DIM, 0).expect("size"), 0);
        f32p::pack(&fmt, l, HEAD_DIM, &keys, None, &mut self.head_pack).expect("pack K");
        let args = MatmulArgs::new(l, l, HEAD_DIM).with_lhs_stride(HIDDEN);
        kernel.run(&q[o..], &self.head_pack, scores, &args).expect("Q K^T");
        let scale = 1.0 / (HEAD_DIM as f32).sqrt();
        for row in scores.chunks_exact_mut(l) {
            row.iter_mut().for_each(|s| *s *= scale);
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            row.iter_mut().for_each(|s| *s = (*s - max).exp());
            let sum: f32 = row.iter().sum();
            row.iter_mut().for_each(|s| *s /= sum);
        }
        let values = FloatSource { data: &v[o..], layout: Layout::KxN, stride: HIDDEN };
        self.head_pack.resize(fmt.packed_size(HEAD_DIM, l, 0).expect("size"), 0);
        f32p::pack(&fmt, HEAD_DIM, l, &values, None, &mut self.head_pack).expect("pack V");
        let args = MatmulArgs::new(l, HEAD_DIM, l).with_dst_stride(HIDDEN);
        kernel.run(scores, &self.head_pack, &mut ctx[o..], &args).expect("P V");
    }

    /// The normalized sentence embedding of token ids `ids` (with the special tokens).
    pub fn embed(&mut self, ids: &[u32], t: &mut Times) -> Vec<f32> {
        self.embed_tapped(ids, t, &mut |_, _, _| {})
    }

    /// [`Encoder::embed`], showing `tap` the input of every linear layer (`Weights::dense`
    /// index, rows, the `rows x k` activations) before the layer runs.
    pub fn embed_tapped(&mut self, ids: &[u32], t: &mut Times, tap: Tap<'_>) -> Vec<f32> {
        let l = ids.len();
        let mut clock = Instant::now();
        let mut lap = |slot: &mut Duration| {
            let now = Instant::now();
            *slot += now - clock;
            clock = now;
        };
        let w = self.w;
        let mut h = vec![0f32; l * HIDDEN];
        for (i, &id) in ids.iter().enumerate() {
            let row = &mut h[i * HIDDEN..(i + 1) * HIDDEN];
            let id = id as usize;
            for (j, v) in row.iter_mut().enumerate() {
                *v = w.word[id * HIDDEN + j] + w.pos[i * HIDDEN + j] + w.typ[j];
            }
        }
        layer_norm(&mut h, &w.emb_norm);
        let (mut q, mut k, mut v) = (vec![0f32; l * HIDDEN], vec![0f32; l * HIDDEN], vec![0f32; l * HIDDEN]);
        let (mut ctx, mut proj) = (vec![0f32; l * HIDDEN], vec![0f32; l * HIDDEN]);
        let mut up = vec![0f32; l * FFN];
        let mut scores = vec![0f32; l * l];
        lap(&mut t.other);
        for layer in 0..LAYERS {
            self.linear(layer, 0, l, &h, &mut q, tap);
            self.linear(layer, 1, l, &h, &mut k, tap);
            self.linear(layer, 2, l, &h, &mut v, tap);
            lap(&mut t.linear);
            for head in 0..HEADS {
                self.attention_head(head * HEAD_DIM, l, &q, &k, &v, &mut ctx, &mut scores);
            }
            lap(&mut t.attention);
            self.linear(layer, 3, l, &ctx, &mut proj, tap);
            lap(&mut t.linear);
            h.iter_mut().zip(&proj).for_each(|(a, b)| *a += b);
            layer_norm(&mut h, &w.layers[layer].attn_norm);
            lap(&mut t.other);
            self.linear(layer, 4, l, &h, &mut up, tap);
            lap(&mut t.linear);
            up.iter_mut().for_each(|x| *x = gelu(*x));
            lap(&mut t.other);
            self.linear(layer, 5, l, &up, &mut proj, tap);
            lap(&mut t.linear);
            h.iter_mut().zip(&proj).for_each(|(a, b)| *a += b);
            layer_norm(&mut h, &w.layers[layer].ffn_norm);
            lap(&mut t.other);
        }
        let mut e = vec![0f32; HIDDEN];
        for row in h.chunks_exact(HIDDEN) {
            e.iter_mut().zip(row).for_each(|(a, b)| *a += b);
        }
        e.iter_mut().for_each(|x| *x /= l as f32);
        let norm = e.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        e.iter_mut().for_each(|x| *x /= norm);
        lap(&mut t.other);
        e
    }
}

/// Token ids of `s` with the special tokens, no padding.
pub fn tokenize(tok: &tokenizers::Tokenizer, s: &str) -> Vec<u32> {
    tok.encode(s, true).expect("tokenize").get_ids().to_vec()
}

/// The tokenizer of the model directory, with padding off.
pub fn tokenizer(dir: &std::path::Path) -> tokenizers::Tokenizer {
    let mut t = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).expect("tokenizer.json");
    t.with_padding(None);
    t
}

/// Cosine similarity.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// For each embedding, the index of its nearest other embedding (cosine).
pub fn nearest(e: &[Vec<f32>]) -> Vec<usize> {
    (0..e.len())
        .map(|i| {
            (0..e.len())
                .filter(|&j| j != i)
                .max_by(|&a, &b| cosine(&e[i], &e[a]).total_cmp(&cosine(&e[i], &e[b])))
                .unwrap_or(i)
        })
        .collect()
}

/// FNV-1a over the bits of every value: equal digests, bit-identical embeddings.
pub fn digest(e: &[Vec<f32>]) -> u64 {
    e.iter()
        .flatten()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Mean and minimum of the per-sentence cosines of `a` against `b`.
pub fn cos_stats(a: &[Vec<f32>], b: &[Vec<f32>]) -> (f64, f64) {
    let c: Vec<f64> = a.iter().zip(b).map(|(x, y)| cosine(x, y)).collect();
    (c.iter().sum::<f64>() / c.len() as f64, c.iter().copied().fold(f64::INFINITY, f64::min))
}
