//! The conversion of the C codes of the weight quantization methods (`QGEMM_QUANT_*`, defined
//! with the quantizers in `quant.rs`) to `qgemm::quant::Method` / `qgemm::quant::qai4c32p::Method`
//! for `qgemm_linear_quantize_pack`.

use qgemm::quant::{Method, qai4c32p};

use super::quant::{
    QGEMM_QUANT_QAI4C32P_FITTED, QGEMM_QUANT_QAI4C32P_MIN_MAX, QGEMM_QUANT_ROUND_TO_NEAREST, QGEMM_QUANT_SEARCH,
    QGEMM_QUANT_SIGNED_MAX, QGEMM_QUANT_WEIGHTED_SEARCH,
};

use crate::status::qgemm_status;

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
        (QGEMM_QUANT_QAI4C32P_MIN_MAX, None) => Ok(qai4c32p::Method::MinMax),
        (QGEMM_QUANT_QAI4C32P_FITTED, None) => Ok(qai4c32p::Method::Fitted),
        _ => Err(qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT),
    }
}
