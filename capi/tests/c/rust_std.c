/* A C program linked with libqgemm_capi.a and a Rust `std` static library
 * (capi/tests/rust-std/staticlib); run.sh links it in both orders (library first, Rust library
 * first) and runs it. Linking failed while the C library defined a panic handler of its own
 * (`multiple definition of rust_begin_unwind`). Prints the Rust library's line and then
 * `rust_std: ok`; exit 0 only if both libraries work. */
#include <stdint.h>
#include <stdio.h>

#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm.h"
#include "qgemm.h"

/* From the Rust library: sums 0..n, catches a deliberate panic, prints a line; returns the sum
 * (UINT64_MAX if the panic was not caught or printing failed). */
uint64_t qgemm_test_rust_std_report(uint32_t n);

int main(void) {
    uint32_t features = 0;
    qgemm_status st = qgemm_cpu_from_target(&features);
    if (st != QGEMM_OK) {
        fprintf(stderr, "rust_std: qgemm_cpu_from_target: %s\n", qgemm_status_message(st));
        return 1;
    }
    if (kai_get_mr_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm() != 4) {
        fprintf(stderr, "rust_std: kai getter gave a wrong mr\n");
        return 1;
    }
    fflush(stdout);
    uint64_t sum = qgemm_test_rust_std_report(10);
    if (sum != 45) {
        fprintf(stderr, "rust_std: the Rust library returned %llu, expected 45\n", (unsigned long long)sum);
        return 1;
    }
    printf("rust_std: ok\n");
    return 0;
}
