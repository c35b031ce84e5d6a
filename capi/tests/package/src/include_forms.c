/* Package consumer: the include forms. Includes layer 1 in both forms, `<qgemm/qgemm.h>` and
 * `"qgemm.h"` (one declaration: the forwarder includes the real header, whose guard holds), and a
 * KleidiAI header by its `kai/` path, all from the package's own flags. run.sh plants a second
 * kai/ tree at <prefix>/include/kai (a real KleidiAI installed in the same prefix) whose headers
 * are an #error and a marker header: the build fails if the flags put <prefix>/include on the
 * include path. Prints
 *   qgemm-package: include forms ok: <ukernel m_step> <qgemm status message>
 * (run.sh greps that line). */
#include <stdint.h>
#include <stdio.h>

#include <qgemm/qgemm.h>
#include "qgemm.h"
#include "kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod.h"

#if defined(__has_include)
#if __has_include("kai/qgemm_package_second_kai_tree.h")
#error "<prefix>/include is on the include path: a second kai/ tree can be found"
#endif
#endif

int main(void) {
    uint32_t cpu;
    enum qgemm_status st = qgemm_cpu_detect(&cpu);
    if (st != QGEMM_OK) {
        fprintf(stderr, "include_forms: qgemm_cpu_detect: %s\n", qgemm_status_message(st));
        return 1;
    }
    printf("qgemm-package: include forms ok: m_step=%zu %s\n",
           kai_get_m_step_matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod(), qgemm_status_message(st));
    return 0;
}
