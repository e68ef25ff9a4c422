/* cmd_run.c: `llmprof run`. Placeholder until src/config, the run directory and the pipeline (issues 2 and 6) lands: it says so and exits 2. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/err.h"

int cmd_run(int argc, const char **argv, struct lp_ctx *ctx)
{
	(void)ctx;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: llmprof run\n\nnot available yet in this build\n");
		return 0;
	}
	return lp_cmd_not_available("run", NULL);
}
