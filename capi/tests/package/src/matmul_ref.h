/* The test data and plain C reference of the package consumers (capi/tests/package): an m x n
 * output of int8-range activations times int4 weights, both with scale 1, plus an integer bias.
 *
 * Chosen so the quantized matmul is exact, and the result can be compared for equality, not within
 * a tolerance: every activation row holds -128 and 127, so the per-row int8 quantization of the
 * `qai8dxp` packers has scale (127 - -128) / 255 = 1 and zero point 0 (every value maps to itself);
 * the int4 weights are in [-8, 7] with scale 1; all sums are integers far below 2^24, which f32
 * holds exactly. A wrong packing, nibble order, zero point, bias or tile tail shows as a different
 * value. m = 5 and n = 7 are not multiples of the kernels' tiles, so the tails run too. */
#ifndef QGEMM_PACKAGE_TEST_MATMUL_REF_H
#define QGEMM_PACKAGE_TEST_MATMUL_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { REF_M = 5, REF_N = 7, REF_K = 64 };

/* The inputs: activations (row-major m x k), the weights as values in [-8, 7] (n x k) and as the
 * bytes the packers take (n rows of k/2 bytes, unsigned nibbles u = w + 8, the first of each pair
 * in the low nibble: KleidiAI's qs4cxs1s0 with rhs_zero_point 8), scales (1) and bias. */
struct ref_data {
    float act[REF_M * REF_K];
    int8_t w[REF_N * REF_K];
    uint8_t w_packed4[REF_N * REF_K / 2];
    float scale[REF_N];
    float bias[REF_N];
};

static inline void ref_fill(struct ref_data* d) {
    uint32_t x = 12345u; /* a fixed LCG: the same data on every run */
    for (size_t i = 0; i < REF_M; i++) {
        for (size_t k = 0; k < REF_K; k++) {
            x = x * 1664525u + 1013904223u;
            d->act[i * REF_K + k] = (float)((int)(x >> 24) - 128); /* [-128, 127] */
        }
        /* The row's extremes, at a different place in each row. */
        d->act[i * REF_K + (i % REF_K)] = -128.0f;
        d->act[i * REF_K + ((i + 9) % REF_K)] = 127.0f;
    }
    for (size_t j = 0; j < REF_N; j++) {
        for (size_t k = 0; k < REF_K; k++) {
            x = x * 1664525u + 1013904223u;
            d->w[j * REF_K + k] = (int8_t)((int)(x >> 28) - 8); /* [-8, 7] */
        }
        for (size_t k = 0; k < REF_K; k += 2) {
            uint8_t lo = (uint8_t)(d->w[j * REF_K + k] + 8), hi = (uint8_t)(d->w[j * REF_K + k + 1] + 8);
            d->w_packed4[j * (REF_K / 2) + k / 2] = (uint8_t)(lo | (hi << 4));
        }
        d->scale[j] = 1.0f;
        d->bias[j] = (float)((int)j * 3 - 10);
    }
}

/* The reference, in plain C. */
static inline void ref_matmul(const struct ref_data* d, float* out /* REF_M * REF_N */) {
    for (size_t i = 0; i < REF_M; i++) {
        for (size_t j = 0; j < REF_N; j++) {
            int32_t acc = 0;
            for (size_t k = 0; k < REF_K; k++) {
                acc += (int32_t)d->act[i * REF_K + k] * d->w[j * REF_K + k];
            }
            out[i * REF_N + j] = (float)acc + d->bias[j];
        }
    }
#ifdef QGEMM_PACKAGE_CORRUPT_REF
    out[REF_N + 3] += 1.0f; /* run.sh --self-check: a wrong reference must fail the program */
#endif
}

/* Counts the elements of `got` that differ from the reference, printing the first few. */
static inline int ref_check(const struct ref_data* d, const float* got, const char* who) {
    float want[REF_M * REF_N];
    ref_matmul(d, want);
    int bad = 0;
    for (size_t e = 0; e < REF_M * REF_N; e++) {
        if (got[e] != want[e]) {
            if (bad < 5) {
                fprintf(stderr, "%s: dst[%zu][%zu] = %g, reference %g\n", who, e / REF_N, e % REF_N,
                        (double)got[e], (double)want[e]);
            }
            bad++;
        }
    }
    return bad;
}

/* A checksum of the output, printed in the line the test greps, so the expected line is fixed
 * data (the test compares it with a literal, independently of this program's reference). */
static inline long long ref_sum(const float* got) {
    double s = 0;
    for (size_t e = 0; e < REF_M * REF_N; e++) {
        s += (double)got[e];
    }
    return (long long)s;
}

#endif
