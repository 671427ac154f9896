/*
 * json.c — reading members of jsonb documents (requests, catalog documents).
 * The names keep the Rq prefix of api/request.h, which re-exports them.
 */
#include "postgres.h"

#include "common/json.h"

/* Member of an object container, or NULL when absent or null. */
JsonbValue *
RqGet(JsonbContainer *obj, const char *name)
{
	JsonbValue	key;
	JsonbValue *v;

	if (obj == NULL || !JsonContainerIsObject(obj))
		return NULL;
	key.type = jbvString;
	key.val.string.val = (char *) name;
	key.val.string.len = strlen(name);
	v = findJsonbValueFromContainer(obj, JB_FOBJECT, &key);
	if (v && v->type == jbvNull)
		return NULL;
	return v;
}

/* Member of an object value (jbvBinary), or NULL. */
JsonbValue *
RqGetJv(JsonbValue *obj, const char *name)
{
	if (obj == NULL || obj->type != jbvBinary)
		return NULL;
	return RqGet(obj->val.binary.data, name);
}

/* String member, or NULL. */
char *
RqGetString(JsonbContainer *obj, const char *name)
{
	JsonbValue *v = RqGet(obj, name);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* Is the string member equal to value? */
bool
RqStringIs(JsonbContainer *obj, const char *name, const char *value)
{
	JsonbValue *v = RqGet(obj, name);

	return v && v->type == jbvString && v->val.string.len == (int) strlen(value) &&
		memcmp(v->val.string.val, value, v->val.string.len) == 0;
}

/* Elements of an array value. */
JsonbValue *
RqArrayElems(JsonbValue *arr, int *n)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *elems;
	int			count = 0;

	*n = 0;
	if (arr == NULL || arr->type != jbvBinary || !JsonContainerIsArray(arr->val.binary.data))
		return NULL;
	elems = palloc(sizeof(JsonbValue) * Max(1, JsonContainerSize(arr->val.binary.data)));
	it = JsonbIteratorInit(arr->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_ELEM)
		{
			DynJsonClobberNull(&v);
			elems[count++] = v;
		}
	*n = count;
	return elems;
}

/* Members of an object value; returns their number. */
int
RqObjectMembers(JsonbValue *obj, JsonbValue **keys, JsonbValue **values)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			n = 0;
	int			size;

	*keys = NULL;
	*values = NULL;
	if (obj == NULL || obj->type != jbvBinary || !JsonContainerIsObject(obj->val.binary.data))
		return 0;
	size = Max(1, JsonContainerSize(obj->val.binary.data));
	*keys = palloc(sizeof(JsonbValue) * size);
	*values = palloc(sizeof(JsonbValue) * size);
	it = JsonbIteratorInit(obj->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			(*keys)[n] = v;
		else if (tok == WJB_VALUE)
		{
			DynJsonClobberNull(&v);
			(*values)[n++] = v;
		}
	}
	return n;
}
