//! SIMD tier (not yet written): no kernels.

use super::Kernel;

/// This tier's kernels, best first.
pub const KERNELS: &[&Kernel] = &[];
