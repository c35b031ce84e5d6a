//! NEON tier of `f16_qsi8d32p_qai4c32p`: the NEON kernels of
//! [`qsi8d32p_qai4c32p`](crate::qsi8d32p_qai4c32p) (every packing), the shared tile driver storing
//! f16 (`FCVTN`).

use super::Descriptor;

crate::matmul::qsi8d32p_qai4c32p::neon::qai4c32p_neon_kernels!("f16");
