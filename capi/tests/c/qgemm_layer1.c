/* Layer-1 test: the safe C API of qgemm.h.
 *
 *   kai_plan.py DATA | qgemm_layer1 <cpu>      (<cpu>: the QEMU model, `max` or `cortex-a53`)
 *
 * 1. Golden cases, bit for bit: for every distinct (golden case, packing) of the plan (the same
 *    lines kai_compat reads), packs LHS and RHS with the qgemm_*_pack functions and compares the
 *    bytes, sizes and offsets with KleidiAI's; then runs EVERY catalogue kernel of the family with
 *    that packing that the CPU has, whole (both clamps) and as a grid of the kernel's own
 *    m_step x n_step rectangles with a padded row stride (padding must stay untouched).
 * 2. Every kernel: each available catalogue kernel on synthetic shapes with tails, compared bit
 *    for bit with the scalar kernel of the same packing; at the end every available kernel must
 *    have run (scalar kernels of packings without golden cases run as references: the Rust tests
 *    check them against the reference arithmetic), and every unavailable one must refuse with
 *    QGEMM_ERROR_UNSUPPORTED_CPU.
 * 3. CPU features (detect, HWCAP decoding of every QGEMM_FEATURE_* bit, target, QGEMM_FEATURE_ALL
 *    accepted and the bit above it refused), the catalogue of all 15 families (each kernel's
 *    format codes, its `requires` bits = its tier's, availability = `requires` within the
 *    features, qgemm_kernel_resolve of the fixed-shape kernels: svl_bytes stays 0), selection
 *    (select, select_for with explicit RHS and LHS packings).
 * 4. Every qgemm_status value from a real failing call (quant.c produces the quantizers' and
 *    GPTQ's; QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN has no kernel that can produce it yet), with
 *    outputs left unwritten, and qgemm_status_message for every value; the family parameters
 *    of a run (qgemm_lut_params of the 2-bit family; parameters for a family without any).
 * 5. The operator (qgemm_linear_*): each family's layer packed once, run for m = 1..64; the
 *    outputs' digest must be the Rust operator's (QGEMM_LINEAR_DIGESTS: the shared golden
 *    capi/tests/data/linear_digests.txt, which tests/operator.rs checks against the Rust `Linear`);
 *    for some m, equal to layer 1's kernel for m run by hand, and its parts on pthreads with a
 *    clamp equal to one clamped call; every other RHS packing of the family's catalogue as a
 *    layer's packing (qgemm_linear_from_packed with it: the calls run the kernels that read it);
 *    then every bad input's status (a layer's size, a packing no kernel reads, a call whose
 *    kernel reads another packing than its layer's).
 * QGEMM_LAYER1_CORRUPT=1 flips one bit of the first golden dst in memory, QGEMM_LAYER1_CORRUPT=linear
 * one bit of the operator's first output: the test must fail (run.sh --self-check uses both). Exit 0 only if every check passed. */
/* _GNU_SOURCE and the POSIX headers before qgemm.h: the header must not clash with them (it once
 * declared libc's `write` with another type). */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "qgemm.h"
#include "test_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define N_STATUS 24 /* QGEMM_OK .. QGEMM_ERROR_STRUCT_SIZE */
/* Every family code of the header, quantized and float (the float ones' kernels: qgemm_float.c). */
#define ALL_FAMILIES (QGEMM_FAMILY_F16_BF16P_BF16P + 1)
/* The SME bits: a feature set with one of them makes the library read the streaming vector length
 * (RDSVL), which traps on a CPU without SME. */
#define SME_BITS                                                                                \
    (QGEMM_FEATURE_SME | QGEMM_FEATURE_SME2 | QGEMM_FEATURE_SME2P1 | QGEMM_FEATURE_SME_F16F16 | \
     QGEMM_FEATURE_SME_B16B16 | QGEMM_FEATURE_SME_I16I64 | QGEMM_FEATURE_SME_MOP4)


static bool status_seen[N_STATUS];
#define EXPECT_SEEN(want) \
    if ((int)(want) < N_STATUS) status_seen[(int)(want)] = true
#include "checks.h"

/* ---- the families ------------------------------------------------------------------------ */

/* The LHS packers (by format and input type) and RHS packer formats of the families. */
enum lhs_kind { LHS_F32, LHS_F16, LHS_BF16, LHS_QSI8D32P, LHS_SCALEF32_F32, LHS_SCALEF32_F16 };
enum rhs_kind { RHS_QSI4CXP, RHS_QSI4C32P, RHS_Q4_0, RHS_QSI8CXP, RHS_QAI4C32P, RHS_QSU2CXP };

/* One row per family, indexed by family code: a family is one row here. */
static const struct family {
    uint32_t code;
    const char* name;
    enum lhs_kind lhs;
    enum rhs_kind rhs;
    size_t dst_bytes; /* 4: f32 output (qgemm_kernel_run); 2: f16/bf16 bits (qgemm_kernel_run_u16) */
} families[] = {
    {QGEMM_FAMILY_QAI8DXP_QSI4CXP, "qai8dxp_qsi4cxp", LHS_F32, RHS_QSI4CXP, 4},
    {QGEMM_FAMILY_QAI8DXP_QSI4C32P, "qai8dxp_qsi4c32p", LHS_F32, RHS_QSI4C32P, 4},
    {QGEMM_FAMILY_QSI8D32P_QSI4C32P, "qsi8d32p_qsi4c32p", LHS_QSI8D32P, RHS_Q4_0, 4},
    {QGEMM_FAMILY_QAI8DXP_QSI8CXP, "qai8dxp_qsi8cxp", LHS_F32, RHS_QSI8CXP, 4},
    {QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP, "f16_qai8dxp_qsi4cxp", LHS_F16, RHS_QSI4CXP, 2},
    {QGEMM_FAMILY_F16_QAI8DXP_QSI8CXP, "f16_qai8dxp_qsi8cxp", LHS_F16, RHS_QSI8CXP, 2},
    {QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP, "bf16_qai8dxp_qsi4cxp", LHS_BF16, RHS_QSI4CXP, 2},
    {QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P, "bf16_qai8dxp_qsi4c32p", LHS_BF16, RHS_QSI4C32P, 2},
    {QGEMM_FAMILY_QSI8D32P_QAI4C32P, "qsi8d32p_qai4c32p", LHS_SCALEF32_F32, RHS_QAI4C32P, 4},
    {QGEMM_FAMILY_F16_QSI8D32P_QAI4C32P, "f16_qsi8d32p_qai4c32p", LHS_SCALEF32_F16, RHS_QAI4C32P, 2},
    {QGEMM_FAMILY_QAI8DXP_QSU2CXP, "qai8dxp_qsu2cxp", LHS_F32, RHS_QSU2CXP, 4},
};
#define N_FAMILIES COUNT(families)

static const struct family* family_named(const char* name) {
    for (size_t f = 0; f < N_FAMILIES; f++)
        if (strcmp(name, families[f].name) == 0) return &families[f];
    fprintf(stderr, "unknown family %s\n", name);
    exit(2);
}

/* Whether the family's kernels and packers take a block length `bl`. */
static bool blocked(const struct family* f) {
    return f->rhs == RHS_QSI4C32P || f->rhs == RHS_Q4_0 || f->rhs == RHS_QAI4C32P;
}

/* Whether the family's weights have one f32 scale per channel (qsi4cxp, qsi8cxp, qsu2cxp). */
static bool per_channel(const struct family* f) {
    return f->rhs == RHS_QSI4CXP || f->rhs == RHS_QSI8CXP || f->rhs == RHS_QSU2CXP;
}

/* The 2-bit family's synthetic look-up table (a non-default one; the Rust digests use it too). */
static const int32_t synthetic_lut[4] = {-3, -1, 1, 3};

/* Bytes of one activation: f32, or f16/bf16 bit patterns. */
static size_t lhs_bytes(const struct family* f) {
    return f->lhs == LHS_F16 || f->lhs == LHS_BF16 || f->lhs == LHS_SCALEF32_F16 ? 2 : 4;
}

/* Whether the family's LHS packer is a per-block one (its functions take bl). */
static bool lhs_blocked(const struct family* f) {
    return f->lhs == LHS_QSI8D32P || f->lhs == LHS_SCALEF32_F32 || f->lhs == LHS_SCALEF32_F16;
}

/* Whether a kernel reads operands packed by the per-format packers with `p` (its LHS tile rows
 * and its RHS tile; the formats are the family's). */
static bool reads(const qgemm_kernel_info* info, const qgemm_packing* p) {
    return info->lhs.mr == p->mr && info->rhs.nr == p->nr && info->rhs.kr == p->kr && info->rhs.sr == p->sr;
}

/* Field by field (the structs have padding). */
static bool same_info(const qgemm_kernel_info* a, const qgemm_kernel_info* b) {
    return strcmp(a->name, b->name) == 0 && a->family == b->family && a->tier == b->tier &&
           a->requires == b->requires && a->m_step == b->m_step && a->n_step == b->n_step &&
           same_lhs(a->lhs, b->lhs) && same_rhs(a->rhs, b->rhs);
}

static bool same_layer(const qgemm_linear* a, const qgemm_linear* b) {
    return a->size == b->size && a->family == b->family && same_rhs(a->packing, b->packing) && a->n == b->n &&
           a->k == b->k && a->bl == b->bl && a->weights == b->weights && a->weights_len == b->weights_len &&
           memcmp(a->params.lut, b->params.lut, sizeof a->params.lut) == 0 && a->input_scale == b->input_scale &&
           a->input_scale_len == b->input_scale_len;
}

/* Whether two kernels read the same layouts (the scalar reference of a kernel: the same both). */
static bool same_layouts(const qgemm_kernel_info* a, const qgemm_kernel_info* b) {
    return same_lhs(a->lhs, b->lhs) && same_rhs(a->rhs, b->rhs);
}

/* ---- the operands of one problem, and the per-family pack dispatch ------------------------- */

struct problem {
    const struct family* fam;
    size_t m, n, k, bl;
    const void* lhs;             /* m x k, dense: floats, or f16/bf16 bits */
    qgemm_int4_source rhs;       /* qsi4cxp / qsi4c32p weights; qai4c32p: the s0s1 codes in data, len, stride;
                                    qsu2cxp: the 2-bit codes in data, len, stride */
    qgemm_int8_source rhs8;      /* qsi8cxp weights */
    const uint8_t* q4_0;         /* qsi4c32pscalef16: raw blocks */
    size_t q4_0_len, q4_0_stride;
    const float* scale;          /* qsi4cxp, qsi8cxp: n; qai4c32p: scale_len = n * k/bl */
    const uint16_t* scale_bf16;  /* qsi4c32p */
    size_t scale_len, scale_stride;
    const float* zero;           /* qai4c32p: zero_len = n * k/bl offsets */
    size_t zero_len;
    const float* bias;           /* NULL: none */
    const int32_t* lut;          /* qsu2cxp: the look-up table, NULL for the default */
};

/* Quantizes and packs rows [m_idx_start, m_idx_start + m) of the problem's LHS with its family's
 * packer into `out` (the tile holding row m_idx_start); `lhs` of the call is the first row packed. */
static qgemm_status pack_lhs_rows(const struct problem* pr, const qgemm_packing* p, size_t m_idx_start, size_t m,
                                  uint8_t* out, size_t out_len) {
    const size_t k = pr->k, len = m * k;
    switch (pr->fam->lhs) {
    case LHS_F32:
        return qgemm_lhs_qai8dxp_quantize_pack(p, m, k, m_idx_start, (const float*)pr->lhs + m_idx_start * k, len, k,
                                               out, out_len);
    case LHS_F16:
        return qgemm_lhs_qai8dxp_quantize_pack_f16(p, m, k, m_idx_start, (const uint16_t*)pr->lhs + m_idx_start * k,
                                                   len, k, out, out_len);
    case LHS_BF16:
        return qgemm_lhs_qai8dxp_quantize_pack_bf16(p, m, k, m_idx_start, (const uint16_t*)pr->lhs + m_idx_start * k,
                                                    len, k, out, out_len);
    case LHS_SCALEF32_F32:
        return qgemm_lhs_qsi8d32pscalef32_quantize_pack(p, m, k, pr->bl, m_idx_start,
                                                        (const float*)pr->lhs + m_idx_start * k, len, k, out, out_len);
    case LHS_SCALEF32_F16:
        return qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(p, m, k, pr->bl, m_idx_start,
                                                            (const uint16_t*)pr->lhs + m_idx_start * k, len, k, out,
                                                            out_len);
    default:
        return qgemm_lhs_qsi8d32p_quantize_pack(p, m, k, pr->bl, m_idx_start, (const float*)pr->lhs + m_idx_start * k,
                                                len, k, out, out_len);
    }
}

static qgemm_status lhs_packed_offset(const struct problem* pr, const qgemm_packing* p, size_t m_idx, size_t* out) {
    if (pr->fam->lhs == LHS_QSI8D32P) return qgemm_lhs_qsi8d32p_packed_offset(p, m_idx, pr->k, pr->bl, out);
    if (lhs_blocked(pr->fam)) return qgemm_lhs_qsi8d32pscalef32_packed_offset(p, m_idx, pr->k, pr->bl, out);
    return qgemm_lhs_qai8dxp_packed_offset(p, m_idx, pr->k, out);
}

static qgemm_status rhs_packed_offset(const struct problem* pr, const qgemm_packing* p, size_t n_idx, size_t* out) {
    switch (pr->fam->rhs) {
    case RHS_QSI4CXP: return qgemm_rhs_qsi4cxp_packed_offset(p, n_idx, pr->k, out);
    case RHS_QSI8CXP: return qgemm_rhs_qsi8cxp_packed_offset(p, n_idx, pr->k, out);
    case RHS_QSI4C32P: return qgemm_rhs_qsi4c32p_packed_offset(p, n_idx, pr->k, pr->bl, out);
    case RHS_QAI4C32P: return qgemm_rhs_qai4c32p_packed_offset(p, n_idx, pr->k, pr->bl, out);
    case RHS_QSU2CXP: return qgemm_rhs_qsu2cxp_packed_offset(p, n_idx, pr->k, out);
    default: return qgemm_rhs_qsi4c32pscalef16_packed_offset(p, n_idx, pr->k, pr->bl, out);
    }
}

/* Packs both operands with `p`; returns the packed buffers (malloc) and their sizes. */
static bool pack(const struct problem* pr, const qgemm_packing* p, uint8_t** lhs_packed, size_t* lhs_size,
                 uint8_t** rhs_packed, size_t* rhs_size) {
    qgemm_status s;
    if (pr->fam->lhs == LHS_QSI8D32P)
        s = qgemm_lhs_qsi8d32p_packed_size(p, pr->m, pr->k, pr->bl, lhs_size);
    else if (lhs_blocked(pr->fam))
        s = qgemm_lhs_qsi8d32pscalef32_packed_size(p, pr->m, pr->k, pr->bl, lhs_size);
    else
        s = qgemm_lhs_qai8dxp_packed_size(p, pr->m, pr->k, lhs_size);
    CHECK(s == QGEMM_OK, "lhs packed size: %s", qgemm_status_message(s));
    switch (pr->fam->rhs) {
    case RHS_QSI4CXP: s = qgemm_rhs_qsi4cxp_packed_size(p, pr->n, pr->k, rhs_size); break;
    case RHS_QSI8CXP: s = qgemm_rhs_qsi8cxp_packed_size(p, pr->n, pr->k, rhs_size); break;
    case RHS_QSI4C32P: s = qgemm_rhs_qsi4c32p_packed_size(p, pr->n, pr->k, pr->bl, rhs_size); break;
    case RHS_QAI4C32P: s = qgemm_rhs_qai4c32p_packed_size(p, pr->n, pr->k, pr->bl, rhs_size); break;
    case RHS_QSU2CXP: s = qgemm_rhs_qsu2cxp_packed_size(p, pr->n, pr->k, rhs_size); break;
    default: s = qgemm_rhs_qsi4c32pscalef16_packed_size(p, pr->n, pr->k, pr->bl, rhs_size); break;
    }
    CHECK(s == QGEMM_OK, "rhs packed size: %s", qgemm_status_message(s));
    *lhs_packed = calloc(*lhs_size + 1, 1);
    *rhs_packed = calloc(*rhs_size + 1, 1);
    s = pack_lhs_rows(pr, p, 0, pr->m, *lhs_packed, *lhs_size);
    CHECK(s == QGEMM_OK, "lhs pack: %s", qgemm_status_message(s));
    if (s != QGEMM_OK) return false;
    const size_t bias_len = pr->bias ? pr->n : 0;
    switch (pr->fam->rhs) {
    case RHS_QSI4CXP:
        s = qgemm_rhs_qsi4cxp_pack(p, pr->n, pr->k, &pr->rhs, pr->scale, pr->n, pr->bias, bias_len, *rhs_packed,
                                   *rhs_size);
        break;
    case RHS_QSI8CXP:
        s = qgemm_rhs_qsi8cxp_pack(p, pr->n, pr->k, &pr->rhs8, pr->scale, pr->n, pr->bias, bias_len, *rhs_packed,
                                   *rhs_size);
        break;
    case RHS_QSI4C32P:
        s = qgemm_rhs_qsi4c32p_pack(p, pr->n, pr->k, pr->bl, &pr->rhs, pr->scale_bf16, pr->scale_len,
                                    pr->scale_stride, pr->bias, bias_len, *rhs_packed, *rhs_size);
        break;
    case RHS_QAI4C32P:
        s = qgemm_rhs_qai4c32p_pack(p, pr->n, pr->k, pr->bl, pr->rhs.data, pr->rhs.len, pr->rhs.stride, pr->zero,
                                    pr->zero_len, pr->scale, pr->scale_len, pr->bias, bias_len, *rhs_packed,
                                    *rhs_size);
        break;
    case RHS_QSU2CXP:
        s = qgemm_rhs_qsu2cxp_pack(p, pr->n, pr->k, pr->rhs.data, pr->rhs.len, pr->rhs.stride, pr->scale, pr->n,
                                   pr->bias, bias_len, pr->lut, *rhs_packed, *rhs_size);
        break;
    default:
        s = qgemm_rhs_qsi4c32pscalef16_pack(p, pr->n, pr->k, pr->bl, pr->q4_0, pr->q4_0_len, pr->q4_0_stride,
                                            *rhs_packed, *rhs_size);
        break;
    }
    CHECK(s == QGEMM_OK, "rhs pack: %s", qgemm_status_message(s));
    return s == QGEMM_OK;
}

/* The run function of the kernel's output type: `dst`, `dst_len` elements of f32 or uint16_t; the
 * 2-bit family's with the problem's look-up table as its parameters (qgemm_lut_params; none, the
 * default table, when the problem has none). */
static qgemm_status run_any(qgemm_kernel kernel, uint32_t cpu, const struct problem* pr, const uint8_t* lp, size_t ls,
                            const uint8_t* rp, size_t rs, void* dst, size_t dst_len, const qgemm_matmul_args* a) {
    const struct family* f = pr->fam;
    qgemm_matmul_args args = *a;
    qgemm_lut_params lut;
    if (f->rhs == RHS_QSU2CXP && pr->lut != NULL) {
        memcpy(lut.lut, pr->lut, sizeof lut.lut);
        args.params = &lut;
    }
    if (f->dst_bytes == 4) return qgemm_kernel_run(kernel, cpu, lp, ls, rp, rs, dst, dst_len, &args);
    return qgemm_kernel_run_u16(kernel, cpu, lp, ls, rp, rs, dst, dst_len, &args);
}

/* Runs `kernel` over the whole m x n output (dense rows) into `dst`. */
static qgemm_status run_whole(qgemm_kernel kernel, uint32_t cpu, const struct problem* pr, const uint8_t* lp,
                              size_t ls, const uint8_t* rp, size_t rs, void* dst, float lo, float hi) {
    qgemm_matmul_args a = {.m = pr->m, .n = pr->n, .k = pr->k, .bl = pr->bl, .dst_stride_row = pr->n,
                           .clamp_min = lo, .clamp_max = hi};
    return run_any(kernel, cpu, pr, lp, ls, rp, rs, dst, pr->m * pr->n, &a);
}

/* Runs `kernel` as a grid of its m_step x n_step rectangles into a padded output (row stride
 * n + 3 elements) with a 64-byte canary on each side, all filled with a sentinel byte; copies the
 * result to a dense `dst` and checks that padding and canaries kept the sentinel. */
static void run_grid(qgemm_kernel kernel, const qgemm_kernel_info* info, uint32_t cpu, const struct problem* pr,
                     const uint8_t* lp, size_t ls, const uint8_t* rp, size_t rs, void* dst, float lo, float hi) {
    const size_t e = pr->fam->dst_bytes, stride = pr->n + 3, bytes = pr->m * stride * e, canary = 64;
    uint8_t* buf = malloc(canary + bytes + canary);
    uint8_t* out = buf + canary;
    memset(buf, 0xA5, canary + bytes + canary);
    for (size_t m0 = 0; m0 < pr->m; m0 += info->m_step) {
        for (size_t n0 = 0; n0 < pr->n; n0 += info->n_step) {
            const size_t rows = pr->m - m0 < info->m_step ? pr->m - m0 : info->m_step;
            const size_t cols = pr->n - n0 < info->n_step ? pr->n - n0 : info->n_step;
            size_t off = 0;
            OK(qgemm_kernel_dst_offset(kernel, m0, n0, stride, &off));
            qgemm_matmul_args a = {.m = rows, .n = cols, .k = pr->k, .bl = pr->bl, .m_idx = m0, .n_idx = n0,
                                   .dst_stride_row = stride, .clamp_min = lo, .clamp_max = hi};
            /* dst_len exactly what the rectangle spans. */
            OK(run_any(kernel, cpu, pr, lp, ls, rp, rs, out + off * e, (rows - 1) * stride + cols, &a));
        }
    }
    bool pad_ok = true, canary_ok = true;
    for (size_t r = 0; r < pr->m; r++) {
        memcpy((uint8_t*)dst + r * pr->n * e, out + r * stride * e, pr->n * e);
        for (size_t b = pr->n * e; b < stride * e; b++) pad_ok &= out[r * stride * e + b] == 0xA5;
    }
    for (size_t b = 0; b < canary; b++) canary_ok &= buf[b] == 0xA5 && out[bytes + b] == 0xA5;
    CHECK(pad_ok, "grid run wrote into the row padding");
    CHECK(canary_ok, "grid run wrote outside the output");
    free(buf);
}

/* ---- the catalogue ------------------------------------------------------------------------ */

#define MAX_KERNELS 64
static size_t golden_runs[N_FAMILIES][MAX_KERNELS], synthetic_runs[N_FAMILIES][MAX_KERNELS];

static size_t kernel_count(uint32_t family) {
    size_t count = 0;
    OK(qgemm_kernel_count(family, &count));
    CHECK(count > 0 && count <= MAX_KERNELS, "family %u: %zu kernels", family, count);
    return count;
}

static qgemm_kernel kernel_at(uint32_t family, size_t i, qgemm_kernel_info* info) {
    qgemm_kernel k = {0, 0, 0};
    OK(qgemm_kernel_at(family, i, &k));
    OK(qgemm_kernel_get_info(k, info));
    return k;
}

static bool available(qgemm_kernel k, uint32_t cpu) {
    bool yes = false;
    OK(qgemm_kernel_is_available(k, cpu, &yes));
    return yes;
}

/* ---- 1. golden cases ---------------------------------------------------------------------- */

static void golden(uint32_t cpu) {
    char line[8192], last_key[4096] = "";
    size_t cases = 0, runs = 0, golden_borrowed = 0;
    const char* corrupt_env = getenv("QGEMM_LAYER1_CORRUPT");
    bool corrupt = corrupt_env != NULL && strcmp(corrupt_env, "1") == 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        char fam[64], name[128], layout[8], rhs_f[512], scale_f[512], zero_f[512], bias_f[512], lhs_f[512],
            lhsp_f[512], rhsp_f[512], dn_f[512], dt_f[512], cmin_n[16], cmax_n[16], cmin_t[16], cmax_t[16], isa[16],
            lut_s[64];
        size_t m, n, k, bl, zp, rhs_stride, scale_stride, mr, nr, kr, sr, lhsp_size, lhsp_off_mr, rhsp_size,
            rhsp_tile, rhsp_off_nr, m_step, n_step, m1, lhs_off_ms, rhs_off_ns, dst_off, dst_size, corr;
        int got = sscanf(line,
                         "%63s %127s %zu %zu %zu %zu %7s %zu %511s %zu %511s %zu %511s %511s %511s %zu %zu %zu %zu %511s "
                         "%zu %zu %511s %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %511s %511s %15s %15s %15s %15s %zu "
                         "%15s %63s",
                         fam, name, &m, &n, &k, &bl, layout, &zp, rhs_f, &rhs_stride, scale_f, &scale_stride, zero_f,
                         bias_f, lhs_f, &mr, &nr, &kr, &sr, lhsp_f, &lhsp_size, &lhsp_off_mr, rhsp_f, &rhsp_size,
                         &rhsp_tile, &rhsp_off_nr, &m_step, &n_step, &m1, &lhs_off_ms, &rhs_off_ns, &dst_off,
                         &dst_size, dn_f, dt_f, cmin_n, cmax_n, cmin_t, cmax_t, &corr, isa, lut_s);
        if (got != 42) {
            fprintf(stderr, "bad plan line (%d fields): %s", got, line);
            exit(2);
        }
        (void)rhsp_tile, (void)m_step, (void)n_step, (void)m1, (void)lhs_off_ms, (void)rhs_off_ns, (void)dst_off;
        (void)dst_size, (void)isa, (void)corr;
        /* One test per (case, packing): the plan has a line per KleidiAI kernel. */
        char key[4096];
        snprintf(key, sizeof key, "%s %s %s %s %zu %zu %zu %zu", lhs_f, rhs_f, bias_f, lut_s, mr, nr, kr, sr);
        if (strcmp(key, last_key) == 0) continue;
        snprintf(last_key, sizeof last_key, "%s", key);
        cases++;
        snprintf(cur, sizeof cur, "golden %s m%zu n%zu k%zu bl%zu %s packing %zu,%zu,%zu,%zu", fam, m, n, k, bl, layout,
                 mr, nr, kr, sr);

        size_t len;
        struct problem pr = {.fam = family_named(fam), .m = m, .n = n, .k = k, .bl = bl};
        /* The 2-bit family's table: the case's, or NULL (the default). */
        int32_t lut_v[4];
        if (strcmp(lut_s, "-") != 0) {
            CHECK(sscanf(lut_s, "%d,%d,%d,%d", &lut_v[0], &lut_v[1], &lut_v[2], &lut_v[3]) == 4, "lut %s", lut_s);
            pr.lut = lut_v;
        }
        const struct family* f = pr.fam;
        pr.lhs = read_file(lhs_f, &len);
        CHECK(len == m * k * lhs_bytes(f), "lhs file: %zu bytes", len);
        uint8_t* rhs = read_file(rhs_f, &len);
        const uint32_t layout_code = strcmp(layout, "kxn") == 0 ? QGEMM_LAYOUT_KXN : QGEMM_LAYOUT_NXK;
        if (f->rhs == RHS_Q4_0) {
            pr.q4_0 = rhs, pr.q4_0_len = len, pr.q4_0_stride = rhs_stride;
        } else if (f->rhs == RHS_QSI8CXP) {
            pr.rhs8 = (qgemm_int8_source){(const int8_t*)rhs, len, layout_code, rhs_stride};
        } else {
            pr.rhs = (qgemm_int4_source){rhs, len, layout_code, rhs_stride,
                                         zp == 8 ? QGEMM_INT4_ZERO_POINT_8 : QGEMM_INT4_SIGNED};
        }
        void* scale = strcmp(scale_f, "-") ? read_file(scale_f, &len) : NULL;
        if (per_channel(f)) pr.scale = scale;
        if (f->rhs == RHS_QSI4C32P) pr.scale_bf16 = scale, pr.scale_len = len / 2, pr.scale_stride = scale_stride / 2;
        if (f->rhs == RHS_QAI4C32P) pr.scale = scale, pr.scale_len = len / 4;
        void* zero = strcmp(zero_f, "-") ? read_file(zero_f, &len) : NULL;
        if (zero) pr.zero = zero, pr.zero_len = len / 4;
        void* bias = strcmp(bias_f, "-") ? read_file(bias_f, &len) : NULL;
        pr.bias = bias;

        const qgemm_packing p = {mr, nr, kr, sr};
        uint8_t *lp = NULL, *rp = NULL, *want_l = NULL;
        size_t ls = 0, rs = 0;
        if (!pack(&pr, &p, &lp, &ls, &rp, &rs)) goto next;
        CHECK(ls == lhsp_size, "lhs packed size %zu, KleidiAI %zu", ls, lhsp_size);
        CHECK(rs == rhsp_size, "rhs packed size %zu, KleidiAI %zu", rs, rhsp_size);
        size_t off = 0;
        OK(lhs_packed_offset(&pr, &p, mr, &off));
        CHECK(off == lhsp_off_mr, "lhs packed offset at mr: %zu, KleidiAI %zu", off, lhsp_off_mr);
        OK(rhs_packed_offset(&pr, &p, nr, &off));
        CHECK(off == rhsp_off_nr, "rhs packed offset at nr: %zu, KleidiAI %zu", off, rhsp_off_nr);
        want_l = read_file(lhsp_f, &len);
        /* The packed LHS: KleidiAI's bytes, except with the f16 packer, mr 4 and kr/sr 4, where
         * qgemm gives each row its own zero point and KleidiAI another row's (test_util.h): there
         * the bytes must differ by exactly that, and the kernels run on KleidiAI's bytes (the
         * golden outputs were computed from them). */
        const bool borrowed = f->lhs == LHS_F16 && mr == 4 && kr / sr == 4;
        const uint8_t* run_lp = lp;
        if (len != ls) {
            CHECK(false, "packed LHS file has %zu bytes, qgemm %zu", len, ls);
        } else if (borrowed && memcmp(want_l, lp, ls) != 0) {
            const char* why;
            const size_t differ = f16_lhs_borrowed_zero_points(lp, want_l, ls, m, k, &why);
            CHECK(differ != SIZE_MAX, "packed f16 LHS: %s", why ? why : "");
            golden_borrowed++;
            run_lp = want_l;
        } else {
            CHECK(memcmp(want_l, lp, ls) == 0, "packed LHS bytes differ from KleidiAI's");
        }
        /* Packed in two calls, rows [0, m1) and [m1, m) with m1 a multiple of mr: the same bytes. */
        const size_t m_split = m / 2 / mr * mr;
        if (f->lhs != LHS_QSI8D32P && m_split > 0) {
            uint8_t* two = calloc(ls + 1, 1);
            OK(pack_lhs_rows(&pr, &p, 0, m_split, two, ls));
            OK(lhs_packed_offset(&pr, &p, m_split, &off));
            OK(pack_lhs_rows(&pr, &p, m_split, m - m_split, two + off, ls - off));
            CHECK(memcmp(two, lp, ls) == 0, "LHS packed in two calls (m_idx_start %zu) differs from one call", m_split);
            free(two);
        }
        uint8_t* want_r = read_file(rhsp_f, &len);
        CHECK(len == rs && memcmp(want_r, rp, rs) == 0, "packed RHS bytes differ from KleidiAI's");
        free(want_r);

        const size_t e = f->dst_bytes, bytes = m * n * e;
        uint8_t* want_none = read_file(dn_f, &len);
        CHECK(len == bytes, "dst file: %zu bytes", len);
        uint8_t* want_tight = read_file(dt_f, &len);
        if (corrupt) {
            want_none[0] ^= 1;
            corrupt = false;
        }
        uint8_t* dst = malloc(bytes);
        const size_t count = kernel_count(f->code);
        const size_t fi = f->code;
        for (size_t i = 0; i < count; i++) {
            qgemm_kernel_info info;
            qgemm_kernel kern = kernel_at(f->code, i, &info);
            if (!reads(&info, &p) || !available(kern, cpu)) continue;
            snprintf(cur, sizeof cur, "golden %s m%zu n%zu k%zu bl%zu %s: %s", fam, m, n, k, bl, layout, info.name);
            OK(run_whole(kern, cpu, &pr, run_lp, ls, rp, rs, dst, bits_to_f32(cmin_n), bits_to_f32(cmax_n)));
            CHECK(memcmp(dst, want_none, bytes) == 0, "dst (no clamp) differs from KleidiAI's");
            OK(run_whole(kern, cpu, &pr, run_lp, ls, rp, rs, dst, bits_to_f32(cmin_t), bits_to_f32(cmax_t)));
            CHECK(memcmp(dst, want_tight, bytes) == 0, "dst (tight clamp) differs from KleidiAI's");
            memset(dst, 0, bytes);
            run_grid(kern, &info, cpu, &pr, run_lp, ls, rp, rs, dst, bits_to_f32(cmin_n), bits_to_f32(cmax_n));
            CHECK(memcmp(dst, want_none, bytes) == 0, "dst (grid) differs from KleidiAI's");
            golden_runs[fi][i]++;
            runs++;
        }
        free(dst);
        free(want_none);
        free(want_tight);
    next:
        free(lp);
        free(rp);
        free(want_l);
        free((void*)pr.lhs);
        free(rhs);
        free(scale);
        free(zero);
        free(bias);
    }
    printf("golden: %zu (case, packing) pairs, %zu kernel runs (whole x 2 clamps + grid each); %zu f16 packed LHS "
           "(mr 4, kr/sr 4) differ from KleidiAI's only by its borrowed zero points, their kernels ran on KleidiAI's "
           "bytes\n",
           cases, runs, golden_borrowed);
}

/* ---- 2. every kernel against the scalar kernel of its packing ------------------------------ */

static uint32_t rng = 0x12345678u;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(next_u32() >> 8) / 16777216.0f; }

/* The bits of a random f16 in +-[2^-3, 2^2) (random sign, exponent and mantissa) and of a bf16
 * (the top half of a random f32 in [-2, 2)): no conversion instructions needed. */
static uint16_t random_f16(void) {
    const uint32_t r = next_u32();
    return (uint16_t)(((r >> 31) << 15) | ((12 + (r >> 10) % 5) << 10) | (r & 0x3ff));
}
static uint16_t random_bf16(void) {
    const float v = uniform(-2.0f, 2.0f);
    uint32_t u;
    memcpy(&u, &v, 4);
    return (uint16_t)(u >> 16);
}

static void synthetic_problem(const struct family* f, size_t m, size_t n, size_t k, size_t bl, struct problem* pr) {
    *pr = (struct problem){.fam = f, .m = m, .n = n, .k = k, .bl = bl};
    if (lhs_bytes(f) == 2) {
        uint16_t* lhs = malloc(m * k * sizeof(uint16_t));
        for (size_t i = 0; i < m * k; i++) lhs[i] = f->lhs == LHS_BF16 ? random_bf16() : random_f16();
        pr->lhs = lhs;
    } else {
        float* lhs = malloc(m * k * sizeof(float));
        for (size_t i = 0; i < m * k; i++) lhs[i] = uniform(-2.0f, 2.0f);
        pr->lhs = lhs;
    }
    if (f->rhs == RHS_Q4_0) {
        const size_t nb = k / bl, row = nb * (2 + bl / 2);
        uint8_t* raw = malloc(n * row);
        for (size_t c = 0; c < n; c++) {
            for (size_t b = 0; b < nb; b++) {
                uint8_t* blk = raw + c * row + b * (2 + bl / 2);
                const uint16_t f16 = (uint16_t)(0x2000 + (next_u32() % 0x0a00)); /* about 0.008 .. 0.1 */
                memcpy(blk, &f16, 2);
                for (size_t q = 0; q < bl / 2; q++) blk[2 + q] = (uint8_t)next_u32();
            }
        }
        pr->q4_0 = raw, pr->q4_0_len = n * row, pr->q4_0_stride = row;
        return;
    }
    if (f->rhs == RHS_QSI8CXP) {
        int8_t* w = malloc(n * k);
        for (size_t i = 0; i < n * k; i++) w[i] = (int8_t)(uint8_t)next_u32();
        pr->rhs8 = (qgemm_int8_source){w, n * k, QGEMM_LAYOUT_NXK, k};
    } else {
        const size_t row = f->rhs == RHS_QSU2CXP ? k / 4 : (k + 1) / 2;
        uint8_t* w = malloc(n * row);
        for (size_t i = 0; i < n * row; i++) w[i] = (uint8_t)next_u32();
        pr->rhs = (qgemm_int4_source){w, n * row, QGEMM_LAYOUT_NXK, row, QGEMM_INT4_ZERO_POINT_8};
    }
    float* bias = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) bias[i] = uniform(-1.0f, 1.0f);
    pr->bias = bias;
    if (f->rhs == RHS_QSU2CXP) pr->lut = synthetic_lut;
    if (f->rhs == RHS_QAI4C32P) {
        /* The codes above (n rows of k/2 bytes, s0s1), then n * k/bl scales and offsets. */
        const size_t nb = k / bl;
        float* s = malloc(n * nb * sizeof(float));
        float* z = malloc(n * nb * sizeof(float));
        for (size_t i = 0; i < n * nb; i++) s[i] = uniform(0.01f, 0.1f);
        for (size_t i = 0; i < n * nb; i++) z[i] = uniform(-0.1f, 0.1f);
        pr->scale = s, pr->scale_len = n * nb, pr->zero = z, pr->zero_len = n * nb;
    } else if (per_channel(f)) {
        float* s = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++) s[i] = uniform(0.01f, 0.1f);
        pr->scale = s;
    } else {
        const size_t nb = k / bl;
        uint16_t* s = malloc(n * nb * sizeof(uint16_t));
        for (size_t i = 0; i < n * nb; i++) {
            float f = uniform(0.01f, 0.1f);
            uint32_t u;
            memcpy(&u, &f, 4);
            s[i] = (uint16_t)(u >> 16);
        }
        pr->scale_bf16 = s, pr->scale_len = n * nb, pr->scale_stride = nb;
    }
}

static void free_problem(struct problem* pr) {
    free((void*)pr->lhs);
    free((void*)pr->rhs.data);
    free((void*)pr->rhs8.data);
    free((void*)pr->q4_0);
    free((void*)pr->scale);
    free((void*)pr->scale_bf16);
    free((void*)pr->zero);
    free((void*)pr->bias);
}

static void synthetic(uint32_t cpu) {
    static const size_t shapes[][4] = {{7, 13, 96, 32}, {1, 13, 96, 32}, {5, 24, 64, 64}};
    size_t runs = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const struct family* fam = &families[f];
        const uint32_t family = fam->code;
        const size_t count = kernel_count(family);
        for (size_t i = 0; i < count; i++) {
            qgemm_kernel_info info;
            qgemm_kernel kern = kernel_at(family, i, &info);
            if (!available(kern, cpu) || info.tier == QGEMM_TIER_SCALAR) continue;
            /* The scalar kernel of the same packing is the reference. */
            qgemm_kernel ref = kern;
            bool found = false;
            size_t ref_index = 0;
            for (size_t j = 0; j < count && !found; j++) {
                qgemm_kernel_info ri;
                qgemm_kernel rk = kernel_at(family, j, &ri);
                if (ri.tier == QGEMM_TIER_SCALAR && same_layouts(&ri, &info))
                    ref = rk, found = true, ref_index = j;
            }
            snprintf(cur, sizeof cur, "synthetic %s", info.name);
            CHECK(found, "no scalar kernel with the same packing");
            if (!found) continue;
            for (size_t s = 0; s < COUNT(shapes); s++) {
                const size_t bl = blocked(fam) ? shapes[s][3] : 0;
                struct problem pr;
                synthetic_problem(fam, shapes[s][0], shapes[s][1], shapes[s][2], bl, &pr);
                snprintf(cur, sizeof cur, "synthetic %s m%zu n%zu k%zu bl%zu", info.name, pr.m, pr.n, pr.k, bl);
                uint8_t *lp = NULL, *rp = NULL;
                size_t ls = 0, rs = 0;
                const qgemm_packing pk = packing_of(&info);
                if (pack(&pr, &pk, &lp, &ls, &rp, &rs)) {
                    const size_t bytes = pr.m * pr.n * fam->dst_bytes;
                    uint8_t* got = calloc(bytes, 1);
                    uint8_t* want = calloc(bytes, 1);
                    OK(run_whole(ref, cpu, &pr, lp, ls, rp, rs, want, -FLT_MAX, FLT_MAX));
                    OK(run_whole(kern, cpu, &pr, lp, ls, rp, rs, got, -FLT_MAX, FLT_MAX));
                    CHECK(memcmp(got, want, bytes) == 0, "differs from the scalar kernel");
                    OK(run_whole(kern, cpu, &pr, lp, ls, rp, rs, got, -0.5f, 0.25f));
                    OK(run_whole(ref, cpu, &pr, lp, ls, rp, rs, want, -0.5f, 0.25f));
                    CHECK(memcmp(got, want, bytes) == 0, "clamped: differs from scalar");
                    run_grid(kern, &info, cpu, &pr, lp, ls, rp, rs, got, -FLT_MAX, FLT_MAX);
                    OK(run_whole(ref, cpu, &pr, lp, ls, rp, rs, want, -FLT_MAX, FLT_MAX));
                    CHECK(memcmp(got, want, bytes) == 0, "grid: differs from scalar");
                    free(got);
                    free(want);
                    synthetic_runs[f][i]++;
                    synthetic_runs[f][ref_index]++;
                    runs++;
                }
                free(lp);
                free(rp);
                free_problem(&pr);
            }
        }
    }
    /* Coverage: every available kernel ran; every unavailable one refuses. */
    size_t ran = 0, skipped = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const size_t count = kernel_count(families[f].code);
        for (size_t i = 0; i < count; i++) {
            qgemm_kernel_info info;
            qgemm_kernel kern = kernel_at(families[f].code, i, &info);
            snprintf(cur, sizeof cur, "coverage %s", info.name);
            if (available(kern, cpu)) {
                ran++;
                CHECK(golden_runs[f][i] + synthetic_runs[f][i] > 0, "available kernel never ran");
            } else {
                skipped++;
                struct problem pr;
                synthetic_problem(&families[f], 4, 8, 64, blocked(&families[f]) ? 32 : 0, &pr);
                uint8_t *lp = NULL, *rp = NULL;
                size_t ls = 0, rs = 0;
                const qgemm_packing pk = packing_of(&info);
                if (pack(&pr, &pk, &lp, &ls, &rp, &rs)) {
                    float dst[32]; /* 4 x 8 outputs of f32, or of 16 bits in the first half */
                    for (int d = 0; d < 32; d++) dst[d] = 7.0f;
                    EXPECT(run_whole(kern, cpu, &pr, lp, ls, rp, rs, dst, -FLT_MAX, FLT_MAX),
                           QGEMM_ERROR_UNSUPPORTED_CPU);
                    CHECK(dst[0] == 7.0f && dst[31] == 7.0f, "refused run wrote dst");
                }
                free(lp);
                free(rp);
                free_problem(&pr);
            }
        }
    }
    printf("synthetic: %zu runs (3 shapes x whole, clamped, grid) against the scalar kernel of each packing\n", runs);
    printf("coverage: %zu kernels available and run, %zu unavailable on this CPU (each refused with "
           "QGEMM_ERROR_UNSUPPORTED_CPU)\n",
           ran, skipped);
}

/* ---- 3. CPU features and selection ---------------------------------------------------------- */

static uint32_t cpu_checks(const char* model) {
    snprintf(cur, sizeof cur, "cpu %s", model);
    uint32_t cpu = 0, bits = 0;
    OK(qgemm_cpu_detect(&cpu));
    CHECK(cpu & QGEMM_FEATURE_NEON, "detect: no NEON (0x%x)", cpu);
    if (strcmp(model, "max") == 0) {
        CHECK((cpu & QGEMM_FEATURE_DOTPROD) && (cpu & QGEMM_FEATURE_I8MM), "max: dotprod and i8mm expected (0x%x)", cpu);
    } else if (strcmp(model, "cortex-a53") == 0) {
        CHECK(!(cpu & (QGEMM_FEATURE_DOTPROD | QGEMM_FEATURE_I8MM)), "cortex-a53: no dotprod/i8mm expected (0x%x)", cpu);
    }
    OK(qgemm_cpu_from_hwcap((1u << 1) | (1u << 20), 1u << 13, &bits));
    CHECK(bits == (QGEMM_FEATURE_NEON | QGEMM_FEATURE_DOTPROD | QGEMM_FEATURE_I8MM), "hwcap decode: 0x%x", bits);
    OK(qgemm_cpu_from_hwcap(1u << 1, 0, &bits));
    CHECK(bits == QGEMM_FEATURE_NEON, "hwcap decode (asimd only): 0x%x", bits);
    OK(qgemm_cpu_from_hwcap((1u << 1) | (1u << 9), 0, &bits));
    CHECK(bits == QGEMM_FEATURE_NEON, "fp16 needs FPHP and ASIMDHP: 0x%x", bits);
    OK(qgemm_cpu_from_hwcap((1u << 1) | (1u << 9) | (1u << 10) | (1u << 22), (1u << 14) | (1u << 23), &bits));
    CHECK(bits == (QGEMM_FEATURE_NEON | QGEMM_FEATURE_FP16 | QGEMM_FEATURE_SVE | QGEMM_FEATURE_BF16 |
                   QGEMM_FEATURE_SME),
          "hwcap decode (fp16, sve, bf16, sme): 0x%x", bits);
    /* qemu-aarch64 emulates EL0 reads of the ID registers (HWCAP_CPUID): the same NEON, dotprod
     * and i8mm bits as the HWCAP words. */
    uint32_t id = 0;
    OK(qgemm_cpu_from_id_registers(&id));
    const uint32_t tiers = QGEMM_FEATURE_NEON | QGEMM_FEATURE_DOTPROD | QGEMM_FEATURE_I8MM;
    CHECK((id & tiers) == (cpu & tiers), "ID registers 0x%x, HWCAP 0x%x", id, cpu);
    EXPECT(qgemm_cpu_from_id_registers(NULL), QGEMM_ERROR_NULL_POINTER);
    OK(qgemm_cpu_from_target(&bits));
    CHECK(bits & QGEMM_FEATURE_NEON, "target: NEON expected (0x%x)", bits);
    CHECK((bits & ~cpu) == 0, "target features 0x%x not all detected (0x%x)", bits, cpu);
    /* Every feature bit from its Linux HWCAP / HWCAP2 bit (arch/arm64/include/uapi/asm/hwcap.h;
     * FP16 needs FPHP and ASIMDHP), with the features it implies; bits of features the library
     * does not use decode to nothing. */
    static const struct {
        int word, bit;
        uint32_t feature;
    } hwcaps[] = {
        {1, 1, QGEMM_FEATURE_NEON},       {1, 20, QGEMM_FEATURE_DOTPROD},   {2, 13, QGEMM_FEATURE_I8MM},
        {2, 14, QGEMM_FEATURE_BF16},      {1, 22, QGEMM_FEATURE_SVE},       {2, 23, QGEMM_FEATURE_SME},
        /* with the features each implies */
        {2, 1, QGEMM_FEATURE_SVE2 | QGEMM_FEATURE_SVE},
        {2, 37, QGEMM_FEATURE_SME2 | QGEMM_FEATURE_SME},
        {2, 38, QGEMM_FEATURE_SME2P1 | QGEMM_FEATURE_SME2 | QGEMM_FEATURE_SME},
        {2, 42, QGEMM_FEATURE_SME_F16F16 | QGEMM_FEATURE_SME},
        {2, 41, QGEMM_FEATURE_SME_B16B16 | QGEMM_FEATURE_SME},
        {2, 24, QGEMM_FEATURE_SME_I16I64 | QGEMM_FEATURE_SME},
        {1, 47, QGEMM_FEATURE_SME_MOP4 | QGEMM_FEATURE_SME},
    };
    uint32_t every = 0;
    uint64_t all_hwcap = (1ull << 9) | (1ull << 10), all_hwcap2 = 0;
    for (size_t i = 0; i < COUNT(hwcaps); i++) {
        const uint64_t w = 1ull << hwcaps[i].bit;
        OK(qgemm_cpu_from_hwcap(hwcaps[i].word == 1 ? w : 0, hwcaps[i].word == 2 ? w : 0, &bits));
        CHECK(bits == hwcaps[i].feature, "HWCAP%s bit %d: 0x%x, expected 0x%x", hwcaps[i].word == 2 ? "2" : "",
              hwcaps[i].bit, bits, hwcaps[i].feature);
        every |= hwcaps[i].feature;
        *(hwcaps[i].word == 1 ? &all_hwcap : &all_hwcap2) |= w;
    }
    OK(qgemm_cpu_from_hwcap(all_hwcap, all_hwcap2, &bits));
    CHECK(every == (QGEMM_FEATURE_ALL & ~QGEMM_FEATURE_FP16) && bits == QGEMM_FEATURE_ALL,
          "every HWCAP bit: 0x%x (QGEMM_FEATURE_ALL 0x%x)", bits, (unsigned)QGEMM_FEATURE_ALL);
    OK(qgemm_cpu_from_hwcap(~all_hwcap, ~all_hwcap2, &bits));
    CHECK(bits == 0, "the HWCAP bits of other features: 0x%x", bits);
    CHECK(QGEMM_FEATURE_ALL == (1u << 14) - 1 && QGEMM_FEATURE_SME_MOP4 == 1u << 13, "QGEMM_FEATURE_ALL 0x%x",
          (unsigned)QGEMM_FEATURE_ALL);
    /* The detected set: defined bits only, each feature with the ones it implies. */
    CHECK((cpu & ~QGEMM_FEATURE_ALL) == 0, "detect: bits outside QGEMM_FEATURE_ALL (0x%x)", cpu);
    CHECK(!(cpu & QGEMM_FEATURE_SVE2) || (cpu & QGEMM_FEATURE_SVE), "detect: SVE2 without SVE (0x%x)", cpu);
    CHECK(!(cpu & QGEMM_FEATURE_SME2P1) || (cpu & QGEMM_FEATURE_SME2), "detect: SME2p1 without SME2 (0x%x)", cpu);
    CHECK(!(cpu & SME_BITS) || (cpu & QGEMM_FEATURE_SME), "detect: an SME extension without SME (0x%x)", cpu);
    /* Layer 2's features: every defined bit the CPU has is accepted, a bit above refused. */
    EXPECT(qgemm_kai_set_cpu_features(1u << 14), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kai_set_cpu_features(QGEMM_FEATURE_ALL | (1u << 31)), QGEMM_ERROR_INVALID_ARGUMENT);
    OK(qgemm_kai_set_cpu_features(cpu));
    printf("cpu: %s detected 0x%x; %zu HWCAP bits decoded to their QGEMM_FEATURE_* bits\n", model, cpu,
           COUNT(hwcaps));
    return cpu;
}

/* The feature sets the availability checks use: each closed under the implications between
 * features (none claims SME, so none makes the library read the streaming vector length). */
static const uint32_t feature_sets[] = {
    0,
    QGEMM_FEATURE_NEON,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_DOTPROD,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_I8MM,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_DOTPROD | QGEMM_FEATURE_I8MM,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_FP16,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_BF16,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_I8MM | QGEMM_FEATURE_BF16,
    QGEMM_FEATURE_NEON | QGEMM_FEATURE_DOTPROD | QGEMM_FEATURE_I8MM | QGEMM_FEATURE_FP16 | QGEMM_FEATURE_BF16 |
        QGEMM_FEATURE_SVE | QGEMM_FEATURE_SVE2,
};

/* Every feature bit the library may be told on this CPU: QGEMM_FEATURE_ALL where the CPU has SME,
 * else ALL without the SME bits. */
static uint32_t all_features(uint32_t cpu) {
    return (cpu & QGEMM_FEATURE_SME) ? QGEMM_FEATURE_ALL : QGEMM_FEATURE_ALL & ~(uint32_t)SME_BITS;
}

/* The QGEMM_FEATURE_* bits a tier needs. */
static uint32_t tier_features(uint32_t tier) {
    switch (tier) {
    case QGEMM_TIER_SCALAR: return 0;
    case QGEMM_TIER_NEON: return QGEMM_FEATURE_NEON;
    case QGEMM_TIER_DOTPROD: return QGEMM_FEATURE_NEON | QGEMM_FEATURE_DOTPROD;
    case QGEMM_TIER_I8MM: return QGEMM_FEATURE_NEON | QGEMM_FEATURE_I8MM;
    case QGEMM_TIER_FP16: return QGEMM_FEATURE_NEON | QGEMM_FEATURE_FP16;
    case QGEMM_TIER_BF16: return QGEMM_FEATURE_NEON | QGEMM_FEATURE_BF16;
    default: return UINT32_MAX;
    }
}

/* The LHS and RHS format codes (QGEMM_LHS_FORMAT_*, QGEMM_RHS_FORMAT_*) of every family's kernels, by
 * family code. */
static const uint32_t family_formats[ALL_FAMILIES][2] = {
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI4CXP},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI4C32P},
    {QGEMM_LHS_FORMAT_QSI8D32P, QGEMM_RHS_FORMAT_QSI4C32PSCALEF16},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI8CXP},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI4CXP},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI8CXP},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI4CXP},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSI4C32P},
    {QGEMM_LHS_FORMAT_QSI8D32PSCALEF32, QGEMM_RHS_FORMAT_QAI4C32P},
    {QGEMM_LHS_FORMAT_QSI8D32PSCALEF32, QGEMM_RHS_FORMAT_QAI4C32P},
    {QGEMM_LHS_FORMAT_QAI8DXP, QGEMM_RHS_FORMAT_QSU2CXP},
    {QGEMM_LHS_FORMAT_F32, QGEMM_RHS_FORMAT_F32P},
    {QGEMM_LHS_FORMAT_F16, QGEMM_RHS_FORMAT_F16P},
    {QGEMM_LHS_FORMAT_BF16P, QGEMM_RHS_FORMAT_BF16P_B32},
    {QGEMM_LHS_FORMAT_BF16P, QGEMM_RHS_FORMAT_BF16P_B16},
};

/* The catalogue of every family (the float ones included): what each kernel's qgemm_kernel_info
 * says, its availability and its resolution. */
static void catalogue(uint32_t cpu) {
    snprintf(cur, sizeof cur, "catalogue");
    const uint32_t all = all_features(cpu);
    size_t kernels = 0, extra_bf16 = 0, resolved = 0, refused = 0;
    size_t out = 777;
    EXPECT(qgemm_kernel_count(ALL_FAMILIES, &out), QGEMM_ERROR_INVALID_ARGUMENT);
    CHECK(out == 777, "out written on failure");
    for (uint32_t family = 0; family < ALL_FAMILIES; family++) {
        const size_t count = kernel_count(family);
        for (size_t i = 0; i < count; i++) {
            qgemm_kernel k = {99, 99, 99};
            qgemm_kernel_info info;
            OK(qgemm_kernel_at(family, i, &k));
            OK(qgemm_kernel_get_info(k, &info));
            snprintf(cur, sizeof cur, "catalogue %u: %s", family, info.name);
            kernels++;
            CHECK(k.family == family && k.index == i && k.svl_bytes == 0, "handle {%u, %u, %u}", k.family, k.index,
                  k.svl_bytes);
            CHECK(info.family == family, "info.family %u", info.family);
            CHECK(memchr(info.name, 0, sizeof info.name) != NULL && strncmp(info.name, "matmul_clamp_", 13) == 0,
                  "name");
            CHECK(info.lhs.format == family_formats[family][0] && info.rhs.format == family_formats[family][1],
                  "formats lhs %u rhs %u, expected %u %u", info.lhs.format, info.rhs.format, family_formats[family][0],
                  family_formats[family][1]);
            if (info.lhs.format == QGEMM_LHS_FORMAT_F32 || info.lhs.format == QGEMM_LHS_FORMAT_F16)
                CHECK(info.lhs.mr == 1 && info.lhs.kr == 1 && info.lhs.sr == 1, "rows read in place: lhs %zu,%zu,%zu",
                      info.lhs.mr, info.lhs.kr, info.lhs.sr);
            else
                CHECK(info.lhs.kr == info.rhs.kr && info.lhs.sr == info.rhs.sr, "lhs kr,sr %zu,%zu, rhs %zu,%zu",
                      info.lhs.kr, info.lhs.sr, info.rhs.kr, info.rhs.sr);
            CHECK(info.m_step > 0 && info.n_step > 0 && info.m_step % info.lhs.mr == 0 &&
                      info.n_step % info.rhs.nr == 0,
                  "steps %zu x %zu, tiles mr %zu nr %zu", info.m_step, info.n_step, info.lhs.mr, info.rhs.nr);
            /* requires: the tier's bits; the i8mm kernels of the bf16-output families also FEAT_BF16
             * (their BFCVT; the others convert to bf16 in integer instructions). */
            const bool bf16_out = family == QGEMM_FAMILY_BF16_QAI8DXP_QSI4CXP ||
                                  family == QGEMM_FAMILY_BF16_QAI8DXP_QSI4C32P;
            const uint32_t extra = bf16_out && info.tier == QGEMM_TIER_I8MM ? QGEMM_FEATURE_BF16 : 0;
            extra_bf16 += extra != 0;
            CHECK(info.requires == (tier_features(info.tier) | extra), "tier %u requires 0x%x, expected 0x%x",
                  info.tier, info.requires, tier_features(info.tier) | extra);
            /* Available exactly where every required feature is there. */
            for (size_t s = 0; s < COUNT(feature_sets); s++) {
                const uint32_t fs = feature_sets[s];
                CHECK(available(k, fs) == ((info.requires & ~fs) == 0), "available on 0x%x: %d, requires 0x%x", fs,
                      (int)available(k, fs), info.requires);
            }
            const bool here = available(k, cpu);
            CHECK(here == ((info.requires & ~cpu) == 0), "available here (0x%x): %d", cpu, (int)here);
            CHECK(available(k, all), "not available with every feature (0x%x)", all);
            /* Resolution of a fixed-shape kernel: the same handle, svl_bytes 0; refused where a
             * feature is missing, nothing written. */
            qgemm_kernel r = {77, 77, 77};
            if (here) {
                OK(qgemm_kernel_resolve(k, cpu, &r));
                CHECK(r.family == family && r.index == i && r.svl_bytes == 0, "resolved {%u, %u, %u}", r.family,
                      r.index, r.svl_bytes);
                qgemm_kernel_info ri;
                OK(qgemm_kernel_get_info(r, &ri));
                CHECK(same_info(&ri, &info), "the resolved kernel's info differs");
                resolved++;
            } else {
                EXPECT(qgemm_kernel_resolve(k, cpu, &r), QGEMM_ERROR_UNSUPPORTED_CPU);
                CHECK(r.family == 77 && r.index == 77 && r.svl_bytes == 77, "resolve wrote its output on failure");
                refused++;
            }
            r = (qgemm_kernel){77, 77, 77};
            OK(qgemm_kernel_resolve(k, all, &r));
            CHECK(r.family == family && r.index == i && r.svl_bytes == 0, "resolved for 0x%x: {%u, %u, %u}", all,
                  r.family, r.index, r.svl_bytes);
        }
        /* A fixed-shape kernel's handle with a vector length names no kernel. */
        snprintf(cur, sizeof cur, "catalogue %u", family);
        qgemm_kernel k0 = {family, 0, 0}, r = {77, 77, 77};
        k0.svl_bytes = 64;
        qgemm_kernel_info info;
        bool yes = true;
        EXPECT(qgemm_kernel_get_info(k0, &info), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_kernel_resolve(k0, cpu, &r), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_kernel_is_available(k0, cpu, &yes), QGEMM_ERROR_INVALID_ARGUMENT);
        k0.svl_bytes = 0;
        EXPECT(qgemm_kernel_resolve(k0, QGEMM_FEATURE_ALL | (1u << 14), &r), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_kernel_resolve(k0, 1u << 31, &r), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_kernel_resolve(k0, all, NULL), QGEMM_ERROR_NULL_POINTER);
        EXPECT(qgemm_kernel_is_available(k0, 1u << 14, &yes), QGEMM_ERROR_INVALID_ARGUMENT);
        k0.index = (uint32_t)kernel_count(family);
        EXPECT(qgemm_kernel_resolve(k0, cpu, &r), QGEMM_ERROR_INVALID_ARGUMENT);
        CHECK(r.family == 77 && yes, "a refused call wrote its output");
        /* Selection with every feature bit the CPU may be told: accepted, the bit above refused. */
        qgemm_kernel sel = {77, 77, 77};
        OK(qgemm_select(family, all, 1, &sel));
        CHECK(sel.family == family && sel.svl_bytes == 0, "select with 0x%x: {%u, %u, %u}", all, sel.family, sel.index,
              sel.svl_bytes);
        sel = (qgemm_kernel){77, 77, 77};
        EXPECT(qgemm_select(family, all | (1u << 14), 1, &sel), QGEMM_ERROR_INVALID_ARGUMENT);
        CHECK(sel.family == 77, "select wrote its output on failure");
    }
    snprintf(cur, sizeof cur, "catalogue");
    qgemm_kernel bogus = {ALL_FAMILIES, 0, 0}, r = {77, 77, 77};
    EXPECT(qgemm_kernel_resolve(bogus, cpu, &r), QGEMM_ERROR_INVALID_ARGUMENT);
    CHECK(extra_bf16 > 0, "no kernel of a bf16-output family needs FEAT_BF16 besides its tier");
    printf("catalogue: %zu kernels of %d families: format codes, requires = the tier's bits (%zu bf16-output i8mm "
           "kernels + FEAT_BF16), availability on %zu feature sets; resolve: %zu resolved for this CPU (svl_bytes 0), "
           "%zu refused, all with 0x%x\n",
           kernels, ALL_FAMILIES, extra_bf16, COUNT(feature_sets), resolved, refused, all);
}

static void selection(uint32_t cpu) {
    for (size_t f = 0; f < N_FAMILIES; f++) {
        const struct family* fam = &families[f];
        snprintf(cur, sizeof cur, "select %s", fam->name);
        qgemm_rhs_packing preferred = {99, 0, 0, 0};
        OK(qgemm_linear_rhs_packing(fam->code, &preferred));
        const uint32_t lhs_format = family_formats[fam->code][0], rhs_format = family_formats[fam->code][1];
        CHECK(preferred.format == rhs_format, "preferred packing of format %u", preferred.format);
        const size_t ms[] = {1, 64};
        for (size_t i = 0; i < COUNT(ms); i++) {
            qgemm_kernel k = {99, 99, 99};
            qgemm_kernel_info info;
            OK(qgemm_select(fam->code, cpu, ms[i], &k));
            OK(qgemm_kernel_get_info(k, &info));
            CHECK(k.family == fam->code && k.svl_bytes == 0, "selected {%u, %u, %u}", k.family, k.index, k.svl_bytes);
            CHECK(available(k, cpu), "selected %s is not available", info.name);
            CHECK((ms[i] == 1) == (info.lhs.mr == 1), "m = %zu selected %s", ms[i], info.name);
            CHECK(same_rhs(info.rhs, preferred), "m = %zu selected %s, which does not read the preferred packing", ms[i],
                  info.name);
            /* select_for with both layouts of the selected kernel: that kernel; with the RHS
             * packing only (lhs NULL): one that reads it. */
            qgemm_kernel k2 = {99, 99, 99};
            qgemm_kernel_info i2;
            OK(qgemm_select_for(fam->code, cpu, ms[i], &info.rhs, &info.lhs, &k2));
            CHECK(k2.family == k.family && k2.index == k.index && k2.svl_bytes == 0, "select_for gave index %u, not %u",
                  k2.index, k.index);
            OK(qgemm_select_for(fam->code, cpu, ms[i], &info.rhs, NULL, &k2));
            OK(qgemm_kernel_get_info(k2, &i2));
            CHECK(same_rhs(i2.rhs, info.rhs), "select_for (lhs NULL) gave %s", i2.name);
        }
        /* Every pair of layouts of the catalogue, explicitly: an available kernel that reads
         * exactly those, of the best tier among them. */
        const size_t count = kernel_count(fam->code);
        for (size_t j = 0; j < count; j++) {
            qgemm_kernel_info ij, i2;
            qgemm_kernel kj = kernel_at(fam->code, j, &ij);
            for (size_t i = 0; i < COUNT(ms); i++) {
                qgemm_kernel k2 = {99, 99, 99};
                OK(qgemm_select_for(fam->code, cpu, ms[i], &ij.rhs, &ij.lhs, &k2));
                OK(qgemm_kernel_get_info(k2, &i2));
                CHECK(same_layouts(&i2, &ij) && available(k2, cpu), "select_for the layouts of %s gave %s", ij.name,
                      i2.name);
                if (available(kj, cpu)) CHECK(i2.tier >= ij.tier, "select_for gave %s below %s", i2.name, ij.name);
            }
        }
        /* Layouts no kernel reads; codes that name no format; no RHS packing. */
        const qgemm_rhs_packing unknown = {rhs_format, 4, 6, 2};
        const qgemm_rhs_packing other_format = {
            rhs_format == QGEMM_RHS_FORMAT_QSI8CXP ? QGEMM_RHS_FORMAT_QSI4CXP : QGEMM_RHS_FORMAT_QSI8CXP,
            preferred.nr, preferred.kr, preferred.sr};
        const qgemm_rhs_packing bad_code = {99, preferred.nr, preferred.kr, preferred.sr};
        const qgemm_lhs_packing lhs3 = {lhs_format, 3, preferred.kr, preferred.sr},
                                lhs_code = {99, 4, preferred.kr, preferred.sr};
        qgemm_kernel k = {99, 99, 99};
        EXPECT(qgemm_select_for(fam->code, cpu, 4, &unknown, NULL, &k), QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_select_for(fam->code, cpu, 4, &other_format, NULL, &k), QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_select_for(fam->code, cpu, 4, &preferred, &lhs3, &k), QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_select_for(fam->code, cpu, 4, &bad_code, NULL, &k), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_select_for(fam->code, cpu, 4, &preferred, &lhs_code, &k), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_select_for(fam->code, cpu, 4, NULL, NULL, &k), QGEMM_ERROR_NULL_POINTER);
        EXPECT(qgemm_select_for(fam->code, 1u << 14, 4, &preferred, NULL, &k), QGEMM_ERROR_INVALID_ARGUMENT);
        EXPECT(qgemm_select_for(ALL_FAMILIES, cpu, 4, &preferred, NULL, &k), QGEMM_ERROR_INVALID_ARGUMENT);
        CHECK(k.family == 99 && k.index == 99 && k.svl_bytes == 99, "out written on failure");
    }
}

/* ---- 4. every status ---------------------------------------------------------------------- */

static void statuses(uint32_t cpu) {
    snprintf(cur, sizeof cur, "statuses");
    qgemm_kernel cx_gemm = {99, 99, 0}, c32 = {99, 99, 0};
    qgemm_kernel_info info;
    OK(qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI4CXP, QGEMM_FEATURE_NEON, 8, &cx_gemm));
    OK(qgemm_kernel_get_info(cx_gemm, &info));
    OK(qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI4C32P, QGEMM_FEATURE_NEON, 8, &c32));
    const qgemm_packing p = packing_of(&info); /* mr 4 */
    size_t out = 777;
    struct problem pr;
    synthetic_problem(&families[QGEMM_FAMILY_QAI8DXP_QSI4CXP], 4, 8, 64, 0, &pr);
    uint8_t *lp = NULL, *rp = NULL;
    size_t ls = 0, rs = 0;
    pack(&pr, &p, &lp, &ls, &rp, &rs);
    float dst[64];
    for (int i = 0; i < 64; i++) dst[i] = 7.0f;
    qgemm_matmul_args a = {.m = 4, .n = 8, .k = 64, .dst_stride_row = 8, .clamp_min = -FLT_MAX, .clamp_max = FLT_MAX};
    float* lhs = (float*)(void*)pr.lhs;
    uint8_t* copy = malloc(ls);
    memcpy(copy, lp, ls);

    EXPECT(qgemm_kernel_count(QGEMM_FAMILY_QAI8DXP_QSI4CXP, NULL), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, NULL, ls, rp, rs, dst, 32, &a), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_kernel_count(ALL_FAMILIES, &out), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_at(QGEMM_FAMILY_QAI8DXP_QSI4CXP, 9999, &cx_gemm), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI4CXP, 1u << 20, 1, &cx_gemm), QGEMM_ERROR_INVALID_ARGUMENT);
    qgemm_kernel bogus = {0, 4000, 0};
    EXPECT(qgemm_kernel_get_info(bogus, &info), QGEMM_ERROR_INVALID_ARGUMENT);
    qgemm_int4_source bad_layout = pr.rhs;
    bad_layout.layout = 9;
    EXPECT(qgemm_rhs_qsi4cxp_pack(&p, 8, 64, &bad_layout, pr.scale, 8, NULL, 0, rp, rs), QGEMM_ERROR_INVALID_ARGUMENT);
    CHECK(out == 777, "out written on failure");
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 4, 0, 0, lhs, 256, 64, lp, ls), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_kernel_lhs_packed_size(c32, 4, 96, 64, &out), QGEMM_ERROR_NOT_MULTIPLE);
    EXPECT(qgemm_kernel_lhs_packed_size(c32, 4, 96, 48, &out), QGEMM_ERROR_NOT_MULTIPLE);
    EXPECT(qgemm_kernel_lhs_packed_offset(cx_gemm, 2, 64, 0, &out), QGEMM_ERROR_MISALIGNED_START);
    CHECK(out == 777, "out written on failure");
    /* The size queries reject what qgemm_kernel_run rejects: a block length for a per-channel
     * family, k = 0 (they once answered). */
    EXPECT(qgemm_kernel_lhs_packed_size(cx_gemm, 4, 64, 32, &out), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_kernel_rhs_packed_size(cx_gemm, 8, 64, 32, &out), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_kernel_rhs_packed_offset(cx_gemm, 0, 0, 0, &out), QGEMM_ERROR_ZERO_DIM);
    CHECK(out == 777, "out written on failure");
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 4, 64, 0, lhs, 256, 32, lp, ls), QGEMM_ERROR_STRIDE_TOO_SMALL);
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, dst, 31, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls - 1, rp, rs, dst, 32, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 4, 64, 0, lhs, 255, 64, lp, ls), QGEMM_ERROR_BUFFER_TOO_SHORT);
    const qgemm_packing kr3 = {4, 4, 3, 1};
    EXPECT(qgemm_lhs_qai8dxp_packed_size(&kr3, 4, 64, &out), QGEMM_ERROR_UNSUPPORTED);
    qgemm_matmul_args bad_clamp = a;
    bad_clamp.clamp_min = 1.0f, bad_clamp.clamp_max = -1.0f;
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, dst, 32, &bad_clamp), QGEMM_ERROR_INVALID_CLAMP);
    bad_clamp.clamp_min = NAN, bad_clamp.clamp_max = 1.0f;
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, dst, 32, &bad_clamp), QGEMM_ERROR_INVALID_CLAMP);
    /* All or nothing: a NaN in the last row, nothing written. */
    const float keep = lhs[3 * 64 + 63];
    lhs[3 * 64 + 63] = NAN;
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 4, 64, 0, lhs, 256, 64, lp, ls), QGEMM_ERROR_NON_FINITE);
    CHECK(memcmp(copy, lp, ls) == 0, "the packer wrote before rejecting a NaN");
    lhs[3 * 64 + 63] = INFINITY;
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 4, 64, 0, lhs, 256, 64, lp, ls), QGEMM_ERROR_NON_FINITE);
    lhs[3 * 64 + 63] = keep;
    float bad_scale[8];
    memcpy(bad_scale, pr.scale, sizeof bad_scale);
    bad_scale[5] = NAN;
    EXPECT(qgemm_rhs_qsi4cxp_pack(&p, 8, 64, &pr.rhs, bad_scale, 8, NULL, 0, rp, rs), QGEMM_ERROR_NON_FINITE);
    /* qsi8d32p: a block with amax 1e7 has a scale of 78740, beyond f16. */
    {
        float big[64];
        for (int i = 0; i < 64; i++) big[i] = i == 40 ? 1e7f : 1.0f;
        const qgemm_packing d = {1, 4, 16, 2};
        size_t dsz = 0;
        OK(qgemm_lhs_qsi8d32p_packed_size(&d, 1, 64, 32, &dsz));
        uint8_t* dp = calloc(dsz, 1);
        EXPECT(qgemm_lhs_qsi8d32p_quantize_pack(&d, 1, 64, 32, 0, big, 64, 64, dp, dsz), QGEMM_ERROR_SCALE_OVERFLOW);
        bool zero = true;
        for (size_t i = 0; i < dsz; i++) zero &= dp[i] == 0;
        CHECK(zero, "scale overflow: packed bytes written");
        free(dp);
    }
    /* A dotprod or i8mm kernel with NEON-only features. */
    {
        const size_t count = kernel_count(QGEMM_FAMILY_QAI8DXP_QSI4CXP);
        bool tried = false;
        for (size_t i = 0; i < count && !tried; i++) {
            qgemm_kernel_info ki;
            qgemm_kernel k = kernel_at(QGEMM_FAMILY_QAI8DXP_QSI4CXP, i, &ki);
            if (ki.tier != QGEMM_TIER_DOTPROD || !reads(&ki, &p)) continue;
            EXPECT(qgemm_kernel_run(k, QGEMM_FEATURE_NEON, lp, ls, rp, rs, dst, 32, &a), QGEMM_ERROR_UNSUPPORTED_CPU);
            tried = true;
        }
        CHECK(tried, "no dotprod kernel with the packing of the NEON GEMM kernel");
    }
    /* The int8 RHS packer: its own argument checks, nothing written on failure. */
    {
        struct problem p8;
        synthetic_problem(&families[QGEMM_FAMILY_QAI8DXP_QSI8CXP], 4, 8, 64, 0, &p8);
        qgemm_kernel k8;
        qgemm_kernel_info i8;
        OK(qgemm_select(QGEMM_FAMILY_QAI8DXP_QSI8CXP, QGEMM_FEATURE_NEON, 4, &k8));
        OK(qgemm_kernel_get_info(k8, &i8));
        const qgemm_packing p8k = packing_of(&i8);
        CHECK(p8k.sr == 1, "int8 packing sr = %zu", p8k.sr);
        size_t sz = 0;
        OK(qgemm_rhs_qsi8cxp_packed_size(&p8k, 8, 64, &sz));
        uint8_t* r8 = calloc(sz, 1);
        EXPECT(qgemm_rhs_qsi8cxp_packed_size(&p, 8, 64, &out), QGEMM_ERROR_UNSUPPORTED); /* sr = 2: an int4 packing */
        EXPECT(qgemm_rhs_qsi8cxp_packed_offset(&p8k, 2, 64, &out), QGEMM_ERROR_MISALIGNED_START);
        qgemm_int8_source bad8 = p8.rhs8;
        bad8.layout = 7;
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &bad8, p8.scale, 8, NULL, 0, r8, sz),
               QGEMM_ERROR_INVALID_ARGUMENT);
        bad8 = p8.rhs8;
        bad8.stride = 63;
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &bad8, p8.scale, 8, NULL, 0, r8, sz),
               QGEMM_ERROR_STRIDE_TOO_SMALL);
        bad8 = p8.rhs8;
        bad8.len--;
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &bad8, p8.scale, 8, NULL, 0, r8, sz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &p8.rhs8, p8.scale, 8, NULL, 0, r8, sz - 1),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        float bad_s8[8];
        memcpy(bad_s8, p8.scale, sizeof bad_s8);
        bad_s8[7] = INFINITY;
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &p8.rhs8, bad_s8, 8, NULL, 0, r8, sz), QGEMM_ERROR_NON_FINITE);
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &p8.rhs8, p8.scale, 8, NULL, 0, (uint8_t*)(void*)p8.rhs8.data,
                                      sz),
               QGEMM_ERROR_BUFFERS_OVERLAP);
        EXPECT(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, NULL, p8.scale, 8, NULL, 0, r8, sz), QGEMM_ERROR_NULL_POINTER);
        bool zero = true;
        for (size_t i = 0; i < sz; i++) zero &= r8[i] == 0;
        CHECK(zero, "a failing qgemm_rhs_qsi8cxp_pack wrote the packed RHS");
        OK(qgemm_rhs_qsi8cxp_pack(&p8k, 8, 64, &p8.rhs8, p8.scale, 8, p8.bias, 8, r8, sz));
        free(r8);
        free_problem(&p8);
    }
    /* The asymmetric int4 RHS packer (qai4c32p) and the qsi8d32pscalef32 LHS packers (f32, f16):
     * their own argument checks, nothing written on failure. */
    {
        enum { AN = 8, AK = 64, ABL = 32, ANB = AK / ABL, AM = 8 };
        const struct family* fa = family_named("qsi8d32p_qai4c32p");
        struct problem pa;
        synthetic_problem(fa, AM, AN, AK, ABL, &pa);
        qgemm_rhs_packing apr;
        OK(qgemm_linear_rhs_packing(fa->code, &apr)); /* nr 4, kr 16, sr 2 */
        const qgemm_packing ap = packing_with_mr(apr, 4);
        snprintf(cur, sizeof cur, "statuses: qgemm_rhs_qai4c32p_pack");
        size_t sz = 0;
        OK(qgemm_rhs_qai4c32p_packed_size(&ap, AN, AK, ABL, &sz));
        uint8_t* r = calloc(sz, 1);
        const uint8_t* w = pa.rhs.data;
        const size_t wl = pa.rhs.len, ws = pa.rhs.stride;
        EXPECT(qgemm_rhs_qai4c32p_packed_offset(&ap, 2, AK, ABL, &out), QGEMM_ERROR_MISALIGNED_START);
        EXPECT(qgemm_rhs_qai4c32p_packed_size(&ap, AN, AK, 48, &out), QGEMM_ERROR_NOT_MULTIPLE);
        const qgemm_packing sr1 = {ap.mr, ap.nr, ap.kr, 1};
        EXPECT(qgemm_rhs_qai4c32p_packed_size(&sr1, AN, AK, ABL, &out), QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, NULL, ANB * AN, pa.scale, ANB * AN, NULL, 0, r, sz),
               QGEMM_ERROR_NULL_POINTER);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN - 1, pa.scale, ANB * AN, NULL, 0,
                                       r, sz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN - 1, NULL, 0,
                                       r, sz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl - 1, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0,
                                       r, sz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, pa.bias,
                                       AN - 1, r, sz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0, r,
                                       sz - 1),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, AK / 2 - 1, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL,
                                       0, r, sz),
               QGEMM_ERROR_STRIDE_TOO_SMALL);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, 48, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0, r, sz),
               QGEMM_ERROR_NOT_MULTIPLE);
        EXPECT(qgemm_rhs_qai4c32p_pack(&sr1, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0, r,
                                       sz),
               QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, (const float*)(const void*)((const char*)pa.zero + 2),
                                       ANB * AN - 1, pa.scale, ANB * AN, NULL, 0, r, sz),
               QGEMM_ERROR_MISALIGNED_POINTER);
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0,
                                       (uint8_t*)(void*)pa.zero, sz),
               QGEMM_ERROR_BUFFERS_OVERLAP);
        EXPECT(qgemm_rhs_qai4c32p_pack(NULL, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0, r,
                                       sz),
               QGEMM_ERROR_NULL_POINTER);
        float* zero = (float*)(void*)pa.zero;
        const float keepz = zero[ANB * AN - 1];
        zero[ANB * AN - 1] = NAN;
        EXPECT(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, NULL, 0, r, sz),
               QGEMM_ERROR_NON_FINITE);
        zero[ANB * AN - 1] = keepz;
        bool untouched = true;
        for (size_t i = 0; i < sz; i++) untouched &= r[i] == 0;
        CHECK(untouched, "a failing qgemm_rhs_qai4c32p_pack wrote the packed RHS");
        OK(qgemm_rhs_qai4c32p_pack(&ap, AN, AK, ABL, w, wl, ws, pa.zero, ANB * AN, pa.scale, ANB * AN, pa.bias, AN, r,
                                   sz));
        free(r);
        free_problem(&pa);

        /* The two LHS packers: f32 (and an f32 block whose sum overflows) and f16 bits. */
        for (int h = 0; h < 2; h++) {
            snprintf(cur, sizeof cur, "statuses: qgemm_lhs_qsi8d32pscalef32_quantize_pack%s", h ? "_f16" : "");
            const struct family* fl = family_named(h ? "f16_qsi8d32p_qai4c32p" : "qsi8d32p_qai4c32p");
            struct problem pl;
            synthetic_problem(fl, AM, AN, AK, ABL, &pl);
            size_t lsz = 0, off = 0;
            OK(qgemm_lhs_qsi8d32pscalef32_packed_size(&ap, AM, AK, ABL, &lsz));
            OK(qgemm_lhs_qsi8d32pscalef32_packed_offset(&ap, 4, AK, ABL, &off));
            EXPECT(qgemm_lhs_qsi8d32pscalef32_packed_offset(&ap, 2, AK, ABL, &out), QGEMM_ERROR_MISALIGNED_START);
            EXPECT(qgemm_lhs_qsi8d32pscalef32_packed_size(&ap, AM, AK, 0, &out), QGEMM_ERROR_ZERO_DIM);
            uint8_t* t = calloc(lsz, 1);
            uint8_t *one = calloc(lsz, 1), *two = calloc(lsz, 1);
            const float* x32 = pl.lhs;
            const uint16_t* x16 = pl.lhs;
#define PACK_S32(m_, start_, x_off_, len_, stride_, out_, out_len_)                                                      \
    (h ? qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(&ap, m_, AK, ABL, start_, x16 + (x_off_), len_, stride_, out_,     \
                                                      out_len_)                                                         \
       : qgemm_lhs_qsi8d32pscalef32_quantize_pack(&ap, m_, AK, ABL, start_, x32 + (x_off_), len_, stride_, out_,        \
                                                  out_len_))
            /* One call equals two calls split at a tile, and a start inside a tile is accepted. */
            OK(PACK_S32(AM, 0, 0, AM * AK, AK, one, lsz));
            OK(PACK_S32(4, 0, 0, 4 * AK, AK, two, off));
            OK(PACK_S32(AM - 4, 4, 4 * AK, (AM - 4) * AK, AK, two + off, lsz - off));
            CHECK(memcmp(one, two, lsz) == 0, "rows [0, 4) and [4, 8) packed apart differ from one call");
            OK(PACK_S32(2, 1, AK, 2 * AK, AK, two, off));
            EXPECT(PACK_S32(AM, 0, 0, AM * AK - 1, AK, t, lsz), QGEMM_ERROR_BUFFER_TOO_SHORT);
            EXPECT(PACK_S32(AM, 0, 0, AM * AK, AK, t, lsz - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
            EXPECT(PACK_S32(AM, 0, 0, AM * AK, AK - 1, t, lsz), QGEMM_ERROR_STRIDE_TOO_SMALL);
            EXPECT(h ? qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(&ap, AM, AK, ABL, 0, NULL, AM * AK, AK, t, lsz)
                     : qgemm_lhs_qsi8d32pscalef32_quantize_pack(&ap, AM, AK, ABL, 0, NULL, AM * AK, AK, t, lsz),
                   QGEMM_ERROR_NULL_POINTER);
            EXPECT(h ? qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(
                           &ap, AM, AK, ABL, 0, (const uint16_t*)(const void*)((const char*)x16 + 1), AM * AK - 1, AK, t,
                           lsz)
                     : qgemm_lhs_qsi8d32pscalef32_quantize_pack(
                           &ap, AM, AK, ABL, 0, (const float*)(const void*)((const char*)x32 + 2), AM * AK - 1, AK, t,
                           lsz),
                   QGEMM_ERROR_MISALIGNED_POINTER);
            EXPECT(PACK_S32(1, 0, 0, AK, AK, (uint8_t*)(void*)pl.lhs, lsz), QGEMM_ERROR_BUFFERS_OVERLAP);
            /* A NaN in the last value; for f32 a block whose dequantized sum overflows. */
            if (h) {
                uint16_t* xm = (uint16_t*)(void*)pl.lhs;
                xm[AM * AK - 1] = 0x7e00;
            } else {
                float* xm = (float*)(void*)pl.lhs;
                xm[AM * AK - 1] = NAN;
            }
            EXPECT(PACK_S32(AM, 0, 0, AM * AK, AK, t, lsz), QGEMM_ERROR_NON_FINITE);
            if (!h) {
                float* xm = (float*)(void*)pl.lhs;
                xm[AM * AK - 1] = 1.0f;
                for (size_t i = 0; i < ABL; i++) xm[i] = 3.0e38f;
                EXPECT(PACK_S32(AM, 0, 0, AM * AK, AK, t, lsz), QGEMM_ERROR_SCALE_OVERFLOW);
            }
#undef PACK_S32
            bool zero_t = true;
            for (size_t i = 0; i < lsz; i++) zero_t &= t[i] == 0;
            CHECK(zero_t, "a failing call wrote the packed LHS");
            free(t);
            free(one);
            free(two);
            free_problem(&pl);
        }
        snprintf(cur, sizeof cur, "statuses");
    }
    EXPECT(qgemm_lhs_qai8dxp_packed_size(&p, SIZE_MAX, SIZE_MAX / 2, &out), QGEMM_ERROR_SIZE_OVERFLOW);
    EXPECT(qgemm_kernel_dst_size(cx_gemm, SIZE_MAX / 2, 3, &out), QGEMM_ERROR_SIZE_OVERFLOW);
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 4, 64, 0, (const float*)((const char*)lhs + 1), 255, 64, lp, ls),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, (float*)((char*)dst + 2), 32, &a),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, (float*)(void*)lp, 32, &a), QGEMM_ERROR_BUFFERS_OVERLAP);
    /* Each run function refuses the kernels of the other output type, writing nothing:
     * qgemm_kernel_run_u16 every f32 kernel, qgemm_kernel_run every f16/bf16 kernel (the output
     * type is checked before the operands, so one pair of packed buffers serves all). */
    {
        uint16_t dst16[64];
        float dst32[32];
        for (int i = 0; i < 64; i++) dst16[i] = 0x7777;
        for (int i = 0; i < 32; i++) dst32[i] = 7.0f;
        size_t refused = 0, total = 0, refused16 = 0;
        for (uint32_t f = 0; f < ALL_FAMILIES; f++) { /* the float families too */
            const size_t count = kernel_count(f);
            for (size_t i = 0; i < count; i++, total++) {
                qgemm_kernel_info ki;
                qgemm_kernel k = kernel_at(f, i, &ki);
                const bool f32 = strncmp(ki.name, "matmul_clamp_f32_", 17) == 0;
                const qgemm_status s = f32 ? qgemm_kernel_run_u16(k, cpu, lp, ls, rp, rs, dst16, 64, &a)
                                           : qgemm_kernel_run(k, cpu, lp, ls, rp, rs, dst32, 32, &a);
                refused += s == QGEMM_ERROR_WRONG_DST_TYPE;
                refused16 += !f32 && s == QGEMM_ERROR_WRONG_DST_TYPE;
                CHECK(s == QGEMM_ERROR_WRONG_DST_TYPE, "%s(%s) -> %d", f32 ? "qgemm_kernel_run_u16" : "qgemm_kernel_run",
                      ki.name, (int)s);
            }
        }
        if (refused == total && total > 0) status_seen[QGEMM_ERROR_WRONG_DST_TYPE] = true;
        bool untouched = true;
        for (int i = 0; i < 64; i++) untouched &= dst16[i] == 0x7777;
        for (int i = 0; i < 32; i++) untouched &= dst32[i] == 7.0f;
        CHECK(untouched, "a run refused for its output type wrote dst");
        /* A handle that names no kernel: INVALID_ARGUMENT, as for every function taking one. */
        EXPECT(qgemm_kernel_run_u16(bogus, cpu, lp, ls, rp, rs, dst16, 64, &a), QGEMM_ERROR_INVALID_ARGUMENT);
        printf("run/run_u16: %zu of %zu kernels of the %d families refused by the other output type's run function "
               "(%zu f16/bf16 kernels by qgemm_kernel_run, the f32 ones by qgemm_kernel_run_u16), "
               "QGEMM_ERROR_WRONG_DST_TYPE\n",
               refused, total, ALL_FAMILIES, refused16);
    }
    /* A 16-bit kernel through qgemm_kernel_run_u16: runs, and refuses a misaligned, short or
     * overlapping dst without writing. */
    {
        const struct family* f16 = &families[QGEMM_FAMILY_F16_QAI8DXP_QSI4CXP];
        qgemm_kernel k16;
        qgemm_kernel_info i16;
        OK(qgemm_select(f16->code, QGEMM_FEATURE_NEON, 4, &k16));
        OK(qgemm_kernel_get_info(k16, &i16));
        struct problem ph;
        synthetic_problem(f16, 4, 8, 64, 0, &ph);
        uint8_t *hl = NULL, *hr = NULL;
        size_t hls = 0, hrs = 0;
        const qgemm_packing p16k = packing_of(&i16);
        if (pack(&ph, &p16k, &hl, &hls, &hr, &hrs)) {
            uint16_t d16[33];
            for (int i = 0; i < 33; i++) d16[i] = 0x7777;
            EXPECT(qgemm_kernel_run_u16(k16, cpu, hl, hls, hr, hrs, (uint16_t*)(void*)((char*)d16 + 1), 32, &a),
                   QGEMM_ERROR_MISALIGNED_POINTER);
            EXPECT(qgemm_kernel_run_u16(k16, cpu, hl, hls, hr, hrs, d16, 31, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
            EXPECT(qgemm_kernel_run_u16(k16, cpu, hl, hls, hr, hrs, (uint16_t*)(void*)hl, 32, &a),
                   QGEMM_ERROR_BUFFERS_OVERLAP);
            bool kept = true;
            for (int i = 0; i < 33; i++) kept &= d16[i] == 0x7777;
            CHECK(kept, "a failing qgemm_kernel_run_u16 wrote dst");
            OK(qgemm_kernel_run_u16(k16, cpu, hl, hls, hr, hrs, d16, 32, &a));
            CHECK(d16[32] == 0x7777, "qgemm_kernel_run_u16 wrote past the rectangle");
        }
        free(hl);
        free(hr);
        free_problem(&ph);
    }
    /* The f16 and bf16 LHS packers: one call equals two calls split at a multiple of mr, mr = 1
     * starts anywhere; and their rejections (m_idx_start not a multiple of mr = 4, a kr / sr they
     * do not support, NaN and infinity, pointer, length, stride and overlap errors), each leaving
     * the packed buffer unwritten. */
    {
        enum { HM = 8, HK = 64 };
        static uint16_t x16[HM * HK + 1];
        const qgemm_packing bd4 = {4, 4, 8, 2}, bd8 = {4, 8, 16, 2}, bd2 = {4, 4, 4, 2}, bd16 = {4, 4, 16, 1};
        typedef qgemm_status (*half_packer)(const qgemm_packing*, size_t, size_t, size_t, const uint16_t*, size_t,
                                            size_t, uint8_t*, size_t);
        for (int bf = 0; bf < 2; bf++) {
            const half_packer pk = bf ? qgemm_lhs_qai8dxp_quantize_pack_bf16 : qgemm_lhs_qai8dxp_quantize_pack_f16;
            const char* what = bf ? "qgemm_lhs_qai8dxp_quantize_pack_bf16" : "qgemm_lhs_qai8dxp_quantize_pack_f16";
            snprintf(cur, sizeof cur, "statuses: %s", what);
            for (size_t i = 0; i < HM * HK; i++) x16[i] = bf ? random_bf16() : random_f16();
            const qgemm_packing good = bf ? bd8 : bd4;
            size_t sz = 0, off = 0, sz1 = 0;
            OK(qgemm_lhs_qai8dxp_packed_size(&good, HM, HK, &sz));
            OK(qgemm_lhs_qai8dxp_packed_offset(&good, 4, HK, &off));
            uint8_t *one = calloc(sz, 1), *two = calloc(sz, 1), *t = calloc(sz, 1);
            OK(pk(&good, HM, HK, 0, x16, HM * HK, HK, one, sz));
            OK(pk(&good, 4, HK, 0, x16, 4 * HK, HK, two, off));
            OK(pk(&good, HM - 4, HK, 4, x16 + 4 * HK, (HM - 4) * HK, HK, two + off, sz - off));
            CHECK(memcmp(one, two, sz) == 0, "rows [0, 4) and [4, 8) packed apart differ from one call");
            const qgemm_packing mr1 = {1, good.nr, good.kr, good.sr};
            OK(qgemm_lhs_qai8dxp_packed_size(&mr1, 1, HK, &sz1));
            uint8_t* r1 = calloc(sz1, 1);
            OK(pk(&mr1, 1, HK, 3, x16 + 3 * HK, HK, HK, r1, sz1));
            free(r1);
            EXPECT(pk(&good, 4, HK, 2, x16 + 2 * HK, 4 * HK, HK, t, sz), QGEMM_ERROR_MISALIGNED_START);
            EXPECT(pk(bf ? &bd4 : &bd2, HM, HK, 0, x16, HM * HK, HK, t, sz), QGEMM_ERROR_UNSUPPORTED);
            EXPECT(pk(&bd16, HM, HK, 0, x16, HM * HK, HK, t, sz), QGEMM_ERROR_UNSUPPORTED);
            const uint16_t keep16 = x16[HM * HK - 1];
            x16[HM * HK - 1] = bf ? 0x7FC0 : 0x7E00; /* NaN in the last value */
            EXPECT(pk(&good, HM, HK, 0, x16, HM * HK, HK, t, sz), QGEMM_ERROR_NON_FINITE);
            x16[HM * HK - 1] = bf ? 0xFF80 : 0xFC00; /* -infinity */
            EXPECT(pk(&good, HM, HK, 0, x16, HM * HK, HK, t, sz), QGEMM_ERROR_NON_FINITE);
            x16[HM * HK - 1] = keep16;
            EXPECT(pk(&good, HM, HK, 0, (const uint16_t*)(const void*)((const char*)x16 + 1), HM * HK, HK, t, sz),
                   QGEMM_ERROR_MISALIGNED_POINTER);
            EXPECT(pk(&good, HM, HK, 0, NULL, HM * HK, HK, t, sz), QGEMM_ERROR_NULL_POINTER);
            EXPECT(pk(&good, HM, HK, 0, x16, HM * HK - 1, HK, t, sz), QGEMM_ERROR_BUFFER_TOO_SHORT);
            EXPECT(pk(&good, HM, HK, 0, x16, HM * HK, HK, t, sz - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
            EXPECT(pk(&good, HM, HK, 0, x16, HM * HK, HK - 1, t, sz), QGEMM_ERROR_STRIDE_TOO_SMALL);
            EXPECT(pk(&good, 1, HK, 0, x16, HK, HK, (uint8_t*)(void*)(x16 + 8), sz), QGEMM_ERROR_BUFFERS_OVERLAP);
            bool zero = true;
            for (size_t i = 0; i < sz; i++) zero &= t[i] == 0;
            CHECK(zero, "a failing call wrote the packed LHS");
            free(one);
            free(two);
            free(t);
        }
        snprintf(cur, sizeof cur, "statuses");
    }
    /* The 2-bit family: its packer's statuses, tables out of [-64, 63] (packer, run, layer), a table
     * for a family without one. */
    {
        snprintf(cur, sizeof cur, "statuses: qsu2cxp");
        const struct family* fu = family_named("qai8dxp_qsu2cxp");
        struct problem pu;
        synthetic_problem(fu, 4, 8, 64, 0, &pu);
        qgemm_kernel ku = {99, 99, 0};
        qgemm_kernel_info iu;
        OK(qgemm_select(fu->code, QGEMM_FEATURE_NEON, 4, &ku));
        OK(qgemm_kernel_get_info(ku, &iu));
        const qgemm_packing up = packing_of(&iu), bad_kr = {4, 4, 8, 1};
        size_t usz = 0, uoff = 0;
        OK(qgemm_rhs_qsu2cxp_packed_size(&up, 8, 64, &usz));
        OK(qgemm_rhs_qsu2cxp_packed_offset(&up, 4, 64, &uoff));
        CHECK(usz == 2 * uoff && uoff == 4 * (64 / 4 + 12), "qsu2cxp sizes %zu, %zu", usz, uoff);
        EXPECT(qgemm_rhs_qsu2cxp_packed_offset(&up, 2, 64, &out), QGEMM_ERROR_MISALIGNED_START);
        EXPECT(qgemm_rhs_qsu2cxp_packed_size(&up, 8, 48, &out), QGEMM_ERROR_NOT_MULTIPLE);
        EXPECT(qgemm_rhs_qsu2cxp_packed_size(&bad_kr, 8, 64, &out), QGEMM_ERROR_UNSUPPORTED);
        CHECK(out == 777, "out written on failure");
        uint8_t* r = calloc(usz, 1);
        const uint8_t* w = pu.rhs.data;
        const size_t wl = pu.rhs.len, ws = 64 / 4;
        const int32_t high[4] = {-2, -1, 0, 64}, low[4] = {-65, -1, 0, 1}, edge[4] = {-64, 0, 0, 63};
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, high, r, usz),
               QGEMM_ERROR_LUT_OUT_OF_RANGE);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, low, r, usz),
               QGEMM_ERROR_LUT_OUT_OF_RANGE);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl - 1, ws, pu.scale, 8, NULL, 0, NULL, r, usz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 7, NULL, 0, NULL, r, usz),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, NULL, r, usz - 1),
               QGEMM_ERROR_BUFFER_TOO_SHORT);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws - 1, pu.scale, 8, NULL, 0, NULL, r, usz),
               QGEMM_ERROR_STRIDE_TOO_SMALL);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&bad_kr, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, NULL, r, usz),
               QGEMM_ERROR_UNSUPPORTED);
        EXPECT(qgemm_rhs_qsu2cxp_pack(NULL, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, NULL, r, usz),
               QGEMM_ERROR_NULL_POINTER);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0,
                                      (const int32_t*)(const void*)((const char*)high + 2), r, usz),
               QGEMM_ERROR_MISALIGNED_POINTER);
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, NULL, (uint8_t*)(void*)pu.scale,
                                      usz),
               QGEMM_ERROR_BUFFERS_OVERLAP);
        float* su = (float*)(void*)pu.scale;
        const float keep = su[7];
        su[7] = NAN;
        EXPECT(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, NULL, r, usz),
               QGEMM_ERROR_NON_FINITE);
        su[7] = keep;
        bool untouched = true;
        for (size_t i = 0; i < usz; i++) untouched &= r[i] == 0;
        CHECK(untouched, "a failing qgemm_rhs_qsu2cxp_pack wrote the packed RHS");
        OK(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, NULL, 0, edge, r, usz));
        OK(qgemm_rhs_qsu2cxp_pack(&up, 8, 64, w, wl, ws, pu.scale, 8, pu.bias, 8, pu.lut, r, usz));

        /* The run: the table as the kernel's parameters (qgemm_lut_params), out of range,
         * misaligned or inside the output; parameters (of either kind) for a family without any;
         * NULL is the default table. */
        size_t uls = 0;
        OK(qgemm_lhs_qai8dxp_packed_size(&up, 4, 64, &uls));
        uint8_t* ul = calloc(uls, 1);
        OK(qgemm_lhs_qai8dxp_quantize_pack(&up, 4, 64, 0, pu.lhs, 4 * 64, 64, ul, uls));
        float ud[40];
        for (int i = 0; i < 40; i++) ud[i] = 7.0f;
        qgemm_lut_params lut_high = {{-2, -1, 0, 64}}, lut_syn, lut_default = {{-2, -1, 0, 1}};
        memcpy(lut_syn.lut, pu.lut, sizeof lut_syn.lut);
        union {
            qgemm_lut_params p;
            unsigned char b[sizeof(qgemm_lut_params) + 8];
        } lut_odd;
        memcpy(lut_odd.b + 1, &lut_syn, sizeof lut_syn);
        qgemm_matmul_args ua = {.m = 4, .n = 8, .k = 64, .dst_stride_row = 8, .clamp_min = -FLT_MAX,
                                .clamp_max = FLT_MAX, .params = &lut_high};
        EXPECT(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, ud, 32, &ua), QGEMM_ERROR_LUT_OUT_OF_RANGE);
        ua.params = lut_odd.b + 1;
        EXPECT(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, ud, 32, &ua), QGEMM_ERROR_MISALIGNED_POINTER);
        qgemm_matmul_args no_params = a;
        qgemm_lhs_stride_params stride64 = {64};
        no_params.params = &lut_syn;
        EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, ud, 32, &no_params), QGEMM_ERROR_INVALID_ARGUMENT);
        no_params.params = &stride64;
        EXPECT(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, ud, 32, &no_params), QGEMM_ERROR_INVALID_ARGUMENT);
        ua.params = &lut_syn;
        EXPECT(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, (float*)(void*)(ul + 4), 32, &ua),
               QGEMM_ERROR_BUFFERS_OVERLAP);
        /* The output over the parameters (the table in its last 4 floats). */
        float in_dst[36];
        memcpy(in_dst + 32, &lut_syn, sizeof lut_syn);
        ua.params = in_dst + 32;
        EXPECT(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, in_dst, 36, &ua), QGEMM_ERROR_BUFFERS_OVERLAP);
        bool kept = true;
        for (int i = 0; i < 40; i++) kept &= ud[i] == 7.0f;
        CHECK(kept, "a refused run of the 2-bit family wrote dst");
        ua.params = &lut_syn;
        OK(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, ud, 32, &ua));
        CHECK(ud[32] == 7.0f, "qgemm_kernel_run wrote past the rectangle");
        float ud2[32], ud3[32];
        ua.params = NULL;
        OK(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, ud2, 32, &ua));
        ua.params = &lut_default;
        OK(qgemm_kernel_run(ku, cpu, ul, uls, r, usz, ud3, 32, &ua));
        CHECK(memcmp(ud2, ud3, sizeof ud2) == 0, "params NULL differs from the default table {-2, -1, 0, 1}");
        CHECK(memcmp(ud, ud2, sizeof ud2) != 0, "the table {-3, -1, 1, 3} gave the default table's output");
        OK(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, ud, 32, &a));

        /* The layer: set_lut validates, a bad table in the struct is refused on use. */
        qgemm_linear l, keep_l;
        OK(qgemm_linear_from_packed(fu->code, NULL, 8, 64, 0, r, usz, &l));
        keep_l = l;
        EXPECT(qgemm_linear_set_lut(&l, high), QGEMM_ERROR_LUT_OUT_OF_RANGE);
        EXPECT(qgemm_linear_set_lut(NULL, pu.lut), QGEMM_ERROR_NULL_POINTER);
        CHECK(memcmp(&l, &keep_l, sizeof l) == 0, "a failing qgemm_linear_set_lut wrote the layer");
        qgemm_linear other = l;
        other.family = QGEMM_FAMILY_QAI8DXP_QSI4CXP;
        EXPECT(qgemm_linear_set_lut(&other, pu.lut), QGEMM_ERROR_INVALID_ARGUMENT);
        other = l;
        other.size = sizeof other - 8;
        EXPECT(qgemm_linear_set_lut(&other, pu.lut), QGEMM_ERROR_STRUCT_SIZE);
        CHECK(other.params.lut[0] == -2, "a failing qgemm_linear_set_lut wrote the layer");
        OK(qgemm_linear_set_lut(&l, pu.lut));
        CHECK(l.params.lut[0] == -3 && l.params.lut[3] == 3, "qgemm_linear_set_lut did not set the table");
        qgemm_linear hand = l;
        hand.params.lut[3] = 64;
        EXPECT(qgemm_linear_scratch_size(&hand, 4, &out), QGEMM_ERROR_LUT_OUT_OF_RANGE);
        OK(qgemm_linear_set_lut(&l, NULL));
        CHECK(l.params.lut[0] == -2 && l.params.lut[1] == -1 && l.params.lut[2] == 0 && l.params.lut[3] == 1,
              "NULL: not the default table");
        CHECK(out == 777, "out written on failure");
        free(ul);
        free(r);
        free_problem(&pu);
        snprintf(cur, sizeof cur, "statuses");
    }
    EXPECT(qgemm_lhs_qai8dxp_quantize_pack(&p, 1, 64, 0, lhs, 64, 64, (uint8_t*)(void*)(lhs + 32), ls),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    CHECK(out == 777, "out written on failure");
    bool dst_ok = true;
    for (int i = 0; i < 64; i++) dst_ok &= dst[i] == 7.0f;
    CHECK(dst_ok, "a failing run wrote dst");
    CHECK(memcmp(copy, lp, ls) == 0, "a failing call wrote the packed LHS");
    /* And the good call works. */
    OK(qgemm_kernel_run(cx_gemm, cpu, lp, ls, rp, rs, dst, 32, &a));

    printf("statuses: failing calls refused, outputs unwritten (census after the operator's)\n");
    free(copy);
    free(lp);
    free(rp);
    free_problem(&pr);
}

/* Every status produced by some failing call of this file (after all the parts that produce them),
 * and every status's message. quant.c produces GPTQ's (QGEMM_ERROR_DIM_MISMATCH,
 * QGEMM_ERROR_INVALID_DAMPING, QGEMM_ERROR_NOT_POSITIVE_DEFINITE); QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN
 * needs a kernel whose tile scales with the streaming vector length, which no catalogue has yet:
 * of those only the message is checked here. */
static void status_census(void) {
    snprintf(cur, sizeof cur, "status census");
    size_t produced = 0, expected = 0;
    for (int s = 1; s < N_STATUS; s++) {
        if (s == QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN || s == QGEMM_ERROR_DIM_MISMATCH ||
            s == QGEMM_ERROR_INVALID_DAMPING || s == QGEMM_ERROR_NOT_POSITIVE_DEFINITE)
            continue;
        expected++;
        CHECK(status_seen[s], "status %d (%s) never produced", s, qgemm_status_message(s));
        produced += status_seen[s];
    }
    const char* unknown = qgemm_status_message(999);
    CHECK(unknown && strcmp(unknown, "unknown status") == 0, "message of 999: %s", unknown);
    CHECK(strcmp(qgemm_status_message(-1), unknown) == 0, "message of -1");
    CHECK(strcmp(qgemm_status_message(N_STATUS), unknown) == 0, "message of %d (after the last status)", N_STATUS);
    CHECK(QGEMM_ERROR_STRUCT_SIZE == N_STATUS - 1, "the last status is %d", (int)QGEMM_ERROR_STRUCT_SIZE);
    for (int s = 0; s < N_STATUS; s++) {
        const char* msg = qgemm_status_message(s);
        CHECK(msg && *msg && strcmp(msg, unknown) != 0, "message of %d: %s", s, msg ? msg : "(null)");
    }
    printf("statuses: %zu of %zu error statuses produced by failing calls (all but GPTQ's, quant.c's, and "
           "QGEMM_ERROR_VECTOR_LENGTH_UNKNOWN, which no kernel can produce yet); %d messages ok\n",
           produced, expected, N_STATUS);
}

/* ---- 5. the operator (qgemm_linear_*) ------------------------------------------------------- */

/* The layers of the operator test: rows, channels, depth, block length (tests/operator.rs has the
 * same: C_OP), each family's problem drawn by synthetic_problem from rng = 0x5eed0000 + code. */
#define LINEAR_M 64
#define LINEAR_N 20
#define LINEAR_K 64
#define LINEAR_BL 32
#define LINEAR_THREADS 4

static uint64_t fnv1a(uint64_t h, const void* p, size_t len) {
    for (size_t i = 0; i < len; i++) h = (h ^ ((const uint8_t*)p)[i]) * 0x100000001b3ull;
    return h;
}

static qgemm_status linear_run_any(const struct family* f, const qgemm_linear* l, uint32_t cpu, size_t m,
                                   const void* x, size_t x_len, void* y, size_t y_len, uint8_t* s, size_t s_len) {
    if (f->dst_bytes == 4) return qgemm_linear_run(l, cpu, m, x, x_len, y, y_len, s, s_len);
    return qgemm_linear_run_u16(l, cpu, m, x, x_len, y, y_len, s, s_len);
}

static qgemm_status linear_prepare_any(const struct family* f, const qgemm_linear* l, uint32_t cpu, size_t m,
                                       const void* x, size_t x_len, uint8_t* s, size_t s_len, float lo, float hi,
                                       qgemm_linear_call* out) {
    if (f->dst_bytes == 4) return qgemm_linear_prepare(l, cpu, m, x, x_len, s, s_len, lo, hi, out);
    return qgemm_linear_prepare_u16(l, cpu, m, x, x_len, s, s_len, lo, hi, out);
}

struct part_job {
    const qgemm_linear_call* call;
    qgemm_rect rect;
    void* y;
    size_t y_len, dst_bytes;
    qgemm_status status;
};

static void* run_part_thread(void* arg) {
    struct part_job* j = arg;
    j->status = j->dst_bytes == 4 ? qgemm_linear_run_part(j->call, j->rect, j->y, j->y_len)
                                  : qgemm_linear_run_part_u16(j->call, j->rect, j->y, j->y_len);
    return NULL;
}

/* The digest of `name` in the shared golden file (QGEMM_LINEAR_DIGESTS, written by the Rust
 * operator: tests/operator.rs, c_operator_golden_is_the_rust_operator). */
static bool golden_digest(const char* name, uint64_t* out) {
    const char* path = getenv("QGEMM_LINEAR_DIGESTS");
    FILE* file = path ? fopen(path, "r") : NULL;
    CHECK(file != NULL, "QGEMM_LINEAR_DIGESTS (%s) cannot be read", path ? path : "unset");
    if (!file) return false;
    char line[128], fam[96];
    unsigned long long d;
    bool found = false;
    while (fgets(line, sizeof line, file))
        if (sscanf(line, "%95s %llx", fam, &d) == 2 && strcmp(fam, name) == 0) *out = d, found = true;
    fclose(file);
    CHECK(found, "no digest for %s in %s", name, path);
    return found;
}

static void operator_(uint32_t cpu) {
    const bool corrupt = getenv("QGEMM_LAYER1_CORRUPT") && strcmp(getenv("QGEMM_LAYER1_CORRUPT"), "linear") == 0;
    size_t runs = 0, thread_runs = 0;
    for (size_t fi = 0; fi < N_FAMILIES; fi++) {
        const struct family* f = &families[fi];
        const size_t n = LINEAR_N, k = LINEAR_K, bl = blocked(f) ? LINEAR_BL : 0, e = f->dst_bytes;
        snprintf(cur, sizeof cur, "operator %s", f->name);
        rng = 0x5eed0000u + f->code;
        struct problem pr;
        synthetic_problem(f, LINEAR_M, n, k, bl, &pr);
        /* Pack once with the operator's packing, through the format's packer. */
        qgemm_rhs_packing rpk;
        OK(qgemm_linear_rhs_packing(f->code, &rpk));
        const qgemm_packing p = packing_with_mr(rpk, 4);
        uint8_t *lp, *rp;
        size_t ls, rs, size = 0;
        if (!pack(&pr, &p, &lp, &ls, &rp, &rs)) continue;
        OK(qgemm_linear_packed_size(f->code, n, k, bl, &size));
        CHECK(size == rs, "qgemm_linear_packed_size %zu, packer's size %zu", size, rs);
        qgemm_linear layer, named;
        OK(qgemm_linear_from_packed(f->code, NULL, n, k, bl, rp, rs, &layer));
        CHECK(layer.size == sizeof layer && layer.family == f->code && same_rhs(layer.packing, rpk) && layer.n == n &&
                  layer.k == k && layer.bl == bl && layer.weights == rp && layer.weights_len == rs &&
                  layer.input_scale == NULL && layer.input_scale_len == 0,
              "from_packed: the layer's fields");
        /* The preferred packing named explicitly: the same layer. */
        memset(&named, 0x5a, sizeof named);
        OK(qgemm_linear_from_packed(f->code, &rpk, n, k, bl, rp, rs, &named));
        CHECK(same_layer(&named, &layer), "from_packed with the preferred packing named differs");
        if (pr.lut) {
            /* The 2-bit family: the default table until set, then the table the weights were packed with. */
            CHECK(layer.params.lut[0] == -2 && layer.params.lut[1] == -1 && layer.params.lut[2] == 0 &&
                      layer.params.lut[3] == 1,
                  "from_packed: not the default table");
            OK(qgemm_linear_set_lut(&layer, pr.lut));
        }
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t m = 1; m <= LINEAR_M; m++) {
            size_t ss = 0;
            OK(qgemm_linear_scratch_size(&layer, m, &ss));
            uint8_t* scratch = malloc(ss);
            uint8_t* y = malloc(m * n * e);
            OK(linear_run_any(f, &layer, cpu, m, pr.lhs, m * k, y, m * n, scratch, ss));
            if (corrupt && m == 1) y[0] ^= 1;
            h = fnv1a(h, y, m * n * e);
            runs++;
            if (m == 1 || m == 7 || m == 33 || m == 64) {
                /* The operator is layer 1's kernel for m on this CPU, run by hand... */
                qgemm_kernel kernel;
                qgemm_kernel_info info;
                OK(qgemm_select(f->code, cpu, m, &kernel));
                OK(qgemm_kernel_get_info(kernel, &info));
                struct problem sub = pr;
                sub.m = m;
                uint8_t *klp, *krp;
                size_t kls, krs;
                uint8_t* want = malloc(m * n * e);
                const qgemm_packing ik = packing_of(&info);
                if (pack(&sub, &ik, &klp, &kls, &krp, &krs)) {
                    OK(run_whole(kernel, cpu, &sub, klp, kls, krp, krs, want, -INFINITY, INFINITY));
                    CHECK(memcmp(want, y, m * n * e) == 0, "m %zu: operator != %s by hand", m, info.name);
                    /* ...and its parts on threads, with a clamp, equal one clamped call. */
                    OK(run_whole(kernel, cpu, &sub, klp, kls, krp, krs, want, -0.5f, 0.5f));
                    qgemm_linear_call call;
                    OK(linear_prepare_any(f, &layer, cpu, m, pr.lhs, m * k, scratch, ss, -0.5f, 0.5f, &call));
                    CHECK(call.kernel.family == kernel.family && call.kernel.index == kernel.index &&
                              call.kernel.svl_bytes == 0,
                          "m %zu: prepare chose another kernel than qgemm_select", m);
                    CHECK(call.size == sizeof call && call.m == m && call.lhs == scratch && call.lhs_size == kls &&
                              same_layer(&call.layer, &layer),
                          "m %zu: the call's fields (lhs_size %zu, the kernel's packed LHS %zu)", m, call.lhs_size,
                          kls);
                    qgemm_rect rects[64];
                    size_t count = 0;
                    OK(qgemm_linear_split(&call, LINEAR_THREADS, rects, COUNT(rects), &count));
                    CHECK(count >= 1 && count <= LINEAR_THREADS, "m %zu: %zu parts", m, count);
                    uint8_t* z = malloc(m * n * e);
                    memset(z, 0xA5, m * n * e);
                    pthread_t threads[LINEAR_THREADS];
                    struct part_job jobs[LINEAR_THREADS];
                    for (size_t t = 0; t < count; t++) {
                        jobs[t] = (struct part_job){&call, rects[t], z, m * n, e, QGEMM_ERROR_INVALID_ARGUMENT};
                        CHECK(pthread_create(&threads[t], NULL, run_part_thread, &jobs[t]) == 0, "pthread_create");
                    }
                    for (size_t t = 0; t < count; t++) {
                        pthread_join(threads[t], NULL);
                        CHECK(jobs[t].status == QGEMM_OK, "part %zu: %s", t, qgemm_status_message(jobs[t].status));
                    }
                    CHECK(memcmp(want, z, m * n * e) == 0, "m %zu: %zu parts on threads != one clamped call", m, count);
                    thread_runs += count;
                    free(z);
                    free(klp);
                    free(krp);
                }
                free(want);
            }
            free(scratch);
            free(y);
        }
        uint64_t golden = 0;
        if (golden_digest(f->name, &golden))
            CHECK(h == golden, "m = 1..%d: digest %016llx, the Rust operator's %016llx", LINEAR_M,
                  (unsigned long long)h, (unsigned long long)golden);
        free(lp);
        free(rp);
        free_problem(&pr);
    }
    printf("operator: %zu qgemm_linear_run calls (%zu families, m = 1..%d) equal to the Rust operator's digests; "
           "%zu parts run on threads equal to one call\n",
           runs, N_FAMILIES, LINEAR_M, thread_runs);
}

/* Every other RHS packing of each family's catalogue as a layer's packing: qgemm_linear_from_packed
 * records it, and the layer's runs and calls use the kernels that read it (the kernel
 * qgemm_select_for picks with it, run by hand: the same bits). */
static void operator_packings(uint32_t cpu) {
    enum { PM = 9, MAX_PACKINGS = 16 };
    static const size_t ms[] = {1, 4, PM};
    size_t layers = 0, runs = 0;
    for (size_t fi = 0; fi < N_FAMILIES; fi++) {
        const struct family* f = &families[fi];
        const size_t n = LINEAR_N, k = LINEAR_K, bl = blocked(f) ? LINEAR_BL : 0, e = f->dst_bytes;
        qgemm_rhs_packing preferred, seen[MAX_PACKINGS];
        size_t n_seen = 0;
        OK(qgemm_linear_rhs_packing(f->code, &preferred));
        const size_t count = kernel_count(f->code);
        for (size_t i = 0; i < count; i++) {
            qgemm_kernel_info ki;
            kernel_at(f->code, i, &ki);
            bool known = same_rhs(ki.rhs, preferred);
            for (size_t j = 0; j < n_seen && !known; j++) known = same_rhs(ki.rhs, seen[j]);
            if (!known && n_seen < MAX_PACKINGS) seen[n_seen++] = ki.rhs;
        }
        for (size_t q = 0; q < n_seen; q++) {
            const qgemm_rhs_packing rq = seen[q];
            snprintf(cur, sizeof cur, "operator %s, packing nr %zu kr %zu sr %zu", f->name, rq.nr, rq.kr, rq.sr);
            rng = 0x5eed1000u + f->code;
            struct problem pr;
            synthetic_problem(f, PM, n, k, bl, &pr);
            const qgemm_packing pq = packing_with_mr(rq, 4);
            uint8_t *lp = NULL, *rp = NULL;
            size_t ls = 0, rs = 0;
            if (pack(&pr, &pq, &lp, &ls, &rp, &rs)) {
                qgemm_linear layer, short_layer;
                OK(qgemm_linear_from_packed(f->code, &rq, n, k, bl, rp, rs, &layer));
                CHECK(layer.size == sizeof layer && same_rhs(layer.packing, rq) && layer.weights_len == rs,
                      "the layer does not record its packing (weights_len %zu of %zu)", layer.weights_len, rs);
                EXPECT(qgemm_linear_from_packed(f->code, &rq, n, k, bl, rp, rs - 1, &short_layer),
                       QGEMM_ERROR_BUFFER_TOO_SHORT);
                if (pr.lut) OK(qgemm_linear_set_lut(&layer, pr.lut));
                layers++;
                for (size_t i = 0; i < COUNT(ms); i++) {
                    const size_t m = ms[i];
                    size_t ss = 0;
                    OK(qgemm_linear_scratch_size(&layer, m, &ss));
                    uint8_t* scratch = malloc(ss + 1);
                    uint8_t* y = malloc(m * n * e);
                    uint8_t* want = malloc(m * n * e);
                    OK(linear_run_any(f, &layer, cpu, m, pr.lhs, m * k, y, m * n, scratch, ss));
                    qgemm_kernel kq = {99, 99, 99};
                    qgemm_kernel_info iq;
                    OK(qgemm_select_for(f->code, cpu, m, &rq, NULL, &kq));
                    OK(qgemm_kernel_get_info(kq, &iq));
                    CHECK(same_rhs(iq.rhs, rq), "select_for gave %s", iq.name);
                    struct problem sub = pr;
                    sub.m = m;
                    uint8_t *klp = NULL, *krp = NULL;
                    size_t kls = 0, krs = 0;
                    const qgemm_packing ik = packing_of(&iq);
                    if (pack(&sub, &ik, &klp, &kls, &krp, &krs)) {
                        OK(run_whole(kq, cpu, &sub, klp, kls, krp, krs, want, -FLT_MAX, FLT_MAX));
                        CHECK(memcmp(want, y, m * n * e) == 0, "m %zu: the layer != %s by hand", m, iq.name);
                    }
                    qgemm_linear_call call;
                    OK(linear_prepare_any(f, &layer, cpu, m, pr.lhs, m * k, scratch, ss, -FLT_MAX, FLT_MAX, &call));
                    CHECK(call.kernel.family == kq.family && call.kernel.index == kq.index,
                          "m %zu: prepare chose another kernel than qgemm_select_for", m);
                    runs++;
                    free(klp);
                    free(krp);
                    free(want);
                    free(y);
                    free(scratch);
                }
            }
            free(lp);
            free(rp);
            free_problem(&pr);
        }
    }
    printf("operator packings: %zu layers over the families' other RHS packings (qgemm_linear_from_packed with "
           "the packing), %zu runs equal to the kernel qgemm_select_for picks for it, run by hand\n",
           layers, runs);
}

/* Every bad input of the operator returns its status and writes nothing. */
static void operator_statuses(uint32_t cpu) {
    const struct family* f = family_named("qai8dxp_qsi4cxp");
    const struct family* h = family_named("f16_qai8dxp_qsi4cxp");
    const size_t n = LINEAR_N, k = LINEAR_K, m = 5;
    snprintf(cur, sizeof cur, "operator statuses");
    rng = 0x5eed0000u;
    struct problem pr;
    synthetic_problem(f, LINEAR_M, n, k, 0, &pr);
    qgemm_rhs_packing rpk;
    OK(qgemm_linear_rhs_packing(f->code, &rpk));
    const qgemm_packing p = packing_with_mr(rpk, 4);
    uint8_t *lp, *rp;
    size_t ls, rs, ss = 0;
    if (!pack(&pr, &p, &lp, &ls, &rp, &rs)) return;
    qgemm_linear layer, untouched;
    memset(&untouched, 0x5a, sizeof untouched);
    layer = untouched;
    EXPECT(qgemm_linear_from_packed(f->code, NULL, n, k, 0, rp, rs - 1, &layer), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_from_packed(f->code, NULL, n, k, 0, NULL, rs, &layer), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_linear_from_packed(99, NULL, n, k, 0, rp, rs, &layer), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_from_packed(ALL_FAMILIES, NULL, n, k, 0, rp, rs, &layer), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_from_packed(f->code, NULL, n, k, 32, rp, rs, &layer), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_linear_from_packed(f->code, NULL, n, k, 0, rp, rs, NULL), QGEMM_ERROR_NULL_POINTER);
    /* A packing no kernel of the family reads (a qsi4cxp tile of 5 channels, a depth step of 3,
     * another family's format), a code that names no format: refused. */
    const qgemm_rhs_packing nr5 = {QGEMM_RHS_FORMAT_QSI4CXP, 5, 16, 2}, kr3 = {QGEMM_RHS_FORMAT_QSI4CXP, 8, 3, 2},
                            int8 = {QGEMM_RHS_FORMAT_QSI8CXP, 4, 8, 1}, code99 = {99, 8, 16, 2};
    EXPECT(qgemm_linear_from_packed(f->code, &nr5, n, k, 0, rp, rs, &layer), QGEMM_ERROR_PACKING_MISMATCH);
    EXPECT(qgemm_linear_from_packed(f->code, &kr3, n, k, 0, rp, rs, &layer), QGEMM_ERROR_PACKING_MISMATCH);
    EXPECT(qgemm_linear_from_packed(f->code, &int8, n, k, 0, rp, rs, &layer), QGEMM_ERROR_PACKING_MISMATCH);
    EXPECT(qgemm_linear_from_packed(f->code, &code99, n, k, 0, rp, rs, &layer), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_from_packed(f->code, (const qgemm_rhs_packing*)(const void*)((const char*)&rpk + 1), n, k, 0,
                                    rp, rs, &layer),
           QGEMM_ERROR_MISALIGNED_POINTER);
    CHECK(memcmp(&layer, &untouched, sizeof layer) == 0, "a failing qgemm_linear_from_packed wrote its output");
    OK(qgemm_linear_from_packed(f->code, NULL, n, k, 0, rp, rs, &layer));
    OK(qgemm_linear_scratch_size(&layer, m, &ss));
    uint8_t* scratch = malloc(ss + 8);
    float* y = malloc((m * n + 1) * sizeof(float));
    for (size_t i = 0; i <= m * n; i++) y[i] = 7.0f;
    const float* x = pr.lhs;
    EXPECT(qgemm_linear_run(NULL, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, m * k - 1, y, m * n, scratch, ss), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, m * k, y, m * n - 1, scratch, ss), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, m * k, y, m * n, scratch, ss - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run(&layer, cpu, m, (const float*)((const char*)x + 1), m * k - 1, y, m * n, scratch, ss),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, m * k, (float*)scratch, m * n, scratch, ss),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, m * k, y, m * n, (uint8_t*)rp, ss), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_linear_run(&layer, 1u << 31, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_INVALID_ARGUMENT);
    /* The wrong family's element type: an f32 layer through the uint16_t function, and back. */
    EXPECT(qgemm_linear_run_u16(&layer, cpu, m, (const uint16_t*)x, m * k, (uint16_t*)y, m * n, scratch, ss),
           QGEMM_ERROR_WRONG_DST_TYPE);
    qgemm_linear wrong = layer;
    wrong.family = h->code; /* an f16 family over f32 weights of the same size */
    EXPECT(qgemm_linear_run(&wrong, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_WRONG_DST_TYPE);
    wrong.family = 99;
    EXPECT(qgemm_linear_run(&wrong, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_INVALID_ARGUMENT);
    wrong = layer;
    wrong.weights_len = rs - 1;
    EXPECT(qgemm_linear_run(&wrong, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_BUFFER_TOO_SHORT);
    /* A layer of another size than this library's (an older or newer struct, or a layer never
     * filled by it): refused by every function that takes one. */
    const size_t sizes[] = {0, sizeof layer - 8, sizeof layer + 8};
    for (size_t i = 0; i < COUNT(sizes); i++) {
        wrong = layer;
        wrong.size = sizes[i];
        size_t dummy = 777;
        qgemm_linear_call c;
        EXPECT(qgemm_linear_run(&wrong, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_STRUCT_SIZE);
        EXPECT(qgemm_linear_scratch_size(&wrong, m, &dummy), QGEMM_ERROR_STRUCT_SIZE);
        EXPECT(qgemm_linear_prepare(&wrong, cpu, m, x, m * k, scratch, ss, -INFINITY, INFINITY, &c),
               QGEMM_ERROR_STRUCT_SIZE);
        EXPECT(qgemm_linear_set_input_scale(&wrong, NULL, 0), QGEMM_ERROR_STRUCT_SIZE);
        CHECK(dummy == 777 && wrong.size == sizes[i], "a layer of size %zu: output written", sizes[i]);
    }
    /* A layer whose packing was changed: to one no kernel reads, to a code that names no format. */
    wrong = layer;
    wrong.packing = nr5;
    EXPECT(qgemm_linear_run(&wrong, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_PACKING_MISMATCH);
    wrong.packing = code99;
    EXPECT(qgemm_linear_run(&wrong, cpu, m, x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_INVALID_ARGUMENT);
    bool unwritten = true;
    for (size_t i = 0; i <= m * n; i++) unwritten &= y[i] == 7.0f;
    CHECK(unwritten, "a failing qgemm_linear_run wrote its output");
    float nan_x[5 * LINEAR_K];
    memcpy(nan_x, x, sizeof nan_x);
    nan_x[3] = NAN;
    EXPECT(qgemm_linear_run(&layer, cpu, m, nan_x, m * k, y, m * n, scratch, ss), QGEMM_ERROR_NON_FINITE);
    /* Calls and parts. */
    qgemm_linear_call call;
    EXPECT(qgemm_linear_prepare(&layer, cpu, m, x, m * k, scratch, ss, 1.0f, -1.0f, &call), QGEMM_ERROR_INVALID_CLAMP);
    OK(qgemm_linear_prepare(&layer, cpu, m, x, m * k, scratch, ss, -INFINITY, INFINITY, &call));
    qgemm_rect rects[64], whole = {0, 0, m, n};
    size_t count = 0;
    OK(qgemm_linear_split(&call, 0, rects, 64, &count)); /* 0 parts: one, as in Rust */
    CHECK(count == 1 && memcmp(&rects[0], &whole, sizeof whole) == 0, "split into 0 parts: %zu rectangles", count);
    EXPECT(qgemm_linear_split(&call, 4, rects, 0, &count), QGEMM_ERROR_BUFFER_TOO_SHORT);
    /* rects inside the call's packed activations: refused, nothing written; no count pointer:
     * refused before anything is written. */
    if (ss >= 64) {
        uint8_t save[64];
        memcpy(save, scratch, sizeof save);
        qgemm_rect* in_lhs = (qgemm_rect*)(((uintptr_t)scratch + 7) & ~(uintptr_t)7);
        EXPECT(qgemm_linear_split(&call, 1, in_lhs, 1, &count), QGEMM_ERROR_BUFFERS_OVERLAP);
        CHECK(memcmp(save, scratch, sizeof save) == 0, "split into the packed activations wrote them");
    }
    rects[0] = (qgemm_rect){7, 7, 7, 7};
    EXPECT(qgemm_linear_split(&call, 1, rects, 64, NULL), QGEMM_ERROR_NULL_POINTER);
    CHECK(rects[0].m_idx == 7 && rects[0].m == 7, "split without a count pointer wrote rects");
    qgemm_kernel_info info;
    OK(qgemm_kernel_get_info(call.kernel, &info));
    if (info.n_step > 1) {
        qgemm_rect misaligned = {0, 1, m, n - 1};
        EXPECT(qgemm_linear_run_part(&call, misaligned, y, m * n), QGEMM_ERROR_MISALIGNED_START);
    }
    qgemm_rect outside = {0, 0, m + 1, n};
    EXPECT(qgemm_linear_run_part(&call, outside, y, (m + 1) * n), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_run_part(&call, whole, y, m * n - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run_part(&call, whole, (float*)scratch, m * n), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_linear_run_part_u16(&call, whole, (uint16_t*)y, m * n), QGEMM_ERROR_WRONG_DST_TYPE);
    qgemm_linear_call bad = call;
    bad.kernel.family = h->code; /* a kernel of another family */
    EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_INVALID_ARGUMENT);
    bad = call;
    bad.lhs_size -= 1;
    EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_BUFFER_TOO_SHORT);
    /* Calls of another size, and calls over a layer of another size. */
    bad = call;
    bad.size = sizeof bad - 8;
    EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_STRUCT_SIZE);
    EXPECT(qgemm_linear_split(&bad, 1, rects, 64, &count), QGEMM_ERROR_STRUCT_SIZE);
    bad = call;
    bad.layer.size = 0;
    EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_STRUCT_SIZE);
    EXPECT(qgemm_linear_split(&bad, 1, rects, 64, &count), QGEMM_ERROR_STRUCT_SIZE);
    /* A call whose kernel reads another packing than its layer's: an available kernel of the
     * family with other weights; the layer relabelled with another packing a kernel reads (qsi4cxp
     * tiles of 4 channels: fewer bytes than the weights hold) under the call's kernel. */
    {
        const size_t kc = kernel_count(f->code);
        size_t tried = 0;
        for (size_t i = 0; i < kc; i++) {
            qgemm_kernel_info ki;
            qgemm_kernel ko = kernel_at(f->code, i, &ki);
            if (same_rhs(ki.rhs, call.layer.packing) || !available(ko, cpu)) continue;
            bad = call;
            bad.kernel = ko;
            EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_PACKING_MISMATCH);
            EXPECT(qgemm_linear_split(&bad, 1, rects, 64, &count), QGEMM_ERROR_PACKING_MISMATCH);
            tried++;
        }
        CHECK(tried > 0, "no kernel of %s reads another packing", f->name);
        const qgemm_rhs_packing nr4 = {QGEMM_RHS_FORMAT_QSI4CXP, 4, 16, 2};
        CHECK(!same_rhs(nr4, call.layer.packing), "the preferred packing is the 4-channel one");
        bad = call;
        bad.layer.packing = nr4;
        EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_PACKING_MISMATCH);
        bad.layer.packing = nr5;
        EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_PACKING_MISMATCH);
    }
    bad = call;
    bad.features = 0; /* the kernel's tier is gone */
    if (info.tier != QGEMM_TIER_SCALAR) EXPECT(qgemm_linear_run_part(&bad, whole, y, m * n), QGEMM_ERROR_UNSUPPORTED_CPU);
    unwritten = true;
    for (size_t i = 0; i <= m * n; i++) unwritten &= y[i] == 7.0f;
    CHECK(unwritten, "a failing qgemm_linear_run_part wrote its output");
    OK(qgemm_linear_run_part(&call, whole, y, m * n));
    CHECK(y[m * n] == 7.0f, "qgemm_linear_run_part wrote past the output");
    /* The asymmetric int4 families: their layers refuse another family's call, element type and
     * block length. */
    {
        const struct family* a = family_named("qsi8d32p_qai4c32p");
        const struct family* a16 = family_named("f16_qsi8d32p_qai4c32p");
        struct problem pa;
        rng = 0x5eed0000u + a->code;
        synthetic_problem(a, LINEAR_M, n, k, LINEAR_BL, &pa);
        qgemm_rhs_packing apr;
        OK(qgemm_linear_rhs_packing(a->code, &apr));
        const qgemm_packing ap = packing_with_mr(apr, 4);
        uint8_t *alp, *arp;
        size_t als, ars, ass = 0;
        if (pack(&pa, &ap, &alp, &als, &arp, &ars)) {
            for (size_t i = 0; i <= m * n; i++) y[i] = 7.0f;
            qgemm_linear la = untouched;
            EXPECT(qgemm_linear_from_packed(a->code, NULL, n, k, 0, arp, ars, &la), QGEMM_ERROR_ZERO_DIM);
            EXPECT(qgemm_linear_from_packed(a->code, NULL, n, k, 48, arp, ars, &la), QGEMM_ERROR_NOT_MULTIPLE);
            EXPECT(qgemm_linear_from_packed(a->code, NULL, n, k, LINEAR_BL, arp, ars - 1, &la),
                   QGEMM_ERROR_BUFFER_TOO_SHORT);
            CHECK(memcmp(&la, &untouched, sizeof la) == 0, "a failing qgemm_linear_from_packed wrote its output");
            OK(qgemm_linear_from_packed(a->code, NULL, n, k, LINEAR_BL, arp, ars, &la));
            OK(qgemm_linear_scratch_size(&la, m, &ass));
            uint8_t* as = malloc(ass);
            qgemm_linear l16 = la;
            l16.family = a16->code; /* the f16 family over the same weights: uint16_t in and out */
            EXPECT(qgemm_linear_run(&l16, cpu, m, pa.lhs, m * k, y, m * n, as, ass), QGEMM_ERROR_WRONG_DST_TYPE);
            EXPECT(qgemm_linear_run_u16(&la, cpu, m, pa.lhs, m * k, (uint16_t*)y, m * n, as, ass),
                   QGEMM_ERROR_WRONG_DST_TYPE);
            qgemm_linear_call ac;
            OK(qgemm_linear_prepare(&la, cpu, m, pa.lhs, m * k, as, ass, -INFINITY, INFINITY, &ac));
            qgemm_linear_call bad_a = ac;
            bad_a.kernel.family = a16->code; /* an f16 kernel for the f32 layer */
            EXPECT(qgemm_linear_run_part(&bad_a, whole, y, m * n), QGEMM_ERROR_INVALID_ARGUMENT);
            bad_a = ac;
            /* The Q4_0 family over these weights: no kernel of it reads their packing (qai4c32p). */
            bad_a.layer.family = QGEMM_FAMILY_QSI8D32P_QSI4C32P;
            EXPECT(qgemm_linear_run_part(&bad_a, whole, y, m * n), QGEMM_ERROR_PACKING_MISMATCH);
            bool kept = true;
            for (size_t i = 0; i <= m * n; i++) kept &= y[i] == 7.0f;
            CHECK(kept, "a refused call of an asymmetric int4 layer wrote its output");
            free(as);
            free(alp);
            free(arp);
        }
        free_problem(&pa);
    }
    printf("operator statuses: null, short, misaligned, overlapping, wrong family and element type, bad clamp, "
           "bad rectangle, a struct of another size, a packing no kernel reads, a call's kernel reading another "
           "packing: refused, outputs unwritten\n");
    free(scratch);
    free(y);
    free(lp);
    free(rp);
    free_problem(&pr);
}

/* The operator's clamp, as documented: qgemm_linear_run clamps to [-FLT_MAX, FLT_MAX], so an
 * overflowing result saturates; qgemm_linear_prepare with that clamp gives the same bits, with
 * -INFINITY, INFINITY the infinities stay. Channel 0's weights are near FLT_MAX, channel 1's near
 * -FLT_MAX (quantized per channel: finite scales), the others small. */
static void operator_clamp(uint32_t cpu) {
    enum { CN = 8, CK = 64, CM = 3 };
    snprintf(cur, sizeof cur, "operator clamp");
    static float w[CN * CK], x[CM * CK], y_run[CM * CN], y_max[CM * CN], y_inf[CM * CN];
    for (size_t c = 0; c < CN; c++)
        for (size_t j = 0; j < CK; j++)
            w[c * CK + j] = c == 0 ? 3.0e38f : c == 1 ? -3.0e38f : 0.01f * (float)((int)((c * 7 + j) % 13) - 6);
    for (size_t i = 0; i < CM * CK; i++) x[i] = 50.0f + (float)(i % 17);
    const uint32_t fam = QGEMM_FAMILY_QAI8DXP_QSI4CXP;
    size_t ws = 0, bs = 0, ss = 0;
    OK(qgemm_linear_quantize_workspace_size(fam, CN, CK, 0, &ws));
    OK(qgemm_linear_packed_size(fam, CN, CK, 0, &bs));
    uint8_t *work = malloc(ws), *buf = malloc(bs);
    qgemm_linear layer;
    OK(qgemm_linear_quantize_pack(fam, w, CN * CK, QGEMM_LAYOUT_NXK, CK, CN, CK, 0, QGEMM_QUANT_ROUND_TO_NEAREST, NULL,
                                  0, NULL, 0, work, ws, buf, bs, &layer));
    OK(qgemm_linear_scratch_size(&layer, CM, &ss));
    uint8_t* scratch = malloc(ss);
    OK(qgemm_linear_run(&layer, cpu, CM, x, CM * CK, y_run, CM * CN, scratch, ss));
    const qgemm_rect whole = {0, 0, CM, CN};
    qgemm_linear_call call;
    OK(qgemm_linear_prepare(&layer, cpu, CM, x, CM * CK, scratch, ss, -FLT_MAX, FLT_MAX, &call));
    OK(qgemm_linear_run_part(&call, whole, y_max, CM * CN));
    OK(qgemm_linear_prepare(&layer, cpu, CM, x, CM * CK, scratch, ss, -INFINITY, INFINITY, &call));
    OK(qgemm_linear_run_part(&call, whole, y_inf, CM * CN));
    size_t saturated = 0;
    for (size_t i = 0; i < CM; i++) {
        CHECK(y_run[i * CN] == FLT_MAX && y_run[i * CN + 1] == -FLT_MAX, "row %zu: run gave %g, %g (want +-FLT_MAX)", i,
              (double)y_run[i * CN], (double)y_run[i * CN + 1]);
        CHECK(isinf(y_inf[i * CN]) && y_inf[i * CN] > 0 && isinf(y_inf[i * CN + 1]) && y_inf[i * CN + 1] < 0,
              "row %zu: the unclamped call gave %g, %g (want +-infinity)", i, (double)y_inf[i * CN],
              (double)y_inf[i * CN + 1]);
        saturated += y_run[i * CN] == FLT_MAX;
        for (size_t c = 2; c < CN; c++)
            CHECK(isfinite(y_run[i * CN + c]) && y_run[i * CN + c] == y_inf[i * CN + c], "row %zu, column %zu", i, c);
    }
    CHECK(memcmp(y_run, y_max, sizeof y_run) == 0, "prepare(-FLT_MAX, FLT_MAX) differs from qgemm_linear_run");
    printf("operator clamp: qgemm_linear_run saturates %zu of %d overflowing rows at FLT_MAX, as prepare(-FLT_MAX, "
           "FLT_MAX) does; prepare(-INFINITY, INFINITY) keeps the infinities\n",
           saturated, CM);
    free(work);
    free(buf);
    free(scratch);
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: kai_plan.py DATA | qgemm_layer1 <cpu model>\n");
        return 2;
    }
    const uint32_t cpu = cpu_checks(argv[1]);
    catalogue(cpu);
    selection(cpu);
    golden(cpu);
    synthetic(cpu);
    statuses(cpu);
    operator_(cpu);
    operator_packings(cpu);
    operator_statuses(cpu);
    operator_clamp(cpu);
    status_census();
    printf("qgemm_layer1 (%s): %zu checks, %zu failures\n", argv[1], checks, failures);
    return failures == 0 ? 0 : 1;
}
