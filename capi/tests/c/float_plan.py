#!/usr/bin/env python3
"""Turn the float families' golden manifests (tests/data/cases/<float family>__*.json) into the
line-based plan qgemm_float.c reads on stdin: one line per (case, packing, KleidiAI kernel), with the
RHS and LHS formats named as qgemm names them and the byte ranges of the packed RHS that are not part
of the format (the manifest's `bytes_not_written`, and the padding-column values of the last tile of
KleidiAI's f16 NxK packer: docs/formats.md, §Float formats; tests/float.rs `unspecified`).
Deterministic (sorted cases).

Usage: float_plan.py DATA_DIR"""
import glob, json, os, sys

data = os.path.abspath(sys.argv[1])
FAMILIES = ("f32_f32_f32p", "f16_f16_f16p", "f32_bf16p_bf16p", "f16_bf16p_bf16p")
RHS = {  # KleidiAI RHS packer -> (qgemm format, tile width, value bytes, bias bytes)
    "rhs_pack_kxn_x32p16x1b_x32_x32_neon": ("f32p16", 16, 4),
    "rhs_pack_nxk_x32p16x1bx32_x32_x32_neon": ("f32p16", 16, 4),
    "rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon": ("f32p8", 8, 4),
    "rhs_pack_kxn_x16p32x1b_x16_x16_neon": ("f16p32", 32, 2),
    "rhs_pack_nxk_x16p32x1bx16_x16_x16_neon": ("f16p32", 32, 2),
    "rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon": ("f16p16", 16, 2),
    "rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon": ("bf16p12_b32", 12, 2),
    "rhs_pack_kxn_bf16p12x4biasf32_f16_neon": ("bf16p12_b32", 12, 2),
    "rhs_pack_kxn_bf16p12x4biasf16_f16_neon": ("bf16p12_b16", 12, 2),
}


def path(rel):
    return os.path.join(data, rel) if rel else "-"


lines = []
for f in sorted(glob.glob(os.path.join(data, "cases", "*.json"))):
    c = json.load(open(f))
    if c["family"] not in FAMILIES:
        continue
    inp = c["inputs"]
    m, n, k = c["m"], c["n"], c["k"]
    for p in c["packings"]:
        packer = p["rhs_packer"]["name"]
        fmt, nr, vsize = RHS[packer]
        rp = p["rhs_packed"]
        skip = [tuple(r) for r in rp["bytes_not_written"]]
        if packer == "rhs_pack_nxk_x16p32x1bx16_x16_x16_neon" and n % nr:
            tile = (n // nr) * rp["tile_stride"]
            for j in range(k):
                row = tile + nr * 2 + j * nr * 2
                skip.append((row + (n % nr) * 2, row + nr * 2))
        skip = ",".join("%d-%d" % r for r in skip) or "-"
        lp = p["lhs_packed"]
        lhs_fmt = "none"
        if p["lhs_packer"]:
            lhs_fmt = "bf16p1x4" if "bf16p1x4" in p["lhs_packer"]["name"] else "bf16p8x4"
        for kk in p["kernels"]:
            cl = c["clamp"]
            fields = [
                c["family"], m, n, k,
                inp["rhs"]["layout"], inp["rhs"]["dtype"], path(inp["rhs"]["file"]), inp["rhs"]["row_stride_bytes"],
                inp["bias"]["dtype"] if inp["bias"] else "-", path(inp["bias"]["file"]) if inp["bias"] else "-",
                inp["lhs"]["dtype"], path(inp["lhs"]["file"]), inp["lhs"]["row_stride_bytes"],
                fmt, path(rp["file"]), rp["size"], rp["tile_stride"], rp["offset_at_n_idx_eq_nr"], skip,
                lhs_fmt, path(lp["file"]) if lp else "-", lp["size"] if lp else 0,
                lp["offset_at_m_idx_eq_mr"] if lp and lp["offset_at_m_idx_eq_mr"] is not None else 0,
                kk["name"], int("1x36" in kk["name"]), kk["m_step"], kk["n_step"], kk["dst_offset_at_steps"],
                path(kk["dst"]["none"]), path(kk["dst"]["tight"]), path(kk["dst"]["relu"]),
                cl["none"]["min"]["bits"], cl["none"]["max"]["bits"],
                cl["tight"]["min"]["bits"], cl["tight"]["max"]["bits"],
                cl["relu"]["min"]["bits"], cl["relu"]["max"]["bits"],
            ]
            lines.append(" ".join(str(x) for x in fields))
sys.stdout.write("\n".join(lines) + "\n")
