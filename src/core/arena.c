/* arena.c - see arena.h */
#include "arena.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* what any object the parser stores needs (C99 has no max_align_t) */
typedef union {
	long double d;
	long long l;
	void *p;
} align_t;

struct cbb_arena_block {
	cbb_arena_block_t *prev;
	size_t size;
	align_t data[];
};

#define FIRST_BLOCK 4096
#define MAX_BLOCK ((size_t)64 << 10) /* under malloc's mmap threshold */

void cbb_arena_init(cbb_arena_t *a)
{
	memset(a, 0, sizeof(*a));
}

void *cbb_arena_alloc(cbb_arena_t *a, size_t n)
{
	const size_t al = sizeof(align_t);
	size_t pad = (al - (uintptr_t)a->next % al) % al;
	void *p;

	if (n > SIZE_MAX / 2)
		return NULL;
	if (!a->head || pad + n > a->left) {
		size_t size = a->head ? a->head->size * 2 : FIRST_BLOCK;
		cbb_arena_block_t *b;

		if (size > MAX_BLOCK)
			size = MAX_BLOCK;
		if (size < n)
			size = n;
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->prev = a->head;
		b->size = size;
		a->head = b;
		a->next = (char *)b->data;
		a->left = size;
		pad = 0;
	}
	p = a->next + pad;
	a->next += pad + n;
	a->left -= pad + n;
	return p;
}

char *cbb_arena_strndup(cbb_arena_t *a, const char *s, size_t n)
{
	char *p = cbb_arena_alloc(a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void cbb_arena_free(cbb_arena_t *a)
{
	while (a->head) {
		cbb_arena_block_t *b = a->head;

		a->head = b->prev;
		free(b);
	}
	cbb_arena_init(a);
}
