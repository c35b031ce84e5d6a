//! Matmul micro-kernels: the one kernel model every family shares, quantized or float, and the
//! validated run path.
//!
//! A family (e.g. [`qai8dxp_qsi4cxp`], [`f32_f32_f32p`](crate::f32_f32_f32p)) is a pair of
//! operand formats and an arithmetic. Its catalogue lists [`Descriptor`]s, one per (tile, ISA
//! tier): each names the features it requires and its tile [`Shape`] (fixed, or
//! a multiple of the streaming vector length). Resolved for a CPU ([`Descriptor::resolve`], or
//! the family's `select`) a descriptor becomes a [`Kernel`], whose [`Packing`] both operands
//! must be packed with and whose `m_step x n_step` grid its sub-rectangles start on.
//! [`Kernel::run`] validates everything and then calls the tier's `unsafe` entry, which takes
//! raw pointers ([`UncheckedArgs`]) exactly like KleidiAI's `run_matmul`. Family-specific
//! inputs travel as the family's [`Params`] ([`Lut`], [`LhsStride`]), never in shared fields.

#[macro_use]
mod catalogue;
mod args;
mod kernel;
mod tier;

#[macro_use]
mod arch;
pub mod bf16_qai8dxp_qsi4c32p;
pub mod bf16_qai8dxp_qsi4cxp;
pub mod f16_qai8dxp_qsi4cxp;
pub mod f16_qai8dxp_qsi8cxp;
pub mod f16_qsi8d32p_qai4c32p;
pub mod qai8dxp_qsi4c32p;
pub mod qai8dxp_qsi4cxp;
pub mod qai8dxp_qsi8cxp;
pub mod qai8dxp_qsu2cxp;
pub mod qsi8d32p_qai4c32p;
pub mod qsi8d32p_qsi4c32p;

pub use crate::packing::{Extent, LhsFormat, LhsPacking, Packing, RhsFormat, RhsPacking, Shape};
pub use args::{Clamp, LhsStride, Lut, MatmulArgs, Params, UncheckedArgs};
pub use catalogue::{MAX_KERNELS, available, select_for, select_from};
pub(crate) use catalogue::{concat_kernels, total_len};
pub use kernel::{Descriptor, Family, Kernel};
pub(crate) use kernel::{RawFn, TileStrides, check_depth, sealed};
pub use tier::Tier;

/// Something done once per family, generic over it: see [`visit_families`].
pub trait FamilyVisitor {
    /// Called with each family in turn.
    fn visit<F: Family>(&mut self);
}

/// Calls `visitor.visit::<F>()` for every family of the crate, quantized and float, in the
/// order of the C family codes (`QGEMM_FAMILY_*`, 0 to 14). The one list of families: tests,
/// examples and CI scripts that cover "every family" iterate it instead of writing one out.
pub fn visit_families<V: FamilyVisitor>(visitor: &mut V) {
    visitor.visit::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>();
    visitor.visit::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>();
    visitor.visit::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>();
    visitor.visit::<qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>();
    visitor.visit::<f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>();
    visitor.visit::<f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>();
    visitor.visit::<bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>();
    visitor.visit::<bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>();
    visitor.visit::<qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>();
    visitor.visit::<f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>();
    visitor.visit::<qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>();
    visitor.visit::<crate::f32_f32_f32p::F32F32F32p>();
    visitor.visit::<crate::f16_f16_f16p::F16F16F16p>();
    visitor.visit::<crate::f32_bf16p_bf16p::F32Bf16pBf16p>();
    visitor.visit::<crate::f16_bf16p_bf16p::F16Bf16pBf16p>();
}

/// Longest quantization block the SIMD tiers of the per-block families take: the asm tiers sum
/// `16 * S` per block in int32, which cannot wrap for `bl <= 2^16` (`|S| <= bl * 128 * 8`);
/// longer blocks run the family's scalar kernel, which sums `S` itself.
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
pub(crate) const MAX_SIMD_BLOCK_LEN: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuFeatures;
    use crate::error::Error;

    /// The catalogue's invariants, for every family (also the float ones).
    pub(crate) fn check_catalogue<F: Family>() {
        let ks = F::kernels();
        assert!(ks.len() <= MAX_KERNELS, "{}: {} kernels", F::NAME, ks.len());
        let unpacked = <F::Params as Params>::DEFAULT.lhs_stride().is_some();
        assert_eq!(unpacked, core::mem::size_of::<F::Lhs>() > 1, "{}: LHS element", F::NAME);
        for (i, a) in ks.iter().enumerate() {
            assert!(ks[i + 1..].iter().all(|b| b.name() != a.name()), "{} twice", a.name());
            let s = a.shape();
            assert_eq!(s.lhs.is_packed(), !unpacked, "{}", a.name());
            assert!(a.requires().contains(a.tier().features()), "{}", a.name());
            // Steps are whole tiles at the largest vector length too.
            let (ms, ns, mr, nr) = (s.m_step.max(), s.n_step.max(), s.mr.max(), s.nr.max());
            assert!(ms % mr == 0 && ns % nr == 0, "{}: steps", a.name());
            assert!(mr <= crate::packing::MAX_TILE && nr <= crate::packing::MAX_TILE, "{}", a.name());
            assert!(a.name().contains(F::NAME.split('_').next().unwrap_or("")), "{}", a.name());
            if a.tier() == Tier::Scalar {
                assert!(s.is_fixed() && a.requires() == crate::cpu::FeatureSet::EMPTY, "{}", a.name());
            }
            // Every fixed packing has a scalar kernel, so any packed buffer runs on any CPU.
            if s.is_fixed() {
                let p = a.packing_on(&crate::CpuFeatures::NONE).unwrap();
                assert!(
                    ks.iter().any(|b| b.tier() == Tier::Scalar
                        && b.shape().lhs == s.lhs
                        && b.shape().rhs == s.rhs
                        && b.packing_on(&crate::CpuFeatures::NONE) == Some(p)),
                    "{}",
                    a.name()
                );
            }
        }
        // The preferred packing has a portable kernel (`select` never fails).
        let cpu = crate::CpuFeatures::NONE;
        let k = select_for::<F>(&cpu, 1, &F::PREFERRED_RHS).expect("a scalar kernel of PREFERRED_RHS");
        assert_eq!(k.tier(), Tier::Scalar);
        assert!(select_for::<F>(&cpu, 16, &F::PREFERRED_RHS).is_some());
    }

    #[test]
    fn clamp_rejects_nan_and_inverted_bounds_with_the_bounds() {
        assert_eq!(Clamp::new(2.0, 1.0), Err(Error::InvalidClamp { min: 2.0, max: 1.0 }));
        let Err(Error::InvalidClamp { min, max }) = Clamp::new(f32::NAN, 1.0) else { panic!("NaN accepted") };
        assert!(min.is_nan() && max == 1.0);
        assert!(Clamp::new(f32::NEG_INFINITY, f32::INFINITY).is_ok());
    }

    /// `select_from` skips descriptors before resolving them; it must still pick what the
    /// policy, applied to every resolved kernel, picks: for every family, CPU, `m` and packing.
    #[test]
    fn select_from_picks_what_the_policy_picks() {
        fn by_policy<F: Family>(cpu: &CpuFeatures, m: usize, rhs: Option<&RhsPacking>) -> Option<Kernel<F>> {
            let fit = |k: &Kernel<F>| (m <= 1) == (k.packing().mr == 1);
            let mut best: Option<Kernel<F>> = None;
            for k in F::kernels().iter().filter_map(|d| d.resolve(cpu).ok()) {
                if rhs.is_some_and(|r| k.rhs_packing() != *r) {
                    continue;
                }
                if best.as_ref().is_none_or(|b| (fit(&k), k.tier()) > (fit(b), b.tier())) {
                    best = Some(k);
                }
            }
            best
        }
        struct Compare(usize);
        impl FamilyVisitor for Compare {
            fn visit<F: Family>(&mut self) {
                use crate::cpu::Feature::*;
                let none = CpuFeatures::NONE;
                // SAFETY: the kernels are only selected here, never run.
                let cpus = unsafe {
                    let neon = none.with(Neon);
                    [none, neon, neon.with(Dotprod), neon.with(Dotprod).with(I8mm).with(Fp16).with(Bf16)]
                };
                let packings: std::vec::Vec<RhsPacking> =
                    F::kernels().iter().filter_map(|d| d.resolve(&cpus[3]).ok()).map(|k| k.rhs_packing()).collect();
                for cpu in &cpus {
                    for m in [0, 1, 2, 3, 4, 7, 8, 16, 33] {
                        for rhs in core::iter::once(None).chain(packings.iter().map(Some)) {
                            let got = select_from(F::kernels(), cpu, m, rhs, None);
                            let want = by_policy::<F>(cpu, m, rhs);
                            assert_eq!(got.map(|k| k.name()), want.map(|k| k.name()), "{} m {m} {rhs:?}", F::NAME);
                            self.0 += 1;
                        }
                    }
                }
            }
        }
        let mut c = Compare(0);
        visit_families(&mut c);
        assert!(c.0 > 0);
    }

    /// A descriptor whose tile scales with the streaming vector length resolves only where the
    /// length is known ([`Error::VectorLengthUnknown`] otherwise), to the tile of that length;
    /// `Shape::may_read` accepts the weights of any length, `select_from` only those of the CPU's.
    #[test]
    fn vector_length_shapes_resolve_only_with_a_known_length() {
        use crate::cpu::Feature;
        use crate::packing::Extent;
        type F = qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
        let scalar = F::kernels().iter().find(|d| d.tier() == Tier::Scalar).unwrap();
        let vl = Extent::Vl { times: 1, lane_bytes: 4 };
        let shape = Shape { n_step: vl, nr: vl, ..scalar.shape() };
        let d: &'static Descriptor<F> = std::boxed::Box::leak(std::boxed::Box::new(Descriptor {
            name: "vl_test",
            tier: Tier::Scalar,
            requires: crate::FeatureSet::EMPTY.and(Feature::Sme),
            shape,
            raw: scalar.raw,
            family: core::marker::PhantomData,
        }));
        // SAFETY: the kernel is only resolved here, never run.
        let sme = unsafe { CpuFeatures::NONE.with(Feature::Neon).with(Feature::Sme) };
        assert_eq!(d.resolve(&sme).map(|k| k.name()), Err(Error::VectorLengthUnknown));
        for svl in [16, 64, 128] {
            // SAFETY: as above.
            let cpu = unsafe { sme.with_svl(svl) }.unwrap();
            let k = d.resolve(&cpu).unwrap();
            assert_eq!((k.n_step(), k.packing().nr), (svl / 4, svl / 4));
            assert!(shape.may_read(&k.rhs_packing()));
            let list = [d];
            assert_eq!(
                select_from(&list, &cpu, 4, Some(&k.rhs_packing()), None).map(|k| k.packing().nr),
                Some(svl / 4)
            );
            // SAFETY: as above.
            let other = unsafe { sme.with_svl(svl * 2) }.unwrap();
            assert!(select_from(&list, &other, 4, Some(&k.rhs_packing()), None).is_none());
        }
        assert!(select_from(&[d], &sme, 4, None, None).is_none());
    }

    #[test]
    fn catalogues_are_consistent() {
        struct Check(usize);
        impl FamilyVisitor for Check {
            fn visit<F: Family>(&mut self) {
                check_catalogue::<F>();
                self.0 += 1;
            }
        }
        let mut c = Check(0);
        visit_families(&mut c);
        assert_eq!(c.0, 15);
    }
}
