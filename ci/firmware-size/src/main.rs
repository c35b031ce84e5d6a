//! A minimal bare-metal program around one `op::Linear` call, for measuring what the layer
//! costs in `.text` depending on the kernels it may use (see Cargo.toml). It is linked, never
//! run: `black_box` keeps the inputs unknown to the optimizer and the output observable.
#![no_std]
#![warn(clippy::undocumented_unsafe_blocks)]
#![no_main]

use core::hint::black_box;

use qgemm::CpuFeatures;
use qgemm::op::Linear;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
#[cfg(not(feature = "dispatch"))]
use qgemm::qai8dxp_qsi4cxp::{self as fam};

const N: usize = 64;
const K: usize = 128;
const M: usize = 8;

/// Weights packed offline (by `Linear::pack` or KleidiAI's packer) and placed in flash.
static WEIGHTS: [u8; N * (K / 2 + 12)] = [0; N * (K / 2 + 12)];

#[cfg(not(any(
    feature = "dispatch",
    feature = "dotprod-tier",
    feature = "dotprod-pair",
    feature = "i8mm-pair",
    feature = "neon-tier",
    feature = "scalar-one"
)))]
compile_error!(
    "choose one variant: --features dispatch, dotprod-tier, dotprod-pair, i8mm-pair, neon-tier or scalar-one"
);

/// The kernels the layer may use.
#[cfg(feature = "dotprod-tier")]
const KERNELS: &[&fam::Descriptor] = fam::dotprod::KERNELS;
#[cfg(feature = "dotprod-pair")]
const KERNELS: &[&fam::Descriptor] = &[&fam::dotprod::DOTPROD_1X8, &fam::dotprod::DOTPROD_16X8];
#[cfg(feature = "i8mm-pair")]
const KERNELS: &[&fam::Descriptor] = &[&fam::dotprod::DOTPROD_1X8, &fam::i8mm::I8MM_24X8];
#[cfg(feature = "neon-tier")]
const KERNELS: &[&fam::Descriptor] = fam::neon::KERNELS;
#[cfg(feature = "scalar-one")]
const KERNELS: &[&fam::Descriptor] = &[&fam::SCALAR_4X8];

/// One layer call on `m` rows; the error, if any, is returned as its discriminant-like code.
fn layer_call(cpu: &CpuFeatures, m: usize, x: &[f32], y: &mut [f32], scratch: &mut [u8]) -> Result<(), qgemm::Error> {
    let layer = Linear::<Qai8dxpQsi4cxp>::from_packed(N, K, 0, black_box(&WEIGHTS))?;
    #[cfg(feature = "dispatch")]
    return layer.run(cpu, m, x, y, scratch);
    #[cfg(not(feature = "dispatch"))]
    return layer.run_with(KERNELS, cpu, m, x, y, scratch);
}

/// The entry point the linker starts from.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    // SAFETY: a firmware runs this at EL1, where the ID registers are readable; this program is
    // only linked, never run.
    let cpu = unsafe { CpuFeatures::from_id_registers() };
    let x = black_box([0.5f32; M * K]);
    let mut y = [0f32; M * N];
    let mut scratch = [0u8; 4096];
    let ok = layer_call(&cpu, black_box(M), &x, &mut y, &mut scratch).is_ok();
    black_box((ok, y));
    loop {
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
