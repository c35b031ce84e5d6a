//! Scalar tier of `f16_qai8dxp_qsi8cxp`: [`qai8dxp_qsi8cxp`](crate::qai8dxp_qsi8cxp)'s portable reference
//! (generic over the output type), which rounds each clamped result to f16 as it stores it
//! (`Element::from_f32`: round to nearest even; bf16 in integer operations).

pub(crate) use crate::matmul::qai8dxp_qsi8cxp::scalar::matmul_unchecked;
