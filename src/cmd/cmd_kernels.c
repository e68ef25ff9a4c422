/* cmd_kernels.c: `llmprof kernels`. Placeholder until the Nsight parsers (issue 5) lands: it says so and exits 2. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/err.h"

int cmd_kernels(int argc, const char **argv, struct lp_ctx *ctx)
{
	(void)ctx;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: llmprof kernels\n\nnot available yet in this build\n");
		return 0;
	}
	return lp_cmd_not_available("kernels", NULL);
}
