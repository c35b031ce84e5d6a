/*
 * plugin.c -- qgemm's instruction-count plugin: a QEMU TCG plugin (plugin API
 * v1, QEMU 7.2 linux-user, as Debian 12's qemu-user ships it) that counts
 * executed guest instructions: in total, per address range (function
 * symbols), and per mnemonic / instruction group inside selected ranges.
 *
 * Usually driven by tools/icount/icount.py, which also builds it (into
 * target/tools/icount-plugin.so; `icount.py --build`). Direct use:
 *   qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu \
 *     -plugin target/tools/icount-plugin.so,ranges=R.tsv,textvaddr=0x0,out=res.tsv \
 *     ./prog args...
 *
 * Plugin arguments (QEMU splits them at commas; each is key=value):
 *   ranges=FILE   one range a line: START<TAB>END<TAB>FLAGS<TAB>NAME, START/END
 *                 hex link-time addresses, END exclusive. FLAGS: 'd' = detail
 *                 (mnemonic histogram, groups, calls), 'x' = may overlap other
 *                 ranges (e.g. a loop inside a function); '-' = none.
 *                 Ranges without 'x' must not overlap each other.
 *   range=NAME@START-END   one more detail+overlap range (repeatable).
 *   textvaddr=HEX link-time p_vaddr of the lowest executable PT_LOAD of the
 *                 main binary; load bias = qemu_plugin_start_code() - textvaddr
 *                 (PIE binaries are loaded at 0x5500000000 by QEMU 7.2 here).
 *   bias=HEX      explicit load bias; overrides textvaddr.
 *   out=FILE      write the result table (TSV) to FILE, else to stderr.
 *   global=on     also keep group + mnemonic counts for the whole run.
 *   atomic=on     count with per-TB callbacks and atomic adds (exact for
 *                 multi-threaded guests, slower); default: inline adds, which
 *                 are not atomic and can lose counts when guest threads race.
 *
 * Counting model: at translation time every instruction of a translation block
 * (TB) is attributed to its ranges / mnemonic; the per-TB sums are added once
 * per TB execution (inline op or callback). A TB left early by a fault or
 * signal is still counted whole. A guest killed by a signal never reaches the
 * atexit callback: no output, except for SIGABRT raised via kill/tkill/tgkill
 * (abort(), Rust panic=abort), where the counts so far are written first.
 *
 * Mnemonics come from a small encoding decoder in this file for the classes that
 * matter for int8 GEMM kernels (QEMU 7.2's capstone-4 disassembler prints
 * ".byte" for SMMLA/SDOT/USDOT/BFMMLA) and from qemu_plugin_insn_disas() for
 * everything else. Own names: smmla ummla usmmla bfmmla sdot udot usdot sudot
 * (vector and by-element), fmla (AdvSIMD vector/element, f32/f64), ld1
 * (multiple structures or one lane), ld1r, ldr_q (LDR/LDUR q, any addressing
 * mode incl. literal), ldp_q (LDP/LDNP q), str_q, stp_q, st1, prfm.
 * Groups (A64 top-level encoding op0): int, ldst, simd (scalar FP + AdvSIMD
 * data processing), branch (branch/exception/system), sve, sme, other.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h" /* beside this file: the API declarations, restated */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Exported by QEMU >= 6.2 (checked with nm -D on Debian's qemu-aarch64 7.2),
 * but not declared in every v1 header; weak so the plugin still loads without. */
extern uint64_t qemu_plugin_start_code(void) __attribute__((weak));

/* ------------------------------------------------------------------ cells */
/* Counter cells live in never-moving chunks: inline ops keep raw pointers. */
#define CHUNK 4096
typedef struct Chunk { uint64_t c[CHUNK]; struct Chunk *next; } Chunk;
static Chunk *chunks;
static size_t chunk_used = CHUNK;

static uint64_t *new_cell(void)
{
    if (chunk_used == CHUNK) {
        Chunk *ch = calloc(1, sizeof(Chunk));
        if (!ch) { perror("icount-plugin: calloc"); abort(); }
        ch->next = chunks;
        chunks = ch;
        chunk_used = 0;
    }
    return &chunks->c[chunk_used++];
}

/* ------------------------------------------------------- interned names */
static char **names;
static size_t n_names, cap_names;

static const char *intern(const char *s, size_t len)
{
    for (size_t i = 0; i < n_names; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
            return names[i];
        }
    }
    if (n_names == cap_names) {
        cap_names = cap_names ? 2 * cap_names : 256;
        names = realloc(names, cap_names * sizeof(*names));
    }
    char *p = malloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    names[n_names++] = p;
    return p;
}

/* ------------------------------------------------------------ histograms */
enum { G_INT, G_LDST, G_SIMD, G_BRANCH, G_SVE, G_SME, G_OTHER, N_GROUPS };
static const char *group_name[N_GROUPS] = {
    "int", "ldst", "simd", "branch", "sve", "sme", "other"
};

typedef struct { const char *name; uint64_t *cell; } HEntry;
typedef struct {
    HEntry *e;
    size_t n, cap;
    uint64_t *group[N_GROUPS];
} Hist;

static uint64_t *hist_cell(Hist *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++) {
        if (h->e[i].name == name) {
            return h->e[i].cell;
        }
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 32;
        h->e = realloc(h->e, h->cap * sizeof(HEntry));
    }
    h->e[h->n].name = name;
    h->e[h->n].cell = new_cell();
    return h->e[h->n++].cell;
}

static uint64_t *group_cell(Hist *h, int g)
{
    if (!h->group[g]) {
        h->group[g] = new_cell();
    }
    return h->group[g];
}

/* ---------------------------------------------------------------- ranges */
typedef struct {
    uint64_t start, end;        /* link-time addresses, end exclusive */
    char *name;
    bool detail, overlap;
    size_t index;               /* order in the input, for the output */
    uint64_t *insns;            /* allocated on first translation */
    uint64_t *calls;            /* detail only */
    Hist hist;                  /* detail only */
} Range;

static Range *ranges;           /* sorted by start after setup; !overlap ones */
static size_t n_ranges, cap_ranges;
static Range *xranges;          /* overlapping ranges, linear scan */
static size_t n_xranges, cap_xranges;

static void add_range(uint64_t s, uint64_t e, const char *flags, const char *name)
{
    bool overlap = strchr(flags, 'x') != NULL;
    Range **arr = overlap ? &xranges : &ranges;
    size_t *n = overlap ? &n_xranges : &n_ranges;
    size_t *cap = overlap ? &cap_xranges : &cap_ranges;
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        *arr = realloc(*arr, *cap * sizeof(Range));
    }
    Range *r = &(*arr)[(*n)++];
    memset(r, 0, sizeof(*r));
    r->start = s;
    r->end = e;
    r->name = strdup(name);
    r->detail = overlap || strchr(flags, 'd') != NULL;
    r->overlap = overlap;
    r->index = n_ranges + n_xranges - 1;
}

static int cmp_range(const void *a, const void *b)
{
    const Range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static Range *find_range(uint64_t va)
{
    size_t lo = 0, hi = n_ranges;
    while (lo < hi) {           /* first range with start > va */
        size_t mid = (lo + hi) / 2;
        if (ranges[mid].start <= va) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return NULL;
    }
    Range *r = &ranges[lo - 1];
    return va < r->end ? r : NULL;
}

/* ------------------------------------------------------------- settings */
static const char *out_path;
static bool opt_global, opt_atomic;
static bool have_textvaddr, have_bias, bias_ready;
static uint64_t textvaddr, bias, start_code;
static uint64_t *total_cell;
static Hist global_hist;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* -------------------------------------------------------------- decoder */
static int group_of(uint32_t w)
{
    uint32_t op0 = (w >> 25) & 0xf;
    if (op0 == 0x2) {
        return G_SVE;
    }
    if (op0 == 0x0) {
        return (w >> 31) ? G_SME : G_OTHER;
    }
    if ((op0 & 0xe) == 0x8) {
        return G_INT;           /* data processing, immediate */
    }
    if ((op0 & 0xe) == 0xa) {
        return G_BRANCH;
    }
    if ((op0 & 0x5) == 0x4) {
        return G_LDST;          /* x1x0 */
    }
    if ((op0 & 0x7) == 0x5) {
        return G_INT;           /* data processing, register */
    }
    if ((op0 & 0x7) == 0x7) {
        return G_SIMD;
    }
    return G_OTHER;
}

/* Names for the encodings we care about; NULL: ask the disassembler. */
static const char *decode(uint32_t w)
{
    /* matrix multiply-accumulate (AdvSIMD) */
    switch (w & 0xffe0fc00) {
    case 0x4e80a400: return "smmla";
    case 0x6e80a400: return "ummla";
    case 0x4e80ac00: return "usmmla";
    case 0x6e40ec00: return "bfmmla";
    }
    /* dot products, vector: 0 Q U 01110 size 0 Rm 1001 x1 Rn Rd */
    switch (w & 0xbfe0fc00) {
    case 0x0e809400: return "sdot";
    case 0x2e809400: return "udot";
    case 0x0e809c00: return "usdot";
    }
    /* dot products, by element */
    switch (w & 0xbfc0f400) {
    case 0x0f80e000: return "sdot";
    case 0x2f80e000: return "udot";
    case 0x0f80f000: return "usdot";
    case 0x0f00f000: return "sudot";
    }
    /* FMLA vector (f32/f64) and by element (f32/f64) */
    if ((w & 0xbfa0fc00) == 0x0e20cc00 || (w & 0xbf80f400) == 0x0f801000) {
        return "fmla";
    }
    /* AdvSIMD load/store multiple structures (no offset / post-index) */
    if ((w & 0xbfbf0000) == 0x0c000000 || (w & 0xbfa00000) == 0x0c800000) {
        uint32_t opc = (w >> 12) & 0xf;
        bool load = (w >> 22) & 1;
        if (opc == 0x7 || opc == 0xa || opc == 0x6 || opc == 0x2) {
            return load ? "ld1" : "st1";
        }
        return NULL;
    }
    /* AdvSIMD load/store single structure (no offset / post-index) */
    if ((w & 0xbf9f0000) == 0x0d000000 || (w & 0xbf800000) == 0x0d800000) {
        bool load = (w >> 22) & 1, r = (w >> 21) & 1;
        uint32_t opc = (w >> 13) & 7;
        if (!r && load && opc == 6) {
            return "ld1r";
        }
        if (!r && (opc == 0 || opc == 2 || opc == 4)) {
            return load ? "ld1" : "st1";
        }
        return NULL;
    }
    /* LDR/STR (SIMD&FP) 128-bit: unsigned offset; unscaled/post/pre; register */
    switch (w & 0xffc00000) {
    case 0x3dc00000: return "ldr_q";
    case 0x3d800000: return "str_q";
    }
    switch (w & 0xffe00000) {
    case 0x3cc00000: return "ldr_q";
    case 0x3c800000: return "str_q";
    case 0x3ce00000:
        if ((w & 0xc00) == 0x800) return "ldr_q";
        break;
    case 0x3ca00000:
        if ((w & 0xc00) == 0x800) return "str_q";
        break;
    }
    if ((w & 0xff000000) == 0x9c000000) {
        return "ldr_q";         /* literal */
    }
    /* LDP/STP/LDNP/STNP (SIMD&FP) 128-bit */
    switch (w & 0xfc400000) {
    case 0xac400000: return "ldp_q";
    case 0xac000000: return "stp_q";
    }
    /* PRFM (immediate, literal, register) and PRFUM */
    if ((w & 0xffc00000) == 0xf9800000 || (w & 0xff000000) == 0xd8000000 ||
        (w & 0xffe00c00) == 0xf8a00800 || (w & 0xffe00c00) == 0xf8800000) {
        return "prfm";
    }
    return NULL;
}

static const char *mnemonic(struct qemu_plugin_insn *insn, uint32_t w)
{
    const char *own = decode(w);
    if (own) {
        return intern(own, strlen(own));
    }
    char *d = qemu_plugin_insn_disas(insn);
    if (!d) {
        return intern("(undecoded)", 11);
    }
    const char *res;
    if (d[0] == '.') {          /* capstone prints ".byte 0x.." when unknown */
        res = intern("(undecoded)", 11);
    } else {
        size_t len = strcspn(d, " \t");
        res = intern(d, len);
    }
    free(d);
    return res;
}

/* --------------------------------------------------------- translation */
typedef struct { uint64_t *ptr; uint64_t imm; } Op;
typedef struct { size_t n; Op op[]; } OpList;

static Op *ops;
static size_t n_ops, cap_ops;

static void add_op(uint64_t *ptr, uint64_t imm)
{
    for (size_t i = 0; i < n_ops; i++) {
        if (ops[i].ptr == ptr) {
            ops[i].imm += imm;
            return;
        }
    }
    if (n_ops == cap_ops) {
        cap_ops = cap_ops ? 2 * cap_ops : 64;
        ops = realloc(ops, cap_ops * sizeof(Op));
    }
    ops[n_ops].ptr = ptr;
    ops[n_ops].imm = imm;
    n_ops++;
}

static void count_in(Range *r, uint64_t lva, int grp, const char **mn,
                     struct qemu_plugin_insn *insn, uint32_t w)
{
    if (!r->insns) {
        r->insns = new_cell();
    }
    add_op(r->insns, 1);
    if (!r->detail) {
        return;
    }
    if (lva == r->start) {
        if (!r->calls) {
            r->calls = new_cell();
        }
        add_op(r->calls, 1);
    }
    if (!*mn) {
        *mn = mnemonic(insn, w);
    }
    add_op(hist_cell(&r->hist, *mn), 1);
    add_op(group_cell(&r->hist, grp), 1);
}

static void tb_exec_atomic(unsigned int vcpu, void *udata)
{
    OpList *l = udata;
    (void)vcpu;
    for (size_t i = 0; i < l->n; i++) {
        __atomic_fetch_add(l->op[i].ptr, l->op[i].imm, __ATOMIC_RELAXED);
    }
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    pthread_mutex_lock(&lock);
    if (!bias_ready) {
        start_code = qemu_plugin_start_code ? qemu_plugin_start_code() : 0;
        if (!have_bias) {
            if (have_textvaddr && qemu_plugin_start_code) {
                bias = start_code - textvaddr;
            } else if (have_textvaddr) {
                fprintf(stderr, "icount-plugin: qemu_plugin_start_code() missing; "
                        "assuming load bias 0 (pass bias=)\n");
            }
        }
        bias_ready = true;
    }
    n_ops = 0;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t lva = qemu_plugin_insn_vaddr(insn) - bias;
        uint32_t w = 0;
        size_t sz = qemu_plugin_insn_size(insn);
        memcpy(&w, qemu_plugin_insn_data(insn), sz < 4 ? sz : 4);
        int grp = group_of(w);
        const char *mn = NULL;

        add_op(total_cell, 1);
        if (opt_global) {
            mn = mnemonic(insn, w);
            add_op(hist_cell(&global_hist, mn), 1);
            add_op(group_cell(&global_hist, grp), 1);
        }
        Range *r = find_range(lva);
        if (r) {
            count_in(r, lva, grp, &mn, insn, w);
        }
        for (size_t j = 0; j < n_xranges; j++) {
            if (lva >= xranges[j].start && lva < xranges[j].end) {
                count_in(&xranges[j], lva, grp, &mn, insn, w);
            }
        }
    }
    if (opt_atomic) {
        OpList *l = malloc(sizeof(OpList) + n_ops * sizeof(Op));
        l->n = n_ops;
        memcpy(l->op, ops, n_ops * sizeof(Op));
        qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec_atomic,
                                             QEMU_PLUGIN_CB_NO_REGS, l);
    } else {
        for (size_t i = 0; i < n_ops; i++) {
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                     ops[i].ptr, ops[i].imm);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* -------------------------------------------------------------- output */
static void dump_hist(FILE *f, const char *tag, long idx, Hist *h)
{
    for (int g = 0; g < N_GROUPS; g++) {
        if (h->group[g] && *h->group[g]) {
            if (idx >= 0) {
                fprintf(f, "%sgroup\t%ld\t%s\t%" PRIu64 "\n", tag, idx,
                        group_name[g], *h->group[g]);
            } else {
                fprintf(f, "%sgroup\t%s\t%" PRIu64 "\n", tag, group_name[g],
                        *h->group[g]);
            }
        }
    }
    for (size_t i = 0; i < h->n; i++) {
        if (*h->e[i].cell == 0) {
            continue;
        }
        if (idx >= 0) {
            fprintf(f, "%smnem\t%ld\t%s\t%" PRIu64 "\n", tag, idx, h->e[i].name,
                    *h->e[i].cell);
        } else {
            fprintf(f, "%smnem\t%s\t%" PRIu64 "\n", tag, h->e[i].name,
                    *h->e[i].cell);
        }
    }
}

static void dump_range(FILE *f, Range *r)
{
    if (!r->insns || *r->insns == 0) {
        return;
    }
    fprintf(f, "range\t%zu\t%" PRIu64 "\t%" PRIu64 "\t0x%" PRIx64 "\t0x%" PRIx64
            "\t%s\n", r->index, *r->insns, r->calls ? *r->calls : 0,
            r->start, r->end, r->name);
    if (r->detail) {
        dump_hist(f, "r", (long)r->index, &r->hist);
    }
}

static void write_results(const char *note)
{
    FILE *f = stderr;
    if (out_path) {
        f = fopen(out_path, "w");
        if (!f) {
            perror(out_path);
            f = stderr;
        }
    }
    fprintf(f, "# icount-plugin 1\n");
    fprintf(f, "mode\t%s\n", opt_atomic ? "atomic" : "inline");
    fprintf(f, "start_code\t0x%" PRIx64 "\n", start_code);
    fprintf(f, "bias\t0x%" PRIx64 "\n", bias);
    fprintf(f, "total\t%" PRIu64 "\n", *total_cell);
    if (note) {
        fprintf(f, "note\t%s\n", note);
    }
    if (opt_global) {
        dump_hist(f, "g", -1, &global_hist);
    }
    for (size_t i = 0; i < n_ranges; i++) {
        dump_range(f, &ranges[i]);
    }
    for (size_t i = 0; i < n_xranges; i++) {
        dump_range(f, &xranges[i]);
    }
    fprintf(f, "end\n");
    if (f != stderr) {
        fclose(f);
    }
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    pthread_mutex_lock(&lock);
    write_results(NULL);
    pthread_mutex_unlock(&lock);
}

/* A guest killed by a signal never reaches the atexit callback. abort() (C
 * assert, Rust panic=abort) raises SIGABRT through kill/tkill/tgkill first, so
 * write the counts then; a normal exit later overwrites them. */
static bool is_aarch64;

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num,
                       uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                       uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
    (void)id; (void)vcpu; (void)a1; (void)a4; (void)a5; (void)a6; (void)a7; (void)a8;
    /* aarch64 Linux: kill = 129, tkill = 130 (id, sig), tgkill = 131 (tgid, tid, sig) */
    uint64_t sig = num == 129 || num == 130 ? a2 : num == 131 ? a3 : 0;
    if (is_aarch64 && sig == 6) {
        pthread_mutex_lock(&lock);
        write_results("guest raised SIGABRT; counts up to that point");
        pthread_mutex_unlock(&lock);
    }
}

/* --------------------------------------------------------------- setup */
static bool parse_hex(const char *s, uint64_t *v)
{
    char *end;
    *v = strtoull(s, &end, 16);
    return end != s && *end == 0;
}

static bool load_ranges(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return false;
    }
    char line[8192];
    unsigned lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') {
            continue;
        }
        char *tok[4];
        char *p = line;
        int k;
        for (k = 0; k < 3; k++) {
            tok[k] = p;
            p = strchr(p, '\t');
            if (!p) {
                break;
            }
            *p++ = 0;
        }
        tok[3] = p;
        uint64_t s, e;
        if (k < 3 || !parse_hex(tok[0], &s) || !parse_hex(tok[1], &e) || e <= s) {
            fprintf(stderr, "icount-plugin: %s:%u: bad range line\n", path, lineno);
            fclose(f);
            return false;
        }
        add_range(s, e, tok[2], tok[3]);
    }
    fclose(f);
    return true;
}

static bool parse_range_arg(const char *v)
{
    /* NAME@START-END */
    const char *at = strrchr(v, '@');
    const char *dash = at ? strchr(at, '-') : NULL;
    uint64_t s, e;
    if (!at || !dash) {
        return false;
    }
    char buf[64];
    size_t len = (size_t)(dash - at - 1);
    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, at + 1, len);
    buf[len] = 0;
    if (!parse_hex(buf, &s) || !parse_hex(dash + 1, &e) || e <= s) {
        return false;
    }
    char *name = strndup(v, (size_t)(at - v));
    add_range(s, e, "dx", name);
    free(name);
    return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info,
                                           int argc, char **argv)
{
    if (info->system_emulation) {
        fprintf(stderr, "icount-plugin: meant for linux-user mode\n");
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (!eq) {
            fprintf(stderr, "icount-plugin: bad argument '%s'\n", a);
            return -1;
        }
        size_t klen = (size_t)(eq - a);
        const char *v = eq + 1;
#define KEY(k) (klen == strlen(k) && strncmp(a, k, klen) == 0)
        bool on = !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1");
        if (KEY("ranges")) {
            if (!load_ranges(v)) {
                return -1;
            }
        } else if (KEY("range")) {
            if (!parse_range_arg(v)) {
                fprintf(stderr, "icount-plugin: bad range '%s' "
                        "(want NAME@HEXSTART-HEXEND)\n", v);
                return -1;
            }
        } else if (KEY("textvaddr")) {
            if (!parse_hex(v, &textvaddr)) {
                fprintf(stderr, "icount-plugin: bad textvaddr '%s'\n", v);
                return -1;
            }
            have_textvaddr = true;
        } else if (KEY("bias")) {
            if (!parse_hex(v, &bias)) {
                fprintf(stderr, "icount-plugin: bad bias '%s'\n", v);
                return -1;
            }
            have_bias = true;
        } else if (KEY("out")) {
            out_path = v;
        } else if (KEY("global")) {
            opt_global = on;
        } else if (KEY("atomic")) {
            opt_atomic = on;
        } else {
            fprintf(stderr, "icount-plugin: unknown argument '%s'\n", a);
            return -1;
        }
#undef KEY
    }
    qsort(ranges, n_ranges, sizeof(Range), cmp_range);
    for (size_t i = 1; i < n_ranges; i++) {
        if (ranges[i].start < ranges[i - 1].end) {
            fprintf(stderr, "icount-plugin: ranges '%s' and '%s' overlap; "
                    "mark one with flag 'x'\n", ranges[i - 1].name, ranges[i].name);
            return -1;
        }
    }
    total_cell = new_cell();
    is_aarch64 = info->target_name && strcmp(info->target_name, "aarch64") == 0;
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
