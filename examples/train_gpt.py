#!/usr/bin/env python3
"""Tiny decoder-only GPT trained on synthetic tokens: the example run that ships
with trainscope.

It writes what a real training job leaves behind, in the formats trainscope
reads:
  * stdout: Megatron-LM style iteration lines (`iteration N/ M | ... |`)
  * metrics.jsonl: one JSON object per iteration (step time split, loss, ...)
  * config.json: the model configuration, Hugging Face style (gpt2 family)
  * traces/: Kineto Chrome traces from torch.profiler with a schedule
    (skip_first / wait / warmup / active) via tensorboard_trace_handler

Everything is deterministic except timings: fixed seed, synthetic tokens,
one torch thread. Usage:
  python3 train_gpt.py --out run --iters 60
"""
import argparse
import contextlib
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
        q = q.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        k = k.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        v = v.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.wte = nn.Embedding(cfg["vocab_size"], cfg["n_embd"])
        self.wpe = nn.Embedding(cfg["n_positions"], cfg["n_embd"])
        self.blocks = nn.ModuleList(
            Block(cfg["n_embd"], cfg["n_head"], cfg["n_inner"])
            for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(cfg["n_embd"])
        self.head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
        self.head.weight = self.wte.weight  # tied, as gpt2
        self.apply(self._init)

    @staticmethod
    def _init(m):
        # GPT-2 initialisation: N(0, 0.02) weights, zero biases
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


class Tokens(torch.utils.data.Dataset):
    """Synthetic token windows from a fixed-seed generator."""

    def __init__(self, n, seq, vocab, seed, stall_every=0, stall_ms=0.0, batch=1):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.randint(0, vocab, (n, seq + 1), generator=g)
        # an injected data-loader stall: sleep while fetching the first
        # sample of every stall_every-th iteration's batch
        self.stall_period = stall_every * batch
        self.stall_first = (stall_every - 1) * batch
        self.stall_s = stall_ms / 1e3

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, i):
        if self.stall_period and i % self.stall_period == self.stall_first:
            time.sleep(self.stall_s)
        row = self.data[i]
        return row[:-1], row[1:]


def lr_at(it, args):
    if it <= args.lr_warmup:
        return args.lr * it / args.lr_warmup
    frac = (it - args.lr_warmup) / max(1, args.iters - args.lr_warmup)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * frac))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--min-lr", type=float, default=6e-5)
    ap.add_argument("--lr-warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--amp", choices=["none", "bf16"], default="none",
                    help="bf16 autocast for forward and loss (GPU runs)")
    ap.add_argument("--prof-skip-first", type=int, default=20)
    ap.add_argument("--prof-wait", type=int, default=0)
    ap.add_argument("--prof-warmup", type=int, default=2)
    ap.add_argument("--prof-active", type=int, default=4)
    ap.add_argument("--no-profile", action="store_true", help="run without the profiler")
    ap.add_argument("--stall-every", type=int, default=0,
                    help="inject a data-loader stall every N iterations (N, 2N, ...)")
    ap.add_argument("--stall-ms", type=float, default=300.0, help="length of each stall")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    os.makedirs(os.path.join(args.out, "traces"), exist_ok=True)

    cfg = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": args.vocab,
        "n_positions": args.seq,
        "n_embd": args.hidden,
        "n_layer": args.layers,
        "n_head": args.heads,
        "n_inner": 4 * args.hidden,
        "activation_function": "gelu",
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16" if args.amp == "bf16" else "float32",
    }
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")

    model = GPT(cfg).to(dev)
    nparams = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    data = Tokens(args.iters * args.batch, args.seq, args.vocab, args.seed,
                  args.stall_every, args.stall_ms, args.batch)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=False)
    it_data = iter(loader)

    print("> building GPT model (layers=%d hidden=%d heads=%d seq=%d vocab=%d) ..."
          % (args.layers, args.hidden, args.heads, args.seq, args.vocab))
    print(" > number of parameters on (tensor, pipeline) model parallel rank (0, 0) "
          "[global rank 0]: %d" % nparams)
    print("[before the start of training step] datetime: %s"
          % time.strftime("%Y-%m-%d %H:%M:%S"))
    print("training ...", flush=True)

    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    sched = torch.profiler.schedule(skip_first=args.prof_skip_first, wait=args.prof_wait,
                                    warmup=args.prof_warmup, active=args.prof_active,
                                    repeat=1)
    handler = torch.profiler.tensorboard_trace_handler(
        os.path.join(args.out, "traces"), worker_name="rank0", use_gzip=True)
    metrics = open(os.path.join(args.out, "metrics.jsonl"), "w")
    consumed = 0
    last_log = time.perf_counter()
    if args.no_profile:
        prof_ctx = contextlib.nullcontext()
    else:
        prof_ctx = torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=handler,
                                          record_shapes=True, profile_memory=True,
                                          with_flops=True)
    with prof_ctx as prof:
        for it in range(1, args.iters + 1):
            if prof is not None:
                prof.step()  # top of the iteration, as Megatron-LM does
            t0 = time.perf_counter()
            x, y = next(it_data)
            x, y = x.to(dev), y.to(dev)
            t1 = time.perf_counter()
            for g in opt.param_groups:
                g["lr"] = lr_at(it, args)
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16,
                                enabled=args.amp == "bf16"):
                logits = model(x)
                loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), y.view(-1))
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t2 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t3 = time.perf_counter()
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
            opt.step()
            lv = loss.item()
            t4 = time.perf_counter()
            consumed += args.batch
            now = time.perf_counter()
            elapsed_ms = (now - last_log) * 1e3
            last_log = now
            step_ms = (t4 - t0) * 1e3
            rec = {
                "iteration": it, "rank": 0, "step_ms": round(step_ms, 3),
                "data_ms": round((t1 - t0) * 1e3, 3), "fwd_ms": round((t2 - t1) * 1e3, 3),
                "bwd_ms": round((t3 - t2) * 1e3, 3), "opt_ms": round((t4 - t3) * 1e3, 3),
                "lm_loss": lv, "grad_norm": gnorm, "lr": lr_at(it, args),
                "tokens": args.batch * args.seq,
                "tokens_per_s": round(args.batch * args.seq / (step_ms / 1e3), 1),
                "logged_elapsed_ms": round(elapsed_ms, 3),
            }
            if args.stall_every:
                rec["stall_injected"] = it % args.stall_every == 0
            metrics.write(json.dumps(rec) + "\n")
            metrics.flush()
            print(" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                  "(ms): %.1f | learning rate: %.6E | global batch size: %5d | lm loss: %.6E "
                  "| loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: %3d "
                  "| number of nan iterations: %3d |"
                  % (it, args.iters, consumed, elapsed_ms, lr_at(it, args), args.batch, lv,
                     gnorm, 0, 0), flush=True)
    metrics.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
