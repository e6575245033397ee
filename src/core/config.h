/*
 * config.h - conduit_bb.conf: Slurm-style "Key=Value" lines.
 *
 * Keys are case-insensitive, '#' starts a comment, every bad line is an
 * error naming the line and showing a good value.  The file is read on
 * every hook call (Slurm gives each call a fresh Lua state), so loading
 * is one small read and a table lookup per line.
 */
#ifndef CBB_CONFIG_H
#define CBB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define CBB_CONF_NAME "conduit_bb.conf"
#define CBB_CONF_DEFAULT "/etc/slurm/" CBB_CONF_NAME
#define CBB_CONF_MAX_BYTES (64 * 1024)
#define CBB_PREFIX_MAX 32
#define CBB_DIRECTIVE_MAX 32

typedef enum {
	CBB_STAGE_IN = 0,  /* #<Directive>_PRE */
	CBB_STAGE_OUT = 1, /* #<Directive>_POST */
} cbb_stage_t;

typedef enum {
	CBB_VALIDATE_LOCAL = 0,
	CBB_VALIDATE_REMOTE = 1,
} cbb_validation_t;

/* How Conduit's data mover places a directory (DataMover=). */
typedef enum {
	CBB_MOVER_RSYNC = 0, /* Conduit's rsync plugin: a tree keeps its name */
	CBB_MOVER_PFTOOL = 1, /* pftool (pfcp -R): as POSIX cp -r */
} cbb_mover_t;

typedef struct {
	char *v[CBB_PREFIX_MAX];
	size_t n;
} cbb_prefixes_t;

typedef struct {
	char *path;          /* file read, NULL when defaults only */
	char *server_host;   /* ConduitServer host, NULL if unset */
	unsigned server_port;
	char *ca_cert;
	char *client_cert;
	char *client_key;
	char *server_name;
	unsigned request_timeout_ms;
	unsigned submit_timeout_ms;
	cbb_validation_t submit_validation;
	cbb_mover_t mover;   /* DataMover= */
	char directive[CBB_DIRECTIVE_MAX + 1];
	unsigned max_directives;
	unsigned max_source_bytes;
	/* allow[stage][0] = sources, allow[stage][1] = destinations */
	cbb_prefixes_t allow[2][2];
	char *state_dir;     /* NULL: CBB_STATE_DIR */
	char *scontrol;      /* NULL: "scontrol" from PATH */
	char *squeue;        /* NULL: "squeue" from PATH */
	char *audit_log;     /* AuditLog: JSON line per transfer; NULL: none */
	bool admin_comment;  /* AdminComment: a staging summary on the job */
	unsigned down_grace_s;      /* ServerDownGrace: stage-in polls */
	unsigned out_down_grace_s;  /* StageOutDownGrace: stage-out polls */
	unsigned start_visible_grace_s; /* StartVisibleGrace */
	unsigned poll_share_s;      /* PollShare: 0 off */
	unsigned max_reply_bytes;   /* MaxReplyBytes */
	char *tls_groups;    /* TLSGroups; NULL: CBB_TLS_GROUPS */
	bool tls_resume;     /* TLSResume: sessions saved in StateDir */
	/* the switch half */
	char switch_prefix[CBB_DIRECTIVE_MAX + 1];
	bool allow_test_directives;
	bool special_steps;
	bool block_job_complete;
	char *session_key_file;
	bool session_file;       /* SessionDelivery=file */
	char *session_dir;       /* NULL: CBB_SESSION_DIR */
	bool switch_http;        /* SwitchController=http */
	char *switch_url;        /* https://host:port */
	char *switch_ca;
	char *switch_cert;
	char *switch_key;
	unsigned switch_timeout_ms;
	cbb_prefixes_t env_names; /* SwitchEnvNames: NAME or PREFIX* */
	char *switch_endpoint;   /* static fabric facts, no controller */
	unsigned switch_vlans[16];
	size_t n_switch_vlans;
} cbb_config_t;

#define CBB_STATE_DIR "/var/spool/conduit_bb"
#define CBB_SESSION_DIR "/run/conduit_bb"
/*
 * The TLS groups offered, most wanted first; the ClientHello carries a
 * key share for the first only.  P-256 first: gRPC C-core servers
 * accept only P-256, and grpc-go and OpenSSL servers take a share they
 * support, so no server answers with a HelloRetryRequest round trip.
 */
#define CBB_TLS_GROUPS "P-256:X25519:P-384"

static inline const char *cbb_conf_state_dir(const cbb_config_t *c)
{
	return c->state_dir ? c->state_dir : CBB_STATE_DIR;
}

static inline const char *cbb_conf_tls_groups(const cbb_config_t *c)
{
	return c->tls_groups ? c->tls_groups : CBB_TLS_GROUPS;
}

static inline const char *cbb_conf_scontrol(const cbb_config_t *c)
{
	return c->scontrol ? c->scontrol : "scontrol";
}

/*
 * The squeue to run: Squeue, else "squeue" beside an absolute Scontrol
 * (what older configurations set), else "squeue" from PATH.
 */
const char *cbb_conf_squeue(const cbb_config_t *c, char *buf, size_t size);

/* Whether a controller may set this variable in steps (SwitchEnvNames). */
bool cbb_conf_env_name_allowed(const cbb_config_t *c, const char *name);

void cbb_config_defaults(cbb_config_t *c);
void cbb_config_free(cbb_config_t *c);

/* Parse configuration text; `name` is used in messages. */
int cbb_config_parse(cbb_config_t *c, const char *text, size_t len,
		     const char *name, cbb_err_t *err);

/*
 * Which file to read: $CONDUIT_BB_CONF, else conduit_bb.conf beside
 * $SLURM_CONF, else /etc/slurm/conduit_bb.conf.  Writes into buf.
 */
const char *cbb_config_locate(char *buf, size_t size);

/*
 * Load defaults, then `path` (or the located file when NULL).  A missing
 * file means defaults; any other problem is an error.
 */
int cbb_config_load(cbb_config_t *c, const char *path, cbb_err_t *err);

/*
 * ClusterName from slurm.conf ($SLURM_CONF, else /etc/slurm/slurm.conf),
 * for hooks that Slurm gives no cluster name.  `path` receives the file
 * read.  Returns 0, or -1 when the file or the key is missing.
 */
int cbb_slurm_cluster_name(char *path, size_t psize, char *name,
			   size_t nsize);
/* Any one-word slurm.conf value the same way (e.g. StateSaveLocation). */
int cbb_slurm_conf_get(const char *key, char *path, size_t psize, char *val,
		       size_t vsize);

#endif
