//! The one error type of the crate.
//!
//! Every public entry point validates its shapes, strides and buffer lengths before it touches
//! memory and returns one of these variants instead of panicking or reading out of bounds.

use core::fmt;

use crate::cpu::Feature;

/// A problem dimension or quantization parameter, named in [`Error`] variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Dim {
    /// Rows of the LHS and of the output.
    M,
    /// Output channels (columns of the output).
    N,
    /// Depth (the reduction dimension).
    K,
    /// Quantization block length along K (`bl`).
    BlockLen,
    /// First output row of a sub-rectangle (`m_idx`).
    MIdx,
    /// First output column of a sub-rectangle (`n_idx`).
    NIdx,
    /// First LHS row of a partial LHS packing call (`m_idx_start`).
    MIdxStart,
}

/// A buffer passed to the library, named in [`Error::BufferTooShort`] and
/// [`Error::NonFinite`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Buffer {
    /// The f32 activations given to an LHS packer.
    Lhs,
    /// A packed LHS buffer.
    LhsPacked,
    /// The raw quantized weights given to an RHS packer.
    Rhs,
    /// A packed RHS buffer.
    RhsPacked,
    /// The per-channel or per-block weight scales.
    Scale,
    /// The per-channel bias.
    Bias,
    /// The per-block weight offsets of an asymmetric format (`qai4c32p`).
    Zero,
    /// The per-input-channel importance weights of a weight quantizer
    /// ([`quant::Method::WeightedSearch`](crate::quant::Method::WeightedSearch)).
    Importance,
    /// The f64 storage of a [`quant::gptq::Hessian`](crate::quant::gptq::Hessian).
    Hessian,
    /// The f64 workspace of a [`quant::gptq`](crate::quant::gptq) quantizer.
    Work,
    /// The per-input-channel activation multipliers of a layer
    /// ([`op::Linear::with_input_scale`](crate::op::Linear::with_input_scale)).
    InputScale,
    /// The byte workspace of
    /// [`op::QuantizePack::quantize_pack_weights`](crate::op::QuantizePack::quantize_pack_weights) (the codes and
    /// scales between the quantizer and the packer).
    Workspace,
    /// The f32 output.
    Dst,
}

/// A row stride, named in [`Error::StrideTooSmall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Stride {
    /// Row stride of the f32 LHS, in elements.
    Lhs,
    /// Row stride of the raw weights, in bytes.
    Rhs,
    /// Row stride of a per-block scale matrix, in elements.
    Scale,
    /// Row stride of the output, in elements.
    Dst,
}

/// A packing or run parameter, named in [`Error::Unsupported`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Param {
    /// `mr`, rows per packed LHS tile.
    Mr,
    /// `nr`, columns per packed RHS tile.
    Nr,
    /// `kr`, depth per inner step.
    Kr,
    /// `sr`, split ratio of `kr`.
    Sr,
    /// The block length: given to a per-channel family, or not a multiple of 32.
    BlockLen,
    /// A bias given to a family whose packing has none (`qsi8d32p_qsi4c32p`); the value is the
    /// bias's length.
    Bias,
}

/// Everything that can go wrong in a call into `qgemm`.
///
/// The variants say what was wrong and, where it helps, the offending and the needed values.
/// The library never panics on caller input; every rejection is one of these.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// A dimension that must be at least 1 is 0.
    ZeroDim {
        /// Which dimension.
        dim: Dim,
    },
    /// A dimension must be a multiple of another value (e.g. `k % bl`, `bl % 32`).
    NotMultiple {
        /// Which dimension.
        dim: Dim,
        /// The value given.
        value: usize,
        /// What it must be a multiple of.
        multiple_of: usize,
    },
    /// A sub-rectangle or partial-packing start is not a multiple of the kernel's or packer's
    /// step (`m_step`, `n_step`, `mr`, `nr`).
    MisalignedStart {
        /// `MIdx`, `NIdx` or `MIdxStart`.
        dim: Dim,
        /// The start given.
        value: usize,
        /// The step it must be a multiple of.
        step: usize,
    },
    /// A row stride is smaller than the row it must hold.
    StrideTooSmall {
        /// Which stride.
        stride: Stride,
        /// The stride given.
        given: usize,
        /// The smallest legal stride.
        needed: usize,
    },
    /// A slice is shorter than the call needs.
    BufferTooShort {
        /// Which buffer.
        buffer: Buffer,
        /// Its length, in [`Buffer::unit`]s (bytes or elements).
        given: usize,
        /// The length the call needs.
        needed: usize,
    },
    /// A packing or run parameter is not supported (wrong `mr/nr/kr/sr` combination, a block
    /// length given to a per-channel family, ...).
    Unsupported {
        /// Which parameter.
        param: Param,
        /// The value given.
        value: usize,
    },
    /// A clamp range with a NaN bound or `min > max` ([`Clamp::new`](crate::Clamp::new)).
    InvalidClamp {
        /// The lower bound given.
        min: f32,
        /// The upper bound given.
        max: f32,
    },
    /// A floating-point input is NaN or infinite. The result of quantizing it would be
    /// meaningless, so the packers reject it (see `docs/architecture.md`, "Non-finite input").
    NonFinite {
        /// Which buffer.
        buffer: Buffer,
        /// Index, in the slice the caller passed for `buffer`, of the first non-finite element
        /// (row `i`, column `j` of a strided matrix is `i * stride + j`). Every packer uses this
        /// meaning.
        index: usize,
    },
    /// A block's quantization scale does not fit its storage type (the `qsi8d32p` LHS stores
    /// `amax / 127` as f16, which overflows for `amax` above about 8.3e6).
    ScaleOverflow {
        /// Which buffer.
        buffer: Buffer,
        /// Index, in the slice the caller passed for `buffer`, of the first value of the offending
        /// block (same meaning as `NonFinite::index`).
        index: usize,
    },
    /// An entry of the 4-entry look-up table of the 2-bit weights (`qai8dxp_qsu2cxp`) lies
    /// outside `[-64, 63]`, the range in which KleidiAI's packer and kernels agree on the
    /// table's values (they narrow it to int8 in different ways).
    LutOutOfRange {
        /// Index of the first offending entry (0..=3).
        index: usize,
        /// Its value.
        value: i32,
    },
    /// The kernel needs a CPU feature that the given [`CpuFeatures`](crate::CpuFeatures) lacks.
    UnsupportedCpu {
        /// The missing feature.
        needs: Feature,
    },
    /// The kernel's tile scales with SME's streaming vector length, and the given
    /// [`CpuFeatures`](crate::CpuFeatures) has none
    /// ([`CpuFeatures::svl_bytes`](crate::CpuFeatures::svl_bytes)).
    VectorLengthUnknown,
    /// Weights packed in one layout were given to a kernel that reads another (an
    /// [`op::Linear`](crate::op::Linear) records the packing of its weights).
    PackingMismatch {
        /// The packing of the weights.
        weights: crate::packing::RhsPacking,
        /// The packing the kernel reads.
        kernel: crate::packing::RhsPacking,
    },
    /// A size computation overflowed `usize`.
    SizeOverflow,
    /// Two inputs of one call disagree on a dimension (a
    /// [`quant::gptq::Hessian`](crate::quant::gptq::Hessian) accumulated for another `k` than the
    /// weights').
    DimMismatch {
        /// Which dimension.
        dim: Dim,
        /// The value of the second input (the Hessian's `k`).
        given: usize,
        /// The value the call needs (the weights' `k`).
        expected: usize,
    },
    /// The damping of [`quant::gptq`](crate::quant::gptq) is NaN, infinite or negative.
    InvalidDamping {
        /// The value given.
        damp: f32,
    },
    /// A matrix that must be positive definite is not (numerically): the damped Hessian of
    /// [`quant::gptq`](crate::quant::gptq), whose Cholesky factorization met a pivot that is not
    /// positive (raise the damping, or give more calibration rows).
    NotPositiveDefinite {
        /// The row and column of the failing pivot (the input channel).
        index: usize,
    },
}

/// Shorthand for `core::result::Result<T, qgemm::Error>`.
pub type Result<T> = core::result::Result<T, Error>;

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dim::M => "m",
            Dim::N => "n",
            Dim::K => "k",
            Dim::BlockLen => "bl",
            Dim::MIdx => "m_idx",
            Dim::NIdx => "n_idx",
            Dim::MIdxStart => "m_idx_start",
        })
    }
}

impl Buffer {
    /// The unit of the buffer's length in [`Error::BufferTooShort`]: `"bytes"` for the byte
    /// buffers (packed operands, raw weights), `"elements"` for the others (f32 activations,
    /// output and bias; f32 or bf16 scales).
    pub const fn unit(self) -> &'static str {
        match self {
            Buffer::LhsPacked | Buffer::Rhs | Buffer::RhsPacked | Buffer::Workspace => "bytes",
            Buffer::Lhs
            | Buffer::Scale
            | Buffer::Bias
            | Buffer::Zero
            | Buffer::Importance
            | Buffer::Hessian
            | Buffer::Work
            | Buffer::InputScale
            | Buffer::Dst => "elements",
        }
    }
}

impl fmt::Display for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Buffer::Lhs => "lhs",
            Buffer::LhsPacked => "lhs_packed",
            Buffer::Rhs => "rhs",
            Buffer::RhsPacked => "rhs_packed",
            Buffer::Scale => "scale",
            Buffer::Bias => "bias",
            Buffer::Zero => "zero",
            Buffer::Importance => "importance",
            Buffer::Hessian => "hessian",
            Buffer::Work => "work",
            Buffer::InputScale => "input_scale",
            Buffer::Workspace => "workspace",
            Buffer::Dst => "dst",
        })
    }
}

impl fmt::Display for Stride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stride::Lhs => "lhs row stride (elements)",
            Stride::Rhs => "rhs row stride (bytes)",
            Stride::Scale => "scale row stride (elements)",
            Stride::Dst => "dst row stride (elements)",
        })
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Param::Mr => "mr",
            Param::Nr => "nr",
            Param::Kr => "kr",
            Param::Sr => "sr",
            Param::BlockLen => "bl",
            Param::Bias => "bias",
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::ZeroDim { dim } => write!(f, "{dim} must be at least 1"),
            Error::NotMultiple { dim, value, multiple_of } => {
                write!(f, "{dim} = {value} is not a multiple of {multiple_of}")
            }
            Error::MisalignedStart { dim, value, step } => {
                write!(f, "{dim} = {value} is not a multiple of the step {step}")
            }
            Error::StrideTooSmall { stride, given, needed } => {
                write!(f, "{stride} is {given}, needs at least {needed}")
            }
            Error::BufferTooShort { buffer, given, needed } => {
                let unit = buffer.unit();
                write!(f, "{buffer} holds {given} {unit}, needs {needed}")
            }
            Error::Unsupported { param, value } => {
                write!(f, "unsupported {param} ({value}) for this kernel or packer")
            }
            Error::InvalidClamp { min, max } => {
                write!(f, "invalid clamp range [{min:?}, {max:?}]: a bound is NaN or min > max")
            }
            Error::NonFinite { buffer, index } => {
                write!(f, "{buffer}[{index}] is NaN or infinite")
            }
            Error::ScaleOverflow { buffer, index } => {
                write!(f, "the quantization scale of the block at {buffer}[{index}] overflows")
            }
            Error::LutOutOfRange { index, value } => {
                write!(f, "lut[{index}] = {value} is outside [-64, 63]")
            }
            Error::UnsupportedCpu { needs } => {
                write!(f, "the CPU lacks {needs}, which this kernel needs")
            }
            Error::VectorLengthUnknown => {
                f.write_str("the kernel's tile scales with the streaming vector length, which is unknown")
            }
            Error::PackingMismatch { weights, kernel } => {
                write!(f, "the weights are packed as {weights}, the kernel reads {kernel}")
            }
            Error::SizeOverflow => f.write_str("a buffer size overflows usize"),
            Error::DimMismatch { dim, given, expected } => {
                write!(f, "{dim} = {given} does not match the call's {dim} = {expected}")
            }
            Error::InvalidDamping { damp } => {
                write!(f, "damping {damp:?} is not a finite non-negative number")
            }
            Error::NotPositiveDefinite { index } => {
                write!(f, "the matrix is not positive definite (pivot {index})")
            }
        }
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_unit_of_each_buffer() {
        extern crate std;
        use std::string::ToString;
        let e = Error::BufferTooShort { buffer: Buffer::RhsPacked, given: 3, needed: 4 };
        assert_eq!(e.to_string(), "rhs_packed holds 3 bytes, needs 4");
        let e = Error::BufferTooShort { buffer: Buffer::Dst, given: 3, needed: 4 };
        assert_eq!(e.to_string(), "dst holds 3 elements, needs 4");
        let e = Error::InvalidClamp { min: 2.0, max: 1.0 };
        assert_eq!(e.to_string(), "invalid clamp range [2.0, 1.0]: a bound is NaN or min > max");
        let e = Error::LutOutOfRange { index: 2, value: 64 };
        assert_eq!(e.to_string(), "lut[2] = 64 is outside [-64, 63]");
        let e = Error::BufferTooShort { buffer: Buffer::Work, given: 3, needed: 4 };
        assert_eq!(e.to_string(), "work holds 3 elements, needs 4");
        let e = Error::DimMismatch { dim: Dim::K, given: 64, expected: 32 };
        assert_eq!(e.to_string(), "k = 64 does not match the call's k = 32");
        assert_eq!(
            Error::NotPositiveDefinite { index: 5 }.to_string(),
            "the matrix is not positive definite (pivot 5)"
        );
        let e = Error::BufferTooShort { buffer: Buffer::Workspace, given: 3, needed: 4 };
        assert_eq!(e.to_string(), "workspace holds 3 bytes, needs 4");
        let e = Error::Unsupported { param: Param::Bias, value: 8 };
        assert_eq!(e.to_string(), "unsupported bias (8) for this kernel or packer");
        let e = Error::InvalidDamping { damp: -1.0 };
        assert_eq!(e.to_string(), "damping -1.0 is not a finite non-negative number");
    }
}

// ---- The message without `core::fmt` -----------------------------------------------------------
//
// For writers that cannot afford `core::fmt` (the C library's error hook: `Display` of an
// `Error` links about 20 KB of formatting code into a firmware): the pieces of the `Display`
// message, in order. Kept in one block: `Error::write_message` must cover every variant.

/// A receiver of the pieces of an error message ([`Error::write_message`]), in order: text,
/// integers and floats. Concatenated, the integers in decimal and the floats as `{:?}` writes
/// them, they are the error's `Display` message.
pub trait MessageSink {
    /// A piece of text.
    fn text(&mut self, s: &str);
    /// An unsigned integer.
    fn unsigned(&mut self, v: usize);
    /// A signed integer.
    fn signed(&mut self, v: i64);
    /// A float (`Display` writes it as `{:?}`: `2.0`, `-1e30`, `NaN`).
    fn float(&mut self, v: f32);
}

impl Error {
    /// Gives `sink` the pieces of this error's `Display` message, using no `core::fmt`.
    pub fn write_message(&self, sink: &mut impl MessageSink) {
        match *self {
            Error::ZeroDim { dim } => {
                sink.text(dim_name(dim));
                sink.text(" must be at least 1");
            }
            Error::NotMultiple { dim, value, multiple_of } => {
                sink.text(dim_name(dim));
                sink.text(" = ");
                sink.unsigned(value);
                sink.text(" is not a multiple of ");
                sink.unsigned(multiple_of);
            }
            Error::MisalignedStart { dim, value, step } => {
                sink.text(dim_name(dim));
                sink.text(" = ");
                sink.unsigned(value);
                sink.text(" is not a multiple of the step ");
                sink.unsigned(step);
            }
            Error::StrideTooSmall { stride, given, needed } => {
                sink.text(stride_name(stride));
                sink.text(" is ");
                sink.unsigned(given);
                sink.text(", needs at least ");
                sink.unsigned(needed);
            }
            Error::BufferTooShort { buffer, given, needed } => {
                sink.text(buffer_name(buffer));
                sink.text(" holds ");
                sink.unsigned(given);
                sink.text(" ");
                sink.text(buffer.unit());
                sink.text(", needs ");
                sink.unsigned(needed);
            }
            Error::Unsupported { param, value } => {
                sink.text("unsupported ");
                sink.text(param_name(param));
                sink.text(" (");
                sink.unsigned(value);
                sink.text(") for this kernel or packer");
            }
            Error::InvalidClamp { min, max } => {
                sink.text("invalid clamp range [");
                sink.float(min);
                sink.text(", ");
                sink.float(max);
                sink.text("]: a bound is NaN or min > max");
            }
            Error::NonFinite { buffer, index } => {
                sink.text(buffer_name(buffer));
                sink.text("[");
                sink.unsigned(index);
                sink.text("] is NaN or infinite");
            }
            Error::ScaleOverflow { buffer, index } => {
                sink.text("the quantization scale of the block at ");
                sink.text(buffer_name(buffer));
                sink.text("[");
                sink.unsigned(index);
                sink.text("] overflows");
            }
            Error::LutOutOfRange { index, value } => {
                sink.text("lut[");
                sink.unsigned(index);
                sink.text("] = ");
                sink.signed(i64::from(value));
                sink.text(" is outside [-64, 63]");
            }
            Error::UnsupportedCpu { needs } => {
                sink.text("the CPU lacks ");
                sink.text(needs.name());
                sink.text(", which this kernel needs");
            }
            Error::VectorLengthUnknown => {
                sink.text("the kernel's tile scales with the streaming vector length, which is unknown")
            }
            Error::PackingMismatch { weights, kernel } => {
                let packing = |sink: &mut dyn FnMut(&str, Option<usize>), p: crate::packing::RhsPacking| {
                    sink(p.format.name(), Some(p.nr));
                    sink("x", Some(p.kr));
                };
                let mut put = |t: &str, v: Option<usize>| {
                    sink.text(t);
                    if let Some(v) = v {
                        sink.unsigned(v);
                    }
                };
                put("the weights are packed as ", None);
                packing(&mut put, weights);
                put(", the kernel reads ", None);
                packing(&mut put, kernel);
            }
            Error::SizeOverflow => sink.text("a buffer size overflows usize"),
            Error::DimMismatch { dim, given, expected } => {
                sink.text(dim_name(dim));
                sink.text(" = ");
                sink.unsigned(given);
                sink.text(" does not match the call's ");
                sink.text(dim_name(dim));
                sink.text(" = ");
                sink.unsigned(expected);
            }
            Error::InvalidDamping { damp } => {
                sink.text("damping ");
                sink.float(damp);
                sink.text(" is not a finite non-negative number");
            }
            Error::NotPositiveDefinite { index } => {
                sink.text("the matrix is not positive definite (pivot ");
                sink.unsigned(index);
                sink.text(")");
            }
        }
    }
}

/// The name `Display` gives `d`.
const fn dim_name(d: Dim) -> &'static str {
    match d {
        Dim::M => "m",
        Dim::N => "n",
        Dim::K => "k",
        Dim::BlockLen => "bl",
        Dim::MIdx => "m_idx",
        Dim::NIdx => "n_idx",
        Dim::MIdxStart => "m_idx_start",
    }
}

/// The name `Display` gives `b`.
const fn buffer_name(b: Buffer) -> &'static str {
    match b {
        Buffer::Lhs => "lhs",
        Buffer::LhsPacked => "lhs_packed",
        Buffer::Rhs => "rhs",
        Buffer::RhsPacked => "rhs_packed",
        Buffer::Scale => "scale",
        Buffer::Bias => "bias",
        Buffer::Zero => "zero",
        Buffer::Importance => "importance",
        Buffer::Hessian => "hessian",
        Buffer::Work => "work",
        Buffer::InputScale => "input_scale",
        Buffer::Workspace => "workspace",
        Buffer::Dst => "dst",
    }
}

/// The name `Display` gives `s`.
const fn stride_name(s: Stride) -> &'static str {
    match s {
        Stride::Lhs => "lhs row stride (elements)",
        Stride::Rhs => "rhs row stride (bytes)",
        Stride::Scale => "scale row stride (elements)",
        Stride::Dst => "dst row stride (elements)",
    }
}

/// The name `Display` gives `p`.
const fn param_name(p: Param) -> &'static str {
    match p {
        Param::Mr => "mr",
        Param::Nr => "nr",
        Param::Kr => "kr",
        Param::Sr => "sr",
        Param::BlockLen => "bl",
        Param::Bias => "bias",
    }
}

#[cfg(test)]
mod message_tests {
    extern crate std;
    use super::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// The pieces joined with `core::fmt`: decimal integers, `{:?}` floats.
    struct Joined(String);
    impl MessageSink for Joined {
        fn text(&mut self, s: &str) {
            self.0.push_str(s);
        }
        fn unsigned(&mut self, v: usize) {
            self.0.push_str(&v.to_string());
        }
        fn signed(&mut self, v: i64) {
            self.0.push_str(&v.to_string());
        }
        fn float(&mut self, v: f32) {
            self.0.push_str(&std::format!("{v:?}"));
        }
    }

    #[test]
    fn the_pieces_are_the_display_message_of_every_variant() {
        let dims = [Dim::M, Dim::N, Dim::K, Dim::BlockLen, Dim::MIdx, Dim::NIdx, Dim::MIdxStart];
        let buffers = [
            Buffer::Lhs,
            Buffer::LhsPacked,
            Buffer::Rhs,
            Buffer::RhsPacked,
            Buffer::Scale,
            Buffer::Bias,
            Buffer::Zero,
            Buffer::Importance,
            Buffer::Hessian,
            Buffer::Work,
            Buffer::InputScale,
            Buffer::Workspace,
            Buffer::Dst,
        ];
        let params = [Param::Mr, Param::Nr, Param::Kr, Param::Sr, Param::BlockLen, Param::Bias];
        let strides = [Stride::Lhs, Stride::Rhs, Stride::Scale, Stride::Dst];
        let mut errors = Vec::new();
        for dim in dims {
            errors.push(Error::ZeroDim { dim });
            errors.push(Error::NotMultiple { dim, value: 48, multiple_of: 32 });
            errors.push(Error::MisalignedStart { dim, value: 3, step: 4 });
            errors.push(Error::DimMismatch { dim, given: 64, expected: usize::MAX });
        }
        for buffer in buffers {
            errors.push(Error::BufferTooShort { buffer, given: 0, needed: 12345678901 });
            errors.push(Error::NonFinite { buffer, index: 7 });
            errors.push(Error::ScaleOverflow { buffer, index: 32 });
        }
        errors.extend(params.map(|param| Error::Unsupported { param, value: 17 }));
        errors.extend(strides.map(|stride| Error::StrideTooSmall { stride, given: 3, needed: 4 }));
        for (min, max) in [(2.0, 1.0), (-1e30, f32::NAN), (f32::NEG_INFINITY, -0.0), (0.1, 3.4028235e38)] {
            errors.push(Error::InvalidClamp { min, max });
        }
        errors.extend([-1.5f32, f32::INFINITY, 1e-7].map(|damp| Error::InvalidDamping { damp }));
        errors.extend([-65, 64, i32::MIN].map(|value| Error::LutOutOfRange { index: 3, value }));
        errors.extend(crate::cpu::Feature::ALL.map(|needs| Error::UnsupportedCpu { needs }));
        errors.push(Error::SizeOverflow);
        errors.push(Error::NotPositiveDefinite { index: 0 });
        errors.push(Error::VectorLengthUnknown);
        errors.push(Error::PackingMismatch {
            weights: crate::packing::RhsPacking { format: crate::packing::RhsFormat::Qsi4cxp, nr: 8, kr: 16, sr: 2 },
            kernel: crate::packing::RhsPacking::float(crate::packing::RhsFormat::Bf16pB32, 12, 4),
        });
        for e in errors {
            let mut joined = Joined(String::new());
            e.write_message(&mut joined);
            assert_eq!(joined.0, e.to_string(), "{e:?}");
        }
    }
}
