#!/usr/bin/env python3
"""icount.py -- count executed aarch64 instructions per function under qemu-aarch64.

Usage:
  tools/icount/icount.py [--cpu max] [--sym REGEX ...] [--loop REGEX ...] [--range NAME=START-END ...]
         [--classes smmla,sdot,...] [--groups] [--mix] [--top N] [--global]
         [--atomic] [--json FILE] [--raw FILE] -- BINARY ARGS...
  tools/icount/icount.py --build [--force]

Runs BINARY under qemu-aarch64 (-L /usr/aarch64-linux-gnu) with the plugin
(plugin.c beside this file, built into target/tools/icount-plugin.so), which
counts every executed instruction per function symbol of BINARY (ranges from
aarch64-linux-gnu-nm, PIE load bias handled).
Prints to stderr: total, the --sym matches (instructions, share of the total,
entries = executions of the first instruction, instructions per entry,
per-mnemonic class counts) and the top-N functions. The guest's own
stdout/stderr pass through; icount exits with the guest's exit status.

The plugin is compiled (with $HOST_CC, else $CC, else gcc) whenever it is missing
or older than plugin.c or qemu-plugin-api.h; `--build` only does that and prints
its path (`--force`: compile even when it is current). The build directory is
$CARGO_TARGET_DIR/tools when that is set.

  --sym REGEX     functions to detail (re.search on the demangled name, Rust
                  ::h<hash> stripped, or on the mangled name); repeatable
  --loop REGEX    also count the hot loop of that function (innermost backward
                  branch with the largest body) as its own range; its "entries"
                  are loop iterations
  --range NAME=START-END   extra range, hex link-time addresses, END exclusive;
                  or NAME=SYM+OFF-SYM+OFF style offsets from a --sym match, e.g.
                  k=smmla_4x4+0x10-smmla_4x4+0x34
  --classes LIST  mnemonic columns (comma list). Default: smmla,ummla,usmmla,sdot,
                  udot,usdot,sudot,fmla,ld1,ld1r,ldr_q,ldp_q,str_q,stp_q,st1, shown
                  only where non-zero. Names: see the header of plugin.c; any
                  other mnemonic as QEMU disassembles it (e.g. madd,ldrsb,smull)
  --groups        add columns int/ldst/simd/branch/sve/sme/other
  --mix           print the full mnemonic histogram of each --sym/--loop range
  --top N         list the N functions with most instructions (default 10)
  --global        also count mnemonics for the whole run (TOTAL row; slower)
  --atomic        thread-safe per-TB callbacks instead of inline adds (slower)
  --cpu CPU       qemu -cpu (default max); --qemu, --sysroot, --plugin override paths
                  (an explicit --plugin is used as it is, never built)
  --qemu-opt OPT  extra qemu-aarch64 argument (repeatable), e.g. --qemu-opt=-singlestep
  --json FILE     all counts as JSON; --raw FILE keeps the plugin's TSV output
  -v, --verbose   print the qemu command line and keep its temporary files
  --width N       shorten names longer than N characters in the tables (default
                  80, 0 = never)
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
TOOLS = os.path.dirname(HERE)
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import a64elf  # noqa: E402

PLUGIN_SOURCES = [os.path.join(HERE, "plugin.c"), os.path.join(HERE, "qemu-plugin-api.h")]

DEFAULT_CLASSES = ["smmla", "ummla", "usmmla", "sdot", "udot", "usdot", "sudot", "fmla",
                   "ld1", "ld1r", "ldr_q", "ldp_q", "str_q", "stp_q", "st1"]
GROUPS = ["int", "ldst", "simd", "branch", "sve", "sme", "other"]


def parse_args(argv):
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    i = argv.index("--")
    opts, prog = argv[:i], argv[i + 1:]
    if not prog:
        a64elf.die("no BINARY after --")
    ap = argparse.ArgumentParser(prog="icount", add_help=True)
    ap.add_argument("--cpu", default="max")
    ap.add_argument("--sym", action="append", default=[])
    ap.add_argument("--loop", action="append", default=[])
    ap.add_argument("--range", action="append", default=[])
    ap.add_argument("--classes")
    ap.add_argument("--groups", action="store_true")
    ap.add_argument("--mix", action="store_true")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--global", dest="glob", action="store_true")
    ap.add_argument("--atomic", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--raw")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--width", type=int, default=80)
    ap.add_argument("--qemu-opt", action="append", default=[])
    ap.add_argument("--qemu", default=os.environ.get("QEMU", "qemu-aarch64"))
    ap.add_argument("--sysroot", default=os.environ.get("QEMU_LD_PREFIX",
                                                        "/usr/aarch64-linux-gnu"))
    ap.add_argument("--plugin")
    return ap.parse_args(opts), prog


def default_plugin():
    """target/tools/icount-plugin.so ($CARGO_TARGET_DIR/tools/... when that is set)."""
    target = os.environ.get("CARGO_TARGET_DIR")
    target = os.path.abspath(target) if target else os.path.join(ROOT, "target")
    return os.path.join(target, "tools", "icount-plugin.so")


def build_plugin(force=False):
    """Compiles plugin.c into default_plugin() when it is missing or older than its sources
    (or always, with `force`); returns its path. Exits with status 2 when the build fails."""
    path = default_plugin()
    if not force and os.path.exists(path) and \
            os.path.getmtime(path) >= max(os.path.getmtime(s) for s in PLUGIN_SOURCES):
        return path
    cc = shlex.split(os.environ.get("HOST_CC") or os.environ.get("CC") or "gcc")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"    # renamed into place: parallel runs never see half a file
    cmd = cc + ["-O2", "-g", "-Wall", "-Wextra", "-std=gnu11", "-fPIC", "-shared",
                "-fvisibility=hidden", "-pthread", "-I", HERE, "-o", tmp, PLUGIN_SOURCES[0]]
    print("icount: building the plugin: " + " ".join(cmd), file=sys.stderr)
    hint = "it needs a host C compiler and the C library headers (Debian: gcc libc6-dev; " \
        "`cargo make setup` installs them)"
    try:
        rc = subprocess.run(cmd).returncode
    except FileNotFoundError:
        a64elf.die(f"'{cc[0]}' not found: {hint}")
    if rc != 0 or not os.path.exists(tmp):
        if os.path.exists(tmp):
            os.unlink(tmp)
        a64elf.die(f"building the plugin failed: {hint}")
    os.replace(tmp, path)
    return path


def addr_expr(expr, syms):
    expr = expr.strip()
    m = re.match(r"^(0x)?([0-9a-fA-F]+)$", expr)
    if m and (m.group(1) or not any(s.name == expr for s in syms)):
        return int(m.group(2), 16)
    m = re.match(r"^(.+?)(?:\+(0x[0-9a-fA-F]+|\d+))?$", expr)
    hits = a64elf.select(syms, m.group(1))
    if len(hits) != 1:
        a64elf.die(f"'{m.group(1)}' matches {len(hits)} functions; need exactly one")
    return hits[0].start + (int(m.group(2), 0) if m.group(2) else 0)


def short(name, width):
    if width <= 0 or len(name) <= width:
        return name
    head = (width - 3) // 2
    return name[:head] + "..." + name[len(name) - (width - 3 - head):]


def fmt(n):
    return f"{n:,}"


def table(rows, header, right):
    w = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    lines = []
    for r in [header] + rows:
        cells = [str(c).rjust(w[i]) if right[i] else str(c).ljust(w[i])
                 for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main():
    if sys.argv[1:2] == ["--build"]:
        if any(a != "--force" for a in sys.argv[2:]):
            a64elf.die("usage: icount.py --build [--force]")
        print(build_plugin(force="--force" in sys.argv[2:]))
        return
    args, prog = parse_args(sys.argv[1:])
    binary = prog[0]
    if not os.path.exists(binary):
        a64elf.die(f"{binary}: no such file")
    if args.plugin is None:
        args.plugin = build_plugin()
    elif not os.path.exists(args.plugin):
        a64elf.die(f"--plugin {args.plugin}: no such file")
    etype = a64elf.elf_type(binary)
    tv = a64elf.text_vaddr(binary)
    if tv is None:
        a64elf.die(f"{binary}: no executable PT_LOAD (not a linked executable?)")
    secs = a64elf.exec_sections(binary)
    syms = a64elf.symbols(binary, secs)
    gaps = a64elf.gap_ranges(syms, secs)

    detail = set()
    for rx in args.sym + args.loop:
        hits = a64elf.select(syms, rx)
        if not hits:
            a64elf.die(f"--sym/--loop '{rx}' matches no function in {binary}")
        detail.update(id(s) for s in hits)

    extras = []  # (name, start, end)
    for rx in args.loop:
        for s in a64elf.select(syms, rx):
            insns = a64elf.disassemble(binary, s.start, s.end)
            hl = a64elf.hot_loop(insns)
            if not hl:
                print(f"icount: no backward branch in {s.name}; --loop ignored",
                      file=sys.stderr)
                continue
            extras.append((f"loop {hl[0]:#x}-{hl[1] + 4:#x} in {s.name}", hl[0], hl[1] + 4))
    for spec in args.range:
        if "=" not in spec or "-" not in spec.split("=", 1)[1]:
            a64elf.die(f"--range '{spec}': want NAME=START-END")
        name, rng = spec.split("=", 1)
        lo, hi = rng.rsplit("-", 1)
        extras.append((name, addr_expr(lo, syms), addr_expr(hi, syms)))

    all_ranges = [(s, "d" if id(s) in detail else "-") for s in syms] + \
                 [(g, "-") for g in gaps]
    tmpdir = tempfile.mkdtemp(prefix="icount.")
    rfile = os.path.join(tmpdir, "ranges.tsv")
    ofile = args.raw or os.path.join(tmpdir, "result.tsv")
    names = []
    seen = {}
    for s in syms:
        seen[s.name] = seen.get(s.name, 0) + 1
    with open(rfile, "w") as f:
        for s, fl in all_ranges:
            f.write(f"{s.start:x}\t{s.end:x}\t{fl}\t{len(names)}\n")
            # same demangled name twice (generic instances): add the address
            names.append(s.name if seen.get(s.name, 0) < 2 or fl != "d"
                         else f"{s.name} @{s.start:#x}")
        for name, lo, hi in extras:
            f.write(f"{lo:x}\t{hi:x}\tdx\t{len(names)}\n")
            names.append(name)
    popts = [args.plugin, f"ranges={rfile}", f"textvaddr={tv:x}", f"out={ofile}"]
    if args.glob:
        popts.append("global=on")
    if args.atomic:
        popts.append("atomic=on")
    cmd = [args.qemu, "-cpu", args.cpu, "-L", args.sysroot] + args.qemu_opt + \
        ["-plugin", ",".join(popts)] + prog
    if args.verbose:
        print("icount: " + " ".join(cmd), file=sys.stderr)
    try:
        rc = subprocess.run(cmd).returncode
    except FileNotFoundError:
        a64elf.die(f"{args.qemu} not found (apt-get install qemu-user)")

    if rc < 0:                      # killed by a signal: report it like a shell
        print(f"icount: guest killed by signal {-rc}", file=sys.stderr)
        rc = 128 - rc
    if not os.path.exists(ofile):
        print("icount: the plugin wrote no result (a guest killed by a signal other "
              "than SIGABRT leaves none)", file=sys.stderr)
        sys.exit(rc or 2)
    res = {"total": 0, "bias": 0, "mode": "", "note": "", "ranges": {}, "gmnem": {},
           "ggroup": {}}
    with open(ofile) as f:
        for line in f:
            t = line.rstrip("\n").split("\t")
            if t[0] == "total":
                res["total"] = int(t[1])
            elif t[0] == "bias":
                res["bias"] = int(t[1], 16)
            elif t[0] == "mode":
                res["mode"] = t[1]
            elif t[0] == "note":
                res["note"] = t[1]
            elif t[0] == "range":
                idx = int(t[-1])
                res["ranges"][idx] = {"name": names[idx], "insns": int(t[2]),
                                      "entries": int(t[3]), "start": int(t[4], 16),
                                      "end": int(t[5], 16), "mnem": {}, "group": {}}
            elif t[0] == "rmnem":
                res["ranges"][int(t[1])]["mnem"][t[2]] = int(t[3])
            elif t[0] == "rgroup":
                res["ranges"][int(t[1])]["group"][t[2]] = int(t[3])
            elif t[0] == "gmnem":
                res["gmnem"][t[1]] = int(t[2])
            elif t[0] == "ggroup":
                res["ggroup"][t[1]] = int(t[2])
    total = res["total"] or 1
    n_main = len(all_ranges)
    in_binary = sum(r["insns"] for i, r in res["ranges"].items() if i < n_main)

    out = sys.stderr
    kind = "PIE" if etype == "DYN" else etype
    print(f"\nicount: {binary} ({kind}, load bias {res['bias']:#x}), "
          f"{os.path.basename(args.qemu)} -cpu {args.cpu}, {res['mode']} counters", file=out)
    if res["note"]:
        print(f"NOTE: {res['note']}", file=out)
    print(f"total instructions executed: {fmt(res['total'])}  "
          f"(in the binary's own code: {fmt(in_binary)}, "
          f"outside it (ld.so, libc, vdso): {fmt(res['total'] - in_binary)})", file=out)

    sel = [i for i, (s, fl) in enumerate(all_ranges) if fl == "d"] + \
        list(range(n_main, n_main + len(extras)))
    if sel:
        if args.classes:
            classes = [c.strip() for c in args.classes.split(",") if c.strip()]
        else:
            classes = [c for c in DEFAULT_CLASSES
                       if any(res["ranges"].get(i, {}).get("mnem", {}).get(c) for i in sel)
                       or (args.glob and res["gmnem"].get(c))]
        groups = GROUPS if args.groups else []
        header = ["range", "instructions", "share", "entries", "insns/entry"] + classes + \
            [f"g:{g}" for g in groups]
        rows = []
        empty = {"insns": 0, "entries": 0, "mnem": {}, "group": {}}
        fsel = sorted((i for i in sel if i < n_main),
                      key=lambda i: -res["ranges"].get(i, empty)["insns"])
        hidden = 0
        if len(fsel) > 20:
            hidden = sum(1 for i in fsel if i not in res["ranges"])
            fsel = [i for i in fsel if i in res["ranges"]]
        for i in fsel + [i for i in sel if i >= n_main]:
            r = res["ranges"].get(i, empty)
            ent = r["entries"]
            rows.append([short(names[i], args.width), fmt(r["insns"]), f"{100.0 * r['insns'] / total:.2f}%",
                         fmt(ent), f"{r['insns'] / ent:,.1f}" if ent else "-"] +
                        [fmt(r["mnem"].get(c, 0)) for c in classes] +
                        [fmt(r["group"].get(g, 0)) for g in groups])
        srow = ["TOTAL (whole run)", fmt(res["total"]), "100.00%", "-", "-"]
        if args.glob:
            srow += [fmt(res["gmnem"].get(c, 0)) for c in classes] + \
                [fmt(res["ggroup"].get(g, 0)) for g in groups]
        else:
            srow += ["" for _ in classes + groups]
        rows.append(srow)
        print("", file=out)
        print(table(rows, header, [False] + [True] * (len(header) - 1)), file=out)
        if hidden:
            print(f"({hidden} more matching functions never executed)", file=out)
        if args.mix:
            for i in sel:
                r = res["ranges"].get(i)
                if not r:
                    continue
                items = sorted(r["mnem"].items(), key=lambda kv: (-kv[1], kv[0]))
                print(f"\nmnemonic mix of {names[i]} ({fmt(r['insns'])} instructions):",
                      file=out)
                for m, n in items:
                    print(f"  {m:<14} {n:>14,}  {100.0 * n / max(r['insns'], 1):6.2f}%",
                          file=out)
    if args.top:
        agg = {}
        for i, r in res["ranges"].items():
            if i < n_main:
                agg[names[i]] = agg.get(names[i], 0) + r["insns"]
        agg["(outside the binary: ld.so, libc, vdso)"] = res["total"] - in_binary
        top = sorted(agg.items(), key=lambda kv: -kv[1])[:args.top]
        rows = [[short(n, args.width), fmt(c), f"{100.0 * c / total:.2f}%"] for n, c in top]
        print(f"\ntop {len(rows)} by instructions:", file=out)
        print(table(rows, ["function", "instructions", "share"], [False, True, True]),
              file=out)
    if args.json:
        res["binary"] = binary
        res["ranges"] = {names[i]: r for i, r in res["ranges"].items()}
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    for p in () if args.verbose else (rfile,) + (() if args.raw else (ofile,)):
        try:
            os.unlink(p)
        except OSError:
            pass
    try:
        os.rmdir(tmpdir)
    except OSError:
        pass
    sys.exit(rc)


if __name__ == "__main__":
    main()
