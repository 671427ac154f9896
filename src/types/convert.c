/*
 * convert.c — SQL functions over the AttributeValue model: converters between
 * plain JSON and DynamoDB's typed JSON (like the SDK's DocumentClient), and
 * the order-preserving key encoder exposed for tests and tools.
 *
 * to_plain: S -> string, N -> number (jsonb numbers are exact decimals, so
 * every DynamoDB number fits), B -> base64 string, BOOL -> boolean,
 * NULL -> null, L -> array, M -> object, SS/NS/BS -> arrays of strings /
 * numbers / base64 strings.
 * from_plain: string -> S, number -> N (canonical; DynamoDB's limits),
 * boolean -> BOOL, null -> NULL, array -> L, object -> M; with sets => true
 * a non-empty array of distinct strings becomes SS and a non-empty array of
 * numerically distinct numbers becomes NS.  docs/converters.md.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "common/errors.h"
#include "types/types.h"

PG_FUNCTION_INFO_V1(dynindex_to_plain);
PG_FUNCTION_INFO_V1(dynindex_from_plain);
PG_FUNCTION_INFO_V1(dynindex_encode_key);

/* ---------------------------------------------------------------- to_plain */

/* Push a canonical DynamoDB number as an exact jsonb number. */
static void
push_number(JsonbParseState **st, JsonbIteratorToken tok, const char *s, int len)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														CStringGetDatum(pnstrdup(s, len)),
														ObjectIdGetDatum(InvalidOid),
														Int32GetDatum(-1)));
	pushJsonbValue(st, tok, &v);
}

/* Push one value in plain JSON; returns the finished value at the top level. */
static JsonbValue *
push_plain(JsonbParseState **st, JsonbIteratorToken tok, const DynValue *v)
{
	JsonbValue	jv;
	int			i;

	check_stack_depth();
	switch (v->type)
	{
		case DYN_S:
			DynPushJsonbString(st, tok, v->u.str.data, v->u.str.len);
			break;
		case DYN_N:
			push_number(st, tok, v->u.str.data, v->u.str.len);
			break;
		case DYN_B:
			DynPushJsonbBase64(st, tok, v->u.str.data, v->u.str.len);
			break;
		case DYN_BOOL:
			jv.type = jbvBool;
			jv.val.boolean = v->u.boolean;
			pushJsonbValue(st, tok, &jv);
			break;
		case DYN_NULL:
			jv.type = jbvNull;
			pushJsonbValue(st, tok, &jv);
			break;
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
		case DYN_L:
			pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < v->n; i++)
				push_plain(st, WJB_ELEM, &v->u.elems[i]);
			return pushJsonbValue(st, WJB_END_ARRAY, NULL);
		case DYN_M:
			pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
			for (i = 0; i < v->n; i++)
			{
				DynPushJsonbString(st, WJB_KEY, v->u.attrs[i].name, v->u.attrs[i].namelen);
				push_plain(st, WJB_VALUE, v->u.attrs[i].value);
			}
			return pushJsonbValue(st, WJB_END_OBJECT, NULL);
	}
	return NULL;
}

/* Wrap a jsonb datum's root as a JsonbValue container. */
static void
jsonb_as_value(Jsonb *jb, JsonbValue *jv)
{
	jv->type = jbvBinary;
	jv->val.binary.data = &jb->root;
	jv->val.binary.len = VARSIZE(jb) - VARHDRSZ;
}

/* dynindex.to_plain(item jsonb) RETURNS jsonb: typed item -> plain object. */
Datum
dynindex_to_plain(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	JsonbValue	jv;
	JsonbParseState *st = NULL;
	const char *msg;
	DynValue   *item;

	jsonb_as_value(jb, &jv);
	item = DynItemFromJsonb(&jv, &msg);
	if (item == NULL)
		DynValidationError("%s", msg);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(push_plain(&st, WJB_VALUE, item)));
}

/* -------------------------------------------------------------- from_plain */

/* Canonicalize a jsonb number as a DynamoDB number (raises on limits). */
static char *
canonical_number(Numeric num)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
	char	   *canon;
	const char *msg;

	msg = DynNumberCanonicalize(s, strlen(s), &canon);
	if (msg)
		DynValidationError("%s", msg);
	return canon;
}

/* Order of two canonical numbers (qsort). */
static int
canon_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *) a;
	const char *y = *(const char *const *) b;

	return DynNumberCompare(x, strlen(x), y, strlen(y));
}

/* Order of two jsonb strings by bytes (qsort). */
static int
jstr_cmp(const void *a, const void *b)
{
	const JsonbValue *x = (const JsonbValue *) a;
	const JsonbValue *y = (const JsonbValue *) b;
	int			c = memcmp(x->val.string.val, y->val.string.val,
						   Min(x->val.string.len, y->val.string.len));

	if (c != 0)
		return c;
	return (x->val.string.len > y->val.string.len) - (x->val.string.len < y->val.string.len);
}

/*
 * With sets => true: the set type an array converts to (SS or NS), or L when
 * it is empty, mixed, not all strings/numbers, or has duplicates.
 */
static DynType
array_set_type(JsonbValue *elems, int n)
{
	int			i;
	bool		strings = true;
	bool		numbers = true;

	if (n == 0)
		return DYN_L;
	for (i = 0; i < n; i++)
	{
		strings &= elems[i].type == jbvString;
		numbers &= elems[i].type == jbvNumeric;
	}
	if (strings)
	{
		JsonbValue *sorted = palloc(sizeof(JsonbValue) * n);

		for (i = 0; i < n; i++)
			sorted[i] = elems[i];
		qsort(sorted, n, sizeof(JsonbValue), jstr_cmp);
		for (i = 1; i < n; i++)
			if (jstr_cmp(&sorted[i - 1], &sorted[i]) == 0)
				return DYN_L;
		return DYN_SS;
	}
	if (numbers)
	{
		char	  **canon = palloc(sizeof(char *) * n);

		for (i = 0; i < n; i++)
			canon[i] = canonical_number(elems[i].val.numeric);
		qsort(canon, n, sizeof(char *), canon_cmp);
		for (i = 1; i < n; i++)
			if (canon_cmp(&canon[i - 1], &canon[i]) == 0)
				return DYN_L;
		return DYN_NS;
	}
	return DYN_L;
}

/* Elements of a jsonb array container. */
static JsonbValue *
container_elems(JsonbContainer *c, int *n)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *elems = palloc(sizeof(JsonbValue) * Max(1, JsonContainerSize(c)));
	int			k = 0;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_ELEM)
			elems[k++] = v;
	*n = k;
	return elems;
}

/* Push a plain JSON value as an AttributeValue. */
static JsonbValue *
push_typed(JsonbParseState **st, JsonbIteratorToken tok, JsonbValue *v, bool sets, int depth)
{
	JsonbValue	b;
	int			i;

	check_stack_depth();
	if (depth > DYN_MAX_NESTING)
		DynValidationError("Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit");
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	switch (v->type)
	{
		case jbvString:
			DynPushJsonbString(st, WJB_KEY, "S", 1);
			pushJsonbValue(st, WJB_VALUE, v);
			break;
		case jbvNumeric:
			{
				char	   *canon = canonical_number(v->val.numeric);

				DynPushJsonbString(st, WJB_KEY, "N", 1);
				DynPushJsonbString(st, WJB_VALUE, canon, strlen(canon));
				break;
			}
		case jbvBool:
			DynPushJsonbString(st, WJB_KEY, "BOOL", 4);
			pushJsonbValue(st, WJB_VALUE, v);
			break;
		case jbvNull:
			DynPushJsonbString(st, WJB_KEY, "NULL", 4);
			b.type = jbvBool;
			b.val.boolean = true;
			pushJsonbValue(st, WJB_VALUE, &b);
			break;
		case jbvBinary:
			if (JsonContainerIsObject(v->val.binary.data))
			{
				JsonbIterator *it = JsonbIteratorInit(v->val.binary.data);
				JsonbValue	kv;
				JsonbIteratorToken t;

				DynPushJsonbString(st, WJB_KEY, "M", 1);
				pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
				while ((t = JsonbIteratorNext(&it, &kv, true)) != WJB_DONE)
				{
					if (t == WJB_KEY)
						pushJsonbValue(st, WJB_KEY, &kv);
					else if (t == WJB_VALUE)
						push_typed(st, WJB_VALUE, &kv, sets, depth + 1);
				}
				pushJsonbValue(st, WJB_END_OBJECT, NULL);
			}
			else
			{
				int			n;
				JsonbValue *elems = container_elems(v->val.binary.data, &n);
				DynType		t = sets ? array_set_type(elems, n) : DYN_L;

				DynPushJsonbString(st, WJB_KEY, DynTypeName(t), strlen(DynTypeName(t)));
				pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
				for (i = 0; i < n; i++)
				{
					if (t == DYN_SS)
						pushJsonbValue(st, WJB_ELEM, &elems[i]);
					else if (t == DYN_NS)
					{
						char	   *canon = canonical_number(elems[i].val.numeric);

						DynPushJsonbString(st, WJB_ELEM, canon, strlen(canon));
					}
					else
						push_typed(st, WJB_ELEM, &elems[i], sets, depth + 1);
				}
				pushJsonbValue(st, WJB_END_ARRAY, NULL);
			}
			break;
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	return pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* dynindex.from_plain(doc jsonb, sets boolean) RETURNS jsonb: plain object -> typed item. */
Datum
dynindex_from_plain(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	bool		sets = PG_GETARG_BOOL(1);
	JsonbParseState *st = NULL;
	JsonbIterator *it;
	JsonbValue	kv;
	JsonbIteratorToken t;

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dynindex.from_plain expects a JSON object (an item)")));
	it = JsonbIteratorInit(&jb->root);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	while ((t = JsonbIteratorNext(&it, &kv, true)) != WJB_DONE)
	{
		if (t == WJB_KEY)
			pushJsonbValue(&st, WJB_KEY, &kv);
		else if (t == WJB_VALUE)
			push_typed(&st, WJB_VALUE, &kv, sets, 1);
	}
	PG_RETURN_JSONB_P(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
}

/* -------------------------------------------------------------- encode_key */

/* dynindex.encode_key(value jsonb, terminated boolean) RETURNS bytea. */
Datum
dynindex_encode_key(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	bool		terminated = PG_GETARG_BOOL(1);
	JsonbValue	jv;
	const char *msg;
	DynValue   *v;
	StringInfoData buf;
	bytea	   *res;

	jsonb_as_value(jb, &jv);
	v = DynValueFromJsonb(&jv, &msg);
	if (v == NULL)
		DynValidationError("%s", msg);
	if (!DynTypeIsScalarKey(v->type))
		DynValidationError("Key values must be of type S, N or B; found %s", DynTypeName(v->type));
	initStringInfo(&buf);
	DynKeyEncode(&buf, v, terminated);
	res = palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(res, VARHDRSZ + buf.len);
	memcpy(VARDATA(res), buf.data, buf.len);
	PG_RETURN_BYTEA_P(res);
}
