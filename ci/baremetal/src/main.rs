//! Bare-metal differential check of every qgemm kernel, for QEMU's `virt` board at EL1:
//!
//! ```text
//! qemu-system-aarch64 -M virt -cpu max -m 128M -nographic -semihosting -nic none -kernel <elf>
//! ```
//!
//! Boot: aarch64-rt's `entry` enables the MMU with the identity map below (normal cacheable
//! RAM, so the kernels' unaligned loads are legal), sets `CPACR_EL1.FPEN = 0b11` (no FP/SIMD
//! trap) before any Rust code runs, zeroes `.bss`, sets the boot stack and calls `main`.
//!
//! `main` detects the CPU with `CpuFeatures::from_id_registers`, packs fixed deterministic
//! inputs on the device into static buffers (no allocator), runs every kernel of every family
//! on several shapes and compares each one bit for bit with the scalar kernel of the same
//! packing. Outputs (f32, f16 or bf16) are compared as bits. The float families (`float`) run
//! each kernel against the scalar kernel of its packed formats the same way.
//!
//! Then it starts the other three cores of `-smp 4` (PSCI `CPU_ON` over HVC, `multicore`) and,
//! for each family, runs the parts of one `op::Linear` call (decode `m = 1` and
//! prefill `m = 6`) on the four cores, one part per core, and compares the assembled output bit
//! for bit with the single-core `Prepared::run`.
//!
//! Two outputs: the human-readable report on the semihosting console, and the defmt log (`log`:
//! frames in the host file `defmt.frames`, decoded by `defmt-print -e <elf>`), which carries
//! the lines `cargo make test-baremetal` checks: one summary per family, one line per family
//! and call on four cores, a `qgemm::Error` logged through its `defmt::Format`, the verdict.
//! The exit code goes through semihosting: 0 only when every kernel that the CPU supports
//! agrees and every multi-core call is bit-identical; any mismatch, error, panic or CPU
//! exception exits non-zero.
#![no_std]
#![no_main]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

use core::arch::asm;
use core::hint::black_box;
use core::panic::PanicInfo;

mod float;
mod log;
mod multicore;

use aarch64_rt::{ExceptionHandlers, InitialPagetable, RegisterStateRef, entry, exception_handlers, initial_pagetable};
use half::{bf16, f16};
use qgemm::op::{Linear, Operator};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi4c32pscalef16::raw_block_bytes;
use qgemm::rhs::qsu2cxp::DEFAULT_LUT;
use qgemm::rhs::{Int4Encoding, Int4Source};
use qgemm::{
    Clamp, CpuFeatures, Element, Family, Kernel, MatmulArgs, Packing, Tier, bf16_qai8dxp_qsi4c32p,
    bf16_qai8dxp_qsi4cxp, f16_bf16p_bf16p, f16_f16_f16p, f16_qai8dxp_qsi4cxp, f16_qai8dxp_qsi8cxp,
    f16_qsi8d32p_qai4c32p, f32_bf16p_bf16p, f32_f32_f32p, qai8dxp_qsi4c32p, qai8dxp_qsi4cxp, qai8dxp_qsi8cxp,
    qai8dxp_qsu2cxp, qsi8d32p_qai4c32p, qsi8d32p_qsi4c32p,
};
use semihosting::{eprintln, println};

// ---------------------------------------------------------------------------------------------
// Boot: page table, exceptions, entry.

/// Level-1 block descriptor bits (4 KiB granule, 39-bit VA: the root table maps 1 GiB blocks).
const PTE_VALID: usize = 1 << 0;
/// `AttrIndx` = 0: `MAIR_EL1` attribute 0, Device-nGnRE in aarch64-rt's `DEFAULT_MAIR`.
const PTE_ATTR_DEVICE: usize = 0 << 2;
/// `AttrIndx` = 1: Normal write-back cacheable in `DEFAULT_MAIR`.
const PTE_ATTR_NORMAL: usize = 1 << 2;
const PTE_INNER_SHAREABLE: usize = 3 << 8;
const PTE_ACCESSED: usize = 1 << 10;
const PTE_PXN: usize = 1 << 53;
const PTE_UXN: usize = 1 << 54;
const DEVICE_BLOCK: usize = PTE_VALID | PTE_ATTR_DEVICE | PTE_ACCESSED | PTE_PXN | PTE_UXN;
const NORMAL_BLOCK: usize = PTE_VALID | PTE_ATTR_NORMAL | PTE_INNER_SHAREABLE | PTE_ACCESSED;

initial_pagetable!({
    let mut idmap = [0; 512];
    // 0..1 GiB: flash, GIC, UART and the other devices of `virt`.
    idmap[0] = DEVICE_BLOCK;
    // 1..2 GiB: RAM (the image, its static buffers and the boot stack).
    idmap[1] = NORMAL_BLOCK | 0x4000_0000;
    InitialPagetable(idmap)
});

exception_handlers!(Exceptions);

struct Exceptions;

impl ExceptionHandlers for Exceptions {
    extern "C" fn sync_current(register_state: RegisterStateRef) {
        let esr: u64;
        // SAFETY: reading ESR_EL1 at EL1 has no side effect.
        unsafe { asm!("mrs {}, esr_el1", out(reg) esr, options(nomem, nostack, preserves_flags)) };
        // EC 0b000000 is an undefined instruction: a kernel ran on a CPU without its feature.
        panic!(
            "synchronous exception at EL1: ESR_EL1 = {esr:#x} (EC {:#x}), ELR_EL1 = {:#x}",
            esr >> 26,
            register_state.elr
        );
    }
}

entry!(main);

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    eprintln!("PANIC: {info}");
    semihosting::process::exit(101)
}

// ---------------------------------------------------------------------------------------------
// Stack high-water measurement.

unsafe extern "C" {
    /// Lowest address of the boot stack (aarch64-rt's `image.ld`).
    static boot_stack_begin: u8;
}

const PAINT: u64 = 0x5a5a_c0de_5a5a_c0de;

fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads SP; no memory access.
    unsafe { asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// Calls `f(ctx)` and returns its result with the bytes of stack the call used below the
/// caller's stack pointer: the free stack is painted first and scanned afterwards.
#[inline(never)]
fn measured<C, R>(f: fn(&mut C) -> R, ctx: &mut C) -> (R, usize) {
    let begin = (&raw const boot_stack_begin) as usize;
    // Everything below SP is free (AArch64 has no red zone) and the frame of this function is
    // above it. Leave 64 bytes of slack below SP.
    let top = (stack_pointer() - 64) & !7;
    let mut p = begin;
    while p < top {
        // SAFETY: `[begin, top)` is the unused part of the boot stack, mapped normal RAM that
        // nothing references.
        unsafe { core::ptr::write_volatile(p as *mut u64, PAINT) };
        p += 8;
    }
    // Through `black_box` the callee cannot be inlined into this frame.
    let f = black_box(f);
    let r = f(ctx);
    let mut low = begin;
    // SAFETY: as above; the callee has returned, the region is free again.
    while low < top && unsafe { core::ptr::read_volatile(low as *const u64) } == PAINT {
        low += 8;
    }
    assert!(low > begin, "boot stack overflowed into its last word");
    (r, top + 64 - low)
}

// ---------------------------------------------------------------------------------------------
// Fixed inputs and static buffers.

/// One problem: `m x n` output over depth `k`; `bl` is the block length the per-block families
/// use (0: the shape is for per-channel families only).
#[derive(Clone, Copy)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
    bl: usize,
    tight_clamp: bool,
}

const fn shape(m: usize, n: usize, k: usize, bl: usize, tight_clamp: bool) -> Shape {
    Shape { m, n, k, bl, tight_clamp }
}

const SHAPES: [Shape; 6] = [
    // Decode (GEMV), `n` and `k` not multiples of the tile or of 32.
    shape(1, 20, 72, 0, false),
    // Odd everything.
    shape(7, 13, 33, 0, false),
    // Prefill, tile multiples, blocks of 64.
    shape(16, 32, 256, 64, false),
    // Clamp active on part of the output, blocks of 32.
    shape(5, 24, 128, 32, true),
    // Odd `m` and `n`, blocks of 32.
    shape(3, 9, 64, 32, false),
    // Decode, blocks of 32.
    shape(1, 12, 96, 32, false),
];

const MAX_M: usize = 16;
/// 64: the multi-core calls' `n` (the kernel checks' shapes stay within 32).
const MAX_N: usize = 64;
const MAX_K: usize = 256;
/// Most blocks per channel (`k / bl`).
const MAX_NB: usize = 8;
/// Bytes of one raw `Q4_0`-style block of 32 (`2 + 32 / 2`), the largest per depth.
const Q4_0_BLOCK: usize = 18;
/// Output canary: elements past `m * n` must keep this bit pattern (its low 16 bits for the
/// f16 and bf16 outputs).
const CANARY: u32 = 0x7fa5_a5a5;
const CANARY_LEN: usize = 16;
/// Bytes of each packed buffer: the float formats are the largest (`f32p16`: 32 columns of
/// `4 + 4 * 256` bytes for the 16 x 32 x 256 shape, 128 of `4 + 4 * 64` for the float multi-core
/// calls).
const PACKED_CAP: usize = 48 * 1024;

/// The raw inputs of one shape. Every family reads the part its format needs.
struct Inputs {
    /// `m x k` f32 activations, dense rows.
    lhs: [f32; MAX_M * MAX_K],
    /// The same activations rounded to f16 and to bf16 (the f16/bf16 families' input).
    lhs_f16: [f16; MAX_M * MAX_K],
    lhs_bf16: [bf16; MAX_M * MAX_K],
    /// Raw int4 weights, NxK, signed nibbles, two per byte (`n` rows of `ceil(k/2)` bytes).
    nibbles: [u8; MAX_N * MAX_K / 2],
    /// Raw int8 weights, NxK (`n` rows of `k` values).
    int8: [i8; MAX_N * MAX_K],
    /// Per-channel f32 scales.
    scales: [f32; MAX_N],
    /// Per-block bf16 scales, `k / bl` per channel, dense.
    block_scales: [bf16; MAX_N * MAX_NB],
    /// Per-block f32 scales and offsets of the asymmetric blocks, `k / bl` per channel, dense.
    block_scales_f32: [f32; MAX_N * MAX_NB],
    block_zeros: [f32; MAX_N * MAX_NB],
    /// GGML `Q4_0`-style blocks: `n` rows of `k / bl` blocks (f16 scale, `bl / 2` bytes).
    q4_0: [u8; MAX_N * MAX_K / 32 * Q4_0_BLOCK],
    /// Per-channel f32 bias.
    bias: [f32; MAX_N],
    /// The look-up table of the 2-bit codes (which are the first `n * k / 4` bytes of
    /// `nibbles`): given to the packer and to every kernel call ([`LUTS`]).
    lut: [i32; 4],
}

const DST_LEN: usize = MAX_M * MAX_N + CANARY_LEN;

/// One output buffer per output type (with room for the canary).
struct Outputs {
    f32: [f32; DST_LEN],
    f16: [f16; DST_LEN],
    bf16: [bf16; DST_LEN],
}

/// An output element type and its buffer in [`Outputs`].
trait Out: Element {
    fn buffer(o: &mut Outputs) -> &mut [Self; DST_LEN];
}

impl Out for f32 {
    fn buffer(o: &mut Outputs) -> &mut [f32; DST_LEN] {
        &mut o.f32
    }
}

impl Out for f16 {
    fn buffer(o: &mut Outputs) -> &mut [f16; DST_LEN] {
        &mut o.f16
    }
}

impl Out for bf16 {
    fn buffer(o: &mut Outputs) -> &mut [bf16; DST_LEN] {
        &mut o.bf16
    }
}

/// Every buffer the check uses. One static instance; `main` is its only user.
struct Buffers {
    inp: Inputs,
    lhs_packed: [u8; PACKED_CAP],
    rhs_packed: [u8; PACKED_CAP],
    dst: Outputs,
    /// The float families' activations, weights and bias.
    float: float::FloatInputs,
    /// The scalar kernel's output bits.
    reference: [u32; MAX_M * MAX_N],
}

static mut BUFFERS: Buffers = Buffers {
    inp: Inputs {
        lhs: [0.0; MAX_M * MAX_K],
        lhs_f16: [f16::ZERO; MAX_M * MAX_K],
        lhs_bf16: [bf16::ZERO; MAX_M * MAX_K],
        nibbles: [0; MAX_N * MAX_K / 2],
        int8: [0; MAX_N * MAX_K],
        scales: [0.0; MAX_N],
        block_scales: [bf16::ZERO; MAX_N * MAX_NB],
        block_scales_f32: [0.0; MAX_N * MAX_NB],
        block_zeros: [0.0; MAX_N * MAX_NB],
        q4_0: [0; MAX_N * MAX_K / 32 * Q4_0_BLOCK],
        bias: [0.0; MAX_N],
        lut: DEFAULT_LUT,
    },
    lhs_packed: [0; PACKED_CAP],
    rhs_packed: [0; PACKED_CAP],
    dst: Outputs { f32: [0.0; DST_LEN], f16: [f16::ZERO; DST_LEN], bf16: [bf16::ZERO; DST_LEN] },
    float: float::FloatInputs::ZERO,
    reference: [0; MAX_M * MAX_N],
};

#[path = "../../../examples/support/splitmix.rs"]
mod splitmix;
use splitmix::SplitMix64 as Rng;

/// The 2-bit family's tables, the one of a shape picked by its seed (`seed % 3`): KleidiAI's
/// custom-table golden one, the default, both ends of the accepted range. The kernel checks'
/// seeds give each table to two of the six shapes; the multi-core seeds give the two non-default
/// ones (a part that dropped the layer's table would differ from `Prepared::run`).
const LUTS: [[i32; 4]; 3] = [[-3, -1, 1, 3], DEFAULT_LUT, [-64, 63, 0, -1]];

/// Fills the raw inputs of `s` deterministically from `seed` (every format's inputs).
fn fill_inputs(inp: &mut Inputs, s: &Shape, seed: u64) {
    inp.lut = LUTS[(seed % 3) as usize];
    let mut rng = Rng(seed);
    for ((x, h), b) in inp.lhs[..s.m * s.k].iter_mut().zip(&mut inp.lhs_f16).zip(&mut inp.lhs_bf16) {
        *x = rng.f32(-3.0, 3.0);
        *h = f16::from_f32(*x);
        *b = bf16::from_f32(*x);
    }
    for w in &mut inp.nibbles[..s.n * s.k.div_ceil(2)] {
        *w = rng.next_u64() as u8;
    }
    for w in &mut inp.int8[..s.n * s.k] {
        *w = rng.next_u64() as i8;
    }
    for (sc, bi) in inp.scales[..s.n].iter_mut().zip(&mut inp.bias[..s.n]) {
        *sc = rng.f32(0.001, 0.05);
        *bi = rng.f32(-1.0, 1.0);
    }
    if let Some(nb) = s.k.checked_div(s.bl) {
        for sc in &mut inp.block_scales[..s.n * nb] {
            *sc = bf16::from_f32(rng.f32(0.001, 0.05));
        }
        for (sc, z) in inp.block_scales_f32[..s.n * nb].iter_mut().zip(&mut inp.block_zeros) {
            *sc = rng.f32(0.001, 0.05);
            *z = rng.f32(-0.2, 0.2);
        }
        let block = raw_block_bytes(s.bl);
        for b in inp.q4_0[..s.n * nb * block].chunks_exact_mut(block) {
            b[..2].copy_from_slice(&f16::from_f32(rng.f32(0.001, 0.05)).to_le_bytes());
            for byte in &mut b[2..] {
                *byte = rng.next_u64() as u8;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Families.

/// What the check needs from a family beyond [`Family`]: its packers and its `select`.
/// A new family implements this and adds one line to `main`.
trait Checked: Family<Dst: Out, Lhs = u8, Params: TableParams> {
    /// Quantizes and packs the `m x k` activations of `inp` (dense rows) for `p`.
    fn pack_lhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()>;
    /// Packs the `n` weight channels of `inp` for `p`.
    fn pack_rhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()>;
    /// The family's `select`.
    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self>;
}

/// The family parameters of a run on the check's weights: the 2-bit family's look-up table
/// (the one its weights were packed with), nothing for the others.
trait TableParams: Sized {
    fn from_table(lut: [i32; 4]) -> Self;
}

impl TableParams for () {
    fn from_table(_lut: [i32; 4]) {}
}

impl TableParams for qgemm::Lut {
    fn from_table(lut: [i32; 4]) -> qgemm::Lut {
        qgemm::Lut(lut)
    }
}

fn pack_qai8dxp(p: &Packing, s: &Shape, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
    qgemm::lhs::qai8dxp::quantize_pack(p, s.m, s.k, 0, &inp.lhs[..s.m * s.k], s.k, out)
}

fn nibbles<'a>(s: &Shape, inp: &'a Inputs) -> Int4Source<'a> {
    Int4Source::nxk(&inp.nibbles[..s.n * s.k.div_ceil(2)], s.k, Int4Encoding::Signed)
}

impl Checked for qai8dxp_qsi4cxp::Qai8dxpQsi4cxp {
    fn pack_lhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        pack_qai8dxp(p, s, inp, out)
    }

    fn pack_rhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        let (n, k) = (s.n, s.k);
        qgemm::rhs::qsi4cxp::pack(p, n, k, &nibbles(s, inp), &inp.scales[..n], Some(&inp.bias[..n]), out)
    }

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qai8dxp_qsi4cxp::select(cpu, m)
    }
}

impl Checked for qai8dxp_qsi8cxp::Qai8dxpQsi8cxp {
    fn pack_lhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        pack_qai8dxp(p, s, inp, out)
    }

    fn pack_rhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        let (n, k) = (s.n, s.k);
        let src = qgemm::rhs::qsi8cxp::Int8Source::nxk(&inp.int8[..n * k], k);
        qgemm::rhs::qsi8cxp::pack(p, n, k, &src, &inp.scales[..n], Some(&inp.bias[..n]), out)
    }

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qai8dxp_qsi8cxp::select(cpu, m)
    }
}

impl Checked for qai8dxp_qsi4c32p::Qai8dxpQsi4c32p {
    fn pack_lhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        pack_qai8dxp(p, s, inp, out)
    }

    fn pack_rhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        let (n, k, nb) = (s.n, s.k, s.k / bl);
        let scales = BlockScales::dense(&inp.block_scales[..n * nb], nb);
        qgemm::rhs::qsi4c32p::pack(p, n, k, bl, &nibbles(s, inp), &scales, Some(&inp.bias[..n]), out)
    }

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qai8dxp_qsi4c32p::select(cpu, m)
    }
}

impl Checked for qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p {
    fn pack_lhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        qgemm::lhs::qsi8d32p::quantize_pack(p, s.m, s.k, bl, 0, &inp.lhs[..s.m * s.k], s.k, out)
    }

    fn pack_rhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        let row = s.k / bl * raw_block_bytes(bl);
        qgemm::rhs::qsi4c32pscalef16::pack(p, s.n, s.k, bl, &inp.q4_0[..s.n * row], row, out)
    }

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qsi8d32p_qsi4c32p::select(cpu, m)
    }
}

/// The asymmetric int4 families (`qai4c32p` weights, `qsi8d32pscalef32` activations from the
/// `$lhs` input by `$packer`).
macro_rules! qai4c32p_checked {
    ($($family:ident in $module:ident: $packer:ident($lhs:ident);)+) => {$(
        impl Checked for $module::$family {
            fn pack_lhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
                qgemm::lhs::qsi8d32pscalef32::$packer(p, s.m, s.k, bl, 0, &inp.$lhs[..s.m * s.k], s.k, out)
            }

            fn pack_rhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
                let (n, k, nb) = (s.n, s.k, s.k / bl);
                let (zero, scale) = (&inp.block_zeros[..n * nb], &inp.block_scales_f32[..n * nb]);
                let w = &inp.nibbles[..n * k / 2];
                qgemm::rhs::qai4c32p::pack(p, n, k, bl, w, k / 2, zero, scale, Some(&inp.bias[..n]), out)
            }

            fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
                $module::select(cpu, m)
            }
        }
    )+};
}

qai4c32p_checked! {
    Qsi8d32pQai4c32p in qsi8d32p_qai4c32p: quantize_pack(lhs);
    F16Qsi8d32pQai4c32p in f16_qsi8d32p_qai4c32p: quantize_pack_f16(lhs_f16);
}

/// The 2-bit family: the `qai8dxp` activations, the first `n * k / 4` bytes of the int4 input
/// as codes (four per byte) with the per-channel scales, the bias and the shape's table.
impl Checked for qai8dxp_qsu2cxp::Qai8dxpQsu2cxp {
    fn pack_lhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        pack_qai8dxp(p, s, inp, out)
    }

    fn pack_rhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
        let (n, k) = (s.n, s.k);
        let (codes, scale, bias) = (&inp.nibbles[..n * k / 4], &inp.scales[..n], Some(&inp.bias[..n]));
        qgemm::rhs::qsu2cxp::pack(p, n, k, codes, k / 4, scale, bias, Some(&inp.lut), out)
    }

    fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
        qai8dxp_qsu2cxp::select(cpu, m)
    }
}

/// The f16/bf16 families: their own LHS packer, the RHS packer of the f32 family with the same
/// weights.
macro_rules! half_checked {
    ($($family:ident in $module:ident: $packer:ident($lhs:ident), rhs of $twin:ty;)+) => {$(
        impl Checked for $module::$family {
            fn pack_lhs(p: &Packing, s: &Shape, _bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
                qgemm::lhs::qai8dxp::$packer(p, s.m, s.k, 0, &inp.$lhs[..s.m * s.k], s.k, out)
            }

            fn pack_rhs(p: &Packing, s: &Shape, bl: usize, inp: &Inputs, out: &mut [u8]) -> qgemm::Result<()> {
                <$twin as Checked>::pack_rhs(p, s, bl, inp, out)
            }

            fn select(cpu: &CpuFeatures, m: usize) -> Kernel<Self> {
                $module::select(cpu, m)
            }
        }
    )+};
}

half_checked! {
    F16Qai8dxpQsi4cxp in f16_qai8dxp_qsi4cxp: quantize_pack_f16(lhs_f16), rhs of qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    F16Qai8dxpQsi8cxp in f16_qai8dxp_qsi8cxp: quantize_pack_f16(lhs_f16), rhs of qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
    Bf16Qai8dxpQsi4cxp in bf16_qai8dxp_qsi4cxp: quantize_pack_bf16(lhs_bf16), rhs of qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    Bf16Qai8dxpQsi4c32p in bf16_qai8dxp_qsi4c32p: quantize_pack_bf16(lhs_bf16), rhs of qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
}

/// Totals over all families.
#[derive(Default)]
struct Tally {
    kernels: usize,
    ran: usize,
    skipped: usize,
    failed: usize,
    /// Largest stack use of one `Kernel::run` call per tier ([`Tier::ALL`] order),
    /// and the kernel that used it.
    run_stack: [(usize, &'static str); Tier::ALL.len()],
    /// Largest stack use of one LHS packer call.
    lhs_pack_stack: usize,
    /// Largest stack use of one RHS packer call.
    rhs_pack_stack: usize,
}

/// Arguments of one measured call (plain `fn` pointers cannot capture).
struct Call<'a, F: Family> {
    kernel: &'a Kernel<F>,
    s: Shape,
    bl: usize,
    args: MatmulArgs<F::Params>,
    b: &'a mut Buffers,
}

fn call_pack_lhs<F: Checked>(c: &mut Call<'_, F>) -> qgemm::Result<()> {
    let p = c.kernel.packing();
    F::pack_lhs(&p, &c.s, c.bl, &c.b.inp, &mut c.b.lhs_packed)
}

fn call_pack_rhs<F: Checked>(c: &mut Call<'_, F>) -> qgemm::Result<()> {
    let p = c.kernel.packing();
    F::pack_rhs(&p, &c.s, c.bl, &c.b.inp, &mut c.b.rhs_packed)
}

fn call_run<F: Family<Dst: Out, Lhs = u8>>(c: &mut Call<'_, F>) -> qgemm::Result<()> {
    let b = &mut *c.b;
    c.kernel.run(&b.lhs_packed, &b.rhs_packed, F::Dst::buffer(&mut b.dst), &c.args)
}

/// The scalar kernel of the catalogue that consumes `p`.
fn scalar_for<F: Family>(p: &Packing) -> Option<Kernel<F>> {
    let none = CpuFeatures::NONE;
    F::kernels().iter().find(|k| k.tier() == Tier::Scalar && k.packing_on(&none) == Some(*p))?.resolve(&none).ok()
}

/// Packs the inputs of `s` for `kernel` and runs it into `b.dst` (with a canary tail).
fn pack_and_run<F: Checked>(
    kernel: &Kernel<F>,
    s: Shape,
    bl: usize,
    b: &mut Buffers,
    t: &mut Tally,
) -> qgemm::Result<()> {
    let clamp = if s.tight_clamp { Clamp::new(-0.25, 0.3)? } else { Clamp::NONE };
    // The 2-bit family's kernels take the table its weights were packed with (the others
    // ignore it).
    let args = MatmulArgs::new(s.m, s.n, s.k)
        .with_block_len(bl)
        .with_clamp(clamp)
        .with_params(F::Params::from_table(b.inp.lut));
    let mut c = Call { kernel, s, bl, args, b };
    let (r, used) = measured(call_pack_lhs::<F>, &mut c);
    r?;
    t.lhs_pack_stack = t.lhs_pack_stack.max(used);
    let (r, used) = measured(call_pack_rhs::<F>, &mut c);
    r?;
    t.rhs_pack_stack = t.rhs_pack_stack.max(used);
    F::Dst::buffer(&mut c.b.dst).fill(F::Dst::from_bits32(CANARY));
    let (r, used) = measured(call_run::<F>, &mut c);
    r?;
    let slot = &mut t.run_stack[Tier::ALL.iter().position(|&x| x == kernel.tier()).unwrap_or(0)];
    if used > slot.0 {
        *slot = (used, kernel.name());
    }
    Ok(())
}

/// What one kernel did on one shape.
enum Outcome {
    Agree,
    /// The shape does not fit the family (no block length).
    NotApplicable,
    /// Index of the first differing element, got bits, want bits.
    Differ(usize, u32, u32),
    /// The output canary past `m * n` was overwritten.
    Overrun,
    Error(qgemm::Error),
}

fn check_shape<F: Checked>(
    kernel: &Kernel<F>,
    scalar: &Kernel<F>,
    s: Shape,
    seed: u64,
    b: &mut Buffers,
    t: &mut Tally,
) -> Outcome {
    // Per-block families run the shapes that have a block length, the others ignore it.
    let bl = match (F::BLOCKED, s.bl) {
        (false, _) => 0,
        (true, 0) => return Outcome::NotApplicable,
        (true, bl) => bl,
    };
    fill_inputs(&mut b.inp, &s, seed);
    let mn = s.m * s.n;
    if let Err(e) = pack_and_run(scalar, s, bl, b, t) {
        return Outcome::Error(e);
    }
    for (r, v) in b.reference[..mn].iter_mut().zip(F::Dst::buffer(&mut b.dst).iter()) {
        *r = v.to_bits32();
    }
    if let Err(e) = pack_and_run(kernel, s, bl, b, t) {
        return Outcome::Error(e);
    }
    let dst = F::Dst::buffer(&mut b.dst);
    let canary = F::Dst::from_bits32(CANARY).to_bits32();
    if dst[mn..mn + CANARY_LEN].iter().any(|v| v.to_bits32() != canary) {
        return Outcome::Overrun;
    }
    match (0..mn).find(|&i| dst[i].to_bits32() != b.reference[i]) {
        Some(i) => Outcome::Differ(i, dst[i].to_bits32(), b.reference[i]),
        None => Outcome::Agree,
    }
}

/// Runs every kernel of family `F` on every shape against the scalar kernel of its packing.
fn check_family<F: Checked>(cpu: CpuFeatures, b: &mut Buffers, t: &mut Tally) {
    println!("family {}: {} kernels", F::NAME, F::kernels().len());
    let before = (t.ran, t.skipped, t.failed);
    for d in F::kernels() {
        t.kernels += 1;
        let kernel = match d.resolve(&cpu) {
            Ok(k) => k,
            Err(e) => {
                t.skipped += 1;
                println!("  skipped  {:8} {} ({e})", d.tier().name(), d.name());
                continue;
            }
        };
        let Some(scalar) = scalar_for::<F>(&kernel.packing()) else {
            t.failed += 1;
            println!(
                "  FAIL     {:8} {}: no scalar kernel with packing {:?}",
                kernel.tier().name(),
                kernel.name(),
                kernel.packing()
            );
            continue;
        };
        t.ran += 1;
        let (tier, name) = (kernel.tier().name(), kernel.name());
        let (mut bad, mut shapes) = (false, 0);
        for (i, s) in SHAPES.iter().enumerate() {
            // `k` rounded up to the family's granule (the 2-bit family: 72 -> 96, 33 -> 64).
            let s = &Shape { k: s.k.next_multiple_of(F::K_MULTIPLE), ..*s };
            let seed = 0x5eed_0000 + i as u64;
            let (m, n, k) = (s.m, s.n, s.k);
            match check_shape(&kernel, &scalar, *s, seed, b, t) {
                Outcome::Agree => {
                    shapes += 1;
                    continue;
                }
                Outcome::NotApplicable => continue,
                Outcome::Differ(at, got, want) => println!(
                    "  FAIL     {tier:8} {name} m={m} n={n} k={k}: element {at} = {got:#010x}, scalar {want:#010x}"
                ),
                Outcome::Overrun => {
                    println!("  FAIL     {tier:8} {name} m={m} n={n} k={k}: wrote past the output")
                }
                Outcome::Error(e) => println!("  FAIL     {tier:8} {name} m={m} n={n} k={k}: {e}"),
            }
            bad = true;
        }
        if bad {
            t.failed += 1;
        } else if kernel.tier() == Tier::Scalar {
            println!("  ran      {tier:8} {name} ({shapes} shapes; reference of its packing)");
        } else {
            println!("  agree    {tier:8} {name} ({shapes} shapes, bit-exact vs {})", scalar.name());
        }
    }
    for m in [1, 16] {
        let k = F::select(&cpu, m);
        // `select` must pick a kernel the CPU has, of the best tier among the available kernels
        // that consume the same packed RHS and have the same kind of LHS tile (GEMV `mr = 1` or
        // GEMM `mr > 1`).
        let gemv = k.packing().mr == 1;
        let best = F::kernels()
            .iter()
            .filter_map(|c| c.resolve(&cpu).ok())
            .filter(|c| (c.packing().mr == 1) == gemv && c.rhs_packing() == k.rhs_packing())
            .map(|c| c.tier())
            .max();
        let ok = k.descriptor().is_available(&cpu) && best == Some(k.tier());
        if !ok {
            t.failed += 1;
        }
        let verdict = if ok { "" } else { "  FAIL: not the best available tier" };
        println!("  select(m={m:2}) -> {} [{}]{verdict}", k.name(), k.tier().name());
    }
    log_family(F::NAME, F::kernels().len(), before, t);
}

/// The defmt summary line of one family: its kernels, and what of `t` changed since `before`
/// (`ran`, `skipped`, `failed` when the family started).
fn log_family(name: &str, kernels: usize, before: (usize, usize, usize), t: &Tally) {
    let (ran, skipped, failed) = (t.ran - before.0, t.skipped - before.1, t.failed - before.2);
    defmt::info!(
        "family {=str}: {=usize} kernels, {=usize} ran, {=usize} skipped, {=usize} failed",
        name,
        kernels,
        ran,
        skipped,
        failed
    );
}

// ---------------------------------------------------------------------------------------------
// Multi-core: the parts of one `op::Linear` call on four cores.

/// What the multi-core check needs from a family: its `Linear` over the check's inputs.
trait Layered: Operator<Dst: Out> {
    /// Packs the `n x k` weights of `inp` (blocks of `bl` for the per-block families) into `buf`.
    fn layer<'w>(s: &Shape, bl: usize, inp: &Inputs, buf: &'w mut [u8]) -> qgemm::Result<Linear<'w, Self>>;
    /// The activations in the family's source type (`m x k`, dense rows, and more).
    fn x(inp: &Inputs) -> &[Self::Src];
}

/// `Layered` for families with per-channel int4 (`Int4Source`) or int8 (`Int8Source`) weights.
macro_rules! layered_per_channel {
    ($($family:ident in $module:ident: $lhs:ident, $source:ident;)+) => {$(
        impl Layered for $module::$family {
            fn layer<'w>(s: &Shape, _bl: usize, inp: &Inputs, buf: &'w mut [u8]) -> qgemm::Result<Linear<'w, Self>> {
                let (n, k) = (s.n, s.k);
                Linear::<Self>::pack(n, k, &$source(s, inp), &inp.scales[..n], Some(&inp.bias[..n]), buf)
            }

            fn x(inp: &Inputs) -> &[Self::Src] {
                &inp.$lhs
            }
        }
    )+};
}

fn int8<'a>(s: &Shape, inp: &'a Inputs) -> qgemm::rhs::qsi8cxp::Int8Source<'a> {
    qgemm::rhs::qsi8cxp::Int8Source::nxk(&inp.int8[..s.n * s.k], s.k)
}

layered_per_channel! {
    Qai8dxpQsi4cxp in qai8dxp_qsi4cxp: lhs, nibbles;
    Qai8dxpQsi8cxp in qai8dxp_qsi8cxp: lhs, int8;
    F16Qai8dxpQsi4cxp in f16_qai8dxp_qsi4cxp: lhs_f16, nibbles;
    F16Qai8dxpQsi8cxp in f16_qai8dxp_qsi8cxp: lhs_f16, int8;
    Bf16Qai8dxpQsi4cxp in bf16_qai8dxp_qsi4cxp: lhs_bf16, nibbles;
}

/// `Layered` for the families with `qsi4c32p` weights (int4, bf16 block scales).
macro_rules! layered_qsi4c32p {
    ($($family:ident in $module:ident: $lhs:ident;)+) => {$(
        impl Layered for $module::$family {
            fn layer<'w>(s: &Shape, bl: usize, inp: &Inputs, buf: &'w mut [u8]) -> qgemm::Result<Linear<'w, Self>> {
                let (n, k, nb) = (s.n, s.k, s.k / bl);
                let scales = BlockScales::dense(&inp.block_scales[..n * nb], nb);
                Linear::<Self>::pack(n, k, bl, &nibbles(s, inp), &scales, Some(&inp.bias[..n]), buf)
            }

            fn x(inp: &Inputs) -> &[Self::Src] {
                &inp.$lhs
            }
        }
    )+};
}

layered_qsi4c32p! {
    Qai8dxpQsi4c32p in qai8dxp_qsi4c32p: lhs;
    Bf16Qai8dxpQsi4c32p in bf16_qai8dxp_qsi4c32p: lhs_bf16;
}

/// `Layered` for the 2-bit family: `Linear::pack` with the shape's table, which the layer keeps
/// and hands to `Prepared::run` and to every part.
impl Layered for qai8dxp_qsu2cxp::Qai8dxpQsu2cxp {
    fn layer<'w>(s: &Shape, _bl: usize, inp: &Inputs, buf: &'w mut [u8]) -> qgemm::Result<Linear<'w, Self>> {
        let (n, k) = (s.n, s.k);
        let (codes, scale, bias) = (&inp.nibbles[..n * k / 4], &inp.scales[..n], Some(&inp.bias[..n]));
        Linear::<Self>::pack(n, k, codes, k / 4, scale, bias, Some(&inp.lut), buf)
    }

    fn x(inp: &Inputs) -> &[f32] {
        &inp.lhs
    }
}

/// `Layered` for the asymmetric int4 families (`qai4c32p` weights).
macro_rules! layered_qai4c32p {
    ($($family:ident in $module:ident: $lhs:ident;)+) => {$(
        impl Layered for $module::$family {
            fn layer<'w>(s: &Shape, bl: usize, inp: &Inputs, buf: &'w mut [u8]) -> qgemm::Result<Linear<'w, Self>> {
                let (n, k, nb) = (s.n, s.k, s.k / bl);
                let (zero, scale) = (&inp.block_zeros[..n * nb], &inp.block_scales_f32[..n * nb]);
                let w = &inp.nibbles[..n * k / 2];
                Linear::<Self>::pack(n, k, bl, w, k / 2, zero, scale, Some(&inp.bias[..n]), buf)
            }

            fn x(inp: &Inputs) -> &[Self::Src] {
                &inp.$lhs
            }
        }
    )+};
}

layered_qai4c32p! {
    Qsi8d32pQai4c32p in qsi8d32p_qai4c32p: lhs;
    F16Qsi8d32pQai4c32p in f16_qsi8d32p_qai4c32p: lhs_f16;
}

impl Layered for qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p {
    fn layer<'w>(s: &Shape, bl: usize, inp: &Inputs, buf: &'w mut [u8]) -> qgemm::Result<Linear<'w, Self>> {
        let row = s.k / bl * raw_block_bytes(bl);
        Linear::<Self>::pack(s.n, s.k, bl, &inp.q4_0[..s.n * row], row, buf)
    }

    fn x(inp: &Inputs) -> &[f32] {
        &inp.lhs
    }
}

/// The multi-core calls: decode (GEMV kernels, the parts are column bands) and prefill (GEMM
/// kernels, `m` not a multiple of the tile), both with `n` and `k` large enough for four parts
/// on every kernel's steps, blocks of 32 for the per-block families.
const MULTICORE_SHAPES: [Shape; 2] = [shape(1, 64, 128, 32, false), shape(6, 64, 128, 32, true)];

/// Runs one `Linear` call of `F` per shape of [`MULTICORE_SHAPES`] in [`multicore::CORES`] parts,
/// part `i` on core `i`, and compares the assembled output bit for bit with `Prepared::run` on
/// one core. Logs one line per call; returns the number of failed calls.
fn multicore_family<F: Layered>(cpu: CpuFeatures, b: &mut Buffers) -> usize {
    let mut failed = 0;
    for (i, s) in MULTICORE_SHAPES.iter().enumerate() {
        if let Err(e) = multicore_call::<F>(cpu, s, 0x3c0e_0000 + i as u64, b) {
            println!("multicore {} m={}: FAIL: {e}", F::NAME, s.m);
            defmt::error!("multicore {=str} m={=usize}: FAIL: {}", F::NAME, s.m, e);
            failed += 1;
        }
    }
    failed
}

/// Why a multi-core call failed.
enum McError {
    Lib(qgemm::Error),
    Parts(usize),
    Differ(usize, u32, u32),
    Overrun,
    WrongCore(usize, u64),
}

impl From<qgemm::Error> for McError {
    fn from(e: qgemm::Error) -> Self {
        McError::Lib(e)
    }
}

impl core::fmt::Display for McError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            McError::Lib(e) => write!(f, "{e}"),
            McError::Parts(p) => write!(f, "{p} parts, not one per core"),
            McError::Differ(at, got, want) => write!(f, "element {at} = {got:#010x}, single-core run {want:#010x}"),
            McError::Overrun => f.write_str("a part wrote past the output"),
            McError::WrongCore(part, mpidr) => write!(f, "part {part} ran on the core with MPIDR {mpidr:#x}"),
        }
    }
}

impl defmt::Format for McError {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self {
            McError::Lib(e) => defmt::write!(f, "{}", e),
            McError::Parts(p) => defmt::write!(f, "{=usize} parts, not one per core", p),
            McError::Differ(at, got, want) => {
                defmt::write!(f, "element {=usize} = {=u32:#x}, single-core run {=u32:#x}", at, got, want)
            }
            McError::Overrun => defmt::write!(f, "a part wrote past the output"),
            McError::WrongCore(part, mpidr) => {
                defmt::write!(f, "part {=usize} ran on the core with MPIDR {=u64:#x}", part, mpidr)
            }
        }
    }
}

fn multicore_call<F: Layered>(cpu: CpuFeatures, s: &Shape, seed: u64, b: &mut Buffers) -> Result<(), McError> {
    let bl = if F::BLOCKED { s.bl } else { 0 };
    fill_inputs(&mut b.inp, s, seed);
    let (m, mn) = (s.m, s.m * s.n);
    let layer = F::layer(s, bl, &b.inp, &mut b.rhs_packed)?;
    let clamp = if s.tight_clamp { Clamp::new(-0.25, 0.3)? } else { Clamp::NONE };
    let call = layer.prepare(&cpu, m, F::x(&b.inp), &mut b.lhs_packed)?.with_clamp(clamp);
    // The reference: the whole call on this core.
    let dst = F::Dst::buffer(&mut b.dst);
    call.run(&mut dst[..mn])?;
    for (r, v) in b.reference[..mn].iter_mut().zip(dst.iter()) {
        *r = v.to_bits32();
    }
    // The same call in parts on the four cores, into the output refilled with the canary.
    dst.fill(F::Dst::from_bits32(CANARY));
    let parts = call.parts(dst, multicore::CORES)?;
    if parts.len() != multicore::CORES {
        return Err(McError::Parts(parts.len()));
    }
    let rects: [qgemm::op::Rect; multicore::CORES] = core::array::from_fn(|i| parts[i].rect());
    check_cores(multicore::run_on_cores(parts))?;
    check_assembled(F::NAME, m, call.kernel().name(), &rects, dst, &b.reference[..mn])
}

/// Checks that part `i` ran on core `i` (`ran_on`: the MPIDR each part recorded).
fn check_cores(ran_on: [u64; multicore::CORES]) -> Result<(), McError> {
    match ran_on.iter().enumerate().find(|&(part, &mpidr)| mpidr != part as u64) {
        Some((part, &mpidr)) => Err(McError::WrongCore(part, mpidr)),
        None => Ok(()),
    }
}

/// Checks the output `dst` that the parts `rects` of one call of family `name` assembled: the
/// canary after `reference.len()` elements intact, the elements before it bit-identical to
/// `reference` (the same call on one core). Then logs the call and its parts.
fn check_assembled<D: Out>(
    name: &str,
    m: usize,
    kernel: &str,
    rects: &[qgemm::op::Rect],
    dst: &[D],
    reference: &[u32],
) -> Result<(), McError> {
    let mn = reference.len();
    let canary = D::from_bits32(CANARY).to_bits32();
    if dst[mn..mn + CANARY_LEN].iter().any(|v| v.to_bits32() != canary) {
        return Err(McError::Overrun);
    }
    if let Some(i) = (0..mn).find(|&i| dst[i].to_bits32() != reference[i]) {
        return Err(McError::Differ(i, dst[i].to_bits32(), reference[i]));
    }
    println!(
        "multicore {name} m={m}: {} cores parts={} ok, bit-identical to run ({kernel})",
        multicore::CORES,
        rects.len()
    );
    defmt::info!(
        "multicore {=str} m={=usize}: {=usize} cores parts={=usize} ok, bit-identical to run ({=str})",
        name,
        m,
        multicore::CORES,
        rects.len(),
        kernel
    );
    for (part, r) in rects.iter().enumerate() {
        defmt::info!("  part {=usize} on core {=usize}: {}", part, part, r);
    }
    Ok(())
}

/// A deliberately bad call: activations one element short. Its `qgemm::Error` is logged through
/// `defmt::Format` (the test checks the decoded line); true when the error is the expected one.
fn logged_error(cpu: CpuFeatures, b: &mut Buffers) -> bool {
    type F = qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
    let s = MULTICORE_SHAPES[1];
    fill_inputs(&mut b.inp, &s, 0xe770);
    let layer = match <F as Layered>::layer(&s, 0, &b.inp, &mut b.rhs_packed) {
        Ok(layer) => layer,
        Err(e) => {
            defmt::error!("error check: packing failed: {}", e);
            return false;
        }
    };
    let short = s.m * s.k - 1;
    match layer.prepare(&cpu, s.m, &b.inp.lhs[..short], &mut b.lhs_packed) {
        Err(e) => {
            println!("expected error from activations one element short: {e}");
            defmt::info!("expected error from activations one element short: {}", e);
            e == qgemm::Error::BufferTooShort { buffer: qgemm::error::Buffer::Lhs, given: short, needed: s.m * s.k }
        }
        Ok(_) => {
            defmt::error!("error check: a short activation buffer was accepted");
            false
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Main.

fn current_el() -> u64 {
    let el: u64;
    // SAFETY: reading CurrentEL has no side effect and is legal at EL1 and above.
    unsafe { asm!("mrs {}, CurrentEL", out(reg) el, options(nomem, nostack, preserves_flags)) };
    (el >> 2) & 3
}

fn main(_x0: u64, _x1: u64, _x2: u64, _x3: u64) -> ! {
    let el = current_el();
    println!("qgemm bare-metal check (aarch64-unknown-none, EL{el})");
    println!("defmt log: {:?} in QEMU's working directory (decode: defmt-print -e <elf>)", log::FRAMES_FILE);
    defmt::info!("qgemm bare-metal check (aarch64-unknown-none, EL{=u64})", el);
    if el != 1 {
        // EL1 is also what makes HVC the PSCI conduit (`multicore`).
        eprintln!("expected to boot at EL1 (QEMU virt without virtualization=on)");
        defmt::error!("expected to boot at EL1, not EL{=u64}", el);
        semihosting::process::exit(2);
    }
    // SAFETY: we run at EL1 (checked above), where MRS of the ID registers is always legal.
    let cpu = unsafe { CpuFeatures::from_id_registers() };
    println!("cpu features (ID registers): {cpu}");
    defmt::info!("cpu features (ID registers): {}", cpu);

    let buffers: *mut Buffers = &raw mut BUFFERS;
    // SAFETY: `main` runs once, on the boot core, and is the only code that touches BUFFERS
    // (the other cores only run the `Part`s `multicore_call` hands them, which borrow from this
    // reference): this is the one reference to it.
    let b = unsafe { &mut *buffers };
    let mut t = Tally::default();

    // One line per family.
    check_family::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>(cpu, b, &mut t);
    check_family::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>(cpu, b, &mut t);
    check_family::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>(cpu, b, &mut t);
    check_family::<qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>(cpu, b, &mut t);
    check_family::<f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>(cpu, b, &mut t);
    check_family::<f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>(cpu, b, &mut t);
    check_family::<bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>(cpu, b, &mut t);
    check_family::<bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>(cpu, b, &mut t);
    check_family::<qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>(cpu, b, &mut t);
    check_family::<f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>(cpu, b, &mut t);
    check_family::<qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>(cpu, b, &mut t);
    float::check_family::<f32_f32_f32p::F32F32F32p>(cpu, b, &mut t);
    float::check_family::<f16_f16_f16p::F16F16F16p>(cpu, b, &mut t);
    float::check_family::<f32_bf16p_bf16p::F32Bf16pBf16p>(cpu, b, &mut t);
    float::check_family::<f16_bf16p_bf16p::F16Bf16pBf16p>(cpu, b, &mut t);

    println!("stack high-water per call (bytes below the caller's SP, measured by stack painting):");
    for (tier, (bytes, name)) in Tier::ALL.iter().zip(t.run_stack) {
        if bytes > 0 {
            println!("  Kernel::run, {:8} tier: {bytes:5} ({name})", tier.name());
        }
    }
    println!("  LHS quantize+pack:       {:5}", t.lhs_pack_stack);
    println!("  RHS pack:                {:5}", t.rhs_pack_stack);
    let agree = t.ran - t.failed.min(t.ran);
    println!(
        "kernels: {} ran, {} agree, {} skipped (CPU lacks the tier or a feature), {} failed",
        t.ran, agree, t.skipped, t.failed
    );
    defmt::info!(
        "kernels: {=usize} ran, {=usize} agree, {=usize} skipped, {=usize} failed",
        t.ran,
        agree,
        t.skipped,
        t.failed
    );

    // The parts of one `Linear` call of every family on four cores.
    let mut multicore_failed = 0;
    match multicore::start(cpu) {
        Ok(v) => {
            println!("PSCI {}.{} over HVC: cores 1 to {} started", v.major, v.minor, multicore::CORES - 1);
            defmt::info!("PSCI {=u16}.{=u16} over HVC: {=usize} cores online", v.major, v.minor, multicore::CORES);
            multicore_failed += multicore_family::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>(cpu, b);
            multicore_failed += multicore_family::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>(cpu, b);
            multicore_failed += multicore_family::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>(cpu, b);
            multicore_failed += multicore_family::<qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>(cpu, b);
            multicore_failed += multicore_family::<f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>(cpu, b);
            multicore_failed += multicore_family::<f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>(cpu, b);
            multicore_failed += multicore_family::<bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>(cpu, b);
            multicore_failed += multicore_family::<bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>(cpu, b);
            multicore_failed += multicore_family::<qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>(cpu, b);
            multicore_failed += multicore_family::<f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>(cpu, b);
            multicore_failed += multicore_family::<qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>(cpu, b);
            multicore_failed += float::multicore_family::<f32_f32_f32p::F32F32F32p>(cpu, b);
            multicore_failed += float::multicore_family::<f16_f16_f16p::F16F16F16p>(cpu, b);
            multicore_failed += float::multicore_family::<f32_bf16p_bf16p::F32Bf16pBf16p>(cpu, b);
            multicore_failed += float::multicore_family::<f16_bf16p_bf16p::F16Bf16pBf16p>(cpu, b);
            match multicore::stop() {
                Ok(()) => defmt::info!("cores 1 to {=usize} powered off (PSCI CPU_OFF)", multicore::CORES - 1),
                Err(e) => {
                    println!("multicore: FAIL: {e}");
                    defmt::error!("multicore: FAIL: {=str}", e);
                    multicore_failed += 1;
                }
            }
        }
        Err(e) => {
            println!("multicore: FAIL: {e}");
            defmt::error!("multicore: FAIL: {=str}", e);
            multicore_failed += 1;
        }
    }
    let error_ok = logged_error(cpu, b);

    if t.failed == 0 && t.ran > 0 && multicore_failed == 0 && error_ok {
        println!("BAREMETAL OK");
        defmt::info!("BAREMETAL OK");
        semihosting::process::exit(0)
    } else {
        println!("BAREMETAL FAILED");
        defmt::error!("BAREMETAL FAILED");
        semihosting::process::exit(1)
    }
}
