//! dotprod tier of `f16_qai8dxp_qsi4cxp`: the `SDOT` tiles of [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp)
//! (every packing and tile), converting the clamped results to f16 before the stores
//! (`FCVTN`).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4cxp::dotprod::qsi4cxp_dotprod_kernels!("f16", f16_out, all);
