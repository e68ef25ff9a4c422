#!/usr/bin/env python3
"""seed.py: builds each fuzz target's seed inputs from the real fixtures (docs/fuzzing.md).

    fuzz/seed.py OUT            # OUT/<target>/ for every target, e.g. OUT/ncu_raw/h200_llm_raw.csv

The committed corpora (fuzz/corpus/<target>/) are these seeds plus what fuzzing found, minimized
with libFuzzer's -merge=1; run this again when a fixture format changes. Sources: tests/fixtures/
(ncu, nsys, trace, the run folders' traces), conf/, the inputs of ../shared/repro that are not
crashes, and a run folder's trace/ when --run RUN_DIR is given. Inputs over 200 KB are left out or cut down (the SQLite
exports are trimmed to a few dozen kernels with sqlite3).
"""
import csv
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
MAX_BYTES = 200 * 1024
PUSHPOP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
STARTEND = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
# fuzz_source's first byte: where the file is placed (bits 0-2) and options (bit 3 stage)
SOURCE_PLACE = {"file": 0, "lptrace": 1, "kern_sum_name": 2, "run_trace": 3, "run_ncu": 4,
                "run_sqlite": 5, "run_kern_sum": 6, "trace_dir": 7}


def files(folder, pred):
    d = os.path.join(FIX, folder)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if pred(f))


def put(out, target, name, data):
    if len(data) > MAX_BYTES:
        return
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_unescape(line):
    """An input line of tests/data/*.test as bytes: \\xNN, \\t, \\n, \\\\ (tests/data/README.md)."""
    return re.sub(rb"\\(x[0-9a-fA-F]{2}|[tn\\])", lambda m: bytes([int(m.group(1)[1:], 16)]) if m.group(1)[:1] == b"x"
                  else {b"t": b"\t", b"n": b"\n", b"\\": b"\\"}[m.group(1)], line.encode())


def trimmed_sqlite(src, dst, kernels):
    """A copy of an nsys export with its first `kernels` kernels and what they refer to."""
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    keep = {"StringIds", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "TARGET_INFO_GPU",
            "ThreadNames"}
    tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
    for t in tables:
        if t not in keep:
            db.execute('drop table "%s"' % t)
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        db.execute("delete from CUPTI_ACTIVITY_KIND_KERNEL where rowid > ?", (kernels,))
        db.execute("delete from CUPTI_ACTIVITY_KIND_RUNTIME where correlationId not in "
                   "(select correlationId from CUPTI_ACTIVITY_KIND_KERNEL)")
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            db.execute("delete from %s where rowid > 4" % t)
    db.commit()
    db.execute("pragma page_size=1024")
    db.execute("vacuum")
    db.close()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: fuzz/seed.py OUT [--run RUN_DIR]")
    out = sys.argv[1]
    run_dir = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--run" else None
    os.makedirs(out, exist_ok=True)
    csvs = files("ncu", lambda f: f.endswith(".csv")) + files("nsys", lambda f: f.endswith(".csv"))
    raws = files("ncu", lambda f: "_raw" in f and f.endswith(".csv"))
    details = files("ncu", lambda f: f.endswith("_details.csv"))
    summaries = files("ncu", lambda f: "_summary_per_" in f)
    nsys_csvs = files("nsys", lambda f: f.endswith(".csv"))
    traces = files("trace", lambda f: f.endswith(".lptrace"))
    traces += files("trace/h200_cuda_demo", lambda f: f.endswith(".lptrace"))
    for run in sorted(os.listdir(os.path.join(FIX, "runs"))):
        if os.path.isdir(os.path.join(FIX, "runs", run, "trace")):
            traces += files("runs/%s/trace" % run, lambda f: f.endswith(".lptrace"))
    if run_dir:
        tdir = os.path.join(run_dir, "trace")
        traces += sorted(os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith(".lptrace"))
    repro = os.path.join(os.path.dirname(SRC), "shared", "repro")
    repro_ok = {"duphdr_raw.csv": "ncu_raw", "concat_raw.csv": "ncu_raw",
                "badutf8_nsys.csv": "nsys_csv", "inf_nsys.csv": "nsys_csv"}

    for p in csvs:
        put(out, "csv", os.path.basename(p), read(p))
    for p in raws:
        put(out, "ncu_raw", os.path.basename(p), read(p))
    for p in details:
        put(out, "ncu_details", os.path.basename(p), read(p))
    for p in summaries:
        put(out, "ncu_summary", os.path.basename(p), read(p))
    for p in nsys_csvs:
        put(out, "nsys_csv", os.path.basename(p), read(p))
    for p in traces:
        put(out, "trace_reader", os.path.basename(p), read(p))
    if os.path.isdir(repro):
        for name, target in sorted(repro_ok.items()):
            if os.path.exists(os.path.join(repro, name)):
                put(out, target, "repro_" + name, read(os.path.join(repro, name)))

    # the NVTX cells of the raw pages, one per file (fuzz_ncu_nvtx: first byte odd = start/end form)
    seen = set()
    for p in raws:
        with open(p, newline="", encoding="utf-8", errors="replace") as f:
            rows = list(csv.reader(f))
        if not rows:
            continue
        for col in (PUSHPOP, STARTEND):
            if col not in rows[0]:
                continue
            i = rows[0].index(col)
            for r in rows[2:]:
                if i < len(r) and r[i] and r[i] not in seen and len(seen) < 40:
                    seen.add(r[i])
                    put(out, "ncu_nvtx", "cell_%02d" % len(seen), r[i].encode())

    # SQLite: the synthetic export and the H200 exports trimmed
    sq = os.path.join(out, "nsys_sqlite")
    os.makedirs(sq, exist_ok=True)
    synth = os.path.join(sq, "synthetic.sqlite")
    if os.path.exists(synth):
        os.remove(synth)
    db = sqlite3.connect(synth)
    db.executescript(open(os.path.join(FIX, "nsys", "synthetic.sql")).read())
    db.close()
    for name in ("h200_llm", "h200_torch", "h200_llm_capture"):
        trimmed_sqlite(os.path.join(FIX, "nsys", name + ".sqlite"), os.path.join(sq, name + "_trim.sqlite"), 24)
    for f in sorted(os.listdir(sq)):
        if os.path.getsize(os.path.join(sq, f)) > MAX_BYTES:
            os.remove(os.path.join(sq, f))

    # fuzz_source: each kind of SOURCE behind its placement byte
    src_seeds = [("file", raws[:2] + details[:1] + summaries + nsys_csvs[:3]),
                 ("kern_sum_name", files("nsys", lambda f: f == "empty_cuda_gpu_kern_sum.csv")),
                 ("lptrace", traces[:1]), ("run_trace", traces[:1]), ("trace_dir", traces[-1:]),
                 ("run_ncu", files("ncu", lambda f: f == "synthetic_raw.csv")),
                 ("run_kern_sum", files("nsys", lambda f: f == "summary_cuda_gpu_kern_sum.csv")),
                 ("run_sqlite", [synth]), ("file", [synth])]
    for place, paths in src_seeds:
        for p in paths:
            for stage in (0, 8):
                b = bytes([SOURCE_PLACE[place] | stage]) + read(p)
                put(out, "source", "%s_%d_%s" % (place, stage, os.path.basename(p)), b)

    # the workload's stdout (self-check timings): the run fixtures' files and a few hand-written lines
    for run in sorted(os.listdir(os.path.join(FIX, "runs"))):
        p = os.path.join(FIX, "runs", run, "trace", "workload.stdout")
        if os.path.exists(p):
            put(out, "workload_timings", run + ".stdout", read(p))
    put(out, "workload_timings", "iters_only", b'hello\n{"iter": 0, "prefill_ms": 2.5, "decode_ms": 40}\n'
        b'{"iter": 1, "prefill_ms": 3.5, "decode_ms": 42, "tokens_per_s": -1}\n  {"iter": 2, "mixed_ms": "x"}\n')
    put(out, "workload_timings", "summary_last", b'{"summary": true, "prefill_ms": 1, "iters": 3}\n{not json\n'
        b'{"summary": true, "decode_ms_per_step": 1e308, "tokens_per_s": 9e999, "iters": -2}')
    put(out, "workload_timings", "iters_sum_overflow", b'{"iter": 0, "prefill_ms": 1e308}\n{"iter": 1, "prefill_ms": 1e308}\n')

    # model shapes: llmprof's model files and Hugging Face config.json files
    for p in sorted(os.listdir(os.path.join(SRC, "conf", "model", "llm"))):
        put(out, "llm_model", p, read(os.path.join(SRC, "conf", "model", "llm", p)))
    for p in files("hf", lambda f: f.endswith(".json")):
        put(out, "llm_model", "hf_" + os.path.basename(p), read(p))

    # stage hooks: the entries of conf/stages/ and the grammar's shapes, behind a reason-size byte
    hooks = []
    for p in sorted(os.listdir(os.path.join(SRC, "conf", "stages"))):
        for line in read(os.path.join(SRC, "conf", "stages", p)).decode().splitlines():
            if line.strip().startswith("- ") and "=" in line:
                hooks.append(line.strip()[2:].strip())
    hooks += ["m:A.B.f=mixed@len(kw.seqs)", "m:f=decode_step@arg2[-1].x", "__main__:S.step=warmup@ len( arg1 ) ",
              "m:f=prefill@arg1.a.a.a.a.a.a.a.a.a", "m:f=prefill@eval(arg1)", "no_colon=prefill"]
    for i, h in enumerate(hooks):
        put(out, "stage_hooks", "hook_%02d" % i, bytes([160]) + h.encode())
    put(out, "stage_hooks", "hook_small_reason", bytes([5]) + b"m:f=decode")

    # region expressions: the inputs of tests/data/regions.test (mode region)
    mode, first = None, True
    n = 0
    for line in read(os.path.join(SRC, "tests", "data", "regions.test")).decode().splitlines():
        if line.startswith("%%mode "):
            mode, first = line[7:], True
        elif not line or line.startswith("#"):
            first = True
        elif first:
            first = False
            if mode == "region":
                put(out, "region_expr", "expr_%02d" % n, test_unescape(line))
                n += 1

    # config / overrides keep their committed corpora (conf/ files and hand-written overrides)
    for p in sorted(os.listdir(os.path.join(SRC, "fuzz", "corpus", "config"))):
        put(out, "config", p, read(os.path.join(SRC, "fuzz", "corpus", "config", p)))
    for p in sorted(os.listdir(os.path.join(SRC, "fuzz", "corpus", "overrides"))):
        put(out, "overrides", p, read(os.path.join(SRC, "fuzz", "corpus", "overrides", p)))
    for t in sorted(os.listdir(out)):
        n = len(os.listdir(os.path.join(out, t)))
        print("%-14s %4d seeds" % (t, n))


if __name__ == "__main__":
    main()
