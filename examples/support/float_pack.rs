//! Packs weights into any RHS format of the float families, from values and a bias of any
//! element type (shared by `bench` and `soak`, which pack each kernel's own format).

use half::f16;
use qgemm::rhs::{FloatSource, bf16p12, f16p, f32p};
use qgemm::{Element, RhsFormat, RhsPacking};

/// Packs the `n x k` weights `src` with `bias` into `rp` (a packing of the float formats).
/// Values and bias are converted to the format's input types first: f32 for `f32p16`, `f32p8`
/// and `bf16p12_b32` (f32 bias), f16 for `f16p32`, `f16p16` and `bf16p12_b16` (f16 bias). From
/// f16 input the f32 path is exact, so `bf16p12_b32` gets the bits its f16 packer would give.
/// Any other packing (a quantized one, or a bf16 one the packers do not write) is
/// [`qgemm::Error::Unsupported`].
pub fn pack_float_rhs<S: Element, B: Element>(
    rp: &RhsPacking,
    n: usize,
    k: usize,
    src: &FloatSource<'_, S>,
    bias: Option<&[B]>,
    out: &mut [u8],
) -> qgemm::Result<()> {
    let b32 = bias.map(|b| b.iter().map(|v| v.to_f32()).collect::<Vec<f32>>());
    let b16 = bias.map(|b| b.iter().map(|v| f16::from_f32(v.to_f32())).collect::<Vec<f16>>());
    let w32: Vec<f32> = src.data.iter().map(|v| v.to_f32()).collect();
    let w16: Vec<f16> = src.data.iter().map(|v| f16::from_f32(v.to_f32())).collect();
    let s32 = FloatSource { data: &w32[..], layout: src.layout, stride: src.stride };
    let s16 = FloatSource { data: &w16[..], layout: src.layout, stride: src.stride };
    match rp.format {
        RhsFormat::F32p => f32p::pack(rp, n, k, &s32, b32.as_deref(), out),
        RhsFormat::F16p => f16p::pack(rp, n, k, &s16, b16.as_deref(), out),
        // The bf16 packers have one packing each: refuse any other rather than pack that one.
        RhsFormat::Bf16pB32 if *rp == bf16p12::BF16P12_B32 => bf16p12::pack_b32(n, k, &s32, b32.as_deref(), out),
        RhsFormat::Bf16pB16 if *rp == bf16p12::BF16P12_B16 => bf16p12::pack_b16(n, k, &s16, b16.as_deref(), out),
        _ => Err(qgemm::Error::Unsupported { param: qgemm::error::Param::Nr, value: rp.nr }),
    }
}
