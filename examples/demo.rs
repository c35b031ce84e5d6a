//! Decode and prefill with qgemm, the way an LLM layer would use it.
//!
//! Random f32 weights are quantized to int4 (symmetric, `scale = absmax / 7` per output channel
//! or per block) and packed once; f32 activations are quantized and packed on every call. For
//! each kernel family the demo prints the problem, the kernel `select` picks for a decode
//! (`m = 1`) and a prefill (`m = 16`) call, the error of that result against plain f32 matmuls,
//! and whether every kernel the CPU supports gives exactly the bits of the scalar kernel of the
//! same packing (and which tiers were skipped).
//!
//! ```sh
//! ci/demo.sh                                   # aarch64 under qemu-aarch64 -cpu max
//! cargo run --features std --example demo      # any host (scalar tier only)
//! ```
//!
//! The family-specific part (weight quantization, the packers, `select`) is the `DemoFamily`
//! trait; another family is one more impl and one more line in `main`.

use std::process::ExitCode;

use half::{bf16, f16};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::{Int4Encoding, Int4Source};
use qgemm::{
    CpuFeatures, Element, Family, Kernel, MatmulArgs, Packing, Tier, bf16_qai8dxp_qsi4c32p, bf16_qai8dxp_qsi4cxp,
    f16_qai8dxp_qsi4cxp, qai8dxp_qsi4c32p, qai8dxp_qsi4cxp, qsi8d32p_qsi4c32p,
};

/// Output channels.
const N: usize = 256;
/// Depth.
const K: usize = 512;
/// Rows of the prefill call.
const M_PREFILL: usize = 16;
/// Block length of the per-block families.
const BL: usize = 32;

#[path = "support/splitmix.rs"]
mod splitmix;
use splitmix::SplitMix64 as Rng;

/// Approximately standard normal (Irwin-Hall of 12 uniforms).
fn normal(r: &mut Rng) -> f32 {
    (0..12).map(|_| r.unit()).sum::<f32>() - 6.0
}

/// The unquantized layer: `y = x W^T + bias`, `W` is `n x k` row-major.
struct Layer {
    n: usize,
    k: usize,
    weights: Vec<f32>,
    /// `None` for formats without bias.
    bias: Option<Vec<f32>>,
}

/// Symmetric int4 quantization with one scale per block of `bl` depths of each output channel
/// (`bl = k`: per channel): `scale = absmax / 7` rounded to the storage type, then
/// `q = round(w / scale)` in `[-7, 7]`.
struct Int4Weights {
    /// `n x k` values in `[-7, 7]`.
    q: Vec<i8>,
    /// `n x (k / bl)` scales, as stored.
    scales: Vec<f32>,
    /// `q * scale`, `n x k`: the weights as the kernels see them.
    dequantized: Vec<f32>,
}

impl Int4Weights {
    fn quantize(layer: &Layer, bl: usize, store: fn(f32) -> f32) -> Self {
        let (n, k) = (layer.n, layer.k);
        let nb = k / bl;
        let mut q = vec![0i8; n * k];
        let mut scales = vec![0f32; n * nb];
        let mut dequantized = vec![0f32; n * k];
        for c in 0..n {
            for b in 0..nb {
                let at = c * k + b * bl;
                let block = &layer.weights[at..at + bl];
                let absmax = block.iter().fold(0f32, |a, &w| a.max(w.abs()));
                let scale = if absmax > 0.0 { store(absmax / 7.0) } else { 1.0 };
                scales[c * nb + b] = scale;
                for (j, &w) in block.iter().enumerate() {
                    let v = (w / scale).round().clamp(-7.0, 7.0) as i8;
                    q[at + j] = v;
                    dequantized[at + j] = v as f32 * scale;
                }
            }
        }
        Int4Weights { q, scales, dequantized }
    }

    /// Signed nibbles, NxK, s1s0 order: element `j` of a row in the low nibble when `j` is even.
    fn nibbles_nxk(&self, n: usize, k: usize) -> Vec<u8> {
        let row_bytes = k.div_ceil(2);
        let mut out = vec![0u8; n * row_bytes];
        for c in 0..n {
            for j in 0..k {
                out[c * row_bytes + j / 2] |= ((self.q[c * k + j] as u8) & 0xf) << (4 * (j % 2));
            }
        }
        out
    }
}

/// What the demo needs from a family beyond [`Family`].
trait DemoFamily: Family<Lhs = u8, Params = ()> {
    /// One-line description of the operand formats.
    const WHAT: &'static str;
    /// How the weights are quantized.
    const WEIGHT_QUANT: &'static str;
    /// Whether the packed weights carry a bias.
    const HAS_BIAS: bool;
    /// The family's `select`.
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self>;
    /// Block length (0 for per-channel families).
    fn block_len() -> usize;
    /// Quantizes the f32 weights as the format stores them.
    fn quantize(layer: &Layer) -> Int4Weights;
    /// Packs the quantized weights (and the layer's bias) for `p`.
    fn pack_weights(p: &Packing, layer: &Layer, w: &Int4Weights) -> qgemm::Result<Vec<u8>>;
    /// Quantizes and packs `m x k` f32 activations (dense rows) for `p`.
    fn pack_activations(p: &Packing, m: usize, k: usize, x: &[f32]) -> qgemm::Result<Vec<u8>>;
}

fn pack_qai8dxp(p: &Packing, m: usize, k: usize, x: &[f32]) -> qgemm::Result<Vec<u8>> {
    let mut packed = vec![0u8; qgemm::lhs::qai8dxp::packed_size(m, k, p)?];
    qgemm::lhs::qai8dxp::quantize_pack(p, m, k, 0, x, k, &mut packed)?;
    Ok(packed)
}

impl DemoFamily for qai8dxp_qsi4cxp::Qai8dxpQsi4cxp {
    const WHAT: &'static str = "int8 activations quantized per row at run time x int4 weights \
                                with one f32 scale per output channel; f32 bias and output";
    const WEIGHT_QUANT: &'static str = "int4 per output channel, symmetric, scale = absmax / 7";
    const HAS_BIAS: bool = true;

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qai8dxp_qsi4cxp::select(cpu, m)
    }

    fn block_len() -> usize {
        0
    }

    fn quantize(layer: &Layer) -> Int4Weights {
        Int4Weights::quantize(layer, layer.k, |s| s)
    }

    fn pack_weights(p: &Packing, layer: &Layer, w: &Int4Weights) -> qgemm::Result<Vec<u8>> {
        let (n, k) = (layer.n, layer.k);
        let nibbles = w.nibbles_nxk(n, k);
        let src = Int4Source::nxk(&nibbles, k, Int4Encoding::Signed);
        let mut packed = vec![0u8; qgemm::rhs::qsi4cxp::packed_size(n, k, p)?];
        let bias = layer.bias.as_deref();
        qgemm::rhs::qsi4cxp::pack(p, n, k, &src, &w.scales, bias, &mut packed)?;
        Ok(packed)
    }

    fn pack_activations(p: &Packing, m: usize, k: usize, x: &[f32]) -> qgemm::Result<Vec<u8>> {
        pack_qai8dxp(p, m, k, x)
    }
}

impl DemoFamily for qai8dxp_qsi4c32p::Qai8dxpQsi4c32p {
    const WHAT: &'static str = "int8 activations quantized per row at run time x int4 weights \
                                with a bf16 scale per block of 32; f32 bias and output";
    const WEIGHT_QUANT: &'static str = "int4 per block of 32, symmetric, scale = bf16(absmax / 7)";
    const HAS_BIAS: bool = true;

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qai8dxp_qsi4c32p::select(cpu, m)
    }

    fn block_len() -> usize {
        BL
    }

    fn quantize(layer: &Layer) -> Int4Weights {
        Int4Weights::quantize(layer, BL, |s| bf16::from_f32(s).to_f32())
    }

    fn pack_weights(p: &Packing, layer: &Layer, w: &Int4Weights) -> qgemm::Result<Vec<u8>> {
        let (n, k) = (layer.n, layer.k);
        let nibbles = w.nibbles_nxk(n, k);
        let src = Int4Source::nxk(&nibbles, k, Int4Encoding::Signed);
        let scales: Vec<bf16> = w.scales.iter().map(|&s| bf16::from_f32(s)).collect();
        let scales = BlockScales::dense(&scales, k / BL);
        let mut packed = vec![0u8; qgemm::rhs::qsi4c32p::packed_size(n, k, BL, p)?];
        let bias = layer.bias.as_deref();
        qgemm::rhs::qsi4c32p::pack(p, n, k, BL, &src, &scales, bias, &mut packed)?;
        Ok(packed)
    }

    fn pack_activations(p: &Packing, m: usize, k: usize, x: &[f32]) -> qgemm::Result<Vec<u8>> {
        pack_qai8dxp(p, m, k, x)
    }
}

impl DemoFamily for qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p {
    const WHAT: &'static str = "int8 activations quantized per block of 32 (Q8_0-like) x GGML \
                                Q4_0 weights (f16 scale per block of 32); f32 output, no bias";
    const WEIGHT_QUANT: &'static str = "Q4_0 blocks of 32, symmetric, scale = f16(absmax / 7)";
    const HAS_BIAS: bool = false;

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qsi8d32p_qsi4c32p::select(cpu, m)
    }

    fn block_len() -> usize {
        BL
    }

    fn quantize(layer: &Layer) -> Int4Weights {
        Int4Weights::quantize(layer, BL, |s| f16::from_f32(s).to_f32())
    }

    fn pack_weights(p: &Packing, layer: &Layer, w: &Int4Weights) -> qgemm::Result<Vec<u8>> {
        let (n, k) = (layer.n, layer.k);
        let nb = k / BL;
        // GGML block_q4_0: f16 scale, then byte i = u[i] | u[i + 16] << 4 with u = q + 8.
        let block_bytes = qgemm::rhs::qsi4c32pscalef16::raw_block_bytes(BL);
        let mut raw = vec![0u8; n * nb * block_bytes];
        for c in 0..n {
            for b in 0..nb {
                let out = &mut raw[(c * nb + b) * block_bytes..][..block_bytes];
                out[..2].copy_from_slice(&f16::from_f32(w.scales[c * nb + b]).to_le_bytes());
                let q = &w.q[c * k + b * BL..][..BL];
                for i in 0..BL / 2 {
                    let (lo, hi) = ((q[i] + 8) as u8, (q[i + BL / 2] + 8) as u8);
                    out[2 + i] = lo | hi << 4;
                }
            }
        }
        let mut packed = vec![0u8; qgemm::rhs::qsi4c32pscalef16::packed_size(n, k, BL, p)?];
        qgemm::rhs::qsi4c32pscalef16::pack(p, n, k, BL, &raw, nb * block_bytes, &mut packed)?;
        Ok(packed)
    }

    fn pack_activations(p: &Packing, m: usize, k: usize, x: &[f32]) -> qgemm::Result<Vec<u8>> {
        let mut packed = vec![0u8; qgemm::lhs::qsi8d32p::packed_size(m, k, BL, p)?];
        qgemm::lhs::qsi8d32p::quantize_pack(p, m, k, BL, 0, x, k, &mut packed)?;
        Ok(packed)
    }
}

/// A family with f16 or bf16 activations and outputs: the weights, quantization and packers of
/// its f32 twin `$twin`, the activations rounded to `$src` and packed by `qai8dxp::$packer`.
macro_rules! half_demo {
    ($fam:ty, $twin:ty, $src:ty, $packer:ident, $select:path, $what:literal) => {
        impl DemoFamily for $fam {
            const WHAT: &'static str = $what;
            const WEIGHT_QUANT: &'static str = <$twin as DemoFamily>::WEIGHT_QUANT;
            const HAS_BIAS: bool = <$twin as DemoFamily>::HAS_BIAS;

            fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
                $select(cpu, m)
            }

            fn block_len() -> usize {
                <$twin as DemoFamily>::block_len()
            }

            fn quantize(layer: &Layer) -> Int4Weights {
                <$twin as DemoFamily>::quantize(layer)
            }

            fn pack_weights(p: &Packing, layer: &Layer, w: &Int4Weights) -> qgemm::Result<Vec<u8>> {
                <$twin as DemoFamily>::pack_weights(p, layer, w)
            }

            fn pack_activations(p: &Packing, m: usize, k: usize, x: &[f32]) -> qgemm::Result<Vec<u8>> {
                let x: Vec<$src> = x.iter().map(|&v| <$src>::from_f32(v)).collect();
                let mut packed = vec![0u8; qgemm::lhs::qai8dxp::packed_size(m, k, p)?];
                qgemm::lhs::qai8dxp::$packer(p, m, k, 0, &x, k, &mut packed)?;
                Ok(packed)
            }
        }
    };
}

half_demo!(
    f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp,
    qai8dxp_qsi4cxp::Qai8dxpQsi4cxp,
    f16,
    quantize_pack_f16,
    f16_qai8dxp_qsi4cxp::select,
    "f16 activations (rounded from the f32 ones), quantized per row at run time, x int4 weights \
     with one f32 scale per output channel; f32 bias, f16 output"
);
half_demo!(
    bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp,
    qai8dxp_qsi4cxp::Qai8dxpQsi4cxp,
    bf16,
    quantize_pack_bf16,
    bf16_qai8dxp_qsi4cxp::select,
    "bf16 activations (rounded from the f32 ones), quantized per row at run time, x int4 weights \
     with one f32 scale per output channel; f32 bias, bf16 output"
);
half_demo!(
    bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p,
    qai8dxp_qsi4c32p::Qai8dxpQsi4c32p,
    bf16,
    quantize_pack_bf16,
    bf16_qai8dxp_qsi4c32p::select,
    "bf16 activations (rounded from the f32 ones), quantized per row at run time, x int4 weights \
     with a bf16 scale per block of 32; f32 bias, bf16 output"
);

/// Packs both operands for `kernel` and runs it over the whole `m x n` output.
fn run<F: DemoFamily>(
    kernel: &Kernel<F>,
    layer: &Layer,
    w: &Int4Weights,
    m: usize,
    x: &[f32],
) -> qgemm::Result<Vec<f32>> {
    let p = kernel.packing();
    let rhs = F::pack_weights(&p, layer, w)?;
    let lhs = F::pack_activations(&p, m, layer.k, x)?;
    let mut dst = vec![F::Dst::default(); m * layer.n];
    let args = MatmulArgs::new(m, layer.n, layer.k).with_block_len(F::block_len());
    kernel.run(&lhs, &rhs, &mut dst, &args)?;
    Ok(dst.iter().map(|v| v.to_f32()).collect())
}

/// `x W^T + bias` with `weights` in place of the layer's, accumulated in f64.
fn reference(layer: &Layer, weights: &[f32], m: usize, x: &[f32]) -> Vec<f32> {
    let (n, k) = (layer.n, layer.k);
    let mut y = vec![0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            let dot: f64 = (0..k).map(|j| x[r * k + j] as f64 * weights[c * k + j] as f64).sum();
            let bias = layer.bias.as_ref().map_or(0.0, |b| b[c] as f64);
            y[r * n + c] = (dot + bias) as f32;
        }
    }
    y
}

/// Max abs error, that error relative to max |ref|, and the relative Frobenius error.
fn errors(got: &[f32], want: &[f32]) -> (f32, f32, f32) {
    let max_abs = got.iter().zip(want).fold(0f32, |a, (g, w)| a.max((g - w).abs()));
    let max_ref = want.iter().fold(0f32, |a, w| a.max(w.abs()));
    let num: f64 = got.iter().zip(want).map(|(g, w)| ((g - w) as f64).powi(2)).sum();
    let den: f64 = want.iter().map(|w| (*w as f64).powi(2)).sum();
    (max_abs, max_abs / max_ref, (num / den).sqrt() as f32)
}

/// The scalar kernel of `F` that consumes packing `p`.
fn scalar_for<F: Family>(p: &Packing) -> Option<Kernel<F>> {
    let none = CpuFeatures::NONE;
    F::kernels().iter().find(|k| k.tier() == Tier::Scalar && k.packing_on(&none) == Some(*p))?.resolve(&none).ok()
}

/// The whole demo for one family. Returns whether every kernel agreed with its scalar kernel.
fn demo<F: DemoFamily>(cpu: &CpuFeatures, seed: u64) -> qgemm::Result<bool> {
    let mut rng = Rng(seed);
    let weights = (0..N * K).map(|_| 0.05 * normal(&mut rng)).collect();
    let bias: Vec<f32> = (0..N).map(|_| 0.1 * normal(&mut rng)).collect();
    let layer = Layer { n: N, k: K, weights, bias: F::HAS_BIAS.then_some(bias) };
    let x_prefill: Vec<f32> = (0..M_PREFILL * K).map(|_| normal(&mut rng)).collect();
    let x_decode = &x_prefill[..K];
    let w = F::quantize(&layer);

    println!("== family {}", F::NAME);
    println!("   {}", F::WHAT);
    println!(
        "   y = x W^T{}, W {N} x {K} random normal f32 -> {}; x random normal f32",
        if F::HAS_BIAS { " + bias" } else { "" },
        F::WEIGHT_QUANT
    );

    // What `select` picks, and how far its result is from f32 matmuls.
    for (what, m, x) in [("decode ", 1, x_decode), ("prefill", M_PREFILL, &x_prefill[..])] {
        let kernel = F::select(cpu, m);
        let got = run(&kernel, &layer, &w, m, x)?;
        println!("{what} m = {m:2}: select -> {} [{}]", kernel.name(), kernel.tier());
        for (against, weights) in [("f32 matmul", &layer.weights), ("f32 matmul, dequantized W", &w.dequantized)] {
            let (max_abs, max_rel, fro) = errors(&got, &reference(&layer, weights, m, x));
            println!(
                "    vs {against:27}: max abs error {max_abs:.5} ({:.3}% of max |y|), \
                 relative Frobenius error {:.3}%",
                100.0 * max_rel,
                100.0 * fro
            );
        }
    }
    println!("    (the first is mostly the int4 rounding of the weights, the second the int8");
    println!("     quantization of the activations: both are properties of the format)");

    // Every kernel against the scalar kernel of its packing, on both calls.
    println!("kernels vs the scalar kernel of the same packing (m = 1 and m = {M_PREFILL}):");
    let mut all_agree = true;
    for d in F::kernels() {
        let (tier, name) = (d.tier().name(), d.name());
        let kernel = match d.resolve(cpu) {
            Ok(k) => k,
            Err(e) => {
                println!("  {tier:8} {name}  skipped: {e}");
                continue;
            }
        };
        if kernel.tier() == Tier::Scalar {
            println!("  {tier:8} {name}  (reference)");
            continue;
        }
        let Some(scalar) = scalar_for::<F>(&kernel.packing()) else {
            println!("  {tier:8} {name}  NO SCALAR KERNEL FOR ITS PACKING");
            all_agree = false;
            continue;
        };
        let (mut differing, mut total) = (0, 0);
        for (m, x) in [(1, x_decode), (M_PREFILL, &x_prefill[..])] {
            let got = run(&kernel, &layer, &w, m, x)?;
            let want = run(&scalar, &layer, &w, m, x)?;
            differing += got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
            total += got.len();
        }
        if differing == 0 {
            println!("  {tier:8} {name}  bit-exact ({total} outputs)");
        } else {
            println!("  {tier:8} {name}  DIFFERS in {differing} of {total} outputs");
            all_agree = false;
        }
    }
    let mut summary = Vec::new();
    for tier in Tier::ALL.into_iter().filter(|&t| t != Tier::Scalar) {
        let of_tier = || F::kernels().iter().filter(move |k| k.tier() == tier);
        let (in_build, runnable) = (of_tier().count(), of_tier().filter(|k| k.is_available(cpu)).count());
        summary.push(match (in_build, runnable) {
            (0, _) => continue,
            (_, 0) => format!("{tier}: skipped, CPU lacks {}", tier.required_feature().map_or("?", |f| f.name())),
            (b, r) => format!("{tier}: {r} of {b} ran"),
        });
    }
    if summary.is_empty() {
        summary.push("no SIMD kernels in this build".into());
    }
    println!("tiers: {}", summary.join("; "));
    println!();
    Ok(all_agree)
}

fn main() -> ExitCode {
    let cpu = CpuFeatures::detect();
    println!("qgemm demo on {}", std::env::consts::ARCH);
    println!("CpuFeatures::detect() = {cpu}");
    println!();

    // One line per family.
    let results = [
        demo::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>(&cpu, 0x0dec_0de0),
        demo::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>(&cpu, 0x0dec_0de1),
        demo::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>(&cpu, 0x0dec_0de2),
        demo::<f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>(&cpu, 0x0dec_0de3),
        demo::<bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>(&cpu, 0x0dec_0de4),
        demo::<bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>(&cpu, 0x0dec_0de5),
    ];

    let mut ok = true;
    for r in results {
        match r {
            Ok(agree) => ok &= agree,
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    if ok {
        println!("demo: every kernel agrees with the scalar kernel of its packing");
        ExitCode::SUCCESS
    } else {
        println!("demo: FAILED");
        ExitCode::FAILURE
    }
}
