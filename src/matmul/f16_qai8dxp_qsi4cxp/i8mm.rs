//! i8mm tier of `f16_qai8dxp_qsi4cxp`: the `SMMLA` tiles of [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp)
//! (every packing and tile), converting the clamped results to f16 before the stores
//! (`FCVTN`).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4cxp::i8mm::qsi4cxp_i8mm_kernels!("f16", f16_out, "FEAT_I8MM");
