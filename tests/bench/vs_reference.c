/*
 * vs_reference.c - slurm_bb_job_process of conduit_bb against Conduit's
 * own pure-Lua plugin, side by side in one run (measures, asserts nothing).
 *
 *   vs_reference MODULE_DIR REFERENCE_LUA WORK_DIR
 *
 * For N = 10, 100, 1000 directives, one script both accept (#CONDUIT_POST
 * lines, which the reference checks without running its CLI): the median
 * wall time of a hook process's part, i.e. loading the plugin into a
 * fresh Lua state and calling job_process.  The state itself (newstate,
 * openlibs) costs both the same and is left out.  Each side and N runs in
 * a child process of its own.  The reference needs a
 * `posix` module only to run its CLI: an empty table stands in.  It is
 * loaded from the path given, never copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook_host.h"

static const char *work;

static int empty_module(lua_State *L)
{
	lua_newtable(L);
	return 1;
}

static lua_State *fresh_state(const char *mod_dir)
{
	lua_State *L = luaL_newstate();

	hh_setup_state(L, mod_dir, "bench");
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	lua_pushcfunction(L, empty_module);
	lua_setfield(L, -2, "posix");
	lua_pop(L, 2);
	return L;
}

/* Load the plugin (`load` is Lua code) and call job_process: ms. */
static double one_call(const char *mod_dir, const char *load,
		       const char *script, int *rc)
{
	lua_State *L = fresh_state(mod_dir);
	double t0, t1;

	t0 = hh_now_ms();
	if (luaL_dostring(L, load) != 0) {
		fprintf(stderr, "load: %s\n", lua_tostring(L, -1));
		exit(1);
	}
	lua_getglobal(L, "slurm_bb_job_process");
	lua_pushstring(L, script);
	lua_pushstring(L, "61001");
	lua_pushstring(L, "61001");
	lua_newtable(L);
	lua_pushinteger(L, 4242);
	lua_setfield(L, -2, "job_id");
	lua_pushinteger(L, 61001);
	lua_setfield(L, -2, "user_id");
	lua_pushstring(L, work);
	lua_setfield(L, -2, "work_dir");
	lua_call(L, 4, 2);
	t1 = hh_now_ms();
	*rc = (int)lua_tointeger(L, -2);
	if (*rc != 0)
		fprintf(stderr, "job_process: %s\n", lua_tostring(L, -1));
	lua_close(L);
	return t1 - t0;
}

/*
 * The median of `reps` calls, in a child process of its own: the malloc
 * heap one side leaves behind (trimmed or not, mmap threshold raised or
 * not) must not change what the other side pays for its page faults.
 */
static double median_of(const char *mod_dir, const char *load,
			const char *script, int reps, int *rc)
{
	double t[101], res[2] = { 0, -1 };
	int fd[2], i, st;
	pid_t pid;

	if (reps > 101)
		reps = 101;
	if (pipe(fd) < 0 || (pid = fork()) < 0) {
		*rc = -1;
		return 0;
	}
	if (pid == 0) {
		close(fd[0]);
		(void)one_call(mod_dir, load, script, rc); /* warm up */
		for (i = 0; i < reps && *rc == 0; i++)
			t[i] = one_call(mod_dir, load, script, rc);
		qsort(t, (size_t)i, sizeof(t[0]), hh_cmp);
		res[0] = i ? t[i / 2] : 0;
		res[1] = *rc;
		if (write(fd[1], res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], res, sizeof(res)) != (ssize_t)sizeof(res))
		res[1] = -1;
	close(fd[0]);
	(void)waitpid(pid, &st, 0);
	*rc = (int)res[1];
	return res[0];
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 10, 100, 1000 };
	char ref_load[2048], script[1024];
	int have_ref;
	size_t s;
	FILE *f;

	if (argc != 4)
		return 2;
	work = argv[3];
	f = fopen(argv[2], "r");
	have_ref = f != NULL;
	if (f)
		fclose(f);
	else
		printf("reference not available (%s): conduit_bb alone\n\n",
		       argv[2]);
	snprintf(ref_load, sizeof(ref_load), "dofile('%s')", argv[2]);
	printf("| directives | conduit_bb | reference | reference / conduit_bb |\n"
	       "|---|---|---|---|\n");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s], i, rc_ours, rc_ref;
		double ours, ref;

		snprintf(script, sizeof(script), "%s/vs-ref-%d.sh", work, n);
		f = fopen(script, "w");
		if (!f)
			return 1;
		fprintf(f, "#!/bin/bash\n#SBATCH -N 1\n");
		for (i = 0; i < n; i++)
			fprintf(f, "#CONDUIT_POST cp -r %s/out/run-%d %s/archive/%d/\n",
				work, i, work, i);
		fprintf(f, "srun ./app\n");
		fclose(f);
		ours = median_of(argv[1], "require('conduit_bb')", script,
				 n >= 1000 ? 31 : 101, &rc_ours);
		ref = 0;
		rc_ref = 0;
		if (have_ref)
			ref = median_of(argv[1], ref_load, script,
					n >= 1000 ? 31 : 101, &rc_ref);
		if (rc_ours || rc_ref) {
			printf("| %d | %s | %s | - |\n", n,
			       rc_ours ? "failed" : "ok", rc_ref ? "failed" : "ok");
			continue;
		}
		if (!have_ref)
			printf("| %d | %.3f ms | not available | - |\n", n, ours);
		else
			printf("| %d | %.3f ms | %.3f ms | %.1fx |\n", n, ours,
			       ref, ref / ours);
	}
	return 0;
}
