//! Portable scalar tier: the reference every other tier is tested against; any packing.
//!
//! Arithmetic (docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p kernels), per output `(r, c)`:
//!
//! ```text
//! acc = +0.0
//! for each block b:  acc = fma(float(sum_{j in b} qL[r][j] * w[c][j]), f32(bf16 scale[c][b]), acc)
//! acc = fma(rsum[c], float(offset[r]), acc);  acc = fl(acc * dq[r]);  acc = fl(acc + bias[c])
//! dst = min(max(acc, lo), hi)
//! ```

use crate::arith::{clamp_arm, fma, read_f32, read_i32, read_u16};
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
    let block_bytes = nr * (bl / 2 + 2);
    for r in 0..m {
        let lt = &lhs[(r / mr) * lts..(r / mr + 1) * lts];
        let slot = r % mr;
        let lhs_at = |j: usize| lt[(j / bd) * mr * bd + slot * bd + j % bd] as i8 as i32;
        // k is a multiple of 32, so Kp = k.
        let offset = read_i32(lt, mr * k + 4 * slot);
        let dq = read_f32(lt, mr * k + 4 * mr + 4 * slot);
        for c in 0..n {
            let rt = &rhs[(c / nr) * rts..(c / nr + 1) * rts];
            let i = c % nr;
            let mut acc = 0.0f32;
            for b in 0..nb {
                let area = &rt[b * block_bytes..(b + 1) * block_bytes];
                let mut sum = 0i32;
                for q in 0..bl / 2 {
                    let byte = area[(q / bd) * nr * bd + i * bd + q % bd];
                    let lo = ((byte << 4) as i8 >> 4) as i32;
                    let hi = (byte as i8 >> 4) as i32;
                    let d = b * bl + 32 * (q / 16) + q % 16;
                    sum = sum.wrapping_add(lo * lhs_at(d) + hi * lhs_at(d + 16));
                }
                let scale = f32::from_bits(u32::from(read_u16(area, nr * bl / 2 + 2 * i)) << 16);
                acc = fma(sum as f32, scale, acc);
            }
            let extras = nb * block_bytes;
            let rsum = read_f32(rt, extras + 4 * i);
            let bias = read_f32(rt, extras + 4 * nr + 4 * i);
            acc = fma(rsum, offset as f32, acc);
            let out = acc * dq + bias;
            let v = clamp_arm(out, args.clamp_min, args.clamp_max);
            // SAFETY: `r < m`, `c < n`: inside the rectangle the caller made writable.
            unsafe { args.store(r, c, v) };
        }
    }
}
