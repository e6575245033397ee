/*
 * host.h - an emulation of the switch/lua host, following
 * ../shared/reference/switch-lua-contract.md: every hook call gets a
 * fresh Lua state loading switch.lua; job_start/job_complete run in a
 * child process killed at switch_timeout; jobinfo is packed to bytes and
 * unpacked into the next call's state; step hooks fail open on Lua
 * errors but enforce negative returns; EAGAIN is retried when
 * block_job_complete is on; failures decide drains.
 */
#ifndef CBB_TEST_HOST_H
#define CBB_TEST_HOST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	const char *script;     /* switch.lua */
	const char *cpath;      /* package.cpath */
	unsigned timeout_ms;    /* SlurmctldParameters=switch_timeout */
	unsigned retries;       /* SlurmctldParameters=switch_retries */
	bool block_job_complete;
	bool special_steps;
	const char *cluster;    /* slurm.CLUSTER_NAME; NULL: "emulated" */
	char log[16384];        /* everything logged through slurm.log_* */
} host_t;

typedef enum {
	START_ACCEPTED, START_DECLINED, START_FAILED, START_TIMEOUT,
} start_result_t;

typedef enum {
	COMPLETE_RELEASED, COMPLETE_DRAINED,
} complete_result_t;

typedef struct {
	long job_id;
	long user_id;           /* < 0: the job table has no user_id */
	const char *user_name, *nodes, *partition, *network;
	long num_nodes;
	char packed[8192];      /* the jobinfo as Slurm would store it */
	size_t packed_len;      /* 0: no jobinfo */
	unsigned complete_calls;
} host_job_t;

typedef struct {
	bool failed;            /* "Error configuring interconnect" */
	bool drain;             /* postfini drained the node */
	char env[4096];         /* NAME=value\n after step_init's changes */
} step_result_t;

/* Load the script once, as slurmctld does: ask the two "once" hooks. */
int host_load(host_t *h);
start_result_t host_job_start(host_t *h, host_job_t *j);
complete_result_t host_job_complete(host_t *h, host_job_t *j);
/* A normal job step (preinit, init, postfini) with `env` as given. */
void host_step(host_t *h, host_job_t *j, const char *env, step_result_t *r);
/* The same, for a step of job `step_job` carrying j's stepinfo. */
void host_step_of(host_t *h, host_job_t *j, long step_job, const char *env,
		  step_result_t *r);

#endif
