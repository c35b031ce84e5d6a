//! i8mm tier of `qai8dxp_qsi4c32p` (not written yet).

use super::Kernel;

/// This tier's kernels, best first.
pub(super) const KERNELS: &[&Kernel] = &[];
