/* symbols.c - see symbols.h */
#include "symbols.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Slurm falls back to the passwd entry when job_info has no user_name. */
static int add_user_name(const cbb_job_t *job, cbb_buf_t *out,
			 cbb_err_t *err)
{
	struct passwd pw, *res = NULL;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	char *tmp;
	int rc;

	if (job->user_name && job->user_name[0])
		return cbb_buf_adds(out, job->user_name) < 0 ?
			       cbb_err(err, "line too long") : 0;
	if (size < 1024)
		size = 1024;
	for (;;) {
		tmp = malloc((size_t)size);
		if (!tmp)
			return cbb_err(err, "out of memory");
		rc = getpwuid_r((uid_t)job->user_id, &pw, tmp, (size_t)size,
				&res);
		if (rc != ERANGE || size >= (1L << 20))
			break;
		free(tmp);
		size *= 4;
	}
	if (rc != 0 || !res) {
		free(tmp);
		return cbb_err(err, "cannot expand %%u: no user name for "
			       "uid %u", job->user_id);
	}
	rc = cbb_buf_adds(out, pw.pw_name);
	free(tmp);
	return rc < 0 ? cbb_err(err, "line too long") : 0;
}

int cbb_symbols_expand(const char *in, size_t len, const cbb_job_t *job,
		       bool *stopped, unsigned *used, cbb_buf_t *out,
		       cbb_err_t *err)
{
	size_t i = 0, run = 0;
	int rc = 0;

	while (i < len && !*stopped) {
		const char *pc = memchr(in + i, '%', len - i), *bs;
		size_t stop = pc ? (size_t)(pc - in) : len;
		char c;

		bs = memchr(in + i, '\\', stop - i);
		i = bs ? (size_t)(bs - in) : stop;
		if (i == len)
			break;
		c = in[i];
		if (c == '\\') {
			if (i + 1 < len && in[i + 1] == '\\')
				*stopped = true;
			i++;
			continue;
		}
		if (cbb_buf_add(out, in + run, i - run) < 0)
			return cbb_err(err, "line too long");
		if (i + 1 >= len)
			return cbb_err(err, "'%%' at the end of the line (write "
				       "%%%% for a literal %%)");
		switch (in[i + 1]) {
		case '%':
			*used |= CBB_SYM_PERCENT;
			rc = cbb_buf_addc(out, '%');
			break;
		case 'A':
			*used |= CBB_SYM_A;
			rc = cbb_buf_addu(out, job->array_job_id);
			break;
		case 'a':
			*used |= CBB_SYM_a;
			rc = cbb_buf_addu(out, job->array_task_id);
			break;
		case 'b':
			*used |= CBB_SYM_b;
			rc = cbb_buf_addu(out, job->array_task_id % 10);
			break;
		case 'd':
			*used |= CBB_SYM_d;
			rc = cbb_buf_adds(out, job->work_dir ? job->work_dir : "");
			break;
		case 'j':
			*used |= CBB_SYM_j;
			rc = cbb_buf_addu(out, job->job_id);
			break;
		case 'u':
			*used |= CBB_SYM_u;
			if (add_user_name(job, out, err) < 0)
				return -1;
			break;
		case 'x':
			*used |= CBB_SYM_x;
			rc = cbb_buf_adds(out, job->name ? job->name : "");
			break;
		default: {
			unsigned char u = (unsigned char)in[i + 1];

			if (u > 0x20 && u < 0x7f)
				return cbb_err(err, "unknown symbol '%%%c' "
					       "(Slurm knows %%%% %%A %%a %%b "
					       "%%d %%j %%u %%x; write %%%% for "
					       "a literal %%)", (char)u);
			return cbb_err(err, "'%%' not followed by a symbol "
				       "(write %%%% for a literal %%)");
		}
		}
		if (rc < 0)
			return cbb_err(err, "line too long");
		i += 2;
		run = i;
	}
	if (cbb_buf_add(out, in + run, len - run) < 0)
		return cbb_err(err, "line too long");
	return 0;
}
