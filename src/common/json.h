/*
 * json.h — reading members of jsonb documents; used by api/request.c for
 * requests and by the catalog for the documents it stores.
 */
#ifndef DYNINDEX_JSON_H
#define DYNINDEX_JSON_H

#include "utils/jsonb.h"

/* Member of an object container, or NULL when absent or JSON null. */
extern JsonbValue *RqGet(JsonbContainer *obj, const char *name);
extern JsonbValue *RqGetJv(JsonbValue *obj, const char *name);
/* String member, or NULL if absent. */
extern char *RqGetString(JsonbContainer *obj, const char *name);
/* Is the string member equal to value? */
extern bool RqStringIs(JsonbContainer *obj, const char *name, const char *value);
/* Elements of an array value. */
extern JsonbValue *RqArrayElems(JsonbValue *arr, int *n);
/* Members of an object value: keys[] and values[] (in jsonb order). */
extern int	RqObjectMembers(JsonbValue *obj, JsonbValue **keys, JsonbValue **values);

/*
 * The jsonb iterator sets only the type of a null element or member: its
 * value keeps what the previous one or the stack left there, so a reader that
 * takes it for a string without looking at the type reads garbage (a fuzzed
 * CreateTable survived that on PostgreSQL 15 and crashed 18).  Assertion
 * builds (make test) fill it with a pattern that faults at once on every
 * major; the readers above and DynJsonArrayElements apply it.
 */
static inline void
DynJsonClobberNull(JsonbValue *v)
{
#ifdef USE_ASSERT_CHECKING
	if (v->type == jbvNull)
		memset(&v->val, 0x7f, sizeof(v->val));
#endif
}

#endif
