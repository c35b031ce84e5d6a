//! Families `qsi8d32p_qai4c32p` (f32 activations and outputs) and `f16_qsi8d32p_qai4c32p` (f16):
//! asymmetric int4 weights with an f32 scale and offset per block. The generic suite for each
//! (golden vectors, every tier against the scalar reference, tails, clamps, split execution,
//! canaries, rejections), the packers' checks, and the divergence from KleidiAI: its GEMV
//! kernels of the f32 family write only row 0 when `m > 1`, qgemm's compute every row.

#[macro_use]
mod common;

use common::suite::Fixture;
use common::{Case, Rng, RngBytes};
use qgemm::half::f16;
use qgemm::lhs::qsi8d32pscalef32;
use qgemm::rhs::qai4c32p;
use qgemm::{Family, Packing, Result};
use serde_json::Value;

/// Packs random asymmetric blocks: codes, scales in 2^-10 .. 2^-4 of either sign, offsets in
/// [-0.1, 0.1], a bias.
fn random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8> {
    let raw = rng.bytes(n * k / 2);
    let nb = k / bl;
    let scale: Vec<f32> = (0..n * nb)
        .map(|i| {
            let mag = 2f32.powf(rng.f32(-10.0, -4.0));
            if i % 3 == 1 { -mag } else { mag }
        })
        .collect();
    let zero: Vec<f32> = (0..n * nb).map(|_| rng.f32(-0.1, 0.1)).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let mut out = vec![0u8; qai4c32p::packed_size(n, k, bl, p).unwrap()];
    qai4c32p::pack(p, n, k, bl, &raw, k / 2, &zero, &scale, Some(&bias), &mut out).unwrap();
    out
}

fn golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
    let (n, k, bl) = (case.n(), case.k(), case.bl());
    let (raw, stride) = case.rhs_raw();
    let zero = case.f32s(&case.json["inputs"]["rhs_zero"]["file"]);
    let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
    let bias = case.bias();
    let mut out = vec![0u8; qai4c32p::packed_size(n, k, bl, p).unwrap()];
    qai4c32p::pack(p, n, k, bl, &raw, stride, &zero, &scale, bias.as_deref(), &mut out).unwrap();
    out
}

/// Weights of one code, offsets 0 and scales `scale`.
fn filled_rhs_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, scale: f32, out: &mut [u8]) {
    let raw = vec![byte; n * k / 2];
    let params = vec![scale; n * (k / bl)];
    let zero = vec![0.0f32; n * (k / bl)];
    qai4c32p::pack(p, n, k, bl, &raw, k / 2, &zero, &params, None, out).unwrap();
}

fn golden_sizes(case: &Case, pj: &Value, p: &Packing) {
    let (m, n, k, bl) = (case.m(), case.n(), case.k(), case.bl());
    let g = |a: &str, b: &str| pj[a][b].as_u64().unwrap() as usize;
    assert_eq!(qsi8d32pscalef32::packed_size(m, k, bl, p).unwrap(), g("lhs_packed", "size"));
    assert_eq!(qsi8d32pscalef32::packed_offset(p.mr, k, bl, p).unwrap(), g("lhs_packed", "offset_at_m_idx_eq_mr"));
    assert_eq!(qai4c32p::packed_size(n, k, bl, p).unwrap(), g("rhs_packed", "size"));
    assert_eq!(qai4c32p::tile_stride(k, bl, p.nr).unwrap(), g("rhs_packed", "tile_stride"));
    assert_eq!(qai4c32p::packed_offset(p.nr, k, bl, p).unwrap(), g("rhs_packed", "offset_at_n_idx_eq_nr"));
}

/// The fixture of one family: `$fam` marker, `$src` activation type, `$pack` LHS packer.
/// (`$filled_scale`: the weight scale of `pack_filled_rhs_into`, small enough for the f16 output
/// to hold the largest sums of the suite's long blocks.)
macro_rules! qai4c32p_fixture {
    ($fx:ident, $fam:ty, $src:ty, $pack:path, $filled_scale:expr) => {
        struct $fx;

        impl Fixture for $fx {
            type Src = $src;
            const QAI8DXP_LHS: bool = false;
            type F = $fam;
            const BLS: &'static [usize] = &[32, 64];

            fn pack_lhs(
                p: &Packing,
                m: usize,
                k: usize,
                bl: usize,
                start: usize,
                x: &[$src],
                stride: usize,
                out: &mut [u8],
            ) -> Result<()> {
                $pack(p, m, k, bl, start, x, stride, out)
            }

            fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
                golden_rhs(case, p)
            }

            fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, bl: usize) -> Vec<u8> {
                random_rhs(rng, p, n, k, bl)
            }

            fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, bl: usize, byte: u8, out: &mut [u8]) {
                filled_rhs_into(p, n, k, bl, byte, $filled_scale, out)
            }

            fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
                golden_sizes(case, pj, p)
            }
        }
    };
}

qai4c32p_fixture!(Fx, qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p, f32, qsi8d32pscalef32::quantize_pack, 1.0);
qai4c32p_fixture!(
    FxF16,
    qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p,
    f16,
    qsi8d32pscalef32::quantize_pack_f16,
    0.03125
);

mod qsi8d32p_qai4c32p {
    use super::*;
    use qgemm::error::{Buffer, Dim, Stride};
    use qgemm::{CpuFeatures, Error, MatmulArgs};

    family_suite!(super::Fx, qgemm::qsi8d32p_qai4c32p::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        // No ±f32::MAX here: their block sums overflow f32 and the packer rejects them (tested
        // below); 1e6 takes their place.
        for (p, _bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(false) {
            let n = 12;
            // Zero row: scale, block sum and codes 0, so the output is the bias alone.
            let ts = qai4c32p::tile_stride(common::suite::EDGE_K, _bl, p.nr).unwrap();
            for (c, v) in out[..n].iter().enumerate() {
                let at = (c / p.nr) * ts + ts - 4 * p.nr + 4 * (c % p.nr);
                let bias = f32::from_le_bytes(rhs[at..at + 4].try_into().unwrap());
                assert_eq!(v.to_bits(), (0.0f32 + bias).to_bits(), "{p:?}: zero row, column {c}");
            }
            assert!(out.iter().all(|v| v.is_finite()), "{p:?}");
        }
    }

    /// KleidiAI's `qsi8d32p1x4/1x8_qai4c32p` GEMV kernels declare `m == 1` and write row 0 only
    /// when given more rows (docs/kernels.md, divergences); qgemm's kernels of those packings
    /// compute every row: each row equals the same row computed alone.
    #[test]
    fn gemv_packings_compute_every_row() {
        let cpu = CpuFeatures::from_target();
        let (m, n, k, bl) = (5, 8, 128, 32);
        let mut rng = Rng(11);
        let x: Vec<f32> = (0..m * k).map(|_| rng.f32(-2.0, 2.0)).collect();
        for p in [qgemm::qsi8d32p_qai4c32p::PACKING_1X4, qgemm::qsi8d32p_qai4c32p::PACKING_1X4_KR8] {
            let rhs = random_rhs(&mut rng, &p, n, k, bl);
            let mut lhs = vec![0u8; qsi8d32pscalef32::packed_size(m, k, bl, &p).unwrap()];
            qsi8d32pscalef32::quantize_pack(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
            for kernel in qgemm::qsi8d32p_qai4c32p::available(&cpu).iter().filter(|kn| kn.packing() == p) {
                let mut all = vec![f32::NAN; m * n];
                kernel.run(&lhs, &rhs, &mut all, &MatmulArgs::new(m, n, k).with_block_len(bl)).unwrap();
                for r in 0..m {
                    let one = &lhs[r * (lhs.len() / m)..(r + 1) * (lhs.len() / m)];
                    let mut row = vec![0f32; n];
                    kernel.run(one, &rhs, &mut row, &MatmulArgs::new(1, n, k).with_block_len(bl)).unwrap();
                    assert_eq!(&all[r * n..(r + 1) * n], &row[..], "{} row {r}", kernel.name());
                }
            }
        }
    }

    #[test]
    fn lhs_packer_rejects_bad_input() {
        let p = qgemm::qsi8d32p_qai4c32p::PACKING_4X4;
        let x = vec![0.5f32; 2 * 64];
        let mut out = vec![0u8; qsi8d32pscalef32::packed_size(2, 64, 32, &p).unwrap()];
        let pack =
            |k, bl, stride, x: &[f32], o: &mut [u8]| qsi8d32pscalef32::quantize_pack(&p, 2, k, bl, 0, x, stride, o);
        assert_eq!(pack(64, 0, 64, &x, &mut out), Err(Error::ZeroDim { dim: Dim::BlockLen }));
        assert_eq!(
            pack(64, 48, 64, &x, &mut out),
            Err(Error::NotMultiple { dim: Dim::BlockLen, value: 48, multiple_of: 32 })
        );
        assert_eq!(pack(48, 32, 64, &x, &mut out), Err(Error::NotMultiple { dim: Dim::K, value: 48, multiple_of: 32 }));
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
        // A block whose sum of dequantized values overflows f32 (KleidiAI: an infinite block sum,
        // NaN outputs).
        let mut big = x.clone();
        big[64..96].fill(-f32::MAX);
        assert_eq!(pack(64, 32, 64, &big, &mut out), Err(Error::ScaleOverflow { buffer: Buffer::Lhs, index: 64 }));
        big[64..96].fill(f32::MAX / 33.0);
        pack(64, 32, 64, &big, &mut out).unwrap();
        let mut inf = x.clone();
        inf[70] = f32::NEG_INFINITY;
        assert_eq!(pack(64, 32, 64, &inf, &mut out), Err(Error::NonFinite { buffer: Buffer::Lhs, index: 70 }));
        assert!(matches!(qsi8d32pscalef32::packed_offset(2, 64, 32, &p), Err(Error::MisalignedStart { .. })));
        assert_eq!(qsi8d32pscalef32::packed_size(usize::MAX, 64, 32, &p), Err(Error::SizeOverflow));
    }

    #[test]
    fn rhs_packer_rejects_bad_input() {
        let p = qgemm::qsi8d32p_qai4c32p::PACKING_4X4;
        let (n, k, bl) = (3usize, 64usize, 32usize);
        let raw = vec![0x5au8; n * k / 2];
        let ones = vec![1.0f32; n * 2];
        let mut out = vec![0xeeu8; qai4c32p::packed_size(n, k, bl, &p).unwrap()];
        let l = out.len();
        let pack = |n, bl, raw: &[u8], stride, zero: &[f32], scale: &[f32], bias: Option<&[f32]>, out: &mut [u8]| {
            qai4c32p::pack(&p, n, k, bl, raw, stride, zero, scale, bias, out)
        };
        assert_eq!(
            pack(n, bl, &raw, 31, &ones, &ones, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 31, needed: 32 })
        );
        assert_eq!(
            pack(n, bl, &raw[..95], 32, &ones, &ones, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 95, needed: 96 })
        );
        assert_eq!(
            pack(n, bl, &raw, 32, &ones, &ones[..5], None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 5, needed: 6 })
        );
        let mut bad = ones.clone();
        bad[4] = f32::INFINITY;
        assert_eq!(
            pack(n, bl, &raw, 32, &bad, &ones, None, &mut out),
            Err(Error::NonFinite { buffer: Buffer::Zero, index: 4 })
        );
        assert_eq!(
            pack(n, bl, &raw, 32, &ones, &ones, Some(&[0.0, f32::NAN, 0.0]), &mut out),
            Err(Error::NonFinite { buffer: Buffer::Bias, index: 1 })
        );
        assert_eq!(
            pack(n, bl, &raw, 32, &ones, &ones, Some(&[0.0; 2]), &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Bias, given: 2, needed: 3 })
        );
        assert_eq!(
            pack(n, bl, &raw, 32, &ones, &ones, None, &mut out[..l - 1]),
            Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: l - 1, needed: l })
        );
        assert_eq!(pack(0, bl, &raw, 32, &ones, &ones, None, &mut out), Err(Error::ZeroDim { dim: Dim::N }));
        assert_eq!(
            pack(n, 48, &raw, 32, &ones, &ones, None, &mut out),
            Err(Error::NotMultiple { dim: Dim::BlockLen, value: 48, multiple_of: 32 })
        );
        assert!(out.iter().all(|&b| b == 0xee), "nothing written on a rejected call");
        assert_eq!(
            qai4c32p::packed_size(4, 64, 32, &Packing::int4(4, 4, 64)),
            Err(Error::Unsupported { param: qgemm::error::Param::Kr, value: 64 })
        );
    }

    #[test]
    fn family_is_blocked() {
        const { assert!(<qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p as Family>::BLOCKED) };
    }
}

mod f16_qsi8d32p_qai4c32p {
    use super::*;

    family_suite!(super::FxF16, qgemm::f16_qsi8d32p_qai4c32p::select);

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, _bl, out, _rhs) in suite::edge_inputs_equal_in_every_tier::<FxF16>(true) {
            assert!(out.iter().all(|v| !v.is_nan()), "{p:?}");
        }
    }
}
