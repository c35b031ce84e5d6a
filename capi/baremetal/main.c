/* Bare-metal C image: links libqgemm_capi.a (aarch64-unknown-none) with no libc, runs matmuls through
 * layer 2 (KleidiAI's API) and layer 1 (qgemm.h) (the int4 and int8 f32 families, each f16/bf16
 * family, both asymmetric int4 families, the 2-bit family with a look-up table, and the f32 FMLA and bf16
 * BFMMLA float families), checks them, and exits through semihosting with status
 * 0 only if every check passed.
 * Startup (stack, FP/SIMD, MMU) is in start.S. */
#include <stddef.h>
#include <stdint.h>

#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi8cxp/kai_matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm.h"
#include "kai/ukernels/matmul/matmul_clamp_bf16_qai8dxp_qsi4c32p/kai_matmul_clamp_bf16_qai8dxp4x8_qsi4c32p4x8_16x4_neon_i8mm.h"
#include "kai/ukernels/matmul/matmul_clamp_bf16_qai8dxp_qsi4cxp/kai_matmul_clamp_bf16_qai8dxp1x8_qsi4cxp8x8_1x8_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_qai8dxp_qsi4cxp/kai_matmul_clamp_f16_qai8dxp4x4_qsi4cxp4x4_16x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_qai8dxp_qsi8cxp/kai_matmul_clamp_f16_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_bf16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi8cxp_qsi8cx_neon.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_qsi8d32p_qai4c32p/kai_matmul_clamp_f16_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qsi8d32p_qai4c32p/kai_matmul_clamp_f32_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32pscalef32_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32pscalef32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsu2cxp/kai_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsu2cxp/kai_matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_bf16p_bf16p/kai_matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_f32_f32p/kai_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_bf16p8x4_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_x32p16x1b_x32_x32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon.h"
#include "qgemm.h"
#include "semihosting.h"

#define M 2
#define N 8
#define K 64

static unsigned failures;

void semihosting_exit(int code);
void exception_report(uint64_t esr, uint64_t elr, uint64_t far);

void semihosting_exit(int code) {
    /* SYS_EXIT with the AArch64 parameter block: ADP_Stopped_ApplicationExit and the status. */
    static volatile uint64_t block[2];
    block[0] = 0x20026;
    block[1] = (uint64_t)(int64_t)code;
    semihosting_call(0x18, (uintptr_t)block);
    for (;;) {
    }
}

void exception_report(uint64_t esr, uint64_t elr, uint64_t far) {
    sh_puts("baremetal-c: exception at EL1: ESR_EL1 = ");
    sh_puthex(esr);
    sh_puts(" ELR_EL1 = ");
    sh_puthex(elr);
    sh_puts(" FAR_EL1 = ");
    sh_puthex(far);
    sh_puts("\n");
    semihosting_exit(1);
}

static void check(int ok, const char* what) {
    sh_puts(ok ? "  ok   " : "  FAIL ");
    sh_puts(what);
    sh_puts("\n");
    if (!ok) failures++;
}

static uint64_t id_aa64isar0(void) {
    uint64_t v;
    __asm__("mrs %0, id_aa64isar0_el1" : "=r"(v));
    return v;
}

static uint64_t id_aa64pfr1(void) {
    uint64_t v;
    __asm__("mrs %0, id_aa64pfr1_el1" : "=r"(v));
    return v;
}

static uint64_t cpacr(void) {
    uint64_t v;
    __asm__("mrs %0, cpacr_el1" : "=r"(v));
    return v;
}

/* Operands: weights all +1 (nibble 9, zero point 8), scale 0.5, activations 1.0: every output is
 * 64 * 1 * 1 * 0.5 = 32 up to the activation quantization error. A second row of 0.25 gives 8. */
static uint8_t weights[N * K / 2];
static float scales[N], lhs[M * K];
static uint8_t lhs_packed[4096], rhs_packed[8192]; /* 8 KiB: the f32p16 weights of the float check (16 x 260 B) */
static float dst2[M * N], dst1[M * N];
static uint8_t lhs_packed1[4096], rhs_packed1[8192];

static int near(float a, float b) { return a - b < 0.05f && b - a < 0.05f; }

static void layer2(void) {
    const size_t mr = kai_get_mr_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod();
    const size_t nr = kai_get_nr_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod();
    const size_t kr = kai_get_kr_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod();
    const size_t sr = kai_get_sr_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod();
    const size_t lsz = kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(M, K, mr, kr, sr);
    const size_t rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(N, K, nr, kr, sr);
    check(lsz <= sizeof lhs_packed && rsz <= sizeof rhs_packed, "layer 2: packed sizes fit");
    if (lsz > sizeof lhs_packed || rsz > sizeof rhs_packed) return;
    struct kai_rhs_pack_qs4cxs1s0_param params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, N, K, nr, kr, sr, weights, NULL, scales, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qai8dxp_f32(M, K, mr, kr, sr, 0, lhs, K * sizeof(float), lhs_packed);
    /* One m_step x n_step tile at a time, through the offset getters, as a threaded caller would. */
    const size_t ms = kai_get_m_step_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod();
    const size_t ns = kai_get_n_step_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod();
    for (size_t m0 = 0; m0 < M; m0 += ms) {
        for (size_t n0 = 0; n0 < N; n0 += ns) {
            const uint8_t* lp =
                lhs_packed + kai_get_lhs_packed_offset_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod(m0, K);
            const uint8_t* rp =
                rhs_packed + kai_get_rhs_packed_offset_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod(n0, K);
            const size_t d =
                kai_get_dst_offset_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod(m0, n0, N * sizeof(float));
            kai_run_matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod(
                M - m0 < ms ? M - m0 : ms, N - n0 < ns ? N - n0 : ns, K, lp, rp, (float*)((uint8_t*)dst2 + d),
                N * sizeof(float), sizeof(float), -3.402823466e38f, 3.402823466e38f);
        }
    }
    int ok = 1;
    for (size_t i = 0; i < N; i++) ok &= near(dst2[i], 32.0f) && near(dst2[N + i], 8.0f);
    check(ok, "layer 2: kai_* qai8dxp1x8_qsi4cxp8x8_1x8x32_neon_dotprod, m_step x n_step grid = hand result");
}

/* The per-format packers' parameters for a kernel: its LHS tile rows and its RHS tile
 * (qgemm_kernel_info.lhs / .rhs). */
static qgemm_packing packing_of(const qgemm_kernel_info* info) {
    const qgemm_packing p = {info->lhs.mr, info->rhs.nr, info->rhs.kr, info->rhs.sr};
    return p;
}

/* Whether a kernel reads operands packed with the layer-2 packing `p`. */
static int reads(const qgemm_kernel_info* info, qgemm_packing p) {
    return info->lhs.mr == p.mr && info->rhs.nr == p.nr && info->rhs.kr == p.kr && info->rhs.sr == p.sr;
}

/* Layer 1: detect the CPU from the ID registers (EL1), let qgemm pick the kernel, pack and run with
 * lengths checked; the result must equal layer 2's bit for bit (same quantized operands, and every
 * kernel of a family gives the same bits). */
static void layer1(void) {
    uint32_t features = 0;
    check(qgemm_cpu_detect(&features) == QGEMM_OK && (features & QGEMM_FEATURE_NEON), "layer 1: qgemm_cpu_detect");
    sh_puts(features & QGEMM_FEATURE_I8MM ? "  layer 1 cpu: neon dotprod i8mm\n"
            : features & QGEMM_FEATURE_DOTPROD ? "  layer 1 cpu: neon dotprod\n"
                                                : "  layer 1 cpu: neon\n");
    qgemm_kernel kernel;
    qgemm_kernel_info info;
    check(qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI4CXP, features, M, &kernel) == QGEMM_OK &&
              qgemm_kernel_get_info(kernel, &info) == QGEMM_OK,
          "layer 1: qgemm_select");
    sh_puts("  layer 1 kernel: ");
    sh_puts(info.name);
    sh_puts("\n");
    const qgemm_packing pk = packing_of(&info);
    size_t lsz = 0, rsz = 0;
    check(qgemm_lhs_qai8dxp_packed_size(&pk, M, K, &lsz) == QGEMM_OK &&
              qgemm_rhs_qsi4cxp_packed_size(&pk, N, K, &rsz) == QGEMM_OK && lsz <= sizeof lhs_packed1 &&
              rsz <= sizeof rhs_packed1,
          "layer 1: packed sizes fit");
    qgemm_int4_source src = {weights, sizeof weights, QGEMM_LAYOUT_NXK, K / 2, QGEMM_INT4_ZERO_POINT_8};
    check(qgemm_rhs_qsi4cxp_pack(&pk, N, K, &src, scales, N, NULL, 0, rhs_packed1, rsz) == QGEMM_OK,
          "layer 1: qgemm_rhs_qsi4cxp_pack");
    check(qgemm_lhs_qai8dxp_quantize_pack(&pk, M, K, 0, lhs, M * K, K, lhs_packed1, lsz) == QGEMM_OK,
          "layer 1: qgemm_lhs_qai8dxp_quantize_pack");
    qgemm_matmul_args args = {.m = M, .n = N, .k = K, .dst_stride_row = N,
                              .clamp_min = -3.402823466e38f, .clamp_max = 3.402823466e38f};
    check(qgemm_kernel_run(kernel, features, lhs_packed1, lsz, rhs_packed1, rsz, dst1, M * N, &args) == QGEMM_OK,
          "layer 1: qgemm_kernel_run");
    /* A short dst is an error, not an overrun. */
    check(qgemm_kernel_run(kernel, features, lhs_packed1, lsz, rhs_packed1, rsz, dst1, M * N - 1, &args) ==
              QGEMM_ERROR_BUFFER_TOO_SHORT,
          "layer 1: short dst -> QGEMM_ERROR_BUFFER_TOO_SHORT");
    int same = 1;
    for (size_t i = 0; i < M * N; i++) {
        uint32_t a, b;
        __builtin_memcpy(&a, &dst1[i], 4);
        __builtin_memcpy(&b, &dst2[i], 4);
        same &= a == b;
    }
    check(same, "layer 1: output = layer 2 output, bit for bit");
}

/* The int8 family through both layers: weights all 2, scale 0.25, so row 0 (activations 1.0) is
 * 64 * 2 * 0.25 = 32 and row 1 (0.25) is 8; layer 1 must equal layer 2 bit for bit. */
static int8_t weights8[N * K];
static float scales8[N], dst8_1[M * N], dst8_2[M * N];

static void int8_family(void) {
    for (size_t i = 0; i < sizeof weights8; i++) weights8[i] = 2;
    for (size_t i = 0; i < N; i++) scales8[i] = 0.25f;
    const size_t mr = kai_get_mr_matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm();
    const size_t nr = kai_get_nr_matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm();
    const size_t kr = kai_get_kr_matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm();
    const size_t sr = kai_get_sr_matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm();
    const size_t lsz = kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(M, K, mr, kr, sr);
    const size_t rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(N, K, nr, kr, sr);
    check(lsz <= sizeof lhs_packed && rsz <= sizeof rhs_packed, "int8 layer 2: packed sizes fit");
    struct kai_rhs_pack_qsi8cx_params params = {.lhs_zero_point = 1, .scale_multiplier = 1.0f};
    kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, N, K, nr, kr, sr, weights8, NULL, scales8, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qai8dxp_f32(M, K, mr, kr, sr, 0, lhs, K * sizeof(float), lhs_packed);
    kai_run_matmul_clamp_f32_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm(M, N, K, lhs_packed, rhs_packed, dst8_2,
                                                                   N * sizeof(float), sizeof(float), -3.402823466e38f,
                                                                   3.402823466e38f);
    int ok = 1;
    for (size_t i = 0; i < M * N; i++) ok &= near(dst8_2[i], i < N ? 32.0f : 8.0f);
    check(ok, "int8 layer 2: kai_* qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm = hand result");

    uint32_t features = 0;
    qgemm_kernel kernel;
    qgemm_kernel_info info;
    check(qgemm_cpu_detect(&features) == QGEMM_OK &&
              qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI8CXP, features, M, &kernel) == QGEMM_OK &&
              qgemm_kernel_get_info(kernel, &info) == QGEMM_OK,
          "int8 layer 1: qgemm_select");
    sh_puts("  int8 layer 1 kernel: ");
    sh_puts(info.name);
    sh_puts("\n");
    const qgemm_packing pk = packing_of(&info);
    size_t l1 = 0, r1 = 0;
    qgemm_int8_source src = {weights8, sizeof weights8, QGEMM_LAYOUT_NXK, K};
    qgemm_matmul_args args = {.m = M, .n = N, .k = K, .dst_stride_row = N,
                              .clamp_min = -3.402823466e38f, .clamp_max = 3.402823466e38f};
    check(qgemm_lhs_qai8dxp_packed_size(&pk, M, K, &l1) == QGEMM_OK &&
              qgemm_rhs_qsi8cxp_packed_size(&pk, N, K, &r1) == QGEMM_OK && l1 <= sizeof lhs_packed1 &&
              r1 <= sizeof rhs_packed1 &&
              qgemm_rhs_qsi8cxp_pack(&pk, N, K, &src, scales8, N, NULL, 0, rhs_packed1, r1) == QGEMM_OK &&
              qgemm_lhs_qai8dxp_quantize_pack(&pk, M, K, 0, lhs, M * K, K, lhs_packed1, l1) == QGEMM_OK &&
              qgemm_kernel_run(kernel, features, lhs_packed1, l1, rhs_packed1, r1, dst8_1, M * N, &args) == QGEMM_OK,
          "int8 layer 1: qgemm_rhs_qsi8cxp_pack, qgemm_lhs_qai8dxp_quantize_pack, qgemm_kernel_run");
    int same = 1;
    for (size_t i = 0; i < M * N; i++) {
        uint32_t a, b;
        __builtin_memcpy(&a, &dst8_1[i], 4);
        __builtin_memcpy(&b, &dst8_2[i], 4);
        same &= a == b;
    }
    check(same, "int8 layer 1: output = layer 2 output, bit for bit");
}

/* ---- the f16 and bf16 families: one KleidiAI kernel of each through layer 2, and layer 1 with
 * exactly that packing (with f16 input the quantized activations depend on the packing); the
 * weights as above (int4 +1 at scale 0.5, int8 2 at scale 0.25, so every family gives 32 and 8),
 * the activations 1.0 and 0.25 as f16 or bf16 bits. Neither layer needs FEAT_FP16 or FEAT_BF16
 * (cortex-a53 has neither): the conversions are done with integer or base-FP instructions. */

#define BL 32
static uint16_t lhs16[M * K], dst16_1[M * N], dst16_2[M * N];
static uint16_t scales_c32[N * (K / BL)]; /* bf16 0.5 per channel and block of 32 */
static const float no_min = -3.402823466e38f, no_max = 3.402823466e38f;

/* Value of an f16 (normal or zero) or bf16 bit pattern, for the hand check. */
static float half_to_f32(uint16_t h, int bf16) {
    uint32_t u;
    if (bf16) {
        u = (uint32_t)h << 16;
    } else {
        const uint32_t e = (h >> 10) & 0x1f;
        u = ((uint32_t)(h >> 15) << 31) | (e ? ((e + 112) << 23) | ((uint32_t)(h & 0x3ff) << 13) : 0);
    }
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}

/* Layer 2 of one kernel per family: pack with KleidiAI's packers and run into dst16_2; returns
 * the kernel's packing. `KAI(get_mr, name)` is kai_get_mr_matmul_clamp_<name>. */
#define KAI(fn, name) kai_##fn##_matmul_clamp_##name
#define PACKING(name) \
    (qgemm_packing) { KAI(get_mr, name)(), KAI(get_nr, name)(), KAI(get_kr, name)(), KAI(get_sr, name)() }

static qgemm_packing layer2_f16_qsi4cxp(void) {
    const qgemm_packing p = PACKING(f16_qai8dxp4x4_qsi4cxp4x4_16x4_neon_dotprod);
    struct kai_rhs_pack_qs4cxs1s0_param params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, N, K, p.nr, p.kr, p.sr, weights, NULL, scales, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qai8dxp_f16_neon(M, K, p.mr, p.kr, p.sr, 0, lhs16, K * 2, lhs_packed);
    KAI(run, f16_qai8dxp4x4_qsi4cxp4x4_16x4_neon_dotprod)(M, N, K, lhs_packed, rhs_packed, dst16_2, N * 2, 2, no_min,
                                                          no_max);
    return p;
}

static qgemm_packing layer2_f16_qsi8cxp(void) {
    const qgemm_packing p = PACKING(f16_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm);
    struct kai_rhs_pack_qsi8cx_params params = {.lhs_zero_point = 1, .scale_multiplier = 1.0f};
    kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, N, K, p.nr, p.kr, p.sr, weights8, NULL, scales8, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qai8dxp_f16_neon(M, K, p.mr, p.kr, p.sr, 0, lhs16, K * 2, lhs_packed);
    KAI(run, f16_qai8dxp4x8_qsi8cxp4x8_16x4_neon_i8mm)(M, N, K, lhs_packed, rhs_packed, dst16_2, N * 2, 2, no_min,
                                                       no_max);
    return p;
}

static qgemm_packing layer2_bf16_qsi4cxp(void) {
    const qgemm_packing p = PACKING(bf16_qai8dxp1x8_qsi4cxp8x8_1x8_neon_dotprod);
    struct kai_rhs_pack_qs4cxs1s0_param params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, N, K, p.nr, p.kr, p.sr, weights, NULL, scales, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qai8dxp_bf16_neon(M, K, p.mr, p.kr, p.sr, 0, lhs16, K * 2, lhs_packed);
    KAI(run, bf16_qai8dxp1x8_qsi4cxp8x8_1x8_neon_dotprod)(M, N, K, lhs_packed, rhs_packed, dst16_2, N * 2, 2, no_min,
                                                          no_max);
    return p;
}

static qgemm_packing layer2_bf16_qsi4c32p(void) {
    const qgemm_packing p = PACKING(bf16_qai8dxp4x8_qsi4c32p4x8_16x4_neon_i8mm);
    struct kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0_params params = {
        .lhs_zero_point = 1, .rhs_zero_point = 8, .scale_dt = kai_dt_bf16};
    kai_run_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(1, N, K, p.nr, p.kr, p.sr, BL, weights, K / 2, NULL, scales_c32,
                                               (K / BL) * 2, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qai8dxp_bf16_neon(M, K, p.mr, p.kr, p.sr, 0, lhs16, K * 2, lhs_packed);
    KAI(run, bf16_qai8dxp4x8_qsi4c32p4x8_16x4_neon_i8mm)(M, N, K, BL, lhs_packed, rhs_packed, dst16_2, N * 2, 2, no_min,
                                                         no_max);
    return p;
}

enum rhs_format { RHS_QSI4CXP, RHS_QSI8CXP, RHS_QSI4C32P };
static const struct {
    const char* name;
    uint32_t code;
    int bf16;
    enum rhs_format rhs;
    qgemm_packing (*layer2)(void);
} families16[] = {
    {"f16_qai8dxp_qsi4cxp", QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP, 0, RHS_QSI4CXP, layer2_f16_qsi4cxp},
    {"f16_qai8dxp_qsi8cxp", QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP, 0, RHS_QSI8CXP, layer2_f16_qsi8cxp},
    {"bf16_qai8dxp_qsi4cxp", QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP, 1, RHS_QSI4CXP, layer2_bf16_qsi4cxp},
    {"bf16_qai8dxp_qsi4c32p", QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P, 1, RHS_QSI4C32P, layer2_bf16_qsi4c32p},
};

static void families_16bit(void) {
    for (size_t i = 0; i < N * (K / BL); i++) scales_c32[i] = 0x3f00; /* 0.5 */
    uint32_t features = 0;
    check(qgemm_cpu_detect(&features) == QGEMM_OK, "16-bit families: qgemm_cpu_detect");
    for (size_t f = 0; f < sizeof families16 / sizeof families16[0]; f++) {
        const int bf16 = families16[f].bf16;
        for (size_t i = 0; i < K; i++) {
            lhs16[i] = bf16 ? 0x3f80 : 0x3c00;     /* 1.0 */
            lhs16[K + i] = bf16 ? 0x3e80 : 0x3400; /* 0.25 */
        }
        sh_puts("  ");
        sh_puts(families16[f].name);
        sh_puts("\n");
        const qgemm_packing p = families16[f].layer2();
        int ok = 1;
        for (size_t i = 0; i < M * N; i++) ok &= near(half_to_f32(dst16_2[i], bf16), i < N ? 32.0f : 8.0f);
        check(ok, "layer 2: kai_run_lhs_quant_pack_qai8dxp_(b)f16_neon and one kai_* kernel = hand result");

        /* Layer 1: a kernel of exactly that packing the CPU has (every tier gives the same bits). */
        qgemm_kernel kernel = {0, 0, 0};
        qgemm_kernel_info info;
        size_t count = 0;
        int found = 0;
        check(qgemm_kernel_count(families16[f].code, &count) == QGEMM_OK, "layer 1: qgemm_kernel_count");
        for (size_t i = 0; i < count && !found; i++) {
            bool yes = false;
            if (qgemm_kernel_at(families16[f].code, i, &kernel) == QGEMM_OK &&
                qgemm_kernel_get_info(kernel, &info) == QGEMM_OK &&
                qgemm_kernel_is_available(kernel, features, &yes) == QGEMM_OK && yes && reads(&info, p))
                found = 1;
        }
        check(found, "layer 1: a kernel of the layer-2 packing");
        if (!found) continue;
        sh_puts("    layer 1 kernel: ");
        sh_puts(info.name);
        sh_puts("\n");
        const qgemm_packing pk = packing_of(&info);
        const size_t bl = families16[f].rhs == RHS_QSI4C32P ? BL : 0;
        size_t l1 = 0, r1 = 0;
        qgemm_status s = qgemm_lhs_qai8dxp_packed_size(&pk, M, K, &l1);
        qgemm_int4_source src4 = {weights, sizeof weights, QGEMM_LAYOUT_NXK, K / 2, QGEMM_INT4_ZERO_POINT_8};
        qgemm_int8_source src8 = {weights8, sizeof weights8, QGEMM_LAYOUT_NXK, K};
        if (s == QGEMM_OK) {
            switch (families16[f].rhs) {
            case RHS_QSI4CXP:
                s = qgemm_rhs_qsi4cxp_packed_size(&pk, N, K, &r1);
                if (s == QGEMM_OK && r1 <= sizeof rhs_packed1)
                    s = qgemm_rhs_qsi4cxp_pack(&pk, N, K, &src4, scales, N, NULL, 0, rhs_packed1, r1);
                break;
            case RHS_QSI8CXP:
                s = qgemm_rhs_qsi8cxp_packed_size(&pk, N, K, &r1);
                if (s == QGEMM_OK && r1 <= sizeof rhs_packed1)
                    s = qgemm_rhs_qsi8cxp_pack(&pk, N, K, &src8, scales8, N, NULL, 0, rhs_packed1, r1);
                break;
            default:
                s = qgemm_rhs_qsi4c32p_packed_size(&pk, N, K, BL, &r1);
                if (s == QGEMM_OK && r1 <= sizeof rhs_packed1)
                    s = qgemm_rhs_qsi4c32p_pack(&pk, N, K, BL, &src4, scales_c32, N * (K / BL), K / BL, NULL,
                                                0, rhs_packed1, r1);
                break;
            }
        }
        check(s == QGEMM_OK && l1 <= sizeof lhs_packed1 && r1 <= sizeof rhs_packed1, "layer 1: RHS packed");
        if (s != QGEMM_OK || l1 > sizeof lhs_packed1 || r1 > sizeof rhs_packed1) continue;
        s = bf16 ? qgemm_lhs_qai8dxp_quantize_pack_bf16(&pk, M, K, 0, lhs16, M * K, K, lhs_packed1, l1)
                 : qgemm_lhs_qai8dxp_quantize_pack_f16(&pk, M, K, 0, lhs16, M * K, K, lhs_packed1, l1);
        check(s == QGEMM_OK, "layer 1: qgemm_lhs_qai8dxp_quantize_pack_(b)f16");
        qgemm_matmul_args args = {.m = M, .n = N, .k = K, .bl = bl, .dst_stride_row = N,
                                  .clamp_min = no_min, .clamp_max = no_max};
        check(qgemm_kernel_run_u16(kernel, features, lhs_packed1, l1, rhs_packed1, r1, dst16_1, M * N, &args) ==
                  QGEMM_OK,
              "layer 1: qgemm_kernel_run_u16");
        check(qgemm_kernel_run(kernel, features, lhs_packed1, l1, rhs_packed1, r1, dst1, M * N, &args) ==
                  QGEMM_ERROR_WRONG_DST_TYPE,
              "layer 1: qgemm_kernel_run refuses a 16-bit kernel (QGEMM_ERROR_WRONG_DST_TYPE)");
        int same = 1;
        for (size_t i = 0; i < M * N; i++) same &= dst16_1[i] == dst16_2[i];
        check(same, "layer 1: output = layer 2 output, bit for bit");
    }
}

/* ---- the asymmetric int4 families (qai4c32p weights, qsi8d32pscalef32 activations), f32 and f16:
 * one KleidiAI kernel of each through layer 2, then layer 1 with exactly that packing. Weights: every
 * code 9 (value 1) at scale 0.25 and offset 0.25 per block, so every weight is 0.5 and the rows of
 * 1.0 and 0.25 give 32 and 8 again. */

static float qai_zero[N * (K / BL)], qai_scale[N * (K / BL)];

static qgemm_packing layer2_qai4c32p_f32(void) {
    const qgemm_packing p = PACKING(f32_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm);
    struct kai_rhs_pack_nxk_qai4c32p_params params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, N, K, p.nr, p.kr, p.sr, BL, weights, qai_zero, NULL,
                                                                qai_scale, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qsi8d32pscalef32_f32_neon(M, K, BL, p.mr, p.kr, p.sr, 0, lhs, K * sizeof(float), lhs_packed);
    KAI(run, f32_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm)(M, N, K, BL, lhs_packed, rhs_packed, dst2, N * sizeof(float),
                                                        sizeof(float), no_min, no_max);
    return p;
}

static qgemm_packing layer2_qai4c32p_f16(void) {
    const qgemm_packing p = PACKING(f16_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod);
    struct kai_rhs_pack_nxk_qai4c32p_params params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, N, K, p.nr, p.kr, p.sr, BL, weights, qai_zero, NULL,
                                                                qai_scale, rhs_packed, 0, &params);
    kai_run_lhs_quant_pack_qsi8d32pscalef32_f16_neon(M, K, BL, p.mr, p.kr, p.sr, 0, lhs16, K * 2, lhs_packed);
    KAI(run, f16_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod)(M, N, K, BL, lhs_packed, rhs_packed, dst16_2, N * 2, 2,
                                                           no_min, no_max);
    return p;
}

static const struct {
    const char* name;
    uint32_t code;
    int f16; /* f16 activations and outputs; else f32 */
    qgemm_packing (*layer2)(void);
} families_qai4c32p[] = {
    {"qsi8d32p_qai4c32p", QGEMM_FAMILY_QSI8D32P_QAI4C32P, 0, layer2_qai4c32p_f32},
    {"f16_qsi8d32p_qai4c32p", QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P, 1, layer2_qai4c32p_f16},
};

static void families_asymmetric(void) {
    for (size_t i = 0; i < N * (K / BL); i++) qai_zero[i] = 0.25f, qai_scale[i] = 0.25f;
    for (size_t i = 0; i < K; i++) {
        lhs16[i] = 0x3c00;     /* 1.0 */
        lhs16[K + i] = 0x3400; /* 0.25 */
    }
    uint32_t features = 0;
    check(qgemm_cpu_detect(&features) == QGEMM_OK, "asymmetric int4 families: qgemm_cpu_detect");
    for (size_t f = 0; f < sizeof families_qai4c32p / sizeof families_qai4c32p[0]; f++) {
        const int f16 = families_qai4c32p[f].f16;
        sh_puts("  ");
        sh_puts(families_qai4c32p[f].name);
        sh_puts("\n");
        const qgemm_packing p = families_qai4c32p[f].layer2();
        int ok = 1;
        for (size_t i = 0; i < M * N; i++)
            ok &= near(f16 ? half_to_f32(dst16_2[i], 0) : dst2[i], i < N ? 32.0f : 8.0f);
        check(ok, "layer 2: kai_run_rhs_pack_nxk_qai4c32p_..., lhs_quant_pack_qsi8d32pscalef32 and one kai_* kernel"
                  " = hand result");

        qgemm_kernel kernel = {0, 0, 0};
        qgemm_kernel_info info;
        size_t count = 0;
        int found = 0;
        check(qgemm_kernel_count(families_qai4c32p[f].code, &count) == QGEMM_OK, "layer 1: qgemm_kernel_count");
        for (size_t i = 0; i < count && !found; i++) {
            bool yes = false;
            if (qgemm_kernel_at(families_qai4c32p[f].code, i, &kernel) == QGEMM_OK &&
                qgemm_kernel_get_info(kernel, &info) == QGEMM_OK &&
                qgemm_kernel_is_available(kernel, features, &yes) == QGEMM_OK && yes && reads(&info, p))
                found = 1;
        }
        check(found, "layer 1: a kernel of the layer-2 packing");
        if (!found) continue;
        sh_puts("    layer 1 kernel: ");
        sh_puts(info.name);
        sh_puts("\n");
        const qgemm_packing pk = packing_of(&info);
        size_t l1 = 0, r1 = 0;
        qgemm_status s = qgemm_lhs_qsi8d32pscalef32_packed_size(&pk, M, K, BL, &l1);
        if (s == QGEMM_OK) s = qgemm_rhs_qai4c32p_packed_size(&pk, N, K, BL, &r1);
        check(s == QGEMM_OK && l1 <= sizeof lhs_packed1 && r1 <= sizeof rhs_packed1, "layer 1: packed sizes fit");
        if (s != QGEMM_OK || l1 > sizeof lhs_packed1 || r1 > sizeof rhs_packed1) continue;
        s = qgemm_rhs_qai4c32p_pack(&pk, N, K, BL, weights, sizeof weights, K / 2, qai_zero, N * (K / BL),
                                    qai_scale, N * (K / BL), NULL, 0, rhs_packed1, r1);
        check(s == QGEMM_OK, "layer 1: qgemm_rhs_qai4c32p_pack");
        s = f16 ? qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(&pk, M, K, BL, 0, lhs16, M * K, K, lhs_packed1,
                                                               l1)
                : qgemm_lhs_qsi8d32pscalef32_quantize_pack(&pk, M, K, BL, 0, lhs, M * K, K, lhs_packed1, l1);
        check(s == QGEMM_OK, "layer 1: qgemm_lhs_qsi8d32pscalef32_quantize_pack(_f16)");
        qgemm_matmul_args args = {.m = M, .n = N, .k = K, .bl = BL, .dst_stride_row = N,
                                  .clamp_min = no_min, .clamp_max = no_max};
        int same = 1;
        if (f16) {
            check(qgemm_kernel_run_u16(kernel, features, lhs_packed1, l1, rhs_packed1, r1, dst16_1, M * N, &args) ==
                      QGEMM_OK,
                  "layer 1: qgemm_kernel_run_u16");
            for (size_t i = 0; i < M * N; i++) same &= dst16_1[i] == dst16_2[i];
        } else {
            check(qgemm_kernel_run(kernel, features, lhs_packed1, l1, rhs_packed1, r1, dst1, M * N, &args) == QGEMM_OK,
                  "layer 1: qgemm_kernel_run");
            for (size_t i = 0; i < M * N; i++) {
                uint32_t a, b;
                __builtin_memcpy(&a, &dst1[i], 4);
                __builtin_memcpy(&b, &dst2[i], 4);
                same &= a == b;
            }
        }
        check(same, "layer 1: output = layer 2 output, bit for bit");
    }
}

/* ---- the 2-bit family (qsu2cxp weights through a look-up table, qai8dxp activations): both
 * KleidiAI kernels through layer 2 with the table {-3, -1, 1, 3}, the GEMV one with m = 2 (qgemm
 * computes every row), then layer 1 with the same packing and table. Every code 3 (weight 3) at
 * scale 0.5: the rows of 1.0 and 0.25 give 96 and 24. */

static uint8_t codes2[N * K / 4];
static const int32_t lut2[4] = {-3, -1, 1, 3};

static void family_2bit(void) {
    sh_puts("  qai8dxp_qsu2cxp\n");
    for (size_t i = 0; i < sizeof codes2; i++) codes2[i] = 0xff;
    uint32_t features = 0;
    check(qgemm_cpu_detect(&features) == QGEMM_OK, "2-bit family: qgemm_cpu_detect");
    for (int gemv = 0; gemv < 2; gemv++) {
        const qgemm_packing p = gemv ? PACKING(f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod)
                                     : PACKING(f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod);
        struct kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon_params params = {.lhs_zero_point = 1,
                                                                                .rhs_zero_point = 2};
        kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, N, K, p.nr, p.kr, p.sr, codes2, NULL, scales, rhs_packed,
                                                            0, &params, lut2);
        kai_run_lhs_quant_pack_qai8dxp_f32(M, K, p.mr, p.kr, p.sr, 0, lhs, K * sizeof(float), lhs_packed);
        if (gemv)
            KAI(run, f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod)(M, N, K, lhs_packed, rhs_packed, dst2,
                                                                          N * sizeof(float), sizeof(float), no_min,
                                                                          no_max, lut2);
        else
            KAI(run, f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod)(M, N, K, lhs_packed, rhs_packed, dst2,
                                                                          N * sizeof(float), sizeof(float), no_min,
                                                                          no_max, lut2);
        int ok = 1;
        for (size_t i = 0; i < M * N; i++) ok &= near(dst2[i], i < N ? 96.0f : 24.0f);
        check(ok, gemv ? "layer 2: rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon and the GEMV kai_* kernel with a table,"
                         " m = 2 (every row) = hand result"
                       : "layer 2: rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon and the GEMM kai_* kernel with a table"
                         " = hand result");

        qgemm_kernel kernel = {0, 0, 0};
        qgemm_kernel_info info;
        size_t count = 0;
        int found = 0;
        check(qgemm_kernel_count(QGEMM_FAMILY_QAI8DXP_QSU2CXP, &count) == QGEMM_OK, "layer 1: qgemm_kernel_count");
        for (size_t i = 0; i < count && !found; i++) {
            bool yes = false;
            if (qgemm_kernel_at(QGEMM_FAMILY_QAI8DXP_QSU2CXP, i, &kernel) == QGEMM_OK &&
                qgemm_kernel_get_info(kernel, &info) == QGEMM_OK &&
                qgemm_kernel_is_available(kernel, features, &yes) == QGEMM_OK && yes && reads(&info, p))
                found = 1;
        }
        check(found, "layer 1: a kernel of the layer-2 packing");
        if (!found) continue;
        sh_puts("    layer 1 kernel: ");
        sh_puts(info.name);
        sh_puts("\n");
        const qgemm_packing pk = packing_of(&info);
        size_t l1 = 0, r1 = 0;
        qgemm_status s = qgemm_lhs_qai8dxp_packed_size(&pk, M, K, &l1);
        if (s == QGEMM_OK) s = qgemm_rhs_qsu2cxp_packed_size(&pk, N, K, &r1);
        check(s == QGEMM_OK && l1 <= sizeof lhs_packed1 && r1 <= sizeof rhs_packed1, "layer 1: packed sizes fit");
        if (s != QGEMM_OK || l1 > sizeof lhs_packed1 || r1 > sizeof rhs_packed1) continue;
        const int32_t wide[4] = {-3, -1, 1, 64};
        check(qgemm_rhs_qsu2cxp_pack(&pk, N, K, codes2, sizeof codes2, K / 4, scales, N, NULL, 0, wide,
                                     rhs_packed1, r1) == QGEMM_ERROR_LUT_OUT_OF_RANGE,
              "layer 1: qgemm_rhs_qsu2cxp_pack refuses a table entry of 64 (QGEMM_ERROR_LUT_OUT_OF_RANGE)");
        s = qgemm_rhs_qsu2cxp_pack(&pk, N, K, codes2, sizeof codes2, K / 4, scales, N, NULL, 0, lut2,
                                   rhs_packed1, r1);
        check(s == QGEMM_OK, "layer 1: qgemm_rhs_qsu2cxp_pack");
        s = qgemm_lhs_qai8dxp_quantize_pack(&pk, M, K, 0, lhs, M * K, K, lhs_packed1, l1);
        check(s == QGEMM_OK, "layer 1: qgemm_lhs_qai8dxp_quantize_pack");
        /* The table travels as the family's parameters. */
        const qgemm_lut_params table = {{lut2[0], lut2[1], lut2[2], lut2[3]}};
        qgemm_matmul_args args = {.m = M, .n = N, .k = K, .dst_stride_row = N, .clamp_min = no_min,
                                  .clamp_max = no_max, .params = &table};
        check(qgemm_kernel_run(kernel, features, lhs_packed1, l1, rhs_packed1, r1, dst1, M * N, &args) == QGEMM_OK,
              "layer 1: qgemm_kernel_run with the table (qgemm_lut_params)");
        int same = 1;
        for (size_t i = 0; i < M * N; i++) {
            uint32_t a, b;
            __builtin_memcpy(&a, &dst1[i], 4);
            __builtin_memcpy(&b, &dst2[i], 4);
            same &= a == b;
        }
        check(same, "layer 1: output = layer 2 output, bit for bit");
    }
}

/* The float families: f32 FMLA (f32_f32_f32p) and bf16 BFMMLA (f32_bf16p_bf16p), KxN weights all
 * 0.5 with bias 1.0, activations row 0 of 1.0 and row 1 of 0.25: every sum is exact in f32 and in
 * bf16 (1 + 64 * 0.5 = 33, 1 + 64 * 0.125 = 9). Layer 2 runs KleidiAI's packers and kernel names
 * (the BF16 name falls back to the scalar emulation without FEAT_BF16: same bits); layer 1 runs
 * the same families through qgemm_linear_* (and the f32 family's kernel through qgemm_kernel_run,
 * the rows read in place) and must give the same bits. */
static float wf[K * N], biasf[N];
static float dstf2[M * N], dstf1[M * N];

static int float_hand_result(const float* y) {
    int ok = 1;
    for (size_t i = 0; i < M * N; i++) ok &= y[i] == (i < N ? 33.0f : 9.0f);
    return ok;
}

static int same_bits(const float* a, const float* b, size_t len) {
    int same = 1;
    for (size_t i = 0; i < len; i++) {
        uint32_t x, y;
        __builtin_memcpy(&x, &a[i], 4);
        __builtin_memcpy(&y, &b[i], 4);
        same &= x == y;
    }
    return same;
}

static void float_layer1(uint32_t family, const char* what) {
    uint32_t features = 0;
    check(qgemm_cpu_detect(&features) == QGEMM_OK, "float layer 1: qgemm_cpu_detect");
    size_t wsz = 0, ssz = 0;
    qgemm_linear layer;
    qgemm_status s = qgemm_linear_packed_size(family, N, K, 0, &wsz);
    check(s == QGEMM_OK && wsz <= sizeof rhs_packed1, "float layer 1: qgemm_linear_packed_size fits");
    if (s != QGEMM_OK || wsz > sizeof rhs_packed1) return;
    s = qgemm_linear_pack(family, wf, K * N, QGEMM_LAYOUT_KXN, N, N, K, biasf, N, rhs_packed1, wsz, &layer);
    check(s == QGEMM_OK, "float layer 1: qgemm_linear_pack (KxN, bias)");
    s = qgemm_linear_scratch_size(&layer, M, &ssz);
    check(s == QGEMM_OK && ssz <= sizeof lhs_packed1, "float layer 1: qgemm_linear_scratch_size fits");
    if (s != QGEMM_OK || ssz > sizeof lhs_packed1) return;
    check(qgemm_linear_run(&layer, features, M, lhs, M * K, dstf1, M * N - 1, lhs_packed1, ssz) ==
              QGEMM_ERROR_BUFFER_TOO_SHORT,
          "float layer 1: an output one element short is QGEMM_ERROR_BUFFER_TOO_SHORT");
    check(qgemm_linear_run(&layer, features, M, lhs, M * K, dstf1, M * N, lhs_packed1, ssz) == QGEMM_OK,
          "float layer 1: qgemm_linear_run");
    sh_puts("    ");
    sh_puts(what);
    sh_puts("\n");
    check(same_bits(dstf1, dstf2, M * N), "float layer 1: output = layer 2 output, bit for bit");
}

/* The f32 family's kernel for M rows through qgemm_kernel_run: the rows read in place (their
 * stride a qgemm_lhs_stride_params), the weights packed by qgemm_rhs_f32p16_pack. */
static void float_kernel_f32(void) {
    uint32_t features = 0;
    qgemm_kernel kernel;
    qgemm_kernel_info info;
    size_t rsz = 0;
    check(qgemm_cpu_detect(&features) == QGEMM_OK &&
              qgemm_select(QGEMM_FAMILY_F32_F32_F32P, features, M, &kernel) == QGEMM_OK &&
              qgemm_kernel_get_info(kernel, &info) == QGEMM_OK && info.lhs.format == QGEMM_LHS_FORMAT_F32 &&
              info.rhs.format == QGEMM_RHS_FORMAT_F32P && info.rhs.nr == 16,
          "float layer 1: qgemm_select of the f32 family (rows in place, f32p16)");
    check(qgemm_rhs_f32p16_packed_size(N, K, &rsz) == QGEMM_OK && rsz <= sizeof rhs_packed1 &&
              qgemm_rhs_f32p16_pack(N, K, wf, K * N, QGEMM_LAYOUT_KXN, N, biasf, N, rhs_packed1, rsz) == QGEMM_OK,
          "float layer 1: qgemm_rhs_f32p16_pack");
    const qgemm_lhs_stride_params rows = {K};
    qgemm_matmul_args args = {.m = M, .n = N, .k = K, .dst_stride_row = N, .clamp_min = no_min,
                              .clamp_max = no_max, .params = &rows};
    check(qgemm_kernel_run(kernel, features, lhs, M * K * sizeof(float), rhs_packed1, rsz, dstf1, M * N, &args) ==
              QGEMM_OK,
          "float layer 1: qgemm_kernel_run (rows in place)");
    sh_puts("    layer 1 kernel: ");
    sh_puts(info.name);
    sh_puts("\n");
    check(same_bits(dstf1, dstf2, M * N), "float layer 1: kernel output = layer 2 output, bit for bit");
}

static void float_families(void) {
    for (size_t i = 0; i < K * N; i++) wf[i] = 0.5f;
    for (size_t i = 0; i < N; i++) biasf[i] = 1.0f;
    /* f32 FMLA: the LHS rows are read in place. */
    size_t rsz = kai_get_rhs_packed_size_rhs_pack_kxn_x32p16x1b_x32_x32_neon(N, K);
    check(rsz <= sizeof rhs_packed, "float layer 2: f32p16 packed size fits");
    if (rsz > sizeof rhs_packed) return;
    kai_run_rhs_pack_kxn_x32p16x1b_x32_x32_neon(1, N, K, kai_get_nr_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(),
                                                 1, 1, N * sizeof(float), wf, biasf, NULL, rhs_packed, 0, NULL);
    kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(M, N, K, lhs, K * sizeof(float), rhs_packed, dstf2,
                                                          N * sizeof(float), sizeof(float), no_min, no_max);
    check(float_hand_result(dstf2), "float layer 2: kai_* f32_f32_f32p16x1b_6x16_neon_mla = hand result");
    float_layer1(QGEMM_FAMILY_F32_F32_F32P, "layer 1: f32_f32_f32p");
    float_kernel_f32();
    /* bf16 BFMMLA: both operands converted to bf16 and packed. */
    const size_t mr = kai_get_mr_matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla();
    const size_t nr = kai_get_nr_matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla();
    const size_t kr = kai_get_kr_matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla();
    const size_t lsz = kai_get_lhs_packed_size_lhs_quant_pack_bf16p8x4_f32_neon(M, K, mr, kr, 1);
    rsz = kai_get_rhs_packed_size_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(N, K, nr, kr);
    check(lsz <= sizeof lhs_packed && rsz <= sizeof rhs_packed, "float layer 2: bf16 packed sizes fit");
    if (lsz > sizeof lhs_packed || rsz > sizeof rhs_packed) return;
    kai_run_lhs_quant_pack_bf16p8x4_f32_neon(M, K, mr, kr, 1, 0, lhs, K * sizeof(float), lhs_packed);
    kai_run_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(1, N, K, nr, kr, 1, N * sizeof(float), wf, biasf, NULL,
                                                          rhs_packed, 0, NULL);
    kai_run_matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla(M, N, K, lhs_packed, rhs_packed, dstf2,
                                                                 N * sizeof(float), sizeof(float), no_min, no_max);
    check(float_hand_result(dstf2), "float layer 2: kai_* f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla = hand result");
    float_layer1(QGEMM_FAMILY_F32_BF16P_BF16P, "layer 1: f32_bf16p_bf16p");
}

int main(void) {
    sh_puts("baremetal-c: qgemm C API on bare metal\n");
    for (size_t i = 0; i < sizeof weights; i++) weights[i] = 0x99;
    for (size_t i = 0; i < N; i++) scales[i] = 0.5f;
    for (size_t i = 0; i < K; i++) {
        lhs[i] = 1.0f;
        lhs[K + i] = 0.25f;
    }
    const int dotprod = ((id_aa64isar0() >> 44) & 0xf) != 0;
    sh_puts(dotprod ? "  cpu: dotprod\n" : "  cpu: no dotprod\n");
    /* start.S leaves SME disabled (CPACR_EL1.SMEN = 0, docs/porting.md: "SMEN may stay as it
     * is"): on a core with SME (-cpu max) the detected features then claim SME, and no call may
     * execute an SME instruction (RDSVL) for the NEON kernels, or it traps (EC 0x1D). */
    const int sme = ((id_aa64pfr1() >> 24) & 0xf) != 0, smen = ((cpacr() >> 24) & 3) == 3;
    sh_puts(sme ? (smen ? "  cpu: sme, enabled\n" : "  cpu: sme, left disabled (CPACR_EL1.SMEN = 0)\n")
                : "  cpu: no sme\n");
    uint32_t detected = 0;
    check(qgemm_cpu_detect(&detected) == QGEMM_OK && ((detected & QGEMM_FEATURE_SME) != 0) == sme,
          "layer 1: qgemm_cpu_detect reports SME as ID_AA64PFR1_EL1 does");
    /* KleidiAI would fault on a dotprod kernel without FEAT_DotProd; qgemm runs the same KleidiAI
     * name on its NEON tier there, with the same bits. */
    layer2();
    layer1();
    int8_family();
    families_16bit();
    families_asymmetric();
    family_2bit();
    float_families();
    sh_puts(failures ? "baremetal-c: FAILED\n" : "baremetal-c: all checks passed\n");
    return failures ? 1 : 0;
}
