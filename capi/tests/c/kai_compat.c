/* Layer-2 test: KleidiAI link compatibility.
 *
 * Written only against KleidiAI's documented API (its headers, its function names, its parameter
 * structs, its per-family `_ukernel` interface structs), so the same file builds unchanged against
 * KleidiAI itself. For every (golden case, kernel) line of the plan read on stdin (kai_plan.py), it
 * checks bit for bit against KleidiAI's recorded output:
 *   - the kernel getters (m_step, n_step, mr, nr, kr, sr, offsets at one step, dst size),
 *   - the packer getters (packed sizes, offsets, RHS stride) and the packed LHS and RHS bytes,
 *   - dst with the `none` and `tight` clamps, run on the whole output with a padded row stride
 *     (padding must stay untouched), and on a grid of m_step x n_step sub-rectangles addressed
 *     through the kernel's offset getters, exactly as a KleidiAI user splits work between threads.
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
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qsi8d32p_f32.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_kxn_qsi8cxp_qsi8cx_neon.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32p_qsu4c32s1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi8cxp_qsi8cx_neon.h"
#include "kai_kernels.h"
#include "test_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

enum family { F_CXP, F_C32P, F_D32P, F_I8CXP, N_FAMILIES };

/* One kernel of any family, seen through its family's interface struct. */
struct kernel {
    enum family fam;
    const struct kai_matmul_clamp_f32_qai8dxp_qsi4cxp_ukernel* cxp;
    const struct kai_matmul_clamp_f32_qai8dxp_qsi4c32p_ukernel* c32p;
    const struct kai_matmul_clamp_f32_qsi8d32p_qsi4c32p_ukernel* d32p;
    const struct kai_matmul_clamp_f32_qai8dxp_qsi8cxp_ukernel* i8cxp;
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

/* `call` (e.g. `get_mr()`) on the interface struct of `k`'s family: for the functions whose
 * parameter lists every family shares. */
#define ANY_FAMILY(k, call)                 \
    switch ((k)->fam) {                     \
    case F_CXP: return (k)->cxp->call;      \
    case F_C32P: return (k)->c32p->call;    \
    case F_D32P: return (k)->d32p->call;    \
    default: return (k)->i8cxp->call;       \
    }

static size_t k_m_step(const struct kernel* k) { ANY_FAMILY(k, get_m_step()) }
static size_t k_n_step(const struct kernel* k) { ANY_FAMILY(k, get_n_step()) }
static size_t k_mr(const struct kernel* k) { ANY_FAMILY(k, get_mr()) }
static size_t k_nr(const struct kernel* k) { ANY_FAMILY(k, get_nr()) }
static size_t k_kr(const struct kernel* k) { ANY_FAMILY(k, get_kr()) }
static size_t k_sr(const struct kernel* k) { ANY_FAMILY(k, get_sr()) }
static size_t k_dst_off(const struct kernel* k, size_t m_idx, size_t n_idx, size_t stride) {
    ANY_FAMILY(k, get_dst_offset(m_idx, n_idx, stride))
}
static size_t k_dst_size(const struct kernel* k, size_t m, size_t n) { ANY_FAMILY(k, get_dst_size(m, n)) }

/* The functions whose parameter lists differ: the per-channel families (cxp, i8cxp) take no bl,
 * c32p takes bl for the RHS offset and run, d32p for both offsets and run. */
static size_t k_lhs_off(const struct kernel* k, size_t m_idx, size_t kk, size_t bl) {
    switch (k->fam) {
    case F_CXP: return k->cxp->get_lhs_packed_offset(m_idx, kk);
    case F_C32P: return k->c32p->get_lhs_packed_offset(m_idx, kk);
    case F_D32P: return k->d32p->get_lhs_packed_offset(m_idx, kk, bl);
    default: return k->i8cxp->get_lhs_packed_offset(m_idx, kk);
    }
}
static size_t k_rhs_off(const struct kernel* k, size_t n_idx, size_t kk, size_t bl) {
    switch (k->fam) {
    case F_CXP: return k->cxp->get_rhs_packed_offset(n_idx, kk);
    case F_C32P: return k->c32p->get_rhs_packed_offset(n_idx, kk, bl);
    case F_D32P: return k->d32p->get_rhs_packed_offset(n_idx, kk, bl);
    default: return k->i8cxp->get_rhs_packed_offset(n_idx, kk);
    }
}
static void k_run(const struct kernel* k, size_t m, size_t n, size_t kk, size_t bl, const void* lhs_p,
                  const void* rhs_p, float* dst, size_t stride, float lo, float hi) {
    switch (k->fam) {
    case F_CXP: k->cxp->run_matmul(m, n, kk, lhs_p, rhs_p, dst, stride, sizeof(float), lo, hi); break;
    case F_C32P: k->c32p->run_matmul(m, n, kk, bl, lhs_p, rhs_p, dst, stride, sizeof(float), lo, hi); break;
    case F_D32P: k->d32p->run_matmul(m, n, kk, bl, lhs_p, rhs_p, dst, stride, sizeof(float), lo, hi); break;
    default: k->i8cxp->run_matmul(m, n, kk, lhs_p, rhs_p, dst, stride, sizeof(float), lo, hi); break;
    }
}

/* The kernel tables of kai_kernels.h, by family. */
#define FIND(table, field, family_id)                                                                   \
    for (size_t i = 0; i < COUNT(table); i++)                                                           \
        if (strcmp(name, table[i].name) == 0) return (out->fam = family_id, out->field = &table[i].uk, out->index = i), 1;
static const size_t family_sizes[N_FAMILIES] = {COUNT(qai8dxp_qsi4cxp_kernels), COUNT(qai8dxp_qsi4c32p_kernels),
                                                COUNT(qsi8d32p_qsi4c32p_kernels), COUNT(qai8dxp_qsi8cxp_kernels)};

static int find_kernel(const char* fam, const char* name, struct kernel* out) {
    memset(out, 0, sizeof *out);
    if (strcmp(fam, "qai8dxp_qsi4cxp") == 0) {
        FIND(qai8dxp_qsi4cxp_kernels, cxp, F_CXP)
    } else if (strcmp(fam, "qai8dxp_qsi4c32p") == 0) {
        FIND(qai8dxp_qsi4c32p_kernels, c32p, F_C32P)
    } else if (strcmp(fam, "qsi8d32p_qsi4c32p") == 0) {
        FIND(qsi8d32p_qsi4c32p_kernels, d32p, F_D32P)
    } else if (strcmp(fam, "qai8dxp_qsi8cxp") == 0) {
        FIND(qai8dxp_qsi8cxp_kernels, i8cxp, F_I8CXP)
    }
    return 0;
}

/* Runs the kernel over [0,m) x [0,n) split into tiles of tm x tn rows/columns (tm, tn multiples of
 * m_step, n_step), addressing each tile through the offset getters. `one_row`: call per row. */
static void run_grid(const struct kernel* kn, size_t m, size_t n, size_t k, size_t bl, size_t tm, size_t tn,
                     const uint8_t* lhs_p, const uint8_t* rhs_p, float* dst, size_t stride, float lo, float hi) {
    for (size_t m0 = 0; m0 < m; m0 += tm) {
        for (size_t n0 = 0; n0 < n; n0 += tn) {
            size_t mm = m - m0 < tm ? m - m0 : tm, nn = n - n0 < tn ? n - n0 : tn;
            size_t off = k_dst_off(kn, m0, n0, stride);
            k_run(kn, mm, nn, k, bl, lhs_p + k_lhs_off(kn, m0, k, bl), rhs_p + k_rhs_off(kn, n0, k, bl),
                  (float*)((uint8_t*)dst + off), stride, lo, hi);
        }
    }
}

int main(void) {
    char line[8192];
    size_t lines = 0, seen_mask[N_FAMILIES] = {0}, runs = 0, skipped_runs = 0;
    const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
    const int has_dotprod = (hwcap & (1UL << 20)) != 0; /* HWCAP_ASIMDDP */
    const int has_i8mm = (hwcap2 & (1UL << 13)) != 0;   /* HWCAP2_I8MM */
    const char* env = getenv("KAI_COMPAT_RUN_ALL");
    const int run_all = env != NULL && strcmp(env, "1") == 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        char fam[64], name[128], layout[8], rhs_f[512], scale_f[512], bias_f[512], lhs_f[512], lhsp_f[512],
            rhsp_f[512], dn_f[512], dt_f[512], cmin_n[16], cmax_n[16], cmin_t[16], cmax_t[16], isa[16];
        size_t m, n, k, bl, zp, rhs_stride, scale_stride, mr, nr, kr, sr, lhsp_size, lhsp_off_mr, rhsp_size,
            rhsp_tile, rhsp_off_nr, m_step, n_step, m1, lhs_off_ms, rhs_off_ns, dst_off, dst_size, corrupt;
        int got = sscanf(line,
                         "%63s %127s %zu %zu %zu %zu %7s %zu %511s %zu %511s %zu %511s %511s %zu %zu %zu %zu %511s %zu "
                         "%zu %511s %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %511s %511s %15s %15s %15s %15s %zu %15s",
                         fam, name, &m, &n, &k, &bl, layout, &zp, rhs_f, &rhs_stride, scale_f, &scale_stride, bias_f,
                         lhs_f, &mr, &nr, &kr, &sr, lhsp_f, &lhsp_size, &lhsp_off_mr, rhsp_f, &rhsp_size, &rhsp_tile,
                         &rhsp_off_nr, &m_step, &n_step, &m1, &lhs_off_ms, &rhs_off_ns, &dst_off, &dst_size, dn_f,
                         dt_f, cmin_n, cmax_n, cmin_t, cmax_t, &corrupt, isa);
        if (got != 40) {
            fprintf(stderr, "bad plan line (%d fields): %s", got, line);
            return 2;
        }
        lines++;
        const size_t failures_before = failures;
        snprintf(cur, sizeof cur, "%s m%zu n%zu k%zu bl%zu %s", name, m, n, k, bl, layout);
        struct kernel kn;
        if (!find_kernel(fam, name, &kn)) {
            fprintf(stderr, "FAIL %s: kernel not in the table\n", cur);
            failures++;
            continue;
        }
        seen_mask[kn.fam] |= (size_t)1 << kn.index;

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
        CHECK_EQ("get_dst_offset(m_step, n_step)", k_dst_off(&kn, m_step, n_step, 4 * n), dst_off);
        CHECK_EQ("get_dst_size", k_dst_size(&kn, m, n), dst_size);
        if (failures != failures_before) {
            /* Do not pack with wrong parameters. */
            continue;
        }

        /* LHS: quantize and pack with the kernel's parameters. */
        size_t len, lhs_len, lhsp_len, rhs_len, rhsp_len;
        float* lhs = read_file(lhs_f, &lhs_len);
        uint8_t* lhsp_want = read_file(lhsp_f, &lhsp_len);
        size_t lsz, loff;
        if (kn.fam == F_D32P) {
            lsz = kai_get_lhs_packed_size_lhs_quant_pack_qsi8d32p_f32(m, k, bl, mr, kr, sr);
            loff = kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32p_f32(mr, k, bl, mr, kr, sr);
        } else {
            lsz = kai_get_lhs_packed_size_lhs_quant_pack_qai8dxp_f32(m, k, mr, kr, sr);
            loff = kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_f32(mr, k, mr, kr, sr);
        }
        CHECK_EQ("lhs packed size", lsz, lhsp_size);
        CHECK_EQ("lhs packed size (file)", lhsp_len, lhsp_size);
        CHECK_EQ("lhs packed offset at mr", loff, lhsp_off_mr);
        uint8_t* lhsp = calloc(1, lsz + 1);
        if (kn.fam == F_D32P)
            kai_run_lhs_quant_pack_qsi8d32p_f32(m, k, bl, mr, kr, sr, 0, lhs, 4 * k, lhsp);
        else
            kai_run_lhs_quant_pack_qai8dxp_f32(m, k, mr, kr, sr, 0, lhs, 4 * k, lhsp);
        if (lsz == lhsp_len) check_bytes("packed LHS", lhsp, lhsp_want, lsz);
        /* The same, packed in two calls: rows [0, m1) then [m1, m) with m_idx_start = m1 (the
         * qai8dxp packer takes `lhs` at row m1, the qsi8d32p packer at row 0, interface.md 5.1/5.2). */
        size_t m_split = kn.fam == F_D32P ? m / 2 / mr * mr : m / 2;
        if (m_split > 0) {
            memset(lhsp, 0, lsz);
            if (kn.fam == F_D32P) {
                kai_run_lhs_quant_pack_qsi8d32p_f32(m_split, k, bl, mr, kr, sr, 0, lhs, 4 * k, lhsp);
                kai_run_lhs_quant_pack_qsi8d32p_f32(
                    m - m_split, k, bl, mr, kr, sr, m_split, lhs, 4 * k,
                    lhsp + kai_get_lhs_packed_offset_lhs_quant_pack_qsi8d32p_f32(m_split, k, bl, mr, kr, sr));
            } else {
                kai_run_lhs_quant_pack_qai8dxp_f32(m_split, k, mr, kr, sr, 0, lhs, 4 * k, lhsp);
                kai_run_lhs_quant_pack_qai8dxp_f32(
                    m - m_split, k, mr, kr, sr, m_split,
                    (const float*)((const uint8_t*)lhs + kai_get_lhs_offset_lhs_quant_pack_qai8dxp_f32(m_split, 4 * k)),
                    4 * k, lhsp + kai_get_lhs_packed_offset_lhs_quant_pack_qai8dxp_f32(m_split, k, mr, kr, sr));
            }
            if (lsz == lhsp_len) check_bytes("packed LHS (two calls, m_idx_start)", lhsp, lhsp_want, lsz);
        }

        /* RHS: pack the raw weights with the packer a KleidiAI user picks for the layout. */
        uint8_t* rhs = read_file(rhs_f, &rhs_len);
        float* bias = strcmp(bias_f, "-") == 0 ? NULL : read_file(bias_f, &len);
        void* scale = strcmp(scale_f, "-") == 0 ? NULL : read_file(scale_f, &len);
        uint8_t* rhsp_want = read_file(rhsp_f, &rhsp_len);
        const int nxk = strcmp(layout, "nxk") == 0;
        size_t rsz, rstride, roff;
        uint8_t* rhsp;
        if (kn.fam == F_CXP) {
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
        } else if (kn.fam == F_I8CXP) {
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
        } else if (kn.fam == F_C32P) {
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

        /* Matmul, on the golden packed buffers (KleidiAI's bytes), with both clamps. */
        const int can_run = run_all || (strcmp(isa, "dotprod") == 0 && has_dotprod) || (strcmp(isa, "i8mm") == 0 && has_i8mm);
        if (can_run) runs++;
        else skipped_runs++;
        const size_t pad = 3, stride = 4 * (n + pad);
        for (int c = 0; c < 2 && can_run; c++) {
            size_t want_len;
            float* want = read_file(c == 0 ? dn_f : dt_f, &want_len);
            CHECK_EQ("dst file size", want_len, m * n * 4);
            if (corrupt == 1 && c == 1) ((uint8_t*)want)[0] ^= 1;
            const float lo = bits_to_f32(c == 0 ? cmin_n : cmin_t), hi = bits_to_f32(c == 0 ? cmax_n : cmax_t);
            float* dst = malloc(m * stride);
            float* got_rows = malloc(m * n * 4);
            for (int grid = 0; grid < 2; grid++) {
                memset(dst, 0xA5, m * stride);
                if (grid == 0 && !m1)
                    k_run(&kn, m, n, k, bl, lhsp_want, rhsp_want, dst, stride, lo, hi);
                else if (grid == 0)
                    run_grid(&kn, m, n, k, bl, 1, n, lhsp_want, rhsp_want, dst, stride, lo, hi);
                else
                    run_grid(&kn, m, n, k, bl, ms, ns, lhsp_want, rhsp_want, dst, stride, lo, hi);
                int pad_ok = 1;
                for (size_t r = 0; r < m; r++) {
                    memcpy(got_rows + r * n, (uint8_t*)dst + r * stride, n * 4);
                    for (size_t b = 4 * n; b < stride; b++)
                        if (((uint8_t*)dst)[r * stride + b] != 0xA5) pad_ok = 0;
                }
                char what[64];
                snprintf(what, sizeof what, "dst (%s clamp, %s)", c == 0 ? "none" : "tight",
                         grid ? "m_step x n_step grid" : "whole");
                check_bytes(what, got_rows, want, m * n * 4);
                CHECK_EQ("row padding untouched", pad_ok, 1);
            }
            free(dst);
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
        all += family_sizes[f];
        seen += (size_t)__builtin_popcountll(seen_mask[f]);
    }
    CHECK_EQ("kernels exercised", seen, all);
    printf("kai_compat: cpu dotprod=%d i8mm=%d; %zu plan lines, %zu of %zu KleidiAI kernels, %zu lines run "
           "(%zu skipped: ISA missing), %zu checks, %zu failures\n",
           has_dotprod, has_i8mm, lines, seen, all, runs, skipped_runs, checks, failures);
    return failures == 0 && lines > 0 ? 0 : 1;
}
