//! Benchmark program (not a test): runs every kernel and packer of every family on LLM-sized
//! shapes and prints a table.
//!
//! ```text
//! bench [--quick] [--family SUBSTR] [--kernel SUBSTR] [--m LIST] [--n N] [--k K] [--bl BL]
//!       [--iters N] [--scalar] [--no-kernels] [--no-packers] [--list] [--selected]
//! bench --model-load [--family SUBSTR]
//! bench --quantize FORMAT:METHOD [--n N] [--k K]
//! ```
//!
//! `--family` and `--kernel` take a full name (that family or kernel only: `qai8dxp_qsi4cxp` is
//! not also `f16_qai8dxp_qsi4cxp`) or a substring (every match). The f16 and bf16 families get
//! the same random activations rounded to their type.
//! Defaults: `m = 1,16,128`, `n = k = 4096`, `bl = 32`, one warm-up call then `--iters` timed
//! calls (default 5), scalar kernels skipped (`--scalar` adds them). `--quick` uses
//! `n = k = 512` and one timed call. On real Arm hardware the table's ns/call, GOPS (2*m*n*k
//! per call) and GB/s of packed weights are the figures to read. Under QEMU time means nothing:
//! run it under `tools/icount/icount.py` for instruction counts (`cargo make perf` does), where
//! every measured call goes through [`run_kernel`] and [`run_packer`], so the per-function counts
//! of the kernel code divided by `1 + iters` are per-call figures.
//!
//! `--model-load` instead packs the weights of a whole all-MiniLM-L6-v2 (its 36 linear layers:
//! per layer Q, K, V and the attention output 384 x 384, the FFN 1536 x 384 and 384 x 1536; n x k,
//! random codes and scales of the right shapes) with each selected family's RHS packer at its
//! preferred packing (the one `select` uses for m = 128), once per matrix and without a warm-up:
//! the per-function counts of the packer are the cost of loading the model.
//!
//! `--quantize FORMAT:METHOD` runs one weight quantizer of `qgemm::quant` once on `n x k` random
//! f32 weights (uniform in [-1, 1) with one outlier in 61): FORMAT `qsi4cxp`, `qsi4c32p`, `q4_0`,
//! `qsi8cxp` with METHOD `rtn`, `signedmax`, `search` or `gptq` (the Hessian of 2k random
//! correlated activation rows first, outside the count; damping 0.01).

use std::hint::black_box;
use std::time::Instant;

use half::{bf16, f16};
use qgemm::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::matmul::{available, select_for};
use qgemm::op::Operator;
use qgemm::rhs::FloatSource;
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::{self, Int8Source};
use qgemm::rhs::{Int4Encoding, Int4Source, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsu2cxp};
use qgemm::{CpuFeatures, Element, Family, Kernel, LhsPacking, MatmulArgs, Packing, RhsFormat, RhsPacking, Tier};

struct Opts {
    family: String,
    kernel: String,
    ms: Vec<usize>,
    n: usize,
    k: usize,
    bl: usize,
    iters: usize,
    scalar: bool,
    kernels: bool,
    packers: bool,
    list: bool,
    selected: bool,
    model_load: bool,
    quantize: Option<String>,
    /// `--prepare` (false) / `--prepare-scaled` (true).
    prepare: Option<bool>,
}

fn parse() -> Opts {
    let mut o = Opts {
        family: String::new(),
        kernel: String::new(),
        ms: vec![1, 16, 128],
        n: 4096,
        k: 4096,
        bl: 32,
        iters: 5,
        scalar: false,
        kernels: true,
        packers: true,
        list: false,
        selected: false,
        model_load: false,
        quantize: None,
        prepare: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage(&format!("{a} needs a value")));
        let num = |s: String| s.parse::<usize>().unwrap_or_else(|_| usage(&format!("bad number {s}")));
        match a.as_str() {
            "--quick" => {
                o.n = 512;
                o.k = 512;
                o.iters = 1;
            }
            "--family" => o.family = val(),
            "--kernel" => o.kernel = val(),
            "--m" => o.ms = val().split(',').map(|s| num(s.to_string())).collect(),
            "--n" => o.n = num(val()),
            "--k" => o.k = num(val()),
            "--bl" => o.bl = num(val()),
            "--iters" => o.iters = num(val()),
            "--scalar" => o.scalar = true,
            "--no-kernels" => o.kernels = false,
            "--no-packers" => o.packers = false,
            "--list" => o.list = true,
            "--selected" => o.selected = true,
            "--model-load" => o.model_load = true,
            "--quantize" => o.quantize = Some(val()),
            "--prepare" => o.prepare = Some(false),
            "--prepare-scaled" => o.prepare = Some(true),
            "-h" | "--help" => usage(""),
            _ => usage(&format!("unknown argument {a}")),
        }
    }
    o
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "{msg}\nusage: bench [--quick] [--family S] [--kernel S] [--m 1,16,128] [--n N] [--k K] [--bl BL] [--iters N] [--scalar] [--no-kernels] [--no-packers] | --model-load [--family S] | --quantize FORMAT:METHOD | --prepare[-scaled] [--m M] [--k K]"
    );
    std::process::exit(2)
}

#[path = "support/float_pack.rs"]
mod float_pack;
#[path = "support/splitmix.rs"]
mod splitmix;
use splitmix::SplitMix64 as Rng;

fn random_bytes(r: &mut Rng, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        out.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    out.truncate(n);
    out
}

/// Raw inputs of one problem (random, fixed seed).
struct Inputs {
    x: Vec<f32>,
    w4: Vec<u8>,
    w8: Vec<i8>,
    scale_f32: Vec<f32>,
    scale_bf16: Vec<bf16>,
    /// Per-block f32 scales and offsets (`qai4c32p`).
    block_f32: Vec<f32>,
    block_zero: Vec<f32>,
    q4_0: Vec<u8>,
    bias: Vec<f32>,
}

impl Inputs {
    /// Inputs for an `m x k` by `n x k` problem; only what `family` packs is generated.
    fn new(family: &str, m: usize, n: usize, k: usize, bl: usize) -> Inputs {
        let mut r = Rng(0x5eed);
        let nb = k / bl;
        let ggml = family == "qsi8d32p_qsi4c32p";
        let asym = family.ends_with("qsi8d32p_qai4c32p");
        let mut q4_0 = Vec::new();
        if ggml {
            let data = random_bytes(&mut r, n * nb * (bl / 2));
            q4_0.reserve(n * nb * (2 + bl / 2));
            for block in data.chunks_exact(bl / 2) {
                q4_0.extend_from_slice(&f16::from_f32(0.01 + r.unit() * 0.02).to_le_bytes());
                q4_0.extend_from_slice(block);
            }
        }
        Inputs {
            x: (0..m * k).map(|_| r.unit() * 4.0 - 2.0).collect(),
            w4: if ggml { Vec::new() } else { random_bytes(&mut r, n * k.div_ceil(2)) },
            w8: if family.ends_with("qai8dxp_qsi8cxp") {
                random_bytes(&mut r, n * k).into_iter().map(|b| b as i8).collect()
            } else {
                Vec::new()
            },
            scale_f32: (0..n).map(|_| 0.001 + r.unit() * 0.01).collect(),
            scale_bf16: if family.ends_with("qai8dxp_qsi4c32p") {
                (0..n * nb).map(|_| bf16::from_f32(0.001 + r.unit() * 0.01)).collect()
            } else {
                Vec::new()
            },
            block_f32: if asym { (0..n * nb).map(|_| 0.001 + r.unit() * 0.01).collect() } else { Vec::new() },
            block_zero: if asym { (0..n * nb).map(|_| r.unit() * 0.1 - 0.05).collect() } else { Vec::new() },
            q4_0,
            bias: (0..n).map(|_| r.unit() - 0.5).collect(),
        }
    }
}

/// How to pack one family's operands (activations of the family's [`Operator::Src`] type).
trait Bench: Operator<Lhs = u8> {
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self>;
    fn pack_lhs(p: &Packing, m: usize, k: usize, bl: usize, x: &[Self::Src], out: &mut [u8]);
    fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, inp: &Inputs, out: &mut [u8]);
    fn uses_bl() -> bool {
        Self::BLOCKED
    }
}

impl Bench for qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp {
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qgemm::qai8dxp_qsi4cxp::select(cpu, m)
    }
    fn pack_lhs(p: &Packing, m: usize, k: usize, _bl: usize, x: &[f32], out: &mut [u8]) {
        qai8dxp::quantize_pack(p, m, k, 0, x, k, out).unwrap();
    }
    fn pack_rhs(p: &Packing, n: usize, k: usize, _bl: usize, inp: &Inputs, out: &mut [u8]) {
        let src = Int4Source::nxk(&inp.w4, k, Int4Encoding::ZeroPoint8);
        qsi4cxp::pack(p, n, k, &src, &inp.scale_f32, Some(&inp.bias), out).unwrap();
    }
}

impl Bench for qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p {
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qgemm::qai8dxp_qsi4c32p::select(cpu, m)
    }
    fn pack_lhs(p: &Packing, m: usize, k: usize, _bl: usize, x: &[f32], out: &mut [u8]) {
        qai8dxp::quantize_pack(p, m, k, 0, x, k, out).unwrap();
    }
    fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, inp: &Inputs, out: &mut [u8]) {
        let src = Int4Source::nxk(&inp.w4, k, Int4Encoding::ZeroPoint8);
        let sc = BlockScales::dense(&inp.scale_bf16, k / bl);
        qsi4c32p::pack(p, n, k, bl, &src, &sc, Some(&inp.bias), out).unwrap();
    }
}

impl Bench for qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp {
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qgemm::qai8dxp_qsi8cxp::select(cpu, m)
    }
    fn pack_lhs(p: &Packing, m: usize, k: usize, _bl: usize, x: &[f32], out: &mut [u8]) {
        qai8dxp::quantize_pack(p, m, k, 0, x, k, out).unwrap();
    }
    fn pack_rhs(p: &Packing, n: usize, k: usize, _bl: usize, inp: &Inputs, out: &mut [u8]) {
        qsi8cxp::pack(p, n, k, &Int8Source::nxk(&inp.w8, k), &inp.scale_f32, Some(&inp.bias), out).unwrap();
    }
}

impl Bench for qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p {
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qgemm::qsi8d32p_qsi4c32p::select(cpu, m)
    }
    fn pack_lhs(p: &Packing, m: usize, k: usize, bl: usize, x: &[f32], out: &mut [u8]) {
        qsi8d32p::quantize_pack(p, m, k, bl, 0, x, k, out).unwrap();
    }
    fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, inp: &Inputs, out: &mut [u8]) {
        qsi4c32pscalef16::pack(p, n, k, bl, &inp.q4_0, (k / bl) * (2 + bl / 2), out).unwrap();
    }
}

/// The f16 and bf16 families: the f32 twin's RHS packer, the f16 or bf16 LHS packer.
macro_rules! half_bench {
    ($($family:ident in $module:ident: $src:ty => $lhs:ident, twin $twin:ty;)+) => {$(
        impl Bench for qgemm::$module::$family {
            fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
                qgemm::$module::select(cpu, m)
            }
            fn pack_lhs(p: &Packing, m: usize, k: usize, _bl: usize, x: &[$src], out: &mut [u8]) {
                qai8dxp::$lhs(p, m, k, 0, x, k, out).unwrap();
            }
            fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, inp: &Inputs, out: &mut [u8]) {
                <$twin as Bench>::pack_rhs(p, n, k, bl, inp, out);
            }
        }
    )+};
}

half_bench! {
    F16Qai8dxpQsi4cxp in f16_qai8dxp_qsi4cxp: f16 => quantize_pack_f16, twin qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    F16Qai8dxpQsi8cxp in f16_qai8dxp_qsi8cxp: f16 => quantize_pack_f16, twin qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
    Bf16Qai8dxpQsi4cxp in bf16_qai8dxp_qsi4cxp: bf16 => quantize_pack_bf16, twin qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    Bf16Qai8dxpQsi4c32p in bf16_qai8dxp_qsi4c32p: bf16 => quantize_pack_bf16, twin qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
}

/// The asymmetric int4 families: `qai4c32p` weights, the f32 or f16 `qsi8d32pscalef32` packer.
macro_rules! asym_bench {
    ($($family:ident in $module:ident: $src:ty => $lhs:ident;)+) => {$(
        impl Bench for qgemm::$module::$family {
            fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
                qgemm::$module::select(cpu, m)
            }
            fn pack_lhs(p: &Packing, m: usize, k: usize, bl: usize, x: &[$src], out: &mut [u8]) {
                qsi8d32pscalef32::$lhs(p, m, k, bl, 0, x, k, out).unwrap();
            }
            fn pack_rhs(p: &Packing, n: usize, k: usize, bl: usize, inp: &Inputs, out: &mut [u8]) {
                qai4c32p::pack(p, n, k, bl, &inp.w4, k / 2, &inp.block_zero, &inp.block_f32, Some(&inp.bias), out)
                    .unwrap();
            }
        }
    )+};
}

asym_bench! {
    Qsi8d32pQai4c32p in qsi8d32p_qai4c32p: f32 => quantize_pack;
    F16Qsi8d32pQai4c32p in f16_qsi8d32p_qai4c32p: f16 => quantize_pack_f16;
}

/// The 2-bit family: `qsu2cxp` codes (the first `k/4` bytes of each row of the int4 input's
/// random bytes) with the default table.
impl Bench for qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp {
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qgemm::qai8dxp_qsu2cxp::select(cpu, m)
    }
    fn pack_lhs(p: &Packing, m: usize, k: usize, _bl: usize, x: &[f32], out: &mut [u8]) {
        qai8dxp::quantize_pack(p, m, k, 0, x, k, out).unwrap();
    }
    fn pack_rhs(p: &Packing, n: usize, k: usize, _bl: usize, inp: &Inputs, out: &mut [u8]) {
        qsu2cxp::pack(p, n, k, &inp.w4, k / 4, &inp.scale_f32, Some(&inp.bias), None, out).unwrap();
    }
}

/// One measured kernel call (never inlined, so instruction counters can attribute it).
#[inline(never)]
fn run_kernel<F: Family>(
    kernel: &Kernel<F>,
    lhs: &[F::Lhs],
    rhs: &[u8],
    dst: &mut [F::Dst],
    args: &MatmulArgs<F::Params>,
) {
    kernel.run(black_box(lhs), black_box(rhs), dst, args).unwrap();
}

/// One measured packer call.
#[inline(never)]
fn run_packer(f: &dyn Fn()) {
    f();
}

/// One measured quantizer call.
#[inline(never)]
fn run_quantizer(f: &mut dyn FnMut()) {
    f();
}

/// Warm-up plus `iters` timed calls; returns ns per call.
fn time(iters: usize, f: &dyn Fn()) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_nanos() as f64 / iters.max(1) as f64
}

fn row(cols: &[String]) {
    println!("| {} |", cols.join(" | "));
}

/// Every family's name, for `--family`: a full name selects that family only.
const FAMILIES: [&str; 11] = [
    "qai8dxp_qsi4cxp",
    "qai8dxp_qsi4c32p",
    "qsi8d32p_qsi4c32p",
    "qai8dxp_qsi8cxp",
    "f16_qai8dxp_qsi4cxp",
    "f16_qai8dxp_qsi8cxp",
    "bf16_qai8dxp_qsi4cxp",
    "bf16_qai8dxp_qsi4c32p",
    "qsi8d32p_qai4c32p",
    "f16_qsi8d32p_qai4c32p",
    "qai8dxp_qsu2cxp",
];

/// The linear layers of all-MiniLM-L6-v2, `(n, k, count)`: per layer Q, K, V and the attention
/// output (384 x 384), the FFN up (1536 x 384) and down (384 x 1536) projections; 6 layers.
const MINILM_L6: [(usize, usize, usize); 3] = [(384, 384, 24), (1536, 384, 6), (384, 1536, 6)];

/// `--model-load`: packs every MiniLM weight matrix once with the family's RHS packer and prints
/// one row (the weights, the packed bytes and the time of the whole load).
fn model_load<F: Bench>(cpu: &CpuFeatures) {
    let p = F::select(cpu, 128).packing();
    let bl = if F::uses_bl() { 32 } else { 0 };
    let (mut weights, mut bytes, mut ns) = (0usize, 0usize, 0f64);
    for (n, k, count) in MINILM_L6 {
        let inp = Inputs::new(F::NAME, 1, n, k, 32);
        let cell = std::cell::RefCell::new(vec![0u8; F::select(cpu, 128).rhs_packed_size(n, k, bl).unwrap()]);
        for _ in 0..count {
            let t = Instant::now();
            run_packer(&|| F::pack_rhs(&p, n, k, bl, &inp, black_box(&mut cell.borrow_mut()[..])));
            ns += t.elapsed().as_nanos() as f64;
            weights += n * k;
            bytes += cell.borrow().len();
        }
    }
    row(&[
        F::NAME.into(),
        format!("model load all-MiniLM-L6-v2 nr{} kr{} (36 matrices, {weights} weights, {bytes} B)", p.nr, p.kr),
        "packer".into(),
        "-".into(),
        "-".into(),
        "-".into(),
        if bl == 0 { "-".into() } else { format!("{bl}") },
        format!("{ns:.0}"),
        "-".into(),
        format!("{:.2}", bytes as f64 / ns),
    ]);
}

fn bench_family<F: Bench>(o: &Opts, cpu: &CpuFeatures) {
    debug_assert!(FAMILIES.contains(&F::NAME));
    let wanted = if FAMILIES.contains(&o.family.as_str()) { F::NAME == o.family } else { F::NAME.contains(&o.family) };
    if !wanted {
        return;
    }
    if o.model_load {
        model_load::<F>(cpu);
        return;
    }
    if o.list {
        for k in &available::<F>(cpu) {
            let p = k.packing();
            println!(
                "{} {} {} {} {} {} {} {} {}",
                F::NAME,
                k.name(),
                k.tier(),
                p.mr,
                p.nr,
                p.kr,
                p.sr,
                k.m_step(),
                k.n_step()
            );
        }
        return;
    }
    if o.selected {
        for &m in &o.ms {
            println!("{} {m} {}", F::NAME, F::select(cpu, m).name());
        }
        return;
    }
    let (n, k) = (o.n, o.k);
    let bl = if F::uses_bl() { o.bl } else { 0 };
    let m_max = o.ms.iter().copied().max().unwrap_or(1);
    let inp = Inputs::new(F::NAME, m_max, n, k, bl.max(32));
    let x: Vec<F::Src> = inp.x.iter().map(|&v| F::Src::from_f32(v)).collect();
    let mut packed_rhs: Vec<(RhsPacking, Vec<u8>)> = Vec::new();
    if o.kernels {
        // A full kernel name selects that kernel only (`..._4x8_neon` is also a prefix of
        // `..._4x8_neon_i8mm`); anything else is a substring filter.
        let exact = F::kernels().iter().any(|kn| kn.name() == o.kernel);
        let wanted = |name: &str| if exact { name == o.kernel } else { name.contains(&o.kernel) };
        for kernel in available::<F>(cpu).iter().filter(|kn| wanted(kn.name())) {
            if kernel.tier() == Tier::Scalar && !o.scalar {
                continue;
            }
            let (p, rp) = (kernel.packing(), kernel.rhs_packing());
            if !packed_rhs.iter().any(|(q, _)| *q == rp) {
                let mut out = vec![0u8; kernel.rhs_packed_size(n, k, bl).unwrap()];
                F::pack_rhs(&p, n, k, bl, &inp, &mut out);
                packed_rhs.push((rp, out));
            }
            let rhs = &packed_rhs.iter().find(|(q, _)| *q == rp).unwrap().1;
            for &m in &o.ms {
                let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, bl).unwrap()];
                <F as Bench>::pack_lhs(&p, m, k, bl, &x[..m * k], &mut lhs);
                let mut dst = vec![F::Dst::default(); m * n];
                let args = MatmulArgs::new(m, n, k).with_block_len(bl);
                let dst_cell = std::cell::RefCell::new(&mut dst);
                let ns = time(o.iters, &|| run_kernel(kernel, &lhs, rhs, &mut dst_cell.borrow_mut()[..], &args));
                let macs = (m * n * k) as f64;
                row(&[
                    F::NAME.into(),
                    kernel.name().into(),
                    kernel.tier().name().into(),
                    format!("{m}"),
                    format!("{n}"),
                    format!("{k}"),
                    if bl == 0 { "-".into() } else { format!("{bl}") },
                    format!("{ns:.0}"),
                    format!("{:.2}", 2.0 * macs / ns),
                    format!("{:.2}", rhs.len() as f64 / ns),
                ]);
            }
        }
    }
    if o.packers && o.kernel.is_empty() {
        // The LHS packer at the `mr` of the kernel `select` picks for each m, and the RHS packer
        // at the family's preferred packing.
        let pick = |m: usize| F::select(cpu, m);
        for &m in &o.ms {
            let kernel = pick(m);
            let p = kernel.packing();
            let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, bl).unwrap()];
            let cell = std::cell::RefCell::new(&mut lhs);
            let ns = time(o.iters, &|| {
                run_packer(&|| <F as Bench>::pack_lhs(&p, m, k, bl, &x[..m * k], &mut cell.borrow_mut()[..]))
            });
            packer_row(F::NAME, "lhs", &p, m, k, bl, ns, cell.borrow().len());
        }
        let kernel = pick(o.ms.iter().copied().max().unwrap_or(1));
        let p = kernel.packing();
        let mut rhs = vec![0u8; kernel.rhs_packed_size(n, k, bl).unwrap()];
        let cell = std::cell::RefCell::new(&mut rhs);
        let ns = time(o.iters.min(1), &|| run_packer(&|| F::pack_rhs(&p, n, k, bl, &inp, &mut cell.borrow_mut()[..])));
        packer_row(F::NAME, "rhs", &p, n, k, bl, ns, cell.borrow().len());
    }
}

#[allow(clippy::too_many_arguments)]
fn packer_row(fam: &str, side: &str, p: &Packing, rows: usize, k: usize, bl: usize, ns: f64, bytes: usize) {
    row(&[
        fam.into(),
        format!("pack {side} mr{} nr{} kr{} ({bytes} B)", p.mr, p.nr, p.kr),
        "packer".into(),
        if side == "lhs" { format!("{rows}") } else { "-".into() },
        if side == "rhs" { format!("{rows}") } else { "-".into() },
        format!("{k}"),
        if bl == 0 { "-".into() } else { format!("{bl}") },
        format!("{ns:.0}"),
        "-".into(),
        format!("{:.2}", bytes as f64 / ns),
    ]);
}

/// Runs [`bench_family`] for every family, in the order of [`FAMILIES`].
fn every_family(o: &Opts, cpu: &CpuFeatures) {
    bench_family::<qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>(o, cpu);
    bench_family::<qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>(o, cpu);
    bench_family::<qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>(o, cpu);
    bench_family::<qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>(o, cpu);
    bench_family::<qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>(o, cpu);
    bench_family::<qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>(o, cpu);
    bench_family::<qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>(o, cpu);
    bench_family::<qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>(o, cpu);
    bench_family::<qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>(o, cpu);
    bench_family::<qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>(o, cpu);
    bench_family::<qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>(o, cpu);
}

/// The float families, benchmarked like the others: the activations (packed for the bf16
/// families, outside the timed call) and the weights packed in the kernel's formats.
const FLOAT_FAMILIES: [&str; 4] = ["f32_f32_f32p", "f16_f16_f16p", "f32_bf16p_bf16p", "f16_bf16p_bf16p"];

/// One measured float kernel call (never inlined).
#[inline(never)]
fn run_float_kernel<F: Family>(
    kernel: &Kernel<F>,
    lhs: &[F::Lhs],
    rhs: &[u8],
    dst: &mut [F::Dst],
    args: &MatmulArgs<F::Params>,
) {
    kernel.run(black_box(lhs), black_box(rhs), dst, args).unwrap();
}

/// The weights of `n x k` (NxK, f32 values `w`) packed in `rp` (any packing of the float
/// families), with a bias.
fn pack_float_rhs(rp: &RhsPacking, n: usize, k: usize, w: &[f32], bias: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; rp.packed_size(n, k, 0).unwrap()];
    float_pack::pack_float_rhs(rp, n, k, &FloatSource::nxk(w, k), Some(bias), &mut out).unwrap();
    out
}

/// The docs/formats.md name of a float RHS packing (`f32p16`, `f16p32`, `bf16p12_b32`).
fn float_rhs_name(rp: &RhsPacking) -> String {
    match rp.format {
        RhsFormat::Bf16pB32 => format!("bf16p{}_b32", rp.nr),
        RhsFormat::Bf16pB16 => format!("bf16p{}_b16", rp.nr),
        f => format!("{}{}", f.name(), rp.nr),
    }
}

/// The docs/formats.md name of a float LHS packing (`bf16p8x4`), `-` for rows read in place.
fn float_lhs_name(lp: &LhsPacking) -> String {
    if lp.format.is_packed() { lp.to_string() } else { "-".into() }
}

fn bench_float_family<F: Operator>(o: &Opts, cpu: &CpuFeatures, lhs_of: LhsOf<F>) {
    let wanted =
        if FLOAT_FAMILIES.contains(&o.family.as_str()) { F::NAME == o.family } else { F::NAME.contains(&o.family) };
    if !wanted || o.model_load {
        return;
    }
    if o.list {
        for k in &available::<F>(cpu) {
            println!(
                "{} {} {} {} {} {} {}",
                F::NAME,
                k.name(),
                k.tier(),
                float_lhs_name(&k.lhs_packing()),
                float_rhs_name(&k.rhs_packing()),
                k.m_step(),
                k.n_step()
            );
        }
        return;
    }
    if o.selected {
        // What the family's `select` picks: its preferred packings, for each m.
        for &m in &o.ms {
            let best = select_for::<F>(cpu, m, &F::PREFERRED_RHS);
            println!("{} {m} {}", F::NAME, best.expect("a scalar kernel at least").name());
        }
        return;
    }
    if !o.kernels {
        return;
    }
    let (n, k) = (o.n, o.k);
    let m_max = o.ms.iter().copied().max().unwrap_or(1);
    let mut r = Rng(0x5eed);
    let x: Vec<f32> = (0..m_max * k).map(|_| r.unit() * 4.0 - 2.0).collect();
    let w: Vec<f32> = (0..n * k).map(|_| r.unit() * 2.0 - 1.0).collect();
    let bias: Vec<f32> = (0..n).map(|_| r.unit() - 0.5).collect();
    let exact = F::kernels().iter().any(|kn| kn.name() == o.kernel);
    let pick = |name: &str| if exact { name == o.kernel } else { name.contains(&o.kernel) };
    for kernel in available::<F>(cpu).iter().filter(|kn| pick(kn.name())) {
        if kernel.tier() == Tier::Scalar && !o.scalar {
            continue;
        }
        let rhs = pack_float_rhs(&kernel.rhs_packing(), n, k, &w, &bias);
        for &m in &o.ms {
            let lhs = lhs_of(&kernel.lhs_packing(), m, k, &x[..m * k]);
            let mut dst = vec![F::Dst::default(); m * n];
            let args = MatmulArgs::new(m, n, k);
            let dst_cell = std::cell::RefCell::new(&mut dst);
            let ns = time(o.iters, &|| run_float_kernel(kernel, &lhs, &rhs, &mut dst_cell.borrow_mut()[..], &args));
            let macs = (m * n * k) as f64;
            row(&[
                F::NAME.into(),
                kernel.name().into(),
                kernel.tier().name().into(),
                format!("{m}"),
                format!("{n}"),
                format!("{k}"),
                "-".into(),
                format!("{ns:.0}"),
                format!("{:.2}", 2.0 * macs / ns),
                format!("{:.2}", rhs.len() as f64 / ns),
            ]);
        }
    }
}

/// Builds the activations a kernel of LHS packing `lp` reads from `m x k` f32 values.
type LhsOf<F> = fn(&LhsPacking, usize, usize, &[f32]) -> Vec<<F as Family>::Lhs>;

/// The unpacked activations of an f32/f16 family.
fn rows<T: Element>(_lp: &LhsPacking, _m: usize, _k: usize, x: &[f32]) -> Vec<T> {
    x.iter().map(|&v| T::from_f32(v)).collect()
}

/// The activations packed as bf16 in `lp` (from f32 or f16 values of type `T`).
fn bf16_packed<T: Element>(lp: &LhsPacking, m: usize, k: usize, x: &[f32]) -> Vec<u8> {
    assert!(lp.format.is_packed(), "a packed-LHS kernel");
    let x: Vec<T> = x.iter().map(|&v| T::from_f32(v)).collect();
    let mut out = vec![0u8; lp.packed_size(m, k, 0).unwrap()];
    qgemm::lhs::bf16p::pack(lp, m, k, &x, k, &mut out).unwrap();
    out
}

/// Runs [`bench_float_family`] for the four float families.
fn every_float_family(o: &Opts, cpu: &CpuFeatures) {
    use qgemm::{f16_bf16p_bf16p as h16, f16_f16_f16p as h, f32_bf16p_bf16p as b16, f32_f32_f32p as f};
    bench_float_family::<f::F32F32F32p>(o, cpu, rows::<f32>);
    bench_float_family::<h::F16F16F16p>(o, cpu, rows::<f16>);
    bench_float_family::<b16::F32Bf16pBf16p>(o, cpu, bf16_packed::<f32>);
    bench_float_family::<h16::F16Bf16pBf16p>(o, cpu, bf16_packed::<f16>);
}

/// `--quantize FORMAT:METHOD`: one quantizer call on `n x k` random weights, one row.
fn quantize(spec: &str, n: usize, k: usize) {
    use qgemm::quant::{self, Method, Weights, gptq};
    let mut r = Rng(0x9a7e);
    let w: Vec<f32> = (0..n * k).map(|i| (r.unit() * 2.0 - 1.0) * if i % 61 == 0 { 8.0 } else { 1.0 }).collect();
    let ww = Weights::nxk(&w, k);
    let (format, method) = spec.split_once(':').unwrap_or_else(|| usage("--quantize FORMAT:METHOD"));
    let method_of = |m: &str| match m {
        "rtn" => Method::RoundToNearest,
        "signedmax" => Method::SignedMax,
        "search" => Method::Search,
        _ => usage("METHOD: rtn, signedmax, search, gptq"),
    };
    // GPTQ: the Hessian of 2k rows x = A z (z with decaying variances), outside the count.
    let mut hbuf = Vec::new();
    let hessian = (method == "gptq").then(|| {
        hbuf = vec![0f64; gptq::Hessian::buffer_len(k).unwrap()];
        let mut h = gptq::Hessian::new(&mut hbuf, k).unwrap();
        let mix: Vec<f32> = (0..k * 8).map(|_| r.unit() - 0.5).collect();
        let x: Vec<f32> = (0..2 * k)
            .flat_map(|_| {
                let z: Vec<f32> = (0..8).map(|i| (r.unit() - 0.5) / (1 + i) as f32).collect();
                (0..k)
                    .map(|j| (0..8).map(|i| mix[j * 8 + i] * z[i]).sum::<f32>() + 0.01 * (r.unit() - 0.5))
                    .collect::<Vec<f32>>()
            })
            .collect();
        h.add(&x, 2 * k, k).unwrap();
        h
    });
    let mut work = vec![0f64; if hessian.is_some() { gptq::workspace_len(n, k).unwrap() } else { 0 }];
    let bl = 32;
    let (mut codes, mut scales, mut q8) = (vec![0u8; n * k], vec![0f32; n * k / bl], vec![0i8; n * k]);
    let mut bf = vec![bf16::ZERO; n * k / bl];
    let t = Instant::now();
    run_quantizer(&mut || {
        let (c, s, b, q, wk) = (&mut codes[..], &mut scales[..], &mut bf[..], &mut q8[..], &mut work[..]);
        match (format, method, &hessian) {
            ("qsi4cxp", "gptq", Some(h)) => gptq::qsi4cxp(None, n, k, &ww, h, 0.01, wk, c, s),
            ("qsi4c32p", "gptq", Some(h)) => gptq::qsi4c32p(None, n, k, bl, &ww, h, 0.01, wk, c, b),
            ("q4_0", "gptq", Some(h)) => gptq::q4_0(None, n, k, bl, &ww, h, 0.01, wk, c),
            ("qsi8cxp", "gptq", Some(h)) => gptq::qsi8cxp(None, n, k, &ww, h, 0.01, wk, q, s),
            ("qsi4cxp", m, _) => quant::qsi4cxp::quantize(method_of(m), n, k, &ww, c, s),
            ("qsi4c32p", m, _) => quant::qsi4c32p::quantize(method_of(m), n, k, bl, &ww, c, b),
            ("q4_0", m, _) => quant::q4_0::quantize(method_of(m), n, k, bl, &ww, c),
            ("qsi8cxp", m, _) => quant::qsi8cxp::quantize(method_of(m), n, k, &ww, q, s),
            _ => usage("FORMAT: qsi4cxp, qsi4c32p, q4_0, qsi8cxp"),
        }
        .unwrap();
    });
    let ns = t.elapsed().as_nanos() as f64;
    row(&[
        "quant".into(),
        format!("quantize {format}:{method} ({} weights)", n * k),
        "-".into(),
        "-".into(),
        format!("{n}"),
        format!("{k}"),
        format!("{bl}"),
        format!("{ns:.0}"),
        "-".into(),
        "-".into(),
    ]);
}

/// `--prepare` / `--prepare-scaled`: one `op::Linear::prepare` of `m` rows of depth `k` for the
/// `qai8dxp_qsi4c32p` operator (the activations' quantize-and-pack), without or with an input
/// scale (`Linear::with_input_scale`), after a warm-up call.
fn prepare(scaled: bool, m: usize, k: usize, cpu: &CpuFeatures) {
    use qgemm::op::Linear;
    use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
    let (n, bl) = (8, 32);
    let mut r = Rng(0x5ca1e);
    let w = vec![0u8; Linear::<Qai8dxpQsi4c32p>::packed_size(n, k, bl).unwrap()];
    let layer = Linear::<Qai8dxpQsi4c32p>::from_packed(n, k, bl, &w).unwrap();
    let scale: Vec<f32> = (0..k).map(|_| 0.5 + r.unit()).collect();
    let layer = if scaled { layer.with_input_scale(&scale).unwrap() } else { layer };
    let x: Vec<f32> = (0..m * k).map(|_| r.unit() * 2.0 - 1.0).collect();
    let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
    let mut call = || {
        layer.prepare(cpu, m, &x, &mut scratch).unwrap();
    };
    call();
    let t = Instant::now();
    run_quantizer(&mut call);
    let ns = t.elapsed().as_nanos() as f64;
    let what = if scaled { "prepare with input scale" } else { "prepare" };
    row(&[
        "op".into(),
        format!("{what} (qai8dxp_qsi4c32p)"),
        "-".into(),
        format!("{m}"),
        format!("{n}"),
        format!("{k}"),
        format!("{bl}"),
        format!("{ns:.0}"),
        "-".into(),
        "-".into(),
    ]);
}

fn main() {
    let o = parse();
    let cpu = CpuFeatures::detect();
    if let Some(scaled) = o.prepare {
        for &m in &o.ms {
            prepare(scaled, m, o.k, &cpu);
        }
        return;
    }
    if let Some(spec) = &o.quantize {
        quantize(spec, o.n, o.k);
        return;
    }
    if o.list || o.selected {
        // --list: one line per available kernel: family name tier mr nr kr sr m_step n_step.
        // --selected: one line per family and m: family m kernel-select-picks.
        every_family(&o, &cpu);
        // The float families list in their own format; only when asked for by `--family`
        // (ci/perf.py reads the quantized families' lines).
        if !o.family.is_empty() {
            every_float_family(&o, &cpu);
        }
        return;
    }
    println!("qgemm bench: cpu features {cpu}; n = {}, k = {}, {} timed calls after 1 warm-up", o.n, o.k, o.iters);
    println!("(under QEMU the times are not Arm times: use instruction counts, `cargo make perf`)\n");
    row(&["family", "kernel / packer", "tier", "m", "n", "k", "bl", "ns/call", "GOPS", "GB/s weights | packed"]
        .map(String::from));
    row(&["---", "---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:"].map(String::from));
    every_family(&o, &cpu);
    every_float_family(&o, &cpu);
}
