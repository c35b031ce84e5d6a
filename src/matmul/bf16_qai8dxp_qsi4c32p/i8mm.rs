//! i8mm tier of `bf16_qai8dxp_qsi4c32p`: the `SMMLA` tiles of [`qai8dxp_qsi4c32p`](crate::qai8dxp_qsi4c32p)
//! (every packing and tile), converting the clamped results to bf16 before the stores
//! (`BFCVTN`: these kernels also need FEAT_BF16 (`Kernel::extra_feature`); a CPU with I8MM but without BF16 runs the dotprod tier).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4c32p::i8mm::qsi4c32p_i8mm_kernels!("bf16", bf16_out, "FEAT_I8MM and FEAT_BF16", also: Bf16);
