#!/usr/bin/env python3
"""The peer of `pelab train` for the speed comparison (not a test): PyTorch on the CPU training
the same network with the same optimizer on random tokens, and its tokens per second.

Shape (pelab's defaults, what assets/models ships): pre-norm decoder, 3 layers, width 64,
4 heads of 16 with RoPE (interleaved pairs, base 10000) on q and k, GELU (tanh) MLP of 256,
untied output, vocabulary 299, context 64, batch 16. AdamW (betas 0.9/0.95, eps 1e-8, weight
decay 0.1 on matrices and embeddings only), global-norm clipping at 1, lr 3e-3.

usage: train_torch.py [--threads N] [--steps N] [--warmup N]
prints one line: "torch <version> threads N: T tokens/s (U per CPU second, S steps, X CPUs busy)"
--threads N also sets OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS to N before
torch loads, so that a 1-thread run really keeps to one core.
"""
import argparse
import math
import os
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    return ap.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None:
    # torch.set_num_threads(1) alone leaves OpenBLAS its own pool: measured here, a "1 thread"
    # run kept a second core busy (about 2 CPU seconds per wall second). OpenBLAS and OpenMP read
    # these when the library loads, so they are set before torch is imported.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit(f"train_torch.py: needs PyTorch in {sys.executable} (Debian: apt-get install "
             "python3-torch python3-numpy, then run /usr/bin/python3; for a fair peer also "
             "libopenblas0-pthread, or torch uses the reference BLAS)")

V, C, H, L, T, FF, B = 299, 64, 4, 3, 64, 256, 16
HD = C // H


def rope_tables(t, hd, base=10000.0):
    inv = base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(t, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def rope(x, cos, sin):  # x (B, H, T, hd), interleaved pairs (2k, 2k+1)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fcproj = nn.Linear(C, FF), nn.Linear(FF, C)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (z.view(b, t, H, HD).transpose(1, 2) for z in (q, k, v))
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(HD)
        att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, C)
        x = x + self.proj(y)
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.lnf = nn.LayerNorm(C)
        self.out = nn.Linear(C, V, bias=False)
        cos, sin = rope_tables(T, HD)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx):
        x = self.wte(idx)
        for blk in self.blocks:
            x = blk(x, self.cos, self.sin, self.mask)
        return self.out(self.lnf(x))


def main():
    a = ARGS
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    m = Model()
    decay = [p for p in m.parameters() if p.dim() == 2]
    rest = [p for p in m.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": rest, "weight_decay": 0.0}],
                            lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
    data = torch.randint(0, V, (B * 64 + T + 1,))

    def step():
        off = torch.randint(0, data.numel() - T - 1, (B,))
        x = torch.stack([data[o:o + T] for o in off])
        y = torch.stack([data[o + 1:o + T + 1] for o in off])
        loss = F.cross_entropy(m(x).view(-1, V), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    for _ in range(a.warmup):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        step()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    tokens = a.steps * B * T
    # CPU seconds per wall second: about 1 when the run kept to one core
    print(f"torch {torch.__version__} threads {a.threads}: {tokens / dt:.0f} tokens/s "
          f"({tokens / cpu:.0f} per CPU second, {a.steps} steps, {cpu / dt:.2f} CPUs busy)")


if __name__ == "__main__":
    main()
