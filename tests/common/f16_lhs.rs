//! The f16 `qai8dxp` packer's one divergence from KleidiAI's (docs/formats.md, §Arithmetic:
//! qai8dxp from f16 and bf16): with `mr = 4` and `kr / sr = 4`, KleidiAI adds the zero point of
//! row `4t + 2*((j/4) % 2) + i/2` to value `j < 8*floor(k/8)` of row `4t + i` of every whole group
//! of four; qgemm adds the row's own. Everything else (the rounding rules, the K padding, the
//! stored offsets and scales) is identical, which [`check_golden_lhs`] proves byte by byte.

use std::sync::Mutex;

use super::Case;
use qgemm::Packing;

/// The golden cases whose packed LHS differs from qgemm's, with the bytes that differ.
pub static DIVERGENT: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Checks qgemm's packed LHS `ours` of a golden case against KleidiAI's `golden`: equal, or
/// (`mr = 4`, `kr / sr = 4` only) different exactly where KleidiAI borrowed another row's zero
/// point and the two zero points differ, by that difference (before the clamp to int8).
pub fn check_golden_lhs(case: &Case, p: &Packing, ours: &[u8], golden: &[u8]) {
    if ours == golden {
        return;
    }
    let what = format!("{} {p:?}", case.id);
    assert!(p.mr == 4 && p.block_depth() == 4, "{what}: packed LHS differs from KleidiAI's");
    assert_eq!(ours.len(), golden.len(), "{what}");
    let (m, k) = (case.m(), case.k());
    let kp = k.div_ceil(32) * 32;
    let ts = 4 * (kp + 8);
    let (grouped, vec8) = (4 * (m / 4), 8 * (k / 8));
    // The stored offsets (-zero point) and scales are the same in both.
    for t in 0..m.div_ceil(4) {
        let x = t * ts + 4 * kp;
        assert_eq!(ours[x..x + 32], golden[x..x + 32], "{what}: offsets or scales of tile {t}");
    }
    let zp = |r: usize| -i32_at(ours, (r / 4) * ts + 4 * kp + 4 * (r % 4));
    let mut differ = 0;
    for r in 0..m {
        let (t, i) = (r / 4, r % 4);
        for j in 0..kp {
            let at = t * ts + (j / 4) * 16 + i * 4 + j % 4;
            let (q, g) = (ours[at] as i8 as i32, golden[at] as i8 as i32);
            if q == g {
                continue;
            }
            differ += 1;
            assert!(r < grouped && j < vec8, "{what}: row {r} value {j} differs outside the borrowed zero points");
            let lender = 4 * t + 2 * ((j / 4) % 2) + i / 2;
            let (own, borrowed) = (zp(r), zp(lender));
            assert_ne!(own, borrowed, "{what}: row {r} value {j} differs with equal zero points");
            // q = clamp(v + own), g = clamp(v + borrowed) for the same rounded v.
            if q > -128 && q < 127 {
                assert_eq!(g, (q - own + borrowed).clamp(-128, 127), "{what}: row {r} value {j}");
            }
        }
    }
    assert!(differ > 0);
    DIVERGENT.lock().unwrap().push((format!("{} mr 4 kr {} sr {}", case.id, p.kr, p.sr), differ));
}

/// The fixture and the tests of an f16 family (`$family`, marker `$marker`, weights of the
/// `common::rhs::$rhs` format): the generic suite, the edge rows, and the divergence tests on
/// `$defective`, the packing where KleidiAI's packer borrows zero points; `$extra` items go
/// into the family's test module.
#[allow(unused_macros)] // used by the f16 family tests only
macro_rules! f16_family_tests {
    ($family:ident, $marker:ident, $rhs:ident, $defective:expr; $($extra:item)*) => {
        struct Fx;

        impl Fixture for Fx {
            type Src = f16;
            type F = qgemm::$family::$marker;
            const BLS: &'static [usize] = &[0];
            const LHS_DEPENDS_ON_MR: bool = true;

            fn pack_lhs(
                p: &Packing,
                m: usize,
                k: usize,
                _bl: usize,
                start: usize,
                x: &[f16],
                stride: usize,
                out: &mut [u8],
            ) -> Result<()> {
                qai8dxp::quantize_pack_f16(p, m, k, start, x, stride, out)
            }

            fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
                common::rhs::$rhs::golden(case, p)
            }

            fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, _bl: usize) -> Vec<u8> {
                common::rhs::$rhs::random(rng, p, n, k)
            }

            fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, _bl: usize, byte: u8, out: &mut [u8]) {
                common::rhs::$rhs::filled_into(p, n, k, byte, out)
            }

            fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
                common::rhs::$rhs::check_sizes(case, pj, p)
            }

            fn splits_at(p: &Packing, m_idx_start: usize) -> bool {
                m_idx_start.is_multiple_of(p.mr)
            }

            fn check_golden_lhs(case: &Case, p: &Packing, ours: &[u8], golden: &[u8]) {
                common::f16_lhs::check_golden_lhs(case, p, ours, golden)
            }
        }

        mod $family {
            use super::*;
            use crate::common::assert_bits_eq;

            family_suite!(super::Fx, qgemm::$family::select);

            #[test]
            fn edge_inputs_defined_and_equal_in_every_tier() {
                for (p, bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
                    let (n, k) = (12, suite::EDGE_K);
                    let bias: Vec<f16> =
                        common::rhs::$rhs::packed_bias(&rhs, &p, n, k).iter().map(|&b| f16::from_f32(b)).collect();
                    // Zero row: q = 127 and offset = -127 cancel exactly; the output is the bias, rounded.
                    assert_bits_eq(&out[0..n], &bias, "zero row");
                    let _ = bl;
                }
            }

            /// qgemm's f16 packer equals KleidiAI's byte for byte except where KleidiAI adds another
            /// row's zero point (`mr = 4`, `kr / sr = 4`, groups whose zero points differ): the golden
            /// check (`common::f16_lhs`) proves every other byte equal and every differing byte the
            /// borrowed zero point's doing. This lists the cases where the two differ.
            #[test]
            fn f16_packer_diverges_from_kleidiai_only_by_the_borrowed_zero_points() {
                if !common::golden_available("f16 packer divergence") {
                    return;
                }
                suite::golden_packed_bytes::<Fx>();
                let list = common::f16_lhs::DIVERGENT.lock().unwrap().clone();
                println!("{}: packed LHS differs from KleidiAI's (borrowed zero points) in {} packings:", FAMILY, list.len());
                for (what, bytes) in &list {
                    println!("  {what}: {bytes} bytes");
                }
                assert!(!list.is_empty(), "the golden cases pair rows of different zero points");
                assert!(list.iter().all(|(w, _)| w.contains("mr 4 kr ") && !w.contains("kr 16")), "{list:?}");
            }

            /// On a case where KleidiAI's packer borrows zero points, the kernel on qgemm's bytes stays
            /// within quantization error of the unquantized product (f16 activations times the
            /// dequantized weights, plus the bias), while on KleidiAI's bytes it is off by orders of
            /// magnitude in the rows of groups with different zero points (rows whose results leave the
            /// f16 range are left out).
            #[test]
            fn correct_packer_fixes_the_defective_kernels() {
                if !common::golden_available("f16 packer fix") {
                    return;
                }
                let case = common::cases(FAMILY).into_iter().find(|c| c.id.contains("m16_n64_k256__nxk")).unwrap();
                let (m, n, k) = (case.m(), case.n(), case.k());
                let pj = case.packings().iter().find(|pj| common::suite::packing_of(pj) == DEFECTIVE).unwrap();
                let p = DEFECTIVE;
                let x: Vec<f16> = case.values(&case.json["inputs"]["lhs"]["file"]);
                let w = common::rhs::$rhs::dequant(&case);
                let bias = case.bias().unwrap_or(vec![0.0; n]);
                let mut ours = vec![0u8; qai8dxp::packed_size(m, k, &p).unwrap()];
                qai8dxp::quantize_pack_f16(&p, m, k, 0, &x, k, &mut ours).unwrap();
                let theirs = case.bytes(&pj["lhs_packed"]["file"]);
                let rhs = case.bytes(&pj["rhs_packed"]["file"]);
                let kernel = common::suite::scalar_kernel::<Fx>(&p);
                let args = qgemm::MatmulArgs::new(m, n, k);
                let ours = common::run_guarded(&kernel, &ours, &rhs, &args);
                let theirs = common::run_guarded(&kernel, &theirs, &rhs, &args);
                let (mut err_ours, mut err_theirs) = (0f64, 0f64);
                for r in 0..m {
                    let exact: Vec<f64> = (0..n)
                        .map(|c| (0..k).map(|j| x[r * k + j].to_f64() * w[c * k + j] as f64).sum::<f64>() + bias[c] as f64)
                        .collect();
                    let top = exact.iter().fold(0f64, |a, v| a.max(v.abs()));
                    if top == 0.0 || top > 60000.0 {
                        continue;
                    }
                    let err = |got: &[f16]| (0..n).fold(0f64, |a, c| a.max((got[r * n + c].to_f64() - exact[c]).abs())) / top;
                    err_ours = err_ours.max(err(&ours));
                    err_theirs = err_theirs.max(err(&theirs));
                }
                println!(
                    "{}: worst row error relative to the row's largest exact result: qgemm {err_ours:.4}, KleidiAI {err_theirs:.1}",
                    case.id
                );
                assert!(err_ours < 0.05, "{err_ours}");
                assert!(err_theirs > 100.0 * err_ours, "the case must show the defect: {err_theirs}");
            }

            const FAMILY: &str = stringify!($family);
            /// KleidiAI's packing with the borrowed zero points (`mr = 4`, `kr / sr = 4`).
            const DEFECTIVE: Packing = $defective;

            $($extra)*
        }
    };
}
