#!/usr/bin/env bash
# Builds the bare-metal C image (capi/target/baremetal-c/image.elf) and runs it under
# qemu-system-aarch64 -M virt at EL1 on each CPU model given (default: max cortex-a53).
#   capi/baremetal/build.sh [cpu...]
# Needs capi/target/aarch64-unknown-none/release/libqgemm_capi.a (cargo make capi-build);
# QGEMM_CAPI_NONE_LIB overrides the library, KAI_INCLUDE the header directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib=${QGEMM_CAPI_NONE_LIB:-$root/capi/target/aarch64-unknown-none/release/libqgemm_capi.a}
inc=${KAI_INCLUDE:-$root/capi/include}
out=${QGEMM_BAREMETAL_OUT:-$root/capi/target/baremetal-c}
CC=${CC:-aarch64-linux-gnu-gcc}
[[ -f $lib ]] || { echo "build.sh: $lib missing (cargo make capi-build)" >&2; exit 1; }
mkdir -p "$out"
set -x
"$CC" -O2 -Wall -Wextra -Werror -std=c11 -ffreestanding -nostdlib -static -fno-pie -no-pie \
    -mcpu=cortex-a53 -I"$inc" -I"$root/capi/include" -I"$here" -T "$here/link.ld" -Wl,--gc-sections -Wl,--build-id=none -Wl,--no-warn-rwx-segments \
    "$here/start.S" "$here/main.c" "$lib" -lgcc -o "$out/image.elf"
set +x
cpus=("$@")
((${#cpus[@]})) || cpus=(max cortex-a53)
for cpu in "${cpus[@]}"; do
    echo "=== qemu-system-aarch64 -M virt -cpu $cpu: $out/image.elf"
    status=0
    timeout 120 qemu-system-aarch64 -M virt -cpu "$cpu" -m 128M -nographic -semihosting -nic none \
        -kernel "$out/image.elf" </dev/null || status=$?
    if [[ $status != 0 ]]; then
        [[ $status == 124 ]] && echo "baremetal-c: -cpu $cpu timed out after 120 s" >&2
        echo "baremetal-c: -cpu $cpu failed (exit $status)" >&2
        exit 1
    fi
done
echo "baremetal-c: ok on ${cpus[*]}"
