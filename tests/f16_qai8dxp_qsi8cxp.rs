//! Family `f16_qai8dxp_qsi8cxp` (f16 activations, f16 outputs; the weights and the arithmetic of
//! `qai8dxp_qsi8cxp`): the generic suite (golden vectors, every tier against the scalar reference,
//! tails, clamps, split execution, canaries, rejections) plus this family's own checks.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng};
use qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use qgemm::half::f16;
use qgemm::lhs::qai8dxp;
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = f16;
    type F = F16Qai8dxpQsi8cxp;
    const BLS: &'static [usize] = &[0];
    const LHS_DEPENDS_ON_MR: bool = true;

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        start: usize,
        x: &[f16],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack_f16(p, m, k, start, x, stride, out)
    }

    fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
        common::rhs::qsi8cxp::golden(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, _bl: usize) -> Vec<u8> {
        common::rhs::qsi8cxp::random(rng, p, n, k)
    }

    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, _bl: usize, byte: u8, out: &mut [u8]) {
        common::rhs::qsi8cxp::filled_into(p, n, k, byte, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        common::rhs::qsi8cxp::check_sizes(case, pj, p)
    }

    fn splits_at(p: &Packing, m_idx_start: usize) -> bool {
        m_idx_start.is_multiple_of(p.mr)
    }

    fn check_golden_lhs(case: &Case, p: &Packing, ours: &[u8], golden: &[u8]) {
        common::f16_lhs::check_golden_lhs(case, p, ours, golden)
    }
}

mod f16_qai8dxp_qsi8cxp {
    use super::*;
    use crate::common::assert_bits_eq;

    family_suite!(super::Fx, qgemm::f16_qai8dxp_qsi8cxp::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias: Vec<f16> =
                common::rhs::qsi8cxp::packed_bias(&rhs, &p, n, k).iter().map(|&b| f16::from_f32(b)).collect();
            // Zero row: q = 127 and offset = -127 cancel exactly; the output is the bias, rounded.
            assert_bits_eq(&out[0..n], &bias, "zero row");
            let _ = bl;
        }
    }

    /// qgemm's f16 packer equals KleidiAI's byte for byte except where KleidiAI adds another
    /// row's zero point (`mr = 4`, `kr / sr = 4`, groups whose zero points differ): the golden
    /// check (`common::f16_lhs`) proves every other byte equal and every differing byte the
    /// borrowed zero point's doing. This lists the cases where the two differ.
    #[test]
    fn f16_packer_diverges_from_kleidiai_only_by_the_borrowed_zero_points() {
        if !common::golden_available("f16 packer divergence") {
            return;
        }
        suite::golden_packed_bytes::<Fx>();
        let list = common::f16_lhs::DIVERGENT.lock().unwrap().clone();
        println!("{}: packed LHS differs from KleidiAI's (borrowed zero points) in {} packings:", FAMILY, list.len());
        for (what, bytes) in &list {
            println!("  {what}: {bytes} bytes");
        }
        assert!(!list.is_empty(), "the golden cases pair rows of different zero points");
        assert!(list.iter().all(|(w, _)| w.contains("mr 4 kr ") && !w.contains("kr 16")), "{list:?}");
    }

    /// On a case where KleidiAI's packer borrows zero points, the kernel on qgemm's bytes stays
    /// within quantization error of the unquantized product (f16 activations times the
    /// dequantized weights, plus the bias), while on KleidiAI's bytes it is off by orders of
    /// magnitude in the rows of groups with different zero points (rows whose results leave the
    /// f16 range are left out).
    #[test]
    fn correct_packer_fixes_the_defective_kernels() {
        if !common::golden_available("f16 packer fix") {
            return;
        }
        let case = common::cases(FAMILY).into_iter().find(|c| c.id.contains("m16_n64_k256__nxk")).unwrap();
        let (m, n, k) = (case.m(), case.n(), case.k());
        let pj = case.packings().iter().find(|pj| common::suite::packing_of(pj) == DEFECTIVE).unwrap();
        let p = DEFECTIVE;
        let x: Vec<f16> = case.values(&case.json["inputs"]["lhs"]["file"]);
        let w = common::rhs::qsi8cxp::dequant(&case);
        let bias = case.bias().unwrap_or(vec![0.0; n]);
        let mut ours = vec![0u8; qai8dxp::packed_size(m, k, &p).unwrap()];
        qai8dxp::quantize_pack_f16(&p, m, k, 0, &x, k, &mut ours).unwrap();
        let theirs = case.bytes(&pj["lhs_packed"]["file"]);
        let rhs = case.bytes(&pj["rhs_packed"]["file"]);
        let kernel = common::suite::scalar_kernel::<Fx>(&p);
        let args = qgemm::MatmulArgs::new(m, n, k);
        let ours = common::run_guarded(kernel, &ours, &rhs, &args);
        let theirs = common::run_guarded(kernel, &theirs, &rhs, &args);
        let (mut err_ours, mut err_theirs) = (0f64, 0f64);
        for r in 0..m {
            let exact: Vec<f64> = (0..n)
                .map(|c| (0..k).map(|j| x[r * k + j].to_f64() * w[c * k + j] as f64).sum::<f64>() + bias[c] as f64)
                .collect();
            let top = exact.iter().fold(0f64, |a, v| a.max(v.abs()));
            if top == 0.0 || top > 60000.0 {
                continue;
            }
            let err = |got: &[f16]| (0..n).fold(0f64, |a, c| a.max((got[r * n + c].to_f64() - exact[c]).abs())) / top;
            err_ours = err_ours.max(err(&ours));
            err_theirs = err_theirs.max(err(&theirs));
        }
        println!(
            "{}: worst row error relative to the row's largest exact result: qgemm {err_ours:.4}, KleidiAI {err_theirs:.1}",
            case.id
        );
        assert!(err_ours < 0.05, "{err_ours}");
        assert!(err_theirs > 100.0 * err_ours, "the case must show the defect: {err_theirs}");
    }

    const FAMILY: &str = "f16_qai8dxp_qsi8cxp";
    /// KleidiAI's packing with the borrowed zero points (`mr = 4`, `kr / sr = 4`).
    const DEFECTIVE: Packing = Packing::int8(4, 4, 4);
}
