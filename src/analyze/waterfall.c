/* waterfall.c: the gap waterfall of a stage (see waterfall.h): the floor from the model shape and
 * the peaks, each kernel row's excess over its own floor, the idle time inside the stage with its
 * largest gaps located, and the overlap credit. Runs at the end of lp_analyze, after stages,
 * kernels and the perf rows; advice.c turns the top items into a recommendation. */
#include "analyze/waterfall.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"

static const char *fix_for(enum lp_kernel_family f)
{
	switch (f) {
	case LP_FAM_GEMM:
		return "a GEMV/GEMM below its floor: a bandwidth-bound kernel for small batches, better tiles or "
		       "split-K, fused epilogues";
	case LP_FAM_ATTENTION:
		return "attention: split the KV sequence across blocks (flash-decoding), a fused flash-attention "
		       "kernel, a 16-bit or smaller KV cache";
	case LP_FAM_NORM:
	case LP_FAM_ROPE:
	case LP_FAM_SOFTMAX:
	case LP_FAM_ELEMENTWISE:
		return "traffic the model does not need: fuse into the neighbouring GEMM (norm + residual, RoPE into "
		       "QKV, SwiGLU into the MLP epilogue)";
	case LP_FAM_MEMCPY:
		return "copies: keep data on the device, avoid per-step copies";
	case LP_FAM_SAMPLING:
		return "sampling: fuse into the lm_head epilogue, sample on the GPU without a host sync";
	case LP_FAM_COMM:
		return "communication: overlap it with compute (another stream, fused GEMM + all-reduce), fewer or "
		       "larger collectives, a faster transport (NVLink, custom all-reduce)";
	default:
		return "profile it with Nsight Compute (deep mode) to see what bounds it";
	}
}

static const char *const FIX_FLOOR =
	"the hardware limit for this shape: raise the batch, quantize weights or KV cache (fewer bytes), or a "
	"faster GPU";
static const char *const FIX_RESIDUAL =
	"DRAM traffic or FLOPs beyond the model's minimum (activation round trips, re-reads): fuse kernels";
static const char *const FIX_IDLE_LAUNCH =
	"the GPU waits for launches: capture the step in a CUDA graph, launch fewer kernels";
static const char *const FIX_IDLE_SYNC =
	"the GPU waits for the host: remove synchronizations and host work between launches";
static const char *const FIX_OVERLAP = "busy time the kernels' shares leave out (kernels overlapping another stage's)";

static void item(struct lp_waterfall *w, enum lp_wf_kind kind, const char *label, double ms, double floor_ms,
	const char *src, const char *fix)
{
	struct lp_wf_item *it;
	if (w->n_items >= LP_WF_ITEMS)
		return;
	it = &w->items[w->n_items++];
	it->kind = kind;
	snprintf(it->label, sizeof(it->label), "%s", label);
	it->ms = ms;
	it->floor_ms = floor_ms;
	it->floor_source = src;
	it->fix = fix;
}

struct gap {
	const char *prev, *next;     /* kernel names (interned in the profile); NULL: a window edge */
	uint64_t ns;
};

static int cmp_gap_pair(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;
	if (x->prev != y->prev)
		return (uintptr_t)x->prev < (uintptr_t)y->prev ? -1 : 1;
	if (x->next != y->next)
		return (uintptr_t)x->next < (uintptr_t)y->next ? -1 : 1;
	return 0;
}

struct kiv {
	uint32_t pid;
	uint64_t s, e;
	const char *name;
};

/* By process, then start: each process's windows are swept against its own kernels (the ranks of
 * a multi-process job run at the same time on other GPUs). */
static int cmp_kiv(const void *a, const void *b)
{
	const struct kiv *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

static const char *short_of(const struct lp_profile *p, const char *name)
{
	size_t i;
	for (i = 0; i < p->n_kernels; i++)   /* first kernel with that name: its short name */
		if (p->kernels[i].name == name)
			return p->kernels[i].short_name && *p->kernels[i].short_name ? p->kernels[i].short_name : name;
	return name;
}

struct window {
	uint32_t pid;
	uint64_t s, e;
};

static int cmp_window(const void *a, const void *b)
{
	const struct window *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* 1 when range r is one of the stage's iterations or lies under one (a serving loop's decode steps
 * and prefills are the iterations themselves, and sampled ones carry the tracer's flags). */
static int under_iter(const struct lp_profile *p, const struct lp_stage *st, int32_t r)
{
	int guard = 0;
	size_t j;
	for (; r >= 0 && guard++ < 512; r = p->ranges[r].parent)
		for (j = 0; j < st->n_iters; j++)
			if (st->iters[j].range == r)
				return 1;
	return 0;
}

/* The windows whose idle gaps are located: the stage's occurrences (from the push, after GPU work
 * queued before it, for its latency); in a sampled trace whose decode steps were not all recorded,
 * the recorded steps alone (their GPU window from the STAGE events, else their host range): an
 * unrecorded step has no kernels and would read as one long gap. Returns the count, -1 no memory. */
static long gap_windows(const struct lp_profile *p, const struct lp_stage *st, struct window **out, int *sampled)
{
	size_t i, n = 0, skipped = 0;
	*sampled = 0;
	*out = malloc((p->n_ranges + st->n_iters + 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (i = 0; i < p->n_ranges; i++)
		if (p->ranges[i].sample == 2 && under_iter(p, st, (int32_t)i))
			skipped++;
	if (!skipped) {
		for (i = 0; i < st->n_iters; i++) {
			uint64_t ws = st->iters[i].start_ns + st->iters[i].wait_ns;
			uint32_t pid = st->iters[i].range >= 0 ? p->ranges[st->iters[i].range].pid : 0;
			(*out)[n++] = (struct window){ pid, ws, ws + st->iters[i].latency_ns };
		}
		qsort(*out, n, sizeof(**out), cmp_window);
		return (long)n;
	}
	*sampled = 1;
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if ((r->sample != 1 && r->sample != 3) || !under_iter(p, st, (int32_t)i))
			continue;
		if (r->gpu_status == 1 && r->gpu_end_ns > r->gpu_start_ns)
			(*out)[n++] = (struct window){ r->pid, r->gpu_start_ns, r->gpu_end_ns };
		else if (r->end_ns > r->start_ns)
			(*out)[n++] = (struct window){ r->pid, r->start_ns, r->end_ns };
	}
	qsort(*out, n, sizeof(**out), cmp_window);
	return (long)n;
}

/* The idle gaps of one process: its windows (sorted by start) against its kernels (sorted by
 * start), appended to g from n_g on; returns the new count. g has room for n_k + 2 n_win more. */
static size_t sweep(const struct window *win, size_t n_win, const struct kiv *k, size_t n_k, struct gap *g, size_t n_g)
{
	size_t i, j = 0;
	int open = 0;
	uint64_t cur_end = 0;
	const char *cur_name = NULL;
	for (i = 0; i <= n_k; i++) {
		/* close windows that end before this kernel (or all of them at the end) */
		while (j < n_win) {
			uint64_t ws = win[j].s, we = win[j].e;
			if (i < n_k && k[i].s < we)
				break;
			if (open && we > cur_end)
				g[n_g++] = (struct gap){ cur_name, NULL, we - cur_end };
			else if (!open && we > ws)
				g[n_g++] = (struct gap){ NULL, NULL, we - ws };
			open = 0;
			j++;
		}
		if (i == n_k || j == n_win)
			break;
		{
			uint64_t ws = win[j].s;
			if (k[i].s < ws)
				continue;   /* launched inside, ran before the window: not in this window's idle */
			if (!open) {
				if (k[i].s > ws)
					g[n_g++] = (struct gap){ NULL, k[i].name, k[i].s - ws };
				open = 1;
				cur_end = k[i].e;
				cur_name = k[i].name;
			} else if (k[i].s > cur_end) {
				g[n_g++] = (struct gap){ cur_name, k[i].name, k[i].s - cur_end };
				cur_end = k[i].e;
				cur_name = k[i].name;
			} else if (k[i].e > cur_end) {
				cur_end = k[i].e;
				cur_name = k[i].name;
			}
		}
	}
	return n_g;
}

/* The largest idle gaps inside the stage's windows (gap_windows), by (kernel before, kernel after). */
static int locate_gaps(const struct lp_profile *p, const struct lp_stage_set *ss, int32_t si, struct lp_waterfall *w)
{
	const struct lp_stage *st = &ss->stages[si];
	struct window *win = NULL;
	long n_win = gap_windows(p, st, &win, &w->gaps_sampled);
	struct kiv *k = malloc((p->n_kernels + 1) * sizeof(*k));
	struct gap *g = malloc((p->n_kernels + 2 * (n_win > 0 ? (size_t)n_win : 0) + 1) * sizeof(*g));
	size_t n_k = 0, n_g = 0, i, j = 0;
	double per = w->units;
	if (!k || !g || n_win < 0) {
		free(k);
		free(g);
		free(win);
		return -1;
	}
	if (w->gaps_sampled) {   /* gaps of the recorded steps, per recorded step */
		w->gaps_steps = (size_t)n_win;
		per = n_win > 0 ? (double)n_win : 1;
	}
	for (i = 0; i < p->n_kernels && i < ss->n_kernels; i++)
		if (ss->kernel_stage[i] == si && p->kernels[i].end_ns > p->kernels[i].start_ns)
			k[n_k++] = (struct kiv){ p->kernels[i].pid, p->kernels[i].start_ns, p->kernels[i].end_ns,
				p->kernels[i].name };
	qsort(k, n_k, sizeof(*k), cmp_kiv);
	for (i = 0; i < (size_t)n_win;) {   /* one process at a time: its windows against its kernels */
		size_t wa = i, ka;
		while (i < (size_t)n_win && win[i].pid == win[wa].pid)
			i++;
		while (j < n_k && k[j].pid < win[wa].pid)
			j++;
		ka = j;
		while (j < n_k && k[j].pid == win[wa].pid)
			j++;
		n_g = sweep(win + wa, i - wa, k + ka, j - ka, g, n_g);
	}
	qsort(g, n_g, sizeof(*g), cmp_gap_pair);
	{
		struct gap top[LP_WF_GAPS];
		uint64_t cnt[LP_WF_GAPS];
		size_t slot;
		for (i = 0; i < n_g;) {   /* sum per (before, after) pair; keep the LP_WF_GAPS largest */
			uint64_t sum = 0, c = 0;
			size_t at = i;
			for (; i < n_g && !cmp_gap_pair(&g[i], &g[at]); i++) {
				sum += g[i].ns;
				c++;
			}
			for (slot = w->n_gaps; slot > 0 && top[slot - 1].ns < sum; slot--)
				if (slot < LP_WF_GAPS) {
					top[slot] = top[slot - 1];
					cnt[slot] = cnt[slot - 1];
				}
			if (slot >= LP_WF_GAPS)
				continue;
			top[slot] = (struct gap){ g[at].prev, g[at].next, sum };
			cnt[slot] = c;
			if (w->n_gaps < LP_WF_GAPS)
				w->n_gaps++;
		}
		for (slot = 0; slot < w->n_gaps; slot++) {
			struct lp_wf_gap *x = &w->gaps[slot];
			x->ms = (double)top[slot].ns / 1e6 / per;
			x->count = (double)cnt[slot] / per;
			if (!top[slot].prev && !top[slot].next)
				snprintf(x->label, sizeof(x->label), "no kernel in the stage window");
			else if (!top[slot].prev)
				snprintf(x->label, sizeof(x->label), "before the first kernel (%.60s)", short_of(p, top[slot].next));
			else if (!top[slot].next)
				snprintf(x->label, sizeof(x->label), "after the last kernel (%.60s)", short_of(p, top[slot].prev));
			else
				snprintf(x->label, sizeof(x->label), "between %.60s and %.60s", short_of(p, top[slot].prev),
					short_of(p, top[slot].next));
		}
	}
	free(k);
	free(g);
	free(win);
	return 0;
}

/* The model's floors of the stage per unit: whole stage, GEMM (weights, matmul FLOPs) and
 * attention (KV cache, attention FLOPs). 0 when unknown, with the reason in w->floor_source. */
static void model_floors(const struct lp_analysis *a, int kind, struct lp_waterfall *w, double *f_gemm, double *f_att)
{
	const struct lp_model_shape *m = &a->model;
	double bw = a->peak.bytes_per_s, pk = a->peak.flops_per_s, B = (double)a->batch, P = (double)a->prompt_len;
	double bytes, flops, w_bytes, att_flops;
	*f_gemm = *f_att = 0;
	if (!a->have_model || !lp_dtype_bytes(m->dtype)) {
		snprintf(w->floor_source, sizeof(w->floor_source), "floor n/a: %.150s",
			a->have_model ? "unknown dtype" : a->model_why);
		return;
	}
	if (!a->peak.bw_valid || !a->peak.flops_valid || bw <= 0 || pk <= 0) {
		snprintf(w->floor_source, sizeof(w->floor_source), "floor n/a: peaks unknown (%.140s)",
			!a->peak.bw_valid ? a->peak.bw_source : a->peak.flops_source);
		return;
	}
	if (!a->batch || !a->prompt_len || (kind == 1 && !a->steps)) {
		snprintf(w->floor_source, sizeof(w->floor_source), "floor n/a: %.150s",
			a->tokens_why[0] ? a->tokens_why : "token counts unknown");
		return;
	}
	if (kind == 0) {
		bytes = lp_bytes_prefill(m, a->batch, a->prompt_len);
		flops = lp_flops_prefill(m, a->batch, a->prompt_len);
		w_bytes = lp_bytes_weights_step(m, B * P);
		att_flops = lp_flops_attention_per_ctx(m) * B * P * (P + 1.0) / 2.0;
	} else {
		double n = (double)a->steps;
		bytes = lp_bytes_decode(m, a->batch, a->prompt_len, a->steps) / n;
		flops = lp_flops_decode(m, a->batch, a->prompt_len, a->steps) / n;
		w_bytes = lp_bytes_weights_step(m, B);
		att_flops = lp_flops_attention_per_ctx(m) * B * (n * P + n * (n + 1.0) / 2.0) / n;
	}
	*f_gemm = fmax(w_bytes / bw, (flops - att_flops) / pk) * 1e3;
	*f_att = fmax((bytes - w_bytes) / bw, att_flops / pk) * 1e3;
	w->floor_ms = fmax(bytes / bw, flops / pk) * 1e3;
	if (a->measured_bw_gbs > 0)
		w->floor_measured_ms = fmax(bytes / (a->measured_bw_gbs * 1e9), flops / pk) * 1e3;
	snprintf(w->floor_source, sizeof(w->floor_source), "%s: %.1f MB / %.0f GB/s = %.4f ms, %.3f GFLOP / %.1f TFLOP/s = "
		"%.4f ms (%.160s)", bytes / bw >= flops / pk ? "memory" : "compute", bytes / 1e6, bw / 1e9, bytes / bw * 1e3,
		flops / 1e9, pk / 1e12, flops / pk * 1e3, a->peak.bw_source);
}

struct row {
	double k_ms, f_ms, excess;
	const char *src;
	size_t r;
};

static int cmp_excess(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->excess != y->excess)
		return x->excess < y->excess ? 1 : -1;
	return (x->r > y->r) - (x->r < y->r);
}

static int one(const struct lp_profile *p, struct lp_analysis *a, int kind, struct lp_waterfall *w)
{
	const struct lp_stage *st = lp_stages_find(&a->stages, kind == 0 ? LP_STAGE_PREFILL : LP_STAGE_DECODE);
	const struct lp_kernel_set *ks = &a->kernels;
	double f_gemm, f_att, fam_ms[LP_FAM_COUNT] = { 0 }, sum_f = 0, sum_items = 0, rest = 0, rest_f = 0;
	double idle, credit;
	struct row *rows;
	size_t i, n = 0, n_rest = 0;
	int32_t si = -1;
	char label[112];

	memset(w, 0, sizeof(*w));
	w->stage = kind == 0 ? "prefill" : "decode";
	w->unit = kind == 0 ? "iteration" : "step";
	w->top[0] = w->top[1] = w->top[2] = -1;
	if (!st || !st->n_iters || !a->stages.have_gpu || st->lat_ms.mean <= 0) {
		snprintf(w->why, sizeof(w->why), "%s", !st || !st->n_iters ? "no measured stage" :
			!a->stages.have_gpu ? "CPU run: no GPU kernels" : "latency is 0");
		return 0;
	}
	if (kind == 1 && !a->steps) {
		snprintf(w->why, sizeof(w->why), "decode steps unknown");
		return 0;
	}
	for (i = 0; i < a->stages.n_stages; i++)
		if (&a->stages.stages[i] == st)
			si = (int32_t)i;
	w->units = (double)st->n_iters * (kind == 1 ? (double)a->steps : 1.0);
	w->latency_ms = st->lat_ms.mean / (kind == 1 ? (double)a->steps : 1.0);
	w->busy_ms = st->gpu_ms.mean / (kind == 1 ? (double)a->steps : 1.0);
	w->kernel_ms = st->kernel_ms.mean / (kind == 1 ? (double)a->steps : 1.0);
	model_floors(a, kind, w, &f_gemm, &f_att);

	rows = malloc((ks->n_rows + 1) * sizeof(*rows));
	if (!rows)
		return -1;
	for (i = 0; i < ks->n_rows; i++)
		fam_ms[ks->rows[i].family] += ks->rows[i].stage_busy_ms[kind] / w->units;
	for (i = 0; i < ks->n_rows; i++) {
		const struct lp_kernel_row *r = &ks->rows[i];
		const struct lp_kernel_ncu *nc = &r->ncu;
		double k_ms = r->stage_busy_ms[kind] / w->units, calls = (double)r->stage_calls[kind] / w->units;
		struct row *x;
		if (k_ms <= 0)
			continue;
		x = &rows[n++];
		x->r = i;
		x->k_ms = k_ms;
		if (nc->joined && !isnan(nc->dram_bytes) && w->floor_ms > 0) {
			double fb = nc->dram_bytes * calls / a->peak.bytes_per_s;
			double ff = isnan(nc->flops) ? 0 : nc->flops * calls / a->peak.flops_per_s;
			x->f_ms = fmax(fb, ff) * 1e3;
			x->src = "ncu";
			w->used_ncu = 1;
		} else if (r->family == LP_FAM_GEMM && fam_ms[LP_FAM_GEMM] > 0) {
			x->f_ms = f_gemm * k_ms / fam_ms[LP_FAM_GEMM];
			x->src = w->floor_ms > 0 ? "model" : "none";
		} else if (r->family == LP_FAM_ATTENTION && fam_ms[LP_FAM_ATTENTION] > 0) {
			x->f_ms = f_att * k_ms / fam_ms[LP_FAM_ATTENTION];
			x->src = w->floor_ms > 0 ? "model" : "none";
		} else {
			x->f_ms = 0;
			x->src = w->floor_ms > 0 ? "model" : "none";
		}
		x->excess = x->k_ms - x->f_ms;   /* busy share: overlap already taken out */
		sum_f += x->f_ms;
	}
	qsort(rows, n, sizeof(*rows), cmp_excess);

	item(w, LP_WF_FLOOR, "floor (speed of light for this shape)", w->floor_ms, 0, NULL, FIX_FLOOR);
	for (i = 0; i < n; i++) {
		const struct lp_kernel_row *r = &ks->rows[rows[i].r];
		if (i < LP_WF_KERNELS) {
			snprintf(label, sizeof(label), "%s", r->label ? r->label : r->short_name);
			item(w, LP_WF_KERNEL, label, rows[i].excess, rows[i].f_ms, rows[i].src, fix_for(r->family));
		} else {
			rest += rows[i].excess;
			rest_f += rows[i].f_ms;
			n_rest++;
		}
	}
	if (n_rest) {
		snprintf(label, sizeof(label), "%zu other kernels", n_rest);
		item(w, LP_WF_KERNEL, label, rest, rest_f, "model", "the smaller kernels together: fusion cuts their "
		     "launches and their traffic");
	}
	if (w->floor_ms > 0 || sum_f > 0) {
		/* the model floor split over the GEMM/attention kernels sums back to it up to rounding:
		 * that is no residual ("-0.0000 ms, stage floor not held", run 36's reports) */
		double resid = sum_f - w->floor_ms;
		if (fabs(resid) <= 1e-9 * fmax(sum_f, w->floor_ms))
			resid = 0;
		snprintf(label, sizeof(label), "%s", resid >= 0 ? "kernel floors above the stage floor"
			: "stage floor not held by a GEMM/attention kernel");
		item(w, LP_WF_RESIDUAL, label, resid, 0, NULL, FIX_RESIDUAL);
	}
	idle = w->latency_ms - w->busy_ms;
	item(w, LP_WF_IDLE, "GPU idle inside the stage", idle, 0, NULL,
	     st->host_ms.mean >= LP_STAGE_HOST_BUSY * st->lat_ms.mean ? FIX_IDLE_LAUNCH : FIX_IDLE_SYNC);
	w->overlap_ms = w->kernel_ms - w->busy_ms;
	for (credit = w->busy_ms, i = 0; i < n; i++)
		credit -= rows[i].k_ms;
	/* 1e-6: a sampled stage's busy time is scaled in whole nanoseconds, its kernels' shares are not */
	if (fabs(credit) > 1e-6 * (w->busy_ms + 1))
		item(w, LP_WF_OVERLAP, "busy time outside the kernels' shares", credit, 0, NULL, FIX_OVERLAP);
	free(rows);

	/* the three largest items above the floor */
	for (i = 1; i < w->n_items; i++) {
		int t;
		sum_items += w->items[i].ms;
		if (w->items[i].ms <= 0 || w->items[i].kind == LP_WF_OVERLAP)
			continue;
		for (t = 0; t < 3; t++)
			if (w->top[t] < 0 || w->items[i].ms > w->items[w->top[t]].ms) {
				memmove(&w->top[t + 1], &w->top[t], (size_t)(2 - t) * sizeof(w->top[0]));
				w->top[t] = (int)i;
				break;
			}
	}
	(void)sum_items;
	w->valid = 1;
	return locate_gaps(p, &a->stages, si, w);
}

int lp_waterfall_compute(const struct lp_profile *p, struct lp_analysis *a)
{
	if (one(p, a, 0, &a->waterfall[0]) < 0 || one(p, a, 1, &a->waterfall[1]) < 0)
		return -1;
	return 0;
}
