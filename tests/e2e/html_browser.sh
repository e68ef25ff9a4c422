#!/bin/bash
# html_browser.sh: report.html opened in a real browser (headless Chromium, Debian's `chromium`,
# installed by `scripts/install-deps --tests`): the H100 run fixture tests/fixtures/runs/
# h100_llm_tiny_graph and h100_llm_tiny_deep (Nsight Compute: roofline, region tree) rebuilt by
# `llmprof report`, and a CPU run (`llmprof run --mode light`).
# For each page: no console message (errors, CSP refusals, uncaught exceptions), no network request
# made by the page (Chromium's net log), every <figure> holds an SVG with marks in the DOM after
# scripts ran, the SVG files in figures/ are the ones inlined, and a screenshot is saved in $LP_TMP
# (look at them: shots/*.png). A negative control (a page with an external image and a script
# error) must be caught by the same checks. Skips (77) when chromium is not installed.
. "$LP_SRC/tests/e2e/lib.bash"

CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome) ||
  skip "chromium is not installed (scripts/install-deps --tests installs it)"
command -v python3 >/dev/null || skip "python3 is not installed"
mkdir -p shots

# browse NAME FILE: dump the DOM after scripts, the console and the net log, and a screenshot.
browse() {
  local name=$1 file=$2 flags
  flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
    --disable-component-update --disable-sync --disable-default-apps --disable-extensions --mute-audio)
  rm -rf "$LP_TMP/ud-$name"
  timeout 120 "$CHROMIUM" "${flags[@]}" --user-data-dir="$LP_TMP/ud-$name" --enable-logging=stderr --v=0 \
    --log-net-log="$LP_TMP/$name.net.json" --virtual-time-budget=3000 --dump-dom "file://$file" \
    >"$LP_TMP/$name.dom.html" 2>"$LP_TMP/$name.console.txt" || fail "chromium could not load $file (dump-dom)"
  rm -rf "$LP_TMP/ud-$name"
  timeout 120 "$CHROMIUM" "${flags[@]}" --user-data-dir="$LP_TMP/ud-$name" --hide-scrollbars \
    --window-size=1280,4000 --screenshot="$LP_TMP/shots/$name.png" "file://$file" \
    >/dev/null 2>"$LP_TMP/$name.shot.txt" || fail "chromium could not take a screenshot of $file"
  [ -s "$LP_TMP/shots/$name.png" ] || fail "no screenshot for $name"
}

# check NAME RUN_DIR|-: the checks above; prints what it found, exits 1 on the first problem.
check() {
  python3 - "$LP_TMP/$1.dom.html" "$LP_TMP/$1.console.txt" "$LP_TMP/$1.net.json" "$2" <<'PY'
import html.parser, json, os, re, sys
dom_path, console_path, net_path, run_dir = sys.argv[1:5]
problems = []

# console: Chromium logs every console message and uncaught exception as INFO:CONSOLE
for line in open(console_path, errors="replace"):
    if ":CONSOLE" in line:
        problems.append("console: " + line.strip()[:300])

# network: requests the page made (Chromium's own background requests have no origin)
net = json.load(open(net_path))
types = {v: k for k, v in net["constants"]["logEventTypes"].items()}
for e in net.get("events", []):
    p = e.get("params", {})
    if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in p and p.get("initiator") != "not an origin":
        url = p.get("url", "")
        if not url.startswith(("file:", "data:")):
            problems.append("network request by the page: " + url[:200])

# the DOM after scripts: every <figure> holds an <svg> with marks
class Figs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.figs, self.cur, self.depth, self.svg = [], None, 0, 0
    def handle_starttag(self, tag, attrs):
        if tag == "figure":
            self.cur = {"id": dict(attrs).get("id", "?"), "svg": 0, "marks": 0}
            self.figs.append(self.cur)
        elif self.cur is not None:
            if tag == "svg":
                self.cur["svg"] += 1
            elif tag in ("rect", "circle", "polyline", "line", "path"):
                self.cur["marks"] += 1
    handle_startendtag = handle_starttag
    def handle_endtag(self, tag):
        if tag == "figure":
            self.cur = None
dom = open(dom_path, errors="replace").read()
f = Figs()
f.feed(dom)
if "<h1>llmprof report" not in dom:
    problems.append("the page did not render (no report title in the DOM)")
for fig in f.figs:
    if fig["svg"] != 1 or fig["marks"] < 3:
        problems.append(f"figure {fig['id']}: {fig['svg']} svg, {fig['marks']} marks")
print(f"figures: {', '.join(x['id'] + ' (' + str(x['marks']) + ' marks)' for x in f.figs)}")
if run_dir != "-":
    files = sorted(os.listdir(os.path.join(run_dir, "figures")))
    ids = sorted("fig-" + n[:-4] for n in files if n.endswith(".svg"))
    if ids != sorted(x["id"] for x in f.figs):
        problems.append(f"figures/ holds {files}, the page {[x['id'] for x in f.figs]}")
    page = open(os.path.join(run_dir, "report.html"), encoding="utf-8").read()
    for n in files:
        if open(os.path.join(run_dir, "figures", n), encoding="utf-8").read() not in page:
            problems.append(f"figures/{n} is not the figure inlined in report.html")
    size = os.path.getsize(os.path.join(run_dir, "report.html"))
    print(f"report.html: {size} bytes")
    if size > 2_000_000:
        problems.append(f"report.html is {size} bytes (over 2 MB)")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
}

# 0. the checks catch what they are for: an external image and a script error
cat >neg.html <<'EOF'
<!DOCTYPE html><html><body><h1>llmprof report: bad</h1>
<figure id="fig-x"><svg xmlns="http://www.w3.org/2000/svg"></svg></figure>
<img src="http://198.51.100.1/x.png"><script>undefined_function();</script></body></html>
EOF
browse neg "$LP_TMP/neg.html"
check neg - >neg.out && fail "the checks passed a page with a network request and a script error: $(cat neg.out)"
grep -q "network request by the page: http://198.51.100.1/x.png" neg.out || fail "network request not caught: $(cat neg.out)"
grep -q "console: .*undefined_function" neg.out || fail "script error not caught: $(cat neg.out)"
grep -q "figure fig-x: 1 svg, 0 marks" neg.out || fail "empty figure not caught: $(cat neg.out)"

# 1. a real H100 run (the reference workload, CUDA graph decode, PDL overlap)
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_graph" gpu
expect_exit 0 "$LLMPROF" report gpu
grep -qx "gpu/report.html" stdout || fail "llmprof report does not list report.html: $(cat stdout)"
cp gpu/report.html gpu.first.html
expect_exit 0 env -u BROWSER "$LLMPROF" report --open gpu
grep -qx "file://$LP_TMP/gpu/report.html" stdout || fail "--open did not print the file:// URL: $(cat stdout)"
cmp -s gpu/report.html gpu.first.html || fail "report.html differs between two identical rebuilds"
for f in timeline step_latency kernel_families top_kernels operators mfu; do
  [ -s "gpu/figures/$f.svg" ] || fail "gpu/figures/$f.svg missing"
  grep -q "figures/$f.svg" gpu/report.md || fail "report.md does not show figures/$f.svg"
  grep -q "figures/$f.svg" gpu/stakeholder_summary.md || fail "stakeholder_summary.md does not show figures/$f.svg"
done
[ -e gpu/figures/roofline.svg ] && fail "a roofline without Nsight Compute data"
browse gpu "$LP_TMP/gpu/report.html"
check gpu "$LP_TMP/gpu" >gpu.out || fail "GPU run report.html: $(cat gpu.out)"
cat gpu.out

# a deep H100 run: Nsight Compute metrics (the roofline) and the NVTX-region tree
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_deep" deep
expect_exit 0 "$LLMPROF" report deep
[ -s deep/figures/roofline.svg ] || fail "no roofline for a run with Nsight Compute metrics"
grep -q '<h2 id="regions">NVTX regions' deep/report.html || fail "no NVTX-region tree in the deep run's report.html"
grep -q 'LLM@decode_all::decode_step' deep/report.html || fail "the region tree misses LLM@decode_all::decode_step"
browse deep "$LP_TMP/deep/report.html"
check deep "$LP_TMP/deep" >deep.out || fail "deep run report.html: $(cat deep.out)"
cat deep.out

# the sorter: a click on "busy ms" of the kernel table sorts its rows by it, ascending
sed 's|</body>|<script>document.querySelectorAll("#kernels ~ div table.sortable")[0].tHead.rows[0].cells[2].click();</script></body>|' \
  deep/report.html >deep/sorted.html
rm -rf "$LP_TMP/ud-sort"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --user-data-dir="$LP_TMP/ud-sort" --virtual-time-budget=3000 --dump-dom "file://$LP_TMP/deep/sorted.html" \
  >sorted.dom.html 2>/dev/null || fail "chromium could not load sorted.html"
python3 - sorted.dom.html <<'PY' || fail "clicking a column header did not sort the kernel table"
import re, sys
dom = open(sys.argv[1], errors="replace").read()
table = dom[dom.index('id="kernels"'):]
table = table[table.index("<tbody>"):table.index("</tbody>")]
busy = [float(re.findall(r'data-v="([^"]*)"', row)[1]) for row in table.split("<tr>")[1:]]
print("busy ms after the click:", busy[:6], "...")
sys.exit(0 if len(busy) > 3 and busy == sorted(busy) and busy[0] < busy[-1] else 1)
PY

# it prints: a PDF comes out of the print style
rm -rf "$LP_TMP/ud-pdf"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --user-data-dir="$LP_TMP/ud-pdf" --no-pdf-header-footer --print-to-pdf="$LP_TMP/shots/deep.pdf" \
  "file://$LP_TMP/deep/report.html" >/dev/null 2>&1 || fail "chromium could not print report.html"
[ "$(head -c 5 shots/deep.pdf)" = "%PDF-" ] && [ "$(stat -c %s shots/deep.pdf)" -gt 20000 ] || fail "no PDF printed"

# $BROWSER is started on the URL
expect_exit 0 env BROWSER="sh -c 'echo \"\$0\" >\"$LP_TMP/browser.url\"'" "$LLMPROF" report --open gpu
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s browser.url ] && break; sleep 0.2; done
grep -qx "file://$LP_TMP/gpu/report.html" browser.url || fail "\$BROWSER was not started on the URL: $(cat browser.url 2>&1)"

# 2. a CPU run on this machine
expect_exit 0 "$LLMPROF" run --mode light run.id=html_cpu run.device=cpu inputs.new_tokens=16
cpu=$LP_TMP/tmp/stage2/html_cpu
[ -s "$cpu/report.html" ] || fail "the CPU run wrote no report.html"
for f in kernel_families top_kernels mfu roofline; do
  [ -e "$cpu/figures/$f.svg" ] && fail "a CPU run has figures/$f.svg"
done
browse cpu "$cpu/report.html"
check cpu "$cpu" >cpu.out || fail "CPU run report.html: $(cat cpu.out)"
cat cpu.out
echo "screenshots: $LP_TMP/shots/"
pass
