#!/bin/bash
# bench/tracer/sample_check.py unitdiff (run 38) on the units files of session 20's H200 light runs
# (bench/tracer/results/light_run38_call{5,6}_units.tar.xz: `sample_check.py units` of hf_generate.py
# sampled by default (hfa), with seed 5 (hfa5), with the warm-up recorded (hfw), and exact (hfx, hfx2)).
# The steps both processes recorded are matched by generation and index (18: each of 3 generations'
# first 2 and one burst of 4), the exact trace's warm-up generation left out; the default differs
# from the exact run by more than two sampled runs do from each other and than a sampled run with
# the warm-up recorded does from an exact one (bench/tracer/README.md run 38's table). Skipped
# without python3.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
R=$LP_SRC/bench/tracer/results
mkdir -p "$LP_TMP/c5" "$LP_TMP/c6"
tar -C "$LP_TMP/c5" -xJf "$R/light_run38_call5_units.tar.xz" || fail "cannot unpack the call 5 runs"
tar -C "$LP_TMP/c6" -xJf "$R/light_run38_call6_units.tar.xz" || fail "cannot unpack the call 6 runs"
diff_of() { python3 "$LP_SRC/bench/tracer/sample_check.py" unitdiff "$1/units.json" "$2/units.json"; }
diff_of "$LP_TMP/c5/hfa" "$LP_TMP/c5/hfx" >"$LP_TMP/ax.json" || fail "unitdiff hfa hfx failed"
diff_of "$LP_TMP/c5/hfa" "$LP_TMP/c5/hfa5" >"$LP_TMP/aa.json" || fail "unitdiff hfa hfa5 failed"
diff_of "$LP_TMP/c6/hfw" "$LP_TMP/c6/hfx2" >"$LP_TMP/wx.json" || fail "unitdiff hfw hfx2 failed"
python3 - "$LP_TMP" <<'PY' || fail "unitdiff: $(head -c 600 "$LP_TMP/ax.json")"
import json, sys
ax, aa, wx = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("ax", "aa", "wx"))
assert ax["steps_both"] == 18 and wx["steps_both"] == 18, (ax["steps_both"], wx["steps_both"])
assert aa["steps_both"] == 10, aa["steps_both"]  # seeds 0 and 5: the first 2 steps and 4 burst steps in common
assert len(ax["kernels"]) == 23 and all(k["all"]["n"] >= 17 for k in ax["kernels"]), ax["kernels"][:2]
# the first 2 steps of each of 3 generations, on every kernel
assert all(k["first2"]["n"] == 6 for k in ax["kernels"]), [k.get("first2") for k in ax["kernels"]]
assert 1.0 < ax["all_rms_pct"] < 1.4 and 3.0 < ax["all_max_pct"] < 3.3, (ax["all_rms_pct"], ax["all_max_pct"])
assert aa["all_rms_pct"] < 0.5 and wx["all_rms_pct"] < 0.7, (aa["all_rms_pct"], wx["all_rms_pct"])
PY
pass
