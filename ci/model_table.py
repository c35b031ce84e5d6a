#!/usr/bin/env python3
"""docs/model.md's measured tables and digests, from runs of examples/minilm.rs on the host
(`cargo make model-table`, checked by `cargo make model-table-check`).

  ci/model_table.py [--gptq] [--quant-table] [--from MODE=FILE ...]   run (or read), record, write
  ci/model_table.py --check [--run]                                   check

Writing: runs `cargo run --release --features std --example minilm -- [MODE]` on the host (the
scalar tier, which has every tier's bits) for the default mode and, with --gptq / --quant-table,
for those modes too (about 4, 18 and 65 minutes on the project's 2 busy cores), keeps each run's
standard output as a record under tests/data/minilm/runs/ (default.txt, gptq.txt,
quant-table.txt; a calibrated record also holds the SHA-256 of the calibration inputs,
CALIBRATION_INPUTS) and writes docs/model.md's generated sections from the records, between
their markers:

  minilm-results      the variants' cosines (default run)
  minilm-digests      every variant's embedding digest, over the 66 sentences and over the first 8
                      (what tests/minilm.rs checks)
  minilm-gptq         the calibrated int4-per-block table and its digests (--gptq run)
  minilm-quant-table  every method in every format and its digests (--quant-table run)

`--from MODE=FILE` takes a saved output of the example instead of running it (MODE: default,
gptq, quant-table); with no run and no --from the sections are rewritten from the records.

--check (cheap, no model run; `cargo make ci`) fails, with a diff, when a section is not what the
records give; when a record contradicts another (the default run's int4-per-block and int8
digests are the calibrated runs' "search" rows: equal bits or one record is stale; the --gptq rows
of the quant table); when a calibrated record's calibration inputs are not the files of today;
and when docs/model.md names a digest outside the generated sections (it would be unchecked).
tests/minilm.rs (`cargo make test-minilm`, in ci) checks the other half: that the model computes
the digests the docs state, over its 8 sentences. --check --run also runs the default mode
(about 6 minutes with the build) and fails when any of its digests or cosines differ from the
record. A missing quant-table record is reported as `model-table-check: SKIPPED: ...`.
"""
import argparse
import difflib
import hashlib
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_section import update  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "model.md"
RUNS = ROOT / "tests" / "data" / "minilm" / "runs"
MODES = {"default": [], "gptq": ["--gptq"], "quant-table": ["--quant-table"]}
# Files whose change moves the calibrated tables without moving the default run (which
# tests/minilm.rs checks): a calibrated record is stale when one of them differs.
CALIBRATION_INPUTS = ["src/quant/gptq.rs", "examples/support/calibrate.rs", "tests/data/minilm/calibration.txt"]
TEST_SENTENCES = 8  # tests/minilm.rs
# The default run's variants as docs/model.md names them: label and family.
LABELS = {
    "f32": ("f32", "-"),
    "int4 per-block bl=32 (qai8dxp_qsi4c32p)": ("int4, bf16 scale per block of 32", "`qai8dxp_qsi4c32p`"),
    "int4 per-channel (qai8dxp_qsi4cxp)": ("int4, f32 scale per channel", "`qai8dxp_qsi4cxp`"),
    "int8 per-channel (qai8dxp_qsi8cxp)": ("int8, f32 scale per channel", "`qai8dxp_qsi8cxp`"),
    "int4 per-block, V and FFN up int8 per-channel": ("int4 per block, but V and FFN up int8 per channel", "both"),
    "f16 activations, int8 per-channel (f16_qai8dxp_qsi8cxp)":
        ("f16 activations and outputs, int8 per channel", "`f16_qai8dxp_qsi8cxp`"),
    "bf16 activations, int4 per-block bl=32 (bf16_qai8dxp_qsi4c32p)":
        ("bf16 activations and outputs, int4 per block of 32", "`bf16_qai8dxp_qsi4c32p`"),
    "int4 asymmetric per-block bl=32 (qsi8d32p_qai4c32p)":
        ("int4 per block of 32, asymmetric (f32 scale and offset)", "`qsi8d32p_qai4c32p`"),
}
# The calibrated runs' rows that are the default run's variants (same quantization, same bits).
SAME_BITS = {
    ("int4 per block of 32, bf16 scales (`qsi4c32p`)", "search"): "int4 per-block bl=32 (qai8dxp_qsi4c32p)",
    ("int8 per channel (`qsi8cxp`)", "search"): "int8 per-channel (qai8dxp_qsi8cxp)",
}
DIGEST = re.compile(r"^  ([0-9a-f]{16})  (.+)$")


def marker(name, mode):
    begin = (f"<!-- {name}:begin (ci/model_table.py writes this from tests/data/minilm/runs/{mode}.txt; "
             "do not edit: cargo make model-table) -->")
    return begin, f"<!-- {name}:end -->"


SECTIONS = {"minilm-results": "default", "minilm-digests": "default", "minilm-gptq": "gptq",
            "minilm-quant-table": "quant-table"}


def fingerprint():
    h = hashlib.sha256()
    for rel in CALIBRATION_INPUTS:
        h.update(rel.encode() + b"\0" + (ROOT / rel).read_bytes() + b"\0")
    return h.hexdigest()


def parse(text, mode):
    """The figures of one run's output: {"pytorch": line, "variants": {name: cells},
    "digests": {name: hex}, "digests8": {name: hex}, "calib_line", "rows": [(format, method,
    cells)], "cal_digests": {(format, method): hex}, "fingerprint"}."""
    run = {"variants": {}, "digests": {}, "digests8": {}, "rows": [], "cal_digests": {}, "fingerprint": None}
    block = None
    for line in text.splitlines():
        if line.startswith("# calibration inputs sha256 "):
            run["fingerprint"] = line.split()[-1]
        elif line.startswith("f32 Rust vs PyTorch"):
            run["pytorch"] = line
        elif line.startswith("Calibration: "):
            run["calib_line"] = line
        elif line.startswith("embedding digests of the first"):
            block = "digests8"
        elif line.startswith("embedding digests"):
            block = "digests"
        elif line.startswith("Digests of the evaluation embeddings"):
            block = "cal"
        elif m := DIGEST.match(line):
            if block == "cal":
                fmt, method = m.group(2).rsplit(", ", 1)
                run["cal_digests"][(fmt, method)] = m.group(1)
            elif block:
                run[block][m.group(2)] = m.group(1)
        elif line.startswith("| ") and not line.startswith(("| linear layers", "| format", "|-")):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 9 and cells[0] in LABELS:
                run["variants"][cells[0]] = cells[1:]
            elif len(cells) == 8:
                run["rows"].append((cells[0], cells[1], cells[2:]))
        elif not line.strip():
            block = None if block != "cal" else block
    need = ["variants", "digests", "digests8"] if mode == "default" else ["rows", "cal_digests"]
    for key in need:
        if not run[key]:
            sys.exit(f"model-table: the {mode} output has no {key} (not examples/minilm.rs's output?)")
    if mode == "default":
        unknown = set(run["variants"]) - set(LABELS)
        if unknown or set(run["variants"]) != set(LABELS):
            sys.exit(f"model-table: variants differ from ci/model_table.py's LABELS: {sorted(set(run['variants']) ^ set(LABELS))}")
    return run


def record_text(stdout, mode):
    """What a record keeps: the example's standard output, with a header (and, for a calibrated
    run, the fingerprint of its calibration inputs)."""
    head = [f"# examples/minilm.rs {' '.join(MODES[mode]) or '(default mode)'}: standard output of "
            "`cargo run --release --features std --example minilm` on the host (ci/model_table.py)"]
    if mode != "default":
        head.append(f"# calibration inputs sha256 {fingerprint()}")
    # The model's path is the machine's (its cache), not part of the result.
    stdout = re.sub(r"^(all-MiniLM-L6-v2 from ).*?(: \d+ sentences)", r"\1<model cache>\2", stdout, flags=re.M)
    return "\n".join(head) + "\n" + stdout.rstrip("\n") + "\n"


def run_example(mode):
    cmd = ["cargo", "run", "--release", "--features", "std", "--example", "minilm", "--", *MODES[mode]]
    print(f"model-table: {' '.join(cmd)}", flush=True)
    t0 = time.monotonic()
    out = subprocess.run(cmd, cwd=ROOT, check=True, text=True, stdout=subprocess.PIPE).stdout
    print(f"model-table: {mode} run took {time.monotonic() - t0:.0f} s", flush=True)
    return out


def strip_time(text):
    """A saved output may carry `time`'s lines and the stderr AWQ notes: dropped."""
    keep = []
    for line in text.splitlines():
        if re.match(r"^(real|user|sys)\s+\d", line) or line.startswith("  AWQ exponents"):
            continue
        keep.append(line)
    return "\n".join(keep).strip("\n") + "\n"


def render(name, runs):
    mode = SECTIONS[name]
    begin, end = marker(name, mode)
    r = runs[mode]
    if name == "minilm-results":
        rows = ["| linear layers | family | cosine mean | cosine min | top-1 = f32's |", "|---|---|--:|--:|--:|"]
        for v, cells in r["variants"].items():
            label, family = LABELS[v]
            rows.append(f"| {label} | {family} | {cells[0]} | {cells[1]} | {cells[4]} |")
        pt = re.match(r"f32 Rust vs PyTorch \(transformers, f32\): (cosine mean \S+, min \S+)", r["pytorch"])
        body = [f"f32 Rust encoder vs PyTorch: {pt.group(1)} (target >= 0.9999).", "", *rows]
    elif name == "minilm-digests":
        n = sentence_count(r)
        body = [f"| variant (as the example prints it) | digest, {n} sentences | digest, first {TEST_SENTENCES} sentences |",
                "|---|---|---|"]
        for v, d in r["digests"].items():
            body.append(f"| {v} | `{d}` | `{r['digests8'][v]}` |")
    else:
        body = [r.get("calib_line", "").strip(), "",
                "| weight format | method | eval mean | eval min | eval top-1 | calib mean | calib min | calib top-1 |",
                "|---|---|--:|--:|--:|--:|--:|--:|"]
        for fmt, method, cells in r["rows"]:
            body.append(f"| {fmt} | {method} | {' | '.join(cells)} |")
        body += ["", "Digests of the 66 evaluation embeddings (x86-64 host, scalar tier):", ""]
        for (fmt, method), d in r["cal_digests"].items():
            body.append(f"* `{d}` {fmt}, {method}")
    return "\n".join([begin, "", *body, "", end])


def sentence_count(r):
    cells = next(iter(r["variants"].values()))
    return int(cells[4].split("/")[1].split()[0])


def load_records():
    runs = {}
    for mode in MODES:
        path = RUNS / f"{mode}.txt"
        if path.exists():
            runs[mode] = parse(path.read_text(), mode)
    return runs


def consistency(runs):
    """Contradictions between the records (each means one of them is stale)."""
    problems = []
    d = runs.get("default")
    for mode in ("gptq", "quant-table"):
        r = runs.get(mode)
        if not r:
            continue
        if r["fingerprint"] != fingerprint():
            problems.append(f"{mode}.txt was generated from other calibration inputs ({', '.join(CALIBRATION_INPUTS)}): "
                            f"run cargo make model-table --{mode}")
        if d:
            for key, variant in SAME_BITS.items():
                if key in r["cal_digests"] and r["cal_digests"][key] != d["digests"][variant]:
                    problems.append(f"{mode}.txt's {key[0]}, {key[1]} digest {r['cal_digests'][key]} is not the "
                                    f"default run's {variant} digest {d['digests'][variant]}: the same bits, so one "
                                    "record is stale")
    g, q = runs.get("gptq"), runs.get("quant-table")
    if g and q:
        qrows = {(f, m): c for f, m, c in q["rows"]}
        for f, m, c in g["rows"]:
            if qrows.get((f, m)) != c or q["cal_digests"].get((f, m)) != g["cal_digests"][(f, m)]:
                problems.append(f"gptq.txt and quant-table.txt differ on {f}, {m}: one record is stale")
    return problems


def digests_outside_sections(text):
    """16-digit hex digests in backticks that no generated section holds."""
    for name, mode in SECTIONS.items():
        begin, end = marker(name, mode)
        if begin in text and end in text:
            text = text[:text.index(begin)] + text[text.index(end) + len(end):]
    return sorted(set(re.findall(r"`([0-9a-f]{16})`", text)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gptq", action="store_true", help="also run --gptq (about 18 minutes)")
    ap.add_argument("--quant-table", action="store_true", help="also run --quant-table (about 65 minutes)")
    ap.add_argument("--from", dest="saved", action="append", default=[], metavar="MODE=FILE",
                    help="a saved output of the example instead of a run")
    ap.add_argument("--no-run", action="store_true", help="rewrite the sections from the records only")
    ap.add_argument("--check", action="store_true", help="fail when docs/model.md is stale (no model run)")
    ap.add_argument("--run", action="store_true", help="with --check: also run the default mode and compare")
    a = ap.parse_args()

    if a.check:
        check(a.run)
        return
    saved = dict(s.split("=", 1) for s in a.saved)
    for mode in saved:
        if mode not in MODES:
            sys.exit(f"model-table: unknown mode {mode} (default, gptq, quant-table)")
    todo = [m for m in MODES if m in saved or (not a.no_run and (m == "default" or getattr(a, m.replace("-", "_"))))]
    RUNS.mkdir(parents=True, exist_ok=True)
    for mode in todo:
        out = strip_time(Path(saved[mode]).read_text()) if mode in saved else run_example(mode)
        parse(out, mode)
        (RUNS / f"{mode}.txt").write_text(record_text(out, mode))
        print(f"model-table: recorded {RUNS.relative_to(ROOT)}/{mode}.txt")
    runs = load_records()
    for p in consistency(runs):
        print(f"model-table: warning: {p}", file=sys.stderr)
    for name, mode in SECTIONS.items():
        if mode in runs:
            begin, end = marker(name, mode)
            update(DOC, begin, end, render(name, runs), False, "model-table", f"{name} section")


def check(run_default):
    runs = load_records()
    text = DOC.read_text()
    failed = []
    for name, mode in SECTIONS.items():
        begin, end = marker(name, mode)
        if mode not in runs:
            continue
        if begin not in text or end not in text:
            failed.append(f"docs/model.md has no {name} section")
            continue
        have = text[text.index(begin):text.index(end) + len(end)]
        want = render(name, runs)
        if have != want:
            sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                       "docs/model.md", f"generated from {mode}.txt"))
            failed.append(f"the {name} section is not what tests/data/minilm/runs/{mode}.txt gives")
    failed += consistency(runs)
    stray = digests_outside_sections(text)
    if stray:
        failed.append(f"docs/model.md names digests outside the generated sections (unchecked): {', '.join(stray)}")
    if run_default:
        fresh = parse(run_example("default"), "default")
        d = runs.get("default")
        for key in ("digests", "digests8", "variants"):
            for v, val in fresh[key].items():
                got = val if key != "variants" else val[:2] + val[4:5]
                want = (d[key].get(v) if key != "variants" else d[key].get(v, [None] * 5)[:2] + d[key][v][4:5]) if d else None
                if got != want:
                    failed.append(f"the example now prints {v}: {got} ({key}), the record says {want}")
    for f in failed:
        print(f"model-table-check: {f}", file=sys.stderr)
    if failed:
        sys.exit("model-table-check: docs/model.md is stale: run cargo make model-table (--gptq / --quant-table)")
    missing = [m for m in MODES if m not in runs]
    if missing:
        print(f"model-table-check: SKIPPED: no record of the {', '.join(missing)} run (tests/data/minilm/runs): "
              f"docs/model.md's {', '.join('minilm-' + m for m in missing)} section is not generated yet; "
              f"cargo make model-table --{missing[0]} generates it")
    else:
        print("model-table-check: docs/model.md current")


if __name__ == "__main__":
    main()
