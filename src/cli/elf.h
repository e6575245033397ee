/*
 * elf.h - just enough of an ELF reader for `conduit-bb doctor`: the
 * shared libraries a binary or plugin needs (DT_NEEDED), the contents of
 * a named section, and whether a dynamic symbol is imported.  64-bit
 * little-endian ELF only (what Slurm runs on); every offset is checked
 * against the file's size before it is read.
 */
#ifndef CBB_CLI_ELF_H
#define CBB_CLI_ELF_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef struct {
	unsigned char *map;
	size_t size;
} cbb_elf_t;

int cbb_elf_open(cbb_elf_t *e, const char *path, cbb_err_t *err);
void cbb_elf_close(cbb_elf_t *e);

/* Call fn for each DT_NEEDED name, in order; returns how many. */
size_t cbb_elf_needed(const cbb_elf_t *e,
		      void (*fn)(void *ud, const char *name), void *ud);

/* A section's bytes (NULL when absent); *len is its size. */
const char *cbb_elf_section(const cbb_elf_t *e, const char *name,
			    size_t *len);

/* Whether `sym` is an undefined (imported) dynamic symbol. */
bool cbb_elf_imports(const cbb_elf_t *e, const char *sym);

/*
 * The Lua version ("5.1" ... "5.4") a library named `needed` is, e.g.
 * liblua5.1.so.0 (Debian), liblua-5.3.so (EL8), liblua.so.5.4; false
 * when it is not a Lua library or names no version.
 */
bool cbb_elf_lua_of(const char *needed, char *ver, size_t size);

#endif
