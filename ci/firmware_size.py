#!/usr/bin/env python3
"""What one `op::Linear` layer costs in `.text` in a bare-metal firmware, by the kernels it may
use (`cargo make firmware-size`, checked by `cargo make firmware-size-check`).

  ci/firmware_size.py [--check]

Builds ci/firmware-size (a minimal `no_std` program around one `Linear<Qai8dxpQsi4cxp>` call:
weights packed offline, f32 activations; release, LTO, one codegen unit, `panic = "abort"`) for
aarch64-unknown-none once per variant (a feature of that crate) into target/firmware-size,
reads the ELF's `.text` and `.rodata` sizes with binutils' `size -A`, and writes the table into
docs/porting.md between the `firmware-size:begin`/`firmware-size:end` markers. --check fails when
the checked-in table differs (the figures depend on rustc: generated with Rust 1.95, as CI
installs it).
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

from doc_section import update

ROOT = Path(__file__).resolve().parent.parent
CRATE = ROOT / "ci" / "firmware-size"
TARGET_DIR = ROOT / "target" / "firmware-size"
ELF = TARGET_DIR / "aarch64-unknown-none" / "release" / "qgemm-firmware-size"
DOC = ROOT / "docs" / "porting.md"
BEGIN = "<!-- firmware-size:begin (ci/firmware_size.py writes this table; do not edit) -->"
END = "<!-- firmware-size:end -->"
SIZE = "aarch64-linux-gnu-size"
# (feature, the call, which cores it serves)
VARIANTS = [
    ("dispatch", "`layer.run(&cpu, ..)`: the best kernel of the catalogue", "any Armv8-A"),
    ("neon-tier", "`layer.run_with(neon::KERNELS, ..)`", "any Armv8-A (A53, A72)"),
    ("dotprod-tier", "`layer.run_with(dotprod::KERNELS, ..)`", "FEAT_DotProd (A55, A76)"),
    ("dotprod-pair", "`layer.run_with(&[&dotprod::DOTPROD_1X8, &dotprod::DOTPROD_16X8], ..)`", "FEAT_DotProd"),
    ("i8mm-pair", "`layer.run_with(&[&dotprod::DOTPROD_1X8, &i8mm::I8MM_24X8], ..)`", "FEAT_I8MM (A510, A715)"),
    ("scalar-one", "`layer.run_with(&[&SCALAR_4X8], ..)`", "any (portable Rust)"),
]


def sizes(feature):
    # Only the crate's profile decides the code: no RUSTFLAGS from the environment.
    env = {k: v for k, v in os.environ.items() if "RUSTFLAGS" not in k}
    subprocess.run(["cargo", "build", "--quiet", "--release", "--locked", "--target", "aarch64-unknown-none",
                    "--features", feature, "--target-dir", str(TARGET_DIR)], cwd=CRATE, env=env, check=True)
    out = subprocess.run([SIZE, "-A", str(ELF)], check=True, text=True, capture_output=True).stdout
    found = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) == 3 and cols[0] in (".text", ".rodata"):
            found[cols[0]] = int(cols[1])
    if ".text" not in found:
        sys.exit(f"firmware-size: no .text in {ELF} ({feature})")
    return found[".text"], found.get(".rodata", 0)


def table():
    rows = []
    for feature, call, cores in VARIANTS:
        text, rodata = sizes(feature)
        rows.append(f"| {call} | {cores} | {text} | {rodata} |")
    header = "| the layer runs | cores | `.text` bytes | `.rodata` bytes |"
    return "\n".join([BEGIN, "", header, "|---|---|---:|---:|", *rows, "", END])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail when docs/porting.md is stale")
    args = ap.parse_args()
    update(DOC, BEGIN, END, table(), args.check, "firmware-size", "firmware size table")


if __name__ == "__main__":
    main()
