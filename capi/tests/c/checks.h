/* The check macros of the layer-1 C tests (qgemm_layer1.c, quant.c, linear_quantize.c): counters,
 * the current case `cur` printed with every failure, CHECK (a condition), OK (a call that must
 * succeed) and EXPECT (a call that must fail with a given status; a file may define
 * EXPECT_SEEN(status) before including this header to record which statuses it produced). */
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

#endif
