//! Family `f16_qai8dxp_qsi4cxp` (f16 activations, f16 outputs; the weights and the arithmetic of
//! `qai8dxp_qsi4cxp`): the generic suite (golden vectors, every tier against the scalar reference,
//! tails, clamps, split execution, canaries, rejections) plus this family's own checks.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng};
use qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
use qgemm::half::f16;
use qgemm::lhs::qai8dxp;
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = f16;
    type F = F16Qai8dxpQsi4cxp;
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
        common::rhs::qsi4cxp::golden(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, _bl: usize) -> Vec<u8> {
        common::rhs::qsi4cxp::random(rng, p, n, k)
    }

    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, _bl: usize, byte: u8, out: &mut [u8]) {
        common::rhs::qsi4cxp::filled_into(p, n, k, byte, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        common::rhs::qsi4cxp::check_sizes(case, pj, p)
    }

    fn splits_at(p: &Packing, m_idx_start: usize) -> bool {
        m_idx_start.is_multiple_of(p.mr)
    }

    fn check_golden_lhs(case: &Case, p: &Packing, ours: &[u8], golden: &[u8]) {
        common::f16_lhs::check_golden_lhs(case, p, ours, golden)
    }
}

mod f16_qai8dxp_qsi4cxp {
    use super::*;
    use crate::common::assert_bits_eq;

    family_suite!(super::Fx, qgemm::f16_qai8dxp_qsi4cxp::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias: Vec<f16> =
                common::rhs::qsi4cxp::packed_bias(&rhs, &p, n, k).iter().map(|&b| f16::from_f32(b)).collect();
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
        let w = common::rhs::qsi4cxp::dequant(&case);
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

    #[test]
    fn f16_packer_rounds_by_group_and_position() {
        // mult = 1, zero point 0: rmin = -127.5, rmax = 127.5 (docs/formats.md, ties row).
        let k = 32;
        let mut row = vec![0.0f32; k];
        row[0] = -127.5;
        row[1] = 127.5;
        row[2] = 2.5;
        row[3] = 3.5;
        row[4] = -2.5;
        row[5] = 3.7; // 3.69921875 in f16
        row[24] = 2.5;
        let x: Vec<f16> = row.iter().map(|&v| f16::from_f32(v)).collect();
        let get = |buf: &[u8], p: &Packing, r: usize, j: usize| {
            let bd = p.block_depth();
            buf[(j / bd) * p.mr * bd + (r % p.mr) * bd + j % bd] as i8
        };
        // A single row (mr = 1, bd = 8): to even below bd * floor(k / bd) - 8 = 24, away after.
        let p1 = Packing::int4(1, 4, 16);
        let mut out = vec![0u8; qai8dxp::packed_size(1, k, &p1).unwrap()];
        qai8dxp::quantize_pack_f16(&p1, 1, k, 0, &x, k, &mut out).unwrap();
        let got: Vec<i8> = [2, 3, 4, 5, 24].iter().map(|&j| get(&out, &p1, 0, j)).collect();
        assert_eq!(got, [2, 4, -2, 4, 3]);
        // Four rows packed together (mr = 4): truncated below 8 * floor(k / 8) = 32.
        let p4 = Packing::int4(4, 4, 16);
        let x4: Vec<f16> = x.iter().cycle().take(4 * k).copied().collect();
        let mut out = vec![0u8; qai8dxp::packed_size(4, k, &p4).unwrap()];
        qai8dxp::quantize_pack_f16(&p4, 4, k, 0, &x4, k, &mut out).unwrap();
        for r in 0..4 {
            let got: Vec<i8> = [0, 1, 2, 3, 4, 5, 24].iter().map(|&j| get(&out, &p4, r, j)).collect();
            assert_eq!(got, [-127, 127, 2, 3, -2, 3, 2], "row {r}");
        }
        // Three rows with mr = 4 are not a whole group: rounded like single rows.
        let mut out = vec![0u8; qai8dxp::packed_size(3, k, &p4).unwrap()];
        qai8dxp::quantize_pack_f16(&p4, 3, k, 0, &x4, k, &mut out).unwrap();
        assert_eq!(get(&out, &p4, 2, 3), 4);
    }

    #[test]
    fn f16_packer_rejects_what_kleidiai_corrupts() {
        use qgemm::Error;
        use qgemm::error::{Dim, Param};
        let (m, k) = (5, 40);
        let x = vec![f16::from_f32(0.5); m * k];
        let p = Packing::int4(4, 4, 8);
        let mut out = vec![0u8; 4 * qai8dxp::packed_size(m, k, &p).unwrap()];
        assert_eq!(
            qai8dxp::quantize_pack_f16(&p, 3, k, 2, &x, k, &mut out),
            Err(Error::MisalignedStart { dim: Dim::MIdx, value: 2, step: 4 })
        );
        assert!(qai8dxp::quantize_pack_f16(&p, 1, k, 4, &x, k, &mut out).is_ok());
        let bd16 = Packing { sr: 1, ..Packing::int4(4, 4, 16) };
        assert_eq!(
            qai8dxp::quantize_pack_f16(&bd16, m, k, 0, &x, k, &mut out),
            Err(Error::Unsupported { param: Param::Kr, value: 16 })
        );
        let mr2 = Packing::int4(2, 4, 8);
        assert_eq!(
            qai8dxp::quantize_pack_f16(&mr2, m, k, 0, &x, k, &mut out),
            Err(Error::Unsupported { param: Param::Mr, value: 2 })
        );
    }

    const FAMILY: &str = "f16_qai8dxp_qsi4cxp";
    /// KleidiAI's packing with the borrowed zero points (`mr = 4`, `kr / sr = 4`).
    const DEFECTIVE: Packing = Packing::int4(4, 4, 8);
}
