//! GPTQ (Frantar et al., 2022, "GPTQ: Accurate Post-Training Quantization for Generative
//! Pre-trained Transformers"): quantizes the weights of a linear layer column by column (depth
//! by depth), feeding each column's rounding error forward into the columns not yet quantized
//! so that the layer's *output* on calibration activations, `X W^T`, stays close to the float
//! one, rather than each weight independently.
//!
//! # What the caller provides
//!
//! * The calibration activations, streamed through a [`Hessian`]: `X`, the f32 inputs of the
//!   layer (rows of `k` input features, any number of calls), accumulated into
//!   `H = X^T X` (`k x k`, f64, in caller storage of [`Hessian::buffer_len`] elements). The
//!   quantizers only read it: they take `&Hessian` or a [`HessianRef`] (a shared view, e.g. of
//!   read-only storage), so several layers can be quantized with one Hessian at once.
//! * The weights, as for the plain quantizers ([`Weights`], `n` output channels by `k` depths),
//!   and a scale rule: `None` for [`Method::WeightedSearch`] with the diagonal of `H` as the
//!   importance of each depth (the default: the same bits as
//!   `Some(Method::WeightedSearch(&diag))` with `diag` from [`Hessian::diagonal`]), or any
//!   [`Method`].
//! * `damp` (typically `0.01`): the damping `lambda = damp * mean(diag H)` added to the
//!   diagonal of `H` before it is inverted.
//! * A workspace of [`workspace_len`] f64 (`k * k + k`, whatever `n`: the channels are
//!   processed one at a time, so no copy of the whole weight matrix is needed).
//!
//! The outputs are exactly those of the plain quantizer of the same format ([`qsi4cxp`],
//! [`qsi4c32p`], [`q4_0`], [`qsi8cxp`]): the same layout, scale type and code range, ready for
//! the same packer.
//!
//! # Algorithm
//!
//! 1. `H` is copied into the workspace; a *dead* depth (`H[j][j] == 0`: an input that is zero
//!    in every calibration row) gets `H[j][j] = 1` and its weights are taken as 0 (the
//!    reference algorithm does the same; here they are zeroed *before* any scale is chosen, so
//!    they never inflate a scale). Then `lambda = damp * mean(diag H)` (after that fix) is added
//!    to the diagonal.
//! 2. `U`, the upper-triangular Cholesky factor of `(H + lambda I)^-1 = U^T U`, is computed
//!    without forming the inverse: `H + lambda I = V V^T` with `V` upper triangular (a Cholesky
//!    factorization run from the last column back), then `U = V^-1`. A pivot that is not
//!    positive gives [`Error::NotPositiveDefinite`] (possible only with `damp == 0`, or
//!    numerically with a tiny one, and calibration data of rank below `k`).
//! 3. For each channel (independently: nothing couples the channels), with `w` its current
//!    weights (f64), for `j = 0 .. k`:
//!    * at the first depth of each group (each block of `bl` depths, or depth 0 for the
//!      per-channel formats), the group's scale is chosen by the scale rule from the group's
//!      *current* weights (for per-channel formats these are the original weights, as nothing
//!      has been fed forward yet);
//!    * `q = code(w[j]) * scale` (the format's code of `w[j]` rounded to f32, with the stored
//!      scale), `e = (w[j] - q) / U[j][j]`, and `w[p] -= e * U[j][p]` for every `p > j`.
//!
//! This is the reference algorithm with one block of columns (its lazy batch updates only
//! reorder the same arithmetic). Two safeguards that the reference lacks keep every value
//! representable: the updated weights are clamped to `±f32::MAX`, and a group whose updated
//! weights are too large for the scale type (the original weights are checked like the plain
//! quantizers: [`Error::ScaleOverflow`]) gets the type's largest finite scale.
//!
//! # Determinism
//!
//! Everything is scalar f64 and f32 arithmetic in a fixed order (no fused operations left to
//! the compiler, no threads): the same activations (in the same order of rows, however they are
//! split into [`Hessian::add`] calls) and weights give the same bits on every target. The cost
//! is `k^2 / 2` multiply-adds per activation row, about `k^3 / 3` for the factorization and `n * k^2`
//! for the quantization.
//!
//! ```
//! use qgemm::quant::{self, gptq::{self, Hessian}, Weights};
//!
//! let (n, k, bl, m) = (4, 64, 32, 100);
//! // Calibration activations (m rows of k) and the layer's weights (n rows of k).
//! let x: Vec<f32> = (0..m * k).map(|i| ((i * 7919 % 211) as f32 / 105.0 - 1.0)).collect();
//! let w: Vec<f32> = (0..n * k).map(|i| ((i * 104729 % 97) as f32 / 48.0 - 1.0) * 0.1).collect();
//!
//! let mut h_buf = vec![0f64; Hessian::buffer_len(k)?];
//! let mut h = Hessian::new(&mut h_buf, k)?;
//! h.add(&x[..50 * k], 50, k)?; // the rows may come in any number of calls
//! h.add(&x[50 * k..], m - 50, k)?;
//! assert_eq!(h.rows(), m);
//!
//! let mut work = vec![0f64; gptq::workspace_len(n, k)?];
//! let mut blocks = vec![0u8; quant::q4_0::size(n, k, bl)?];
//! gptq::q4_0(None, n, k, bl, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut blocks)?;
//! // `blocks` holds GGML Q4_0 blocks, the input of `rhs::qsi4c32pscalef16::pack`.
//! # Ok::<(), qgemm::Error>(())
//! ```
//!
//! [`qsi4cxp`]: super::qsi4cxp
//! [`qsi4c32p`]: super::qsi4c32p
//! [`q4_0`]: super::q4_0
//! [`qsi8cxp`]: super::qsi8cxp

use half::{bf16, f16};

use super::symmetric::{GroupScale, Method, Weights, check_call, choose_scale, choose_weighted_scale};
use super::{check_block_scales, check_out};
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Result, Stride};
use crate::rhs::check_nk;
use crate::rhs::qsi4c32pscalef16::raw_block_bytes;

/// The accumulator of `H = X^T X` over streamed activation rows `X` (`k` input features each),
/// in caller storage.
///
/// Only the upper triangle is kept, packed by rows: `H[i][j]` (`i <= j`) at
/// `i * (2k - i + 1) / 2 + (j - i)`, `k * (k + 1) / 2` f64 in all. Each row `x` adds
/// `f64(x[i]) * f64(x[j])` to every `H[i][j]`, rows in the order given, so the sum does not
/// depend on how the rows are split into [`Hessian::add`] calls.
#[derive(Debug)]
pub struct Hessian<'a> {
    h: &'a mut [f64],
    k: usize,
    rows: usize,
}

impl<'a> Hessian<'a> {
    /// The storage a Hessian of `k` input features needs: `k * (k + 1) / 2` f64.
    pub fn buffer_len(k: usize) -> Result<usize> {
        if k == 0 {
            return Err(Error::ZeroDim { dim: Dim::K });
        }
        k.checked_add(1).and_then(|k1| k.checked_mul(k1)).map(|v| v / 2).ok_or(Error::SizeOverflow)
    }

    /// An empty (all-zero) Hessian of `k` input features in `buf` (at least
    /// [`Hessian::buffer_len`] elements, [`Buffer::Hessian`]; the first that many are zeroed).
    pub fn new(buf: &'a mut [f64], k: usize) -> Result<Self> {
        let len = Self::buffer_len(k)?;
        check_out(buf.len(), len, Buffer::Hessian)?;
        let h = &mut buf[..len];
        h.fill(0.0);
        Ok(Hessian { h, k, rows: 0 })
    }

    /// A Hessian of `k` input features over `rows` activation rows already accumulated in `buf`
    /// (at least [`Hessian::buffer_len`] elements, [`Buffer::Hessian`]), which is not zeroed:
    /// resumes a Hessian whose storage, `k` and [`Hessian::rows`] the caller kept between calls
    /// (the C API keeps them in a plain struct). Any contents are safe to use; contents no
    /// [`Hessian`] of this `k` produced give meaningless GPTQ results or
    /// [`Error::NotPositiveDefinite`].
    pub fn from_parts(buf: &'a mut [f64], k: usize, rows: usize) -> Result<Self> {
        let len = Self::buffer_len(k)?;
        check_out(buf.len(), len, Buffer::Hessian)?;
        Ok(Hessian { h: &mut buf[..len], k, rows })
    }

    /// The number of input features.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// The number of activation rows accumulated so far.
    pub const fn rows(&self) -> usize {
        self.rows
    }

    /// Index of `H[i][i]` in the packed upper triangle (`H[i][j]` is `j - i` further).
    #[inline]
    const fn row_start(&self, i: usize) -> usize {
        row_start(self.k, i)
    }

    /// The read-only view GPTQ takes ([`HessianRef`]; `&Hessian` converts to it too).
    pub fn view(&self) -> HessianRef<'_> {
        HessianRef { h: self.h, k: self.k, rows: self.rows }
    }

    /// `H[i][j]` (either triangle), `None` outside `k x k`.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        self.view().get(i, j)
    }

    /// Adds `m` activation rows of `k` f32 values from `x`, row `r` at `x[r * stride..]`
    /// (`stride >= k`). Every value must be finite ([`Error::NonFinite`] with [`Buffer::Lhs`]
    /// and the index into `x`); nothing is added on an error. `m == 0` adds nothing.
    pub fn add(&mut self, x: &[f32], m: usize, stride: usize) -> Result<()> {
        let k = self.k;
        if m == 0 {
            return Ok(());
        }
        if stride < k {
            return Err(Error::StrideTooSmall { stride: Stride::Lhs, given: stride, needed: k });
        }
        let needed = (m - 1).checked_mul(stride).and_then(|v| v.checked_add(k)).ok_or(Error::SizeOverflow)?;
        check_out(x.len(), needed, Buffer::Lhs)?;
        for r in 0..m {
            if let Some(j) = x[r * stride..r * stride + k].iter().position(|v| !v.is_finite()) {
                return Err(Error::NonFinite { buffer: Buffer::Lhs, index: r * stride + j });
            }
        }
        for r in 0..m {
            let row = &x[r * stride..r * stride + k];
            for i in 0..k {
                let xi = f64::from(row[i]);
                if xi == 0.0 {
                    continue; // adds exact zeros
                }
                let s = self.row_start(i);
                for (h, &xj) in self.h[s..s + k - i].iter_mut().zip(&row[i..]) {
                    *h += xi * f64::from(xj);
                }
            }
        }
        self.rows = self.rows.saturating_add(m);
        Ok(())
    }

    /// A copy of this Hessian in `buf` (at least [`Hessian::buffer_len`] elements,
    /// [`Buffer::Hessian`]): to try several input scales ([`Hessian::scale_inputs`]) on one
    /// calibration.
    pub fn copy_to<'b>(&self, buf: &'b mut [f64]) -> Result<Hessian<'b>> {
        self.view().copy_to(buf)
    }

    /// Turns `H = X^T X` into the Hessian of the activations multiplied by `scale` (one per
    /// input feature, as [`op::Linear::with_input_scale`](crate::op::Linear::with_input_scale)
    /// multiplies them): `H[i][j] * scale[i] * scale[j]` in f64, which equals accumulating the
    /// scaled rows up to rounding. For GPTQ of weights divided by `scale`
    /// ([`quant::divide_depths`](crate::quant::divide_depths)), without a second calibration
    /// pass. `scale`: `k` finite values ([`Error::BufferTooShort`] / [`Error::NonFinite`] on
    /// [`Buffer::InputScale`]; nothing changed on an error).
    pub fn scale_inputs(&mut self, scale: &[f32]) -> Result<()> {
        let k = self.k;
        check_out(scale.len(), k, Buffer::InputScale)?;
        if let Some(index) = scale[..k].iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { buffer: Buffer::InputScale, index });
        }
        for i in 0..k {
            let si = f64::from(scale[i]);
            let s = self.row_start(i);
            for (h, &sj) in self.h[s..s + k - i].iter_mut().zip(&scale[i..k]) {
                *h *= si * f64::from(sj);
            }
        }
        Ok(())
    }

    /// Writes the diagonal of `H` as f32 (saturated at `f32::MAX`) into `out` (at least `k`,
    /// [`Buffer::Importance`]): the importance of each input feature, for
    /// [`Method::WeightedSearch`].
    pub fn diagonal(&self, out: &mut [f32]) -> Result<()> {
        self.view().diagonal(out)
    }
}

/// Index of `H[i][i]` in the packed upper triangle of a `k x k` Hessian (`H[i][j]` is `j - i`
/// further).
#[inline]
const fn row_start(k: usize, i: usize) -> usize {
    // i * (2k - i + 1) is even and at most k * (k + 1), which fits (buffer_len).
    i * (2 * k - i + 1) / 2
}

/// A read-only view of an accumulated [`Hessian`]: what the GPTQ quantizers and
/// [`HessianRef::diagonal`] read. It borrows the storage shared, so one Hessian can serve
/// several quantizations at once (e.g. the q, k and v projections of a layer on three threads),
/// and the storage may be read-only memory.
#[derive(Debug, Clone, Copy)]
pub struct HessianRef<'a> {
    h: &'a [f64],
    k: usize,
    rows: usize,
}

impl<'a> HessianRef<'a> {
    /// The Hessian of `k` input features over `rows` activation rows accumulated in `buf` (at
    /// least [`Hessian::buffer_len`] elements, [`Buffer::Hessian`]), as
    /// [`Hessian::from_parts`], read only.
    pub fn from_parts(buf: &'a [f64], k: usize, rows: usize) -> Result<Self> {
        let len = Hessian::buffer_len(k)?;
        check_out(buf.len(), len, Buffer::Hessian)?;
        Ok(HessianRef { h: &buf[..len], k, rows })
    }

    /// The number of input features.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// The number of activation rows accumulated.
    pub const fn rows(&self) -> usize {
        self.rows
    }

    /// Index of `H[i][i]` in the packed upper triangle.
    #[inline]
    const fn row_start(&self, i: usize) -> usize {
        row_start(self.k, i)
    }

    /// `H[i][j]` (either triangle), `None` outside `k x k`.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        let (i, j) = if i <= j { (i, j) } else { (j, i) };
        (j < self.k).then(|| self.h[self.row_start(i) + (j - i)])
    }

    /// A copy in `buf`, as [`Hessian::copy_to`].
    pub fn copy_to<'b>(&self, buf: &'b mut [f64]) -> Result<Hessian<'b>> {
        check_out(buf.len(), self.h.len(), Buffer::Hessian)?;
        let h = &mut buf[..self.h.len()];
        h.copy_from_slice(self.h);
        Ok(Hessian { h, k: self.k, rows: self.rows })
    }

    /// `H[j][j]` (the sum of the squares of input `j` over the rows) as f32 (saturated at
    /// `f32::MAX`).
    #[inline]
    fn diag(&self, j: usize) -> f32 {
        (self.h[self.row_start(j)] as f32).min(f32::MAX)
    }

    /// The diagonal of `H` into `out`, as [`Hessian::diagonal`].
    pub fn diagonal(&self, out: &mut [f32]) -> Result<()> {
        check_out(out.len(), self.k, Buffer::Importance)?;
        for (j, o) in out[..self.k].iter_mut().enumerate() {
            *o = self.diag(j);
        }
        Ok(())
    }
}

impl<'b> From<&'b Hessian<'_>> for HessianRef<'b> {
    fn from(h: &'b Hessian<'_>) -> Self {
        h.view()
    }
}

impl<'b> From<&'b mut Hessian<'_>> for HessianRef<'b> {
    fn from(h: &'b mut Hessian<'_>) -> Self {
        h.view()
    }
}

/// The workspace (f64 elements) of the GPTQ quantizers for `n x k` weights: `k * k` for the
/// inverse Cholesky factor and `k` for the channel being quantized (independent of `n`).
pub fn workspace_len(n: usize, k: usize) -> Result<usize> {
    check_nk(n, k)?;
    k.checked_mul(k).and_then(|v| v.checked_add(k)).ok_or(Error::SizeOverflow)
}

/// Where a format puts a group's scale and its codes.
trait Sink {
    /// The scale of group `g` of channel `c` (called before the group's codes).
    fn scale(&mut self, c: usize, g: usize, s: f32);
    /// The code of depth `j` of channel `c`.
    fn code(&mut self, c: usize, j: usize, q: i8);
}

/// A format's quantization: group length, largest code, the rounding of a scale to its stored
/// type and the largest finite stored scale.
struct Format<R> {
    group: usize,
    levels: i32,
    round: R,
    max_scale: f32,
}

/// The checks on the GPTQ-specific inputs (before anything is written).
fn check_gptq(n: usize, k: usize, hessian: &HessianRef<'_>, damp: f32, work: &[f64]) -> Result<()> {
    if hessian.k != k {
        return Err(Error::DimMismatch { dim: Dim::K, given: hessian.k, expected: k });
    }
    if hessian.rows == 0 {
        return Err(Error::ZeroDim { dim: Dim::M });
    }
    if !damp.is_finite() || damp < 0.0 {
        return Err(Error::InvalidDamping { damp });
    }
    check_out(work.len(), workspace_len(n, k)?, Buffer::Work)
}

/// Writes into `u` (`k x k`, row-major; the upper triangle is used) the upper Cholesky factor
/// `U` of `(H' + lambda I)^-1 = U^T U`, `H'` being `H` with dead diagonal entries set to 1.
/// `t` (`k`) is scratch.
fn inverse_factor(h: &HessianRef<'_>, damp: f32, u: &mut [f64], t: &mut [f64]) -> Result<()> {
    let k = h.k;
    for i in 0..k {
        let s = h.row_start(i);
        u[i * k + i..(i + 1) * k].copy_from_slice(&h.h[s..s + k - i]);
    }
    let mut sum = 0f64;
    for j in 0..k {
        let d = &mut u[j * k + j];
        if *d == 0.0 {
            *d = 1.0;
        }
        sum += *d;
    }
    let lambda = f64::from(damp) * (sum / k as f64);
    for j in 0..k {
        u[j * k + j] += lambda;
    }
    // H = V V^T with V upper triangular, column j from row j's entries right of the diagonal
    // (already V's): V[j][j]^2 = H[j][j] - sum_{p>j} V[j][p]^2 and
    // V[i][j] V[j][j] = H[i][j] - sum_{p>j} V[i][p] V[j][p] for i < j.
    for j in (0..k).rev() {
        let (above, rest) = u.split_at_mut(j * k);
        let rj = &mut rest[..k];
        let mut d = rj[j];
        for &v in &rj[j + 1..] {
            d -= v * v;
        }
        if !(d > 0.0 && d.is_finite()) {
            return Err(Error::NotPositiveDefinite { index: j });
        }
        let v = libm::sqrt(d);
        rj[j] = v;
        let rj = &rj[j + 1..];
        for i in 0..j {
            let ri = &mut above[i * k..(i + 1) * k];
            let mut s = ri[j];
            for (a, b) in ri[j + 1..].iter().zip(rj) {
                s -= a * b;
            }
            ri[j] = s / v;
        }
    }
    // U = V^-1 (upper triangular), rows from the bottom:
    // U[i][j] = -(sum_{p=i+1..=j} V[i][p] U[p][j]) / V[i][i] for j > i, U[i][i] = 1 / V[i][i].
    for i in (0..k).rev() {
        let (head, below) = u.split_at_mut((i + 1) * k);
        let ri = &mut head[i * k..];
        let t = &mut t[..k];
        t[i + 1..].fill(0.0);
        for p in i + 1..k {
            let vip = ri[p];
            if vip != 0.0 {
                let up = &below[(p - i - 1) * k..(p - i) * k];
                for (tj, &upj) in t[p..].iter_mut().zip(&up[p..]) {
                    *tj += vip * upj;
                }
            }
        }
        let vii = ri[i];
        for (r, &tj) in ri[i + 1..].iter_mut().zip(&t[i + 1..]) {
            *r = -tj / vii;
        }
        ri[i] = 1.0 / vii;
    }
    Ok(())
}

/// The shared core, after the format's own checks: the GPTQ checks, the factorization, then
/// every channel through `sink`.
#[allow(clippy::too_many_arguments)]
fn run<S: Element, R: Fn(f32) -> f32>(
    method: Option<&Method<'_>>,
    n: usize,
    k: usize,
    f: &Format<R>,
    w: &Weights<'_, S>,
    hessian: &HessianRef<'_>,
    damp: f32,
    work: &mut [f64],
    sink: &mut impl Sink,
) -> Result<()> {
    check_gptq(n, k, hessian, damp, work)?;
    let (u, row) = work[..k * k + k].split_at_mut(k * k);
    inverse_factor(hessian, damp, u, row)?;
    let lim = f64::from(f32::MAX);
    for c in 0..n {
        for (j, r) in row.iter_mut().enumerate() {
            *r = if hessian.h[hessian.row_start(j)] == 0.0 { 0.0 } else { f64::from(w.at(c, j)) };
        }
        for g in 0..k / f.group {
            let j0 = g * f.group;
            let s = {
                let cur = |i: usize| row[j0 + i] as f32;
                match method {
                    Some(m) => choose_scale(m, f.group, j0, cur, f.levels, &f.round),
                    None => {
                        choose_weighted_scale(f.group, cur, |i| f64::from(hessian.diag(j0 + i)), f.levels, &f.round)
                    }
                }
            };
            let s = s.unwrap_or(GroupScale::nearest(f.max_scale, f.levels));
            sink.scale(c, g, s.stored);
            for j in j0..j0 + f.group {
                let v = row[j];
                let q = s.code(v as f32);
                sink.code(c, j, q);
                let e = (v - f64::from(q) * f64::from(s.stored)) / u[j * k + j];
                if e != 0.0 {
                    for (r, &ujp) in row[j + 1..].iter_mut().zip(&u[j * k + j + 1..(j + 1) * k]) {
                        *r = (*r - e * ujp).clamp(-lim, lim);
                    }
                }
            }
        }
    }
    Ok(())
}

/// [`qsi4cxp::quantize`](super::qsi4cxp::quantize) by GPTQ: symmetric int4 per channel, f32
/// scales, the same outputs (`n` rows of `ceil(k / 2)` bytes of signed nibbles, `n` scales).
/// `hessian`: `&h` of a [`Hessian`], or a [`HessianRef`] (read-only, shareable between
/// threads). `method`: `None` for [`Method::WeightedSearch`] with the diagonal of `hessian`. Errors: those
/// of the plain quantizer, then [`Error::DimMismatch`] (a Hessian of another `k`),
/// [`Error::ZeroDim`] with [`Dim::M`] (a Hessian of no rows), [`Error::InvalidDamping`],
/// [`Error::BufferTooShort`] with [`Buffer::Work`] and [`Error::NotPositiveDefinite`]; nothing is
/// written on an error.
#[allow(clippy::too_many_arguments)]
pub fn qsi4cxp<'h, S: Element>(
    method: Option<Method<'_>>,
    n: usize,
    k: usize,
    w: &Weights<'_, S>,
    hessian: impl Into<HessianRef<'h>>,
    damp: f32,
    work: &mut [f64],
    codes: &mut [u8],
    scale: &mut [f32],
) -> Result<()> {
    let (code_bytes, scales) = super::qsi4cxp::sizes(n, k)?;
    check_call(method.as_ref(), n, k, w, (codes.len(), code_bytes), Some((scale.len(), scales)))?;
    struct Out<'o> {
        codes: &'o mut [u8],
        scale: &'o mut [f32],
        row: usize,
    }
    impl Sink for Out<'_> {
        fn scale(&mut self, c: usize, _: usize, s: f32) {
            self.scale[c] = s;
            self.codes[c * self.row..(c + 1) * self.row].fill(0);
        }
        fn code(&mut self, c: usize, j: usize, q: i8) {
            self.codes[c * self.row + j / 2] |= ((q as u8) & 0x0f) << (4 * (j % 2));
        }
    }
    let f = Format { group: k, levels: 7, round: |s: f32| s, max_scale: f32::MAX };
    let mut out = Out { codes, scale, row: k.div_ceil(2) };
    run(method.as_ref(), n, k, &f, w, &hessian.into(), damp, work, &mut out)
}

/// [`qsi8cxp::quantize`](super::qsi8cxp::quantize) by GPTQ: symmetric int8 per channel, f32
/// scales, the same outputs (`n` rows of `k` codes, `n` scales). Arguments and errors as
/// [`qsi4cxp`].
#[allow(clippy::too_many_arguments)]
pub fn qsi8cxp<'h, S: Element>(
    method: Option<Method<'_>>,
    n: usize,
    k: usize,
    w: &Weights<'_, S>,
    hessian: impl Into<HessianRef<'h>>,
    damp: f32,
    work: &mut [f64],
    codes: &mut [i8],
    scale: &mut [f32],
) -> Result<()> {
    let (code_len, scales) = super::qsi8cxp::sizes(n, k)?;
    check_call(method.as_ref(), n, k, w, (codes.len(), code_len), Some((scale.len(), scales)))?;
    struct Out<'o> {
        codes: &'o mut [i8],
        scale: &'o mut [f32],
        k: usize,
    }
    impl Sink for Out<'_> {
        fn scale(&mut self, c: usize, _: usize, s: f32) {
            self.scale[c] = s;
        }
        fn code(&mut self, c: usize, j: usize, q: i8) {
            self.codes[c * self.k + j] = q;
        }
    }
    let f = Format { group: k, levels: 127, round: |s: f32| s, max_scale: f32::MAX };
    run(method.as_ref(), n, k, &f, w, &hessian.into(), damp, work, &mut Out { codes, scale, k })
}

/// [`qsi4c32p::quantize`](super::qsi4c32p::quantize) by GPTQ: symmetric int4 per block of `bl`
/// with bf16 scales, the same outputs (`n` rows of `k / 2` bytes of signed nibbles,
/// `n * k / bl` scales `[c][b]`). Each block's scale is chosen when the column loop reaches its
/// first depth, from the block's error-updated weights. Arguments and errors as [`qsi4cxp`],
/// plus `bl`'s and [`Error::ScaleOverflow`] (on the original weights) as the plain quantizer.
#[allow(clippy::too_many_arguments)]
pub fn qsi4c32p<'h, S: Element>(
    method: Option<Method<'_>>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    hessian: impl Into<HessianRef<'h>>,
    damp: f32,
    work: &mut [f64],
    codes: &mut [u8],
    scale: &mut [bf16],
) -> Result<()> {
    let (code_bytes, scales) = super::qsi4c32p::sizes(n, k, bl)?;
    check_call(method.as_ref(), n, k, w, (codes.len(), code_bytes), Some((scale.len(), scales)))?;
    let round = |s: f32| bf16::from_f32(s).to_f32();
    check_block_scales(method.as_ref().unwrap_or(&Method::Search), n, k, bl, w, round)?;
    struct Out<'o> {
        codes: &'o mut [u8],
        scale: &'o mut [bf16],
        k: usize,
        bl: usize,
    }
    impl Sink for Out<'_> {
        fn scale(&mut self, c: usize, g: usize, s: f32) {
            self.scale[c * (self.k / self.bl) + g] = bf16::from_f32(s);
            let first = (c * self.k + g * self.bl) / 2;
            self.codes[first..first + self.bl / 2].fill(0);
        }
        fn code(&mut self, c: usize, j: usize, q: i8) {
            self.codes[(c * self.k + j) / 2] |= ((q as u8) & 0x0f) << (4 * (j % 2));
        }
    }
    let f = Format { group: bl, levels: 7, round, max_scale: bf16::MAX.to_f32() };
    run(method.as_ref(), n, k, &f, w, &hessian.into(), damp, work, &mut Out { codes, scale, k, bl })
}

/// [`q4_0::quantize`](super::q4_0::quantize) by GPTQ: GGML `Q4_0` blocks of `bl` with f16
/// scales, the same bytes layout ([`q4_0::size`](super::q4_0::size) bytes). Each block's scale
/// is chosen when the column loop reaches its first depth, from the block's error-updated
/// weights. Arguments and errors as [`qsi4c32p`].
#[allow(clippy::too_many_arguments)]
pub fn q4_0<'h, S: Element>(
    method: Option<Method<'_>>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    hessian: impl Into<HessianRef<'h>>,
    damp: f32,
    work: &mut [f64],
    blocks: &mut [u8],
) -> Result<()> {
    let bytes = super::q4_0::size(n, k, bl)?;
    check_call(method.as_ref(), n, k, w, (blocks.len(), bytes), None)?;
    let round = |s: f32| f16::from_f32(s).to_f32();
    check_block_scales(method.as_ref().unwrap_or(&Method::Search), n, k, bl, w, round)?;
    struct Out<'o> {
        blocks: &'o mut [u8],
        nb: usize,
        bl: usize,
        rb: usize,
    }
    impl Sink for Out<'_> {
        fn scale(&mut self, c: usize, g: usize, s: f32) {
            let blk = &mut self.blocks[(c * self.nb + g) * self.rb..(c * self.nb + g + 1) * self.rb];
            blk[..2].copy_from_slice(&f16::from_f32(s).to_le_bytes());
            blk[2..].fill(0);
        }
        fn code(&mut self, c: usize, j: usize, q: i8) {
            let (g, jj, half) = (j / self.bl, j % self.bl, self.bl / 2);
            let at = (c * self.nb + g) * self.rb + 2 + jj % half;
            self.blocks[at] |= (((q + 8) as u8) & 0x0f) << (4 * (jj / half));
        }
    }
    let f = Format { group: bl, levels: 7, round, max_scale: f16::MAX.to_f32() };
    let mut out = Out { blocks, nb: k / bl, bl, rb: raw_block_bytes(bl) };
    run(method.as_ref(), n, k, &f, w, &hessian.into(), damp, work, &mut out)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::quant;
    use std::vec;
    use std::vec::Vec;

    struct Rng(u64);
    impl Rng {
        fn unit(&mut self) -> f32 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 40) as f32) / (1u64 << 23) as f32 - 1.0
        }
        fn vec(&mut self, len: usize) -> Vec<f32> {
            (0..len).map(|_| self.unit()).collect()
        }
    }

    fn hessian_of<'a>(buf: &'a mut Vec<f64>, x: &[f32], m: usize, k: usize) -> Hessian<'a> {
        buf.resize(Hessian::buffer_len(k).unwrap(), 7.0);
        let mut h = Hessian::new(buf, k).unwrap();
        h.add(x, m, k).unwrap();
        h
    }

    #[test]
    fn accumulator_is_x_transpose_x_in_any_chunking() {
        let mut rng = Rng(11);
        let (m, k, stride) = (37, 19, 23);
        let x = rng.vec(m * stride);
        let mut buf = vec![5.0f64; Hessian::buffer_len(k).unwrap() + 3];
        let mut h = Hessian::new(&mut buf, k).unwrap();
        h.add(&x, m, stride).unwrap();
        assert_eq!(h.rows(), m);
        for i in 0..k {
            for j in 0..k {
                let mut want = 0f64;
                for r in 0..m {
                    want += f64::from(x[r * stride + i]) * f64::from(x[r * stride + j]);
                }
                assert_eq!(h.get(i, j), Some(want), "H[{i}][{j}]");
            }
        }
        assert_eq!(h.get(k, 0), None);
        let mut diag = vec![0f32; k];
        h.diagonal(&mut diag).unwrap();
        assert!((0..k).all(|j| diag[j] == h.get(j, j).unwrap() as f32));
        let one: Vec<f64> = h.h.to_vec();
        // The same rows in chunks of 1, 5 and the rest (the last one short of a full stride).
        let mut buf2 = vec![0f64; Hessian::buffer_len(k).unwrap()];
        let mut h2 = Hessian::new(&mut buf2, k).unwrap();
        h2.add(&x, 1, stride).unwrap();
        h2.add(&x[stride..], 5, stride).unwrap();
        h2.add(&x[6 * stride..(m - 1) * stride + k], m - 6, stride).unwrap();
        h2.add(&[], 0, 0).unwrap();
        assert_eq!(h2.rows(), m);
        assert_eq!(h2.h.to_vec(), one);
    }

    #[test]
    fn scaled_copy_is_the_hessian_of_the_scaled_rows() {
        let mut rng = Rng(13);
        let (m, k) = (29, 17);
        let x = rng.vec(m * k);
        // Powers of two: the scaled rows' products are exact, so both ways agree to the bit.
        let scale: Vec<f32> = (0..k).map(|j| [0.25f32, 2.0, 1.0, 8.0][j % 4]).collect();
        let xs: Vec<f32> = x.iter().enumerate().map(|(e, v)| v * scale[e % k]).collect();
        let mut buf = vec![0f64; Hessian::buffer_len(k).unwrap()];
        let mut h = Hessian::new(&mut buf, k).unwrap();
        h.add(&x, m, k).unwrap();
        let mut bs = vec![0f64; Hessian::buffer_len(k).unwrap()];
        let mut hs = Hessian::new(&mut bs, k).unwrap();
        hs.add(&xs, m, k).unwrap();
        let mut bc = vec![0f64; Hessian::buffer_len(k).unwrap()];
        assert!(matches!(h.copy_to(&mut bc[1..]), Err(Error::BufferTooShort { buffer: Buffer::Hessian, .. })));
        let mut c = h.copy_to(&mut bc).unwrap();
        assert_eq!((c.k(), c.rows(), c.h.to_vec()), (k, m, h.h.to_vec()));
        let mut bad = scale.clone();
        bad[4] = f32::NAN;
        assert_eq!(c.scale_inputs(&bad).unwrap_err(), Error::NonFinite { buffer: Buffer::InputScale, index: 4 });
        assert!(matches!(c.scale_inputs(&scale[..k - 1]), Err(Error::BufferTooShort { .. })));
        assert_eq!(c.h.to_vec(), h.h.to_vec(), "a rejected call changed the Hessian");
        c.scale_inputs(&scale).unwrap();
        assert_eq!(c.h.to_vec(), hs.h.to_vec());
    }

    #[test]
    fn from_parts_resumes_a_hessian() {
        let mut rng = Rng(15);
        let (m, k) = (9, 6);
        let x = rng.vec(m * k);
        let mut whole = Vec::new();
        let want = hessian_of(&mut whole, &x, m, k).h.to_vec();
        let mut buf = vec![3.0f64; Hessian::buffer_len(k).unwrap() + 1];
        let mut h = Hessian::new(&mut buf, k).unwrap();
        h.add(&x, 4, k).unwrap();
        let rows = h.rows();
        // Resumed from the storage, `k` and the row count: not zeroed, the same sums.
        let mut h = Hessian::from_parts(&mut buf, k, rows).unwrap();
        assert_eq!((h.k(), h.rows()), (k, 4));
        h.add(&x[4 * k..], m - 4, k).unwrap();
        assert_eq!((h.rows(), h.h.to_vec()), (m, want));
        let short = Hessian::buffer_len(k).unwrap() - 1;
        let e = Hessian::from_parts(&mut buf[..short], k, 1).map(|_| ());
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Hessian, given: short, needed: short + 1 }));
        assert_eq!(Hessian::from_parts(&mut buf, 0, 1).map(|_| ()), Err(Error::ZeroDim { dim: Dim::K }));
    }

    #[test]
    fn inverse_factor_is_the_cholesky_factor_of_the_inverse() {
        let mut rng = Rng(12);
        let (m, k) = (40, 24);
        let mut x = rng.vec(m * k);
        for r in 0..m {
            x[r * k + 5] = 0.0; // a dead input
            x[r * k + 7] = x[r * k + 3] * 2.0; // a dependent one
        }
        let mut buf = Vec::new();
        let h = hessian_of(&mut buf, &x, m, k);
        let (mut u, mut t) = (vec![0f64; k * k], vec![0f64; k]);
        inverse_factor(&h.view(), 0.01, &mut u, &mut t).unwrap();
        // The damped matrix A, then U^T U A = I.
        let mut a = vec![0f64; k * k];
        let mut mean = 0.0;
        for i in 0..k {
            for j in 0..k {
                a[i * k + j] = h.get(i, j).unwrap();
            }
            if a[i * k + i] == 0.0 {
                a[i * k + i] = 1.0;
            }
            mean += a[i * k + i] / k as f64;
        }
        (0..k).for_each(|i| a[i * k + i] += 0.01 * mean);
        let ut = |i: usize, j: usize| if i <= j { u[i * k + j] } else { 0.0 };
        for i in 0..k {
            for j in 0..k {
                let mut v = 0f64;
                for p in 0..k {
                    let mut hinv = 0f64;
                    for q in 0..k {
                        hinv += ut(q, i) * ut(q, p);
                    }
                    v += hinv * a[p * k + j];
                }
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-6, "[{i}][{j}] = {v}");
            }
        }
        assert!((0..k).all(|j| u[j * k + j] > 0.0));
        // Without damping the dependent input makes it singular.
        let e = inverse_factor(&h.view(), 0.0, &mut u, &mut t);
        assert!(matches!(e, Err(Error::NotPositiveDefinite { .. })), "{e:?}");
    }

    /// Unit activation rows `e_i`: `H = I` exactly.
    fn identity<'a>(buf: &'a mut Vec<f64>, k: usize) -> Hessian<'a> {
        let mut x = vec![0f32; k * k];
        (0..k).for_each(|i| x[i * k + i] = 1.0);
        hessian_of(buf, &x, k, k)
    }

    #[test]
    fn with_identity_hessian_gptq_is_the_plain_quantizer() {
        let mut rng = Rng(13);
        let (n, k, bl) = (6, 64, 32);
        let mut w: Vec<f32> = rng.vec(n * k);
        w[3] = 5.0;
        w[k + 40] = -0.0;
        w[2 * k..3 * k].fill(0.0);
        let wt: Vec<f32> = (0..k * n).map(|i| w[(i % n) * k + i / n]).collect();
        let mut hb = Vec::new();
        let h = identity(&mut hb, k);
        let ones = vec![1f32; k];
        let mut work = vec![0f64; workspace_len(n, k).unwrap()];
        for ws in [Weights::nxk(&w, k), Weights::kxn(&wt, n)] {
            for (plain, method) in [
                (Method::RoundToNearest, Some(Method::RoundToNearest)),
                (Method::SignedMax, Some(Method::SignedMax)),
                (Method::Search, Some(Method::Search)),
                (Method::WeightedSearch(&ones), None),
            ] {
                let (mut c0, mut s0, mut c1, mut s1) =
                    (vec![0u8; n * k / 2], vec![0f32; n], vec![1u8; n * k / 2], vec![1f32; n]);
                quant::qsi4cxp::quantize(plain, n, k, &ws, &mut c0, &mut s0).unwrap();
                qsi4cxp(method, n, k, &ws, &h, 0.01, &mut work, &mut c1, &mut s1).unwrap();
                assert_eq!((&c0, &s0), (&c1, &s1), "qsi4cxp {method:?}");
                let (mut c0, mut c1) = (vec![0i8; n * k], vec![1i8; n * k]);
                quant::qsi8cxp::quantize(plain, n, k, &ws, &mut c0, &mut s0).unwrap();
                qsi8cxp(method, n, k, &ws, &h, 0.01, &mut work, &mut c1, &mut s1).unwrap();
                assert_eq!((&c0, &s0), (&c1, &s1), "qsi8cxp {method:?}");
                let (mut c0, mut c1) = (vec![0u8; n * k / 2], vec![1u8; n * k / 2]);
                let (mut b0, mut b1) = (vec![bf16::ZERO; n * k / bl], vec![bf16::ONE; n * k / bl]);
                quant::qsi4c32p::quantize(plain, n, k, bl, &ws, &mut c0, &mut b0).unwrap();
                qsi4c32p(method, n, k, bl, &ws, &h, 0.01, &mut work, &mut c1, &mut b1).unwrap();
                assert_eq!((&c0, &b0), (&c1, &b1), "qsi4c32p {method:?}");
                let size = quant::q4_0::size(n, k, bl).unwrap();
                let (mut q0, mut q1) = (vec![0u8; size], vec![0xa5u8; size]);
                quant::q4_0::quantize(plain, n, k, bl, &ws, &mut q0).unwrap();
                q4_0(method, n, k, bl, &ws, &h, 0.01, &mut work, &mut q1).unwrap();
                assert_eq!(q0, q1, "q4_0 {method:?}");
            }
        }
    }

    #[test]
    fn default_method_is_the_weighted_search_with_the_diagonal() {
        let mut rng = Rng(14);
        let (n, k, m, bl) = (5, 64, 90, 32);
        let mut x = rng.vec(m * k);
        for r in 0..m {
            x[r * k + 9] = 0.0; // dead
            for j in 0..k {
                x[r * k + j] *= (j % 5 + 1) as f32;
            }
        }
        let w = rng.vec(n * k);
        let mut hb = Vec::new();
        let h = hessian_of(&mut hb, &x, m, k);
        let mut diag = vec![0f32; k];
        h.diagonal(&mut diag).unwrap();
        let mut work = vec![0f64; workspace_len(n, k).unwrap()];
        let size = quant::q4_0::size(n, k, bl).unwrap();
        let (mut q0, mut q1) = (vec![0u8; size], vec![0u8; size]);
        q4_0(None, n, k, bl, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut q0).unwrap();
        q4_0(Some(Method::WeightedSearch(&diag)), n, k, bl, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut q1)
            .unwrap();
        assert_eq!(q0, q1);
        // The dead input's weights are zero codes.
        for c in 0..n {
            let byte = q0[(c * 2) * 18 + 2 + 9];
            assert_eq!(byte & 0xf, 8, "channel {c}");
        }
    }

    #[test]
    fn bad_inputs_are_rejected_and_nothing_is_written() {
        let (n, k, bl, m) = (2, 64, 32, 3);
        let mut x = vec![0.5f32; m * k];
        let mut hb = vec![0f64; Hessian::buffer_len(k).unwrap()];
        assert_eq!(Hessian::buffer_len(0), Err(Error::ZeroDim { dim: Dim::K }));
        assert_eq!(Hessian::buffer_len(usize::MAX), Err(Error::SizeOverflow));
        let e = Hessian::new(&mut hb[..10], k).map(|_| ());
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Hessian, given: 10, needed: k * (k + 1) / 2 }));
        let mut h = Hessian::new(&mut hb, k).unwrap();
        let mut w = vec![0.25f32; n * k];
        let ws = Weights::nxk(&w, k);
        let mut work = vec![0f64; workspace_len(n, k).unwrap()];
        let mut blocks = vec![0x5au8; quant::q4_0::size(n, k, bl).unwrap()];
        // No rows yet.
        let e = q4_0(None, n, k, bl, &ws, &h, 0.01, &mut work, &mut blocks);
        assert_eq!(e, Err(Error::ZeroDim { dim: Dim::M }));
        // Activations.
        x[k + 3] = f32::INFINITY;
        assert_eq!(h.add(&x, m, k), Err(Error::NonFinite { buffer: Buffer::Lhs, index: k + 3 }));
        assert_eq!(h.rows(), 0);
        assert!(h.h.iter().all(|&v| v == 0.0), "nothing added");
        x[k + 3] = 1.0;
        assert_eq!(h.add(&x, m, k - 1), Err(Error::StrideTooSmall { stride: Stride::Lhs, given: k - 1, needed: k }));
        let e = h.add(&x[..2 * k], m, k);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: 2 * k, needed: 3 * k }));
        h.add(&x, m, k).unwrap();
        let mut d = vec![0f32; k - 1];
        assert_eq!(
            h.diagonal(&mut d),
            Err(Error::BufferTooShort { buffer: Buffer::Importance, given: k - 1, needed: k })
        );
        // The quantizers' own checks, then the GPTQ ones.
        let e = q4_0(None, n, k, 48, &ws, &h, 0.01, &mut work, &mut blocks);
        assert!(matches!(e, Err(Error::NotMultiple { .. })), "{e:?}");
        let e = q4_0(None, n, k, bl, &ws, &h, 0.01, &mut work, &mut blocks[..71]);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 71, needed: 72 }));
        let imp = [1f32; 3];
        let e = q4_0(Some(Method::WeightedSearch(&imp)), n, k, bl, &ws, &h, 0.01, &mut work, &mut blocks);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Importance, given: 3, needed: k }));
        for damp in [-0.5, f32::NAN, f32::INFINITY] {
            let e = q4_0(None, n, k, bl, &ws, &h, damp, &mut work, &mut blocks);
            assert!(matches!(e, Err(Error::InvalidDamping { .. })), "{e:?}");
        }
        let e = q4_0(None, n, k, bl, &ws, &h, 0.01, &mut work[..k * k], &mut blocks);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Work, given: k * k, needed: k * k + k }));
        // Rank 1 (every row the same) and no damping: singular.
        let e = q4_0(None, n, k, bl, &ws, &h, 0.0, &mut work, &mut blocks);
        assert!(matches!(e, Err(Error::NotPositiveDefinite { .. })), "{e:?}");
        // A Hessian of another k.
        let e = q4_0(None, n, k / 2, bl, &Weights::nxk(&w, k / 2), &h, 0.01, &mut work, &mut blocks);
        assert_eq!(e, Err(Error::DimMismatch { dim: Dim::K, given: k, expected: k / 2 }));
        let (mut codes, mut scale) = (vec![0x5au8; n * k / 2], vec![7f32; n]);
        let e = qsi4cxp(None, n, k / 2, &Weights::nxk(&w, k / 2), &h, 0.01, &mut work, &mut codes, &mut scale);
        assert_eq!(e, Err(Error::DimMismatch { dim: Dim::K, given: k, expected: k / 2 }));
        // Weights.
        w[70] = f32::NAN;
        let e = q4_0(None, n, k, bl, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut blocks);
        assert_eq!(e, Err(Error::NonFinite { buffer: Buffer::Rhs, index: 70 }));
        w[70] = 1.0e6; // f16 scale overflow
        let e = q4_0(None, n, k, bl, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut blocks);
        assert_eq!(e, Err(Error::ScaleOverflow { buffer: Buffer::Rhs, index: 64 }));
        let e = qsi4cxp(None, 0, k, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut codes, &mut scale);
        assert_eq!(e, Err(Error::ZeroDim { dim: Dim::N }));
        let (mut q8, mut b16) = (vec![3i8; n * k], vec![bf16::ONE; n * k / bl]);
        let e = qsi8cxp(None, n, k, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut q8[..5], &mut scale);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 5, needed: n * k }));
        let e = qsi4c32p(None, n, k, bl, &Weights::nxk(&w, k), &h, 0.01, &mut work, &mut codes, &mut b16[..1]);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 1, needed: n * k / bl }));
        assert!(blocks.iter().all(|&b| b == 0x5a) && codes.iter().all(|&b| b == 0x5a));
        assert!(scale.iter().all(|&s| s == 7.0) && q8.iter().all(|&q| q == 3) && b16.iter().all(|&s| s == bf16::ONE));
    }

    #[test]
    fn huge_updates_saturate_instead_of_failing() {
        // Input 32 is 0.01 * input 31 (plus a little noise) and there is no damping: GPTQ moves
        // input 31's rounding error, times about 100, onto weight 32, beyond what an f16 scale
        // can hold (the original weights are fine): that block gets f16::MAX.
        let mut rng = Rng(15);
        let (n, k, m, bl) = (2, 64, 200, 32);
        let mut x = rng.vec(m * k);
        for r in 0..m {
            x[r * k + 32] = 0.01 * x[r * k + 31] + 1e-4 * rng.unit();
        }
        // SignedMax on a block led by -4e5: d = 5e4, and +4e5 clamps at code 7 (error +5e4).
        let w: Vec<f32> = (0..n * k).map(|i| if i % k == 0 { -4.0e5 } else { 4.0e5 }).collect();
        let mut hb = Vec::new();
        let h = hessian_of(&mut hb, &x, m, k);
        let mut work = vec![0f64; workspace_len(n, k).unwrap()];
        let mut blocks = vec![0u8; quant::q4_0::size(n, k, bl).unwrap()];
        q4_0(Some(Method::SignedMax), n, k, bl, &Weights::nxk(&w, k), &h, 0.0, &mut work, &mut blocks).unwrap();
        let scales: Vec<f16> = blocks.chunks_exact(18).map(|b| f16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!(scales[0], f16::from_f32(5.0e4));
        assert_eq!(scales[1], f16::MAX, "{scales:?}");
    }

    #[test]
    fn a_shared_view_gives_the_bits_of_the_hessian_on_any_thread() {
        let mut rng = Rng(16);
        let (n, k, m, bl) = (3, 64, 80, 32);
        let x = rng.vec(m * k);
        let mut hb = Vec::new();
        let h = hessian_of(&mut hb, &x, m, k);
        let ws: Vec<Vec<f32>> = (0..3).map(|_| rng.vec(n * k)).collect();
        let quantize = |h: HessianRef<'_>, w: &[f32]| {
            let mut work = vec![0f64; workspace_len(n, k).unwrap()];
            let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![bf16::ZERO; n * k / bl]);
            qsi4c32p(None, n, k, bl, &Weights::nxk(w, k), h, 0.01, &mut work, &mut codes, &mut scale).unwrap();
            (codes, scale)
        };
        let mut work = vec![0f64; workspace_len(n, k).unwrap()];
        let want: Vec<_> = ws
            .iter()
            .map(|w| {
                let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![bf16::ZERO; n * k / bl]);
                qsi4c32p(None, n, k, bl, &Weights::nxk(w, k), &h, 0.01, &mut work, &mut codes, &mut scale).unwrap();
                (codes, scale)
            })
            .collect();
        let (mut d0, mut d1) = (vec![0f32; k], vec![0f32; k]);
        h.diagonal(&mut d0).unwrap();
        let h37 = h.get(7, 3);
        // The same storage, borrowed shared: one view per thread.
        let stored: &[f64] = &hb;
        let view = HessianRef::from_parts(stored, k, m).unwrap();
        assert_eq!((view.k(), view.rows(), view.get(3, 7)), (k, m, h37));
        view.diagonal(&mut d1).unwrap();
        assert_eq!(d0, d1);
        let got: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = ws.iter().map(|w| s.spawn(move || quantize(view, w))).collect();
            handles.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(got, want);
        assert_eq!(
            HessianRef::from_parts(&stored[..stored.len() - 1], k, m).unwrap_err(),
            Error::BufferTooShort { buffer: Buffer::Hessian, given: stored.len() - 1, needed: stored.len() }
        );
    }
}
