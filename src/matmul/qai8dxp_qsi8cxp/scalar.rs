//! Portable scalar tier: the reference every other tier is tested against. Works for any
//! packing the packers accept and builds on every target.
//!
//! Arithmetic (docs/formats.md, §Arithmetic: qai8dxp_qsi8cxp kernels), per output `(r, c)`:
//!
//! ```text
//! iacc = wrap32(sum_{j<Kp} qL[r][j] * w[c][j]) + rsum[c] * offset[r]
//! out  = fl(fl(float(iacc) * fl(scale[c] * dq[r])) + bias[c]);  dst = min(max(out, lo), hi)
//! ```

use crate::arith::{clamp_arm, read_f32, read_i32};
use crate::element::Element;
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// The scalar kernel for any `packing`.
///
/// # Safety
///
/// `args` satisfies the contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)
/// for a kernel with this `packing` (valid pointers to `ceil(m/mr)` LHS tiles, `ceil(n/nr)` RHS
/// tiles and `m` output rows of `n` elements; `m, n, k >= 1`), and `packing` is legal for both
/// packers, and `strides` are the family's tile strides for this `k` and `packing`.
pub(crate) unsafe fn matmul_unchecked<O: Element>(packing: &Packing, args: &UncheckedArgs<O>, strides: &TileStrides) {
    let Packing { mr, nr, .. } = *packing;
    let bd = packing.block_depth();
    let (m, n, k) = (args.m, args.n, args.k);
    // Sizes were validated by the caller, so none of these overflow.
    let kp = k.div_ceil(32) * 32;
    let (lts, rts) = (strides.lhs, strides.rhs);
    // SAFETY: the caller guarantees `ceil(m/mr)` readable LHS tiles and `ceil(n/nr)` RHS tiles
    // of these strides, which nothing writes during the call.
    let (lhs, rhs) = unsafe { args.packed(packing, lts, rts) };
    for r in 0..m {
        let lt = &lhs[(r / mr) * lts..(r / mr + 1) * lts];
        let slot = r % mr;
        let offset = read_i32(lt, mr * kp + 4 * slot);
        let dq = read_f32(lt, mr * kp + 4 * mr + 4 * slot);
        for c in 0..n {
            let rt = &rhs[(c / nr) * rts..(c / nr + 1) * rts];
            let i = c % nr;
            let mut iacc = 0i32;
            for j in 0..kp {
                let q = lt[(j / bd) * mr * bd + slot * bd + j % bd] as i8 as i32;
                let w = rt[(j / bd) * nr * bd + i * bd + j % bd] as i8 as i32;
                iacc = iacc.wrapping_add(q * w);
            }
            let extras = nr * kp;
            let rsum = read_i32(rt, extras + 4 * i);
            let scale = read_f32(rt, extras + 4 * nr + 4 * i);
            let bias = read_f32(rt, extras + 8 * nr + 4 * i);
            let iacc = iacc.wrapping_add(rsum.wrapping_mul(offset));
            let out = (iacc as f32) * (scale * dq) + bias;
            let v = clamp_arm(out, args.clamp_min, args.clamp_max);
            // SAFETY: `r < m`, `c < n`: inside the rectangle the caller made writable.
            unsafe { args.store(r, c, v) };
        }
    }
}
