/*
 * Minimal EL1 startup for the bare-metal C image on QEMU `virt` (qemu-system-aarch64 -kernel starts
 * the ELF at its entry point at EL1, MMU off, only CPU 0 running).
 *
 * What a firmware must do before calling qgemm (docs/c-api.md, docs/porting.md):
 *   1. a stack (16-byte aligned; qgemm's kernels use a few KiB at most),
 *   2. FP/SIMD enabled: CPACR_EL1.FPEN = 0b11, or the first NEON instruction traps,
 *   3. the MMU on with RAM mapped as Normal memory: with the MMU off every access is Device memory,
 *      and an unaligned access to Device memory faults, whatever SCTLR_EL1.A says. The kernels load
 *      packed tiles and f32 rows with unaligned SIMD loads, so Normal memory and SCTLR_EL1.A = 0.
 * Here: an identity map of the first 2 GiB as two 1 GiB blocks (Device for 0-1 GiB: UART, flash;
 * Normal write-back for 1-2 GiB: RAM), caches on.
 */
    .section .text.boot, "ax"
    .global _start
_start:
    ldr     x0, =__stack_top
    mov     sp, x0

    adr     x0, vectors
    msr     vbar_el1, x0

    /* FP/SIMD: CPACR_EL1.FPEN (bits 21:20) = 0b11, no trap at EL0/EL1. */
    mov     x0, #(3 << 20)
    msr     cpacr_el1, x0
    isb

    /* Zero .bss first: the translation table below lives there. */
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
1:  cmp     x0, x1
    b.hs    2f
    str     xzr, [x0], #8
    b       1b
2:

    /* MAIR_EL1: attr 0 = Device-nGnRnE (0x00), attr 1 = Normal, inner/outer write-back (0xff). */
    mov     x0, #0xff00
    msr     mair_el1, x0

    /* TCR_EL1: T0SZ = 25 (39-bit VA: the walk starts at level 1, 1 GiB blocks), IRGN0/ORGN0 =
     * write-back write-allocate, SH0 = inner shareable, TG0 = 4 KiB, EPD1 = 1 (no TTBR1 walks),
     * IPS = 40 bits. */
    ldr     x0, =(25 | (1 << 8) | (1 << 10) | (3 << 12) | (1 << 23) | (2 << 32))
    msr     tcr_el1, x0

    /* Level-1 table: entry 0 = Device block at 0, execute-never; entry 1 = Normal block at 1 GiB.
     * Block descriptor: bits 1:0 = 0b01, AttrIndx bits 4:2, AP = 0 (EL1 read/write), SH bits 9:8,
     * AF bit 10, PXN bit 53, UXN bit 54. */
    adrp    x1, l1_table
    add     x1, x1, :lo12:l1_table
    ldr     x0, =(0x00000000 | (0 << 2) | (1 << 10) | (3 << 53) | 1)
    str     x0, [x1]
    ldr     x0, =(0x40000000 | (1 << 2) | (3 << 8) | (1 << 10) | 1)
    str     x0, [x1, #8]
    dsb     sy
    msr     ttbr0_el1, x1
    isb
    tlbi    vmalle1
    dsb     sy
    isb

    /* SCTLR_EL1: M (MMU), C (data cache), I (instruction cache) on; A (alignment check) off. */
    mrs     x0, sctlr_el1
    orr     x0, x0, #(1 << 0)
    orr     x0, x0, #(1 << 2)
    orr     x0, x0, #(1 << 12)
    bic     x0, x0, #(1 << 1)
    msr     sctlr_el1, x0
    isb

    bl      main
    bl      semihosting_exit
3:  wfe
    b       3b

/* Any exception is fatal: report ESR_EL1/ELR_EL1 through the C side and exit 1. */
    .macro  vector_entry
    .balign 0x80
    mrs     x0, esr_el1
    mrs     x1, elr_el1
    mrs     x2, far_el1
    b       exception_report
    .endm

    .balign 0x800
vectors:
    .rept   16
    vector_entry
    .endr

    .section .bss.l1_table, "aw", %nobits
    .balign 4096
l1_table:
    .space  4096
