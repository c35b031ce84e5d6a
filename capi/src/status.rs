//! Status codes of layer 1: one per [`qgemm::Error`] variant, plus the errors only a C caller
//! can make (null pointers, bad enum values, a run function of the wrong output type).

use qgemm::Error;

/// Result of every layer-1 function. `QGEMM_OK` is 0; every other value is an error and the
/// function wrote nothing.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum qgemm_status {
    /// Success.
    QGEMM_OK = 0,
    /// A dimension (`m`, `n`, `k`, `bl`) is zero where it must not be.
    QGEMM_ERROR_ZERO_DIM = 1,
    /// A dimension is not a multiple of what the format needs (`bl % 32`, `k % bl`).
    QGEMM_ERROR_NOT_MULTIPLE = 2,
    /// A sub-rectangle or packing start is not on a tile boundary.
    QGEMM_ERROR_MISALIGNED_START = 3,
    /// A row stride is smaller than the row it must hold.
    QGEMM_ERROR_STRIDE_TOO_SMALL = 4,
    /// A buffer is shorter than the call needs.
    QGEMM_ERROR_BUFFER_TOO_SHORT = 5,
    /// Packing parameters (`mr`, `nr`, `kr`, `sr`), a block length or a weight layout the format
    /// does not support.
    QGEMM_ERROR_UNSUPPORTED = 6,
    /// Clamp bounds with `min > max` or a NaN.
    QGEMM_ERROR_INVALID_CLAMP = 7,
    /// NaN or infinity in an input (activations, weights, importance, scales, offsets, bias).
    QGEMM_ERROR_NON_FINITE = 8,
    /// A quantization scale does not fit its storage type (f16: a weight block too large for
    /// `Q4_0`).
    QGEMM_ERROR_SCALE_OVERFLOW = 9,
    /// The kernel needs a CPU feature the given feature set lacks.
    QGEMM_ERROR_UNSUPPORTED_CPU = 10,
    /// A size or offset does not fit in `size_t`.
    QGEMM_ERROR_SIZE_OVERFLOW = 11,
    /// A required pointer is null.
    QGEMM_ERROR_NULL_POINTER = 12,
    /// An enum value, feature bit set, kernel handle or other argument that names nothing.
    QGEMM_ERROR_INVALID_ARGUMENT = 13,
    /// A pointer is not aligned to its element type (`float`: 4 bytes, bf16: 2).
    QGEMM_ERROR_MISALIGNED_POINTER = 14,
    /// An output buffer overlaps an input buffer of the same call.
    QGEMM_ERROR_BUFFERS_OVERLAP = 15,
    /// The kernel's output element type is not the one of the run function called
    /// (`qgemm_kernel_run`: f32; `qgemm_kernel_run_u16`: f16 or bf16 bits), or the activations'
    /// type is not the function's (`qgemm_linear_run`: float; `_u16`: f16 or bf16 bits).
    QGEMM_ERROR_WRONG_DST_TYPE = 16,
    /// An entry of a 2-bit look-up table (`QGEMM_FAMILY_QAI8DXP_QSU2CXP`) outside `[-64, 63]`.
    QGEMM_ERROR_LUT_OUT_OF_RANGE = 17,
    /// Two inputs of one call disagree on a dimension (a GPTQ Hessian of another `k` than the
    /// weights').
    QGEMM_ERROR_DIM_MISMATCH = 18,
    /// The GPTQ damping is negative, NaN or infinite.
    QGEMM_ERROR_INVALID_DAMPING = 19,
    /// The damped GPTQ Hessian is not positive definite (raise the damping or add calibration
    /// rows).
    QGEMM_ERROR_NOT_POSITIVE_DEFINITE = 20,
    /// Weights packed in one layout given to a kernel or layer that reads another (a
    /// `qgemm_linear` whose `packing` no kernel of the family reads, a call whose kernel reads
    /// another packing than its layer's, or a kernel resolved for another vector length).
    QGEMM_ERROR_PACKING_MISMATCH = 21,
    /// A kernel whose tile scales with SME's streaming vector length, and no known length (a
    /// feature set without `QGEMM_FEATURE_SME`, or a handle from `qgemm_kernel_at` not yet
    /// resolved).
    QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN = 22,
    /// A struct's `size` field is not a size this version of the library knows (set it to
    /// `sizeof` the struct, or fill the struct with the library's functions).
    QGEMM_ERROR_STRUCT_SIZE = 23,
}

impl From<Error> for qgemm_status {
    fn from(e: Error) -> Self {
        match e {
            Error::ZeroDim { .. } => qgemm_status::QGEMM_ERROR_ZERO_DIM,
            Error::NotMultiple { .. } => qgemm_status::QGEMM_ERROR_NOT_MULTIPLE,
            Error::MisalignedStart { .. } => qgemm_status::QGEMM_ERROR_MISALIGNED_START,
            Error::StrideTooSmall { .. } => qgemm_status::QGEMM_ERROR_STRIDE_TOO_SMALL,
            Error::BufferTooShort { .. } => qgemm_status::QGEMM_ERROR_BUFFER_TOO_SHORT,
            Error::Unsupported { .. } => qgemm_status::QGEMM_ERROR_UNSUPPORTED,
            Error::InvalidClamp { .. } => qgemm_status::QGEMM_ERROR_INVALID_CLAMP,
            Error::NonFinite { .. } => qgemm_status::QGEMM_ERROR_NON_FINITE,
            Error::ScaleOverflow { .. } => qgemm_status::QGEMM_ERROR_SCALE_OVERFLOW,
            Error::UnsupportedCpu { .. } => qgemm_status::QGEMM_ERROR_UNSUPPORTED_CPU,
            Error::SizeOverflow => qgemm_status::QGEMM_ERROR_SIZE_OVERFLOW,
            Error::LutOutOfRange { .. } => qgemm_status::QGEMM_ERROR_LUT_OUT_OF_RANGE,
            Error::DimMismatch { .. } => qgemm_status::QGEMM_ERROR_DIM_MISMATCH,
            Error::InvalidDamping { .. } => qgemm_status::QGEMM_ERROR_INVALID_DAMPING,
            Error::NotPositiveDefinite { .. } => qgemm_status::QGEMM_ERROR_NOT_POSITIVE_DEFINITE,
            Error::PackingMismatch { .. } => qgemm_status::QGEMM_ERROR_PACKING_MISMATCH,
            Error::VectorLengthUnknown => qgemm_status::QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN,
            // `Error` is non-exhaustive: a variant added later maps here until it gets its own.
            _ => qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT,
        }
    }
}

/// A static, NUL-terminated English description of `status` ("unknown status" for a value
/// that is not a `qgemm_status`). Takes the raw integer so any value is safe to pass.
#[unsafe(no_mangle)]
pub extern "C" fn qgemm_status_message(status: i32) -> *const core::ffi::c_char {
    let text: &'static core::ffi::CStr = match status {
        0 => c"ok",
        1 => c"a dimension is zero",
        2 => c"a dimension is not a multiple of what the format needs",
        3 => c"a start index is not on a tile boundary",
        4 => c"a row stride is smaller than its row",
        5 => c"a buffer is too short",
        6 => c"unsupported packing parameter or block length",
        7 => c"invalid clamp bounds (min > max or NaN)",
        8 => c"non-finite input value (NaN or infinity)",
        9 => c"a quantization scale overflows its storage type",
        10 => c"the CPU lacks a feature the kernel needs",
        11 => c"a size or offset overflows size_t",
        12 => c"a required pointer is null",
        13 => c"an argument names nothing (bad enum value, feature bits or kernel handle)",
        14 => c"a pointer is not aligned to its element type",
        15 => c"an output buffer overlaps an input buffer",
        16 => c"the kernel's output type is not the run function's (f32: qgemm_kernel_run, f16/bf16: qgemm_kernel_run_u16)",
        17 => c"a look-up table entry is outside [-64, 63]",
        18 => c"two inputs disagree on a dimension (a Hessian of another k)",
        19 => c"the damping is negative, NaN or infinite",
        20 => c"the damped Hessian is not positive definite (raise the damping or add rows)",
        21 => c"the weights are packed in another layout than the kernel or layer reads",
        22 => c"the kernel's tile scales with the streaming vector length, which is not known",
        23 => c"a struct's size field is not one this library version knows",
        _ => c"unknown status",
    };
    text.as_ptr()
}
