/*
 * test_runner's stand-in for Slurm 26.05's run_command()
 * (src/common/run_command.[ch]): the members the plugin sets, with the
 * same meaning; implemented in tests/switch/run_command_shim.c the way
 * Slurm's is (fork, stdin from the write pipe, stdout and stderr into
 * one pipe, every other descriptor closed, a process group of its own,
 * the group killed at max_wait and after the exit).
 */
#ifndef SHIM_RUN_COMMAND_H
#define SHIM_RUN_COMMAND_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
typedef struct {
	void (*cb)(int write_fd, void *cb_arg);
	void *cb_arg;
	char **env;
	bool ignore_path_exec_check;
	bool direct_exec;
	uint32_t job_id;
	int max_wait;
	bool orphan_on_shutdown;
	char **script_argv;
	const char *script_path;
	const char *script_type;
	int *status;
	pthread_t tid;
	bool *timed_out;
	bool write_to_child;
} run_command_args_t;
char *run_command(run_command_args_t *args);
#endif
