/* Helpers shared by the C tests (plain C11, no qgemm or KleidiAI header: kai_compat.c also builds
 * against KleidiAI itself). */
#ifndef QGEMM_TEST_UTIL_H
#define QGEMM_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at `path` (malloc, 16 spare bytes), its length in `*len`; exits 2 if unreadable. */
static void* read_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    void* p = malloc((size_t)l + 16);
    if (p == NULL || fread(p, 1, (size_t)l, f) != (size_t)l) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *len = (size_t)l;
    return p;
}

/* The float whose bit pattern is the hex string `hex` (the plan's clamp bounds). */
static float bits_to_f32(const char* hex) {
    uint32_t u = (uint32_t)strtoul(hex, NULL, 16);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* qgemm's f16 qai8dxp packer gives every row its own zero point. KleidiAI's, with mr = 4 and
 * kr / sr = 4, adds to value j < 8*floor(k/8) of row 4t + i of each whole group of four rows of the
 * call the zero point of row 4t + 2*((j/4) % 2) + i/2 (a defect; docs/formats.md, §Arithmetic:
 * qai8dxp from f16 and bf16), so its
 * bytes differ where those two zero points differ. Compares such a packed LHS `ours` (m rows of
 * the call, depth k, `len` bytes) with KleidiAI's `theirs`: every byte must be equal except
 * quantized values of grouped rows at j < 8*floor(k/8) whose lender row has another zero point,
 * and there (unless the value saturated) KleidiAI's must be ours shifted by the difference of
 * the zero points. Returns the number of differing bytes, or SIZE_MAX with `*why` set if a byte
 * differs in another way. Layout: tiles of 4 rows, 4*Kp values (Kp = k rounded up to 32;
 * blocks of 4 values of each row in turn), then 4 int32 offsets (-zero point) and 4 f32 scales. */
static size_t f16_lhs_borrowed_zero_points(const uint8_t* ours, const uint8_t* theirs, size_t len, size_t m,
                                           size_t k, const char** why) {
    const size_t kp = (k + 31) / 32 * 32, ts = 4 * (kp + 8), grouped = 4 * (m / 4), vec8 = 8 * (k / 8);
    size_t differ = 0;
    *why = NULL;
    if (len % ts != 0) {
        *why = "size is not a whole number of tiles";
        return SIZE_MAX;
    }
    for (size_t at = 0; at < len; at++) {
        if (ours[at] == theirs[at]) continue;
        const size_t t = at / ts, pos = at % ts;
        if (pos >= 4 * kp) {
            *why = "the stored offsets or scales differ";
            return SIZE_MAX;
        }
        const size_t i = (pos % 16) / 4, j = (pos / 16) * 4 + pos % 4, r = 4 * t + i;
        if (r >= grouped || j >= vec8) {
            *why = "a value differs outside the grouped rows' first 8*floor(k/8) values";
            return SIZE_MAX;
        }
        const size_t lender = 4 * t + 2 * ((j / 4) % 2) + i / 2;
        int32_t off_own, off_lender;
        memcpy(&off_own, ours + t * ts + 4 * kp + 4 * i, 4);
        memcpy(&off_lender, ours + t * ts + 4 * kp + 4 * (lender % 4), 4);
        if (off_own == off_lender) {
            *why = "a value differs although the lender row has the same zero point";
            return SIZE_MAX;
        }
        /* q = clamp(v + own), KleidiAI's = clamp(v + lender's) for the same rounded v. */
        const int q = (int8_t)ours[at], g = (int8_t)theirs[at];
        int shifted = q + off_own - off_lender; /* offsets are -zero point */
        shifted = shifted < -128 ? -128 : shifted > 127 ? 127 : shifted;
        if (q > -128 && q < 127 && g != shifted) {
            *why = "a value differs by other than the difference of the two zero points";
            return SIZE_MAX;
        }
        differ++;
    }
    return differ;
}

#endif
