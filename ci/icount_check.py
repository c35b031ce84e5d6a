#!/usr/bin/env python3
"""Proves with instruction counts that the asm tiers really run where they should and never
where they must not (`cargo make icount-check`).

  ci/icount_check.py [--tools DIR]

Its families and what it expects of each CPU model come from the kernel catalogue, not from
lists written here: examples/catalogue.rs (`qgemm::visit_families`) prints every kernel with
its tier, the features it requires and whether the CPU can run it, under each of `-cpu max`,
`-cpu cortex-a76` and `-cpu cortex-a53`. Then each family with dotprod or i8mm kernels has its
golden-vector test (`<family>::golden_outputs_in_every_tier`, in tests/<family>.rs or the test
file that holds `mod <family>`) run under the repository's instruction-count QEMU plugin
(tools/icount/icount.py and plugin.c, counting every executed instruction of the whole run by
mnemonic) on each model, and the counts must say exactly what the catalogue says: SMMLA > 0 if
and only if one of the family's i8mm kernels can run there, SDOT > 0 if and only if one of its
dotprod kernels can, and instructions executed in functions that contain BFCVTN (found with
objdump: QEMU 7.2's disassembler cannot name BFCVTN itself) if and only if one of its kernels
that requires FEAT_BF16 can. On cortex-a53 the tests still pass: dispatch chose the NEON and
scalar tiers, no SIGILL. The families with fp16 or bf16 kernels (tests/float.rs,
`golden_vectors_in_every_tier`) likewise: the instructions executed in functions that contain a
half-precision FMLA (`fmla v.8h`) are > 0 if and only if an fp16-tier kernel can run, and those
in functions that contain BFMMLA or BFDOT if and only if a bf16-tier kernel can. Exits 0 only if
all holds. It never skips: when the plugin cannot be built (no host C compiler or headers;
`cargo make setup` installs gcc and libc6-dev) the check fails.
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
CPUS = ("max", "cortex-a76", "cortex-a53")
CLASSES = ("smmla", "sdot")


def cargo_executables(args):
    """{target name: executable} of a `cargo build`/`cargo test --no-run` for the aarch64 target."""
    out = subprocess.run(["cargo"] + args + ["--features", "std", "--target", TARGET, "--message-format=json"],
                         cwd=ROOT, check=True, text=True, capture_output=True).stdout
    exes = {}
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            exes[msg["target"]["name"]] = msg["executable"]
    return exes


def catalogue():
    """{cpu: [kernel]} with each kernel a dict (family, name, tier, requires, available), as
    examples/catalogue.rs prints it under that QEMU CPU model."""
    exe = cargo_executables(["build", "--example", "catalogue"])["catalogue"]
    cat = {}
    for cpu in CPUS:
        out = subprocess.run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", exe], check=True, text=True,
                             capture_output=True, env=dict(os.environ, QEMU_CPU=cpu)).stdout
        rows = [line.split("\t") for line in out.splitlines() if line and not line.startswith("#")]
        cat[cpu] = [dict(family=f, name=n, tier=t, requires=set() if r == "-" else set(r.split("+")),
                         available=a == "yes") for f, n, t, r, a in rows]
    return cat


def families_with(kernels, tiers):
    """The families (catalogue order) that have a kernel of one of `tiers`."""
    return list(dict.fromkeys(k["family"] for k in kernels if k["tier"] in tiers))


def can_run(kernels, family, pred):
    """Whether a kernel of `family` (any family if None) satisfying `pred` is available."""
    return any(k["available"] and pred(k) for k in kernels if family is None or k["family"] == family)


def test_file(family):
    """The integration test (tests/<name>.rs) that holds `family`'s tests."""
    if os.path.isfile(os.path.join(ROOT, "tests", family + ".rs")):
        return family
    for name in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        path = os.path.join(ROOT, "tests", name)
        if name.endswith(".rs") and re.search(rf"^mod {family} \{{", open(path).read(), re.M):
            return name[:-3]
    raise SystemExit(f"icount-check: no test file holds the tests of {family}")


def test_binaries(families):
    files = sorted({test_file(f) for f in families})
    exes = cargo_executables(["test", "--no-run"] + sum((["--test", f] for f in files), []))
    return {f: exes[test_file(f)] for f in families}


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
    return cargo_executables(["test", "--no-run", "--test", "float"]).get("float")


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


def check_float(icount, cat):
    """The fp16 and bf16 tiers (the float families): where they must run and where they must not."""
    families = families_with(cat[CPUS[0]], ("fp16", "bf16"))
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
    label = f"float ({len(families)} families)"
    print(f"{'family':<22} {'cpu':<11} {'in FP16 fns':>12} {'in BF16 fns':>12}  verdict")
    for cpu in CPUS:
        want_fp16 = can_run(cat[cpu], None, lambda k: k["tier"] == "fp16")
        want_bf16 = can_run(cat[cpu], None, lambda k: k["tier"] == "bf16")
        counts, cmd = count_float(icount, cpu, exe, (fp16, bf16))
        if counts is None:
            print(f"{label:<22} {cpu:<11} {'-':>12} {'-':>12}  FAILED (test failed or crashed): {cmd}")
            ok = False
            continue
        good = (counts[0] > 0) == want_fp16 and (counts[1] > 0) == want_bf16
        ok &= good
        print(f"{label:<22} {cpu:<11} {counts[0]:>12,} {counts[1]:>12,}  {'ok' if good else 'FAILED'}")
    print(f"families: {', '.join(families)}")
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
    cat = catalogue()
    families = families_with(cat[CPUS[0]], ("dotprod", "i8mm"))
    exes = test_binaries(families)
    print(f"{'family':<22} {'cpu':<11} {'SMMLA':>12} {'SDOT':>12} {'in BFCVTN fns':>14}  verdict")
    for fam in families:
        bf_fns = bfcvtn_functions(exes[fam])
        needs_bf16 = any(k["family"] == fam and "bf16" in k["requires"] for k in cat[CPUS[0]])
        if needs_bf16 and not bf_fns:
            print(f"{fam:<22} no function of the test binary contains BFCVTN: FAILED")
            ok = False
        for cpu in CPUS:
            want = (can_run(cat[cpu], fam, lambda k: k["tier"] == "i8mm"),
                    can_run(cat[cpu], fam, lambda k: k["tier"] == "dotprod"),
                    can_run(cat[cpu], fam, lambda k: "bf16" in k["requires"]))
            counts, cmd = count(icount, cpu, exes[fam], fam, bf_fns)
            if counts is None:
                print(f"{fam:<22} {cpu:<11} {'-':>12} {'-':>12} {'-':>14}  FAILED (test failed or crashed): {cmd}")
                ok = False
                continue
            good = tuple(c > 0 for c in counts) == want
            ok &= good
            smmla, sdot, bfcvtn = counts
            print(f"{fam:<22} {cpu:<11} {smmla:>12,} {sdot:>12,} {bfcvtn:>14,}  {'ok' if good else 'FAILED'}")
    print(f"command: tools/icount/icount.py --cpu CPU --global --sym qgemm::matmul:: --classes {','.join(CLASSES)} -- "
          "<family test binary> <family>::golden_outputs_in_every_tier --exact --test-threads=1")
    ok &= check_float(icount, cat)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
