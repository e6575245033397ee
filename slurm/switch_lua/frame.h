/*
 * frame.h - the helper's answer stream (slurm/switch_lua/README.md).
 * Slurm's run_command() hands the plugin the helper's output as one
 * NUL-terminated string, so the stream is text: one frame a line, its
 * type letter, then its bytes in hexadecimal, then '\n':
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
 * The helper writes at most one 'R' frame, last, and at most
 * SWL_LOG_MAX bytes of log lines before it.
 */
#ifndef SWL_FRAME_H
#define SWL_FRAME_H

#define SWL_LOG_ERROR   'e'
#define SWL_LOG_INFO    'i'
#define SWL_LOG_VERBOSE 'v'
#define SWL_LOG_DEBUG   'd'

#define SWL_LOG_LINE_MAX 16384          /* one log line */
#define SWL_LOG_MAX      ((size_t)256 << 10) /* all of a call's log lines */

#endif
