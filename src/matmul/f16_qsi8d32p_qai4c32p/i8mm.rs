//! i8mm tier of `f16_qsi8d32p_qai4c32p`: the `SMMLA` tiles of
//! [`qsi8d32p_qai4c32p`](crate::qsi8d32p_qai4c32p), converting the clamped results to f16 before
//! the stores (`FCVTN`).

use super::Descriptor;

crate::matmul::qsi8d32p_qai4c32p::i8mm::qai4c32p_i8mm_kernels!("f16", f16_out);
