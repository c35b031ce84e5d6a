//! Differential soak (a program, not a test): draws random cases and runs every kernel the CPU
//! has on each, comparing it bit for bit with the scalar kernel of the same packing.
//!
//! ```text
//! soak [--seconds S] [--cases N] [--seed SEED] [--case-seed CS] [--family SUBSTR] [--verbose]
//! ```
//!
//! A case is drawn from its own 64-bit case seed (the sequence of case seeds comes from
//! `--seed`): a family, one of its packings, a shape with tails (`m`, `n`, `k` rarely multiples
//! of the tile; per-block families: `k = bl * blocks`, `bl` a multiple of 32, rarely above the
//! SIMD tiers' 2^16 limit; the 2-bit family: `k` a multiple of 32), raw weights (random, all
//! -8, all +7, only extremes; NxK or KxN, signed or zero-point-8 nibbles, padded row strides;
//! 2-bit codes with the default, a custom or a random look-up table), scales (normal, some zero, all zero,
//! some subnormal), bias or none, activations (random of any magnitude, extreme, all-equal rows,
//! zero rows, subnormal rows; padded row stride), a clamp and a padded output stride. The
//! case packs with qgemm (the LHS in one call and again in two calls split at a random row:
//! the bytes must match), runs the scalar kernel over the whole output, then every available
//! kernel of the packing over the whole output and over a random grid of sub-rectangles, and
//! requires the same bits everywhere (the output row padding must stay untouched).
//!
//! The float families (`f32_f32_f32p`, `f16_f16_f16p`, `f32_bf16p_bf16p`, `f16_bf16p_bf16p`) draw
//! a format pair of the catalogue, a shape with tails, NxK or KxN weights of a drawn magnitude
//! with zeros of both signs, subnormal, tiny and huge values, a bias or none, padded strides and
//! a clamp, and compare every available kernel of the formats with the scalar one the same way.
//!
//! The run stops at the first difference and prints a reproducer: the case seed and its
//! parameters; `--case-seed` replays exactly that case. Without a budget it runs 10 s; with
//! both `--seconds` and `--cases` it stops at the first reached. At the end it prints the cases
//! run per kernel and the total number of kernel calls (`Kernel::run`, the scalar reference
//! calls included).

use std::collections::BTreeMap;
use std::process::exit;
use std::time::Instant;

#[path = "support/families.rs"]
#[allow(dead_code)]
mod families;
#[path = "support/float_pack.rs"]
mod float_pack;
#[path = "support/splitmix.rs"]
mod splitmix;

use families::{
    Bf16Qsi4c32p, Bf16Qsi4cxp, F16Qai4c32p, F16Qsi4cxp, F16Qsi8cxp, Fam, Q40, Qai4c32p, Qsi4c32p, Qsi4cxp, Qsi8cxp,
    Qsu2cxp, ScaleStyle, WeightStyle, args_with_lut, canary, depth, packings, to_src,
};
use qgemm::half::f16;
use qgemm::matmul::available;
use qgemm::op::Operator;
use qgemm::rhs::{FloatSource, Int4Encoding, Layout};
use qgemm::{Clamp, CpuFeatures, Element, Family, Kernel, LhsPacking, LhsStride, MatmulArgs, Packing, Tier};
use splitmix::SplitMix64 as Rng;

struct Opts {
    seconds: Option<f64>,
    cases: Option<u64>,
    seed: u64,
    case_seed: Option<u64>,
    family: String,
    verbose: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("soak: {msg}");
    eprintln!("usage: soak [--seconds S] [--cases N] [--seed SEED] [--case-seed CS] [--family SUBSTR] [--verbose]");
    exit(2)
}

fn parse_u64(s: &str) -> u64 {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.unwrap_or_else(|_| usage(&format!("bad number {s}")))
}

fn parse() -> Opts {
    let mut o = Opts { seconds: None, cases: None, seed: 1, case_seed: None, family: String::new(), verbose: false };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage(&format!("{a} needs a value")));
        match a.as_str() {
            "--seconds" => o.seconds = Some(val().parse().unwrap_or_else(|_| usage("bad --seconds"))),
            "--cases" => o.cases = Some(parse_u64(&val())),
            "--seed" => o.seed = parse_u64(&val()),
            "--case-seed" => o.case_seed = Some(parse_u64(&val())),
            "--family" => o.family = val(),
            "--verbose" => o.verbose = true,
            "--help" | "-h" => usage("help"),
            _ => usage(&format!("unknown argument {a}")),
        }
    }
    if o.seconds.is_none() && o.cases.is_none() {
        o.seconds = Some(10.0);
    }
    o
}

/// Counts per kernel: cases it was compared in, and its `Kernel::run` calls.
#[derive(Default)]
struct Stats {
    per_kernel: BTreeMap<&'static str, (Tier, u64, u64)>,
    calls: u64,
    cases: u64,
    per_family: BTreeMap<&'static str, u64>,
}

impl Stats {
    fn ran(&mut self, name: &'static str, tier: Tier, calls: u64) {
        let e = self.per_kernel.entry(name).or_insert((tier, 0, 0));
        e.1 += 1;
        e.2 += calls;
        self.calls += calls;
    }
}

/// How one LHS row is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowStyle {
    /// Uniform in `[-a, a] + offset` with `a` of any magnitude (1e-3 .. 1e3).
    Random,
    /// Only the extremes the LHS format accepts (±f32::MAX for qai8dxp, ±8e6 for qsi8d32p),
    /// mixed with zeros.
    Extreme,
    /// Every value of the row equal.
    AllEqual,
    /// Every value zero.
    Zero,
    /// Subnormal values.
    Subnormal,
}

const ROW_STYLES: [RowStyle; 5] =
    [RowStyle::Random, RowStyle::Extreme, RowStyle::AllEqual, RowStyle::Zero, RowStyle::Subnormal];

/// Everything a case drew (printed as the reproducer).
#[derive(Debug)]
#[allow(dead_code)] // read through `Debug` only
struct Params {
    family: &'static str,
    packing: Packing,
    m: usize,
    n: usize,
    k: usize,
    bl: usize,
    layout: Layout,
    encoding: Int4Encoding,
    weights: WeightStyle,
    scales: ScaleStyle,
    bias: bool,
    /// The 2-bit codes' look-up table (drawn with the weights; the default for the others).
    lut: [i32; 4],
    rows: Vec<RowStyle>,
    lhs_stride: usize,
    lhs_split_at: usize,
    clamp: (f32, f32),
    dst_stride: usize,
}

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len())]
}

/// A random clamp: none, infinite, one-sided, degenerate, or a window of some magnitude.
fn draw_clamp(rng: &mut Rng) -> (f32, f32) {
    let mag = |rng: &mut Rng| pick(rng, &[0.0f32, 1e-3, 0.05, 0.5, 3.0, 40.0, 1e4]) * (1.0 + rng.unit());
    match rng.below(8) {
        0 | 1 => (-f32::MAX, f32::MAX),
        2 => (f32::NEG_INFINITY, f32::INFINITY),
        3 => (f32::NEG_INFINITY, mag(rng) - mag(rng)),
        4 => (mag(rng) - mag(rng), f32::INFINITY),
        5 => {
            let v = mag(rng) - mag(rng);
            (v, v)
        }
        _ => {
            let (a, b) = (-mag(rng), mag(rng));
            (a.min(b), a.max(b))
        }
    }
}

/// Row `r` of the activations (`k` values) in `style`; `max` is the largest magnitude the
/// family's LHS packer accepts.
fn draw_row(rng: &mut Rng, style: RowStyle, k: usize, max: f32, out: &mut [f32]) {
    match style {
        RowStyle::Random => {
            let a = 10f32.powf(rng.f32(-3.0, 3.0));
            let off = if rng.below(3) == 0 { rng.f32(-a, a) } else { 0.0 };
            out[..k].iter_mut().for_each(|v| *v = rng.f32(-a, a) + off);
        }
        RowStyle::Extreme => {
            out[..k].iter_mut().for_each(|v| *v = pick(rng, &[max, -max, 0.0, max, -max, 1.0]));
        }
        RowStyle::AllEqual => {
            let any = rng.f32(-100.0, 100.0);
            let v = pick(rng, &[0.0f32, 1.0, -3.5, max, -max, 1e-40, any]);
            out[..k].iter_mut().for_each(|x| *x = v);
        }
        RowStyle::Zero => out[..k].iter_mut().for_each(|v| *v = 0.0),
        RowStyle::Subnormal => {
            out[..k].iter_mut().for_each(|v| *v = rng.f32(-1.0, 1.0) * 1e-39);
        }
    }
}

/// Draws and runs one case of family `X`; `Err` carries the report of a difference.
fn case<X: Fam>(rng: &mut Rng, cpu: &CpuFeatures, stats: &mut Stats, verbose: bool) -> Result<(), String> {
    let fam = <X::F as Family>::NAME;
    let p = pick(rng, &packings::<X>());
    // The shape: m, n with tails around the tile, k with tails (per channel) or whole blocks.
    let tile_dim = |rng: &mut Rng, step: usize| match rng.below(6) {
        0 => 1,
        1 => step * (1 + rng.below(4)),
        2 => step * (1 + rng.below(4)) + 1 + rng.below(step.max(2) - 1),
        _ => 1 + rng.below(40),
    };
    let (mut m, mut n) = (tile_dim(rng, 4 * p.mr.max(2)), tile_dim(rng, 2 * p.nr));
    let (k, bl) = if <X::F as Family>::BLOCKED {
        if rng.below(1500) == 0 {
            // A block longer than the SIMD tiers' 2^16 limit: they defer to the scalar code.
            (m, n) = (m.min(3), n.min(5));
            ((1 << 16) + 32, (1 << 16) + 32)
        } else {
            let bl = 32 * pick(rng, &[1, 1, 1, 2, 2, 3, 4, 8]);
            (bl * (1 + rng.below(4)), bl)
        }
    } else {
        let k = match rng.below(8) {
            0 => 32 * (1 + rng.below(8)),
            1 => 1 + rng.below(8),
            2 => 1 + rng.below(600),
            _ => 1 + rng.below(160),
        };
        // The 2-bit family takes multiples of 32 only.
        (depth::<X>(k), 0)
    };
    let layout = if rng.below(3) == 0 { Layout::KxN } else { Layout::NxK };
    let encoding = if rng.below(4) == 0 { Int4Encoding::Signed } else { Int4Encoding::ZeroPoint8 };
    let weights = pick(rng, &[WeightStyle::Random, WeightStyle::Random, WeightStyle::Random, WeightStyle::AllMin]);
    let weights = if weights == WeightStyle::AllMin {
        pick(rng, &[WeightStyle::AllMin, WeightStyle::AllMax, WeightStyle::Extremes])
    } else {
        weights
    };
    let scales = pick(
        rng,
        &[ScaleStyle::Normal, ScaleStyle::Normal, ScaleStyle::SomeZero, ScaleStyle::Subnormal, ScaleStyle::AllZero],
    );
    let bias = rng.below(4) != 0;
    let rows: Vec<RowStyle> =
        if rng.below(2) == 0 { vec![RowStyle::Random; m] } else { (0..m).map(|_| pick(rng, &ROW_STYLES)).collect() };
    let lhs_stride = k + rng.below(3);
    let lhs_split_at = rng.below(m + 1);
    let clamp = draw_clamp(rng);
    let dst_stride = n + pick(rng, &[0, 0, 1, 3, 8]);
    let mut params = Params {
        family: fam,
        packing: p,
        m,
        n,
        k,
        bl,
        layout,
        encoding,
        weights,
        scales,
        bias,
        lut: qgemm::rhs::qsu2cxp::DEFAULT_LUT,
        rows,
        lhs_stride,
        lhs_split_at,
        clamp,
        dst_stride,
    };
    // Inputs.
    let max = if <X::F as Family>::BLOCKED { 8.0e6 } else { f32::MAX }.min(X::Src::MAX.to_f32());
    let mut x = vec![0f32; (m - 1) * lhs_stride + k];
    for (r, style) in params.rows.iter().enumerate() {
        draw_row(rng, *style, k, max, &mut x[r * lhs_stride..]);
    }
    let x: Vec<X::Src> = to_src(&x);
    let mut next = || rng.next_u64();
    let mut raw = X::random_rhs(&mut next, n, k, bl, layout, weights, scales, bias);
    raw.encoding = encoding;
    params.lut = raw.lut;
    let fail = |what: String| Err(format!("{what}\nparameters: {params:#?}"));

    // Packing: the LHS in one call, and in two calls split at row `lhs_split_at`.
    let lhs_size = X::lhs_packed_size(&p, m, k, bl).map_err(|e| format!("lhs size: {e}"))?;
    let mut lhs = vec![0u8; lhs_size];
    if let Err(e) = X::pack_lhs(&p, m, k, bl, 0, &x, lhs_stride, &mut lhs) {
        return fail(format!("LHS packer failed: {e}"));
    }
    let mut lhs2 = vec![0u8; lhs_size];
    let m1 = (0..=lhs_split_at).rev().find(|&v| X::splits_at(&p, v)).unwrap_or(0);
    let tile = lhs_size / m.div_ceil(p.mr);
    let r1 = X::pack_lhs(&p, m1, k, bl, 0, &x, lhs_stride, &mut lhs2);
    let r2 = if m1 < m {
        X::pack_lhs(&p, m - m1, k, bl, m1, &x[m1 * lhs_stride..], lhs_stride, &mut lhs2[m1 / p.mr * tile..])
    } else {
        Ok(())
    };
    if r1.is_err() || r2.is_err() || lhs != lhs2 {
        return fail(format!("LHS packed in two calls split at row {m1} differs from one call ({r1:?}, {r2:?})"));
    }
    let mut rhs = vec![0u8; X::rhs_packed_size(&p, n, k, bl).map_err(|e| format!("rhs size: {e}"))?];
    if let Err(e) = X::pack_rhs(&p, n, k, bl, &raw.view(), &mut rhs) {
        return fail(format!("RHS packer failed: {e}"));
    }

    let Ok(clamp_v) = Clamp::new(clamp.0, clamp.1) else {
        return fail("invalid clamp drawn".into());
    };
    // The 2-bit family's kernels get the table the weights were packed with.
    let args = args_with_lut::<X::F>(
        MatmulArgs::new(m, n, k).with_block_len(bl).with_clamp(clamp_v).with_dst_stride(dst_stride),
        raw.lut,
    );
    let dst_len = (m - 1) * dst_stride + n;
    let kernels: Vec<Kernel<X::F>> = available::<X::F>(cpu).into_iter().filter(|kn| kn.packing() == p).collect();
    let Some(scalar) = kernels.iter().copied().find(|kn| kn.tier() == Tier::Scalar) else {
        return fail("no scalar kernel for the packing".into());
    };

    // The reference: the scalar kernel over the whole output.
    let canary = canary::<<X::F as Family>::Dst>();
    let mut want = vec![canary; dst_len];
    if let Err(e) = scalar.run(&lhs, &rhs, &mut want, &args) {
        return fail(format!("{}: {e}", scalar.name()));
    }
    for r in 0..m {
        for c in 0..dst_stride.min(dst_len - r * dst_stride) {
            let touched = want[r * dst_stride + c].to_bits32() != canary.to_bits32();
            if touched != (c < n) {
                return fail(format!("{}: element ({r}, {c}) written = {touched}", scalar.name()));
            }
        }
    }
    let compare = |name: &str, how: &str, got: &[<X::F as Family>::Dst]| -> Result<(), String> {
        match got.iter().zip(&want).position(|(g, w)| g.to_bits32() != w.to_bits32()) {
            None => Ok(()),
            Some(i) => {
                let (r, c) = (i / dst_stride, i % dst_stride);
                Err(format!(
                    "MISMATCH {name} ({how}) vs {} at row {r}, column {c}: got {} ({:#010x}), want {} ({:#010x})",
                    scalar.name(),
                    got[i].to_f32(),
                    got[i].to_bits32(),
                    want[i].to_f32(),
                    want[i].to_bits32()
                ))
            }
        }
    };
    for kn in &kernels {
        // The scalar kernel's reference call counts as its own.
        let mut kcalls = u64::from(kn.tier() == Tier::Scalar);
        if kn.tier() != Tier::Scalar {
            let mut got = vec![canary; dst_len];
            if let Err(e) = kn.run(&lhs, &rhs, &mut got, &args) {
                return fail(format!("{}: {e}", kn.name()));
            }
            kcalls += 1;
            if let Err(e) = compare(kn.name(), "whole output", &got) {
                return fail(e);
            }
        }
        // A grid of sub-rectangles: cuts at random multiples of the kernel's steps.
        let cuts = |rng: &mut Rng, len: usize, step: usize| {
            let mut v: Vec<usize> = (0..rng.below(3)).map(|_| rng.below(len.div_ceil(step) + 1) * step).collect();
            v.extend([0, len]);
            v.retain(|&c| c <= len);
            v.sort_unstable();
            v.dedup();
            v
        };
        let (mc, nc) = (cuts(rng, m, kn.m_step()), cuts(rng, n, kn.n_step()));
        let mut got = vec![canary; dst_len];
        for mw in mc.windows(2) {
            for nw in nc.windows(2) {
                let a = args.with_rect(mw[0], nw[0], mw[1] - mw[0], nw[1] - nw[0]);
                let off = match kn.dst_offset(mw[0], nw[0], dst_stride) {
                    Ok(o) => o,
                    Err(e) => return fail(format!("{}: dst_offset: {e}", kn.name())),
                };
                if let Err(e) = kn.run(&lhs, &rhs, &mut got[off..], &a) {
                    return fail(format!("{}: rectangle {:?}: {e}", kn.name(), (mw, nw)));
                }
                kcalls += 1;
            }
        }
        if let Err(e) = compare(kn.name(), &format!("grid rows {mc:?} x columns {nc:?}"), &got) {
            return fail(e);
        }
        stats.ran(kn.name(), kn.tier(), kcalls);
    }
    stats.cases += 1;
    *stats.per_family.entry(fam).or_default() += 1;
    if verbose {
        println!("{fam} {:?} m={m} n={n} k={k} bl={bl} clamp={clamp:?}: {} kernels", (p.mr, p.nr, p.kr), kernels.len());
    }
    Ok(())
}

/// One value of a float-family input: random of a drawn magnitude, or an edge (zeros of both
/// signs, subnormal, tiny, huge).
fn float_value(rng: &mut Rng, scale: f32) -> f32 {
    match rng.below(16) {
        0 => 0.0,
        1 => -0.0,
        2 => rng.f32(-1.0, 1.0) * 1e-40,
        3 => rng.f32(-1.0, 1.0) * 1e-30,
        4 => rng.f32(-1.0, 1.0) * 1e30,
        _ => rng.f32(-scale, scale),
    }
}

/// Draws and runs one case of float family `F` (`F::Src` activations and weights): a kernel
/// packing of the catalogue (a scalar kernel's), a shape with tails, KxN or NxK weights with or
/// without bias, padded strides, a clamp; every available kernel of the packing against the
/// scalar one, over the whole output and a random grid.
fn float_case<F: Operator>(
    rng: &mut Rng,
    cpu: &CpuFeatures,
    stats: &mut Stats,
    lhs_of: LhsOf<F>,
) -> Result<(), String> {
    let scalars: Vec<Kernel<F>> = available::<F>(cpu).into_iter().filter(|k| k.tier() == Tier::Scalar).collect();
    let scalar = pick(rng, &scalars);
    let (lp, rp) = (scalar.lhs_packing(), scalar.rhs_packing());
    let (m, n, k) = (1 + rng.below(40), 1 + rng.below(90), 1 + rng.below(300));
    let scale = 10f32.powf(rng.f32(-2.0, 2.0));
    let kxn = rng.below(2) == 0;
    // Finite in the activation type (and so in the bias type, the same or f32): the packers and
    // the kernels that read rows in place reject infinities.
    let max = F::Src::MAX.to_f32();
    let w: Vec<F::Src> = (0..n * k).map(|_| F::Src::from_f32(float_value(rng, scale).clamp(-max, max))).collect();
    // The bias in f32: the packer rounds it once to the format's bias type (f32 or f16).
    let bias: Option<Vec<f32>> =
        (rng.below(4) != 0).then(|| (0..n).map(|_| float_value(rng, scale).clamp(-max, max)).collect());
    let src = if kxn { FloatSource::kxn(&w, n) } else { FloatSource::nxk(&w, k) };
    let mut rhs = vec![0u8; rp.packed_size(n, k, 0).map_err(|e| e.to_string())?];
    float_pack::pack_float_rhs(&rp, n, k, &src, bias.as_deref(), &mut rhs).map_err(|e| e.to_string())?;
    let stride = k + rng.below(3);
    let x: Vec<F::Src> = (0..m * stride).map(|_| F::Src::from_f32(float_value(rng, scale).clamp(-max, max))).collect();
    let (lhs, params) = lhs_of(&lp, m, k, &x, stride);
    let (lo, hi) = draw_clamp(rng);
    let clamp = Clamp::new(lo, hi).map_err(|e| e.to_string())?;
    let dst_stride = n + rng.below(3);
    let args = MatmulArgs::new(m, n, k).with_params(params).with_clamp(clamp).with_dst_stride(dst_stride);
    let canary = F::Dst::from_f32(7.0);
    let len = (m - 1) * dst_stride + n;
    let mut want = vec![canary; len];
    scalar.run(&lhs, &rhs, &mut want, &args).map_err(|e| e.to_string())?;
    stats.ran(scalar.name(), Tier::Scalar, 1);
    let same = |a: &[F::Dst], b: &[F::Dst]| a.iter().zip(b).all(|(x, y)| x.to_bits32() == y.to_bits32());
    let report = |what: &str, name: &str| {
        format!(
            "{}: {name} differs from {} ({what}): m {m} n {n} k {k} kxn {kxn} stride {stride} clamp ({lo}, {hi})",
            F::NAME,
            scalar.name()
        )
    };
    // The kernels that read both operands as the scalar one does (its packing: the 1x36 `BFDOT`
    // kernels have their own, `bf16p1x4`, apart from the 8x12 `BFMMLA` ones).
    for kn in available::<F>(cpu).iter().filter(|kn| {
        kn.tier() != Tier::Scalar
            && kn.packing() == scalar.packing()
            && (kn.lhs_packing(), kn.rhs_packing()) == (lp, rp)
    }) {
        let mut got = vec![canary; len];
        kn.run(&lhs, &rhs, &mut got, &args).map_err(|e| e.to_string())?;
        if !same(&got, &want) {
            return Err(report("whole output", kn.name()));
        }
        // A random grid of sub-rectangles on the kernel's steps.
        let (ms, ns) = (kn.m_step(), kn.n_step());
        let m0 = rng.below(m.div_ceil(ms)) * ms;
        let n0 = rng.below(n.div_ceil(ns)) * ns;
        let mut grid = vec![canary; len];
        let mut calls = 1;
        for (mi, mm) in [(0, m0), (m0, m - m0)] {
            for (ni, nn) in [(0, n0), (n0, n - n0)] {
                if mm == 0 || nn == 0 {
                    continue;
                }
                let off = kn.dst_offset(mi, ni, dst_stride).map_err(|e| e.to_string())?;
                kn.run(&lhs, &rhs, &mut grid[off..], &args.with_rect(mi, ni, mm, nn)).map_err(|e| e.to_string())?;
                calls += 1;
            }
        }
        if !same(&grid, &want) {
            return Err(report("grid", kn.name()));
        }
        stats.ran(kn.name(), kn.tier(), calls);
    }
    *stats.per_family.entry(F::NAME).or_default() += 1;
    stats.cases += 1;
    Ok(())
}

/// Builds the activations a kernel of LHS packing `lp` reads from `m` rows of `k` values
/// `stride` apart: `(values, the family's parameters for MatmulArgs)`.
type LhsOf<F> =
    fn(&LhsPacking, usize, usize, &[<F as Operator>::Src], usize) -> (Vec<<F as Family>::Lhs>, <F as Family>::Params);

/// Unpacked activations: the rows themselves with their stride.
fn float_rows<T: Element>(_: &LhsPacking, _m: usize, _k: usize, x: &[T], stride: usize) -> (Vec<T>, LhsStride) {
    (x.to_vec(), LhsStride(stride))
}

/// Activations packed as bf16 in `lp` (no parameters).
fn float_packed<T: Element>(lp: &LhsPacking, m: usize, k: usize, x: &[T], stride: usize) -> (Vec<u8>, ()) {
    assert!(lp.format.is_packed(), "a packed-LHS kernel");
    let mut out = vec![0u8; lp.packed_size(m, k, 0).unwrap()];
    qgemm::lhs::bf16p::pack(lp, m, k, x, stride, &mut out).unwrap();
    (out, ())
}

/// Runs the case of seed `cs` (its family is its first draw).
fn run_case(cs: u64, cpu: &CpuFeatures, family: &str, stats: &mut Stats, verbose: bool) -> Result<bool, String> {
    let mut rng = Rng(cs);
    let names = [
        <Qsi4cxp as Fam>::F::NAME,
        <Qsi4c32p as Fam>::F::NAME,
        <Q40 as Fam>::F::NAME,
        <Qsi8cxp as Fam>::F::NAME,
        <F16Qsi4cxp as Fam>::F::NAME,
        <F16Qsi8cxp as Fam>::F::NAME,
        <Bf16Qsi4cxp as Fam>::F::NAME,
        <Bf16Qsi4c32p as Fam>::F::NAME,
        <Qai4c32p as Fam>::F::NAME,
        <F16Qai4c32p as Fam>::F::NAME,
        <Qsu2cxp as Fam>::F::NAME,
        qgemm::f32_f32_f32p::F32F32F32p::NAME,
        qgemm::f16_f16_f16p::F16F16F16p::NAME,
        qgemm::f32_bf16p_bf16p::F32Bf16pBf16p::NAME,
        qgemm::f16_bf16p_bf16p::F16Bf16pBf16p::NAME,
    ];
    let which = rng.below(names.len());
    if !names[which].contains(family) {
        return Ok(false);
    }
    match which {
        0 => case::<Qsi4cxp>(&mut rng, cpu, stats, verbose)?,
        1 => case::<Qsi4c32p>(&mut rng, cpu, stats, verbose)?,
        2 => case::<Q40>(&mut rng, cpu, stats, verbose)?,
        3 => case::<Qsi8cxp>(&mut rng, cpu, stats, verbose)?,
        4 => case::<F16Qsi4cxp>(&mut rng, cpu, stats, verbose)?,
        5 => case::<F16Qsi8cxp>(&mut rng, cpu, stats, verbose)?,
        6 => case::<Bf16Qsi4cxp>(&mut rng, cpu, stats, verbose)?,
        7 => case::<Bf16Qsi4c32p>(&mut rng, cpu, stats, verbose)?,
        8 => case::<Qai4c32p>(&mut rng, cpu, stats, verbose)?,
        9 => case::<F16Qai4c32p>(&mut rng, cpu, stats, verbose)?,
        10 => case::<Qsu2cxp>(&mut rng, cpu, stats, verbose)?,
        11 => float_case::<qgemm::f32_f32_f32p::F32F32F32p>(&mut rng, cpu, stats, float_rows::<f32>)?,
        12 => float_case::<qgemm::f16_f16_f16p::F16F16F16p>(&mut rng, cpu, stats, float_rows::<f16>)?,
        13 => float_case::<qgemm::f32_bf16p_bf16p::F32Bf16pBf16p>(&mut rng, cpu, stats, float_packed::<f32>)?,
        _ => float_case::<qgemm::f16_bf16p_bf16p::F16Bf16pBf16p>(&mut rng, cpu, stats, float_packed::<f16>)?,
    }
    Ok(true)
}

fn main() {
    let o = parse();
    let cpu = CpuFeatures::detect();
    let mut stats = Stats::default();
    println!("soak: cpu {cpu}");
    let start = Instant::now();
    if let Some(cs) = o.case_seed {
        match run_case(cs, &cpu, "", &mut stats, true) {
            Ok(_) => println!("case-seed {cs:#018x}: every kernel agrees ({} kernel calls)", stats.calls),
            Err(e) => {
                println!("case-seed {cs:#018x}: {e}");
                exit(1);
            }
        }
        return;
    }
    println!("soak: seed {:#x}, budget {:?} s / {:?} cases, family filter {:?}", o.seed, o.seconds, o.cases, o.family);
    let mut master = Rng(o.seed);
    let mut last_report = 0.0;
    loop {
        let elapsed = start.elapsed().as_secs_f64();
        if o.seconds.is_some_and(|s| elapsed >= s) || o.cases.is_some_and(|c| stats.cases >= c) {
            break;
        }
        if elapsed - last_report >= 60.0 {
            last_report = elapsed;
            eprintln!("soak: {:.0} s, {} cases, {} kernel calls", elapsed, stats.cases, stats.calls);
        }
        let cs = master.next_u64();
        if let Err(e) = run_case(cs, &cpu, &o.family, &mut stats, o.verbose) {
            println!("soak: FAILED after {} cases ({} kernel calls)", stats.cases, stats.calls);
            println!("{e}");
            println!("reproduce: cargo make soak --case-seed {cs:#018x}   (run seed {:#x})", o.seed);
            exit(1);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{:<70} {:>8} {:>10} {:>12}", "kernel", "tier", "cases", "calls");
    for (name, (tier, cases, calls)) in &stats.per_kernel {
        println!("{name:<70} {:>8} {cases:>10} {calls:>12}", tier.name());
    }
    for (fam, n) in &stats.per_family {
        println!("family {fam}: {n} cases");
    }
    println!(
        "soak: ok: seed {:#x}, {} cases, {} kernel calls, {} kernels, {:.1} s",
        o.seed,
        stats.cases,
        stats.calls,
        stats.per_kernel.len(),
        secs
    );
}
