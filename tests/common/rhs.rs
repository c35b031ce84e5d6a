//! The weight side of the family fixtures, one module per RHS format: every family that packs
//! the format (the f32 family and its f16/bf16 twins) packs golden, random and filled weights
//! the same way. Also the check of the `qai8dxp` LHS sizes they share.

use super::{Case, Rng, RngBytes};
use qgemm::Packing;
use qgemm::lhs::qai8dxp;
use serde_json::Value;

fn golden_size(pj: &Value, a: &str, b: &str) -> usize {
    pj[a][b].as_u64().unwrap() as usize
}

/// The `qai8dxp` LHS size and offset of a golden packing entry.
pub fn check_qai8dxp_sizes(case: &Case, pj: &Value, p: &Packing) {
    let (m, k) = (case.m(), case.k());
    assert_eq!(qai8dxp::packed_size(m, k, p).unwrap(), golden_size(pj, "lhs_packed", "size"));
    assert_eq!(qai8dxp::packed_offset(p.mr, k, p).unwrap(), golden_size(pj, "lhs_packed", "offset_at_m_idx_eq_mr"));
}

/// int4 weights, one f32 scale per channel.
pub mod qsi4cxp {
    use super::*;
    use qgemm::rhs::{Int4Encoding, Int4Source, qsi4cxp};

    pub fn golden(case: &Case, p: &Packing) -> Vec<u8> {
        let (n, k) = (case.n(), case.k());
        let (raw, stride) = case.rhs_raw();
        let zp = case.json["rhs_packer"]["params"]["rhs_zero_point"].as_u64().unwrap();
        let encoding = if zp == 8 { Int4Encoding::ZeroPoint8 } else { Int4Encoding::Signed };
        let src = Int4Source { data: &raw, layout: case.rhs_layout(), stride, encoding };
        let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
        let bias = case.bias();
        let mut out = vec![0u8; qsi4cxp::packed_size(n, k, p).unwrap()];
        qsi4cxp::pack(p, n, k, &src, &scale, bias.as_deref(), &mut out).unwrap();
        out
    }

    pub fn random(rng: &mut Rng, p: &Packing, n: usize, k: usize) -> Vec<u8> {
        let raw = rng.bytes(n * k.div_ceil(2));
        let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.001, 0.1)).collect();
        let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
        let mut out = vec![0u8; qsi4cxp::packed_size(n, k, p).unwrap()];
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        qsi4cxp::pack(p, n, k, &src, &scale, Some(&bias), &mut out).unwrap();
        out
    }

    /// Raw nibble bytes all `byte` (0x00: every weight -8; 0xff: +7), scales 1.
    pub fn filled_into(p: &Packing, n: usize, k: usize, byte: u8, out: &mut [u8]) {
        let raw = vec![byte; n * k.div_ceil(2)];
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        qsi4cxp::pack(p, n, k, &src, &vec![1.0; n], None, out).unwrap();
    }

    pub fn check_sizes(case: &Case, pj: &Value, p: &Packing) {
        let (n, k) = (case.n(), case.k());
        check_qai8dxp_sizes(case, pj, p);
        assert_eq!(qsi4cxp::packed_size(n, k, p).unwrap(), golden_size(pj, "rhs_packed", "size"));
        assert_eq!(qsi4cxp::tile_stride(k, p.nr).unwrap(), golden_size(pj, "rhs_packed", "tile_stride"));
        assert_eq!(qsi4cxp::packed_offset(p.nr, k, p).unwrap(), golden_size(pj, "rhs_packed", "offset_at_n_idx_eq_nr"));
    }

    /// The dequantized `n x k` weights of an NxK golden case (`(u - zp) * scale`).
    pub fn dequant(case: &Case) -> Vec<f32> {
        let (n, k) = (case.n(), case.k());
        let (raw, stride) = case.rhs_raw();
        assert!(matches!(case.rhs_layout(), qgemm::rhs::Layout::NxK));
        let zp = case.json["rhs_packer"]["params"]["rhs_zero_point"].as_u64().unwrap() as i32;
        let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
        let mut w = vec![0f32; n * k];
        for c in 0..n {
            for j in 0..k {
                let b = raw[c * stride + j / 2];
                let u = if j % 2 == 0 { b & 0xf } else { b >> 4 } as i32;
                let v = if zp == 8 { u - 8 } else { (u << 28) >> 28 };
                w[c * k + j] = v as f32 * scale[c];
            }
        }
        w
    }

    /// The bias column of a packed RHS (to state exact expectations).
    pub fn packed_bias(rhs: &[u8], p: &Packing, n: usize, k: usize) -> Vec<f32> {
        let ts = qsi4cxp::tile_stride(k, p.nr).unwrap();
        let kp = k.div_ceil(32) * 32;
        (0..n)
            .map(|c| {
                let at = c / p.nr * ts + p.nr * kp / 2 + 8 * p.nr + 4 * (c % p.nr);
                f32::from_le_bytes(rhs[at..at + 4].try_into().unwrap())
            })
            .collect()
    }
}

/// int8 weights, one f32 scale per channel.
pub mod qsi8cxp {
    use super::*;
    use qgemm::rhs::qsi8cxp::{self, Int8Source};

    /// Bytes as int8 weights.
    pub fn as_i8(b: &[u8]) -> Vec<i8> {
        b.iter().map(|&x| x as i8).collect()
    }

    pub fn golden(case: &Case, p: &Packing) -> Vec<u8> {
        let (n, k) = (case.n(), case.k());
        let (raw, stride) = case.rhs_raw();
        let raw = as_i8(&raw);
        let src = Int8Source { data: &raw, layout: case.rhs_layout(), stride };
        let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
        let bias = case.bias();
        let mut out = vec![0u8; qsi8cxp::packed_size(n, k, p).unwrap()];
        qsi8cxp::pack(p, n, k, &src, &scale, bias.as_deref(), &mut out).unwrap();
        out
    }

    pub fn random(rng: &mut Rng, p: &Packing, n: usize, k: usize) -> Vec<u8> {
        let raw = as_i8(&rng.bytes(n * k));
        let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.0001, 0.01)).collect();
        let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
        let mut out = vec![0u8; qsi8cxp::packed_size(n, k, p).unwrap()];
        qsi8cxp::pack(p, n, k, &Int8Source::nxk(&raw, k), &scale, Some(&bias), &mut out).unwrap();
        out
    }

    /// Every weight `byte ^ 0x80` as int8: 0x00 gives -128, 0xff gives +127.
    pub fn filled_into(p: &Packing, n: usize, k: usize, byte: u8, out: &mut [u8]) {
        let raw = vec![(byte ^ 0x80) as i8; n * k];
        qsi8cxp::pack(p, n, k, &Int8Source::nxk(&raw, k), &vec![1.0 / 128.0; n], None, out).unwrap();
    }

    pub fn check_sizes(case: &Case, pj: &Value, p: &Packing) {
        let (n, k) = (case.n(), case.k());
        check_qai8dxp_sizes(case, pj, p);
        assert_eq!(qsi8cxp::packed_size(n, k, p).unwrap(), golden_size(pj, "rhs_packed", "size"));
        assert_eq!(qsi8cxp::tile_stride(k, p.nr).unwrap(), golden_size(pj, "rhs_packed", "tile_stride"));
        assert_eq!(qsi8cxp::packed_offset(p.nr, k, p).unwrap(), golden_size(pj, "rhs_packed", "offset_at_n_idx_eq_nr"));
    }

    /// The dequantized `n x k` weights of an NxK golden case (`w * scale`).
    pub fn dequant(case: &Case) -> Vec<f32> {
        let (n, k) = (case.n(), case.k());
        let (raw, stride) = case.rhs_raw();
        assert!(matches!(case.rhs_layout(), qgemm::rhs::Layout::NxK));
        let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
        (0..n * k).map(|i| raw[(i / k) * stride + i % k] as i8 as f32 * scale[i / k]).collect()
    }

    /// The bias column of a packed RHS.
    pub fn packed_bias(rhs: &[u8], p: &Packing, n: usize, k: usize) -> Vec<f32> {
        let ts = qsi8cxp::tile_stride(k, p.nr).unwrap();
        let kp = k.div_ceil(32) * 32;
        (0..n)
            .map(|c| {
                let at = c / p.nr * ts + p.nr * kp + 8 * p.nr + 4 * (c % p.nr);
                f32::from_le_bytes(rhs[at..at + 4].try_into().unwrap())
            })
            .collect()
    }
}

/// int4 weights, one bf16 scale per block of `bl`.
pub mod qsi4c32p {
    use super::*;
    use qgemm::half::bf16;
    use qgemm::rhs::qsi4c32p::{self, BlockScales};
    use qgemm::rhs::{Int4Encoding, Int4Source};

    /// Random bf16 block scales, roughly log-uniform in 2^-14 .. 2^-3, some negative.
    pub fn random_scales(rng: &mut Rng, count: usize) -> Vec<bf16> {
        (0..count)
            .map(|i| {
                let mag = 2f32.powf(rng.f32(-14.0, -3.0));
                bf16::from_f32(if i % 7 == 3 { -mag } else { mag })
            })
            .collect()
    }

    pub fn golden(case: &Case, p: &Packing) -> Vec<u8> {
        let (n, k, bl) = (case.n(), case.k(), case.bl());
        let inp = &case.json["inputs"];
        let (raw, stride) = case.rhs_raw();
        let src = Int4Source { data: &raw, layout: case.rhs_layout(), stride, encoding: Int4Encoding::ZeroPoint8 };
        let sb = case.bytes(&inp["rhs_scale"]["file"]);
        let scales: Vec<bf16> = sb.chunks_exact(2).map(|c| bf16::from_le_bytes([c[0], c[1]])).collect();
        let scale_stride = inp["rhs_scale"]["row_stride_bytes"].as_u64().map_or(k / bl, |s| s as usize / 2);
        let bias = case.bias();
        let mut out = vec![0u8; qsi4c32p::packed_size(n, k, bl, p).unwrap()];
        let sc = BlockScales { values: &scales, stride: scale_stride };
        qsi4c32p::pack(p, n, k, bl, &src, &sc, bias.as_deref(), &mut out).unwrap();
        out
    }

    pub fn random(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8> {
        let raw = rng.bytes(n * k / 2);
        let scales = random_scales(rng, n * (k / bl));
        let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
        let mut out = vec![0u8; qsi4c32p::packed_size(n, k, bl, p).unwrap()];
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        qsi4c32p::pack(p, n, k, bl, &src, &BlockScales::dense(&scales, k / bl), Some(&bias), &mut out).unwrap();
        out
    }

    /// Raw nibble bytes all `byte`, block scales 1.
    pub fn filled_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, out: &mut [u8]) {
        let raw = vec![byte; n * k / 2];
        let scales = vec![bf16::from_f32(1.0); n * (k / bl)];
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        qsi4c32p::pack(p, n, k, bl, &src, &BlockScales::dense(&scales, k / bl), None, out).unwrap();
    }

    pub fn check_sizes(case: &Case, pj: &Value, p: &Packing) {
        let (n, k, bl) = (case.n(), case.k(), case.bl());
        check_qai8dxp_sizes(case, pj, p);
        assert_eq!(qsi4c32p::packed_size(n, k, bl, p).unwrap(), golden_size(pj, "rhs_packed", "size"));
        assert_eq!(qsi4c32p::tile_stride(k, bl, p.nr).unwrap(), golden_size(pj, "rhs_packed", "tile_stride"));
        assert_eq!(
            qsi4c32p::packed_offset(p.nr, k, bl, p).unwrap(),
            golden_size(pj, "rhs_packed", "offset_at_n_idx_eq_nr")
        );
    }

    /// The bias column of a packed RHS.
    pub fn packed_bias(rhs: &[u8], p: &Packing, n: usize, k: usize, bl: usize) -> Vec<f32> {
        let ts = qsi4c32p::tile_stride(k, bl, p.nr).unwrap();
        let extras = p.nr * (k / bl) * (bl / 2 + 2);
        (0..n)
            .map(|c| {
                let at = c / p.nr * ts + extras + 4 * p.nr + 4 * (c % p.nr);
                f32::from_le_bytes(rhs[at..at + 4].try_into().unwrap())
            })
            .collect()
    }
}
