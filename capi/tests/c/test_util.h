/* Helpers shared by the C tests (plain C11, no qgemm or KleidiAI header: kai_compat.c also builds
 * against KleidiAI itself). */
#ifndef QGEMM_TEST_UTIL_H
#define QGEMM_TEST_UTIL_H

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

#endif
