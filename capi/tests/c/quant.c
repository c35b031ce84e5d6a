/* C test of the weight quantizers (qgemm_quant_*, issue 25).
 *
 *   quant                                     (run under qemu-aarch64; exit 0 only if every check passed)
 *
 * 1. Every format, from random f32 NxK weights:
 *    (a) the codes and scales equal the format's definition recomputed here: round to nearest
 *        for the symmetric formats (scale = amax/7 resp. amax/127 rounded to the stored type: f32,
 *        bf16, f16; code = round-half-away(w/scale) clamped to [-8, 7] resp. [-128, 127]),
 *        GGML's Q4_1 min-max rule for qai4c32p, and for qsu2cxp (a search) every code the
 *        nearest level scale * lut[u] of the returned scale;
 *    (b) the outputs packed with the qgemm_rhs_*_pack function of the format and run through
 *        qgemm_linear_run (the f32 family of the format) give y within TOLERANCE of the f32
 *        matmul x W^T (see check_linear);
 *    and the same bytes from the weights as f16 / bf16 (values exactly representable), as KxN
 *    and with a padded row stride.
 * 2. Error paths: NULL pointers, short buffers and strides, NaN / infinite weights, bad bl,
 *    bad method / importance combinations, bad element type / layout, KxN for the NxK-only
 *    formats, bad look-up table, scale overflow, overlapping and misaligned buffers; outputs
 *    are left unwritten.
 * 3. GPTQ: the Hessian of random activations streamed in chunks equals X^T X computed here;
 *    GPTQ on correlated activations has a smaller output error than plain round to nearest;
 *    with H = I (unit activation rows) GPTQ gives the plain quantizer's bytes for every format
 *    and rule; three layers quantized at once on three threads from one Hessian whose storage
 *    is read-only (mprotect PROT_READ) give the bytes of one thread; and its own error statuses.
 *
 * QGEMM_QUANT_CORRUPT=1 flips one bit of the library's first qsi4cxp code byte before the checks of
 * (a), QGEMM_QUANT_CORRUPT=linear garbles the first half of each packed weight buffer before (b): the test must then
 * fail (run.sh --self-check runs both). */
/* pthread_barrier_t, MAP_ANONYMOUS. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qgemm.h"

#include "checks.h"

enum { N = 20, K = 64, BL = 32, M = 5 };

static uint64_t rng = 1;
/* Uniform in [-1, 1). */
static float unit(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng >> 40) / (float)(1u << 23) - 1.0f;
}

/* ---- 16-bit floats (round to nearest even; the test values are finite and in range) ----------- */
static uint16_t bf16_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f16_bits(float f) {
    __fp16 h = (__fp16)f;
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}
static float f16_value(uint16_t b) {
    __fp16 h;
    memcpy(&h, &b, 2);
    return (float)h;
}

/* round-half-away(w / s) clamped to [lo, hi]; 0 when s is 0. */
static int rtn_code(float w, float s, int lo, int hi) {
    if (s == 0.0f) return 0;
    float q = roundf(w / s);
    return q < (float)lo ? lo : q > (float)hi ? hi : (int)q;
}
static float amax_of(const float* w, size_t len) {
    float a = 0.0f;
    for (size_t i = 0; i < len; i++) a = fabsf(w[i]) > a ? fabsf(w[i]) : a;
    return a;
}
static int nibble_signed(uint8_t byte, int high) {
    int v = high ? byte >> 4 : byte & 15;
    return v >= 8 ? v - 16 : v;
}

/* ---- (b): pack, run qgemm_linear, compare with the f32 matmul ---------------------------------- */

/* The activations (M x K) and the CPU features. */
static float x[M * K];
static uint32_t cpu;

/* `rhs_packed` (packed for `family` with qgemm_linear_rhs_packing) run by qgemm_linear_run on x;
 * each y[i][c] must be within the bound of the f32 matmul sum_j x[i][j] w[c][j]:
 *   sum_j |x_ij| |w_cj - wq_cj|          (the weights' quantization error, wq = the dequantized
 *                                          weights from the codes and scales checked in (a))
 * + sum_j |wq_cj| * step_i               (the activations' int8 quantization: step_i a full step of
 *                                          row i's quantizer, twice the rounding error, to cover the
 *                                          zero point's rounding: (max(x,0)-min(x,0))/255 for
 *                                          qai8dxp, amax/127 (f16 scale: * (1 + 2^-10)) for qsi8d32p)
 * + 1e-5 * (1 + sum_j |x_ij w_cj|)       (f32 accumulation). */
static void check_linear(uint32_t family, const char* name, const float* w, const float* wq, uint8_t* packed,
                         size_t packed_len, const int32_t* lut, bool qsi8d32p_lhs) {
    snprintf(cur, sizeof cur, "%s: linear", name);
    const char* e = getenv("QGEMM_QUANT_CORRUPT");
    if (e && strcmp(e, "linear") == 0) /* the first half of the packed weights garbled (a layout error) */
        for (size_t i = 0; i < packed_len / 2; i++) packed[i] ^= 0x77;
    qgemm_linear layer;
    const bool per_channel = family == QGEMM_FAMILY_QAI8DXP_QSI4CXP || family == QGEMM_FAMILY_QAI8DXP_QSI8CXP ||
                             family == QGEMM_FAMILY_QAI8DXP_QSU2CXP;
    OK(qgemm_linear_from_packed(family, NULL, N, K, per_channel ? 0 : BL, packed, packed_len, &layer));
    if (lut) OK(qgemm_linear_set_lut(&layer, lut));
    size_t ss = 0;
    OK(qgemm_linear_scratch_size(&layer, M, &ss));
    uint8_t* scratch = malloc(ss + 1);
    float y[M * N];
    OK(qgemm_linear_run(&layer, cpu, M, x, M * K, y, M * N, scratch, ss));
    double worst = 0.0;
    for (int i = 0; i < M; i++) {
        const float* xi = x + i * K;
        float lo = 0.0f, hi = 0.0f;
        for (int j = 0; j < K; j++) lo = xi[j] < lo ? xi[j] : lo, hi = xi[j] > hi ? xi[j] : hi;
        const double step = qsi8d32p_lhs ? amax_of(xi, K) / 127.0 * (1.0 + 1.0 / 1024.0) : (hi - lo) / 255.0;
        for (int c = 0; c < N; c++) {
            double ref = 0.0, bound = 0.0, mag = 0.0;
            for (int j = 0; j < K; j++) {
                ref += (double)xi[j] * w[c * K + j];
                bound += fabs(xi[j]) * fabs((double)w[c * K + j] - wq[c * K + j]) + fabs(wq[c * K + j]) * step;
                mag += fabs((double)xi[j] * w[c * K + j]);
            }
            bound += 1e-5 * (1.0 + mag);
            const double err = fabs(y[i * N + c] - ref);
            CHECK(err <= bound, "y[%d][%d] = %g, f32 matmul %g, error %g > bound %g", i, c, y[i * N + c], ref, err,
                  bound);
            worst = err / bound > worst ? err / bound : worst;
        }
    }
    printf("%-9s quantize -> pack -> qgemm_linear_run: worst error / bound %.3f\n", name, worst);
    free(scratch);
}

/* The packed size and buffer of `family`'s operator packing, and the packing as the RHS packers
 * take it (`p`; its LHS side, mr, unused). */
static uint8_t* packed_buffer(uint32_t family, size_t bl, qgemm_packing* p, size_t* len) {
    qgemm_rhs_packing rhs;
    OK(qgemm_linear_rhs_packing(family, &rhs));
    *p = packing_with_mr(rhs, 4);
    *len = 0;
    OK(qgemm_linear_packed_size(family, N, K, bl, len));
    return malloc(*len + 1);
}

/* ---- 1. every format ------------------------------------------------------------------------- */

static float w[N * K];        /* the weights, NxK */
static float wt[K * N];       /* the same, KxN */
static uint16_t wh[N * K];    /* as f16 bits (the values are f16-exact) */
static uint16_t wb[N * K];    /* as bf16 bits (the values are bf16-exact) */
static float wpad[N * (K + 3)]; /* NxK with a row stride of K + 3 */

/* The weight struct of each input form (0 f32 NxK, 1 f16, 2 bf16, 3 f32 KxN, 4 f32 padded stride). */
static qgemm_weights form(int f) {
    switch (f) {
    case 1: return (qgemm_weights){wh, N * K, QGEMM_WEIGHTS_F16, QGEMM_LAYOUT_NXK, K};
    case 2: return (qgemm_weights){wb, N * K, QGEMM_WEIGHTS_BF16, QGEMM_LAYOUT_NXK, K};
    case 3: return (qgemm_weights){wt, K * N, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_KXN, N};
    case 4: return (qgemm_weights){wpad, N * (K + 3) - 3, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, K + 3};
    default: return (qgemm_weights){w, N * K, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, K};
    }
}
static const char* form_name[] = {"f32", "f16", "bf16", "f32 KxN", "f32 stride K+3"};

static void make_weights(void) {
    for (int i = 0; i < N * K; i++) {
        /* Values on a grid exact in f16 and bf16 (8 significant bits, exponent in range). */
        float v = roundf(unit() * 128.0f) / 256.0f;
        if (i % 37 == 5) v *= 4.0f; /* outliers */
        w[i] = v;
    }
    memset(w + 3 * K, 0, K * sizeof(float)); /* an all-zero channel */
    for (int c = 0; c < N; c++)
        for (int j = 0; j < K; j++) {
            wt[j * N + c] = w[c * K + j];
            wpad[c * (K + 3) + j] = w[c * K + j];
            wh[c * K + j] = f16_bits(w[c * K + j]);
            wb[c * K + j] = bf16_bits(w[c * K + j]);
            CHECK(f16_value(wh[c * K + j]) == w[c * K + j] && bf16_value(wb[c * K + j]) == w[c * K + j],
                  "weight %g is not f16/bf16-exact", w[c * K + j]);
        }
    for (int i = 0; i < M * K; i++) x[i] = unit() * 2.0f;
}

static bool corrupt_env(void) {
    const char* e = getenv("QGEMM_QUANT_CORRUPT");
    return e && strcmp(e, "1") == 0;
}

static void test_qsi4cxp(void) {
    snprintf(cur, sizeof cur, "qsi4cxp");
    size_t cl = 0, sl = 0;
    OK(qgemm_quant_qsi4cxp_sizes(N, K, &cl, &sl));
    CHECK(cl == N * K / 2 && sl == N, "sizes %zu %zu", cl, sl);
    uint8_t codes[N * K / 2], c2[N * K / 2];
    float scale[N], s2[N], wq[N * K];
    qgemm_weights src = form(0);
    OK(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, codes, cl, scale, sl));
    if (corrupt_env()) codes[0] ^= 1;
    size_t bad = 0;
    for (int c = 0; c < N; c++) {
        const float s = amax_of(w + c * K, K) / 7.0f;
        bad += scale[c] != s;
        for (int j = 0; j < K; j++) {
            const int q = nibble_signed(codes[c * K / 2 + j / 2], j % 2);
            bad += q != rtn_code(w[c * K + j], s, -8, 7);
            wq[c * K + j] = (float)q * scale[c];
        }
    }
    CHECK(bad == 0, "%zu codes or scales differ from round to nearest", bad);
    for (int f = 1; f < 5; f++) {
        qgemm_weights other = form(f);
        memset(c2, 0xee, sizeof c2);
        OK(qgemm_quant_qsi4cxp(N, K, &other, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, c2, cl, s2, sl));
        CHECK(memcmp(c2, codes, cl) == 0 && memcmp(s2, scale, sizeof s2) == 0, "%s: other bytes", form_name[f]);
    }
    qgemm_packing p;
    size_t len;
    uint8_t* packed = packed_buffer(QGEMM_FAMILY_QAI8DXP_QSI4CXP, 0, &p, &len);
    qgemm_int4_source i4 = {codes, cl, QGEMM_LAYOUT_NXK, K / 2, QGEMM_INT4_SIGNED};
    OK(qgemm_rhs_qsi4cxp_pack(&p, N, K, &i4, scale, N, NULL, 0, packed, len));
    check_linear(QGEMM_FAMILY_QAI8DXP_QSI4CXP, "qsi4cxp", w, wq, packed, len, NULL, false);
    free(packed);
}

static void test_qsi4c32p(void) {
    snprintf(cur, sizeof cur, "qsi4c32p");
    size_t cl = 0, sl = 0;
    OK(qgemm_quant_qsi4c32p_sizes(N, K, BL, &cl, &sl));
    CHECK(cl == N * K / 2 && sl == N * K / BL, "sizes %zu %zu", cl, sl);
    uint8_t codes[N * K / 2], c2[N * K / 2];
    uint16_t scale[N * K / BL], s2[N * K / BL];
    float wq[N * K];
    qgemm_weights src = form(0);
    OK(qgemm_quant_qsi4c32p(N, K, BL, &src, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, codes, cl, scale, sl));
    size_t bad = 0;
    for (int c = 0; c < N; c++)
        for (int b = 0; b < K / BL; b++) {
            const uint16_t sb = bf16_bits(amax_of(w + c * K + b * BL, BL) / 7.0f);
            const float s = bf16_value(sb);
            bad += scale[c * (K / BL) + b] != sb;
            for (int j = b * BL; j < (b + 1) * BL; j++) {
                const int q = nibble_signed(codes[c * K / 2 + j / 2], j % 2);
                bad += q != rtn_code(w[c * K + j], s, -8, 7);
                wq[c * K + j] = (float)q * s;
            }
        }
    CHECK(bad == 0, "%zu codes or scales differ from round to nearest (bf16 scales)", bad);
    for (int f = 1; f < 5; f++) {
        qgemm_weights other = form(f);
        OK(qgemm_quant_qsi4c32p(N, K, BL, &other, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, c2, cl, s2, sl));
        CHECK(memcmp(c2, codes, cl) == 0 && memcmp(s2, scale, sizeof s2) == 0, "%s: other bytes", form_name[f]);
    }
    qgemm_packing p;
    size_t len;
    uint8_t* packed = packed_buffer(QGEMM_FAMILY_QAI8DXP_QSI4C32P, BL, &p, &len);
    qgemm_int4_source i4 = {codes, cl, QGEMM_LAYOUT_NXK, K / 2, QGEMM_INT4_SIGNED};
    OK(qgemm_rhs_qsi4c32p_pack(&p, N, K, BL, &i4, scale, sl, K / BL, NULL, 0, packed, len));
    check_linear(QGEMM_FAMILY_QAI8DXP_QSI4C32P, "qsi4c32p", w, wq, packed, len, NULL, false);
    free(packed);
}

static void test_q4_0(void) {
    snprintf(cur, sizeof cur, "q4_0");
    const size_t rb = 2 + BL / 2;
    size_t size = 0;
    OK(qgemm_quant_q4_0_size(N, K, BL, &size));
    CHECK(size == N * (K / BL) * rb, "size %zu", size);
    uint8_t blocks[N * (K / BL) * (2 + BL / 2)], b2[sizeof blocks];
    float wq[N * K];
    qgemm_weights src = form(0);
    OK(qgemm_quant_q4_0(N, K, BL, &src, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, blocks, size));
    size_t bad = 0;
    for (int c = 0; c < N; c++)
        for (int b = 0; b < K / BL; b++) {
            const uint8_t* blk = blocks + (c * (K / BL) + b) * rb;
            const uint16_t sb = f16_bits(amax_of(w + c * K + b * BL, BL) / 7.0f);
            const float s = f16_value(sb);
            bad += (uint16_t)(blk[0] | blk[1] << 8) != sb;
            for (int jj = 0; jj < BL; jj++) {
                const int u = jj < BL / 2 ? blk[2 + jj] & 15 : blk[2 + jj - BL / 2] >> 4;
                bad += u - 8 != rtn_code(w[c * K + b * BL + jj], s, -8, 7);
                wq[c * K + b * BL + jj] = (float)(u - 8) * s;
            }
        }
    CHECK(bad == 0, "%zu codes or scales differ from round to nearest (f16 scales, Q4_0 layout)", bad);
    for (int f = 1; f < 5; f++) {
        qgemm_weights other = form(f);
        OK(qgemm_quant_q4_0(N, K, BL, &other, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, b2, size));
        CHECK(memcmp(b2, blocks, size) == 0, "%s: other bytes", form_name[f]);
    }
    qgemm_packing p;
    size_t len;
    uint8_t* packed = packed_buffer(QGEMM_FAMILY_QSI8D32P_QSI4C32P, BL, &p, &len);
    OK(qgemm_rhs_qsi4c32pscalef16_pack(&p, N, K, BL, blocks, size, (K / BL) * rb, packed, len));
    check_linear(QGEMM_FAMILY_QSI8D32P_QSI4C32P, "q4_0", w, wq, packed, len, NULL, true);
    free(packed);
}

static void test_qsi8cxp(void) {
    snprintf(cur, sizeof cur, "qsi8cxp");
    size_t cl = 0, sl = 0;
    OK(qgemm_quant_qsi8cxp_sizes(N, K, &cl, &sl));
    CHECK(cl == N * K && sl == N, "sizes %zu %zu", cl, sl);
    int8_t codes[N * K], c2[N * K];
    float scale[N], s2[N], wq[N * K];
    qgemm_weights src = form(0);
    OK(qgemm_quant_qsi8cxp(N, K, &src, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, codes, cl, scale, sl));
    size_t bad = 0;
    for (int c = 0; c < N; c++) {
        const float s = amax_of(w + c * K, K) / 127.0f;
        bad += scale[c] != s;
        for (int j = 0; j < K; j++) {
            bad += codes[c * K + j] != rtn_code(w[c * K + j], s, -128, 127);
            wq[c * K + j] = (float)codes[c * K + j] * scale[c];
        }
    }
    CHECK(bad == 0, "%zu codes or scales differ from round to nearest", bad);
    for (int f = 1; f < 5; f++) {
        qgemm_weights other = form(f);
        OK(qgemm_quant_qsi8cxp(N, K, &other, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0, c2, cl, s2, sl));
        CHECK(memcmp(c2, codes, cl) == 0 && memcmp(s2, scale, sizeof s2) == 0, "%s: other bytes", form_name[f]);
    }
    qgemm_packing p;
    size_t len;
    uint8_t* packed = packed_buffer(QGEMM_FAMILY_QAI8DXP_QSI8CXP, 0, &p, &len);
    qgemm_int8_source i8 = {codes, cl, QGEMM_LAYOUT_NXK, K};
    OK(qgemm_rhs_qsi8cxp_pack(&p, N, K, &i8, scale, N, NULL, 0, packed, len));
    check_linear(QGEMM_FAMILY_QAI8DXP_QSI8CXP, "qsi8cxp", w, wq, packed, len, NULL, false);
    free(packed);
}

static void test_qai4c32p(void) {
    snprintf(cur, sizeof cur, "qai4c32p");
    size_t cl = 0, pl = 0;
    OK(qgemm_quant_qai4c32p_sizes(N, K, BL, &cl, &pl));
    CHECK(cl == N * K / 2 && pl == N * K / BL, "sizes %zu %zu", cl, pl);
    uint8_t codes[N * K / 2], c2[N * K / 2];
    float zero[N * K / BL], scale[N * K / BL], z2[N * K / BL], s2[N * K / BL], wq[N * K];
    qgemm_weights src = form(0);
    OK(qgemm_quant_qai4c32p(N, K, BL, &src, QGEMM_QUANT_QAI4C32P_MIN_MAX, codes, cl, zero, pl, scale, pl));
    /* GGML Q4_1's rule in double: d = (max - min) / 15, zero = min + 8 d, u = round((w - zero) / d + 8). */
    size_t bad = 0;
    for (int c = 0; c < N; c++)
        for (int b = 0; b < K / BL; b++) {
            const float* blk = w + c * K + b * BL;
            double lo = blk[0], hi = blk[0];
            for (int j = 1; j < BL; j++) lo = blk[j] < lo ? blk[j] : lo, hi = blk[j] > hi ? blk[j] : hi;
            const double d = (hi - lo) / 15.0;
            const float z = (float)(lo + 8.0 * d), s = (float)d;
            const int at = c * (K / BL) + b;
            bad += zero[at] != z || scale[at] != s;
            for (int j = 0; j < BL; j++) {
                const int jj = b * BL + j;
                const int u = jj % 2 == 0 ? codes[c * K / 2 + jj / 2] >> 4 : codes[c * K / 2 + jj / 2] & 15;
                double t = s == 0.0f ? 8.0 : round(((double)blk[j] - z) / s + 8.0);
                t = t < 0 ? 0 : t > 15 ? 15 : t;
                bad += u != (int)t;
                wq[c * K + jj] = (float)(u - 8) * scale[at] + zero[at];
            }
        }
    CHECK(bad == 0, "%zu codes, scales or offsets differ from the min-max rule", bad);
    for (int f = 1; f < 5; f++) {
        if (f == 3) continue; /* NxK only */
        qgemm_weights other = form(f);
        OK(qgemm_quant_qai4c32p(N, K, BL, &other, QGEMM_QUANT_QAI4C32P_MIN_MAX, c2, cl, z2, pl, s2, pl));
        CHECK(memcmp(c2, codes, cl) == 0 && memcmp(z2, zero, sizeof z2) == 0 && memcmp(s2, scale, sizeof s2) == 0,
              "%s: other bytes", form_name[f]);
    }
    /* Fitted: never a larger squared error than min-max. */
    OK(qgemm_quant_qai4c32p(N, K, BL, &src, QGEMM_QUANT_QAI4C32P_FITTED, c2, cl, z2, pl, s2, pl));
    double e_mm = 0.0, e_fit = 0.0;
    for (int c = 0; c < N; c++)
        for (int j = 0; j < K; j++) {
            const int at = c * (K / BL) + j / BL;
            const int u = j % 2 == 0 ? c2[c * K / 2 + j / 2] >> 4 : c2[c * K / 2 + j / 2] & 15;
            const double v = (double)(u - 8) * s2[at] + z2[at];
            e_fit += (w[c * K + j] - v) * (w[c * K + j] - v);
            e_mm += (w[c * K + j] - (double)wq[c * K + j]) * (w[c * K + j] - (double)wq[c * K + j]);
        }
    CHECK(e_fit <= e_mm * (1.0 + 1e-6), "fitted error %g > min-max error %g", e_fit, e_mm);
    qgemm_packing p;
    size_t len;
    uint8_t* packed = packed_buffer(QGEMM_FAMILY_QSI8D32P_QAI4C32P, BL, &p, &len);
    OK(qgemm_rhs_qai4c32p_pack(&p, N, K, BL, codes, cl, K / 2, zero, pl, scale, pl, NULL, 0, packed, len));
    check_linear(QGEMM_FAMILY_QSI8D32P_QAI4C32P, "qai4c32p", w, wq, packed, len, NULL, true);
    free(packed);
}

static void test_qsu2cxp(void) {
    static const int32_t tables[2][4] = {{-2, -1, 0, 1}, {-3, -1, 1, 3}};
    for (int t = 0; t < 2; t++) {
        snprintf(cur, sizeof cur, "qsu2cxp lut %d", t);
        size_t cl = 0, sl = 0;
        OK(qgemm_quant_qsu2cxp_sizes(N, K, &cl, &sl));
        CHECK(cl == N * K / 4 && sl == N, "sizes %zu %zu", cl, sl);
        uint8_t codes[N * K / 4], c2[N * K / 4];
        float scale[N], s2[N], wq[N * K];
        const int32_t* lut = t == 0 ? NULL : tables[t];
        qgemm_weights src = form(0);
        OK(qgemm_quant_qsu2cxp(N, K, &src, lut, codes, cl, scale, sl));
        /* The scale is a search; given it, every code is the nearest level scale * lut[u] (the first of equals). */
        size_t bad = 0;
        for (int c = 0; c < N; c++) {
            bad += !isfinite(scale[c]) || (scale[c] == 0.0f) != (amax_of(w + c * K, K) == 0.0f);
            for (int j = 0; j < K; j++) {
                const int u = codes[c * K / 4 + j / 4] >> (2 * (j % 4)) & 3;
                int best = 0;
                for (int v = 1; v < 4; v++)
                    if (fabs(w[c * K + j] - (double)scale[c] * tables[t][v]) <
                        fabs(w[c * K + j] - (double)scale[c] * tables[t][best]))
                        best = v;
                bad += u != best;
                wq[c * K + j] = scale[c] * (float)tables[t][u];
            }
        }
        CHECK(bad == 0, "%zu codes are not the nearest level of their scale", bad);
        for (int f = 1; f < 5; f++) {
            if (f == 3) continue; /* NxK only */
            qgemm_weights other = form(f);
            OK(qgemm_quant_qsu2cxp(N, K, &other, lut, c2, cl, s2, sl));
            CHECK(memcmp(c2, codes, cl) == 0 && memcmp(s2, scale, sizeof s2) == 0, "%s: other bytes", form_name[f]);
        }
        qgemm_packing p;
        size_t len;
        uint8_t* packed = packed_buffer(QGEMM_FAMILY_QAI8DXP_QSU2CXP, 0, &p, &len);
        OK(qgemm_rhs_qsu2cxp_pack(&p, N, K, codes, cl, K / 4, scale, N, NULL, 0, lut, packed, len));
        check_linear(QGEMM_FAMILY_QAI8DXP_QSU2CXP, t == 0 ? "qsu2cxp" : "qsu2cxp*", w, wq, packed, len, lut, false);
        free(packed);
    }
}

/* The other rules: each runs, and the search never has a larger squared error than round to nearest. */
static void test_rules(void) {
    snprintf(cur, sizeof cur, "rules");
    float imp[K];
    for (int j = 0; j < K; j++) imp[j] = j % 3 == 0 ? 10.0f : 0.1f;
    uint8_t codes[N * K / 2];
    float scale[N];
    double err[4];
    const uint32_t rules[4] = {QGEMM_QUANT_ROUND_TO_NEAREST, QGEMM_QUANT_SIGNED_MAX, QGEMM_QUANT_SEARCH,
                               QGEMM_QUANT_WEIGHTED_SEARCH};
    qgemm_weights src = form(0);
    for (int r = 0; r < 4; r++) {
        const float* im = rules[r] == QGEMM_QUANT_WEIGHTED_SEARCH ? imp : NULL;
        OK(qgemm_quant_qsi4cxp(N, K, &src, rules[r], im, im ? K : 0, codes, sizeof codes, scale, N));
        err[r] = 0.0;
        for (int c = 0; c < N; c++)
            for (int j = 0; j < K; j++) {
                const double d = w[c * K + j] - (double)scale[c] * nibble_signed(codes[c * K / 2 + j / 2], j % 2);
                err[r] += d * d;
            }
    }
    /* On these weights each rule gives other codes: search strictly below round to nearest. */
    CHECK(err[2] < err[0], "search error %g not below round to nearest %g", err[2], err[0]);
    CHECK(err[1] != err[0] && err[3] != err[2], "signed max or weighted search gave another rule's codes");

    /* QGEMM_QUANT_SIGNED_MAX on Q4_0 blocks of 32: GGML's quantize_row_q4_0_ref, written out. */
    uint8_t blocks[N * (K / BL) * (2 + BL / 2)];
    OK(qgemm_quant_q4_0(N, K, BL, &src, QGEMM_QUANT_SIGNED_MAX, NULL, 0, blocks, sizeof blocks));
    size_t bad = 0;
    for (int b = 0; b < N * K / 32; b++) {
        const float* xb = w + b * 32;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 32; j++)
            if (amax < fabsf(xb[j])) amax = fabsf(xb[j]), max = xb[j];
        const float d = max / -8, id = d ? 1.0f / d : 0.0f;
        const uint8_t* blk = blocks + b * 18;
        bad += (uint16_t)(blk[0] | blk[1] << 8) != f16_bits(d);
        for (int j = 0; j < 16; j++) {
            int x0 = (int8_t)(xb[j] * id + 8.5f), x1 = (int8_t)(xb[16 + j] * id + 8.5f);
            x0 = x0 < 15 ? x0 : 15, x1 = x1 < 15 ? x1 : 15;
            bad += blk[2 + j] != (uint8_t)(x0 | x1 << 4);
        }
    }
    CHECK(bad == 0, "%zu Q4_0 scales or bytes differ from GGML's quantize_row_q4_0_ref", bad);
    printf("qsi4cxp squared error: round to nearest %.4g, signed max %.4g, search %.4g, weighted search %.4g\n",
           err[0], err[1], err[2], err[3]);
}

/* ---- 2. error paths -------------------------------------------------------------------------- */

static void test_errors(void) {
    snprintf(cur, sizeof cur, "errors");
    _Alignas(16) uint8_t codes[N * K / 2];
    float scale[N], imp[K];
    for (int j = 0; j < K; j++) imp[j] = 1.0f;
    memset(codes, 0xee, sizeof codes);
    for (int c = 0; c < N; c++) scale[c] = 7.0f;
    const size_t cl = sizeof codes;
    const uint32_t RTN = QGEMM_QUANT_ROUND_TO_NEAREST;
    qgemm_weights src = form(0);
    size_t out = 777, out2 = 777;

    /* Size queries. */
    EXPECT(qgemm_quant_qsi4cxp_sizes(N, K, NULL, &out2), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_qsi4cxp_sizes(0, K, &out, &out2), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_quant_qsi4c32p_sizes(N, K, 48, &out, &out2), QGEMM_ERROR_NOT_MULTIPLE);
    EXPECT(qgemm_quant_q4_0_size(N, 96, 64, &out), QGEMM_ERROR_NOT_MULTIPLE);
    EXPECT(qgemm_quant_qsu2cxp_sizes(N, 30, &out, &out2), QGEMM_ERROR_NOT_MULTIPLE);
    EXPECT(qgemm_quant_hessian_len(0, &out), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_quant_gptq_workspace_len(N, K, NULL), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_qai4c32p_sizes(SIZE_MAX, K, BL, &out, &out2), QGEMM_ERROR_SIZE_OVERFLOW);
    CHECK(out == 777 && out2 == 777, "a failing size query wrote its output");

    /* Pointers, lengths, strides. */
    EXPECT(qgemm_quant_qsi4cxp(N, K, NULL, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_NULL_POINTER);
    qgemm_weights nodata = src;
    nodata.data = NULL;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &nodata, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, RTN, NULL, 0, NULL, cl, scale, N), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, RTN, NULL, 0, codes, cl, NULL, N), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, RTN, NULL, 0, codes, cl - 1, scale, N), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, RTN, NULL, 0, codes, cl, scale, N - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    qgemm_weights shortw = src;
    shortw.len--;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &shortw, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_BUFFER_TOO_SHORT);
    qgemm_weights narrow = src;
    narrow.stride = K - 1;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &narrow, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_STRIDE_TOO_SMALL);
    qgemm_weights badtype = src, badlayout = src;
    badtype.elem = 3;
    badlayout.layout = 2;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &badtype, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &badlayout, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_INVALID_ARGUMENT);
    qgemm_weights odd = form(1);
    odd.data = (const uint8_t*)odd.data + 1;
    odd.len--;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &odd, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_MISALIGNED_POINTER);
    qgemm_weights alias = {codes, cl / 4, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, 4};
    EXPECT(qgemm_quant_qsi4cxp(10, 4, &alias, RTN, NULL, 0, codes + 4, 20, scale, 10), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, RTN, NULL, 0, (uint8_t*)(void*)scale, 8, scale + 1, N - 1),
           QGEMM_ERROR_BUFFERS_OVERLAP);

    /* Non-finite weights. */
    float wn[N * K];
    memcpy(wn, w, sizeof wn);
    wn[K + 9] = NAN;
    qgemm_weights nan_w = {wn, N * K, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, K};
    EXPECT(qgemm_quant_qsi4cxp(N, K, &nan_w, RTN, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_NON_FINITE);
    int8_t c8[N * K];
    EXPECT(qgemm_quant_qsi8cxp(N, K, &nan_w, RTN, NULL, 0, c8, sizeof c8, scale, N), QGEMM_ERROR_NON_FINITE);
    uint16_t hn[N * K];
    memcpy(hn, wh, sizeof hn);
    hn[7] = 0x7c00; /* +inf */
    qgemm_weights inf_h = {hn, N * K, QGEMM_WEIGHTS_F16, QGEMM_LAYOUT_NXK, K};
    uint8_t blocks[N * (K / BL) * (2 + BL / 2)];
    EXPECT(qgemm_quant_q4_0(N, K, BL, &inf_h, RTN, NULL, 0, blocks, sizeof blocks), QGEMM_ERROR_NON_FINITE);

    /* Block lengths. */
    uint16_t bs[N * K / BL];
    EXPECT(qgemm_quant_qsi4c32p(N, K, 48, &src, RTN, NULL, 0, codes, cl, bs, N * 2), QGEMM_ERROR_NOT_MULTIPLE);
    EXPECT(qgemm_quant_qsi4c32p(N, K, 0, &src, RTN, NULL, 0, codes, cl, bs, N * 2), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_quant_q4_0(N, 96, 64, &src, RTN, NULL, 0, codes, cl), QGEMM_ERROR_NOT_MULTIPLE);

    /* Rules and importance. */
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, 99, NULL, 0, codes, cl, scale, N), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH, NULL, 0, codes, cl, scale, N),
           QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_SEARCH, imp, K, codes, cl, scale, N),
           QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_WEIGHTED_SEARCH, NULL, K, codes, cl, scale, N),
           QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_WEIGHTED_SEARCH, imp, K - 1, codes, cl, scale, N),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    imp[3] = -1.0f;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_WEIGHTED_SEARCH, imp, K, codes, cl, scale, N),
           QGEMM_ERROR_NON_FINITE);
    imp[3] = NAN;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_WEIGHTED_SEARCH, imp, K, codes, cl, scale, N),
           QGEMM_ERROR_NON_FINITE);
    imp[3] = 1.0f;
    EXPECT(qgemm_quant_qsi4cxp(N, K, &src, QGEMM_QUANT_WEIGHTED_SEARCH, imp, K, codes, cl, (float*)(void*)imp, N),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    float z[N * K / BL], s[N * K / BL];
    EXPECT(qgemm_quant_qai4c32p(N, K, BL, &src, 2, codes, cl, z, N * 2, s, N * 2), QGEMM_ERROR_INVALID_ARGUMENT);

    /* The NxK-only formats, tables, scale overflow. */
    qgemm_weights kxn = form(3);
    EXPECT(qgemm_quant_qai4c32p(N, K, BL, &kxn, QGEMM_QUANT_QAI4C32P_MIN_MAX, codes, cl, z, N * 2, s, N * 2),
           QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_quant_qsu2cxp(N, K, &kxn, NULL, codes, N * K / 4, scale, N), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_quant_qai4c32p(N, K, BL, &src, QGEMM_QUANT_QAI4C32P_MIN_MAX, codes, cl, z, N * 2 - 1, s, N * 2),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    const int32_t high[4] = {-2, -1, 0, 64}, zeros[4] = {0, 0, 0, 0};
    EXPECT(qgemm_quant_qsu2cxp(N, K, &src, high, codes, N * K / 4, scale, N), QGEMM_ERROR_LUT_OUT_OF_RANGE);
    EXPECT(qgemm_quant_qsu2cxp(N, K, &src, zeros, codes, N * K / 4, scale, N), QGEMM_ERROR_LUT_OUT_OF_RANGE);
    float big[K];
    for (int j = 0; j < K; j++) big[j] = j == 40 ? 1e30f : 1.0f;
    qgemm_weights bigw = {big, K, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, K};
    EXPECT(qgemm_quant_q4_0(1, K, BL, &bigw, RTN, NULL, 0, codes, 36), QGEMM_ERROR_SCALE_OVERFLOW);

    bool untouched = true;
    for (size_t i = 0; i < cl; i++) untouched &= codes[i] == 0xee;
    for (int c = 0; c < N; c++) untouched &= scale[c] == 7.0f;
    CHECK(untouched, "a failing call wrote its outputs");
    for (int st = 18; st <= 20; st++) {
        const char* msg = qgemm_status_message(st);
        CHECK(msg && strcmp(msg, "unknown status") != 0, "no message for status %d", st);
    }
}

/* ---- 3. GPTQ --------------------------------------------------------------------------------- */

/* GPTQ of three layers (the q, k and v projections of an attention block share their input, so
 * one Hessian) on three threads at once, from one Hessian whose storage is mapped read-only during
 * the quantization: the library only reads it (a shared view), so this is defined and gives
 * each layer the bytes of the single-threaded call. */
enum { LAYERS = 3 };
struct layer_job {
    const qgemm_quant_hessian* h;
    const qgemm_weights* w;
    pthread_barrier_t* start;
    double* work;
    size_t work_len;
    uint8_t codes[N * K / 2];
    uint16_t scales[N * K / BL];
    float diag[K];
    qgemm_status gptq, diagonal;
};
static void* quantize_layer(void* arg) {
    struct layer_job* j = arg;
    pthread_barrier_wait(j->start);
    j->diagonal = qgemm_quant_hessian_diagonal(j->h, j->diag, K);
    j->gptq = qgemm_quant_gptq_qsi4c32p(N, K, BL, j->w, QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH, NULL, 0, j->h, 0.01f,
                                        j->work, j->work_len, j->codes, sizeof j->codes, j->scales, N * K / BL);
    return NULL;
}
static void test_gptq_shared(const qgemm_quant_hessian* h, size_t wl) {
    snprintf(cur, sizeof cur, "gptq: three layers on three threads, one read-only Hessian");
    static float wqkv[LAYERS][N * K];
    static qgemm_weights src[LAYERS];
    static struct layer_job want[LAYERS], got[LAYERS];
    for (int l = 0; l < LAYERS; l++) {
        for (int i = 0; i < N * K; i++) wqkv[l][i] = unit() * 0.1f;
        src[l] = (qgemm_weights){wqkv[l], N * K, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, K};
    }
    /* The Hessian's storage, copied to pages of its own and made read-only. */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = h->len * sizeof(double);
    const size_t mapped = (bytes + page - 1) / page * page;
    double* ro = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED, "mmap");
    if (ro == MAP_FAILED) return;
    memcpy(ro, h->data, bytes);
    qgemm_quant_hessian shared = *h;
    shared.data = ro;
    /* Single-threaded, on the writable original. */
    pthread_barrier_t one;
    pthread_barrier_init(&one, NULL, 1);
    for (int l = 0; l < LAYERS; l++) {
        want[l] = (struct layer_job){.h = h, .w = &src[l], .start = &one, .work_len = wl};
        want[l].work = malloc(wl * sizeof(double));
        quantize_layer(&want[l]);
        CHECK(want[l].gptq == QGEMM_OK && want[l].diagonal == QGEMM_OK, "layer %d, one thread: %d, %d", l,
              (int)want[l].gptq, (int)want[l].diagonal);
    }
    pthread_barrier_destroy(&one);
    CHECK(mprotect(ro, mapped, PROT_READ) == 0, "mprotect PROT_READ");
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, LAYERS);
    pthread_t threads[LAYERS];
    for (int l = 0; l < LAYERS; l++) {
        got[l] = (struct layer_job){.h = &shared, .w = &src[l], .start = &start, .work_len = wl};
        got[l].work = malloc(wl * sizeof(double));
        memset(got[l].codes, 0xee, sizeof got[l].codes);
        CHECK(pthread_create(&threads[l], NULL, quantize_layer, &got[l]) == 0, "pthread_create");
    }
    for (int l = 0; l < LAYERS; l++) pthread_join(threads[l], NULL);
    pthread_barrier_destroy(&start);
    size_t same = 0;
    for (int l = 0; l < LAYERS; l++) {
        CHECK(got[l].gptq == QGEMM_OK && got[l].diagonal == QGEMM_OK, "layer %d on a thread: %d (%s), %d", l,
              (int)got[l].gptq, qgemm_status_message(got[l].gptq), (int)got[l].diagonal);
        const bool eq = memcmp(got[l].codes, want[l].codes, sizeof want[l].codes) == 0 &&
                        memcmp(got[l].scales, want[l].scales, sizeof want[l].scales) == 0 &&
                        memcmp(got[l].diag, want[l].diag, sizeof want[l].diag) == 0;
        CHECK(eq, "layer %d on a thread differs from one thread", l);
        same += eq;
        free(want[l].work);
        free(got[l].work);
    }
    CHECK(memcmp(ro, h->data, bytes) == 0, "the read-only Hessian changed");
    printf("gptq: %zu of %d layers quantized on %d threads at once from one read-only Hessian equal to one thread\n",
           same, LAYERS, LAYERS);
    munmap(ro, mapped);
}

static void test_gptq(void) {
    snprintf(cur, sizeof cur, "gptq hessian");
    enum { MA = 200 };
    size_t hl = 0, wl = 0;
    OK(qgemm_quant_hessian_len(K, &hl));
    CHECK(hl == K * (K + 1) / 2, "hessian len %zu", hl);
    OK(qgemm_quant_gptq_workspace_len(N, K, &wl));
    CHECK(wl == K * K + K, "workspace len %zu", wl);
    double* hbuf = malloc(hl * sizeof(double));
    double* work = malloc(wl * sizeof(double));
    for (size_t i = 0; i < hl; i++) hbuf[i] = 3.0; /* init must zero it */
    /* Correlated activations: x = A z / sqrt(K), z of decaying variances. */
    float* xa = malloc(MA * K * sizeof(float));
    float* a = malloc(K * K * sizeof(float));
    float* zz = malloc(MA * K * sizeof(float));
    for (int i = 0; i < K * K; i++) a[i] = unit();
    for (int e = 0; e < MA * K; e++) zz[e] = unit() / (1.0f + (float)(e % K) / 8.0f);
    for (int i = 0; i < MA; i++)
        for (int j = 0; j < K; j++) {
            float s = 0.0f;
            for (int p = 0; p < K; p++) s += a[j * K + p] * zz[i * K + p];
            xa[i * K + j] = s / sqrtf((float)K);
        }
    qgemm_quant_hessian h;
    OK(qgemm_quant_hessian_init(&h, hbuf, hl, K));
    CHECK(h.k == K && h.rows == 0 && h.data == hbuf && h.len == hl, "init: k %zu rows %zu", h.k, h.rows);
    /* The rows in three calls, the last with a longer stride over the same values. */
    OK(qgemm_quant_hessian_add(&h, xa, 10 * K, 10, K));
    OK(qgemm_quant_hessian_add(&h, xa + 10 * K, 0, 0, K));
    OK(qgemm_quant_hessian_add(&h, xa + 10 * K, (MA - 10) * K, MA - 10, K));
    CHECK(h.rows == MA, "rows %zu", h.rows);
    size_t bad = 0;
    for (int i = 0; i < K; i++)
        for (int j = i; j < K; j++) {
            double s = 0.0;
            for (int r = 0; r < MA; r++) s += (double)xa[r * K + i] * (double)xa[r * K + j];
            bad += hbuf[i * (2 * K - i + 1) / 2 + (j - i)] != s;
        }
    CHECK(bad == 0, "%zu entries of H differ from X^T X", bad);
    float diag[K];
    OK(qgemm_quant_hessian_diagonal(&h, diag, K));
    bad = 0;
    for (int j = 0; j < K; j++) bad += diag[j] != (float)hbuf[j * (2 * K - j + 1) / 2];
    CHECK(bad == 0, "diagonal");

    /* GPTQ with round-to-nearest scales beats plain round to nearest on the output error X (W - Wq)^T. */
    snprintf(cur, sizeof cur, "gptq qsi4cxp");
    float wg[N * K];
    for (int i = 0; i < N * K; i++) wg[i] = unit() * 0.1f;
    qgemm_weights src = {wg, N * K, QGEMM_WEIGHTS_F32, QGEMM_LAYOUT_NXK, K};
    uint8_t c0[N * K / 2], c1[N * K / 2];
    float s0[N], s1[N];
    const uint32_t RTN = QGEMM_QUANT_ROUND_TO_NEAREST;
    OK(qgemm_quant_qsi4cxp(N, K, &src, RTN, NULL, 0, c0, sizeof c0, s0, N));
    OK(qgemm_quant_gptq_qsi4cxp(N, K, &src, RTN, NULL, 0, &h, 0.01f, work, wl, c1, sizeof c1, s1, N));
    double e_plain = 0.0, e_gptq = 0.0;
    for (int r = 0; r < MA; r++)
        for (int c = 0; c < N; c++) {
            double d0 = 0.0, d1 = 0.0;
            for (int j = 0; j < K; j++) {
                const double xv = xa[r * K + j];
                d0 += xv * (wg[c * K + j] - (double)s0[c] * nibble_signed(c0[c * K / 2 + j / 2], j % 2));
                d1 += xv * (wg[c * K + j] - (double)s1[c] * nibble_signed(c1[c * K / 2 + j / 2], j % 2));
            }
            e_plain += d0 * d0, e_gptq += d1 * d1;
        }
    CHECK(e_gptq < 0.75 * e_plain, "gptq output error %g, plain %g", sqrt(e_gptq), sqrt(e_plain));
    printf("gptq (round-to-nearest scales) output error %.4g, plain round to nearest %.4g\n", sqrt(e_gptq),
           sqrt(e_plain));
    /* The default rule runs on every format. */
    uint16_t bs[N * K / BL];
    uint8_t blocks[N * (K / BL) * (2 + BL / 2)];
    int8_t c8[N * K];
    const uint32_t HW = QGEMM_QUANT_HESSIAN_WEIGHTED_SEARCH;
    OK(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &h, 0.01f, work, wl, c1, sizeof c1, s1, N));
    OK(qgemm_quant_gptq_qsi4c32p(N, K, BL, &src, HW, NULL, 0, &h, 0.01f, work, wl, c1, sizeof c1, bs, N * 2));
    OK(qgemm_quant_gptq_q4_0(N, K, BL, &src, HW, NULL, 0, &h, 0.01f, work, wl, blocks, sizeof blocks));
    OK(qgemm_quant_gptq_qsi8cxp(N, K, &src, HW, NULL, 0, &h, 0.01f, work, wl, c8, sizeof c8, s1, N));
    test_gptq_shared(&h, wl);

    /* Errors. */
    snprintf(cur, sizeof cur, "gptq errors");
    memset(c1, 0xee, sizeof c1);
    qgemm_quant_hessian other_k = h, empty = h;
    other_k.k = K / 2;
    empty.rows = 0;
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &other_k, 0.01f, work, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_DIM_MISMATCH);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &empty, 0.01f, work, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &h, -0.01f, work, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_INVALID_DAMPING);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &h, NAN, work, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_INVALID_DAMPING);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &h, 0.01f, work, wl - 1, c1, sizeof c1, s1, N),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, NULL, 0.01f, work, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, diag, K, &h, 0.01f, work, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_quant_gptq_qsi4cxp(N, K, &src, HW, NULL, 0, &h, 0.01f, hbuf, wl, c1, sizeof c1, s1, N),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    qgemm_quant_hessian short_h = h;
    short_h.len = hl - 1;
    EXPECT(qgemm_quant_gptq_q4_0(N, K, BL, &src, HW, NULL, 0, &short_h, 0.01f, work, wl, blocks, sizeof blocks),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    bool untouched = true;
    for (size_t i = 0; i < sizeof c1; i++) untouched &= c1[i] == 0xee;
    CHECK(untouched, "a failing gptq call wrote its codes");
    /* A Hessian of 2 rows (rank 2 < K) without damping is singular. */
    double* h2buf = malloc(hl * sizeof(double));
    qgemm_quant_hessian h2;
    OK(qgemm_quant_hessian_init(&h2, h2buf, hl, K));
    OK(qgemm_quant_hessian_add(&h2, xa, 2 * K, 2, K));
    EXPECT(qgemm_quant_gptq_qsi8cxp(N, K, &src, RTN, NULL, 0, &h2, 0.0f, work, wl, c8, sizeof c8, s1, N),
           QGEMM_ERROR_NOT_POSITIVE_DEFINITE);
    float bad_x[K];
    memcpy(bad_x, xa, sizeof bad_x);
    bad_x[17] = INFINITY;
    EXPECT(qgemm_quant_hessian_add(&h2, bad_x, K, 1, K), QGEMM_ERROR_NON_FINITE);
    EXPECT(qgemm_quant_hessian_add(&h2, xa, K, 1, K - 1), QGEMM_ERROR_STRIDE_TOO_SMALL);
    CHECK(h2.rows == 2, "a failing add changed rows (%zu)", h2.rows);
    EXPECT(qgemm_quant_hessian_init(&h2, h2buf, hl - 1, K), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_quant_hessian_init(&h2, (double*)(void*)&h2, 4, 1), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_quant_hessian_diagonal(&h2, diag, K - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    CHECK(h2.rows == 2 && h2.data == h2buf, "a failing call changed the Hessian");

    /* H = I (unit activation rows): GPTQ feeds nothing forward, so it is the plain quantizer. */
    snprintf(cur, sizeof cur, "gptq H = I");
    float* eye = calloc(K * K, sizeof(float));
    for (int i = 0; i < K; i++) eye[i * K + i] = 1.0f;
    OK(qgemm_quant_hessian_init(&h2, h2buf, hl, K));
    OK(qgemm_quant_hessian_add(&h2, eye, K * K, K, K));
    float ones[K];
    for (int j = 0; j < K; j++) ones[j] = 1.0f;
    const uint32_t plain_rules[4] = {RTN, QGEMM_QUANT_SIGNED_MAX, QGEMM_QUANT_SEARCH, QGEMM_QUANT_WEIGHTED_SEARCH};
    const uint32_t gptq_rules[4] = {RTN, QGEMM_QUANT_SIGNED_MAX, QGEMM_QUANT_SEARCH, HW};
    size_t same = 0;
    for (int f = 0; f < 5; f++) {
        qgemm_weights wf = form(f); /* the weights of part 1 */
        for (int r = 0; r < 4; r++) {
            const float* im = plain_rules[r] == QGEMM_QUANT_WEIGHTED_SEARCH ? ones : NULL;
            const size_t il = im ? K : 0;
            uint16_t b0[N * K / BL], b1[N * K / BL];
            uint8_t q0[sizeof blocks], q1[sizeof blocks];
            int8_t i0[N * K], i1[N * K];
            memset(c1, 0x5a, sizeof c1);
            OK(qgemm_quant_qsi4cxp(N, K, &wf, plain_rules[r], im, il, c0, sizeof c0, s0, N));
            OK(qgemm_quant_gptq_qsi4cxp(N, K, &wf, gptq_rules[r], NULL, 0, &h2, 0.01f, work, wl, c1, sizeof c1, s1, N));
            bool eq = memcmp(c0, c1, sizeof c0) == 0 && memcmp(s0, s1, sizeof s0) == 0;
            CHECK(eq, "qsi4cxp %s rule %d: gptq with H = I is not the plain quantizer", form_name[f], r);
            same += eq;
            OK(qgemm_quant_qsi4c32p(N, K, BL, &wf, plain_rules[r], im, il, c0, sizeof c0, b0, N * 2));
            OK(qgemm_quant_gptq_qsi4c32p(N, K, BL, &wf, gptq_rules[r], NULL, 0, &h2, 0.01f, work, wl, c1, sizeof c1,
                                         b1, N * 2));
            eq = memcmp(c0, c1, sizeof c0) == 0 && memcmp(b0, b1, sizeof b0) == 0;
            CHECK(eq, "qsi4c32p %s rule %d: gptq with H = I is not the plain quantizer", form_name[f], r);
            same += eq;
            OK(qgemm_quant_q4_0(N, K, BL, &wf, plain_rules[r], im, il, q0, sizeof q0));
            OK(qgemm_quant_gptq_q4_0(N, K, BL, &wf, gptq_rules[r], NULL, 0, &h2, 0.01f, work, wl, q1, sizeof q1));
            eq = memcmp(q0, q1, sizeof q0) == 0;
            CHECK(eq, "q4_0 %s rule %d: gptq with H = I is not the plain quantizer", form_name[f], r);
            same += eq;
            OK(qgemm_quant_qsi8cxp(N, K, &wf, plain_rules[r], im, il, i0, sizeof i0, s0, N));
            OK(qgemm_quant_gptq_qsi8cxp(N, K, &wf, gptq_rules[r], NULL, 0, &h2, 0.01f, work, wl, i1, sizeof i1, s1, N));
            eq = memcmp(i0, i1, sizeof i0) == 0 && memcmp(s0, s1, sizeof s0) == 0;
            CHECK(eq, "qsi8cxp %s rule %d: gptq with H = I is not the plain quantizer", form_name[f], r);
            same += eq;
        }
    }
    printf("gptq with H = I: %zu of 80 (format, input form, rule) outputs equal to the plain quantizer's\n", same);
    free(eye);
    free(h2buf);
    free(xa);
    free(a);
    free(zz);
    free(hbuf);
    free(work);
}

int main(void) {
    OK(qgemm_cpu_detect(&cpu));
    make_weights();
    test_qsi4cxp();
    test_qsi4c32p();
    test_q4_0();
    test_qsi8cxp();
    test_qai4c32p();
    test_qsu2cxp();
    test_rules();
    test_errors();
    test_gptq();
    printf("quant: %zu checks, %zu failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
