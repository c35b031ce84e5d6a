//! Family `bf16_qai8dxp_qsi4c32p` (bf16 activations, bf16 outputs; the weights and the arithmetic of
//! `qai8dxp_qsi4c32p`): the generic suite (golden vectors, every tier against the scalar reference,
//! tails, clamps, split execution, canaries, rejections) plus this family's own checks.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng};
use qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use qgemm::half::bf16;
use qgemm::lhs::qai8dxp;
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = bf16;
    type F = Bf16Qai8dxpQsi4c32p;
    const BLS: &'static [usize] = &[32, 64];

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
        common::rhs::qsi4c32p::golden(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8> {
        common::rhs::qsi4c32p::random(rng, p, n, k, bl)
    }

    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, out: &mut [u8]) {
        common::rhs::qsi4c32p::filled_into(p, n, k, bl, byte, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        common::rhs::qsi4c32p::check_sizes(case, pj, p)
    }

    fn splits_at(p: &Packing, m_idx_start: usize) -> bool {
        m_idx_start.is_multiple_of(p.mr)
    }
}

mod bf16_qai8dxp_qsi4c32p {
    use super::*;
    use crate::common::assert_bits_eq;

    family_suite!(super::Fx, qgemm::bf16_qai8dxp_qsi4c32p::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias = common::rhs::qsi4c32p::packed_bias(&rhs, &p, n, k, bl);
            // Zero row: the offset term goes through the f32 rsum, so the output is the bias plus
            // a small rounding residue, rounded to bf16: within one bf16 ulp of the bias.
            for (o, b) in out[0..n].iter().zip(&bias) {
                assert!((o.to_f32() - b).abs() <= b.abs() / 128.0 + 1e-3, "zero row: {o} vs bias {b}");
            }
            // Alternating ±bf16::MAX: the range overflows, the dq scale is 0: exactly the bias.
            let want: Vec<bf16> = bias.iter().map(|&b| bf16::from_f32(b)).collect();
            assert_bits_eq(&out[3 * n..4 * n], &want, "±MAX row");
        }
    }
}
