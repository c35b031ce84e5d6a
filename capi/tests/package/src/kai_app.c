/* Package consumer, layer 2: a program written for KleidiAI. It names only kai_* functions and
 * includes KleidiAI's header paths, exactly as it would against KleidiAI itself (KleidiAI's
 * documented flow: pack the int4 weights, quantize and pack the activations, run one ukernel), and
 * is built unchanged against the installed qgemm package (include path <prefix>/include/qgemm).
 * Compares every output element with the plain C reference (matmul_ref.h). Prints
 *   qgemm-package: kai ok: <ukernel> sum=<checksum>
 * and exits 0 only when all of it worked (capi/tests/package/run.sh greps that line). */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "matmul_ref.h"

#define UKERNEL matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)

int main(void) {
    static struct ref_data d;
    ref_fill(&d);

    const size_t mr = CAT(kai_get_mr_, UKERNEL)();
    const size_t nr = CAT(kai_get_nr_, UKERNEL)();
    const size_t kr = CAT(kai_get_kr_, UKERNEL)();
    const size_t sr = CAT(kai_get_sr_, UKERNEL)();

    const size_t rhs_size = kai_get_rhs_packed_size_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(REF_N, REF_K, nr, kr, sr);
    const size_t lhs_size = kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(REF_M, REF_K, mr, kr, sr);
    uint8_t* rhs_packed = malloc(rhs_size);
    uint8_t* lhs_packed = malloc(lhs_size);
    if (!rhs_packed || !lhs_packed) {
        fprintf(stderr, "kai: out of memory\n");
        return 1;
    }
    struct kai_rhs_pack_qs4cxs1s0_param params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
    kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, REF_N, REF_K, nr, kr, sr, d.w_packed4, d.bias, d.scale, rhs_packed, 0,
                                           &params);
    kai_run_lhs_quant_pack_qai8dxp_f32(REF_M, REF_K, mr, kr, sr, 0, d.act, REF_K * sizeof(float), lhs_packed);

    float dst[REF_M * REF_N];
    if (CAT(kai_get_dst_size_, UKERNEL)(REF_M, REF_N) != sizeof dst) {
        fprintf(stderr, "kai: dst size %zu, expected %zu\n", CAT(kai_get_dst_size_, UKERNEL)(REF_M, REF_N),
                sizeof dst);
        return 1;
    }
    CAT(kai_run_, UKERNEL)(REF_M, REF_N, REF_K, lhs_packed, rhs_packed, dst, REF_N * sizeof(float), sizeof(float),
                           -FLT_MAX, FLT_MAX);
    free(rhs_packed);
    free(lhs_packed);

    int bad = ref_check(&d, dst, "kai");
    if (bad) {
        fprintf(stderr, "kai: %d of %d outputs differ from the reference\n", bad, REF_M * REF_N);
        return 1;
    }
    printf("qgemm-package: kai ok: %s sum=%lld\n", STR(UKERNEL), ref_sum(dst));
    return 0;
}
