#!/usr/bin/env python3
"""A stand-in for a synchronous data-parallel training job: every rank reports each step
through houston's Python client (python/houston_step.py) to its node's agent socket.

Each step, rank r computes for `step_time * 0.9 * (1 + slow[r])` seconds; everyone then waits
for the slowest rank in the all-reduce (reported as comm time), so the wall time of a step is
the slowest rank's compute plus 10% of step_time. A rank's compute is a forward pass (a third
of it), a backward pass (two thirds less the optimizer's tenth) and an optimizer step,
reported as fwd/bwd/opt; a rank's extra time is all in its backward pass. The control file is
re-read every step:
    slow RANK FRACTION   rank RANK computes FRACTION longer (0.3 = 30% slower)
    hang NODE            ranks on NODE stop reporting (a hang); the others keep waiting
    save SECONDS         after this step, a checkpoint save of SECONDS that rank 0 announces
                         (Reporter.pause); done once per distinct line
    stop                 the job ends
Checkpoints are taken every --ckpt-every steps; each report carries the last one.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("HN_SOURCE_DIR", "."), "python"))
import houston_step  # noqa: E402


def read_control(path, saves=None):
    slow, hung, stop = {}, set(), False
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == "slow":
                    slow[int(w[1])] = float(w[2])
                elif len(w) == 2 and w[0] == "hang":
                    hung.add(w[1])
                elif len(w) == 2 and w[0] == "save" and saves is not None:
                    saves.append(float(w[1]))
                elif w == ["stop"]:
                    stop = True
    except FileNotFoundError:
        pass
    return slow, hung, stop


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", required=True)
    ap.add_argument("--node", action="append", required=True, help="NAME=SOCKET, in rank order")
    ap.add_argument("--ranks-per-node", type=int, default=4)
    ap.add_argument("--step-time", type=float, default=0.1)
    ap.add_argument("--ckpt-every", type=int, default=20)
    ap.add_argument("--tflops", type=float, default=400.0)
    ap.add_argument("--control", required=True)
    args = ap.parse_args()

    nodes = [n.split("=", 1) for n in args.node]
    world = len(nodes) * args.ranks_per_node
    reporters = []
    for r in range(world):
        name, sock = nodes[r // args.ranks_per_node]
        rep = houston_step.Reporter()
        rep.set_identity(job=args.job, rank=r, local_rank=r % args.ranks_per_node, world=world)
        rep.set_socket(sock)
        reporters.append((name, rep))

    step, ckpt, saved = 0, -1, 0
    while True:
        saves = []
        slow, hung, stop = read_control(args.control, saves)
        if stop:
            return 0
        if len(saves) > saved:  # a new save line: announce it, then save
            reporters[0][1].pause(step, "checkpoint")
            time.sleep(saves[saved])
            saved += 1
            ckpt = step
        step += 1
        compute = [args.step_time * 0.9 * (1 + slow.get(r, 0.0)) for r in range(world)]
        wall = max(compute) + 0.1 * args.step_time
        time.sleep(wall)
        for r, (name, rep) in enumerate(reporters):
            if name in hung:
                continue
            base = args.step_time * 0.9
            rep.report(step, wall, comm_s=wall - compute[r], checkpoint=ckpt,
                       forward_s=base / 3, backward_s=compute[r] - base / 3 - base / 10,
                       optimizer_s=base / 10,
                       tflops=args.tflops / (1 + max(slow.values(), default=0.0)))
        if hung:
            # The ranks that still run wait in the next all-reduce: no more progress.
            while read_control(args.control)[1] and not read_control(args.control)[2]:
                time.sleep(0.1)
            return 0
        if step % args.ckpt_every == 0:
            ckpt = step


if __name__ == "__main__":
    sys.exit(main())
