#!/bin/bash
# The multi-rank path through the CLI on the H100 fixtures (tests/fixtures/trace/README.md):
# `llmprof trace dump` shows the RANK records, `llmprof trace perfetto` names one process track
# per rank in rank order, torchrun's agent last.
set -u
. "$(dirname "$0")/lib.bash"

fx="$LP_SRC/tests/fixtures/trace/h100_ranks_gloo"
expect_exit 0 "$LLMPROF" trace dump "$fx/vm.529.lptrace"
grep -q ' RANK rank=1 local_rank=1 world_size=2 local_world_size=2 source="RANK"' "$LP_TMP/stdout" ||
  fail "no RANK record in the dump: $(grep -m3 -E 'RANK|PROCESS' "$LP_TMP/stdout")"
grep -q ' PROCESS pid=529 ppid=502 ' "$LP_TMP/stdout" || fail "no parent pid in the dump"

expect_exit 0 "$LLMPROF" trace perfetto "$fx" -o "$LP_TMP/t.json.gz"
python3 - "$LP_TMP/t.json.gz" <<'PY' || fail "perfetto tracks"
import gzip, json, sys
j = json.load(gzip.open(sys.argv[1]))
names, order = {}, {}
for e in j["traceEvents"]:
    if e.get("ph") != "M":
        continue
    if e["name"] == "process_name":
        names[e["pid"]] = e["args"]["name"]
    if e["name"] == "process_sort_index":
        order[e["pid"]] = e["args"]["sort_index"]
tracks = [names[p] for p in sorted(order, key=order.get)]
want = ["rank 0:", "rank 0 GPU 0:", "rank 1:", "rank 1 GPU 0:", "/opt/torch/.venv/bin/python /opt/torch/.venv/bin/torchrun"]
assert len(tracks) == len(want), tracks
for t, w in zip(tracks, want):
    assert t.startswith(w), (t, w)
print("ok")
PY
echo ok
