//! The test matrix every kernel family runs, written once: golden vectors, every tier against
//! the scalar reference on shapes with tails, edge inputs, clamps, split execution with
//! canaries, and the rejections of `Kernel::run`. A family test file implements [`Fixture`] and
//! invokes [`family_suite!`] inside a module named after the family.

use qgemm::error::{Buffer, Dim, Param, Stride};
use qgemm::{Clamp, CpuFeatures, Element, Error, Family, Feature, Kernel, MatmulArgs, Packing, Result, Tier};

/// The run arguments of fixture `X`'s family.
pub type XArgs<X> = Args<<X as Fixture>::F>;
use serde_json::Value;

use super::*;

/// What the generic suite needs to know about one family.
pub trait Fixture: Sized {
    /// The family; its outputs ([`Family::Dst`]) are compared by bits.
    type F: Family<Dst: Bits, Lhs = u8>;
    /// The activation type the family's LHS packer takes (`f32`, `f16` or `bf16`). The suite
    /// draws activations as f32 and rounds them to it.
    type Src: Element;
    /// Block lengths to exercise (`[0]` for the per-channel families).
    const BLS: &'static [usize];

    /// Quantizes and packs `m` rows of `x` (row stride `stride`) starting at matrix row
    /// `m_idx_start` into `out`.
    #[allow(clippy::too_many_arguments)]
    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        m_idx_start: usize,
        x: &[Self::Src],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()>;

    /// Packs a golden case's raw RHS inputs.
    fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8>;

    /// Packs random weights (with the family's scales and bias) for an `n x k` problem.
    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8>;

    /// Packs, into `out` (exactly the packed size), weights whose raw bytes all equal `byte`,
    /// with scales of about 1: int4 nibble bytes (0x00: every weight -8; 0xff: +7), int8 bytes
    /// (the fixture says how), or 2-bit codes (four per byte: 0x00 every code 0, 0xff every
    /// code 3, the ends of the table).
    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, out: &mut [u8]);

    /// [`Fixture::pack_filled_rhs_into`] into a new buffer.
    fn pack_filled_rhs(p: &Packing, n: usize, k: usize, bl: usize, byte: u8) -> Vec<u8> {
        let mut out = vec![0u8; scalar_kernel::<Self>(p).rhs_packed_size(n, k, bl).unwrap()];
        Self::pack_filled_rhs_into(p, n, k, bl, byte, &mut out);
        out
    }

    /// Checks the family's packer size/offset functions against a golden packing entry.
    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing);

    /// Whether the LHS packer may be called from matrix row `m_idx_start` with `p` (the
    /// f16/bf16 packers with `mr = 4` take starts at multiples of 4 only).
    fn splits_at(_p: &Packing, _m_idx_start: usize) -> bool {
        true
    }

    /// Whether the packed activations depend on `mr` as well as on `kr / sr` (the f16 packer
    /// rounds rows packed in groups of four differently).
    const LHS_DEPENDS_ON_MR: bool = false;

    /// Whether the packed activations are `qai8dxp` (per-row `offset` and f32 `dq` after the
    /// data of each tile), which [`non_finite_packed_values_give_the_same_bits_in_every_tier`]
    /// poisons.
    const QAI8DXP_LHS: bool = true;

    /// Compares qgemm's packed LHS of a golden case with KleidiAI's (`ours`, `golden`): equal
    /// unless the family documents a divergence, which the fixture then checks and explains.
    fn check_golden_lhs(case: &Case, p: &Packing, ours: &[u8], golden: &[u8]) {
        assert!(ours == golden, "{} {p:?}: packed LHS differs from KleidiAI's", case.id);
    }

    /// The run arguments of a golden case: `args` plus what the case's packer parameters imply
    /// for the kernels (the look-up table of the 2-bit family).
    fn golden_args(_case: &Case, args: XArgs<Self>) -> XArgs<Self> {
        args
    }
}

/// A depth for the per-channel tests: `k` rounded up to a multiple of the family's
/// [`Family::K_MULTIPLE`] (32 for the 2-bit family, whose format has no K padding).
pub fn depth<X: Fixture>(k: usize) -> usize {
    k.next_multiple_of(<X::F as Family>::K_MULTIPLE)
}

pub fn packing_of(p: &Value) -> Packing {
    let g = |f: &str| p[f].as_u64().unwrap() as usize;
    Packing { mr: g("mr"), nr: g("nr"), kr: g("kr"), sr: g("sr") }
}

pub fn lhs_size<X: Fixture>(p: &Packing, m: usize, k: usize, bl: usize) -> usize {
    scalar_kernel::<X>(p).lhs_packed_size(m, k, bl).unwrap()
}

/// The scalar kernel of `p`.
pub fn scalar_kernel<X: Fixture>(p: &Packing) -> Kernel<X::F> {
    scalar_of::<X::F>(p)
}

/// Every packing some kernel of the family consumes.
pub fn all_packings<X: Fixture>() -> Vec<Packing> {
    let mut v: Vec<Packing> = Vec::new();
    for d in X::F::kernels() {
        let p = packing_of_desc(*d);
        if !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// A random problem packed for `p`; `x` overrides the random activations.
pub fn random_problem<X: Fixture>(
    rng: &mut Rng,
    p: &Packing,
    (m, n, k, bl): (usize, usize, usize, usize),
    x: Option<&[f32]>,
) -> (Vec<u8>, Vec<u8>) {
    let x: Vec<X::Src> = match x {
        Some(x) => convert(x),
        None => convert(&(0..m * k).map(|_| rng.f32(-2.0, 1.5)).collect::<Vec<_>>()),
    };
    let mut lhs = vec![0u8; lhs_size::<X>(p, m, k, bl)];
    X::pack_lhs(p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
    (lhs, X::pack_random_rhs(rng, p, n, k, bl))
}

pub fn golden_packed_bytes<X: Fixture>() {
    if !golden_available(X::F::NAME) {
        return;
    }
    let mut checked = 0;
    for case in cases(X::F::NAME) {
        let (m, k, bl) = (case.m(), case.k(), case.bl());
        let x: Vec<X::Src> = case.values(&case.json["inputs"]["lhs"]["file"]);
        for pj in case.packings() {
            let p = packing_of(pj);
            let tag = format!("{} {p:?}", case.id);
            let mut lhs = vec![0u8; lhs_size::<X>(&p, m, k, bl)];
            X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
            X::check_golden_lhs(&case, &p, &lhs, &case.bytes(&pj["lhs_packed"]["file"]));
            assert_eq!(X::pack_golden_rhs(&case, &p), case.bytes(&pj["rhs_packed"]["file"]), "{tag}: packed RHS");
            assert_eq!(lhs.len(), pj["lhs_packed"]["size"].as_u64().unwrap() as usize, "{tag}");
            X::check_golden_sizes(&case, pj, &p);
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// Every kernel on the golden cases, bit for bit. A kernel whose packing is one of the
/// golden packings runs on KleidiAI's packed bytes; a kernel with a packing of qgemm's own runs
/// on KleidiAI's packed LHS of a golden packing with the same `mr`, `kr`, `sr` (the LHS layout
/// does not depend on `nr`) and the golden RHS inputs packed by qgemm, or else on the golden
/// inputs packed by qgemm with a golden packing of the same `kr/sr` (and `mr`, where the packed
/// activations depend on it), and must match that packing's golden output (outputs depend on
/// the packing only through the `rsum` chunking of the bf16-scale format, docs/formats.md,
/// §Arithmetic: RHS packer sums, and the f16 packer's rounding by `mr`).
pub fn golden_outputs_in_every_tier<X: Fixture>() {
    if !golden_available(X::F::NAME) {
        return;
    }
    let cpu = cpu();
    let mut report = TierReport::default();
    for case in cases(X::F::NAME) {
        let (m, n, k, bl) = (case.m(), case.n(), case.k(), case.bl());
        let x: Vec<X::Src> = case.values(&case.json["inputs"]["lhs"]["file"]);
        for pj in case.packings() {
            for gk in pj["kernels"].as_array().unwrap() {
                assert_eq!(gk["dst_size"].as_u64().unwrap() as usize, m * n * <X::F as Family>::Dst::SIZE);
            }
        }
        for p in all_packings::<X>() {
            let golden = case.packings().iter().find(|pj| packing_of(pj) == p);
            let same_lhs = case.packings().iter().find(|pj| {
                let g = packing_of(pj);
                (g.mr, g.kr, g.sr) == (p.mr, p.kr, p.sr)
            });
            let same_depth = case.packings().iter().find(|pj| {
                let g = packing_of(pj);
                g.block_depth() == p.block_depth() && (!X::LHS_DEPENDS_ON_MR || g.mr == p.mr)
            });
            let (lhs, rhs, pj) = match (golden, same_lhs, same_depth) {
                (Some(pj), _, _) => (case.bytes(&pj["lhs_packed"]["file"]), case.bytes(&pj["rhs_packed"]["file"]), pj),
                (None, Some(pj), _) => (case.bytes(&pj["lhs_packed"]["file"]), X::pack_golden_rhs(&case, &p), pj),
                (None, None, Some(pj)) => {
                    let mut lhs = vec![0u8; lhs_size::<X>(&p, m, k, bl)];
                    X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
                    (lhs, X::pack_golden_rhs(&case, &p), pj)
                }
                (None, None, None) => continue,
            };
            // Every KleidiAI kernel of one packing wrote the same bits (docs/formats.md, §Arithmetic: RHS packer sums).
            let gk = &pj["kernels"][0];
            for kernel in kernels_of::<X::F>(&p, &mut report) {
                for which in ["none", "tight"] {
                    let (lo, hi) = case.clamp(which);
                    let args = MatmulArgs::new(m, n, k).with_block_len(bl).with_clamp(Clamp::new(lo, hi).unwrap());
                    let args = X::golden_args(&case, args);
                    let want: Vec<<X::F as Family>::Dst> = case.values(&gk["dst"][which]);
                    let what = format!("{} {} [{which}]", case.id, kernel.name());
                    assert_bits_eq(&run_guarded(&kernel, &lhs, &rhs, &args), &want, &what);
                    let split = run_split(&kernel, &lhs, &rhs, &args, m / 2, n / 2);
                    assert_bits_eq(&split, &want, &format!("{what} split 2x2"));
                }
                report.ran(kernel.name());
            }
        }
    }
    report.print(&format!("{} golden outputs", X::F::NAME));
    for kernel in X::F::kernels().iter().filter(|k| k.is_available(&cpu)) {
        assert!(report.ran.contains(&kernel.name()), "{} never met a golden case", kernel.name());
    }
}

pub fn golden_kernel_offsets<X: Fixture>() {
    if !golden_available(X::F::NAME) {
        return;
    }
    for case in cases(X::F::NAME) {
        let (n, k, bl) = (case.n(), case.k(), case.bl());
        for pj in case.packings() {
            let p = packing_of(pj);
            for gk in pj["kernels"].as_array().unwrap() {
                let g = |f: &str| gk[f].as_u64().unwrap() as usize;
                let (ms, ns) = (g("m_step"), g("n_step"));
                for d in X::F::kernels().iter().filter(|d| packing_of_desc(*d) == p) {
                    let kernel = d.resolve(&any_cpu()).unwrap();
                    assert_eq!(kernel.lhs_packed_offset(ms, k, bl).unwrap(), g("lhs_packed_offset_at_m_step"));
                    assert_eq!(kernel.rhs_packed_offset(ns, k, bl).unwrap(), g("rhs_packed_offset_at_n_step"));
                    if ms % kernel.m_step() == 0 && ns % kernel.n_step() == 0 {
                        let e = <X::F as Family>::Dst::SIZE;
                        assert_eq!(kernel.dst_offset(ms, ns, n).unwrap() * e, g("dst_offset_at_steps"));
                    }
                }
            }
        }
    }
}

pub fn lhs_packing_split_at_any_row<X: Fixture>() {
    let mut rng = Rng(11);
    for p in all_packings::<X>() {
        for &bl in X::BLS {
            let (m, k) = (11, if bl == 0 { depth::<X>(70) } else { 2 * bl });
            let x: Vec<X::Src> = convert(&(0..m * k).map(|_| rng.f32(-3.0, 2.0)).collect::<Vec<_>>());
            let size = lhs_size::<X>(&p, m, k, bl);
            let mut whole = vec![0u8; size];
            X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut whole).unwrap();
            let kernel = scalar_kernel::<X>(&p);
            for m1 in (0..=m).filter(|m1| X::splits_at(&p, *m1)) {
                let mut parts = vec![0u8; size];
                X::pack_lhs(&p, m1, k, bl, 0, &x, k, &mut parts).unwrap();
                let start = kernel.lhs_packed_offset(m1 / p.mr * p.mr, k, bl).unwrap();
                X::pack_lhs(&p, m - m1, k, bl, m1, &x[m1 * k..], k, &mut parts[start..]).unwrap();
                assert_eq!(parts, whole, "{p:?} bl {bl} split at {m1}");
            }
        }
    }
}

/// Shapes with tails: m and n not multiples of any tile, m = 1, n = 1; for the per-channel
/// families also k not a multiple of 32 (odd k included; the tests round it to the family's
/// [`Family::K_MULTIPLE`] with [`depth`]).
pub fn shapes(bl: usize) -> Vec<(usize, usize, usize)> {
    let ms = [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 33];
    let ns = [1, 3, 4, 7, 8, 9, 12, 16, 17, 20, 33, 40];
    let ks: Vec<usize> =
        if bl == 0 { vec![1, 7, 31, 32, 33, 64, 99, 100, 160, 256] } else { vec![bl, 2 * bl, 3 * bl, 8 * bl] };
    let mut v = Vec::new();
    for (i, &m) in ms.iter().enumerate() {
        // A deterministic walk that covers every m, n and k value.
        v.push((m, ns[i % ns.len()], ks[i % ks.len()]));
        v.push((m, ns[(i * 5 + 3) % ns.len()], ks[(i * 3 + 1) % ks.len()]));
    }
    v.push((1, 64, 16 * bl.max(16)));
    v
}

pub fn every_tier_matches_scalar_on_shapes_with_tails<X: Fixture>() {
    let mut rng = Rng(42);
    let mut report = TierReport::default();
    for p in all_packings::<X>() {
        for &bl in X::BLS {
            for (m, n, k) in shapes(bl) {
                let k = depth::<X>(k);
                let (lhs, rhs) = random_problem::<X>(&mut rng, &p, (m, n, k, bl), None);
                let args = MatmulArgs::new(m, n, k).with_block_len(bl);
                check_tiers_against_scalar::<X::F>(&p, &lhs, &rhs, &args, &mut report);
            }
        }
    }
    report.print(&format!("{} shapes with tails", X::F::NAME));
}

/// Edge activations of element type `S`, one row each: zeros, a constant, one huge value,
/// alternating ±max (the type's largest finite value), subnormals (the type's smallest), a
/// constant -max (where the format can hold its scale; else ±1e6, or ±max of `S` if smaller),
/// a single non-zero, a ramp. Returns the rows as f32 (exact in `S`); `k` is a multiple of 32.
pub fn edge_rows<S: Element>(k: usize, with_max: bool) -> Vec<Vec<f32>> {
    let tiny = S::from_bits32(1).to_f32();
    let max = S::MAX.to_f32();
    let big = if with_max { max } else { max.min(1e6) };
    let huge = max.min(1e6);
    vec![
        vec![0.0; k],
        vec![0.7; k],
        (0..k).map(|j| if j == k / 3 { huge } else { 1.0 + j as f32 * 1e-3 }).collect(),
        (0..k).map(|j| if j % 2 == 0 { big } else { -big }).collect(),
        (0..k).map(|j| tiny * (j as f32 - 40.0)).collect(),
        vec![-big; k],
        (0..k).map(|j| if j == 5 { -3.0 } else { 0.0 }).collect(),
        (0..k).map(|j| (j as f32 - 48.0) * 0.25).collect(),
    ]
}

/// Depth of the edge-input problems (a multiple of every block length tested).
pub const EDGE_K: usize = 128;

/// Per packing: the packing, the number of edge rows, the scalar output (`rows x n`) and the
/// packed RHS.
pub type EdgeRuns<X> = Vec<(Packing, usize, Vec<<<X as Fixture>::F as Family>::Dst>, Vec<u8>)>;

/// Runs the edge rows through every tier of every packing; returns, per packing, the scalar
/// output (`rows x n`) and the packed RHS, for family-specific expectations.
pub fn edge_inputs_equal_in_every_tier<X: Fixture>(with_max: bool) -> EdgeRuns<X> {
    let (n, k) = (12, EDGE_K);
    let rows = edge_rows::<X::Src>(k, with_max);
    let m = rows.len();
    let x: Vec<f32> = rows.concat();
    let mut rng = Rng(7);
    let mut report = TierReport::default();
    let mut out = Vec::new();
    for p in all_packings::<X>() {
        for &bl in X::BLS {
            let (lhs, rhs) = random_problem::<X>(&mut rng, &p, (m, n, k, bl), Some(&x));
            let args = MatmulArgs::new(m, n, k).with_block_len(bl);
            check_tiers_against_scalar::<X::F>(&p, &lhs, &rhs, &args, &mut report);
            let dst = run_guarded(&scalar_kernel::<X>(&p), &lhs, &rhs, &args);
            assert!(dst.iter().all(|v| !v.to_f32().is_nan()), "{p:?}: NaN output");
            out.push((p, bl, dst, rhs));
        }
    }
    report.print(&format!("{} edge inputs", X::F::NAME));
    out
}

/// The largest products the int8 x int4 arithmetic can form (q = -128 or -127 against w = -8,
/// q = 127 against w = 7) summed over a long K: every tier must keep the integer sums exact
/// (no 16-bit intermediate overflow) and agree with the scalar reference.
pub fn extreme_products_over_long_k<X: Fixture>() {
    let bl = *X::BLS.last().unwrap();
    let (m, n, k) = (5, 9, if bl == 0 { depth::<X>(4099) } else { 4096 });
    let rows: Vec<Vec<f32>> = vec![
        vec![-1.0; k],
        vec![1.0; k],
        (0..k).map(|j| if j % 2 == 0 { -1.0 } else { 1.0 }).collect(),
        (0..k).map(|j| if j % 3 == 0 { 1.0 } else { -1.0 }).collect(),
        (0..k).map(|j| if j < k / 2 { -1.0 } else { 0.5 }).collect(),
    ];
    let x: Vec<X::Src> = convert(&rows.concat());
    let mut report = TierReport::default();
    for p in all_packings::<X>() {
        let mut lhs = vec![0u8; lhs_size::<X>(&p, m, k, bl)];
        X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
        for byte in [0x00, 0xff, 0x0f, 0xf0] {
            let rhs = X::pack_filled_rhs(&p, n, k, bl, byte);
            let args = MatmulArgs::new(m, n, k).with_block_len(bl);
            check_tiers_against_scalar::<X::F>(&p, &lhs, &rhs, &args, &mut report);
        }
    }
    report.print(&format!("{} extreme products", X::F::NAME));
}

/// The longest block the asm tiers compute themselves (`bl = 2^16`, where `16 * S` of the
/// largest products still fits int32) and one past it (`2^17`, which they hand to the scalar
/// kernel), with the largest products: every tier agrees with the scalar reference, and every
/// output has the sign of the exact result (rows of -1 against weights of -8 give positive
/// sums, rows of +1 negative ones; a block sum that wrapped in int32 would flip it).
pub fn huge_block_len_agrees_in_every_tier<X: Fixture>() {
    if X::BLS == [0] {
        return;
    }
    for bl in [1 << 16, 1 << 17] {
        let (m, n) = (5, 9);
        let k = bl;
        let x: Vec<X::Src> =
            convert(&(0..m * k).map(|j| if (j / k) % 2 == 0 { -1.0 } else { 1.0 }).collect::<Vec<_>>());
        let mut report = TierReport::default();
        for p in all_packings::<X>().into_iter().filter(|p| p.kr == 16) {
            let mut lhs = vec![0u8; lhs_size::<X>(&p, m, k, bl)];
            X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
            let rhs = X::pack_filled_rhs(&p, n, k, bl, 0x00);
            let args = MatmulArgs::new(m, n, k).with_block_len(bl);
            check_tiers_against_scalar::<X::F>(&p, &lhs, &rhs, &args, &mut report);
            for kernel in kernels_of::<X::F>(&p, &mut TierReport::default()) {
                let out = run_guarded(&kernel, &lhs, &rhs, &args);
                for (i, v) in out.iter().map(|v| v.to_f32()).enumerate() {
                    let want_positive = (i / n) % 2 == 0;
                    assert!(
                        v.is_finite() && (v > 0.0) == want_positive,
                        "{} bl = {bl}: output {i} is {v}, expected {} (wrapped block sum?)",
                        kernel.name(),
                        if want_positive { "> 0" } else { "< 0" }
                    );
                }
            }
        }
        report.print(&format!("{} bl = {bl}", X::F::NAME));
    }
}

/// Packed operands are bytes from the caller, so they may hold what no packer writes: NaN
/// (quiet, signalling, with payloads, negative) and infinite dequantization scales, and scales
/// so large that results overflow the output type. Every tier must still give the scalar
/// kernel's bits (NaN results keep their top bits, quieted, in every output type, as
/// `FCVTN`/`BFCVTN` keep them; docs/formats.md, §Arithmetic: f16 and bf16 outputs).
pub fn non_finite_packed_values_give_the_same_bits_in_every_tier<X: Fixture>() {
    if !X::QAI8DXP_LHS {
        return;
    }
    let poison: [u32; 8] =
        [0x7fc0_1234, 0xffff_ffff, 0x7f80_0001, 0xffc0_0000, 0x7f80_0000, 0xff80_0000, 0x7e96_7699, 0x3f80_0000];
    let mut rng = Rng(77);
    let mut report = TierReport::default();
    for p in all_packings::<X>() {
        let bl = *X::BLS.last().unwrap();
        let (m, n, k) = (9, 13, if bl == 0 { depth::<X>(40) } else { 2 * bl });
        let (mut lhs, rhs) = random_problem::<X>(&mut rng, &p, (m, n, k, bl), None);
        let kp = k.div_ceil(32) * 32;
        let ts = lhs.len() / m.div_ceil(p.mr);
        for r in 0..m {
            let at = (r / p.mr) * ts + p.mr * kp + 4 * p.mr + 4 * (r % p.mr);
            lhs[at..at + 4].copy_from_slice(&poison[r % poison.len()].to_le_bytes());
        }
        // Infinite clamp bounds, so that infinite results reach the conversion.
        let clamp = Clamp::new(f32::NEG_INFINITY, f32::INFINITY).unwrap();
        let args = MatmulArgs::new(m, n, k).with_block_len(bl).with_clamp(clamp);
        check_tiers_against_scalar::<X::F>(&p, &lhs, &rhs, &args, &mut report);
        let out = run_guarded(&scalar_kernel::<X>(&p), &lhs, &rhs, &args);
        assert!(out.iter().any(|v| v.to_f32().is_nan()), "{p:?}: no NaN result");
        assert!(out.iter().any(|v| v.to_f32().is_infinite()), "{p:?}: no infinite result");
    }
    report.print(&format!("{} poisoned dq scales", X::F::NAME));
}

pub fn non_finite_activations_rejected_before_any_write<X: Fixture>() {
    for p in all_packings::<X>() {
        let bl = X::BLS[0];
        // The packers test chunks of 64 values: a short row and a row of several chunks.
        for k in if bl == 0 { [depth::<X>(40), depth::<X>(200)] } else { [2 * bl, 8 * bl] } {
            let m = 3;
            let cases = [(f32::NAN, 45), (f32::INFINITY, 0), (f32::NEG_INFINITY, 3 * k - 1), (f32::NAN, k + 130)];
            for (bad, at) in cases.into_iter().filter(|&(_, at)| at < m * k) {
                let mut x = vec![X::Src::from_f32(0.5); m * k];
                x[at] = X::Src::from_f32(bad);
                let mut out = vec![0xeeu8; lhs_size::<X>(&p, m, k, bl)];
                let e = X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut out).unwrap_err();
                assert_eq!(e, Error::NonFinite { buffer: Buffer::Lhs, index: at }, "k {k}");
                assert!(out.iter().all(|&b| b == 0xee), "nothing written");
            }
        }
    }
}

pub fn clamp_ranges<X: Fixture>() {
    let (m, n) = (9, 17);
    let mut rng = Rng(5);
    let mut report = TierReport::default();
    for p in all_packings::<X>() {
        let bl = *X::BLS.last().unwrap();
        let k = if bl == 0 { 64 } else { 2 * bl };
        let (lhs, rhs) = random_problem::<X>(&mut rng, &p, (m, n, k, bl), None);
        let scalar = scalar_kernel::<X>(&p);
        let free = run_guarded(&scalar, &lhs, &rhs, &MatmulArgs::new(m, n, k).with_block_len(bl));
        for (lo, hi) in [(-f32::MAX, f32::MAX), (-0.25, 0.25), (0.0, 0.0), (0.1, 0.1000001), (f32::NEG_INFINITY, 0.0)] {
            let args = MatmulArgs::new(m, n, k).with_block_len(bl).with_clamp(Clamp::new(lo, hi).unwrap());
            check_tiers_against_scalar::<X::F>(&p, &lhs, &rhs, &args, &mut report);
            let clamped = run_guarded(&scalar, &lhs, &rhs, &args);
            // 16-bit outputs: clamping in f32 and then rounding equals rounding and then clamping
            // with the rounded bounds (docs/formats.md, §Clamp).
            let round = |v: f32| <X::F as Family>::Dst::from_f32(v).to_f32();
            for (c, f) in clamped.iter().zip(&free) {
                let want = <X::F as Family>::Dst::from_f32(f.to_f32().max(round(lo)).min(round(hi)));
                assert_eq!(c.to_bits32(), want.to_bits32());
            }
        }
    }
}

/// Packed operands at odd byte addresses (1, 3, 7 bytes past an aligned start): every kernel
/// of every tier reads them as bytes and gives the bits it gives on aligned buffers. Packed
/// buffers carry no alignment promise (they are `&[u8]`), so no tier may load them through a
/// wider typed pointer.
pub fn packed_operands_at_odd_addresses<X: Fixture>() {
    let (m, n) = (7, 13);
    let mut rng = Rng(31);
    for p in all_packings::<X>() {
        let bl = X::BLS[0];
        let k = if bl == 0 { depth::<X>(70) } else { 2 * bl };
        let (lhs, rhs) = random_problem::<X>(&mut rng, &p, (m, n, k, bl), None);
        let args = MatmulArgs::new(m, n, k).with_block_len(bl);
        for kernel in kernels_of::<X::F>(&p, &mut TierReport::default()) {
            let want = run_guarded(&kernel, &lhs, &rhs, &args);
            for shift in [1usize, 3, 7] {
                // u64 storage: the copies start `shift` bytes past an 8-byte boundary.
                let mut lhs_buf = vec![0u64; (lhs.len() + shift).div_ceil(8)];
                let mut rhs_buf = vec![0u64; (rhs.len() + shift).div_ceil(8)];
                // SAFETY: plain bytes of the u64 buffers, which outlive the views.
                let (lhs_bytes, rhs_bytes) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(lhs_buf.as_mut_ptr().cast::<u8>(), lhs_buf.len() * 8),
                        std::slice::from_raw_parts_mut(rhs_buf.as_mut_ptr().cast::<u8>(), rhs_buf.len() * 8),
                    )
                };
                let lhs_odd = &mut lhs_bytes[shift..shift + lhs.len()];
                lhs_odd.copy_from_slice(&lhs);
                let rhs_odd = &mut rhs_bytes[shift..shift + rhs.len()];
                rhs_odd.copy_from_slice(&rhs);
                assert_eq!(lhs_odd.as_ptr() as usize % 8, shift);
                // Straight from the odd addresses (`run_guarded` would copy them).
                let mut got = vec![canary::<<X::F as Family>::Dst>(); m * n];
                kernel.run(lhs_odd, rhs_odd, &mut got, &args).unwrap();
                assert_bits_eq(&got, &want, &format!("{} operands at +{shift}", kernel.name()));
            }
        }
    }
}

pub fn split_execution_matches_one_call<X: Fixture>() {
    let (m, n) = (21, 40);
    let mut rng = Rng(9);
    for p in all_packings::<X>() {
        let bl = X::BLS[0];
        let k = if bl == 0 { 96 } else { 3 * bl };
        let (lhs, rhs) = random_problem::<X>(&mut rng, &p, (m, n, k, bl), None);
        let args = MatmulArgs::new(m, n, k).with_block_len(bl);
        for kernel in kernels_of::<X::F>(&p, &mut TierReport::default()) {
            let whole = run_guarded(&kernel, &lhs, &rhs, &args);
            for mc in (0..=m).step_by(kernel.m_step()) {
                assert_bits_eq(&run_split(&kernel, &lhs, &rhs, &args, mc, n / 2), &whole, kernel.name());
            }
            for nc in (0..=n).step_by(kernel.n_step()) {
                assert_bits_eq(&run_split(&kernel, &lhs, &rhs, &args, m / 2, nc), &whole, kernel.name());
            }
            // Tile by tile, as fine a grid as the kernel allows.
            let mut dst = Canary::new(m * n, canary::<<X::F as Family>::Dst>());
            for m_idx in (0..m).step_by(kernel.m_step()) {
                for n_idx in (0..n).step_by(kernel.n_step()) {
                    let (mm, nn) = (kernel.m_step().min(m - m_idx), kernel.n_step().min(n - n_idx));
                    let off = kernel.dst_offset(m_idx, n_idx, n).unwrap();
                    let a = args.with_rect(m_idx, n_idx, mm, nn);
                    kernel.run(&lhs, &rhs, &mut dst.inner()[off..], &a).unwrap();
                }
            }
            dst.check(kernel.name());
            assert_bits_eq(dst.get(), &whole, &format!("{} tile by tile", kernel.name()));
        }
    }
}

/// A small problem on the scalar kernel of the preferred packing: `(kernel, lhs, rhs, args)`
/// with m = 5, n = 12 (dst needs 60 elements).
pub fn small<X: Fixture>() -> (Kernel<X::F>, Vec<u8>, Vec<u8>, XArgs<X>) {
    let kernel = X::F::kernels()
        .iter()
        .rev()
        .find(|k| k.tier() == Tier::Scalar && packing_of_desc(*k).mr > 1)
        .unwrap()
        .resolve(&CpuFeatures::NONE)
        .unwrap();
    let bl = *X::BLS.last().unwrap();
    let (m, n, k) = (5, 12, if bl == 0 { depth::<X>(40) } else { bl });
    let (lhs, rhs) = random_problem::<X>(&mut Rng(1), &kernel.packing(), (m, n, k, bl), None);
    (kernel, lhs, rhs, MatmulArgs::new(m, n, k).with_block_len(bl))
}

pub fn run_err<F: Family>(kernel: &Kernel<F>, lhs: &[F::Lhs], rhs: &[u8], dst_len: usize, args: &Args<F>) -> Error {
    let mut dst = vec![F::Dst::default(); dst_len];
    kernel.run(lhs, rhs, &mut dst, args).unwrap_err()
}

pub fn rejects_k_zero<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    assert_eq!(
        run_err(&kr, &lhs, &rhs, 60, &MatmulArgs::new(a.m, a.n, 0).with_block_len(a.bl)),
        Error::ZeroDim { dim: Dim::K }
    );
}

pub fn rejects_bad_block_len<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    if X::BLS == [0] {
        let e = run_err(&kr, &lhs, &rhs, 60, &a.with_block_len(32));
        assert_eq!(e, Error::Unsupported { param: Param::BlockLen, value: 32 });
    } else {
        assert_eq!(run_err(&kr, &lhs, &rhs, 60, &a.with_block_len(0)), Error::ZeroDim { dim: Dim::BlockLen });
        let e = run_err(&kr, &lhs, &rhs, 60, &a.with_block_len(48));
        assert_eq!(e, Error::NotMultiple { dim: Dim::BlockLen, value: 48, multiple_of: 32 });
        let e = run_err(&kr, &lhs, &rhs, 60, &MatmulArgs::new(a.m, a.n, a.k + 32).with_block_len(64));
        assert!(matches!(e, Error::NotMultiple { dim: Dim::K, .. }), "{e}");
    }
}

/// The size and offset queries reject every `k` / `bl` that `run` rejects, with run's error
/// (they once accepted any `bl`, and `k = 0`, for the per-channel families).
pub fn size_queries_reject_what_run_rejects<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let mut bad: Vec<(usize, usize)> = if X::BLS == [0] {
        vec![(0, 0), (a.k, 32), (a.k, 5), (a.k, usize::MAX)]
    } else {
        vec![(0, a.bl), (0, 0), (a.k, 0), (a.k, 48), (a.k + 32, 64), (a.k, usize::MAX)]
    };
    if <X::F as Family>::K_MULTIPLE > 1 {
        // A depth off the family's granule, with and without a block length.
        bad.extend([(a.k + 1, 0), (a.k + 1, 32)]);
    }
    for &(k, bl) in &bad {
        let want = run_err(&kr, &lhs, &rhs, 60, &MatmulArgs::new(a.m, a.n, k).with_block_len(bl));
        assert!(!matches!(want, Error::BufferTooShort { .. }), "k {k} bl {bl}: run got as far as {want}");
        for d in X::F::kernels() {
            let kernel = d.resolve(&any_cpu()).unwrap();
            let name = d.name();
            assert_eq!(kernel.lhs_packed_size(4, k, bl), Err(want), "{name} lhs_packed_size k {k} bl {bl}");
            assert_eq!(kernel.rhs_packed_size(4, k, bl), Err(want), "{name} rhs_packed_size k {k} bl {bl}");
            assert_eq!(kernel.lhs_packed_offset(0, k, bl), Err(want), "{name} lhs_packed_offset k {k} bl {bl}");
            assert_eq!(kernel.rhs_packed_offset(0, k, bl), Err(want), "{name} rhs_packed_offset k {k} bl {bl}");
        }
    }
}

pub fn rejects_misaligned_m_idx<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let e = run_err(&kr, &lhs, &rhs, 60, &a.with_rect(2, 0, 3, 12));
    assert_eq!(e, Error::MisalignedStart { dim: Dim::MIdx, value: 2, step: kr.m_step() });
}

pub fn rejects_misaligned_n_idx<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let e = run_err(&kr, &lhs, &rhs, 60, &a.with_rect(0, 2, 5, 8));
    assert_eq!(e, Error::MisalignedStart { dim: Dim::NIdx, value: 2, step: kr.n_step() });
}

pub fn offsets_reject_misaligned_starts<X: Fixture>() {
    let (kr, _, _, a) = small::<X>();
    assert!(matches!(kr.lhs_packed_offset(2, a.k, a.bl), Err(Error::MisalignedStart { dim: Dim::MIdx, .. })));
    assert!(matches!(kr.rhs_packed_offset(2, a.k, a.bl), Err(Error::MisalignedStart { dim: Dim::NIdx, .. })));
    assert!(matches!(kr.dst_offset(4, 3, 64), Err(Error::MisalignedStart { dim: Dim::NIdx, .. })));
    assert!(matches!(kr.dst_offset(2, 0, 64), Err(Error::MisalignedStart { dim: Dim::MIdx, .. })));
}

pub fn rejects_small_dst_stride<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let e = run_err(&kr, &lhs, &rhs, 60, &a.with_dst_stride(11));
    assert_eq!(e, Error::StrideTooSmall { stride: Stride::Dst, given: 11, needed: 12 });
}

pub fn rejects_short_lhs_packed<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let e = run_err(&kr, &lhs[..lhs.len() - 1], &rhs, 60, &a);
    assert_eq!(e, Error::BufferTooShort { buffer: Buffer::LhsPacked, given: lhs.len() - 1, needed: lhs.len() });
}

pub fn rejects_short_rhs_packed<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let e = run_err(&kr, &lhs, &rhs[..rhs.len() - 1], 60, &a);
    assert_eq!(e, Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs.len() - 1, needed: rhs.len() });
}

pub fn rejects_short_dst<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    assert_eq!(run_err(&kr, &lhs, &rhs, 59, &a), Error::BufferTooShort { buffer: Buffer::Dst, given: 59, needed: 60 });
}

/// The packers write exactly their packed size: nothing outside (canaries), every byte of
/// full tiles, and, in a partial last LHS tile, nothing for the missing rows.
pub fn packers_write_only_inside_their_buffers<X: Fixture>() {
    let mut rng = Rng(21);
    for p in all_packings::<X>() {
        let bl = X::BLS[0];
        let k = if bl == 0 { depth::<X>(45) } else { 2 * bl };
        for m in [p.mr, p.mr + 1, 2 * p.mr + p.mr.saturating_sub(1)] {
            let x: Vec<X::Src> = convert(&(0..m * k).map(|_| rng.f32(-1.0, 1.0)).collect::<Vec<_>>());
            let size = lhs_size::<X>(&p, m, k, bl);
            let mut outs = Vec::new();
            for fill in [0x00u8, 0xff] {
                let mut buf = Canary::new(size, fill);
                X::pack_lhs(&p, m, k, bl, 0, &x, k, buf.inner()).unwrap();
                buf.check("LHS packer");
                outs.push(buf.get().to_vec());
            }
            let unwritten = outs[0].iter().zip(&outs[1]).filter(|(a, b)| a != b).count();
            let row_bytes = size / m.div_ceil(p.mr) / p.mr;
            assert_eq!(unwritten, (m.div_ceil(p.mr) * p.mr - m) * row_bytes, "{p:?} m = {m}");
        }
        // RHS: every byte written (two fills give the same bytes), nothing outside.
        let n = p.nr + 1;
        let size = scalar_kernel::<X>(&p).rhs_packed_size(n, k, bl).unwrap();
        let mut outs = Vec::new();
        for fill in [0x00u8, 0xff] {
            let mut buf = Canary::new(size, fill);
            X::pack_filled_rhs_into(&p, n, k, bl, 0x3c, buf.inner());
            buf.check("RHS packer");
            outs.push(buf.get().to_vec());
        }
        assert_eq!(outs[0], outs[1], "{p:?}: RHS packer left bytes unwritten");
    }
}

pub fn rejects_rectangle_past_the_packed_buffers<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let (ms, ns) = (kr.m_step(), kr.n_step());
    // A rectangle starting at the last row tile and reaching past the packed rows.
    let e = run_err(&kr, &lhs, &rhs, 1000, &a.with_rect(ms, 0, 8 + ms, 12));
    assert!(matches!(e, Error::BufferTooShort { buffer: Buffer::LhsPacked, .. }), "{e}");
    let e = run_err(&kr, &lhs, &rhs, 1000, &a.with_rect(0, ns, 5, 12 + ns).with_dst_stride(64));
    assert!(matches!(e, Error::BufferTooShort { buffer: Buffer::RhsPacked, .. }), "{e}");
}

pub fn empty_rectangle_is_a_no_op<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    let fill = <X::F as Family>::Dst::from_f32(1.5);
    let mut dst = vec![fill; 4];
    kr.run(&lhs, &rhs, &mut dst, &a.with_rect(0, 0, 0, 12)).unwrap();
    kr.run(&lhs, &rhs, &mut dst, &a.with_rect(0, 0, 5, 0)).unwrap();
    assert_eq!(dst, [fill; 4]);
}

pub fn rejects_sizes_that_overflow<X: Fixture>() {
    let (kr, lhs, rhs, a) = small::<X>();
    assert_eq!(kr.lhs_packed_size(usize::MAX, a.k, a.bl), Err(Error::SizeOverflow));
    assert_eq!(kr.rhs_packed_size(usize::MAX, a.k, a.bl), Err(Error::SizeOverflow));
    assert_eq!(run_err(&kr, &lhs, &rhs, 60, &a.with_dst_stride(usize::MAX)), Error::SizeOverflow);
}

pub fn rejects_kernel_on_cpu_without_its_tier<X: Fixture>() {
    for d in X::F::kernels().iter().filter(|k| k.tier() != Tier::Scalar) {
        assert_eq!(
            d.resolve(&CpuFeatures::NONE).unwrap_err(),
            Error::UnsupportedCpu { needs: Feature::Neon },
            "{}",
            d.name()
        );
        let only_neon = cpu().without(Feature::Dotprod).without(Feature::I8mm);
        if let Some(f) = d.tier().required_feature().filter(|f| *f != Feature::Neon)
            && only_neon.has(Feature::Neon)
        {
            assert_eq!(d.resolve(&only_neon).unwrap_err(), Error::UnsupportedCpu { needs: f }, "{}", d.name());
        }
        // A kernel that needs a feature beyond its tier's (BFCVTN: FEAT_BF16) refuses a CPU that
        // has the tier but not that feature.
        for extra in d.requires().iter().filter(|f| !d.tier().features().has(*f)) {
            let without = cpu().without(extra);
            if without.features().contains(d.tier().features()) {
                assert_eq!(d.resolve(&without).unwrap_err(), Error::UnsupportedCpu { needs: extra }, "{}", d.name());
            }
        }
    }
}

pub fn select_follows_the_cpu<X: Fixture>(select: fn(&CpuFeatures, usize) -> Kernel<X::F>) {
    let cpu = cpu();
    let decode = select(&cpu, 1);
    let prefill = select(&cpu, 64);
    assert!(decode.descriptor().is_available(&cpu) && prefill.descriptor().is_available(&cpu));
    assert_eq!(decode.packing().mr, 1);
    assert!(prefill.packing().mr > 1);
    // Same RHS packing: one packed weight matrix serves both.
    assert_eq!(decode.rhs_packing(), prefill.rhs_packing());
    println!("cpu {cpu}: decode {}, prefill {}", decode.name(), prefill.name());
    let best = X::F::kernels().iter().filter(|k| k.is_available(&cpu)).map(|k| k.tier()).max().unwrap();
    assert_eq!(prefill.tier(), best);
    assert_eq!(select(&CpuFeatures::NONE, 64).tier(), Tier::Scalar);
}

/// Defines the generic tests in the calling module for fixture type `$fx`; `$select` is the
/// family's `select` function.
macro_rules! family_suite {
    ($fx:ty, $select:path) => {
        use $crate::common::suite;
        #[test]
        fn golden_packed_bytes_sizes_and_offsets() {
            suite::golden_packed_bytes::<$fx>();
        }
        #[test]
        fn golden_outputs_in_every_tier() {
            suite::golden_outputs_in_every_tier::<$fx>();
        }
        #[test]
        fn golden_kernel_offsets() {
            suite::golden_kernel_offsets::<$fx>();
        }
        #[test]
        fn lhs_packing_split_at_any_row() {
            suite::lhs_packing_split_at_any_row::<$fx>();
        }
        #[test]
        fn every_tier_matches_scalar_on_shapes_with_tails() {
            suite::every_tier_matches_scalar_on_shapes_with_tails::<$fx>();
        }
        #[test]
        fn extreme_products_over_long_k() {
            suite::extreme_products_over_long_k::<$fx>();
        }
        #[test]
        fn packed_operands_at_odd_addresses() {
            suite::packed_operands_at_odd_addresses::<$fx>();
        }
        #[test]
        fn huge_block_len_agrees_in_every_tier() {
            suite::huge_block_len_agrees_in_every_tier::<$fx>();
        }
        #[test]
        fn non_finite_packed_values_give_the_same_bits_in_every_tier() {
            suite::non_finite_packed_values_give_the_same_bits_in_every_tier::<$fx>();
        }
        #[test]
        fn non_finite_activations_rejected_before_any_write() {
            suite::non_finite_activations_rejected_before_any_write::<$fx>();
        }
        #[test]
        fn clamp_ranges() {
            suite::clamp_ranges::<$fx>();
        }
        #[test]
        fn split_execution_matches_one_call() {
            suite::split_execution_matches_one_call::<$fx>();
        }
        #[test]
        fn rejects_k_zero() {
            suite::rejects_k_zero::<$fx>();
        }
        #[test]
        fn rejects_bad_block_len() {
            suite::rejects_bad_block_len::<$fx>();
        }
        #[test]
        fn size_queries_reject_what_run_rejects() {
            suite::size_queries_reject_what_run_rejects::<$fx>();
        }
        #[test]
        fn rejects_misaligned_m_idx() {
            suite::rejects_misaligned_m_idx::<$fx>();
        }
        #[test]
        fn rejects_misaligned_n_idx() {
            suite::rejects_misaligned_n_idx::<$fx>();
        }
        #[test]
        fn offsets_reject_misaligned_starts() {
            suite::offsets_reject_misaligned_starts::<$fx>();
        }
        #[test]
        fn rejects_small_dst_stride() {
            suite::rejects_small_dst_stride::<$fx>();
        }
        #[test]
        fn rejects_short_lhs_packed() {
            suite::rejects_short_lhs_packed::<$fx>();
        }
        #[test]
        fn rejects_short_rhs_packed() {
            suite::rejects_short_rhs_packed::<$fx>();
        }
        #[test]
        fn rejects_short_dst() {
            suite::rejects_short_dst::<$fx>();
        }
        #[test]
        fn packers_write_only_inside_their_buffers() {
            suite::packers_write_only_inside_their_buffers::<$fx>();
        }
        #[test]
        fn rejects_rectangle_past_the_packed_buffers() {
            suite::rejects_rectangle_past_the_packed_buffers::<$fx>();
        }
        #[test]
        fn empty_rectangle_is_a_no_op() {
            suite::empty_rectangle_is_a_no_op::<$fx>();
        }
        #[test]
        fn rejects_sizes_that_overflow() {
            suite::rejects_sizes_that_overflow::<$fx>();
        }
        #[test]
        fn rejects_kernel_on_cpu_without_its_tier() {
            suite::rejects_kernel_on_cpu_without_its_tier::<$fx>();
        }
        #[test]
        fn select_follows_the_cpu() {
            suite::select_follows_the_cpu::<$fx>($select);
        }
    };
}
