#!/usr/bin/env bash
# The whole CI on a fresh Debian x86 machine with rustup: installs cargo-make when absent
# (`cargo install --locked`), the rustup targets/components and Debian packages that are missing
# (`cargo make setup`), then runs every check (`cargo make ci`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_MAKE_DISABLE_UPDATE_CHECK=true
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

if ! cargo make --version >/dev/null 2>&1; then
    echo "ci/test.sh: installing cargo-make"
    cargo install --locked cargo-make
fi
cargo make setup
cargo make ci
