//! i8mm tier of `bf16_qai8dxp_qsi4cxp`: the `SMMLA` tiles of [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp)
//! (every packing and tile), converting the clamped results to bf16 before the stores
//! (`BFCVTN`: these kernels also need FEAT_BF16 (`Kernel::extra_feature`); a CPU with I8MM but without BF16 runs the dotprod tier).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4cxp::i8mm::qsi4cxp_i8mm_kernels!("bf16", bf16_out, "FEAT_I8MM and FEAT_BF16", also: Bf16);
