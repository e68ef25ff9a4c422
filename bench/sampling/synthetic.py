#!/usr/bin/env python3
"""synthetic.py: the simple-random-sampling variance under the stratified schedule, with and without
a drift (bench/sampling/README.md). Standard library only; deterministic (fixed seeds).

Two chains of 125 steps, value 100 + jitter (sum of 4 uniforms, sd 1) [+ 0.15 per step + 3 per
chain]; the tracer's schedule (one step at a uniform position in each block of 8; a position past
the end of the last, partial block records nothing there); 3000 draws. Prints the error the
simple-random formula claims (N^2 (1 - n/N) s^2 / n) against the actual rmse, and its coverage.
"""
import math
import random
import statistics as st


def series(drift, c, i, rng):
    v = 100.0 + sum((rng.random() - 0.5) * 1.732 for _ in range(4))
    return v + (0.15 * i + 3 * c if drift else 0)


for drift in (False, True):
    r0 = random.Random(9)
    data = [[series(drift, c, i, r0) for i in range(125)] for c in range(2)]
    truth = sum(map(sum, data))
    rng = random.Random(3)
    errs, claimed, cov = [], [], 0
    for _ in range(3000):
        xs = []
        for chain in data:
            for b in range(0, 125, 8):
                r = rng.randrange(8)
                if b + r < 125:
                    xs.append(chain[b + r])
        N, n = 250, len(xs)
        est = N * st.mean(xs)
        sd = math.sqrt(N * N * (1 - n / N) * st.variance(xs) / n)
        errs.append(est - truth)
        claimed.append(sd)
        cov += abs(est - truth) <= 2.04 * sd
    rmse = math.sqrt(sum(e * e for e in errs) / len(errs))
    print("drift" if drift else "no drift", "claimed sd %.1f, actual rmse %.1f, ratio %.2f, coverage %.3f"
          % (st.mean(claimed), rmse, st.mean(claimed) / rmse, cov / 3000))
