#!/usr/bin/env python3
"""ref.py: the same aggregations as bench_parsers, in Python (csv module, sqlite3), for the
side-by-side ratio. Prints one JSON line like the C driver."""
import csv, json, os, resource, sqlite3, sys, time
from collections import defaultdict


def num(s):
    if s in ("", "n/a", "nan", "-"):
        return None
    return float(s.replace(",", ""))


def ncu_raw(path):
    agg = {}
    rows = 0
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = next(r)
        units = next(r)
        ident = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                 "Grid Size", "Device", "CC"}
        kcol, dcol = head.index("Kernel Name"), head.index("Device")
        mcols = [i for i, h in enumerate(head) if h not in ident and "Range" not in h]
        dur = head.index("gpu__time_duration.sum")
        for row in r:
            rows += 1
            key = (row[kcol], row[dcol])
            a = agg.get(key)
            if a is None:
                a = agg[key] = {"calls": 0, "total": 0.0, "sum": [0.0] * len(mcols), "n": [0] * len(mcols)}
            a["calls"] += 1
            for j, c in enumerate(mcols):
                v = num(row[c])
                if v is not None:
                    a["sum"][j] += v
                    a["n"][j] += 1
            d = num(row[dur])
            a["total"] += (d or 0) / 1e6
    return rows, len(agg)


def nsys_table(path):
    db = sqlite3.connect(path)
    agg = defaultdict(lambda: [0, 0.0])
    rows = 0
    for name, dev, s, e in db.execute("SELECT demangledName, deviceId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        a = agg[(name, dev)]
        a[0] += 1
        a[1] += (e - s) / 1e6
        rows += 1
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    out = {(names[k[0]], k[1]): v for k, v in agg.items()}
    return rows, len(out)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    t0, c0 = time.monotonic(), time.process_time()
    rows, distinct = ncu_raw(path) if mode == "ncu-raw" else nsys_table(path)
    dt, dc = time.monotonic() - t0, time.process_time() - c0
    size = os.path.getsize(path)
    print(json.dumps({"impl": "python", "mode": mode, "bytes": size, "rows": rows, "seconds": round(dt, 4),
                      "cpu_seconds": round(dc, 4), "mb_per_s": round(size / 1e6 / dc, 1), "rows_per_s": round(rows / dc),
                      "distinct_kernels": distinct,
                      "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    main()
