/*
 * doctor_report.c - the report of `conduit-bb doctor`: one line per
 * check (ok, warn, FAIL), or one JSON object per check with --json.
 * Every check calls it; it calls no other part of doctor (the bottom of
 * doctor's files, docs/architecture.md).
 */
#include "doctor_int.h"
#include "utf8.h"

void doctor_say(report_t *r, res_t s, const char *check, const char *fmt, ...)
{
	static const char *const word[] = { "ok", "warn", "FAIL" };
	char msg[2048], *safe;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cbb_one_line(msg);
	r->n[s]++;
	if (!r->json) {
		printf("%-5s %s: %s\n", word[s], check, msg);
		fflush(stdout);
		return;
	}
	/* a path or a server's words that are not UTF-8 (jansson refuses
	 * them, and the check was lost): such bytes as \xNN */
	safe = cbb_utf8_lossy(msg, strlen(msg));
	json_array_append_new(r->checks,
			      json_pack("{s:s, s:s, s:s}", "check", check,
					"status", s == RES_OK ? "ok" :
					s == RES_WARN ? "warn" : "fail",
					"message", safe ? safe : "(out of memory)"));
	free(safe);
}
