#!/usr/bin/env bash
# Vendoring check (docs/porting.md, "Adding the crate"): a firmware team's Cargo workspace
# (ci/vendoring: a `no_std`, `no_main` image crate) with a copy of qgemm's sources under
# vendor/qgemm, built offline for aarch64-unknown-none in a temporary directory, as the team
# would build it. Also checks that the recipe's `exclude` line is what makes it work: without it
# Cargo stops with "multiple workspace roots found in the same workspace".
#
#   ci/vendoring/check.sh          (cargo make vendor-check)
#
# Offline: the registry cache must already hold qgemm's dependencies (any earlier build of the
# crate fetches them); the workspace starts from qgemm's Cargo.lock so it resolves to those
# versions. Warnings are errors (RUSTFLAGS=-D warnings), for the vendored crate too.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ws=$tmp/firmware-workspace

# The firmware workspace, and the crate copied as a team copies it: the files its package holds
# (`cargo package --list`: Cargo.toml with its [workspace] table, src/, docs, tests, examples;
# not the generated .orig / VCS files, nor dot-files).
mkdir -p "$ws/vendor/qgemm"
cp -r "$root/ci/vendoring/Cargo.toml" "$root/ci/vendoring/rustfmt.toml" "$root/ci/vendoring/firmware" "$ws/"
(cd "$root" && cargo package --list --allow-dirty --offline 2>/dev/null) |
    grep -vE '^(Cargo\.toml\.orig|\.)' >"$tmp/files"
[[ -s $tmp/files ]] || { echo "vendor-check: cargo package --list gave no files" >&2; exit 1; }
(cd "$root" && tar -cf - -T "$tmp/files") | tar -xf - -C "$ws/vendor/qgemm"
grep -q '^\[workspace\]' "$ws/vendor/qgemm/Cargo.toml" ||
    { echo "vendor-check: the copied Cargo.toml has no [workspace] table: the check tests nothing" >&2; exit 1; }
cp "$root/Cargo.lock" "$ws/Cargo.lock"
echo "vendor-check: $(wc -l <"$tmp/files") files of the crate in $ws/vendor/qgemm"

# Without the recipe's exclude line: the failure the recipe avoids.
sed '/^exclude = \["vendor\/qgemm"\]/d' "$ws/Cargo.toml" >"$tmp/Cargo.toml.noexclude"
cmp -s "$ws/Cargo.toml" "$tmp/Cargo.toml.noexclude" &&
    { echo "vendor-check: ci/vendoring/Cargo.toml has no exclude line to remove" >&2; exit 1; }
cp "$ws/Cargo.toml" "$tmp/Cargo.toml.recipe"
cp "$tmp/Cargo.toml.noexclude" "$ws/Cargo.toml"
if (cd "$ws" && cargo metadata --offline --format-version 1 >/dev/null 2>"$tmp/noexclude.log"); then
    echo "vendor-check: the workspace also loads without exclude: the recipe's line is not needed?" >&2
    exit 1
fi
grep -q "multiple workspace roots" "$tmp/noexclude.log" ||
    { echo "vendor-check: without exclude, an unexpected error:" >&2; cat "$tmp/noexclude.log" >&2; exit 1; }
echo "vendor-check: without exclude: $(grep -m1 'multiple workspace roots' "$tmp/noexclude.log")"
cp "$tmp/Cargo.toml.recipe" "$ws/Cargo.toml"

# The recipe: builds and links.
set -x
cd "$ws"
RUSTFLAGS="-D warnings" cargo build --offline --release --target aarch64-unknown-none
cargo fmt --check
set +x
elf=$ws/target/aarch64-unknown-none/release/firmware
[[ -f $elf ]] || { echo "vendor-check: no image built" >&2; exit 1; }
echo "vendor-check: ok: firmware image linked against the vendored qgemm ($(wc -c <"$elf") bytes)"
