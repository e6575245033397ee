/*
 * fuzz_parse.c - libFuzzer target for everything that reads untrusted
 * text: job scripts (with and without % expansion), directive words and
 * conduit_bb.conf, and --network requests.  The first input byte picks
 * the target (0x40: --network; otherwise its value modulo 4).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "directive.h"
#include "netreq.h"
#include "words.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const cbb_job_t job = {
		.job_id = 1234, .array_job_id = 1230, .array_task_id = 4,
		.user_id = 1000, .user_name = "user", .work_dir = "/home/user",
		.name = "fuzz",
	};
	const char *text = (const char *)data + 1;
	cbb_config_t cfg;
	cbb_err_t err;
	unsigned sel;

	if (size == 0)
		return 0;
	sel = data[0];
	size--;
	cbb_err_clear(&err);
	if (sel == 0x40) {
		/* a C string, as Slurm hands --network over */
		char *s = malloc(size + 1);
		cbb_netreq_t r;

		if (!s)
			return 0;
		memcpy(s, text, size);
		s[size] = '\0';
		if (cbb_netreq_parse(s, "conduit", &r, &err) < 0 &&
		    (!err.set || strchr(err.msg, '\n')))
			__builtin_trap();
		free(s);
		return 0;
	}
	cbb_config_defaults(&cfg);

	switch (sel % 4) {
	case 0:
	case 1: {
		cbb_parse_opts_t o = { &cfg, &job, sel % 4 == 0, NULL, NULL };
		cbb_plan_t plan;

		if (sel & 4) /* sometimes with the site's allow-lists */
			(void)cbb_config_parse(&cfg,
				"StageInSources=/archive\nMaxDirectives=8\n",
				38, "fuzz", &err);
		cbb_err_clear(&err);
		if (cbb_parse_script(text, size, &o, &plan, &err) < 0 &&
		    (!err.set || strchr(err.msg, '\n')))
			__builtin_trap(); /* errors are one line, always set */
		cbb_plan_free(&plan);
		break;
	}
	case 2: {
		cbb_words_t w;

		size_t k;

		if (cbb_words_split(text, size, &w, &err) == 0) {
			for (k = 0; k < w.n; k++)
				if (w.len[k] != strlen(w.v[k]))
					__builtin_trap(); /* lengths are exact */
			cbb_words_free(&w);
		}
		break;
	}
	default:
		(void)cbb_config_parse(&cfg, text, size, "fuzz.conf", &err);
		break;
	}
	cbb_config_free(&cfg);
	return 0;
}
