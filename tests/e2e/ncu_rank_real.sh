#!/bin/bash
# profiling.ncu.rank on a real GPU (tests/fixtures/runs/h100_gloo_ncu_rank, README.md there): two
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
echo ok
