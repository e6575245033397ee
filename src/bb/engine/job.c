/* job.c - see job.h */
#include "job.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void cbb_job_ctx_init(cbb_job_ctx_t *j, const cbb_config_t *cfg,
		      cbb_grpc_t *g, const char *cluster, uint32_t job_id,
		      uint32_t uid)
{
	memset(j, 0, sizeof(*j));
	j->cfg = cfg;
	j->g = g;
	cbb_cluster_safe(j->cluster, cluster);
	j->job_id = job_id;
	j->uid = uid;
	snprintf(j->user, sizeof(j->user), "%u", uid);
}

uint32_t cbb_attempt(const cbb_job_ctx_t *j, cbb_stage_t stage)
{
	if (stage == CBB_STAGE_OUT && j->requeued && j->restart > 0)
		return j->restart - 1;
	return j->restart;
}

bool cbb_stage_best_effort(const cbb_job_ctx_t *j, cbb_stage_t stage)
{
	return stage == CBB_STAGE_OUT && j->requeued;
}

cbb_key_type_t cbb_stage_key(cbb_stage_t s)
{
	return s == CBB_STAGE_IN ? CBB_KEY_PRE : CBB_KEY_POST;
}

const char *cbb_stage_word(cbb_stage_t s)
{
	return s == CBB_STAGE_IN ? "stage-in" : "stage-out";
}

void cbb_job_note(const cbb_job_ctx_t *j, int level, const char *msg)
{
	if (j->log)
		j->log(j->log_ud, level, msg);
}

void cbb_job_log(const cbb_job_ctx_t *j, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!j->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cbb_log_job(j->log, j->log_ud, level, j->job_id, "%s", msg);
}
