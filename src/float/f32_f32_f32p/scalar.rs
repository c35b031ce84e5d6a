//! Portable scalar tier of the FMA families (docs/formats.md, §Arithmetic: FMA kernels): one
//! accumulator per output, the bias
//! as its initial value, one fused multiply-add per depth in increasing order, then the clamp.
//! `FMLA` is modelled exactly (`fmaf`; for f16, [`fma_f16`](crate::float::arith::fma_f16)), so
//! every core gets the bits of the NEON and FP16 tiers.

use crate::element::Element;
use crate::float::Tiles;
use crate::float::arith::{clamp_float, default_nan, fma_f32};
use crate::matmul::{LhsStride, Packing, TileStrides, UncheckedArgs};

/// The FMA kernel over element type `T` for any tile: `step(a, b, acc)` is one rounded
/// multiply-add, and the clamp bounds are first rounded to `T` (docs/formats.md, §Arithmetic:
/// float clamp and outputs). A NaN result is the default NaN ([`default_nan`]).
///
/// # Safety
///
/// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)'s contract for a kernel with an
/// unpacked LHS of `T` and a `kr = 1` RHS format of `T` with `p.nr` columns per tile of
/// `s.rhs` bytes.
pub(crate) unsafe fn fma_unchecked<T: Element>(
    p: &Packing,
    a: &UncheckedArgs<T, LhsStride>,
    s: &TileStrides,
    step: fn(T, T, T) -> T,
) {
    let t = Tiles::new(p, s);
    let (m, n, k, nr) = (a.m, a.n, a.k, t.nr);
    // SAFETY: the caller guarantees `ceil(n / nr)` readable RHS tiles, not written meanwhile.
    let rhs = unsafe { core::slice::from_raw_parts(a.rhs_packed, n.div_ceil(nr) * t.rhs_tile) };
    let value = |at: usize| T::from_bits32(u32::from_le_bytes(word(rhs, at, T::SIZE)));
    let (lo, hi) = (T::from_f32(a.clamp_min).to_f32(), T::from_f32(a.clamp_max).to_f32());
    for r in 0..m {
        // SAFETY: row `r < m` holds `k` readable elements `r * stride` elements on (caller).
        let x = unsafe { core::slice::from_raw_parts(a.lhs.cast::<T>().add(r * a.params.0), k) };
        for c in 0..n {
            let (tile, cc) = ((c / nr) * t.rhs_tile, c % nr);
            let mut acc = value(tile + cc * T::SIZE);
            let data = tile + nr * T::SIZE + cc * T::SIZE;
            for (j, &xj) in x.iter().enumerate() {
                acc = step(xj, value(data + j * nr * T::SIZE), acc);
            }
            let v = T::from_f32(clamp_float(default_nan(acc.to_f32()), lo, hi));
            // SAFETY: `r < m`, `c < n`: inside the rectangle the caller made writable.
            unsafe { a.dst.byte_add(r * a.dst_stride_row).add(c).write_unaligned(v) };
        }
    }
}

/// `size` little-endian bytes at `at`, zero-extended to 4.
#[inline]
fn word(buf: &[u8], at: usize, size: usize) -> [u8; 4] {
    let mut w = [0u8; 4];
    w[..size].copy_from_slice(&buf[at..at + size]);
    w
}

/// The scalar kernel of `f32_f32_f32p` (any `kr = 1` f32 format).
///
/// # Safety
///
/// See [`fma_unchecked`].
pub(crate) unsafe fn matmul_unchecked(p: &Packing, a: &UncheckedArgs<f32, LhsStride>, s: &TileStrides) {
    // SAFETY: forwarded.
    unsafe { fma_unchecked(p, a, s, fma_f32) }
}
