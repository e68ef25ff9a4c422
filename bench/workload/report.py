#!/usr/bin/env python3
"""report.py OUT_DIR: reads the runs of run.sh and prints the decode-MBU / prefill / PyTorch table
(markdown) and writes OUT_DIR/bench_workload.json."""
import json
import os
import sys

# Datasheet HBM bandwidth in GB/s by device-name substring (FIELD-NOTES: dense figures).
SPEC_GB_PER_S = [("H200", 4800.0), ("H100 PCIe", 2000.0), ("H100", 3350.0), ("A100-SXM4-80GB", 2039.0),
                 ("A100", 1555.0), ("RTX 3090", 936.0)]


def summary(path):
    try:
        with open(path) as f:
            lines = [json.loads(l) for l in f if l.strip().startswith("{")]
    except (OSError, ValueError):
        return None
    s = [l for l in lines if l.get("summary")]
    return s[-1] if s else None


def main():
    out = sys.argv[1]
    peak = {}
    try:
        with open(os.path.join(out, "peak_bw.jsonl")) as f:
            peak = json.loads(f.readline())
    except (OSError, ValueError):
        pass
    copy_bw = peak.get("copy_gb_per_s")
    rows = []
    res = {"peak": peak}
    for label, fname in (("llmprof-llm fused decode (CUDA graph, PDL; the default)", "llm_graph.jsonl"),
                         ("llmprof-llm fused decode (CUDA graph, --pdl off)", "llm_graph_nopdl.jsonl"),
                         ("llmprof-llm fused decode (eager launches)", "llm_eager.jsonl"),
                         ("llmprof-llm op by op, --gemv own (CUDA graph)", "llm_own_gemv.jsonl"),
                         ("llmprof-llm op by op, --gemv cublas (CUDA graph)", "llm_cublas.jsonl"),
                         ("PyTorch eager (transformers)", "torch.jsonl")):
        s = summary(os.path.join(out, fname))
        res[fname] = s
        if not s:
            rows.append("| %s | failed: see %s | | | | | |" % (label, fname))
            continue
        name = s.get("device_name", "")
        spec = next((bw for key, bw in SPEC_GB_PER_S if key in name), None)
        step_ms = s["decode_ms_per_step"]
        nbytes = s.get("decode_bytes_per_step")
        if nbytes is None and res.get("llm_graph.jsonl"):  # same model and shape as ours
            nbytes = res["llm_graph.jsonl"]["decode_bytes_per_step"]
        gbs = nbytes / step_ms / 1e6 if nbytes and step_ms else None
        flops = s.get("prefill_flops") or (res.get("llm_graph.jsonl") or {}).get("prefill_flops")
        tflops = flops / s["prefill_ms"] / 1e9 if flops and s["prefill_ms"] else None
        s["mbu_vs_copy"] = gbs / copy_bw if gbs and copy_bw else None
        s["mbu_vs_spec"] = gbs / spec if gbs and spec else None
        s["prefill_tflops_calc"] = tflops
        rows.append("| %s | %.3f | %.0f | %s | %s | %.0f | %s |" % (
            label, step_ms, s["tokens_per_s"], "%.0f" % gbs if gbs else "n/a",
            "%.1f%% / %.1f%%" % (100 * s["mbu_vs_copy"], 100 * s["mbu_vs_spec"])
            if s["mbu_vs_copy"] and s["mbu_vs_spec"] else "n/a",
            s["prefill_tokens_per_s"], "%.1f" % tflops if tflops else "n/a"))
    ours, torch_ = res.get("llm_graph.jsonl"), res.get("torch.jsonl")
    ratio = ours["tokens_per_s"] / torch_["tokens_per_s"] if ours and torch_ else None
    res["decode_tokens_per_s_ratio_vs_torch"] = ratio
    print("GPU: %s; device-to-device copy: %s GB/s" % (peak.get("device_name", "?"),
                                                       "%.0f" % copy_bw if copy_bw else "n/a"))
    try:
        with open(os.path.join(out, "versions.txt")) as f:
            res["versions"] = [l.strip() for l in f if l.strip()]
        print("versions: %s" % "; ".join(res["versions"]))
    except OSError:
        pass
    print("llama-3.2-1b bf16, batch 1, prompt 512, 128 new tokens\n")
    print("| run | decode ms/step | decode tok/s | decode GB/s | MBU (vs copy / vs spec) | prefill tok/s | prefill TFLOP/s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    print("\ndecode tokens/s, llmprof-llm / PyTorch eager: %s" % ("%.2fx" % ratio if ratio else "n/a"))
    with open(os.path.join(out, "bench_workload.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
