#!/usr/bin/env python3
"""Turn the golden manifests (tests/data/cases/*.json) into the line-based plan that
kai_compat.c and qgemm_layer1.c read on stdin: one line per (case, kernel), the kernel named
without its matmul_clamp_<f32|f16|bf16>_ prefix (the family says which); the last field is the
2-bit family's look-up table ("a,b,c,d") or "-" (none: the default). Deterministic (sorted cases).

Usage: kai_plan.py DATA_DIR [--corrupt] [--float]   (--corrupt flips one expected dst bit and one expected getter
value, to prove the test can fail; --float writes the lines of the float families FLOAT_FAM instead, in their own
format: see float_line in kai_compat.c)."""
import glob, json, os, sys

data = os.path.abspath(sys.argv[1])
corrupt = "--corrupt" in sys.argv[2:]
float_only = "--float" in sys.argv[2:]
FAM = ("qai8dxp_qsi4cxp", "qai8dxp_qsi4c32p", "qsi8d32p_qsi4c32p", "qai8dxp_qsi8cxp", "f16_qai8dxp_qsi4cxp",
       "f16_qai8dxp_qsi8cxp", "bf16_qai8dxp_qsi4cxp", "bf16_qai8dxp_qsi4c32p", "qsi8d32p_qai4c32p",
       "f16_qsi8d32p_qai4c32p", "qai8dxp_qsu2cxp")
# The float families (docs/kernels.md, §Float families): unpacked-LHS kernels and per-packing packers, a line format of their own.
FLOAT_FAM = ("f32_f32_f32p", "f16_f16_f16p", "f32_bf16p_bf16p", "f16_bf16p_bf16p")


def path(rel):
    return os.path.join(data, rel) if rel else "-"


def opt(v):
    return "-" if v is None else v


def unspecified(c, p):
    """The packed-RHS byte ranges that are not part of the format (docs/formats.md, §Float formats), as
    "a:b,c:d" (or "-"): the ranges the packer did not write (bytes_not_written), and the
    padding-channel values of the last tile of the f16 NxK packer."""
    rp = p["rhs_packed"]
    out = [(a, b) for a, b in rp["bytes_not_written"]]
    n, k, nr = c["n"], c["k"], p["nr"]
    if p["rhs_packer"]["name"] == "rhs_pack_nxk_x16p32x1bx16_x16_x16_neon" and n % nr:
        tile = n // nr * rp["tile_stride"]
        for j in range(k):
            row = tile + nr * 2 + j * nr * 2
            out.append((row + (n % nr) * 2, row + nr * 2))
    return ",".join("%d:%d" % r for r in out) or "-"


def float_lines():
    lines = []
    for f in sorted(glob.glob(os.path.join(data, "cases", "*.json"))):
        c = json.load(open(f))
        if c["family"] not in FLOAT_FAM:
            continue
        inp = c["inputs"]
        prefix = "matmul_clamp_%s_" % c["dst_dtype"]
        for p in c["packings"]:
            lp, lpk, rp = p["lhs_packer"], p["lhs_packed"], p["rhs_packed"]
            for kk in p["kernels"]:
                lhs_off = kk.get("lhs_offset_at_m_step", kk.get("lhs_packed_offset_at_m_step"))
                fields = [
                    c["family"], kk["name"][len(prefix):], c["m"], c["n"], c["k"],
                    inp["rhs"]["layout"], path(inp["rhs"]["file"]), inp["rhs"]["row_stride_bytes"],
                    path(inp["bias"]["file"]) if inp["bias"] else "-",
                    path(inp["lhs"]["file"]), inp["lhs"]["row_stride_bytes"],
                    lp["name"] if lp else "-", path(lpk["file"]) if lpk else "-", lpk["size"] if lpk else 0,
                    opt(lpk["offset_at_m_idx_eq_mr"]) if lpk else "-",
                    p["rhs_packer"]["name"], path(rp["file"]), rp["size"], rp["tile_stride"],
                    rp["offset_at_n_idx_eq_nr"], opt(rp["stride_function"]), unspecified(c, p),
                    opt(p["mr"]), p["nr"], p["kr"], p["sr"],
                    kk["m_step"], kk["n_step"], int(kk["requires_m_eq_1"]), opt(lhs_off),
                    kk["rhs_packed_offset_at_n_step"], kk["dst_offset_at_steps"], kk["dst_size"],
                    path(kk["dst"]["none"]), path(kk["dst"]["tight"]),
                    c["clamp"]["none"]["min"]["bits"], c["clamp"]["none"]["max"]["bits"],
                    c["clamp"]["tight"]["min"]["bits"], c["clamp"]["tight"]["max"]["bits"],
                    (len(lines) + 1 if corrupt and len(lines) < 2 else 0), kk["isa"],
                ]
                lines.append(" ".join(str(x) for x in fields))
    return lines


if float_only:
    sys.stdout.write("\n".join(float_lines()) + "\n")
    sys.exit(0)

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
