/*
 * arena.h - bump allocation for what lives exactly as long as one parse:
 * a job's directives, their paths and source lists.  Freed all at once;
 * a parse of N directives costs a few allocations, not several per
 * directive.  Not shared between threads (each call has its own).
 */
#ifndef CBB_ARENA_H
#define CBB_ARENA_H

#include <stddef.h>

typedef struct cbb_arena_block cbb_arena_block_t;

typedef struct {
	cbb_arena_block_t *head; /* newest block first */
	char *next;              /* free space in head */
	size_t left;
} cbb_arena_t;

void cbb_arena_init(cbb_arena_t *a);
/* n bytes aligned for any object, or NULL when memory is short. */
void *cbb_arena_alloc(cbb_arena_t *a, size_t n);
/* A NUL-terminated copy of n bytes of s, or NULL. */
char *cbb_arena_strndup(cbb_arena_t *a, const char *s, size_t n);
void cbb_arena_free(cbb_arena_t *a);

#endif
