#!/usr/bin/env bash
# Builds examples/demo.rs for aarch64-unknown-linux-gnu and runs it under `qemu-aarch64 -cpu max`
# (the cargo runner of .cargo/config.toml). Installs only what the demo needs first
# (`ci/setup.sh --demo`: the rustup target, qemu-user, the cross gcc and C library), quietly. The
# demo package (demo/Cargo.toml) builds qgemm without the tests' dev-dependencies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash ci/setup.sh --demo --quiet
export QEMU_CPU="${QEMU_CPU:-max}"
exec cargo run --quiet --release --manifest-path demo/Cargo.toml --target aarch64-unknown-linux-gnu
