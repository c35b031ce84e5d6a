//! The operator layer (`qgemm::op`): for every family, `Linear::run` equals the catalogue kernel
//! it picks run by hand and the scalar reference, bit for bit, on every tier the CPU has; any
//! split of the output (sequential parts in any order, `run_parallel` on threads) gives the
//! same bits; the family `pack` functions give the packer's bytes; bad calls are rejected.

#[allow(unused_macros)] // family_suite!
mod common;

#[path = "../examples/support/families.rs"]
#[allow(dead_code)]
mod families;

use common::Rng;
use families::{
    Bf16Qsi4c32p, Bf16Qsi4cxp, F16Qai4c32p, F16Qsi4cxp, F16Qsi8cxp, Fam, Q40, Qai4c32p, Qsi4c32p, Qsi4cxp, Qsi8cxp,
    Qsu2cxp, ScaleStyle, WeightStyle, args_with_lut, cycle_lut, to_src,
};
use qgemm::error::{Buffer, Dim, Param};
use qgemm::op::{Linear, Operator};
use qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use qgemm::rhs::Layout;
use qgemm::rhs::qsu2cxp::DEFAULT_LUT;
use qgemm::{Clamp, CpuFeatures, Descriptor, Element, Error, Family, Feature, Kernel, MatmulArgs, Tier};

/// A layer with the look-up table of its raw weights: `Linear::with_lut` for the 2-bit family;
/// the other families have no table (theirs is the default, which their kernels ignore).
trait WithTable: Operator {
    fn with_table(layer: Linear<'_, Self>, lut: [i32; 4]) -> Linear<'_, Self> {
        assert_eq!(lut, DEFAULT_LUT, "{}", Self::NAME);
        layer
    }
}

impl WithTable for qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp {}
impl WithTable for qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p {}
impl WithTable for qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p {}
impl WithTable for qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp {}
impl WithTable for qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp {}
impl WithTable for qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp {}
impl WithTable for qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp {}
impl WithTable for qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p {}
impl WithTable for qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p {}
impl WithTable for qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p {}

impl WithTable for Qai8dxpQsu2cxp {
    fn with_table(layer: Linear<'_, Self>, lut: [i32; 4]) -> Linear<'_, Self> {
        let layer = layer.with_lut(lut).unwrap();
        assert_eq!(layer.lut(), lut);
        layer
    }
}

/// The CPUs to compare: the detected one and the same without i8mm, without dotprod, without
/// NEON (each lower tier the machine has).
fn cpus() -> Vec<CpuFeatures> {
    let cpu = CpuFeatures::detect();
    let mut v = vec![cpu];
    for f in [Feature::I8mm, Feature::Dotprod, Feature::Neon] {
        let last = *v.last().unwrap();
        let lower = last.without(f);
        if lower != last {
            v.push(lower);
        }
    }
    v
}

/// Raw weights for `n x k`, packed with the operator's packing, and their look-up table (the
/// 2-bit family's; the default for the others).
/// (`i`: the case number, which picks the table, `families::cycle_lut`).
fn packed<X: Fam>(rng: &mut Rng, n: usize, k: usize, bl: usize, i: usize) -> (Vec<u8>, [i32; 4])
where
    X::F: Operator,
{
    let mut next = || rng.next_u64();
    let mut raw = X::random_rhs(&mut next, n, k, bl, Layout::NxK, WeightStyle::Random, ScaleStyle::Normal, true);
    cycle_lut::<X>(&mut raw, i);
    let p = <X::F as Family>::PREFERRED_RHS.packing();
    let mut out = vec![0u8; X::rhs_packed_size(&p, n, k, bl).unwrap()];
    X::pack_rhs(&p, n, k, bl, &raw.view(), &mut out).unwrap();
    (out, raw.lut)
}

/// `kernel` run by hand on activations packed by the family's packer, with the weights' table
/// `lut`: the reference output.
fn by_hand<X: Fam>(
    kernel: &Kernel<X::F>,
    x: &[X::Src],
    w: &[u8],
    (m, n, k, bl): (usize, usize, usize, usize),
    lut: [i32; 4],
) -> Vec<<X::F as Family>::Dst> {
    let p = kernel.packing();
    let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, bl).unwrap()];
    X::pack_lhs(&p, m, k, bl, 0, x, k, &mut lhs).unwrap();
    let mut out = vec![<X::F as Family>::Dst::default(); m * n];
    kernel.run(&lhs, w, &mut out, &args_with_lut::<X::F>(MatmulArgs::new(m, n, k).with_block_len(bl), lut)).unwrap();
    out
}

fn bits<T: Element>(v: &[T]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits32()).collect()
}

fn family<X: Fam>()
where
    X::F: Operator<Src = X::Src> + WithTable,
{
    let nan = <X::F as Family>::Dst::from_f32(f32::NAN);
    let bl = if <X::F as Family>::BLOCKED { 32 } else { 0 };
    let mut rng = Rng(0x0_9e7a);
    let (mut ran, mut luts) = (0, Vec::new());
    // Every k a multiple of 32 (the 2-bit family's granule).
    let shapes = [(1, 13, 64), (1, 64, 96), (2, 40, 64), (5, 13, 128), (16, 64, 64), (33, 24, 96), (64, 36, 32)];
    for (i, (m, n, k)) in shapes.into_iter().enumerate() {
        let (w, lut) = packed::<X>(&mut rng, n, k, bl, i);
        luts.push(lut);
        let layer = <X::F as WithTable>::with_table(Linear::<X::F>::from_packed(n, k, bl, &w).unwrap(), lut);
        let shape = (m, n, k, bl);
        let x: Vec<X::Src> = to_src(&(0..m * k).map(|_| rng.f32(-2.0, 2.0)).collect::<Vec<_>>());
        let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
        let mut want: Option<Vec<u32>> = None;
        for cpu in cpus() {
            let mut y = vec![nan; m * n];
            layer.run(&cpu, m, &x, &mut y, &mut scratch).unwrap();
            let kernel = layer.kernel(&cpu, m).unwrap();
            assert_eq!(kernel.packing().mr == 1, m == 1, "{}", kernel.name());
            assert_eq!(bits(&y), bits(&by_hand::<X>(&kernel, &x, &w, shape, lut)), "{}", kernel.name());
            // Every tier gives the same bits (here: the first CPU's).
            let got = bits(&y);
            assert_eq!(want.get_or_insert_with(|| got.clone()), &got, "{} m {m} n {n} k {k}", kernel.name());
            ran += 1;

            // Named kernels (`run_with`): the whole catalogue picks what `run` picks; one
            // tier's list picks within the tier; a single kernel runs exactly that kernel.
            let all = <X::F as Family>::kernels();
            assert_eq!(layer.kernel_from(all, &cpu, m).unwrap().name(), kernel.name());
            let mut y_all = vec![nan; m * n];
            layer.run_with(all, &cpu, m, &x, &mut y_all, &mut scratch).unwrap();
            assert_eq!(bits(&y_all), got, "run_with(KERNELS)");
            for tier in Tier::ALL {
                let list: Vec<&'static Descriptor<X::F>> = all.iter().copied().filter(|k| k.tier() == tier).collect();
                let Ok(chosen) = layer.kernel_from(&list, &cpu, m) else {
                    // Only a tier the CPU lacks has nothing to offer.
                    assert!(list.iter().all(|k| !k.is_available(&cpu)), "{tier:?}");
                    continue;
                };
                assert_eq!(chosen.tier(), tier);
                let mut s = vec![0u8; layer.scratch_size_with(&list, m).unwrap()];
                assert_eq!(layer.prepare_with(&list, &cpu, m, &x, &mut s).unwrap().kernel().name(), chosen.name());
                assert!(s.len() <= scratch.len());
                let mut y_t = vec![nan; m * n];
                layer.run_with(&list, &cpu, m, &x, &mut y_t, &mut s).unwrap();
                // Bit-identical across tiers, and equal to the chosen kernel run by hand. (The
                // 2-bit family's GEMV and GEMM packings scale in KleidiAI's two orders: a tier
                // without a GEMV kernel, i8mm, differs in the last bits at m = 1.)
                let takes_lut =
                    args_with_lut::<X::F>(MatmulArgs::new(1, 1, 32), [-3, -1, 1, 3]) != MatmulArgs::new(1, 1, 32);
                if chosen.packing() == kernel.packing() || !takes_lut {
                    assert_eq!(bits(&y_t), got, "run_with({tier:?}) chose {}", chosen.name());
                }
                assert_eq!(bits(&y_t), bits(&by_hand::<X>(&chosen, &x, &w, shape, lut)), "{}", chosen.name());
            }

            // An input scale (AWQ) gives the bits of the same layer run on `x * scale` rounded to
            // the activation type, on every tier (the staging goes tile by tile: m = 5 and 33
            // end in a partial tile).
            let scale: Vec<f32> = (0..k).map(|j| if j % 3 == 0 { 0.5 } else { rng.f32(0.2, 3.0) }).collect();
            let scaled_x: Vec<X::Src> =
                x.iter().enumerate().map(|(i, v)| X::Src::from_f32(v.to_f32() * scale[i % k])).collect();
            let scaled = layer.with_input_scale(&scale).unwrap();
            assert_eq!(scaled.input_scale(), Some(&scale[..]));
            for tier in Tier::ALL {
                let all = <X::F as Family>::kernels();
                let list: Vec<&'static Descriptor<X::F>> = all.iter().copied().filter(|k| k.tier() == tier).collect();
                if layer.kernel_from(&list, &cpu, m).is_err() {
                    continue;
                }
                let need = scaled.scratch_size_with(&list, m).unwrap();
                // A staging area unless the family's packer multiplies in its own passes.
                let fused = <X::F as Operator>::FUSED_INPUT_SCALE;
                assert_eq!(need > layer.scratch_size_with(&list, m).unwrap(), !fused);
                assert!(need <= scaled.scratch_size(m).unwrap());
                let mut s = vec![0u8; need];
                let (mut y_s, mut y_ref) = (vec![nan; m * n], vec![nan; m * n]);
                scaled.run_with(&list, &cpu, m, &x, &mut y_s, &mut s).unwrap();
                layer.run_with(&list, &cpu, m, &scaled_x, &mut y_ref, &mut s).unwrap();
                assert_eq!(bits(&y_s), bits(&y_ref), "input scale, {tier:?} m {m} n {n} k {k}");
                // The call needs the packed activations and the staging area: one byte less
                // is an error, not a smaller stage.
                let Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, needed, .. }) =
                    scaled.run_with(&list, &cpu, m, &x, &mut y_s, &mut [])
                else {
                    panic!("no scratch accepted")
                };
                let chosen = layer.kernel_from(&list, &cpu, m).unwrap();
                let stage = if fused { 0 } else { m.min(chosen.packing().mr) * k };
                assert!(needed >= chosen.lhs_packed_size(m, k, bl).unwrap() + stage);
                let e = scaled.run_with(&list, &cpu, m, &x, &mut y_s, &mut s[..needed - 1]).unwrap_err();
                assert!(matches!(e, Error::BufferTooShort { buffer: Buffer::LhsPacked, .. }), "{e:?}");
                scaled.run_with(&list, &cpu, m, &x, &mut y_s, &mut s[..needed]).unwrap();
            }

            // Any split, parts run in reverse order, equals one call; so do threads.
            let mut scratch2 = scratch.clone();
            let prepared = layer.prepare(&cpu, m, &x, &mut scratch2).unwrap();
            for p in [1, 2, 3, 4, 7, 8, 16, 100] {
                let mut z = vec![nan; m * n];
                let mut parts = prepared.parts(&mut z, p).unwrap();
                assert!(!parts.is_empty() && parts.len() <= p.min(qgemm::op::MAX_PARTS));
                while let Some(part) = parts.pop() {
                    let r = part.rect();
                    assert!(r.m_idx % kernel.m_step() == 0 && r.n_idx % kernel.n_step() == 0);
                    part.run();
                }
                drop(parts);
                assert_eq!(bits(&z), got, "{} split into {p}", kernel.name());
                #[cfg(feature = "std")]
                {
                    let mut t = vec![nan; m * n];
                    prepared.run_parallel(&mut t, p).unwrap();
                    assert_eq!(bits(&t), got, "{} on {p} threads", kernel.name());
                }
            }
            // The clamp applies to every part.
            let c = Clamp::new(-0.25, 0.25).unwrap();
            let mut scratch3 = scratch.clone();
            let clamped = layer.prepare(&cpu, m, &x, &mut scratch3).unwrap().with_clamp(c);
            let mut t = vec![nan; m * n];
            for part in clamped.parts(&mut t, 3).unwrap() {
                part.run();
            }
            // ±0.25 is exact in every output type, so clamping the rounded output equals rounding
            // the clamped one.
            let want_c: Vec<u32> =
                y.iter().map(|v| <X::F as Family>::Dst::from_f32(v.to_f32().clamp(-0.25, 0.25)).to_bits32()).collect();
            assert_eq!(bits(&t), want_c);
        }
    }
    println!("{}: {ran} operator runs compared", <X::F as Family>::NAME);
    // The 2-bit family's layers had the default table and others (a layer or a part that
    // dropped its table would differ from the kernel run by hand with it).
    let takes_lut = args_with_lut::<X::F>(MatmulArgs::new(1, 1, 32), [-3, -1, 1, 3]) != MatmulArgs::new(1, 1, 32);
    if takes_lut {
        println!("look-up tables: {luts:?}");
        assert!(luts.contains(&DEFAULT_LUT) && luts.iter().any(|l| *l != DEFAULT_LUT), "{luts:?}");
    }
}

#[test]
fn qai8dxp_qsi4cxp_operator_matches_kernels_and_splits() {
    family::<Qsi4cxp>();
}

#[test]
fn qai8dxp_qsi4c32p_operator_matches_kernels_and_splits() {
    family::<Qsi4c32p>();
}

#[test]
fn qsi8d32p_qsi4c32p_operator_matches_kernels_and_splits() {
    family::<Q40>();
}

#[test]
fn qai8dxp_qsi8cxp_operator_matches_kernels_and_splits() {
    family::<Qsi8cxp>();
}

#[test]
fn f16_qai8dxp_qsi4cxp_operator_matches_kernels_and_splits() {
    family::<F16Qsi4cxp>();
}

#[test]
fn f16_qai8dxp_qsi8cxp_operator_matches_kernels_and_splits() {
    family::<F16Qsi8cxp>();
}

#[test]
fn bf16_qai8dxp_qsi4cxp_operator_matches_kernels_and_splits() {
    family::<Bf16Qsi4cxp>();
}

#[test]
fn bf16_qai8dxp_qsi4c32p_operator_matches_kernels_and_splits() {
    family::<Bf16Qsi4c32p>();
}

#[test]
fn qsi8d32p_qai4c32p_operator_matches_kernels_and_splits() {
    family::<Qai4c32p>();
}

#[test]
fn f16_qsi8d32p_qai4c32p_operator_matches_kernels_and_splits() {
    family::<F16Qai4c32p>();
}

#[test]
fn qai8dxp_qsu2cxp_operator_matches_kernels_and_splits() {
    family::<Qsu2cxp>();
}

#[test]
fn family_pack_functions_give_the_packers_bytes() {
    use qgemm::half::bf16;
    use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
    use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
    use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
    use qgemm::rhs::qsi4c32p::BlockScales;
    use qgemm::rhs::qsi8cxp::Int8Source;
    use qgemm::rhs::{Int4Encoding, Int4Source, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsi8cxp};

    let (n, k, bl) = (12, 64, 32);
    let mut rng = Rng(5);
    let nib: Vec<u8> = (0..n * k / 2).map(|_| rng.next_u64() as u8).collect();
    let src = Int4Source::nxk(&nib, k, Int4Encoding::ZeroPoint8);
    let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.01, 0.1)).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();

    let p = <Qai8dxpQsi4cxp as Family>::PREFERRED_RHS.packing();
    let mut a = vec![0u8; Linear::<Qai8dxpQsi4cxp>::packed_size(n, k).unwrap()];
    let mut b = a.clone();
    qsi4cxp::pack(&p, n, k, &src, &scale, Some(&bias), &mut b).unwrap();
    assert_eq!(Linear::<Qai8dxpQsi4cxp>::pack(n, k, &src, &scale, Some(&bias), &mut a).unwrap().weights(), &b[..]);

    let bs: Vec<bf16> = (0..n * k / bl).map(|_| bf16::from_f32(rng.f32(0.01, 0.1))).collect();
    let sc = BlockScales::dense(&bs, k / bl);
    let p = <Qai8dxpQsi4c32p as Family>::PREFERRED_RHS.packing();
    let mut a = vec![0u8; Linear::<Qai8dxpQsi4c32p>::packed_size(n, k, bl).unwrap()];
    let mut b = a.clone();
    qsi4c32p::pack(&p, n, k, bl, &src, &sc, None, &mut b).unwrap();
    assert_eq!(Linear::<Qai8dxpQsi4c32p>::pack(n, k, bl, &src, &sc, None, &mut a).unwrap().weights(), &b[..]);

    let row = (k / bl) * (2 + bl / 2);
    let mut q4 = vec![0u8; n * row];
    for (i, byte) in q4.iter_mut().enumerate() {
        *byte = if i % (2 + bl / 2) < 2 { [0x00, 0x2c][i % 2] } else { rng.next_u64() as u8 };
    }
    let p = <Qsi8d32pQsi4c32p as Family>::PREFERRED_RHS.packing();
    let mut a = vec![0u8; Linear::<Qsi8d32pQsi4c32p>::packed_size(n, k, bl).unwrap()];
    let mut b = a.clone();
    qsi4c32pscalef16::pack(&p, n, k, bl, &q4, row, &mut b).unwrap();
    assert_eq!(Linear::<Qsi8d32pQsi4c32p>::pack(n, k, bl, &q4, row, &mut a).unwrap().weights(), &b[..]);

    let w8: Vec<i8> = (0..n * k).map(|_| rng.next_u64() as i8).collect();
    let p = <Qai8dxpQsi8cxp as Family>::PREFERRED_RHS.packing();
    let mut a = vec![0u8; Linear::<Qai8dxpQsi8cxp>::packed_size(n, k).unwrap()];
    let mut b = a.clone();
    qsi8cxp::pack(&p, n, k, &Int8Source::nxk(&w8, k), &scale, None, &mut b).unwrap();
    let layer = Linear::<Qai8dxpQsi8cxp>::pack(n, k, &Int8Source::nxk(&w8, k), &scale, None, &mut a).unwrap();
    assert_eq!(layer.weights(), &b[..]);
    assert_eq!((layer.n(), layer.k(), layer.bl()), (n, k, 0));

    use qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
    use qgemm::rhs::qai4c32p;
    let zero: Vec<f32> = (0..n * k / bl).map(|_| rng.f32(-0.1, 0.1)).collect();
    let bscale: Vec<f32> = (0..n * k / bl).map(|_| rng.f32(0.01, 0.1)).collect();
    let p = <Qsi8d32pQai4c32p as Family>::PREFERRED_RHS.packing();
    let mut a = vec![0u8; Linear::<Qsi8d32pQai4c32p>::packed_size(n, k, bl).unwrap()];
    let mut b = a.clone();
    qai4c32p::pack(&p, n, k, bl, &nib, k / 2, &zero, &bscale, Some(&bias), &mut b).unwrap();
    let layer = Linear::<Qsi8d32pQai4c32p>::pack(n, k, bl, &nib, k / 2, &zero, &bscale, Some(&bias), &mut a).unwrap();
    assert_eq!(layer.weights(), &b[..]);
    assert_eq!((layer.n(), layer.k(), layer.bl()), (n, k, bl));
    // Every other family's layer has no table: its parameters are `()`.
    let () = layer.params();

    // 2-bit codes (four per byte; the int4 bytes reused) with a table and with the default;
    // the layer keeps the table it packed with.
    use qgemm::rhs::qsu2cxp;
    let p = <Qai8dxpQsu2cxp as Family>::PREFERRED_RHS.packing();
    for lut in [Some([-3, -1, 1, 3]), None] {
        let mut a = vec![0u8; Linear::<Qai8dxpQsu2cxp>::packed_size(n, k).unwrap()];
        let mut b = a.clone();
        qsu2cxp::pack(&p, n, k, &nib, k / 2, &scale, Some(&bias), lut.as_ref(), &mut b).unwrap();
        let layer =
            Linear::<Qai8dxpQsu2cxp>::pack(n, k, &nib, k / 2, &scale, Some(&bias), lut.as_ref(), &mut a).unwrap();
        assert_eq!(layer.weights(), &b[..]);
        assert_eq!((layer.n(), layer.k(), layer.bl()), (n, k, 0));
        assert_eq!(layer.lut(), lut.unwrap_or(DEFAULT_LUT));
    }
}

/// A 2-bit layer built from weights packed elsewhere (`from_packed`, then `with_lut`) equals
/// the one `Linear::pack` builds with the same table, on every CPU tier and in parts; without
/// `with_lut` (the default table) its outputs differ.
#[test]
fn qai8dxp_qsu2cxp_from_packed_with_lut_equals_pack_with_the_table() {
    use qgemm::rhs::qsu2cxp;
    type L<'a> = Linear<'a, Qai8dxpQsu2cxp>;
    let (n, k) = (20, 96);
    let mut rng = Rng(0x2b17);
    let codes: Vec<u8> = (0..n * k / 4).map(|_| rng.next_u64() as u8).collect();
    let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.01, 0.1)).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let x: Vec<f32> = (0..16 * k).map(|_| rng.f32(-2.0, 2.0)).collect();
    for lut in [[-3, -1, 1, 3], [-64, 63, 0, -1], [5, -7, 11, -13]] {
        let size = L::packed_size(n, k).unwrap();
        let mut a = vec![0u8; size];
        let packed = L::pack(n, k, &codes, k / 4, &scale, Some(&bias), Some(&lut), &mut a).unwrap();
        // Packed elsewhere: the RHS packer itself, with the operator's packing.
        let mut b = vec![0u8; size];
        qsu2cxp::pack(
            &<Qai8dxpQsu2cxp as Family>::PREFERRED_RHS.packing(),
            n,
            k,
            &codes,
            k / 4,
            &scale,
            Some(&bias),
            Some(&lut),
            &mut b,
        )
        .unwrap();
        let plain = L::from_packed(n, k, 0, &b).unwrap();
        assert_eq!(plain.lut(), DEFAULT_LUT);
        let tabled = L::from_packed(n, k, 0, &b).unwrap().with_lut(lut).unwrap();
        assert_eq!((tabled.lut(), packed.lut()), (lut, lut));
        assert_eq!(tabled.weights(), packed.weights());
        for cpu in cpus() {
            for m in [1, 5, 16] {
                let xm = &x[..m * k];
                let mut s = vec![0u8; packed.scratch_size(m).unwrap()];
                let mut want = vec![f32::NAN; m * n];
                packed.run(&cpu, m, xm, &mut want, &mut s).unwrap();
                let mut got = vec![f32::NAN; m * n];
                tabled.run(&cpu, m, xm, &mut got, &mut s).unwrap();
                assert_eq!(bits(&got), bits(&want), "{lut:?} m {m} cpu {cpu}");
                // Parts of the layer built with `with_lut` carry its table too.
                let mut parts_out = vec![f32::NAN; m * n];
                let prepared = tabled.prepare(&cpu, m, xm, &mut s).unwrap();
                for part in prepared.parts(&mut parts_out, 3).unwrap() {
                    part.run();
                }
                assert_eq!(bits(&parts_out), bits(&want), "{lut:?} m {m} parts");
                // The default table gives other outputs: the table is applied.
                let mut dflt = vec![f32::NAN; m * n];
                plain.run(&cpu, m, xm, &mut dflt, &mut s).unwrap();
                assert_ne!(bits(&dflt), bits(&want), "{lut:?} m {m}: the default table gave the same outputs");
            }
        }
    }
}

/// The 2-bit layer's own rejections: a depth that is not a multiple of 32, a block length, a
/// table entry outside `[-64, 63]` (in `pack` and in `with_lut`), short or narrow weights and
/// short buffers; a rejected `pack` writes nothing.
#[test]
fn qai8dxp_qsu2cxp_bad_calls_are_rejected() {
    type L<'a> = Linear<'a, Qai8dxpQsu2cxp>;
    let (n, k) = (8, 64);
    let size = L::packed_size(n, k).unwrap();
    assert_eq!(size, 2 * 4 * (k / 4 + 12));
    let not32 = |value| Error::NotMultiple { dim: Dim::K, value, multiple_of: 32 };
    assert_eq!(L::packed_size(n, 48).unwrap_err(), not32(48));
    assert_eq!(L::packed_size(n, 0).unwrap_err(), Error::ZeroDim { dim: Dim::K });
    assert_eq!(L::packed_size(usize::MAX, k).unwrap_err(), Error::SizeOverflow);
    let w = vec![0u8; size];
    assert_eq!(L::from_packed(n, 48, 0, &w).unwrap_err(), not32(48));
    assert_eq!(L::from_packed(0, k, 0, &w).unwrap_err(), Error::ZeroDim { dim: Dim::N });
    assert_eq!(L::from_packed(n, k, 32, &w).unwrap_err(), Error::Unsupported { param: Param::BlockLen, value: 32 });
    assert_eq!(
        L::from_packed(n, k, 0, &w[..size - 1]).unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::RhsPacked, given: size - 1, needed: size }
    );

    // Tables: every entry in [-64, 63]; the first one outside is reported.
    let layer = L::from_packed(n, k, 0, &w).unwrap();
    assert_eq!(layer.with_lut([-64, 63, 0, 0]).unwrap().lut(), [-64, 63, 0, 0]);
    assert_eq!(layer.with_lut([0, 64, 0, -65]).unwrap_err(), Error::LutOutOfRange { index: 1, value: 64 });
    assert_eq!(layer.with_lut([-65, 0, 0, 0]).unwrap_err(), Error::LutOutOfRange { index: 0, value: -65 });
    assert_eq!(layer.with_lut([0, 0, 0, i32::MIN]).unwrap_err(), Error::LutOutOfRange { index: 3, value: i32::MIN });

    let codes = vec![0x1bu8; n * k / 4];
    let scale = vec![0.5f32; n];
    let mut buf = vec![0xeeu8; size];
    let untouched = |b: &[u8]| b.iter().all(|&v| v == 0xee);
    let bad = [0, 0, 64, 0];
    assert_eq!(
        L::pack(n, k, &codes, k / 4, &scale, None, Some(&bad), &mut buf).unwrap_err(),
        Error::LutOutOfRange { index: 2, value: 64 }
    );
    assert!(untouched(&buf));
    assert_eq!(L::pack(n, 48, &codes, k / 4, &scale, None, None, &mut buf).unwrap_err(), not32(48));
    assert!(matches!(
        L::pack(n, k, &codes, k / 4 - 1, &scale, None, None, &mut buf),
        Err(Error::StrideTooSmall { .. })
    ));
    assert!(matches!(
        L::pack(n, k, &codes[1..], k / 4, &scale, None, None, &mut buf),
        Err(Error::BufferTooShort { buffer: Buffer::Rhs, .. })
    ));
    assert!(L::pack(n, k, &codes, k / 4, &scale[1..], None, None, &mut buf).is_err());
    assert!(L::pack(n, k, &codes, k / 4, &scale, Some(&[0.0; 3]), None, &mut buf).is_err());
    assert!(matches!(
        L::pack(n, k, &codes, k / 4, &scale, None, None, &mut buf[..size - 1]),
        Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, .. })
    ));
    assert!(untouched(&buf));

    // Running: short activations, scratch and output, non-finite activations.
    let lut = [-3, -1, 1, 3];
    let layer = L::pack(n, k, &codes, k / 4, &scale, None, Some(&lut), &mut buf).unwrap();
    assert_eq!(layer.lut(), lut);
    let cpu = CpuFeatures::detect();
    let m = 3;
    let x = vec![0.5f32; m * k];
    let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
    let mut y = vec![0f32; m * n];
    assert_eq!(
        layer.run(&cpu, m, &x[1..], &mut y, &mut scratch).unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::Lhs, given: m * k - 1, needed: m * k }
    );
    assert!(matches!(
        layer.run(&cpu, m, &x, &mut y[1..], &mut scratch),
        Err(Error::BufferTooShort { buffer: Buffer::Dst, .. })
    ));
    let used = layer.kernel(&cpu, m).unwrap().lhs_packed_size(m, k, 0).unwrap();
    assert!(matches!(
        layer.run(&cpu, m, &x, &mut y, &mut scratch[..used - 1]),
        Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, .. })
    ));
    let mut nan = x.clone();
    nan[7] = f32::NAN;
    assert!(matches!(layer.run(&cpu, m, &nan, &mut y, &mut scratch), Err(Error::NonFinite { .. })));
    // Every code 0x1b = codes 3, 2, 1, 0 in turn: with {-3, -1, 1, 3} each group of four depths
    // sums to 0, so the outputs are 0 (no bias).
    layer.run(&cpu, m, &x, &mut y, &mut scratch).unwrap();
    assert!(y.iter().all(|&v| v == 0.0), "{y:?}");
}

#[test]
fn bad_calls_are_rejected() {
    use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
    use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    type L<'a> = Linear<'a, Qai8dxpQsi4cxp>;
    let (n, k) = (8, 64);
    let size = L::packed_size(n, k).unwrap();
    let w = vec![0u8; size];
    assert_eq!(
        L::from_packed(n, k, 0, &w[..size - 1]).unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::RhsPacked, given: size - 1, needed: size }
    );
    assert_eq!(L::from_packed(0, k, 0, &w).unwrap_err(), Error::ZeroDim { dim: Dim::N });
    assert_eq!(L::from_packed(n, 0, 0, &w).unwrap_err(), Error::ZeroDim { dim: Dim::K });
    assert_eq!(L::from_packed(n, k, 32, &w).unwrap_err(), Error::Unsupported { param: Param::BlockLen, value: 32 });
    assert!(matches!(
        Linear::<Qai8dxpQsi4c32p>::from_packed(n, 48, 32, &w),
        Err(Error::NotMultiple { dim: Dim::K, .. })
    ));
    assert_eq!(L::packed_size(usize::MAX, k).unwrap_err(), Error::SizeOverflow);

    let layer = L::from_packed(n, k, 0, &w).unwrap();
    let cpu = CpuFeatures::detect();
    let m = 3;
    let x = vec![0.5f32; m * k];
    let need = layer.scratch_size(m).unwrap();
    let mut scratch = vec![0u8; need];
    let mut y = vec![0f32; m * n];
    // m = 0: an empty call, as in the kernels; nothing is written.
    y.fill(7.0);
    layer.run(&cpu, 0, &[], &mut [], &mut []).unwrap();
    let empty = layer.prepare(&cpu, 0, &x, &mut scratch).unwrap();
    assert!(empty.parts(&mut y, 4).unwrap().is_empty());
    empty.run(&mut y).unwrap();
    assert!(y.iter().all(|&v| v == 7.0));
    assert_eq!(
        layer.run(&cpu, m, &x[1..], &mut y, &mut scratch).unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::Lhs, given: m * k - 1, needed: m * k }
    );
    let used = layer.kernel(&cpu, m).unwrap().lhs_packed_size(m, k, 0).unwrap();
    assert!(matches!(
        layer.run(&cpu, m, &x, &mut y, &mut scratch[..used - 1]),
        Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, .. })
    ));
    assert!(matches!(
        layer.run(&cpu, m, &x, &mut y[1..], &mut scratch),
        Err(Error::BufferTooShort { buffer: Buffer::Dst, .. })
    ));
    let mut bad = x.clone();
    bad[5] = f32::NAN;
    assert!(matches!(layer.run(&cpu, m, &bad, &mut y, &mut scratch), Err(Error::NonFinite { .. })));
    let prepared = layer.prepare(&cpu, m, &x, &mut scratch).unwrap();
    assert!(matches!(prepared.parts(&mut y[..m * n - 1], 2), Err(Error::BufferTooShort { buffer: Buffer::Dst, .. })));
    // The scratch size covers every kernel of the packing on every CPU.
    for kernel in <Qai8dxpQsi4cxp as Family>::kernels()
        .iter()
        .map(|d| common::info(d))
        .filter(|kn| kn.packing().nr == 8 && kn.packing().kr == 16)
    {
        assert!(kernel.lhs_packed_size(m, k, 0).unwrap() <= need, "{}", kernel.name());
    }
    assert_eq!(layer.kernel(&CpuFeatures::NONE, 1).unwrap().tier(), Tier::Scalar);

    // Input scales: `k` finite values; a product that overflows is the activation's error.
    let mut scale = vec![2.0f32; k];
    assert_eq!(
        layer.with_input_scale(&scale[..k - 1]).unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::InputScale, given: k - 1, needed: k }
    );
    scale[7] = f32::INFINITY;
    assert_eq!(layer.with_input_scale(&scale).unwrap_err(), Error::NonFinite { buffer: Buffer::InputScale, index: 7 });
    scale[7] = 2.0;
    scale[9] = f32::MAX;
    let scaled = layer.with_input_scale(&scale).unwrap();
    let mut s_scratch = vec![0u8; scaled.scratch_size(m).unwrap()];
    // This family's packer multiplies in its own passes: no staging area.
    const { assert!(<Qai8dxpQsi4cxp as Operator>::FUSED_INPUT_SCALE) };
    assert_eq!(s_scratch.len(), need);
    // Row 8, depth 9 overflows: past the first tile for every `mr` (the index counts in `x`,
    // not in the staging rows).
    let m9 = 9;
    let mut big = vec![0.5f32; m9 * k];
    big[8 * k + 9] = 4.0;
    let mut y9 = vec![0f32; m9 * n];
    let mut s9 = vec![0u8; scaled.scratch_size(m9).unwrap()];
    assert_eq!(
        scaled.run(&cpu, m9, &big, &mut y9, &mut s9).unwrap_err(),
        Error::NonFinite { buffer: Buffer::Lhs, index: 8 * k + 9 }
    );
    big[8 * k + 9] = 0.25;
    scaled.run(&cpu, m9, &big, &mut y9, &mut s9).unwrap();
    scaled.run(&cpu, m, &x, &mut y, &mut s_scratch).unwrap();
    // The same through a staging family (f16 activations).
    {
        use qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
        use qgemm::half::f16;
        const { assert!(!<F16Qai8dxpQsi4cxp as Operator>::FUSED_INPUT_SCALE) };
        let layer = Linear::<F16Qai8dxpQsi4cxp>::from_packed(n, k, 0, &w).unwrap();
        // f16 products overflow past 65504: 0.5 * 30000 does not, 4 * 30000 does.
        let mut scale_h = vec![2.0f32; k];
        scale_h[9] = 30000.0;
        let scaled = layer.with_input_scale(&scale_h).unwrap();
        let mut bigh: Vec<f16> = big.iter().map(|&v| f16::from_f32(v)).collect();
        bigh[8 * k + 9] = f16::from_f32(4.0);
        let mut yh = vec![f16::ZERO; m9 * n];
        let mut s = vec![0u8; scaled.scratch_size(m9).unwrap()];
        assert!(s.len() > layer.scratch_size(m9).unwrap());
        assert_eq!(
            scaled.run(&cpu, m9, &bigh, &mut yh, &mut s).unwrap_err(),
            Error::NonFinite { buffer: Buffer::Lhs, index: 8 * k + 9 }
        );
        let short = layer.scratch_size(m9).unwrap();
        bigh[8 * k + 9] = f16::ZERO;
        assert!(matches!(
            scaled.run(&cpu, m9, &bigh, &mut yh, &mut s[..short]),
            Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, .. })
        ));
        scaled.run(&cpu, m9, &bigh, &mut yh, &mut s).unwrap();
    }

    // Named kernels: none, none of this packing, or none the CPU runs.
    let all = <Qai8dxpQsi4cxp as Family>::kernels();
    let nr4: Vec<&'static Descriptor<Qai8dxpQsi4cxp>> =
        all.iter().copied().filter(|kn| common::packing_of_desc(*kn).nr == 4).collect();
    let nr8_i8mm: Vec<&'static Descriptor<Qai8dxpQsi4cxp>> = all
        .iter()
        .copied()
        .filter(|kn| {
            let p = common::packing_of_desc(*kn);
            p.nr == 8 && p.kr == 16 && kn.tier() == Tier::I8mm
        })
        .collect();
    let no_kernel = Error::Unsupported { param: Param::Nr, value: 8 };
    assert_eq!(layer.run_with(&[], &cpu, m, &x, &mut y, &mut scratch).unwrap_err(), no_kernel);
    // Kernels of another packing: a typed mismatch naming both packings.
    let Error::PackingMismatch { weights, kernel } =
        layer.run_with(&nr4, &cpu, m, &x, &mut y, &mut scratch).unwrap_err()
    else {
        panic!("nr = 4 kernels accepted nr = 8 weights")
    };
    assert_eq!((weights, kernel.nr), (layer.packing(), 4));
    assert_eq!(layer.scratch_size_with(&nr4, m).unwrap(), 0);
    if cfg!(target_arch = "aarch64") {
        assert!(!nr8_i8mm.is_empty());
        let no_i8mm = cpu.without(Feature::I8mm);
        y.fill(7.0);
        assert_eq!(
            layer.run_with(&nr8_i8mm, &no_i8mm, m, &x, &mut y, &mut scratch).unwrap_err(),
            Error::UnsupportedCpu { needs: Feature::I8mm }
        );
        assert!(y.iter().all(|&v| v == 7.0), "a rejected call wrote its output");
    }
}

/// The C operator test's layers (capi/tests/c/qgemm_layer1.c, `operator`): the same xorshift32
/// generator and draw order as its `synthetic_problem`, so both languages build the same weights
/// and activations bit for bit.
struct CRng(u32);

impl CRng {
    fn next(&mut self) -> u32 {
        let mut r = self.0;
        r ^= r << 13;
        r ^= r >> 17;
        r ^= r << 5;
        self.0 = r;
        r
    }
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next() >> 8) as f32 / 16777216.0
    }
    fn f16_bits(&mut self) -> u16 {
        let r = self.next();
        (((r >> 31) << 15) | ((12 + (r >> 10) % 5) << 10) | (r & 0x3ff)) as u16
    }
    fn bf16_bits(&mut self) -> u16 {
        (self.uniform(-2.0, 2.0).to_bits() >> 16) as u16
    }
}

/// Rows, channels, depth and block length of the C operator test's layers (`LINEAR_*` there).
const C_OP: (usize, usize, usize, usize) = (64, 20, 64, 32);

/// FNV-1a (64 bits) of the outputs of `layer` for `m = 1..=64` on the first `m` rows of `x`.
fn op_digest<F: Operator<Src = <F as Family>::Dst>>(layer: &Linear<'_, F>, x: &[F::Src]) -> u64 {
    let cpu = CpuFeatures::detect();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for m in 1..=C_OP.0 {
        let mut y = vec![<F as Family>::Dst::default(); m * layer.n()];
        let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
        layer.run(&cpu, m, &x[..m * layer.k()], &mut y, &mut scratch).unwrap();
        for v in &y {
            let bits = v.to_bits32();
            for b in &bits.to_le_bytes()[..<F as Family>::Dst::SIZE] {
                h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    h
}

/// The digests of the C operator test's layers, per family code, computed by the Rust operator.
fn c_operator_digests() -> Vec<(&'static str, u64)> {
    use half::{bf16, f16};
    use qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
    use qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
    use qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
    use qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
    use qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p;
    use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
    use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
    use qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
    use qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
    use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
    use qgemm::rhs::qsi4c32p::BlockScales;
    use qgemm::rhs::qsi8cxp::Int8Source;
    use qgemm::rhs::{Int4Encoding, Int4Source};

    #[derive(Clone, Copy, PartialEq)]
    enum Act {
        F32,
        F16,
        Bf16,
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Rhs {
        Qsi4cxp,
        Qsi4c32p,
        Q4_0,
        Qsi8cxp,
        Qai4c32p,
        Qsu2cxp,
    }
    /// `synthetic_problem`'s draws for one family (`rng` seeded `0x5eed0000 + code`).
    #[derive(Default)]
    struct Problem {
        x32: Vec<f32>,
        x16: Vec<u16>,
        w: Vec<u8>,
        bias: Vec<f32>,
        scale: Vec<f32>,
        scale_bf16: Vec<u16>,
        zero: Vec<f32>,
    }
    let (m, n, k, bl) = C_OP;
    let problem = |code: u32, act: Act, rhs: Rhs| {
        let mut r = CRng(0x5eed_0000 + code);
        let mut p = Problem::default();
        for _ in 0..m * k {
            match act {
                Act::F32 => p.x32.push(r.uniform(-2.0, 2.0)),
                Act::F16 => p.x16.push(r.f16_bits()),
                Act::Bf16 => p.x16.push(r.bf16_bits()),
            }
        }
        if rhs == Rhs::Q4_0 {
            let nb = k / bl;
            for _ in 0..n * nb {
                let f16 = (0x2000 + r.next() % 0x0a00) as u16;
                p.w.extend_from_slice(&f16.to_le_bytes());
                for _ in 0..bl / 2 {
                    p.w.push(r.next() as u8);
                }
            }
            return p;
        }
        let bytes = match rhs {
            Rhs::Qsi8cxp => n * k,
            Rhs::Qsu2cxp => n * (k / 4),
            _ => n * k.div_ceil(2),
        };
        p.w = (0..bytes).map(|_| r.next() as u8).collect();
        p.bias = (0..n).map(|_| r.uniform(-1.0, 1.0)).collect();
        if rhs == Rhs::Qsi4c32p {
            p.scale_bf16 = (0..n * (k / bl)).map(|_| (r.uniform(0.01, 0.1).to_bits() >> 16) as u16).collect();
        } else if rhs == Rhs::Qai4c32p {
            p.scale = (0..n * (k / bl)).map(|_| r.uniform(0.01, 0.1)).collect();
            p.zero = (0..n * (k / bl)).map(|_| r.uniform(-0.1, 0.1)).collect();
        } else {
            p.scale = (0..n).map(|_| r.uniform(0.01, 0.1)).collect();
        }
        p
    };
    let f16s = |v: &[u16]| v.iter().map(|&b| f16::from_bits(b)).collect::<Vec<_>>();
    let bf16s = |v: &[u16]| v.iter().map(|&b| bf16::from_bits(b)).collect::<Vec<_>>();
    let mut out = vec![];
    macro_rules! per_channel4 {
        ($name:literal, $fam:ty, $code:expr, $act:expr, $x:expr) => {{
            let p = problem($code, $act, Rhs::Qsi4cxp);
            let mut buf = vec![0u8; Linear::<$fam>::packed_size(n, k).unwrap()];
            let src = Int4Source::nxk(&p.w, k, Int4Encoding::ZeroPoint8);
            let layer = Linear::<$fam>::pack(n, k, &src, &p.scale, Some(&p.bias), &mut buf).unwrap();
            out.push(($name, op_digest(&layer, &$x(&p))));
        }};
    }
    macro_rules! per_channel8 {
        ($name:literal, $fam:ty, $code:expr, $act:expr, $x:expr) => {{
            let p = problem($code, $act, Rhs::Qsi8cxp);
            let w: Vec<i8> = p.w.iter().map(|&b| b as i8).collect();
            let mut buf = vec![0u8; Linear::<$fam>::packed_size(n, k).unwrap()];
            let layer = Linear::<$fam>::pack(n, k, &Int8Source::nxk(&w, k), &p.scale, Some(&p.bias), &mut buf).unwrap();
            out.push(($name, op_digest(&layer, &$x(&p))));
        }};
    }
    macro_rules! per_block {
        ($name:literal, $fam:ty, $code:expr, $act:expr, $x:expr) => {{
            let p = problem($code, $act, Rhs::Qsi4c32p);
            let scales: Vec<bf16> = bf16s(&p.scale_bf16);
            let mut buf = vec![0u8; Linear::<$fam>::packed_size(n, k, bl).unwrap()];
            let src = Int4Source::nxk(&p.w, k, Int4Encoding::ZeroPoint8);
            let bs = BlockScales::dense(&scales, k / bl);
            let layer = Linear::<$fam>::pack(n, k, bl, &src, &bs, Some(&p.bias), &mut buf).unwrap();
            out.push(($name, op_digest(&layer, &$x(&p))));
        }};
    }
    macro_rules! asymmetric {
        ($name:literal, $fam:ty, $code:expr, $act:expr, $x:expr) => {{
            let p = problem($code, $act, Rhs::Qai4c32p);
            let mut buf = vec![0u8; Linear::<$fam>::packed_size(n, k, bl).unwrap()];
            let layer =
                Linear::<$fam>::pack(n, k, bl, &p.w, k / 2, &p.zero, &p.scale, Some(&p.bias), &mut buf).unwrap();
            out.push(($name, op_digest(&layer, &$x(&p))));
        }};
    }
    let x32 = |p: &Problem| p.x32.clone();
    let x16 = |p: &Problem| f16s(&p.x16);
    let xb16 = |p: &Problem| bf16s(&p.x16);
    per_channel4!("qai8dxp_qsi4cxp", Qai8dxpQsi4cxp, 0, Act::F32, x32);
    per_block!("qai8dxp_qsi4c32p", Qai8dxpQsi4c32p, 1, Act::F32, x32);
    {
        let p = problem(2, Act::F32, Rhs::Q4_0);
        let mut buf = vec![0u8; Linear::<Qsi8d32pQsi4c32p>::packed_size(n, k, bl).unwrap()];
        let row = k / bl * (2 + bl / 2);
        let layer = Linear::<Qsi8d32pQsi4c32p>::pack(n, k, bl, &p.w, row, &mut buf).unwrap();
        out.push(("qsi8d32p_qsi4c32p", op_digest(&layer, &p.x32)));
    }
    per_channel8!("qai8dxp_qsi8cxp", Qai8dxpQsi8cxp, 3, Act::F32, x32);
    per_channel4!("f16_qai8dxp_qsi4cxp", F16Qai8dxpQsi4cxp, 4, Act::F16, x16);
    per_channel8!("f16_qai8dxp_qsi8cxp", F16Qai8dxpQsi8cxp, 5, Act::F16, x16);
    per_channel4!("bf16_qai8dxp_qsi4cxp", Bf16Qai8dxpQsi4cxp, 6, Act::Bf16, xb16);
    per_block!("bf16_qai8dxp_qsi4c32p", Bf16Qai8dxpQsi4c32p, 7, Act::Bf16, xb16);
    asymmetric!("qsi8d32p_qai4c32p", Qsi8d32pQai4c32p, 8, Act::F32, x32);
    asymmetric!("f16_qsi8d32p_qai4c32p", F16Qsi8d32pQai4c32p, 9, Act::F16, x16);
    {
        // The 2-bit family with the C test's table `{-3, -1, 1, 3}` (its `synthetic_lut`).
        let p = problem(10, Act::F32, Rhs::Qsu2cxp);
        let mut buf = vec![0u8; Linear::<Qai8dxpQsu2cxp>::packed_size(n, k).unwrap()];
        let lut = [-3, -1, 1, 3];
        let layer =
            Linear::<Qai8dxpQsu2cxp>::pack(n, k, &p.w, k / 4, &p.scale, Some(&p.bias), Some(&lut), &mut buf).unwrap();
        out.push(("qai8dxp_qsu2cxp", op_digest(&layer, &p.x32)));
    }
    out
}

/// The shared golden of the C operator: `capi/tests/data/linear_digests.txt` holds what the Rust
/// operator computes (this test, on every CPU model) and what `qgemm_linear_run` must compute
/// (capi/tests/c/qgemm_layer1.c). `QGEMM_BLESS=1` rewrites the file.
#[test]
fn c_operator_golden_is_the_rust_operator() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/capi/tests/data/linear_digests.txt");
    let got: String = c_operator_digests().iter().map(|(name, d)| format!("{name} {d:016x}\n")).collect();
    if std::env::var_os("QGEMM_BLESS").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).unwrap();
    assert_eq!(got, want, "the Rust operator's digests differ from {path}");
}
