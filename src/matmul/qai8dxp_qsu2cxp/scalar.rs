//! Portable scalar tier of `qai8dxp_qsu2cxp`: the reference every other tier is tested against.
//!
//! Per output `(r, c)`, with `w[j] = (int8) lut[u[c][j]]` (the call's table narrowed to int8, as
//! KleidiAI's kernels narrow it; [`Kernel::run`](crate::Kernel::run) admits only entries in
//! `[-64, 63]`, where narrowing changes nothing):
//!
//! ```text
//! iacc = wrap32(sum_{j<k} qL[r][j] * w[j] + rsum[c] * offset[r]);   f = float(iacc)
//! mr = 1 (KleidiAI's GEMV order):  out = fl(fl(f * fl(dq[r] * scale[c])) + bias[c])
//! mr > 1 (KleidiAI's GEMM order):  out = fl(fl(fl(f * scale[c]) * dq[r]) + bias[c])
//! dst  = min(max(out, lo), hi)
//! ```
//!
//! LHS: `qai8dxp` tiles (`mr * k` chunk-interleaved int8, then `mr` i32 offsets and `mr` f32
//! `dq`). RHS: `qsu2cxp` tiles; depth `j` of column `i` is bits `2 * ((j % 16) / 4)` of byte
//! `(j / 16) * 4 * nr + 4 * i + j % 4`.

use crate::arith::{clamp_arm, read_f32, read_i32};
use crate::element::Element;
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// The scalar kernel for any `packing` of the family.
///
/// # Safety
///
/// `args` satisfies the contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)
/// for a kernel with this `packing` (valid pointers to `ceil(m/mr)` LHS tiles, `ceil(n/nr)` RHS
/// tiles and `m` output rows of `n` elements; `m, n >= 1`; `k >= 1` a multiple of 32), and
/// `strides` are the family's tile strides for this `k` and `packing`.
pub(crate) unsafe fn matmul_unchecked<O: Element>(
    packing: &Packing,
    args: &UncheckedArgs<O, crate::matmul::Lut>,
    strides: &TileStrides,
) {
    let Packing { mr, nr, .. } = *packing;
    let bd = packing.block_depth();
    let (m, n, k) = (args.m, args.n, args.k);
    let (lts, rts) = (strides.lhs, strides.rhs);
    // SAFETY: the caller guarantees `ceil(m/mr)` readable LHS tiles and `ceil(n/nr)` RHS tiles
    // of these strides, which nothing writes during the call.
    let (lhs, rhs) = unsafe { args.packed(packing, lts, rts) };
    let lut = args.params.0.map(|v| i32::from(v as i8));
    for r in 0..m {
        let lt = &lhs[(r / mr) * lts..(r / mr + 1) * lts];
        let slot = r % mr;
        let offset = read_i32(lt, mr * k + 4 * slot);
        let dq = read_f32(lt, mr * k + 4 * mr + 4 * slot);
        for c in 0..n {
            let rt = &rhs[(c / nr) * rts..(c / nr + 1) * rts];
            let i = c % nr;
            let mut iacc = 0i32;
            for j in 0..k {
                let q = i32::from(lt[(j / bd) * mr * bd + slot * bd + j % bd] as i8);
                let byte = rt[(j / 16) * 4 * nr + 4 * i + j % 4];
                let u = (byte >> (2 * ((j % 16) / 4))) & 3;
                iacc = iacc.wrapping_add(q * lut[usize::from(u)]);
            }
            let extras = nr * k / 4;
            let rsum = read_i32(rt, extras + 4 * i);
            let scale = read_f32(rt, extras + 4 * nr + 4 * i);
            let bias = read_f32(rt, extras + 8 * nr + 4 * i);
            let f = iacc.wrapping_add(rsum.wrapping_mul(offset)) as f32;
            // Two roundings each, never fused (arithmetic of the module docs).
            let scaled = if mr == 1 { f * (dq * scale) } else { (f * scale) * dq };
            let out = scaled + bias;
            let v = clamp_arm(out, args.clamp_min, args.clamp_max);
            // SAFETY: `r < m`, `c < n`: inside the rectangle the caller made writable.
            unsafe { args.store(r, c, v) };
        }
    }
}
