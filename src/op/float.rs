//! The float operator: [`FloatLinear`], a linear layer (`y = x W^T + b`, clamped) over a float
//! family ([`crate::float`]), with weights packed once in the family's preferred format and any
//! `m` per call. The unpacked-LHS families (`f32_f32_f32p`, `f16_f16_f16p`) read the activations
//! in place and need no scratch; the bf16 families pack them into the caller's scratch first.
//!
//! ```
//! use qgemm::f32_f32_f32p::F32F32F32p;
//! use qgemm::op::FloatLinear;
//! use qgemm::rhs::FloatSource;
//! use qgemm::CpuFeatures;
//!
//! let (n, k) = (3, 4);
//! let w = [0.5f32; 3 * 4]; // n x k
//! let mut packed = vec![0u8; FloatLinear::<F32F32F32p>::packed_size(n, k)?];
//! let layer = FloatLinear::<F32F32F32p>::pack(n, k, &FloatSource::nxk(&w, k), Some(&[1.0, 2.0, 3.0]), &mut packed)?;
//! let cpu = CpuFeatures::from_target();
//! let mut y = [0f32; 2 * 3];
//! layer.run(&cpu, 2, &[1.0f32; 2 * 4], &mut y, &mut [])?;
//! assert_eq!(y, [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]);
//! # Ok::<(), qgemm::Error>(())
//! ```

use core::marker::PhantomData;

use half::f16;

use crate::CpuFeatures;
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result};
use crate::f16_bf16p_bf16p::F16Bf16pBf16p;
use crate::f16_f16_f16p::F16F16F16p;
use crate::f32_bf16p_bf16p::F32Bf16pBf16p;
use crate::f32_f32_f32p::F32F32F32p;
use crate::float::{FloatArgs, FloatFamily, FloatKernel, LhsFormat, RhsFormat};
use crate::lhs::bf16p;
use crate::matmul::Clamp;
use crate::op::{MAX_PARTS, Rect, split};
use crate::rhs::{FloatSource, bf16p12};

/// A float family the operator layer runs: its preferred formats and packers.
pub trait FloatOperator: FloatFamily {
    /// The activation and weight element type (`f32` or [`half::f16`]).
    type Src: Element;
    /// The bias element type of the packed weights.
    type Bias: Element;
    /// The RHS format [`FloatLinear`] packs weights in (the family's `PREFERRED_RHS`).
    const RHS: RhsFormat;
    /// The LHS format of the activations (`None`: read unpacked).
    const LHS: Option<LhsFormat>;

    /// Packs weights in [`FloatOperator::RHS`].
    #[doc(hidden)]
    fn pack_weights(
        n: usize,
        k: usize,
        w: &FloatSource<'_, Self::Src>,
        bias: Option<&[Self::Bias]>,
        out: &mut [u8],
    ) -> Result<()>;

    /// The `m x k` dense activations `x` as the kernels read them: `x` itself, or packed into
    /// `scratch` ([`FloatOperator::LHS`]).
    #[doc(hidden)]
    fn activations<'s>(m: usize, k: usize, x: &'s [Self::Src], scratch: &'s mut [u8]) -> Result<&'s [Self::Lhs]>;
}

macro_rules! unpacked_operator {
    ($fam:ty, $t:ty, $module:ident) => {
        impl FloatOperator for $fam {
            type Src = $t;
            type Bias = $t;
            const RHS: RhsFormat = crate::$module::PREFERRED_RHS;
            const LHS: Option<LhsFormat> = None;
            fn pack_weights(
                n: usize,
                k: usize,
                w: &FloatSource<'_, $t>,
                b: Option<&[$t]>,
                out: &mut [u8],
            ) -> Result<()> {
                crate::rhs::float::pack_copy(&Self::RHS, n, k, w, b, out)
            }
            fn activations<'s>(_m: usize, _k: usize, x: &'s [$t], _scratch: &'s mut [u8]) -> Result<&'s [$t]> {
                Ok(x)
            }
        }
    };
}

unpacked_operator!(F32F32F32p, f32, f32_f32_f32p);
unpacked_operator!(F16F16F16p, f16, f16_f16_f16p);

macro_rules! packed_operator {
    ($fam:ty, $t:ty, $bias:ty, $module:ident, $packer:ident) => {
        impl FloatOperator for $fam {
            type Src = $t;
            type Bias = $bias;
            const RHS: RhsFormat = crate::$module::PREFERRED_RHS;
            const LHS: Option<LhsFormat> = crate::$module::PREFERRED_LHS;
            fn pack_weights(
                n: usize,
                k: usize,
                w: &FloatSource<'_, $t>,
                b: Option<&[$bias]>,
                out: &mut [u8],
            ) -> Result<()> {
                bf16p12::$packer(n, k, w, b, out)
            }
            fn activations<'s>(m: usize, k: usize, x: &'s [$t], scratch: &'s mut [u8]) -> Result<&'s [u8]> {
                let f = bf16p::BF16P8X4;
                let size = f.packed_size(m, k)?;
                bf16p::pack(&f, m, k, x, k, scratch)?;
                Ok(&scratch[..size])
            }
        }
    };
}

packed_operator!(F32Bf16pBf16p, f32, f32, f32_bf16p_bf16p, pack_b32);
packed_operator!(F16Bf16pBf16p, f16, f16, f16_bf16p_bf16p, pack_b16);

/// A linear layer of float family `F`: `n` output channels over depth `k`, weights (with their
/// bias) packed in [`FloatOperator::RHS`] in a buffer the caller owns.
pub struct FloatLinear<'w, F: FloatOperator> {
    weights: &'w [u8],
    n: usize,
    k: usize,
    family: PhantomData<fn() -> F>,
}

impl<F: FloatOperator> Clone for FloatLinear<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: FloatOperator> Copy for FloatLinear<'_, F> {}

impl<F: FloatOperator> core::fmt::Debug for FloatLinear<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FloatLinear").field("family", &F::NAME).field("n", &self.n).field("k", &self.k).finish()
    }
}

impl<'w, F: FloatOperator> FloatLinear<'w, F> {
    /// Bytes of packed weights for `n` channels of depth `k`.
    pub fn packed_size(n: usize, k: usize) -> Result<usize> {
        if n == 0 {
            return Err(Error::ZeroDim { dim: Dim::N });
        }
        F::RHS.packed_size(n, k)
    }

    /// Packs `n x k` weights `w` (either layout) and an optional bias of `n` values into `buf`
    /// (at least [`FloatLinear::packed_size`] bytes) and wraps them.
    pub fn pack(
        n: usize,
        k: usize,
        w: &FloatSource<'_, F::Src>,
        bias: Option<&[F::Bias]>,
        buf: &'w mut [u8],
    ) -> Result<Self> {
        let size = Self::packed_size(n, k)?;
        F::pack_weights(n, k, w, bias, buf)?;
        Ok(FloatLinear { weights: &buf[..size], n, k, family: PhantomData })
    }

    /// Wraps weights packed earlier in [`FloatOperator::RHS`] (by [`FloatLinear::pack`] or
    /// KleidiAI's packer of that format). The bytes are trusted to be such a packing.
    pub fn from_packed(n: usize, k: usize, weights: &'w [u8]) -> Result<Self> {
        let size = Self::packed_size(n, k)?;
        if weights.len() < size {
            return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: weights.len(), needed: size });
        }
        Ok(FloatLinear { weights: &weights[..size], n, k, family: PhantomData })
    }

    /// Output channels.
    pub const fn n(&self) -> usize {
        self.n
    }

    /// Depth.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// The packed weights.
    pub const fn weights(&self) -> &'w [u8] {
        self.weights
    }

    /// The kernel the layer runs on `cpu`: the best one of its formats (for the bf16 families
    /// the `BFMMLA` one for every `m`, so a row's result does not depend on `m`).
    pub fn kernel(&self, cpu: &CpuFeatures) -> &'static FloatKernel<F> {
        crate::float::select_for::<F>(cpu, &F::RHS, F::LHS)
    }

    /// Bytes of scratch a call of `m` rows needs: 0 for the unpacked-LHS families, the packed
    /// activations for the bf16 ones.
    pub fn scratch_size(&self, m: usize) -> Result<usize> {
        match F::LHS {
            Some(f) if m > 0 => f.packed_size(m, self.k),
            _ => Ok(0),
        }
    }

    /// Prepares a call on `m` rows of `x` (`m x k`, dense rows): packs the activations into
    /// `scratch` where the family needs it and chooses the kernel. `m == 0` is an empty call.
    pub fn prepare<'s>(
        &self,
        cpu: &CpuFeatures,
        m: usize,
        x: &'s [F::Src],
        scratch: &'s mut [u8],
    ) -> Result<FloatPrepared<'w, 's, F>> {
        self.prepare_with(self.kernel(cpu), cpu, m, x, scratch)
    }

    /// [`FloatLinear::prepare`] with a given kernel of the family (for example a tier's), which
    /// must consume the layer's formats ([`Error::Unsupported`] otherwise) and run on `cpu`.
    pub fn prepare_with<'s>(
        &self,
        kernel: &'static FloatKernel<F>,
        cpu: &CpuFeatures,
        m: usize,
        x: &'s [F::Src],
        scratch: &'s mut [u8],
    ) -> Result<FloatPrepared<'w, 's, F>> {
        if kernel.rhs_format() != F::RHS || kernel.lhs_format() != F::LHS {
            return Err(Error::Unsupported { param: Param::Nr, value: kernel.rhs_format().nr });
        }
        if let Some(needs) = kernel.missing_feature(cpu) {
            return Err(Error::UnsupportedCpu { needs });
        }
        let needed = m.checked_mul(self.k).ok_or(Error::SizeOverflow)?;
        if x.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: x.len(), needed });
        }
        let lhs = if m == 0 { &[][..] } else { F::activations(m, self.k, &x[..needed], scratch)? };
        Ok(FloatPrepared { layer: *self, kernel, cpu: *cpu, m, lhs, clamp: Clamp::NONE })
    }

    /// `out = x W^T + b` for `m` rows of `x` (dense), into `out` (`m x n`, dense rows), with
    /// `scratch` of [`FloatLinear::scratch_size`] bytes.
    pub fn run(&self, cpu: &CpuFeatures, m: usize, x: &[F::Src], out: &mut [F::Dst], scratch: &mut [u8]) -> Result<()> {
        self.prepare(cpu, m, x, scratch)?.run(out)
    }
}

/// A prepared call of a [`FloatLinear`] layer: run it whole or in parts on any threads.
#[derive(Debug)]
pub struct FloatPrepared<'w, 's, F: FloatOperator> {
    layer: FloatLinear<'w, F>,
    kernel: &'static FloatKernel<F>,
    cpu: CpuFeatures,
    m: usize,
    lhs: &'s [F::Lhs],
    clamp: Clamp,
}

impl<F: FloatOperator> FloatPrepared<'_, '_, F> {
    /// The same call with an output clamp (default: none).
    #[must_use]
    pub fn with_clamp(mut self, clamp: Clamp) -> Self {
        self.clamp = clamp;
        self
    }

    /// The kernel this call runs.
    pub fn kernel(&self) -> &'static FloatKernel<F> {
        self.kernel
    }

    /// Writes the whole `m x n` output (dense rows) into `out`.
    pub fn run(&self, out: &mut [F::Dst]) -> Result<()> {
        let args = crate::MatmulArgs::new(self.m, self.layer.n, self.layer.k).with_clamp(self.clamp);
        self.kernel.run(&self.cpu, self.lhs, self.layer.weights, out, &args)
    }

    /// The rectangles of at most `parts` parts, on the kernel's steps (see
    /// [`Prepared::split`](crate::op::Prepared::split)).
    pub fn split(&self, parts: usize) -> Result<heapless::Vec<Rect, MAX_PARTS>> {
        split(self.m, self.layer.n, self.kernel.m_step(), self.kernel.n_step(), parts)
    }

    /// The rectangles of [`FloatPrepared::split`] as [`FloatPart`]s writing into `out` (the
    /// whole `m x n` output, dense rows); each is `Send` and writes its own elements only. Every
    /// element is computed as in [`FloatPrepared::run`], so any split gives the same bits.
    pub fn parts<'o>(
        &'o self,
        out: &'o mut [F::Dst],
        parts: usize,
    ) -> Result<heapless::Vec<FloatPart<'o, F>, MAX_PARTS>> {
        let (m, n, k) = (self.m, self.layer.n, self.layer.k);
        let needed = m.checked_mul(n).ok_or(Error::SizeOverflow)?;
        if out.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Dst, given: out.len(), needed });
        }
        let rhs_tile = F::RHS.tile_stride(k)?;
        let (mr, lhs_tile) = match F::LHS {
            Some(f) => (f.mr, f.tile_stride(k)?),
            None => (1, k),
        };
        let dst = out.as_mut_ptr();
        let mut v = heapless::Vec::new();
        for r in self.split(parts)? {
            // In bounds: `r` lies inside `m x n` on the kernel's steps (multiples of `mr` and
            // `nr`): the row's activations (unpacked: row `m_idx` of `k` elements; packed: its
            // tile), the column's weight tile and the output element exist.
            let args = FloatArgs {
                m: r.m,
                n: r.n,
                k,
                lhs: self.lhs[r.m_idx / mr * lhs_tile..].as_ptr(),
                lhs_stride_row: k * core::mem::size_of::<F::Lhs>(),
                rhs_packed: self.layer.weights[r.n_idx / F::RHS.nr * rhs_tile..].as_ptr(),
                dst: dst.wrapping_add(r.m_idx * n + r.n_idx),
                dst_stride_row: F::Dst::SIZE * n,
                clamp_min: self.clamp.min(),
                clamp_max: self.clamp.max(),
            };
            // `split` returns at most MAX_PARTS rectangles.
            let _ = v.push(FloatPart { kernel: self.kernel, rect: r, args, output: PhantomData });
        }
        Ok(v)
    }

    /// Runs the call on up to `threads` `std::thread::scope` threads into `out`.
    #[cfg(feature = "std")]
    pub fn run_parallel(&self, out: &mut [F::Dst], threads: usize) -> Result<()> {
        crate::op::run_scoped(self.parts(out, threads)?, FloatPart::run);
        Ok(())
    }
}

/// One rectangle of a [`FloatPrepared`] call, ready to run on any thread.
pub struct FloatPart<'o, F: FloatOperator> {
    kernel: &'static FloatKernel<F>,
    rect: Rect,
    args: FloatArgs<F::Lhs, F::Dst>,
    output: PhantomData<&'o mut [F::Dst]>,
}

// SAFETY: a part is the only handle to its rectangle of the output (the parts of one call are
// disjoint and `FloatPrepared::parts` borrows the output mutably for their lifetime) and only
// reads the activations and weights, which nothing writes while the parts live.
unsafe impl<F: FloatOperator> Send for FloatPart<'_, F> {}

impl<F: FloatOperator> FloatPart<'_, F> {
    /// The output rectangle this part writes.
    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// Computes the rectangle.
    pub fn run(self) {
        // SAFETY: the kernel runs on the prepared call's CPU features (checked in
        // `prepare_with`); `m, n, k >= 1`; the pointers come from `parts`, at the rectangle's
        // first activation row (or tile), weight tile and output element, with every row, tile
        // and output element of the rectangle inside the borrowed buffers; the output
        // rectangle is this part's alone and overlaps no input; the clamp is a valid `Clamp`.
        unsafe { self.kernel.run_unchecked(&self.args) }
    }
}

impl<F: FloatOperator> core::fmt::Debug for FloatPart<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FloatPart").field("kernel", &self.kernel.name()).field("rect", &self.rect).finish()
    }
}
