//! `Kernel::run` of every scalar kernel of every family (the only tier on the fuzzing host) on
//! arbitrary packed bytes and activations, rectangles, strides, clamps, parameters and buffer
//! lengths near the needed ones: it returns `Ok` or an `Error`, never panics or touches memory
//! outside its slices (ASan), and a rejected call leaves `dst` untouched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qgemm::op::Operator;
use qgemm::{Clamp, CpuFeatures, MatmulArgs, Params, Tier};

#[path = "common.rs"]
mod common;
use common::{DrawParams, Input, Plain, Visit, bytes_of, canary, check, for_family};

struct Run;

impl Visit for Run {
    fn visit<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(&mut self, i: &mut Input<'_>) {
        let scalar: Vec<_> = F::kernels().iter().filter(|d| d.tier() == Tier::Scalar).collect();
        let kernel = scalar[i.upto(scalar.len() - 1)].resolve(&CpuFeatures::NONE).expect("a scalar kernel resolves");
        let (m, n) = (i.dim(20), i.dim(40));
        let k = if i.one_in(2) { i.depth(256) } else { i.dim(64) };
        let bl = if !F::BLOCKED && !i.one_in(16) { 0 } else { i.block_len() };
        let (m_idx, n_idx) = if i.one_in(4) {
            (i.upto(40), i.upto(40))
        } else {
            (i.upto(3) * kernel.m_step(), i.upto(3) * kernel.n_step())
        };
        let stride = i.stride(n);
        let params = F::Params::draw(i, k);
        let clamp = match i.byte() % 4 {
            0 => Clamp::NONE,
            1 => Clamp::new(f32::NEG_INFINITY, f32::INFINITY).expect("infinite bounds"),
            _ => {
                let (a, b) = (i.values::<f32>(2)[0], f32::from(i.byte()) / 8.0);
                Clamp::new(a, b).unwrap_or(Clamp::new(b, b).unwrap_or(Clamp::NONE))
            }
        };
        // Buffers near what the rectangle needs (the whole packed operands from row/column 0).
        let end = |start: usize, count: usize| start.saturating_add(count);
        let lhs_needed = match params.check(k).ok().and_then(|p| p.lhs_stride()) {
            Some(s) => end(m_idx, m).saturating_sub(1).saturating_mul(s).saturating_add(k),
            None => kernel.lhs_packed_size(end(m_idx, m), k, bl).unwrap_or(0),
        };
        let rhs_needed = kernel.rhs_packed_size(end(n_idx, n), k, bl).unwrap_or(0);
        let dst_needed = m.saturating_sub(1).saturating_mul(stride).saturating_add(n);
        let _ = (kernel.lhs_packed_offset(m_idx, k, bl), kernel.rhs_packed_offset(n_idx, k, bl));
        let _ = (kernel.dst_offset(m_idx, n_idx, stride), kernel.dst_size(m, n));
        let (rows, packed) =
            if F::ROWS { (i.near(lhs_needed), Vec::new()) } else { (Vec::new(), i.bytes_near(lhs_needed)) };
        let rhs = i.bytes_near(rhs_needed);
        let dst_len = i.len_near(dst_needed);
        let mut dst = canary::<F::Dst>(dst_len);
        let args = MatmulArgs::new(m, n, k)
            .with_block_len(bl)
            .with_rect(m_idx, n_idx, m, n)
            .with_dst_stride(stride)
            .with_clamp(clamp)
            .with_params(params);
        let r = kernel.run(F::kernel_lhs(&rows, &packed), &rhs, &mut dst, &args);
        check(kernel.name(), r, &[bytes_of(&dst)]);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut i = Input(data);
    let family = usize::from(i.byte());
    for_family(family, &mut i, &mut Run);
});
