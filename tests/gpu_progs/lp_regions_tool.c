/* lp_regions_tool: runs the regions run (run/regions_run.h) on one ncu raw page, outside
 * of `llmprof run`. Used by scripts/gpu/regions.sh on the GPU machine to check the report on real
 * captures; also handy by hand. Not installed.
 *
 *   lp_regions_tool OUT_DIR RAW_CSV [--include X]... [--exclude X]... [--kernel-include X]...
 *                   [--kernel-exclude X]... [--metric M]... [--section S]... [--replay MODE]
 *                   [--note TEXT] [--reference] [--generated-at T]
 * Writes OUT_DIR/ncu/regions/ and prints the region tree (report.md's bullet list) and totals. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "run/regions_run.h"

static int usage(void)
{
	fprintf(stderr, "usage: lp_regions_tool OUT_DIR RAW_CSV [--include X]... [--exclude X]... "
		"[--kernel-include X]... [--kernel-exclude X]... [--metric M]... [--section S]... "
		"[--replay MODE] [--note TEXT] [--reference] [--generated-at T]\n");
	return 2;
}

int main(int argc, char **argv)
{
	json_t *preset = json_object(), *reg = json_object(), *kern = json_object();
	json_t *inc = json_array(), *exc = json_array(), *kinc = json_array(), *kexc = json_array();
	json_t *met = json_array(), *sec = json_array();
	struct lp_regions_run run;
	struct lp_regions_outcome o;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT, path = LP_BUF_INIT;
	const char *line;
	int i, in_tree = 0;
	if (argc < 3)
		return usage();
	memset(&run, 0, sizeof(run));
	run.run_dir = argv[1];
	run.raw_csv = argv[2];
	json_object_set_new(preset, "name", json_string("regions"));
	json_object_set_new(preset, "replay_mode", json_string("kernel"));
	for (i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		json_t *list = NULL;
		if (!strcmp(a, "--reference")) {
			run.reference_workload = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(a, "--include"))
			list = inc;
		else if (!strcmp(a, "--exclude"))
			list = exc;
		else if (!strcmp(a, "--kernel-include"))
			list = kinc;
		else if (!strcmp(a, "--kernel-exclude"))
			list = kexc;
		else if (!strcmp(a, "--metric"))
			list = met;
		else if (!strcmp(a, "--section"))
			list = sec;
		else if (!strcmp(a, "--replay"))
			json_object_set_new(preset, "replay_mode", json_string(v));
		else if (!strcmp(a, "--note"))
			run.replay_note = v;
		else if (!strcmp(a, "--generated-at"))
			run.generated_at = v;
		else
			return usage();
		if (list)
			json_array_append_new(list, json_string(v));
	}
	json_object_set_new(kern, "include", kinc);
	json_object_set_new(kern, "exclude", kexc);
	json_object_set_new(reg, "include", inc);
	json_object_set_new(reg, "exclude", exc);
	json_object_set_new(reg, "kernels", kern);
	json_object_set_new(reg, "sections", sec);
	json_object_set_new(reg, "metrics", met);
	json_object_set_new(preset, "regions", reg);
	run.ncu_preset = preset;
	if (lp_regions_run_report(&run, &o, &err) < 0) {
		fprintf(stderr, "error: %s\n", err.msg);
		if (err.hint[0])
			fprintf(stderr, "hint: %s\n", err.hint);
		json_decref(preset);
		return err.kind ? err.kind : 1;
	}
	json_decref(preset);
	if (!o.active) {
		printf("no region to report (empty include)\n");
		return 0;
	}
	lp_buf_addf(&path, "%s/ncu/regions/report.md", argv[1]);
	if (lp_fs_read_file(path.data, &md, 0, &err) < 0) {
		fprintf(stderr, "error: %s\n", err.msg);
		return 1;
	}
	for (line = md.data; *line;) {
		const char *nl = strchr(line, '\n');
		int len = (int)(nl ? nl - line : (long)strlen(line));
		if (!strncmp(line, "## ", 3))
			in_tree = !strncmp(line, "## Region tree", 14) || !strncmp(line, "## Expressions", 14) ||
				!strncmp(line, "## Warnings", 11);
		if (in_tree && (len == 0 || line[0] != '|'))
			printf("%.*s\n", len, line);
		line += len + (nl ? 1 : 0);
	}
	printf("regions: %zu, unmatched expressions: %zu, warnings: %zu, total in regions: %.3f ms\n",
		o.n_regions, o.n_unmatched, o.n_warnings, o.total_ms);
	lp_buf_release(&md);
	lp_buf_release(&path);
	return 0;
}
