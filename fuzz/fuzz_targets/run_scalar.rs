//! `Kernel::run` of every scalar kernel on fuzzer-chosen arguments and buffer lengths: it must
//! return `Ok` or an `Error`, never panic or touch memory outside its slices (ASan), and a
//! rejected call must not write `dst`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::{Clamp, CpuFeatures, Family, MatmulArgs, Tier};

#[path = "input.rs"]
mod input;
use input::Input;

fn run<F: Family>(inp: &mut Input<'_>) {
    let scalars: Vec<_> = F::kernels().iter().filter(|k| k.tier() == Tier::Scalar).collect();
    let kn = scalars[inp.upto(scalars.len() - 1)];
    let (m, n, k) = (inp.upto(40), inp.upto(40), inp.upto(300));
    let bl = if inp.byte() % 8 == 0 { inp.upto(300) } else { 32 * inp.upto(4) };
    let (m_idx, n_idx) = if inp.byte() % 2 == 0 {
        (inp.upto(40), inp.upto(40))
    } else {
        (inp.upto(4) * kn.m_step(), inp.upto(4) * kn.n_step())
    };
    let stride = n + inp.upto(5);
    let (mut lhs_len, mut rhs_len, mut dst_len) = (inp.upto(60_000), inp.upto(60_000), inp.upto(3000));
    if inp.byte() % 4 != 0 {
        // Mostly lengths around what the rectangle needs, so that most calls run.
        let need = |off: qgemm::Result<usize>, size: qgemm::Result<usize>| off.and_then(|o| size.map(|s| o + s));
        let delta = |inp: &mut Input<'_>, v: usize| (v + inp.upto(4)).saturating_sub(2);
        if let Ok(v) = need(kn.lhs_packed_offset(m_idx, k, bl), kn.lhs_packed_size(m, k, bl)) {
            lhs_len = delta(inp, v.min(200_000));
        }
        if let Ok(v) = need(kn.rhs_packed_offset(n_idx, k, bl), kn.rhs_packed_size(n, k, bl)) {
            rhs_len = delta(inp, v.min(200_000));
        }
        dst_len = delta(inp, (m.max(1) - 1) * stride + n);
    }
    let lo = f32::from_bits(u32::from(inp.byte()) << 24);
    let clamp = Clamp::new(lo.min(0.0), f32::MAX).unwrap_or(Clamp::NONE);
    let bits = inp.rest();
    let fill =
        |len: usize| (0..len).map(|i| bits.get(i % bits.len().max(1)).copied().unwrap_or(0)).collect::<Vec<u8>>();
    let (lhs, rhs) = (fill(lhs_len), fill(rhs_len));
    let mut dst = vec![f32::from_bits(0x7fa5_a5a5); dst_len];
    let args = MatmulArgs::new(m, n, k)
        .with_block_len(bl)
        .with_rect(m_idx, n_idx, m, n)
        .with_dst_stride(stride)
        .with_clamp(clamp);
    if kn.run(&CpuFeatures::NONE, &lhs, &rhs, &mut dst, &args).is_err() {
        assert!(dst.iter().all(|v| v.to_bits() == 0x7fa5_a5a5), "a rejected run wrote dst");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut inp = Input(data);
    match inp.byte() % 3 {
        0 => run::<Qai8dxpQsi4cxp>(&mut inp),
        1 => run::<Qai8dxpQsi4c32p>(&mut inp),
        _ => run::<Qsi8d32pQsi4c32p>(&mut inp),
    }
});
