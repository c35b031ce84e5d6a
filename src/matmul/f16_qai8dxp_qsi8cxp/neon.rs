//! NEON tier of `f16_qai8dxp_qsi8cxp`: the NEON kernels of [`qai8dxp_qsi8cxp`](crate::qai8dxp_qsi8cxp) (every
//! packing), the shared tile driver storing f16 (`FCVTN`).

use super::Descriptor;

crate::matmul::qai8dxp_qsi8cxp::neon::qsi8cxp_neon_kernels!("f16");
