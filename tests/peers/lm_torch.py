#!/usr/bin/env python3
"""The peer of `pelab bench --only real` (not a test): the same forwards in PyTorch on the CPU,
random weights of the same shapes, prompt processing and per-token decoding with a KV cache.

Shapes (as app/cmd/bench_lm.c writes them):
  gpt2   GPT-2 small: width 768, 12 layers, 12 heads, vocab 50257, learned positions, LayerNorm,
         tanh GELU MLP of 3072, tied head (124M)
  llama  width 768, 12 layers, 12 heads over 4 kv heads, SwiGLU 2048, vocab 32000, RMSNorm,
         RoPE (rotate_half, base 10000), untied head (125M)
  stories  stories260K's shape (llama2.c): width 64, 5 layers, 8 heads over 4 kv heads, SwiGLU
         172, vocab 512, interleaved RoPE, tied head (0.26M; random weights: the speed is the
         same)
The token ids are pelab's: (i * 7919 + 13) mod vocab.

usage: lm_torch.py [--threads N] [--prompt 128] [--decode 32] [--runs 3] [gpt2|llama|stories ...]
prints per model: "torch <version> <model> threads N: prompt P tokens/s, decode D tokens/s"
--serve (one model): builds it, prints "ready torch <version> blas <the BLAS it loaded>", then for every line "run" on
standard input times one prompt and its decoding and prints "<prompt seconds> <decode seconds>";
`pelab bench --only real` drives it so that its runs and pelab's take turns (a machine whose
speed drifts slows both alike).
--threads N also sets OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS before torch
loads (see train_torch.py for why).
"""
import argparse
import math
import os
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--prompt", type=int, default=128)
ap.add_argument("--decode", type=int, default=32)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--serve", action="store_true")
ap.add_argument("models", nargs="*", default=["gpt2", "llama"])
ARGS = ap.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

try:
    import torch
except ImportError:
    sys.exit("lm_torch.py: needs torch (Debian: python3-torch)")

torch.set_num_threads(ARGS.threads)
torch.manual_seed(0)


def attend(q, k, v, n0):
    """softmax(q k^T / sqrt(hd)) v over the cache, causal for the new tokens at n0.. (written
    out: torch 1.13, Debian 12's, has no scaled_dot_product_attention)."""
    T, n = q.shape[1], k.shape[1]
    s = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    if T > 1:
        mask = torch.arange(n)[None, :] > (n0 + torch.arange(T))[:, None]
        s = s.masked_fill(mask, float("-inf"))
    return torch.softmax(s, -1) @ v


def rnd(*shape):
    return (torch.rand(*shape) - 0.5) * 0.1


class GPT2:
    def __init__(s, D=768, L=12, H=12, V=50257, P=1024):
        s.D, s.L, s.H, s.hd, s.V = D, L, H, D // H, V
        s.wte, s.wpe = rnd(V, D), rnd(P, D)
        s.layers = [dict(l1w=torch.ones(D), l1b=rnd(D), aw=rnd(D, 3 * D), ab=rnd(3 * D),
                         pw=rnd(D, D), pb=rnd(D), l2w=torch.ones(D), l2b=rnd(D),
                         fw=rnd(D, 4 * D), fb=rnd(4 * D), mw=rnd(4 * D, D), mb=rnd(D))
                    for _ in range(L)]
        s.lfw, s.lfb = torch.ones(D), rnd(D)

    def reset(s):
        s.k = [None] * s.L
        s.v = [None] * s.L
        s.n = 0

    def forward(s, ids):
        T = len(ids)
        x = s.wte[ids] + s.wpe[s.n:s.n + T]
        for i, w in enumerate(s.layers):
            h = torch.nn.functional.layer_norm(x, (s.D,), w["l1w"], w["l1b"], 1e-5)
            q, k, v = (h @ w["aw"] + w["ab"]).split(s.D, dim=-1)
            q, k, v = (t.view(T, s.H, s.hd).transpose(0, 1) for t in (q, k, v))
            s.k[i] = k if s.k[i] is None else torch.cat([s.k[i], k], 1)
            s.v[i] = v if s.v[i] is None else torch.cat([s.v[i], v], 1)
            a = attend(q, s.k[i], s.v[i], s.n)
            x = x + a.transpose(0, 1).reshape(T, s.D) @ w["pw"] + w["pb"]
            h = torch.nn.functional.layer_norm(x, (s.D,), w["l2w"], w["l2b"], 1e-5)
            x = x + torch.nn.functional.gelu(h @ w["fw"] + w["fb"], approximate="tanh") @ w["mw"] + w["mb"]
        s.n += T
        h = torch.nn.functional.layer_norm(x[-1:], (s.D,), s.lfw, s.lfb, 1e-5)
        return h @ s.wte.T


class Llama:
    def __init__(s, D=768, L=12, H=12, KV=4, F=2048, V=32000, tied=False, interleaved=False):
        s.D, s.L, s.H, s.KV, s.hd, s.V = D, L, H, KV, D // H, V
        s.emb, s.nf = rnd(V, D), torch.ones(D)
        s.head = s.emb if tied else rnd(V, D)
        s.interleaved = interleaved
        kv = KV * s.hd
        s.layers = [dict(n1=torch.ones(D), n2=torch.ones(D), q=rnd(D, D), k=rnd(kv, D),
                         v=rnd(kv, D), o=rnd(D, D), g=rnd(F, D), u=rnd(F, D), d=rnd(D, F))
                    for _ in range(L)]
        s.inv = 1.0 / (10000 ** (torch.arange(0, s.hd, 2).float() / s.hd))

    def reset(s):
        s.k = [None] * s.L
        s.v = [None] * s.L
        s.n = 0

    @staticmethod
    def rms(x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))

    def rope(s, x, pos):
        f = pos[:, None].float() * s.inv[None, :]
        if s.interleaved:  # llama2.c: pairs (0, 1), (2, 3), ...
            c, sn = f.cos().repeat_interleave(2, -1), f.sin().repeat_interleave(2, -1)
            x1, x2 = x[..., 0::2], x[..., 1::2]
            return x * c + torch.stack([-x2, x1], -1).flatten(-2) * sn
        c, sn = torch.cat([f.cos(), f.cos()], -1), torch.cat([f.sin(), f.sin()], -1)
        x1, x2 = x[..., : s.hd // 2], x[..., s.hd // 2:]
        return x * c + torch.cat([-x2, x1], -1) * sn

    def forward(s, ids):
        T = len(ids)
        pos = torch.arange(s.n, s.n + T)
        x = s.emb[ids]
        for i, w in enumerate(s.layers):
            h = s.rms(x, w["n1"])
            q = s.rope((h @ w["q"].T).view(T, s.H, s.hd).transpose(0, 1), pos)
            k = s.rope((h @ w["k"].T).view(T, s.KV, s.hd).transpose(0, 1), pos)
            v = (h @ w["v"].T).view(T, s.KV, s.hd).transpose(0, 1)
            s.k[i] = k if s.k[i] is None else torch.cat([s.k[i], k], 1)
            s.v[i] = v if s.v[i] is None else torch.cat([s.v[i], v], 1)
            r = s.H // s.KV
            kk, vv = s.k[i].repeat_interleave(r, 0), s.v[i].repeat_interleave(r, 0)
            a = attend(q, kk, vv, s.n)
            x = x + a.transpose(0, 1).reshape(T, s.D) @ w["o"].T
            h = s.rms(x, w["n2"])
            x = x + (torch.nn.functional.silu(h @ w["g"].T) * (h @ w["u"].T)) @ w["d"].T
        s.n += T
        return s.rms(x[-1:], s.nf) @ s.head.T


def blas_name():
    """The BLAS library this process loaded and, for OpenBLAS, its kernel (torch's own
    __config__ says BLAS_INFO=generic for Debian's build, which takes whatever libblas.so.3 the
    alternatives point at)."""
    import ctypes
    import re
    try:
        with open("/proc/self/maps") as f:
            libs = sorted(set(re.findall(r"/\S*lib\w*blas\S*\.so\S*", f.read())))
    except OSError:
        return "BLAS unknown"
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            cfg = lib.openblas_get_config().decode().split()
            return f"{' '.join(cfg[:2])} {lib.openblas_get_corename().decode()}"
        except (OSError, AttributeError):
            continue
    return os.path.basename(libs[0]) if libs else "BLAS unknown"


def ids_for(m):
    return (torch.arange(ARGS.prompt + ARGS.decode) * 7919 + 13) % m.V


def once(m, ids):
    """One prompt, then its decoding token by token: (prompt seconds, decode seconds)."""
    with torch.no_grad():
        m.reset()
        t0 = time.perf_counter()
        m.forward(ids[: ARGS.prompt])
        t1 = time.perf_counter()
        for i in range(ARGS.decode):
            m.forward(ids[ARGS.prompt + i: ARGS.prompt + i + 1])
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def make(name):
    if name == "gpt2":
        return GPT2()
    if name == "llama":
        return Llama()
    if name == "stories":
        return Llama(D=64, L=5, H=8, KV=4, F=172, V=512, tied=True, interleaved=True)
    sys.exit(f"lm_torch.py: unknown model {name} (gpt2, llama, stories)")


def bench(name, m):
    ids = ids_for(m)
    bp = bd = float("inf")
    for _ in range(ARGS.runs):
        p, d = once(m, ids)
        bp, bd = min(bp, p), min(bd, d)
    print(f"torch {torch.__version__} {name} threads {ARGS.threads}: prompt "
          f"{ARGS.prompt / bp:.0f} tokens/s, decode {ARGS.decode / bd:.1f} tokens/s", flush=True)


if ARGS.serve:
    if len(ARGS.models) != 1:
        sys.exit("lm_torch.py: --serve takes one model")
    m = make(ARGS.models[0])
    ids = ids_for(m)
    print(f"ready torch {torch.__version__} blas {blas_name()}", flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        p, d = once(m, ids)
        print(f"{p:.9f} {d:.9f}", flush=True)
else:
    for name in ARGS.models:
        bench(name, make(name))
