#!/usr/bin/env python3
"""Turn the golden manifests (tests/data/cases/*.json) into the line-based plan that
kai_compat.c and qgemm_layer1.c read on stdin: one line per (case, kernel), the kernel named
without its matmul_clamp_<f32|f16|bf16>_ prefix (the family says which); the last field is the
2-bit family's look-up table ("a,b,c,d") or "-" (none: the default). Deterministic (sorted cases).

Usage: kai_plan.py DATA_DIR [--corrupt]   (--corrupt flips one expected dst bit and one expected getter value, to prove the
test can fail)."""
import glob, json, os, sys

data = os.path.abspath(sys.argv[1])
corrupt = "--corrupt" in sys.argv[2:]
FAM = ("qai8dxp_qsi4cxp", "qai8dxp_qsi4c32p", "qsi8d32p_qsi4c32p", "qai8dxp_qsi8cxp", "f16_qai8dxp_qsi4cxp",
       "f16_qai8dxp_qsi8cxp", "bf16_qai8dxp_qsi4cxp", "bf16_qai8dxp_qsi4c32p", "qsi8d32p_qai4c32p",
       "f16_qsi8d32p_qai4c32p", "qai8dxp_qsu2cxp")


def path(rel):
    return os.path.join(data, rel) if rel else "-"


lines = []
for f in sorted(glob.glob(os.path.join(data, "cases", "*.json"))):
    c = json.load(open(f))
    if c["family"] not in FAM:
        continue
    inp = c["inputs"]
    rhs = inp["rhs"]
    zp = c["rhs_packer"]["params"].get("rhs_zero_point", 8)
    lut = c["rhs_packer"]["params"].get("lut")  # the 2-bit family's look-up table, or None (default: "-")
    lut = ",".join(str(v) for v in lut) if lut else "-"
    sc = inp["rhs_scale"]
    zero = inp.get("rhs_zero")  # the per-block offsets of the asymmetric formats (qai4c32p), else "-"
    prefix = "matmul_clamp_%s_" % c.get("dst_dtype", "f32")  # f32, f16 or bf16 output
    for p in c["packings"]:
        for kk in p["kernels"]:
            fields = [
                c["family"], kk["name"][len(prefix):],
                c["m"], c["n"], c["k"], c["bl"] or 0,
                rhs["layout"].split("_")[0], zp, path(rhs["file"]), rhs["row_stride_bytes"],
                path(sc["file"]) if sc else "-", sc.get("row_stride_bytes", 0) if sc else 0,
                path(zero["file"]) if zero else "-",
                path(inp["bias"]["file"]) if inp["bias"] else "-",
                path(inp["lhs"]["file"]),
                p["mr"], p["nr"], p["kr"], p["sr"],
                path(p["lhs_packed"]["file"]), p["lhs_packed"]["size"], p["lhs_packed"]["offset_at_m_idx_eq_mr"],
                path(p["rhs_packed"]["file"]), p["rhs_packed"]["size"], p["rhs_packed"]["tile_stride"],
                p["rhs_packed"]["offset_at_n_idx_eq_nr"],
                kk["m_step"], kk["n_step"], int(kk["requires_m_eq_1"]),
                kk["lhs_packed_offset_at_m_step"], kk["rhs_packed_offset_at_n_step"],
                kk["dst_offset_at_steps"], kk["dst_size"],
                path(kk["dst"]["none"]), path(kk["dst"]["tight"]),
                c["clamp"]["none"]["min"]["bits"], c["clamp"]["none"]["max"]["bits"],
                c["clamp"]["tight"]["min"]["bits"], c["clamp"]["tight"]["max"]["bits"],
                (len(lines) + 1 if corrupt and len(lines) < 2 else 0), kk["isa"], lut,
            ]
            lines.append(" ".join(str(x) for x in fields))
sys.stdout.write("\n".join(lines) + "\n")
