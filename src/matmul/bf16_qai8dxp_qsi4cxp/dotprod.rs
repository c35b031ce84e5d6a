//! dotprod tier of `bf16_qai8dxp_qsi4cxp`: the `SDOT` tiles of [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp)
//! (every packing and tile), converting the clamped results to bf16 before the stores
//! (round to nearest even in integer operations, so no FEAT_BF16 is needed: unlike KleidiAI, these kernels run on dotprod cores without it, such as Cortex-A55/A76).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4cxp::dotprod::qsi4cxp_dotprod_kernels!("bf16", bf16_out, kr16);
