//! # qgemm
//!
//! `no_std`, allocation-free low-bit matrix-multiply micro-kernels for Arm Cortex-A (aarch64),
//! bit-compatible with Arm's KleidiAI: weights packed by either library work with the other,
//! and every kernel tier produces exactly KleidiAI's output bits.
//!
//! The caller owns every buffer. A matmul is three steps:
//!
//! 1. pack the weights once ([`rhs`]; [`quant`] turns f32, f16 or bf16 weights into a packer's
//!    raw input),
//! 2. quantize and pack the activations on every call ([`lhs`]),
//! 3. run a [`Kernel`] of the family on the packed operands.
//!
//! Kernels come in ISA tiers ([`Tier`]): portable scalar, NEON intrinsics, `SDOT` (dotprod) and
//! `SMMLA` (i8mm) assembly, FP16 and BF16. A family's catalogue lists [`Descriptor`]s; its
//! `select` picks the best one for the [`CpuFeatures`] you pass and resolves it for that CPU
//! (tile shapes may scale with the vector length), and a descriptor refuses to resolve for a CPU
//! that lacks a feature it requires.
//!
//! Families:
//!
//! * [`qai8dxp_qsi4cxp`]: int4 weights with per-channel f32 scales × int8 activations
//!   quantized per row at run time;
//! * [`qai8dxp_qsi4c32p`]: int4 weights with a bf16 scale per block of 32 (or 64, ...) × int8
//!   per-row activations (the quantized Llama 3.2 format);
//! * [`qsi8d32p_qsi4c32p`]: GGML `Q4_0` weights (f16 scale per block) × int8 activations
//!   quantized per block (`Q8_0`-like);
//! * [`qai8dxp_qsi8cxp`]: int8 weights with per-channel f32 scales × int8 per-row activations
//!   (for layers that lose too much accuracy at 4 bits).
//! * [`f16_qai8dxp_qsi4cxp`], [`f16_qai8dxp_qsi8cxp`]: the int4 and int8 per-channel families with
//!   [`half::f16`] activations (quantized per row by [`lhs::qai8dxp::quantize_pack_f16`]) and f16
//!   outputs;
//! * [`bf16_qai8dxp_qsi4cxp`], [`bf16_qai8dxp_qsi4c32p`]: the int4 per-channel and per-block
//!   families with [`half::bf16`] activations and outputs;
//! * [`qsi8d32p_qai4c32p`], [`f16_qsi8d32p_qai4c32p`]: asymmetric int4 weights (an f32 scale and
//!   an f32 offset per block, GGML `Q4_1`-like) × int8 activations quantized per block from f32
//!   or f16 (f32 or f16 outputs);
//! * [`qai8dxp_qsu2cxp`]: 2-bit weights (codes mapped through a 4-entry look-up table, default
//!   `{-2, -1, 0, 1}`, with a per-channel f32 scale) × int8 per-row activations.
//!
//! * the float families ([`float`]): [`f32_f32_f32p`] and [`f16_f16_f16p`] (`FMLA` on unpacked
//!   f32/f16 activations), [`f32_bf16p_bf16p`] and [`f16_bf16p_bf16p`] (`BFMMLA`/`BFDOT` on
//!   activations and weights packed as bf16), for attention products and unquantized layers.
//!
//! Activation and output element types implement [`Element`]; the operator layer
//! ([`op::Linear`]) packs weights once and runs any family with slices of those types.
//!
//! ## Features
//!
//! * `std` (off): run-time feature detection with [`CpuFeatures::detect`].
//! * `defmt` (off): `defmt::Format` for the public error and enum types.
//!
//! ## Errors and panics
//!
//! Every public function validates shapes, strides and buffer lengths and returns an
//! [`Error`]; none panics on caller input, allocates, or touches memory outside the slices it
//! was given.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[cfg(feature = "std")]
extern crate std;

mod arith;
pub mod cpu;
pub mod element;
pub mod error;
pub mod lhs;
#[macro_use]
pub mod matmul;
pub mod float;
pub mod op;
mod packing;
pub mod quant;
pub mod rhs;

pub use cpu::{CpuFeatures, Feature, FeatureSet};
pub use element::Element;
pub use error::{Error, Result};
pub use float::{f16_bf16p_bf16p, f16_f16_f16p, f32_bf16p_bf16p, f32_f32_f32p};
/// The `half` crate, whose `bf16` and `f16` types the per-block packers take.
pub use half;
pub use matmul::{
    Clamp, Descriptor, Extent, Family, FamilyVisitor, Kernel, LhsFormat, LhsPacking, LhsStride, Lut, MatmulArgs,
    Packing, Params, RhsFormat, RhsPacking, Shape, Tier, UncheckedArgs, visit_families,
};
pub use matmul::{
    bf16_qai8dxp_qsi4c32p, bf16_qai8dxp_qsi4cxp, f16_qai8dxp_qsi4cxp, f16_qai8dxp_qsi8cxp, f16_qsi8d32p_qai4c32p,
    qai8dxp_qsi4c32p, qai8dxp_qsi4cxp, qai8dxp_qsi8cxp, qai8dxp_qsu2cxp, qsi8d32p_qai4c32p, qsi8d32p_qsi4c32p,
};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
