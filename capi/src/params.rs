//! The family parameters ([`qgemm::Params`]) as the C layers pass them: a 2-bit look-up table
//! (the `qsu2cxp` family) and a float row stride (the families reading unpacked rows). Both
//! layers turn what they received into the family's parameter type here, so a family's
//! parameters have one C spelling.

use qgemm::{LhsStride, Lut, Params};

/// Which C spelling a family's parameters have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CKind {
    /// None (`()`): a C caller passes nothing.
    None,
    /// A 4-entry `int32_t` look-up table ([`Lut`]).
    Lut,
    /// An LHS row stride in elements ([`LhsStride`]).
    LhsStride,
}

/// A family's parameter type built from what a C caller passed.
pub(crate) trait CParams: Params {
    /// The C spelling.
    const KIND: CKind;

    /// The parameters from an optional look-up table and a row stride (LHS elements, 0 =
    /// dense); `None` for a table given to a family without one. A stride given to a family
    /// without one is ignored (the packed-LHS families have no row stride to honour).
    fn from_c(lut: Option<[i32; 4]>, lhs_stride: usize) -> Option<Self>;

    /// The look-up table, for the parameters that are one.
    fn lut(&self) -> Option<[i32; 4]> {
        None
    }
}

impl CParams for () {
    const KIND: CKind = CKind::None;

    fn from_c(lut: Option<[i32; 4]>, _lhs_stride: usize) -> Option<()> {
        lut.is_none().then_some(())
    }
}

impl CParams for Lut {
    const KIND: CKind = CKind::Lut;

    fn from_c(lut: Option<[i32; 4]>, _lhs_stride: usize) -> Option<Lut> {
        Some(lut.map_or(Lut::DEFAULT, Lut))
    }

    fn lut(&self) -> Option<[i32; 4]> {
        Some(self.0)
    }
}

impl CParams for LhsStride {
    const KIND: CKind = CKind::LhsStride;

    fn from_c(lut: Option<[i32; 4]>, lhs_stride: usize) -> Option<LhsStride> {
        lut.is_none().then_some(LhsStride(lhs_stride))
    }
}
