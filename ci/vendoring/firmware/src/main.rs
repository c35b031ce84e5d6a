//! A firmware image's use of qgemm, built (not run) by ci/vendoring/check.sh to check that the
//! vendoring recipe of docs/porting.md compiles and links for `aarch64-unknown-none`: static
//! buffers, the CPU from the ID registers, an int4 layer packed once and run per call. The entry
//! only sets a stack and FP/SIMD access (a real image also needs the MMU on: docs/porting.md).
#![no_std]
#![no_main]

use qgemm::qai8dxp_qsi4cxp as fam;
use qgemm::rhs::{Int4Encoding, Int4Source};
use qgemm::{CpuFeatures, MatmulArgs};

const M: usize = 4;
const N: usize = 16;
const K: usize = 64;

static WEIGHTS: [u8; N * K / 2] = [0x98; N * K / 2];
static SCALES: [f32; N] = [0.5; N];
static mut RHS_PACKED: [u8; 4096] = [0; 4096];
static mut LHS_PACKED: [u8; 4096] = [0; 4096];
static mut ACTIVATIONS: [f32; M * K] = [1.0; M * K];
static mut OUT: [f32; M * N] = [0.0; M * N];

/// One layer: pack the weights, quantize the activations, run the best kernel for `cpu`.
fn layer(cpu: &CpuFeatures, rhs: &mut [u8], lhs: &mut [u8], x: &[f32], out: &mut [f32]) -> Result<(), qgemm::Error> {
    let kernel = fam::select(cpu, M);
    let p = kernel.packing();
    let rhs_size = kernel.rhs_packed_size(N, K, 0)?;
    let src = Int4Source::nxk(&WEIGHTS, K, Int4Encoding::ZeroPoint8);
    let rhs = rhs.get_mut(..rhs_size).ok_or(qgemm::Error::SizeOverflow)?;
    qgemm::rhs::qsi4cxp::pack(&p, N, K, &src, &SCALES, None, rhs)?;
    qgemm::lhs::qai8dxp::quantize_pack(&p, M, K, 0, x, K, lhs)?;
    kernel.run(lhs, rhs, out, &MatmulArgs::new(M, N, K))
}

#[unsafe(no_mangle)]
extern "C" fn firmware_main() -> ! {
    // SAFETY: the firmware runs at EL1, where the ID registers are readable.
    let cpu = unsafe { CpuFeatures::from_id_registers() };
    // SAFETY: single core, no interrupts: these are the only references to the buffers.
    let (rhs, lhs, x, out) = unsafe {
        (&mut *(&raw mut RHS_PACKED), &mut *(&raw mut LHS_PACKED), &*(&raw const ACTIVATIONS), &mut *(&raw mut OUT))
    };
    let ok = layer(&cpu, rhs, lhs, x, out).is_ok();
    loop {
        core::hint::black_box(ok);
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

static mut STACK: [u128; 1024] = [0; 1024];

// Entry: a stack, FP/SIMD enabled at EL1 (CPACR_EL1.FPEN = 0b11), then firmware_main.
core::arch::global_asm!(
    ".section .text._start, \"ax\"",
    ".global _start",
    "_start:",
    "    adrp x0, {stack}",
    "    add x0, x0, :lo12:{stack}",
    "    add sp, x0, #{stack_size}",
    "    mov x1, #(3 << 20)",
    "    msr cpacr_el1, x1",
    "    isb",
    "    b {main}",
    stack = sym STACK,
    stack_size = const 1024 * 16,
    main = sym firmware_main,
);
