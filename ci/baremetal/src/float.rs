//! The float families (`qgemm::float`) on bare metal: every kernel against the scalar kernel of
//! its formats (the same packed RHS and LHS, hence the same arithmetic) on [`SHAPES`], and one
//! `op::Linear` call per family in parts on four cores.
//!
//! Inputs mix ordinary values with the edges the float arithmetic must get right on every core:
//! zeros of both signs, values that are bf16/f16 denormals (flushed by BFDOT/BFMMLA, kept by
//! FMLA), and values whose products overflow (f16 infinities; in the bf16 kernels infinite
//! products, and the default NaN where two of opposite signs meet). Every input is finite: the
//! packers and the kernels that read rows in place reject NaN and infinity.

use half::f16;
use qgemm::op::{Linear, Operator, Rect};
use qgemm::rhs::{FloatSource, bf16p12, f16p, f32p};
use qgemm::{
    Clamp, CpuFeatures, Element, Family, Kernel, LhsPacking, MatmulArgs, RhsPacking, Tier, f16_bf16p_bf16p,
    f16_f16_f16p, f32_bf16p_bf16p, f32_f32_f32p,
};
use semihosting::println;

use crate::{
    Buffers, CANARY, CANARY_LEN, MAX_K, MAX_M, MAX_N, McError, Out, Rng, SHAPES, Shape, Tally, measured, multicore,
    shape,
};

/// The multi-core calls: decode and prefill on 128 columns, so that the widest RHS tile (32
/// columns of `f16p32`) still gives one part per core.
const MULTICORE_SHAPES: [Shape; 2] = [shape(1, 128, 64, 0, false), shape(6, 128, 64, 0, true)];
/// Most columns of a float shape (the multi-core calls').
const MAX_FLOAT_N: usize = 128;

/// The raw inputs of the float families: activations and weights in f32 and rounded to f16.
pub struct FloatInputs {
    /// `m x k` activations, dense rows.
    x32: [f32; MAX_M * MAX_K],
    x16: [f16; MAX_M * MAX_K],
    /// `n x k` weights, NxK, dense rows (`n * k` is at most `MAX_N * MAX_K` in every shape).
    w32: [f32; MAX_N * MAX_K],
    w16: [f16; MAX_N * MAX_K],
    /// Per-channel bias.
    bias32: [f32; MAX_FLOAT_N],
    bias16: [f16; MAX_FLOAT_N],
}

impl FloatInputs {
    pub const ZERO: FloatInputs = FloatInputs {
        x32: [0.0; MAX_M * MAX_K],
        x16: [f16::ZERO; MAX_M * MAX_K],
        w32: [0.0; MAX_N * MAX_K],
        w16: [f16::ZERO; MAX_N * MAX_K],
        bias32: [0.0; MAX_FLOAT_N],
        bias16: [f16::ZERO; MAX_FLOAT_N],
    };
}

/// One input value: mostly uniform in (-1, 1), one in 32 each a zero of either sign, a tiny
/// value (a bf16/f16 denormal or zero) or a huge one (past the f16 range: [`f16_of`] clamps it).
fn value(rng: &mut Rng) -> f32 {
    let u = (rng.next_u64() >> 32) as u32;
    let x = (u >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0;
    match u & 31 {
        0 => 0.0,
        1 => -0.0,
        2 => x * 1e-30,
        3 => x * 1e20,
        _ => x,
    }
}

/// `x` rounded to f16, a value past the f16 range clamped to the largest finite one.
fn f16_of(x: f32) -> f16 {
    f16::from_f32(x.clamp(-f16::MAX.to_f32(), f16::MAX.to_f32()))
}

fn fill(fi: &mut FloatInputs, s: &Shape, seed: u64) {
    let mut rng = Rng(seed);
    for (x, h) in fi.x32[..s.m * s.k].iter_mut().zip(&mut fi.x16) {
        *x = value(&mut rng);
        *h = f16_of(*x);
    }
    for (w, h) in fi.w32[..s.n * s.k].iter_mut().zip(&mut fi.w16) {
        *w = value(&mut rng);
        *h = f16_of(*w);
    }
    for (b, h) in fi.bias32[..s.n].iter_mut().zip(&mut fi.bias16) {
        *b = rng.f32(-1.0, 1.0);
        *h = f16::from_f32(*b);
    }
}

/// Activations, weights and bias of a family, in its source and bias types.
type Sources<'a, S, B> = (&'a [S], &'a [S], &'a [B]);

/// What the check needs from a float family: its inputs, packers and layer.
pub trait FloatChecked: Operator<Dst: Out> {
    /// The bias element type of the packed weights.
    type Bias: Element;
    /// The activations, weights (NxK) and bias in the family's source types.
    fn inputs(fi: &FloatInputs) -> Sources<'_, Self::Src, Self::Bias>;
    /// The kernel's LHS for `m x k` rows `x`: `x` itself, or packed as `lhs` into `scratch`.
    fn lhs<'a>(
        lhs: LhsPacking,
        m: usize,
        k: usize,
        x: &'a [Self::Src],
        scratch: &'a mut [u8],
    ) -> qgemm::Result<&'a [Self::Lhs]>;
    /// The family's `select`: the best kernel on `cpu` of its preferred formats.
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self>;
    /// Packs `n x k` weights `w` with `bias` into `rhs` (a packing of this family).
    fn pack_rhs(
        rhs: &RhsPacking,
        n: usize,
        k: usize,
        w: &FloatSource<'_, Self::Src>,
        bias: &[Self::Bias],
        out: &mut [u8],
    ) -> qgemm::Result<()>;
    /// The family's layer of `n x k` weights `w` and `bias`, packed into `buf`.
    fn layer<'w>(
        n: usize,
        k: usize,
        w: &FloatSource<'_, Self::Src>,
        bias: &[Self::Bias],
        buf: &'w mut [u8],
    ) -> qgemm::Result<Linear<'w, Self>>;
}

/// `FloatChecked` for a family: its inputs (fields of [`FloatInputs`]), how its kernels' LHS is
/// made from the rows and how weights are packed into one of its RHS packings.
macro_rules! float_checked {
    ($module:ident::$fam:ident, $bias_t:ty, $x:ident, $w:ident, $b:ident,
     lhs: |$lf:pat_param, $m:pat_param, $k:pat_param, $rows:ident, $scratch:pat_param| $lhs:expr,
     rhs: |$rf:pat_param, $n:ident, $kk:ident, $src:ident, $bias:ident, $out:ident| $rhs:expr $(,)?) => {
        impl FloatChecked for $module::$fam {
            type Bias = $bias_t;

            fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
                $module::select(cpu, m)
            }

            fn inputs(fi: &FloatInputs) -> Sources<'_, Self::Src, Self::Bias> {
                (&fi.$x, &fi.$w, &fi.$b)
            }

            fn lhs<'a>(
                $lf: LhsPacking,
                $m: usize,
                $k: usize,
                $rows: &'a [Self::Src],
                $scratch: &'a mut [u8],
            ) -> qgemm::Result<&'a [Self::Lhs]> {
                $lhs
            }

            fn pack_rhs(
                $rf: &RhsPacking,
                $n: usize,
                $kk: usize,
                $src: &FloatSource<'_, Self::Src>,
                $bias: &[Self::Bias],
                $out: &mut [u8],
            ) -> qgemm::Result<()> {
                $rhs
            }

            fn layer<'w>(
                n: usize,
                k: usize,
                w: &FloatSource<'_, Self::Src>,
                bias: &[Self::Bias],
                buf: &'w mut [u8],
            ) -> qgemm::Result<Linear<'w, Self>> {
                Linear::<Self>::pack(n, k, w, Some(bias), buf)
            }
        }
    };
}

/// The bf16 LHS of `rows` in packing `lf` (a packed-LHS kernel's), packed into `scratch`.
fn bf16_lhs<'a, T: Element>(
    lf: LhsPacking,
    m: usize,
    k: usize,
    rows: &[T],
    scratch: &'a mut [u8],
) -> qgemm::Result<&'a [u8]> {
    qgemm::lhs::bf16p::pack(&lf, m, k, rows, k, scratch)?;
    Ok(&scratch[..lf.packed_size(m, k, 0)?])
}

float_checked!(f32_f32_f32p::F32F32F32p, f32, x32, w32, bias32,
    lhs: |_, _, _, rows, _| Ok(rows),
    rhs: |rf, n, k, src, bias, out| f32p::pack(rf, n, k, src, Some(bias), out));
float_checked!(f16_f16_f16p::F16F16F16p, f16, x16, w16, bias16,
    lhs: |_, _, _, rows, _| Ok(rows),
    rhs: |rf, n, k, src, bias, out| f16p::pack(rf, n, k, src, Some(bias), out));
float_checked!(f32_bf16p_bf16p::F32Bf16pBf16p, f32, x32, w32, bias32,
    lhs: |lf, m, k, rows, scratch| bf16_lhs(lf, m, k, rows, scratch),
    rhs: |_, n, k, src, bias, out| bf16p12::pack_b32(n, k, src, Some(bias), out));
float_checked!(f16_bf16p_bf16p::F16Bf16pBf16p, f16, x16, w16, bias16,
    lhs: |lf, m, k, rows, scratch| bf16_lhs(lf, m, k, rows, scratch),
    rhs: |_, n, k, src, bias, out| bf16p12::pack_b16(n, k, src, Some(bias), out));

/// Arguments of one measured kernel call (plain `fn` pointers cannot capture).
struct FloatCall<'a, F: Family> {
    kernel: &'a Kernel<F>,
    lhs: &'a [F::Lhs],
    rhs: &'a [u8],
    dst: &'a mut [F::Dst],
    args: MatmulArgs<F::Params>,
}

fn call_run<F: Family>(c: &mut FloatCall<'_, F>) -> qgemm::Result<()> {
    c.kernel.run(c.lhs, c.rhs, c.dst, &c.args)
}

/// What one kernel did on one shape.
enum Outcome {
    Agree,
    /// Index of the first differing element, got bits, want bits.
    Differ(usize, u32, u32),
    /// The output canary past `m * n` was overwritten.
    Overrun,
}

/// Runs `kernel` and `scalar` (same formats) on `s` and compares the outputs bit for bit.
fn check_shape<F: FloatChecked>(
    kernel: &Kernel<F>,
    scalar: &Kernel<F>,
    s: &Shape,
    seed: u64,
    b: &mut Buffers,
    t: &mut Tally,
) -> Result<Outcome, qgemm::Error> {
    let (m, n, k) = (s.m, s.n, s.k);
    let mn = m * n;
    fill(&mut b.float, s, seed);
    let (x, w, bias) = F::inputs(&b.float);
    F::pack_rhs(&kernel.rhs_packing(), n, k, &FloatSource::nxk(&w[..n * k], k), &bias[..n], &mut b.rhs_packed)?;
    let lhs = F::lhs(kernel.lhs_packing(), m, k, &x[..m * k], &mut b.lhs_packed)?;
    let clamp = if s.tight_clamp { Clamp::new(-0.25, 0.3)? } else { Clamp::NONE };
    let args = MatmulArgs::new(m, n, k).with_clamp(clamp);
    let dst = F::Dst::buffer(&mut b.dst);
    scalar.run(lhs, &b.rhs_packed, &mut dst[..mn], &args)?;
    for (r, v) in b.reference[..mn].iter_mut().zip(dst.iter()) {
        *r = v.to_bits32();
    }
    dst.fill(F::Dst::from_bits32(CANARY));
    let mut c = FloatCall { kernel, lhs, rhs: &b.rhs_packed, dst: &mut dst[..mn + CANARY_LEN], args };
    let (r, used) = measured(call_run::<F>, &mut c);
    r?;
    let slot = &mut t.run_stack[Tier::ALL.iter().position(|&x| x == kernel.tier()).unwrap_or(0)];
    if used > slot.0 {
        *slot = (used, kernel.name());
    }
    let canary = F::Dst::from_bits32(CANARY).to_bits32();
    if dst[mn..mn + CANARY_LEN].iter().any(|v| v.to_bits32() != canary) {
        return Ok(Outcome::Overrun);
    }
    Ok(match (0..mn).find(|&i| dst[i].to_bits32() != b.reference[i]) {
        Some(i) => Outcome::Differ(i, dst[i].to_bits32(), b.reference[i]),
        None => Outcome::Agree,
    })
}

/// Runs every kernel of float family `F` on every shape against the scalar kernel of its
/// formats, and checks `select`.
pub fn check_family<F: FloatChecked>(cpu: CpuFeatures, b: &mut Buffers, t: &mut Tally) {
    println!("family {}: {} kernels", F::NAME, F::kernels().len());
    let before = (t.ran, t.skipped, t.failed);
    for d in F::kernels() {
        t.kernels += 1;
        let (tier, name) = (d.tier().name(), d.name());
        let kernel = match d.resolve(&cpu) {
            Ok(k) => k,
            Err(e) => {
                t.skipped += 1;
                println!("  skipped  {tier:8} {name} ({e})");
                continue;
            }
        };
        let scalar = F::kernels().iter().filter(|s| s.tier() == Tier::Scalar).find_map(|s| {
            let s = s.resolve(&CpuFeatures::NONE).ok()?;
            (s.lhs_packing() == kernel.lhs_packing() && s.rhs_packing() == kernel.rhs_packing()).then_some(s)
        });
        let Some(scalar) = scalar else {
            t.failed += 1;
            println!("  FAIL     {tier:8} {name}: no scalar kernel with its formats");
            continue;
        };
        t.ran += 1;
        let mut bad = false;
        for (i, s) in SHAPES.iter().enumerate() {
            let (m, n, k) = (s.m, s.n, s.k);
            match check_shape(&kernel, &scalar, s, 0xf10a_0000 + i as u64, b, t) {
                Ok(Outcome::Agree) => continue,
                Ok(Outcome::Differ(at, got, want)) => println!(
                    "  FAIL     {tier:8} {name} m={m} n={n} k={k}: element {at} = {got:#010x}, scalar {want:#010x}"
                ),
                Ok(Outcome::Overrun) => println!("  FAIL     {tier:8} {name} m={m} n={n} k={k}: wrote past the output"),
                Err(e) => println!("  FAIL     {tier:8} {name} m={m} n={n} k={k}: {e}"),
            }
            bad = true;
        }
        if bad {
            t.failed += 1;
        } else if kernel.tier() == Tier::Scalar {
            println!("  ran      {tier:8} {name} ({} shapes; reference of its formats)", SHAPES.len());
        } else {
            println!("  agree    {tier:8} {name} ({} shapes, bit-exact vs {})", SHAPES.len(), scalar.name());
        }
    }
    // `select` must pick a kernel the CPU has, of the best tier among the available kernels of
    // the family's preferred formats (those of `Linear`).
    let k = F::select(&cpu, 16);
    let best = F::kernels()
        .iter()
        .filter_map(|c| c.resolve(&cpu).ok())
        .filter(|c| c.rhs_packing() == F::PREFERRED_RHS && F::PREFERRED_LHS.is_none_or(|l| c.lhs_packing() == l))
        .map(|c| c.tier())
        .max();
    let ok = k.descriptor().is_available(&cpu) && best == Some(k.tier());
    if !ok {
        t.failed += 1;
    }
    let verdict = if ok { "" } else { "  FAIL: not the best available tier" };
    println!("  select -> {} [{}]{verdict}", k.name(), k.tier().name());
    crate::log_family(F::NAME, F::kernels().len(), before, t);
}

/// One `Linear` call of `F` on `s` in [`multicore::CORES`] parts, part `i` on core `i`,
/// against the same call on this core.
fn multicore_call<F: FloatChecked>(cpu: CpuFeatures, s: &Shape, seed: u64, b: &mut Buffers) -> Result<(), McError> {
    fill(&mut b.float, s, seed);
    let (m, n, k, mn) = (s.m, s.n, s.k, s.m * s.n);
    let (x, w, bias) = F::inputs(&b.float);
    let layer = F::layer(n, k, &FloatSource::nxk(&w[..n * k], k), &bias[..n], &mut b.rhs_packed)?;
    let clamp = if s.tight_clamp { Clamp::new(-0.25, 0.3)? } else { Clamp::NONE };
    let call = layer.prepare(&cpu, m, &x[..m * k], &mut b.lhs_packed)?.with_clamp(clamp);
    let dst = F::Dst::buffer(&mut b.dst);
    call.run(&mut dst[..mn])?;
    for (r, v) in b.reference[..mn].iter_mut().zip(dst.iter()) {
        *r = v.to_bits32();
    }
    dst.fill(F::Dst::from_bits32(CANARY));
    let parts = call.parts(&mut dst[..mn], multicore::CORES)?;
    if parts.len() != multicore::CORES {
        return Err(McError::Parts(parts.len()));
    }
    let rects: [Rect; multicore::CORES] = core::array::from_fn(|i| parts[i].rect());
    crate::check_cores(multicore::run_on_cores(parts))?;
    crate::check_assembled(F::NAME, m, call.kernel().name(), &rects, dst, &b.reference[..mn])
}

/// [`multicore_call`] on every shape of [`MULTICORE_SHAPES`]; returns the number of failed calls.
pub fn multicore_family<F: FloatChecked>(cpu: CpuFeatures, b: &mut Buffers) -> usize {
    let mut failed = 0;
    for (i, s) in MULTICORE_SHAPES.iter().enumerate() {
        if let Err(e) = multicore_call::<F>(cpu, s, 0xf1c0_0000 + i as u64, b) {
            println!("multicore {} m={}: FAIL: {e}", F::NAME, s.m);
            defmt::error!("multicore {=str} m={=usize}: FAIL: {}", F::NAME, s.m, e);
            failed += 1;
        }
    }
    failed
}
