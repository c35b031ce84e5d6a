//! Prints the kernel catalogue of every family ([`qgemm::visit_families`]), one tab-separated
//! line per kernel: family, kernel name, tier, the features it requires (`+`-separated, `-` for
//! none) and whether the detected CPU can run it (`yes`/`no`). ci/icount_check.py reads it under
//! each QEMU CPU model, so its families and the tiers it expects come from the catalogue.
//!
//! ```text
//! QEMU_CPU=cortex-a76 cargo run --features std --target aarch64-unknown-linux-gnu --example catalogue
//! ```

use qgemm::{CpuFeatures, Family, FamilyVisitor, visit_families};

struct Print(CpuFeatures);

impl FamilyVisitor for Print {
    fn visit<F: Family>(&mut self) {
        for k in F::kernels() {
            let req: Vec<&str> = k.requires().iter().map(|f| f.name()).collect();
            let req = if req.is_empty() { "-".to_string() } else { req.join("+") };
            let available = if k.is_available(&self.0) { "yes" } else { "no" };
            println!("{}\t{}\t{}\t{req}\t{available}", F::NAME, k.name(), k.tier().name());
        }
    }
}

fn main() {
    println!("# family\tkernel\ttier\trequires\tavailable (CpuFeatures::detect() = {})", CpuFeatures::detect());
    visit_families(&mut Print(CpuFeatures::detect()));
}
