#!/usr/bin/env bash
# C tests of the qgemm C library (issue 9), run under qemu-aarch64 on each CPU model given.
#
#   capi/tests/c/run.sh [cpu...]        default: max cortex-a53
#
# Needs capi/target/aarch64-unknown-linux-gnu/release/libqgemm_capi.a (cargo make capi-build).
# Environment: QGEMM_CAPI_LIB  the static library to link (default: the path above); pointing it at
#              a KleidiAI build (with KAI_INCLUDE for its headers) runs the layer-2 test on KleidiAI;
#              KAI_INCLUDE    the include dir for the kai/ headers (default capi/include).
# Tests:
#   check_symbols  the archive's kai_* and qgemm_* symbols equal the functions the headers declare
#                  (check_symbols.py; also on the bare-metal archive when it is built)
#   kai_compat     layer 2: every (golden case, KleidiAI kernel) against the golden bits, the float
#                  families' cases included (kai_plan.py --float)
#   kai_hook       layer 2: a custom error hook fires on bad calls; the default hook aborts (134)
#   kai_hook_throw layer 2, C++: a hook that throws; the exception reaches the caller's catch
#   qgemm_layer1   layer 1: every kernel, packer, query and error status of qgemm.h (the 2-bit table as
#                  qgemm_lut_params), the catalogue of all 15 families (format codes, required features,
#                  qgemm_kernel_resolve, QGEMM_FEATURE_ALL), qgemm_select_for with explicit packings, and the
#                  operator (qgemm_linear_*) against the Rust operator's digests
#                  (capi/tests/data/linear_digests.txt), over every RHS packing of each catalogue
#   qgemm_float    layer 1, float families (codes 11-14) through the same API: every float golden case
#                  (float_plan.py) through every available kernel of its family (qgemm_kernel_run, the row
#                  stride as qgemm_lhs_stride_params), the qgemm_rhs_/qgemm_lhs_ float packers against
#                  KleidiAI's bytes, the operator (qgemm_linear_*) over each RHS packing against the golden
#                  outputs, every status
#   linear_quantize layer 1: qgemm_linear_quantize_pack of every quantized family from float weights (NxK and
#                  KxN, every method), run against a C f32 matmul within the format's tolerance, and its error
#                  statuses (the float families refused)
#   quant          layer 1: the weight quantizers (qgemm_quant_*) of every format against their
#                  definitions recomputed in C, quantize -> pack -> qgemm_linear_run against the f32
#                  matmul, GPTQ (Hessian, H = I gives the plain bytes) and every error status
#   readme_example the README's layer-2 C example (readme_example.py extracts it), run
#   rust_std       the library and a Rust `std` static library (capi/tests/rust-std/staticlib) in one
#                  C program (rust_std.c), linked in both orders, run; and a Rust `std` program using
#                  the qgemm-capi rlib (capi/tests/rust-std/rlib-user), run
#   headers        qgemm.h and every kai/ header after the common system headers (<unistd.h>,
#                  <signal.h> with _GNU_SOURCE, ...), compiled as C11 and as C++17 (aarch64-linux-gnu-g++),
#                  linked and run (with the family parameter structs no function signature names)
# Each test must be able to fail: `run.sh --self-check` also runs kai_compat on a plan with one
# corrupted expected bit (once in the quantized lines, once in the float lines), qgemm_layer1 with
# QGEMM_LAYER1_CORRUPT=1 (one golden bit flipped) and QGEMM_LAYER1_CORRUPT=linear (one bit of the
# operator's output flipped), qgemm_float with QGEMM_FLOAT_CORRUPT=1 (one golden bit flipped) and
# QGEMM_FLOAT_CORRUPT=linear (one bit of the float operator's expected output flipped),
# linear_quantize with QGEMM_QPACK_CORRUPT=1 (its f32 reference off by 10%), quant with
# QGEMM_QUANT_CORRUPT=1 (one code bit flipped) and QGEMM_QUANT_CORRUPT=linear (packed weights garbled), and
# check_symbols with one declaration removed and one invented (and with a libc `write` declared in
# qgemm.h), and requires each to fail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
lib=${QGEMM_CAPI_LIB:-$root/capi/target/aarch64-unknown-linux-gnu/release/libqgemm_capi.a}
inc=${KAI_INCLUDE:-$root/capi/include}
out=${QGEMM_C_TEST_OUT:-$root/capi/target/c-tests}
data=$root/tests/data
CC=${CC:-aarch64-linux-gnu-gcc}
CXX=${CXX:-aarch64-linux-gnu-g++}
CFLAGS=(-O2 -Wall -Wextra -Werror -std=c11)
CXXFLAGS=(-O2 -Wall -Wextra -Werror -std=c++17)
LIBS=(-lpthread -ldl -lm)
only_kai=${ONLY_KAI:-0}

cpus=()
self_check=0
for a in "$@"; do
    case $a in
    --self-check) self_check=1 ;;
    *) cpus+=("$a") ;;
    esac
done
((${#cpus[@]})) || cpus=(max cortex-a53)

[[ -f $lib ]] || { echo "run.sh: $lib missing (cargo make capi-build)" >&2; exit 1; }
command -v "$CXX" >/dev/null || { echo "run.sh: $CXX missing (cargo make setup installs g++-aarch64-linux-gnu)" >&2; exit 1; }
mkdir -p "$out"

failed=()
# The exported symbols against the headers (both archives of capi-build, when they exist). Not
# when QGEMM_CAPI_LIB points at another library (KleidiAI itself exports far more).
if [[ -z ${QGEMM_CAPI_LIB:-} ]]; then
    libs=("$lib")
    none_lib=$root/capi/target/aarch64-unknown-none/release/libqgemm_capi.a
    [[ -f $none_lib ]] && libs+=("$none_lib")
    python3 "$here/check_symbols.py" "$root/capi/include" "${libs[@]}" || failed+=("check_symbols")
    if ((self_check)); then
        for bad in "--drop-declared kai_run_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4x4_1x4_neon_dotprod" \
            "--extra-declared kai_run_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4x4_1x4_neon_sme" \
            "--drop-declared qgemm_kernel_run" "--extra-declared qgemm_kernel_run_f16" "--extra-declared write"; do
            # shellcheck disable=SC2086
            if python3 "$here/check_symbols.py" $bad "$root/capi/include" "$lib" >/dev/null 2>"$out/symbols.log"; then
                echo "run.sh: check_symbols passed with $bad" >&2
                failed+=("check_symbols-self-check")
            else
                echo "self-check: check_symbols fails with $bad: $(head -n 1 "$out/symbols.log")"
            fi
        done
    fi
fi

build() { # name sources...
    local name=$1
    shift
    echo "+ $CC ${CFLAGS[*]} -I$inc $* $(basename "$lib") -o $out/$name"
    "$CC" "${CFLAGS[@]}" -I"$inc" -I"$root/capi/include" -I"$here" "$@" "$lib" "${LIBS[@]}" -o "$out/$name"
}

build_cxx() { # name sources...
    local name=$1
    shift
    echo "+ $CXX ${CXXFLAGS[*]} -I$inc $* $(basename "$lib") -o $out/$name"
    "$CXX" "${CXXFLAGS[@]}" -I"$inc" -I"$root/capi/include" -I"$here" -I"$out" "$@" "$lib" "${LIBS[@]}" -o "$out/$name"
}

build kai_compat "$here/kai_compat.c"
python3 "$here/readme_example.py" "$root/README.md" >"$out/readme_example.c"
build readme_example "$out/readme_example.c"
if [[ $only_kai != 1 ]]; then
    build kai_hook "$here/kai_hook.c"
    build qgemm_layer1 "$here/qgemm_layer1.c"
    build qgemm_float "$here/qgemm_float.c"
    build linear_quantize "$here/linear_quantize.c" -lm
    build quant "$here/quant.c"
    # Every kai/ header, for the header test.
    (cd "$inc" && find kai -name '*.h' | LC_ALL=C sort | sed 's/.*/#include "&"/') >"$out/kai_all.h"
    build headers_c "$here/headers.c" -I"$out"
    build_cxx headers_cxx -x c++ "$here/headers.c" -x none
    build_cxx kai_hook_throw "$here/kai_hook_throw.cpp"
fi
# The library with Rust `std` (not when QGEMM_CAPI_LIB points at another library).
rust_std=0
if [[ -z ${QGEMM_CAPI_LIB:-} && $only_kai != 1 ]]; then
    rust_std=1
    rust_target=$root/capi/target/rust-std
    echo "+ cargo build --locked --target aarch64-unknown-linux-gnu (capi/tests/rust-std)"
    CARGO_TARGET_DIR=$rust_target cargo build --locked --quiet --target aarch64-unknown-linux-gnu \
        --manifest-path "$root/capi/tests/rust-std/Cargo.toml"
    rust_lib=$rust_target/aarch64-unknown-linux-gnu/debug/libqgemm_test_rust_std.a
    rlib_user=$rust_target/aarch64-unknown-linux-gnu/debug/qgemm-test-rlib-user
    for order in capi_first rust_first; do
        libs=("$lib" "$rust_lib")
        [[ $order == rust_first ]] && libs=("$rust_lib" "$lib")
        echo "+ $CC ${CFLAGS[*]} rust_std.c $(basename "${libs[0]}") $(basename "${libs[1]}") -o $out/rust_std_$order"
        "$CC" "${CFLAGS[@]}" -I"$inc" -I"$root/capi/include" "$here/rust_std.c" "${libs[@]}" "${LIBS[@]}" \
            -o "$out/rust_std_$order"
    done
fi
python3 "$here/kai_plan.py" "$data" >"$out/kai_plan.txt"
python3 "$here/kai_plan.py" "$data" --corrupt >"$out/kai_plan_corrupt.txt"
# kai_compat also reads the float families' lines (their own format: kai_plan.py --float).
python3 "$here/kai_plan.py" "$data" --float >"$out/kai_plan_float.txt"
python3 "$here/kai_plan.py" "$data" --float --corrupt >"$out/kai_plan_float_corrupt.txt"
cat "$out/kai_plan.txt" "$out/kai_plan_float.txt" >"$out/kai_compat_plan.txt"
cat "$out/kai_plan_corrupt.txt" "$out/kai_plan_float.txt" >"$out/kai_compat_plan_corrupt.txt"
cat "$out/kai_plan.txt" "$out/kai_plan_float_corrupt.txt" >"$out/kai_compat_plan_float_corrupt.txt"
python3 "$here/float_plan.py" "$data" >"$out/float_plan.txt"

run() { # cpu binary args...
    local cpu=$1
    shift
    QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"
}
# The operator's shared golden (qgemm_layer1's part 5; tests/operator.rs checks the Rust side).
export QGEMM_LINEAR_DIGESTS=$root/capi/tests/data/linear_digests.txt

for cpu in "${cpus[@]}"; do
    echo "=== qemu-aarch64 -cpu $cpu"
    run "$cpu" "$out/kai_compat" <"$out/kai_compat_plan.txt" || failed+=("kai_compat@$cpu")
    run "$cpu" "$out/readme_example" || failed+=("readme_example@$cpu")
    if [[ $cpu != max ]]; then
        # qgemm runs a KleidiAI dotprod/i8mm name on a lower tier where the CPU lacks the ISA
        # (KleidiAI would fault): every line must still give KleidiAI's bits.
        echo "--- kai_compat with KAI_COMPAT_RUN_ALL=1 (kernels whose ISA this CPU lacks run on a lower tier)"
        KAI_COMPAT_RUN_ALL=1 run "$cpu" "$out/kai_compat" <"$out/kai_compat_plan.txt" || failed+=("kai_compat-run-all@$cpu")
    fi
    if ((self_check)); then
        for which in "" _float; do
            if run "$cpu" "$out/kai_compat" <"$out/kai_compat_plan${which}_corrupt.txt" 2>"$out/corrupt.log" >/dev/null; then
                echo "run.sh: kai_compat passed a plan with corrupted expectations ($which)" >&2
                failed+=("kai_compat-self-check$which@$cpu")
            else
                echo "self-check: kai_compat rejects corrupted expectations${which:+ (float lines)} (dst bit, getter): $(head -n 1 "$out/corrupt.log")"
            fi
        done
    fi
    [[ $only_kai == 1 ]] && continue
    # The hook test: custom handler (must see the bad calls and exit 0)...
    run "$cpu" "$out/kai_hook" custom || failed+=("kai_hook-custom@$cpu")
    # ...and the default handler, which prints the reason and aborts: SIGABRT, exit status 134.
    status=0
    run "$cpu" "$out/kai_hook" default 2>"$out/hook_default.log" || status=$?
    if [[ $status == 134 ]] && grep -q . "$out/hook_default.log"; then
        echo "kai_hook default: aborted (134) with: $(head -n 1 "$out/hook_default.log")"
    else
        echo "run.sh: kai_hook default exited $status, expected 134 (SIGABRT) with a message" >&2
        failed+=("kai_hook-default@$cpu")
    fi
    run "$cpu" "$out/kai_hook_throw" || failed+=("kai_hook_throw@$cpu")
    run "$cpu" "$out/qgemm_layer1" "$cpu" <"$out/kai_plan.txt" || failed+=("qgemm_layer1@$cpu")
    run "$cpu" "$out/qgemm_float" "$cpu" <"$out/float_plan.txt" || failed+=("qgemm_float@$cpu")
    run "$cpu" "$out/linear_quantize" || failed+=("linear_quantize@$cpu")
    run "$cpu" "$out/quant" || failed+=("quant@$cpu")
    if ((rust_std)); then
        for order in capi_first rust_first; do
            if run "$cpu" "$out/rust_std_$order" >"$out/rust_std.log" 2>&1 &&
                grep -qx "rust std: sum 45, panic caught: true" "$out/rust_std.log" &&
                grep -qx "rust_std: ok" "$out/rust_std.log"; then
                echo "rust_std ($order): $(paste -sd ';' "$out/rust_std.log")"
            else
                cat "$out/rust_std.log" >&2
                failed+=("rust_std-$order@$cpu")
            fi
        done
        run "$cpu" "$rlib_user" || failed+=("rlib_user@$cpu")
    fi
    run "$cpu" "$out/headers_c" || failed+=("headers_c@$cpu")
    run "$cpu" "$out/headers_cxx" || failed+=("headers_cxx@$cpu")
    if ((self_check)); then
        if QGEMM_LAYER1_CORRUPT=1 run "$cpu" "$out/qgemm_layer1" "$cpu" <"$out/kai_plan.txt" \
            >/dev/null 2>"$out/layer1_corrupt.log"; then
            echo "run.sh: qgemm_layer1 passed with a corrupted golden dst" >&2
            failed+=("qgemm_layer1-self-check@$cpu")
        else
            echo "self-check: qgemm_layer1 rejects a corrupted golden dst: $(head -n 1 "$out/layer1_corrupt.log")"
        fi
        for corrupt in 1 linear; do
            if QGEMM_QUANT_CORRUPT=$corrupt run "$cpu" "$out/quant" >/dev/null 2>"$out/quant_corrupt.log"; then
                echo "run.sh: quant passed with QGEMM_QUANT_CORRUPT=$corrupt" >&2
                failed+=("quant-self-check-$corrupt@$cpu")
            else
                echo "self-check: quant fails with QGEMM_QUANT_CORRUPT=$corrupt: $(head -n 1 "$out/quant_corrupt.log")"
            fi
        done
        if QGEMM_LAYER1_CORRUPT=linear run "$cpu" "$out/qgemm_layer1" "$cpu" <"$out/kai_plan.txt" \
            >/dev/null 2>"$out/layer1_corrupt.log"; then
            echo "run.sh: qgemm_layer1 passed with a corrupted operator output" >&2
            failed+=("qgemm_layer1-operator-self-check@$cpu")
        else
            echo "self-check: qgemm_layer1 rejects a corrupted operator output: $(grep -m1 operator "$out/layer1_corrupt.log")"
        fi
        for corrupt in 1 linear; do
            if QGEMM_FLOAT_CORRUPT=$corrupt run "$cpu" "$out/qgemm_float" "$cpu" <"$out/float_plan.txt" \
                >/dev/null 2>"$out/float_corrupt.log"; then
                echo "run.sh: qgemm_float passed with QGEMM_FLOAT_CORRUPT=$corrupt" >&2
                failed+=("qgemm_float-self-check-$corrupt@$cpu")
            else
                echo "self-check: qgemm_float fails with QGEMM_FLOAT_CORRUPT=$corrupt: $(head -n 1 "$out/float_corrupt.log")"
            fi
        done
        if QGEMM_QPACK_CORRUPT=1 run "$cpu" "$out/linear_quantize" >/dev/null 2>"$out/qpack_corrupt.log"; then
            echo "run.sh: linear_quantize passed with a corrupted f32 reference" >&2
            failed+=("linear_quantize-self-check@$cpu")
        else
            echo "self-check: linear_quantize rejects a corrupted f32 reference: $(head -n 1 "$out/qpack_corrupt.log")"
        fi
    fi
done
if ((${#failed[@]})); then
    echo "C tests FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "C tests ok on: ${cpus[*]}"
