// Layer-2 error hook that throws a C++ exception (Linux).
//
//   kai_hook_throw
//
// The hook is called through `extern "C-unwind"` from `kai_*` entry points that are themselves
// `extern "C-unwind"`, and the Linux library is built with panic = unwind: an exception thrown
// by the hook unwinds through the library's frames (plain frames: nothing to drop) to the caller,
// which catches it. A matmul, a getter, an LHS and an RHS packer each throw, leave their
// output untouched, and a good call afterwards still works. Prints
// `kai_hook_throw: <n> exceptions caught at the call site`; exit 0 only if every check passed.
// Before, the hook type and the entry points were `extern "C"`, so an exception out of the hook
// was undefined behaviour: with the library built panic = abort it happened to pass through; with
// panic = unwind the entry points' abort-on-unwind guards stopped it ("panic in a function that
// cannot unwind", SIGABRT), which this test reports as a failure.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm.h"
#include "kai/ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h"
#include "kai/ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h"
#include "qgemm.h"

namespace {

struct kai_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

int failures;
int thrown;
int caught;

extern "C" void throw_on_error(const char* function, const char* reason, void* user_data) {
    if (user_data != &thrown) {
        std::fprintf(stderr, "FAIL: hook got user_data %p, expected %p\n", user_data, static_cast<void*>(&thrown));
        failures++;
    }
    thrown++;
    throw kai_error(std::string(function) + ": " + reason);
}

uint8_t lhs_p[1 << 14], rhs_p[1 << 14], copy[1 << 14];
float dst[64 * 64];

// `call` must throw a kai_error naming `function`; `buf` (of `len` bytes) must be left as it was.
template <typename F>
void expect_throw(const char* what, const char* function, void* buf, size_t len, F call) {
    std::memcpy(copy, buf, len);
    int before = thrown;
    try {
        call();
        std::fprintf(stderr, "FAIL %s: no exception\n", what);
        failures++;
    } catch (const kai_error& e) {
        caught++;
        if (thrown != before + 1) {
            std::fprintf(stderr, "FAIL %s: caught, but the hook ran %d times\n", what, thrown - before);
            failures++;
        }
        if (std::strncmp(e.what(), function, std::strlen(function)) != 0) {
            std::fprintf(stderr, "FAIL %s: exception \"%s\" does not name %s\n", what, e.what(), function);
            failures++;
        }
    }
    if (std::memcmp(copy, buf, len) != 0) {
        std::fprintf(stderr, "FAIL %s: output written\n", what);
        failures++;
    }
}

}  // namespace

int main() {
    const float lo = -1e30f, hi = 1e30f;
    qgemm_kai_set_error_handler(throw_on_error, &thrown);
    for (float& d : dst) d = -1.0f;

    expect_throw("matmul, dst_stride_col = 8", "kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm", dst,
                 sizeof dst, [&] {
                     kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 8,
                                                                                     lo, hi);
                 });
    size_t offset = 12345;
    expect_throw("getter, lhs_packed_offset at m_idx = 2 (mr 4)",
                 "kai_get_lhs_packed_offset_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm", &offset,
                 sizeof offset, [&] {
                     offset = kai_get_lhs_packed_offset_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(2, 32);
                 });
    static float lhs_f32[4 * 32];
    for (int i = 0; i < 4 * 32; i++) lhs_f32[i] = static_cast<float>(i % 7) - 3.0f;
    lhs_f32[37] = NAN;
    expect_throw("LHS packer, NaN activation", "kai_run_lhs_quant_pack_qai8dxp_f32", lhs_p, sizeof lhs_p, [&] {
        kai_run_lhs_quant_pack_qai8dxp_f32(4, 32, 4, 16, 2, 0, lhs_f32, 32 * sizeof(float), lhs_p);
    });
    lhs_f32[37] = 1.0f;
    static uint8_t raw[64 * 32];
    static float scales[64];
    for (float& s : scales) s = 0.25f;
    kai_rhs_pack_qs4cxs1s0_param bad_zp{1, 4};
    expect_throw("RHS packer, rhs_zero_point = 4", "kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0", rhs_p, sizeof rhs_p, [&] {
        kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, 4, 32, 4, 16, 2, raw, nullptr, scales, rhs_p, 0, &bad_zp);
    });

    // The library is still usable: good calls after the exceptions pack and compute.
    kai_rhs_pack_qs4cxs1s0_param zp{1, 8};
    std::memset(raw, 0x99, sizeof raw);  // every weight +1
    kai_run_rhs_pack_nxk_qsi4cxp_qs4cxs1s0(1, 4, 32, 4, 16, 2, raw, nullptr, scales, rhs_p, 0, &zp);
    for (float& a : lhs_f32) a = 1.0f;
    kai_run_lhs_quant_pack_qai8dxp_f32(4, 32, 4, 16, 2, 0, lhs_f32, 32 * sizeof(float), lhs_p);
    kai_run_matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4x32_neon_i8mm(4, 4, 32, lhs_p, rhs_p, dst, 16, 4, lo, hi);
    for (int i = 0; i < 16; i++) {
        if (std::fabs(dst[i] - 8.0f) > 0.1f) {  // 32 x (1 x 1) x 0.25
            std::fprintf(stderr, "FAIL: good matmul after the exceptions: dst[%d] = %g, expected 8\n", i, dst[i]);
            failures++;
            break;
        }
    }
    if (thrown != 4 || caught != 4) {
        std::fprintf(stderr, "FAIL: %d thrown, %d caught, expected 4 and 4\n", thrown, caught);
        failures++;
    }
    if (failures != 0) {
        std::fprintf(stderr, "kai_hook_throw: %d failures\n", failures);
        return 1;
    }
    std::printf("kai_hook_throw: %d exceptions caught at the call site\n", caught);
    return 0;
}
