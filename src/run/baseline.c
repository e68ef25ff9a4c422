/* baseline.c: the baseline phase (run.baseline=reference): the reference workload, llmprof-llm, on
 * the shape the run found, as a nested light run in <run>/baseline/ (analyze/baseline.h compares
 * it with the program).
 *
 * The shape: the config's model (model=<name>, model.hf_config, model.*) when it has one, else the
 * Hugging Face config the program's account reports (python/llmprof_auto: auto/program.<pid>.json);
 * batch, prompt length and new tokens from inputs.* else the account's counts (new tokens = the
 * program's decode steps: the reference runs one decode step per new token). The model is written
 * to baseline.model.json and given to the nested run as model.hf_config, so what the reference
 * cannot run (MLA, another activation, ...) is refused here by the same reader, naming the field.
 * A refusal or a missing shape skips the phase with the reason; a nested run that fails fails it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collect/rundir.h"
#include "config/config.h"
#include "config/llm_model.h"
#include "core/fs.h"
#include "core/proc.h"
#include "run/pipeline_int.h"
#include "run/rebuild.h"

/* inputs.<key> of the config, else the account's tokens.<acct_key>; 0 unknown. */
static int64_t token_count(const struct lp_run *run, const json_t *account, const char *key, const char *acct_key)
{
	char full[64];
	const json_t *v;
	snprintf(full, sizeof(full), "inputs.%s", key);
	if (lp_pl_cfg_int(run, full, 0) > 0)
		return lp_pl_cfg_int(run, full, 0);
	v = json_object_get(json_object_get(account, "tokens"), acct_key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (int64_t)json_integer_value(v) : 0;
}

/* The model document for the reference (new reference) and where it came from; NULL with `why`. */
static json_t *baseline_model(const struct lp_run *run, const json_t *account, const char **from, struct lp_buf *why)
{
	const json_t *m = lp_config_get(&run->cfg, "model");
	const json_t *hf = json_object_get(json_object_get(account, "model"), "hf_config");
	if (json_is_object(m) && json_object_size(m)) {
		*from = "the config's model";
		return json_deep_copy(m);
	}
	if (json_is_object(hf)) {
		/* named after the program's model class when the config has no name of its own (random
		 * weights): the reader would take the run folder's name otherwise */
		json_t *doc = json_deep_copy(hf);
		const char *cls = json_string_value(json_object_get(json_object_get(account, "model"), "class"));
		const char *nm = json_string_value(json_object_get(doc, "_name_or_path"));
		if (doc && (!nm || !*nm) && cls && *cls)
			json_object_set_new(doc, "_name_or_path", json_string(cls));
		*from = "the program's Hugging Face config (llmprof_auto)";
		return doc;
	}
	lp_buf_addf(why, "no model shape: the program reported no Hugging Face model (llmprof_auto) and the config "
		"has none (model=<name> or model.hf_config=PATH gives one)");
	return NULL;
}

void lp_pl_phase_baseline(struct lp_pl_state *st)
{
	const char *mode = lp_pl_cfg_str(st->run, "run.baseline"), *from = NULL, *dtype;
	struct lp_buf why = LP_BUF_INIT, path = LP_BUF_INIT, rel = LP_BUF_INIT, exe = LP_BUF_INIT, root = LP_BUF_INIT;
	struct lp_buf a[9];
	struct lp_err err = LP_ERR_INIT;
	struct lp_llm_config mc;
	struct lp_proc_spec spec;
	struct lp_proc_result res;
	struct lp_pl_ticker tk;
	struct lp_proc_env env[LP_PL_ENV_MAX];
	json_t *account = NULL, *model = NULL;
	const char *argv[16];
	int64_t batch, prompt, new_tokens;
	size_t i, n = 0;
	char *text = NULL;

	for (i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		lp_buf_init(&a[i], 0);
	if (!mode || !strcmp(mode, "none")) {
		lp_pl_set_phase(st, PH_BASELINE, "skipped", "not asked (run.baseline=reference turns it on)");
		goto out;
	}
	lp_pl_progress(st, PH_BASELINE, "the reference workload on the program's shape");
	if (st->pl->reference) {
		lp_pl_set_phase(st, PH_BASELINE, "skipped", "the workload is the reference itself");
		goto out;
	}
	account = lp_rebuild_load_auto_info(st->run->dir.path, &rel);
	model = baseline_model(st->run, account, &from, &why);
	if (!model) {
		lp_pl_set_phase(st, PH_BASELINE, "skipped", "%s", why.data);
		goto out;
	}
	if (lp_llm_config_from_json(model, from, &mc, &err) < 0 || lp_llm_config_validate(&mc, from, &err) < 0) {
		lp_pl_set_phase(st, PH_BASELINE, "skipped", "the reference workload cannot run this shape: %s", err.msg);
		lp_run_warnf(st->sink, "run.baseline: the reference workload cannot run this shape: %s", err.msg);
		goto out;
	}
	batch = token_count(st->run, account, "batch", "batch");
	prompt = token_count(st->run, account, "prompt_len", "prompt_len");
	/* the reference runs one decode step per new token: the program's decode steps, where it
	 * reported them (generate()'s new tokens count the prefill's token too) */
	new_tokens = token_count(st->run, account, "new_tokens", "decode_steps");
	if (!new_tokens)
		new_tokens = token_count(st->run, account, "new_tokens", "new_tokens");
	if (!batch || !prompt || !new_tokens) {
		lp_pl_set_phase(st, PH_BASELINE, "skipped", "the program's %s unknown: set inputs.batch, inputs.prompt_len "
			"and inputs.new_tokens", !batch ? "batch is" : !prompt ? "prompt length is" : "number of new tokens is");
		goto out;
	}
	if (!st->pl->gpu_run) {
		lp_pl_set_phase(st, PH_BASELINE, "skipped", "not a GPU run: the reference runs on the GPU");
		goto out;
	}
	text = json_dumps(model, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (!text || lp_pl_wrote(st, PH_BASELINE, lp_rundir_write(&st->run->dir, "baseline.model.json", text,
		    strlen(text), lp_pl_phase_names[PH_BASELINE], &err), "baseline.model.json", &err) < 0) {
		lp_pl_set_phase(st, PH_BASELINE, "failed", "cannot write baseline.model.json%s%s", err.msg[0] ? ": " : "", err.msg);
		goto out;
	}

	/* llmprof run --mode light run.id=baseline artifacts.stage2_dir=<run> model.hf_config=... */
	lp_buf_addf(&exe, "%s/llmprof", st->pl->opts.exe_dir);
	lp_pl_abs_path(st->run->dir.path, &root);
	lp_rundir_path(&st->run->dir, "baseline.model.json", &path);
	lp_pl_abs_path(path.data, &path);
	lp_buf_addf(&a[0], "artifacts.stage2_dir=%s", root.data);
	lp_buf_addf(&a[1], "model.hf_config=%s", path.data);
	lp_buf_addf(&a[2], "inputs.batch=%lld", (long long)batch);
	lp_buf_addf(&a[3], "inputs.prompt_len=%lld", (long long)prompt);
	lp_buf_addf(&a[4], "inputs.new_tokens=%lld", (long long)new_tokens);
	lp_buf_addf(&a[5], "run.repeats=%lld", (long long)lp_pl_cfg_int(st->run, "run.repeats", 3));
	lp_buf_addf(&a[6], "run.warmup=%lld", (long long)lp_pl_cfg_int(st->run, "run.warmup", 1));
	lp_buf_addf(&a[7], "run.timeout_s=%g", lp_pl_cfg_num(st->run, "run.timeout_s", 1800));
	argv[n++] = exe.data;
	argv[n++] = "run";
	argv[n++] = "--mode";
	argv[n++] = "light";
	argv[n++] = "run.id=baseline";
	argv[n++] = "run.device=cuda";
	argv[n++] = "artifacts.keep_last=null";
	for (i = 0; i < 8; i++)
		argv[n++] = a[i].data;
	argv[n] = NULL;
	if (exe.oom || root.oom || path.oom || a[0].oom || a[1].oom) {
		lp_pl_set_phase(st, PH_BASELINE, "failed", "out of memory");
		goto out;
	}
	memset(&spec, 0, sizeof(spec));
	lp_buf_reset(&path);
	lp_rundir_path(&st->run->dir, "logs/baseline.stderr", &path);
	spec.argv = argv;
	spec.stdout_path = path.data;
	spec.stderr_path = path.data;
	spec.timeout_s = 2 * lp_pl_cfg_num(st->run, "run.timeout_s", 1800);
	spec.n_env = lp_pl_tool_env(st->pl, env);
	spec.env = env;
	memset(&tk, 0, sizeof(tk));
	tk.sink = st->sink;
	tk.phase = lp_pl_phase_names[PH_BASELINE];
	spec.tick = lp_pl_tick;
	spec.tick_ctx = &tk;
	if (lp_proc_run(&spec, &res, &err) < 0) {
		lp_pl_set_phase(st, PH_BASELINE, "failed", "%s", err.msg);
		goto out;
	}
	lp_pl_tick_end(st->sink, res.wall_s);
	lp_pl_record_tree(st, "baseline", PH_BASELINE);
	lp_pl_wrote(st, PH_BASELINE, lp_rundir_record(&st->run->dir, "logs/baseline.stderr",
		lp_pl_phase_names[PH_BASELINE], &err), "logs/baseline.stderr", &err);
	if (!res.exited || res.exit_code != 0) {
		struct lp_buf d = LP_BUF_INIT;
		lp_proc_describe(&res, &spec, &d);
		lp_pl_set_phase(st, PH_BASELINE, "failed", "the reference run %s (see logs/baseline.stderr)", d.data);
		lp_buf_release(&d);
		goto out;
	}
	dtype = json_string_value(json_object_get(json_object_get(account, "model"), "dtype"));
	if (dtype && strcmp(dtype, "bf16"))
		lp_pl_set_phase(st, PH_BASELINE, "ok", "%s in bf16 (the program ran %s), batch %lld, prompt %lld, %lld new tokens",
			mc.name, dtype, (long long)batch, (long long)prompt, (long long)new_tokens);
	else
		lp_pl_set_phase(st, PH_BASELINE, "ok", "%s, batch %lld, prompt %lld, %lld new tokens", mc.name,
			(long long)batch, (long long)prompt, (long long)new_tokens);
out:
	free(text);
	json_decref(model);
	json_decref(account);
	for (i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		lp_buf_release(&a[i]);
	lp_buf_release(&why);
	lp_buf_release(&path);
	lp_buf_release(&rel);
	lp_buf_release(&exe);
	lp_buf_release(&root);
	lp_pl_save_phases(st);
}
