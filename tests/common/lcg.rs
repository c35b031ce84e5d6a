//! The small generator of the quantizer tests (tests/quantize.rs, tests/quantize_pack.rs): a
//! 64-bit LCG, its high 31 bits per draw.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 8) as f32 / (1u32 << 22) as f32 - 1.0
    }
}
