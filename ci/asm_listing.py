#!/usr/bin/env python3
"""Writes the machine code of every asm tile kernel as a readable listing (`cargo make asm-listing`),
or checks that the checked-in listings are current (`cargo make asm-listing-check`).

  ci/asm_listing.py [--check]

1. Builds the library in release for aarch64-unknown-linux-gnu into target/asm-listing.
2. Disassembles it (GNU objdump from binutils-aarch64-linux-gnu) and keeps every function under
   `qgemm::matmul::<family>::{dotprod,i8mm}::aarch64::` (or `::tiles::<type>_out::`, the tile
   functions of each output type, listed as `<type>_out::<name>`) except the `*_unchecked`
   entry points (compiled Rust drivers). Families are found from the symbols, not listed here.
   Also every function under `qgemm::float::<family>::{neon,fp16,bf16}::aarch64::` (the float
   families' FMLA, BFMMLA and BFDOT tiles) but the `*_unchecked` entry points and `run_*` drivers.
3. Writes docs/asm/<family>/<tier>.s (functions sorted by name: no addresses, no encodings,
   branch targets as .L labels, loop bodies indented one step per nesting level, called
   symbols by name) and docs/asm/index.md (one row per function: instructions, innermost loop,
   the tier's multiplies in it: SDOT, SMMLA, FMLA, BFMMLA/BFDOT).

--check writes the same into a temporary folder and fails when a checked-in file differs, is
missing or is extra. The listings depend on rustc: they are generated with the toolchain CI
installs (Rust 1.95); another rustc may allocate registers differently.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = "aarch64-unknown-linux-gnu"
TARGET_DIR = ROOT / "target" / "asm-listing"
OUT = ROOT / "docs" / "asm"
OBJDUMP = "aarch64-linux-gnu-objdump"
TIERS = ("dotprod", "i8mm")
SELECT = re.compile(r"qgemm::matmul::(\w+)::(dotprod|i8mm)::(?:aarch64::|tiles::(\w+)::)(\w+)")
# The float families' asm tiers: FMLA tiles (`wide::`/`narrow::`, the 4- and 2-register column widths) and the
# bf16 tiles (BFMMLA `mmla_*`, BFDOT `dot_*`).
FLOAT_SELECT = re.compile(r"qgemm::float::(\w+)::(neon|fp16|bf16)::aarch64::(?:(wide|narrow)::)?(\w+)")
# The multiply instructions counted in each tier's loops.
TIER_MMA = {"dotprod": ("sdot",), "i8mm": ("smmla",), "neon": ("fmla",), "fp16": ("fmla",), "bf16": ("bfmmla", "bfdot")}
HAND_WRITTEN = {"README.md"}  # files under docs/asm the script does not own


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, check=True, text=True, **kw)


def build():
    # Only the crate's own profile decides the code: no RUSTFLAGS from the environment.
    env = {k: v for k, v in os.environ.items() if "RUSTFLAGS" not in k}
    run(["cargo", "build", "--release", "--lib", "--target", TARGET, "--target-dir", str(TARGET_DIR)], env=env)
    return TARGET_DIR / TARGET / "release" / "libqgemm.rlib"


ESCAPES = {"$SP$": "@", "$BP$": "*", "$RF$": "&", "$LT$": "<", "$GT$": ">", "$LP$": "(", "$RP$": ")", "$C$": ","}


def demangle(sym):
    """rustc's legacy mangling without the hash; `anon.<hash>.N` as `anon.N`; others unchanged."""
    sym = re.sub(r"\.llvm\.\d+$", "", sym)
    sym = re.sub(r"^(\.L)?anon\.[0-9a-f]+\.", r"\1anon.", sym)
    if not (sym.startswith("_ZN") and sym.endswith("E")):
        return sym
    parts, i = [], 3
    while i < len(sym) - 1:
        m = re.match(r"\d+", sym[i:])
        if not m:
            return sym
        i += len(m.group())
        parts.append(sym[i:i + int(m.group())])
        i += int(m.group())
    if parts and re.fullmatch(r"h[0-9a-f]{16}", parts[-1]):
        parts.pop()
    out = []
    for p in parts:
        p = p[1:] if p.startswith("_$") else p
        p = re.sub(r"\$u([0-9a-f]+)\$", lambda m: chr(int(m.group(1), 16)), p.replace("..", "::"))
        for k, v in ESCAPES.items():
            p = p.replace(k, v)
        out.append(p)
    return "::".join(out)


def symbols(rlib):
    """(member, section) -> [(offset, size, mangled name)] of the function symbols."""
    syms, member = {}, None
    line_re = re.compile(r"([0-9a-f]{16}) (.{7}) (\S+)\t([0-9a-f]{16}) (?:\.hidden )?(\S+)$")
    for line in run([OBJDUMP, "-t", str(rlib)], capture_output=True).stdout.splitlines():
        if m := re.match(r"(\S+):\s+file format ", line):
            member = m.group(1)
        elif (m := line_re.match(line)) and "F" in m.group(2):
            syms.setdefault((member, m.group(3)), []).append((int(m.group(1), 16), int(m.group(4), 16), m.group(5)))
    return syms


def disassemble(rlib, sections):
    """(member, section) -> [(address, mnemonic, operands, relocation or None)]."""
    code, member, sec = {}, None, None
    args = [OBJDUMP, "-dr", "--no-show-raw-insn"] + [f"--section={s}" for s in sorted(sections)] + [str(rlib)]
    for line in run(args, capture_output=True).stdout.splitlines():
        if m := re.match(r"(\S+):\s+file format ", line):
            member = m.group(1)
        elif m := re.match(r"Disassembly of section (\S+):$", line):
            sec = code.setdefault((member, m.group(1)), [])
        elif m := re.match(r"\s*([0-9a-f]+):\t(\S+)\t?(.*)$", line):
            ops = re.sub(r"\s*//.*$", "", m.group(3)).strip()  # objdump's comments (`// #1`, `// b.any`)
            sec.append([int(m.group(1), 16), m.group(2), ops, None])
        elif m := re.match(r"\t+([0-9a-f]+): (R_\w+)\t(.*)$", line):
            assert sec and sec[-1][0] == int(m.group(1), 16), line
            sec[-1][3] = (m.group(2), m.group(3))
    return code


def render(short, name, insns, mma):
    """The listing of one function and its summary (total, innermost loops)."""
    end = insns[-1][0] + 4
    rows = []  # (address, mnemonic, operands, local target or None)
    for addr, mnem, ops, reloc in insns:
        target = None
        if reloc:  # a call or address of another symbol: its name instead of the placeholder
            rtype, rsym = reloc
            rsym = re.sub(r"^([^+]+)", lambda m: demangle(m.group(1)), rsym)
            if re.search(r"[0-9a-f]+ <[^>]*>$", ops):  # b, bl, adrp, adr: the target
                ops = re.sub(r"[0-9a-f]+ <[^>]*>$", rsym, ops)
            elif "LO12" in rtype and re.search(r"#0(x0)?\]?$", ops):  # add, ldr, str: the low 12 bits
                ops = re.sub(r"#0(x0)?(\]?)$", lambda m: f":lo12:{rsym}{m.group(2)}", ops)
            else:
                ops += f"  // {rsym} ({rtype})"
        elif m := re.search(r"\b([0-9a-f]+) <[^>]*>$", ops):
            target = int(m.group(1), 16)
            ops = ops[:m.start()]
        rows.append((addr, mnem, ops, target))
    labels = {t: f".L{i + 1}" for i, t in enumerate(sorted({t for *_, t in rows if t is not None}))}
    loops = [(t, a) for a, _, _, t in rows if t is not None and t <= a]  # backward branches
    inner = [lp for lp in loops if not any(o != lp and lp[0] <= o[0] and o[1] <= lp[1] for o in loops)]

    def loop_stats(lp):
        body = [mn for a, mn, *_ in rows if lp[0] <= a <= lp[1]]
        return len(body), sum(mn in mma.split("/") for mn in body)

    stats = [(labels[lp[0]], *loop_stats(lp)) for lp in sorted(inner)]
    loop_text = "; ".join(f"loop {lb}: {n} instructions, {n_mma} {mma}" for lb, n, n_mma in stats)
    out = [f"// {name}", f"// {len(rows)} instructions; {loop_text or 'no loop'}", f"{short}:"]
    for addr, mnem, ops, target in rows:
        depth = sum(t <= addr <= a for t, a in loops)
        if addr in labels:
            heads = [lp for lp in loops if lp[0] == addr]
            note = ""
            if heads:
                n, n_mma = loop_stats(max(heads, key=lambda lp: lp[1]))
                note = f"// loop: {n} instructions, {n_mma} {mma}"
            out.append(f"{labels[addr] + ':':<{8 + 4 * (depth - bool(heads))}}{note}".rstrip())
        operands = ops + (labels[target] if target in labels else "")
        line = f"{' ' * (8 + 4 * depth)}{mnem:<7} {operands}".rstrip()
        if target is not None and target <= addr:
            line = f"{line:<56} // back to {labels[target]}"
        out.append(line)
    if end in labels:
        out.append(f"{labels[end]}:")
    return "\n".join(out) + "\n", len(rows), stats


def listings():
    rlib = build()
    syms = symbols(rlib)
    found = {}  # (family, tier) -> [(short name, full name, key, offset, size)]
    for key, entries in syms.items():
        for off, size, sym in entries:
            name = demangle(sym)
            m = SELECT.fullmatch(name) or FLOAT_SELECT.fullmatch(name)
            if m and not m.group(4).endswith("_unchecked") and not m.group(4).startswith("run_"):
                # Tile functions per output type live in `tiles::<type>_out`: named `<type>_out::<fn>`
                # (float: `wide::<fn>`, `narrow::<fn>`).
                short = f"{m.group(3)}::{m.group(4)}" if m.group(3) else m.group(4)
                found.setdefault((m.group(1), m.group(2)), []).append((short, name, key, off, size))
    code = disassemble(rlib, {sec for fns in found.values() for _, _, (_, sec), _, _ in fns})
    # Every asm tier module in the source must have left tile functions in the object.
    for tier_rs in sorted((ROOT / "src" / "matmul").glob("*/*.rs")):
        fam, tier = tier_rs.parent.name, tier_rs.stem
        if fam != "arch" and tier in TIERS and "mod aarch64" in tier_rs.read_text() and (fam, tier) not in found:
            sys.exit(f"asm-listing: {tier_rs.relative_to(ROOT)} has `mod aarch64` but no tile function "
                     f"qgemm::matmul::{fam}::{tier}::aarch64::* is in the object")
    files, index = {}, []
    for tier_rs in sorted((ROOT / "src" / "float").glob("*/*.rs")):
        fam, tier = tier_rs.parent.name, tier_rs.stem
        if tier in ("neon", "fp16", "bf16") and (fam, tier) not in found:
            sys.exit(f"asm-listing: {tier_rs.relative_to(ROOT)} left no tile function "
                     f"qgemm::float::{fam}::{tier}::aarch64::* in the object")
    for (fam, tier), fns in sorted(found.items()):
        mnem = "/".join(TIER_MMA[tier])
        module = f"qgemm::{'float' if tier in ('neon', 'fp16', 'bf16') else 'matmul'}::{fam}"
        bodies, summary, seen = [], [], set()
        for short, name, key, off, size in sorted(fns):
            if name in seen:  # the same function in two codegen units: list it once
                continue
            seen.add(name)
            insns = [i for i in code[key] if off <= i[0] < off + size]
            aliases = sorted(demangle(s) for o, _, s in syms[key] if o == off and demangle(s) != name)
            text, total, stats = render(short, name, insns, mnem)
            if aliases:  # LLVM merged identical functions: one body, several names
                text = f"// same machine code as (merged with): {', '.join(aliases)}\n" + text
            bodies.append(text)
            hot = max(stats, key=lambda s: (s[2], s[1]), default=None)
            loop = f"{hot[1]:>5} {hot[2]:>6}" if hot else f"{'-':>5} {'-':>6}"
            more = f"  ({len(stats)} innermost loops)" if len(stats) > 1 else ""
            summary.append(f"//   {short:<30} {total:>6} {loop}{more}")
            index.append(f"| `{fam}` | {tier} | `{short}` | {total} | "
                         + (f"{hot[1]} | {hot[2]} |" if hot else "- | - |") + (f" {len(stats)} |"))
        head = [f"// The {tier} tile kernels of {module}, as rustc compiles them (release,",
                f"// {TARGET}). Generated by `cargo make asm-listing` (ci/asm_listing.py): do not edit;",
                "// see docs/asm/README.md. Branch targets are .L labels; loop bodies are indented.",
                f"// Per function: instructions in total, in its innermost loop (the one with the most {mnem}",
                f"// when there are several) and the {mnem} in that loop.",
                "//",
                f"//   {'function':<30} {'insns':>6} {'loop':>5} {mnem:>6}"]
        files[f"{fam}/{tier}.s"] = "\n".join(head + summary) + "\n\n" + "\n".join(bodies)
    rustc = run(["rustc", "--version"], capture_output=True).stdout.strip()
    objdump = run([OBJDUMP, "--version"], capture_output=True).stdout.splitlines()[0]
    files["index.md"] = "\n".join([
        "# asm tile kernels: index",
        "",
        "Generated by `cargo make asm-listing` (ci/asm_listing.py) from the release build for",
        f"`{TARGET}`. Do not edit; see [README.md](README.md).",
        "",
        f"* rustc: `{rustc}`",
        f"* disassembler: `{objdump}`",
        "",
        "Per function: instructions in total, in its innermost loop (the one with the most multiplies",
        "when there are several), the multiplies in that loop (SDOT for dotprod, SMMLA for i8mm, FMLA for",
        "the float neon and fp16 tiers, BFMMLA or BFDOT for bf16), and the number of innermost loops.",
        "",
        "| family | tier | function | insns | loop insns | multiplies in loop | innermost loops |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        *index,
        "",
    ])
    return files, rustc


def owned(folder):
    """The files under `folder` that the script writes (everything but the hand-written ones)."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - HAND_WRITTEN


def write(folder, files):
    for rel in owned(folder) - set(files):  # listings of functions or families that are gone
        (folder / rel).unlink()
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    for d in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()


def check(files, rustc):
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp), files)
        new, old = owned(Path(tmp)), owned(OUT)
        missing, extra = sorted(new - old), sorted(old - new)
        stale = sorted(r for r in new & old if (OUT / r).read_bytes() != (Path(tmp) / r).read_bytes())
        for rel in stale:
            diff = subprocess.run(["diff", "-u", "--label", f"docs/asm/{rel}", "--label", "generated", str(OUT / rel),
                                   str(Path(tmp) / rel)], text=True, capture_output=True).stdout.splitlines()
            more = [f"... ({len(diff) - 40} more diff lines)"] if len(diff) > 40 else []
            print("\n".join(diff[:40] + more), file=sys.stderr)
    if not (missing or stale or extra):
        print(f"asm-listing-check: {len(new)} files current")
        return 0
    for what, rels in (("stale", stale), ("missing", missing), ("extra", extra)):
        for rel in rels:
            print(f"asm-listing-check: {what}: docs/asm/{rel}", file=sys.stderr)
    was = re.search(r"^\* rustc: `(.*)`$", (OUT / "index.md").read_text(), re.M) if "index.md" in old else None
    if was and was.group(1) != rustc:
        print(f"asm-listing-check: docs/asm was generated with {was.group(1)}, this is {rustc}", file=sys.stderr)
    print(f"asm-listing-check: docs/asm is out of date: run cargo make asm-listing (and commit docs/asm). "
          f"The listings are tied to the toolchain CI installs (Rust 1.95); this is {rustc}, and another "
          "rustc may allocate registers differently.", file=sys.stderr)
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with docs/asm instead of writing it")
    a = ap.parse_args()
    files, rustc = listings()
    if a.check:
        return check(files, rustc)
    write(OUT, files)
    n = sum(f.endswith(".s") for f in files)
    print(f"asm-listing: wrote {n} listings and index.md to docs/asm ({rustc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
