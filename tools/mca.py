#!/usr/bin/env python3
"""mca.py -- static throughput of an aarch64 function's hot loop with llvm-mca-19.

Usage:
  tools/mca.py [options] BINARY_OR_OBJECT FUNCTION_REGEX   # loop taken from the disassembly
  tools/mca.py [options] FILE.s                            # assembly as is (LLVM-MCA-BEGIN/END
                                                           # region markers are honoured)
Options:
  --cpu LIST      comma list of -mcpu names (default: neoverse-n1,neoverse-v1,
                  neoverse-n2,neoverse-v2,cortex-a78,cortex-x2,cortex-a510,cortex-a55)
  --loop N        pick loop N of --list-loops (default: the innermost loop with the
                  most instructions, i.e. the unrolled main loop, not a tail loop)
  --list-loops    list the backward-branch loops of the function and exit
  --whole         analyse the whole function body (straight-line, as if looped)
  --range A-B     analyse [A, B): hex addresses, or +OFF relative to the function
                  start, e.g. --range +0x10-+0x34
  --iterations N  llvm-mca -iterations (default 100)
  --mattr LIST    extra -mattr for llvm-mca (default: none; features the code
                  needs but a CPU lacks are added automatically and flagged)
  --show-asm      print the extracted block
  --full          print llvm-mca's full report (instruction info, resource
                  pressure, timeline for 3 iterations) for every CPU
  --args='...'  more llvm-mca arguments (note the =), e.g. --args=-bottleneck-analysis

The loop is found in llvm-objdump-19's disassembly of FUNCTION (selected with
re.search on demangled names, Rust hash stripped; an exact name wins): each
direct branch whose target lies in [target, branch] of the same function makes
a loop; "innermost" = contains no other such loop. Branch targets are rewritten
to labels. Per CPU it prints: the LLVM scheduling model actually used (several
-mcpu names share one), instructions per iteration, simulated cycles per
iteration (Total Cycles / Iterations), IPC, and Block RThroughput (the
resource-only lower bound, cycles per iteration). llvm-mca models an ideal
core: no cache misses, no branch mispredicts, no front-end limits. llvm-mca-19 and
llvm-objdump-19 come from Debian's llvm-19 (`cargo make setup`); LLVM_MCA and
OBJDUMP override them.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)  # a64elf.py is beside this file
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import a64elf  # noqa: E402

MCA = os.environ.get("LLVM_MCA", "llvm-mca-19")
DEFAULT_CPUS = ["neoverse-n1", "neoverse-v1", "neoverse-n2", "neoverse-v2",
                "cortex-a78", "cortex-x2", "cortex-a510", "cortex-a55"]


def text_symbols(path):
    """(mangled, demangled) for text symbols; works for .o files too."""
    raw = []
    for line in a64elf.run([a64elf.NM, "--defined-only", path]).splitlines():
        f = line.split(None, 2)
        if len(f) == 3 and f[1] in "TtWwi" and not f[2].startswith("$"):
            raw.append(f[2])
    raw = sorted(set(raw))
    return list(zip(raw, a64elf.demangle(raw)))


def pick_function(path, rx):
    syms = text_symbols(path)
    exact = [s for s in syms if rx in (s[0], s[1])]
    if exact:
        return exact[0]
    r = re.compile(rx)
    hits = [s for s in syms if r.search(s[1]) or r.search(s[0])]
    if len(hits) != 1:
        msg = f"'{rx}' matches {len(hits)} functions in {path}"
        if hits:
            msg += ":\n  " + "\n  ".join(h[1] for h in hits[:20])
        a64elf.die(msg + "\nneed exactly one (give a longer regex or the exact name)")
    return hits[0]


def disassemble_symbol(path, mangled):
    out = a64elf.run([a64elf.OBJDUMP, "-d", "-r", "--no-show-raw-insn",
                      f"--disassemble-symbols={mangled}", path])
    insns = []
    for line in out.splitlines():
        if re.match(r"^\s*[0-9a-f]+:\s+R_AARCH64_", line):
            if insns and insns[-1].target is not None:   # relocated branch in a .o
                insns[-1].target, insns[-1].ext = None, True
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S.*)$", line)
        if not m:
            continue
        addr, text = int(m.group(1), 16), re.sub(r"\s*//.*$", "", m.group(2)).strip()
        text = re.sub(r"\s+", " ", text, count=1)
        tgt = None
        if a64elf.BRANCH_RE.match(text + " "):
            t = re.search(r"\b0x([0-9a-f]+)(?:\s*<[^>]*>)?\s*$", text)
            if t:
                tgt = int(t.group(1), 16)
                text = text[:t.start()].rstrip()
        text = re.sub(r"\s*<[^>]*>", "", text)   # "adrp x0, 0x5d000 <sym>" -> "adrp x0, 0x5d000"
        insns.append(a64elf.Insn(addr, text, tgt))
    if not insns:
        a64elf.die(f"no instructions disassembled for {mangled}")
    return insns


def block_asm(body):
    """Assembly text for llvm-mca; branch targets become labels."""
    addrs = {i.addr for i in body}
    labels = {i.target for i in body if i.target is not None and i.target in addrs}
    lines = []
    for ins in body:
        if ins.addr in labels:
            lines.append(f".Lt{ins.addr:x}:")
        text = ins.text
        if ins.ext:
            text = f"{text} .Lout"
        elif ins.target is not None:
            lbl = f".Lt{ins.target:x}" if ins.target in addrs else ".Lout"
            text = f"{text} {lbl}"      # "b.ne" / "cbz x1," / "tbz w0, #3," + label
        lines.append(text)
    lines.append(".Lout:")
    return "\n".join(lines) + "\n"


def run_mca(asm_text, cpu, iterations, mattr, extra, full):
    base = [MCA, "-mtriple=aarch64", f"-mcpu={cpu}", f"-iterations={iterations}"]
    if full:
        base += ["-timeline", "-timeline-max-iterations=3"]
    base += extra
    added = []
    for _ in range(4):
        feats = ",".join(mattr + [f"+{f}" for f in added])
        cmd = base + ([f"-mattr={feats}"] if feats else []) + ["-"]
        try:
            p = subprocess.run(cmd, input=asm_text, capture_output=True, text=True)
        except FileNotFoundError:
            a64elf.die(f"'{MCA}' not found (Debian: llvm-19; `cargo make setup` installs it)")
        if p.returncode == 0:
            return p.stdout, added, None
        need = sorted(set(re.findall(r"instruction requires: ([\w\- ]+)", p.stderr)))
        new = [f for n in need for f in n.split() if f not in added]
        if not new:
            return None, added, p.stderr.strip()
        added += new
    return None, added, p.stderr.strip()


def parse_regions(out):
    """List of dicts per code region in llvm-mca's output."""
    chunks = re.split(r"\n(?=\[\d+\] Code Region)", "\n" + out)
    res = []
    for ch in chunks:
        if "Iterations:" not in ch:
            continue
        d = {"name": ""}
        m = re.search(r"\[\d+\] Code Region(?: - (.*))?", ch)
        if m:
            d["name"] = (m.group(1) or "").strip()
        for key, rx in [("iter", r"Iterations:\s+(\d+)"), ("insns", r"Instructions:\s+(\d+)"),
                        ("cycles", r"Total Cycles:\s+(\d+)"), ("uops", r"Total uOps:\s+(\d+)"),
                        ("width", r"Dispatch Width:\s+(\d+)"), ("ipc", r"IPC:\s+([\d.]+)"),
                        ("rthr", r"Block RThroughput:\s+([\d.]+)")]:
            mm = re.search(rx, ch)
            d[key] = float(mm.group(1)) if mm else None
        mm = re.search(r"Resources:\n\[[\d.]+\]\s+-\s+(\w+?)Unit", ch)
        d["model"] = mm.group(1) if mm else "?"
        res.append(d)
    return res


def main():
    ap = argparse.ArgumentParser(prog="mca", add_help=True,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 description=__doc__.split("Options:")[0])
    ap.add_argument("file")
    ap.add_argument("function", nargs="?")
    ap.add_argument("--cpu", default=",".join(DEFAULT_CPUS))
    ap.add_argument("--loop", type=int)
    ap.add_argument("--list-loops", action="store_true")
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--range")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--mattr", default="")
    ap.add_argument("--show-asm", action="store_true")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--args", default="")
    a = ap.parse_args()
    cpus = [c.strip() for c in a.cpu.split(",") if c.strip()]
    mattr = [m.strip() for m in a.mattr.split(",") if m.strip()]

    if a.file.endswith((".s", ".S", ".asm")) and not a.function:
        with open(a.file) as f:
            asm_text = f.read()
        what = a.file
    else:
        if not a.function:
            a64elf.die("need FUNCTION_REGEX (or give a .s file)")
        mangled, name = pick_function(a.file, a.function)
        insns = disassemble_symbol(a.file, mangled)
        lps = a64elf.loops(insns)
        if a.list_loops:
            print(f"loops in {name} ({len(insns)} instructions, "
                  f"{insns[0].addr:#x}-{insns[-1].addr + 4:#x}):")
            for n, (h, b, inner) in enumerate(lps):
                print(f"  [{n}] {h:#x}-{b + 4:#x}  {(b - h) // 4 + 1:4d} insns"
                      f"  {'innermost' if inner else ''}")
            return
        if a.whole:
            body, desc = insns, "whole function"
        elif a.range:
            lo_s, hi_s = a.range.split("-", 1)

            def ad(s):
                s = s.strip()
                return insns[0].addr + int(s[1:], 16) if s.startswith("+") else int(s, 16)
            lo, hi = ad(lo_s), ad(hi_s)
            body, desc = [i for i in insns if lo <= i.addr < hi], f"range {lo:#x}-{hi:#x}"
        else:
            if a.loop is not None:
                if not 0 <= a.loop < len(lps):
                    a64elf.die(f"--loop {a.loop}: function has {len(lps)} loops (--list-loops)")
                h, b, _ = lps[a.loop]
                desc = f"loop [{a.loop}]"
            else:
                hl = a64elf.hot_loop(insns)
                if not hl:
                    a64elf.die(f"no backward branch in {name}; use --whole or --range")
                h, b = hl
                desc = "hot loop (largest innermost)"
            body = [i for i in insns if h <= i.addr <= b]
            desc += f" {h:#x}-{b + 4:#x}"
        if not body:
            a64elf.die("empty block")
        asm_text = block_asm(body)
        what = f"{name}: {desc}, {len(body)} instructions"
    if a.show_asm:
        print(asm_text)

    print(f"mca: {what}")
    rows = []
    notes = []
    for cpu in cpus:
        out, added, err = run_mca(asm_text, cpu, a.iterations, mattr, a.args.split(), a.full)
        if out is None:
            rows.append([cpu, "-", "error", "", "", "", ""])
            notes.append(f"{cpu}: {err.splitlines()[0] if err else 'failed'}")
            continue
        if a.full:
            print(f"\n===== llvm-mca -mcpu={cpu} =====\n{out}")
        for reg in parse_regions(out):
            it = reg["iter"] or 1
            cpi = reg["cycles"] / it if reg["cycles"] is not None else 0
            rows.append([cpu + (f" [{reg['name']}]" if reg["name"] else ""),
                         reg["model"], f"{reg['insns'] / it:.0f}", f"{cpi:.2f}",
                         f"{reg['ipc']:.2f}", f"{reg['rthr']:.2f}",
                         ("+" + ",+".join(added) + " (not in this CPU)") if added else ""])
    header = ["cpu", "sched model", "insns/iter", "cycles/iter", "IPC",
              "block rthroughput", "features added"]
    w = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w[i]) if i in (0, 1, 6) else str(c).rjust(w[i])
                        for i, c in enumerate(r)).rstrip())
    for n in notes:
        print("  " + n)


if __name__ == "__main__":
    main()
