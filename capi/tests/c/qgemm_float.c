/* Layer 1 for the float families (QGEMM_FAMILY_F32_F32_F32P .. QGEMM_FAMILY_F16_BF16P_BF16P, codes
 * 11-14) through the API every family shares (qgemm_kernel_*, qgemm_select*, qgemm_linear_*), and
 * their per-format packers (qgemm_rhs_<float format>_*, qgemm_lhs_bf16p*_*):
 *
 *   float_plan.py DATA | qgemm_float <cpu>      (<cpu>: the QEMU model, for the report only)
 *
 * 1. Golden cases, bit for bit: for every (golden case, packing, KleidiAI kernel) of the plan, the
 *    RHS packed by qgemm_rhs_<format>_pack equals KleidiAI's on the bytes of the format (docs/formats.md), the
 *    LHS packed by qgemm_lhs_<format>_pack(_f16) equals KleidiAI's, sizes and offsets equal the
 *    manifest's (and the kernels' own size and offset queries agree), and every available kernel of
 *    the family that reads those layouts (qgemm_kernel_info.lhs / .rhs; BFDOT and BFMMLA told apart
 *    by name too, as tests/float.rs does) gives the golden output through qgemm_kernel_run(_u16)
 *    with each clamp, whole and as a 2x2 grid of sub-rectangles into a padded output (padding
 *    untouched); the kernels that read the rows in place also with the rows `k + 3` elements apart
 *    (qgemm_lhs_stride_params; NaN in the gaps) and with the stride 0 (dense). Every available
 *    kernel must have run at least once.
 * 2. Selection: qgemm_select for m = 1 and 64, qgemm_select_for on every pair of layouts (the BFDOT
 *    1x36 kernel for the bf16p LHS of mr 1), tiers.
 * 3. The operator (qgemm_linear_*) on the golden cases of its layouts, every RHS packing of the
 *    family: weights packed from the raw weights (qgemm_linear_pack(_u16), the preferred packing)
 *    or adopted with qgemm_linear_from_packed and the packing, prepare with each golden clamp, split
 *    into 1, 3 and 64 parts run with _run_part, and 4 parts on pthreads at once, against the golden
 *    output; _run against prepare + one part.
 * 4. Every status the float families' functions produce (each one at least once).
 *
 * QGEMM_FLOAT_CORRUPT=1 flips one bit of the first golden output in memory, QGEMM_FLOAT_CORRUPT=linear
 * one bit of the operator's first expected output: the test must then fail (run.sh --self-check). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seen;
#define EXPECT_SEEN(status) (seen |= 1u << (unsigned)(status))
#include "checks.h"
#include "qgemm.h"
#include "test_util.h"

enum { NF = 4, MAXK = 64, NFIELDS = 37 };
static const char* const FAMILY[NF] = {"f32_f32_f32p", "f16_f16_f16p", "f32_bf16p_bf16p", "f16_bf16p_bf16p"};
static const uint32_t CODE[NF] = {QGEMM_FAMILY_F32_F32_F32P, QGEMM_FAMILY_F16_F16_F16P, QGEMM_FAMILY_F32_BF16P_BF16P,
                                  QGEMM_FAMILY_F16_BF16P_BF16P};
static const bool F16_OUT[NF] = {false, true, false, true};

/* The RHS formats of the plan (float_plan.py's names), as packings, and their packer functions. */
enum { RHS_F32P16, RHS_F32P8, RHS_F16P32, RHS_F16P16, RHS_BF16P12_B32, RHS_BF16P12_B16, N_RHS };
static const char* const RHS_NAME[N_RHS] = {"f32p16", "f32p8", "f16p32", "f16p16", "bf16p12_b32", "bf16p12_b16"};
static const qgemm_rhs_packing RHS_PACKING[N_RHS] = {
    {QGEMM_RHS_FORMAT_F32P, 16, 1, 1},      {QGEMM_RHS_FORMAT_F32P, 8, 1, 1},
    {QGEMM_RHS_FORMAT_F16P, 32, 1, 1},      {QGEMM_RHS_FORMAT_F16P, 16, 1, 1},
    {QGEMM_RHS_FORMAT_BF16P_B32, 12, 4, 1}, {QGEMM_RHS_FORMAT_BF16P_B16, 12, 4, 1},
};
/* The activation layouts: the rows read in place (f32 or f16, by family) and the two bf16p ones. */
enum { LHS_NONE, LHS_BF16P1X4, LHS_BF16P8X4, N_LHS };
static const char* const LHS_NAME[N_LHS] = {"none", "bf16p1x4", "bf16p8x4"};
static const size_t LHS_MR[N_LHS] = {1, 1, 8};
/* Every LHS layout a float kernel could read, for the selection test. */
static const qgemm_lhs_packing LHS_PACKINGS[] = {
    {QGEMM_LHS_FORMAT_F32, 1, 1, 1},
    {QGEMM_LHS_FORMAT_F16, 1, 1, 1},
    {QGEMM_LHS_FORMAT_BF16P, 1, 4, 1},
    {QGEMM_LHS_FORMAT_BF16P, 8, 4, 1},
};

/* The LHS layout `lf` of the plan for family `fam`. */
static qgemm_lhs_packing lhs_packing(int fam, uint32_t lf) {
    if (lf == LHS_NONE) return LHS_PACKINGS[F16_OUT[fam] ? 1 : 0];
    return LHS_PACKINGS[lf == LHS_BF16P1X4 ? 2 : 3];
}

/* The layouts of a family's operator (and of qgemm_select): its preferred RHS packing, and the rows
 * in place or the bf16p LHS of mr 8. */
static const uint32_t OP_RHS[NF] = {RHS_F32P16, RHS_F16P32, RHS_BF16P12_B32, RHS_BF16P12_B16};
static const uint32_t OP_LHS[NF] = {LHS_NONE, LHS_NONE, LHS_BF16P8X4, LHS_BF16P8X4};

static size_t runs[NF][MAXK];
static int corrupt_golden, corrupt_linear;

static int lookup(const char* const* names, int count, const char* s) {
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], s) == 0) return i;
    fprintf(stderr, "unknown name %s\n", s);
    exit(2);
}

/* ---- the per-format functions, by format ------------------------------------------------------ */

static qgemm_status rhs_size(uint32_t f, size_t n, size_t k, size_t* out) {
    switch (f) {
    case RHS_F32P16: return qgemm_rhs_f32p16_packed_size(n, k, out);
    case RHS_F32P8: return qgemm_rhs_f32p8_packed_size(n, k, out);
    case RHS_F16P32: return qgemm_rhs_f16p32_packed_size(n, k, out);
    case RHS_F16P16: return qgemm_rhs_f16p16_packed_size(n, k, out);
    case RHS_BF16P12_B32: return qgemm_rhs_bf16p12_b32_packed_size(n, k, out);
    default: return qgemm_rhs_bf16p12_b16_packed_size(n, k, out);
    }
}

static qgemm_status rhs_offset(uint32_t f, size_t n_idx, size_t k, size_t* out) {
    switch (f) {
    case RHS_F32P16: return qgemm_rhs_f32p16_packed_offset(n_idx, k, out);
    case RHS_F32P8: return qgemm_rhs_f32p8_packed_offset(n_idx, k, out);
    case RHS_F16P32: return qgemm_rhs_f16p32_packed_offset(n_idx, k, out);
    case RHS_F16P16: return qgemm_rhs_f16p16_packed_offset(n_idx, k, out);
    case RHS_BF16P12_B32: return qgemm_rhs_bf16p12_b32_packed_offset(n_idx, k, out);
    default: return qgemm_rhs_bf16p12_b16_packed_offset(n_idx, k, out);
    }
}

/* Packs raw weights (`w`: f32 or f16 bits per `w_f16`, `w_len` values) and bias (f32 or f16 bits per
 * `b_f16`, or NULL). */
static qgemm_status rhs_pack(uint32_t f, size_t n, size_t k, const void* w, size_t w_len, bool w_f16, uint32_t layout,
                             size_t stride, const void* b, size_t b_len, uint8_t* out, size_t out_len) {
    switch (f) {
    case RHS_F32P16: return qgemm_rhs_f32p16_pack(n, k, w, w_len, layout, stride, b, b_len, out, out_len);
    case RHS_F32P8: return qgemm_rhs_f32p8_pack(n, k, w, w_len, layout, stride, b, b_len, out, out_len);
    case RHS_F16P32: return qgemm_rhs_f16p32_pack(n, k, w, w_len, layout, stride, b, b_len, out, out_len);
    case RHS_F16P16: return qgemm_rhs_f16p16_pack(n, k, w, w_len, layout, stride, b, b_len, out, out_len);
    case RHS_BF16P12_B32:
        return w_f16 ? qgemm_rhs_bf16p12_b32_pack_f16(n, k, w, w_len, layout, stride, b, b_len, out, out_len)
                     : qgemm_rhs_bf16p12_b32_pack(n, k, w, w_len, layout, stride, b, b_len, out, out_len);
    default: return qgemm_rhs_bf16p12_b16_pack(n, k, w, w_len, layout, stride, b, b_len, out, out_len);
    }
}

static qgemm_status lhs_size(uint32_t f, size_t m, size_t k, size_t* out) {
    return f == LHS_BF16P1X4 ? qgemm_lhs_bf16p1x4_packed_size(m, k, out) : qgemm_lhs_bf16p8x4_packed_size(m, k, out);
}

static qgemm_status lhs_offset(uint32_t f, size_t m_idx, size_t k, size_t* out) {
    return f == LHS_BF16P1X4 ? qgemm_lhs_bf16p1x4_packed_offset(m_idx, k, out)
                             : qgemm_lhs_bf16p8x4_packed_offset(m_idx, k, out);
}

static qgemm_status lhs_pack(uint32_t f, size_t m, size_t k, const void* x, size_t x_len, bool f16, size_t stride,
                             uint8_t* out, size_t out_len) {
    if (f == LHS_BF16P1X4)
        return f16 ? qgemm_lhs_bf16p1x4_pack_f16(m, k, x, x_len, stride, out, out_len)
                   : qgemm_lhs_bf16p1x4_pack(m, k, x, x_len, stride, out, out_len);
    return f16 ? qgemm_lhs_bf16p8x4_pack_f16(m, k, x, x_len, stride, out, out_len)
               : qgemm_lhs_bf16p8x4_pack(m, k, x, x_len, stride, out, out_len);
}

/* The run function of the family's output type; `lhs_size` in bytes. */
static qgemm_status run_kernel(qgemm_kernel kern, uint32_t cpu, bool f16_out, const void* lhs, size_t lhs_size,
                               const uint8_t* rhs, size_t rhs_len, void* dst, size_t dst_len,
                               const qgemm_matmul_args* a) {
    return f16_out ? qgemm_kernel_run_u16(kern, cpu, lhs, lhs_size, rhs, rhs_len, dst, dst_len, a)
                   : qgemm_kernel_run(kern, cpu, lhs, lhs_size, rhs, rhs_len, dst, dst_len, a);
}

/* ---- 1. golden cases -------------------------------------------------------------------------- */

static bool in_ranges(const char* ranges, size_t at) {
    if (strcmp(ranges, "-") == 0) return false;
    const char* p = ranges;
    while (*p) {
        char* e;
        size_t a = strtoul(p, &e, 10), b = strtoul(e + 1, &e, 10);
        if (a <= at && at < b) return true;
        p = *e == ',' ? e + 1 : e;
    }
    return false;
}

/* Bytes that differ outside `ranges`. */
static size_t masked_diff(const uint8_t* a, const uint8_t* b, size_t len, const char* ranges) {
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i] && !in_ranges(ranges, i)) bad++;
    return bad;
}

static size_t golden_lines, golden_runs, strided_runs, operator_cases;
static char last_operator[1024];

static void operator_case(int fam, uint32_t rf, size_t m, size_t n, size_t k, char** f, uint32_t cpu, const void* w,
                          size_t w_len, bool w_f16, uint32_t layout, size_t w_stride, const void* bias,
                          size_t bias_len, const void* x, size_t x_len, const uint8_t* ours_rhs, size_t rhs_len,
                          uint8_t* const golden[3], const float clamps[3][2]);

/* The bytes of `m` rows of `k` elements of `esz` bytes from `x` (rows `x_stride` elements apart)
 * copied `stride` elements apart, NaN in between (f32 or f16 bits): a kernel that read a gap would
 * give NaN. */
static uint8_t* strided_rows(const void* x, size_t m, size_t k, size_t x_stride, size_t esz, size_t stride,
                             size_t* bytes) {
    *bytes = ((m - 1) * stride + k) * esz;
    uint8_t* out = malloc(*bytes);
    const uint32_t nan32 = 0x7fc00000u;
    const uint16_t nan16 = 0x7e00u;
    for (size_t i = 0; i < *bytes / esz; i++) memcpy(out + i * esz, esz == 4 ? (const void*)&nan32 : (const void*)&nan16, esz);
    for (size_t r = 0; r < m; r++) memcpy(out + r * stride * esz, (const uint8_t*)x + r * x_stride * esz, k * esz);
    return out;
}

static void golden_line(char** f, uint32_t cpu) {
    const int fam = lookup(FAMILY, NF, f[0]);
    const uint32_t code = CODE[fam];
    const size_t m = strtoul(f[1], NULL, 10), n = strtoul(f[2], NULL, 10), k = strtoul(f[3], NULL, 10);
    const uint32_t layout = strcmp(f[4], "nxk") == 0 ? QGEMM_LAYOUT_NXK : QGEMM_LAYOUT_KXN;
    const bool w_f16 = strcmp(f[5], "f16") == 0, b_f16 = strcmp(f[8], "f16") == 0, x_f16 = strcmp(f[10], "f16") == 0;
    const size_t wsz = w_f16 ? 2 : 4, bsz = b_f16 ? 2 : 4, xsz = x_f16 ? 2 : 4, esz = F16_OUT[fam] ? 2 : 4;
    size_t w_bytes, b_bytes = 0, x_bytes, len;
    void* w = read_file(f[6], &w_bytes);
    void* bias = strcmp(f[9], "-") == 0 ? NULL : read_file(f[9], &b_bytes);
    void* x = read_file(f[11], &x_bytes);
    const size_t w_stride = strtoul(f[7], NULL, 10) / wsz, x_stride = strtoul(f[12], NULL, 10) / xsz;
    const uint32_t rf = (uint32_t)lookup(RHS_NAME, N_RHS, f[13]), lf = (uint32_t)lookup(LHS_NAME, N_LHS, f[19]);
    const qgemm_rhs_packing want_rhs = RHS_PACKING[rf];
    const qgemm_lhs_packing want_lhs = lhs_packing(fam, lf);
    const size_t rsize = strtoul(f[15], NULL, 10), tile = strtoul(f[16], NULL, 10), off_nr = strtoul(f[17], NULL, 10);
    const bool dot = strcmp(f[24], "1") == 0;
    const size_t g_ms = strtoul(f[25], NULL, 10), g_dst_off = strtoul(f[27], NULL, 10);
    float clamps[3][2];
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < 2; j++) clamps[c][j] = bits_to_f32(f[31 + 2 * c + j]);
    snprintf(cur, sizeof cur, "golden %s m%zu n%zu k%zu %s %s/%s (%s)", f[0], m, n, k, f[4], f[19], f[13], f[23]);
    golden_lines++;

    /* The packed RHS: sizes, offsets, bytes. */
    size_t size = 0, off = 0;
    OK(rhs_size(rf, n, k, &size));
    CHECK(size == rsize, "RHS packed size %zu, KleidiAI's %zu", size, rsize);
    OK(rhs_offset(rf, want_rhs.nr, k, &off));
    CHECK(off == off_nr && off == tile, "RHS offset at nr %zu, KleidiAI's %zu (tile %zu)", off, off_nr, tile);
    uint8_t* rhs = malloc(size + 1);
    memset(rhs, 0xA5, size + 1);
    OK(rhs_pack(rf, n, k, w, w_bytes / wsz, w_f16, layout, w_stride, bias, b_bytes / bsz, rhs, size));
    uint8_t* g_rhs = read_file(f[14], &len);
    CHECK(len == size && masked_diff(rhs, g_rhs, size, f[18]) == 0, "packed RHS: %zu bytes differ",
          masked_diff(rhs, g_rhs, size, f[18]));
    CHECK(rhs[size] == 0xA5, "the RHS packer wrote past its size");

    /* The packed LHS. */
    uint8_t* lhs = NULL;
    size_t lhs_bytes = 0;
    if (lf != LHS_NONE) {
        OK(lhs_size(lf, m, k, &lhs_bytes));
        CHECK(lhs_bytes == strtoul(f[21], NULL, 10), "LHS packed size %zu, KleidiAI's %s", lhs_bytes, f[21]);
        if (strtoul(f[22], NULL, 10) != 0) {
            OK(lhs_offset(lf, LHS_MR[lf], k, &off));
            CHECK(off == strtoul(f[22], NULL, 10), "LHS offset at mr %zu, KleidiAI's %s", off, f[22]);
        }
        lhs = malloc(lhs_bytes + 1);
        memset(lhs, 0xA5, lhs_bytes + 1);
        OK(lhs_pack(lf, m, k, x, x_bytes / xsz, x_f16, x_stride, lhs, lhs_bytes));
        uint8_t* g_lhs = read_file(f[20], &len);
        CHECK(len == lhs_bytes && memcmp(lhs, g_lhs, lhs_bytes) == 0, "packed LHS differs");
        CHECK(lhs[lhs_bytes] == 0xA5, "the LHS packer wrote past its size");
        free(g_lhs);
    }
    /* What the kernels read: the packed LHS, or the rows in place (their stride a parameter). */
    const void* run_lhs = lhs ? (const void*)lhs : x;
    const size_t run_lhs_size = lhs ? lhs_bytes : x_bytes;
    const qgemm_lhs_stride_params rows = {x_stride};
    const void* params = lhs ? NULL : &rows;

    /* The golden outputs and their clamps: none (+-FLT_MAX), tight, relu. */
    uint8_t* golden[3];
    for (int c = 0; c < 3; c++) {
        golden[c] = read_file(f[28 + c], &len);
        CHECK(len == m * n * esz, "golden dst size %zu", len);
    }
    if (corrupt_golden == 1 && golden_lines == 1) golden[0][0] ^= 1;

    size_t count = 0;
    OK(qgemm_kernel_count(code, &count));
    for (size_t i = 0; i < count && i < MAXK; i++) {
        qgemm_kernel kern;
        qgemm_kernel_info info;
        bool avail = false;
        OK(qgemm_kernel_at(code, i, &kern));
        OK(qgemm_kernel_get_info(kern, &info));
        if (!same_lhs(info.lhs, want_lhs) || !same_rhs(info.rhs, want_rhs) ||
            (strstr(info.name, "1x36") != NULL) != dot)
            continue;
        OK(qgemm_kernel_is_available(kern, cpu, &avail));
        if (!avail) continue;
        snprintf(cur, sizeof cur, "golden %s m%zu n%zu k%zu %s %s/%s: %s", f[0], m, n, k, f[4], f[19], f[13], info.name);
        runs[fam][i]++;
        golden_runs++;
        /* The kernel's own size and offset queries: the format functions' (0 for the rows in place). */
        size_t q = 777;
        OK(qgemm_kernel_rhs_packed_size(kern, n, k, 0, &q));
        CHECK(q == size, "qgemm_kernel_rhs_packed_size %zu, the format's %zu", q, size);
        OK(qgemm_kernel_rhs_packed_offset(kern, info.rhs.nr, k, 0, &q));
        CHECK(q == off_nr, "qgemm_kernel_rhs_packed_offset at nr %zu, KleidiAI's %zu", q, off_nr);
        OK(qgemm_kernel_lhs_packed_size(kern, m, k, 0, &q));
        CHECK(q == lhs_bytes, "qgemm_kernel_lhs_packed_size %zu, the format's %zu", q, lhs_bytes);
        OK(qgemm_kernel_dst_size(kern, m, n, &q));
        CHECK(q == m * n, "qgemm_kernel_dst_size %zu", q);
        if (info.m_step == g_ms) {
            OK(qgemm_kernel_dst_offset(kern, info.m_step, info.n_step, n, &off));
            CHECK(off * esz == g_dst_off, "dst offset at steps %zu bytes, KleidiAI's %zu", off * esz, g_dst_off);
        }
        uint8_t* dst = malloc(m * n * esz);
        for (int c = 0; c < 3; c++) {
            memset(dst, 0xA5, m * n * esz);
            qgemm_matmul_args a = {.m = m, .n = n, .k = k, .dst_stride_row = n, .clamp_min = clamps[c][0],
                                   .clamp_max = clamps[c][1], .params = params};
            OK(run_kernel(kern, cpu, F16_OUT[fam], run_lhs, run_lhs_size, rhs, size, dst, m * n, &a));
            size_t bad = 0;
            for (size_t e = 0; e < m * n; e++) bad += memcmp(dst + e * esz, golden[c] + e * esz, esz) != 0;
            CHECK(bad == 0, "clamp %d: %zu of %zu outputs differ", c, bad, m * n);
        }
        if (!lhs) {
            /* The rows k + 3 elements apart (NaN between them), and the stride 0 (dense) on dense rows. */
            size_t sbytes = 0;
            uint8_t* sx = strided_rows(x, m, k, x_stride, xsz, k + 3, &sbytes);
            const qgemm_lhs_stride_params wide = {k + 3}, zero = {0};
            qgemm_matmul_args a = {.m = m, .n = n, .k = k, .dst_stride_row = n, .clamp_min = clamps[0][0],
                                   .clamp_max = clamps[0][1], .params = &wide};
            memset(dst, 0xA5, m * n * esz);
            OK(run_kernel(kern, cpu, F16_OUT[fam], sx, sbytes, rhs, size, dst, m * n, &a));
            CHECK(memcmp(dst, golden[0], m * n * esz) == 0, "rows %zu elements apart: the output differs", k + 3);
            EXPECT(run_kernel(kern, cpu, F16_OUT[fam], sx, sbytes - 1, rhs, size, dst, m * n, &a),
                   QGEMM_ERROR_BUFFER_TOO_SHORT);
            if (x_stride == k) {
                a.params = &zero;
                memset(dst, 0xA5, m * n * esz);
                OK(run_kernel(kern, cpu, F16_OUT[fam], x, x_bytes, rhs, size, dst, m * n, &a));
                CHECK(memcmp(dst, golden[0], m * n * esz) == 0, "stride 0 (dense): the output differs");
            }
            strided_runs++;
            free(sx);
        }
        /* A 2x2 grid of sub-rectangles into a padded output (row stride n + 3). */
        const size_t ms = info.m_step, ns = info.n_step, stride = n + 3, total = m * stride;
        const size_t m0 = (m / 2) / ms * ms, n0 = (n / 2) / ns * ns;
        uint8_t* grid = malloc(total * esz);
        memset(grid, 0xA5, total * esz);
        const size_t rect[4][4] = {{0, 0, m0, n0}, {0, n0, m0, n - n0}, {m0, 0, m - m0, n0}, {m0, n0, m - m0, n - n0}};
        for (int r = 0; r < 4; r++) {
            if (rect[r][2] == 0 || rect[r][3] == 0) continue;
            OK(qgemm_kernel_dst_offset(kern, rect[r][0], rect[r][1], stride, &off));
            qgemm_matmul_args a = {.m = rect[r][2], .n = rect[r][3], .k = k, .m_idx = rect[r][0], .n_idx = rect[r][1],
                                   .dst_stride_row = stride, .clamp_min = clamps[0][0], .clamp_max = clamps[0][1],
                                   .params = params};
            OK(run_kernel(kern, cpu, F16_OUT[fam], run_lhs, run_lhs_size, rhs, size, grid + off * esz, total - off,
                          &a));
        }
        size_t bad = 0, pad = 0;
        for (size_t row = 0; row < m; row++) {
            bad += memcmp(grid + row * stride * esz, golden[0] + row * n * esz, n * esz) != 0;
            for (size_t b = n * esz; b < stride * esz; b++) pad += grid[row * stride * esz + b] != 0xA5;
        }
        CHECK(bad == 0 && pad == 0, "2x2 grid: %zu rows differ, %zu padding bytes written", bad, pad);
        free(grid);
        free(dst);
    }

    /* The operator, once per (case, RHS packing) with the LHS layout it uses (the rows in place, or
     * bf16p8x4 with BFMMLA) and activations of the family's type: every RHS packing of the family,
     * the preferred one from the raw weights, the others adopted with their packing. */
    char key[1024];
    snprintf(key, sizeof key, "%s %s", f[11], f[14]);
    if (lf == OP_LHS[fam] && !dot && x_f16 == F16_OUT[fam] && strcmp(key, last_operator) != 0) {
        snprintf(last_operator, sizeof last_operator, "%s", key);
        CHECK(x_stride == k, "the golden activations are not dense");
        operator_case(fam, rf, m, n, k, f, cpu, w, w_bytes / wsz, w_f16, layout, w_stride, bias, b_bytes / bsz, x,
                      x_bytes / xsz, rhs, size, golden, (const float(*)[2])clamps);
    }
    for (int c = 0; c < 3; c++) free(golden[c]);
    free(lhs);
    free(g_rhs);
    free(rhs);
    free(x);
    free(bias);
    free(w);
}

/* ---- 3. the operator -------------------------------------------------------------------------- */

/* One thread's part of a call. */
typedef struct {
    const qgemm_linear_call* call;
    qgemm_rect rect;
    void* y;
    size_t y_len;
    bool u16;
    qgemm_status status;
} part_job;

static void* run_part_thread(void* arg) {
    part_job* j = arg;
    j->status = j->u16 ? qgemm_linear_run_part_u16(j->call, j->rect, j->y, j->y_len)
                       : qgemm_linear_run_part(j->call, j->rect, j->y, j->y_len);
    return NULL;
}

static qgemm_status prepare_any(bool u16, const qgemm_linear* layer, uint32_t cpu, size_t m, const void* x,
                                size_t x_len, uint8_t* scratch, size_t ssize, float lo, float hi,
                                qgemm_linear_call* call) {
    return u16 ? qgemm_linear_prepare_u16(layer, cpu, m, x, x_len, scratch, ssize, lo, hi, call)
               : qgemm_linear_prepare(layer, cpu, m, x, x_len, scratch, ssize, lo, hi, call);
}

static qgemm_status run_part_any(bool u16, const qgemm_linear_call* call, qgemm_rect rect, void* y, size_t y_len) {
    return u16 ? qgemm_linear_run_part_u16(call, rect, y, y_len) : qgemm_linear_run_part(call, rect, y, y_len);
}

static void operator_case(int fam, uint32_t rf, size_t m, size_t n, size_t k, char** f, uint32_t cpu, const void* w,
                          size_t w_len, bool w_f16, uint32_t layout, size_t w_stride, const void* bias,
                          size_t bias_len, const void* x, size_t x_len, const uint8_t* ours_rhs, size_t rhs_len,
                          uint8_t* const golden[3], const float clamps[3][2]) {
    const uint32_t code = CODE[fam];
    const bool u16 = F16_OUT[fam], preferred = rf == OP_RHS[fam];
    const size_t esz = u16 ? 2 : 4;
    snprintf(cur, sizeof cur, "operator %s m%zu n%zu k%zu %s %s", f[0], m, n, k, f[4], f[13]);
    operator_cases++;
    size_t wsize = 0, ssize = 0;
    OK(qgemm_linear_packed_size(code, n, k, 0, &wsize));
    if (preferred) CHECK(wsize == rhs_len, "packed size %zu, the format's %zu", wsize, rhs_len);
    uint8_t* buf = malloc(rhs_len);
    qgemm_linear layer;
    if (preferred && w_f16 == u16) {
        /* From the raw weights (either layout) and bias: the format packer's bytes. */
        if (u16)
            OK(qgemm_linear_pack_u16(code, w, w_len, layout, w_stride, n, k, bias, bias_len, buf, wsize, &layer));
        else
            OK(qgemm_linear_pack(code, w, w_len, layout, w_stride, n, k, bias, bias_len, buf, wsize, &layer));
        CHECK(layer.weights == buf && layer.weights_len == wsize && memcmp(buf, ours_rhs, wsize) == 0,
              "the operator's packed weights are not the format packer's");
    } else {
        /* f16 weights of an f32 family, or another packing than the preferred one: adopt the
         * packer's bytes with their packing. */
        memcpy(buf, ours_rhs, rhs_len);
        OK(qgemm_linear_from_packed(code, &RHS_PACKING[rf], n, k, 0, buf, rhs_len, &layer));
        CHECK(layer.weights == buf && layer.weights_len == rhs_len, "the adopted weights: %zu bytes of %zu",
              layer.weights_len, rhs_len);
    }
    CHECK(layer.size == sizeof layer && layer.family == code && same_rhs(layer.packing, RHS_PACKING[rf]) &&
              layer.n == n && layer.k == k && layer.bl == 0 && layer.input_scale == NULL,
          "the layer's fields (packing format %u nr %zu)", layer.packing.format, layer.packing.nr);
    OK(qgemm_linear_scratch_size(&layer, m, &ssize));
    uint8_t* scratch = ssize ? malloc(ssize) : NULL;
    uint8_t* y = malloc(m * n * esz);
    uint8_t* expect = malloc(m * n * esz);
    static const size_t parts[3] = {1, 3, 64};
    for (int c = 0; c < 3; c++) {
        memcpy(expect, golden[c], m * n * esz);
        if (corrupt_linear && operator_cases == 1 && c == 0) expect[0] ^= 1;
        qgemm_linear_call call;
        OK(prepare_any(u16, &layer, cpu, m, x, x_len, scratch, ssize, clamps[c][0], clamps[c][1], &call));
        qgemm_kernel_info ki;
        OK(qgemm_kernel_get_info(call.kernel, &ki));
        CHECK(same_rhs(ki.rhs, layer.packing) && same_lhs(ki.lhs, lhs_packing(fam, OP_LHS[fam])),
              "prepare chose %s", ki.name);
        if (OP_LHS[fam] == LHS_NONE)
            CHECK(call.lhs == x && call.lhs_size == x_len * esz, "the call's rows are not x (%zu bytes)",
                  call.lhs_size);
        for (int p = 0; p < 3; p++) {
            qgemm_rect rects[64];
            size_t count = 0;
            memset(y, 0xA5, m * n * esz);
            OK(qgemm_linear_split(&call, parts[p], rects, 64, &count));
            CHECK(count >= 1 && count <= parts[p], "%zu parts for %zu", count, parts[p]);
            for (size_t r = 0; r < count; r++) OK(run_part_any(u16, &call, rects[r], y, m * n));
            size_t bad = 0;
            for (size_t e = 0; e < m * n; e++) bad += memcmp(y + e * esz, expect + e * esz, esz) != 0;
            CHECK(bad == 0, "operator, clamp %d, %zu parts: %zu of %zu outputs differ from the golden", c, parts[p], bad,
                  m * n);
        }
    }
    /* Four parts on four threads at once into one output, tight clamp. */
    {
        qgemm_linear_call call;
        qgemm_rect rects[4];
        size_t count = 0;
        pthread_t threads[4];
        part_job jobs[4];
        memset(y, 0xA5, m * n * esz);
        OK(prepare_any(u16, &layer, cpu, m, x, x_len, scratch, ssize, clamps[1][0], clamps[1][1], &call));
        OK(qgemm_linear_split(&call, 4, rects, 4, &count));
        for (size_t t = 0; t < count; t++) {
            jobs[t] = (part_job){&call, rects[t], y, m * n, u16, QGEMM_ERROR_INVALID_ARGUMENT};
            CHECK(pthread_create(&threads[t], NULL, run_part_thread, &jobs[t]) == 0, "pthread_create");
        }
        for (size_t t = 0; t < count; t++) {
            pthread_join(threads[t], NULL);
            CHECK(jobs[t].status == QGEMM_OK, "thread %zu: status %d", t, (int)jobs[t].status);
        }
        CHECK(memcmp(y, golden[1], m * n * esz) == 0, "%zu parts on threads differ from the golden (tight clamp)",
              count);
    }
    /* run (the Rust Clamp::NONE, [-FLT_MAX, FLT_MAX]) = prepare(-FLT_MAX, FLT_MAX) + one part. */
    qgemm_linear_call call;
    qgemm_rect rect;
    size_t count;
    memset(y, 0xA5, m * n * esz);
    memset(expect, 0x5A, m * n * esz);
    if (u16)
        OK(qgemm_linear_run_u16(&layer, cpu, m, x, x_len, (uint16_t*)y, m * n, scratch, ssize));
    else
        OK(qgemm_linear_run(&layer, cpu, m, x, x_len, (float*)y, m * n, scratch, ssize));
    OK(prepare_any(u16, &layer, cpu, m, x, x_len, scratch, ssize, -FLT_MAX, FLT_MAX, &call));
    OK(qgemm_linear_split(&call, 1, &rect, 1, &count));
    OK(run_part_any(u16, &call, rect, expect, m * n));
    CHECK(memcmp(y, expect, m * n * esz) == 0, "qgemm_linear_run differs from prepare + run_part");
    free(expect);
    free(y);
    free(scratch);
    free(buf);
}

static void golden(uint32_t cpu) {
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        char* f[NFIELDS];
        int got = 0;
        for (char* t = strtok(line, " \n"); t && got < NFIELDS; t = strtok(NULL, " \n")) f[got++] = t;
        if (got != NFIELDS) {
            fprintf(stderr, "bad plan line (%d fields)\n", got);
            exit(2);
        }
        golden_line(f, cpu);
    }
    snprintf(cur, sizeof cur, "golden coverage");
    CHECK(golden_lines > 0, "empty plan");
    for (int fam = 0; fam < NF; fam++) {
        size_t count = 0;
        OK(qgemm_kernel_count(CODE[fam], &count));
        CHECK(count > 0 && count <= MAXK, "%s: %zu kernels", FAMILY[fam], count);
        for (size_t i = 0; i < count && i < MAXK; i++) {
            qgemm_kernel kern;
            qgemm_kernel_info info;
            bool avail = false;
            OK(qgemm_kernel_at(CODE[fam], i, &kern));
            OK(qgemm_kernel_get_info(kern, &info));
            OK(qgemm_kernel_is_available(kern, cpu, &avail));
            CHECK(!avail || runs[fam][i] > 0, "%s: available kernel %s never ran on a golden case", FAMILY[fam],
                  info.name);
            if (avail) printf("  %-58s tier %u: %zu golden runs\n", info.name, info.tier, runs[fam][i]);
        }
    }
    printf("golden: %zu (case, packing, KleidiAI kernel) lines, %zu kernel runs (3 clamps + 2x2 grid each; %zu on "
           "rows k + 3 apart and dense with stride 0), %zu operator cases\n",
           golden_lines, golden_runs, strided_runs, operator_cases);
}

/* ---- 2. selection ----------------------------------------------------------------------------- */

static void selection(uint32_t cpu) {
    for (int fam = 0; fam < NF; fam++) {
        const uint32_t code = CODE[fam];
        snprintf(cur, sizeof cur, "selection %s", FAMILY[fam]);
        qgemm_kernel kern;
        qgemm_kernel_info info;
        bool avail = false;
        qgemm_rhs_packing op_rhs = {99, 0, 0, 0};
        OK(qgemm_linear_rhs_packing(code, &op_rhs));
        CHECK(same_rhs(op_rhs, RHS_PACKING[OP_RHS[fam]]), "the operator's packing: format %u nr %zu", op_rhs.format,
              op_rhs.nr);
        const qgemm_lhs_packing op_lhs = lhs_packing(fam, OP_LHS[fam]);
        static const size_t ms[] = {1, 64};
        for (size_t i = 0; i < 2; i++) {
            OK(qgemm_select(code, cpu, ms[i], &kern));
            OK(qgemm_kernel_get_info(kern, &info));
            OK(qgemm_kernel_is_available(kern, cpu, &avail));
            CHECK(avail && same_rhs(info.rhs, op_rhs) && same_lhs(info.lhs, op_lhs), "select m %zu gave %s (formats %u/%u)",
                  ms[i], info.name, info.lhs.format, info.rhs.format);
            CHECK(kern.family == code && kern.svl_bytes == 0, "handle {%u, %u, %u}", kern.family, kern.index,
                  kern.svl_bytes);
            CHECK(info.tier <= QGEMM_TIER_BF16, "tier %u", info.tier);
            if (fam == 1 && (cpu & QGEMM_FEATURE_FP16)) CHECK(info.tier == QGEMM_TIER_FP16, "f16 tier %u", info.tier);
            if (fam >= 2 && (cpu & QGEMM_FEATURE_BF16)) CHECK(info.tier == QGEMM_TIER_BF16, "bf16 tier %u", info.tier);
            if (!(cpu & QGEMM_FEATURE_NEON)) CHECK(info.tier == QGEMM_TIER_SCALAR, "tier %u without NEON", info.tier);
            /* Scalar only: the family's scalar kernel when nothing else runs. */
            OK(qgemm_select(code, 0, ms[i], &kern));
            OK(qgemm_kernel_get_info(kern, &info));
            CHECK(info.tier == QGEMM_TIER_SCALAR, "select without features: tier %u", info.tier);
        }
        /* select_for on every pair of layouts: a kernel that reads them, or UNSUPPORTED where the
         * family has none; lhs NULL is the operator's LHS layout. */
        size_t count = 0;
        OK(qgemm_kernel_count(code, &count));
        for (size_t lf = 0; lf < sizeof LHS_PACKINGS / sizeof LHS_PACKINGS[0]; lf++)
            for (uint32_t rf = 0; rf < N_RHS; rf++) {
                bool exists = false;
                for (size_t i = 0; i < count; i++) {
                    qgemm_kernel h;
                    qgemm_kernel_info in;
                    OK(qgemm_kernel_at(code, i, &h));
                    OK(qgemm_kernel_get_info(h, &in));
                    exists |= same_lhs(in.lhs, LHS_PACKINGS[lf]) && same_rhs(in.rhs, RHS_PACKING[rf]);
                }
                for (size_t i = 0; i < 2; i++) {
                    const qgemm_status s = qgemm_select_for(code, cpu, ms[i], &RHS_PACKING[rf], &LHS_PACKINGS[lf], &kern);
                    if (!exists) {
                        EXPECT(s, QGEMM_ERROR_UNSUPPORTED);
                        continue;
                    }
                    CHECK(s == QGEMM_OK, "select_for lhs %zu/%s -> %d", lf, RHS_NAME[rf], (int)s);
                    OK(qgemm_kernel_get_info(kern, &info));
                    OK(qgemm_kernel_is_available(kern, cpu, &avail));
                    CHECK(avail && same_lhs(info.lhs, LHS_PACKINGS[lf]) && same_rhs(info.rhs, RHS_PACKING[rf]),
                          "select_for lhs %zu/%s gave %s", lf, RHS_NAME[rf], info.name);
                }
            }
        for (uint32_t rf = 0; rf < N_RHS; rf++) {
            const qgemm_status s = qgemm_select_for(code, cpu, 1, &RHS_PACKING[rf], NULL, &kern);
            if (s != QGEMM_OK) continue;
            OK(qgemm_kernel_get_info(kern, &info));
            CHECK(same_lhs(info.lhs, op_lhs), "select_for %s, lhs NULL, gave %s", RHS_NAME[rf], info.name);
        }
    }
    /* The BFDOT GEMV kernel: the bf16p LHS of mr 1 named, the f32-output family's weights. */
    snprintf(cur, sizeof cur, "selection: BFDOT");
    qgemm_kernel kern = {99, 99, 99};
    qgemm_kernel_info info;
    const qgemm_lhs_packing bf16p1 = {QGEMM_LHS_FORMAT_BF16P, 1, 4, 1};
    OK(qgemm_select_for(QGEMM_FAMILY_F32_BF16P_BF16P, cpu, 1, &RHS_PACKING[RHS_BF16P12_B32], &bf16p1, &kern));
    OK(qgemm_kernel_get_info(kern, &info));
    CHECK(strstr(info.name, "_1x36_") != NULL && info.m_step == 1 && info.n_step == 36 && info.lhs.mr == 1 &&
              info.tier == ((cpu & QGEMM_FEATURE_BF16) ? QGEMM_TIER_BF16 : QGEMM_TIER_SCALAR),
          "the bf16p1x4 LHS gave %s (tier %u)", info.name, info.tier);
    if (cpu & QGEMM_FEATURE_BF16)
        CHECK(strcmp(info.name, "matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot") == 0, "%s", info.name);
    printf("selection: qgemm_select (m = 1, 64) and qgemm_select_for on every pair of layouts of the %d float "
           "families; the bf16p LHS of mr 1 selects %s\n",
           NF, info.name);
}

/* ---- 4. statuses ------------------------------------------------------------------------------ */

static void statuses(uint32_t cpu) {
    snprintf(cur, sizeof cur, "statuses");
    const uint32_t F32 = QGEMM_FAMILY_F32_F32_F32P, F16 = QGEMM_FAMILY_F16_F16_F16P;
    const size_t m = 2, n = 5, k = 3;
    float w[15], b[5], x[6], y[16];
    uint16_t wh[15], xh[6], yh[16];
    for (int i = 0; i < 15; i++) w[i] = (float)(i % 7) - 3.0f, wh[i] = 0x3C00;
    for (int i = 0; i < 5; i++) b[i] = 0.5f;
    for (int i = 0; i < 6; i++) x[i] = 1.0f, xh[i] = 0x3C00;
    size_t size = 0, off = 0, count = 0;
    OK(qgemm_rhs_f32p16_packed_size(n, k, &size));
    uint8_t* rhs = malloc(size + 8);
    uint8_t* rhs16 = malloc(2048);
    uint8_t lhs[256];
    qgemm_kernel kern, k16;
    qgemm_kernel_info info;
    bool avail;
    const qgemm_lhs_packing rows32 = LHS_PACKINGS[0];
    const qgemm_rhs_packing bad_format = {99, 16, 1, 1}, f32p4 = {QGEMM_RHS_FORMAT_F32P, 4, 1, 1};
    const qgemm_lhs_packing bad_lhs = {99, 1, 1, 1};

    /* Null pointers, bad codes. */
    EXPECT(qgemm_kernel_count(F32, NULL), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_kernel_count(QGEMM_FAMILY_F16_BF16P_BF16P + 1, &count), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_at(F32, 999, &kern), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_get_info((qgemm_kernel){F32, 999, 0}, &info), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_get_info((qgemm_kernel){QGEMM_FAMILY_F16_BF16P_BF16P + 1, 0, 0}, &info),
           QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_is_available((qgemm_kernel){F32, 0, 0}, 1u << 31, &avail), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_select(F32, 1u << 31, 1, &kern), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_select_for(F32, cpu, 1, &bad_format, NULL, &kern), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_select_for(F32, cpu, 1, &RHS_PACKING[RHS_F32P16], &bad_lhs, &kern), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_select_for(F32, cpu, 1, &RHS_PACKING[RHS_BF16P12_B32], NULL, &kern), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_select_for(F32, cpu, 1, &f32p4, NULL, &kern), QGEMM_ERROR_UNSUPPORTED);
    qgemm_rhs_packing rp;
    EXPECT(qgemm_linear_rhs_packing(QGEMM_FAMILY_F16_BF16P_BF16P + 1, &rp), QGEMM_ERROR_INVALID_ARGUMENT);

    /* Packers. */
    EXPECT(qgemm_rhs_f32p16_pack(n, k, NULL, 15, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, w, 15, 2, k, b, 5, rhs, size), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_rhs_f32p16_pack(0, k, w, 15, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, w, 15, QGEMM_LAYOUT_NXK, k - 1, b, 5, rhs, size), QGEMM_ERROR_STRIDE_TOO_SMALL);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, w, 14, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, w, 15, QGEMM_LAYOUT_NXK, k, b, 4, rhs, size), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, w, 15, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, (const float*)((const char*)w + 1), 14, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_rhs_f32p16_pack(n, k, (const float*)rhs, 15, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size),
           QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_rhs_f32p16_packed_size(n, 0, &size), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_rhs_f32p16_packed_size(SIZE_MAX, SIZE_MAX / 2, &off), QGEMM_ERROR_SIZE_OVERFLOW);
    EXPECT(qgemm_rhs_f32p16_packed_offset(3, k, &off), QGEMM_ERROR_MISALIGNED_START);
    EXPECT(qgemm_rhs_bf16p12_b16_packed_offset(6, k, &off), QGEMM_ERROR_MISALIGNED_START);
    EXPECT(qgemm_rhs_f16p32_pack(n, k, (const uint16_t*)((const char*)wh + 1), 14, QGEMM_LAYOUT_NXK, k, NULL, 0, rhs16,
                                 2048),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_lhs_bf16p8x4_packed_offset(3, k, &off), QGEMM_ERROR_MISALIGNED_START);
    EXPECT(qgemm_lhs_bf16p8x4_packed_size(SIZE_MAX, SIZE_MAX, &off), QGEMM_ERROR_SIZE_OVERFLOW);
    EXPECT(qgemm_lhs_bf16p8x4_pack(0, k, x, 6, k, lhs, sizeof lhs), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_lhs_bf16p8x4_pack(m, k, x, 6, k - 1, lhs, sizeof lhs), QGEMM_ERROR_STRIDE_TOO_SMALL);
    EXPECT(qgemm_lhs_bf16p8x4_pack(m, k, x, 6, k, lhs, 8), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_lhs_bf16p1x4_pack_f16(m, k, (const uint16_t*)((const char*)xh + 1), 5, k, lhs, sizeof lhs),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_lhs_bf16p1x4_pack(m, k, x, 6, k, (uint8_t*)x, 24), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_lhs_bf16p1x4_pack(m, k, x, 6, k, NULL, 0), QGEMM_ERROR_NULL_POINTER);

    /* Runs: the rows read in place, `lhs_size` bytes, their stride the family's parameters. */
    OK(qgemm_rhs_f32p16_pack(n, k, w, 15, QGEMM_LAYOUT_NXK, k, b, 5, rhs, size));
    OK(qgemm_select_for(F32, 0, m, &RHS_PACKING[RHS_F32P16], &rows32, &kern));
    const qgemm_lhs_stride_params dense = {k}, zero = {0}, narrow = {k - 1};
    qgemm_matmul_args a = {.m = m, .n = n, .k = k, .dst_stride_row = n, .clamp_min = -INFINITY,
                           .clamp_max = INFINITY, .params = &dense};
    OK(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &a));
    CHECK(y[0] == 0.5f + 1.0f * (-3.0f - 2.0f - 1.0f), "y[0] = %g", (double)y[0]);
    float y2[10];
    qgemm_matmul_args a0 = a;
    a0.params = NULL;
    OK(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y2, 10, &a0));
    CHECK(memcmp(y, y2, sizeof y2) == 0, "params NULL differs from the dense stride");
    a0.params = &zero;
    OK(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y2, 10, &a0));
    CHECK(memcmp(y, y2, sizeof y2) == 0, "stride 0 differs from the dense stride");
    OK(qgemm_kernel_lhs_packed_size(kern, m, k, 0, &off));
    CHECK(off == 0, "the rows in place: packed LHS size %zu", off);
    EXPECT(qgemm_kernel_rhs_packed_size(kern, n, k, 32, &off), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_kernel_run_u16(kern, cpu, x, sizeof x, rhs, size, yh, 10, &a), QGEMM_ERROR_WRONG_DST_TYPE);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, NULL, 10, &a), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_kernel_run(kern, cpu, NULL, sizeof x, rhs, size, y, 10, &a), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, NULL), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, (float*)((char*)y + 2), 10, &a),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_kernel_run(kern, cpu, (const char*)x + 2, sizeof x - 4, rhs, size, y, 10, &a),
           QGEMM_ERROR_MISALIGNED_POINTER);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, (float*)rhs, 10, &a), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, (float*)x, 6, &a), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 9, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x - 4, rhs, size, y, 10, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x - 1, rhs, size, y, 10, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size - 1, y, 10, &a), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_kernel_run(kern, 1u << 31, x, sizeof x, rhs, size, y, 10, &a), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_run(kern, QGEMM_FEATURE_ALL + 1, x, sizeof x, rhs, size, y, 10, &a),
           QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_kernel_run((qgemm_kernel){F32, 999, 0}, cpu, x, sizeof x, rhs, size, y, 10, &a),
           QGEMM_ERROR_INVALID_ARGUMENT);
    qgemm_matmul_args bad = a;
    bad.params = &narrow;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_STRIDE_TOO_SMALL);
    union {
        qgemm_lhs_stride_params p;
        unsigned char b[sizeof(qgemm_lhs_stride_params) + 8];
    } odd;
    memcpy(odd.b + 1, &dense, sizeof dense);
    bad.params = odd.b + 1;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_MISALIGNED_POINTER);
    /* The output over the parameters. */
    float over[16];
    memcpy(over + 12, &dense, sizeof dense);
    bad.params = over + 12;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, over, 16, &bad), QGEMM_ERROR_BUFFERS_OVERLAP);
    bad = a, bad.dst_stride_row = n - 1;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_STRIDE_TOO_SMALL);
    bad = a, bad.k = 0;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_ZERO_DIM);
    bad = a, bad.bl = 32;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_UNSUPPORTED);
    bad = a, bad.m_idx = 1, bad.m = 1;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_MISALIGNED_START);
    bad = a, bad.clamp_min = 1.0f, bad.clamp_max = -1.0f;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_INVALID_CLAMP);
    bad = a, bad.clamp_min = NAN;
    EXPECT(qgemm_kernel_run(kern, cpu, x, sizeof x, rhs, size, y, 10, &bad), QGEMM_ERROR_INVALID_CLAMP);
    EXPECT(qgemm_kernel_dst_offset(kern, 1, 0, n, &off), QGEMM_ERROR_MISALIGNED_START);
    /* The bf16 families take no parameters: a stride for one is refused. */
    {
        qgemm_kernel kb;
        OK(qgemm_select(QGEMM_FAMILY_F32_BF16P_BF16P, 0, m, &kb));
        size_t lb = 0, rb = 0;
        OK(qgemm_kernel_lhs_packed_size(kb, m, k, 0, &lb));
        OK(qgemm_kernel_rhs_packed_size(kb, n, k, 0, &rb));
        uint8_t* pl = calloc(lb, 1);
        uint8_t* pr = calloc(rb, 1);
        OK(qgemm_lhs_bf16p8x4_pack(m, k, x, 6, k, pl, lb));
        OK(qgemm_rhs_bf16p12_b32_pack(n, k, w, 15, QGEMM_LAYOUT_NXK, k, b, 5, pr, rb));
        qgemm_matmul_args ab = a;
        ab.params = NULL;
        OK(qgemm_kernel_run(kb, cpu, pl, lb, pr, rb, y, 10, &ab));
        ab.params = &dense;
        EXPECT(qgemm_kernel_run(kb, cpu, pl, lb, pr, rb, y, 10, &ab), QGEMM_ERROR_INVALID_ARGUMENT);
        free(pl);
        free(pr);
    }
    /* A kernel of a tier the features lack: the f16 family's FMLA kernel on NEON-only bits. */
    OK(qgemm_kernel_count(F16, &count));
    bool found = false;
    for (size_t i = 0; i < count && !found; i++) {
        OK(qgemm_kernel_at(F16, i, &k16));
        OK(qgemm_kernel_get_info(k16, &info));
        found = info.tier == QGEMM_TIER_FP16;
    }
    CHECK(found, "no FP16 kernel in the f16 family");
    CHECK(info.requires == (QGEMM_FEATURE_NEON | QGEMM_FEATURE_FP16), "the FP16 kernel requires 0x%x", info.requires);
    size_t size16 = 0;
    const uint32_t f16rf = info.rhs.nr == 32 ? RHS_F16P32 : RHS_F16P16;
    OK(rhs_size(f16rf, n, k, &size16));
    OK(rhs_pack(f16rf, n, k, wh, 15, true, QGEMM_LAYOUT_NXK, k, NULL, 0, rhs16, size16));
    EXPECT(qgemm_kernel_run_u16(k16, QGEMM_FEATURE_NEON, xh, sizeof xh, rhs16, size16, yh, 10, &a),
           QGEMM_ERROR_UNSUPPORTED_CPU);
    EXPECT(qgemm_kernel_run(k16, cpu, xh, sizeof xh, rhs16, size16, y, 10, &a), QGEMM_ERROR_WRONG_DST_TYPE);

    /* The operator. */
    qgemm_linear layer, l16, other;
    size_t ws = 0, ss = 0;
    OK(qgemm_linear_packed_size(F32, n, k, 0, &ws));
    EXPECT(qgemm_linear_packed_size(F32, 0, k, 0, &off), QGEMM_ERROR_ZERO_DIM);
    EXPECT(qgemm_linear_packed_size(F32, n, k, 32, &off), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_linear_packed_size(QGEMM_FAMILY_F16_BF16P_BF16P + 1, n, k, 0, &off), QGEMM_ERROR_INVALID_ARGUMENT);
    uint8_t* wbuf = malloc(ws);
    EXPECT(qgemm_linear_pack(F32, w, 15, QGEMM_LAYOUT_NXK, k, n, k, b, 5, wbuf, ws, NULL), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_linear_pack_u16(F32, wh, 15, QGEMM_LAYOUT_NXK, k, n, k, NULL, 0, wbuf, ws, &layer),
           QGEMM_ERROR_WRONG_DST_TYPE);
    EXPECT(qgemm_linear_pack(F32, w, 15, QGEMM_LAYOUT_NXK, k, n, k, b, 5, wbuf, ws - 1, &layer),
           QGEMM_ERROR_BUFFER_TOO_SHORT);
    /* A quantized family's weights are quantized (qgemm_linear_quantize_pack), a float family's not. */
    EXPECT(qgemm_linear_pack(QGEMM_FAMILY_QAI8DXP_QSI4CXP, w, 15, QGEMM_LAYOUT_NXK, k, n, k, b, 5, wbuf, ws, &layer),
           QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_linear_quantize_workspace_size(F32, n, k, 0, &off), QGEMM_ERROR_UNSUPPORTED);
    EXPECT(qgemm_linear_quantize_pack(F32, w, 15, QGEMM_LAYOUT_NXK, k, n, k, 0, QGEMM_QUANT_ROUND_TO_NEAREST, NULL, 0,
                                      b, 5, lhs, sizeof lhs, wbuf, ws, &layer),
           QGEMM_ERROR_UNSUPPORTED);
    OK(qgemm_linear_pack(F32, w, 15, QGEMM_LAYOUT_NXK, k, n, k, b, 5, wbuf, ws, &layer));
    CHECK(layer.size == sizeof layer && layer.family == F32 && same_rhs(layer.packing, RHS_PACKING[RHS_F32P16]) &&
              layer.bl == 0 && layer.weights == wbuf && layer.weights_len == ws,
          "qgemm_linear_pack: the layer's fields");
    EXPECT(qgemm_linear_from_packed(F32, NULL, n, k, 0, wbuf, ws - 1, &l16), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_from_packed(F32, NULL, n, k, 0, NULL, ws, &l16), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_linear_from_packed(F32, NULL, n, k, 32, wbuf, ws, &l16), QGEMM_ERROR_UNSUPPORTED);
    /* Packings no kernel of the family reads: another family's format, a tile of 4 channels. */
    EXPECT(qgemm_linear_from_packed(F32, &RHS_PACKING[RHS_BF16P12_B32], n, k, 0, wbuf, ws, &l16),
           QGEMM_ERROR_PACKING_MISMATCH);
    EXPECT(qgemm_linear_from_packed(F32, &f32p4, n, k, 0, wbuf, ws, &l16), QGEMM_ERROR_PACKING_MISMATCH);
    EXPECT(qgemm_linear_from_packed(F32, &bad_format, n, k, 0, wbuf, ws, &l16), QGEMM_ERROR_INVALID_ARGUMENT);
    OK(qgemm_linear_scratch_size(&layer, m, &ss));
    CHECK(ss == 0, "scratch of the unpacked family: %zu", ss);
    memset(y, 0, sizeof y);
    OK(qgemm_linear_run(&layer, cpu, m, x, 6, y, 10, NULL, 0));
    CHECK(y[0] == 0.5f - 6.0f, "operator y[0] = %g", (double)y[0]);
    OK(qgemm_linear_run(&layer, cpu, 0, x, 0, y, 0, NULL, 0));
    EXPECT(qgemm_linear_run_u16(&layer, cpu, m, xh, 6, yh, 10, NULL, 0), QGEMM_ERROR_WRONG_DST_TYPE);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, 5, y, 10, NULL, 0), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, 6, y, 9, NULL, 0), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run(&layer, cpu, m, x, 6, (float*)x, 6, NULL, 0), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_linear_run(NULL, cpu, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_NULL_POINTER);
    EXPECT(qgemm_linear_run(&layer, 1u << 14, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_INVALID_ARGUMENT);
    other = layer, other.family = 99;
    EXPECT(qgemm_linear_run(&other, cpu, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_INVALID_ARGUMENT);
    other = layer, other.family = QGEMM_FAMILY_F32_BF16P_BF16P; /* f32 activations, another format */
    EXPECT(qgemm_linear_run(&other, cpu, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_PACKING_MISMATCH);
    other = layer, other.weights_len = ws - 1;
    EXPECT(qgemm_linear_run(&other, cpu, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_BUFFER_TOO_SHORT);
    other = layer, other.size = sizeof other - 8;
    EXPECT(qgemm_linear_run(&other, cpu, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_STRUCT_SIZE);
    other = layer, other.packing = f32p4;
    EXPECT(qgemm_linear_run(&other, cpu, m, x, 6, y, 10, NULL, 0), QGEMM_ERROR_PACKING_MISMATCH);
    /* The f32p8 packing of the same weights: its own kernels. */
    {
        size_t s8 = 0;
        OK(qgemm_rhs_f32p8_packed_size(n, k, &s8));
        uint8_t* w8 = malloc(s8);
        OK(qgemm_rhs_f32p8_pack(n, k, w, 15, QGEMM_LAYOUT_NXK, k, b, 5, w8, s8));
        qgemm_linear l8;
        OK(qgemm_linear_from_packed(F32, &RHS_PACKING[RHS_F32P8], n, k, 0, w8, s8, &l8));
        CHECK(same_rhs(l8.packing, RHS_PACKING[RHS_F32P8]) && l8.weights_len == s8, "the f32p8 layer");
        float y8[10];
        OK(qgemm_linear_run(&l8, cpu, m, x, 6, y8, 10, NULL, 0));
        CHECK(memcmp(y8, y, sizeof y8) == 0, "the f32p8 layer differs from the f32p16 one");
        free(w8);
    }
    qgemm_linear_call call, c2;
    EXPECT(qgemm_linear_prepare(&layer, cpu, m, x, 6, NULL, 0, 1.0f, 0.0f, &call), QGEMM_ERROR_INVALID_CLAMP);
    OK(qgemm_linear_prepare(&layer, cpu, m, x, 6, NULL, 0, -INFINITY, INFINITY, &call));
    CHECK(call.size == sizeof call && call.lhs == x && call.lhs_size == sizeof x && call.m == m,
          "the call reads x in place (%zu bytes)", call.lhs_size);
    qgemm_rect rects[64];
    EXPECT(qgemm_linear_split(&call, 1, rects, 0, &count), QGEMM_ERROR_BUFFER_TOO_SHORT);
    /* rects inside the layer's weights: refused, the weights untouched; no count pointer: refused
     * before anything is written. */
    unsigned char wsave[256];
    memcpy(wsave, wbuf, ws < sizeof wsave ? ws : sizeof wsave);
    qgemm_rect* in_weights = (qgemm_rect*)(((uintptr_t)wbuf + 7) & ~(uintptr_t)7);
    EXPECT(qgemm_linear_split(&call, 1, in_weights, 1, &count), QGEMM_ERROR_BUFFERS_OVERLAP);
    CHECK(memcmp(wsave, wbuf, ws < sizeof wsave ? ws : sizeof wsave) == 0, "split into the weights wrote them");
    rects[0] = (qgemm_rect){7, 7, 7, 7};
    EXPECT(qgemm_linear_split(&call, 1, rects, 64, NULL), QGEMM_ERROR_NULL_POINTER);
    CHECK(rects[0].m_idx == 7 && rects[0].m == 7, "split without a count pointer wrote rects");
    OK(qgemm_linear_split(&call, 1, rects, 64, &count));
    OK(qgemm_linear_run_part(&call, rects[0], y, 10));
    EXPECT(qgemm_linear_run_part_u16(&call, rects[0], yh, 10), QGEMM_ERROR_WRONG_DST_TYPE);
    EXPECT(qgemm_linear_run_part(&call, rects[0], y, 9), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run_part(&call, rects[0], (float*)x, 6), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_linear_run_part(&call, (qgemm_rect){0, 0, m + 1, n}, y, 10), QGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT(qgemm_linear_run_part(&call, (qgemm_rect){1, 0, 1, n}, y, 10), QGEMM_ERROR_MISALIGNED_START);
    c2 = call, c2.kernel.index = 999;
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_INVALID_ARGUMENT);
    c2 = call, c2.kernel.family = F16;
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_INVALID_ARGUMENT);
    /* A kernel of the family that reads another packing (f32p8). */
    OK(qgemm_select_for(F32, 0, m, &RHS_PACKING[RHS_F32P8], NULL, &c2.kernel));
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_PACKING_MISMATCH);
    EXPECT(qgemm_linear_split(&c2, 1, rects, 64, &count), QGEMM_ERROR_PACKING_MISMATCH);
    c2 = call, c2.lhs_size = 5 * sizeof(float);
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_BUFFER_TOO_SHORT);
    c2 = call, c2.lhs_size = sizeof x - 1;
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_BUFFER_TOO_SHORT);
    c2 = call, c2.clamp_min = NAN;
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_INVALID_CLAMP);
    c2 = call, c2.size = 0;
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_STRUCT_SIZE);
    c2 = call, c2.layer.size = sizeof c2.layer + 8;
    EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_STRUCT_SIZE);
    OK(qgemm_kernel_get_info(call.kernel, &info));
    if (info.tier != QGEMM_TIER_SCALAR) {
        c2 = call, c2.features = 0;
        EXPECT(qgemm_linear_run_part(&c2, rects[0], y, 10), QGEMM_ERROR_UNSUPPORTED_CPU);
    }
    /* A bf16 family: scratch needed. */
    size_t ws16 = 0;
    OK(qgemm_linear_packed_size(QGEMM_FAMILY_F16_BF16P_BF16P, n, k, 0, &ws16));
    uint8_t* wbuf16 = malloc(ws16);
    OK(qgemm_linear_pack_u16(QGEMM_FAMILY_F16_BF16P_BF16P, wh, 15, QGEMM_LAYOUT_NXK, k, n, k, NULL, 0, wbuf16, ws16,
                             &l16));
    OK(qgemm_linear_scratch_size(&l16, m, &ss));
    CHECK(ss == 8 * 4 * 2, "bf16p8x4 scratch for 2 rows of depth 3: %zu", ss);
    EXPECT(qgemm_linear_run_u16(&l16, cpu, m, xh, 6, yh, 10, lhs, ss - 1), QGEMM_ERROR_BUFFER_TOO_SHORT);
    EXPECT(qgemm_linear_run_u16(&l16, cpu, m, xh, 6, yh, 10, (uint8_t*)yh, ss), QGEMM_ERROR_BUFFERS_OVERLAP);
    EXPECT(qgemm_linear_run(&l16, cpu, m, x, 6, y, 10, lhs, ss), QGEMM_ERROR_WRONG_DST_TYPE);
    EXPECT(qgemm_linear_set_lut(&l16, NULL), QGEMM_ERROR_INVALID_ARGUMENT); /* no table: not the 2-bit family */
    OK(qgemm_linear_run_u16(&l16, cpu, m, xh, 6, yh, 10, lhs, ss));
    CHECK(yh[0] == 0x4200, "f16_bf16p_bf16p: 3 x 1 x 1 = %#x", yh[0]);

    static const qgemm_status want[] = {
        QGEMM_ERROR_ZERO_DIM,          QGEMM_ERROR_MISALIGNED_START,   QGEMM_ERROR_STRIDE_TOO_SMALL,
        QGEMM_ERROR_BUFFER_TOO_SHORT,  QGEMM_ERROR_UNSUPPORTED,        QGEMM_ERROR_INVALID_CLAMP,
        QGEMM_ERROR_UNSUPPORTED_CPU,   QGEMM_ERROR_SIZE_OVERFLOW,      QGEMM_ERROR_NULL_POINTER,
        QGEMM_ERROR_INVALID_ARGUMENT,  QGEMM_ERROR_MISALIGNED_POINTER, QGEMM_ERROR_BUFFERS_OVERLAP,
        QGEMM_ERROR_WRONG_DST_TYPE,    QGEMM_ERROR_PACKING_MISMATCH,   QGEMM_ERROR_STRUCT_SIZE};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(seen & (1u << want[i]), "status %d (%s) never produced", (int)want[i], qgemm_status_message(want[i]));
    printf("statuses: %zu statuses of the float families produced by failing calls\n", sizeof want / sizeof want[0]);
    free(wbuf16);
    free(wbuf);
    free(rhs16);
    free(rhs);
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: float_plan.py DATA | qgemm_float <cpu model>\n");
        return 2;
    }
    (void)f16_lhs_borrowed_zero_points; /* test_util.h's, for the quantized families */
    const char* c = getenv("QGEMM_FLOAT_CORRUPT");
    corrupt_golden = c && strcmp(c, "1") == 0;
    corrupt_linear = c && strcmp(c, "linear") == 0;
    uint32_t cpu = 0;
    OK(qgemm_cpu_detect(&cpu));
    printf("qgemm_float (%s): features %#x\n", argv[1], cpu);
    selection(cpu);
    golden(cpu);
    statuses(cpu);
    printf("qgemm_float (%s): %zu checks, %zu failures\n", argv[1], checks, failures);
    return failures == 0 ? 0 : 1;
}
