/* Header test: qgemm.h and every kai/ header after the system headers a C or C++ program commonly
 * includes first (with _GNU_SOURCE, where <signal.h> also declares `write`). qgemm.h once ended
 * with cbindgen's copies of the library's private libc imports (`write` with another type,
 * `abort`, `getauxval`), so such a file did not compile. run.sh compiles this file as C11 with
 * aarch64-linux-gnu-gcc and as C++17 with aarch64-linux-gnu-g++ (-Wall -Wextra -Werror), links
 * both with the library and runs them: the C++ build also proves that every declaration has C
 * linkage. kai_all.h (written by run.sh) includes every header under capi/include/kai. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "kai_all.h"
#include "qgemm.h"

#ifdef __cplusplus
#define LANGUAGE "C++"
#else
#define LANGUAGE "C"
#endif

int main(void) {
    uint32_t features = 0;
    qgemm_status st = qgemm_cpu_from_target(&features);
    if (st != QGEMM_OK) {
        fprintf(stderr, "headers (" LANGUAGE "): qgemm_cpu_from_target: %s\n", qgemm_status_message(st));
        return 1;
    }
    /* A layer-2 getter, through its kai/ header. */
    size_t mr = kai_get_mr_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm();
    if (mr != 4) {
        fprintf(stderr, "headers (" LANGUAGE "): mr %zu, expected 4\n", mr);
        return 1;
    }
    /* The libc functions the old header redeclared, used with their real types. */
    static const char line[] = "headers (" LANGUAGE "): qgemm.h and kai/ compile after the system headers\n";
    if (write(STDOUT_FILENO, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) return 1;
    if (getauxval(AT_PAGESZ) == 0) return 1;
    return 0;
}
