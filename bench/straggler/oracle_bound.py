#!/usr/bin/env python3
"""bench/straggler/oracle_bound.py - how many slowdowns an oracle could find in time.

The oracle knows which rank slows down, from which step and by how much, and that the
noise is exactly the bench's Student-t jitter with 4 degrees of freedom (bench_straggler.c:
t4 scaled to unit variance, without the generator's right tail, garbage-collection pauses,
drift or heterogeneity). It runs one Neyman-Pearson test per episode on the reports from
the onset to the goal's deadline (11 reports for 5-10%: onset to onset + 10; 6 for 10% or
more) at a false-alarm probability alpha per test. Its power is computed in the local
(Gaussian) approximation of the log-likelihood ratio, whose mean and variance after n
reports are n K and 2 n K with K = delta^2 I / 2, delta the slowdown in standard deviations
of the jitter and I = (nu + 1) / (nu + 3) / s^2 = 10/7 the Fisher information for location
of unit-variance t4 (s^2 = (nu - 2) / nu): power = Phi(sqrt(n delta^2 I) - z_alpha).
Slowdowns and jitters are spread evenly over each band, as the bench draws them.

A real detector does not know the onset, estimates each rank's normal and noise as it goes
and must hold its false alarms below one per 10^6 (the goal) or 4 per 10^8 (NVRx on seed 1)
over every rank-step, not once per episode; so this is an upper bound on what any detector
can find in time, not a target it can reach. docs/straggler.md compares it with houston.

usage: python3 bench/straggler/oracle_bound.py
"""
import math

FISHER_T4 = (4 + 1) / (4 + 3) / ((4 - 2) / 4)  # 10/7 for unit-variance t4


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def z_upper(alpha):
    """z such that P(N(0,1) > z) = alpha, by bisection."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1 - phi(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return lo


def band_power(slow_lo, slow_hi, jit_lo, jit_hi, reports, alpha, grid=200):
    z = z_upper(alpha)
    total = 0.0
    for i in range(grid):
        slow = slow_lo + (slow_hi - slow_lo) * (i + 0.5) / grid
        for j in range(grid // 4):
            jit = jit_lo + (jit_hi - jit_lo) * (j + 0.5) / (grid // 4)
            delta = slow / jit
            total += phi(math.sqrt(reports * delta * delta * FISHER_T4) - z)
    return total / (grid * (grid // 4))


def main():
    bands = [(0.010, 0.015), (0.015, 0.020), (0.020, 0.025), (0.025, 0.030)]
    goals = [("5-10% within 10 steps", 0.05, 0.10, 11), (">=10% within 5 steps", 0.10, 0.50, 6)]
    print("| alpha per test | goal | " + " | ".join(
        f"jitter {a * 100:.1f}-{b * 100:.1f}%" for a, b in bands) + " |")
    print("|---|---|" + "---|" * len(bands))
    for alpha in (1e-6, 1e-8):
        for name, lo, hi, n in goals:
            cells = [f"{100 * band_power(lo, hi, a, b, n, alpha):.1f}%" for a, b in bands]
            print(f"| {alpha:g} | {name} | " + " | ".join(cells) + " |")
    # the hardest point of the 5-10% band
    for alpha in (1e-6, 1e-8):
        p = phi(math.sqrt(11 * (0.05 / 0.03) ** 2 * FISHER_T4) - z_upper(alpha))
        print(f"\n5% slowdown at 3% jitter, 11 reports, alpha {alpha:g}: {100 * p:.1f}%", end="")
    print()


if __name__ == "__main__":
    main()
