/*
 * config_values.h - the value checkers behind conduit_bb.conf's keys
 * (config.c holds the key table, defaults and line parsing).
 *
 * Each cbb_set_* takes the text after '=' (trimmed), checks it against
 * what the key allows and stores it in `field` (a member of c); on a
 * bad value it returns -1 with a one-line reason that shows what a good
 * value looks like, and leaves the field as it was.  Internal to core.
 */
#ifndef CBB_CONFIG_VALUES_H
#define CBB_CONFIG_VALUES_H

#include "config.h"

typedef int (*cbb_setter_fn)(cbb_config_t *c, const char *val, void *field,
			 cbb_err_t *err);

int cbb_set_string(cbb_config_t *c, const char *val, void *field,
		   cbb_err_t *err);
int cbb_set_file(cbb_config_t *c, const char *val, void *field, cbb_err_t *err);
int cbb_set_server(cbb_config_t *c, const char *val, void *field,
		   cbb_err_t *err);
int cbb_set_hostname(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err);
int cbb_set_duration(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err);
int cbb_set_tls_groups(cbb_config_t *c, const char *val, void *field,
		       cbb_err_t *err);
int cbb_set_bool(cbb_config_t *c, const char *val, void *field, cbb_err_t *err);
int cbb_set_word(cbb_config_t *c, const char *val, void *field, cbb_err_t *err);
int cbb_set_either(bool *flag, const char *val, const char *off, const char *on,
		   cbb_err_t *err);
int cbb_set_controller(cbb_config_t *c, const char *val, void *field,
		       cbb_err_t *err);
int cbb_set_delivery(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err);
int cbb_set_https_url(cbb_config_t *c, const char *val, void *field,
		      cbb_err_t *err);
int cbb_set_vlans(cbb_config_t *c, const char *val, void *field, cbb_err_t *err);
int cbb_set_grace(cbb_config_t *c, const char *val, void *field, cbb_err_t *err);
int cbb_set_program(cbb_config_t *c, const char *val, void *field,
		    cbb_err_t *err);
int cbb_set_uint(const char *val, unsigned *dst, unsigned long lo,
		 unsigned long hi, cbb_err_t *err);
int cbb_set_env_names(cbb_config_t *c, const char *val, void *field,
		      cbb_err_t *err);
int cbb_set_mover(cbb_config_t *c, const char *val, void *field,
		  cbb_err_t *err);
int cbb_set_validation(cbb_config_t *c, const char *val, void *field,
		       cbb_err_t *err);
void cbb_prefixes_clear(cbb_prefixes_t *p);
int cbb_set_prefixes(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err);

#endif
