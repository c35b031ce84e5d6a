//! Portable scalar tier of the bf16 families (docs/formats.md, §Arithmetic: bf16 kernels):
//! `BFMMLA` and `BFDOT` modelled exactly (products flushed, sums rounded to odd with flush to
//! zero, every NaN the default NaN), so cores without FEAT_BF16 get the bits of the BF16 tier.

use crate::element::Element;
use crate::float::Tiles;
use crate::float::arith::{bf_dot_add, bf16_value, clamp_float, default_nan};
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// Reads the packed operands of one call.
struct Operands<'a> {
    lhs: &'a [u8],
    rhs: &'a [u8],
    t: Tiles,
    bias_size: usize,
}

impl Operands<'_> {
    fn bf16(buf: &[u8], at: usize) -> f32 {
        bf16_value(u16::from_le_bytes([buf[at], buf[at + 1]]))
    }

    /// LHS value of row `r` at depth `j` (`bf16p<mr>x4`).
    fn a(&self, r: usize, j: usize) -> f32 {
        let mr = self.t.mr;
        Self::bf16(self.lhs, (r / mr) * self.t.lhs_tile + ((j / 4 * mr + r % mr) * 4 + j % 4) * 2)
    }

    /// RHS value of column `c` at depth `j` (`bf16p12x4`).
    fn b(&self, c: usize, j: usize) -> f32 {
        let nr = self.t.nr;
        let tile = (c / nr) * self.t.rhs_tile + nr * self.bias_size;
        Self::bf16(self.rhs, tile + ((j / 4 * nr + c % nr) * 4 + j % 4) * 2)
    }

    /// The bias of column `c`, widened exactly.
    fn bias<B: Element>(&self, c: usize) -> f64 {
        let at = (c / self.t.nr) * self.t.rhs_tile + (c % self.t.nr) * B::SIZE;
        let mut w = [0u8; 4];
        w[..B::SIZE].copy_from_slice(&self.rhs[at..at + B::SIZE]);
        f64::from(B::from_bits32(u32::from_le_bytes(w)).to_f32())
    }
}

/// Which instruction's arithmetic a kernel has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bf16Op {
    /// `BFMMLA`: one accumulator, pairs (0, 1) then (2, 3) of each block.
    Mmla,
    /// `BFDOT`: pairs (0, 1) into the bias accumulator, (2, 3) into a second one from +0, added
    /// at the end in f32.
    Dot,
}

/// The bf16 kernel with biases of type `B` and outputs of type `O`.
///
/// # Safety
///
/// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)'s contract for a kernel with a
/// `bf16p<p.mr>x4` LHS and a `bf16p<p.nr>x4` RHS with biases of `B`.
pub(crate) unsafe fn bf16_unchecked<B: Element, O: Element>(
    p: &Packing,
    a: &UncheckedArgs<O>,
    s: &TileStrides,
    op: Bf16Op,
) {
    let t = &Tiles::new(p, s);
    let (m, n, k) = (a.m, a.n, a.k);
    // SAFETY: the caller guarantees `ceil(m / mr)` LHS and `ceil(n / nr)` RHS tiles, readable
    // and not written during the call.
    let (lhs, rhs) = unsafe {
        (
            core::slice::from_raw_parts(a.lhs, m.div_ceil(t.mr) * t.lhs_tile),
            core::slice::from_raw_parts(a.rhs_packed, n.div_ceil(t.nr) * t.rhs_tile),
        )
    };
    let ops = Operands { lhs, rhs, t: *t, bias_size: B::SIZE };
    let kp = k.div_ceil(4) * 4;
    for r in 0..m {
        for c in 0..n {
            let d = |acc: f64, j: usize| bf_dot_add(acc, ops.a(r, j), ops.a(r, j + 1), ops.b(c, j), ops.b(c, j + 1));
            let out = match op {
                Bf16Op::Mmla => (0..kp).step_by(4).fold(ops.bias::<B>(c), |acc, j| d(d(acc, j), j + 2)) as f32,
                Bf16Op::Dot => {
                    let (mut even, mut odd) = (ops.bias::<B>(c), 0.0);
                    for j in (0..kp).step_by(4) {
                        even = d(even, j);
                        odd = d(odd, j + 2);
                    }
                    even as f32 + odd as f32
                }
            };
            // The BFloat16 operations give no NaN but the default one, and the `BFDOT` kernel's
            // final addition passes it on or creates it: every NaN here is the default NaN.
            let v = O::from_f32(clamp_float(default_nan(out), a.clamp_min, a.clamp_max));
            // SAFETY: `r < m`, `c < n`: inside the rectangle the caller made writable.
            unsafe { a.dst.byte_add(r * a.dst_stride_row).add(c).write_unaligned(v) };
        }
    }
}

/// The scalar `BFMMLA` kernel of `f32_bf16p_bf16p` (any tile).
///
/// # Safety
///
/// See [`bf16_unchecked`] (f32 biases).
pub(crate) unsafe fn mmla_unchecked(p: &Packing, a: &UncheckedArgs<f32>, s: &TileStrides) {
    // SAFETY: forwarded.
    unsafe { bf16_unchecked::<f32, f32>(p, a, s, Bf16Op::Mmla) }
}

/// The scalar `BFDOT` kernel of `f32_bf16p_bf16p` (any tile, any `m`).
///
/// # Safety
///
/// See [`bf16_unchecked`] (f32 biases).
pub(crate) unsafe fn dot_unchecked(p: &Packing, a: &UncheckedArgs<f32>, s: &TileStrides) {
    // SAFETY: forwarded.
    unsafe { bf16_unchecked::<f32, f32>(p, a, s, Bf16Op::Dot) }
}
