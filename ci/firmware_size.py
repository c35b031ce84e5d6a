#!/usr/bin/env python3
"""What one `op::Linear` layer costs in `.text` in a bare-metal firmware, by the kernels it may
use (`cargo make firmware-size`, checked by `cargo make firmware-size-check`).

  ci/firmware_size.py [--check]

Builds ci/firmware-size (a minimal `no_std` program around one `Linear<Qai8dxpQsi4cxp>` call:
weights packed offline, f32 activations; release, LTO, one codegen unit, `panic = "abort"`) for
aarch64-unknown-none once per variant (a feature of that crate) into target/firmware-size,
reads the ELF's `.text` and `.rodata` sizes with binutils' `size -A`, and writes the table into
docs/porting.md between the `firmware-size:begin`/`firmware-size:end` markers and README.md's
figures (the two-kernel and the whole-catalogue layer) between its `firmware-size:readme`
markers. --check fails when either file differs (the figures depend on rustc: generated with
Rust 1.95, as CI installs it). Both modes fail when a variant's `.text` exceeds its budget
(`BUDGETS`, printed in the table).
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
README = ROOT / "README.md"
README_BEGIN = "<!-- firmware-size:readme (ci/firmware_size.py) -->"
README_END = "<!-- firmware-size:readme-end -->"
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
# Most `.text` bytes a variant may take (issue 34): the two-kernel dotprod layer and the portable
# one. KleidiAI's dotprod GEMV + GEMM and f32 qai8dxp packer (gcc -O3) are 7.8 KB.
BUDGETS = {"dotprod-pair": 16000, "scalar-one": 12000}
# The README's sentence: the two-kernel layer against the whole catalogue.
README_PAIR, README_ALL = "dotprod-pair", "dispatch"


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


def measure():
    """{feature: (.text, .rodata)} of every variant."""
    return {feature: sizes(feature) for feature, _, _ in VARIANTS}


def table(found):
    rows = []
    for feature, call, cores in VARIANTS:
        text, rodata = found[feature]
        budget = BUDGETS.get(feature)
        rows.append(f"| {call} | {cores} | {text} | {budget if budget else '-'} | {rodata} |")
    header = "| the layer runs | cores | `.text` bytes | `.text` budget | `.rodata` bytes |"
    note = ("`cargo make firmware-size-check` fails when a `.text` figure exceeds its budget "
            "(`BUDGETS` in ci/firmware_size.py).")
    return "\n".join([BEGIN, "", header, "|---|---|---:|---:|---:|", *rows, "", note, "", END])


def readme(found):
    """README's figures: `15.6 KB of `.text` instead of 77 KB` (KB = 1000 bytes)."""
    pair, every = found[README_PAIR][0], found[README_ALL][0]
    return f"{README_BEGIN}{pair / 1000:.1f} KB of `.text` instead of {round(every / 1000)} KB{README_END}"


def over_budget(found):
    """One message per variant whose `.text` exceeds its budget."""
    return [f"firmware-size: {f} takes {found[f][0]} B of .text, over its budget of {b} B"
            for f, b in BUDGETS.items() if found[f][0] > b]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="fail when docs/porting.md or README.md is stale (and, always, over a budget)")
    args = ap.parse_args()
    found = measure()
    over = over_budget(found)
    for msg in over:
        print(msg, file=sys.stderr)
    update(DOC, BEGIN, END, table(found), args.check, "firmware-size", "firmware size table")
    update(README, README_BEGIN, README_END, readme(found), args.check, "firmware-size", "firmware-size sentence")
    if over:
        sys.exit(1)


if __name__ == "__main__":
    main()
