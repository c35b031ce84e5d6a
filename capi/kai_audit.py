#!/usr/bin/env python3
"""Which parameters of each layer-2 `kai_*` function KleidiAI's own C implementation never reads.

  python3 capi/kai_audit.py KLEIDIAI_GIT_DIR [REV]     (REV: default HEAD; qgemm follows 495f652)

For every `kai_get_*` / `kai_run_*` function declared under capi/include/kai, reads KleidiAI's
source of it (`git --git-dir KLEIDIAI_GIT_DIR show REV:kai/ukernels/matmul/...c`) and classifies
each parameter:

  used     named in the body outside `KAI_ASSERT*` / `KAI_ASSUME*` / `KAI_UNUSED`, other than as
           a plain argument of a function of the same file (then: used iff that callee uses it);
  assert   named only inside those asserts: a precondition (undefined behaviour in a release
           build, an abort in a debug one), which layer 2 checks (the error hook);
  ignored  neither: KleidiAI computes the same result for every value, so layer 2 ignores it too.

Prints one line per function with an ignored or assert-only parameter. The outcome is the table
"Parameters KleidiAI does not read" of docs/c-api.md. A text scan, not a C parser: check a new
finding in the source by hand. Reads KleidiAI's files; copies nothing of them.
"""

import os
import re
import subprocess
import sys

ASSERT = re.compile(r"\b(KAI_ASSERT\w*|KAI_ASSUME\w*|KAI_UNUSED)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def show(git, rev, path):
    return subprocess.run(["git", "--git-dir", git, "show", f"{rev}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def strip_comments(s):
    return re.sub(r"//[^\n]*", " ", re.sub(r"/\*.*?\*/", " ", s, flags=re.S))


def closing(s, i, open_="(", close=")"):
    """Index of the bracket closing the one at `i`."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_:
            depth += 1
        elif s[j] == close:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced")


def split_args(s):
    """The comma-separated items of an argument or parameter list, nested brackets kept."""
    args, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    return args + [cur]


def functions(src):
    """name -> (parameter names, body) of every function defined in `src`."""
    out = {}
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", src):
        if m.group(1) in KEYWORDS:
            continue
        p0 = m.end() - 1
        try:
            p1 = closing(src, p0)
        except ValueError:
            continue
        rest = src[p1 + 1:]
        b0 = p1 + 1 + len(rest) - len(rest.lstrip())
        if not src.startswith("{", b0) or not re.search(r"[\w*]\s*$", src[:m.start()]):
            continue  # a call, a declaration or a macro use, not a definition
        params = []
        for p in split_args(src[p0 + 1:p1]):
            if p.strip() not in ("", "void"):
                params.append(re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p).group(1))
        out[m.group(1)] = (params, src[b0 + 1:closing(src, b0, "{", "}")])
    return out


def without_asserts(body):
    """`body` with every assert and `KAI_UNUSED` removed, and the text of the asserts."""
    kept, asserts, i = "", "", 0
    for m in ASSERT.finditer(body):
        if m.start() < i:
            continue
        j = closing(body, m.end() - 1)
        kept += body[i:m.start()] + " "
        if m.group(1) != "KAI_UNUSED":
            asserts += body[m.start():j + 1] + "\n"
        i = j + 1
    return kept + body[i:], asserts


def classify(fns, name, param, seen=()):
    """'used', 'assert' or 'ignored' for parameter `param` of function `name`."""
    body, asserts = without_asserts(fns[name][1])
    word = re.compile(rf"\b{re.escape(param)}\b")
    used = False

    def scan(text):
        """`text` with every call of a function of the file replaced, deciding `used` for the
        arguments that are `param` itself by the callee's use of that parameter."""
        nonlocal used
        pos, out = 0, ""
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", text):
            callee = m.group(1)
            if m.start() < pos or callee not in fns or callee == name or (callee, param) in seen:
                continue
            j = closing(text, m.end() - 1)
            for arg, cparam in zip(split_args(text[m.end():j]), fns[callee][0]):
                if arg.strip() == param:
                    used |= classify(fns, callee, cparam, seen + ((callee, param),)) == "used"
                elif word.search(arg) and word.search(scan(arg)):
                    used = True  # an expression of the parameter
            out += text[pos:m.start()] + " CALL "
            pos = j + 1
        return out + text[pos:]

    rest = scan(body)  # before reading `used`: `scan` sets it
    used = used or bool(word.search(rest))
    return "used" if used else "assert" if word.search(asserts) else "ignored"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    git, rev = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
    headers = sorted(os.path.relpath(os.path.join(d, f), inc) for d, _, fs in os.walk(os.path.join(inc, "kai"))
                     for f in fs if f.endswith(".h") and "interface" not in f and f != "kai_common.h")
    for h in headers:
        c = h[:-2] + ".c"
        fns = functions(strip_comments(show(git, rev, c)))
        with open(os.path.join(inc, h)) as f:
            exported = sorted(set(re.findall(r"\b(kai_(?:get|run)_\w+)\s*\(", f.read())))
        for name in exported:
            if name not in fns:
                print(f"{name}: not defined in {c}")
                continue
            kinds = {p: classify(fns, name, p) for p in fns[name][0]}
            ignored = [p for p, k in kinds.items() if k == "ignored"]
            asserted = [p for p, k in kinds.items() if k == "assert"]
            if ignored or asserted:
                print(f"{name}: ignored={','.join(ignored) or '-'} assert_only={','.join(asserted) or '-'}")


if __name__ == "__main__":
    main()
