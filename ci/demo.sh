#!/usr/bin/env bash
# Builds examples/demo.rs for aarch64-unknown-linux-gnu and runs it under `qemu-aarch64 -cpu max`
# (the cargo runner of .cargo/config.toml). Installs the missing prerequisites first, quietly.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash ci/setup.sh --quiet
export QEMU_CPU="${QEMU_CPU:-max}"
exec cargo run --quiet --release --features std --target aarch64-unknown-linux-gnu --example demo
