//! Portable scalar tier: the reference every other tier is tested against; any packing.
//!
//! Arithmetic (docs/formats.md, §Arithmetic: qsi8d32p_qai4c32p kernels), per output `(r, c)`:
//!
//! ```text
//! acc = +0.0
//! for each block b:
//!     acc = fma(zero[c][b], bsum[r][b], acc)
//!     acc = fma(float(16 * sum_{j in b} qL[r][j] * w[c][j]), fl(scale16[c][b] * scale[r][b]), acc)
//! dst = min(max(fl(acc + bias[c]), lo), hi)
//! ```
//!
//! Byte `q` of each 32-depth group of a block holds depth `q` (low nibble) and `q + 16`.

use crate::arith::{clamp_arm, fma, read_f32};
use crate::element::Element;
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// The scalar kernel for any `packing`.
///
/// # Safety
///
/// `args` satisfies the contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)
/// for a kernel with this `packing` (valid pointers to `ceil(m/mr)` LHS tiles, `ceil(n/nr)` RHS
/// tiles and `m` output rows of `n` elements; `m, n >= 1`; `bl` a multiple of 32 dividing
/// `k >= 1`), `packing` is legal for both packers, and `strides` are the family's tile
/// strides for this `k`, `bl` and `packing`.
pub(crate) unsafe fn matmul_unchecked<O: Element>(packing: &Packing, args: &UncheckedArgs<O>, strides: &TileStrides) {
    let Packing { mr, nr, .. } = *packing;
    let bd = packing.block_depth();
    let (m, n, k, bl) = (args.m, args.n, args.k, args.bl);
    let (lts, rts) = (strides.lhs, strides.rhs);
    // SAFETY: the caller guarantees `ceil(m/mr)` readable LHS tiles and `ceil(n/nr)` RHS tiles
    // of these strides, which nothing writes during the call.
    let (lhs, rhs) = unsafe { args.packed(packing, lts, rts) };
    let nb = k / bl;
    let (lhs_group, rhs_area) = (mr * (bl + 8), nr * (bl / 2 + 8));
    for r in 0..m {
        let lt = &lhs[(r / mr) * lts..(r / mr + 1) * lts];
        let slot = r % mr;
        for c in 0..n {
            let rt = &rhs[(c / nr) * rts..(c / nr + 1) * rts];
            let i = c % nr;
            let mut acc = 0.0f32;
            for b in 0..nb {
                let group = &lt[b * lhs_group..(b + 1) * lhs_group];
                let area = &rt[b * rhs_area..(b + 1) * rhs_area];
                let lhs_at = |j: usize| group[(j / bd) * mr * bd + slot * bd + j % bd] as i8 as i32;
                let mut sum = 0i32;
                for q in 0..bl / 2 {
                    let byte = area[(q / bd) * nr * bd + i * bd + q % bd];
                    let lo = ((byte << 4) as i8 >> 4) as i32;
                    let hi = (byte as i8 >> 4) as i32;
                    let j = 32 * (q / 16) + q % 16;
                    sum = sum.wrapping_add(lo * lhs_at(j) + hi * lhs_at(j + 16));
                }
                let (extras_l, extras_r) = (mr * bl, nr * bl / 2);
                let (bsum, ls) = (read_f32(group, extras_l + 4 * slot), read_f32(group, extras_l + 4 * mr + 4 * slot));
                let (zero, rs) = (read_f32(area, extras_r + 4 * i), read_f32(area, extras_r + 4 * nr + 4 * i));
                acc = fma(zero, bsum, acc);
                acc = fma(sum.wrapping_mul(16) as f32, rs * ls, acc);
            }
            let out = acc + read_f32(rt, nb * rhs_area + 4 * i);
            let v = clamp_arm(out, args.clamp_min, args.clamp_max);
            // SAFETY: `r < m`, `c < n`: inside the rectangle the caller made writable.
            unsafe { args.store(r, c, v) };
        }
    }
}
