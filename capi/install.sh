#!/usr/bin/env bash
# Installs the qgemm C library as a package into a prefix (docs/c-api.md, "Installing"); this is
# `cargo make c-install`:
#
#   PREFIX=/opt/qgemm TARGET=aarch64-unknown-linux-gnu capi/install.sh
#
#   PREFIX   where to install; default target/c-install. A relative path is taken relative to
#            the repository root. One prefix per target: both targets' files have the same names.
#   TARGET   the Rust target; default aarch64-unknown-linux-gnu (the linker comes from the
#            repository's .cargo/config.toml). aarch64-unknown-none installs the static library
#            only.
#   DESTDIR  optional staging root for packagers (Yocto, distributions): the files go to
#            $DESTDIR$PREFIX, while qgemm.pc names $PREFIX.
#   READELF  the readelf that reads the shared library's soname (default aarch64-linux-gnu-readelf)
#
# What it installs, under PREFIX:
#   lib/libqgemm.a
#   lib/libqgemm.so.X.Y.Z, lib/libqgemm.so.X.Y -> it, lib/libqgemm.so -> it
#                          (Linux only; soname libqgemm.so.X.Y before 1.0, libqgemm.so.X after)
#   include/qgemm/qgemm.h, include/qgemm/qgemm/qgemm.h (forwards to it: `#include <qgemm/qgemm.h>`),
#   include/qgemm/kai/...                           (the checked-in capi/include headers)
#   lib/pkgconfig/qgemm.pc                          (Cflags -I${includedir}/qgemm)
#   lib/cmake/qgemm/qgemmConfig.cmake, qgemmConfigVersion.cmake   (qgemm::qgemm & co.)
#
# Plain cargo builds the two libraries (`cargo rustc --crate-type staticlib`, and `cdylib` with
# the soname as a link argument; rustc exports only the `#[no_mangle]` C functions from a cdylib)
# and this script writes qgemm.pc and, from capi/cmake/*.cmake.in, the CMake package.
# cargo-c's `cargo cinstall`, the ecosystem's tool for this, was tried and measured (docs/c-api.md,
# "How it is built"): Debian 12's cargo-c 0.9.14 cannot read this edition-2024 crate; 0.10.24
# from crates.io took 26 minutes to build on the project's 2-core machine, on every fresh CI
# machine, and its `cinstall` panics for aarch64-unknown-none ("The target none- is not
# supported yet"). The layout is cargo-c's (libqgemm.so.X.Y.Z with soname libqgemm.so.X.Y before
# 1.0, libqgemm.so.X after; qgemm.pc with Libs.private; here Libs.private leaves out the unwinder,
# which would break `-static` links). It builds in capi/target/c-install, not
# in capi-build's directory, where the other crate types would make each rebuild the other's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
target=${TARGET:-aarch64-unknown-linux-gnu}
prefix=${PREFIX:-target/c-install}
[[ $prefix == /* ]] || prefix=$root/$prefix
destdir=${DESTDIR:-}
dest=$destdir$prefix
start=$SECONDS

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/Cargo.toml" | head -n 1)
IFS=. read -r major minor patch <<<"$version"
[[ -n $major && -n $minor && -n $patch ]] || { echo "install.sh: no version in capi/Cargo.toml" >&2; exit 1; }
# cargo-c's soname rule: before 1.0 a minor version is a breaking change; Android uses no
# versioned names (its loader and APK packaging).
cfg=$(rustc --print cfg --target "$target")
if grep -qx 'target_os="android"' <<<"$cfg"; then
    soname=libqgemm.so
elif [[ $major == 0 ]]; then
    soname=libqgemm.so.$major.$minor
else
    soname=libqgemm.so.$major
fi
echo "install.sh: qgemm $version, target $target, prefix $prefix${destdir:+, DESTDIR $destdir}"

target_dir=$root/capi/target/c-install
built=$target_dir/$target/release
cargo_args=(--release --locked --target "$target" --target-dir "$target_dir" --lib)
bare_metal=0
grep -qx 'target_os="none"' <<<"$cfg" && bare_metal=1

# From capi/, so that cargo reads capi's workspace and lock file and the repository's
# .cargo/config.toml (the aarch64 Linux linker). `--print native-static-libs`: the system
# libraries a program linking the archive needs (cargo replays the note when nothing rebuilds).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd "$here" && set -x && cargo rustc "${cargo_args[@]}" --crate-type staticlib -- --print native-static-libs) 2>&1 |
    tee "$log"
native_libs=$(sed -n 's/.*native-static-libs: *//p' "$log" | tail -n 1)
if ((bare_metal == 0)); then
    [[ -n $native_libs ]] || { echo "install.sh: rustc printed no native-static-libs" >&2; exit 1; }
    (cd "$here" && set -x && cargo rustc "${cargo_args[@]}" --crate-type cdylib -- -C link-arg=-Wl,-soname,"$soname")
fi

mkdir -p "$dest/lib/pkgconfig" "$dest/include"
cp "$built/libqgemm_capi.a" "$dest/lib/libqgemm.a"
if ((bare_metal == 0)); then
    if [[ $soname == libqgemm.so ]]; then
        cp "$built/libqgemm_capi.so" "$dest/lib/libqgemm.so"
    else
        cp "$built/libqgemm_capi.so" "$dest/lib/libqgemm.so.$version"
        ln -sfn "libqgemm.so.$version" "$dest/lib/$soname"
        ln -sfn "$soname" "$dest/lib/libqgemm.so"
    fi
fi
# The checked-in headers: include/qgemm/qgemm.h, its forwarder include/qgemm/qgemm/qgemm.h and
# KleidiAI's paths under include/qgemm/kai.
rm -rf "$dest/include/qgemm"
cp -R "$here/include" "$dest/include/qgemm"
# Libs.private: rustc's list without the unwinder. rustc names -lgcc_s (the shared unwinder) for
# the dynamic link it assumes, but a `-static` program cannot take it (glibc's toolchain has no
# libgcc_s.a) and needs libgcc_eh.a instead. The unwinder is the compiler driver's choice: gcc
# and clang add libgcc_s (as needed) to every dynamic link and libgcc + libgcc_eh to a -static
# one, so leaving it out links both ways (capi/tests/package/run.sh links both). -lgcc and
# -lgcc_eh are left out for the same reason, should a rustc release list them.
static_libs=""
for flag in $native_libs; do
    case $flag in
    -lgcc_s | -lgcc_eh | -lgcc) ;;
    *) static_libs+="${static_libs:+ }$flag" ;;
    esac
done
# qgemm.pc names the final prefix (not DESTDIR); `-I${includedir}/qgemm` serves
# `#include "qgemm.h"`, `#include <qgemm/qgemm.h>` (through the forwarder) and KleidiAI's
# `#include "kai/ukernels/..."`, without putting ${includedir} itself on the include path, where
# another package's kai/ tree (a real KleidiAI in the same prefix) would be found.
cat >"$dest/lib/pkgconfig/qgemm.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: qgemm
Description: Low-bit matmul micro-kernels for Arm aarch64: the qgemm_* C API and KleidiAI-compatible kai_* symbols
Version: $version
Libs: -L\${libdir} -lqgemm
Libs.private: $static_libs
Cflags: -I\${includedir}/qgemm
PC

pc=$dest/lib/pkgconfig/qgemm.pc
[[ -f $pc && -f $dest/lib/libqgemm.a && -f $dest/include/qgemm/qgemm.h ]] || {
    echo "install.sh: qgemm.pc, libqgemm.a or qgemm.h is missing in $dest" >&2
    exit 1
}
pkg_version=$(sed -n 's/^Version: *//p' "$pc")

# The system libraries the static archive needs, as CMake names: Libs.private (rustc's
# native-static-libs list without the unwinder: -lutil -lrt ... on Linux, nothing on bare metal).
static_libs=()
for flag in $(sed -n 's/^Libs.private: *//p' "$pc"); do
    [[ $flag == -l* ]] || { echo "install.sh: unexpected Libs.private flag $flag in $pc" >&2; exit 1; }
    static_libs+=("${flag#-l}")
done
static_libs_cmake=$(IFS=';' && echo "${static_libs[*]}")

# The shared library, if this target has one: the file lib/libqgemm.so links to
# (libqgemm.so.X.Y.Z) and its soname, read from the ELF rather than recomputed (libqgemm.so.X.Y
# before 1.0), read from the ELF rather than trusted, so the CMake package names exactly what
# was built. READELF: any readelf that reads aarch64 ELF.
has_shared=FALSE shared_file="" soname=""
if [[ -e $dest/lib/libqgemm.so ]]; then
    shared_real=$(readlink -f "$dest/lib/libqgemm.so")
    shared_file=$(basename "$shared_real")
    soname=$("${READELF:-aarch64-linux-gnu-readelf}" -d "$shared_real" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
    [[ -n $soname && -e $dest/lib/$soname ]] || {
        echo "install.sh: $shared_file has no soname, or lib/$soname is missing" >&2
        exit 1
    }
    has_shared=TRUE
fi

cmake_dir=$dest/lib/cmake/qgemm
mkdir -p "$cmake_dir"
for f in qgemmConfig qgemmConfigVersion; do
    sed -e "s|@QGEMM_VERSION@|$pkg_version|g" -e "s|@QGEMM_TARGET@|$target|g" \
        -e "s|@QGEMM_HAS_SHARED@|$has_shared|g" -e "s|@QGEMM_SHARED_FILE@|$shared_file|g" \
        -e "s|@QGEMM_SONAME@|$soname|g" -e "s|@QGEMM_STATIC_LIBS@|$static_libs_cmake|g" \
        "$here/cmake/$f.cmake.in" >"$cmake_dir/$f.cmake"
    if grep -n '@QGEMM_[A-Z_]*@' "$cmake_dir/$f.cmake" >&2; then
        echo "install.sh: unreplaced placeholder in $cmake_dir/$f.cmake" >&2
        exit 1
    fi
done
echo "install.sh: installed qgemm $pkg_version for $target into $dest${soname:+ (soname $soname)} in $((SECONDS - start)) s"
