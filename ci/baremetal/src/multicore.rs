//! Multi-core: the parts of one `op::Linear` call ([`qgemm::op::Prepared::parts`]) run on the
//! four cores of `qemu-system-aarch64 -M virt -smp 4`, core `i` running part `i`.
//!
//! * Start: PSCI `CPU_ON` through aarch64-rt's `start_core`, over the **HVC** conduit. The
//!   image boots at EL1 (checked in `main`): QEMU's `virt` board without `virtualization=on`
//!   and `secure=on` has no EL2/EL3 firmware, emulates PSCI itself and takes the calls as HVC
//!   (its device tree says `method = "hvc"`; with `virtualization=on` it would be SMC).
//!   `start_core` enters the core at aarch64-rt's `secondary_entry`, which does what `entry`
//!   did on the boot core: the same initial page table, MAIR/TCR/SCTLR (MMU and caches on:
//!   RAM is normal write-back memory, inner shareable, where the exclusives of the atomics
//!   below work and the kernels' unaligned loads are legal), `CPACR_EL1.FPEN` (no FP/SIMD
//!   trap), the exception vector, then the stack given here.
//! * Stacks: one static [`Stack`] per secondary core (no allocator), in `.stack.secondary`.
//! * Features: each secondary reads its own ID registers and reports whether they match the
//!   boot core's `CpuFeatures`; the kernel of a call is chosen once, on the boot core, so a
//!   core without its features would trap. A mismatch fails the check before any part runs.
//! * Work: a [`Slot`] per core in a static. The boot core stores the part's address and the
//!   function that runs it, then publishes the slot with a Release store of `READY`; the
//!   secondary's Acquire load of `READY` therefore sees the part, the packed activations and
//!   weights. The secondary runs the part, then stores `DONE` with Release; the boot core's
//!   Acquire load of `DONE` makes the part's output visible before it compares it. `SEV` after
//!   each store wakes the cores waiting in `WFE`.
//! * Stop: `QUIT` makes each secondary acknowledge and call PSCI `CPU_OFF`; the boot core
//!   waits until `AFFINITY_INFO` reports the core off.

use core::arch::asm;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use aarch64_rt::{Stack, start_core};
use qgemm::CpuFeatures;
use qgemm::op::{Operator, Part};
use smccc::Hvc;
use smccc::psci::{self, AffinityState, LowestAffinityLevel};

/// Cores the image runs on (`-smp 4`); the boot core is core 0.
pub const CORES: usize = 4;

/// Pages of stack per secondary core: 64 KiB, far above what a kernel call, the part runner and
/// a panic message need (the boot core's measured high-water marks are in the hundreds of bytes).
const STACK_PAGES: usize = 16;

/// The secondary cores' stacks, `STACKS[i - 1]` for core `i`.
#[unsafe(link_section = ".stack.secondary")]
static mut STACKS: [Stack<STACK_PAGES>; CORES - 1] = [const { Stack::new() }; CORES - 1];

/// How long the boot core waits for a secondary to come online or finish a part.
const TIMEOUT_SECONDS: u64 = 30;

const IDLE: u32 = 0;
const READY: u32 = 1;
const DONE: u32 = 2;
const QUIT: u32 = 3;
const QUITTING: u32 = 4;

/// `ONLINE[i]`: 0 until core `i` runs, then whether its features match the boot core's.
const SAME_FEATURES: u32 = 1;
const OTHER_FEATURES: u32 = 2;

/// The job of one core.
struct Slot {
    /// `IDLE`, `READY` (set by the boot core), `DONE` (by the secondary), `QUIT`, `QUITTING`.
    state: AtomicU32,
    /// The `Option<P>` (a [`CorePart`]) to run (type-erased), written before `READY`.
    job: AtomicPtr<()>,
    /// `run_part::<P>` for that part type, as a data pointer.
    func: AtomicPtr<()>,
    /// `MPIDR_EL1` of the core that ran the last part, written before `DONE`.
    ran_on: AtomicU64,
}

static SLOTS: [Slot; CORES] = [const {
    Slot {
        state: AtomicU32::new(IDLE),
        job: AtomicPtr::new(null_mut()),
        func: AtomicPtr::new(null_mut()),
        ran_on: AtomicU64::new(u64::MAX),
    }
}; CORES];

static ONLINE: [AtomicU32; CORES] = [const { AtomicU32::new(0) }; CORES];

/// `MPIDR_EL1` affinity fields (Aff3..Aff0): the core's PSCI `target_cpu`.
pub fn mpidr() -> u64 {
    let v: u64;
    // SAFETY: reading MPIDR_EL1 at EL1 has no side effect.
    unsafe { asm!("mrs {}, mpidr_el1", out(reg) v, options(nomem, nostack, preserves_flags)) };
    v & 0xff_00ff_ffff
}

/// Makes the preceding stores visible to all cores, then wakes the cores waiting in `WFE`.
fn signal() {
    // SAFETY: a barrier and an event; no memory is accessed. Not `nomem`: the compiler must
    // not move the atomic stores before it past it.
    unsafe { asm!("dsb ish", "sev", options(nostack, preserves_flags)) };
}

fn wait_for_event() {
    // SAFETY: WFE only waits (at most until the next event); no memory is accessed.
    unsafe { asm!("wfe", options(nomem, nostack, preserves_flags)) };
}

/// Generic timer count and frequency (CNTPCT_EL0, CNTFRQ_EL0: readable at EL1).
fn counter() -> (u64, u64) {
    let (count, freq): (u64, u64);
    // SAFETY: reading the counter registers has no side effect; `isb` orders the read after
    // the preceding instructions.
    unsafe {
        asm!("isb", "mrs {c}, cntpct_el0", "mrs {f}, cntfrq_el0", c = out(reg) count, f = out(reg) freq,
            options(nomem, nostack, preserves_flags));
    }
    (count, freq)
}

/// Spins until `done()` or [`TIMEOUT_SECONDS`]; false on timeout.
fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    let (start, freq) = counter();
    while !done() {
        if counter().0.wrapping_sub(start) > TIMEOUT_SECONDS * freq {
            return false;
        }
        core::hint::spin_loop();
    }
    true
}

/// Ends the run: a secondary may still hold a reference to the boot core's stack, so the
/// boot core must not return past the frame that owns the part.
fn fatal(msg: &str, core: usize) -> ! {
    semihosting::eprintln!("multicore: core {core}: {msg}");
    defmt::error!("multicore: core {=usize}: {=str}", core, msg);
    semihosting::process::exit(1)
}

/// A secondary core's life: report its features, run parts until told to quit, power off.
fn worker(core: usize, boot_cpu: CpuFeatures) -> ! {
    // SAFETY: the core runs at EL1 (CPU_ON enters it at the EL of the caller, EL1), where MRS
    // of the ID registers is always legal.
    let own = unsafe { CpuFeatures::from_id_registers() };
    let same = if own == boot_cpu { SAME_FEATURES } else { OTHER_FEATURES };
    ONLINE[core].store(same, Ordering::Release);
    signal();
    let slot = &SLOTS[core];
    loop {
        match slot.state.load(Ordering::Acquire) {
            READY => {
                let func = slot.func.load(Ordering::Relaxed);
                let job = slot.job.load(Ordering::Relaxed);
                // SAFETY: `run_on_cores` stored `run_part::<P>` (an `unsafe fn(*mut ())`) in
                // `func` and the address of an `Option<P>` of the same part type `P` in `job`
                // before its Release store of READY, which our Acquire load saw; it touches
                // neither until we store DONE, and keeps them alive until then.
                unsafe {
                    let run = core::mem::transmute::<*mut (), unsafe fn(*mut ())>(func);
                    run(job);
                }
                slot.ran_on.store(mpidr(), Ordering::Relaxed);
                slot.state.store(DONE, Ordering::Release);
                signal();
            }
            QUIT => {
                slot.state.store(QUITTING, Ordering::Release);
                signal();
                // Returns only on failure.
                let e = psci::cpu_off::<Hvc>();
                panic!("core {core}: PSCI CPU_OFF failed: {e:?}");
            }
            _ => wait_for_event(),
        }
    }
}

/// Runs the part stored at `job`.
///
/// # Safety
///
/// `job` points at an `Option<P>` that stays alive and untouched by anything else
/// until this returns.
unsafe fn run_part<P: CorePart>(job: *mut ()) {
    // SAFETY: the caller's contract: a live, exclusively ours `Option<P>`.
    let part = unsafe { &mut *job.cast::<Option<P>>() };
    if let Some(part) = part.take() {
        part.run_here();
    }
}

/// One part of an operator call, run by whichever core takes it (`op::Part`, of every family's
/// `Linear`).
pub trait CorePart {
    /// Computes the part on the calling core.
    fn run_here(self);
}

impl<F: Operator> CorePart for Part<'_, F> {
    fn run_here(self) {
        self.run();
    }
}

/// Starts cores `1..CORES` with PSCI `CPU_ON` and waits until each runs. Returns the PSCI
/// version, or what failed.
pub fn start(boot_cpu: CpuFeatures) -> Result<psci::Version, &'static str> {
    let version = psci::version::<Hvc>().map_err(|_| "PSCI_VERSION failed (no PSCI over HVC?)")?;
    // QEMU `virt` gives core i the MPIDR affinity i (Aff0 = i for the first 8 cores), the value
    // PSCI CPU_ON takes as `target_cpu`. A boot core elsewhere would break that assumption.
    if mpidr() != 0 {
        return Err("the boot core's MPIDR affinity is not 0");
    }
    let stacks = (&raw mut STACKS).cast::<Stack<STACK_PAGES>>();
    for core in 1..CORES {
        // SAFETY: `STACKS[core - 1]` is reserved for this core: nothing else uses it (it is
        // only reachable through this pointer, and each core is started once); it is in RAM,
        // mapped by the same initial page table (normal cacheable memory) on this core and on
        // the core being started, and static, so it outlives the core.
        unsafe {
            start_core::<Hvc, _, STACK_PAGES>(core as u64, stacks.wrapping_add(core - 1), move || {
                worker(core, boot_cpu)
            })
        }
        .map_err(|_| "PSCI CPU_ON failed (run QEMU with -smp 4)")?;
    }
    for online in &ONLINE[1..] {
        if !wait_until(|| online.load(Ordering::Acquire) != 0) {
            return Err("a started core did not come online");
        }
        if online.load(Ordering::Acquire) != SAME_FEATURES {
            return Err("a core's ID registers differ from the boot core's: its kernels could trap");
        }
    }
    Ok(version)
}

/// Runs part `i` of `parts` on core `i` (the boot core runs part 0) and returns each part's
/// core (`MPIDR_EL1`). `parts` must hold exactly [`CORES`] parts.
pub fn run_on_cores<P: CorePart>(parts: impl IntoIterator<Item = P>) -> [u64; CORES] {
    let mut it = parts.into_iter();
    // Owned by this frame until every secondary has stored DONE (the waits below never give
    // up: a timeout ends the run through `fatal`).
    let mut jobs: [Option<P>; CORES] = core::array::from_fn(|_| it.next());
    assert!(jobs.iter().all(Option::is_some) && it.next().is_none(), "one part per core");
    let func = run_part::<P> as unsafe fn(*mut ()) as *mut ();
    for (core, slot) in SLOTS.iter().enumerate().skip(1) {
        slot.job.store((&raw mut jobs[core]).cast(), Ordering::Relaxed);
        slot.func.store(func, Ordering::Relaxed);
        slot.ran_on.store(u64::MAX, Ordering::Relaxed);
        // Publishes the two stores above and every earlier write (the packed buffers).
        slot.state.store(READY, Ordering::Release);
    }
    signal();
    // The boot core's own part.
    if let Some(part) = jobs[0].take() {
        part.run_here();
    }
    let mut ran_on = [mpidr(); CORES];
    for (core, slot) in SLOTS.iter().enumerate().skip(1) {
        if !wait_until(|| slot.state.load(Ordering::Acquire) == DONE) {
            fatal("did not finish its part", core);
        }
        ran_on[core] = slot.ran_on.load(Ordering::Relaxed);
        slot.state.store(IDLE, Ordering::Relaxed);
    }
    ran_on
}

/// Powers the secondary cores off (PSCI `CPU_OFF` on each, confirmed by `AFFINITY_INFO`).
pub fn stop() -> Result<(), &'static str> {
    for slot in &SLOTS[1..] {
        slot.state.store(QUIT, Ordering::Release);
    }
    signal();
    for (core, slot) in SLOTS.iter().enumerate().skip(1) {
        if !wait_until(|| slot.state.load(Ordering::Acquire) == QUITTING) {
            return Err("a core did not acknowledge QUIT");
        }
        let off =
            || matches!(psci::affinity_info::<Hvc>(core as u64, LowestAffinityLevel::All), Ok(AffinityState::Off));
        if !wait_until(off) {
            return Err("a core did not power off (AFFINITY_INFO)");
        }
    }
    Ok(())
}
