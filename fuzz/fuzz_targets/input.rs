//! Reads fuzzer bytes as small parameters followed by a data tail.
#![allow(dead_code)] // each target uses a part

pub struct Input<'a>(pub &'a [u8]);

impl<'a> Input<'a> {
    /// The next byte (0 once the input is exhausted).
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// A value in `0..=max` from two bytes.
    pub fn upto(&mut self, max: usize) -> usize {
        let v = usize::from(self.byte()) | (usize::from(self.byte()) << 8);
        v % (max + 1)
    }

    /// A packing, legal most of the time (the packers must reject the others).
    pub fn packing(&mut self) -> qgemm::Packing {
        if self.byte() % 8 == 0 {
            qgemm::Packing { mr: self.upto(70), nr: self.upto(70), kr: self.upto(40), sr: self.upto(3) }
        } else {
            let mr = [1, 4, 8, 16][self.upto(3)];
            let nr = [4, 8, 16][self.upto(2)];
            let kr = [4, 8, 16, 32][self.upto(3)];
            qgemm::Packing::int4(mr, nr, kr)
        }
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.0)
    }
}

/// f32 values from raw bits (NaN, Inf, subnormals included).
pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
