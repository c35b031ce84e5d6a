#!/usr/bin/env bash
# The whole CI on a fresh Debian x86 machine with rustup: installs the rustup targets/components,
# Debian packages and cargo tools that are missing (ci/setup.sh, which `cargo make setup` also
# runs), then cargo-make when absent (`cargo install --locked`), then runs every check
# (`cargo make ci`). setup.sh comes first: building cargo-make needs the host `cc` (its build
# scripts and proc macros), which a minimal Debian 12 lacks until setup installs gcc.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_MAKE_DISABLE_UPDATE_CHECK=true
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

bash ci/setup.sh
if ! cargo make --version >/dev/null 2>&1; then
    echo "ci/test.sh: installing cargo-make"
    cargo install --locked cargo-make
fi
cargo make ci
