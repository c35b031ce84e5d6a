#!/usr/bin/env python3
"""Proves with instruction counts that the asm tiers really run where they should and never
where they must not (`cargo make icount-check`).

  ci/icount_check.py [--tools DIR]

Builds the family test binaries for aarch64-unknown-linux-gnu and runs each one's golden-vector
test under the repository's instruction-count QEMU plugin (tools/icount/icount.py and plugin.c,
counting every executed instruction of the whole run by mnemonic) with `-cpu max`,
`-cpu cortex-a76` and `-cpu cortex-a53`. Requires, per family: under max SMMLA > 0 and SDOT > 0
(the i8mm and dotprod kernels executed) and, for the bf16 families, instructions executed in
functions that contain BFCVTN (their i8mm tiles' conversion; QEMU 7.2's disassembler cannot name
BFCVTN itself, so the functions are found with objdump and counted whole); under cortex-a76
(dotprod, no i8mm, no BF16) SDOT > 0 and SMMLA = 0 and nothing in a BFCVTN function; under
cortex-a53 none of the three (the test still passes: dispatch chose the NEON and scalar tiers,
no SIGILL). The float families (tests/float.rs, `golden_vectors_in_every_tier`) likewise: the
instructions executed in functions that contain a half-precision FMLA (`fmla v.8h`, the FEAT_FP16
tier) and in functions that contain BFMMLA or BFDOT (the FEAT_BF16 tier), found with objdump: under
max both > 0, under cortex-a76 (FP16, no BF16) the first > 0 and the second 0, under cortex-a53
both 0. Exits 0 only if all holds. It never skips: when the plugin cannot be built (no host
C compiler or headers; `cargo make setup` installs gcc and libc6-dev) the check fails.
`--tools DIR` runs another copy of the tools (DIR/icount/icount.py, or DIR/icount).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = "aarch64-unknown-linux-gnu"
FAMILIES = ["qai8dxp_qsi4cxp", "qai8dxp_qsi4c32p", "qsi8d32p_qsi4c32p", "qai8dxp_qsi8cxp", "f16_qai8dxp_qsi4cxp",
            "f16_qai8dxp_qsi8cxp", "bf16_qai8dxp_qsi4cxp", "bf16_qai8dxp_qsi4c32p", "qsi8d32p_qai4c32p",
            "f16_qsi8d32p_qai4c32p", "qai8dxp_qsu2cxp"]
# The test binary of a family whose tests share another family's file (default: its own name).
BINARY = {"f16_qsi8d32p_qai4c32p": "qsi8d32p_qai4c32p"}
CLASSES = ("smmla", "sdot")


def test_binaries():
    out = subprocess.run(
        ["cargo", "test", "--no-run", "--features", "std", "--target", TARGET, "--message-format=json"]
        + sum((["--test", f] for f in sorted({BINARY.get(f, f) for f in FAMILIES})), []),
        cwd=ROOT, check=True, text=True, capture_output=True).stdout
    exes = {}
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            exes[msg["target"]["name"]] = msg["executable"]
    return {f: exes[BINARY.get(f, f)] for f in FAMILIES}


def bfcvtn_functions(exe):
    """Demangled names (hash stripped) of the functions of `exe` that contain a BFCVTN."""
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", "-C", exe],
                         check=True, text=True, capture_output=True).stdout
    names, current = set(), None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            current = re.sub(r"::h[0-9a-f]{16}$", "", m.group(1))
        elif current and re.search(r"\tbfcvtn2?\s", line):
            names.add(current)
    return names


def functions_with(exe, pattern):
    """Demangled names (hash stripped) of the functions of `exe` with an instruction matching `pattern`."""
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", "-C", exe],
                         check=True, text=True, capture_output=True).stdout
    names, current = set(), None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            current = re.sub(r"::h[0-9a-f]{16}$", "", m.group(1))
        elif current and re.search(pattern, line):
            names.add(current)
    return names


def float_binary():
    out = subprocess.run(["cargo", "test", "--no-run", "--features", "std", "--target", TARGET, "--message-format=json",
                          "--test", "float"], cwd=ROOT, check=True, text=True, capture_output=True).stdout
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "float":
            return msg["executable"]
    return None


def count_float(icount, cpu, exe, groups):
    """Instructions executed under `cpu` in each set of functions of `groups` by the float golden test."""
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "o.json")
        cmd = icount + ["--cpu", cpu, "--sym", "qgemm::float::", "--top", "0", "--json", js, "--", exe,
                        "golden_vectors_in_every_tier", "--exact", "--test-threads=1"]
        r = subprocess.run(cmd, text=True, capture_output=True, env=dict(os.environ, QEMU_CPU=cpu))
        if r.returncode != 0:
            print(r.stdout[-2000:], r.stderr[-2000:], file=sys.stderr)
            return None, " ".join(cmd)
        ranges = json.load(open(js)).get("ranges", {})
        per = [sum(v["insns"] for name, v in ranges.items() if re.sub(r" @0x[0-9a-f]+$", "", name) in g)
               for g in groups]
        return per, " ".join(cmd[:-4] + ["<tests/float binary>"] + cmd[-3:])


def check_float(icount):
    """The float families' FP16 and BF16 tiers: where they must run and where they must not."""
    exe = float_binary()
    if exe is None:
        print("float: no test binary: FAILED")
        return False
    fp16 = functions_with(exe, r"\tfmla\s+v\d+\.8h")
    bf16 = functions_with(exe, r"\tbf(mmla|dot)\s")
    if not fp16 or not bf16:
        print(f"float: no function with {'an f16 FMLA' if not fp16 else 'BFMMLA/BFDOT'} in the test binary: FAILED")
        return False
    ok, cmd = True, ""
    print(f"{'family':<22} {'cpu':<11} {'in FP16 fns':>12} {'in BF16 fns':>12}  verdict")
    for cpu, want_fp16, want_bf16 in (("max", True, True), ("cortex-a76", True, False), ("cortex-a53", False, False)):
        counts, cmd = count_float(icount, cpu, exe, (fp16, bf16))
        if counts is None:
            print(f"{'float (4 families)':<22} {cpu:<11} {'-':>12} {'-':>12}  FAILED (test failed or crashed): {cmd}")
            ok = False
            continue
        good = (counts[0] > 0) == want_fp16 and (counts[1] > 0) == want_bf16
        ok &= good
        print(f"{'float (4 families)':<22} {cpu:<11} {counts[0]:>12,} {counts[1]:>12,}  {'ok' if good else 'FAILED'}")
    print(f"command: {cmd}")
    return ok


def icount_tool(tools):
    """The command that runs the icount wrapper of the tools directory, or None."""
    for rel in ("icount/icount.py", "icount"):
        path = os.path.join(tools, rel)
        if os.path.isfile(path):
            return [sys.executable, path] if path.endswith(".py") else [path]
    return None


def count(icount, cpu, exe, family, bf_fns):
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "o.json")
        cmd = icount + ["--cpu", cpu, "--global", "--sym", "qgemm::matmul::", "--classes", ",".join(CLASSES),
                        "--top", "0", "--json", js, "--", exe, f"{family}::golden_outputs_in_every_tier", "--exact",
                        "--test-threads=1"]
        env = dict(os.environ, QEMU_CPU=cpu)
        r = subprocess.run(cmd, text=True, capture_output=True, env=env)
        if r.returncode != 0:
            print(r.stdout[-2000:], r.stderr[-2000:], file=sys.stderr)
            return None, " ".join(cmd)
        res = json.load(open(js))
        g = res.get("gmnem", {})
        bf = sum(r["insns"] for name, r in res.get("ranges", {}).items()
                 if re.sub(r" @0x[0-9a-f]+$", "", name) in bf_fns)
        return tuple(g.get(c, 0) for c in CLASSES) + (bf,), " ".join(cmd[:-4] + ["<test binary>"] + cmd[-3:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default=os.path.join(ROOT, "tools"),
                    help="the measuring tools (default: the repository's tools/)")
    a = ap.parse_args()
    icount = icount_tool(a.tools)
    if icount is None:
        print(f"icount-check: FAILED: no icount tool in {a.tools}")
        return 1
    if icount[-1].endswith(".py") and subprocess.run(icount + ["--build"], stdout=subprocess.DEVNULL).returncode != 0:
        print("icount-check: FAILED: the icount plugin did not build (tools/icount/plugin.c; `cargo make setup` "
              "installs gcc and libc6-dev)")
        return 1
    ok = True
    exes = test_binaries()
    print(f"{'family':<22} {'cpu':<11} {'SMMLA':>12} {'SDOT':>12} {'in BFCVTN fns':>14}  verdict")
    for fam in FAMILIES:
        bf_fns = bfcvtn_functions(exes[fam])
        if fam.startswith("bf16_") and not bf_fns:
            print(f"{fam:<22} no function of the test binary contains BFCVTN: FAILED")
            ok = False
        for cpu in ("max", "cortex-a76", "cortex-a53"):
            counts, cmd = count(icount, cpu, exes[fam], fam, bf_fns)
            if counts is None:
                print(f"{fam:<22} {cpu:<11} {'-':>12} {'-':>12} {'-':>14}  FAILED (test failed or crashed): {cmd}")
                ok = False
                continue
            smmla, sdot, bfcvtn = counts
            if cpu == "max":
                good = smmla > 0 and sdot > 0 and (bfcvtn > 0) == fam.startswith("bf16_")
            elif cpu == "cortex-a76":
                good = smmla == 0 and sdot > 0 and bfcvtn == 0
            else:
                good = smmla == 0 and sdot == 0 and bfcvtn == 0
            ok &= good
            print(f"{fam:<22} {cpu:<11} {smmla:>12,} {sdot:>12,} {bfcvtn:>14,}  {'ok' if good else 'FAILED'}")
    print(f"command: tools/icount/icount.py --cpu CPU --global --sym qgemm::matmul:: --classes {','.join(CLASSES)} -- "
          "<family test binary> <family>::golden_outputs_in_every_tier --exact --test-threads=1")
    ok &= check_float(icount)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
