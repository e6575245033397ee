/* directive_json.c - see directive_json.h */
#include "directive_json.h"

int cbb_directive_json_into(json_t *o, const cbb_directive_t *d,
			    unsigned flags)
{
	json_t *src = json_array();
	size_t k;

	if (!src)
		return -1;
	/* as before: a field jansson cannot add is left out, not the line */
	for (k = 0; k < d->nsources; k++)
		(void)json_array_append_new(src, json_string(d->sources[k]));
	(void)json_object_set_new(o, "line", json_integer(d->line));
	if (flags & CBB_DJSON_PLACE) {
		(void)json_object_set_new(o, "index", json_integer(d->index));
		(void)json_object_set_new(o, "type",
					  json_string(cbb_stage_name(d->stage)));
	}
	(void)json_object_set_new(o, "action",
				  json_string(cbb_action_name(d->action)));
	(void)json_object_set_new(o, "recursive", json_boolean(d->recursive));
	if (flags & CBB_DJSON_OPTIONS) {
		(void)json_object_set_new(o, "every_attempt",
					  json_boolean(d->every_attempt));
		if (d->stage == CBB_STAGE_OUT)
			(void)json_object_set_new(o, "when", json_string(
				cbb_when_name(d->when)));
	}
	if (flags & CBB_DJSON_SHARED)
		(void)json_object_set_new(o, "shared_by_array",
					  json_boolean(cbb_directive_shared(d)));
	(void)json_object_set_new(o, "sources", src);
	(void)json_object_set_new(o, "destination",
				  json_string(d->destination));
	return 0;
}

json_t *cbb_directive_json(const cbb_directive_t *d, unsigned flags)
{
	json_t *o = json_object();

	if (o && cbb_directive_json_into(o, d, flags) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
