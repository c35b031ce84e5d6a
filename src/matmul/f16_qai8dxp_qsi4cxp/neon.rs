//! NEON tier of `f16_qai8dxp_qsi4cxp`: the NEON kernels of [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp) (every
//! packing), the shared tile driver storing f16 (`FCVTN`).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4cxp::neon::qsi4cxp_neon_kernels!("f16", all);
