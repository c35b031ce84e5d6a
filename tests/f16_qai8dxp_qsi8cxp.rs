//! Family `f16_qai8dxp_qsi8cxp` (f16 activations, f16 outputs; the weights and the arithmetic of
//! `qai8dxp_qsi8cxp`): the generic suite (golden vectors, every tier against the scalar reference,
//! tails, clamps, split execution, canaries, rejections) and the f16 packer's divergence from
//! KleidiAI's (`common::f16_lhs`; the packer's own tests are in tests/f16_qai8dxp_qsi4cxp.rs).

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng};
use qgemm::half::f16;
use qgemm::lhs::qai8dxp;
use qgemm::{Packing, Result};
use serde_json::Value;

f16_family_tests! {
    f16_qai8dxp_qsi8cxp, F16Qai8dxpQsi8cxp, qsi8cxp, Packing::int8(4, 4, 4);
}
