// probe.S -- the known instruction sequence of `cargo make tools-check` (tools/selftest/selftest.py).
//
// void probe_loop(uint64_t iters, void *buf)   iters >= 1; buf: 128 bytes, 16-byte aligned
//
// 2 instructions before the loop, LOOP_BODY = 26 per iteration, 1 after it (RET). The loop
// executes every class the plugin decodes itself (what QEMU 7.2's disassembler cannot name,
// and the loads and stores of GEMM kernels), with SMMLA and SDOT at counts of their own so a
// class counted as another one shows. selftest.py holds the same numbers (EXPECT_PER_ITER);
// change both together. The values computed are garbage and never read.
    .arch armv8.6-a+i8mm+bf16+dotprod
    .text
    .p2align 4
    .globl probe_loop
    .type probe_loop, %function
probe_loop:
    movi    v0.4s, #0
    mov     x2, x1
1:
    ld1     {v1.16b, v2.16b}, [x2]          // ld1
    ld1r    {v3.16b}, [x2]                  // ld1r
    ldr     q4, [x2, #32]                   // ldr_q
    ldp     q5, q6, [x2, #64]               // ldp_q
    prfm    pldl1keep, [x2, #64]            // prfm
    smmla   v16.4s, v1.16b, v2.16b          // smmla x4
    smmla   v17.4s, v1.16b, v3.16b
    smmla   v18.4s, v2.16b, v3.16b
    smmla   v19.4s, v4.16b, v5.16b
    ummla   v20.4s, v1.16b, v2.16b          // ummla
    usmmla  v21.4s, v1.16b, v2.16b          // usmmla
    bfmmla  v22.4s, v1.8h, v2.8h            // bfmmla
    sdot    v0.4s, v1.16b, v2.16b           // sdot x3: vector, vector, by element
    sdot    v7.4s, v4.16b, v6.16b
    sdot    v0.4s, v1.16b, v2.4b[1]
    udot    v23.4s, v1.16b, v2.16b          // udot
    usdot   v24.4s, v1.16b, v2.16b          // usdot
    sudot   v25.4s, v1.16b, v2.4b[0]        // sudot
    fmla    v26.4s, v27.4s, v28.4s          // fmla x2: vector, by element
    fmla    v26.4s, v27.4s, v28.s[1]
    str     q0, [x2, #96]                   // str_q
    stp     q16, q17, [x2, #64]             // stp_q
    st1     {v7.16b}, [x2]                  // st1
    add     x3, x3, #1                      // add
    subs    x0, x0, #1                      // subs
    b.ne    1b                              // b.ne
    ret
    .size probe_loop, . - probe_loop

    .section .note.GNU-stack, "", %progbits
