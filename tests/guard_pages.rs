//! Guard pages: every packer and every kernel (every family, every tier the CPU has) runs with
//! each of its buffers in its own mapping, placed to end exactly at a `PROT_NONE` page, to start
//! exactly after one, or at a misaligned start next to one (odd byte offsets for byte buffers,
//! 4-byte offsets for f32 and 2-byte ones for bf16). A read or write outside a slice is a
//! SIGSEGV, which kills the test binary (the handler of `common::guard` prints the case).
//!
//! Canary buffers (the family suites) catch stray writes; these tests catch stray reads too:
//! * packers: raw activations (row stride exactly `k`), raw int4 weights (NxK and KxN, padded
//!   and exact strides), `Q4_0` blocks, f32 / bf16 scales, bias, and the packed output — the LHS
//!   also packed in two calls, the second starting mid-tile into a slice of exactly the tiles it
//!   touches;
//! * kernels: packed LHS, packed RHS and dst over the whole output (dense and padded row
//!   stride) and over each rectangle of a grid cut at the last tile, each rectangle getting LHS
//!   and RHS slices that end at the last byte it may read and a dst slice of exactly its
//!   `(m - 1) * stride + n` elements;
//! * shapes with tails: `m`, `n` not multiples of any tile, `k` not a multiple of 32 (per
//!   channel; an odd number of 32-groups for the 2-bit family), several blocks with the last one
//!   ending the row (per block);
//! * the 2-bit family's raw weights carry a look-up table (the default or another one), which
//!   the packer and every kernel call get.
//!
//! Every result is also compared with the scalar kernel on ordinary buffers, bit for bit.
//! Linux only (mmap/mprotect); on other systems the test prints why it is skipped.
#![deny(clippy::undocumented_unsafe_blocks)]

#[allow(unused_macros)] // family_suite!
mod common;

#[cfg(target_os = "linux")]
#[path = "../examples/support/families.rs"]
#[allow(dead_code)]
mod families;

#[cfg(target_os = "linux")]
mod linux {
    use crate::common::Rng;
    use crate::common::guard::Plain;
    use crate::common::guard::{Guarded, Place, page_size, set_label};
    use crate::families::{
        Bf16Qsi4c32p, Bf16Qsi4cxp, F16Qai4c32p, F16Qsi4cxp, F16Qsi8cxp, Fam, Q40, Qai4c32p, Qsi4c32p, Qsi4cxp, Qsi8cxp,
        Qsu2cxp, RhsRaw, ScaleStyle, WeightStyle, args_with_lut, cycle_lut, packings, to_src,
    };
    use qgemm::half::bf16;
    use qgemm::rhs::Layout;
    use qgemm::rhs::qsu2cxp::DEFAULT_LUT;
    use qgemm::{Clamp, CpuFeatures, Element, Family, Kernel, MatmulArgs, Tier};

    /// Shapes `(m, n, k, bl)` with tails: m and n past every tile (m_step up to 24, n_step up to
    /// 16), k with a partial 32-group or several blocks (the 2-bit family, whose k is a multiple
    /// of 32: one, three and five groups of 32).
    fn shapes<X: Fam>() -> Vec<(usize, usize, usize, usize)> {
        if <X::F as Family>::BLOCKED {
            vec![(1, 1, 32, 32), (5, 13, 96, 32), (27, 21, 128, 64)]
        } else if <X::F as Family>::K_MULTIPLE > 1 {
            vec![(1, 1, 32, 0), (5, 13, 96, 0), (27, 21, 160, 0)]
        } else {
            vec![(1, 1, 1, 0), (5, 13, 33, 0), (27, 21, 100, 0)]
        }
    }

    /// Placements for the i-th run of a case: byte buffers cycle through every placement with
    /// odd and even offsets, f32 through 4-byte offsets, bf16 through 2-byte ones.
    struct Places {
        bytes: Vec<Place>,
        f32s: Vec<Place>,
        halves: Vec<Place>,
    }

    impl Places {
        fn new() -> Places {
            Places { bytes: Place::all(1), f32s: Place::all(4), halves: Place::all(2) }
        }
        fn runs(&self) -> usize {
            self.bytes.len()
        }
        fn at(&self, i: usize) -> (Place, Place, Place) {
            (self.bytes[i], self.f32s[i % self.f32s.len()], self.halves[i % self.halves.len()])
        }
    }

    fn guarded_opt(v: Option<&[f32]>, place: Place) -> Option<Guarded<f32>> {
        v.map(|v| Guarded::from_slice(v, place))
    }

    /// One rectangle: `(m_idx, n_idx, m, n)` and the `dst` row stride.
    #[derive(Clone, Copy)]
    struct Rect {
        m_idx: usize,
        n_idx: usize,
        m: usize,
        n: usize,
        stride: usize,
    }

    /// Runs `kn` over rectangle `r` of the problem `base` (depth `k`, block length `bl`) on
    /// guarded copies of exactly the packed bytes the rectangle may read, writing into a
    /// guarded slice of exactly the elements it may write; returns them.
    #[allow(clippy::too_many_arguments)]
    fn run_rect<F: Family<Lhs = u8>>(
        kn: &Kernel<F>,
        lhs: &[u8],
        rhs: &[u8],
        base: &MatmulArgs<F::Params>,
        (k, bl): (usize, usize),
        r: Rect,
        (bp, fp): (Place, Place),
    ) -> Vec<F::Dst>
    where
        F::Dst: Plain,
    {
        let lhs_end = kn.lhs_packed_offset(r.m_idx, k, bl).unwrap() + kn.lhs_packed_size(r.m, k, bl).unwrap();
        let rhs_end = kn.rhs_packed_offset(r.n_idx, k, bl).unwrap() + kn.rhs_packed_size(r.n, k, bl).unwrap();
        let glhs = Guarded::from_slice(&lhs[..lhs_end], bp);
        let grhs = Guarded::from_slice(&rhs[..rhs_end], bp);
        let mut gdst = Guarded::<F::Dst>::new((r.m - 1) * r.stride + r.n, fp);
        let a = base.with_rect(r.m_idx, r.n_idx, r.m, r.n).with_dst_stride(r.stride);
        kn.run(glhs.as_slice(), grhs.as_slice(), gdst.as_mut_slice(), &a)
            .unwrap_or_else(|e| panic!("{}: {e}", kn.name()));
        gdst.as_slice().to_vec()
    }

    /// The guard-page matrix of family `X`; returns (packer calls, kernel calls, kernels run,
    /// the look-up tables the raw weights had).
    fn family<X: Fam>() -> (usize, usize, Vec<&'static str>, Vec<[i32; 4]>)
    where
        <X::F as Family>::Dst: Plain,
        X::Src: Plain,
    {
        let cpu = CpuFeatures::detect();
        let places = Places::new();
        let (mut packer_calls, mut kernel_calls, mut ran, mut luts) = (0, 0, Vec::new(), Vec::new());
        let mut rng = Rng(0x6a7d);
        let mut case = 0;
        for p in packings::<X>() {
            for (si, &(m, n, k, bl)) in shapes::<X>().iter().enumerate() {
                // Ordinary buffers: inputs, packed operands and the scalar reference.
                let x: Vec<X::Src> = to_src(&(0..m * k).map(|_| rng.f32(-3.0, 2.0)).collect::<Vec<_>>());
                let layout = if si % 2 == 1 { Layout::KxN } else { Layout::NxK };
                let mut next = || rng.next_u64();
                let mut raw = X::random_rhs(&mut next, n, k, bl, layout, WeightStyle::Random, ScaleStyle::Normal, true);
                cycle_lut::<X>(&mut raw, case);
                case += 1;
                luts.push(raw.lut);
                let mut lhs = vec![0u8; X::lhs_packed_size(&p, m, k, bl).unwrap()];
                X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
                let mut rhs = vec![0u8; X::rhs_packed_size(&p, n, k, bl).unwrap()];
                X::pack_rhs(&p, n, k, bl, &raw.view(), &mut rhs).unwrap();
                let scalar = crate::common::scalar_of::<X::F>(&p);
                let clamp = Clamp::new(-5.0, 5.0).unwrap();
                // The kernels take the table the weights were packed with.
                let base =
                    args_with_lut::<X::F>(MatmulArgs::new(m, n, k).with_block_len(bl).with_clamp(clamp), raw.lut);
                let mut want = vec![<X::F as Family>::Dst::default(); m * n];
                scalar.run(&lhs, &rhs, &mut want, &base).unwrap();
                let tile = lhs.len() / m.div_ceil(p.mr);

                for run in 0..places.runs() {
                    let (bp, fp, hp) = places.at(run);
                    let what = format!("{} {p:?} m={m} n={n} k={k} bl={bl} bytes {bp:?} f32 {fp:?}", X::F::NAME);

                    // LHS packer: guarded activations (stride exactly k) and packed output.
                    set_label(&format!("LHS packer, {what}"));
                    let gx = Guarded::from_slice(&x, fp);
                    // Zeroed like the reference: the packer leaves a partial tile's missing rows.
                    let mut glhs = Guarded::from_slice(&vec![0u8; lhs.len()], bp);
                    X::pack_lhs(&p, m, k, bl, 0, gx.as_slice(), k, glhs.as_mut_slice()).unwrap();
                    assert!(glhs.as_slice() == lhs.as_slice(), "{what}: guarded LHS packing differs");
                    // The same rows in two calls: rows [0, m1) into a zeroed buffer, then rows
                    // [m1, m) (starting mid-tile) into a guarded slice of exactly the tiles they
                    // touch, from a guarded slice of exactly their activations.
                    let m1 = (0..=run % m).rev().find(|&v| X::splits_at(&p, v)).unwrap_or(0);
                    let mut first = vec![0u8; lhs.len()];
                    X::pack_lhs(&p, m1, k, bl, 0, &x, k, &mut first).unwrap();
                    let (t0, t1) = (m1 / p.mr * tile, m.div_ceil(p.mr) * tile);
                    let mut gpart = Guarded::from_slice(&first[t0..t1], bp);
                    let gx1 = Guarded::from_slice(&x[m1 * k..], fp);
                    X::pack_lhs(&p, m - m1, k, bl, m1, gx1.as_slice(), k, gpart.as_mut_slice()).unwrap();
                    assert!(gpart.as_slice() == &lhs[t0..t1], "{what}: LHS packed from row {m1}");
                    packer_calls += 2;

                    // RHS packer: guarded raw weights, scales, bias and packed output.
                    set_label(&format!("RHS packer, {what}"));
                    let gdata = Guarded::from_slice(&raw.data, bp);
                    let gsf = Guarded::from_slice(&raw.scale_f32, fp);
                    let gzf = Guarded::from_slice(&raw.zero_f32, fp);
                    let gsh = Guarded::<bf16>::from_slice(&raw.scale_bf16, hp);
                    let gbias = guarded_opt(raw.bias.as_deref(), fp);
                    let view = RhsRaw {
                        data: gdata.as_slice(),
                        scale_f32: gsf.as_slice(),
                        zero_f32: gzf.as_slice(),
                        scale_bf16: gsh.as_slice(),
                        bias: gbias.as_ref().map(|b| b.as_slice()),
                        ..raw.view()
                    };
                    let mut grhs = Guarded::<u8>::new(rhs.len(), bp);
                    X::pack_rhs(&p, n, k, bl, &view, grhs.as_mut_slice()).unwrap();
                    assert!(grhs.as_slice() == rhs.as_slice(), "{what}: guarded RHS packing differs");
                    packer_calls += 1;

                    // Every kernel of the packing the CPU has: whole output, then a grid.
                    for kn in <X::F as Family>::kernels()
                        .iter()
                        .filter(|kn| crate::common::packing_of_desc(*kn) == p)
                        .filter_map(|kn| kn.resolve(&cpu).ok())
                    {
                        let what = format!("{} {what}", kn.name());
                        set_label(&what);
                        for pad in [0, 3] {
                            let stride = n + pad;
                            let r = Rect { m_idx: 0, n_idx: 0, m, n, stride };
                            let got = run_rect(&kn, glhs.as_slice(), grhs.as_slice(), &base, (k, bl), r, (bp, fp));
                            kernel_calls += 1;
                            for r in 0..m {
                                let (g, w) = (&got[r * stride..r * stride + n], &want[r * n..(r + 1) * n]);
                                assert!(
                                    g.iter().zip(w).all(|(g, w)| g.to_bits32() == w.to_bits32()),
                                    "{what}: row {r} differs from {}",
                                    scalar.name()
                                );
                            }
                        }
                        // The grid cut at the last tile: rectangles ending at the last row /
                        // column, and rectangles ending just before the tails.
                        let cut = |len: usize, step: usize| (len - 1) / step * step;
                        let (mc, nc) = (cut(m, kn.m_step()), cut(n, kn.n_step()));
                        let mut got = vec![<X::F as Family>::Dst::from_f32(f32::NAN); m * n];
                        for (mi, mm) in [(0, mc), (mc, m - mc)] {
                            for (ni, nn) in [(0, nc), (nc, n - nc)] {
                                if mm == 0 || nn == 0 {
                                    continue;
                                }
                                let r = Rect { m_idx: mi, n_idx: ni, m: mm, n: nn, stride: n };
                                set_label(&format!("{what} rectangle ({mi}, {ni}) {mm}x{nn}"));
                                let part = run_rect(&kn, &lhs, &rhs, &base, (k, bl), r, (bp, fp));
                                kernel_calls += 1;
                                for r in 0..mm {
                                    let at = (mi + r) * n + ni;
                                    got[at..at + nn].copy_from_slice(&part[r * n..r * n + nn]);
                                }
                            }
                        }
                        assert!(
                            got.iter().zip(&want).all(|(g, w)| g.to_bits32() == w.to_bits32()),
                            "{what}: the grid at ({mc}, {nc}) differs from {}",
                            scalar.name()
                        );
                        if !ran.contains(&kn.name()) {
                            ran.push(kn.name());
                        }
                    }
                }
            }
        }
        set_label("");
        (packer_calls, kernel_calls, ran, luts)
    }

    fn report<X: Fam>()
    where
        <X::F as Family>::Dst: Plain,
        X::Src: Plain,
    {
        let (packers, kernels, ran, luts) = family::<X>();
        let cpu = CpuFeatures::detect();
        let all = <X::F as Family>::kernels();
        println!(
            "{}: {packers} guarded packer calls, {kernels} guarded kernel calls, {} of {} kernels (cpu {cpu})",
            X::F::NAME,
            ran.len(),
            all.len()
        );
        for kn in all.iter().filter(|kn| !ran.contains(&kn.name())) {
            let lacks = kn.missing_feature(&cpu).map_or("?", |f| f.name());
            println!("  not run (cpu lacks {lacks}): {}", kn.name());
        }
        // Every kernel the CPU has ran.
        assert_eq!(ran.len(), all.iter().filter(|kn| kn.is_available(&cpu)).count());
        // A family with a look-up table ran with the default one and with others (a kernel
        // ignoring its table would differ from the scalar reference); the rest with the default.
        let takes_lut = args_with_lut::<X::F>(MatmulArgs::new(1, 1, 32), [-3, -1, 1, 3]) != MatmulArgs::new(1, 1, 32);
        if takes_lut {
            println!("  look-up tables: {luts:?}");
            assert!(luts.contains(&DEFAULT_LUT) && luts.iter().any(|l| *l != DEFAULT_LUT), "{luts:?}");
        } else {
            assert!(luts.iter().all(|l| *l == DEFAULT_LUT));
        }
    }

    #[test]
    fn guard_pages_qai8dxp_qsi4cxp() {
        report::<Qsi4cxp>();
    }

    #[test]
    fn guard_pages_qai8dxp_qsi4c32p() {
        report::<Qsi4c32p>();
    }

    #[test]
    fn guard_pages_qsi8d32p_qsi4c32p() {
        report::<Q40>();
    }

    #[test]
    fn guard_pages_qai8dxp_qsi8cxp() {
        report::<Qsi8cxp>();
    }

    #[test]
    fn guard_pages_f16_qai8dxp_qsi4cxp() {
        report::<F16Qsi4cxp>();
    }

    #[test]
    fn guard_pages_f16_qai8dxp_qsi8cxp() {
        report::<F16Qsi8cxp>();
    }

    #[test]
    fn guard_pages_bf16_qai8dxp_qsi4cxp() {
        report::<Bf16Qsi4cxp>();
    }

    #[test]
    fn guard_pages_bf16_qai8dxp_qsi4c32p() {
        report::<Bf16Qsi4c32p>();
    }

    #[test]
    fn guard_pages_qsi8d32p_qai4c32p() {
        report::<Qai4c32p>();
    }

    #[test]
    fn guard_pages_f16_qsi8d32p_qai4c32p() {
        report::<F16Qai4c32p>();
    }

    #[test]
    fn guard_pages_qai8dxp_qsu2cxp() {
        report::<Qsu2cxp>();
    }

    /// The helper itself: each placement gives a slice of the right length and alignment whose
    /// guarded edge is where it should be (in-bounds accesses only; the faulting side was
    /// checked by hand, see docs/testing.md).
    // -----------------------------------------------------------------------------------------
    // The float families: unpacked or packed LHS, packed RHS with bias, every kernel the CPU has.
    // -----------------------------------------------------------------------------------------
    use qgemm::half::f16;
    use qgemm::lhs::bf16p;
    use qgemm::rhs::{FloatSource, bf16p12, f16p, f32p};

    /// The LHS "packing" of the kernels that read the f32/f16 rows in place: rows of one.
    const fn float_rows(format: qgemm::LhsFormat) -> qgemm::LhsPacking {
        qgemm::LhsPacking { format, mr: 1, kr: 1, sr: 1 }
    }

    /// The operand layouts a float catalogue entry reads (fixed shapes).
    fn float_formats_of<F: Family>(d: &qgemm::Descriptor<F>) -> (qgemm::LhsPacking, qgemm::RhsPacking) {
        let p = d.packing_on(&CpuFeatures::NONE).unwrap_or_else(|| panic!("{}: not a fixed shape", d.name()));
        (p.lhs(d.shape().lhs), p.rhs(d.shape().rhs))
    }

    /// The family parameters of a call with LHS row stride `s` (elements): the stride of rows
    /// read in place, nothing for a packed LHS.
    trait FloatStride {
        fn from_stride(s: usize) -> Self;
    }

    impl FloatStride for () {
        fn from_stride(_: usize) {}
    }

    impl FloatStride for qgemm::LhsStride {
        fn from_stride(s: usize) -> qgemm::LhsStride {
            qgemm::LhsStride(s)
        }
    }

    /// Runs every available kernel of `F` on `formats` over the whole output and over a 2x2
    /// grid, each run with guarded slices of exactly the LHS (unpacked: up to the rectangle's
    /// last row; packed: its last tile), the RHS tiles up to the rectangle's last column and the
    /// output elements it may write; compares with the scalar kernel. Returns the runs.
    #[allow(clippy::too_many_arguments)]
    fn float_kernels<F: Family>(
        (m, n, k): (usize, usize, usize),
        lhs: &[F::Lhs],
        lhs_stride: usize,
        rhs: &[u8],
        formats: (qgemm::LhsPacking, qgemm::RhsPacking),
        dot: bool,
        run: &mut usize,
        ran: &mut Vec<&'static str>,
    ) where
        F::Lhs: Plain,
        F::Dst: Plain,
        F::Params: FloatStride,
    {
        let cpu = CpuFeatures::detect();
        let places = Places::new();
        let ks: Vec<&'static qgemm::Descriptor<F>> = F::kernels()
            .iter()
            .copied()
            .filter(|d| float_formats_of(d) == formats && d.name().contains("1x36") == dot)
            .collect();
        let scalar = ks.iter().find(|d| d.tier() == Tier::Scalar).unwrap().resolve(&cpu).unwrap();
        let base = MatmulArgs::new(m, n, k)
            .with_params(F::Params::from_stride(lhs_stride))
            .with_clamp(Clamp::new(-0.5, 0.5).unwrap());
        let mut want = vec![F::Dst::default(); m * n];
        scalar.run(lhs, rhs, &mut want, &base).unwrap();
        let bits = |v: &[F::Dst]| v.iter().map(|x| x.to_bits32()).collect::<Vec<_>>();
        for kn in ks.into_iter().filter_map(|d| d.resolve(&cpu).ok()) {
            ran.push(kn.name());
            let (ms, ns) = (kn.m_step(), kn.n_step());
            let (m0, n0) = ((m - 1) / ms * ms, (n - 1) / ns * ns);
            let mut rects = vec![(0, 0, m, n, n), (0, 0, m, n, n + 5)];
            for (mi, mm) in [(0, m0), (m0, m - m0)] {
                for (ni, nn) in [(0, n0), (n0, n - n0)] {
                    if mm > 0 && nn > 0 {
                        rects.push((mi, ni, mm, nn, n));
                    }
                }
            }
            for (mi, ni, mm, nn, stride) in rects {
                let (bp, fp, hp) = places.at(*run % places.runs());
                *run += 1;
                set_label(&format!("{} m_idx {mi} n_idx {ni} {mm}x{nn} stride {stride}", kn.name()));
                let f = formats.0;
                let lhs_end = if f.format.is_packed() {
                    f.packed_offset(mi / f.mr * f.mr, k, 0).unwrap() + f.packed_size(mm + mi % f.mr, k, 0).unwrap()
                } else {
                    (mi + mm - 1) * lhs_stride + k
                };
                let lp = if std::mem::size_of::<F::Lhs>() == 1 {
                    bp
                } else if std::mem::size_of::<F::Lhs>() == 4 {
                    fp
                } else {
                    hp
                };
                let op = if std::mem::size_of::<F::Dst>() == 4 { fp } else { hp };
                let glhs = Guarded::from_slice(&lhs[..lhs_end], lp);
                let rhs_end = formats.1.packed_offset(ni, k, 0).unwrap() + formats.1.packed_size(nn, k, 0).unwrap();
                let grhs = Guarded::from_slice(&rhs[..rhs_end], bp);
                let mut gdst = Guarded::<F::Dst>::new((mm - 1) * stride + nn, op);
                let a = base.with_rect(mi, ni, mm, nn).with_dst_stride(stride);
                kn.run(glhs.as_slice(), grhs.as_slice(), gdst.as_mut_slice(), &a)
                    .unwrap_or_else(|e| panic!("{}: {e}", kn.name()));
                for r in 0..mm {
                    let got = &gdst.as_slice()[r * stride..][..nn];
                    let exp = &want[(mi + r) * n + ni..][..nn];
                    assert_eq!(bits(got), bits(exp), "{}: rect ({mi}, {ni}) {mm}x{nn}, row {r}", kn.name());
                }
            }
        }
    }

    fn float_values<T: Element>(rng: &mut Rng, len: usize) -> Vec<T> {
        (0..len).map(|_| T::from_f32(rng.f32(-1.0, 1.0))).collect()
    }

    #[test]
    fn guard_pages_float_families() {
        let mut rng = Rng(0x6A4D);
        let places = Places::new();
        let (mut packs, mut runs, mut ran) = (0usize, 0usize, Vec::new());
        for (m, n, k) in [(1, 1, 1), (5, 13, 33), (27, 37, 100), (1, 37, 9)] {
            let (bp, fp, hp) = places.at(packs % places.runs());
            packs += 1;
            set_label(&format!("float packers {m}x{n}x{k}"));
            // f32: NxK and KxN sources, both formats, guarded source, bias and output.
            let x: Vec<f32> = float_values(&mut rng, m * k);
            let w: Vec<f32> = float_values(&mut rng, n * k);
            let bias: Vec<f32> = float_values(&mut rng, n);
            let (gw, gb) = (Guarded::from_slice(&w, fp), Guarded::from_slice(&bias, fp));
            for fmt in [f32p::F32P16, f32p::F32P8] {
                for src in [FloatSource::nxk(gw.as_slice(), k), FloatSource::kxn(gw.as_slice(), n)] {
                    let mut out = Guarded::<u8>::new(fmt.packed_size(n, k, 0).unwrap(), bp);
                    f32p::pack(&fmt, n, k, &src, Some(gb.as_slice()), out.as_mut_slice()).unwrap();
                    let rhs = out.as_slice().to_vec();
                    let fam = (float_rows(qgemm::LhsFormat::F32), fmt);
                    float_kernels::<qgemm::f32_f32_f32p::F32F32F32p>(
                        (m, n, k),
                        &x,
                        k,
                        &rhs,
                        fam,
                        false,
                        &mut runs,
                        &mut ran,
                    );
                }
            }
            // f16.
            let x: Vec<f16> = float_values(&mut rng, m * k);
            let w: Vec<f16> = float_values(&mut rng, n * k);
            let bias: Vec<f16> = float_values(&mut rng, n);
            let (gw, gb) = (Guarded::from_slice(&w, hp), Guarded::from_slice(&bias, hp));
            for fmt in [f16p::F16P32, f16p::F16P16] {
                let mut out = Guarded::<u8>::new(fmt.packed_size(n, k, 0).unwrap(), bp);
                f16p::pack(&fmt, n, k, &FloatSource::kxn(gw.as_slice(), n), Some(gb.as_slice()), out.as_mut_slice())
                    .unwrap();
                let rhs = out.as_slice().to_vec();
                float_kernels::<qgemm::f16_f16_f16p::F16F16F16p>(
                    (m, n, k),
                    &x,
                    k,
                    &rhs,
                    (float_rows(qgemm::LhsFormat::F16), fmt),
                    false,
                    &mut runs,
                    &mut ran,
                );
            }
            // bf16, f32 output: both LHS formats, f32 and f16 weights.
            let x: Vec<f32> = float_values(&mut rng, m * k);
            let gx = Guarded::from_slice(&x, fp);
            let w: Vec<f32> = float_values(&mut rng, n * k);
            let bias: Vec<f32> = float_values(&mut rng, n);
            let (gw, gb) = (Guarded::from_slice(&w, fp), Guarded::from_slice(&bias, fp));
            let fmt = bf16p12::BF16P12_B32;
            let mut out = Guarded::<u8>::new(fmt.packed_size(n, k, 0).unwrap(), bp);
            bf16p12::pack_b32(n, k, &FloatSource::nxk(gw.as_slice(), k), Some(gb.as_slice()), out.as_mut_slice())
                .unwrap();
            let rhs = out.as_slice().to_vec();
            let w16: Vec<f16> = float_values(&mut rng, n * k);
            let gw16 = Guarded::from_slice(&w16, hp);
            bf16p12::pack_b32(n, k, &FloatSource::kxn(gw16.as_slice(), n), None, out.as_mut_slice()).unwrap();
            for (lf, dot) in [(bf16p::BF16P8X4, false), (bf16p::BF16P1X4, true)] {
                let mut lhs = Guarded::<u8>::new(lf.packed_size(m, k, 0).unwrap(), bp);
                bf16p::pack(&lf, m, k, gx.as_slice(), k, lhs.as_mut_slice()).unwrap();
                let lhs = lhs.as_slice().to_vec();
                let fam = (lf, fmt);
                float_kernels::<qgemm::f32_bf16p_bf16p::F32Bf16pBf16p>(
                    (m, n, k),
                    &lhs,
                    0,
                    &rhs,
                    fam,
                    dot,
                    &mut runs,
                    &mut ran,
                );
            }
            // bf16, f16 output.
            let x: Vec<f16> = float_values(&mut rng, m * k);
            let gx = Guarded::from_slice(&x, hp);
            let bias: Vec<f16> = float_values(&mut rng, n);
            let gb = Guarded::from_slice(&bias, hp);
            let fmt = bf16p12::BF16P12_B16;
            let mut out = Guarded::<u8>::new(fmt.packed_size(n, k, 0).unwrap(), bp);
            bf16p12::pack_b16(n, k, &FloatSource::nxk(gw16.as_slice(), k), Some(gb.as_slice()), out.as_mut_slice())
                .unwrap();
            let rhs = out.as_slice().to_vec();
            let lf = bf16p::BF16P8X4;
            let mut lhs = Guarded::<u8>::new(lf.packed_size(m, k, 0).unwrap(), bp);
            bf16p::pack(&lf, m, k, gx.as_slice(), k, lhs.as_mut_slice()).unwrap();
            let lhs = lhs.as_slice().to_vec();
            float_kernels::<qgemm::f16_bf16p_bf16p::F16Bf16pBf16p>(
                (m, n, k),
                &lhs,
                0,
                &rhs,
                (lf, fmt),
                false,
                &mut runs,
                &mut ran,
            );
        }
        ran.sort_unstable();
        ran.dedup();
        println!("guard_pages float: {packs} packer rounds, {runs} kernel runs; kernels: {ran:?}");
        let cpu = CpuFeatures::detect();
        // Every float kernel the CPU has ran.
        let mut available: Vec<&str> = [
            qgemm::f32_f32_f32p::available(&cpu).iter().map(|k| k.name()).collect::<Vec<_>>(),
            qgemm::f16_f16_f16p::available(&cpu).iter().map(|k| k.name()).collect(),
            qgemm::f32_bf16p_bf16p::available(&cpu).iter().map(|k| k.name()).collect(),
            qgemm::f16_bf16p_bf16p::available(&cpu).iter().map(|k| k.name()).collect(),
        ]
        .concat();
        available.sort_unstable();
        assert_eq!(ran, available, "the float kernels run are not those the CPU has");
        for t in crate::common::required_tiers() {
            let exists = [
                qgemm::f32_f32_f32p::KERNELS.iter().map(|k| k.tier()).collect::<Vec<_>>(),
                qgemm::f16_f16_f16p::KERNELS.iter().map(|k| k.tier()).collect(),
                qgemm::f32_bf16p_bf16p::KERNELS.iter().map(|k| k.tier()).collect(),
            ]
            .concat()
            .contains(&t);
            assert!(!exists || t.is_available(&cpu), "QGEMM_REQUIRE_TIERS names {t}, which this CPU lacks");
        }
    }

    #[test]
    fn guard_helper_places_slices_at_the_guard() {
        let page = page_size();
        for len in [0usize, 1, 7, 16, 4095, 4096, 4097, 10000] {
            for place in Place::all(1) {
                let mut g = Guarded::<u8>::new(len, place);
                let s = g.as_mut_slice();
                assert_eq!(s.len(), len);
                s.iter_mut().for_each(|b| *b = 1);
                let (start, end) = (s.as_ptr() as usize, s.as_ptr() as usize + len);
                match place {
                    Place::End => assert_eq!(end % page, 0, "{place:?} {len}"),
                    Place::Start => assert_eq!(start % page, 0, "{place:?} {len}"),
                    Place::EndMisaligned(o) => {
                        assert_eq!(start % 16, o);
                        assert!(end.next_multiple_of(page) - end < 16);
                    }
                    Place::StartMisaligned(o) => assert_eq!(start % page, o),
                }
            }
            for place in Place::all(4) {
                let g = Guarded::<f32>::new(len, place);
                assert_eq!(g.as_slice().len(), len);
                assert_eq!(g.as_slice().as_ptr() as usize % 4, 0);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
#[test]
fn guard_pages_skipped() {
    println!("guard_pages: skipped: the guard-page helper needs Linux (mmap/mprotect)");
}
