#!/usr/bin/env python3
"""Proves with instruction counts that the asm tiers really run where they should and never
where they must not (`cargo make icount-check`).

  ci/icount_check.py [--tools DIR]

Builds the family test binaries for aarch64-unknown-linux-gnu and runs each one's golden-vector
test under the project's icount QEMU plugin (shared/tools/icount, counting every executed
instruction of the whole run by mnemonic), once with `-cpu max` and once with
`-cpu cortex-a53`. Requires, per family, SMMLA > 0 and SDOT > 0 under max (the i8mm and dotprod
kernels executed) and SMMLA = SDOT = 0 under cortex-a53 (the test still passes: dispatch chose
the NEON and scalar tiers, no SIGILL). Exits 0 only if all holds. Without the tools (a checkout
that lacks ../shared/tools and no --tools/QGEMM_TOOLS) it says so and exits 0: the check needs
the project's measuring tools, not part of this repository.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = "aarch64-unknown-linux-gnu"
FAMILIES = ["qai8dxp_qsi4cxp", "qai8dxp_qsi4c32p", "qsi8d32p_qsi4c32p", "qai8dxp_qsi8cxp"]


def test_binaries():
    out = subprocess.run(
        ["cargo", "test", "--no-run", "--features", "std", "--target", TARGET, "--message-format=json"]
        + sum((["--test", f] for f in FAMILIES), []),
        cwd=ROOT, check=True, text=True, capture_output=True).stdout
    exes = {}
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] in FAMILIES:
            exes[msg["target"]["name"]] = msg["executable"]
    return exes


def count(tools, cpu, exe, family):
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "o.json")
        cmd = [os.path.join(tools, "icount"), "--cpu", cpu, "--global", "--classes", "smmla,sdot", "--top", "0",
               "--json", js, "--", exe, f"{family}::golden_outputs_in_every_tier", "--exact", "--test-threads=1"]
        env = dict(os.environ, QEMU_CPU=cpu)
        r = subprocess.run(cmd, text=True, capture_output=True, env=env)
        if r.returncode != 0:
            print(r.stdout[-2000:], r.stderr[-2000:], file=sys.stderr)
            return None, " ".join(cmd)
        g = json.load(open(js)).get("gmnem", {})
        return (g.get("smmla", 0), g.get("sdot", 0)), " ".join(cmd[:-4] + ["<test binary>"] + cmd[-3:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default=os.environ.get("QGEMM_TOOLS", os.path.join(ROOT, "..", "shared", "tools")))
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.tools, "icount")):
        print(f"icount-check: skipped: the icount tool is not at {a.tools} (set QGEMM_TOOLS)")
        return 0
    ok = True
    exes = test_binaries()
    print(f"{'family':<20} {'cpu':<11} {'SMMLA':>12} {'SDOT':>12}  verdict")
    for fam in FAMILIES:
        for cpu in ("max", "cortex-a53"):
            counts, cmd = count(a.tools, cpu, exes[fam], fam)
            if counts is None:
                print(f"{fam:<20} {cpu:<11} {'-':>12} {'-':>12}  FAILED (test failed or crashed): {cmd}")
                ok = False
                continue
            smmla, sdot = counts
            good = (smmla > 0 and sdot > 0) if cpu == "max" else (smmla == 0 and sdot == 0)
            ok &= good
            print(f"{fam:<20} {cpu:<11} {smmla:>12,} {sdot:>12,}  {'ok' if good else 'FAILED'}")
    print("command: shared/tools/icount --cpu CPU --global --classes smmla,sdot -- <family test binary> "
          "<family>::golden_outputs_in_every_tier --exact --test-threads=1")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
