/* Package consumer, layer 1: the qgemm_* API from the installed `qgemm.h`. Picks the best kernel
 * of the int4 family for this CPU, packs both operands, runs the matmul and compares every output
 * element with the plain C reference (matmul_ref.h). Prints
 *   qgemm-package: layer1 ok: <kernel> sum=<checksum>
 * and exits 0 only when all of it worked (capi/tests/package/run.sh greps that line). */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Both include forms of the package (run.sh builds both): the directory form, and with
 * QGEMM_PACKAGE_PREFIXED_INCLUDE the prefixed form, from the same flags. */
#ifdef QGEMM_PACKAGE_PREFIXED_INCLUDE
#include <qgemm/qgemm.h>
#else
#include "qgemm.h"
#endif
#include "matmul_ref.h"

#define CHECK(call)                                                                         \
    do {                                                                                    \
        enum qgemm_status st_ = (call);                                                     \
        if (st_ != QGEMM_OK) {                                                              \
            fprintf(stderr, "layer1: %s: %s\n", #call, qgemm_status_message(st_));          \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

int main(void) {
    static struct ref_data d;
    ref_fill(&d);

    uint32_t cpu;
    CHECK(qgemm_cpu_detect(&cpu));
    struct qgemm_kernel kernel;
    CHECK(qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI4CXP, cpu, REF_M, &kernel));
    struct qgemm_kernel_info info;
    CHECK(qgemm_kernel_get_info(kernel, &info));
    /* The packers' parameters: the kernel's LHS tile rows and RHS tile (qgemm_kernel_info.lhs/.rhs). */
    const struct qgemm_packing packing = {info.lhs.mr, info.rhs.nr, info.rhs.kr, info.rhs.sr};
    if (info.lhs.format != QGEMM_LHS_FORMAT_QAI8DXP || info.rhs.format != QGEMM_RHS_FORMAT_QSI4CXP) {
        fprintf(stderr, "layer1: %s reads formats %u/%u\n", info.name, info.lhs.format, info.rhs.format);
        return 1;
    }

    size_t rhs_size, lhs_size;
    CHECK(qgemm_rhs_qsi4cxp_packed_size(&packing, REF_N, REF_K, &rhs_size));
    CHECK(qgemm_lhs_qai8dxp_packed_size(&packing, REF_M, REF_K, &lhs_size));
    uint8_t* rhs_packed = malloc(rhs_size);
    uint8_t* lhs_packed = malloc(lhs_size);
    if (!rhs_packed || !lhs_packed) {
        fprintf(stderr, "layer1: out of memory\n");
        return 1;
    }
    struct qgemm_int4_source w = {d.w_packed4, sizeof d.w_packed4, QGEMM_LAYOUT_NXK, REF_K / 2,
                                  QGEMM_INT4_ZERO_POINT_8};
    CHECK(qgemm_rhs_qsi4cxp_pack(&packing, REF_N, REF_K, &w, d.scale, REF_N, d.bias, REF_N, rhs_packed, rhs_size));
    CHECK(qgemm_lhs_qai8dxp_quantize_pack(&packing, REF_M, REF_K, 0, d.act, REF_M * REF_K, REF_K, lhs_packed,
                                          lhs_size));
    float dst[REF_M * REF_N];
    struct qgemm_matmul_args args = {
        .m = REF_M, .n = REF_N, .k = REF_K, .dst_stride_row = REF_N, .clamp_min = -FLT_MAX, .clamp_max = FLT_MAX};
    CHECK(qgemm_kernel_run(kernel, cpu, lhs_packed, lhs_size, rhs_packed, rhs_size, dst, REF_M * REF_N, &args));
    free(rhs_packed);
    free(lhs_packed);

    int bad = ref_check(&d, dst, "layer1");
    if (bad) {
        fprintf(stderr, "layer1: %d of %d outputs differ from the reference (%s)\n", bad, REF_M * REF_N, info.name);
        return 1;
    }
    printf("qgemm-package: layer1 ok: %s sum=%lld\n", info.name, ref_sum(dst));
    return 0;
}
