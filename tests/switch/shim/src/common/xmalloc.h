/* test_runner's stand-ins for Slurm's allocation wrappers (xmalloc.h):
 * zeroed, never NULL, and xfree/xrealloc take the pointer itself. */
#ifndef SHIM_XMALLOC_H
#define SHIM_XMALLOC_H
#include <stdlib.h>
void *shim_xmalloc(size_t n);
void shim_xrealloc(void **p, size_t n);
#define xmalloc(n) shim_xmalloc(n)
#define xrealloc(p, n) shim_xrealloc((void **)&(p), (n))
#define xfree(p) do { free(p); (p) = NULL; } while (0)
#endif
