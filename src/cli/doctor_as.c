/*
 * doctor_as.c - acting as SlurmUser for `conduit-bb doctor`: run as
 * root, a file check or a call is made in a child that has taken
 * SlurmUser's uid and groups (cli/apart.c), because that is who the
 * hooks run as.  The checks call it; it calls no other part of doctor.
 */
#include "doctor_int.h"

static int as_op(as_op_t op, const char *path)
{
	char probe[PATH_MAX];
	int fd;

	if (op != AS_WRITE_DIR) {
		fd = open(path, (op == AS_READ ? O_RDONLY : O_WRONLY | O_APPEND |
				 O_NOFOLLOW) | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	snprintf(probe, sizeof(probe), "%s/.conduit-bb-doctor.%ld", path,
		 (long)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return errno;
	close(fd);
	return unlink(probe) < 0 ? errno : 0;
}

static int become_slurm_user(const void *who)
{
	const slurm_user_t *su = who;

	if (initgroups(su->name, su->gid) < 0 || setgid(su->gid) < 0 ||
	    setuid(su->uid) < 0)
		return -1;
	return 0;
}

typedef struct {
	as_op_t op;
	const char *path;
	as_fn_t fn;
	const void *arg;
	size_t size;
} as_call_t;

static int op_apart(const void *arg, cbb_buf_t *out)
{
	const as_call_t *c = arg;

	(void)out;
	return as_op(c->op, c->path) & 0xff;
}

static int fn_apart(const void *arg, cbb_buf_t *out)
{
	const as_call_t *c = arg;
	char msg[4096];
	int rc;

	rc = c->fn(c->arg, msg, c->size < sizeof(msg) ? c->size : sizeof(msg));
	(void)cbb_buf_adds(out, msg);
	return rc ? 1 : 0;
}

/*
 * Do `op` on `path` as SlurmUser: directly when we are SlurmUser, in a
 * child that becomes SlurmUser when we are root.  Returns 0, an errno,
 * or -1 when it cannot be told (neither root nor SlurmUser).
 */
int doctor_as_slurm_user(const slurm_user_t *su, as_op_t op, const char *path)
{
	as_call_t c = { op, path, NULL, NULL, 0 };
	cbb_buf_t none;
	int rc;

	if (!su->known)
		return -1;
	if (geteuid() == su->uid)
		return as_op(op, path);
	if (geteuid() != 0)
		return -1;
	cbb_buf_init(&none, 1);
	rc = cbb_apart(become_slurm_user, su, op_apart, &c, &none);
	cbb_buf_free(&none);
	return rc;
}

/*
 * Call fn(arg, msg, size) as SlurmUser: directly when we are SlurmUser,
 * in a child with SlurmUser's uid and groups when we are root (its
 * message coming back through a pipe).  fn's result (0 or 1), or -1 when
 * it cannot be told (neither root nor SlurmUser, or the child could not
 * become SlurmUser).
 */
int doctor_as_slurm_user_call(const slurm_user_t *su, as_fn_t fn,
			      const void *arg, char *msg, size_t size)
{
	as_call_t c = { AS_READ, NULL, fn, arg, size };
	cbb_buf_t got;
	int rc;

	msg[0] = '\0';
	if (!su->known)
		return -1;
	if (geteuid() == su->uid)
		return fn(arg, msg, size);
	if (geteuid() != 0)
		return -1;
	cbb_buf_init(&got, size);
	rc = cbb_apart(become_slurm_user, su, fn_apart, &c, &got);
	snprintf(msg, size, "%s", got.data ? got.data : "");
	cbb_buf_free(&got);
	return rc;
}

const char *doctor_who(const slurm_user_t *su)
{
	return su->known ? su->name : "SlurmUser";
}
