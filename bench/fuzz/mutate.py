#!/usr/bin/env python3
"""mutate.py: random mutations of real fixtures through `llmprof kernels` and `llmprof report`.

    bench/fuzz/mutate.py --llmprof build-F/bin/llmprof --run RUN_DIR --out OUT [-n 1200] [--seed 1]

Where the libFuzzer targets (fuzz/) drive one reader at a time, this drives the whole CLI of an
ASan + UBSan build on damaged copies of real inputs, the way a user's damaged files would arrive:
byte flips, truncations, duplicated or dropped lines, damaged header lines and damaged units.
Inputs: the ncu, nsys and trace fixtures of tests/fixtures (through `kernels --format json`), and
a run folder made with `llmprof run --mode light` (through `report` on a copy whose trace, its
workload.stdout or an ncu/<name>_raw.csv added from the fixtures is mutated).

Each case is classified:
  crash      killed by a signal, or an exit status outside 0-4 (README: exit codes)
  sanitizer  an AddressSanitizer / LeakSanitizer / UBSan report on stderr (whatever the status)
  hang       still running after --timeout seconds
  silent     exit 0 with numbers different from the undamaged input's, where the mutation
             damaged the header or the units (the readers must refuse those, issue 20)
  ok         anything else (a clean error, or a result)
OUT/results.tsv has one line per case; OUT/cases/<n>/ keeps the input and stderr of every case
that is not ok; the summary goes to stdout (and OUT/summary.txt).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(SRC, "tests", "fixtures")
SAN = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")
# kernels inputs: (fixture, kind); kind picks the header/units damage that fits
KERNEL_INPUTS = [
    ("ncu/synthetic_raw.csv", "ncu_raw"),
    ("ncu/h200_llm_raw.csv", "ncu_raw"),
    ("ncu/h200_torch_raw.csv", "ncu_raw"),
    ("ncu/h200_llm_details.csv", "ncu_details"),
    ("ncu/h200_llm_summary_per_kernel.csv", "ncu_summary"),
    ("nsys/h200_llm_cuda_gpu_kern_sum.csv", "nsys_csv"),
    ("nsys/h200_torch_cuda_gpu_kern_sum.csv", "nsys_csv"),
    ("nsys/h200_llm.sqlite", "sqlite"),
    ("trace/nvtx_demo.lptrace", "trace"),
]
MUTATIONS = ["flip", "truncate", "dupline", "dropline", "header", "units"]
GARBAGE_UNITS = ["xyzzy", "12", "", "usecond usecond", "n/a", "\u00b5s", "Kernel Name", "-1"]


def lines_of(data):
    return data.split(b"\n")


def mutate(data, kind, how, rng):
    """Returns the mutated bytes, a short description and the mutation actually applied (binary
    inputs have no lines or units: those become byte flips, which may change numbers legitimately)."""
    if how == "flip" or (kind in ("sqlite", "trace") and how in ("dupline", "dropline", "units")):
        b = bytearray(data)
        n = rng.choice([1, 2, 4, 16])
        for _ in range(n):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256) if rng.random() < 0.5 else b[i] ^ (1 << rng.randrange(8))
        return bytes(b), "flip %d bytes" % n, "flip"
    if how == "truncate":
        cut = rng.randrange(len(data))
        return data[:cut], "truncate at %d of %d" % (cut, len(data)), how
    ls = lines_of(data)
    if how == "dupline":
        i = rng.randrange(len(ls))
        ls.insert(i, ls[i])
        return b"\n".join(ls), "duplicate line %d" % (i + 1), how
    if how == "dropline":
        i = rng.randrange(len(ls))
        del ls[i]
        return b"\n".join(ls), "drop line %d" % (i + 1), how
    if how == "header":
        if kind in ("sqlite", "trace"):
            b = bytearray(data)
            i = rng.randrange(min(len(b), 100))
            b[i] ^= 0xff
            return bytes(b), "header byte %d inverted" % i, how
        cells = ls[0].split(b",")
        r = rng.randrange(5)
        if r == 0 and len(cells) > 1:
            i = rng.randrange(len(cells))
            del cells[i]
            what = "header cell %d dropped" % (i + 1)
        elif r == 1 and len(cells) > 1:
            i, j = rng.sample(range(len(cells)), 2)
            cells[i], cells[j] = cells[j], cells[i]
            what = "header cells %d and %d swapped" % (i + 1, j + 1)
        elif r == 2:
            i = rng.randrange(len(cells))
            cells[i] = cells[i].upper() if rng.random() < 0.5 else b'"renamed"'
            what = "header cell %d renamed" % (i + 1)
        elif r == 3:
            ls.insert(1, ls[0])
            return b"\n".join(ls), "header line twice", how
        else:
            return data + (b"" if data.endswith(b"\n") else b"\n") + data, "file concatenated with itself", how
        ls[0] = b",".join(cells)
        return b"\n".join(ls), what, how
    if how == "units":
        if kind == "ncu_raw" and len(ls) > 1:
            r = rng.randrange(3)
            if r == 0:
                del ls[1]
                return b"\n".join(ls), "units row dropped", how
            cells = ls[1].split(b",")
            idx = [i for i, c in enumerate(cells) if c.strip(b'"')]
            if r == 1 and idx:
                i = rng.choice(idx)
                g = rng.choice(GARBAGE_UNITS)
                cells[i] = ('"%s"' % g).encode()
                ls[1] = b",".join(cells)
                return b"\n".join(ls), "unit of column %d is '%s'" % (i + 1, g), how
            ls[1] = ls[2] if len(ls) > 2 else ls[1]
            return b"\n".join(ls), "units row replaced by a data row", how
        if kind == "nsys_csv":
            h = ls[0]
            for a, b in ((b"(ns)", rng.choice([b"(xs)", b"", b"(ns"])),):
                if a in h:
                    pos = [k for k in range(len(h)) if h.startswith(a, k)]
                    k = rng.choice(pos)
                    ls[0] = h[:k] + b + h[k + len(a):]
                    return b"\n".join(ls), "a time unit in the header damaged to '%s'" % b.decode(), how
        if kind in ("ncu_details", "ncu_summary"):
            hdr = ls[0].split(b",")
            unit_col = next((i for i, c in enumerate(hdr) if c.strip(b'"') == b"Metric Unit"), -1)
            rows = [i for i in range(1, len(ls)) if ls[i]]
            if unit_col >= 0 and rows:
                i = rng.choice(rows)
                cells = ls[i].split(b",")
                if unit_col < len(cells):
                    g = rng.choice(GARBAGE_UNITS)
                    cells[unit_col] = ('"%s"' % g).encode()
                    ls[i] = b",".join(cells)
                    return b"\n".join(ls), "Metric Unit of line %d is '%s'" % (i + 1, g), how
        return mutate(data, kind, "header", rng)
    raise ValueError(how)


def run(cmd, timeout, cwd=None):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", NO_COLOR="1")
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=cwd, env=env)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b"", time.time() - t0


def kernel_numbers(out):
    try:
        d = json.loads(out)
    except ValueError:
        return None
    return sorted((k.get("kernel_name"), k.get("calls"), k.get("total_ms")) for k in d.get("kernels", []))


def report_numbers(run_dir):
    try:
        d = json.load(open(os.path.join(run_dir, "summary.json")))
    except (OSError, ValueError):
        return None
    return json.dumps({k: d.get(k) for k in ("stages", "kernels", "tokens", "perf", "operators")}, sort_keys=True)


def classify(rc, err, how, changed):
    text = err.decode("utf-8", "replace")
    if any(s in text for s in SAN):
        return "sanitizer"
    if rc is None:
        return "hang"
    if rc < 0 or rc > 4:
        return "crash"
    if rc == 0 and how in ("header", "units") and changed:
        return "silent"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llmprof", required=True)
    ap.add_argument("--run", required=True, action="append",
                    help="a run folder (`llmprof run --mode light`, or tests/fixtures/runs/*); repeatable")
    ap.add_argument("--out", required=True)
    ap.add_argument("-n", type=int, default=1200, help="cases in all (about 2/3 kernels, 1/3 report)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    llmprof = os.path.abspath(a.llmprof)
    out = os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "cases"))
    work = os.path.join(out, "work")

    # baselines: the undamaged inputs
    base_k = {}
    for rel, kind in KERNEL_INPUTS:
        rc, so, se, _ = run([llmprof, "kernels", "--format", "json", os.path.join(FIX, rel)], a.timeout)
        if rc != 0:
            sys.exit("mutate: baseline 'kernels %s' exited %s: %s" % (rel, rc, se.decode()[-300:]))
        base_k[rel] = kernel_numbers(so)
    # each run folder is copied once (with an ncu/run_raw.csv from the fixtures beside its trace)
    # and reported as it is: the baseline its mutated copies are compared with
    report_inputs, base_r = [], {}
    for i, r in enumerate(a.run):
        base_run = os.path.join(out, "base_run%d" % i)
        shutil.copytree(r, base_run)
        ncu_dir = os.path.join(base_run, "ncu")
        os.makedirs(ncu_dir, exist_ok=True)
        shutil.copyfile(os.path.join(FIX, "ncu", "synthetic_raw.csv"), os.path.join(ncu_dir, "run_raw.csv"))
        rc, so, se, _ = run([llmprof, "report", base_run], a.timeout)
        if rc != 0:
            sys.exit("mutate: baseline 'report %s' exited %s: %s" % (r, rc, se.decode()[-300:]))
        base_r[base_run] = report_numbers(base_run)
        trace = sorted(f for f in os.listdir(os.path.join(base_run, "trace")) if f.endswith(".lptrace"))[0]
        report_inputs += [(base_run, "trace/" + trace, "trace"), (base_run, "trace/workload.stdout", "text"),
                          (base_run, "ncu/run_raw.csv", "ncu_raw")]

    counts = {}
    res = open(os.path.join(out, "results.tsv"), "w")
    res.write("case\tcommand\tinput\tmutation\tdescription\texit\tseconds\tclass\n")
    t_start = time.time()
    for n in range(a.n):
        how = MUTATIONS[(n // 3) % len(MUTATIONS)]  # every mutation for both commands
        if n % 3 != 2:
            rel, kind = KERNEL_INPUTS[rng.randrange(len(KERNEL_INPUTS))]
            data = open(os.path.join(FIX, rel), "rb").read()
            mdata, desc, how = mutate(data, kind, how, rng)
            os.makedirs(work, exist_ok=True)
            path = os.path.join(work, os.path.basename(rel))
            open(path, "wb").write(mdata)
            rc, so, se, secs = run([llmprof, "kernels", "--format", "json", path], a.timeout)
            changed = rc == 0 and kernel_numbers(so) != base_k[rel]
            command = "kernels"
        else:
            base_run, rel, kind = report_inputs[rng.randrange(len(report_inputs))]
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(base_run, work)
            path = os.path.join(work, rel)
            data = open(path, "rb").read()
            mdata, desc, how = mutate(data, kind if kind != "text" else "ncu_summary", how, rng)
            open(path, "wb").write(mdata)
            rc, so, se, secs = run([llmprof, "report", work], a.timeout)
            changed = rc == 0 and report_numbers(work) != base_r[base_run]
            command = "report"
            rel = os.path.basename(base_run) + ":" + rel
        cls = classify(rc, se, how, changed)
        counts.setdefault((command, cls), 0)
        counts[(command, cls)] += 1
        res.write("%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\n" % (n, command, rel, how, desc, rc, secs, cls))
        res.flush()
        if cls != "ok":
            d = os.path.join(out, "cases", "%04d" % n)
            os.makedirs(d)
            open(os.path.join(d, os.path.basename(rel)), "wb").write(mdata)
            open(os.path.join(d, "stderr"), "wb").write(se)
            open(os.path.join(d, "what"), "w").write("%s %s: %s (exit %s)\n" % (command, rel, desc, rc))
    lines = ["mutate: %d cases in %.0f s (seed %d, llmprof %s)" % (a.n, time.time() - t_start, a.seed, llmprof)]
    for command in ("kernels", "report"):
        c = {k[1]: v for k, v in counts.items() if k[0] == command}
        lines.append("  %-8s %4d cases: ok %d, crash %d, sanitizer %d, hang %d, silent %d" % (
            command, sum(c.values()), c.get("ok", 0), c.get("crash", 0), c.get("sanitizer", 0),
            c.get("hang", 0), c.get("silent", 0)))
    open(os.path.join(out, "summary.txt"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    bad = sum(v for k, v in counts.items() if k[1] != "ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
