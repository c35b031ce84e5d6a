//! Scalar tier of `f16_qsi8d32p_qai4c32p`: [`qsi8d32p_qai4c32p`](crate::qsi8d32p_qai4c32p)'s
//! portable reference (generic over the output type), which rounds each clamped result to f16
//! as it stores it (`Element::from_f32`: round to nearest even).

pub(crate) use crate::matmul::qsi8d32p_qai4c32p::scalar::matmul_unchecked;
