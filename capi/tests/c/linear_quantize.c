/* The one-call path from float weights (qgemm_linear_quantize_pack) of every quantized family:
 *
 *   linear_quantize
 *
 * For each family and each of its methods: quantize-packs random float weights (with a bias where
 * the family has one), NxK and KxN with a padded stride (the same packed bytes), runs the layer on
 * a few rows and compares every output with a C f32 matmul within the format's tolerance
 * (|y - y_f32| <= tol * max|w_c| * sum|x| + output rounding); then the error statuses, with the
 * packed buffer and the layer left unwritten (and the float families' refusal: their weights are
 * not quantized). Then AWQ (awq_test): the input scale in C.
 * QGEMM_QPACK_CORRUPT=1 perturbs the f32 reference by 10% and one bit of the AWQ reference
 * (run.sh --self-check: the test must fail). Exit 0 only if every check passed. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgemm.h"

#include "checks.h"

enum kind { INT4, INT8, ASYM4, BIT2 };

struct family {
    uint32_t code;
    const char* name;
    bool blocked, bias;
    int dst; /* 0: f32, 1: f16, 2: bf16 */
    enum kind kind;
};

static const struct family families[] = {
    {QGEMM_FAMILY_QAI8DXP_QSI4CXP, "qai8dxp_qsi4cxp", false, true, 0, INT4},
    {QGEMM_FAMILY_QAI8DXP_QSI4C32P, "qai8dxp_qsi4c32p", true, true, 0, INT4},
    {QGEMM_FAMILY_QSI8D32P_QSI4C32P, "qsi8d32p_qsi4c32p", true, false, 0, INT4},
    {QGEMM_FAMILY_QAI8DXP_QSI8CXP, "qai8dxp_qsi8cxp", false, true, 0, INT8},
    {QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP, "f16_qai8dxp_qsi4cxp", false, true, 1, INT4},
    {QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP, "f16_qai8dxp_qsi8cxp", false, true, 1, INT8},
    {QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP, "bf16_qai8dxp_qsi4cxp", false, true, 2, INT4},
    {QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P, "bf16_qai8dxp_qsi4c32p", true, true, 2, INT4},
    {QGEMM_FAMILY_QSI8D32P_QAI4C32P, "qsi8d32p_qai4c32p", true, true, 0, ASYM4},
    {QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P, "f16_qsi8d32p_qai4c32p", true, true, 1, ASYM4},
    {QGEMM_FAMILY_QAI8DXP_QSU2CXP, "qai8dxp_qsu2cxp", false, true, 0, BIT2},
};

enum { N = 12, K = 64, BL = 32, M = 3, STRIDE_PAD = 3 };

static uint32_t rng_state = 12345;
static float unit(void) { /* uniform in [-1, 1) */
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

static uint32_t f32_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static float bits_f32(uint32_t u) {
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* f16 bits of `v`, exact for the values used here (0 or normal with at most 11 significant bits). */
static uint16_t f16_of(float v) {
    uint32_t u = f32_bits(v);
    if ((u & 0x7fffffffu) == 0) return (uint16_t)(u >> 16);
    uint32_t sign = (u >> 16) & 0x8000u, e = ((u >> 23) & 0xff) - 127 + 15, mant = (u >> 13) & 0x3ff;
    return (uint16_t)(sign | (e << 10) | mant);
}

static float f16_value(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, mant = h & 0x3ffu;
    if (e == 0) return (sign ? -1.0f : 1.0f) * ldexpf((float)mant, -24);
    if (e == 31) return bits_f32(sign | 0x7f800000u | (mant << 13));
    return bits_f32(sign | ((e - 15 + 127) << 23) | (mant << 13));
}

/* Methods of a kind: the codes to try. */
static size_t methods(enum kind kind, uint32_t* out) {
    switch (kind) {
    case ASYM4:
        out[0] = QGEMM_QUANT_QAI4C32P_MIN_MAX;
        out[1] = QGEMM_QUANT_QAI4C32P_FITTED;
        return 2;
    case BIT2:
        out[0] = 0;
        return 1;
    default:
        out[0] = QGEMM_QUANT_ROUND_TO_NEAREST;
        out[1] = QGEMM_QUANT_SIGNED_MAX;
        out[2] = QGEMM_QUANT_SEARCH;
        out[3] = QGEMM_QUANT_WEIGHTED_SEARCH;
        return 4;
    }
}

/* The tolerance of a kind, relative to max|w_c| * sum|x|: half a weight step (with the format's
 * levels) plus one activation step. */
static double tolerance(enum kind kind) {
    switch (kind) {
    case INT8: return 0.5 / 127 + 2.0 / 255;
    case INT4: return 0.5 / 7 * 1.1 + 2.0 / 255;
    case ASYM4: return 1.0 / 15 * 1.1 + 2.0 / 255;
    default: return 0.55 + 2.0 / 255; /* 2-bit, table {-2, -1, 0, 1}: the largest side loses up to half */
    }
}

static void family_test(const struct family* f, uint32_t features, bool corrupt) {
    const size_t bl = f->blocked ? BL : 0;
    float w[N * K], wt[K * (N + STRIDE_PAD)], x[M * K], bias[N], imp[K];
    uint16_t x16[M * K];
    for (size_t c = 0; c < N; c++) {
        const float mag = (c % 3 == 0) ? 0.01f : (c % 3 == 1) ? 0.3f : 2.0f;
        for (size_t j = 0; j < K; j++) w[c * K + j] = unit() * mag;
        bias[c] = unit() * 0.1f;
    }
    for (size_t j = 0; j < K; j++) {
        imp[j] = 0.5f + (float)(j % 5);
        for (size_t c = 0; c < N + STRIDE_PAD; c++) wt[j * (N + STRIDE_PAD) + c] = c < N ? w[c * K + j] : NAN;
    }
    /* Activations exact in f16 and bf16: multiples of 1/16 in [-2, 2). */
    for (size_t i = 0; i < M * K; i++) {
        x[i] = floorf(unit() * 32.0f) / 16.0f;
        x16[i] = f->dst == 2 ? (uint16_t)(f32_bits(x[i]) >> 16) : f16_of(x[i]);
    }
    size_t ws_len = 0, size = 0;
    OK(qgemm_linear_quantize_workspace_size(f->code, N, K, bl, &ws_len));
    OK(qgemm_linear_packed_size(f->code, N, K, bl, &size));
    uint8_t* ws = malloc(ws_len + 1);
    uint8_t* buf = malloc(size);
    uint8_t* buf_t = malloc(size);
    const float* b = f->bias ? bias : NULL;
    const size_t b_len = f->bias ? N : 0;
    uint32_t ms[4];
    const size_t nm = methods(f->kind, ms);
    for (size_t mi = 0; mi < nm; mi++) {
        const uint32_t method = ms[mi];
        const float* im = method == QGEMM_QUANT_WEIGHTED_SEARCH && f->kind != ASYM4 && f->kind != BIT2 ? imp : NULL;
        snprintf(cur, sizeof cur, "%s method %u", f->name, (unsigned)method);
        qgemm_linear l, lt;
        /* A workspace at an odd address: any alignment must do. */
        OK(qgemm_linear_quantize_pack(f->code, w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, method, im, im ? K : 0, b, b_len,
                                      ws + 1, ws_len, buf, size, &l));
        OK(qgemm_linear_quantize_pack(f->code, wt, K * (N + STRIDE_PAD), QGEMM_LAYOUT_KXN, N + STRIDE_PAD, N, K, bl,
                                      method, im, im ? K : 0, b, b_len, ws, ws_len, buf_t, size, &lt));
        CHECK(memcmp(buf, buf_t, size) == 0, "NxK and KxN weights packed differently");
        CHECK(l.family == f->code && l.n == N && l.k == K && l.bl == bl && l.weights == buf && l.weights_len == size,
              "layer fields");
        size_t ss = 0;
        OK(qgemm_linear_scratch_size(&l, M, &ss));
        uint8_t* scratch = malloc(ss);
        float y[M * N];
        uint16_t y16[M * N];
        if (f->dst == 0) {
            OK(qgemm_linear_run(&l, features, M, x, M * K, y, M * N, scratch, ss));
        } else {
            OK(qgemm_linear_run_u16(&l, features, M, x16, M * K, y16, M * N, scratch, ss));
            for (size_t i = 0; i < M * N; i++) y[i] = f->dst == 2 ? bits_f32((uint32_t)y16[i] << 16) : f16_value(y16[i]);
        }
        free(scratch);
        const double out_rel = f->dst == 0 ? 1e-6 : f->dst == 1 ? 1.0 / 1024 : 1.0 / 128;
        double worst = 0;
        for (size_t i = 0; i < M; i++) {
            double sx = 0;
            for (size_t j = 0; j < K; j++) sx += fabs((double)x[i * K + j]);
            for (size_t c = 0; c < N; c++) {
                double ref = b ? bias[c] : 0.0, amax = 0;
                for (size_t j = 0; j < K; j++) {
                    ref += (double)x[i * K + j] * w[c * K + j];
                    amax = fmax(amax, fabs((double)w[c * K + j]));
                }
                if (corrupt) ref *= 1.1;
                const double tol = tolerance(f->kind) * amax * sx + fabs(ref) * out_rel + 1e-6;
                const double err = fabs((double)y[i * N + c] - ref);
                worst = fmax(worst, err / tol);
                CHECK(err <= tol, "y[%zu][%zu] = %g, f32 %g, tolerance %g", i, c, (double)y[i * N + c], ref, tol);
            }
        }
        printf("%-22s method %u: %d x %d x %d, worst error %.2f of the tolerance\n", f->name, (unsigned)method, M, N,
               K, worst);
    }

    /* Errors: the packed buffer and the layer stay unwritten. */
    snprintf(cur, sizeof cur, "%s errors", f->name);
    const uint32_t m0 = ms[0];
    qgemm_linear l, keep;
    memset(&l, 0xab, sizeof l);
    keep = l;
    memset(buf, 0x5a, size);
#define QP(weights, wlen, layout, stride, n, k, bl_, method, im, im_len, bias_, bias_len, ws_, ws_len_, buf_, buf_len, out) \
    qgemm_linear_quantize_pack(f->code, weights, wlen, layout, stride, n, k, bl_, method, im, im_len, bias_, bias_len,      \
                               ws_, ws_len_, buf_, buf_len, out)
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len - 1, buf, size, &l),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size - 1, &l),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(QP(w, N * K - 1, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K - 1, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
           QGEMM_ERROR_STRIDE_TOO_SMALL);
    EXPECT(QP(w, N * K, 2, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(QP(NULL, 0, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
           QGEMM_ERROR_NULL_POINTER);
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, NULL),
           QGEMM_ERROR_NULL_POINTER);
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, 0, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
           QGEMM_ERROR_ZERO_DIM);
    /* A block length: 16 (not a multiple of 32) for the per-block families, any for the others. */
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, f->blocked ? 16 : 32, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
           f->blocked ? QGEMM_ERROR_NOT_MULTIPLE : QGEMM_ERROR_UNSUPPORTED);
    size_t dummy;
    EXPECT(qgemm_linear_quantize_workspace_size(f->code, N, K, f->blocked ? 16 : 32, &dummy),
           f->blocked ? QGEMM_ERROR_NOT_MULTIPLE : QGEMM_ERROR_UNSUPPORTED);
    float bad[N * K];
    memcpy(bad, w, sizeof bad);
    bad[K + 5] = NAN;
    EXPECT(QP(bad, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
           QGEMM_ERROR_NON_FINITE);
    /* Overlapping buffers. */
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, buf, size, buf, size, &l),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, b, b_len, (uint8_t*)w, sizeof w, buf, size, &l),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    /* Methods: an unknown code; importance only with the weighted search, which needs it. */
    if (f->kind != BIT2) {
        EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, 7, NULL, 0, b, b_len, ws, ws_len, buf, size, &l),
               QGEMM_ERROR_INVALID_ARGUMENT);
    }
    EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, imp, K, b, b_len, ws, ws_len, buf, size, &l),
           QGEMM_ERROR_INVALID_ARGUMENT);
    if (f->kind == INT4 || f->kind == INT8) {
        EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, QGEMM_QUANT_WEIGHTED_SEARCH, NULL, 0, b, b_len, ws, ws_len,
                  buf, size, &l),
               QGEMM_ERROR_NULL_POINTER);
        EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, QGEMM_QUANT_WEIGHTED_SEARCH, imp, K - 1, b, b_len, ws,
                  ws_len, buf, size, &l),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
    }
    /* Bias: short, or given to the family without one. */
    if (f->bias) {
        EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, bias, N - 1, ws, ws_len, buf, size, &l),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
    } else {
        EXPECT(QP(w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, bias, N, ws, ws_len, buf, size, &l),
               QGEMM_ERROR_UNSUPPORTED);
    }
    EXPECT(qgemm_linear_quantize_pack(99, w, N * K, QGEMM_LAYOUT_NXK, K, N, K, bl, m0, NULL, 0, NULL, 0, ws, ws_len, buf,
                                      size, &l),
           QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_quantize_workspace_size(99, N, K, bl, &dummy), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_quantize_workspace_size(f->code, N, K, bl, NULL), QGEMM_ERROR_NULL_POINTER);
    /* The float families (one code space with the quantized ones) pack their weights as they are
     * (qgemm_linear_pack): nothing to quantize. */
    for (uint32_t fl = QGEMM_FAMILY_F32_F32_F32P; fl <= QGEMM_FAMILY_F16_BF16P_BF16P; fl++) {
        EXPECT(qgemm_linear_quantize_pack(fl, w, N * K, QGEMM_LAYOUT_NXK, K, N, K, 0, QGEMM_QUANT_ROUND_TO_NEAREST, NULL,
                                          0, NULL, 0, ws, ws_len, buf, size, &l),
               QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_linear_quantize_workspace_size(fl, N, K, 0, &dummy), QGEMM_ERROR_UNSUPPORTED);
    }
#undef QP
    bool untouched = true;
    for (size_t i = 0; i < size; i++) untouched &= buf[i] == 0x5a;
    CHECK(untouched, "a failing call wrote the packed buffer");
    CHECK(memcmp(&l, &keep, sizeof l) == 0, "a failing call wrote the layer");
    free(ws);
    free(buf);
    free(buf_t);
}

/* AWQ: weights divided by the input scale (qgemm_quant_divide_depths), the layer run with the
 * scale (qgemm_linear_set_input_scale) gives the bits of the same layer without it run on the
 * scaled activations, for a family that multiplies in its packer (qai8dxp_qsi4c32p) and one that
 * stages the scaled rows (qsi8d32p_qai4c32p); the Hessian of the scaled rows
 * (qgemm_quant_hessian_scale_inputs); the error statuses. */
static void awq_test(uint32_t features, bool corrupt) {
    static const struct {
        uint32_t code;
        const char* name;
        uint32_t method;
    } fams[] = {{QGEMM_FAMILY_QAI8DXP_QSI4C32P, "qai8dxp_qsi4c32p", QGEMM_QUANT_SEARCH},
                {QGEMM_FAMILY_QSI8D32P_QAI4C32P, "qsi8d32p_qai4c32p", QGEMM_QUANT_QAI4C32P_FITTED}};
    enum { MA = 9 }; /* more rows than a tile: the staged family goes tile by tile */
    float w[N * K], w2[N * K], x[MA * K], xs[MA * K], s[K], bad[K];
    for (size_t i = 0; i < N * K; i++) w[i] = unit();
    for (size_t j = 0; j < K; j++) s[j] = 0.5f + (float)(j % 7) * 0.375f;
    for (size_t i = 0; i < MA * K; i++) {
        x[i] = unit() * ((i % K) % 9 == 0 ? 8.0f : 1.0f);
        xs[i] = x[i] * s[i % K];
    }
    snprintf(cur, sizeof cur, "divide_depths");
    memcpy(w2, w, sizeof w);
    memcpy(bad, s, sizeof s);
    bad[5] = 0.0f;
    EXPECT(qgemm_quant_divide_depths(N, K, w2, N * K, QGEMM_LAYOUT_NXK, K, bad, K), QGEMM_ERROR_NON_FINITE);
    EXPECT(qgemm_quant_divide_depths(N, K, w2, N * K, QGEMM_LAYOUT_NXK, K, s, K - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_quant_divide_depths(N, K, w2, N * K, QGEMM_LAYOUT_NXK, K, (const float*)w2, K),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_quant_divide_depths(N, K, NULL, N * K, QGEMM_LAYOUT_NXK, K, s, K), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_divide_depths(N, K, w2, N * K, QGEMM_LAYOUT_NXK, K, NULL, K), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_divide_depths(N, K, w2, N * K, 7, K, s, K), QGEMM_ERROR_INVALID_ARGUMENT);
    CHECK(memcmp(w2, w, sizeof w) == 0, "a failing call wrote the weights");
    OK(qgemm_quant_divide_depths(N, K, w2, N * K, QGEMM_LAYOUT_NXK, K, s, K));
    bool divided = true;
    for (size_t i = 0; i < N * K; i++) divided &= w2[i] == w[i] / s[i % K];
    CHECK(divided, "w / s");

    for (size_t f = 0; f < 2; f++) {
        snprintf(cur, sizeof cur, "%s input scale", fams[f].name);
        const uint32_t code = fams[f].code;
        size_t ws_len = 0, size = 0;
        OK(qgemm_linear_quantize_workspace_size(code, N, K, BL, &ws_len));
        OK(qgemm_linear_packed_size(code, N, K, BL, &size));
        uint8_t* ws = malloc(ws_len);
        uint8_t* buf = malloc(size);
        qgemm_linear l, plain;
        OK(qgemm_linear_quantize_pack(code, w2, N * K, QGEMM_LAYOUT_NXK, K, N, K, BL, fams[f].method, NULL, 0, NULL, 0,
                                      ws, ws_len, buf, size, &l));
        CHECK(l.input_scale == NULL && l.input_scale_len == 0, "no scale after quantize_pack");
        plain = l;
        qgemm_linear keep = l;
        EXPECT(qgemm_linear_set_input_scale(NULL, s, K), QGEMM_ERROR_NULL_POINTER);
        EXPECT(qgemm_linear_set_input_scale(&l, s, K - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
        memcpy(bad, s, sizeof s);
        bad[3] = NAN;
        EXPECT(qgemm_linear_set_input_scale(&l, bad, K), QGEMM_ERROR_NON_FINITE);
        CHECK(memcmp(&l, &keep, sizeof l) == 0, "a failing call changed the layer");
        OK(qgemm_linear_set_input_scale(&l, s, K));
        CHECK(l.input_scale == s && l.input_scale_len == K, "scale fields");
        size_t ss = 0, ss_plain = 0;
        OK(qgemm_linear_scratch_size(&l, MA, &ss));
        OK(qgemm_linear_scratch_size(&plain, MA, &ss_plain));
        CHECK(f == 0 ? ss == ss_plain : ss > ss_plain, "scratch %zu, without the scale %zu", ss, ss_plain);
        uint8_t* scratch = malloc(ss);
        float y[MA * N], y0[MA * N];
        OK(qgemm_linear_run(&l, features, MA, x, MA * K, y, MA * N, scratch, ss));
        OK(qgemm_linear_run(&plain, features, MA, xs, MA * K, y0, MA * N, scratch, ss));
        if (corrupt) y0[0] = bits_f32(f32_bits(y0[0]) ^ 1);
        CHECK(memcmp(y, y0, sizeof y) == 0, "scaled layer != plain layer on scaled activations");
        /* Output over the scale; scratch one byte short (the staged family). */
        EXPECT(qgemm_linear_run(&l, features, 1, x, K, (float*)s, N, scratch, ss), QGEMM_ERROR_BUFFERS_OVERLAP);
        if (f == 1) EXPECT(qgemm_linear_run(&l, features, MA, x, MA * K, y, MA * N, scratch, ss_plain),
                           QGEMM_ERROR_BUFFER_TOO_SHORT);
        /* The scaled layer stays within the format's tolerance of the f32 layer of the original
         * weights (the bound of the quantized problem: the scaled rows and weights). */
        double worst = 0;
        for (size_t i = 0; i < MA * N; i++) {
            const size_t r = i / N, c = i % N;
            double ref = 0, amax = 0, sx = 0;
            for (size_t j = 0; j < K; j++) {
                ref += (double)x[r * K + j] * w[c * K + j];
                amax = fmax(amax, fabs((double)w2[c * K + j]));
                sx += fabs((double)xs[r * K + j]);
            }
            const double tol = tolerance(f == 0 ? INT4 : ASYM4) * amax * sx + fabs(ref) * 1e-6 + 1e-6;
            worst = fmax(worst, fabs(y[i] - ref) / tol);
        }
        CHECK(worst <= 1.0, "AWQ layer error %.3g of the tolerance", worst);
        OK(qgemm_linear_set_input_scale(&l, NULL, 0));
        CHECK(memcmp(&l, &plain, sizeof l) == 0, "NULL removes the scale");
        printf("%-22s input scale: bit-identical to the plain layer on scaled rows, worst error %.2f of the tolerance\n",
               fams[f].name, worst);
        free(scratch);
        free(ws);
        free(buf);
    }

    /* The Hessian of scaled rows, by powers of two (exact both ways). */
    snprintf(cur, sizeof cur, "hessian_scale_inputs");
    size_t hl = 0;
    OK(qgemm_quant_hessian_len(K, &hl));
    double* d1 = malloc(hl * sizeof(double));
    double* d2 = malloc(hl * sizeof(double));
    float p2[K], xp[MA * K];
    for (size_t j = 0; j < K; j++) p2[j] = j % 3 == 0 ? 0.5f : j % 3 == 1 ? 2.0f : 1.0f;
    for (size_t i = 0; i < MA * K; i++) xp[i] = x[i] * p2[i % K];
    qgemm_quant_hessian h1, h2;
    OK(qgemm_quant_hessian_init(&h1, d1, hl, K));
    OK(qgemm_quant_hessian_init(&h2, d2, hl, K));
    OK(qgemm_quant_hessian_add(&h1, x, MA * K, MA, K));
    OK(qgemm_quant_hessian_add(&h2, xp, MA * K, MA, K));
    EXPECT(qgemm_quant_hessian_scale_inputs(NULL, p2, K), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_hessian_scale_inputs(&h1, NULL, K), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_quant_hessian_scale_inputs(&h1, p2, K - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    p2[7] = INFINITY;
    EXPECT(qgemm_quant_hessian_scale_inputs(&h1, p2, K), QGEMM_ERROR_NON_FINITE);
    p2[7] = 2.0f;
    EXPECT(qgemm_quant_hessian_scale_inputs(&h1, (const float*)d1, K), QGEMM_ERROR_BUFFERS_OVERLAP);
    OK(qgemm_quant_hessian_scale_inputs(&h1, p2, K));
    CHECK(memcmp(d1, d2, hl * sizeof(double)) == 0, "scaled Hessian != Hessian of the scaled rows");
    free(d1);
    free(d2);
}

int main(void) {
    const bool corrupt = getenv("QGEMM_QPACK_CORRUPT") != NULL;
    uint32_t features = 0;
    if (qgemm_cpu_detect(&features) != QGEMM_OK) {
        fprintf(stderr, "qgemm_cpu_detect failed\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) family_test(&families[i], features, corrupt);
    awq_test(features, corrupt);
    printf("linear_quantize: %zu checks, %zu failures\n", checks, failures);
    return failures ? 1 : 0;
}
