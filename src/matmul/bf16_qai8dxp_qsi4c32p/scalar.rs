//! Scalar tier of `bf16_qai8dxp_qsi4c32p`: [`qai8dxp_qsi4c32p`](crate::qai8dxp_qsi4c32p)'s portable reference
//! (generic over the output type), which rounds each clamped result to bf16 as it stores it
//! (`Element::from_f32`: round to nearest even; bf16 in integer operations).

pub(crate) use crate::matmul::qai8dxp_qsi4c32p::scalar::matmul_unchecked;
