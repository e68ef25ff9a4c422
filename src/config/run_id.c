/* run_id.c: the grammar of run ids (see run_id.h). */
#include "config/run_id.h"

#include <string.h>

int lp_rundir_validate_id(const char *id, struct lp_err *err)
{
	const char *p;
	size_t n = strlen(id);
	if (n == 0)
		return lp_err_set(err, LP_EUSAGE, "invalid run id '': it is empty");
	if (n > LP_RUNDIR_ID_MAX)
		return lp_err_set(err, LP_EUSAGE, "invalid run id '%.40s...': longer than %d characters", id,
			LP_RUNDIR_ID_MAX);
	for (p = id; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '_' || *p == '-')
			continue;
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			lp_err_set(err, LP_EUSAGE, "invalid run id '%s': character 0x%02x is not allowed", id,
				(unsigned char)*p);
		else
			lp_err_set(err, LP_EUSAGE, "invalid run id '%s': '%c' is not allowed", id, *p);
		return lp_err_hint(err, "run ids use letters, digits, '.', '_' and '-'");
	}
	if (strstr(id, ".."))
		return lp_err_set(err, LP_EUSAGE, "invalid run id '%s': '..' is not allowed", id);
	if (id[0] == '.')
		return lp_err_set(err, LP_EUSAGE, "invalid run id '%s': it must not start with '.'", id);
	return 0;
}

int lp_rundir_is_generated_id(const char *id)
{
	static const char shape[] = "dddddddd-dddddd-xxxx";
	size_t i;
	if (strlen(id) != sizeof(shape) - 1)
		return 0;
	for (i = 0; shape[i]; i++) {
		char c = id[i];
		if (shape[i] == '-' ? c != '-' :
		    shape[i] == 'd' ? !(c >= '0' && c <= '9') :
				      !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
	}
	return 1;
}
