#!/usr/bin/env python3
"""A real GPT-style training loop that reports its steps to houston, for bench/gpu-check.sh.

Two modes:
  --mode mfu   one process: counts the model's FLOPs per step with PyTorch's own FLOP counter
               (torch.utils.flop_counter), trains --steps steps, reports each step through
               python/houston_step.py and writes a Megatron-LM style log (--log) for
               `houston tail`; prints one JSON line with what it measured.
  --mode rank  one rank of a data-parallel job (torch.distributed, gloo): each step is the
               forward, backward and optimizer on the GPU, then an all-reduce that waits for
               every rank, as gradient synchronisation does. Reports dur and comm (the wait),
               so houston compares compute times. --slow-rank R --slow-from S --slow-frac F:
               from step S rank R also runs forward and backward on F of its batch again (a
               slower GPU; F above 1 repeats whole batches). Writes step,rank,seconds,dur,comm
               rows to --csv.

Runs on a CPU too (tiny model, no FLOP counter before torch 2.1), which is how the script is
tested where there is no GPU. The model has no biases, tied embeddings and no position
embedding, so PyTorch's FLOP count and PaLM's 6N + 12*L*H*Q*T formula count the same matrix
products (PaLM, Chowdhery et al. 2022, appendix B).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import houston_step  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # torch < 2.0 (Debian 12's), CPU tests only
            s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            a = s.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, layers, heads):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.emb.weight  # tied: one matrix, one product per token
        nn.init.normal_(self.emb.weight, std=0.02)

    def forward(self, idx, targets):
        x = self.emb(idx)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("mfu", "rank"), required=True)
    p.add_argument("--job", required=True)
    p.add_argument("--socket", required=True, help="the agent's step socket")
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--ckpt-every", type=int, default=100, help="the step a checkpoint is named after, reported as ckpt")
    p.add_argument("--log", help="mfu: Megatron-LM style log to write")
    p.add_argument("--csv", help="rank: step,rank,seconds,dur,comm rows")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world", type=int, default=1)
    p.add_argument("--master-port", type=int, default=29533)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-from", type=int, default=0)
    p.add_argument("--slow-frac", type=float, default=0.25)
    return p.parse_args()


def flops_per_token(n_params, a):
    """PaLM appendix B, as `houston mfu` computes it: 6N + 12*L*H*Q*T."""
    return 6 * n_params + 12 * a.layers * a.heads * (a.hidden // a.heads) * a.seq


def main():
    a = parse()
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(1234 + a.rank)
    model = GPT(a.vocab, a.hidden, a.layers, a.heads).to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **({"fused": True} if cuda else {}))
    idx = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
    x, y = idx[:, :-1].contiguous(), idx[:, 1:].contiguous()
    tokens = a.batch * a.seq
    fpt = flops_per_token(n_params, a)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else torch.autocast("cpu", enabled=False)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def fwd_bwd(xb, yb):
        with amp:
            loss = model(xb, yb)
        loss.backward()
        return loss

    rep = houston_step.open()
    rep.set_socket(a.socket)
    rep.set_identity(job=a.job, rank=a.rank, local_rank=a.rank, world=a.world)
    if cuda:
        rep.set_gpu(torch.cuda.current_device())

    counted = None
    if a.mode == "mfu":
        try:
            from torch.utils.flop_counter import FlopCounterMode

            with FlopCounterMode(display=False) as fc:
                fwd_bwd(x, y)
            counted = fc.get_total_flops()
            opt.zero_grad(set_to_none=True)
        except ImportError:  # torch < 2.1
            pass

    dist = None
    if a.mode == "rank":
        import torch.distributed as dist

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(a.master_port)
        dist.init_process_group("gloo", rank=a.rank, world_size=a.world)
        grad_sum = torch.zeros(1024)  # stands for the gradients' all-reduce

    log = open(a.log, "w", buffering=1) if a.log else None
    out = open(a.csv, "w", buffering=1) if a.csv else None
    if out:
        out.write("step,rank,seconds,dur,comm\n")
    times = []
    slow_n = int(round(a.batch * (a.slow_frac % 1)))  # and this many sequences
    for step in range(a.steps):
        t0 = time.perf_counter()
        loss = fwd_bwd(x, y)
        if a.rank == a.slow_rank and step + 1 >= a.slow_from:
            for _ in range(int(a.slow_frac)):  # whole batches again
                fwd_bwd(x, y)
            if slow_n:
                fwd_bwd(x[:slow_n], y[:slow_n])
        sync()
        t1 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        t2 = time.perf_counter()
        comm = 0.0
        if dist is not None:
            dist.all_reduce(grad_sum)
            comm = time.perf_counter() - t2
        dur = time.perf_counter() - t0
        done = step + 1
        ckpt = done // a.ckpt_every * a.ckpt_every
        rep.report(done, dur, tokens=tokens, optimizer_s=t2 - t1,
                   comm_s=comm if dist is not None else None, checkpoint=ckpt, flops_per_token=fpt)
        if out:
            out.write(f"{done},{a.rank},{dur - comm:.6f},{dur:.6f},{comm:.6f}\n")
        if step >= a.warmup:
            times.append(dur)
        if log:
            tflops = tokens * fpt / dur / 1e12
            log.write(f" iteration {done:8d}/{a.steps:8d} | consumed samples: {done * a.batch:12d} | "
                      f"elapsed time per iteration (ms): {dur * 1e3:.1f} | learning rate: 1.000E-04 | "
                      f"global batch size: {a.batch:5d} | lm loss: {loss.item():.6E} | "
                      f"actual seqlen: {a.seq:5d} | TFLOPs: {tflops:.6g} |\n")
    if dist is not None:
        dist.destroy_process_group()
    total = sum(times)
    result = {
        "mode": a.mode, "job": a.job, "rank": a.rank, "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": torch.__version__, "params": n_params, "layers": a.layers, "heads": a.heads,
        "head_dim": a.hidden // a.heads, "hidden": a.hidden, "seq": a.seq, "batch": a.batch,
        "tokens_per_step": tokens, "timed_steps": len(times), "step_s_median": statistics.median(times) if times else None,
        "tokens_per_s": tokens * len(times) / total if total > 0 else None,
        "flops_per_token_formula": fpt,
        "flops_per_token_counted": counted / tokens if counted else None,
        "dropped_reports": rep.dropped, "last_error": str(rep.last_error) if rep.last_error else None,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
