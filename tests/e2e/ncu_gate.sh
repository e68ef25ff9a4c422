#!/bin/bash
# libllmprof_ncu_gate.so (inject/ncu_gate.c): with LLMPROF_NCU_RANK=r and LLMPROF_NCU_EXEC (ncu's
# path and options, 0x1f-separated), the process whose launcher rank is r re-executes itself under
# "ncu" before main (same pid, its own argv appended); other ranks, processes without a rank, runs
# without LLMPROF_NCU_EXEC, and everything under ncu (LLMPROF_NCU_GATE_DONE) run untouched. A
# fake ncu plays the tool: it prints its argv and runs the program.
set -u
. "$(dirname "$0")/lib.bash"

gate="$LP_BUILD/lib/libllmprof_ncu_gate.so"
probe="$LP_BUILD/tests/lp_getenv_probe"
[ -f "$gate" ] && [ -x "$probe" ] || fail "libllmprof_ncu_gate.so or lp_getenv_probe not built"
fake="$LP_TMP/fake ncu"
cat >"$fake" <<'SH'
#!/bin/bash
echo "ncu pid=$$ argv:$(printf ' [%s]' "$@")"
shift 2
exec "$@"
SH
chmod +x "$fake"
SEP=$(printf '\037')

run() {  # run ENV...: the probe under the gate
  env -u RANK -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u MV2_COMM_WORLD_RANK -u SLURM_PROCID \
    -u LLMPROF_NCU_GATE_DONE LD_PRELOAD="$gate" LLMPROF_NCU_GATE_LOG="$LP_TMP/gate.log" "$@" \
    "$probe" LLMPROF_NCU_GATE_DONE RANK
}
EXEC="LLMPROF_NCU_EXEC=$fake${SEP}--opt${SEP}a b"

# the chosen rank: ncu with its options, then the program's own argv; the program runs under it
out=$(run LLMPROF_NCU_RANK=0 RANK=0 "$EXEC") || fail "probe failed: $out"
want="ncu pid=PID argv: [--opt] [a b] [$probe] [LLMPROF_NCU_GATE_DONE] [RANK]
LLMPROF_NCU_GATE_DONE=1
RANK=0"
[ "$(echo "$out" | sed 's/pid=[0-9]*/pid=PID/')" = "$want" ] || fail "rank 0 under ncu: got
$out"
# the exec kept the pid: the log's pid is the one ncu reports as its own
pid=$(echo "$out" | sed -n 's/^ncu pid=\([0-9]*\) .*/\1/p')
grep -q "^pid $pid rank 0 (RANK): profiled, exec ncu$" "$LP_TMP/gate.log" || fail "log: $(cat "$LP_TMP/gate.log")"

out=$(run LLMPROF_NCU_RANK=0 RANK=1 "$EXEC") || fail "probe failed"
[ "$out" = "LLMPROF_NCU_GATE_DONE unset
RANK=1" ] || fail "rank 1 with rank 0 chosen went under ncu: $out"
grep -q "rank 1 (RANK): not profiled" "$LP_TMP/gate.log" || fail "no log line for rank 1"

out=$(run LLMPROF_NCU_RANK=2 OMPI_COMM_WORLD_RANK=2 "$EXEC") || fail "probe failed"
echo "$out" | grep -q '^ncu pid=' || fail "Open MPI rank 2 with rank 2 chosen did not go under ncu: $out"
out=$(run LLMPROF_NCU_RANK=1 SLURM_PROCID=3 "$EXEC") || fail "probe failed"
echo "$out" | grep -q '^ncu' && fail "srun rank 3 with rank 1 chosen went under ncu: $out"
out=$(run LLMPROF_NCU_RANK=0 "$EXEC") || fail "probe failed"
[ "$out" = "LLMPROF_NCU_GATE_DONE unset
RANK unset" ] || fail "a process without a rank (the launcher) went under ncu: $out"
grep -q "rank -1 (no rank variable): not profiled" "$LP_TMP/gate.log" || fail "no log line for the launcher"
# without LLMPROF_NCU_EXEC, or already under ncu, the gate does nothing
out=$(run LLMPROF_NCU_RANK=0 RANK=0) || fail "probe failed"
[ "$out" = "LLMPROF_NCU_GATE_DONE unset
RANK=0" ] || fail "without LLMPROF_NCU_EXEC the gate acted: $out"
out=$(run LLMPROF_NCU_RANK=0 RANK=0 LLMPROF_NCU_GATE_DONE=1 "$EXEC") || fail "probe failed"
echo "$out" | grep -q '^ncu' && fail "a process already under ncu went under it again: $out"
# ncu missing: the rank runs unprofiled and the log says why
out=$(run LLMPROF_NCU_RANK=0 RANK=0 "LLMPROF_NCU_EXEC=$LP_TMP/no-ncu${SEP}--x") || fail "probe failed"
[ "$out" = "LLMPROF_NCU_GATE_DONE unset
RANK=0" ] || fail "a failed exec: $out"
grep -q "rank 0 (RANK): exec ncu failed (no such file), not profiled" "$LP_TMP/gate.log" || fail "no log line for the failed exec"
echo "ok"
