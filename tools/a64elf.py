"""a64elf.py -- helpers shared by tools/icount/icount.py and tools/mca.py (not run directly).

Reads an aarch64 ELF with binutils (aarch64-linux-gnu-nm/readelf/c++filt, Debian's
binutils-aarch64-linux-gnu) and llvm-objdump-19 (llvm-19): function symbol ranges
(demangled, Rust hashes stripped), executable sections, the text load address,
disassembly, and backward-branch loops. Tool names can be overridden with the
environment variables NM, READELF, CXXFILT, OBJDUMP.
"""
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

NM = os.environ.get("NM", "aarch64-linux-gnu-nm")
READELF = os.environ.get("READELF", "aarch64-linux-gnu-readelf")
CXXFILT = os.environ.get("CXXFILT", "aarch64-linux-gnu-c++filt")
OBJDUMP = os.environ.get("OBJDUMP", "llvm-objdump-19")


def die(msg):
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, stdin=None):
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    except FileNotFoundError:
        die(f"'{cmd[0]}' not found (`cargo make setup` installs it; see tools/README.md)")
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed:\n{p.stderr.strip()}")
    return p.stdout


@dataclass
class Section:
    name: str
    start: int
    end: int


@dataclass
class Sym:
    start: int
    end: int            # exclusive
    name: str           # demangled, Rust ::h<hash> stripped
    mangled: str
    aliases: list = field(default_factory=list)
    sized: bool = True


def elf_type(path):
    out = run([READELF, "-hW", path])
    m = re.search(r"Type:\s+(\w+)", out)
    mach = re.search(r"Machine:\s+(.*)", out)
    if mach and "AArch64" not in mach.group(1):
        die(f"{path}: not an AArch64 ELF ({mach.group(1).strip()})")
    return m.group(1) if m else "?"


def text_vaddr(path):
    """p_vaddr of the lowest executable PT_LOAD (None for a relocatable .o)."""
    out = run([READELF, "-lW", path])
    best = None
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "LOAD" and "E" in "".join(f[6:-1]):
            v = int(f[2], 16)
            best = v if best is None else min(best, v)
    return best


def exec_sections(path):
    out = run([READELF, "-SW", path])
    secs = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)"
                     r"\s+\S+\s+(\S*)", line)
        if m and "X" in m.group(5):
            start, size = int(m.group(3), 16), int(m.group(4), 16)
            if size:
                secs.append(Section(m.group(1), start, start + size))
    return secs


def demangle(names):
    if not names:
        return []
    out = run([CXXFILT], stdin="\n".join(names) + "\n").splitlines()
    if len(out) != len(names):
        return list(names)
    # Rust: drop legacy "::h<hash>" suffixes and v0 crate disambiguators "[hex]"
    return [re.sub(r"(\w)\[[0-9a-f]+\]", r"\1", re.sub(r"::h[0-9a-f]{16}$", "", d))
            for d in out]


def symbols(path, secs=None):
    """Function ranges in executable sections, non-overlapping, sorted."""
    secs = exec_sections(path) if secs is None else secs
    raw = []
    for line in run([NM, "-S", "--defined-only", path]).splitlines():
        f = line.split(None, 3)
        if len(f) == 4:
            addr, size, typ, name = int(f[0], 16), int(f[1], 16), f[2], f[3]
        elif len(f) == 3:
            addr, size, typ, name = int(f[0], 16), 0, f[1], f[2]
        else:
            continue
        if typ in "aANUbBdDrRvV" or name.startswith("$"):
            continue
        if not any(s.start <= addr < s.end for s in secs):
            continue
        raw.append((addr, size, typ, name))
    dem = demangle([r[3] for r in raw])
    byaddr = {}
    for (addr, size, typ, name), d in zip(raw, dem):
        cur = byaddr.get(addr)
        key = (size > 0, typ.isupper())
        if cur is None:
            byaddr[addr] = [key, Sym(addr, addr + size, d, name, [], size > 0)]
        elif key > cur[0]:
            old = cur[1]
            byaddr[addr] = [key, Sym(addr, addr + size, d, name, [old.name] + old.aliases,
                                     size > 0)]
        else:
            cur[1].aliases.append(d)
    syms = sorted((v[1] for v in byaddr.values()), key=lambda s: s.start)
    # drop sizeless labels inside a sized symbol (asm labels), then fix ends
    kept, cover_end = [], -1
    for s in syms:
        if not s.sized and s.start < cover_end:
            continue
        kept.append(s)
        if s.sized:
            cover_end = max(cover_end, s.end)
    for i, s in enumerate(kept):
        nxt = kept[i + 1].start if i + 1 < len(kept) else None
        sec_end = next((x.end for x in secs if x.start <= s.start < x.end), s.start + 4)
        if not s.sized:
            s.end = min(nxt, sec_end) if nxt is not None else sec_end
        elif nxt is not None and s.end > nxt:
            s.end = nxt
        if s.end <= s.start:
            s.end = s.start + 4
    return kept


def gap_ranges(syms, secs):
    """Parts of executable sections no symbol covers (PLT, crt stubs)."""
    gaps = []
    for sec in secs:
        pos = sec.start
        for s in syms:
            if s.end <= sec.start or s.start >= sec.end:
                continue
            if s.start > pos:
                gaps.append(Sym(pos, s.start, f"[{sec.name}]", "", []))
            pos = max(pos, s.end)
        if pos < sec.end:
            gaps.append(Sym(pos, sec.end, f"[{sec.name}]", "", []))
    return gaps


def select(syms, regex):
    rx = re.compile(regex)
    exact = [s for s in syms if s.name == regex or s.mangled == regex]
    if exact:
        return exact
    return [s for s in syms if rx.search(s.name) or rx.search(s.mangled)]


@dataclass
class Insn:
    addr: int
    text: str           # LLVM syntax, "mnemonic operands", comments stripped
    target: int = None  # direct branch target, if any
    ext: bool = False   # branch with a relocation (.o): target outside, unknown


BRANCH_RE = re.compile(r"^(b|b\.\w+|bc\.\w+|cbn?z|tbn?z|bl)\s")


def disassemble(path, start, end, mattr=None):
    cmd = [OBJDUMP, "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
           f"--stop-address={end:#x}"]
    if mattr:
        cmd.append(f"--mattr={mattr}")
    cmd.append(path)
    insns = []
    for line in run(cmd).splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{8}\s+)?(\S.*)$", line)
        if not m:
            continue
        addr, text = int(m.group(1), 16), m.group(2)
        text = re.sub(r"\s*//.*$", "", text).strip()
        text = re.sub(r"\s+", " ", text, count=1)
        tgt = None
        if BRANCH_RE.match(text + " "):
            t = re.search(r"\b0x([0-9a-f]+)(?:\s*<[^>]*>)?\s*$", text)
            if t:
                tgt = int(t.group(1), 16)
                text = text[:t.start()].rstrip()
        insns.append(Insn(addr, text, tgt))
    return insns


def loops(insns):
    """Backward branches inside [first, last]: list of (head, branch_addr) with
    innermost flag; body = [head, branch_addr] inclusive."""
    if not insns:
        return []
    lo, hi = insns[0].addr, insns[-1].addr
    found = []
    for ins in insns:
        if ins.target is not None and lo <= ins.target <= ins.addr and \
                ins.text.split()[0] != "bl":
            found.append((ins.target, ins.addr))
    found = sorted(set(found))
    res = []
    for head, br in found:
        inner = not any((h, b) != (head, br) and head <= h and b <= br for h, b in found)
        res.append((head, br, inner))
    return res


def hot_loop(insns):
    """Default loop choice: the innermost loop with the most instructions."""
    cands = [(br - head, head, br) for head, br, inner in loops(insns) if inner]
    if not cands:
        return None
    _, head, br = max(cands)
    return head, br
