//! Family `qsi8d32p_qsi4c32p` (GGML Q4_0 weights × per-block int8 activations): the generic
//! suite (golden vectors, every tier against the scalar reference, tails, clamps, split
//! execution, canaries, rejections) plus this family's packer checks and edge-value
//! expectations.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng, RngBytes};
use half::f16;
use qgemm::lhs::qsi8d32p;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::rhs::qsi4c32pscalef16;
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

/// Random `Q4_0`-style blocks: `n` rows of `k/bl` blocks with f16 scales in 2^-14 .. 2^-3.
fn random_blocks(rng: &mut Rng, n: usize, k: usize, bl: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * (k / bl) * (2 + bl / 2));
    for i in 0..n * (k / bl) {
        let mag = 2f32.powf(rng.f32(-14.0, -3.0));
        out.extend_from_slice(&f16::from_f32(if i % 5 == 2 { -mag } else { mag }).to_le_bytes());
        out.extend(rng.bytes(bl / 2));
    }
    out
}

impl Fixture for Fx {
    type Src = f32;
    const QAI8DXP_LHS: bool = false;
    type F = Qsi8d32pQsi4c32p;
    const BLS: &'static [usize] = &[32, 64];

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qsi8d32p::quantize_pack(p, m, k, bl, start, x, stride, out)
    }

    fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
        let (n, k, bl) = (case.n(), case.k(), case.bl());
        let (raw, stride) = case.rhs_raw();
        let mut out = vec![0u8; qsi4c32pscalef16::packed_size(n, k, bl, p).unwrap()];
        qsi4c32pscalef16::pack(p, n, k, bl, &raw, stride, &mut out).unwrap();
        out
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8> {
        let raw = random_blocks(rng, n, k, bl);
        let mut out = vec![0u8; qsi4c32pscalef16::packed_size(n, k, bl, p).unwrap()];
        qsi4c32pscalef16::pack(p, n, k, bl, &raw, (k / bl) * (2 + bl / 2), &mut out).unwrap();
        out
    }

    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, out: &mut [u8]) {
        let mut raw = Vec::new();
        for _ in 0..n * (k / bl) {
            raw.extend_from_slice(&f16::from_f32(1.0).to_le_bytes());
            raw.extend(std::iter::repeat_n(byte, bl / 2));
        }
        qsi4c32pscalef16::pack(p, n, k, bl, &raw, (k / bl) * (2 + bl / 2), out).unwrap();
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        let (m, n, k, bl) = (case.m(), case.n(), case.k(), case.bl());
        let g = |a: &str, b: &str| pj[a][b].as_u64().unwrap() as usize;
        assert_eq!(qsi8d32p::packed_size(m, k, bl, p).unwrap(), g("lhs_packed", "size"));
        assert_eq!(qsi8d32p::packed_offset(p.mr, k, bl, p).unwrap(), g("lhs_packed", "offset_at_m_idx_eq_mr"));
        assert_eq!(qsi4c32pscalef16::packed_size(n, k, bl, p).unwrap(), g("rhs_packed", "size"));
        assert_eq!(qsi4c32pscalef16::tile_stride(k, bl, p.nr).unwrap(), g("rhs_packed", "tile_stride"));
        assert_eq!(qsi4c32pscalef16::packed_offset(p.nr, k, bl, p).unwrap(), g("rhs_packed", "offset_at_n_idx_eq_nr"));
    }
}

mod qsi8d32p_qsi4c32p {
    use super::*;
    use qgemm::Error;
    use qgemm::error::{Buffer, Dim, Stride};

    family_suite!(super::Fx, qgemm::qsi8d32p_qsi4c32p::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        // No ±f32::MAX here: their f16 block scale overflows and the packer rejects them
        // (tested below); 1e6 takes their place.
        for (p, _bl, out, _rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(false) {
            let n = 12;
            // Zero row: scale 0 and q = 0 in every block; the output is exactly +0.
            assert!(out[0..n].iter().all(|v| v.to_bits() == 0), "{p:?}: zero row");
            assert!(out.iter().all(|v| v.is_finite()), "{p:?}");
        }
    }

    #[test]
    fn lhs_scale_overflow_is_rejected_before_any_write() {
        let p = qgemm::qsi8d32p_qsi4c32p::PACKING_4X4;
        let (m, k, bl) = (2, 64, 32);
        for big in [f32::MAX, -1e7, 8.4e6] {
            let mut x = vec![0.25f32; m * k];
            x[100] = big;
            let mut out = vec![0xeeu8; qsi8d32p::packed_size(m, k, bl, &p).unwrap()];
            let e = qsi8d32p::quantize_pack(&p, m, k, bl, 0, &x, k, &mut out).unwrap_err();
            assert_eq!(e, Error::ScaleOverflow { buffer: Buffer::Lhs, index: 96 });
            assert!(out.iter().all(|&b| b == 0xee));
        }
        // Just below the f16 limit is fine.
        let mut x = vec![0.25f32; m * k];
        x[100] = 8.3e6;
        let mut out = vec![0u8; qsi8d32p::packed_size(m, k, bl, &p).unwrap()];
        qsi8d32p::quantize_pack(&p, m, k, bl, 0, &x, k, &mut out).unwrap();
    }

    #[test]
    fn spec_q4_0_block_example() {
        // docs/formats.md, §RHS: raw block `00 3c | 98 ...` packs to scale bytes `00 3c` and data
        // byte 0x98 ^ 0x88 = 0x10.
        let p = Packing { mr: 4, nr: 4, kr: 16, sr: 2 };
        let mut raw = vec![0x88u8; 18];
        raw[0] = 0x00;
        raw[1] = 0x3c;
        raw[2] = 0x98;
        let mut out = vec![0u8; qsi4c32pscalef16::packed_size(1, 32, 32, &p).unwrap()];
        qsi4c32pscalef16::pack(&p, 1, 32, 32, &raw, 18, &mut out).unwrap();
        assert_eq!(&out[0..2], &[0x00, 0x3c]);
        assert_eq!(out[8], 0x10);
        // Padding channels 1..3 copy channel 0.
        assert_eq!(&out[2..4], &[0x00, 0x3c]);
        assert_eq!(out[16], 0x10);
    }

    #[test]
    fn lhs_packer_rejects_bad_input() {
        let p = qgemm::qsi8d32p_qsi4c32p::PACKING_4X4;
        let x = vec![0.5f32; 2 * 64];
        let mut out = vec![0u8; qsi8d32p::packed_size(2, 64, 32, &p).unwrap()];
        let pack = |k, bl, stride, x: &[f32], o: &mut [u8]| qsi8d32p::quantize_pack(&p, 2, k, bl, 0, x, stride, o);
        assert_eq!(pack(64, 0, 64, &x, &mut out), Err(Error::ZeroDim { dim: Dim::BlockLen }));
        assert_eq!(
            pack(64, 48, 64, &x, &mut out),
            Err(Error::NotMultiple { dim: Dim::BlockLen, value: 48, multiple_of: 32 })
        );
        assert_eq!(pack(48, 32, 64, &x, &mut out), Err(Error::NotMultiple { dim: Dim::K, value: 48, multiple_of: 32 }));
        assert_eq!(pack(0, 32, 64, &x, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
        assert_eq!(
            pack(64, 32, 63, &x, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Lhs, given: 63, needed: 64 })
        );
        assert_eq!(
            pack(64, 32, 64, &x[1..], &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: 127, needed: 128 })
        );
        let l = out.len();
        assert_eq!(
            pack(64, 32, 64, &x, &mut out[..l - 1]),
            Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: l - 1, needed: l })
        );
        assert!(matches!(qsi8d32p::packed_offset(2, 64, 32, &p), Err(Error::MisalignedStart { .. })));
        assert_eq!(qsi8d32p::packed_size(usize::MAX, 64, 32, &p), Err(Error::SizeOverflow));
    }

    #[test]
    fn rhs_packer_rejects_bad_input() {
        let p = qgemm::qsi8d32p_qsi4c32p::PACKING_4X4;
        let (n, k, bl) = (3usize, 64usize, 32usize);
        let mut raw = random_blocks(&mut Rng(4), n, k, bl);
        let stride = 2 * 18;
        let mut out = vec![0u8; qsi4c32pscalef16::packed_size(n, k, bl, &p).unwrap()];
        assert_eq!(
            qsi4c32pscalef16::pack(&p, n, k, bl, &raw, stride - 1, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 35, needed: 36 })
        );
        assert_eq!(
            qsi4c32pscalef16::pack(&p, n, k, bl, &raw[..107], stride, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 107, needed: 108 })
        );
        let l = out.len();
        assert_eq!(
            qsi4c32pscalef16::pack(&p, n, k, bl, &raw, stride, &mut out[..l - 1]),
            Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: l - 1, needed: l })
        );
        assert_eq!(qsi4c32pscalef16::pack(&p, 0, k, bl, &raw, stride, &mut out), Err(Error::ZeroDim { dim: Dim::N }));
        assert_eq!(
            qsi4c32pscalef16::pack(&p, n, k, 48, &raw, stride, &mut out),
            Err(Error::NotMultiple { dim: Dim::BlockLen, value: 48, multiple_of: 32 })
        );
        // A non-finite f16 block scale (second block of channel 1).
        raw[stride + 18..stride + 20].copy_from_slice(&f16::INFINITY.to_le_bytes());
        assert_eq!(
            qsi4c32pscalef16::pack(&p, n, k, bl, &raw, stride, &mut out),
            Err(Error::NonFinite { buffer: Buffer::Rhs, index: stride + 18 })
        );
    }
}
