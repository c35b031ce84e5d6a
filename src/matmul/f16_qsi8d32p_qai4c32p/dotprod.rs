//! dotprod tier of `f16_qsi8d32p_qai4c32p`: the `SDOT` tiles of
//! [`qsi8d32p_qai4c32p`](crate::qsi8d32p_qai4c32p) (every packing and tile), converting the
//! clamped results to f16 before the stores (`FCVTN`).

use super::Descriptor;

crate::matmul::qsi8d32p_qai4c32p::dotprod::qai4c32p_dotprod_kernels!("f16", f16_out);
