/* Layer-2 test: KleidiAI link compatibility.
 *
 * Written only against KleidiAI's documented API (its headers, its function names, its parameter
 * structs, its per-family `_ukernel` interface structs), so the same file builds unchanged against
 * KleidiAI itself. For every (golden case, kernel) line of the plan read on stdin (kai_plan.py), it
 * checks bit for bit against KleidiAI's recorded output:
 *   - the kernel getters (m_step, n_step, mr, nr, kr, sr, offsets at one step, dst size),
 *   - the packer getters (packed sizes, offsets, RHS stride) and the packed LHS and RHS bytes (the
 *     LHS also packed in two calls with m_idx_start); the one known difference: qgemm's f16 LHS
 *     packer gives each row its own zero point where KleidiAI's (mr 4, kr/sr 4) adds another row's,
 *     so there the bytes must differ by exactly that and nothing else (test_util.h),
 *   - dst (f32, or f16/bf16 bit patterns) with the `none` and `tight` clamps, computed on
 *     KleidiAI's packed bytes, run on the whole output with a padded row stride and a canary on
 *     each side (padding and canaries must stay untouched), and on a grid of m_step x n_step
 *     sub-rectangles addressed through the kernel's offset getters, exactly as a KleidiAI user
 *     splits work between threads.
 * The families are one table (FAMILIES below); their kernels are kai_kernels.h's tables.
 * The float families (FLOAT_FAMILIES, lines of kai_plan.py --float) are checked the same way, with
 * their packers given per packing: the RHS packed into a 0xA5-filled buffer compared with the golden
 * bytes of the format (docs/formats.md, §Float formats); elsewhere (bytes KleidiAI leaves unwritten or fills with a
 * register's leftover) qgemm must have written 0 (KAI_COMPAT_KLEIDIAI=1 skips that, for a run
 * against KleidiAI); the 1x36 kernel and its 1x4 LHS packer one row per call, as KleidiAI requires;
 * a kernel with FEAT_FP16 or FEAT_BF16 instructions runs only where HWCAP has them (or with
 * KAI_COMPAT_RUN_ALL=1).
 * As a KleidiAI user does, a kernel runs only where the CPU has its ISA (HWCAP_ASIMDDP for dotprod,
 * HWCAP2_I8MM for i8mm); elsewhere its getters and packers are still checked. KAI_COMPAT_RUN_ALL=1
 * runs every kernel on any CPU (for a library that falls back to portable code).
 * Usage: kai_plan.py DATA | kai_compat   (exit 0 only if every check passed). */
#include <float.h>
#include <sys/auxv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kai/kai_common.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_bf16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32p_f32.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32pscalef32_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32pscalef32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi8cxp_qsi8cx_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi8cxp_qsi8cx_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_pack_bf16p8x4_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_bf16p1x4_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_bf16p8x4_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_bf16p12x4biasf16_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_bf16p12x4biasf32_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_x16p32x1b_x16_x16_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_x32p16x1b_x32_x32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_x16p32x1bx16_x16_x16_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_x32p16x1bx32_x32_x32_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon.h"
#include "kai_kernels.h"
#include "test_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The LHS packers (by format and input type) and the RHS packer formats the families use. */
enum lhs_kind { LHS_F32, LHS_F16, LHS_BF16, LHS_QSI8D32P, LHS_SCALEF32_F32, LHS_SCALEF32_F16 };
enum rhs_kind { RHS_QSI4CXP, RHS_QSI4C32P, RHS_Q4_0, RHS_QSI8CXP, RHS_QAI4C32P, RHS_QSU2CXP };

/* The families, one row each: the golden cases' family name (its table in kai_kernels.h is
 * <name>_kernels), KleidiAI's family name (interface struct kai_<that>_ukernel), bytes of an output
 * element, the LHS packer, the RHS packer, and whether get_lhs_packed_offset takes bl and whether
 * get_rhs_packed_offset and run_matmul do (BL) or not (NO_BL), and whether run_matmul takes the 2-bit
 * look-up table after scalar_max (LUT) or not (NO_LUT). A family is one row here. */
#define FAMILIES(X)                                                                                               \
    X(qai8dxp_qsi4cxp, matmul_clamp_f32_qai8dxp_qsi4cxp, 4, LHS_F32, RHS_QSI4CXP, NO_BL, NO_BL, NO_LUT)           \
    X(qai8dxp_qsi4c32p, matmul_clamp_f32_qai8dxp_qsi4c32p, 4, LHS_F32, RHS_QSI4C32P, NO_BL, BL, NO_LUT)           \
    X(qsi8d32p_qsi4c32p, matmul_clamp_f32_qsi8d32p_qsi4c32p, 4, LHS_QSI8D32P, RHS_Q4_0, BL, BL, NO_LUT)           \
    X(qai8dxp_qsi8cxp, matmul_clamp_f32_qai8dxp_qsi8cxp, 4, LHS_F32, RHS_QSI8CXP, NO_BL, NO_BL, NO_LUT)           \
    X(f16_qai8dxp_qsi4cxp, matmul_clamp_f16_qai8dxp_qsi4cxp, 2, LHS_F16, RHS_QSI4CXP, NO_BL, NO_BL, NO_LUT)       \
    X(f16_qai8dxp_qsi8cxp, matmul_clamp_f16_qai8dxp_qsi8cxp, 2, LHS_F16, RHS_QSI8CXP, NO_BL, NO_BL, NO_LUT)       \
    X(bf16_qai8dxp_qsi4cxp, matmul_clamp_bf16_qai8dxp_qsi4cxp, 2, LHS_BF16, RHS_QSI4CXP, NO_BL, NO_BL, NO_LUT)    \
    X(bf16_qai8dxp_qsi4c32p, matmul_clamp_bf16_qai8dxp_qsi4c32p, 2, LHS_BF16, RHS_QSI4C32P, NO_BL, BL, NO_LUT)    \
    X(qsi8d32p_qai4c32p, matmul_clamp_f32_qsi8d32p_qai4c32p, 4, LHS_SCALEF32_F32, RHS_QAI4C32P, BL, BL, NO_LUT)   \
    X(f16_qsi8d32p_qai4c32p, matmul_clamp_f16_qsi8d32p_qai4c32p, 2, LHS_SCALEF32_F16, RHS_QAI4C32P, BL, BL, NO_LUT) \
    X(qai8dxp_qsu2cxp, matmul_clamp_f32_qai8dxp_qsu2cxp, 4, LHS_F32, RHS_QSU2CXP, NO_BL, NO_BL, LUT)
#define BL(x) , x
#define NO_BL(x)
#define LUT(x) , x
#define NO_LUT(x)

enum family {
#define X(id, ...) F_##id,
    FAMILIES(X)
#undef X
    N_FAMILIES
};

static const struct family_info {
    const char* name;
    size_t dst_bytes;
    enum lhs_kind lhs;
    enum rhs_kind rhs;
    size_t kernels;
} family_info[N_FAMILIES] = {
#define X(id, kf, esz, lhs, rhs, lb, rb, lt) {#id, esz, lhs, rhs, COUNT(id##_kernels)},
    FAMILIES(X)
#undef X
};

/* One kernel of any family, seen through its family's interface struct. */
struct kernel {
    enum family fam;
    union {
#define X(id, kf, ...) const struct kai_##kf##_ukernel* id;
        FAMILIES(X)
#undef X
    } uk;
    size_t index; /* in its family's table */
};

static size_t failures, checks;
static char cur[256];

#define CHECK_EQ(what, got, want)                                                                       \
    do {                                                                                                \
        size_t g_ = (size_t)(got), w_ = (size_t)(want);                                                 \
        checks++;                                                                                       \
        if (g_ != w_) {                                                                                 \
            failures++;                                                                                 \
            fprintf(stderr, "FAIL %s: %s = %zu, expected %zu\n", cur, what, g_, w_);                 \
        }                                                                                               \
    } while (0)

static void check_bytes(const char* what, const void* got, const void* want, size_t len) {
    checks++;
    if (memcmp(got, want, len) != 0) {
        const uint8_t* g = got;
        const uint8_t* w = want;
        size_t i = 0;
        while (g[i] == w[i]) i++;
        failures++;
        fprintf(stderr, "FAIL %s: %s differs at byte %zu of %zu (0x%02x, expected 0x%02x)\n", cur, what, i, len,
                g[i], w[i]);
    }
}

/* The packed LHS against KleidiAI's bytes. `borrowed`: the f16 packing with mr = 4 and kr / sr = 4,
 * where KleidiAI's packer adds another row's zero point and qgemm's the row's own (test_util.h):
 * there the bytes must be equal except for exactly that. */
static size_t lhs_borrowed_packs, lhs_borrowed_bytes;
static void check_lhs(const char* what, const uint8_t* got, const uint8_t* want, size_t len, int borrowed, size_t m,
                      size_t k) {
    if (!borrowed) {
        check_bytes(what, got, want, len);
        return;
    }
    const char* why;
    const size_t differ = f16_lhs_borrowed_zero_points(got, want, len, m, k, &why);
    checks++;
    if (differ == SIZE_MAX) {
        failures++;
        fprintf(stderr, "FAIL %s: %s: %s\n", cur, what, why);
    } else if (differ > 0) {
        lhs_borrowed_packs++;
        lhs_borrowed_bytes += differ;
    }
}

/* A switch over the kernel's family; X(id, ...) gives each case. */
#define ON_FAMILY(k, X)           \
    switch ((k)->fam) {           \
        FAMILIES(X)               \
    default: abort();             \
    }

/* The functions whose parameter lists every family shares. */
static size_t k_m_step(const struct kernel* k) {
#define X(id, ...) case F_##id: return k->uk.id->get_m_step();
    ON_FAMILY(k, X)
#undef X
}
static size_t k_n_step(const struct kernel* k) {
#define X(id, ...) case F_##id: return k->uk.id->get_n_step();
    ON_FAMILY(k, X)
#undef X
}
static size_t k_mr(const struct kernel* k) {
#define X(id, ...) case F_##id: return k->uk.id->get_mr();
    ON_FAMILY(k, X)
#undef X
}
static size_t k_nr(const struct kernel* k) {
#define X(id, ...) case F_##id: return k->uk.id->get_nr();
    ON_FAMILY(k, X)
#undef X
}
static size_t k_kr(const struct kernel* k) {
#define X(id, ...) case F_##id: return k->uk.id->get_kr();
    ON_FAMILY(k, X)
#undef X
}
static size_t k_sr(const struct kernel* k) {
#define X(id, ...) case F_##id: return k->uk.id->get_sr();
    ON_FAMILY(k, X)
#undef X
}
static size_t k_dst_off(const struct kernel* k, size_t m_idx, size_t n_idx, size_t stride) {
#define X(id, ...) case F_##id: return k->uk.id->get_dst_offset(m_idx, n_idx, stride);
    ON_FAMILY(k, X)
#undef X
}
static size_t k_dst_size(const struct kernel* k, size_t m, size_t n) {
#define X(id, ...) case F_##id: return k->uk.id->get_dst_size(m, n);
    ON_FAMILY(k, X)
#undef X
}

/* The functions whose parameter lists differ: bl where the family's row says so. */
static size_t k_lhs_off(const struct kernel* k, size_t m_idx, size_t kk, size_t bl) {
#define X(id, kf, esz, lhs, rhs, lb, rb, lt) case F_##id: return k->uk.id->get_lhs_packed_offset(m_idx, kk lb(bl));
    ON_FAMILY(k, X)
#undef X
}
static size_t k_rhs_off(const struct kernel* k, size_t n_idx, size_t kk, size_t bl) {
#define X(id, kf, esz, lhs, rhs, lb, rb, lt) case F_##id: return k->uk.id->get_rhs_packed_offset(n_idx, kk rb(bl));
    ON_FAMILY(k, X)
#undef X
}
/* run_matmul; dst_stride_col is the family's element size; `lut` goes to the 2-bit family only. */
static void k_run(const struct kernel* k, size_t m, size_t n, size_t kk, size_t bl, const void* lhs_p,
                  const void* rhs_p, void* dst, size_t stride, float lo, float hi, const int32_t* lut) {
#define X(id, kf, esz, lhs, rhs, lb, rb, lt)                                                                \
    case F_##id: k->uk.id->run_matmul(m, n, kk rb(bl), lhs_p, rhs_p, dst, stride, esz, lo, hi lt(lut)); return;
    ON_FAMILY(k, X)
#undef X
}

/* The kernel tables of kai_kernels.h, by family. */
static int find_kernel(const char* fam, const char* name, struct kernel* out) {
    memset(out, 0, sizeof *out);
#define X(id, ...)                                                                                      \
    if (strcmp(fam, #id) == 0) {                                                                        \
        for (size_t i = 0; i < COUNT(id##_kernels); i++) {                                              \
            if (strcmp(name, id##_kernels[i].name) == 0) {                                              \
                out->fam = F_##id, out->uk.id = &id##_kernels[i].uk, out->index = i;                    \
                return 1;                                                                               \
            }                                                                                           \
        }                                                                                               \
        return 0;                                                                                       \
    }
    FAMILIES(X)
#undef X
    return 0;
}

/* ---- the LHS packers, by input type ----------------------------------------------------------- */

static size_t lhs_elem(enum lhs_kind l) { return l == LHS_F16 || l == LHS_BF16 || l == LHS_SCALEF32_F16 ? 2 : 4; }

static size_t lhs_m_step(enum lhs_kind l, size_t mr) {
    switch (l) {
    case LHS_F32: return kai_get_m_step_lhs_quant_pack_qai8dxp_f32(mr);
    case LHS_F16: return kai_get_m_step_lhs_quant_pack_qai8dxp_f16_neon(mr);
    case LHS_BF16: return kai_get_m_step_lhs_quant_pack_qai8dxp_bf16_neon(mr);
    case LHS_SCALEF32_F32: return kai_get_m_step_lhs_quant_pack_qsi8d32pscalef32_f32_neon(mr);
    case LHS_SCALEF32_F16: return kai_get_m_step_lhs_quant_pack_qsi8d32pscalef32_f16_neon(mr);
    default: return kai_get_m_step_lhs_quant_pack_qsi8d32p_f32(mr);
    }
}
/* Byte offset of row m_idx in the unpacked input, rows `stride` bytes apart. */
static size_t lhs_row_off(enum lhs_kind l, size_t m_idx, size_t stride) {
    switch (l) {
    case LHS_F32: return kai_get_lhs_offset_lhs_quant_pack_qai8dxp_f32(m_idx, stride);
    case LHS_F16: return kai_get_lhs_offset_lhs_quant_pack_qai8dxp_f16_neon(m_idx, stride);
    case LHS_BF16: return kai_get_lhs_offset_lhs_quant_pack_qai8dxp_bf16_neon(m_idx, stride);
    case LHS_SCALEF32_F32: return kai_get_lhs_offset_lhs_quant_pack_qsi8d32pscalef32_f32_neon(m_idx, stride);
    case LHS_SCALEF32_F16: return kai_get_lhs_offset_lhs_quant_pack_qsi8d32pscalef32_f16_neon(m_idx, stride);
    default: return kai_get_lhs_offset_lhs_quant_pack_qsi8d32p_f32(m_idx, stride);
    }
}
static size_t lhs_size(enum lhs_kind l, size_t m, size_t k, size_t bl, size_t mr, size_t kr, size_t sr) {
    switch (l) {
    case LHS_F32: return kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(m, k, mr, kr, sr);
    case LHS_F16: return kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f16_neon(m, k, mr, kr, sr);
    case LHS_BF16: return kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_bf16_neon(m, k, mr, kr, sr);
    case LHS_SCALEF32_F32: return kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32pscalef32_f32_neon(m, k, bl, mr, kr, sr);
    case LHS_SCALEF32_F16: return kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32pscalef32_f16_neon(m, k, bl, mr, kr, sr);
    default: return kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32p_f32(m, k, bl, mr, kr, sr);
    }
}
static size_t lhs_packed_off(enum lhs_kind l, size_t m_idx, size_t k, size_t bl, size_t mr, size_t kr, size_t sr) {
    switch (l) {
    case LHS_F32: return kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_f32(m_idx, k, mr, kr, sr);
    case LHS_F16: return kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_f16_neon(m_idx, k, mr, kr, sr);
    case LHS_BF16: return kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_bf16_neon(m_idx, k, mr, kr, sr);
    case LHS_SCALEF32_F32:
        return kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32pscalef32_f32_neon(m_idx, k, bl, mr, kr, sr);
    case LHS_SCALEF32_F16:
        return kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32pscalef32_f16_neon(m_idx, k, bl, mr, kr, sr);
    default: return kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32p_f32(m_idx, k, bl, mr, kr, sr);
    }
}
/* Packs rows [m_idx_start, m_idx_start + m) of the matrix at `lhs` (row 0; rows `stride` bytes
 * apart) into `packed` (the tile of row m_idx_start). The qai8dxp packers take `lhs` at the first
 * row to pack, the qsi8d32p and qsi8d32pscalef32 packers at row 0 (docs/formats.md, §LHS). */
static void lhs_pack(enum lhs_kind l, size_t m, size_t k, size_t bl, size_t mr, size_t kr, size_t sr,
                     size_t m_idx_start, const void* lhs, size_t stride, void* packed) {
    const void* first = (const uint8_t*)lhs + lhs_row_off(l, m_idx_start, stride);
    switch (l) {
    case LHS_F32:
        kai_run_lhs_quant_pack_qai8dxp_f32(m, k, mr, kr, sr, m_idx_start, first, stride, packed);
        break;
    case LHS_F16:
        kai_run_lhs_quant_pack_qai8dxp_f16_neon(m, k, mr, kr, sr, m_idx_start, first, stride, packed);
        break;
    case LHS_BF16:
        kai_run_lhs_quant_pack_qai8dxp_bf16_neon(m, k, mr, kr, sr, m_idx_start, first, stride, packed);
        break;
    case LHS_SCALEF32_F32:
        kai_run_lhs_quant_pack_qsi8d32pscalef32_f32_neon(m, k, bl, mr, kr, sr, m_idx_start, lhs, stride, packed);
        break;
    case LHS_SCALEF32_F16:
        kai_run_lhs_quant_pack_qsi8d32pscalef32_f16_neon(m, k, bl, mr, kr, sr, m_idx_start, lhs, stride, packed);
        break;
    default: kai_run_lhs_quant_pack_qsi8d32p_f32(m, k, bl, mr, kr, sr, m_idx_start, lhs, stride, packed); break;
    }
}

/* Runs the kernel over [0,m) x [0,n) split into tiles of tm x tn rows/columns (tm, tn multiples of
 * m_step, n_step), addressing each tile through the offset getters. */
static void run_grid(const struct kernel* kn, size_t m, size_t n, size_t k, size_t bl, size_t tm, size_t tn,
                     const uint8_t* lhs_p, const uint8_t* rhs_p, uint8_t* dst, size_t stride, float lo, float hi,
                     const int32_t* lut) {
    for (size_t m0 = 0; m0 < m; m0 += tm) {
        for (size_t n0 = 0; n0 < n; n0 += tn) {
            size_t mm = m - m0 < tm ? m - m0 : tm, nn = n - n0 < tn ? n - n0 : tn;
            size_t off = k_dst_off(kn, m0, n0, stride);
            k_run(kn, mm, nn, k, bl, lhs_p + k_lhs_off(kn, m0, k, bl), rhs_p + k_rhs_off(kn, n0, k, bl), dst + off,
                  stride, lo, hi, lut);
        }
    }
}

/* ---- the float families (docs/kernels.md, §Float families) ------------------------------------
 *
 * Their lines (kai_plan.py --float) have a format of their own: the packers are given per packing,
 * the f32/f16 kernels read the LHS unpacked. One row per family: the golden family name (its table
 * in kai_kernels.h is <name>_kernels), KleidiAI's family (interface struct kai_<that>_ukernel), bytes
 * of an output element, how the kernels read the LHS (UNPACKED: no get_mr, run_matmul(..., lhs,
 * lhs_stride, ...); PACKED: get_mr, run_matmul(..., lhs_packed, ...)) and the interface struct's
 * member for the LHS offset (KleidiAI's f16 struct names its get_lhs_offset get_lhs_packed_offset).
 * A float family is one row here. */
#define FLOAT_FAMILIES(X)                                                                      \
    X(f32_f32_f32p, matmul_clamp_f32_f32_f32p, 4, UNPACKED, get_lhs_offset)                    \
    X(f16_f16_f16p, matmul_clamp_f16_f16_f16p, 2, UNPACKED, get_lhs_packed_offset)             \
    X(f32_bf16p_bf16p, matmul_clamp_f32_bf16p_bf16p, 4, PACKED, get_lhs_packed_offset)         \
    X(f16_bf16p_bf16p, matmul_clamp_f16_bf16p_bf16p, 2, PACKED, get_lhs_packed_offset)
#define UNPACKED_MR(uk) ((void)(uk), (size_t)0)
#define PACKED_MR(uk) (uk)->get_mr()
#define UNPACKED_RUN(uk, m, n, k, lhs, ls, rhs, dst, ds, esz, lo, hi) \
    (uk)->run_matmul(m, n, k, lhs, ls, rhs, dst, ds, esz, lo, hi)
#define PACKED_RUN(uk, m, n, k, lhs, ls, rhs, dst, ds, esz, lo, hi) \
    ((void)(ls), (uk)->run_matmul(m, n, k, lhs, rhs, dst, ds, esz, lo, hi))

enum float_family {
#define X(id, ...) FF_##id,
    FLOAT_FAMILIES(X)
#undef X
    N_FLOAT_FAMILIES
};

static const struct {
    const char* name;
    size_t dst_bytes, kernels;
    int unpacked;
} float_info[N_FLOAT_FAMILIES] = {
#define X(id, kf, esz, kind, lf) {#id, esz, COUNT(id##_kernels), sizeof(#kind) == sizeof("UNPACKED")},
    FLOAT_FAMILIES(X)
#undef X
};

struct fkernel {
    enum float_family fam;
    union {
#define X(id, kf, ...) const struct kai_##kf##_ukernel* id;
        FLOAT_FAMILIES(X)
#undef X
    } uk;
    size_t index;
};

#define ON_FLOAT(k, X)       \
    switch ((k)->fam) {      \
        FLOAT_FAMILIES(X)    \
    default: abort();        \
    }
#define FK_GETTER(fn) \
    static size_t fk_##fn(const struct fkernel* k) { ON_FLOAT(k, FK_CASE_##fn) }
#define FK_CASE_get_m_step(id, ...) case FF_##id: return k->uk.id->get_m_step();
#define FK_CASE_get_n_step(id, ...) case FF_##id: return k->uk.id->get_n_step();
#define FK_CASE_get_nr(id, ...) case FF_##id: return k->uk.id->get_nr();
#define FK_CASE_get_kr(id, ...) case FF_##id: return k->uk.id->get_kr();
#define FK_CASE_get_sr(id, ...) case FF_##id: return k->uk.id->get_sr();
#define FK_CASE_get_mr(id, kf, esz, kind, lf) case FF_##id: return kind##_MR(k->uk.id);
FK_GETTER(get_m_step)
FK_GETTER(get_n_step)
FK_GETTER(get_nr)
FK_GETTER(get_kr)
FK_GETTER(get_sr)
FK_GETTER(get_mr)
/* get_lhs_offset(m_idx, lhs_stride) (unpacked) or get_lhs_packed_offset(m_idx, k) (packed). */
static size_t fk_lhs_off(const struct fkernel* k, size_t m_idx, size_t arg) {
#define X(id, kf, esz, kind, lf) case FF_##id: return k->uk.id->lf(m_idx, arg);
    ON_FLOAT(k, X)
#undef X
}
static size_t fk_rhs_off(const struct fkernel* k, size_t n_idx, size_t kk) {
#define X(id, ...) case FF_##id: return k->uk.id->get_rhs_packed_offset(n_idx, kk);
    ON_FLOAT(k, X)
#undef X
}
static size_t fk_dst_off(const struct fkernel* k, size_t m_idx, size_t n_idx, size_t stride) {
#define X(id, ...) case FF_##id: return k->uk.id->get_dst_offset(m_idx, n_idx, stride);
    ON_FLOAT(k, X)
#undef X
}
static size_t fk_dst_size(const struct fkernel* k, size_t m, size_t n) {
#define X(id, ...) case FF_##id: return k->uk.id->get_dst_size(m, n);
    ON_FLOAT(k, X)
#undef X
}
/* run_matmul; `lhs_stride` is passed to the unpacked-LHS kernels only; dst_stride_col is the
 * output element size. */
static void fk_run(const struct fkernel* k, size_t m, size_t n, size_t kk, const void* lhs, size_t lhs_stride,
                   const void* rhs, void* dst, size_t stride, float lo, float hi) {
#define X(id, kf, esz, kind, lf)                                                     \
    case FF_##id: kind##_RUN(k->uk.id, m, n, kk, lhs, lhs_stride, rhs, dst, stride, esz, lo, hi); return;
    ON_FLOAT(k, X)
#undef X
}
static int find_float_kernel(const char* fam, const char* name, struct fkernel* out) {
    memset(out, 0, sizeof *out);
#define X(id, ...)                                                                      \
    if (strcmp(fam, #id) == 0) {                                                        \
        for (size_t i = 0; i < COUNT(id##_kernels); i++) {                              \
            if (strcmp(name, id##_kernels[i].name) == 0) {                              \
                out->fam = FF_##id, out->uk.id = &id##_kernels[i].uk, out->index = i;   \
                return 1;                                                               \
            }                                                                           \
        }                                                                               \
        return 0;                                                                       \
    }
    FLOAT_FAMILIES(X)
#undef X
    return 0;
}
static int is_float_family(const char* fam) {
    for (int f = 0; f < N_FLOAT_FAMILIES; f++)
        if (strcmp(fam, float_info[f].name) == 0) return 1;
    return 0;
}

/* The float RHS packers, by name: their getters as a KleidiAI user calls them. The NxK packers'
 * get_rhs_offset takes the row stride, the KxN ones' not; only some have a stride getter; the
 * f32 bf16 packer's offset and size getters take nr and kr (adapted here). */
static size_t bf16_f32_offset(size_t n_idx, size_t k) {
    return kai_get_rhs_packed_offset_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(
        n_idx, k, kai_get_n_step_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(), 4);
}
static size_t bf16_f32_size(size_t n, size_t k) {
    return kai_get_rhs_packed_size_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(
        n, k, kai_get_n_step_rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon(), 4);
}
typedef void (*float_rhs_run)(size_t, size_t, size_t, size_t, size_t, size_t, size_t, const void*, const void*,
                              const void*, void*, size_t, const void*);
static const struct float_rhs_packer {
    const char* name;
    size_t src_bytes, bias_bytes;
    size_t (*n_step)(void);
    size_t (*bias_off)(size_t);
    float_rhs_run run;
    size_t (*raw_kxn)(size_t);         /* KxN packers */
    size_t (*raw_nxk)(size_t, size_t); /* NxK packers */
    size_t (*stride)(size_t);          /* NULL: no stride getter */
    size_t (*offset)(size_t, size_t);
    size_t (*size)(size_t, size_t);
} float_rhs_packers[] = {
/* P(name, source element bytes, bias bytes, raw offset getters, stride getter or NULL, packed offset and size) */
#define P(name, src, bias, ...) \
    {#name, src, bias, kai_get_n_step_##name, kai_get_bias_offset_##name, kai_run_##name, __VA_ARGS__}
#define KXN(name) kai_get_rhs_offset_##name, NULL
#define NXK(name) NULL, kai_get_rhs_offset_##name
#define SIZES(name) kai_get_rhs_packed_offset_##name, kai_get_rhs_packed_size_##name
    P(rhs_pack_kxn_x32p16x1b_x32_x32_neon, 4, 4, KXN(rhs_pack_kxn_x32p16x1b_x32_x32_neon),
      kai_get_rhs_packed_stride_rhs_pack_kxn_x32p16x1b_x32_x32_neon, SIZES(rhs_pack_kxn_x32p16x1b_x32_x32_neon)),
    P(rhs_pack_nxk_x32p16x1bx32_x32_x32_neon, 4, 4, NXK(rhs_pack_nxk_x32p16x1bx32_x32_x32_neon),
      kai_get_rhs_packed_stride_rhs_pack_nxk_x32p16x1bx32_x32_x32_neon, SIZES(rhs_pack_nxk_x32p16x1bx32_x32_x32_neon)),
    P(rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon, 4, 4, KXN(rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon), NULL,
      SIZES(rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon)),
    P(rhs_pack_kxn_x16p32x1b_x16_x16_neon, 2, 2, KXN(rhs_pack_kxn_x16p32x1b_x16_x16_neon),
      kai_get_rhs_packed_stride_rhs_pack_kxn_x16p32x1b_x16_x16_neon, SIZES(rhs_pack_kxn_x16p32x1b_x16_x16_neon)),
    P(rhs_pack_nxk_x16p32x1bx16_x16_x16_neon, 2, 2, NXK(rhs_pack_nxk_x16p32x1bx16_x16_x16_neon),
      kai_get_rhs_packed_stride_rhs_pack_nxk_x16p32x1bx16_x16_x16_neon, SIZES(rhs_pack_nxk_x16p32x1bx16_x16_x16_neon)),
    P(rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon, 2, 2, KXN(rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon), NULL,
      SIZES(rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon)),
    P(rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon, 4, 4, KXN(rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon), NULL,
      bf16_f32_offset, bf16_f32_size),
    P(rhs_pack_kxn_bf16p12x4biasf32_f16_neon, 2, 4, KXN(rhs_pack_kxn_bf16p12x4biasf32_f16_neon), NULL,
      SIZES(rhs_pack_kxn_bf16p12x4biasf32_f16_neon)),
    P(rhs_pack_kxn_bf16p12x4biasf16_f16_neon, 2, 2, KXN(rhs_pack_kxn_bf16p12x4biasf16_f16_neon),
      kai_get_rhs_packed_stride_rhs_pack_kxn_bf16p12x4biasf16_f16_neon, SIZES(rhs_pack_kxn_bf16p12x4biasf16_f16_neon)),
#undef P
#undef KXN
#undef NXK
#undef SIZES
};
typedef void (*float_lhs_run)(size_t, size_t, size_t, size_t, size_t, size_t, const void*, size_t, void*);
static const struct float_lhs_packer {
    const char* name;
    size_t src_bytes;
    size_t (*m_step)(size_t);
    size_t (*lhs_off)(size_t, size_t);
    size_t (*packed_off)(size_t, size_t, size_t, size_t, size_t);
    size_t (*size)(size_t, size_t, size_t, size_t, size_t);
    float_lhs_run run;
} float_lhs_packers[] = {
#define P(name, src)                                                                                          \
    {#name, src, kai_get_m_step_##name, kai_get_lhs_offset_##name, kai_get_lhs_packed_offset_##name,          \
     kai_get_lhs_packed_size_##name, kai_run_##name}
    P(lhs_quant_pack_bf16p1x4_f32_neon, 4),
    P(lhs_quant_pack_bf16p8x4_f32_neon, 4),
    P(lhs_pack_bf16p8x4_f16_neon, 2),
#undef P
};

/* "a:b,c:d" -> a byte mask of `len` bytes (1: not part of the format, docs/formats.md, not compared). */
static uint8_t* parse_mask(const char* s, size_t len) {
    uint8_t* mask = calloc(1, len + 1);
    while (strcmp(s, "-") != 0 && *s) {
        char* end;
        size_t a = strtoull(s, &end, 10), b = strtoull(end + 1, &end, 10);
        for (size_t i = a; i < b && i < len; i++) mask[i] = 1;
        s = *end == ',' ? end + 1 : end;
    }
    return mask;
}

/* The packed RHS against the golden bytes of the format (mask 0, docs/formats.md); qgemm writes 0
 * where it does not (KleidiAI leaves some of those bytes unwritten or stores a register's
 * leftover: not checked with KAI_COMPAT_KLEIDIAI=1); the 64 bytes after the packed size must keep
 * their 0xA5. */
static void check_float_rhs(const char* what, const uint8_t* got, const uint8_t* want, const uint8_t* mask,
                            size_t len, int kleidiai) {
    size_t bad = SIZE_MAX, pad = SIZE_MAX, guard = SIZE_MAX;
    for (size_t i = 0; i < len; i++) {
        if (!mask[i] && got[i] != want[i] && bad == SIZE_MAX) bad = i;
        if (mask[i] && got[i] != 0 && pad == SIZE_MAX && !kleidiai) pad = i;
    }
    for (size_t i = len; i < len + 64; i++)
        if (got[i] != 0xA5 && guard == SIZE_MAX) guard = i;
    checks++;
    if (bad != SIZE_MAX || pad != SIZE_MAX || guard != SIZE_MAX) {
        failures++;
        if (bad != SIZE_MAX)
            fprintf(stderr, "FAIL %s: %s differs at byte %zu of %zu (0x%02x, expected 0x%02x)\n", cur, what, bad, len,
                    got[bad], want[bad]);
        if (pad != SIZE_MAX) fprintf(stderr, "FAIL %s: %s: padding byte %zu is 0x%02x, not 0\n", cur, what, pad, got[pad]);
        if (guard != SIZE_MAX) fprintf(stderr, "FAIL %s: %s: wrote byte %zu past the packed size\n", cur, what, guard);
    }
}

static size_t num_or_none(const char* s) { return strcmp(s, "-") == 0 ? SIZE_MAX : (size_t)strtoull(s, NULL, 0); }

static size_t float_lines, float_runs, float_skipped, float_seen[N_FLOAT_FAMILIES];

/* One plan line of a float family: the kernel's getters, both packers (getters and bytes, also
 * packed in two parts through the offset getters), and dst with both clamps, whole and as an
 * m_step x n_step grid, with padded row strides (the grid also with a padded LHS row stride). The
 * 1x36 kernel runs one row per call and its LHS is packed one row per call, as KleidiAI requires. */
static void float_line(char* line, int run_all, int has_fp16, int has_bf16, int kleidiai) {
    char* t[64];
    int nt = 0;
    for (char* p = strtok(line, " \n"); p != NULL && nt < 64; p = strtok(NULL, " \n")) t[nt++] = p;
    if (nt != 41) {
        fprintf(stderr, "FAIL: bad float plan line (%d fields)\n", nt);
        failures++;
        return;
    }
    float_lines++;
    const char *fam = t[0], *name = t[1], *layout = t[5], *rhs_f = t[6], *bias_f = t[8], *lhs_f = t[9],
               *lpacker = t[11], *lhsp_f = t[12], *rpacker = t[15], *rhsp_f = t[16], *isa = t[40];
    const size_t m = num_or_none(t[2]), n = num_or_none(t[3]), k = num_or_none(t[4]), rhs_stride = num_or_none(t[7]),
                 lstride = num_or_none(t[10]), lhsp_size = num_or_none(t[13]), lhsp_off_mr = num_or_none(t[14]),
                 rhsp_size = num_or_none(t[17]), rhsp_tile = num_or_none(t[18]), rhsp_off_nr = num_or_none(t[19]),
                 stride_fn = num_or_none(t[20]), mr = num_or_none(t[22]), nr = num_or_none(t[23]),
                 kr = num_or_none(t[24]), sr = num_or_none(t[25]), m_step = num_or_none(t[26]),
                 n_step = num_or_none(t[27]), m1 = num_or_none(t[28]), lhs_off_ms = num_or_none(t[29]),
                 rhs_off_ns = num_or_none(t[30]), dst_off = num_or_none(t[31]), corrupt = num_or_none(t[39]);
    size_t dst_size = num_or_none(t[32]);
    snprintf(cur, sizeof cur, "%s %s m%zu n%zu k%zu %s", fam, name, m, n, k, layout);
    struct fkernel kn;
    if (!find_float_kernel(fam, name, &kn)) {
        fprintf(stderr, "FAIL %s: kernel not in the table\n", cur);
        failures++;
        return;
    }
    float_seen[kn.fam] |= (size_t)1 << kn.index;
    const size_t esz = float_info[kn.fam].dst_bytes, failures_before = failures;
    const int unpacked = float_info[kn.fam].unpacked;
    if (corrupt == 2) dst_size++; /* --corrupt: a wrong getter expectation, checked on any CPU */

    /* Kernel getters. */
    const size_t ms = fk_get_m_step(&kn), ns = fk_get_n_step(&kn);
    CHECK_EQ("get_m_step", ms, m_step);
    CHECK_EQ("get_n_step", ns, n_step);
    if (!unpacked) CHECK_EQ("get_mr", fk_get_mr(&kn), mr);
    CHECK_EQ("get_nr", fk_get_nr(&kn), nr);
    CHECK_EQ("get_kr", fk_get_kr(&kn), kr);
    CHECK_EQ("get_sr", fk_get_sr(&kn), sr);
    if (unpacked) CHECK_EQ("get_lhs_offset(m_step)", fk_lhs_off(&kn, m_step, lstride), lhs_off_ms);
    else if (lhs_off_ms != SIZE_MAX) CHECK_EQ("get_lhs_packed_offset(m_step)", fk_lhs_off(&kn, m_step, k), lhs_off_ms);
    CHECK_EQ("get_rhs_packed_offset(n_step)", fk_rhs_off(&kn, n_step, k), rhs_off_ns);
    CHECK_EQ("get_dst_offset(m_step, n_step)", fk_dst_off(&kn, m_step, n_step, esz * n), dst_off);
    CHECK_EQ("get_dst_size", fk_dst_size(&kn, m, n), dst_size);
    const struct float_rhs_packer* rp = NULL;
    for (size_t i = 0; i < COUNT(float_rhs_packers); i++)
        if (strcmp(rpacker, float_rhs_packers[i].name) == 0) rp = &float_rhs_packers[i];
    const struct float_lhs_packer* lp = NULL;
    for (size_t i = 0; i < COUNT(float_lhs_packers); i++)
        if (strcmp(lpacker, float_lhs_packers[i].name) == 0) lp = &float_lhs_packers[i];
    if (rp == NULL || (!unpacked && lp == NULL)) {
        fprintf(stderr, "FAIL %s: packer %s or %s not in the test's table\n", cur, rpacker, lpacker);
        failures++;
    }
    if (failures != failures_before) return; /* do not pack with wrong parameters */

    /* RHS: the packer's getters, then pack into a buffer filled with 0xA5 (whole, and in two parts
     * at a multiple of nr through the raw, bias and packed offsets). */
    size_t len, rhs_len, rhsp_len;
    uint8_t* rhs = read_file(rhs_f, &rhs_len);
    uint8_t* bias = strcmp(bias_f, "-") == 0 ? NULL : read_file(bias_f, &len);
    uint8_t* rhsp_want = read_file(rhsp_f, &rhsp_len);
    const int nxk = strcmp(layout, "nxk") == 0;
    const size_t rsz = rp->size(n, k);
    CHECK_EQ("rhs packed size", rsz, rhsp_size);
    CHECK_EQ("rhs packed size (file)", rhsp_len, rhsp_size);
    CHECK_EQ("rhs packed offset at nr", rp->offset(nr, k), rhsp_off_nr);
    CHECK_EQ("rhs packed offset at nr = tile stride", rp->offset(nr, k), rhsp_tile);
    CHECK_EQ("rhs packed stride", rp->stride ? rp->stride(k) : SIZE_MAX, stride_fn);
    CHECK_EQ("rhs packer n_step", rp->n_step(), nr);
    CHECK_EQ("rhs bias offset at nr", rp->bias_off(nr), nr * rp->bias_bytes);
    CHECK_EQ("rhs raw offset at nr", nxk ? rp->raw_nxk(nr, rhs_stride) : rp->raw_kxn(nr),
             nxk ? nr * rhs_stride : nr * rp->src_bytes);
    if (rsz == rhsp_len && failures == failures_before) {
        uint8_t* mask = parse_mask(t[21], rsz);
        uint8_t* rhsp = malloc(rsz + 64);
        memset(rhsp, 0xA5, rsz + 64);
        rp->run(1, n, k, nr, kr, sr, rhs_stride, rhs, bias, NULL, rhsp, 0, NULL);
        check_float_rhs("packed RHS", rhsp, rhsp_want, mask, rsz, kleidiai);
        const size_t n0 = n / 2 / nr * nr;
        if (n0 > 0) {
            memset(rhsp, 0xA5, rsz + 64);
            rp->run(1, n0, k, nr, kr, sr, rhs_stride, rhs, bias, NULL, rhsp, 0, NULL);
            const size_t raw = nxk ? rp->raw_nxk(n0, rhs_stride) : rp->raw_kxn(n0);
            rp->run(1, n - n0, k, nr, kr, sr, rhs_stride, rhs + raw, bias ? bias + rp->bias_off(n0) : NULL, NULL,
                    rhsp + rp->offset(n0, k), 0, NULL);
            check_float_rhs("packed RHS (two calls at n_idx = n0)", rhsp, rhsp_want, mask, rsz, kleidiai);
        }
        free(rhsp);
        free(mask);
    }

    /* LHS: unpacked f32/f16 rows, or packed by the case's LHS packer (one row per call for the
     * 1x4 packer, as KleidiAI requires; also in two calls for the 8x4 packers). */
    size_t lhs_len, lhsp_len = 0;
    uint8_t* lhs = read_file(lhs_f, &lhs_len);
    CHECK_EQ("lhs file size", lhs_len, m * lstride);
    uint8_t* lhsp_want = unpacked ? NULL : read_file(lhsp_f, &lhsp_len);
    size_t lhs_row = 0; /* bytes per packed row of the 1x4 packer */
    if (!unpacked) {
        const size_t lsz = lp->size(m, k, mr, kr, sr);
        CHECK_EQ("lhs packed size", lsz, lhsp_size);
        CHECK_EQ("lhs packed size (file)", lhsp_len, lhsp_size);
        CHECK_EQ("lhs packer m_step", lp->m_step(mr), mr);
        CHECK_EQ("lhs row offset at mr", lp->lhs_off(mr, lstride), mr * lstride);
        if (lhsp_off_mr != SIZE_MAX) CHECK_EQ("lhs packed offset at mr", lp->packed_off(mr, k, mr, kr, sr), lhsp_off_mr);
        lhs_row = lp->size(1, k, mr, kr, sr);
        uint8_t* lhsp = calloc(1, lsz + 1);
        if (m1) {
            for (size_t i = 0; i < m; i++)
                lp->run(1, k, mr, kr, sr, 0, lhs + lp->lhs_off(i, lstride), lstride, lhsp + i * lhs_row);
        } else {
            lp->run(m, k, mr, kr, sr, 0, lhs, lstride, lhsp);
        }
        if (lsz == lhsp_len) check_bytes("packed LHS", lhsp, lhsp_want, lsz);
        const size_t m0 = m / 2 / mr * mr;
        if (!m1 && m0 > 0 && lsz == lhsp_len) {
            memset(lhsp, 0, lsz);
            lp->run(m0, k, mr, kr, sr, 0, lhs, lstride, lhsp);
            lp->run(m - m0, k, mr, kr, sr, 0, lhs + lp->lhs_off(m0, lstride), lstride,
                    lhsp + lp->packed_off(m0, k, mr, kr, sr));
            check_bytes("packed LHS (two calls at m_idx = m0)", lhsp, lhsp_want, lsz);
        }
        free(lhsp);
    }

    /* Matmul on the golden packed buffers, both clamps, whole (one row per call for the 1x36
     * kernel) and as an m_step x n_step grid; dst rows padded by 3 elements and a 64-byte canary
     * on each side. The grid reads the unpacked LHS with a row stride padded by 5 elements. */
    const int can_run = run_all || strcmp(isa, "neon") == 0 || (strcmp(isa, "fp16") == 0 && has_fp16) ||
                        (strcmp(isa, "bf16") == 0 && has_bf16) || (strcmp(isa, "bf16+fp16") == 0 && has_bf16 && has_fp16);
    if (can_run) float_runs++;
    else float_skipped++;
    const size_t pad = 3, stride = esz * (n + pad), canary = 64, row = esz * n;
    const size_t lstride2 = lstride + 5 * (unpacked ? esz : 0);
    uint8_t* lhs2 = NULL;
    if (unpacked) {
        lhs2 = calloc(1, m * lstride2 + 1);
        for (size_t r = 0; r < m; r++) memcpy(lhs2 + r * lstride2, lhs + r * lstride, lstride);
    }
    for (int c = 0; c < 2 && can_run && failures == failures_before; c++) {
        size_t want_len;
        uint8_t* want = read_file(c == 0 ? t[33] : t[34], &want_len);
        CHECK_EQ("dst file size", want_len, m * row);
        if (corrupt == 1 && c == 1) want[0] ^= 1;
        const float lo = bits_to_f32(c == 0 ? t[35] : t[37]), hi = bits_to_f32(c == 0 ? t[36] : t[38]);
        uint8_t* buf = malloc(canary + m * stride + canary);
        uint8_t* dst = buf + canary;
        uint8_t* got_rows = malloc(m * row);
        for (int grid = 0; grid < 2; grid++) {
            memset(buf, 0xA5, canary + m * stride + canary);
            const uint8_t* l = unpacked ? (grid ? lhs2 : lhs) : lhsp_want;
            const size_t ls = unpacked ? (grid ? lstride2 : lstride) : 0;
            const size_t tm = grid || m1 ? ms : m, tn = grid ? ns : n;
            for (size_t m0 = 0; m0 < m; m0 += tm) {
                for (size_t n0 = 0; n0 < n; n0 += tn) {
                    const size_t mm = m - m0 < tm ? m - m0 : tm, nn = n - n0 < tn ? n - n0 : tn;
                    /* The 1x36 kernel's get_lhs_packed_offset takes m_idx = 0 only (KleidiAI):
                     * rows are lhs_row bytes apart. */
                    const size_t loff = unpacked ? fk_lhs_off(&kn, m0, ls) : m1 ? m0 * lhs_row : fk_lhs_off(&kn, m0, k);
                    fk_run(&kn, mm, nn, k, l + loff, ls, rhsp_want + fk_rhs_off(&kn, n0, k),
                           dst + fk_dst_off(&kn, m0, n0, stride), stride, lo, hi);
                }
            }
            int pad_ok = 1, canary_ok = 1;
            for (size_t r = 0; r < m; r++) {
                memcpy(got_rows + r * row, dst + r * stride, row);
                for (size_t b = row; b < stride; b++)
                    if (dst[r * stride + b] != 0xA5) pad_ok = 0;
            }
            for (size_t b = 0; b < canary; b++)
                if (buf[b] != 0xA5 || dst[m * stride + b] != 0xA5) canary_ok = 0;
            char what[64];
            snprintf(what, sizeof what, "dst (%s clamp, %s)", c == 0 ? "none" : "tight",
                     grid ? "m_step x n_step grid" : "whole");
            check_bytes(what, got_rows, want, m * row);
            CHECK_EQ("row padding untouched", pad_ok, 1);
            CHECK_EQ("canaries before and after dst untouched", canary_ok, 1);
        }
        free(buf);
        free(got_rows);
        free(want);
    }
    free(lhs2);
    free(lhs);
    free(lhsp_want);
    free(rhs);
    free(bias);
    free(rhsp_want);
}

int main(void) {
    static char line[1 << 16];
    size_t lines = 0, seen_mask[N_FAMILIES] = {0}, runs = 0, skipped_runs = 0;
    const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
    const int has_dotprod = (hwcap & (1UL << 20)) != 0; /* HWCAP_ASIMDDP */
    const int has_i8mm = (hwcap2 & (1UL << 13)) != 0;   /* HWCAP2_I8MM */
    const char* env = getenv("KAI_COMPAT_RUN_ALL");
    const int run_all = env != NULL && strcmp(env, "1") == 0;
    const int has_fp16 = (hwcap & (1UL << 10)) != 0; /* HWCAP_ASIMDHP */
    const int has_bf16 = (hwcap2 & (1UL << 14)) != 0; /* HWCAP2_BF16 */
    const char* kenv = getenv("KAI_COMPAT_KLEIDIAI");
    const int kleidiai = kenv != NULL && strcmp(kenv, "1") == 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        char first[64];
        if (sscanf(line, "%63s", first) == 1 && is_float_family(first)) {
            float_line(line, run_all, has_fp16, has_bf16, kleidiai);
            continue;
        }
        char fam[64], name[128], layout[8], rhs_f[512], scale_f[512], zero_f[512], bias_f[512], lhs_f[512],
            lhsp_f[512], rhsp_f[512], dn_f[512], dt_f[512], cmin_n[16], cmax_n[16], cmin_t[16], cmax_t[16], isa[16],
            lut_s[64];
        size_t m, n, k, bl, zp, rhs_stride, scale_stride, mr, nr, kr, sr, lhsp_size, lhsp_off_mr, rhsp_size,
            rhsp_tile, rhsp_off_nr, m_step, n_step, m1, lhs_off_ms, rhs_off_ns, dst_off, dst_size, corrupt;
        int got = sscanf(line,
                         "%63s %127s %zu %zu %zu %zu %7s %zu %511s %zu %511s %zu %511s %511s %511s %zu %zu %zu %zu %511s "
                         "%zu %zu %511s %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %511s %511s %15s %15s %15s %15s %zu "
                         "%15s %63s",
                         fam, name, &m, &n, &k, &bl, layout, &zp, rhs_f, &rhs_stride, scale_f, &scale_stride, zero_f,
                         bias_f, lhs_f, &mr, &nr, &kr, &sr, lhsp_f, &lhsp_size, &lhsp_off_mr, rhsp_f, &rhsp_size,
                         &rhsp_tile, &rhsp_off_nr, &m_step, &n_step, &m1, &lhs_off_ms, &rhs_off_ns, &dst_off,
                         &dst_size, dn_f, dt_f, cmin_n, cmax_n, cmin_t, cmax_t, &corrupt, isa, lut_s);
        if (got != 42) {
            fprintf(stderr, "bad plan line (%d fields): %s", got, line);
            return 2;
        }
        lines++;
        /* The 2-bit family's look-up table: NULL (KleidiAI's default) or the case's 4 entries. */
        int32_t lut_v[4];
        const int32_t* lut = NULL;
        if (strcmp(lut_s, "-") != 0) {
            if (sscanf(lut_s, "%d,%d,%d,%d", &lut_v[0], &lut_v[1], &lut_v[2], &lut_v[3]) != 4) {
                fprintf(stderr, "bad look-up table in the plan: %s\n", lut_s);
                return 2;
            }
            lut = lut_v;
        }
        const size_t failures_before = failures;
        snprintf(cur, sizeof cur, "%s %s m%zu n%zu k%zu bl%zu %s", fam, name, m, n, k, bl, layout);
        struct kernel kn;
        if (!find_kernel(fam, name, &kn)) {
            fprintf(stderr, "FAIL %s: kernel not in the table\n", cur);
            failures++;
            continue;
        }
        seen_mask[kn.fam] |= (size_t)1 << kn.index;
        const struct family_info* fi = &family_info[kn.fam];
        const size_t esz = fi->dst_bytes;

        if (corrupt == 2) dst_size++; /* --corrupt: a wrong getter expectation, checked on any CPU */
        /* Kernel getters. */
        const size_t k_mr_ = k_mr(&kn), k_nr_ = k_nr(&kn), k_kr_ = k_kr(&kn), k_sr_ = k_sr(&kn);
        const size_t ms = k_m_step(&kn), ns = k_n_step(&kn);
        CHECK_EQ("get_m_step", ms, m_step);
        CHECK_EQ("get_n_step", ns, n_step);
        CHECK_EQ("get_mr", k_mr_, mr);
        CHECK_EQ("get_nr", k_nr_, nr);
        CHECK_EQ("get_kr", k_kr_, kr);
        CHECK_EQ("get_sr", k_sr_, sr);
        CHECK_EQ("get_lhs_packed_offset(m_step)", k_lhs_off(&kn, m_step, k, bl), lhs_off_ms);
        CHECK_EQ("get_rhs_packed_offset(n_step)", k_rhs_off(&kn, n_step, k, bl), rhs_off_ns);
        CHECK_EQ("get_dst_offset(m_step, n_step)", k_dst_off(&kn, m_step, n_step, esz * n), dst_off);
        CHECK_EQ("get_dst_size", k_dst_size(&kn, m, n), dst_size);
        if (failures != failures_before) {
            /* Do not pack with wrong parameters. */
            continue;
        }

        /* LHS: quantize and pack with the kernel's parameters (f32, f16 or bf16 rows of k values). */
        size_t len, lhs_len, lhsp_len, rhs_len, rhsp_len;
        const enum lhs_kind lk = fi->lhs;
        const size_t lstride = lhs_elem(lk) * k;
        void* lhs = read_file(lhs_f, &lhs_len);
        uint8_t* lhsp_want = read_file(lhsp_f, &lhsp_len);
        CHECK_EQ("lhs file size", lhs_len, m * lstride);
        const size_t lsz = lhs_size(lk, m, k, bl, mr, kr, sr);
        CHECK_EQ("lhs packed size", lsz, lhsp_size);
        CHECK_EQ("lhs packed size (file)", lhsp_len, lhsp_size);
        CHECK_EQ("lhs packed offset at mr", lhs_packed_off(lk, mr, k, bl, mr, kr, sr), lhsp_off_mr);
        CHECK_EQ("lhs packer m_step", lhs_m_step(lk, mr), mr);
        CHECK_EQ("lhs row offset at mr", lhs_row_off(lk, mr, lstride), mr * lstride);
        /* KleidiAI's f16 packer with mr = 4, kr / sr = 4 borrows zero points (test_util.h). */
        const int borrowed = lk == LHS_F16 && mr == 4 && kr / sr == 4;
        uint8_t* lhsp = calloc(1, lsz + 1);
        lhs_pack(lk, m, k, bl, mr, kr, sr, 0, lhs, lstride, lhsp);
        if (lsz == lhsp_len) check_lhs("packed LHS", lhsp, lhsp_want, lsz, borrowed, m, k);
        /* The same, packed in two calls: rows [0, m1) then [m1, m) with m_idx_start = m1. The f32
         * qai8dxp packer starts anywhere; the qsi8d32p, f16 and bf16 packers at a multiple of mr
         * (KleidiAI's f16 and bf16 packers corrupt the buffer otherwise). */
        size_t m_split = lk == LHS_F32 ? m / 2 : m / 2 / mr * mr;
        if (m_split > 0) {
            memset(lhsp, 0, lsz);
            lhs_pack(lk, m_split, k, bl, mr, kr, sr, 0, lhs, lstride, lhsp);
            lhs_pack(lk, m - m_split, k, bl, mr, kr, sr, m_split, lhs, lstride,
                     lhsp + lhs_packed_off(lk, m_split, k, bl, mr, kr, sr));
            if (lsz == lhsp_len) check_lhs("packed LHS (two calls, m_idx_start)", lhsp, lhsp_want, lsz, borrowed, m, k);
        }

        /* RHS: pack the raw weights with the packer a KleidiAI user picks for the layout. */
        uint8_t* rhs = read_file(rhs_f, &rhs_len);
        float* bias = strcmp(bias_f, "-") == 0 ? NULL : read_file(bias_f, &len);
        void* scale = strcmp(scale_f, "-") == 0 ? NULL : read_file(scale_f, &len);
        uint8_t* rhsp_want = read_file(rhsp_f, &rhsp_len);
        const int nxk = strcmp(layout, "nxk") == 0;
        size_t rsz, rstride, roff;
        uint8_t* rhsp;
        if (fi->rhs == RHS_QSI4CXP) {
            struct kai_rhs_pack_qs4cxs1s0_param params = {.lhs_zero_point = 1, .rhs_zero_point = (uint8_t)zp};
            if (nxk) {
                rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(n, k, nr, kr, sr);
                rstride = kai_get_rhs_packed_stride_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(k, nr, kr, sr);
                roff = kai_get_rhs_packed_offset_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(nr, k, nr, kr, sr);
                rhsp = calloc(1, rsz + 1);
                kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, n, k, nr, kr, sr, rhs, bias, scale, rhsp, 0, &params);
            } else {
                rsz = kai_get_rhs_packed_size_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(n, k, nr, kr, sr);
                rstride = kai_get_rhs_packed_stride_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(k, nr, kr, sr);
                roff = kai_get_rhs_packed_offset_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(nr, k, nr, kr, sr);
                rhsp = calloc(1, rsz + 1);
                kai_run_rhs_pack_kxn_qsi4cxp_qs4cxs1s0(1, n, k, nr, kr, sr, rhs, bias, scale, rhsp, 0, &params);
            }
        } else if (fi->rhs == RHS_QSI8CXP) {
            /* KleidiAI multiplies the row sums by lhs_zero_point (1 for the qai8dxp LHS) and
             * ignores scale_multiplier. */
            struct kai_rhs_pack_qsi8cx_params params = {.lhs_zero_point = 1, .scale_multiplier = 1.0f};
            if (nxk) {
                rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(n, k, nr, kr, sr);
                rstride = kai_get_rhs_packed_stride_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(k, nr, kr, sr);
                roff = kai_get_rhs_packed_offset_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(nr, k, nr, kr, sr);
                rhsp = calloc(1, rsz + 1);
                kai_run_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(1, n, k, nr, kr, sr, (const int8_t*)rhs, bias, scale, rhsp, 0,
                                                         &params);
            } else {
                rsz = kai_get_rhs_packed_size_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(n, k, nr, kr, sr);
                rstride = kai_get_rhs_packed_stride_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(k, nr, kr, sr);
                roff = kai_get_rhs_packed_offset_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(nr, k, nr, kr, sr);
                rhsp = calloc(1, rsz + 1);
                kai_run_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(1, n, k, nr, kr, sr, (const int8_t*)rhs, bias, scale, rhsp, 0,
                                                         &params);
            }
            /* The raw-weight offsets: a row of k values (NxK), one byte per channel (KxN). */
            CHECK_EQ("rhs raw offset at nr (nxk)", kai_get_rhs_offset_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(nr, k), nr * k);
            CHECK_EQ("rhs raw offset at nr (kxn)", kai_get_rhs_offset_rhs_pack_kxn_qsi8cxp_qsi8cx_neon(nr, n), nr);
            CHECK_EQ("rhs n_step", kai_get_n_step_rhs_pack_nxk_qsi8cxp_qsi8cx_neon(nr), nr);
        } else if (fi->rhs == RHS_QSI4C32P) {
            if (nxk) {
                struct kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0_params params = {
                    .lhs_zero_point = 1, .rhs_zero_point = 8, .scale_dt = kai_dt_bf16};
                rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(n, k, nr, kr, sr, bl, kai_dt_bf16);
                rstride = kai_get_rhs_packed_stride_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(k, nr, kr, sr, bl, kai_dt_bf16);
                roff = kai_get_rhs_packed_offset_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(nr, k, nr, kr, sr, bl, kai_dt_bf16);
                rhsp = calloc(1, rsz + 1);
                kai_run_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0(1, n, k, nr, kr, sr, bl, rhs, rhs_stride, bias, scale,
                                                           scale_stride, rhsp, 0, &params);
            } else {
                struct kai_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0_params params = {
                    .lhs_zero_point = 1, .rhs_zero_point = 8, .scale_dt = kai_dt_bf16};
                rsz = kai_get_rhs_packed_size_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(n, k, nr, kr, sr, bl, kai_dt_bf16);
                rstride = kai_get_rhs_packed_stride_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(k, nr, kr, sr, bl, kai_dt_bf16);
                roff = kai_get_rhs_packed_offset_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(nr, k, nr, kr, sr, bl, kai_dt_bf16);
                rhsp = calloc(1, rsz + 1);
                kai_run_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0(1, n, k, nr, kr, sr, bl, rhs, rhs_stride, bias, scale,
                                                           scale_stride, rhsp, 0, &params);
            }
        } else if (fi->rhs == RHS_QAI4C32P) {
            /* NxK only: n rows of k/2 bytes (s0s1 nibbles), f32 offsets (zero) and scales per block.
             * The packer has no stride getter: the offset of the second tile is the tile stride. */
            struct kai_rhs_pack_nxk_qai4c32p_params params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
            void* zero = read_file(zero_f, &len);
            CHECK_EQ("zero file size", len, n * (k / bl) * sizeof(float));
            rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(n, k, nr, kr, bl);
            rstride = kai_get_rhs_packed_offset_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(nr, k, nr, kr, bl);
            roff = rstride;
            rhsp = calloc(1, rsz + 1);
            kai_run_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(1, n, k, nr, kr, sr, bl, rhs, zero, bias, scale,
                                                                        rhsp, 0, &params);
            CHECK_EQ("rhs raw offset at nr", kai_get_rhs_offset_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon(nr, k / 2),
                     nr * (k / 2));
            free(zero);
        } else if (fi->rhs == RHS_QSU2CXP) {
            /* NxK only: n rows of k/4 bytes (four 2-bit codes each), per-channel f32 scales, the
             * case's look-up table (NULL: the default) and zero points 1 and 2. */
            struct kai_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon_params params = {.lhs_zero_point = 1,
                                                                                    .rhs_zero_point = 2};
            rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(n, k, nr, kr, sr);
            rstride = kai_get_rhs_packed_stride_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(k, nr, kr, sr);
            roff = kai_get_rhs_packed_offset_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(nr, k, nr, kr, sr);
            rhsp = calloc(1, rsz + 1);
            kai_run_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(1, n, k, nr, kr, sr, rhs, bias, scale, rhsp, 0, &params,
                                                                lut);
            CHECK_EQ("rhs raw offset at nr", kai_get_rhs_offset_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(nr, k / 4),
                     nr * (k / 4));
            CHECK_EQ("rhs n_step", kai_get_n_step_rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon(nr), nr);
        } else {
            struct kai_rhs_pack_qs4cxs1s0_param params = {.lhs_zero_point = 1, .rhs_zero_point = 8};
            rsz = kai_get_rhs_packed_size_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0(n, k, nr, kr, bl);
            rstride = kai_get_rhs_packed_stride_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0(k, nr, kr, bl);
            roff = kai_get_rhs_packed_offset_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0(nr, k, nr, kr, bl);
            rhsp = calloc(1, rsz + 1);
            kai_run_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0(1, n, k, nr, kr, sr, bl, rhs, NULL, rhsp, 0, &params);
        }
        CHECK_EQ("rhs packed size", rsz, rhsp_size);
        CHECK_EQ("rhs packed size (file)", rhsp_len, rhsp_size);
        CHECK_EQ("rhs packed stride", rstride, rhsp_tile);
        CHECK_EQ("rhs packed offset at nr", roff, rhsp_off_nr);
        if (rsz == rhsp_len) check_bytes("packed RHS", rhsp, rhsp_want, rsz);

        /* Matmul, on the golden packed buffers (KleidiAI's bytes), with both clamps; the output
         * (f32, or f16/bf16 bit patterns) compared bit for bit. The rows have 3 elements of
         * padding and the buffer a 64-byte canary on each side: neither may change. */
        const int can_run = run_all || (strcmp(isa, "dotprod") == 0 && has_dotprod) || (strcmp(isa, "i8mm") == 0 && has_i8mm);
        if (can_run) runs++;
        else skipped_runs++;
        const size_t pad = 3, stride = esz * (n + pad), canary = 64, row = esz * n;
        for (int c = 0; c < 2 && can_run; c++) {
            size_t want_len;
            uint8_t* want = read_file(c == 0 ? dn_f : dt_f, &want_len);
            CHECK_EQ("dst file size", want_len, m * row);
            if (corrupt == 1 && c == 1) want[0] ^= 1;
            const float lo = bits_to_f32(c == 0 ? cmin_n : cmin_t), hi = bits_to_f32(c == 0 ? cmax_n : cmax_t);
            uint8_t* buf = malloc(canary + m * stride + canary);
            uint8_t* dst = buf + canary;
            uint8_t* got_rows = malloc(m * row);
            for (int grid = 0; grid < 2; grid++) {
                memset(buf, 0xA5, canary + m * stride + canary);
                if (grid == 0 && !m1)
                    k_run(&kn, m, n, k, bl, lhsp_want, rhsp_want, dst, stride, lo, hi, lut);
                else if (grid == 0)
                    run_grid(&kn, m, n, k, bl, 1, n, lhsp_want, rhsp_want, dst, stride, lo, hi, lut);
                else
                    run_grid(&kn, m, n, k, bl, ms, ns, lhsp_want, rhsp_want, dst, stride, lo, hi, lut);
                int pad_ok = 1, canary_ok = 1;
                for (size_t r = 0; r < m; r++) {
                    memcpy(got_rows + r * row, dst + r * stride, row);
                    for (size_t b = row; b < stride; b++)
                        if (dst[r * stride + b] != 0xA5) pad_ok = 0;
                }
                for (size_t b = 0; b < canary; b++)
                    if (buf[b] != 0xA5 || dst[m * stride + b] != 0xA5) canary_ok = 0;
                char what[64];
                snprintf(what, sizeof what, "dst (%s clamp, %s)", c == 0 ? "none" : "tight",
                         grid ? "m_step x n_step grid" : "whole");
                check_bytes(what, got_rows, want, m * row);
                CHECK_EQ("row padding untouched", pad_ok, 1);
                CHECK_EQ("canaries before and after dst untouched", canary_ok, 1);
            }
            free(buf);
            free(got_rows);
            free(want);
        }
        free(lhs);
        free(lhsp);
        free(lhsp_want);
        free(rhs);
        free(bias);
        free(scale);
        free(rhsp);
        free(rhsp_want);
    }
    size_t all = 0, seen = 0;
    for (int f = 0; f < N_FAMILIES; f++) {
        const size_t s = (size_t)__builtin_popcountll(seen_mask[f]);
        if (s != family_info[f].kernels) {
            fprintf(stderr, "FAIL: %s: %zu of %zu kernels exercised\n", family_info[f].name, s, family_info[f].kernels);
        }
        all += family_info[f].kernels;
        seen += s;
    }
    for (int f = 0; f < N_FLOAT_FAMILIES; f++) {
        const size_t s = (size_t)__builtin_popcountll(float_seen[f]);
        if (s != float_info[f].kernels) {
            fprintf(stderr, "FAIL: %s: %zu of %zu kernels exercised\n", float_info[f].name, s, float_info[f].kernels);
        }
        all += float_info[f].kernels;
        seen += s;
    }
    CHECK_EQ("kernels exercised", seen, all);
    printf("kai_compat: float families (fp16=%d bf16=%d): %zu plan lines, %zu run (%zu skipped: feature missing)\n",
           has_fp16, has_bf16, float_lines, float_runs, float_skipped);
    printf("kai_compat: cpu dotprod=%d i8mm=%d; %zu plan lines, %zu of %zu KleidiAI kernels (%d families), %zu lines "
           "run (%zu skipped: ISA missing), %zu checks, %zu failures\n",
           has_dotprod, has_i8mm, lines + float_lines, seen, all, N_FAMILIES + N_FLOAT_FAMILIES, runs + float_runs,
           skipped_runs + float_skipped, checks, failures);
    printf("kai_compat: %zu packed f16 LHS (mr 4, kr/sr 4) differ from KleidiAI's in %zu bytes, each by the other "
           "row's zero point KleidiAI adds there (qgemm adds the row's own); every other packed byte is KleidiAI's\n",
           lhs_borrowed_packs, lhs_borrowed_bytes);
    return failures == 0 && lines + float_lines > 0 ? 0 : 1;
}
