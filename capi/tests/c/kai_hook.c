/* Layer-2 error hook test.
 *
 *   kai_hook custom    installs a handler that records the call and longjmps back; makes bad
 *                      KleidiAI calls (each a precondition violation that is UB in KleidiAI) and
 *                      requires the handler to fire for each, with dst untouched, and a good call
 *                      not to fire it. Exit 0 on success.
 *   kai_hook default   makes one bad call with the default handler: it must print the reason
 *                      and abort (the driver expects SIGABRT, exit status 134). */
/* _GNU_SOURCE and the POSIX headers before qgemm.h: the header must not clash with them (it once
 * declared libc's `write` with another type). */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4c32p/kai_matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qsi8d32p_qsi4c32p/kai_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4x4_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_bf16_qai8dxp_qsi4cxp/kai_matmul_clamp_bf16_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_qai8dxp_qsi4cxp/kai_matmul_clamp_f16_qai8dxp4x4_qsi4cxp4x4_16x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_qsi8d32p_qai4c32p/kai_matmul_clamp_f16_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qsi8d32p_qai4c32p/kai_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qsi8d32p_qai4c32p/kai_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsu2cxp/kai_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsu2cxp/kai_matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_bf16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32pscalef32_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32pscalef32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi8cxp_qsi8cx_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_f16_f16p/kai_matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_bf16p_bf16p/kai_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_f32_f32p/kai_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla.h"
#include "kai/ukernels/matmul/pack/kai_lhs_pack_bf16p8x4_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_bf16p1x4_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_x32p16x1b_x32_x32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_x32p16x1bx32_x32_x32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon.h"
#include "kai/ukernels/matmul/matmul_clamp_f16_f16_f16p/kai_matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla_cortexa55.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_f32_f32p/kai_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla_cortexa55.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_f32_f32p/kai_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi8cxp/kai_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32p_f32.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi8cxp_qsi8cx_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_x16p32x1b_x16_x16_neon.h"
#include "qgemm.h"

static jmp_buf back;
static int failures;
static int fired;
static char last_reason[256];

static char last_function[128];
static int user_token;

/* The hook: record the call, check the user pointer, and jump back to the EXPECT_HOOK site. */
static void on_error(const char* function, const char* reason, void* user_data) {
    fired++;
    snprintf(last_function, sizeof last_function, "%s", function);
    snprintf(last_reason, sizeof last_reason, "%s", reason);
    if (user_data != &user_token) {
        fprintf(stderr, "FAIL: hook got user_data %p, expected %p\n", user_data, (void*)&user_token);
        failures++;
    }
    longjmp(back, 1);
}

static int returned;

/* A handler that just counts and returns. */
static void count_and_return(const char* function, const char* reason, void* user_data) {
    (void)function;
    (void)reason;
    (void)user_data;
    returned++;
}

/* Zero-filled packed buffers, big enough for the small shapes below. */
static uint8_t lhs_p[1 << 14], rhs_p[1 << 14];
static float dst[64 * 64];

static int dst_untouched(void) {
    for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
        if (dst[i] != -1.0f) return 0;
    return 1;
}

#define EXPECT_HOOK(what, call)                                                                     \
    do {                                                                                            \
        for (size_t i_ = 0; i_ < sizeof dst / sizeof dst[0]; i_++) dst[i_] = -1.0f;                \
        int before_ = fired;                                                                        \
        if (setjmp(back) == 0) {                                                                    \
            call;                                                                                   \
        }                                                                                           \
        if (fired != before_ + 1) {                                                                 \
            fprintf(stderr, "FAIL %s: error hook did not fire\n", what);                           \
            failures++;                                                                             \
        } else if (!dst_untouched()) {                                                              \
            fprintf(stderr, "FAIL %s: hook fired but dst was written\n", what);                    \
            failures++;                                                                             \
        } else {                                                                                    \
            printf("ok   %s: hook fired in %s (%s)\n", what, last_function, last_reason);            \
        }                                                                                           \
    } while (0)

/* As EXPECT_HOOK, and the reason must be exactly `want`: the messages keep their facts (the
 * library builds them without core::fmt: numbers in decimal, floats as Rust's `{:?}` writes them,
 * a qgemm error as its `Display` text). */
#define EXPECT_REASON(what, want, call)                                                            \
    do {                                                                                            \
        EXPECT_HOOK(what, call);                                                                    \
        if (strcmp(last_reason, (want)) != 0) {                                                     \
            fprintf(stderr, "FAIL %s: reason \"%s\", expected \"%s\"\n", what, last_reason, (want));   \
            failures++;                                                                             \
        }                                                                                           \
        last_reason[0] = 0;                                                                         \
    } while (0)

/* The f32 GEMV names of matmul_clamp_f32_qsi8d32p_qai4c32p, called with m > 1: KleidiAI declares
 * m == 1 and writes row 0 only; qgemm computes every row (docs/c-api.md). A call with m = 5 must
 * equal five calls with m = 1 (rows through the offset getters), bit for bit. */
#define GM 5
#define GN 8
#define GK 64
#define GBL 32
typedef size_t (*gemv_getter)(void);
typedef size_t (*gemv_lhs_off)(size_t, size_t, size_t);
typedef void (*gemv_run)(size_t, size_t, size_t, size_t, const void*, const void*, float*, size_t, size_t, float,
                         float);
static void gemv_every_row(void) {
    static const struct {
        const char* name;
        gemv_getter mr, nr, kr, sr;
        gemv_lhs_off lhs_off;
        gemv_run run;
    } gemvs[] = {
        {"matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod",
         kai_get_mr_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod,
         kai_get_nr_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod,
         kai_get_kr_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod,
         kai_get_sr_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod,
         kai_get_lhs_packed_offset_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod,
         kai_run_matmul_clamp_f32_qsi8d32p1x4_qai4c32p4x4_1x4_neon_dotprod},
        {"matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod",
         kai_get_mr_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod,
         kai_get_nr_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod,
         kai_get_kr_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod,
         kai_get_sr_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod,
         kai_get_lhs_packed_offset_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod,
         kai_run_matmul_clamp_f32_qsi8d32p1x8_qai4c32p4x8_1x4_neon_dotprod},
    };
    static uint8_t codes[GN * GK / 2], lp[1 << 12], rp[1 << 12];
    static float x[GM * GK], zero[GN * GK / GBL], scale[GN * GK / GBL], whole[GM * GN], rows[GM * GN];
    for (size_t i = 0; i < sizeof codes; i++) codes[i] = (uint8_t)(i * 37 + 11);
    for (size_t i = 0; i < GM * GK; i++) x[i] = (float)((int)(i * 7 % 23) - 11) * 0.125f;
    for (size_t i = 0; i < GN * GK / GBL; i++) zero[i] = (float)((int)(i % 5) - 2) * 0.03125f, scale[i] = 0.0625f;
    struct kai_rhs_pack_nxk_qai4c32p_params params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    const float lo = -3.402823466e38f, hi = 3.402823466e38f;
    for (size_t g = 0; g < sizeof gemvs / sizeof gemvs[0]; g++) {
        const size_t mr = gemvs[g].mr(), nr = gemvs[g].nr(), kr = gemvs[g].kr(), sr = gemvs[g].sr();
        const int fits =
            kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32pscalef32_f32_neon(GM, GK, GBL, mr, kr, sr) <= sizeof lp &&
            kai_get_rhs_packed_size_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(GN, GK, nr, kr, GBL) <= sizeof rp;
        if (!fits) {
            fprintf(stderr, "FAIL %s: the test's packed buffers are too small\n", gemvs[g].name);
            failures++;
            continue;
        }
        kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, GN, GK, nr, kr, sr, GBL, codes, zero, NULL, scale,
                                                                    rp, 0, &params);
        kai_run_lhs_quant_pack_qsi8d32pscalef32_f32_neon(GM, GK, GBL, mr, kr, sr, 0, x, GK * sizeof(float), lp);
        for (size_t i = 0; i < GM * GN; i++) whole[i] = rows[i] = -1.0f;
        gemvs[g].run(GM, GN, GK, GBL, lp, rp, whole, GN * sizeof(float), sizeof(float), lo, hi);
        for (size_t r = 0; r < GM; r++)
            gemvs[g].run(1, GN, GK, GBL, lp + gemvs[g].lhs_off(r, GK, GBL), rp, rows + r * GN, GN * sizeof(float),
                         sizeof(float), lo, hi);
        int written = 1;
        for (size_t i = GN; i < GM * GN; i++) written &= whole[i] != -1.0f;
        if (memcmp(whole, rows, sizeof whole) != 0 || !written) {
            fprintf(stderr, "FAIL %s with m = %d: %s\n", gemvs[g].name, GM,
                    written ? "differs from one call per row" : "rows past 0 unwritten");
            failures++;
        } else {
            printf("ok   %s with m = %d: every row computed, equal to one call per row\n", gemvs[g].name, GM);
        }
    }
}

/* The GEMV name of matmul_clamp_f32_qai8dxp_qsu2cxp, called with m > 1 and a look-up table:
 * KleidiAI declares m == 1 and writes row 0 only; qgemm computes every row (docs/c-api.md). A call
 * with m = 5 must equal five calls with m = 1, bit for bit. */
static void gemv_every_row_qsu2cxp(void) {
    static const char* name = "matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod";
    static uint8_t codes[GN * GK / 4], lp[1 << 12], rp[1 << 12];
    static float x[GM * GK], scale[GN], whole[GM * GN], rows[GM * GN];
    static const int32_t lut[4] = {-3, -1, 1, 3};
    for (size_t i = 0; i < sizeof codes; i++) codes[i] = (uint8_t)(i * 37 + 11);
    for (size_t i = 0; i < GM * GK; i++) x[i] = (float)((int)(i * 7 % 23) - 11) * 0.125f;
    for (size_t i = 0; i < GN; i++) scale[i] = 0.0625f;
    struct kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon_params params = {.lhs_zero_point = 1, .rhs_zero_point = 2};
    const float lo = -3.402823466e38f, hi = 3.402823466e38f;
    const size_t mr = kai_get_mr_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(),
                 nr = kai_get_nr_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(),
                 kr = kai_get_kr_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(),
                 sr = kai_get_sr_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod();
    if (kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(GM, GK, mr, kr, sr) > sizeof lp ||
        kai_get_rhs_packed_size_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(GN, GK, nr, kr, sr) > sizeof rp) {
        fprintf(stderr, "FAIL %s: the test's packed buffers are too small\n", name);
        failures++;
        return;
    }
    kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, GN, GK, nr, kr, sr, codes, NULL, scale, rp, 0, &params, lut);
    kai_run_lhs_quant_pack_qai8dxp_f32(GM, GK, mr, kr, sr, 0, x, GK * sizeof(float), lp);
    for (size_t i = 0; i < GM * GN; i++) whole[i] = rows[i] = -1.0f;
    kai_run_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(GM, GN, GK, lp, rp, whole,
                                                                             GN * sizeof(float), sizeof(float), lo, hi,
                                                                             lut);
    for (size_t r = 0; r < GM; r++)
        kai_run_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(
            1, GN, GK, lp + kai_get_lhs_packed_offset_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(r, GK),
            rp, rows + r * GN, GN * sizeof(float), sizeof(float), lo, hi, lut);
    int written = 1;
    for (size_t i = GN; i < GM * GN; i++) written &= whole[i] != -1.0f;
    if (memcmp(whole, rows, sizeof whole) != 0 || !written) {
        fprintf(stderr, "FAIL %s with m = %d: %s\n", name, GM, written ? "differs from one call per row" : "rows past 0 unwritten");
        failures++;
    } else {
        printf("ok   %s with m = %d and a look-up table: every row computed, equal to one call per row\n", name, GM);
    }
}

/* The 1x36 BFDOT kernel and the bf16p1x4 LHS packer, called with m > 1: KleidiAI requires m == 1
 * and processes row 0 only; qgemm processes every row (docs/c-api.md). Packing m = 5 rows in one
 * call must equal five calls of one row (row i at i * get_lhs_packed_size(1, ...)), and a kernel
 * call with m = 5 five calls of one row, bit for bit, every row written. */
#define FM 5
#define FN 40
#define FK 7
static void bf16_every_row(void) {
    static const char* name = "matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot";
    static float x[FM * FK], w[FK * FN], bias[FN], whole[FM * FN], rows[FM * FN];
    static uint8_t lp_whole[1 << 10], lp_rows[1 << 10], rp[1 << 12];
    for (size_t i = 0; i < FM * FK; i++) x[i] = (float)((int)(i * 7 % 23) - 11) * 0.1234567f;
    for (size_t i = 0; i < FK * FN; i++) w[i] = (float)((int)(i * 5 % 19) - 9) * 0.0987654f;
    for (size_t i = 0; i < FN; i++) bias[i] = (float)i * 0.01f;
    const size_t mr = kai_get_mr_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(),
                 nr = kai_get_nr_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(),
                 kr = kai_get_kr_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(),
                 sr = kai_get_sr_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot();
    const size_t row = kai_get_lhs_packed_size_lhs_quant_pack_bf16p1x4_f32_neon(1, FK, mr, kr, sr);
    if (kai_get_lhs_packed_size_lhs_quant_pack_bf16p1x4_f32_neon(FM, FK, mr, kr, sr) > sizeof lp_whole ||
        kai_get_rhs_packed_size_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(FN, FK, nr, kr) > sizeof rp) {
        fprintf(stderr, "FAIL %s: the test's packed buffers are too small\n", name);
        failures++;
        return;
    }
    kai_run_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(1, FN, FK, nr, kr, sr, FN * sizeof(float), w, bias, NULL, rp, 0,
                                                          NULL);
    memset(lp_whole, 0xA5, sizeof lp_whole);
    memset(lp_rows, 0xA5, sizeof lp_rows);
    kai_run_lhs_quant_pack_bf16p1x4_f32_neon(FM, FK, mr, kr, sr, 0, x, FK * sizeof(float), lp_whole);
    for (size_t r = 0; r < FM; r++)
        kai_run_lhs_quant_pack_bf16p1x4_f32_neon(1, FK, mr, kr, sr, 0, x + r * FK, FK * sizeof(float), lp_rows + r * row);
    if (memcmp(lp_whole, lp_rows, sizeof lp_whole) != 0) {
        fprintf(stderr, "FAIL lhs_quant_pack_bf16p1x4_f32_neon with m = %d: differs from one call per row\n", FM);
        failures++;
    } else {
        printf("ok   lhs_quant_pack_bf16p1x4_f32_neon with m = %d: every row packed, equal to one call per row\n", FM);
    }
    const float lo = -3.402823466e38f, hi = 3.402823466e38f;
    for (size_t i = 0; i < FM * FN; i++) whole[i] = rows[i] = -1.0f;
    kai_run_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(FM, FN, FK, lp_rows, rp, whole, FN * sizeof(float),
                                                               sizeof(float), lo, hi);
    for (size_t r = 0; r < FM; r++)
        for (size_t n0 = 0; n0 < FN; n0 += kai_get_n_step_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot()) {
            const size_t nn = FN - n0 < 36 ? FN - n0 : 36;
            kai_run_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(
                1, nn, FK, lp_rows + r * row,
                rp + kai_get_rhs_packed_offset_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(n0, FK),
                rows + r * FN + n0, FN * sizeof(float), sizeof(float), lo, hi);
        }
    /* One row: KleidiAI's 1x36 kernel ignores dst_stride_row, so 0 is accepted (no hook) and
     * gives row 0's bits. */
    static float one[FN];
    int before = fired;
    if (setjmp(back) == 0)
        kai_run_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(1, FN, FK, lp_rows, rp, one, 0, sizeof(float), lo,
                                                                   hi);
    if (fired != before || memcmp(one, rows, sizeof one) != 0) {
        fprintf(stderr, "FAIL %s with m = 1, dst_stride_row = 0: %s\n", name,
                fired != before ? "the hook fired" : "differs from row 0");
        failures++;
    } else {
        printf("ok   %s with m = 1, dst_stride_row = 0 (ignored, as by KleidiAI): row 0's bits\n", name);
    }
    int written = 1;
    for (size_t i = FN; i < FM * FN; i++) written &= whole[i] != -1.0f;
    if (memcmp(whole, rows, sizeof whole) != 0 || !written) {
        fprintf(stderr, "FAIL %s with m = %d: %s\n", name, FM, written ? "differs from one call per row" : "rows past 0 unwritten");
        failures++;
    } else {
        printf("ok   %s with m = %d: every row computed, equal to one call per row\n", name, FM);
    }
}

/* Parameters KleidiAI's implementation never reads (docs/c-api.md, "Parameters KleidiAI
 * ignores"): qgemm ignores them too, whatever their value. llama.cpp's KleidiAI backend passes the
 * Q8_0 block length (32) in the `sr` slot of the qsi8cxp size and stride getters, then packs with
 * the kernel's sr; each getter below is called with the normal arguments and with odd values in
 * its ignored slots and must return the same non-zero value without calling the hook, and the
 * kernels that ignore dst_stride_col must write the normal call's bits with any value there. */
static int ignored_fired;
static char ignored_function[128], ignored_reason[256];
static void record_ignored(const char* function, const char* reason, void* user_data) {
    (void)user_data;
    ignored_fired++;
    snprintf(ignored_function, sizeof ignored_function, "%s", function);
    snprintf(ignored_reason, sizeof ignored_reason, "%s", reason);
}
static int ignored_checks;
static void same_value(const char* what, size_t normal, size_t odd) {
    ignored_checks++;
    if (normal == 0 || odd != normal) {
        fprintf(stderr, "FAIL ignored parameters, %s: %zu, normal call %zu\n", what, odd, normal);
        failures++;
    }
}
static void same_bytes(const char* what, const void* normal, const void* odd, size_t bytes, int untouched) {
    ignored_checks++;
    if (untouched || memcmp(normal, odd, bytes) != 0) {
        fprintf(stderr, "FAIL ignored parameters, %s: %s\n", what, untouched ? "dst not written" : "differs from the normal call");
        failures++;
    }
}
/* The odd values put in ignored kr / sr slots (llama.cpp's 32, zero, and a value no packing has). */
static const size_t odd_values[] = {32, 0, 3};
#define ODD_COUNT (sizeof odd_values / sizeof odd_values[0])
static void ignored_parameters(void) {
    qgemm_kai_set_error_handler(record_ignored, NULL);
    const int before = ignored_fired;
    const size_t n = 36, k = 96, bl = 32;
    for (size_t i = 0; i < ODD_COUNT; i++) {
        const size_t o = odd_values[i];
        /* qsi8cxp (KleidiAI reads neither kr nor sr): first as llama.cpp calls them (kr, 32). */
        same_value("rhs_pack_nxk_qsi8cxp_qsi8cx_neon packed_size", kai_get_rhs_packed_size_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(n, k, 4, 8, 1),
                   kai_get_rhs_packed_size_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(n, k, 4, 8, o));
        same_value("rhs_pack_nxk_qsi8cxp_qsi8cx_neon packed_stride", kai_get_rhs_packed_stride_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(k, 4, 8, 1),
                   kai_get_rhs_packed_stride_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(k, 4, 8, o));
        same_value("rhs_pack_nxk_qsi8cxp_qsi8cx_neon packed_offset", kai_get_rhs_packed_offset_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(8, k, 4, 8, 1),
                   kai_get_rhs_packed_offset_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(8, k, 4, o, o));
        same_value("rhs_pack_kxn_qsi8cxp_qsi8cx_neon packed_size", kai_get_rhs_packed_size_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(n, k, 4, 4, 1),
                   kai_get_rhs_packed_size_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(n, k, 4, o, o));
        same_value("rhs_pack_kxn_qsi8cxp_qsi8cx_neon packed_stride", kai_get_rhs_packed_stride_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(k, 4, 4, 1),
                   kai_get_rhs_packed_stride_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(k, 4, 4, o));
        same_value("rhs_pack_kxn_qsi8cxp_qsi8cx_neon packed_offset", kai_get_rhs_packed_offset_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(8, k, 4, 4, 1),
                   kai_get_rhs_packed_offset_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(8, k, 4, o, o));
        same_value("rhs_pack_kxn_qsi8cxp_qsi8cx_neon rhs_offset (rhs_stride)", kai_get_rhs_offset_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(8, n),
                   kai_get_rhs_offset_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(8, o));
        /* qsi4cxp and qsu2cxp (neither kr nor sr read). */
        same_value("rhs_pack_nxk_qsi4cxp_qs4cxs1s0 packed_size", kai_get_rhs_packed_size_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(n, k, 8, 16, 2),
                   kai_get_rhs_packed_size_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(n, k, 8, o, o));
        same_value("rhs_pack_nxk_qsi4cxp_qs4cxs1s0 packed_stride", kai_get_rhs_packed_stride_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(k, 8, 16, 2),
                   kai_get_rhs_packed_stride_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(k, 8, 16, o));
        same_value("rhs_pack_kxn_qsi4cxp_qs4cxs1s0 packed_offset", kai_get_rhs_packed_offset_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(16, k, 8, 16, 2),
                   kai_get_rhs_packed_offset_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(16, k, 8, o, o));
        same_value("rhs_pack_kxn_qsi4cxp_qs4cxs1s0 rhs_offset (rhs_stride)", kai_get_rhs_offset_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(8, n / 2),
                   kai_get_rhs_offset_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(8, o));
        same_value("rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon packed_size",
                   kai_get_rhs_packed_size_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(n, k, 4, 4, 1),
                   kai_get_rhs_packed_size_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(n, k, 4, o, o));
        same_value("rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon packed_offset",
                   kai_get_rhs_packed_offset_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(8, k, 4, 4, 1),
                   kai_get_rhs_packed_offset_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(8, k, 4, o, o));
        same_value("rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon packed_stride",
                   kai_get_rhs_packed_stride_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(k, 4, 4, 1),
                   kai_get_rhs_packed_stride_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(k, 4, o, o));
        /* qsi4c32p (sr not read; kr is asserted and stays checked). */
        same_value("rhs_pack_nxk_qsi4c32p_qsu4c32s1s0 packed_size",
                   kai_get_rhs_packed_size_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(n, k, 4, 16, 2, bl, kai_dt_bf16),
                   kai_get_rhs_packed_size_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(n, k, 4, 16, o, bl, kai_dt_bf16));
        same_value("rhs_pack_kxn_qsi4c32p_qsu4c32s1s0 packed_stride",
                   kai_get_rhs_packed_stride_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(k, 8, 16, 2, bl, kai_dt_bf16),
                   kai_get_rhs_packed_stride_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(k, 8, 16, o, bl, kai_dt_bf16));
        same_value("rhs_pack_kxn_qsi4c32p_qsu4c32s1s0 packed_offset",
                   kai_get_rhs_packed_offset_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(8, k, 8, 8, 2, bl, kai_dt_bf16),
                   kai_get_rhs_packed_offset_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(8, k, 8, 8, o, bl, kai_dt_bf16));
        same_value("rhs_pack_kxn_qsi4c32p_qsu4c32s1s0 rhs_offset (rhs_stride)", kai_get_rhs_offset_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(8, n / 2),
                   kai_get_rhs_offset_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(8, o));
        /* The qai8dxp LHS packers (neither kr nor sr read). */
        same_value("lhs_quant_pack_qai8dxp_f32 packed_size", kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(5, k, 4, 16, 2),
                   kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(5, k, 4, o, o));
        same_value("lhs_quant_pack_qai8dxp_f32 packed_offset", kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_f32(4, k, 4, 16, 2),
                   kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_f32(4, k, 4, o, o));
        same_value("lhs_quant_pack_qai8dxp_f16_neon packed_size", kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f16_neon(5, k, 4, 8, 2),
                   kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f16_neon(5, k, 4, o, o));
        same_value("lhs_quant_pack_qai8dxp_bf16_neon packed_offset", kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_bf16_neon(8, k, 4, 16, 2),
                   kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_bf16_neon(8, k, 4, o, o));
        /* The per-block LHS packers (sr not read; kr is asserted and stays checked). */
        same_value("lhs_quant_pack_qsi8d32p_f32 packed_size", kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32p_f32(5, k, bl, 4, 16, 2),
                   kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32p_f32(5, k, bl, 4, 16, o));
        same_value("lhs_quant_pack_qsi8d32p_f32 packed_offset", kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32p_f32(4, k, bl, 4, 8, 2),
                   kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32p_f32(4, k, bl, 4, 8, o));
        same_value("lhs_quant_pack_qsi8d32pscalef32_f32_neon packed_size",
                   kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32pscalef32_f32_neon(5, k, bl, 4, 16, 2),
                   kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32pscalef32_f32_neon(5, k, bl, 4, 16, o));
        same_value("lhs_quant_pack_qsi8d32pscalef32_f16_neon packed_offset",
                   kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32pscalef32_f16_neon(4, k, bl, 4, 8, 2),
                   kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32pscalef32_f16_neon(4, k, bl, 4, 8, o));
    }

    /* llama.cpp's Q8_0 flow: the size from the getter with sr = 32, the weights packed with the
     * kernel's sr (1), then run; the bytes and the output equal the normal flow's, and the packer
     * writes exactly the size the getter gave (a canary after it stays). */
    enum { QN = 12, QK = 64, QM = 3 };
    static int8_t w8[QN * QK];
    static float s8[QN], b8[QN], x8[QM * QK], y_normal[QM * QN], y_llama[QM * QN];
    static uint8_t packed_normal[1 << 12], packed_llama[1 << 12], lhs8[1 << 12];
    for (size_t i = 0; i < QN * QK; i++) w8[i] = (int8_t)((int)(i * 29 % 255) - 127);
    for (size_t i = 0; i < QN; i++) s8[i] = 0.01f * (float)(i + 1), b8[i] = 0.5f * (float)i - 2.0f;
    for (size_t i = 0; i < QM * QK; i++) x8[i] = (float)((int)(i * 7 % 23) - 11) * 0.25f;
    const size_t mr = kai_get_mr_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod(),
                 nr = kai_get_nr_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod(),
                 kr = kai_get_kr_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod(),
                 sr = kai_get_sr_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod();
    const size_t size_normal = kai_get_rhs_packed_size_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(QN, QK, nr, kr, sr);
    const size_t size_llama = kai_get_rhs_packed_size_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(QN, QK, nr, kr, 32);
    same_value("llama.cpp flow: rhs_pack_nxk_qsi8cxp_qsi8cx_neon packed_size with sr = 32", size_normal, size_llama);
    if (size_llama != 0 && size_llama + 16 <= sizeof packed_llama &&
        kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(QM, QK, mr, kr, sr) <= sizeof lhs8) {
        struct kai_rhs_pack_qsi8cx_params params = {.lhs_zero_point = 1, .scale_multiplier = 1.0f};
        memset(packed_normal, 0xA5, sizeof packed_normal);
        memset(packed_llama, 0xA5, sizeof packed_llama);
        kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, QN, QK, nr, kr, sr, w8, b8, s8, packed_normal, 0, &params);
        kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, QN, QK, nr, kr, sr, w8, b8, s8, packed_llama, 0, &params);
        same_bytes("llama.cpp flow: packed weights", packed_normal, packed_llama, sizeof packed_llama, 0);
        int canary = 1;
        for (size_t i = size_llama; i < size_llama + 16; i++) canary &= packed_llama[i] == 0xA5;
        ignored_checks++;
        if (!canary || packed_llama[size_llama - 1] == 0xA5) {
            fprintf(stderr, "FAIL llama.cpp flow: the packer did not write exactly packed_size = %zu bytes\n", size_llama);
            failures++;
        }
        kai_run_lhs_quant_pack_qai8dxp_f32(QM, QK, mr, kr, sr, 0, x8, QK * sizeof(float), lhs8);
        for (size_t i = 0; i < QM * QN; i++) y_normal[i] = y_llama[i] = -1.0f;
        const float lo = -3.402823466e38f, hi = 3.402823466e38f;
        for (size_t r = 0; r < QM; r++) {
            const size_t lo_off = kai_get_lhs_packed_offset_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod(r, QK);
            kai_run_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod(1, QN, QK, lhs8 + lo_off, packed_normal,
                                                                         y_normal + r * QN, QN * sizeof(float),
                                                                         sizeof(float), lo, hi);
            kai_run_matmul_clamp_f32_qai8dxp1x4_qsi8cxp4x4_1x4_neon_dotprod(1, QN, QK, lhs8 + lo_off, packed_llama,
                                                                         y_llama + r * QN, QN * sizeof(float),
                                                                         sizeof(float), lo, hi);
        }
        same_bytes("llama.cpp flow: output", y_normal, y_llama, sizeof y_llama, y_llama[QM * QN - 1] == -1.0f);
    } else {
        fprintf(stderr, "FAIL llama.cpp flow: packed_size %zu (the test's buffers hold %zu)\n", size_llama,
                sizeof packed_llama - 16);
        failures++;
    }

    /* Kernels that never read dst_stride_col: any value gives the normal call's bits. */
    enum { FLN = 16, FLK = 8, FLM = 3 };
    static float wf[FLK * 32], bf[32], xf[FLM * FLK], y4[FLM * 32], yo[FLM * 32];
    static uint16_t wh[FLK * 32], bh[32], xh[FLM * FLK], h2[FLM * 32], ho[FLM * 32];
    static uint8_t rpf[1 << 12], rph[1 << 12], lpb[1 << 10], rpb[1 << 12];
    for (size_t i = 0; i < FLK * 32; i++) wf[i] = (float)((int)(i * 5 % 19) - 9) * 0.125f, wh[i] = (uint16_t)(0x3800 + (i % 9) * 0x40);
    for (size_t i = 0; i < 32; i++) bf[i] = 0.25f * (float)i, bh[i] = (uint16_t)(0x3c00 + i);
    for (size_t i = 0; i < FLM * FLK; i++) xf[i] = (float)((int)(i * 7 % 23) - 11) * 0.5f, xh[i] = (uint16_t)(0x3c00 + i * 0x20);
    const float lo = -3.402823466e38f, hi = 3.402823466e38f;
    const size_t odd_cols[] = {7, 0, 32};
    kai_run_rhs_pack_kxn_x32p16x1b_x32_x32_neon(1, FLN, FLK, 16, 1, 1, FLN * sizeof(float), wf, bf, NULL, rpf, 0, NULL);
    kai_run_rhs_pack_kxn_x16p32x1b_x16_x16_neon(1, 32, FLK, 32, 1, 1, 32 * 2, wh, bh, NULL, rph, 0, NULL);
    kai_run_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(1, 32, FLK, 12, 4, 1, 32 * sizeof(float), wf, bf, NULL, rpb, 0,
                                                          NULL);
    kai_run_lhs_quant_pack_bf16p1x4_f32_neon(1, FLK, 1, 4, 1, 0, xf, FLK * sizeof(float), lpb);
    /* The bf16p1x4 packer never reads lhs_stride (KleidiAI's packs one row). */
    static uint8_t lpb_odd[sizeof lpb];
    memcpy(lpb_odd, lpb, sizeof lpb);
    memset(lpb_odd, 0xA5, kai_get_lhs_packed_size_lhs_quant_pack_bf16p1x4_f32_neon(1, FLK, 1, 4, 1));
    kai_run_lhs_quant_pack_bf16p1x4_f32_neon(1, FLK, 1, 4, 1, 0, xf, 3, lpb_odd);
    same_bytes("lhs_quant_pack_bf16p1x4_f32_neon with lhs_stride = 3", lpb, lpb_odd, sizeof lpb, 0);
    for (size_t c = 0; c < sizeof odd_cols / sizeof odd_cols[0]; c++) {
        const size_t col = odd_cols[c];
        for (size_t i = 0; i < FLM * 32; i++) y4[i] = yo[i] = -1.0f, h2[i] = ho[i] = 0xffff;
        kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(FLM, FLN, FLK, xf, FLK * 4, rpf, y4, FLN * 4, 4, lo, hi);
        kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(FLM, FLN, FLK, xf, FLK * 4, rpf, yo, FLN * 4, col, lo, hi);
        same_bytes("matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla with odd dst_stride_col", y4, yo, sizeof yo, yo[FLM * FLN - 1] == -1.0f);
        for (size_t i = 0; i < FLM * 32; i++) yo[i] = -1.0f;
        kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla_cortexa55(FLM, FLN, FLK, xf, FLK * 4, rpf, yo, FLN * 4, col, lo,
                                                                       hi);
        same_bytes("matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla_cortexa55 with odd dst_stride_col", y4, yo, sizeof yo,
                   yo[FLM * FLN - 1] == -1.0f);
        kai_run_matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla(FLM, 32, FLK, xh, FLK * 2, rph, h2, 32 * 2, 2, lo, hi);
        kai_run_matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla(FLM, 32, FLK, xh, FLK * 2, rph, ho, 32 * 2, col, lo, hi);
        same_bytes("matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla with odd dst_stride_col", h2, ho, sizeof ho, ho[FLM * 32 - 1] == 0xffff);
        for (size_t i = 0; i < FLM * 32; i++) ho[i] = 0xffff;
        kai_run_matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla_cortexa55(FLM, 32, FLK, xh, FLK * 2, rph, ho, 32 * 2, col, lo,
                                                                       hi);
        same_bytes("matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla_cortexa55 with odd dst_stride_col", h2, ho, sizeof ho,
                   ho[FLM * 32 - 1] == 0xffff);
        for (size_t i = 0; i < FLM * 32; i++) y4[i] = yo[i] = -1.0f;
        kai_run_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(1, 32, FLK, lpb, rpb, y4, 32 * 4, 4, lo, hi);
        kai_run_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(1, 32, FLK, lpb, rpb, yo, 32 * 4, col, lo, hi);
        same_bytes("matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot with odd dst_stride_col", y4, yo, sizeof yo, yo[31] == -1.0f);
    }
    if (ignored_fired != before) {
        fprintf(stderr, "FAIL ignored parameters: the hook fired %d times (last: %s: %s)\n", ignored_fired - before,
                ignored_function, ignored_reason);
        failures++;
    } else {
        printf("ok   ignored parameters: %d checks (sr = 32 as llama.cpp passes it, 0 and 3 in every slot KleidiAI does not "
               "read), no hook\n", ignored_checks);
    }
    qgemm_kai_set_error_handler(on_error, &user_token);
}

int main(int argc, char** argv) {
    if (argc != 2 || (strcmp(argv[1], "custom") != 0 && strcmp(argv[1], "default") != 0)) {
        fprintf(stderr, "usage: kai_hook custom|default\n");
        return 2;
    }
    const float lo = -1e30f, hi = 1e30f;
    if (strcmp(argv[1], "default") == 0) {
        /* dst_stride_col must be sizeof(float): the default handler prints and aborts. */
        kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 8, lo, hi);
        fprintf(stderr, "FAIL: the default handler returned\n");
        return 1;
    }
    qgemm_kai_set_error_handler(on_error, &user_token);

    EXPECT_REASON("dst_stride_col = 8", "dst_stride_col = 8, must be the output element size, 4",
                  kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 8,
                                                                                    lo, hi));
    EXPECT_HOOK("dst_stride_row < 4n",
                kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 8, 4, lo,
                                                                                hi));
    EXPECT_HOOK("m = 2 for qsi8d32p1x4_qsi4c32p4x4_1x4 (m must be 1)",
                kai_run_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4x4_1x4_neon_dotprod(2, 4, 32, 32, lhs_p, rhs_p, dst, 16,
                                                                                  4, lo, hi));
    EXPECT_HOOK("bl = 48 (not a multiple of 32)",
                kai_run_matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod(1, 4, 96, 48, lhs_p, rhs_p, dst, 16,
                                                                                    4, lo, hi));
    EXPECT_REASON("k % bl != 0", "k = 96 is not a multiple of 64",
                  kai_run_matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod(1, 4, 96, 64, lhs_p, rhs_p, dst,
                                                                                        16, 4, lo, hi));
    EXPECT_HOOK("null dst",
                kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, NULL, 16, 4, lo,
                                                                                hi));
    EXPECT_HOOK("dst_stride_col = 4 for an f16 output (must be 2)",
                kai_run_matmul_clamp_f16_qai8dxp4x4_qsi4cxp4x4_16x4_neon_dotprod(4, 4, 32, lhs_p, rhs_p, dst, 8, 4, lo,
                                                                                 hi));
    EXPECT_HOOK("dst_stride_row < 2n for a bf16 output",
                kai_run_matmul_clamp_bf16_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm(4, 8, 32, lhs_p, rhs_p, dst, 14, 2, lo,
                                                                              hi));
    EXPECT_REASON("scalar_min > scalar_max", "invalid clamp range [1e30, -1e30]: a bound is NaN or min > max",
                  kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 4,
                                                                                    hi, lo));
    /* Floats as Rust's `{:?}` writes them (plain from 1e-4 to 1e16, else exponential; the
     * shortest digits that read back: 0.1f is 0.100000001490116..., FLT_MIN 1.17549435e-38). */
    static const struct {
        float min, max;
        const char* text;
    } clamps[] = {
        {2.0f, 0.5f, "[2.0, 0.5]"},
        {0.1f, -0.0f, "[0.1, -0.0]"},
        {123456.79f, 1e-4f, "[123456.79, 0.0001]"},
        {9.999999e-5f, -3.4028235e38f, "[9.999999e-5, -3.4028235e38]"},
        {1e16f, 1.17549435e-38f, "[1e16, 1.1754944e-38]"},
        {INFINITY, 1.4e-45f, "[inf, 1e-45]"},
        {16777216.0f, 9999999.0f, "[16777216.0, 9999999.0]"},
    };
    static size_t i; /* static: not clobbered by the hook's longjmp */
    for (i = 0; i < sizeof clamps / sizeof clamps[0]; i++) {
        static char want[128];
        snprintf(want, sizeof want, "invalid clamp range %s: a bound is NaN or min > max", clamps[i].text);
        EXPECT_REASON(want, want,
                      kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 4,
                                                                                      clamps[i].min, clamps[i].max));
    }

    EXPECT_REASON("dst_offset at n_idx = 2 (n_step 4)",
                  "(m_idx, n_idx) = (0, 2) is not a multiple of (m_step, n_step) = (4, 4)",
                  (void)kai_get_dst_offset_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(0, 2, 16));
    EXPECT_HOOK("lhs_packed_offset at m_idx = 2 (mr 4)",
                (void)kai_get_lhs_packed_offset_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(2, 32));

    /* Packers: a NaN activation, bad zero points, a bad scale type. The packed buffers must stay
     * untouched as well: they are compared with a copy. */
    static float lhs_f32[4 * 32];
    static uint8_t raw[64 * 32], packed_copy[sizeof lhs_p];
    static float scale_f32[64];
    static uint16_t scale_bf16[64];
    for (int i = 0; i < 4 * 32; i++) lhs_f32[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < 64; i++) {
        scale_f32[i] = 0.25f;
        scale_bf16[i] = 0x3e80; /* 0.25 */
    }
    lhs_f32[37] = NAN;
    memcpy(packed_copy, lhs_p, sizeof lhs_p);
    EXPECT_HOOK("lhs_stride whose rows exceed isize::MAX bytes (lhs_quant_pack_qai8dxp_f32)",
                kai_run_lhs_quant_pack_qai8dxp_f32(3, 32, 4, 16, 2, 0, lhs_f32, (size_t)1 << 62, lhs_p));
    EXPECT_REASON("NaN activation (lhs_quant_pack_qai8dxp_f32)", "lhs[37] is NaN or infinite",
                  kai_run_lhs_quant_pack_qai8dxp_f32(4, 32, 4, 16, 2, 0, lhs_f32, 32 * sizeof(float), lhs_p));
    EXPECT_HOOK("NaN activation (lhs_quant_pack_qsi8d32pscalef32_f32_neon)",
                kai_run_lhs_quant_pack_qsi8d32pscalef32_f32_neon(4, 32, 32, 4, 16, 2, 0, lhs_f32, 32 * sizeof(float),
                                                                 lhs_p));
    if (memcmp(packed_copy, lhs_p, sizeof lhs_p) != 0) {
        fprintf(stderr, "FAIL NaN activation: the packer wrote before failing\n");
        failures++;
    }
    lhs_f32[37] = 1.0f;
    /* The f16 and bf16 packers: a NaN, a start inside a tile of mr = 4 rows (KleidiAI corrupts the
     * buffer there), a kr / sr they do not support. */
    static uint16_t lhs_16[8 * 32];
    for (int i = 0; i < 8 * 32; i++) lhs_16[i] = 0x3c00; /* 1.0 in f16 (about 1.9 as bf16) */
    lhs_16[40] = 0x7e00; /* NaN in f16 */
    EXPECT_HOOK("NaN activation (lhs_quant_pack_qai8dxp_f16_neon)",
                kai_run_lhs_quant_pack_qai8dxp_f16_neon(4, 32, 4, 8, 2, 0, lhs_16, 32 * 2, lhs_p));
    lhs_16[40] = 0x7f80; /* +infinity in bf16 */
    EXPECT_HOOK("infinite activation (lhs_quant_pack_qai8dxp_bf16_neon)",
                kai_run_lhs_quant_pack_qai8dxp_bf16_neon(4, 32, 4, 16, 2, 0, lhs_16, 32 * 2, lhs_p));
    lhs_16[40] = 0x3c00;
    if (memcmp(packed_copy, lhs_p, sizeof lhs_p) != 0) {
        fprintf(stderr, "FAIL non-finite 16-bit activations: a packer wrote before failing\n");
        failures++;
    }
    EXPECT_HOOK("m_idx_start = 2 with mr = 4 (lhs_quant_pack_qai8dxp_f16_neon)",
                kai_run_lhs_quant_pack_qai8dxp_f16_neon(4, 32, 4, 8, 2, 2, lhs_16, 32 * 2, lhs_p));
    EXPECT_HOOK("m_idx_start = 2 with mr = 4 (lhs_quant_pack_qai8dxp_bf16_neon)",
                kai_run_lhs_quant_pack_qai8dxp_bf16_neon(4, 32, 4, 16, 2, 2, lhs_16, 32 * 2, lhs_p));
    EXPECT_HOOK("kr / sr = 4 (lhs_quant_pack_qai8dxp_bf16_neon: must be 8)",
                kai_run_lhs_quant_pack_qai8dxp_bf16_neon(4, 32, 4, 8, 2, 0, lhs_16, 32 * 2, lhs_p));
    EXPECT_REASON("kr / sr = 16 (lhs_quant_pack_qai8dxp_f16_neon: must be 4 or 8)",
                  "unsupported kr (16) for this kernel or packer",
                  kai_run_lhs_quant_pack_qai8dxp_f16_neon(4, 32, 4, 16, 1, 0, lhs_16, 32 * 2, lhs_p));
    EXPECT_HOOK("bl = 48 (lhs_quant_pack_qsi8d32pscalef32_f16_neon)",
                kai_run_lhs_quant_pack_qsi8d32pscalef32_f16_neon(4, 96, 48, 4, 16, 2, 0, lhs_16, 32 * 2, lhs_p));
    EXPECT_HOOK("lhs_packed_offset at m_idx = 2 with mr = 4 (lhs_quant_pack_qsi8d32pscalef32_f32_neon)",
                (void)kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32pscalef32_f32_neon(2, 32, 32, 4, 16, 2));
    if (memcmp(packed_copy, lhs_p, sizeof lhs_p) != 0) {
        fprintf(stderr, "FAIL rejected 16-bit packer calls: the packer wrote\n");
        failures++;
    }
    struct kai_rhs_pack_qs4cxs1s0_param bad_zp = {.lhs_zero_point = 1, .rhs_zero_point = 4};
    EXPECT_HOOK("rhs_zero_point = 4 (rhs_pack_nxk_qsi4cxp_qs4cxs1s0)",
                kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, 4, 32, 4, 16, 2, raw, NULL, scale_f32, rhs_p, 0, &bad_zp));
    struct kai_rhs_pack_qs4cxs1s0_param good_zp = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    EXPECT_HOOK("num_groups = 2 (rhs_pack_nxk_qsi4cxp_qs4cxs1s0)",
                kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(2, 4, 32, 4, 16, 2, raw, NULL, scale_f32, rhs_p, 0, &good_zp));
    struct kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0_params f16_scales = {
        .lhs_zero_point = 1, .rhs_zero_point = 8, .scale_dt = kai_dt_f16};
    EXPECT_REASON("scale_dt = f16 (rhs_pack_nxk_qsi4c32p_qsu4c32s1s0)",
                  "scale_dt = 0x0212, only kai_dt_bf16 (0x0213) is supported",
                  kai_run_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(1, 4, 64, 4, 16, 2, 32, raw, 32, NULL, scale_bf16, 4, rhs_p,
                                                             0, &f16_scales));
    /* The asymmetric int4 packer: null offsets, bad zero points, sr, a NaN scale, and its kernels' bl. */
    static float zero_f32[64];
    struct kai_rhs_pack_nxk_qai4c32p_params qai_zp = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    EXPECT_HOOK("zero = NULL (rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon)",
                kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, 4, 64, 4, 16, 2, 32, raw, NULL, NULL,
                                                                            scale_f32, rhs_p, 0, &qai_zp));
    EXPECT_HOOK("rhs_zero_point = 4 (rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon)",
                kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, 4, 64, 4, 16, 2, 32, raw, zero_f32, NULL,
                                                                            scale_f32, rhs_p, 0, &bad_zp));
    EXPECT_HOOK("sr = 1 (rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon)",
                kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, 4, 64, 4, 16, 1, 32, raw, zero_f32, NULL,
                                                                            scale_f32, rhs_p, 0, &qai_zp));
    scale_f32[7] = NAN;
    memcpy(packed_copy, rhs_p, sizeof rhs_p);
    EXPECT_HOOK("NaN scale (rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon)",
                kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, 4, 64, 4, 16, 2, 32, raw, zero_f32, NULL,
                                                                            scale_f32, rhs_p, 0, &qai_zp));
    if (memcmp(packed_copy, rhs_p, sizeof rhs_p) != 0) {
        fprintf(stderr, "FAIL NaN scale: the qai4c32p packer wrote before failing\n");
        failures++;
    }
    scale_f32[7] = 0.25f;
    EXPECT_HOOK("k % bl != 0 (matmul_clamp_f16_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm)",
                kai_run_matmul_clamp_f16_qsi8d32p4x8_qai4c32p4x8_8x4_neon_i8mm(4, 4, 96, 64, lhs_p, rhs_p, dst, 8, 2, lo,
                                                                                hi));
    /* The 2-bit packer and kernels: a table outside [-64, 63] (KleidiAI narrows it to int8), zero
     * points other than (1, 2), k not a multiple of 32. */
    static const int32_t wide_lut[4] = {-2, -1, 0, 64}, low_lut[4] = {-65, -1, 0, 1};
    struct kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon_params u2_zp = {.lhs_zero_point = 1, .rhs_zero_point = 2},
                                                                   u2_bad = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    memcpy(packed_copy, rhs_p, sizeof rhs_p);
    EXPECT_HOOK("lut_arg[3] = 64 (rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon)",
                kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, 4, 64, 4, 4, 1, raw, NULL, scale_f32, rhs_p, 0,
                                                                    &u2_zp, wide_lut));
    EXPECT_HOOK("rhs_zero_point = 8 (rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon)",
                kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, 4, 64, 4, 4, 1, raw, NULL, scale_f32, rhs_p, 0,
                                                                    &u2_bad, NULL));
    EXPECT_HOOK("k = 48 (rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon)",
                kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, 4, 48, 4, 4, 1, raw, NULL, scale_f32, rhs_p, 0,
                                                                    &u2_zp, NULL));
    if (memcmp(packed_copy, rhs_p, sizeof rhs_p) != 0) {
        fprintf(stderr, "FAIL rejected qsu2cxp packer calls: the packer wrote\n");
        failures++;
    }
    EXPECT_REASON("lut[0] = -65 (matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod)",
                  "lut[0] = -65 is outside [-64, 63]",
                  kai_run_matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod(4, 4, 64, lhs_p, rhs_p, dst, 16, 4,
                                                                                        lo, hi, low_lut));
    EXPECT_HOOK("k = 48 (matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod)",
                kai_run_matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod(1, 4, 48, lhs_p, rhs_p, dst, 16, 4,
                                                                                      lo, hi, NULL));
    struct kai_rhs_pack_qsi8cx_params zp2 = {.lhs_zero_point = 2, .scale_multiplier = 1.0f};
    EXPECT_REASON("lhs_zero_point = 2 (rhs_pack_nxk_qsi8cxp_qsi8cx_neon)", "params->lhs_zero_point = 2, must be 1",
                  kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, 4, 32, 4, 8, 1, (const int8_t*)raw, NULL, scale_f32, rhs_p,
                                                           0, &zp2));
    struct kai_rhs_pack_qsi8cx_params zp1 = {.lhs_zero_point = 1, .scale_multiplier = 1.0f};
    EXPECT_HOOK("sr = 2 (rhs_pack_nxk_qsi8cxp_qsi8cx_neon)",
                kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, 4, 32, 4, 8, 2, (const int8_t*)raw, NULL, scale_f32, rhs_p,
                                                         0, &zp1));

    /* The float families: kernels (an unaligned LHS stride, dst_stride_col, a NaN bound, k = 0),
     * packers (a missing required bias, scale not NULL, a wrong nr, m_idx_start, mr) and getters
     * (an offset off the step). The packed buffers must stay untouched. */
    static float w_f32[16 * 16], b_f32[16];
    static uint16_t x_f16[8 * 16];
    memcpy(packed_copy, rhs_p, sizeof rhs_p);
    /* KleidiAI asserts dst_stride_col in this name (the 6x16 and 6x32 names never read it). */
    EXPECT_HOOK("dst_stride_col = 8 (matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla)",
                kai_run_matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla(2, 8, 16, lhs_f32, 64, rhs_p, dst, 32, 8, lo,
                                                                         hi));
    EXPECT_HOOK("lhs_stride = 33 (matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla: a multiple of 2)",
                kai_run_matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla(2, 32, 16, x_f16, 33, rhs_p, dst, 64, 2, lo, hi));
    EXPECT_REASON("scalar_max = NaN (matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot)",
                  "invalid clamp range [-1e30, NaN]: a bound is NaN or min > max",
                  kai_run_matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot(1, 12, 8, lhs_p, rhs_p, dst, 48, 4, lo, NAN));
    EXPECT_HOOK("k = 0 (matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla)",
                kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(2, 16, 0, lhs_f32, 64, rhs_p, dst, 64, 4, lo, hi));
    EXPECT_HOOK("bias = NULL (rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon: required)",
                kai_run_rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon(1, 8, 16, 8, 1, 1, 8 * 4, w_f32, NULL, NULL, rhs_p, 0,
                                                                 NULL));
    EXPECT_HOOK("scale != NULL (rhs_pack_kxn_x32p16x1b_x32_x32_neon)",
                kai_run_rhs_pack_kxn_x32p16x1b_x32_x32_neon(1, 16, 16, 16, 1, 1, 16 * 4, w_f32, b_f32, scale_f32, rhs_p,
                                                            0, NULL));
    EXPECT_HOOK("nr = 8 (rhs_pack_kxn_x32p16x1b_x32_x32_neon: 16)",
                kai_run_rhs_pack_kxn_x32p16x1b_x32_x32_neon(1, 16, 16, 8, 1, 1, 16 * 4, w_f32, b_f32, NULL, rhs_p, 0,
                                                            NULL));
    EXPECT_HOOK("rhs_stride = 60 < 4n (rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon)",
                kai_run_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(1, 16, 16, 12, 4, 1, 60, w_f32, b_f32, NULL, rhs_p,
                                                                     0, NULL));
    /* Row strides whose buffer size overflows: 5 * (0xCC..CC / 4) + 1 values wrap size_t; 2 * 2^60
     * + 1 f32 values are more than isize::MAX bytes (no real buffer, no slice can hold them). */
    EXPECT_HOOK("rhs_stride whose rows overflow size_t (rhs_pack_nxk_x32p16x1bx32_x32_x32_neon)",
                kai_run_rhs_pack_nxk_x32p16x1bx32_x32_x32_neon(1, 6, 1, 16, 1, 1, (size_t)0xCCCCCCCCCCCCCCCCull, w_f32,
                                                               NULL, NULL, rhs_p, 0, NULL));
    EXPECT_REASON("rhs_stride whose rows exceed isize::MAX bytes (rhs_pack_nxk_x32p16x1bx32_x32_x32_neon)",
                  "a buffer size overflows (more than isize::MAX bytes)",
                  kai_run_rhs_pack_nxk_x32p16x1bx32_x32_x32_neon(1, 3, 1, 16, 1, 1, (size_t)1 << 62, w_f32, NULL, NULL,
                                                                 rhs_p, 0, NULL));
    if (memcmp(packed_copy, rhs_p, sizeof rhs_p) != 0) {
        fprintf(stderr, "FAIL rejected float RHS packer calls: the packer wrote\n");
        failures++;
    }
    memcpy(packed_copy, lhs_p, sizeof lhs_p);
    EXPECT_HOOK("m_idx_start = 8 (lhs_pack_bf16p8x4_f16_neon: must be 0)",
                kai_run_lhs_pack_bf16p8x4_f16_neon(8, 16, 8, 4, 1, 8, x_f16, 32, lhs_p));
    EXPECT_HOOK("mr = 8 (lhs_quant_pack_bf16p1x4_f32_neon: 1)",
                kai_run_lhs_quant_pack_bf16p1x4_f32_neon(1, 16, 8, 4, 1, 0, lhs_f32, 64, lhs_p));
    EXPECT_HOOK("lhs_stride whose rows overflow size_t (lhs_pack_bf16p8x4_f16_neon)",
                kai_run_lhs_pack_bf16p8x4_f16_neon(6, 1, 8, 4, 1, 0, x_f16, (size_t)0xCCCCCCCCCCCCCCCCull, lhs_p));
    if (memcmp(packed_copy, lhs_p, sizeof lhs_p) != 0) {
        fprintf(stderr, "FAIL rejected bf16 LHS packer calls: the packer wrote\n");
        failures++;
    }
    EXPECT_HOOK("get_rhs_offset at n_idx = 3 (rhs_pack_kxn_x32p16x1b_x32_x32_neon: a multiple of 16)",
                (void)kai_get_rhs_offset_rhs_pack_kxn_x32p16x1b_x32_x32_neon(3));
    EXPECT_HOOK("get_rhs_packed_size with nr = 16 (rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon: 12)",
                (void)kai_get_rhs_packed_size_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(16, 16, 16, 4));
    EXPECT_HOOK("get_lhs_offset at m_idx = 2 (matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla: m_step 6)",
                (void)kai_get_lhs_offset_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(2, 64));

    /* Good calls do not fire the hook. */
    int before = fired;
    if (setjmp(back) == 0) {
        kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, 4, 32, 4, 8, 1, (const int8_t*)raw, NULL, scale_f32, rhs_p, 0,
                                                 &zp1);
        kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, 4, 32, 4, 16, 2, raw, NULL, scale_f32, rhs_p, 0, &good_zp);
        kai_run_lhs_quant_pack_qai8dxp_f16_neon(4, 32, 4, 8, 2, 4, lhs_16 + 4 * 32, 32 * 2, lhs_p);
        kai_run_lhs_quant_pack_qai8dxp_bf16_neon(8, 32, 4, 16, 2, 0, lhs_16, 32 * 2, lhs_p);
        kai_run_lhs_quant_pack_qai8dxp_f32(4, 32, 4, 16, 2, 0, lhs_f32, 32 * sizeof(float), lhs_p);
        kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 4, lo, hi);
        kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, 4, 64, 4, 16, 2, 32, raw, zero_f32, NULL,
                                                                    scale_f32, rhs_p, 0, &qai_zp);
        kai_run_lhs_quant_pack_qsi8d32pscalef32_f16_neon(4, 32, 32, 4, 16, 2, 4, lhs_16, 32 * 2, lhs_p);
        kai_run_matmul_clamp_bf16_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm(4, 8, 32, lhs_p, rhs_p, dst, 16, 2, lo, hi);
        (void)kai_get_dst_offset_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 16);
        static const int32_t edge_lut[4] = {-64, 0, 0, 63};
        kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, 4, 64, 4, 4, 1, raw, NULL, scale_f32, rhs_p, 0, &u2_zp,
                                                            edge_lut);
        kai_run_rhs_pack_kxn_x32p16x1b_x32_x32_neon(1, 16, 16, 16, 1, 1, 16 * 4, w_f32, NULL, NULL, rhs_p, 0, NULL);
        kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(2, 16, 16, lhs_f32, 64, rhs_p, dst, 64, 4, lo, hi);
        /* One row: the row strides are not read (0 is fine, as in KleidiAI). */
        kai_run_matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla(1, 16, 16, lhs_f32, 0, rhs_p, dst, 0, 4, lo, hi);
        kai_run_lhs_pack_bf16p8x4_f16_neon(8, 16, 8, 4, 1, 0, x_f16, 32, lhs_p);
    }
    if (fired != before) {
        fprintf(stderr, "FAIL good calls: the hook fired (%s: %s)\n", last_function, last_reason);
        failures++;
    } else {
        printf("ok   good calls: no hook\n");
    }

    gemv_every_row();
    gemv_every_row_qsu2cxp();
    bf16_every_row();
    ignored_parameters();

    /* A handler that returns: the failing call returns without writing, a getter returns 0. */
    qgemm_kai_set_error_handler(count_and_return, NULL);
    for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) dst[i] = -1.0f;
    kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 8, lo, hi);
    size_t off = kai_get_dst_offset_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(1, 0, 16);
    if (returned != 2 || off != 0 || !dst_untouched()) {
        fprintf(stderr, "FAIL returning handler: %d calls (want 2), offset %zu (want 0), dst %s\n", returned, off,
                dst_untouched() ? "untouched" : "written");
        failures++;
    } else {
        printf("ok   returning handler: the calls returned without writing; getter gave 0\n");
    }

    printf("kai_hook custom: %d hook calls, %d failures\n", fired, failures);
    return failures == 0 ? 0 : 1;
}
