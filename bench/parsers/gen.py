#!/usr/bin/env python3
"""gen.py: large synthetic inputs for the parser benchmark, in the real formats.

  gen.py ncu-raw OUT.csv MB          an ncu raw page: header, units row, NVTX stacks, 40 metrics,
                                     thousands separators and n/a cells, ~60 distinct kernels
  gen.py nsys-sqlite OUT.sqlite ROWS an nsys-like export: StringIds, NVTX_EVENTS (decode_all and
                                     decode_step push/pop ranges), CUPTI_ACTIVITY_KIND_RUNTIME and
                                     CUPTI_ACTIVITY_KIND_KERNEL with ROWS kernels of ~60 names
"""
import csv, os, random, sqlite3, sys

NAMES = [f"void gemm_kernel_{i}<float, {i % 7}>(const float *, float *, int)" for i in range(40)] + \
        [f"flash_fwd_{i}(Params)" for i in range(20)]
PUSHPOP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
STARTEND = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"


def ncu_raw(path, mb):
    metrics = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"] + \
              [f"sm__metric_{i:02d}.avg.pct_of_peak_sustained_elapsed" for i in range(37)]
    units = ["nsecond", "byte", "byte"] + ["%"] * 37
    head = ["ID", "Process ID", "Process Name", "Host Name", PUSHPOP, STARTEND, "Kernel Name", "Context",
            "Stream", "Block Size", "Grid Size", "Device", "CC"]
    rnd = random.Random(1)
    target = mb * 1_000_000
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(head + metrics)
        w.writerow([""] * len(head) + units)
        i = 0
        while f.tell() < target:
            rows = []
            for _ in range(1000):
                step = i // 60
                cell = (f'3872  "LLM:decode_all:none:none:none:none:ASCII:decode_all"  '
                        f'"LLM:decode_step:uint64:{step}:none:none:ASCII:decode_step" ')
                vals = [f"{rnd.randint(1000, 99999):,}", f"{rnd.randint(10**6, 10**9):,}", str(rnd.randint(0, 10**6))]
                vals += ["n/a" if rnd.random() < 0.02 else f"{rnd.random() * 100:.2f}" for _ in range(37)]
                rows.append([str(i), "3872", "llmprof-llm", "h100-node", cell, "", NAMES[i % len(NAMES)], "1", "7",
                             "(128, 1, 1)", "(1024, 1, 1)", "0", "9.0"] + vals)
                i += 1
            w.writerows(rows)


def nsys_sqlite(path, n):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "nsys",
                                       "synthetic.sql")).read().split("INSERT INTO StringIds")[0])
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(100 + i, s) for i, s in enumerate(NAMES)])
    gpid = 100 << 24
    gtid = gpid | 101
    steps = max(1, n // 600)
    per_step = n // steps
    db.execute("INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,domainId) VALUES (1,NULL,75,'LLM',?,1)", (gtid,))
    db.execute("INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,domainId) VALUES (10,?,59,'decode_all',?,1)",
               (per_step * steps * 1000 + 100, gtid))
    rnd = random.Random(2)
    kern, rt, nv = [], [], []
    t = 100
    corr = 1
    for s in range(steps):
        nv.append((t, t + per_step * 1000, 59, "decode_step", gtid, 1))
        for _ in range(per_step):
            name = 100 + rnd.randrange(len(NAMES))
            rt.append((t + 1, t + 5, 1, gtid, corr, 7, 0, 0))
            kern.append((t + 50, t + 50 + rnd.randint(1000, 9000), 0, 1, 7, corr, gpid, name, name, 32, 1024, 1, 1,
                         128, 1, 1, 0, 0, 0, 0, corr, 0, 0))
            t += 1000
            corr += 1
        if len(kern) > 200_000:
            flush(db, kern, rt, nv)
    flush(db, kern, rt, nv)
    db.commit()
    db.close()


def flush(db, kern, rt, nv):
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start,end,deviceId,contextId,streamId,correlationId,"
                   "globalPid,demangledName,shortName,registersPerThread,gridX,gridY,gridZ,blockX,blockY,blockZ,"
                   "staticSharedMemory,dynamicSharedMemory,localMemoryPerThread,localMemoryTotal,gridId,graphNodeId,"
                   "graphId) VALUES (" + ",".join("?" * 23) + ")", kern)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", rt)
    db.executemany("INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,domainId) VALUES (?,?,?,?,?,?)", nv)
    kern.clear()
    rt.clear()
    nv.clear()


if __name__ == "__main__":
    if sys.argv[1] == "ncu-raw":
        ncu_raw(sys.argv[2], int(sys.argv[3]))
    else:
        nsys_sqlite(sys.argv[2], int(sys.argv[3]))
