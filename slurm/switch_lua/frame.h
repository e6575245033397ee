/*
 * frame.h - the helper's answer stream (slurm/switch_lua/README.md).
 * Each frame is one type byte, a 4-byte little-endian length and that
 * many bytes:
 *   'L'  a log line: a level byte (SWL_LOG_*), then the message
 *   'R'  the result: one wire value (wire.h), a table with
 *        status  "ok" | "error" (a Lua error) | "load" (the script did
 *                not load) | "badrc" (rc is not a number) | "unsaved"
 *                (job_start's jobinfo cannot be stored)
 *        rc      the hook's return code (status "ok")
 *        value   job_start: the jobinfo (absent: nil); step_init: the
 *                environment (name -> string, or false to unset); load:
 *                { block_job_complete = bool, setup_special_steps = bool }
 *        msg     what went wrong, for the log
 * The helper writes at most one 'R' frame, last.
 */
#ifndef SWL_FRAME_H
#define SWL_FRAME_H

#define SWL_FRAME_HEAD 5

#define SWL_LOG_ERROR   'e'
#define SWL_LOG_INFO    'i'
#define SWL_LOG_VERBOSE 'v'
#define SWL_LOG_DEBUG   'd'

/* The helper's descriptors: its request in, its answer out. */
#define SWL_FD_REQUEST 3
#define SWL_FD_ANSWER  4

#endif
