/* main.c -- runs probe_loop (probe.S) for `cargo make tools-check`: `probe [ITERS [CALLS]]`
 * calls it CALLS times (default 3) with ITERS loop iterations each (default 1000). */
#include <stdint.h>
#include <stdlib.h>

void probe_loop(uint64_t iters, void *buf);

int main(int argc, char **argv)
{
    static _Alignas(16) unsigned char buf[128];
    uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000;
    unsigned long calls = argc > 2 ? strtoul(argv[2], NULL, 0) : 3;
    if (iters == 0) {
        return 2;
    }
    for (unsigned long i = 0; i < calls; i++) {
        probe_loop(iters, buf);
    }
    return 0;
}
