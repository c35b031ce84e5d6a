//! The C codes of the weight quantization methods (`QGEMM_QUANT_*`) and their conversion to
//! `qgemm::quant::Method` / `qgemm::quant::qai4c32p::Method`.

use qgemm::quant::{Method, qai4c32p};

use crate::status::qgemm_status;

/// Symmetric formats: `scale = max |w| / L` (rounded to the stored type), codes rounded to
/// nearest (`qgemm::quant::Method::RoundToNearest`).
pub const QGEMM_QUANT_ROUND_TO_NEAREST: u32 = 0;
/// Symmetric formats: GGML's `Q4_0` rule, the signed largest value over `-(L + 1)`
/// (`Method::SignedMax`).
pub const QGEMM_QUANT_SIGNED_MAX: u32 = 1;
/// Symmetric formats: the error-minimizing scale search (`Method::Search`).
pub const QGEMM_QUANT_SEARCH: u32 = 2;
/// Symmetric formats: the search weighted by per-depth importance (`k` non-negative values,
/// e.g. the diagonal of `X^T X` over calibration activations) (`Method::WeightedSearch`).
pub const QGEMM_QUANT_WEIGHTED_SEARCH: u32 = 3;
/// Asymmetric int4 (`qai4c32p`): GGML `Q4_1`'s block range in 15 steps
/// (`qai4c32p::Method::MinMax`).
pub const QGEMM_QUANT_MIN_MAX: u32 = 0;
/// Asymmetric int4 (`qai4c32p`): the range rule, then the least-squares scale and offset
/// (`qai4c32p::Method::Fitted`).
pub const QGEMM_QUANT_FITTED: u32 = 1;

/// The symmetric method of code `code`; `importance` (non-null) only with
/// `QGEMM_QUANT_WEIGHTED_SEARCH`, which needs it (`QGEMM_ERROR_NULL_POINTER` without).
pub(crate) fn symmetric(code: u32, importance: Option<&[f32]>) -> Result<Method<'_>, qgemm_status> {
    match (code, importance) {
        (QGEMM_QUANT_WEIGHTED_SEARCH, Some(imp)) => Ok(Method::WeightedSearch(imp)),
        (QGEMM_QUANT_WEIGHTED_SEARCH, None) => Err(qgemm_status::QGEMM_ERROR_NULL_POINTER),
        (QGEMM_QUANT_ROUND_TO_NEAREST, None) => Ok(Method::RoundToNearest),
        (QGEMM_QUANT_SIGNED_MAX, None) => Ok(Method::SignedMax),
        (QGEMM_QUANT_SEARCH, None) => Ok(Method::Search),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    }
}

/// The asymmetric method of code `code` (no importance).
pub(crate) fn asymmetric(code: u32, importance: Option<&[f32]>) -> Result<qai4c32p::Method, qgemm_status> {
    match (code, importance) {
        (QGEMM_QUANT_MIN_MAX, None) => Ok(qai4c32p::Method::MinMax),
        (QGEMM_QUANT_FITTED, None) => Ok(qai4c32p::Method::Fitted),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    }
}
