//! Family `bf16_qai8dxp_qsi4cxp` (bf16 activations, bf16 outputs; the weights and the arithmetic of
//! `qai8dxp_qsi4cxp`): the generic suite (golden vectors, every tier against the scalar reference,
//! tails, clamps, split execution, canaries, rejections) plus this family's own checks.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng};
use qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
use qgemm::half::bf16;
use qgemm::lhs::qai8dxp;
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = bf16;
    type F = Bf16Qai8dxpQsi4cxp;
    const BLS: &'static [usize] = &[0];

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        start: usize,
        x: &[bf16],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack_bf16(p, m, k, start, x, stride, out)
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
}

mod bf16_qai8dxp_qsi4cxp {
    use super::*;
    use crate::common::assert_bits_eq;

    family_suite!(super::Fx, qgemm::bf16_qai8dxp_qsi4cxp::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias: Vec<bf16> =
                common::rhs::qsi4cxp::packed_bias(&rhs, &p, n, k).iter().map(|&b| bf16::from_f32(b)).collect();
            // Zero row: q = 127 and offset = -127 cancel exactly; the output is the bias, rounded.
            assert_bits_eq(&out[0..n], &bias, "zero row");
            let _ = bl;
        }
    }

    #[test]
    fn bf16_packer_rounds_to_even_then_away_in_the_tail() {
        // mult = 1, zero point 0; k = 36: values 0..32 to even, the last 4 away from zero.
        let k = 36;
        let mut row = vec![0.0f32; k];
        row[0] = -127.5;
        row[1] = 127.5;
        row[2] = 2.5;
        row[3] = -3.5;
        row[33] = 2.5;
        row[34] = -3.5;
        let x: Vec<bf16> = row.iter().map(|&v| bf16::from_f32(v)).collect();
        for p in [Packing::int4(1, 8, 16), Packing::int4(4, 8, 16)] {
            let mut out = vec![0u8; qai8dxp::packed_size(1, k, &p).unwrap()];
            qai8dxp::quantize_pack_bf16(&p, 1, k, 0, &x, k, &mut out).unwrap();
            let kp = 64;
            let get = |j: usize| out[(j / 8) * p.mr * 8 + j % 8] as i8;
            assert_eq!([get(2), get(3), get(33), get(34)], [2, -4, 3, -4], "{p:?}");
            // K padding: x[k - 1] rounded away (0 here).
            assert_eq!(get(kp - 1), 0);
        }
    }

    #[test]
    fn bf16_packer_rejects_what_kleidiai_does_not_take() {
        use qgemm::Error;
        use qgemm::error::{Dim, Param};
        let (m, k) = (5, 64);
        let x = vec![bf16::from_f32(0.5); m * k];
        let p = Packing::int4(4, 8, 16);
        let mut out = vec![0u8; 4 * qai8dxp::packed_size(m, k, &p).unwrap()];
        assert_eq!(
            qai8dxp::quantize_pack_bf16(&p, 3, k, 1, &x, k, &mut out),
            Err(Error::MisalignedStart { dim: Dim::MIdx, value: 1, step: 4 })
        );
        let kr8 = Packing::int4(4, 8, 8);
        assert_eq!(
            qai8dxp::quantize_pack_bf16(&kr8, m, k, 0, &x, k, &mut out),
            Err(Error::Unsupported { param: Param::Kr, value: 8 })
        );
    }
}
