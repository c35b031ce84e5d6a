//! NEON tier of `bf16_qai8dxp_qsi4c32p`: the NEON kernels of [`qai8dxp_qsi4c32p`](crate::qai8dxp_qsi4c32p) (every
//! packing), the shared tile driver storing bf16 (round to nearest even in integer operations).

use super::Descriptor;

crate::matmul::qai8dxp_qsi4c32p::neon::qsi4c32p_neon_kernels!("bf16", kr16);
