#!/usr/bin/env python3
"""houston's job paths against real training on a GPU, for bench/gpu-check.sh.

Starts a controller (scheduler dry-run) and an agent with the real NVML and its step socket,
then runs bench/gpu/train.py twice:
  1. MFU: one process trains a GPT-style model in bf16. PyTorch's FLOP counter counts the
     FLOPs of a step; `houston mfu`, the controller's job MFU (from the step reports) and the
     controller's MFU of the same run read back by `houston tail` from its Megatron-style log
     must agree with it.
  2. Data-parallel jobs of --ranks processes sharing the GPU (gloo all-reduce each step). From
     --slow-from rank 2 does extra forward/backward work (--slow-frac of its batch, then half
     that); houston must name it, and nothing before. With more ranks than GPUs the other
     ranks on its GPU run normally, so the finding must be straggler_shared_gpu and the node
     stay ready; with a GPU each, the node must become suspect. A third job has no slowdown:
     houston must name nobody. Each job's rows are also run through `houston straggler --csv` offline
     and written to --out as JOB-steps.csv (step,rank,seconds,dur,comm; seconds = dur - comm).
Hangs are not checked here: houston calls a job hung only while a scheduler lists it
(docs/jobs.md), and this machine has no Slurm; test_control_jobs.sh covers them.
Writes results.json (every figure and each check's verdict) and the step rows to --out; prints
one line per check. Exit status 0 when every check passed, 1 otherwise.
"""
import argparse
import csv
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train.py")


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--houston", required=True, help="command that runs houston (split like a shell)")
    p.add_argument("--out", required=True)
    p.add_argument("--work", default="/tmp/houston-gpu-jobs", help="scratch folder, emptied first")
    p.add_argument("--port", type=int, default=18480)
    p.add_argument("--agent-args", default="", help="extra agent arguments (a fake NVML in CPU tests)")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--small", action="store_true", help="tiny models, for a CPU")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--slow-from", type=int, default=400)
    p.add_argument("--slow-frac", type=float, default=0.5)
    p.add_argument("--after", type=int, default=300, help="steps run after --slow-from")
    p.add_argument("--healthy-steps", type=int, default=1500, help="steps of the job without a slowdown")
    p.add_argument("--deadline", type=float, default=150, help="seconds one data-parallel job may run")
    return p.parse_args()


class Run:
    def __init__(self, a):
        self.a = a
        self.h = shlex.split(a.houston)
        self.ctl = f"http://127.0.0.1:{a.port}"
        self.procs = []
        self.checks = []
        self.res = {}

    def check(self, name, ok, detail=""):
        self.checks.append({"name": name, "ok": bool(ok), "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)

    def get(self, path):
        try:
            with urllib.request.urlopen(self.ctl + path, timeout=5) as r:
                return json.loads(r.read())
        except Exception:  # noqa: BLE001 - a check reads None as "not there"
            return None

    def start(self, args, log):
        p = subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def wait_for(self, pred, seconds):
        end = time.time() + seconds
        while time.time() < end:
            v = pred()
            if v:
                return v
            time.sleep(0.2)
        return None

    def cli(self, *args):
        env = dict(os.environ, HOUSTON_SERVER=self.ctl,
                   HOUSTON_OPERATOR_TOKEN_FILE=os.path.join(self.a.work, "operator.token"))
        return subprocess.run(self.h + list(args), env=env, capture_output=True, text=True, timeout=60)

    def up(self):
        w = self.a.work
        shutil.rmtree(w, ignore_errors=True)  # a run's own store, sockets and rows
        os.makedirs(w)
        for f in ("token", "operator.token"):
            with open(os.path.join(w, f), "w") as t:
                t.write(f"{f}-{os.getpid()}\n")
            os.chmod(os.path.join(w, f), 0o600)
        conf = os.path.join(w, "control.conf")
        with open(conf, "w") as c:
            c.write(f"""listen = 127.0.0.1:{self.a.port}
token-file = {w}/token
operator-token-file = {w}/operator.token
store = {w}/houston.db
scheduler = dry-run
tick = 0.5
restart-overhead = 5
node = gpu1 r1 H200 1
""")
        self.start(self.h + ["control", "--config", conf], os.path.join(w, "control.log"))
        if not self.wait_for(lambda: self.get("/v1/nodes") is not None, 20):
            raise SystemExit("controller did not start; see control.log")
        self.sock = os.path.join(w, "step.sock")
        self.start(self.h + ["agent", "--hostname", "gpu1", "--listen", f"127.0.0.1:{self.a.port + 1}",
                             "--interval", "1", "--controller", self.ctl, "--token-file", f"{w}/token",
                             "--step-socket", self.sock] + shlex.split(self.a.agent_args),
                   os.path.join(w, "agent.log"))
        seen = self.wait_for(lambda: (self.get("/v1/nodes/gpu1") or {}).get("last_seen"), 20)
        self.check("the agent reports to the controller", seen and os.path.exists(self.sock),
                   f"last_seen={seen} socket={os.path.exists(self.sock)}")
        r = self.cli("resume", "gpu1")
        self.check("houston resume gpu1", r.returncode == 0, (r.stdout + r.stderr).strip()[:200])

    def model_args(self, mfu):
        if self.a.small:
            return ["--vocab", "512", "--hidden", "64", "--layers", "2", "--heads", "4", "--seq", "32",
                    "--batch", "4"]
        if mfu:
            return ["--vocab", "32768", "--hidden", "2048", "--layers", "8", "--heads", "16", "--seq", "2048",
                    "--batch", "8"]
        return ["--vocab", "8192", "--hidden", "1024", "--layers", "4", "--heads", "16", "--seq", "1024",
                "--batch", "8"]

    def mfu(self):
        w, out = self.a.work, self.a.out
        log = os.path.join(out, "megatron.log")
        r = subprocess.run([self.a.python, TRAIN, "--mode", "mfu", "--job", "mfu-gpu", "--socket", self.sock,
                            "--steps", "60", "--warmup", "10", "--log", log] + self.model_args(True),
                           capture_output=True, text=True, timeout=300)
        with open(os.path.join(w, "train-mfu.log"), "w") as f:
            f.write(r.stdout + r.stderr)
        if r.returncode != 0:
            self.check("MFU training run", False, r.stderr[-400:])
            return
        t = json.loads(r.stdout.strip().splitlines()[-1])
        self.res["mfu_run"] = t
        self.check("MFU run: every step report reached the agent", t["dropped_reports"] == 0,
                   f"dropped={t['dropped_reports']} ({t['last_error']})")
        tail = subprocess.run(self.h + ["tail", "--format", "megatron", "--job", "mfu-tail", "--socket", self.sock,
                                        log], capture_output=True, text=True, timeout=60)
        self.check("houston tail reads the run's Megatron-style log", tail.returncode == 0
                   and "60 iterations reported, 0 malformed" in tail.stderr, tail.stderr.strip())
        m = subprocess.run(self.h + ["mfu", "--json", "--gpu", "h200", "--gpus", "1",
                                     "--params", str(t["params"]), "--layers", str(t["layers"]),
                                     "--heads", str(t["heads"]), "--head-dim", str(t["head_dim"]),
                                     "--seq", str(t["seq"]), "--tokens-per-sec", repr(t["tokens_per_s"])],
                           capture_output=True, text=True, timeout=30)
        if m.returncode != 0:
            self.check("houston mfu", False, m.stderr)
            return
        hm = json.loads(m.stdout)
        self.res["houston_mfu"] = hm
        self.check("houston mfu's FLOPs per token are train.py's 6N + 12LHQT", hm["flops_per_token"]
                   == t["flops_per_token_formula"], f"{hm['flops_per_token']} vs {t['flops_per_token_formula']}")
        counted = t["flops_per_token_counted"]
        if counted:
            # PyTorch counts what the GPU computes: flash attention's backward recomputes the
            # scores QK^T, 2*L*H*Q*T per token more than the model needs. MFU counts the model
            # (PaLM appendix B: rematerialisation does not count), so add it back to compare.
            remat = 2 * t["layers"] * t["heads"] * t["head_dim"] * t["seq"]
            ratio = (hm["flops_per_token"] + remat) / counted
            mfu_counted = (counted - remat) * t["tokens_per_s"] / (hm["peak_tflops"] * 1e12)
            self.res["mfu_counted"] = mfu_counted
            self.res["formula_plus_remat_over_counted"] = ratio
            self.check("6N + 12LHQT plus the attention recompute is PyTorch's FLOP count within 0.1%",
                       abs(ratio - 1) < 0.001,
                       f"(formula + {remat})/counted = {ratio:.6f}; MFU houston {hm['mfu']:.4f}, "
                       f"from the count less the recompute {mfu_counted:.4f}")
        else:
            self.check("PyTorch's FLOP counter (torch >= 2.1)", self.a.small, "not available")
        if not self.a.small:
            self.check("MFU is plausible for bf16 on this GPU", 0.1 < hm["mfu"] < 0.9,
                       f"{hm['mfu']:.4f} of {hm['peak_tflops']} TFLOP/s")
        time.sleep(3)  # two agent cycles: the reports reach the controller
        for job in ("mfu-gpu", "mfu-tail"):
            j = (self.get(f"/v1/jobs/{job}") or {}).get("job") or {}
            self.res[f"controller_{job}"] = {k: j.get(k) for k in ("step", "mfu", "tflops_per_gpu", "tokens_per_s",
                                                                   "step_seconds", "ettr")}
            got = j.get("mfu")
            ok = got is not None and (hm["mfu"] == 0 or abs(got / hm["mfu"] - 1) < 0.05) and j.get("step") == 60
            self.check(f"controller's MFU of {job} is houston mfu's within 5%", ok,
                       f"step={j.get('step')} mfu={got} houston mfu={hm['mfu']:.4f}")

    def data_parallel(self, job, slow_frac, steps):
        """One data-parallel job: rank 2 does slow_frac more work from --slow-from (none when
        slow_frac is 0) until rank 0 has done `steps` steps; then its rows are scored offline."""
        a, w = self.a, os.path.join(self.a.work, job)
        os.makedirs(w)
        slow = 2 if slow_frac > 0 else -1
        self.cli("resume", "gpu1")  # an earlier job's straggler may have drained it
        ranks = []
        for r in range(a.ranks):
            ranks.append(self.start([a.python, TRAIN, "--mode", "rank", "--job", job, "--socket", self.sock,
                                     "--rank", str(r), "--world", str(a.ranks), "--steps", "100000",
                                     "--warmup", "20", "--slow-rank", str(slow), "--slow-from", str(a.slow_from),
                                     "--slow-frac", str(slow_frac), "--csv", os.path.join(w, f"rank{r}.csv")]
                                    + self.model_args(False), os.path.join(w, f"rank{r}.log")))
        t0 = time.time()
        early, first, states, util, last = [], None, set(), [], 0

        def done():  # rank 0's last row: the controller holds a job's steps while it restarts
            try:
                with open(os.path.join(w, "rank0.csv"), "rb") as f:
                    f.seek(max(0, os.fstat(f.fileno()).st_size - 200))
                    return int(f.read().splitlines()[-1].split(b",")[0])
            except (OSError, ValueError, IndexError):
                return 0

        while time.time() - t0 < a.deadline and done() < steps:
            j = (self.get(f"/v1/jobs/{job}") or {}).get("job")
            n = self.get("/v1/nodes/gpu1") or {}
            states.add(n.get("state"))
            for g in n.get("gpus") or []:
                if g.get("util") is not None:
                    util.append(g["util"])
            if j:
                s, last = j.get("straggler"), j.get("step") or 0
                if s and (slow < 0 or last < a.slow_from):
                    early.append({"step": last, **s})
                if s and first is None and slow >= 0 and last >= a.slow_from:
                    first = {"seen_at_step": last, "seconds": time.time() - t0, **s, "plan": j.get("plan")}
            time.sleep(0.25)
        ran = done()
        for p in ranks:
            p.send_signal(signal.SIGKILL)
            p.wait()
        j = (self.get(f"/v1/jobs/{job}") or {}).get("job") or {}
        evs = (self.get(f"/v1/events?job={job}") or {}).get("events") or []
        self.res[job] = {"ranks": a.ranks, "slow_rank": slow, "slow_from": a.slow_from,
                         "slow_frac": slow_frac, "early": early, "first": first,
                         "node_states": sorted(x for x in states if x), "util_max": max(util, default=None),
                         "steps": ran, "step_seconds": j.get("step_seconds"),
                         "events": [{k: e.get(k) for k in ("kind", "rule", "severity", "detail", "evidence", "from",
                                                           "to", "action")} for e in evs]}
        self.check(f"{job}: ran {steps} steps", ran >= steps, f"rank 0 reached step {ran}")
        if slow < 0:
            self.check(f"{job}: no straggler named in a healthy job", not early, json.dumps(early[:3]))
            self.check(f"{job}: the node stays ready", states <= {"ready", None}, str(sorted(x for x in states if x)))
        else:
            self.check(f"{job}: no straggler named before the slowdown starts", not early, json.dumps(early[:3]))
            self.check(f"{job}: houston names the slowed rank", first is not None and first.get("rank") == slow,
                       json.dumps(first))
            if first:
                self.check(f"{job}: the onset it gives is within 10 steps of the real one",
                           0 <= (first.get("onset_step") or -1) - a.slow_from <= 10,
                           f"onset_step={first.get('onset_step')} slow_from={a.slow_from}")
            ngpus = len((self.get("/v1/nodes/gpu1") or {}).get("gpus") or [])
            if a.ranks > ngpus:
                # The ranks time-share the GPUs, and the other ranks on the slowed rank's GPU
                # run at their normal speed: not the GPU's fault (docs/jobs.md, "Shared GPUs").
                shared = [e for e in evs if e.get("rule") == "straggler_shared_gpu"]
                self.check(f"{job}: {a.ranks} ranks on {ngpus} GPU(s): straggler_shared_gpu, "
                           "the node stays ready", bool(shared) and states <= {"ready", None},
                           f"{len(shared)} straggler_shared_gpu events, states {sorted(x for x in states if x)}")
            else:
                self.check(f"{job}: the node becomes suspect", "suspect" in states or "draining" in states,
                           str(sorted(x for x in states if x)))
        if not a.small:
            self.check(f"{job}: the controller sees the GPU busy through the real NVML", max(util, default=0) >= 50,
                       f"max util {max(util, default=None)}")
        self.offline(job, w, slow)

    def offline(self, job, w, slow):
        a = self.a
        rows = []
        for r in range(a.ranks):
            with open(os.path.join(w, f"rank{r}.csv")) as f:
                rows += [x for x in csv.DictReader(f)]
        last = min(max(int(x["step"]) for x in rows if x["rank"] == str(r)) for r in range(a.ranks))
        rows = [x for x in rows if int(x["step"]) <= last]  # every rank has every step
        rows.sort(key=lambda x: (int(x["step"]), int(x["rank"])))
        merged = os.path.join(a.out, f"{job}-steps.csv")
        with open(merged, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["step", "rank", "seconds", "dur", "comm"])
            for x in rows:
                wr.writerow([x["step"], x["rank"], x["seconds"], x["dur"], x["comm"]])
        comp = {}
        for x in rows:
            if int(x["step"]) > 20:
                comp.setdefault((int(x["rank"]), int(x["step"]) >= a.slow_from), []).append(float(x["seconds"]))
        before = {r: statistics.median(comp[(r, False)]) for r in range(a.ranks) if (r, False) in comp}
        after = {r: statistics.median(comp[(r, True)]) for r in range(a.ranks) if (r, True) in comp}
        others = [after[r] for r in after if r != slow]
        apparent = after[slow] / statistics.median(others) - 1 if slow in after and others else None
        d = subprocess.run(self.h + ["straggler", "--csv", merged], capture_output=True, text=True, timeout=60)
        dets = [json.loads(x) for x in d.stdout.splitlines() if x.strip()]
        self.res[job]["offline"] = {"steps": last, "median_compute_before": before, "median_compute_after": after,
                                    "apparent_slowdown": apparent, "detections": dets}
        # A persistent line less than 2.5% slower than the peers is drift, not a straggler
        # (docs/jobs.md, "Slower than what"): the controller reports it as information.
        persistent = [x for x in dets if x.get("kind") == "persistent"]
        if slow < 0:
            stragglers = [x for x in persistent if x.get("vs_peers", 0) >= 0.025]
            self.check(f"{job}: houston straggler --csv on the rows finds no rank 2.5% slower than its peers",
                       d.returncode == 0 and not stragglers, json.dumps(dets)[:300])
        else:
            stragglers = [x for x in persistent if x.get("vs_peers", 0) >= 0.025]
            self.check(f"{job}: houston straggler --csv on the rows finds the slowed rank first",
                       d.returncode == 0 and stragglers and stragglers[0]["rank"] == slow
                       and stragglers[0]["onset_step"] >= a.slow_from,
                       f"apparent slowdown {apparent}; detections {json.dumps(dets)[:300]}")

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL if p.args[0] == self.a.python else signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def main():
    a = parse()
    os.makedirs(a.out, exist_ok=True)
    run = Run(a)
    try:
        run.up()
        run.mfu()
        run.data_parallel("dp-gpu", a.slow_frac, a.slow_from + a.after)
        run.data_parallel("dp-gpu-small", a.slow_frac / 2, a.slow_from + a.after)
        run.data_parallel("dp-gpu-healthy", 0, a.healthy_steps)
    finally:
        run.down()
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump({"checks": run.checks, "results": run.res}, f, indent=1, default=str)
    failed = [c["name"] for c in run.checks if not c["ok"]]
    print(f"{len(run.checks) - len(failed)} of {len(run.checks)} checks passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
