/* admin.c - see admin.h */
#include "admin.h"

void cbb_admin_usage(FILE *f)
{
	fprintf(f,
		"\n"
		"For admins:\n"
		"       conduit-bb doctor [--json] [--config FILE] "
		"[--slurm-conf FILE] [--module FILE]\n"
		"\n"
		"doctor checks the installation end to end (run it as root or "
		"SlurmUser):\n"
		"one line per check, ok, warn or FAIL with what to do; exit 0 "
		"when nothing\n"
		"failed.\n");
}
