/*
 * admin.h - the commands of `conduit-bb` for the people who run the
 * cluster (check.c has the users' `check` and `network`):
 *
 *   doctor   checks the installation end to end (doctor.c)
 *   status   every staging job StateDir knows, one Query (status.c)
 *   metrics  Prometheus text for node_exporter's textfile collector
 *            (metrics.c)
 *   recover  finish now the stage-outs Slurm dropped (recover.c)
 *
 * Each takes main's argc/argv (argv[1] is the command) and returns the
 * exit status.
 */
#ifndef CBB_CLI_ADMIN_H
#define CBB_CLI_ADMIN_H

#include <stdio.h>

#include "config.h"
#include "statedir.h"

int cbb_cmd_doctor(int argc, char **argv);
int cbb_cmd_status(int argc, char **argv);
int cbb_cmd_metrics(int argc, char **argv);
int cbb_cmd_recover(int argc, char **argv);

/*
 * What they share: the config loaded (cbb_admin_config), and for the
 * commands that read StateDir, run as its owner and its jobs listed
 * (cbb_admin_statedir).  0, or 2 (the exit status) once the reason is on
 * stderr and nothing is left to free.
 */
int cbb_admin_config(const char *path, cbb_config_t *cfg);
int cbb_admin_statedir(const char *path, cbb_config_t *cfg,
		       cbb_sd_list_t *sd);

/* The usage lines of these commands. */
void cbb_admin_usage(FILE *f);

#endif
