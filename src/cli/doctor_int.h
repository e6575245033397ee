/*
 * doctor_int.h - what the parts of `conduit-bb doctor` share: the
 * report, the installation being checked, acting as SlurmUser, and each
 * group of checks.  The files call one way (tests/cycle-check.sh):
 *
 *   doctor.c         the command: runs the checks in order, the summary
 *   doctor_conf.c    the configuration files          \
 *   doctor_module.c  the module, the Lua slurmctld     |  the checks
 *                    links (uses doctor_conf.c)       |
 *   doctor_tls.c     certificates and the server      |
 *   doctor_state.c   StateDir, AuditLog, Slurm's      |
 *                    commands, the switch half and    |
 *                    switch.lua on a configless node  /
 *                    (uses doctor_tls.c, doctor_conf.c)
 *   doctor_report.c  the report (doctor_say)           the bottom: they
 *   doctor_as.c      acting as SlurmUser               call no doctor file
 */
#ifndef CBB_CLI_DOCTOR_INT_H
#define CBB_CLI_DOCTOR_INT_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "admin.h"
#include "apart.h"
#include "audit.h"
#include "buf.h"
#include "cluster.h"
#include "conduit.h"
#include "config.h"
#include "controller.h"
#include "elf.h"
#include "grpc.h"
#include "jobinfo.h"
#include "readfile.h"
#include "run.h"

#define SHIM "require(\"conduit_bb\")"
#define EXPIRY_WARN_DAYS 30
#define STATE_MIN_FREE ((unsigned long long)16 << 20)  /* FAIL below */
#define STATE_WARN_FREE ((unsigned long long)256 << 20) /* warn below */
#define STATE_MIN_INODES 1000ULL

typedef enum { RES_OK, RES_WARN, RES_FAIL } res_t;

typedef struct {
	bool json;
	json_t *checks;
	unsigned n[3];
} report_t;

/* Who the hooks run as. */
typedef struct {
	char name[64];
	uid_t uid;
	gid_t gid;
	bool known;
} slurm_user_t;

typedef struct {
	report_t rep;
	cbb_config_t cfg;
	bool cfg_ok;            /* parsed (possibly without bad lines) */
	char conf_path[PATH_MAX];
	char slurm_conf[PATH_MAX];
	char slurm_dir[PATH_MAX];
	const char *module;     /* --module */
	slurm_user_t su;
	char lua[8];            /* the Lua slurmctld's plugin links, or "" */
	X509 *ca, *cert;
} doctor_t;

/* How a file is opened as SlurmUser (doctor_as.c). */
typedef enum { AS_READ, AS_APPEND, AS_WRITE_DIR } as_op_t;

int doctor_as_slurm_user(const slurm_user_t *su, as_op_t op, const char *path);
/*
 * Call fn(arg, msg, size) as SlurmUser (doctor_as.c): fn's result (0 or 1,
 * its message in msg), or -1 when it cannot be told.
 */
typedef int (*as_fn_t)(const void *arg, char *msg, size_t size);
int doctor_as_slurm_user_call(const slurm_user_t *su, as_fn_t fn,
			      const void *arg, char *msg, size_t size);
bool doctor_check_access(doctor_t *d, const char *check, const char *path,
			 bool secret);
void doctor_check_audit_log(doctor_t *d);
void doctor_check_bb_conf(doctor_t *d);
void doctor_check_config(doctor_t *d, const char *given);
void doctor_check_module(doctor_t *d);
void doctor_check_program(doctor_t *d, const char *check, const char *prog,
			  const char *key);
void doctor_check_server(doctor_t *d);
void doctor_check_shim(doctor_t *d);
void doctor_check_slurm_conf(doctor_t *d);
void doctor_check_slurm_lua(doctor_t *d);
void doctor_check_state_dir(doctor_t *d);
void doctor_check_switch(doctor_t *d);
void doctor_check_switch_script(doctor_t *d);
void doctor_check_tls(doctor_t *d);
void doctor_say(report_t *r, res_t s, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool doctor_slurm_get(const char *key, char *val, size_t size);
const char *doctor_who(const slurm_user_t *su);

#endif
