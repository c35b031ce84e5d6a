#!/usr/bin/env python3
"""Extracts the layer-2 C example of README.md (the first ```c block of "## From C") and wraps it
in a program that runs it on a small problem, so the README's example is compiled, linked and run
by capi/tests/c/run.sh. Usage: readme_example.py README.md > readme_example.c"""
import re
import sys

text = open(sys.argv[1]).read()
section = text[text.index("## From C"):]
block = re.search(r"```c\n(.*?)```", section, re.S).group(1)
includes = [l for l in block.splitlines() if l.startswith("#include")]
body = [l for l in block.splitlines() if not l.startswith("#include")]
print("/* Generated from README.md by readme_example.py: the README's layer-2 example, run. */")
print("#include <float.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>")
print("\n".join(includes))
print("""
enum { M = 2, N = 8, K = 64 };
static uint8_t weights[N * K / 2], rhs_packed[1 << 12], lhs_packed[1 << 12];
static float bias[N], scales[N], act[M * K], dst[M * N];

static void example(size_t m, size_t n, size_t k) {""")
print("\n".join("    " + l if l else l for l in body))
print("""}

int main(void) {
    for (size_t i = 0; i < sizeof weights; i++) weights[i] = 0x99; /* every weight +1 */
    for (int i = 0; i < N; i++) scales[i] = 0.5f;
    for (int i = 0; i < M * K; i++) act[i] = 1.0f;
    example(M, N, K);
    for (int i = 0; i < M * N; i++) {
        if (!(fabsf(dst[i] - 32.0f) < 0.05f)) { /* 64 * 1 * 1 * 0.5 */
            fprintf(stderr, "readme_example: dst[%d] = %g, expected 32\\n", i, dst[i]);
            return 1;
        }
    }
    printf("readme_example: the README's KleidiAI example ran, dst = 32 everywhere\\n");
    return 0;
}""")
