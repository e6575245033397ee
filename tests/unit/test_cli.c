/*
 * test_cli.c - the CLI's own helpers that no admin test reaches with
 * certainty: metrics --output's file written whole into a directory with
 * things planted in it, also where the filesystem has no O_TMPFILE and
 * where a "random" name is taken; cbb_apart's pipe never held by a
 * program its child runs (close-on-exec), and `conduit-bb status --json` keeping a row whose
 * server strings are not UTF-8 (and `doctor --json` a check whose words
 * are not); slurmlost.c's reading of squeue and scontrol (which jobs a
 * restart left where Slurm will not move them).  src/cli/ is no library, so the files
 * under test are compiled in here (tests.mk rebuilds this test when
 * they change).
 */
#include "cmocka_all.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* atomic_file.c's openat and getrandom, steered by the test: O_TMPFILE
 * refused as a filesystem without it does, and chosen "random" names */
static int no_tmpfile;
static unsigned long long next_random[4];
static size_t nrandom;

static int test_openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	if (no_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return openat(dfd, path, flags, mode);
}

static ssize_t test_getrandom(void *buf, size_t n, unsigned flags)
{
	if (nrandom && n == sizeof(next_random[0])) {
		memcpy(buf, &next_random[0], n);
		memmove(next_random, next_random + 1,
			sizeof(next_random) - sizeof(next_random[0]));
		nrandom--;
		return (ssize_t)n;
	}
	return getrandom(buf, n, flags);
}

#include <sys/random.h>
#define openat test_openat
#define getrandom test_getrandom
#include "../../src/cli/atomic_file.c"
#undef openat
#undef getrandom

#include "../../src/cli/apart.c"
#include "../../src/cli/doctor_report.c"
#include "../../src/cli/status_print.c"
#include "../../src/cli/slurmlost.c"
#include "../../src/cli/slurmjob.c"
#include "utf8.h"

/* ---- cbb_atomic_write --------------------------------------------------- */

static char adir[64];

static void in_adir(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s", adir, name);
}

/* The directory's names, sorted, one per line. */
static void names_in(char *out, size_t size)
{
	char cmd[128];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | LC_ALL=C sort", adir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
}

static void plant(void)
{
	char path[256], victim[128];

	snprintf(adir, sizeof(adir), "/tmp/unit_cli.XXXXXX");
	assert_non_null(mkdtemp(adir));
	snprintf(victim, sizeof(victim), "%s.victim", adir);
	{
		FILE *f = fopen(victim, "w");

		assert_non_null(f);
		fputs("victim\n", f);
		assert_int_equal(fclose(f), 0);
	}
	/* the old fixed name, a FIFO; links at other likely names and at
	 * FILE itself; and the names the steered "random" draws give */
	in_adir(path, sizeof(path), "out.prom.tmp");
	assert_int_equal(mkfifo(path, 0600), 0);
	in_adir(path, sizeof(path), "out.prom");
	assert_int_equal(symlink(victim, path), 0);
	in_adir(path, sizeof(path), ".out.prom.tmp");
	assert_int_equal(symlink(victim, path), 0);
	in_adir(path, sizeof(path), ".out.prom.00000000000000aa.tmp");
	assert_int_equal(mkfifo(path, 0600), 0);
	in_adir(path, sizeof(path), ".out.prom.00000000000000bb.tmp");
	assert_int_equal(symlink(victim, path), 0);
}

static int unplant(void **state)
{
	char cmd[160];

	(void)state;
	no_tmpfile = 0;
	nrandom = 0;
	if (!adir[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.victim'", adir, adir);
	adir[0] = '\0';
	return system(cmd) == 0 ? 0 : -1;
}

static void atomic_write_planted(bool tmpfile)
{
	static const char text[] = "conduit_bb_up 1\n";
	char path[256], before[1024], after[1024], victim[128], got[64];
	struct stat st;
	cbb_err_t err;
	FILE *f;
	size_t n;

	plant();
	names_in(before, sizeof(before));
	no_tmpfile = !tmpfile;
	/* the first two names drawn are taken (a FIFO, a link): drawn again */
	next_random[0] = 0xaa;
	next_random[1] = 0xbb;
	nrandom = 2;
	in_adir(path, sizeof(path), "out.prom");
	cbb_err_clear(&err);
	if (cbb_atomic_write(path, text, sizeof(text) - 1, &err) < 0)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(nrandom, 0); /* both drawn, both taken */
	/* FILE is a regular file with the text; the link there replaced */
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	fclose(f);
	assert_string_equal(got, text);
	/* the victim untouched; everything planted still there, as it was,
	 * and nothing else */
	snprintf(victim, sizeof(victim), "%s.victim", adir);
	f = fopen(victim, "r");
	assert_non_null(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	fclose(f);
	assert_string_equal(got, "victim\n");
	in_adir(path, sizeof(path), "out.prom.tmp");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	in_adir(path, sizeof(path), ".out.prom.00000000000000aa.tmp");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	in_adir(path, sizeof(path), ".out.prom.00000000000000bb.tmp");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	names_in(after, sizeof(after));
	assert_string_equal(after, before);
}

static void test_atomic_write_tmpfile(void **state)
{
	(void)state;
	atomic_write_planted(true);
}

static void test_atomic_write_named(void **state)
{
	(void)state;
	atomic_write_planted(false);
}

/* A directory anyone may write: refused without the sticky bit, nothing
 * written; taken with it.  And paths that name no file. */
static void test_atomic_write_refused(void **state)
{
	char path[256], names[256];
	cbb_err_t err;

	(void)state;
	snprintf(adir, sizeof(adir), "/tmp/unit_cli.XXXXXX");
	assert_non_null(mkdtemp(adir));
	assert_int_equal(chmod(adir, 0777), 0);
	in_adir(path, sizeof(path), "out.prom");
	cbb_err_clear(&err);
	assert_int_equal(cbb_atomic_write(path, "x\n", 2, &err), -1);
	assert_non_null(strstr(err.msg, "may be written by anyone and has no sticky bit"));
	names_in(names, sizeof(names));
	assert_string_equal(names, "");
	assert_int_equal(chmod(adir, 01777), 0);
	assert_int_equal(cbb_atomic_write(path, "x\n", 2, &err), 0);
	names_in(names, sizeof(names));
	assert_string_equal(names, "out.prom\n");
	in_adir(path, sizeof(path), "");
	cbb_err_clear(&err);
	assert_int_equal(cbb_atomic_write(path, "x\n", 2, &err), -1);
	assert_non_null(strstr(err.msg, "names no file"));
	in_adir(path, sizeof(path), "..");
	cbb_err_clear(&err);
	assert_int_equal(cbb_atomic_write(path, "x\n", 2, &err), -1);
	assert_non_null(strstr(err.msg, "names no file"));
	in_adir(path, sizeof(path), "missing/out.prom");
	cbb_err_clear(&err);
	assert_int_equal(cbb_atomic_write(path, "x\n", 2, &err), -1);
	assert_non_null(strstr(err.msg, "No such file"));
}

/* ---- a program that lists what it inherited --------------------------- */

/* `unit_cli --list-fds`: "FD TARGET" for each open descriptor. */
static int list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return 2;
	while ((e = readdir(d))) {
		char path[64], target[PATH_MAX];
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		printf("%d %s\n", fd, target);
	}
	closedir(d);
	return fflush(stdout) == 0 ? 0 : 2;
}

/* ---- cbb_apart: close-on-exec ------------------------------------------ */

typedef struct {
	int fd[256];
	size_t n;
} fds_t;

/* The descriptors this process has open now (the listing's own aside). */
static void open_fds(fds_t *f)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	f->n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) &&
		    f->n < sizeof(f->fd) / sizeof(f->fd[0]))
			f->fd[f->n++] = atoi(e->d_name);
	closedir(d);
}

static bool has_fd(const fds_t *f, int fd)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->fd[i] == fd)
			return true;
	return false;
}

/*
 * In cbb_apart's child: the descriptors the parent did not have before
 * the call are cbb_apart's own (the pipe's write end).  Each must be
 * close-on-exec, and a program run from here (this test, --list-fds)
 * must not hold it.  Says what it saw in `out`; 0 when all is well.
 */
static int exec_fn(const void *arg, cbb_buf_t *out)
{
	const fds_t *before = arg;
	char line[PATH_MAX + 64], got[16384], names[8][PATH_MAX];
	size_t nnames = 0, len = 0, i;
	int p[2], st, rc = 0;
	fds_t now;
	ssize_t r;
	pid_t pid;

	open_fds(&now);
	for (i = 0; i < now.n; i++) {
		char path[64];
		int fd = now.fd[i], fl = fcntl(fd, F_GETFD);
		ssize_t n;

		if (has_fd(before, fd) || nnames == 8)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, names[nnames], sizeof(names[0]) - 1);
		if (n < 0)
			return 3;
		names[nnames][n] = '\0';
		snprintf(line, sizeof(line), "apart's fd %d %s%s\n", fd,
			 names[nnames], fl & FD_CLOEXEC ? " close-on-exec" : "");
		(void)cbb_buf_adds(out, line);
		if (!(fl & FD_CLOEXEC))
			rc = 1;
		nnames++;
	}
	/* the program's output comes back on a pipe of our own */
	if (pipe2(p, O_CLOEXEC) < 0)
		return 3;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		if (dup2(p[1], 1) < 0)
			_exit(127);
		execl("/proc/self/exe", "unit_cli", "--list-fds", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((r = read(p[0], got + len, sizeof(got) - 1 - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (len += (size_t)r) == sizeof(got) - 1)
			break;
	}
	got[len] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 3;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 3;
	(void)cbb_buf_adds(out, "the program run from the child holds:\n");
	(void)cbb_buf_adds(out, got);
	for (i = 0; i < nnames; i++) {
		char *at = got;

		/* "FD TARGET\n": the target at a line's second field */
		while ((at = strstr(at, names[i]))) {
			if (at > got && at[-1] == ' ' &&
			    (at[strlen(names[i])] == '\n')) {
				snprintf(line, sizeof(line), "LEAKED %s\n", names[i]);
				(void)cbb_buf_adds(out, line);
				rc = 1;
			}
			at += strlen(names[i]);
		}
	}
	return nnames == 1 ? rc : 4;
}

static void test_apart_pipe_close_on_exec(void **state)
{
	fds_t before;
	cbb_buf_t out;
	int rc;

	(void)state;
	open_fds(&before);
	cbb_buf_init(&out, 1 << 20);
	rc = cbb_apart(NULL, NULL, exec_fn, &before, &out);
	(void)cbb_buf_add(&out, "", 1);
	if (rc != 0)
		fprintf(stderr, "cbb_apart gave %d:\n%s", rc, out.data);
	/* one descriptor of cbb_apart's, a pipe, close-on-exec */
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out.data, " pipe:["));
	assert_non_null(strstr(out.data, " close-on-exec\n"));
	/* and the program really ran and listed its stdout */
	assert_non_null(strstr(out.data, "\n1 pipe:["));
	cbb_buf_free(&out);
}

/* ---- status --json: every row, whatever the server's bytes ------------ */

/* cbb_status_print_json's output, parsed. */
static json_t *status_json(job_t *jobs, size_t n, const char *qerr)
{
	char path[] = "/tmp/unit_cli.XXXXXX";
	json_error_t jerr;
	json_t *root;
	int fd = mkstemp(path), saved;
	opts_t o = { true, true, DEFAULT_STUCK_S, NULL };

	assert_true(fd >= 0);
	unlink(path);
	fflush(stdout);
	saved = dup(1);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 1), 1);
	static cbb_sl_list_t lost = { .answered = true };

	cbb_status_print_json(jobs, n, &o, true, 3, qerr, &lost, 1000);
	fflush(stdout);
	assert_int_equal(dup2(saved, 1), 1);
	close(saved);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	root = json_loadfd(fd, 0, &jerr);
	if (!root)
		fprintf(stderr, "not JSON: %s\n", jerr.text);
	close(fd);
	assert_non_null(root);
	return root;
}

static void test_status_json_not_utf8(void **state)
{
	/* a Latin-1 user name, a truncated sequence, a lone continuation
	 * byte, an overlong '/', a surrogate: none of them UTF-8 */
	static char user[] = "m\xfcller";
	static char id[] = "6f1c\xe2\x82";
	static char msg[] = "cannot read \x80/\xc0\xaf/\xed\xa0\x80 \xe2\x82\xac ok\x01";
	cbb_sd_job_t sd[3] = {
		{ "hpc", 11, CBB_SD_STARTED, 0 },
		{ "hpc", 12, CBB_SD_STARTED, 0 },
		{ "hpc", 13, CBB_SD_STARTED, 0 },
	};
	cbb_transfer_t x[2];
	dir_t d[2];
	job_t jobs[3];
	json_t *root, *rows, *dirs;
	size_t i;

	(void)state;
	memset(x, 0, sizeof(x));
	memset(d, 0, sizeof(d));
	memset(jobs, 0, sizeof(jobs));
	x[0].id = id;
	x[0].user = user;
	x[0].error_message = msg;
	x[0].state = 0;
	x[1].id = (char *)"6f1c0000-0000-0000-0000-000000000001";
	x[1].user = (char *)"alice";
	x[1].error_message = (char *)"";
	for (i = 0; i < 2; i++) {
		d[i].index = (uint32_t)i;
		d[i].line = 4 + (uint32_t)i;
		d[i].state = D_FAILED;
		d[i].x = &x[i];
	}
	for (i = 0; i < 3; i++) {
		jobs[i].sd = &sd[i];
		jobs[i].attempt = 0;
	}
	jobs[0].d = &d[0];
	jobs[0].nd = 1;
	jobs[0].user = user;
	jobs[0].failed = true;
	jobs[1].d = &d[1];
	jobs[1].nd = 1;
	jobs[1].user = "alice";
	jobs[1].failed = true;
	jobs[2].user = NULL;

	root = status_json(jobs, 3, "server said: \xff");
	rows = json_object_get(root, "jobs");
	/* every row, the one with broken strings among them */
	assert_int_equal(json_array_size(rows), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0),
							    "job")), 11);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "user")), "m\\xfcller");
	dirs = json_object_get(json_array_get(rows, 0), "directives");
	assert_int_equal(json_array_size(dirs), 1);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(dirs, 0), "transfer_id")), "6f1c\\xe2\\x82");
	/* valid UTF-8 (the euro sign, a control byte) kept as it is */
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(dirs, 0), "error_message")),
		"cannot read \\x80/\\xc0\\xaf/\\xed\\xa0\\x80 \xe2\x82\xac ok\x01");
	/* the rows with nothing wrong, unchanged */
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 1), "user")), "alice");
	dirs = json_object_get(json_array_get(rows, 1), "directives");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(dirs, 0), "transfer_id")),
		"6f1c0000-0000-0000-0000-000000000001");
	assert_true(json_is_null(json_object_get(json_array_get(rows, 2), "user")));
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(root, "query"), "error")), "server said: \\xff");
	json_decref(root);
}

/* doctor --json: a check whose message is not UTF-8 (a Latin-1 path, a
 * message cut inside a character) is kept, such bytes as \xNN. */
static void test_doctor_json_not_utf8(void **state)
{
	report_t r;
	json_t *c;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.json = true;
	r.checks = json_array();
	doctor_say(&r, RES_FAIL, "StateDir", "/var/spool/caf\xe9: %s", "gone");
	doctor_say(&r, RES_OK, "server", "said \xe2\x82\xac");
	assert_int_equal(r.n[RES_FAIL], 1);
	assert_int_equal(json_array_size(r.checks), 2);
	c = json_array_get(r.checks, 0);
	assert_string_equal(json_string_value(json_object_get(c, "check")), "StateDir");
	assert_string_equal(json_string_value(json_object_get(c, "status")), "fail");
	assert_string_equal(json_string_value(json_object_get(c, "message")),
			    "/var/spool/caf\\xe9: gone");
	c = json_array_get(r.checks, 1);
	assert_string_equal(json_string_value(json_object_get(c, "message")),
			    "said \xe2\x82\xac");
	json_decref(r.checks);
}

static void test_utf8_lossy(void **state)
{
	static const struct {
		const char *in, *out;
	} c[] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9" },
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },
		{ "a\xff" "b", "a\\xff" "b" },
		{ "\xc3", "\\xc3" },
		{ "\xe2\x82", "\\xe2\\x82" },
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* > U+10FFFF */
		{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },           /* overlong */
		{ "tab\there", "tab\there" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *s = cbb_utf8_lossy(c[i].in, strlen(c[i].in));

		assert_non_null(s);
		assert_string_equal(s, c[i].out);
		assert_true(cbb_utf8_valid(s, strlen(s)));
		free(s);
	}
}

/* Slurm's local time of t, as squeue and scontrol print it */
static const char *stamp(time_t t, char *buf, size_t size)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	return buf;
}

/* squeue's rows, scontrol's buffers and slurmctld's boot time: each
 * kind of loss found, and each near miss left alone */
static void test_slurm_lost_candidates(void **state)
{
	time_t boot = 1800000000;
	char config[256], b0[32], b1[32], b2[32], b3[32], rows[2560];
	const char *burst =
		"Name=lua DefaultPool=(null)\n  StageInTimeout=180 OtherTimeout=60\n"
		"  Allocated Buffers:\n"
		"    JobID=11 CreateTime=x Pool=(null) State=allocated UserID=alice(2001)\n"
		"    JobID=9_2(13) CreateTime=x Pool=(null) State=allocated UserID=alice(2001)\n";
	cbb_sl_job_t v[16];
	size_t n;

	(void)state;
	snprintf(config, sizeof(config), "Configuration data as of x\n"
		 "AccountingStorageBackupHost = (null)\nBOOT_TIME               = %s\n"
		 "BcastExclude = /lib\n", stamp(boot, b0, sizeof(b0)));
	assert_int_equal(cbb_sl_boot_time(config), boot);
	assert_int_equal(cbb_sl_boot_time("BOOT_TIME = 2026"), -1);
	stamp(boot - 5, b1, sizeof(b1));      /* launched just before the restart */
	stamp(boot - 60 - 61, b2, sizeof(b2)); /* before pre_run's window */
	stamp(boot + 5, b3, sizeof(b3));      /* after: this slurmctld's own */
	snprintf(rows, sizeof(rows),
		 "10|PENDING|staging-in|0:00|0.00000000023283|1|N/A|0|\n"   /* lost in */
		 "11|PENDING|staging-in|0:00|0.00000000023283|1|N/A|0|\n"   /* has a buffer */
		 "12|STAGE_OUT|staging-out|0:31|0.00000000023283|1|%s|0|\n" /* lost out */
		 "13|STAGE_OUT|staging-out|0:31|0.0000000002|1|%s|0|\n"    /* task's buffer */
		 "14|PENDING|complete|0:00|0.00000000000000|1|N/A|0|\n"     /* held */
		 "15|RUNNING|pre-run|2:02|0.0000001|1|%s|2|\n"              /* launch */
		 "16|RUNNING|running|2:02|0.0000001|1|%s|0|\n"              /* too early */
		 "17|RUNNING|running|1:59|0.0000001|1|%s|0|\n"              /* not long enough */
		 "18|RUNNING|running|10:00|0.0000001|0|%s|0|\n"             /* not a batch job */
		 "19|PENDING|(null)|0:00|0.00000000000000|1|N/A|0|\n"       /* no burst buffer */
		 "20|COMPLETED|complete|0:30|0.0000001|1|%s|0|\n"
		 "21|PENDING|staging-in|0:00|0.1|1|N/A|extra|0|\n"          /* not eight columns */
		 "22_3|PENDING|staging-in|0:00|0.1|1|N/A|0|\n"              /* not an id */
		 "23|RUNNING|running|1-00:00:01|0.0000001|1|%s|0|\n"        /* started after */
		 "24|RUNNING|running|2:00:01|0.0000001|1|%s|0|\n"
		 "25|STAGE_OUT|teardown|0:30|0.0|1|%s|0|\n"                /* teardown lost */
		 "26|PENDING|teardown|0:00|0.0|1|N/A|0|\n"                  /* held, lost */
		 "27|COMPLETED|complete|0:10|0.00000000000000|1|%s|0|",     /* unstaged? */
		 b1, b1, b1, b2, b1, b1, b1, b3, b1, b1, b1);
	n = cbb_sl_candidates(rows, burst, boot, 120, v, 16);
	assert_int_equal(n, 8);
	assert_int_equal(v[7].job_id, 27);
	assert_int_equal(v[7].kind, CBB_SL_UNSTAGED);
	assert_int_equal(v[5].job_id, 25);
	assert_int_equal(v[5].kind, CBB_SL_STAGE_OUT);
	assert_int_equal(v[6].job_id, 26);
	assert_int_equal(v[6].kind, CBB_SL_STAGE_IN);
	assert_int_equal(v[0].job_id, 10);
	assert_int_equal(v[0].kind, CBB_SL_STAGE_IN);
	assert_int_equal(v[1].job_id, 12);
	assert_int_equal(v[1].kind, CBB_SL_STAGE_OUT);
	assert_int_equal(v[2].job_id, 14);
	assert_int_equal(v[2].kind, CBB_SL_HELD);
	assert_int_equal(v[3].job_id, 15);
	assert_int_equal(v[3].kind, CBB_SL_LAUNCH);
	assert_int_equal(v[3].used_s, 122);
	assert_string_equal(v[3].bbstate, "pre-run");
	assert_int_equal(v[3].restart, 2);
	assert_int_equal(v[4].job_id, 24);
	assert_int_equal(v[4].used_s, 7201);
	/* no boot time: no launch; at most max; none when Slurm said nothing */
	assert_int_equal(cbb_sl_candidates(rows, burst, -1, 120, v, 16), 6);
	assert_int_equal(cbb_sl_candidates(rows, burst, boot, 120, v, 2), 2);
	assert_int_equal(cbb_sl_candidates("", "", boot, 120, v, 16), 0);
}

static void test_slurm_lost_killed_hook(void **state)
{
	char hook[48];

	(void)state;
	assert_true(cbb_sl_killed_hook("burst_buffer/lua: JobHeldAdmin: "
				       "slurm_bb_test_data_in failed: |", hook,
				       sizeof(hook)));
	assert_string_equal(hook, "slurm_bb_test_data_in");
	assert_true(cbb_sl_killed_hook("burst_buffer/lua: JobHeldAdmin: "
				       "slurm_bb_data_in:", hook, sizeof(hook)));
	assert_string_equal(hook, "slurm_bb_data_in");
	/* a hook Slurm never got an answer from (slurmscriptd gone) */
	assert_true(cbb_sl_killed_hook("burst_buffer/lua: JobHeldAdmin: "
				       "slurm_bb_data_in failed: (null)|", hook,
				       sizeof(hook)));
	assert_string_equal(hook, "slurm_bb_data_in");
	assert_false(cbb_sl_killed_hook("burst_buffer/lua: JobHeldAdmin: "
					"slurm_bb_data_in failed: x (null)|",
					hook, sizeof(hook)));
	assert_false(cbb_sl_killed_hook("(null)", hook, sizeof(hook)));
	/* conduit_bb's own failures say why: not Slurm's kill */
	assert_false(cbb_sl_killed_hook("burst_buffer/lua: JobHeldAdmin: "
					"slurm_bb_test_data_in failed: conduit: "
					"server unreachable|", hook, sizeof(hook)));
	assert_false(cbb_sl_killed_hook("JobHeldUser|", hook, sizeof(hook)));
	assert_false(cbb_sl_killed_hook("", hook, sizeof(hook)));
	assert_false(cbb_sl_killed_hook("my_slurm_bb_x failed:", hook,
					sizeof(hook)));
	assert_false(cbb_sl_killed_hook("slurm_bb_: ", hook, sizeof(hook)));
	/* the newest SystemComment entry of `scontrol show job` */
	assert_true(cbb_sl_comment_killed_hook(
		"JobId=7 JobName=x\n   SystemComment=12/03/26 12:40:01 "
		"burst_buffer/lua: slurm_bb_data_in: conduit: down\n12/03/26 "
		"12:48:18 burst_buffer/lua: slurm_bb_test_data_in: \n"
		"   StdErr=/dev/null\n", hook, sizeof(hook)));
	assert_string_equal(hook, "slurm_bb_test_data_in");
	assert_false(cbb_sl_comment_killed_hook(
		"JobId=7\n   SystemComment=12/03/26 12:48:18 burst_buffer/lua: "
		"slurm_bb_test_data_in: conduit: down\n   StdErr=x\n", hook,
		sizeof(hook)));
	assert_true(cbb_sl_comment_killed_hook(
		"JobId=7\n   SystemComment=12/03/26 12:48:18 burst_buffer/lua: "
		"slurm_bb_data_in: (null)\n   StdErr=x\n", hook, sizeof(hook)));
	assert_string_equal(hook, "slurm_bb_data_in");
	/* the teardowns that failed after it (Flags=TeardownFailure) are
	 * passed over, only when Slurm could not run them either */
	assert_true(cbb_sl_comment_killed_hook(
		"JobId=7\n   SystemComment=12/03/26 16:30:43 burst_buffer/lua: "
		"slurm_bb_post_run: (null)\n12/03/26 16:30:43 burst_buffer/lua: "
		"teardown: (null)\n12/03/26 16:30:53 burst_buffer/lua: "
		"teardown: \n   StdErr=\n", hook, sizeof(hook)));
	assert_string_equal(hook, "slurm_bb_post_run");
	assert_false(cbb_sl_comment_killed_hook(
		"JobId=7\n   SystemComment=12/03/26 16:30:43 burst_buffer/lua: "
		"slurm_bb_post_run: (null)\n12/03/26 16:30:43 burst_buffer/lua: "
		"teardown: conduit: squeue gave no answer\n   StdErr=\n", hook,
		sizeof(hook)));
	assert_false(cbb_sl_comment_killed_hook(
		"JobId=7\n   SystemComment=12/03/26 16:30:43 burst_buffer/lua: "
		"teardown: (null)\n   StdErr=\n", hook, sizeof(hook)));
	/* an empty value, and none at all */
	assert_false(cbb_sl_comment_killed_hook(
		"JobId=7\n   SystemComment=\n   StdErr=x\n", hook, sizeof(hook)));
	assert_false(cbb_sl_comment_killed_hook("JobId=7\n   SystemComment=",
						hook, sizeof(hook)));
	assert_false(cbb_sl_comment_killed_hook("JobId=7\n", hook, sizeof(hook)));
}

/* `scontrol show job ID --json` as Slurm 25.11 (data_parser v0.0.44)
 * writes it, cut to what is read and a field or two beside */
#define JOB_JSON(id, more) \
	"{\"jobs\": [{\"job_id\": " id ", \"user_id\": 2001, " \
	"\"user_name\": \"alice\", \"name\": \"wave-plain.sh\", " \
	"\"cluster\": \"conduit\", " \
	"\"current_working_directory\": \"/home/alice/jobs\", " \
	"\"restart_cnt\": 1, \"submit_time\": {\"set\": true, " \
	"\"infinite\": false, \"number\": 1796313147}, " \
	"\"end_time\": {\"set\": true, \"infinite\": false, " \
	"\"number\": 1796313195}, \"batch_flag\": true" more "}], " \
	"\"meta\": {\"plugin\": {\"data_parser\": \"data_parser/v0.0.44\"}}}"
#define PLAIN_JOB ", \"array_job_id\": {\"set\": true, \"infinite\": " \
	"false, \"number\": 0}, \"array_task_id\": {\"set\": false, " \
	"\"infinite\": false, \"number\": 0}"

static void test_slurm_job_json(void **state)
{
	static const char ok[] = JOB_JSON("32", PLAIN_JOB
		", \"job_state\": [\"COMPLETED\", \"STAGE_OUT\"], "
		"\"exit_code\": {\"status\": [\"SUCCESS\"], \"return_code\": "
		"{\"set\": true, \"infinite\": false, \"number\": 3}, "
		"\"signal\": {\"id\": {\"set\": false, \"infinite\": false, "
		"\"number\": 0}, \"name\": \"\"}}");
	static const char task[] = JOB_JSON("42",
		", \"array_job_id\": {\"set\": true, \"infinite\": false, "
		"\"number\": 41}, \"array_task_id\": {\"set\": true, "
		"\"infinite\": false, \"number\": 0}, \"job_state\": "
		"[\"FAILED\", \"STAGE_OUT\"], \"exit_code\": {\"signal\": "
		"{\"id\": {\"set\": true, \"infinite\": false, \"number\": 9}}, "
		"\"return_code\": {\"set\": true, \"infinite\": false, "
		"\"number\": 0}}");
	static const char two_bases[] = JOB_JSON("32", PLAIN_JOB
		", \"job_state\": [\"COMPLETED\", \"FAILED\"]");
	static const char no_state[] = JOB_JSON("32", PLAIN_JOB);
	static const char task_no_array[] = JOB_JSON("42",
		", \"array_task_id\": 3, \"job_state\": \"PENDING\"");
	cbb_slurm_job_t j;
	cbb_err_t err;

	(void)state;
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json(ok, strlen(ok), 32, &j, &err), 0);
	assert_int_equal(j.user_id, 2001);
	assert_string_equal(j.user_name, "alice");
	assert_string_equal(j.name, "wave-plain.sh");
	assert_string_equal(j.work_dir, "/home/alice/jobs");
	assert_string_equal(j.cluster, "conduit");
	assert_int_equal(j.restart, 1);
	assert_int_equal(j.submit, 1796313147);
	assert_int_equal(j.end, 1796313195);
	assert_int_equal(j.array_job_id, 0);
	assert_int_equal(j.array_task_id, CBB_NO_VAL);
	assert_true(j.have_state && j.stage_out);
	assert_int_equal(j.job_state, 3); /* COMPLETED */
	assert_true(j.have_exit);
	assert_int_equal(j.exit_code, 3 << 8); /* a wait status: exit 3 */
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json(task, strlen(task), 42, &j, &err), 0);
	assert_int_equal(j.array_job_id, 41);
	assert_int_equal(j.array_task_id, 0);
	assert_int_equal(j.job_state, 5); /* FAILED */
	assert_int_equal(j.exit_code, 9); /* killed by signal 9 */
	/* another job's record, or one that does not say enough: declined */
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json(ok, strlen(ok), 33, &j, &err), -1);
	assert_non_null(strstr(err.msg, "no one record of job 33"));
	/* an array's own id: scontrol lists every task; the one whose job
	 * id it is is read */
	{
		char both[2048];
		const char *a = strstr(task, "{\"job_id\""), *b = strstr(ok, "{\"job_id\"");

		snprintf(both, sizeof(both), "{\"jobs\": [%.*s, %.*s]}",
			 (int)(strstr(a, "}], ") - a + 1), a,
			 (int)(strstr(b, "}], ") - b + 1), b);
		cbb_err_clear(&err);
		assert_int_equal(cbb_slurm_job_json(both, strlen(both), 42, &j,
						    &err), 0);
		assert_int_equal(j.array_task_id, 0);
		assert_int_equal(cbb_slurm_job_json(both, strlen(both), 32, &j,
						    &err), 0);
		assert_int_equal(j.array_task_id, CBB_NO_VAL);
		cbb_err_clear(&err);
		assert_int_equal(cbb_slurm_job_json(both, strlen(both), 7, &j,
						    &err), -1);
	}
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json(two_bases, strlen(two_bases), 32,
					    &j, &err), -1);
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json(no_state, strlen(no_state), 32, &j,
					    &err), -1);
	assert_non_null(strstr(err.msg, "lacks a field"));
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json(task_no_array,
					    strlen(task_no_array), 42, &j, &err),
			 -1);
	assert_non_null(strstr(err.msg, "does not name its array"));
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json("{\"jobs\": [", 10, 32, &j, &err),
			 -1);
	cbb_err_clear(&err);
	assert_int_equal(cbb_slurm_job_json("{\"jobs\": []}", 12, 32, &j, &err),
			 -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_atomic_write_tmpfile, unplant),
		cmocka_unit_test_teardown(test_atomic_write_named, unplant),
		cmocka_unit_test_teardown(test_atomic_write_refused, unplant),
		cmocka_unit_test(test_apart_pipe_close_on_exec),
		cmocka_unit_test(test_status_json_not_utf8),
		cmocka_unit_test(test_doctor_json_not_utf8),
		cmocka_unit_test(test_utf8_lossy),
		cmocka_unit_test(test_slurm_lost_candidates),
		cmocka_unit_test(test_slurm_lost_killed_hook),
		cmocka_unit_test(test_slurm_job_json),
	};

	if (argc > 1 && !strcmp(argv[1], "--list-fds"))
		return list_fds();
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
