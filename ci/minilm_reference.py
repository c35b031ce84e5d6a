#!/usr/bin/env python3
"""Independent reference for examples/minilm.rs: sentence embeddings of all-MiniLM-L6-v2 computed
with PyTorch (Hugging Face transformers), once; the output is committed as test data.

  python3 ci/minilm_reference.py [--model DIR] [--out tests/data/minilm/reference_f32.bin]

Needs `pip install torch==2.5.1 transformers==4.46.3` (not part of CI: the committed file is
what CI compares against) and the model cache of ci/fetch_minilm.sh. For each line of
tests/data/minilm/sentences.txt: tokenize (the model's tokenizer.json, special tokens added),
run the BERT encoder in f32, mean-pool the last hidden states over the tokens, L2-normalize
(the model's sentence-transformers modules: Transformer, Pooling(mean), Normalize). Writes
`sentences x 384` little-endian f32 and prints the versions used.
"""
import argparse
import os
import struct

import torch
import transformers
from transformers import AutoModel, PreTrainedTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.environ.get("QGEMM_MINILM_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "qgemm", "all-MiniLM-L6-v2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=DEFAULT_DIR)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "minilm", "reference_f32.bin"))
    a = ap.parse_args()
    sentences = [l.strip() for l in open(os.path.join(ROOT, "tests", "data", "minilm", "sentences.txt")) if l.strip()]
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(a.model, "tokenizer.json"))
    model = AutoModel.from_pretrained(a.model, torch_dtype=torch.float32).eval()
    torch.set_num_threads(1)
    out = []
    with torch.no_grad():
        for s in sentences:
            enc = tok(s, return_tensors="pt")
            h = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                      token_type_ids=torch.zeros_like(enc["input_ids"])).last_hidden_state[0]
            mask = enc["attention_mask"][0].unsqueeze(-1).float()
            e = (h * mask).sum(0) / mask.sum()
            e = torch.nn.functional.normalize(e, p=2, dim=0)
            out.append(e)
    with open(a.out, "wb") as f:
        for e in out:
            f.write(struct.pack(f"<{e.numel()}f", *e.tolist()))
    print(f"{len(out)} sentences x {out[0].numel()} -> {a.out}")
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
