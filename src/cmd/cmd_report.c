/* cmd_report.c: `llmprof report`. Placeholder until the analysis and reports (issue 6) lands: it says so and exits 2. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/err.h"

int cmd_report(int argc, const char **argv, struct lp_ctx *ctx)
{
	(void)ctx;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: llmprof report\n\nnot available yet in this build\n");
		return 0;
	}
	return lp_cmd_not_available("report", NULL);
}
