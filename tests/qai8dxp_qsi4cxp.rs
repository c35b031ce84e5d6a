//! Family `qai8dxp_qsi4cxp`: the generic suite (golden vectors, every tier against the scalar
//! reference, tails, clamps, split execution, canaries, rejections) plus this family's own
//! packer checks and edge-value expectations.

#[macro_use]
mod common;

use common::suite::{Fixture, all_packings, packing_of};
use common::{Case, Rng};
use qgemm::lhs::qai8dxp;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qsi4cxp};
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = f32;
    type F = Qai8dxpQsi4cxp;
    const BLS: &'static [usize] = &[0];

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
        common::rhs::qsi4cxp::golden(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, _bl: usize) -> Vec<u8> {
        common::rhs::qsi4cxp::random(rng, p, n, k)
    }

    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, _bl: usize, byte: u8, out: &mut [u8]) {
        common::rhs::qsi4cxp::filled_into(p, n, k, byte, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        common::rhs::qsi4cxp::check_sizes(case, pj, p)
    }
}

mod qai8dxp_qsi4cxp {
    use super::*;
    use crate::common::assert_bits_eq;
    use qgemm::Error;
    use qgemm::error::{Buffer, Dim, Param, Stride};

    family_suite!(super::Fx, qgemm::qai8dxp_qsi4cxp::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, _bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias = crate::common::rhs::qsi4cxp::packed_bias(&rhs, &p, n, k);
            // Zero row: q = 127 and offset = -127 cancel exactly; the output is the bias.
            assert_bits_eq(&out[0..n], &bias, "zero row");
            // Alternating ±f32::MAX: the range overflows, multiplier and dq scale are 0.
            assert_bits_eq(&out[3 * n..4 * n], &bias, "±MAX row");
        }
    }

    #[test]
    fn kxn_and_signed_weights_pack_like_nxk() {
        // The same weights given four ways give identical packed bytes (docs/formats.md, §RHS); n is
        // a multiple of every nr so no KxN padding column differs.
        let (n, k): (usize, usize) = (16, 45);
        let mut rng = Rng(3);
        let w: Vec<i8> = (0..n * k).map(|_| (rng.below(16) as i8) - 8).collect();
        let enc = |v: i8, zp8: bool| if zp8 { (v + 8) as u8 } else { v as u8 & 0xf };
        let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.01, 0.2)).collect();
        for p in all_packings::<Fx>() {
            let mut outs = Vec::new();
            for zp8 in [true, false] {
                let mut nxk = vec![0u8; n * k.div_ceil(2)];
                let mut kxn = vec![0u8; k * n.div_ceil(2)];
                for c in 0..n {
                    for j in 0..k {
                        let e = enc(w[c * k + j], zp8);
                        nxk[c * k.div_ceil(2) + j / 2] |= e << (4 * (j % 2));
                        kxn[j * n.div_ceil(2) + c / 2] |= e << (4 * (c % 2));
                    }
                }
                let encoding = if zp8 { Int4Encoding::ZeroPoint8 } else { Int4Encoding::Signed };
                for src in [Int4Source::nxk(&nxk, k, encoding), Int4Source::kxn(&kxn, n, encoding)] {
                    let mut out = vec![0u8; qsi4cxp::packed_size(n, k, &p).unwrap()];
                    qsi4cxp::pack(&p, n, k, &src, &scale, None, &mut out).unwrap();
                    outs.push(out);
                }
            }
            assert!(outs.windows(2).all(|w| w[0] == w[1]), "{p:?}");
        }
    }

    #[test]
    fn golden_cases_cover_every_packing() {
        if !common::golden_available("golden_cases_cover_every_packing") {
            return;
        }
        let cases = common::cases("qai8dxp_qsi4cxp");
        for p in all_packings::<Fx>() {
            assert!(cases.iter().any(|c| c.packings().iter().any(|pj| packing_of(pj) == p)), "{p:?}");
        }
    }

    #[test]
    fn lhs_packer_rejects_bad_input() {
        let p = qgemm::qai8dxp_qsi4cxp::PACKING_4X8;
        let x = vec![0.5f32; 3 * 40];
        let mut out = vec![0u8; qai8dxp::packed_size(3, 40, &p).unwrap()];
        assert_eq!(qai8dxp::quantize_pack(&p, 3, 0, 0, &x, 40, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
        assert_eq!(
            qai8dxp::quantize_pack(&p, 3, 40, 0, &x, 39, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Lhs, given: 39, needed: 40 })
        );
        assert_eq!(
            qai8dxp::quantize_pack(&p, 3, 40, 0, &x[1..], 40, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: 119, needed: 120 })
        );
        let short = out.len() - 1;
        assert_eq!(
            qai8dxp::quantize_pack(&p, 3, 40, 0, &x, 40, &mut out[..short]),
            Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: short, needed: short + 1 })
        );
        // Starting in slot 2 of a tile, 3 rows need a second tile.
        assert!(matches!(
            qai8dxp::quantize_pack(&p, 3, 40, 2, &x, 40, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, .. })
        ));
        for (bad, param) in [
            (Packing { mr: 0, ..p }, Param::Mr),
            (Packing { sr: 3, ..p }, Param::Sr),
            (Packing { kr: 15, ..p }, Param::Kr),
            (Packing { kr: 24, ..p }, Param::Kr),
        ] {
            let e = qai8dxp::quantize_pack(&bad, 3, 40, 0, &x, 40, &mut out).unwrap_err();
            assert!(matches!(e, Error::Unsupported { param: q, .. } if q == param), "{bad:?}: {e}");
        }
        assert_eq!(qai8dxp::quantize_pack(&p, 0, 40, 0, &x, 40, &mut out), Ok(()));
        assert_eq!(qai8dxp::packed_size(usize::MAX, 64, &p), Err(Error::SizeOverflow));
        assert_eq!(qai8dxp::packed_size(4, usize::MAX - 3, &p), Err(Error::SizeOverflow));
        assert!(matches!(qai8dxp::packed_offset(3, 64, &p), Err(Error::MisalignedStart { .. })));
    }

    #[test]
    fn rhs_packer_rejects_bad_input() {
        let p = qgemm::qai8dxp_qsi4cxp::PACKING_4X8;
        let (n, k) = (5, 9);
        let raw = vec![0x88u8; n * 5];
        let scale = vec![0.1f32; n];
        let bias = vec![0.0f32; n];
        let mut out = vec![0u8; qsi4cxp::packed_size(n, k, &p).unwrap()];
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        let pack = |p: &Packing, n, k, src: &Int4Source, s: &[f32], b: Option<&[f32]>, o: &mut [u8]| {
            qsi4cxp::pack(p, n, k, src, s, b, o)
        };
        assert_eq!(pack(&p, 0, k, &src, &scale, None, &mut out), Err(Error::ZeroDim { dim: Dim::N }));
        assert_eq!(pack(&p, n, 0, &src, &scale, None, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
        let narrow = Int4Source { stride: 4, ..src };
        assert_eq!(
            pack(&p, n, k, &narrow, &scale, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 4, needed: 5 })
        );
        let short = Int4Source::nxk(&raw[..24], k, Int4Encoding::ZeroPoint8);
        assert_eq!(
            pack(&p, n, k, &short, &scale, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 24, needed: 25 })
        );
        assert_eq!(
            pack(&p, n, k, &src, &scale[..4], None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 4, needed: 5 })
        );
        assert_eq!(
            pack(&p, n, k, &src, &scale, Some(&bias[..4]), &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Bias, given: 4, needed: 5 })
        );
        let mut nan_scale = scale.clone();
        nan_scale[2] = f32::NAN;
        assert_eq!(
            pack(&p, n, k, &src, &nan_scale, None, &mut out),
            Err(Error::NonFinite { buffer: Buffer::Scale, index: 2 })
        );
        let mut inf_bias = bias.clone();
        inf_bias[4] = f32::INFINITY;
        assert_eq!(
            pack(&p, n, k, &src, &scale, Some(&inf_bias), &mut out),
            Err(Error::NonFinite { buffer: Buffer::Bias, index: 4 })
        );
        let l = out.len();
        assert_eq!(
            pack(&p, n, k, &src, &scale, None, &mut out[..l - 1]),
            Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: l - 1, needed: l })
        );
        assert_eq!(
            pack(&Packing { sr: 1, ..p }, n, k, &src, &scale, None, &mut out),
            Err(Error::Unsupported { param: Param::Sr, value: 1 })
        );
        assert_eq!(
            pack(&Packing { kr: 64, ..p }, n, k, &src, &scale, None, &mut out),
            Err(Error::Unsupported { param: Param::Kr, value: 64 })
        );
        let kxn = Int4Source { layout: Layout::KxN, stride: 2, ..src };
        assert_eq!(
            pack(&p, n, k, &kxn, &scale, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 2, needed: 3 })
        );
        assert_eq!(qsi4cxp::packed_size(usize::MAX, 64, &p), Err(Error::SizeOverflow));
        assert!(matches!(qsi4cxp::packed_offset(12, 64, &p), Err(Error::MisalignedStart { .. })));
    }

    /// The packer's row sums wrap modulo 2^32 like the kernels' integer accumulation, instead
    /// of overflowing (a debug build would panic): `16 * sum` of a channel of `k > 2^24`
    /// weights of -8 leaves the int32 range.
    #[test]
    fn rhs_packer_row_sum_wraps_for_huge_k() {
        let p = qgemm::qai8dxp_qsi4cxp::PACKING_1X4;
        let (n, k) = (1, (1 << 24) + 64);
        let raw = vec![0u8; k / 2]; // zero point 8: every weight -8
        let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
        let mut out = vec![0u8; qsi4cxp::packed_size(n, k, &p).unwrap()];
        qsi4cxp::pack(&p, n, k, &src, &[1.0], None, &mut out).unwrap();
        let rsum_at = p.nr * k / 2; // k is a multiple of 32: Kp = k
        let rsum = i32::from_le_bytes(out[rsum_at..rsum_at + 4].try_into().unwrap());
        let want = (-8i64 * k as i64 * 16) as i32; // wrapped to 32 bits
        assert_eq!(rsum, want);
        assert!(-8i64 * k as i64 * 16 < i64::from(i32::MIN), "the case must wrap");
    }
}
