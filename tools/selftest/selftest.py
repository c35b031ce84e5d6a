#!/usr/bin/env python3
"""Self-test of the measuring tools (`cargo make tools-check`).

  tools/selftest/selftest.py [--iters N] [--calls N]

1. Compiles the icount plugin from tools/icount/plugin.c (`icount.py --build --force`).
2. Builds probe.S + main.c with aarch64-linux-gnu-gcc twice, as a PIE (load bias 0x5500000000
   under qemu-aarch64 7.2) and as a static non-PIE executable (bias 0).
3. Runs each under tools/icount/icount.py (-cpu max; the static one also with --atomic) and
   requires exact counts: probe_loop's instructions, calls and full mnemonic histogram, its loop's
   (--loop) instructions, iterations and histogram, and the whole run's counts of the classes
   only the probe executes (SMMLA, SDOT and the other dot and matrix products).
4. Runs tools/mca.py on probe_loop for Neoverse N2, V1 and V2 and requires the same loop (the
   same addresses as icount's --loop), 26 instructions per iteration and a cycle figure per CPU.

Exits 0 when everything holds, 1 otherwise. Uses only what `cargo make setup` installs.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
ROOT = os.path.dirname(TOOLS)
ICOUNT = os.path.join(TOOLS, "icount", "icount.py")
MCA = os.path.join(TOOLS, "mca.py")
CPUS = ["neoverse-n2", "neoverse-v1", "neoverse-v2"]

# probe.S: per call, outside the loop and in one loop iteration.
EXPECT_OUTSIDE = {"movi": 1, "mov": 1, "ret": 1}
EXPECT_PER_ITER = {
    "ld1": 1, "ld1r": 1, "ldr_q": 1, "ldp_q": 1, "prfm": 1,
    "smmla": 4, "ummla": 1, "usmmla": 1, "bfmmla": 1,
    "sdot": 3, "udot": 1, "usdot": 1, "sudot": 1,
    "fmla": 2, "str_q": 1, "stp_q": 1, "st1": 1, "add": 1, "subs": 1, "b.ne": 1,
}
LOOP_BODY = sum(EXPECT_PER_ITER.values())  # 26
ONLY_PROBE = ["smmla", "ummla", "usmmla", "bfmmla", "sdot", "udot", "usdot", "sudot"]

failures = []


def check(what, got, want):
    ok = got == want
    print(f"  {what:<44} {str(got):>14}  expected {str(want):>14}  {'ok' if ok else 'FAILED'}")
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, **kw)


def target_dir():
    d = os.environ.get("CARGO_TARGET_DIR")
    return os.path.abspath(d) if d else os.path.join(ROOT, "target")


def build_probes(out):
    os.makedirs(out, exist_ok=True)
    probes = {}
    for kind, flags in (("pie", ["-pie", "-fPIE"]), ("static", ["-static", "-no-pie"])):
        exe = os.path.join(out, f"probe-{kind}")
        cmd = ["aarch64-linux-gnu-gcc", "-O1", *flags, "-o", exe,
               os.path.join(HERE, "main.c"), os.path.join(HERE, "probe.S")]
        try:
            if run(cmd).returncode != 0:
                sys.exit("tools-check: FAILED: the probe did not build")
        except FileNotFoundError:
            sys.exit("tools-check: FAILED: aarch64-linux-gnu-gcc not found (cargo make setup)")
        probes[kind] = exe
    return probes


def icount(exe, iters, calls, extra):
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "o.json")
        cmd = [sys.executable, ICOUNT, "--cpu", "max", "--sym", "^probe_loop$", "--loop", "^probe_loop$",
               "--global", "--top", "0", *extra, "--json", js, "--", exe, str(iters), str(calls)]
        r = run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0 or not os.path.exists(js):
            print(r.stdout + r.stderr)
            failures.append(f"icount {os.path.basename(exe)} (exit {r.returncode})")
            return None
        with open(js) as f:
            return json.load(f)


def check_icount(label, res, iters, calls):
    fn = res["ranges"].get("probe_loop")
    loops = [(n, r) for n, r in res["ranges"].items() if n.startswith("loop ") and n.endswith(" in probe_loop")]
    print(f"{label}: load bias {res['bias']:#x}, {res['mode']} counters, {res['total']:,} instructions in the run")
    if fn is None or len(loops) != 1:
        failures.append(f"{label}: probe_loop or its loop not counted")
        print(f"  FAILED: ranges counted: {sorted(res['ranges'])}")
        return None
    n_iter = iters * calls
    want_fn = {m: c * n_iter for m, c in EXPECT_PER_ITER.items()}
    for m, c in EXPECT_OUTSIDE.items():
        want_fn[m] = want_fn.get(m, 0) + c * calls
    check("probe_loop instructions", fn["insns"], calls * (sum(EXPECT_OUTSIDE.values()) + LOOP_BODY * iters))
    check("probe_loop entries (calls)", fn["entries"], calls)
    for m in ("smmla", "sdot"):
        check(f"probe_loop {m.upper()}", fn["mnem"].get(m, 0), want_fn[m])
    check("probe_loop mnemonic histogram (all classes)", fn["mnem"] == want_fn, True)
    if fn["mnem"] != want_fn:
        print(f"    got      {dict(sorted(fn['mnem'].items()))}\n    expected {dict(sorted(want_fn.items()))}")
    name, lp = loops[0]
    check("loop instructions", lp["insns"], LOOP_BODY * n_iter)
    check("loop entries (iterations)", lp["entries"], n_iter)
    want_loop = {m: c * n_iter for m, c in EXPECT_PER_ITER.items()}
    check("loop mnemonic histogram (all classes)", lp["mnem"] == want_loop, True)
    got_g = {m: res["gmnem"].get(m, 0) for m in ONLY_PROBE}
    want_g = {m: want_fn[m] for m in ONLY_PROBE}
    for m in ("smmla", "sdot"):
        check(f"whole run {m.upper()}", got_g[m], want_g[m])
    check(f"whole run, all {len(ONLY_PROBE)} dot/matrix classes", got_g == want_g, True)
    if got_g != want_g:
        print(f"    got {got_g}\n    expected {want_g}")
    return f"{lp['start']:#x}-{lp['end']:#x}"


def check_mca(exe, loop):
    r = run([sys.executable, MCA, "--cpu", ",".join(CPUS), exe, "^probe_loop$"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    print(r.stdout, end="")
    if r.returncode != 0:
        print(r.stderr)
        failures.append(f"mca (exit {r.returncode})")
        return
    m = re.search(r"^mca: probe_loop: hot loop \(largest innermost\) (0x[0-9a-f]+)-(0x[0-9a-f]+), (\d+) instructions",
                  r.stdout, re.M)
    if not m:
        failures.append("mca: no hot loop line")
        print("  FAILED: no 'mca: probe_loop: hot loop' line")
        return
    print("mca:")
    check("loop (the one icount --loop counted)", f"{m.group(1)}-{m.group(2)}", loop)
    check("loop instructions", int(m.group(3)), LOOP_BODY)
    for cpu in CPUS:
        row = re.search(rf"^{cpu} +\S+ +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)[ \t]*([^\n]*)$", r.stdout, re.M)
        if not row:
            failures.append(f"mca {cpu}: no row")
            print(f"  FAILED: no {cpu} row")
            continue
        insns, cycles, features = int(row.group(1)), float(row.group(2)), row.group(5).strip()
        check(f"{cpu}: insns/iter", insns, LOOP_BODY)
        check(f"{cpu}: cycles/iter > 0 (got {cycles:.2f})", cycles > 0, True)
        check(f"{cpu}: no feature added", features, "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=7)
    a = ap.parse_args()
    if a.iters < 1 or a.calls < 1:
        sys.exit("tools-check: --iters and --calls must be at least 1")
    if run([sys.executable, ICOUNT, "--build", "--force"], stdout=subprocess.DEVNULL).returncode != 0:
        print("tools-check: FAILED: the icount plugin did not build")
        return 1
    probes = build_probes(os.path.join(target_dir(), "tools", "selftest"))
    loop = None
    for kind, extra in (("pie", []), ("static", ["--atomic"])):
        res = icount(probes[kind], a.iters, a.calls, extra)
        if res is not None:
            rng = check_icount(f"icount, probe-{kind} {a.iters} {a.calls}" + (" --atomic" if extra else ""),
                               res, a.iters, a.calls)
            loop = loop or rng
    if loop:
        check_mca(probes["pie"], loop)
    if failures:
        print(f"tools-check: FAILED: {'; '.join(failures)}")
        return 1
    print(f"tools-check: ok (plugin exact on {a.calls} x {a.iters} iterations of a {LOOP_BODY}-instruction loop, "
          "PIE and static; mca gives cycles on " + ", ".join(CPUS) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
