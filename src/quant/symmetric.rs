//! Symmetric weight quantization: the scale rules ([`Method`]) and the weight source
//! ([`Weights`]) shared by the symmetric formats ([`qsi4cxp`](super::qsi4cxp),
//! [`qsi4c32p`](super::qsi4c32p), [`q4_0`](super::q4_0), [`qsi8cxp`](super::qsi8cxp)).
//!
//! A *group* is the set of weights that share one scale: a whole channel (per-channel formats)
//! or a block of `bl` depths of one channel. With `L` the format's largest positive code (7 for
//! int4, 127 for int8), codes lie in `[-L - 1, L]` and a weight is represented as
//! `code * scale`, the scale being stored in the format's type (f32, bf16 or f16).
//!
//! Every method is plain scalar arithmetic in a fixed order (f32 and f64, no fused operations
//! left to the compiler), so the same inputs give the same bits on every target.

use crate::element::Element;
use crate::error::{Buffer, Error, Result, Stride};
use crate::rhs::Layout;

/// How the scale of a group is chosen (the codes follow from it).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Method<'a> {
    /// `scale = max |w| / L` (rounded to the stored type), `code = round(w / scale)` (ties away
    /// from zero) clamped to `[-L - 1, L]`.
    RoundToNearest,
    /// GGML's `Q4_0` rule: `d = m / -(L + 1)` with `m` the group's first value of largest
    /// magnitude, `code = min(2L + 1, trunc(w * (1 / d) + L + 1.5)) - (L + 1)` in f32, `d` stored
    /// rounded. With int4 and f16 scales this gives `quantize_row_q4_0_ref`'s bytes exactly.
    SignedMax,
    /// The error-minimizing search: for the candidate scales `±max|w| / t`,
    /// `t = L - 0.5, L - 0.25, ..., L + 1` (each rounded to the stored type), the codes
    /// `round(w / s)`, then the least-squares scale for those codes (rounded to the stored type)
    /// and the codes again; the candidate with the smallest `sum (w - s * code)^2` wins (the
    /// first on ties).
    Search,
    /// [`Method::Search`] with the squared error of depth `j` weighted by `importance[j]`
    /// (`k` non-negative finite values, e.g. the diagonal of `X^T X` over calibration
    /// activations `X`): the depths the activations use most are kept most accurately.
    WeightedSearch(&'a [f32]),
}

/// A float weight matrix of `n` channels (output features) by `k` depths (input features).
#[derive(Debug, Clone, Copy)]
pub struct Weights<'a, S> {
    /// The values.
    pub data: &'a [S],
    /// [`Layout::NxK`]: channel `c` is row `c`; [`Layout::KxN`]: depth `j` is row `j`.
    pub layout: Layout,
    /// Row stride in elements (at least `k` for NxK, `n` for KxN).
    pub stride: usize,
}

impl<'a, S: Element> Weights<'a, S> {
    /// Dense NxK weights (`n` rows of `k`, PyTorch's `nn.Linear.weight`).
    pub const fn nxk(data: &'a [S], k: usize) -> Self {
        Weights { data, layout: Layout::NxK, stride: k }
    }

    /// Dense KxN weights (`k` rows of `n`).
    pub const fn kxn(data: &'a [S], n: usize) -> Self {
        Weights { data, layout: Layout::KxN, stride: n }
    }

    /// Element `(c, j)` widened to f32 (after [`Weights::check`]).
    #[inline]
    pub(crate) fn at(&self, c: usize, j: usize) -> f32 {
        match self.layout {
            Layout::NxK => self.data[c * self.stride + j].to_f32(),
            Layout::KxN => self.data[j * self.stride + c].to_f32(),
        }
    }

    /// The stride, the length and that every value is finite ([`Error::NonFinite`] with the
    /// index into `data`).
    pub(crate) fn check(&self, n: usize, k: usize) -> Result<()> {
        let (rows, cols) = match self.layout {
            Layout::NxK => (n, k),
            Layout::KxN => (k, n),
        };
        if self.stride < cols {
            return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: self.stride, needed: cols });
        }
        let needed = (rows - 1).checked_mul(self.stride).and_then(|v| v.checked_add(cols));
        let needed = needed.ok_or(Error::SizeOverflow)?;
        if self.data.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: self.data.len(), needed });
        }
        for r in 0..rows {
            let row = &self.data[r * self.stride..r * self.stride + cols];
            // A branch-free test (it vectorizes), the search only in a failing row.
            if !row.iter().fold(true, |ok, v| ok & v.is_finite()) {
                let j = row.iter().position(|v| !v.is_finite()).unwrap_or(0);
                return Err(Error::NonFinite { buffer: Buffer::Rhs, index: r * self.stride + j });
            }
        }
        Ok(())
    }
}

/// Checks a method's own input: the importance vector of [`Method::WeightedSearch`] holds `k`
/// non-negative finite values ([`Error::BufferTooShort`] / [`Error::NonFinite`] on
/// [`Buffer::Importance`]).
pub(crate) fn check_method(method: &Method<'_>, k: usize) -> Result<()> {
    if let Method::WeightedSearch(imp) = method {
        if imp.len() < k {
            return Err(Error::BufferTooShort { buffer: Buffer::Importance, given: imp.len(), needed: k });
        }
        if let Some(j) = imp[..k].iter().position(|v| !v.is_finite() || *v < 0.0) {
            return Err(Error::NonFinite { buffer: Buffer::Importance, index: j });
        }
    }
    Ok(())
}

/// The checks every symmetric quantizer (plain or GPTQ) makes before writing, in order: the
/// weights ([`Weights::check`]), the method's own input ([`check_method`]; `None`: GPTQ's
/// default), the codes `(given, needed)` ([`Buffer::Rhs`]) and the scales
/// ([`Buffer::Scale`]; `None` for Q4_0, whose scales are inside its blocks).
pub(crate) fn check_call<S: Element>(
    method: Option<&Method<'_>>,
    n: usize,
    k: usize,
    w: &Weights<'_, S>,
    codes: (usize, usize),
    scales: Option<(usize, usize)>,
) -> Result<()> {
    w.check(n, k)?;
    if let Some(m) = method {
        check_method(m, k)?;
    }
    super::check_out(codes.0, codes.1, Buffer::Rhs)?;
    if let Some((given, needed)) = scales {
        super::check_out(given, needed, Buffer::Scale)?;
    }
    Ok(())
}

/// `round(w / s)` (ties away from zero) clamped to `[-levels - 1, levels]`; 0 when `s` is 0.
#[inline(always)]
fn code(w: f32, s: f32, levels: f32) -> f32 {
    // `round_away_i32` saturates at the i32 range, far past the clamp.
    if s == 0.0 { 0.0 } else { (crate::arith::round_away_i32(w / s) as f32).clamp(-levels - 1.0, levels) }
}

/// The scale of one group, as chosen by a [`Method`]: the stored scale and the rule that maps a
/// weight to its code.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupScale {
    /// The scale in its stored type (widened to f32).
    pub(crate) stored: f32,
    levels: i32,
    /// [`Method::SignedMax`]'s unrounded `d` and `1 / d` (GGML chooses the codes with those).
    signed_max: Option<(f32, f32)>,
}

impl GroupScale {
    /// `round(w / scale)` clamped to the codes, with `scale` (finite) as stored.
    pub(crate) const fn nearest(scale: f32, levels: i32) -> Self {
        GroupScale { stored: scale, levels, signed_max: None }
    }

    /// The code of `w` in this group.
    #[inline(always)]
    pub(crate) fn code(&self, w: f32) -> i8 {
        let l = self.levels as f32;
        match self.signed_max {
            // GGML: `MIN(15, (int8_t)(x * id + 8.5f))`, in f32; the sum is >= 0 (up to
            // rounding), so the truncation is a floor.
            Some((_, id)) if id.is_finite() => {
                (((w * id + (l + 1.5)) as i32).clamp(0, 2 * self.levels + 1) - self.levels - 1) as i8
            }
            // `|d| < 2^-128`, where GGML's `x * id` is infinite or NaN: `round(x / d)` instead.
            Some((d, _)) => code(w, d, l) as i8,
            None => code(w, self.stored, l) as i8,
        }
    }
}

/// The scale `method` chooses for a group of `len` values `w(i)` (depth `j0 + i` of the matrix,
/// for the importance weights) with largest code `levels`; `round_scale` rounds a scale to its
/// stored type. `None` when the stored scale is not finite (the group's values are too large
/// for the scale type).
pub(crate) fn choose_scale(
    method: &Method<'_>,
    len: usize,
    j0: usize,
    w: impl Fn(usize) -> f32,
    levels: i32,
    round_scale: impl Fn(f32) -> f32,
) -> Option<GroupScale> {
    let l = levels as f32;
    // The first value of largest magnitude (its sign matters to `SignedMax`).
    let (mut amax, mut m) = (0f32, 0f32);
    for i in 0..len {
        let v = w(i);
        if v.abs() > amax {
            (amax, m) = (v.abs(), v);
        }
    }
    let scale = match method {
        // An all-zero group gets GGML's scale `0 / -8 = -0` and codes 0.
        Method::SignedMax => {
            let d = m / -(l + 1.0);
            let id = if d != 0.0 { 1.0 / d } else { 0.0 };
            let stored = round_scale(d);
            return stored.is_finite().then_some(GroupScale { stored, levels, signed_max: Some((d, id)) });
        }
        _ if amax == 0.0 => 0.0,
        Method::RoundToNearest => round_scale(amax / l),
        Method::Search => search(len, &w, |_| 1.0, l, amax, &round_scale),
        Method::WeightedSearch(imp) => search(len, &w, |i| f64::from(imp[j0 + i]), l, amax, &round_scale),
    };
    scale.is_finite().then_some(GroupScale::nearest(scale, levels))
}

/// [`Method::WeightedSearch`]'s scale with the importance of value `i` given by `imp(i)` (the
/// same bits as `choose_scale(&Method::WeightedSearch(imp_slice), ..)` when
/// `imp(i) == f64::from(imp_slice[j0 + i])`).
pub(crate) fn choose_weighted_scale(
    len: usize,
    w: impl Fn(usize) -> f32,
    imp: impl Fn(usize) -> f64,
    levels: i32,
    round_scale: impl Fn(f32) -> f32,
) -> Option<GroupScale> {
    let amax = (0..len).fold(0f32, |a, i| a.max(w(i).abs()));
    let scale = if amax == 0.0 { 0.0 } else { search(len, &w, imp, levels as f32, amax, &round_scale) };
    scale.is_finite().then_some(GroupScale::nearest(scale, levels))
}

/// Quantizes one group: `len` values `w(i)` (depth `j0 + i` of the matrix, for the importance
/// weights) with largest code `levels`; `round_scale` rounds a scale to its stored type. Calls
/// `put(i, code)` for every value and returns the stored scale (as f32), or `None` (and calls
/// nothing) when the stored scale is not finite (the group's values are too large for the scale
/// type).
pub(crate) fn quantize_group(
    method: &Method<'_>,
    len: usize,
    j0: usize,
    w: impl Fn(usize) -> f32,
    levels: i32,
    round_scale: impl Fn(f32) -> f32,
    mut put: impl FnMut(usize, i8),
) -> Option<f32> {
    let s = choose_scale(method, len, j0, &w, levels, round_scale)?;
    for i in 0..len {
        put(i, s.code(w(i)));
    }
    Some(s.stored)
}

/// [`Method::Search`]'s scale, squared errors weighted by `imp(i)`, for a group whose largest
/// magnitude is `amax`.
fn search(
    len: usize,
    w: &impl Fn(usize) -> f32,
    imp: impl Fn(usize) -> f64,
    l: f32,
    amax: f32,
    round_scale: &impl Fn(f32) -> f32,
) -> f32 {
    let mut best: Option<(f64, f32)> = None;
    for sign in [1.0f32, -1.0] {
        for step in 0..=6 {
            let t = l - 0.5 + 0.25 * step as f32;
            let mut s = round_scale(sign * amax / t);
            if !s.is_finite() {
                continue;
            }
            let (mut num, mut den) = (0f64, 0f64);
            for i in 0..len {
                let (v, q) = (f64::from(w(i)), f64::from(code(w(i), s, l)));
                num += imp(i) * v * q;
                den += imp(i) * q * q;
            }
            if den > 0.0 {
                let refined = round_scale((num / den) as f32);
                if refined != 0.0 && refined.is_finite() {
                    s = refined;
                }
            }
            let mut e = 0f64;
            for i in 0..len {
                let d = f64::from(w(i)) - f64::from(s) * f64::from(code(w(i), s, l));
                e += imp(i) * d * d;
            }
            if best.is_none_or(|b| e < b.0) {
                best = Some((e, s));
            }
        }
    }
    // Some candidate is finite: `amax / (L - 0.5)` is, and round_scale is monotonic.
    best.map_or(f32::INFINITY, |b| b.1)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn run(method: Method<'_>, w: &[f32], levels: i32, round: fn(f32) -> f32) -> (Option<f32>, Vec<i8>) {
        let mut q = vec![99i8; w.len()];
        let s = quantize_group(&method, w.len(), 0, |i| w[i], levels, round, |i, c| q[i] = c);
        (s, q)
    }

    #[test]
    fn round_to_nearest_is_the_textbook_rule() {
        let w = [0.7f32, -1.4, 0.35, 0.0, 0.1];
        let (s, q) = run(Method::RoundToNearest, &w, 7, |s| s);
        assert_eq!(s, Some(1.4 / 7.0));
        let s = s.unwrap();
        let want: Vec<i8> = w.iter().map(|v| (v / s).round().clamp(-8.0, 7.0) as i8).collect();
        assert_eq!(q, want);
        assert_eq!(q[1], -7);
    }

    #[test]
    fn signed_max_matches_ggml_q4_0() {
        // GGML's quantize_row_q4_0_ref, written out: the negative extreme maps to code -8.
        let w = [0.5f32, -2.0, 1.0, 1.99, -1.0, 0.25, 0.0, 2.0];
        let (s, q) = run(Method::SignedMax, &w, 7, |s| s);
        let d = -2.0f32 / -8.0;
        assert_eq!(s, Some(d));
        let id = 1.0 / d;
        let want: Vec<i8> = w.iter().map(|&v| ((v * id + 8.5) as i32).min(15) as i8 - 8).collect();
        assert_eq!(q, want);
        assert_eq!(q[1], -8);
        assert_eq!(q[7], 7, "+max of the other sign clamps at 7");
    }

    #[test]
    fn searches_never_lose_to_round_to_nearest_and_weights_steer_them() {
        let mut s = 3u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let err = |w: &[f32], imp: &[f32], s: f32, q: &[i8]| -> f64 {
            w.iter()
                .zip(q)
                .zip(imp)
                .map(|((v, q), i)| f64::from(*i) * (f64::from(*v) - f64::from(s) * f64::from(*q)).powi(2))
                .sum()
        };
        let mut steered = 0;
        for _ in 0..50 {
            let mut w: Vec<f32> = (0..32).map(|_| next()).collect();
            w[5] *= 6.0; // an outlier
            let ones = vec![1.0f32; 32];
            let (r, qr) = run(Method::RoundToNearest, &w, 7, |s| s);
            let (s, qs) = run(Method::Search, &w, 7, |s| s);
            assert!(err(&w, &ones, s.unwrap(), &qs) <= err(&w, &ones, r.unwrap(), &qr));
            // Weighted: its weighted error is never above round to nearest's (one of its
            // candidates is `max / 7`, and refining never increases the weighted error), and it
            // is often below the unweighted search's.
            let imp: Vec<f32> = (0..32).map(|j| if j % 3 == 0 { 10.0 } else { 0.1 }).collect();
            let mut qw = vec![0i8; 32];
            let sw = quantize_group(&Method::WeightedSearch(&imp), 32, 0, |i| w[i], 7, |s| s, |i, c| qw[i] = c);
            let ew = err(&w, &imp, sw.unwrap(), &qw);
            assert!(ew <= err(&w, &imp, r.unwrap(), &qr));
            steered += usize::from(ew < err(&w, &imp, s.unwrap(), &qs));
        }
        assert!(steered >= 10, "the importance weights changed the choice in only {steered} of 50 groups");
    }

    #[test]
    fn edge_groups() {
        for method in [Method::RoundToNearest, Method::SignedMax, Method::Search] {
            // All zeros: scale 0 (GGML's -0 for `SignedMax`), codes 0.
            assert_eq!(run(method, &[0.0; 8], 7, |s| s), (Some(0.0), vec![0; 8]));
            // ±f32::MAX: a finite f32 scale, codes at the ends.
            let (s, q) = run(method, &[f32::MAX, -f32::MAX, 0.0], 7, |s| s);
            assert!(s.unwrap().is_finite(), "{method:?}");
            assert!(q[0].abs() >= 7 && q[1].abs() >= 7 && q[2] == 0, "{method:?} {q:?}");
            // ... but not as f16: no finite scale.
            let f16 = |s: f32| half::f16::from_f32(s).to_f32();
            assert_eq!(run(method, &[f32::MAX, 1.0], 7, f16).0, None, "{method:?}");
            // Subnormal weights: whatever the scale, every code is in range and the group
            // dequantizes to within one step of each weight.
            let w = [1.0e-40f32, -3.0e-41, 2.0e-45, 0.0];
            let (s, q) = run(method, &w, 7, |s| s);
            let s = s.unwrap();
            assert!(s.is_finite() && q.iter().all(|c| (-8..=7).contains(c)));
            for (v, c) in w.iter().zip(&q) {
                assert!((f64::from(*v) - f64::from(s) * f64::from(*c)).abs() <= f64::from(s.abs()), "{method:?}");
            }
        }
    }
}
