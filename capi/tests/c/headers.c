/* Header test: qgemm.h and every kai/ header after the system headers a C or C++ program commonly
 * includes first (with _GNU_SOURCE, where <signal.h> also declares `write`). qgemm.h once ended
 * with cbindgen's copies of the library's private libc imports (`write` with another type,
 * `abort`, `getauxval`), so such a file did not compile. run.sh compiles this file as C11 with
 * aarch64-linux-gnu-gcc and as C++17 with aarch64-linux-gnu-g++ (-Wall -Wextra -Werror), links
 * both with the library and runs them: the C++ build also proves that every declaration has C
 * linkage. kai_all.h (written by run.sh) includes every header under capi/include/kai. The program
 * also uses qgemm.h's family parameter structs (qgemm_lut_params, qgemm_lhs_stride_params, which no
 * function signature names: cbindgen emits them only as cbindgen.toml lists them) and a float
 * family through the shared kernel API. */
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
    /* The family parameter structs travel behind qgemm_matmul_args::params (a `const void *`): the
     * header declares them although no function names them (it once did not). */
    qgemm_lut_params lut;
    qgemm_lhs_stride_params stride;
    lut.lut[0] = -2, lut.lut[1] = -1, lut.lut[2] = 0, lut.lut[3] = 1;
    stride.lhs_stride_row = 0;
    qgemm_matmul_args args;
    memset(&args, 0, sizeof args);
    args.params = &lut;
    if (sizeof lut != 4 * sizeof(int32_t) || sizeof stride != sizeof(size_t) || args.params == &stride) return 1;
    /* One family code space: a float family through the kernel API every family shares. */
    qgemm_kernel kernel;
    qgemm_kernel_info info;
    st = qgemm_select(QGEMM_FAMILY_F32_BF16P_BF16P, QGEMM_FEATURE_NEON, 8, &kernel);
    if (st == QGEMM_OK) st = qgemm_kernel_get_info(kernel, &info);
    if (st != QGEMM_OK || kernel.svl_bytes != 0 || info.lhs.format != QGEMM_LHS_FORMAT_BF16P ||
        info.rhs.format != QGEMM_RHS_FORMAT_BF16P_B32 || info.rhs.nr != 12) {
        fprintf(stderr, "headers (" LANGUAGE "): qgemm_select of the f32_bf16p_bf16p family: %s\n",
                qgemm_status_message(st));
        return 1;
    }
    /* The libc functions the old header redeclared, used with their real types. */
    static const char line[] = "headers (" LANGUAGE "): qgemm.h and kai/ compile after the system headers\n";
    if (write(STDOUT_FILENO, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) return 1;
    if (getauxval(AT_PAGESZ) == 0) return 1;
    return 0;
}
