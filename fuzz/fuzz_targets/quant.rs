//! Every quantizer of `qgemm::quant` (`qsi4cxp`, `qsi8cxp`, `qsi4c32p`, `q4_0`, `qai4c32p`,
//! `qsu2cxp`, with every `Method`, f32/f16/bf16 weights), `divide_depths`, and GPTQ (a
//! `Hessian` built from `new`/`from_parts`, `add`, `scale_inputs`, `copy_to`, `diagonal`, then
//! each GPTQ quantizer with its workspace) on small fuzzer-chosen shapes, strides, buffer
//! lengths and input bits: `Ok` or an `Error`, never a panic or an access outside the slices,
//! and a rejected call leaves its outputs untouched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qgemm::Element;
use qgemm::half::bf16;
use qgemm::quant::gptq::{self, Hessian, HessianRef};
use qgemm::quant::{Method, Weights, divide_depths, q4_0, qai4c32p, qsi4c32p, qsi4cxp, qsi8cxp, qsu2cxp};
use qgemm::rhs::Layout;

#[path = "common.rs"]
#[macro_use]
mod common;
use common::{Input, bytes_of, canary, check};

/// A symmetric method (the weighted search with `importance`).
fn method<'a>(i: &mut Input<'_>, importance: &'a [f32]) -> Method<'a> {
    match i.byte() % 4 {
        0 => Method::RoundToNearest,
        1 => Method::SignedMax,
        2 => Method::Search,
        _ => Method::WeightedSearch(importance),
    }
}

/// `(sizes, output lengths)`: a length near each size, or near 0 when the sizes are rejected.
fn lens<const N: usize>(i: &mut Input<'_>, sizes: qgemm::Result<[usize; N]>) -> [usize; N] {
    let sizes = sizes.unwrap_or([0; N]);
    sizes.map(|s| i.len_near(s))
}

fn quantize<S: Element + common::Plain>(sel: u8, i: &mut Input<'_>) {
    let (n, k) = (i.dim(12), i.depth(128));
    let bl = i.block_len();
    let layout = if i.one_in(2) { Layout::NxK } else { Layout::KxN };
    let (rows, cols) = if layout == Layout::NxK { (n, k) } else { (k, n) };
    let stride = i.stride(cols);
    let data: Vec<S> = i.near(rows.saturating_sub(1).saturating_mul(stride).saturating_add(cols));
    let w = Weights { data: &data, layout, stride };
    let importance = i.near::<f32>(k);
    let m = method(i, &importance);
    match sel % 9 {
        0 => {
            let [c, s] = lens(i, qsi4cxp::sizes(n, k).map(|(c, s)| [c, s]));
            let (mut codes, mut scale) = (canary::<u8>(c), canary::<f32>(s));
            let r = qsi4cxp::quantize(m, n, k, &w, &mut codes, &mut scale);
            check("qsi4cxp", r, &[&codes, bytes_of(&scale)]);
        }
        1 => {
            let [c, s] = lens(i, qsi8cxp::sizes(n, k).map(|(c, s)| [c, s]));
            let (mut codes, mut scale) = (canary::<i8>(c), canary::<f32>(s));
            let r = qsi8cxp::quantize(m, n, k, &w, &mut codes, &mut scale);
            check("qsi8cxp", r, &[bytes_of(&codes), bytes_of(&scale)]);
        }
        2 => {
            let [c, s] = lens(i, qsi4c32p::sizes(n, k, bl).map(|(c, s)| [c, s]));
            let (mut codes, mut scale) = (canary::<u8>(c), canary::<bf16>(s));
            let r = qsi4c32p::quantize(m, n, k, bl, &w, &mut codes, &mut scale);
            check("qsi4c32p", r, &[&codes, bytes_of(&scale)]);
        }
        3 => {
            let [b] = lens(i, q4_0::size(n, k, bl).map(|b| [b]));
            let mut blocks = canary::<u8>(b);
            check("q4_0", q4_0::quantize(m, n, k, bl, &w, &mut blocks), &[&blocks]);
        }
        4 => {
            let [c, p] = lens(i, qai4c32p::sizes(n, k, bl).map(|(c, p)| [c, p]));
            let method = if i.one_in(2) { qai4c32p::Method::MinMax } else { qai4c32p::Method::Fitted };
            let (mut codes, mut zero, mut scale) = (canary::<u8>(c), canary::<f32>(p), canary::<f32>(p));
            let r = qai4c32p::quantize(method, n, k, bl, &data, stride, &mut codes, &mut zero, &mut scale);
            check("qai4c32p", r, &[&codes, bytes_of(&zero), bytes_of(&scale)]);
        }
        5 => {
            let [c, s] = lens(i, qsu2cxp::sizes(n, k).map(|(c, s)| [c, s]));
            let lut = [i.byte(), i.byte(), i.byte(), i.byte()].map(|b| i32::from(b as i8) / 2);
            let lut = if i.one_in(2) { None } else { Some(&lut) };
            let (mut codes, mut scale) = (canary::<u8>(c), canary::<f32>(s));
            let r = qsu2cxp::quantize(n, k, &data, stride, lut, &mut codes, &mut scale);
            check("qsu2cxp", r, &[&codes, bytes_of(&scale)]);
        }
        6 => {
            let mut w: Vec<f32> = data.iter().map(|v| v.to_f32()).collect();
            let before = w.clone();
            if divide_depths(n, k, &mut w, layout, stride, &importance).is_err() {
                assert!(bytes_of(&w) == bytes_of(&before), "divide_depths: rejected but changed the weights");
            }
        }
        _ => gptq_quantize(i, n, k, bl, &w, m),
    }
}

/// A Hessian of `k` (give or take) from fuzzer rows, then one GPTQ quantizer on it.
fn gptq_quantize<S: Element + common::Plain>(
    i: &mut Input<'_>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    m: Method<'_>,
) {
    let hk = if i.one_in(8) { i.dim(64) } else { k };
    let mut buf = canary::<f64>(i.len_near(Hessian::buffer_len(hk).unwrap_or(0)));
    let mut h = if i.one_in(8) {
        let rows = i.upto(4);
        match Hessian::from_parts(&mut buf, hk, rows) {
            Ok(h) => h,
            Err(_) => return,
        }
    } else {
        match check("Hessian::new", Hessian::new(&mut buf, hk), &[]) {
            Some(h) => h,
            None => return,
        }
    };
    for _ in 0..i.upto(2) {
        let (rows, stride) = (i.dim(6), i.stride(hk));
        let x = i.near::<f32>(rows.saturating_sub(1).saturating_mul(stride).saturating_add(hk));
        let _ = h.add(&x, rows, stride);
    }
    if i.one_in(4) {
        let _ = h.scale_inputs(&i.near::<f32>(hk));
    }
    let _ = (h.get(i.upto(70), i.upto(70)), h.view().get(0, 0));
    let mut diag = canary::<f32>(i.len_near(hk));
    check("Hessian::diagonal", h.diagonal(&mut diag), &[bytes_of(&diag)]);
    let mut copy = vec![0f64; i.len_near(Hessian::buffer_len(hk).unwrap_or(0))];
    if let Ok(c) = h.copy_to(&mut copy) {
        let _ = HessianRef::from(&c).diagonal(&mut diag);
    }
    let hr = h.view();
    let damp = [0.01f32, 0.0, -1.0, f32::NAN, 1e30][i.upto(4)];
    let mut work = vec![0f64; i.len_near(gptq::workspace_len(n, k).unwrap_or(0))];
    let m = if i.one_in(3) { None } else { Some(m) };
    match i.byte() % 4 {
        0 => {
            let [c, s] = lens(i, qsi4cxp::sizes(n, k).map(|(c, s)| [c, s]));
            let (mut codes, mut scale) = (canary::<u8>(c), canary::<f32>(s));
            let r = gptq::qsi4cxp(m, n, k, w, hr, damp, &mut work, &mut codes, &mut scale);
            check("gptq::qsi4cxp", r, &[&codes, bytes_of(&scale)]);
        }
        1 => {
            let [c, s] = lens(i, qsi8cxp::sizes(n, k).map(|(c, s)| [c, s]));
            let (mut codes, mut scale) = (canary::<i8>(c), canary::<f32>(s));
            let r = gptq::qsi8cxp(m, n, k, w, hr, damp, &mut work, &mut codes, &mut scale);
            check("gptq::qsi8cxp", r, &[bytes_of(&codes), bytes_of(&scale)]);
        }
        2 => {
            let [c, s] = lens(i, qsi4c32p::sizes(n, k, bl).map(|(c, s)| [c, s]));
            let (mut codes, mut scale) = (canary::<u8>(c), canary::<bf16>(s));
            let r = gptq::qsi4c32p(m, n, k, bl, w, hr, damp, &mut work, &mut codes, &mut scale);
            check("gptq::qsi4c32p", r, &[&codes, bytes_of(&scale)]);
        }
        _ => {
            let [b] = lens(i, q4_0::size(n, k, bl).map(|b| [b]));
            let mut blocks = canary::<u8>(b);
            let r = gptq::q4_0(m, n, k, bl, w, hr, damp, &mut work, &mut blocks);
            check("gptq::q4_0", r, &[&blocks]);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut i = Input(data);
    let (sel, src) = (i.byte(), i.byte());
    for_src!(src, quantize::<_>(sel, &mut i));
});
