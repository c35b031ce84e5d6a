//! all-MiniLM-L6-v2 sentence embeddings with every linear layer through qgemm's operator layer
//! (`qgemm::op::Linear`), against the same model in f32 and against PyTorch.
//!
//!   cargo make minilm     (qemu-aarch64 -cpu max, then -cpu cortex-a53: the NEON tier)
//!   cargo run --release --features std --target aarch64-unknown-linux-gnu --example minilm -- [--sentences N] [--gptq | --quant-table]
//!
//! The model comes from the cache ci/fetch_minilm.sh fills (never from the network at run time).
//! For the sentences of tests/data/minilm/sentences.txt it prints: the f32 Rust embeddings'
//! cosine to PyTorch's (tests/data/minilm/reference_f32.bin); per variant (f32 activations with
//! int4 or int8 weights, f16 and bf16 activations) the cosine of each embedding to the f32 one and
//! to PyTorch's (mean and minimum) and the agreement of the nearest neighbour with f32; and the time per sentence by part (QEMU time is not Arm time: compare parts, not
//! machines).
//!
//! `--gptq` adds int4 per block of 32 prepared with calibration (examples/support/calibrate.rs):
//! the Hessian `X^T X` of every linear layer's input is accumulated over the f32 model's
//! activations on the calibration sentences of tests/data/minilm/calibration.txt (disjoint from
//! the evaluation sentences), then the layers are quantized by the plain search, by GPTQ
//! (`qgemm::quant::gptq`) and by AWQ + GPTQ (per-layer activation multipliers run by
//! `Linear::with_input_scale`, their inverse folded into the weights by `quant::divide_depths`),
//! and a table of both sentence sets' cosines is printed. `--quant-table` prints the same for
//! every method of `qgemm::quant` (round to nearest, signed max, search, weighted search, GPTQ,
//! AWQ + GPTQ) in each symmetric format (int4 per channel, int4 per block, Q4_0, int8 per
//! channel): docs/model.md's table. The quantization is scalar f64 arithmetic, slow under QEMU:
//! run these on the host (`cargo run --release --features std --example minilm -- --gptq`; the
//! bits are the same).

#[path = "support/minilm.rs"]
mod minilm;

#[path = "support/calibrate.rs"]
mod calibrate;

use calibrate::{Format, Prep};

use minilm::{Encoder, Times, Variant, Weights};
use qgemm::CpuFeatures;

/// The sentences tests/minilm.rs embeds (the first ones of sentences.txt).
const MINILM_TEST_SENTENCES: usize = 8;

/// The calibrated preparations to compare after the variants.
enum Table {
    None,
    /// `--gptq`: int4 per block of 32 by the search, GPTQ and AWQ + GPTQ.
    Gptq,
    /// `--quant-table`: every method in every symmetric format.
    All,
}

fn main() {
    let mut limit = usize::MAX;
    let mut table = Table::None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sentences" => limit = args.next().and_then(|v| v.parse().ok()).expect("--sentences N"),
            "--gptq" => table = Table::Gptq,
            "--quant-table" => table = Table::All,
            _ => {
                eprintln!("usage: minilm [--sentences N] [--gptq | --quant-table]");
                std::process::exit(2);
            }
        }
    }
    let Some(dir) = minilm::model_dir() else {
        eprintln!("minilm: the model is not in its cache: run ci/fetch_minilm.sh (or set QGEMM_MINILM_DIR)");
        std::process::exit(1);
    };
    let cpu = CpuFeatures::detect();
    let weights = Weights::load(&dir).expect("model.safetensors");
    let tok = minilm::tokenizer(&dir);
    let sentences: Vec<String> = minilm::sentences().into_iter().take(limit).collect();
    let ids: Vec<Vec<u32>> = sentences.iter().map(|s| minilm::tokenize(&tok, s)).collect();
    let tokens: usize = ids.iter().map(Vec::len).sum();
    let reference = minilm::pytorch_reference();
    println!("all-MiniLM-L6-v2 from {}: {} sentences, {tokens} tokens; cpu {cpu}", dir.display(), sentences.len());

    let mut results: Vec<(Variant, Vec<Vec<f32>>, Times)> = Vec::new();
    for variant in Variant::ALL {
        let mut enc = Encoder::new(&weights, variant, cpu);
        let mut t = Times::default();
        let e: Vec<Vec<f32>> = ids.iter().map(|s| enc.embed(s, &mut t)).collect();
        results.push((variant, e, t));
    }
    let f32_emb = &results[0].1;
    let (mean, min) = minilm::cos_stats(f32_emb, &reference[..f32_emb.len()]);
    println!("\nf32 Rust vs PyTorch (transformers, f32): cosine mean {mean:.7}, min {min:.7} (target >= 0.9999)\n");
    let nn_f32 = minilm::nearest(f32_emb);
    println!(
        "| linear layers | cosine to f32: mean | min | cosine to PyTorch: mean | min | top-1 neighbour = f32's | ms/sentence: linear | attention | other |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let n = sentences.len() as f64;
    for (variant, e, t) in &results {
        let (mean, min) = minilm::cos_stats(e, f32_emb);
        let (pt_mean, pt_min) = minilm::cos_stats(e, &reference[..e.len()]);
        let nn = minilm::nearest(e);
        let agree = nn.iter().zip(&nn_f32).filter(|(a, b)| a == b).count();
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3 / n;
        println!(
            "| {} | {mean:.5} | {min:.5} | {pt_mean:.5} | {pt_min:.5} | {agree}/{} ({:.0}%) | {:.1} | {:.1} | {:.1} |",
            variant.name(),
            e.len(),
            100.0 * agree as f64 / n,
            ms(t.linear),
            ms(t.attention),
            ms(t.other)
        );
    }
    println!("\ntargets (int4 per-block): cosine mean >= 0.99, min >= 0.98, top-1 agreement >= 95%");
    println!("\nembedding digests (FNV-1a of the f32 bits; equal on every CPU model means bit-identical tiers):");
    for (variant, e, _) in &results {
        println!("  {:016x}  {}", minilm::digest(e), variant.name());
    }
    // tests/minilm.rs embeds the first 8 sentences (each sentence's embedding is computed alone,
    // so these are the same bits) and checks its digests against docs/model.md's list, which
    // ci/model_table.py writes from this output.
    println!("\nembedding digests of the first {} sentences (tests/minilm.rs):", MINILM_TEST_SENTENCES);
    for (variant, e, _) in &results {
        println!("  {:016x}  {}", minilm::digest(&e[..e.len().min(MINILM_TEST_SENTENCES)]), variant.name());
    }
    match table {
        Table::None => {}
        Table::Gptq => run_calibrated(
            &weights,
            &tok,
            cpu,
            &ids,
            f32_emb,
            &[Format::Int4Block],
            &[Prep::Search, Prep::Gptq, Prep::AwqGptq],
        ),
        Table::All => run_calibrated(&weights, &tok, cpu, &ids, f32_emb, &Format::ALL, &Prep::ALL),
    }
}

/// `--gptq` / `--quant-table`: calibrates on tests/data/minilm/calibration.txt (the Hessian of
/// every layer's input over the f32 model's activations), prepares all 36 layers with each
/// method of `preps` in each format of `formats` and prints a table of both sentence sets'
/// cosines to f32.
fn run_calibrated(
    weights: &Weights,
    tok: &tokenizers::Tokenizer,
    cpu: CpuFeatures,
    ids: &[Vec<u32>],
    f32_emb: &[Vec<f32>],
    formats: &[Format],
    preps: &[Prep],
) {
    use qgemm::quant::gptq::Hessian;
    let calib: Vec<Vec<u32>> = minilm::calibration_sentences().iter().map(|s| minilm::tokenize(tok, s)).collect();
    let ks: Vec<usize> = weights.dense().map(|d| d.k).collect();
    let mut bufs: Vec<Vec<f64>> = ks.iter().map(|&k| vec![0f64; Hessian::buffer_len(k).unwrap()]).collect();
    let mut hs: Vec<Hessian<'_>> = bufs.iter_mut().zip(&ks).map(|(b, &k)| Hessian::new(b, k).unwrap()).collect();
    let mut t = minilm::Times::default();
    let mut enc = Encoder::new(weights, Variant::F32, cpu);
    let calib_f32: Vec<Vec<f32>> =
        calib.iter().map(|s| enc.embed_tapped(s, &mut t, &mut |i, m, x| hs[i].add(x, m, ks[i]).unwrap())).collect();
    let tokens: usize = calib.iter().map(Vec::len).sum();
    println!(
        "\nCalibration: Hessians of the 36 layer inputs from {} sentences ({tokens} tokens); GPTQ damping 0.01; \
         AWQ exponents {:?}",
        calib.len(),
        calibrate::AWQ_ALPHAS
    );
    println!("\n| format | method | eval mean | eval min | eval top-1 | calib mean | calib min | calib top-1 |");
    println!("|---|---|--:|--:|--:|--:|--:|--:|");
    let stats = |e: &[Vec<f32>], base: &[Vec<f32>]| {
        let (mean, min) = minilm::cos_stats(e, base);
        let (nn, nn_f32) = (minilm::nearest(e), minilm::nearest(base));
        let agree = nn.iter().zip(&nn_f32).filter(|(a, b)| a == b).count();
        format!("{mean:.5} | {min:.5} | {agree}/{}", e.len())
    };
    let mut digests = Vec::new();
    for &format in formats {
        for &prep in preps {
            let mut alphas = Vec::new();
            let packed: Vec<minilm::Packed> = weights
                .dense()
                .zip(&hs)
                .map(|(d, h)| {
                    let (p, alpha) = calibrate::prepare(d, format, prep, h);
                    alphas.extend(alpha);
                    p
                })
                .collect();
            let mut q = Encoder::with_packed(weights, packed, cpu);
            let eval: Vec<Vec<f32>> = ids.iter().map(|s| q.embed(s, &mut t)).collect();
            let cal: Vec<Vec<f32>> = calib.iter().map(|s| q.embed(s, &mut t)).collect();
            println!(
                "| {} | {} | {} | {} |",
                format.name(),
                prep.name(),
                stats(&eval, f32_emb),
                stats(&cal, &calib_f32)
            );
            if !alphas.is_empty() {
                eprintln!("  AWQ exponents chosen per layer ({}): {alphas:?}", format.name());
            }
            digests.push((format!("{}, {}", format.name(), prep.name()), minilm::digest(&eval)));
        }
    }
    println!("\nDigests of the evaluation embeddings:");
    for (name, d) in digests {
        println!("  {d:016x}  {name}");
    }
}
