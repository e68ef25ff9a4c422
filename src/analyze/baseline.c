/* baseline.c: the program against the reference workload on the same shape (see baseline.h). */
#include "analyze/baseline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analysis.h"

static double num_at(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The reference's perf row of `stage` ("prefill" / "decode"). */
static const json_t *perf_row(const json_t *ref, const char *stage)
{
	const json_t *perf = json_object_get(ref, "perf"), *row;
	size_t i;
	json_array_foreach(perf, i, row) {
		const json_t *s = json_object_get(row, "stage");
		if (json_is_string(s) && !strcmp(json_string_value(s), stage))
			return row;
	}
	return NULL;
}

static void row(struct lp_baseline_row *r, const char *what, const char *stage, int lower_is_better,
	const struct lp_num *program, double reference, const json_t *ref)
{
	const json_t *pr = perf_row(ref, stage);
	memset(r, 0, sizeof(*r));
	r->what = what;
	r->perf_stage = stage;
	r->lower_is_better = lower_is_better;
	r->ref_mbu = num_at(pr, "mbu_latency");
	r->ref_mfu = num_at(pr, "mfu_latency");
	r->program = program->valid ? program->value : NAN;
	r->reference = reference;
	if (!program->valid)
		snprintf(r->why, sizeof(r->why), "the program's: %.140s", program->why[0] ? program->why : "unknown");
	else if (!(reference > 0))
		snprintf(r->why, sizeof(r->why), "the reference's is unknown");
	else if (!(r->program > 0))
		snprintf(r->why, sizeof(r->why), "the program's is zero");
	else {
		r->valid = 1;
		r->ratio = lower_is_better ? r->program / r->reference : r->reference / r->program;
	}
}

void lp_baseline_compare(const json_t *ref, const char *ref_why, const struct lp_analysis *a,
	struct lp_baseline *out)
{
	const json_t *tok = json_object_get(ref, "tokens"), *name;
	size_t i;
	memset(out, 0, sizeof(*out));
	if (!json_is_object(ref)) {
		snprintf(out->why, sizeof(out->why), "%.250s", ref_why && *ref_why ? ref_why : "no reference run");
		return;
	}
	out->present = 1;
	name = json_object_get(json_object_get(ref, "model"), "name");
	if (json_is_string(name))
		snprintf(out->ref_model, sizeof(out->ref_model), "%s", json_string_value(name));
	out->batch = json_is_integer(json_object_get(tok, "batch")) ? json_integer_value(json_object_get(tok, "batch")) : 0;
	out->prompt_len = json_is_integer(json_object_get(tok, "prompt_len")) ? json_integer_value(json_object_get(tok, "prompt_len")) : 0;
	out->steps = json_is_integer(json_object_get(tok, "decode_steps")) ? json_integer_value(json_object_get(tok, "decode_steps")) : 0;
	row(&out->rows[LP_BASELINE_TTFT], "time to first token (ms)", "prefill", 1, &a->ttft_ms, num_at(tok, "ttft_ms"), ref);
	row(&out->rows[LP_BASELINE_STEP], "decode latency per step (ms)", "decode", 1, &a->decode_step_ms,
		num_at(tok, "decode_step_ms"), ref);
	row(&out->rows[LP_BASELINE_TOKS], "decode tokens/s", "decode", 0, &a->decode_tokens_per_s,
		num_at(tok, "decode_tokens_per_s"), ref);
	for (i = 0; i < LP_BASELINE_ROWS; i++)
		out->valid |= out->rows[i].valid;
	if (!out->valid)
		snprintf(out->why, sizeof(out->why), "neither run has a stage the other has");
}
