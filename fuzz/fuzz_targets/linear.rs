//! `op::Linear` of every family (`from_packed_in` any packing, `with_params`,
//! `with_input_scale`, `scratch_size`, `run`, `run_with`, `prepare` then `run`, `split` or
//! `parts`) on arbitrary packed weights and activations, and `QuantizePack` of every quantized
//! family: `Ok` or an `Error`, never a panic or an access outside the slices, and a rejected
//! call leaves its output untouched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qgemm::op::{Linear, Operator, QuantizePack};
use qgemm::quant::{Method, Weights, qai4c32p};
use qgemm::rhs::Layout;
use qgemm::{Clamp, CpuFeatures, Element, Tier};

#[path = "common.rs"]
mod common;
use common::{DrawParams, FAMILIES, Input, Plain, Visit, bytes_of, canary, check, for_family};

struct Run;

impl Visit for Run {
    fn visit<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(&mut self, i: &mut Input<'_>) {
        let kernels = F::kernels();
        let packing = match i.byte() % 4 {
            0 => {
                let d = kernels[i.upto(kernels.len() - 1)];
                d.packing_on(&CpuFeatures::NONE).map_or(F::PREFERRED_RHS, |p| p.rhs(d.shape().rhs))
            }
            1 => i.packing().rhs(F::PREFERRED_RHS.format),
            _ => F::PREFERRED_RHS,
        };
        let (n, k) = (i.dim(40), if i.one_in(2) { i.depth(256) } else { i.dim(64) });
        let bl = if F::BLOCKED { i.block_len() } else { 0 };
        let weights = i.bytes_near(packing.packed_size(n, k, bl).unwrap_or(0));
        let Some(mut layer) = check("from_packed_in", Linear::<F>::from_packed_in(packing, n, k, bl, &weights), &[])
        else {
            return;
        };
        if i.one_in(3) {
            layer = layer.with_params(F::Params::draw(i, k)).unwrap_or(layer);
        }
        let scale = i.near::<f32>(k);
        if i.one_in(3) {
            layer = layer.with_input_scale(&scale).unwrap_or(layer);
        }
        let m = i.dim(12);
        let x: Vec<F::Src> = i.near(m.saturating_mul(k));
        let mut scratch = vec![0u8; i.len_near(layer.scratch_size(m).unwrap_or(0))];
        let mut out = canary::<F::Dst>(i.len_near(m.saturating_mul(n)));
        let cpu = CpuFeatures::NONE;
        let r = match i.byte() % 4 {
            0 => layer.run(&cpu, m, &x, &mut out, &mut scratch),
            1 => {
                let scalar: Vec<_> = kernels.iter().copied().filter(|d| d.tier() == Tier::Scalar).collect();
                let _ = layer.scratch_size_with(&scalar, m);
                layer.run_with(&scalar, &cpu, m, &x, &mut out, &mut scratch)
            }
            _ => match layer.prepare(&cpu, m, &x, &mut scratch) {
                Err(e) => Err(e),
                Ok(p) => {
                    let p = p.with_clamp(Clamp::new(-f32::from(i.byte()), f32::from(i.byte())).unwrap_or(Clamp::NONE));
                    let _ = (p.kernel(), p.m(), p.lhs().len(), p.split(i.upto(70)));
                    if i.one_in(2) {
                        p.run(&mut out)
                    } else {
                        p.parts(&mut out, i.upto(70)).map(|parts| parts.into_iter().for_each(|part| part.run()))
                    }
                }
            },
        };
        check(F::NAME, r, &[bytes_of(&out)]);
    }
}

/// Draws a `QuantizePack::Method` (`importance` for the weighted search, `lut` for the
/// 2-bit table).
trait DrawMethod<'a>: Sized {
    fn draw(i: &mut Input<'_>, importance: &'a [f32], lut: &'a [i32; 4]) -> Self;
}

impl<'a> DrawMethod<'a> for Method<'a> {
    fn draw(i: &mut Input<'_>, importance: &'a [f32], _: &'a [i32; 4]) -> Self {
        [Method::RoundToNearest, Method::SignedMax, Method::Search, Method::WeightedSearch(importance)][i.upto(3)]
    }
}

impl DrawMethod<'_> for qai4c32p::Method {
    fn draw(i: &mut Input<'_>, _: &[f32], _: &[i32; 4]) -> Self {
        if i.one_in(2) { qai4c32p::Method::MinMax } else { qai4c32p::Method::Fitted }
    }
}

impl<'a> DrawMethod<'a> for Option<&'a [i32; 4]> {
    fn draw(i: &mut Input<'_>, _: &[f32], lut: &'a [i32; 4]) -> Self {
        if i.one_in(2) { None } else { Some(lut) }
    }
}

/// `QuantizePack::quantize_pack_weights` of `F` from `S` weights.
fn quantize_pack<F, S>(i: &mut Input<'_>)
where
    F: QuantizePack,
    for<'a> F::Method<'a>: DrawMethod<'a>,
    S: Element + Plain,
{
    let (n, k) = (i.dim(16), i.depth(128));
    let bl = if F::BLOCKED { i.block_len() } else { 0 };
    let layout = if i.one_in(2) { Layout::NxK } else { Layout::KxN };
    let (rows, cols) = if layout == Layout::NxK { (n, k) } else { (k, n) };
    let stride = i.stride(cols);
    let data: Vec<S> = i.near(rows.saturating_sub(1).saturating_mul(stride).saturating_add(cols));
    let (importance, bias) = (i.near::<f32>(k), i.bias::<f32>(n));
    let lut = [i.byte(), i.byte(), i.byte(), i.byte()].map(|b| i32::from(b as i8) / 2);
    let method = F::Method::draw(i, &importance, &lut);
    let mut workspace = vec![0u8; i.len_near(F::quantize_workspace_size(n, k, bl).unwrap_or(0))];
    let mut buf = canary::<u8>(i.len_near(Linear::<F>::weights_size(n, k, bl).unwrap_or(0)));
    let w = Weights { data: &data, layout, stride };
    let r = F::quantize_pack_weights(&w, n, k, bl, method, bias.as_deref(), &mut workspace, &mut buf).map(|_| ());
    check(F::NAME, r, &[&buf]);
}

/// [`quantize_pack`] for quantized family `f % 11` and source type `s % 3`.
fn quantize_pack_any(f: u8, s: u8, i: &mut Input<'_>) {
    use qgemm::half::{bf16, f16};
    use qgemm::*;
    macro_rules! src {
        ($f:ty) => {
            match s % 3 {
                0 => quantize_pack::<$f, f32>(i),
                1 => quantize_pack::<$f, f16>(i),
                _ => quantize_pack::<$f, bf16>(i),
            }
        };
    }
    match f % 11 {
        0 => src!(qai8dxp_qsi4cxp::Qai8dxpQsi4cxp),
        1 => src!(qai8dxp_qsi4c32p::Qai8dxpQsi4c32p),
        2 => src!(qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p),
        3 => src!(qai8dxp_qsi8cxp::Qai8dxpQsi8cxp),
        4 => src!(f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp),
        5 => src!(f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp),
        6 => src!(bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp),
        7 => src!(bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p),
        8 => src!(qsi8d32p_qai4c32p::Qsi8d32pQai4c32p),
        9 => src!(f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p),
        _ => src!(qai8dxp_qsu2cxp::Qai8dxpQsu2cxp),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut i = Input(data);
    let (sel, f, s) = (i.byte(), i.byte(), i.byte());
    if sel % 4 == 0 {
        quantize_pack_any(f, s, &mut i);
    } else {
        for_family(usize::from(f) % FAMILIES, &mut i, &mut Run);
    }
});
