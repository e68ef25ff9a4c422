#!/bin/bash
# profiling.ncu.rank on real GPUs (tests/fixtures/runs/h100_gloo_ncu_rank, README.md there): two
# torchrun ranks with the gloo backend on one H100 under `llmprof run --mode deep`, once with
# rank 0 chosen, once with rank 1. Checks, per run: the ncu phase is ok and says which rank it
# profiled; the gate re-executed exactly that rank under ncu (the launcher and the other rank ran
# without it); every result in ncu's raw page comes from one process, the chosen rank's program
# (its pid is the one its own account, own/own.<pid>.json, gives with that rank).
set -u
. "$(dirname "$0")/lib.bash"

fx="$LP_SRC/tests/fixtures/runs/h100_gloo_ncu_rank"
for r in 0 1; do
  d="$fx/rank$r"
  python3 - "$d" "$r" <<'PY' || fail "rank $r: see above"
import csv, glob, json, os, sys
d, want = sys.argv[1], int(sys.argv[2])
other = 1 - want
ph = {p["name"]: p for p in json.load(open(os.path.join(d, "phases.json")))["phases"]}
ncu = ph["ncu"]
assert ncu["status"] == "ok", ncu
assert ncu["reason"].startswith("ncu profiled rank %d only (of 2 ranks, profiling.ncu.rank)" % want), ncu["reason"]
gate = open(os.path.join(d, "ncu_gate.log")).read().splitlines()
assert len(gate) == 3, gate
assert sum(l.endswith("rank %d (RANK): profiled, exec ncu" % want) for l in gate) == 1, gate
assert sum(l.endswith("rank %d (RANK): not profiled" % other) for l in gate) == 1, gate
assert sum(l.endswith("rank -1 (no rank variable): not profiled") for l in gate) == 1, gate
rows = list(csv.reader(open(os.path.join(d, "ncu_raw_ids.csv"))))
pids = {int(r[1]) for r in rows[2:]}
assert len(rows) > 2 and len(pids) == 1, pids
pid = pids.pop()
own = json.load(open(os.path.join(d, "own", "own.%d.json" % pid)))
assert own["rank"] == want, own
cmd = open(os.path.join(d, "ncu_cmd.txt")).read()
assert "# only rank %d runs under ncu (libllmprof_ncu_gate.so re-executes it as): " % want in cmd, cmd[:200]
assert "LLMPROF_NCU_RANK=%d " % want in cmd
print("rank %d: ncu profiled pid %d only (%d results)" % (want, pid, len(rows) - 2))
PY
done
# The same on 2 H200 with NCCL over NVLink (tests/fixtures/runs/h200x2_tp_ncu_rank, issue 18):
# examples/tp_decode.py under `llmprof run --mode deep profiling.ncu.rank=0`, with the presets'
# NCCL_P2P_DISABLE=1 for the ncu phase (deep: 3 ncu processes) and without it (deepp2p:
# profiling.ncu.nccl_p2p_off=false, 2 processes). Per run: the ncu phase is ok and names rank 0;
# every ncu process's gate re-executed rank 0 alone; every result is a rank-0 process's (its
# tp.0.<pid>.json account) and none is an NCCL kernel (a collective is never profiled alone);
# no process stalled; NCCL_P2P_DISABLE=1 stands in the command exactly when asked for.
fx2="$LP_SRC/tests/fixtures/runs/h200x2_tp_ncu_rank"
for run in deep deepp2p; do
  python3 - "$fx2/$run" "$run" <<'PY' || fail "$run: see above"
import csv, glob, json, os, sys
d, run = sys.argv[1], sys.argv[2]
ph = {p["name"]: p for p in json.load(open(os.path.join(d, "phases.json")))["phases"]}
ncu = ph["ncu"]
assert ncu["status"] == "ok", ncu
assert ncu["reason"].startswith("ncu profiled rank 0 only (of 2 ranks, profiling.ncu.rank"), ncu["reason"]
p2p_off = run == "deep"
assert ("NCCL_P2P_DISABLE=1 for the job" in ncu["reason"]) == p2p_off, ncu["reason"]
cmd = open(os.path.join(d, "ncu_cmd.txt")).read()
assert ("NCCL_P2P_DISABLE=1" in cmd) == p2p_off, run
runs = json.load(open(os.path.join(d, "sampling_runs.json")))["runs"]
assert len(runs) == (3 if p2p_off else 2) and not any(r["stalled"] for r in runs), runs
gate = open(os.path.join(d, "ncu_gate.log")).read().splitlines()
assert len(gate) == 3 * len(runs), gate
assert sum(l.endswith("rank 0 (RANK): profiled, exec ncu") for l in gate) == len(runs), gate
assert sum(l.endswith("rank 1 (RANK): not profiled") for l in gate) == len(runs), gate
rank0 = {int(os.path.basename(f).split(".")[2]) for f in glob.glob(os.path.join(d, "own", "tp.0.*.json"))}
rank1 = {int(os.path.basename(f).split(".")[2]) for f in glob.glob(os.path.join(d, "own", "tp.1.*.json"))}
rows = [r for r in csv.reader(open(os.path.join(d, "ncu_raw_ids.csv")))][2:]
pids = {int(r[1]) for r in rows}
assert rows and pids <= rank0 and not pids & rank1 and len(pids) == len(runs), (pids, rank0)
assert not [r for r in rows if r[2].lower().startswith("nccl")], "an NCCL kernel was profiled"
assert {r[3] for r in rows} == {"0"}, "a result from another GPU"
print("%s: ncu profiled rank 0 only: %d results from %d processes, none stalled" % (run, len(rows), len(pids)))
PY
done
echo ok
