/* test_runner's stand-ins for Slurm's log calls (log.h): to stderr. */
#ifndef SHIM_LOG_H
#define SHIM_LOG_H
#include <stdio.h>
#define error(...) (fprintf(stderr, "error: " __VA_ARGS__), fputc('\n', stderr))
#define log_flag(flag, ...) do { } while (0)
#endif
