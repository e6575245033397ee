/*
 * wire.h - the byte form of the values the switch/lua plugin and its
 * helper exchange (slurm/switch_lua/README.md): the request to the
 * helper, its answer, and every stored jobinfo.  Neither Slurm nor Lua:
 * both sides link it.
 *
 * A value is one tag byte, then:
 *   'n'                nil
 *   'f' 't'            false, true
 *   'i' 8 bytes        a 64-bit integer, little-endian
 *   'd' 8 bytes        a double, its IEEE-754 bits little-endian
 *   's' 4 bytes, data  a string: its length (little-endian), its bytes
 *   '{' pairs '}'      a table: key value key value ... (keys are never
 *                      nil nor tables)
 * Tables nest at most SWL_WIRE_DEPTH deep.
 */
#ifndef SWL_WIRE_H
#define SWL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWL_WIRE_DEPTH 16
#define SWL_WIRE_MAX   ((size_t)1 << 20) /* one request or answer */
/* a jobinfo job_start returns: it is saved with the job and copied into
 * every step's launch credential, so it is kept small */
#define SWL_JOBINFO_MAX ((size_t)64 << 10)

typedef struct {
	unsigned char *data;
	size_t len, cap;
	bool bad;                  /* out of memory or over SWL_WIRE_MAX */
} swl_out_t;

void swl_out_init(swl_out_t *o);
void swl_out_free(swl_out_t *o);
void swl_put_raw(swl_out_t *o, const void *p, size_t n);
void swl_put_nil(swl_out_t *o);
void swl_put_bool(swl_out_t *o, bool v);
void swl_put_int(swl_out_t *o, int64_t v);
void swl_put_double(swl_out_t *o, double v);
void swl_put_str(swl_out_t *o, const char *s, size_t n);
void swl_put_cstr(swl_out_t *o, const char *s); /* NULL: nil */
void swl_open(swl_out_t *o);
void swl_close(swl_out_t *o);
/* key = value shorthands inside an open table */
void swl_kv_str(swl_out_t *o, const char *k, const char *v); /* NULL: left out */
void swl_kv_int(swl_out_t *o, const char *k, int64_t v);
void swl_kv_bool(swl_out_t *o, const char *k, bool v);

/* A value read in place: strings point into the input. */
typedef struct {
	char tag;                  /* 'n' 'f' 't' 'i' 'd' 's' '{' */
	int64_t i;
	double d;
	const unsigned char *s;    /* 's': the bytes; '{': the first pair */
	size_t n;                  /* 's': the length; '{': bytes up to '}' */
} swl_val_t;

/*
 * Read one value at p (up to end).  Returns the byte after it, or NULL
 * when the bytes are not one well-formed value.
 */
const unsigned char *swl_get(const unsigned char *p, const unsigned char *end,
			     swl_val_t *v);
/* Is [p, p + n) exactly one well-formed value? */
bool swl_valid(const unsigned char *p, size_t n);
/*
 * In a table value t, find the value of string key k.  Returns true and
 * fills v when found; v is left alone otherwise.
 */
bool swl_field(const swl_val_t *t, const char *k, swl_val_t *v);

#endif
