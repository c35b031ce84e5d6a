#!/usr/bin/env python3
"""Code size and worst-case stack of every C entry point, from the bare-metal C library
(`cargo make footprint`, checked by `cargo make footprint-check`).

  ci/footprint.py [--check] [--archive PATH]

Reads capi/target/aarch64-unknown-none/release/libqgemm_capi.a (`cargo make capi-build`): the
release build a firmware links, every object of it (qgemm, core, compiler_builtins). For each
exported `kai_*` and `qgemm_*` function it finds every function the entry point can reach and
writes two figures into docs/porting.md, between the `footprint:begin`/`footprint:end` markers:

- `.text`: the bytes of all reachable functions. This is what linking only that entry point
  costs in code with `--gc-sections` (read-only data such as lookup tables is not counted).
  Shared code (e.g. the packers' common loop, `memcpy`) counts for every entry point that uses it,
  so the figures do not add up.
- stack: the deepest chain of frames. A frame is every stack-pointer decrement of the function
  (`sub sp, sp, #n` and pre-indexed `stp`/`str ... [sp, #-n]!`), added up: an upper bound.

Reachability follows direct calls and tail calls (`bl`/`b` with a relocation) and references to
functions through data (a kernel descriptor in `.rodata` holding function pointers, reached by an
`adrp` in the caller). An indirect call (`blr`/`br` on a register) may call any function whose
address the entry point's reachable code or data takes: the stack bound assumes the deepest of
them. A function that lowers the stack pointer by a register amount (dynamic allocation) or a
call cycle makes the bound unknown; the script fails then, since the library has neither.

--check fails when docs/porting.md differs from what the script would write (the figures depend
on rustc: they are generated with the toolchain CI installs, Rust 1.95).

Both modes also fail when a `kai_run_*` entry point reaches formatting code through the
library's own code: a core::fmt function called or referenced by a function of qgemm or
qgemm-capi, or a formatting impl of theirs (`<qgemm::Error as Display>::fmt`). The hook builds
its messages without core::fmt (capi/src/hook.rs); what core's own panic functions reference
for their messages (`panic_bounds_check`'s `<u64 as Display>::fmt`, never run: the bare-metal
panic handler prints a fixed line) is not the library's and stays.
"""
import argparse
import re
import subprocess
import sys
from collections import defaultdict, deque
from pathlib import Path

from doc_section import update

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "capi" / "target" / "aarch64-unknown-none" / "release" / "libqgemm_capi.a"
DOC = ROOT / "docs" / "porting.md"
BEGIN = "<!-- footprint:begin (ci/footprint.py writes this table; do not edit) -->"
END = "<!-- footprint:end -->"
OBJDUMP = "aarch64-linux-gnu-objdump"
READELF = "aarch64-linux-gnu-readelf"
CXXFILT = "aarch64-linux-gnu-c++filt"  # binutils 2.40 demangles both Rust manglings

OBJECT = re.compile(r"^(\S+\.o):\s+file format")
FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$")
RELOC = re.compile(r"^\s+([0-9a-f]+): (R_AARCH64_\w+)\s+(\S+?)(?:\+0x([0-9a-f]+))?$")
SECTION = re.compile(r"^Disassembly of section (\S+):$")
REL_HEADER = re.compile(r"^RELOCATION RECORDS FOR \[(\S+)\]:$")
REL_LINE = re.compile(r"^([0-9a-f]+) (R_AARCH64_\w+)\s+(\S+?)(?:\+0x([0-9a-f]+))?$")
SP_SUB = re.compile(r"^sp, sp, #(0x[0-9a-f]+|\d+)(?:, lsl #(\d+))?$")
SP_SUB_REG = re.compile(r"^sp, sp, [xw]\d+")
PRE_INDEX = re.compile(r"\[sp, #-(\d+)\]!$")
HOOK = re.compile(r"qgemm_capi4hook7HANDLER")  # the C error hook's pointer (capi/src/hook.rs)


class Function:
    def __init__(self, obj, section, name):
        self.obj, self.section, self.name = obj, section, name
        self.size = 0
        self.frame = 0
        self.dynamic = False
        self.blr = False
        self.br = False
        self.hook_calls = 0
        # An `adr` (a code address in the function itself): LLVM's jump-table dispatch,
        # `adr` + `ldrb` + `add` + `br`; a tail call through a pointer has no `adr`.
        self.jump_table = False
        self.targets = set()  # (obj, symbol-or-section, addend) referenced by the code

    @property
    def indirect(self):
        """Calls through a register: `blr`, or a `br` that is no jump table's."""
        return self.blr or (self.br and not self.jump_table)


def parse_archive(archive):
    """Functions of every object (disassembly with relocations) and data sections' references."""
    # Data symbols (a kernel catalogue, a descriptor): which section holds each.
    syms = subprocess.run([OBJDUMP, "-t", str(archive)], check=True, text=True, capture_output=True).stdout
    data_symbol, function_symbol, hook, obj = {}, {}, set(), None
    for line in syms.splitlines():
        if m := OBJECT.match(line):
            obj = m.group(1)
        elif (cols := line.split()) and len(cols) >= 6 and (" O " in line or " F " in line):
            value, section, name = int(cols[0], 16), cols[-3], cols[-1]
            table = data_symbol if " O " in line else function_symbol
            where = (obj, section) if " O " in line else (obj, section, value)
            table[(obj, name)] = where
            if HOOK.search(name):
                hook.add((obj, section, value))
            if " g " in line:
                table.setdefault((None, name), where)
    if not hook:
        sys.exit("footprint: qgemm_capi::hook::HANDLER not found: how are hook calls recognized now?")
    dis = subprocess.run([OBJDUMP, "-dr", "--no-show-raw-insn", str(archive)], check=True, text=True,
                         capture_output=True).stdout
    functions, obj, section, fn = [], None, None, None
    for line in dis.splitlines():
        if m := OBJECT.match(line):
            obj, fn = m.group(1), None
        elif m := SECTION.match(line):
            section, fn = m.group(1), None
        elif m := FUNCTION.match(line):
            fn, recent = Function(obj, section, m.group(2)), deque(maxlen=4)
            fn.offset = int(m.group(1), 16)
            functions.append(fn)
        elif fn is None:
            continue
        elif m := RELOC.match(line):
            fn.targets.add((obj, m.group(3), int(m.group(4) or "0", 16)))
            recent.append((obj, m.group(3), int(m.group(4) or "0", 16)))
        elif m := INSN.match(line):
            fn.size = int(m.group(1), 16) + 4 - fn.offset  # to the end of its last instruction
            op, args = m.group(2), m.group(3).split("//")[0].strip()
            if op == "sub" and (s := SP_SUB.match(args)):
                fn.frame += int(s.group(1), 0) << int(s.group(2) or 0)
            elif op == "sub" and SP_SUB_REG.match(args):
                fn.dynamic = True
            elif op in ("stp", "str") and (s := PRE_INDEX.search(args)):
                fn.frame += int(s.group(1))
            elif op == "blr" and hook & set(recent):
                fn.hook_calls += 1  # the application's error hook, just loaded from HANDLER
            elif op == "blr":
                fn.blr = True
            elif op == "br":
                fn.br = True
            elif op == "adr":
                fn.jump_table = True
    rel = subprocess.run([OBJDUMP, "-r", str(archive)], check=True, text=True, capture_output=True).stdout
    data_refs, obj, section = defaultdict(set), None, None
    for line in rel.splitlines():
        if m := OBJECT.match(line):
            obj, section = m.group(1), None
        elif m := REL_HEADER.match(line):
            section = m.group(1)
        elif section and not section.startswith((".text", ".rela.text")) and (m := REL_LINE.match(line)):
            data_refs[(obj, section)].add((obj, m.group(3), int(m.group(4) or "0", 16)))
    return functions, data_refs, data_symbol, function_symbol


def exported(archive):
    """The library's global `kai_run_*` and `qgemm_*` functions: name -> the names of every
    function symbol at the same place (objdump labels an address with one of its aliases, e.g.
    bare metal's `qgemm_cpu_from_id_registers` shares `qgemm_cpu_detect`'s code)."""
    out = subprocess.run([READELF, "-sW", str(archive)], check=True, text=True, capture_output=True).stdout
    at, names, file = defaultdict(list), {}, None
    for line in out.splitlines():
        if line.startswith("File: "):
            file = line[6:]
        cols = line.split()
        if len(cols) >= 8 and cols[3] == "FUNC" and cols[6] != "UND":
            place = (file, cols[6], cols[1])
            at[place].append(cols[7])
            # The kernels, the packers and the qgemm_* API; not the kai_get_* size queries.
            if cols[4] == "GLOBAL" and cols[7].startswith(("kai_run_", "qgemm_")):
                names[cols[7]] = place
    return {name: at[place] for name, place in names.items()}


class Graph:
    def __init__(self, functions, data_refs, data_symbol, function_symbol):
        self.data_symbol, self.function_symbol = data_symbol, function_symbol
        self.global_fn = {}
        self.in_section = {}
        for f in functions:
            self.global_fn.setdefault(f.name, f)
            self.in_section[(f.obj, f.section, f.offset)] = f
        self.data_refs = data_refs
        names = sorted({f.name for f in functions})
        out = subprocess.run([CXXFILT], input="\n".join(names), check=True, text=True, capture_output=True).stdout
        # Without v0 mangling's crate disambiguators (`core[8277119056f6e37b]::fmt`).
        self.demangled = {n: re.sub(r"\[[0-9a-f]+\]", "", d) for n, d in zip(names, out.splitlines())}
        self.sections_of = defaultdict(set)
        for (obj, section) in data_refs:
            self.sections_of[obj].add(section)

    def is_fmt(self, fn):
        """Formatting code: core::fmt itself and the formatting trait methods of any type."""
        return "core::fmt" in self.demangled[fn.name]

    def plain(self, fn):
        """The demangled name without the hash."""
        return re.sub(r"::h[0-9a-f]{16}$", "", self.demangled[fn.name])

    def resolve(self, ref):
        """A referenced (object, symbol or section, addend): ('fn', Function) or ('data', key)."""
        obj, target, addend = ref
        if (obj, target, addend) in self.in_section:
            return ("fn", self.in_section[(obj, target, addend)])
        if target in self.global_fn and not target.startswith("."):
            return ("fn", self.global_fn[target])
        # An alias: objdump labels an address with one of its function symbols only.
        place = self.function_symbol.get((obj, target)) or self.function_symbol.get((None, target))
        if place:
            if place in self.in_section:
                return ("fn", self.in_section[place])
            if (place[0], place[1], place[2] + addend) in self.in_section:
                return ("fn", self.in_section[(place[0], place[1], place[2] + addend)])
        if (obj, target) in self.data_refs:
            return ("data", (obj, target))
        # A data symbol, local to this object or global in another: its section, whole.
        key = self.data_symbol.get((obj, target)) or self.data_symbol.get((None, target))
        if key in self.data_refs:
            return ("data", key)
        return (None, None)  # data without relocations (tables, strings), or an undefined symbol

    def edges(self, fn):
        """Direct callees and the functions `fn` takes the address of (through data too)."""
        direct, taken, seen, todo = set(), set(), set(), []
        for ref in fn.targets:
            kind, x = self.resolve(ref)
            if kind == "fn":
                direct.add(x)
            elif kind == "data":
                todo.append(x)
        while todo:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            for ref in self.data_refs[key]:
                kind, x = self.resolve(ref)
                if kind == "fn":
                    taken.add(x)
                elif kind == "data":
                    todo.append(x)
        return direct, taken


def footprint(graph, entry):
    """(.text bytes, worst-case stack bytes, bytes per extra turn of a call cycle or 0) of
    everything `entry` can reach."""
    edges = {}
    reach, todo = set(), [entry]
    while todo:
        f = todo.pop()
        if f in reach:
            continue
        reach.add(f)
        if f.dynamic:
            sys.exit(f"footprint: {f.name} lowers sp by a register amount: no stack bound")
        edges[f] = graph.edges(f)
        todo.extend(edges[f][0] | edges[f][1])
    # Whatever the reachable code or data takes the address of may be called indirectly, split
    # by kind: core::fmt calls formatting methods through fmt::Arguments and `dyn Write`, the
    # library calls kernels, tiles and packers through its descriptors, neither calls the other's.
    address_taken = set().union(*(edges[f][1] for f in reach))
    by_kind = {kind: {f for f in address_taken if graph.is_fmt(f) == kind} for kind in (True, False)}
    callees = {}
    for f in reach:
        callees[f] = set(edges[f][0]) | indirect_targets(graph, f, by_kind)
        callees[f].discard(f)  # a branch back into itself is a loop or a tail call to itself
    # Call cycles (core::fmt: a Display impl that formats its fields calls fmt::write again)
    # become one node whose frame is the sum of its members': one turn through every member.
    component = strongly_connected(reach, callees)
    frame, out = defaultdict(int), defaultdict(set)
    for f in reach:
        frame[component[f]] += f.frame
        out[component[f]] |= {component[c] for c in callees[f]} - {component[f]}
    cyclic = {component[f] for f in reach if any(component[c] == component[f] for c in callees[f])}
    memo = {}

    def depth(c):
        if c not in memo:
            memo[c] = frame[c] + max((depth(d) for d in out[c]), default=0)
        return memo[c]

    turn = max((frame[c] for c in cyclic), default=0)
    return sum(f.size for f in reach), depth(component[entry]), turn


def indirect_targets(graph, fn, address_taken):
    """What an indirect call in `fn` may call, of the address-taken functions by kind."""
    if not fn.indirect:
        return set()
    if graph.is_fmt(fn):
        return address_taken[True]
    # The tile drivers and the kernels' own entry points (`<tier>::..._unchecked`, the float
    # FMA driver) call tiles; only the dispatchers (`Kernel::run_unchecked`, the C layers) call
    # kernels' and packers' entry points.
    if tile_caller(graph, fn):
        return {f for f in address_taken[False] if not graph.plain(f).endswith("_unchecked")}
    return address_taken[False]


def tile_caller(graph, fn):
    """Whether `fn` is a tile driver or a kernel's entry point: its indirect calls go to tile
    functions, never to another kernel's entry."""
    name, plain = graph.demangled[fn.name], graph.plain(fn)
    if "::driver::" in name or "::fma::drive" in name:
        return True
    return plain.endswith("_unchecked") and not plain.endswith("run_unchecked")


def strongly_connected(nodes, succ):
    """Tarjan's algorithm, iterative: node -> id of its strongly connected component."""
    index, low, on_stack, stack, comp, counter = {}, {}, set(), [], {}, [0]
    for root in sorted(nodes, key=lambda f: (f.obj, f.name)):
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root], key=lambda f: (f.obj, f.name))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(succ[w], key=lambda f: (f.obj, f.name)))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp[w] = index[v]
                    if w is v:
                        break
    return comp


def library_code(graph, fn):
    """A function of qgemm or qgemm-capi (a C entry point, or a Rust path naming either crate),
    not of core or compiler_builtins (whose generic code instantiated in qgemm's objects, such
    as `<usize as Ord>::clamp`, names neither)."""
    name = graph.plain(fn)
    return "::" not in name or "qgemm" in name


def library_formatting(graph, entry):
    """`(caller, callee)` pairs by which `entry` reaches core::fmt through the library's code."""
    found, reach, todo = set(), set(), [entry]
    while todo:
        f = todo.pop()
        if f in reach:
            continue
        reach.add(f)
        direct, taken = graph.edges(f)
        for c in direct | taken:
            if graph.is_fmt(c) and (library_code(graph, f) or library_code(graph, c)):
                found.add((graph.plain(f), graph.plain(c)))
            todo.append(c)
    return found


def table(archive):
    graph = Graph(*parse_archive(archive))
    offenders = []
    for name, aliases in sorted(exported(archive).items()):
        fn = next((graph.global_fn[a] for a in aliases if a in graph.global_fn), None)
        if fn is not None and name.startswith("kai_run_"):
            offenders += [(name, caller, callee) for caller, callee in sorted(library_formatting(graph, fn))]
    if offenders:
        for name, caller, callee in offenders[:20]:
            print(f"footprint: {name} reaches core::fmt: {caller} -> {callee}", file=sys.stderr)
        sys.exit(f"footprint: {len({o[0] for o in offenders})} kai_run_* entry points format through "
                 "the library's code (the hook's messages must not use core::fmt)")
    rows = []
    for name, aliases in sorted(exported(archive).items()):
        fn = next((graph.global_fn[a] for a in aliases if a in graph.global_fn), None)
        if fn is None:
            sys.exit(f"footprint: no code found for {name}")
        text, stack, turn = footprint(graph, fn)
        rows.append(f"| `{name}` | {text} | {stack} | {turn or '-'} |")
    header = "| entry point | `.text` bytes reachable | worst-case stack bytes | + per extra cycle turn |"
    return "\n".join([BEGIN, "", header, "|---|---:|---:|---:|", *rows, "", END])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail when docs/porting.md is stale")
    ap.add_argument("--archive", type=Path, default=ARCHIVE)
    args = ap.parse_args()
    if not args.archive.exists():
        sys.exit(f"footprint: {args.archive} is missing: run cargo make capi-build")
    update(DOC, BEGIN, END, table(args.archive), args.check, "footprint", "code size and stack table")


if __name__ == "__main__":
    main()
