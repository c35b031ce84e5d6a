//! Family `qai8dxp_qsi8cxp`: the generic suite (golden vectors, every tier against the scalar
//! reference, tails, clamps, split execution, canaries, rejections) plus this family's own
//! packer checks and edge-value expectations.

#[macro_use]
mod common;

use common::suite::{Fixture, all_packings, packing_of};
use common::{Case, Rng, RngBytes};
use qgemm::lhs::qai8dxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::rhs::Layout;
use qgemm::rhs::qsi8cxp::{self, Int8Source};
use qgemm::{Packing, Result};
use serde_json::Value;

struct Fx;

impl Fixture for Fx {
    type Src = f32;
    type F = Qai8dxpQsi8cxp;
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
        common::rhs::qsi8cxp::golden(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, _bl: usize) -> Vec<u8> {
        common::rhs::qsi8cxp::random(rng, p, n, k)
    }

    /// Every weight `byte ^ 0x80` as int8: 0x00 gives -128, 0xff gives +127.
    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, _bl: usize, byte: u8, out: &mut [u8]) {
        common::rhs::qsi8cxp::filled_into(p, n, k, byte, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        common::rhs::qsi8cxp::check_sizes(case, pj, p)
    }
}

mod qai8dxp_qsi8cxp {
    use super::*;
    use crate::common::assert_bits_eq;
    use qgemm::Error;
    use qgemm::error::{Buffer, Dim, Param, Stride};

    family_suite!(super::Fx, qgemm::qai8dxp_qsi8cxp::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, _bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let bias = crate::common::rhs::qsi8cxp::packed_bias(&rhs, &p, n, k);
            // Zero row: q = 127 and offset = -127 cancel exactly; the output is the bias.
            assert_bits_eq(&out[0..n], &bias, "zero row");
            // Alternating ±f32::MAX: the range overflows, multiplier and dq scale are 0.
            assert_bits_eq(&out[3 * n..4 * n], &bias, "±MAX row");
        }
    }

    #[test]
    fn kxn_packs_like_nxk() {
        // The same weights given both ways give identical packed bytes (docs/formats.md, §RHS
        // `qsi8cxp`), including the padding channels (both copy channel n - 1).
        let (n, k): (usize, usize) = (13, 45);
        let mut rng = Rng(3);
        let w = common::rhs::qsi8cxp::as_i8(&rng.bytes(n * k));
        let kxn: Vec<i8> = (0..k * n).map(|x| w[(x % n) * k + x / n]).collect();
        let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.01, 0.2)).collect();
        for p in all_packings::<Fx>() {
            let size = qsi8cxp::packed_size(n, k, &p).unwrap();
            let (mut a, mut b) = (vec![0u8; size], vec![0u8; size]);
            qsi8cxp::pack(&p, n, k, &Int8Source::nxk(&w, k), &scale, None, &mut a).unwrap();
            qsi8cxp::pack(&p, n, k, &Int8Source::kxn(&kxn, n), &scale, None, &mut b).unwrap();
            assert_eq!(a, b, "{p:?}");
        }
    }

    #[test]
    fn golden_cases_cover_every_packing() {
        if !common::golden_available("golden_cases_cover_every_packing") {
            return;
        }
        let cases = common::cases("qai8dxp_qsi8cxp");
        for p in all_packings::<Fx>() {
            assert!(cases.iter().any(|c| c.packings().iter().any(|pj| packing_of(pj) == p)), "{p:?}");
        }
    }

    #[test]
    fn rhs_packer_rejects_bad_input() {
        let p = qgemm::qai8dxp_qsi8cxp::PACKING_4X4;
        let (n, k) = (5, 9);
        let raw = vec![1i8; n * k];
        let scale = vec![0.1f32; n];
        let bias = vec![0.0f32; n];
        let mut out = vec![0u8; qsi8cxp::packed_size(n, k, &p).unwrap()];
        let src = Int8Source::nxk(&raw, k);
        let pack = |p: &Packing, n, k, src: &Int8Source, s: &[f32], b: Option<&[f32]>, o: &mut [u8]| {
            qsi8cxp::pack(p, n, k, src, s, b, o)
        };
        assert_eq!(pack(&p, 0, k, &src, &scale, None, &mut out), Err(Error::ZeroDim { dim: Dim::N }));
        assert_eq!(pack(&p, n, 0, &src, &scale, None, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
        let narrow = Int8Source { stride: 8, ..src };
        assert_eq!(
            pack(&p, n, k, &narrow, &scale, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 8, needed: 9 })
        );
        let short = Int8Source::nxk(&raw[..44], k);
        assert_eq!(
            pack(&p, n, k, &short, &scale, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 44, needed: 45 })
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
            pack(&Packing { sr: 2, ..p }, n, k, &src, &scale, None, &mut out),
            Err(Error::Unsupported { param: Param::Sr, value: 2 })
        );
        assert_eq!(
            pack(&Packing { kr: 12, ..p }, n, k, &src, &scale, None, &mut out),
            Err(Error::Unsupported { param: Param::Kr, value: 12 })
        );
        let kxn = Int8Source { layout: Layout::KxN, stride: 4, ..src };
        assert_eq!(
            pack(&p, n, k, &kxn, &scale, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 4, needed: 5 })
        );
        assert_eq!(qsi8cxp::packed_size(usize::MAX, 64, &p), Err(Error::SizeOverflow));
        assert!(matches!(qsi8cxp::packed_offset(6, 64, &p), Err(Error::MisalignedStart { .. })));
        // An int4 kernel's packing is refused by the int8 packer, and the other way round.
        let int4 = qgemm::qai8dxp_qsi4cxp::PACKING_4X4;
        assert!(matches!(qsi8cxp::packed_size(n, k, &int4), Err(Error::Unsupported { param: Param::Sr, .. })));
    }

    /// The packer's row sums wrap modulo 2^32 like the kernels' integer accumulation, instead
    /// of overflowing (a debug build would panic): a channel of `k > 2^24` weights of -128.
    #[test]
    fn rhs_packer_row_sum_wraps_for_huge_k() {
        let p = qgemm::qai8dxp_qsi8cxp::PACKING_1X4;
        let (n, k) = (1, (1 << 24) + 64);
        let raw = vec![-128i8; k];
        let mut out = vec![0u8; qsi8cxp::packed_size(n, k, &p).unwrap()];
        qsi8cxp::pack(&p, n, k, &Int8Source::nxk(&raw, k), &[1.0], None, &mut out).unwrap();
        let rsum_at = p.nr * k; // k is a multiple of 32: Kp = k
        let rsum = i32::from_le_bytes(out[rsum_at..rsum_at + 4].try_into().unwrap());
        assert_eq!(rsum, (-128i64 * k as i64) as i32); // wrapped to 32 bits
        assert!(-128i64 * (k as i64) < i64::from(i32::MIN), "the case must wrap");
    }
}
