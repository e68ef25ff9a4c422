#!/bin/bash
# nvtx_count.sh: how many NVTX events a decode step of the unmodified generate() program sends to the
# injection (bench/tracer/README.md run 21, next step; not run yet). Traces examples/hf_generate_plain.py
# with the tracer and CUPTI never started (LLMPROF_TRACE_CUPTI=0), then counts the trace's ranges by name
# (per decode step) and its NVTX records by kind and domain. Run from the tree root on the GPU machine
# with build/lib/libllmprof_inject.so (Release).
cd "$(dirname "$0")/../.."
L=$PWD/build/lib/libllmprof_inject.so
env PYTHONPATH=$PWD/python/llmprof_auto/site:$PWD/python LLMPROF_AUTO_DIR=/tmp/auto1 CUDA_INJECTION64_PATH=$L NVTX_INJECTION64_PATH=$L \
  LLMPROF_TRACE_CUPTI=0 LLMPROF_TRACE_SAMPLE=off LLMPROF_TRACE_DIR=/tmp/t1 LLMPROF_TRACE_LOG=/tmp/t1.log \
  timeout 120 python3 examples/hf_generate_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 2 --step-times > /tmp/o1.txt 2>&1
tail -2 /tmp/t1.log
python3 - <<'PY'
import sys, collections
sys.path.insert(0, 'bench/tracer')
import sample_check as s
t = s.read_trace('/tmp/t1')
names = collections.Counter()
for rid, r in t['ranges'].items():
    names[s.name_of(t, r[0])] += 1
steps = names.get('decode_step', 0)
print('ranges in all:', sum(names.values()), 'decode_step ranges:', steps)
for n, c in names.most_common(25):
    print('%8d  %.1f a step  %s' % (c, c / max(steps, 1), n[:100]))
import os, struct
f = [x for x in os.listdir('/tmp/t1') if x.endswith('.lptrace')][0]
data = open('/tmp/t1/' + f, 'rb').read()
off = 16; ev = collections.Counter(); dom = collections.Counter(); types = collections.Counter()
while off + 8 <= len(data):
    typ, _f, size = s.REC.unpack_from(data, off)
    p = off + 8
    if p + size > len(data): break
    types[typ] += 1
    if typ == 6:
        e, _pt, _r, tid, d, name, rid, ts, _pl, _c, _col = s.NVTX.unpack_from(data, p)
        ev[e] += 1; dom[d] += 1
    off = p + size
print('record types', dict(types)); print('nvtx events by kind', dict(ev)); print('by domain', dict(dom))
PY
