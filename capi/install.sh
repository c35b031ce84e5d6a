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
#   include/qgemm/qgemm.h, include/qgemm/kai/...   (the checked-in capi/include headers)
#   lib/pkgconfig/qgemm.pc                          (Cflags -I${includedir}/qgemm)
#   lib/cmake/qgemm/qgemmConfig.cmake, qgemmConfigVersion.cmake   (qgemm::qgemm & co.)
#
# cargo-c's `cargo cinstall` (0.10.24 or later: `cargo make setup` installs it) builds and
# installs all but the CMake package, from capi/Cargo.toml's [package.metadata.capi] (on bare
# metal `cargo cbuild` and a copy: see below); this script then writes the CMake package from
# capi/cmake/*.cmake.in (cargo-c makes none). It
# builds in capi/target/c-install, not in capi-build's directory: cargo-c builds the crate with
# other crate types and the `capi` feature, so sharing the directory would make each rebuild the
# other's output.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
target=${TARGET:-aarch64-unknown-linux-gnu}
prefix=${PREFIX:-target/c-install}
[[ $prefix == /* ]] || prefix=$root/$prefix
destdir=${DESTDIR:-}
dest=$destdir$prefix
start=$SECONDS

if ! version=$(cargo cinstall --version 2>/dev/null); then
    echo "install.sh: cargo-c is missing: cargo make setup (cargo install --locked cargo-c --version 0.10.24)" >&2
    exit 1
fi
echo "install.sh: $version, target $target, prefix $prefix${destdir:+, DESTDIR $destdir}"

target_dir=$root/capi/target/c-install
args=(--release --locked --target "$target" --prefix "$prefix" --libdir lib --target-dir "$target_dir")
if rustc --print cfg --target "$target" | grep -qx 'target_os="none"'; then
    # Bare metal: cargo-c 0.10.24's `cinstall` builds, installs qgemm.pc and the headers, then
    # panics before copying the archive ("not implemented: The target none- is not supported
    # yet", install.rs: LibType::from_build_targets knows no os "none"). So `cbuild` (the same
    # build, and the same qgemm.pc for this prefix: cargo-c rewrites it whenever the install
    # paths change) and copy what `cinstall` would: the archive, qgemm.pc, and the headers as
    # [package.metadata.capi.install.include] maps them (capi/include -> include/qgemm; not
    # from cbuild's include/, which it fills only when it rebuilds and never prunes). There is
    # no shared library to install.
    built=$target_dir/$target/release
    (cd "$here" && set -x && cargo cbuild "${args[@]}")
    mkdir -p "$dest/lib/pkgconfig" "$dest/include"
    cp "$built/libqgemm.a" "$dest/lib/"
    cp "$built/qgemm.pc" "$dest/lib/pkgconfig/"
    rm -rf "$dest/include/qgemm"
    cp -R "$here/include" "$dest/include/qgemm"
else
    [[ -n $destdir ]] && args+=(--destdir "$destdir")
    # From capi/, so that cargo reads capi's workspace and lock file and the repository's
    # .cargo/config.toml (the aarch64 Linux linker).
    (cd "$here" && set -x && cargo cinstall "${args[@]}")
fi

pc=$dest/lib/pkgconfig/qgemm.pc
[[ -f $pc && -f $dest/lib/libqgemm.a && -f $dest/include/qgemm/qgemm.h ]] || {
    echo "install.sh: cargo cinstall did not install qgemm.pc, libqgemm.a and qgemm.h into $dest" >&2
    exit 1
}
pkg_version=$(sed -n 's/^Version: *//p' "$pc")

# The system libraries the static archive needs, as CMake names: Libs.private is rustc's
# native-static-libs list (-lgcc_s -lutil ... on Linux, nothing on bare metal).
static_libs=()
for flag in $(sed -n 's/^Libs.private: *//p' "$pc"); do
    [[ $flag == -l* ]] || { echo "install.sh: unexpected Libs.private flag $flag in $pc" >&2; exit 1; }
    static_libs+=("${flag#-l}")
done
static_libs_cmake=$(IFS=';' && echo "${static_libs[*]}")

# The shared library, if this target has one: the file lib/libqgemm.so links to
# (libqgemm.so.X.Y.Z) and its soname, read from the ELF rather than recomputed (libqgemm.so.X.Y
# on Linux, plain libqgemm.so on Android), so the CMake package names exactly what cargo-c
# built. READELF: any readelf that reads aarch64 ELF.
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
