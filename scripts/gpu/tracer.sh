#!/bin/bash
# scripts/gpu/tracer.sh: GPU checks of the injected tracer (issue 4, docs/tracer.md). Run from the
# repo root on the GPU machine with a prebuilt build/ (LP_BUILD to change it); everything goes
# under $OUT, a summary is printed last. Steps (each one skips itself when its input is missing):
#   1. build/bin/lp_trace_cuda_demo under the tracer: nested NVTX ranges (default and LLM domain),
#      runtime + driver launches, memcpy, memset, a CUDA graph captured under ranges and one not:
#      checks kernel names, counts and per-range attribution against the demo's "expect" lines
#   2. build/bin/llmprof-llm --device cuda under the tracer (CUDA graph on: the decode step is
#      captured once outside every stage and launched per step): per-range kernel totals; checks
#      that every decode kernel is under decode_all/decode_step/<op> (capture-time op ranges
#      re-rooted under the launch's ranges) and that their count is iters x new_tokens x graph
#      kernel nodes from the workload's summary line
#   3. bench/tracer/torch_compare.py under the tracer and under Kineto: kernel names, counts, times
#   4. bench/tracer/overhead.sh (ROUNDS=${LP_OVERHEAD_ROUNDS:-3}) unless LP_SKIP_OVERHEAD=1: the
#      reference workload and the PyTorch example (plain, traced, NVTX only, Kineto), the cost per
#      event in 5 modes, not the stress loop (LP_OVERHEAD_TORCH_LOOP=1 adds it): about 7 minutes,
#      so give the area 600 s (scripts/gpu/run-all.sh tracer:600)
set -u
cd "$(dirname "$0")/../.."
B=${LP_BUILD:-build}
OUT=${OUT:-/tmp/lp-tracer-out}
mkdir -p "$OUT"
LIB=$PWD/$B/lib/libllmprof_inject.so
LLMPROF=$PWD/$B/bin/llmprof
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*"; echo "$*" >>"$SUMMARY"; }
traced() { # traced DIR cmd...
  local dir=$1; shift
  rm -rf "$dir"
  CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_DIR=$dir \
    LLMPROF_TRACE_LOG=$dir.inject.log "$@"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/gpu.csv" 2>&1
say "gpu: $(tail -n +2 "$OUT/gpu.csv" | head -1)"
[ -f "$LIB" ] || { say "FAIL: $LIB missing"; exit 1; }
[ -x "$LLMPROF" ] || { say "FAIL: $LLMPROF missing"; exit 1; }

# ---- 1. the CUDA demo ----
if [ -x "$B/bin/lp_trace_cuda_demo" ]; then
  T=$OUT/demo_trace
  traced "$T" "$B/bin/lp_trace_cuda_demo" >"$OUT/demo_expect.txt" 2>"$OUT/demo_stderr.txt"
  say "demo: exit $? ($(grep -c expect "$OUT/demo_expect.txt") expectations)"
  "$LLMPROF" trace dump "$T" >"$OUT/demo_dump.txt" 2>&1
  say "demo: trace dump exit $?: $(grep -c ' KERNEL ' "$OUT/demo_dump.txt") kernels, $(grep -c ' COPY ' "$OUT/demo_dump.txt") copies, $(grep -c ' LAUNCH ' "$OUT/demo_dump.txt") launches, $(grep -c ' GRAPH_NODE ' "$OUT/demo_dump.txt") graph nodes"
  grep -E ' (CUPTI_STATUS|DEVICE|DROPPED|END) ' "$OUT/demo_dump.txt" | sed 's/^/demo: /' | head -6 | tee -a "$SUMMARY"
  # driver-API callbacks only: one LAUNCH per launch, runtime launches included (api=driver)
  say "demo: launch records by api: $(grep ' LAUNCH ' "$OUT/demo_dump.txt" | grep -o 'api=[a-z]*' | sort | uniq -c | tr '\n' ' ')"
  "$LLMPROF" trace perfetto "$T" -o "$OUT/demo.json.gz" >"$OUT/demo_perfetto.txt" 2>&1
  "$LLMPROF" kernels "$T" >"$OUT/demo_kernels.txt" 2>&1
  say "demo: llmprof kernels exit $? ($(wc -l <"$OUT/demo_kernels.txt") lines)"
  python3 - "$OUT/demo_expect.txt" "$OUT/demo.json.gz" <<'PY' 2>&1 | tee -a "$SUMMARY"
import gzip, json, sys
exp = [l.split() for l in open(sys.argv[1]) if l.startswith("expect")]
d = json.load(gzip.open(sys.argv[2], "rt"))
ev = d["traceEvents"]
ks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
cs = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "copy"]
bad = 0
for x in exp:
    if x[1] == "kernels":
        got = sum(1 for k in ks if k["args"]["short_name"] == x[2])
    elif x[1] == "range":
        path = x[2].split("@", 1)[-1]
        got = sum(1 for k in ks if k["args"]["short_name"] == x[3] and k["args"].get("nvtx") == path)
    else:  # copies N memset M
        got_all = len(cs); got_set = sum(1 for c in cs if c["name"] == "memset")
        ok = got_all == int(x[2]) and got_set == int(x[4])
        print("demo: %s %s: copies %d memset %d" % ("ok" if ok else "MISMATCH", " ".join(x[1:]), got_all, got_set))
        bad += not ok
        continue
    want = int(x[-1])
    print("demo: %s %s: got %d" % ("ok" if got == want else "MISMATCH", " ".join(x[1:]), got))
    bad += got != want
names = sorted({k["name"] for k in ks})
print("demo: kernel names: %s" % names)
p = d["otherData"]["processes"]
print("demo: cupti_status=%s dropped=%s; %s" % (p[0]["cupti_status"], p[0]["dropped_records"],
      "ALL ATTRIBUTION CHECKS PASSED" if bad == 0 else "%d CHECKS FAILED" % bad))
PY
else
  say "demo: $B/bin/lp_trace_cuda_demo not built (no CUDA toolkit at build time): skipped"
fi

# ---- 2. the reference workload ----
if [ -x "$B/bin/llmprof-llm" ]; then
  T=$OUT/llm_trace
  traced "$T" "$B/bin/llmprof-llm" --device cuda >"$OUT/llm_stdout.txt" 2>"$OUT/llm_stderr.txt"
  say "llm: exit $?"
  "$LLMPROF" trace perfetto "$T" -o "$OUT/llm.json.gz" --no-flows >"$OUT/llm_perfetto.txt" 2>&1
  "$LLMPROF" kernels "$T" >"$OUT/llm_kernels.txt" 2>&1
  "$LLMPROF" kernels "$T" --format json >"$OUT/llm_kernels.json" 2>&1
  python3 - "$OUT/llm.json.gz" "$OUT/llm_stdout.txt" <<'PY' 2>&1 | tee -a "$SUMMARY"
import collections, gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
summ = {}
for line in open(sys.argv[2]):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("summary"):
        summ = j
ev = d["traceEvents"]
ks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
per = collections.defaultdict(lambda: [0, 0.0])
for k in ks:
    path = k["args"].get("nvtx", "(none)")
    top = "/".join(path.split("/")[:4])
    per[top][0] += 1
    per[top][1] += float(k["dur"])
for top, (n, us) in sorted(per.items(), key=lambda x: -x[1][1])[:14]:
    print("llm: range %-48s kernels %7d gpu_ms %10.3f" % (top, n, us / 1e3))
paths = [k["args"].get("nvtx", "") for k in ks]
under = [p for p in paths if p == "decode_all" or p.startswith("decode_all/")]
deep = [p for p in under if p == "decode_all/decode_step" or p.startswith("decode_all/decode_step/")]
ops = [p for p in deep if p.count("/") >= 2]
# the decode graph is captured outside every stage: no graph kernel may stay at a bare
# capture-time stack (layer/attention); setup kernels (weight fill) outside stages are fine
stray = [k["args"].get("nvtx", "") for k in ks if "graph_node" in k["args"] and
         k["args"].get("nvtx", "").split("/")[0] not in ("decode_all", "prefill", "warmup")]
want = None
if summ.get("cuda_graph") and summ.get("graph_kernel_nodes"):
    want = int(summ["iters"]) * int(summ["new_tokens"]) * int(summ["graph_kernel_nodes"])
print("llm: kernels under decode_all: %d, attributed to decode_all/decode_step/...: %d (%d below an op range), "
      "graph kernels outside every stage: %d, expected decode kernels: %s" % (len(under), len(deep), len(ops), len(stray),
      want if want is not None else "n/a (no CUDA graph)"))
ok = len(under) > 0 and len(deep) == len(under) and len(ops) == len(deep) and not stray and \
    (want is None or len(deep) == want)
print("llm: %s" % ("DECODE ATTRIBUTION OK: every decode kernel is under decode_all/decode_step/<op>" if ok else
      "DECODE ATTRIBUTION FAILED"))
p = d["otherData"]["processes"]
print("llm: cupti_status=%s dropped=%s overhead_ns=%s" % (p[0]["cupti_status"], p[0]["dropped_records"], p[0]["overhead_ns"]))
PY
  grep -iE 'decode|prefill|ms' "$OUT/llm_stdout.txt" | tail -5 | sed 's/^/llm (own timings): /' | tee -a "$SUMMARY"
else
  say "llm: $B/bin/llmprof-llm not found: skipped"
fi

# ---- 3. PyTorch: our tracer vs Kineto ----
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  T=$OUT/torch_trace
  traced "$T" python3 bench/tracer/torch_compare.py --mode plain >"$OUT/torch_traced.json" 2>"$OUT/torch_traced.err"
  say "torch: traced run exit $?"
  python3 bench/tracer/torch_compare.py --mode kineto --trace "$OUT/kineto_trace.json" \
    >"$OUT/torch_kineto.json" 2>"$OUT/torch_kineto.err"
  say "torch: kineto run exit $?"
  "$LLMPROF" trace perfetto "$T" -o "$OUT/torch.json.gz" --no-flows >"$OUT/torch_perfetto.txt" 2>&1
  "$LLMPROF" kernels "$T" --format json >"$OUT/torch_kernels.json" 2>&1
  python3 bench/tracer/compare_kernels.py "$OUT/torch_kineto.json" "$OUT/torch.json.gz" measure \
    >"$OUT/torch_compare.txt" 2>&1
  say "torch: compare: $(tail -1 "$OUT/torch_compare.txt")"
  # the run-to-run spread: a second traced run against the first (two separate runs, as above)
  traced "$T.2" python3 bench/tracer/torch_compare.py --mode plain >"$OUT/torch_traced2.json" 2>"$OUT/torch_traced2.err"
  "$LLMPROF" trace perfetto "$T.2" -o "$OUT/torch2.json.gz" --no-flows >>"$OUT/torch_perfetto.txt" 2>&1
  python3 bench/tracer/compare_kernels.py "$OUT/torch2.json.gz" "$OUT/torch.json.gz" measure \
    >"$OUT/torch_compare_self.txt" 2>&1
  say "torch: run to run (ours twice): $(tail -1 "$OUT/torch_compare_self.txt")"
  rm -rf "$T.2"
  gzip -f "$OUT/kineto_trace.json" 2>/dev/null
  rm -rf "$T"
else
  say "torch: no PyTorch with CUDA: skipped"
fi

# ---- 4. overhead ----
if [ "${LP_SKIP_OVERHEAD:-0}" != 1 ]; then
  OUT=$OUT/overhead LP_OVERHEAD_TORCH_LOOP=${LP_OVERHEAD_TORCH_LOOP:-0} \
    LP_OVERHEAD_LAUNCH_MODES=${LP_OVERHEAD_LAUNCH_MODES:-plain traced nvtx nocb noact} \
    bash bench/tracer/overhead.sh "${LP_OVERHEAD_ROUNDS:-3}" >"$OUT/overhead.txt" 2>&1
  say "$(tail -1 "$OUT/overhead.txt")"
fi
rm -rf "$OUT/llm_trace"
echo "===== tracer summary ====="
cat "$SUMMARY"
