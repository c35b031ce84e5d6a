//! Every packer on fuzzer-chosen shapes, strides, packings, buffer lengths and input bits: it
//! must return `Ok` or an `Error`, never panic or touch memory outside its slices (ASan), and a
//! rejected call must not write its output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qgemm::half::bf16;
use qgemm::lhs::{qai8dxp, qsi8d32p};
use qgemm::rhs::qsi4c32p::{self, BlockScales};
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qsi4c32pscalef16, qsi4cxp};

#[path = "input.rs"]
mod input;
use input::{Input, f32s};

fuzz_target!(|data: &[u8]| {
    let mut inp = Input(data);
    let which = inp.byte() % 5;
    let p = inp.packing();
    let (m, n, k) = (inp.upto(40), inp.upto(40), inp.upto(300));
    let bl = if inp.byte() % 8 == 0 { inp.upto(300) } else { 32 * inp.upto(4) };
    let start = inp.upto(20);
    let stride = k + inp.upto(4);
    let out_len = inp.upto(40_000);
    let layout = if inp.byte() % 2 == 0 { Layout::NxK } else { Layout::KxN };
    let encoding = if inp.byte() % 2 == 0 { Int4Encoding::ZeroPoint8 } else { Int4Encoding::Signed };
    let with_bias = inp.byte() % 2 == 0;
    let raw_stride = inp.upto(200);
    let rest = inp.rest();
    let (a, b) = rest.split_at(rest.len() / 2);
    let floats = f32s(a);
    let mut out = vec![0xeeu8; out_len];
    let r = match which {
        0 => qai8dxp::quantize_pack(&p, m, k, start, &floats, stride, &mut out),
        1 => qsi8d32p::quantize_pack(&p, m, k, bl, start, &floats, stride, &mut out),
        2 => {
            let src = Int4Source { data: b, layout, stride: raw_stride, encoding };
            let bias = with_bias.then(|| &floats[floats.len().min(n)..]);
            qsi4cxp::pack(&p, n, k, &src, &floats, bias, &mut out)
        }
        3 => {
            let src = Int4Source { data: b, layout, stride: raw_stride, encoding };
            let scales: Vec<bf16> = a.chunks_exact(2).map(|c| bf16::from_le_bytes([c[0], c[1]])).collect();
            let sc = BlockScales { values: &scales, stride: inp.upto(10) + k / bl.max(1) };
            let bias = with_bias.then(|| &floats[..floats.len().min(n)]);
            qsi4c32p::pack(&p, n, k, bl, &src, &sc, bias, &mut out)
        }
        _ => qsi4c32pscalef16::pack(&p, n, k, bl, b, raw_stride, &mut out),
    };
    if r.is_err() {
        assert!(out.iter().all(|&v| v == 0xee), "a rejected call ({r:?}) wrote its output");
    }
});
