//! Family `f16_qai8dxp_qsi4cxp` (f16 activations, f16 outputs; the weights and the arithmetic of
//! `qai8dxp_qsi4cxp`): the generic suite (golden vectors, every tier against the scalar reference,
//! tails, clamps, split execution, canaries, rejections), the f16 packer's divergence from
//! KleidiAI's (`common::f16_lhs`), and the f16 packer's own rounding and rejection tests.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng};
use qgemm::half::f16;
use qgemm::lhs::qai8dxp;
use qgemm::{Packing, Result};
use serde_json::Value;

f16_family_tests! {
    f16_qai8dxp_qsi4cxp, F16Qai8dxpQsi4cxp, qsi4cxp, Packing::int4(4, 4, 8);

    #[test]
    fn f16_packer_rounds_by_group_and_position() {
        // mult = 1, zero point 0: rmin = -127.5, rmax = 127.5 (docs/formats.md, ties row).
        let k = 32;
        let mut row = vec![0.0f32; k];
        row[0] = -127.5;
        row[1] = 127.5;
        row[2] = 2.5;
        row[3] = 3.5;
        row[4] = -2.5;
        row[5] = 3.7; // 3.69921875 in f16
        row[24] = 2.5;
        let x: Vec<f16> = row.iter().map(|&v| f16::from_f32(v)).collect();
        let get = |buf: &[u8], p: &Packing, r: usize, j: usize| {
            let bd = p.block_depth();
            buf[(j / bd) * p.mr * bd + (r % p.mr) * bd + j % bd] as i8
        };
        // A single row (mr = 1, bd = 8): to even below bd * floor(k / bd) - 8 = 24, away after.
        let p1 = Packing::int4(1, 4, 16);
        let mut out = vec![0u8; qai8dxp::packed_size(1, k, &p1).unwrap()];
        qai8dxp::quantize_pack_f16(&p1, 1, k, 0, &x, k, &mut out).unwrap();
        let got: Vec<i8> = [2, 3, 4, 5, 24].iter().map(|&j| get(&out, &p1, 0, j)).collect();
        assert_eq!(got, [2, 4, -2, 4, 3]);
        // Four rows packed together (mr = 4): truncated below 8 * floor(k / 8) = 32.
        let p4 = Packing::int4(4, 4, 16);
        let x4: Vec<f16> = x.iter().cycle().take(4 * k).copied().collect();
        let mut out = vec![0u8; qai8dxp::packed_size(4, k, &p4).unwrap()];
        qai8dxp::quantize_pack_f16(&p4, 4, k, 0, &x4, k, &mut out).unwrap();
        for r in 0..4 {
            let got: Vec<i8> = [0, 1, 2, 3, 4, 5, 24].iter().map(|&j| get(&out, &p4, r, j)).collect();
            assert_eq!(got, [-127, 127, 2, 3, -2, 3, 2], "row {r}");
        }
        // Three rows with mr = 4 are not a whole group: rounded like single rows.
        let mut out = vec![0u8; qai8dxp::packed_size(3, k, &p4).unwrap()];
        qai8dxp::quantize_pack_f16(&p4, 3, k, 0, &x4, k, &mut out).unwrap();
        assert_eq!(get(&out, &p4, 2, 3), 4);
    }

    #[test]
    fn f16_packer_rejects_what_kleidiai_corrupts() {
        use qgemm::Error;
        use qgemm::error::{Dim, Param};
        let (m, k) = (5, 40);
        let x = vec![f16::from_f32(0.5); m * k];
        let p = Packing::int4(4, 4, 8);
        let mut out = vec![0u8; 4 * qai8dxp::packed_size(m, k, &p).unwrap()];
        assert_eq!(
            qai8dxp::quantize_pack_f16(&p, 3, k, 2, &x, k, &mut out),
            Err(Error::MisalignedStart { dim: Dim::MIdx, value: 2, step: 4 })
        );
        assert!(qai8dxp::quantize_pack_f16(&p, 1, k, 4, &x, k, &mut out).is_ok());
        let bd16 = Packing { sr: 1, ..Packing::int4(4, 4, 16) };
        assert_eq!(
            qai8dxp::quantize_pack_f16(&bd16, m, k, 0, &x, k, &mut out),
            Err(Error::Unsupported { param: Param::Kr, value: 16 })
        );
        let mr2 = Packing::int4(2, 4, 8);
        assert_eq!(
            qai8dxp::quantize_pack_f16(&mr2, m, k, 0, &x, k, &mut out),
            Err(Error::Unsupported { param: Param::Mr, value: 2 })
        );
    }
}
