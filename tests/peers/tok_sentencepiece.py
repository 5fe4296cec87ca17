#!/usr/bin/python3
"""tok_sentencepiece.py MODEL STRINGS.json: Google's SentencePiece (Debian python3-sentencepiece)
encodes each string of a JSON list with MODEL (Llama 2's tokenizer.model); one line of ids per
string. The independent implementation test_tok_peer compares pelab's tokenizer.bin with."""
import json
import sys

import sentencepiece as spm

sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f:
    strings = json.load(f)
for s in strings:
    print(" ".join(str(i) for i in sp.encode(s)))
