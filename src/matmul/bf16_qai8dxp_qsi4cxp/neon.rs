//! NEON tier of `bf16_qai8dxp_qsi4cxp`: the NEON kernels of [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp) (every
//! packing), the shared tile driver storing bf16 (round to nearest even in integer operations).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4cxp::neon::qsi4cxp_neon_kernels!("bf16", kr16);
