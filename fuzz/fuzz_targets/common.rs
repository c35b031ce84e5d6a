//! What every target shares: the fuzzer bytes read as small parameters and value vectors
//! ([`Input`]), the one list of families ([`for_family`]), and the canary check of a rejected
//! call ([`check`]).
#![allow(dead_code)] // each target uses a part

use qgemm::op::Operator;
use qgemm::{CpuFeatures, Element, LhsStride, Lut, Packing, Params};

/// The byte every output buffer is filled with before a call: a rejected call must leave it.
pub const CANARY: u8 = 0xa5;

/// Fuzzer bytes, read front to back; 0s once exhausted.
pub struct Input<'a>(pub &'a [u8]);

impl<'a> Input<'a> {
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// A value in `0..=max` from two bytes.
    pub fn upto(&mut self, max: usize) -> usize {
        let v = usize::from(self.byte()) | (usize::from(self.byte()) << 8);
        v % (max.saturating_add(1)).max(1)
    }

    /// `true` with probability `1/n`.
    pub fn one_in(&mut self, n: u8) -> bool {
        self.byte().is_multiple_of(n)
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.upto(xs.len() - 1)]
    }

    /// A dimension in `0..=max`, or rarely one near `usize::MAX` (size arithmetic must not
    /// overflow unchecked).
    pub fn dim(&mut self, max: usize) -> usize {
        if self.one_in(32) {
            self.pick(&[usize::MAX, usize::MAX / 2 + 1, 1 << 32, (1 << 31) + 32, usize::MAX - 31])
        } else {
            self.upto(max)
        }
    }

    /// A depth: any up to `max`, or mostly a multiple of 32 (what the per-block formats need).
    pub fn depth(&mut self, max: usize) -> usize {
        if self.one_in(3) { self.dim(max) } else { 32 * self.upto(max / 32) }
    }

    /// A block length: 32, 64 or 128 mostly, else anything.
    pub fn block_len(&mut self) -> usize {
        if self.one_in(8) { self.dim(300) } else { self.pick(&[32, 64, 128, 32]) }
    }

    /// A length near `needed` (-2..=+2), or rarely any.
    pub fn len_near(&mut self, needed: usize) -> usize {
        if self.one_in(16) { self.upto(4096) } else { (needed.min(1 << 20) + self.upto(4)).saturating_sub(2) }
    }

    /// A stride `>= row` mostly (sometimes one short).
    pub fn stride(&mut self, row: usize) -> usize {
        if self.one_in(16) { row.saturating_sub(1) } else { row.saturating_add(self.upto(3)) }
    }

    /// Packing parameters: those of a kernel of any family mostly, else arbitrary ones (the
    /// packers must reject what their format does not support).
    pub fn packing(&mut self) -> Packing {
        if self.one_in(6) {
            Packing { mr: self.upto(20), nr: self.upto(40), kr: self.upto(40), sr: self.upto(4) }
        } else {
            static ALL: std::sync::OnceLock<Vec<Packing>> = std::sync::OnceLock::new();
            let all = ALL.get_or_init(all_packings);
            self.pick(all)
        }
    }

    /// `len` values of `S`: finite small values mostly, or raw bit patterns (NaN, infinities,
    /// subnormals), or subnormals only.
    pub fn values<S: Element>(&mut self, len: usize) -> Vec<S> {
        let len = len.min(1 << 16);
        let mode = self.byte() % 8;
        let seed = self.byte();
        let data = self.0;
        let at = |i: usize| u32::from(data.get(i % data.len().max(1)).copied().unwrap_or(seed));
        (0..len)
            .map(|i| {
                let b = at(i) ^ u32::from(seed);
                match mode {
                    0 => S::from_bits32(b | at(i + 1) << 8 | at(i + 2) << 16 | at(i + 3) << 24),
                    1 => S::from_bits32(b | (at(i + 1) & 1) << 8),
                    2 => S::from_f32(if i % 7 == 3 { f32::NAN } else { b as f32 }),
                    _ => S::from_f32((b as i8) as f32 / 16.0),
                }
            })
            .collect()
    }

    /// [`Input::values`] of a length near `needed` ([`Input::len_near`]).
    pub fn near<S: Element>(&mut self, needed: usize) -> Vec<S> {
        let len = self.len_near(needed);
        self.values(len)
    }

    /// [`Input::bytes`] of a length near `needed`.
    pub fn bytes_near(&mut self, needed: usize) -> Vec<u8> {
        let len = self.len_near(needed);
        self.bytes(len)
    }

    /// `None`, or `n` (give or take) bias values.
    pub fn bias<S: Element>(&mut self, n: usize) -> Option<Vec<S>> {
        if self.one_in(2) { None } else { Some(self.near(n)) }
    }

    /// `len` raw bytes (the rest of the input, cycled).
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let seed = self.byte();
        let data = self.0;
        (0..len.min(1 << 20)).map(|i| data.get(i % data.len().max(1)).copied().unwrap_or(seed) ^ seed).collect()
    }
}

/// Plain numbers: every bit pattern is a value, and there is no padding.
///
/// # Safety
///
/// Only for such types.
pub unsafe trait Plain: Copy + Default + 'static {}

// SAFETY: integers and IEEE floats (f16, bf16: `repr(transparent)` over `u16`) are plain.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for i8 {}
// SAFETY: as above.
unsafe impl Plain for f32 {}
// SAFETY: as above.
unsafe impl Plain for f64 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above.
unsafe impl Plain for qgemm::half::f16 {}
// SAFETY: as above.
unsafe impl Plain for qgemm::half::bf16 {}

/// The bytes of `x`.
pub fn bytes_of<T: Plain>(x: &[T]) -> &[u8] {
    // SAFETY: `T` is plain (no padding), so its `size_of_val(x)` bytes are initialized.
    unsafe { core::slice::from_raw_parts(x.as_ptr().cast(), size_of_val(x)) }
}

/// An output buffer of `len` values of `T` whose bytes are all [`CANARY`].
pub fn canary<T: Plain>(len: usize) -> Vec<T> {
    let mut v = vec![T::default(); len.min(1 << 22)];
    // SAFETY: `T` is plain: any bytes are a value; the slice covers exactly `v`'s elements.
    unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), size_of_val(&v[..])) }.fill(CANARY);
    v
}

/// The outcome of a call that wrote only `outs`: on an error each must still be all canary.
pub fn check<T, E: core::fmt::Debug>(what: &str, r: Result<T, E>, outs: &[&[u8]]) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            for (j, out) in outs.iter().enumerate() {
                assert!(out.iter().all(|&b| b == CANARY), "{what}: rejected ({e:?}) but wrote output {j}");
            }
            None
        }
    }
}

/// Draws a family's [`Params`] (the 2-bit table, the LHS row stride).
pub trait DrawParams: Params {
    fn draw(inp: &mut Input<'_>, k: usize) -> Self;
}

impl DrawParams for () {
    fn draw(_: &mut Input<'_>, _: usize) {}
}

impl DrawParams for Lut {
    fn draw(inp: &mut Input<'_>, _: usize) -> Lut {
        let v = |inp: &mut Input<'_>| i32::from(inp.byte() as i8) >> (inp.byte() % 2);
        if inp.one_in(2) { Lut::DEFAULT } else { Lut([v(inp), v(inp), v(inp), v(inp)]) }
    }
}

impl DrawParams for LhsStride {
    fn draw(inp: &mut Input<'_>, k: usize) -> LhsStride {
        if inp.one_in(2) { LhsStride(0) } else { LhsStride(inp.stride(k)) }
    }
}

/// Code generic over a family, called by [`for_family`] for the family it picks.
pub trait Visit {
    fn visit<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(&mut self, inp: &mut Input<'_>);
}

/// Every family of the crate, quantized and float.
pub const FAMILIES: usize = 15;

/// Runs `v` for family number `i % FAMILIES`.
pub fn for_family(i: usize, inp: &mut Input<'_>, v: &mut impl Visit) {
    use qgemm::*;
    match i % FAMILIES {
        0 => v.visit::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>(inp),
        1 => v.visit::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>(inp),
        2 => v.visit::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>(inp),
        3 => v.visit::<qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>(inp),
        4 => v.visit::<f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>(inp),
        5 => v.visit::<f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>(inp),
        6 => v.visit::<bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>(inp),
        7 => v.visit::<bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>(inp),
        8 => v.visit::<qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>(inp),
        9 => v.visit::<f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>(inp),
        10 => v.visit::<qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>(inp),
        11 => v.visit::<f32_f32_f32p::F32F32F32p>(inp),
        12 => v.visit::<f16_f16_f16p::F16F16F16p>(inp),
        13 => v.visit::<f32_bf16p_bf16p::F32Bf16pBf16p>(inp),
        _ => v.visit::<f16_bf16p_bf16p::F16Bf16pBf16p>(inp),
    }
}

/// The packing of every fixed-shape kernel of every family.
pub fn all_packings() -> Vec<Packing> {
    struct Collect(Vec<Packing>);
    impl Visit for Collect {
        fn visit<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(&mut self, _: &mut Input<'_>) {
            self.0.extend(F::kernels().iter().filter_map(|d| d.packing_on(&CpuFeatures::NONE)));
        }
    }
    let mut c = Collect(Vec::new());
    for i in 0..FAMILIES {
        for_family(i, &mut Input(&[]), &mut c);
    }
    c.0
}

/// Runs `f::<S>` with the source element type `S` (f32, f16, bf16) picked by a byte.
#[allow(unused_macros)]
macro_rules! for_src {
    ($sel:expr, $f:ident :: <_> ($($arg:expr),*)) => {
        match $sel % 3 {
            0 => $f::<f32>($($arg),*),
            1 => $f::<qgemm::half::f16>($($arg),*),
            _ => $f::<qgemm::half::bf16>($($arg),*),
        }
    };
}
