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
