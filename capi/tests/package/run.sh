#!/usr/bin/env bash
# Consumer tests of the installed C package (cargo make c-package-test; docs/c-api.md,
# "Installing"). Installs with capi/install.sh (what `cargo make c-install` runs) into fresh
# prefixes under capi/target/c-package-test, then builds small projects OUTSIDE the crate's build
# against them, as a user would, and runs them under qemu-aarch64 -cpu max and cortex-a53:
#   layout  the Linux prefix has lib/libqgemm.a, libqgemm.so -> libqgemm.so.X.Y -> the real file,
#           whose ELF soname is libqgemm.so.X.Y, include/qgemm/qgemm.h, its forwarder
#           include/qgemm/qgemm/qgemm.h, include/qgemm/kai/..., lib/pkgconfig/qgemm.pc,
#           lib/cmake/qgemm/qgemmConfig{,Version}.cmake. Then a second kai/ tree is planted at
#           <prefix>/include/kai (a real KleidiAI in the same prefix): headers that are an #error
#           and a marker that include_forms.c must not see, so every build below fails if its
#           flags put <prefix>/include on the include path
#   cmake   (cmake/) find_package(qgemm 0.1 CONFIG REQUIRED) with an aarch64 toolchain file:
#           layer 1 linked statically (no libqgemm.so NEEDED) and dynamically (NEEDED the soname),
#           and the KleidiAI program (src/kai_app.c), each computing a matmul checked element by
#           element against the plain C reference of src/matmul_ref.h and printing a line that is
#           grepped here with the expected checksum; layer 1 in the prefixed include form
#           (<qgemm/qgemm.h>) fully static (-static: no interpreter, no NEEDED; run without a
#           sysroot) and shared; include_forms.c (both forms, the planted kai/ tree unseen); and
#           with QGEMM_USE_STATIC_LIBS=ON, where qgemm::qgemm must be the static library
#   make    (make/) a plain Makefile taking its flags from pkg-config: layer 1 against
#           libqgemm.so (-lqgemm, rpath), the KleidiAI program against libqgemm.a; layer 1 in the
#           prefixed form with `pkg-config --static --libs qgemm`, once with -static (fully
#           static) and once without (dynamic: those flags link both ways); include_forms.c
#   staged  DESTDIR=<staging root> PREFIX=/usr (a distribution's or Yocto's package build): qgemm.pc
#           says /usr; the Makefile with PKG_CONFIG_SYSROOT_DIR and CMake with CMAKE_FIND_ROOT_PATH
#           at the staging root build the KleidiAI and layer-1 programs statically against it
#   none    TARGET=aarch64-unknown-none: lib/libqgemm.a and no shared library, the headers, qgemm.pc
#           and the CMake package; the bare-metal C image (capi/baremetal) linked with that archive
#           and those headers runs under qemu-system-aarch64 -cpu max
# --self-check also proves the checks can fail: the layer-1 program built with a corrupted
# reference (QGEMM_PACKAGE_CORRUPT_REF) must fail, find_package(qgemm 0.2) and (qgemm 1.0) must be
# refused by the version file, an expected line with another checksum must not match, the fully
# static link with -lgcc_s added (the Libs.private before issue 37) must fail, include_forms.c
# with -I<prefix>/include added must fail (the planted kai/ tree), and <qgemm/qgemm.h> from a copy
# of include/qgemm without the forwarder must not compile.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$root/capi/target/c-package-test
linux=$out/prefix-linux
none=$out/prefix-none
stage=$out/staged
self_check=0
[[ ${1:-} == --self-check ]] && self_check=1
cpus=(max cortex-a53)
# The output every program must print (the checksum is the reference's: fixed data, fixed result).
want_layer1='^qgemm-package: layer1 ok: matmul_clamp_f32_qai8dxp[0-9x]*_qsi4cxp[0-9a-z_]* sum=-15162$'
want_kai='^qgemm-package: kai ok: matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod sum=-15162$'
want_forms='^qgemm-package: include forms ok: m_step=1 ok$'
failed=()
start=$SECONDS

# Fresh prefixes and build directories: a file left over from an earlier run must not pass.
rm -rf "$out"
mkdir -p "$out"

t0=$SECONDS
PREFIX=$linux TARGET=aarch64-unknown-linux-gnu DESTDIR='' bash "$root/capi/install.sh"
echo "c-package-test: Linux install took $((SECONDS - t0)) s"

echo "=== layout ($linux)"
check_file() { # path...
    for f in "$@"; do
        [[ -f $f ]] || { echo "c-package-test: missing $f" >&2; failed+=("layout:${f#"$out"/}"); }
    done
}
check_file "$linux/lib/libqgemm.a" "$linux/include/qgemm/qgemm.h" "$linux/include/qgemm/qgemm/qgemm.h" \
    "$linux/include/qgemm/kai/kai_common.h" \
    "$linux/include/qgemm/kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod.h" \
    "$linux/lib/pkgconfig/qgemm.pc" "$linux/lib/cmake/qgemm/qgemmConfig.cmake" \
    "$linux/lib/cmake/qgemm/qgemmConfigVersion.cmake"
# Every checked-in header is installed, byte for byte, at its path under include/qgemm.
if ! diff -r "$root/capi/include" "$linux/include/qgemm"; then
    echo "c-package-test: include/qgemm differs from capi/include" >&2
    failed+=("layout:headers")
fi
# The shared library: libqgemm.so -> soname link -> real file, and the ELF's soname is the link.
real=$(cd "$linux/lib" && readlink -f libqgemm.so || true)
soname=$(aarch64-linux-gnu-readelf -d "$linux/lib/libqgemm.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
if [[ -L $linux/lib/libqgemm.so && $soname == libqgemm.so.[0-9]* && -L $linux/lib/$soname &&
    $(readlink -f "$linux/lib/$soname") == "$real" && -f $real && ! -L $real ]]; then
    echo "libqgemm.so and $soname -> $(basename "$real"), whose soname is $soname"
else
    echo "c-package-test: libqgemm.so, its soname link ($soname) or the real file is wrong:" >&2
    ls -l "$linux/lib" >&2
    failed+=("layout:soname")
fi
# The NEEDED checks below compare with it: never empty.
[[ -n $soname ]] || soname="(no soname)"
echo "--- qgemm.pc"
cat "$linux/lib/pkgconfig/qgemm.pc"
# A second kai/ tree next to include/qgemm, as a real KleidiAI installed into the same prefix
# would put it: any build whose flags reach <prefix>/include finds an #error (or, in
# include_forms.c, the marker header) instead of the package's kai/ headers.
second_kai=$linux/include/kai
kai_kernel_h=ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp/kai_matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4x32_neon_dotprod.h
mkdir -p "$(dirname "$second_kai/$kai_kernel_h")" "$second_kai/ukernels/matmul/pack"
for h in kai_common.h "$kai_kernel_h" ukernels/matmul/pack/kai_lhs_quant_pack_qai8dxp_f32.h \
    ukernels/matmul/pack/kai_rhs_pack_nxk_qsi4cxp_qs4cxs1s0.h qgemm_package_second_kai_tree.h; do
    echo "#error \"second kai/ tree ($second_kai) reached: <prefix>/include is on the include path\"" >"$second_kai/$h"
done

run() { # cpu binary pattern [static]: runs it, checks its output line against the pattern
    # A fully static binary runs without the sysroot (no -L): it needs nothing from it.
    local cpu=$1 bin=$2 want=$3 sysroot=(-L /usr/aarch64-linux-gnu) log
    [[ ${4:-} == static ]] && sysroot=()
    log=$out/$(basename "$(dirname "$bin")")-$(basename "$bin").$cpu.log
    if QEMU_CPU=$cpu qemu-aarch64 "${sysroot[@]}" "$bin" >"$log" 2>&1 && grep -Eq "$want" "$log"; then
        echo "$(basename "$bin") @$cpu: $(cat "$log")"
    else
        cat "$log" >&2
        echo "c-package-test: $bin under -cpu $cpu failed or printed no line matching $want" >&2
        failed+=("$(basename "$bin")@$cpu")
    fi
}
needed() { # binary: its NEEDED libqgemm entries
    aarch64-linux-gnu-readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(libqgemm[^]]*\)\]$/\1/p'
}
fully_static() { # binary: no program interpreter and no NEEDED entry at all (a `-static` link)
    ! aarch64-linux-gnu-readelf -lW "$1" | grep -q 'INTERP' &&
        ! aarch64-linux-gnu-readelf -d "$1" | grep -q '(NEEDED)'
}

echo "=== cmake (find_package, toolchain file $here/cmake/aarch64-linux-gnu.cmake)"
cmake_configure() { # build-dir extra-args...
    local dir=$1
    shift
    cmake -S "$here/cmake" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" \
        -DCMAKE_PREFIX_PATH="$linux" -DCMAKE_FIND_ROOT_PATH="$linux" -DCMAKE_BUILD_TYPE=Release "$@"
}
if cmake_configure "$out/cmake" && cmake --build "$out/cmake" -- VERBOSE=1; then
    for b in layer1_static layer1_shared kai_app layer1_full_static layer1_prefixed_shared include_forms; do
        echo "$b: NEEDED $(needed "$out/cmake/$b" | paste -sd ' ')"
    done
    [[ -z $(needed "$out/cmake/layer1_static") ]] || failed+=("cmake:layer1_static-not-static")
    [[ $(needed "$out/cmake/layer1_shared") == "$soname" ]] || failed+=("cmake:layer1_shared-not-shared")
    [[ $(needed "$out/cmake/kai_app") == "$soname" ]] || failed+=("cmake:kai_app-not-shared")
    [[ $(needed "$out/cmake/layer1_prefixed_shared") == "$soname" ]] || failed+=("cmake:layer1_prefixed_shared-not-shared")
    [[ $(needed "$out/cmake/include_forms") == "$soname" ]] || failed+=("cmake:include_forms-not-shared")
    if fully_static "$out/cmake/layer1_full_static"; then
        echo "layer1_full_static: fully static (no interpreter, no NEEDED)"
    else
        failed+=("cmake:layer1_full_static-not-fully-static")
    fi
    for cpu in "${cpus[@]}"; do
        run "$cpu" "$out/cmake/layer1_static" "$want_layer1"
        run "$cpu" "$out/cmake/layer1_shared" "$want_layer1"
        run "$cpu" "$out/cmake/kai_app" "$want_kai"
        run "$cpu" "$out/cmake/layer1_full_static" "$want_layer1" static
        run "$cpu" "$out/cmake/layer1_prefixed_shared" "$want_layer1"
        run "$cpu" "$out/cmake/include_forms" "$want_forms"
    done
else
    failed+=("cmake:build")
fi
# QGEMM_USE_STATIC_LIBS before find_package makes qgemm::qgemm the static library.
if cmake_configure "$out/cmake-use-static" -DQGEMM_USE_STATIC_LIBS=ON >/dev/null &&
    cmake --build "$out/cmake-use-static" --target kai_app >/dev/null; then
    echo "kai_app with QGEMM_USE_STATIC_LIBS=ON: NEEDED $(needed "$out/cmake-use-static/kai_app" | paste -sd ' ')"
    [[ -z $(needed "$out/cmake-use-static/kai_app") ]] || failed+=("cmake:use-static-libs-not-static")
    run max "$out/cmake-use-static/kai_app" "$want_kai"
else
    failed+=("cmake:use-static-libs-build")
fi

echo "=== make (pkg-config)"
export PKG_CONFIG_LIBDIR=$linux/lib/pkgconfig
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
echo "pkg-config --cflags --libs qgemm: $(pkg-config --cflags --libs qgemm)"
echo "pkg-config --cflags --libs --static qgemm: $(pkg-config --cflags --libs --static qgemm)"
mkdir -p "$out/make"
if make -C "$here/make" O="$out/make"; then
    [[ $(needed "$out/make/layer1_dynamic") == "$soname" ]] || failed+=("make:layer1_dynamic-not-shared")
    [[ -z $(needed "$out/make/kai_static") ]] || failed+=("make:kai_static-not-static")
    [[ $(needed "$out/make/layer1_static_flags") == "$soname" ]] || failed+=("make:layer1_static_flags-not-shared")
    [[ $(needed "$out/make/include_forms") == "$soname" ]] || failed+=("make:include_forms-not-shared")
    if fully_static "$out/make/layer1_full_static"; then
        echo "layer1_full_static: fully static (no interpreter, no NEEDED)"
    else
        failed+=("make:layer1_full_static-not-fully-static")
    fi
    for cpu in "${cpus[@]}"; do
        run "$cpu" "$out/make/layer1_dynamic" "$want_layer1"
        run "$cpu" "$out/make/kai_static" "$want_kai"
        run "$cpu" "$out/make/layer1_full_static" "$want_layer1" static
        run "$cpu" "$out/make/layer1_static_flags" "$want_layer1"
        run "$cpu" "$out/make/include_forms" "$want_forms"
    done
else
    failed+=("make:build")
fi

echo "=== staged install (DESTDIR=$stage PREFIX=/usr, as a distribution or Yocto package is built)"
# The files go under the staging root while qgemm.pc says /usr: consumers find them through the
# sysroot (PKG_CONFIG_SYSROOT_DIR, CMAKE_FIND_ROOT_PATH), and the CMake package through its own
# location. Static links only: the programs run from here, not from a target's /usr.
DESTDIR=$stage PREFIX=/usr TARGET=aarch64-unknown-linux-gnu bash "$root/capi/install.sh"
if grep -qx 'prefix=/usr' "$stage/usr/lib/pkgconfig/qgemm.pc"; then
    mkdir -p "$out/make-staged"
    if PKG_CONFIG_LIBDIR=$stage/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage \
        make -C "$here/make" O="$out/make-staged" "$out/make-staged/kai_static"; then
        for cpu in "${cpus[@]}"; do run "$cpu" "$out/make-staged/kai_static" "$want_kai"; done
    else
        failed+=("staged:make")
    fi
else
    echo "c-package-test: the staged qgemm.pc does not say prefix=/usr" >&2
    failed+=("staged:pc-prefix")
fi
# CMAKE_FIND_ROOT_PATH=<staging root> alone: the toolchain's ONLY mode re-roots the default
# /usr prefix there.
if cmake -S "$here/cmake" -B "$out/cmake-staged" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_FIND_ROOT_PATH="$stage" -DCMAKE_BUILD_TYPE=Release >"$out/cmake-staged.log" 2>&1 &&
    grep -q "qgemm 0.1.0 for aarch64-unknown-linux-gnu: $stage/usr/lib/cmake/qgemm" "$out/cmake-staged.log" &&
    cmake --build "$out/cmake-staged" --target layer1_static; then
    for cpu in "${cpus[@]}"; do run "$cpu" "$out/cmake-staged/layer1_static" "$want_layer1"; done
else
    cat "$out/cmake-staged.log" >&2
    failed+=("staged:cmake")
fi

echo "=== aarch64-unknown-none ($none)"
t0=$SECONDS
PREFIX=$none TARGET=aarch64-unknown-none DESTDIR='' bash "$root/capi/install.sh"
echo "c-package-test: bare-metal install took $((SECONDS - t0)) s"
check_file "$none/lib/libqgemm.a" "$none/include/qgemm/qgemm.h" "$none/include/qgemm/kai/kai_common.h" \
    "$none/lib/pkgconfig/qgemm.pc" "$none/lib/cmake/qgemm/qgemmConfig.cmake"
if ! diff -r "$root/capi/include" "$none/include/qgemm"; then
    echo "c-package-test: the bare-metal prefix's include/qgemm differs from capi/include" >&2
    failed+=("none:headers")
fi
if compgen -G "$none/lib/*.so*" >/dev/null; then
    echo "c-package-test: a shared library in the bare-metal prefix: $(ls "$none"/lib/*.so*)" >&2
    failed+=("none:shared-library")
fi
if ! grep -qx 'set(QGEMM_HAS_SHARED FALSE)' "$none/lib/cmake/qgemm/qgemmConfig.cmake"; then
    echo "c-package-test: the bare-metal CMake package does not say QGEMM_HAS_SHARED FALSE" >&2
    failed+=("none:cmake")
fi
# The archive is the bare-metal one (no libc): the bare-metal C image links with it and runs.
if QGEMM_CAPI_NONE_LIB=$none/lib/libqgemm.a KAI_INCLUDE=$none/include/qgemm QGEMM_BAREMETAL_OUT=$out/baremetal \
    bash "$root/capi/baremetal/build.sh" max; then
    :
else
    failed+=("none:baremetal-image")
fi

if ((self_check)); then
    echo "=== self-check"
    # A wrong result must fail the program (its reference compare), whatever it prints.
    mkdir -p "$out/corrupt"
    if make -C "$here/make" O="$out/corrupt" CFLAGS="-O2 -std=c11 -DQGEMM_PACKAGE_CORRUPT_REF" \
        "$out/corrupt/layer1_dynamic" >/dev/null &&
        ! qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/corrupt/layer1_dynamic" >/dev/null 2>"$out/corrupt.log"; then
        echo "self-check: layer1 with a corrupted reference fails: $(head -n 1 "$out/corrupt.log")"
    else
        echo "c-package-test: layer1 with a corrupted reference did not fail" >&2
        failed+=("self-check:corrupt-ref")
    fi
    # The expected line is specific: another checksum does not match what the programs print.
    if grep -Eq "${want_kai/-15162/-15163}" "$out/make-kai_static.max.log"; then
        echo "c-package-test: the expected kai line matches another checksum" >&2
        failed+=("self-check:pattern")
    else
        echo "self-check: the kai line with checksum -15163 does not match"
    fi
    # The fully static link fails with the unwinder rustc lists (-lgcc_s, in Libs.private before
    # issue 37): glibc's toolchain has no libgcc_s.a.
    if make -C "$here/make" O="$out/corrupt" QGEMM_STATIC_LIBS="$(pkg-config --static --libs qgemm) -lgcc_s" \
        "$out/corrupt/layer1_full_static" >"$out/gcc_s.log" 2>&1; then
        echo "c-package-test: the -static link with -lgcc_s did not fail" >&2
        failed+=("self-check:gcc_s")
    else
        echo "self-check: the -static link with -lgcc_s fails: $(grep -m1 -o 'cannot find -lgcc_s' "$out/gcc_s.log" || tail -n 1 "$out/gcc_s.log")"
    fi
    # <prefix>/include on the include path reaches the planted kai/ tree: include_forms.c fails.
    if make -C "$here/make" O="$out/corrupt" QGEMM_CFLAGS="$(pkg-config --cflags qgemm) -I$linux/include" \
        "$out/corrupt/include_forms" >"$out/second-kai.log" 2>&1; then
        echo "c-package-test: include_forms.c built with -I$linux/include (the second kai/ tree unseen)" >&2
        failed+=("self-check:second-kai")
    else
        echo "self-check: include_forms.c with -I<prefix>/include fails: $(grep -m1 -o 'second kai/ tree[^"]*' "$out/second-kai.log" || tail -n 1 "$out/second-kai.log")"
    fi
    # Without the forwarder (include/qgemm/qgemm/qgemm.h) the prefixed form does not compile.
    rm -rf "$out/no-forwarder" && cp -R "$linux/include/qgemm" "$out/no-forwarder" && rm -r "$out/no-forwarder/qgemm"
    if aarch64-linux-gnu-gcc -std=c11 -fsyntax-only -DQGEMM_PACKAGE_PREFIXED_INCLUDE -I"$out/no-forwarder" \
        "$here/src/layer1.c" 2>/dev/null; then
        echo "c-package-test: <qgemm/qgemm.h> compiled without the forwarder" >&2
        failed+=("self-check:forwarder")
    else
        echo "self-check: <qgemm/qgemm.h> does not compile without include/qgemm/qgemm/qgemm.h"
    fi
    # The version file refuses versions that are not ABI-compatible.
    for v in 0.2 1.0; do
        if cmake_configure "$out/cmake-$v" -DQGEMM_REQUEST_VERSION=$v >"$out/cmake-$v.log" 2>&1; then
            echo "c-package-test: find_package(qgemm $v) accepted the package" >&2
            failed+=("self-check:version-$v")
        else
            echo "self-check: find_package(qgemm $v) refused: $(grep -m1 -o 'version: [0-9.]*' "$out/cmake-$v.log" || true)"
        fi
    done
fi

if ((${#failed[@]})); then
    echo "c-package-test: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "c-package-test: ok ($((SECONDS - start)) s): CMake (static, fully static, shared, KleidiAI program), pkg-config Makefile (shared, static archive, fully static --static, --static flags dynamically), both include forms with a second kai/ tree unseen, staged install (DESTDIR, sysroot), bare-metal prefix"
