//! LHS (activation) formats and their quantize-and-pack routines. One module per packed format.
//!
//! Activations are quantized and packed on every call, with the `mr, kr, sr` of the kernel that
//! will consume them ([`Kernel::packing`](crate::Kernel::packing)).

pub mod qai8dxp;
mod quant;
pub mod qsi8d32p;
