/* The check macros of the layer-1 C tests (qgemm_layer1.c, qgemm_float.c, quant.c,
 * linear_quantize.c): counters, the current case `cur` printed with every failure, CHECK (a
 * condition), OK (a call that must succeed) and EXPECT (a call that must fail with a given status;
 * a file may define EXPECT_SEEN(status) before including this header to record which statuses it
 * produced); and the packing helpers they share. */
#ifndef QGEMM_TEST_CHECKS_H
#define QGEMM_TEST_CHECKS_H

#include <stddef.h>
#include <stdio.h>

#include "qgemm.h"

static size_t checks, failures;
static char cur[256];

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        checks++;                                                           \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "FAIL %s (line %d): ", cur, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

/* `call` must succeed. */
#define OK(call)                                                                          \
    do {                                                                                  \
        qgemm_status s_ = (call);                                                         \
        CHECK(s_ == QGEMM_OK, "%s -> %d (%s)", #call, (int)s_, qgemm_status_message(s_)); \
    } while (0)

#ifndef EXPECT_SEEN
#define EXPECT_SEEN(status) ((void)0)
#endif

/* `call` must fail with `want`. */
#define EXPECT(call, want)                                                                           \
    do {                                                                                             \
        qgemm_status s_ = (call);                                                                    \
        CHECK(s_ == (want), "%s -> %d (%s), expected %d", #call, (int)s_, qgemm_status_message(s_), \
              (int)(want));                                                                          \
        if (s_ == (want)) EXPECT_SEEN(want);                                                         \
    } while (0)

/* ---- packings ------------------------------------------------------------------------------ */

/* The parameters the per-format packer functions take (qgemm_packing) for a kernel: the rows of
 * its LHS tile and its RHS tile (a quantized kernel's two sides share kr and sr). */
static inline qgemm_packing packing_of(const qgemm_kernel_info* info) {
    const qgemm_packing p = {info->lhs.mr, info->rhs.nr, info->rhs.kr, info->rhs.sr};
    return p;
}

/* The packer parameters of an RHS packing (qgemm_linear_rhs_packing) with LHS tiles of `mr` rows. */
static inline qgemm_packing packing_with_mr(qgemm_rhs_packing rhs, size_t mr) {
    const qgemm_packing p = {mr, rhs.nr, rhs.kr, rhs.sr};
    return p;
}

static inline bool same_rhs(qgemm_rhs_packing a, qgemm_rhs_packing b) {
    return a.format == b.format && a.nr == b.nr && a.kr == b.kr && a.sr == b.sr;
}

static inline bool same_lhs(qgemm_lhs_packing a, qgemm_lhs_packing b) {
    return a.format == b.format && a.mr == b.mr && a.kr == b.kr && a.sr == b.sr;
}

#endif
