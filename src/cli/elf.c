/* elf.c - see elf.h */
#include "elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ELF_MAX_BYTES ((size_t)1 << 30)

int cbb_elf_open(cbb_elf_t *e, const char *path, cbb_err_t *err)
{
	const Elf64_Ehdr *h;
	struct stat st;
	void *m;
	int fd;

	e->map = NULL;
	e->size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbb_err(err, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(Elf64_Ehdr) ||
	    (size_t)st.st_size > ELF_MAX_BYTES) {
		close(fd);
		return cbb_err(err, "%s is not an ELF file", path);
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return cbb_err(err, "cannot read %s: %s", path, strerror(errno));
	h = m;
	if (memcmp(h->e_ident, ELFMAG, SELFMAG) ||
	    h->e_ident[EI_CLASS] != ELFCLASS64 ||
	    h->e_ident[EI_DATA] != ELFDATA2LSB ||
	    h->e_shentsize != sizeof(Elf64_Shdr) ||
	    h->e_shoff > (size_t)st.st_size ||
	    h->e_shnum > ((size_t)st.st_size - h->e_shoff) / sizeof(Elf64_Shdr) ||
	    h->e_shstrndx >= h->e_shnum) {
		munmap(m, (size_t)st.st_size);
		return cbb_err(err, "%s is not a 64-bit little-endian ELF file "
			       "with section headers", path);
	}
	e->map = m;
	e->size = (size_t)st.st_size;
	return 0;
}

void cbb_elf_close(cbb_elf_t *e)
{
	if (e->map)
		munmap(e->map, e->size);
	e->map = NULL;
	e->size = 0;
}

static const Elf64_Shdr *shdr(const cbb_elf_t *e, size_t i)
{
	const Elf64_Ehdr *h = (const void *)e->map;

	if (i >= h->e_shnum)
		return NULL;
	return (const Elf64_Shdr *)(e->map + h->e_shoff) + i;
}

/* A section's bytes if they lie inside the file (NOBITS has none). */
static const unsigned char *body(const cbb_elf_t *e, const Elf64_Shdr *s)
{
	if (!s || s->sh_type == SHT_NOBITS || s->sh_offset > e->size ||
	    s->sh_size > e->size - s->sh_offset)
		return NULL;
	return e->map + s->sh_offset;
}

/* NUL-terminated string at `off` of string table section `strtab`. */
static const char *str_at(const cbb_elf_t *e, size_t strtab, size_t off)
{
	const Elf64_Shdr *s = shdr(e, strtab);
	const unsigned char *b = body(e, s);

	if (!b || off >= s->sh_size || !memchr(b + off, '\0', s->sh_size - off))
		return NULL;
	return (const char *)b + off;
}

static const Elf64_Shdr *find_type(const cbb_elf_t *e, uint32_t type)
{
	const Elf64_Ehdr *h = (const void *)e->map;
	size_t i;

	for (i = 0; i < h->e_shnum; i++)
		if (shdr(e, i)->sh_type == type)
			return shdr(e, i);
	return NULL;
}

size_t cbb_elf_needed(const cbb_elf_t *e,
		      void (*fn)(void *ud, const char *name), void *ud)
{
	const Elf64_Shdr *s = find_type(e, SHT_DYNAMIC);
	const Elf64_Dyn *d = (const void *)body(e, s);
	size_t i, n = 0;

	if (!d)
		return 0;
	for (i = 0; i < s->sh_size / sizeof(*d) && d[i].d_tag != DT_NULL; i++) {
		const char *name;

		if (d[i].d_tag != DT_NEEDED)
			continue;
		name = str_at(e, s->sh_link, d[i].d_un.d_val);
		if (name) {
			fn(ud, name);
			n++;
		}
	}
	return n;
}

const char *cbb_elf_section(const cbb_elf_t *e, const char *name, size_t *len)
{
	const Elf64_Ehdr *h = (const void *)e->map;
	size_t i;

	for (i = 0; i < h->e_shnum; i++) {
		const Elf64_Shdr *s = shdr(e, i);
		const char *n = str_at(e, h->e_shstrndx, s->sh_name);
		const unsigned char *b;

		if (!n || strcmp(n, name) || !(b = body(e, s)))
			continue;
		*len = s->sh_size;
		return (const char *)b;
	}
	return NULL;
}

bool cbb_elf_imports(const cbb_elf_t *e, const char *sym)
{
	const Elf64_Shdr *s = find_type(e, SHT_DYNSYM);
	const Elf64_Sym *v = (const void *)body(e, s);
	size_t i;

	if (!v || s->sh_entsize != sizeof(*v))
		return false;
	for (i = 1; i < s->sh_size / sizeof(*v); i++) {
		const char *n;

		if (v[i].st_shndx != SHN_UNDEF)
			continue;
		n = str_at(e, s->sh_link, v[i].st_name);
		if (n && !strcmp(n, sym))
			return true;
	}
	return false;
}

bool cbb_elf_lua_of(const char *needed, char *ver, size_t size)
{
	const char *p;

	if (strncmp(needed, "liblua", 6) || size < 4)
		return false;
	for (p = needed + 6; *p; p++)
		if (p[0] == '5' && p[1] == '.' && p[2] >= '1' && p[2] <= '9' &&
		    (p[3] < '0' || p[3] > '9')) {
			memcpy(ver, p, 3);
			ver[3] = '\0';
			return true;
		}
	return false;
}
