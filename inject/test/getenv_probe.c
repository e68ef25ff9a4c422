/* getenv_probe.c: prints NAME=value (or NAME unset) for each argument, through getenv: what a
 * library in this process (the CUDA driver) would read. Plays someone else's program in
 * tests/e2e/ncu_gate.sh. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int i;
	for (i = 1; i < argc; i++) {
		const char *v = getenv(argv[i]);
		if (v)
			printf("%s=%s\n", argv[i], v);
		else
			printf("%s unset\n", argv[i]);
	}
	return 0;
}
