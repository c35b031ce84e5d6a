//! The tier machinery every family shares, one module per ISA tier (the families' own files,
//! `matmul/<family>/{scalar,neon,dotprod,i8mm}.rs`, hold only what differs between families):
//!
//! * [`asm`]: what both `asm!` tiers share: the tile drivers ([`asm::gemv`], [`asm::gemm`]), the
//!   one tile-argument type, the clobber macro, the constants table, the output stores;
//! * [`dotprod`]: the `SDOT` tier's text generators (GEMV and GEMM K groups, the per-channel
//!   epilogues, the per-block tile skeletons) and its drivers;
//! * [`i8mm`]: the `SMMLA` tier's text generators and the per-block tile kernels;
//! * [`neon`]: the NEON-intrinsics tier's generic tile driver and K loops.
//!
//! The scalar tier has no shared machinery: each family's `scalar.rs` is the executable form of
//! its arithmetic.

#[macro_use]
pub(crate) mod asm;
#[macro_use]
pub(crate) mod i8mm;
#[macro_use]
pub(crate) mod dotprod;
pub(crate) mod neon;
