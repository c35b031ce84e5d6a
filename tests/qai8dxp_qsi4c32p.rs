//! Family `qai8dxp_qsi4c32p` (int4 weights, bf16 scale per block): the generic suite (golden
//! vectors, every tier against the scalar reference, tails, clamps, split execution, canaries,
//! rejections) plus this family's packer checks and edge-value expectations.

#[macro_use]
mod common;

use common::suite::{Fixture, all_packings};
use common::{Case, Rng};
use half::bf16;
use qgemm::lhs::qai8dxp;
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::rhs::qsi4c32p::{self, BlockScales};
use qgemm::rhs::{Int4Encoding, Int4Source};
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = f32;
    type F = Qai8dxpQsi4c32p;
    const BLS: &'static [usize] = &[32, 64];

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack(p, m, k, start, x, stride, out)
    }

    fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
        common::rhs::qsi4c32p::golden(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8> {
        common::rhs::qsi4c32p::random(rng, p, n, k, bl)
    }

    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, out: &mut [u8]) {
        common::rhs::qsi4c32p::filled_into(p, n, k, bl, byte, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        common::rhs::qsi4c32p::check_sizes(case, pj, p)
    }
}

mod qai8dxp_qsi4c32p {
    use super::*;
    use crate::common::assert_bits_eq;
    use qgemm::Error;
    use qgemm::error::{Buffer, Dim, Stride};

    family_suite!(super::Fx, qgemm::qai8dxp_qsi4c32p::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias = crate::common::rhs::qsi4c32p::packed_bias(&rhs, &p, n, k, bl);
            // Zero row: the offset term goes through the f32 rsum, so the output is the bias
            // plus a small rounding residue (docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p kernels), not exactly the bias.
            for (o, b) in out[0..n].iter().zip(&bias) {
                assert!((o - b).abs() < 1e-3, "zero row: {o} vs bias {b}");
            }
            // Alternating ±f32::MAX: the dq scale is 0, so the output is exactly the bias.
            assert_bits_eq(&out[3 * n..4 * n], &bias, "±MAX row");
        }
    }

    #[test]
    fn kxn_and_nxk_pack_alike() {
        let (n, k, bl): (usize, usize, usize) = (16, 128, 64);
        let mut rng = Rng(3);
        let u: Vec<u8> = (0..n * k).map(|_| rng.below(16) as u8).collect();
        let mut nxk = vec![0u8; n * k / 2];
        let mut kxn = vec![0u8; k * n / 2];
        for c in 0..n {
            for j in 0..k {
                nxk[c * k / 2 + j / 2] |= u[c * k + j] << (4 * (j % 2));
                kxn[j * n / 2 + c / 2] |= u[c * k + j] << (4 * (c % 2));
            }
        }
        let scales = common::rhs::qsi4c32p::random_scales(&mut rng, n * k / bl);
        let sc = BlockScales::dense(&scales, k / bl);
        for p in all_packings::<Fx>() {
            let mut a = vec![0u8; qsi4c32p::packed_size(n, k, bl, &p).unwrap()];
            let mut b = a.clone();
            qsi4c32p::pack(&p, n, k, bl, &Int4Source::nxk(&nxk, k, Int4Encoding::ZeroPoint8), &sc, None, &mut a)
                .unwrap();
            qsi4c32p::pack(&p, n, k, bl, &Int4Source::kxn(&kxn, n, Int4Encoding::ZeroPoint8), &sc, None, &mut b)
                .unwrap();
            assert_eq!(a, b, "{p:?}");
        }
    }

    #[test]
    fn rsum_follows_the_chunk_grouping_of_kr() {
        // One channel, one block of 32: values +7 everywhere; scale 1 in block 0 and 2^-18 in
        // block 1 (as in the golden vectors): chunked f32 sums per kr differ from one big sum.
        let (n, k, bl) = (1usize, 64usize, 32usize);
        let raw = vec![0xffu8; k / 2];
        let scales = [bf16::from_f32(1.0), bf16::from_f32(2f32.powi(-18))];
        for kr in [8usize, 16] {
            let p = Packing { mr: 1, nr: 4, kr, sr: 2 };
            let mut out = vec![0u8; qsi4c32p::packed_size(n, k, bl, &p).unwrap()];
            let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
            qsi4c32p::pack(&p, n, k, bl, &src, &BlockScales::dense(&scales, 2), None, &mut out).unwrap();
            let at = 4 * 2 * (bl / 2 + 2);
            let got = f32::from_le_bytes(out[at..at + 4].try_into().unwrap());
            let mut want = 0f32;
            for (b, s) in scales.iter().enumerate() {
                let _ = b;
                for _ in 0..(bl / 2) / (kr / 2) {
                    want += (7 * kr) as f32 * s.to_f32();
                }
            }
            assert_eq!(got.to_bits(), want.to_bits(), "kr {kr}");
        }
    }

    #[test]
    fn rhs_packer_rejects_bad_input() {
        let p = qgemm::qai8dxp_qsi4c32p::PACKING_4X8;
        let (n, k, bl) = (5usize, 64usize, 32usize);
        let raw = vec![0x88u8; n * k / 2];
        let scales = vec![bf16::from_f32(0.1); n * 2];
        let sc = BlockScales::dense(&scales, 2);
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        let mut out = vec![0u8; qsi4c32p::packed_size(n, k, bl, &p).unwrap()];
        let pack = |bl, k, sc: &BlockScales<bf16>, bias: Option<&[f32]>, o: &mut [u8]| {
            qsi4c32p::pack(&p, n, k, bl, &src, sc, bias, o)
        };
        assert_eq!(pack(0, k, &sc, None, &mut out), Err(Error::ZeroDim { dim: Dim::BlockLen }));
        assert_eq!(
            pack(48, k, &sc, None, &mut out),
            Err(Error::NotMultiple { dim: Dim::BlockLen, value: 48, multiple_of: 32 })
        );
        assert_eq!(
            pack(64, 96, &sc, None, &mut out),
            Err(Error::NotMultiple { dim: Dim::K, value: 96, multiple_of: 64 })
        );
        let narrow = BlockScales { values: &scales, stride: 1 };
        assert_eq!(
            pack(bl, k, &narrow, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Scale, given: 1, needed: 2 })
        );
        let short = BlockScales::dense(&scales[..9], 2);
        assert_eq!(
            pack(bl, k, &short, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 9, needed: 10 })
        );
        let mut bad = scales.clone();
        bad[7] = bf16::NAN;
        assert_eq!(
            pack(bl, k, &BlockScales::dense(&bad, 2), None, &mut out),
            Err(Error::NonFinite { buffer: Buffer::Scale, index: 7 })
        );
        assert_eq!(
            pack(bl, k, &sc, Some(&[0.0; 4]), &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Bias, given: 4, needed: 5 })
        );
        assert_eq!(
            pack(bl, k, &sc, Some(&[0.0, 0.0, f32::NAN, 0.0, 0.0]), &mut out),
            Err(Error::NonFinite { buffer: Buffer::Bias, index: 2 })
        );
        let l = out.len();
        assert_eq!(
            pack(bl, k, &sc, None, &mut out[..l - 1]),
            Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: l - 1, needed: l })
        );
        assert!(matches!(qsi4c32p::packed_offset(4, k, bl, &p), Err(Error::MisalignedStart { .. })));
        assert_eq!(qsi4c32p::packed_size(usize::MAX, k, bl, &p), Err(Error::SizeOverflow));
    }
}
