/*
 * attrval.c — DynamoDB's typed JSON <-> DynValue, with DynamoDB's validation,
 * size arithmetic, comparison and map helpers.
 */
#include "postgres.h"

#include "common/base64.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "common/errors.h"
#include "types/types.h"

static DynValue *parse_value(JsonbValue *jv, int depth, bool trusted, const char **errmsg);

/* Raise DynamoDB's SerializationException for a JSON value of the wrong kind. */
void
DynSerializationErrorFor(JsonbValue *jv, const char *target)
{
	switch (jv->type)
	{
		case jbvBool:
			DynError(DYN_ERR_SERIALIZATION, "%s cannot be converted to %s",
					 jv->val.boolean ? "TRUE_VALUE" : "FALSE_VALUE", target);
		case jbvNumeric:
			{
				char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out,
																	NumericGetDatum(jv->val.numeric)));

				DynError(DYN_ERR_SERIALIZATION, "%s cannot be converted to %s",
						 strpbrk(s, ".eE") ? "DECIMAL_VALUE" : "NUMBER_VALUE", target);
			}
		case jbvString:
			DynError(DYN_ERR_SERIALIZATION, "STRING_VALUE cannot be converted to %s", target);
		case jbvBinary:
			if (JsonContainerIsArray(jv->val.binary.data))
				DynError(DYN_ERR_SERIALIZATION, "Unrecognized collection type class java.lang.%s", target);
			DynError(DYN_ERR_SERIALIZATION, "Start of structure or map found where not expected");
		default:
			DynError(DYN_ERR_SERIALIZATION, "Unexpected token received from parser");
	}
}

/* Replace number text by its canonical form; false (with *errmsg) if invalid. */
static bool
canonicalize_number(const char **s, int *len, const char **errmsg)
{
	char	   *canon;
	const char *msg = DynNumberCanonicalize(*s, *len, &canon);

	/* the current layer keeps the colon (and a space) for an empty number */
	if (msg && *len == 0 && DynValueLayer == DYN_LAYER_CURRENT)
		msg = "The parameter cannot be converted to a numeric value: ";
	if (msg)
	{
		*errmsg = msg;
		return false;
	}
	*s = canon;
	*len = strlen(canon);
	return true;
}

/* Is a jsonb value an object container? */
static inline bool
is_object(JsonbValue *jv)
{
	return jv->type == jbvBinary && JsonContainerIsObject(jv->val.binary.data);
}

/* Is a jsonb value an array container? */
static inline bool
is_array(JsonbValue *jv)
{
	return jv->type == jbvBinary && JsonContainerIsArray(jv->val.binary.data) &&
		!JsonContainerIsScalar(jv->val.binary.data);
}

/* Decode DynamoDB base64 (strict: length multiple of 4, canonical padding). */
static void
decode_base64(const char *s, int len, const char **out, int *outlen)
{
	char	   *buf;
	int			n;

	if (len % 4 != 0)
		DynError(DYN_ERR_SERIALIZATION,
				 "Base64 encoded length is expected a multiple of 4 bytes but found: %d", len);
	buf = palloc(pg_b64_dec_len(len) + 1);
	n = pg_b64_decode(s, len, (uint8 *) buf, pg_b64_dec_len(len));
	if (n < 0)
		DynError(DYN_ERR_SERIALIZATION, "Invalid last non-pad Base64 character dectected");
	/* reject non-zero trailing bits: re-encoding must give the input back */
	if (len > 0)
	{
		char	   *re = palloc(pg_b64_enc_len(n) + 1);
		int			m = pg_b64_encode((const uint8 *) buf, n, re, pg_b64_enc_len(n));

		if (m != len || memcmp(re, s, len) != 0)
			DynError(DYN_ERR_SERIALIZATION, "Invalid last non-pad Base64 character dectected");
		pfree(re);
	}
	*out = buf;
	*outlen = n;
}

/* Extract a JSON string for a String-typed member. */
static void
expect_string(JsonbValue *jv, const char **s, int *len)
{
	if (jv->type != jbvString)
		DynSerializationErrorFor(jv, "String");
	/* U+0000 travels escaped in jsonb (types/nulstr.c) */
	*s = DynNulDecode(jv->val.string.val, jv->val.string.len, len);
}

/* Extract a Blob member (base64 string) as raw bytes. */
static void
expect_blob(JsonbValue *jv, const char **s, int *len)
{
	if (jv->type == jbvBool || jv->type == jbvNumeric)
		DynError(DYN_ERR_SERIALIZATION, "only base-64-encoded strings are convertible to bytes");
	if (jv->type == jbvBinary)
	{
		if (JsonContainerIsArray(jv->val.binary.data))
			DynError(DYN_ERR_SERIALIZATION, "Unrecognized collection type class java.nio.ByteBuffer");
		DynError(DYN_ERR_SERIALIZATION, "Start of structure or map found where not expected");
	}
	if (jv->type != jbvString)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected token received from parser");
	decode_base64(jv->val.string.val, jv->val.string.len, s, len);
}

/*
 * Check a Blob member's JSON as DynamoDB's deserializer does (kind, then
 * base64), raising its SerializationException; request validation calls it
 * before any member constraint is judged.
 */
void
DynCheckBlobKind(JsonbValue *jv)
{
	const char *s;
	int			len;

	expect_blob(jv, &s, &len);
}

/*
 * The value of a JSON value as DynamoDB reads a Boolean: true/false, or the
 * strings "true"/"1"/"yes" and "false"/"0"/"no" in any case.  *ok is false
 * for anything else.
 */
bool
DynJsonBoolean(JsonbValue *jv, bool *ok)
{
	*ok = true;
	if (jv->type == jbvBool)
		return jv->val.boolean;
	if (jv->type == jbvString)
	{
		char	   *s = pnstrdup(jv->val.string.val, jv->val.string.len);

		if (pg_strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 || pg_strcasecmp(s, "yes") == 0)
			return true;
		if (pg_strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 || pg_strcasecmp(s, "no") == 0)
			return false;
	}
	*ok = false;
	return false;
}

/* Extract a Boolean member, raising DynamoDB's SerializationException. */
static bool
expect_boolean(JsonbValue *jv)
{
	bool		ok;
	bool		b = DynJsonBoolean(jv, &ok);

	if (ok)
		return b;
	if (jv->type == jbvString)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected token received from parser");
	DynSerializationErrorFor(jv, "Boolean");
}

/* Iterate the elements of a JSON array member of a set or list. */
static JsonbValue *
array_elements(JsonbValue *jv, int *count)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *elems;
	int			n = 0;

	if (!is_array(jv))
	{
		if (jv->type == jbvBinary)
			DynError(DYN_ERR_SERIALIZATION, "Start of structure or map found where not expected");
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	}
	elems = palloc(sizeof(JsonbValue) * Max(1, JsonContainerSize(jv->val.binary.data)));
	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
			elems[n++] = v;
	}
	*count = n;
	return elems;
}

/* Set element comparison for duplicate detection (qsort). */
static int
set_elem_cmp(const void *a, const void *b)
{
	const DynValue *x = (const DynValue *) a;
	const DynValue *y = (const DynValue *) b;

	return DynScalarCompare(x, y);
}

/* Append a set member as the current layer quotes it: a JSON string. */
static void
append_quoted(StringInfo buf, const char *s, int len)
{
	int			i;

	appendStringInfoChar(buf, '"');
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == '"' || c == '\\')
		{
			appendStringInfoChar(buf, '\\');
			appendStringInfoChar(buf, (char) c);
		}
		else if (c < 0x20)
			appendStringInfo(buf, "\\u%04x", c);
		else
			appendStringInfoChar(buf, (char) c);
	}
	appendStringInfoChar(buf, '"');
}

/*
 * The current layer's duplicate message (PutItem, UpdateItem, DeleteItem,
 * GetItem, BatchGetItem, Query; captured 2026-10-09 in four regions): the
 * members quoted, in byte order up to the first repeat, then the repeat, then
 * the rest as sent; no members for a number set.
 */
static const char *
duplicates_message_current(DynType t, JsonbValue *elems, DynValue *vals, int n)
{
	StringInfoData buf;
	int		   *order;
	int			m = 0;
	int			rep = n;
	int			i;

	if (t == DYN_NS)
		return "One or more parameter values were invalid: Input collection contains duplicates.";
	order = palloc(sizeof(int) * Max(n, 1));
	for (i = 0; i < n && rep == n; i++)
	{
		int			pos;

		if (elems[i].type == jbvNull)
			continue;
		for (pos = 0; pos < m; pos++)
		{
			int			c = DynScalarCompare(&vals[order[pos]], &vals[i]);

			if (c == 0)
				rep = i;
			if (c >= 0)
				break;
		}
		if (rep != n)
			break;
		memmove(order + pos + 1, order + pos, sizeof(int) * (m - pos));
		order[pos] = i;
		m++;
	}
	initStringInfo(&buf);
	appendStringInfoString(&buf, "One or more parameter values were invalid: Input collection [");
	for (i = 0; i < m + (n - rep); i++)
	{
		int			k = i < m ? order[i] : rep + (i - m);

		if (i > 0)
			appendStringInfoString(&buf, t == DYN_BS ? "," : ", ");
		if (elems[k].type != jbvString)
			appendStringInfoString(&buf, "null");
		else if (t == DYN_BS)
			append_quoted(&buf, elems[k].val.string.val, elems[k].val.string.len);
		else
			append_quoted(&buf, vals[k].u.str.data, vals[k].u.str.len);
	}
	appendStringInfoString(&buf, t == DYN_BS ? "]of type BS contains duplicates." : "] contains duplicates.");
	return buf.data;
}

/* Make DynamoDB's duplicate message for a set (the older layer's, or the current one's). */
static const char *
duplicates_message(DynType t, JsonbValue *elems, DynValue *vals, int n)
{
	StringInfoData buf;
	int			i;

	if (DynValueLayer == DYN_LAYER_CURRENT)
		return duplicates_message_current(t, elems, vals, n);
	/* DynamoDB lists the members of SS and BS, but not of NS */
	if (t == DYN_NS)
		return "Input collection contains duplicates";
	initStringInfo(&buf);
	appendStringInfoString(&buf, "One or more parameter values were invalid: Input collection [");
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (elems[i].type == jbvString)
			appendBinaryStringInfo(&buf, elems[i].val.string.val, elems[i].val.string.len);
		else
			appendStringInfoString(&buf, "null");
	}
	appendStringInfoString(&buf, t == DYN_BS ? "]of type BS contains duplicates." : "] contains duplicates.");
	return buf.data;
}

/* Parse a set (SS, NS, BS). */
static DynValue *
parse_set(DynType t, JsonbValue *member, bool trusted, const char **errmsg)
{
	int			n;
	int			i;
	JsonbValue *elems = array_elements(member, &n);
	DynValue   *result = palloc(sizeof(DynValue));
	DynValue   *vals = palloc(sizeof(DynValue) * Max(n, 1));
	bool		null_member = false;

	result->type = t;
	result->n = n;
	result->u.elems = vals;
	for (i = 0; i < n; i++)
	{
		const char *s;
		int			len;

		vals[i].n = 0;
		if (t == DYN_SS && elems[i].type == jbvNull && !trusted)
		{
			/* a validation error, reported after the set's other checks */
			null_member = true;
			vals[i].type = DYN_S;
			vals[i].u.str.data = "";
			vals[i].u.str.len = 0;
			continue;
		}
		if (t == DYN_BS)
		{
			expect_blob(&elems[i], &s, &len);
			vals[i].type = DYN_B;
		}
		else
		{
			expect_string(&elems[i], &s, &len);
			vals[i].type = t == DYN_SS ? DYN_S : DYN_N;
			if (t == DYN_NS && !trusted && !canonicalize_number(&s, &len, errmsg))
				return NULL;
		}
		vals[i].u.str.data = s;
		vals[i].u.str.len = len;
	}
	if (n == 0)
	{
		*errmsg = t == DYN_SS ? "One or more parameter values were invalid: An string set  may not be empty" :
			t == DYN_NS ? "One or more parameter values were invalid: An number set  may not be empty" :
			"One or more parameter values were invalid: Binary sets should not be empty";
		return NULL;
	}
	if (!trusted && n > 1)
	{
		DynValue   *sorted = palloc(sizeof(DynValue) * n);
		int			m = 0;

		for (i = 0; i < n; i++)
			if (elems[i].type != jbvNull)
				sorted[m++] = vals[i];
		qsort(sorted, m, sizeof(DynValue), set_elem_cmp);
		for (i = 1; i < m; i++)
		{
			if (DynScalarCompare(&sorted[i - 1], &sorted[i]) == 0)
			{
				*errmsg = duplicates_message(t, elems, vals, n);
				return NULL;
			}
		}
		pfree(sorted);
	}
	if (null_member)
	{
		*errmsg = "One or more parameter values were invalid: An string set may not have a null string as a member";
		return NULL;
	}
	return result;
}

/*
 * Reject an attribute name longer than 65535 bytes, with DynamoDB's message
 * (the same for item and map keys, AttributeUpdates, AttributesToGet and
 * ExpressionAttributeNames values).
 */
void
DynCheckAttributeNameLength(int len)
{
	if (len > DYN_MAX_ATTR_NAME_LEN)
		DynValidationError("1 validation error detected: Attribute name is too large, must be less than %d bytes",
						   DYN_MAX_ATTR_NAME_LEN + 1);
}

/* Parse a map of name -> AttributeValue (M, or a whole item). */
static DynValue *
parse_map(JsonbValue *jv, int depth, bool trusted, const char **errmsg)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	DynValue   *map;
	const char *name = NULL;
	int			namelen = 0;

	if (!is_object(jv))
	{
		if (is_array(jv))
			DynError(DYN_ERR_SERIALIZATION,
					 "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>");
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	}
	map = DynMakeMap(JsonContainerSize(jv->val.binary.data));
	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			name = DynNulDecode(v.val.string.val, v.val.string.len, &namelen);
			if (!trusted)
				DynCheckAttributeNameLength(namelen);
		}
		else if (tok == WJB_VALUE)
		{
			DynValue   *child;

			if (v.type == jbvNull)
				continue;
			child = parse_value(&v, depth + 1, trusted, errmsg);
			if (child == NULL)
				return NULL;
			DynMapAppend(map, name, namelen, child);
		}
	}
	return map;
}

/* Parse a list (L). */
static DynValue *
parse_list(JsonbValue *member, int depth, bool trusted, const char **errmsg)
{
	int			n;
	int			i;
	JsonbValue *elems = array_elements(member, &n);
	DynValue   *result = palloc(sizeof(DynValue));

	result->type = DYN_L;
	result->n = n;
	result->u.elems = palloc(sizeof(DynValue) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		DynValue   *child;

		if (elems[i].type == jbvNull)
			DynError(DYN_ERR_SERIALIZATION, "Unexpected value type in payload");
		child = parse_value(&elems[i], depth + 1, trusted, errmsg);
		if (child == NULL)
			return NULL;
		result->u.elems[i] = *child;
	}
	return result;
}

/*
 * Parse one AttributeValue object.  depth is the nesting level of this value
 * (a top-level attribute is 1).
 */
static DynValue *
parse_value(JsonbValue *jv, int depth, bool trusted, const char **errmsg)
{
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	DynValue   *result = NULL;
	int			ntypes = 0;

	check_stack_depth();
	if (!is_object(jv))
	{
		if (is_array(jv))
			DynError(DYN_ERR_SERIALIZATION,
					 "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue");
		DynError(DYN_ERR_SERIALIZATION, "Unexpected value type in payload");
	}
	if (depth > DYN_MAX_NESTING)
	{
		*errmsg = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit";
		return NULL;
	}

	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		DynType		t;
		DynValue   *val = NULL;

		if (tok != WJB_KEY)
			continue;
		tok = JsonbIteratorNext(&it, &v, true);
		Assert(tok == WJB_VALUE);
		if (v.type == jbvNull)
			continue;			/* a null member is absent */
		if (!DynTypeFromName(k.val.string.val, k.val.string.len, &t))
			continue;			/* unknown members are ignored, as DynamoDB does */

		switch (t)
		{
			case DYN_S:
			case DYN_N:
				{
					const char *s;
					int			len;

					expect_string(&v, &s, &len);
					if (t == DYN_N && !trusted && !canonicalize_number(&s, &len, errmsg))
						return NULL;
					val = DynMakeString(t, s, len);
					break;
				}
			case DYN_B:
				{
					const char *s;
					int			len;

					expect_blob(&v, &s, &len);
					val = DynMakeString(t, s, len);
					break;
				}
			case DYN_BOOL:
			case DYN_NULL:
				{
					bool		b = expect_boolean(&v);

					if (t == DYN_NULL && !b)
					{
						*errmsg = "One or more parameter values were invalid: Null attribute value types must have the value of true";
						return NULL;
					}
					val = palloc(sizeof(DynValue));
					val->type = t;
					val->n = 0;
					val->u.boolean = b;
					break;
				}
			case DYN_SS:
			case DYN_NS:
			case DYN_BS:
				val = parse_set(t, &v, trusted, errmsg);
				break;
			case DYN_L:
				val = parse_list(&v, depth, trusted, errmsg);
				break;
			case DYN_M:
				val = parse_map(&v, depth, trusted, errmsg);
				break;
		}
		if (val == NULL)
			return NULL;
		result = val;
		ntypes++;
	}
	if (ntypes == 0)
	{
		*errmsg = "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes";
		return NULL;
	}
	if (ntypes > 1)
	{
		*errmsg = "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes";
		return NULL;
	}
	return result;
}

/* Parse and validate one AttributeValue. */
DynValue *
DynValueFromJsonb(JsonbValue *jv, const char **errmsg)
{
	*errmsg = NULL;
	return parse_value(jv, 1, false, errmsg);
}

/* Parse and validate a map of name -> AttributeValue. */
DynValue *
DynItemFromJsonb(JsonbValue *jv, const char **errmsg)
{
	*errmsg = NULL;
	return parse_map(jv, 0, false, errmsg);
}

/* Parse a stored (already validated and canonical) item. */
DynValue *
DynItemFromStored(Jsonb *jb)
{
	JsonbValue	jv;
	const char *errmsg = NULL;
	DynValue   *item;

	jv.type = jbvBinary;
	jv.val.binary.data = &jb->root;
	jv.val.binary.len = VARSIZE(jb) - VARHDRSZ;
	item = parse_map(&jv, 0, true, &errmsg);
	if (item == NULL)
		elog(ERROR, "stored item is invalid: %s", errmsg ? errmsg : "?");
	return item;
}

/* ---------------------------------------------------------------- output */

void
DynPushJsonbString(JsonbParseState **state, JsonbIteratorToken tok, const char *s, int len)
{
	JsonbValue	v;
	int			n;

	/* U+0000 (and the escape character) are written escaped (types/nulstr.c) */
	v.type = jbvString;
	v.val.string.val = (char *) DynNulEncode(s, len, &n);
	v.val.string.len = n;
	pushJsonbValue(state, tok, &v);
}

void
DynPushJsonbBase64(JsonbParseState **state, JsonbIteratorToken tok, const char *data, int len)
{
	char	   *buf = palloc(pg_b64_enc_len(len) + 1);
	int			n = pg_b64_encode((const uint8 *) data, len, buf, pg_b64_enc_len(len));

	DynPushJsonbString(state, tok, buf, n);
}

/* Push the members of a map as a jsonb object. */
static void
push_map_members(JsonbParseState **state, const DynValue *map)
{
	int			i;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < map->n; i++)
	{
		DynPushJsonbString(state, WJB_KEY, map->u.attrs[i].name, map->u.attrs[i].namelen);
		DynValuePushJsonb(state, map->u.attrs[i].value);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Append an AttributeValue (as a jsonb value in object or array context). */
void
DynValuePushJsonb(JsonbParseState **state, const DynValue *v)
{
	JsonbValue	jv;
	int			i;

	check_stack_depth();
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	DynPushJsonbString(state, WJB_KEY, DynTypeName(v->type), strlen(DynTypeName(v->type)));
	switch (v->type)
	{
		case DYN_S:
		case DYN_N:
			DynPushJsonbString(state, WJB_VALUE, v->u.str.data, v->u.str.len);
			break;
		case DYN_B:
			DynPushJsonbBase64(state, WJB_VALUE, v->u.str.data, v->u.str.len);
			break;
		case DYN_BOOL:
		case DYN_NULL:
			jv.type = jbvBool;
			jv.val.boolean = v->u.boolean;
			pushJsonbValue(state, WJB_VALUE, &jv);
			break;
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < v->n; i++)
			{
				if (v->type == DYN_BS)
					DynPushJsonbBase64(state, WJB_ELEM, v->u.elems[i].u.str.data, v->u.elems[i].u.str.len);
				else
					DynPushJsonbString(state, WJB_ELEM, v->u.elems[i].u.str.data, v->u.elems[i].u.str.len);
			}
			pushJsonbValue(state, WJB_END_ARRAY, NULL);
			break;
		case DYN_L:
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < v->n; i++)
				DynValuePushJsonb(state, &v->u.elems[i]);
			pushJsonbValue(state, WJB_END_ARRAY, NULL);
			break;
		case DYN_M:
			push_map_members(state, v);
			break;
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Build a JsonbValue tree of an item. */
JsonbValue *
DynItemToJsonbValue(const DynValue *item)
{
	JsonbParseState *state = NULL;
	int			i;

	Assert(item->type == DYN_M);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < item->n; i++)
	{
		DynPushJsonbString(&state, WJB_KEY, item->u.attrs[i].name, item->u.attrs[i].namelen);
		DynValuePushJsonb(&state, item->u.attrs[i].value);
	}
	return pushJsonbValue(&state, WJB_END_OBJECT, NULL);
}

/* Build a jsonb of an item. */
Jsonb *
DynItemToJsonb(const DynValue *item)
{
	return JsonbValueToJsonb(DynItemToJsonbValue(item));
}

/* Render a value as DynamoDB shows it in messages. */
void
DynValueAppendForMessage(StringInfo buf, const DynValue *v)
{
	int			i;

	switch (v->type)
	{
		case DYN_S:
		case DYN_N:
			appendStringInfo(buf, "{%s:%.*s}", DynTypeName(v->type), v->u.str.len, v->u.str.data);
			break;
		case DYN_B:
			{
				char	   *b = palloc(pg_b64_enc_len(v->u.str.len) + 1);
				int			n = pg_b64_encode((const uint8 *) v->u.str.data, v->u.str.len, b, pg_b64_enc_len(v->u.str.len));

				appendStringInfo(buf, "{B:%.*s}", n, b);
				break;
			}
		case DYN_BOOL:
			appendStringInfo(buf, "{BOOL:%s}", v->u.boolean ? "true" : "false");
			break;
		case DYN_NULL:
			appendStringInfoString(buf, "{NULL:true}");
			break;
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
		case DYN_L:
			appendStringInfo(buf, "{%s:[", DynTypeName(v->type));
			for (i = 0; i < v->n; i++)
			{
				if (i > 0)
					appendStringInfoString(buf, ", ");
				if (v->type == DYN_L)
					DynValueAppendForMessage(buf, &v->u.elems[i]);
				else
					appendBinaryStringInfo(buf, v->u.elems[i].u.str.data, v->u.elems[i].u.str.len);
			}
			appendStringInfoString(buf, "]}");
			break;
		case DYN_M:
			appendStringInfoString(buf, "{M:{");
			for (i = 0; i < v->n; i++)
			{
				if (i > 0)
					appendStringInfoString(buf, ", ");
				appendBinaryStringInfo(buf, v->u.attrs[i].name, v->u.attrs[i].namelen);
				appendStringInfoChar(buf, '=');
				DynValueAppendForMessage(buf, v->u.attrs[i].value);
			}
			appendStringInfoString(buf, "}}");
			break;
	}
}

/* ---------------------------------------------------------------- maps */

/* An empty map with room for capacity members. */
DynValue *
DynMakeMap(int capacity)
{
	DynValue   *m = palloc(sizeof(DynValue));

	m->type = DYN_M;
	m->n = 0;
	m->cap = Max(capacity, 4);
	m->u.attrs = palloc(sizeof(DynAttr) * m->cap);
	return m;
}

/* Append a member without checking for duplicates. */
void
DynMapAppend(DynValue *map, const char *name, int namelen, DynValue *value)
{
	Assert(map->type == DYN_M);
	if (map->n >= map->cap)
	{
		map->cap = map->cap * 2;
		map->u.attrs = repalloc(map->u.attrs, sizeof(DynAttr) * map->cap);
	}
	map->u.attrs[map->n].name = name;
	map->u.attrs[map->n].namelen = namelen;
	map->u.attrs[map->n].value = value;
	map->n++;
}

/* Look a member up. */
DynValue *
DynMapGet(const DynValue *map, const char *name, int namelen)
{
	int			i;

	Assert(map->type == DYN_M);
	for (i = 0; i < map->n; i++)
	{
		if (map->u.attrs[i].namelen == namelen &&
			memcmp(map->u.attrs[i].name, name, namelen) == 0)
			return map->u.attrs[i].value;
	}
	return NULL;
}

/* Look a member up by a NUL-terminated name. */
DynValue *
DynMapGetStr(const DynValue *map, const char *name)
{
	return DynMapGet(map, name, strlen(name));
}

/* A copy of map with one member set (value NULL: removed). */
DynValue *
DynMapSet(const DynValue *map, const char *name, int namelen, DynValue *value)
{
	DynValue   *res = DynMakeMap(map->n + 1);
	bool		done = false;
	int			i;

	for (i = 0; i < map->n; i++)
	{
		const DynAttr *a = &map->u.attrs[i];

		if (a->namelen == namelen && memcmp(a->name, name, namelen) == 0)
		{
			if (value)
				DynMapAppend(res, a->name, a->namelen, value);
			done = true;
		}
		else
			DynMapAppend(res, a->name, a->namelen, a->value);
	}
	if (!done && value)
		DynMapAppend(res, name, namelen, value);
	return res;
}

/* A new S, N or B value. */
DynValue *
DynMakeString(DynType t, const char *data, int len)
{
	DynValue   *v = palloc(sizeof(DynValue));

	v->type = t;
	v->n = 0;
	v->u.str.data = data;
	v->u.str.len = len;
	return v;
}

/* ---------------------------------------------------------------- sizes */

/* DynamoDB's size of a value. */
int64
DynValueSize(const DynValue *v)
{
	int64		size = 0;
	int			i;

	switch (v->type)
	{
		case DYN_S:
		case DYN_B:
			return v->u.str.len;
		case DYN_N:
			return DynNumberSize(v->u.str.data, v->u.str.len);
		case DYN_BOOL:
		case DYN_NULL:
			return 1;
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
			for (i = 0; i < v->n; i++)
				size += DynValueSize(&v->u.elems[i]);
			return size;
		case DYN_L:
			size = 3;
			for (i = 0; i < v->n; i++)
				size += 1 + DynValueSize(&v->u.elems[i]);
			return size;
		case DYN_M:
			size = 3;
			for (i = 0; i < v->n; i++)
				size += 1 + v->u.attrs[i].namelen + DynValueSize(v->u.attrs[i].value);
			return size;
	}
	return 0;
}

/* DynamoDB's size of an item: attribute names plus values. */
int64
DynItemSize(const DynValue *item)
{
	int64		size = 0;
	int			i;

	for (i = 0; i < item->n; i++)
		size += item->u.attrs[i].namelen + DynValueSize(item->u.attrs[i].value);
	return size;
}

/* Nesting depth of a value (a scalar is 1). */
int
DynValueDepth(const DynValue *v)
{
	int			d = 0;
	int			i;

	if (v->type == DYN_L)
		for (i = 0; i < v->n; i++)
			d = Max(d, DynValueDepth(&v->u.elems[i]));
	else if (v->type == DYN_M)
		for (i = 0; i < v->n; i++)
			d = Max(d, DynValueDepth(v->u.attrs[i].value));
	return d + 1;
}

/* ---------------------------------------------------------------- comparison */

/* Order of two scalars of the same type. */
int
DynScalarCompare(const DynValue *a, const DynValue *b)
{
	int			c;

	Assert(a->type == b->type);
	if (a->type == DYN_N)
		return DynNumberCompare(a->u.str.data, a->u.str.len, b->u.str.data, b->u.str.len);
	c = memcmp(a->u.str.data, b->u.str.data, Min(a->u.str.len, b->u.str.len));
	if (c != 0)
		return c;
	return (a->u.str.len > b->u.str.len) - (a->u.str.len < b->u.str.len);
}

/* Is scalar x a member of set s? */
static bool
set_contains(const DynValue *s, const DynValue *x)
{
	int			i;

	for (i = 0; i < s->n; i++)
		if (DynScalarCompare(&s->u.elems[i], x) == 0)
			return true;
	return false;
}

/* Deep equality. */
bool
DynValueEquals(const DynValue *a, const DynValue *b)
{
	int			i;

	if (a->type != b->type)
		return false;
	switch (a->type)
	{
		case DYN_S:
		case DYN_N:
		case DYN_B:
			return DynScalarCompare(a, b) == 0;
		case DYN_BOOL:
		case DYN_NULL:
			return a->u.boolean == b->u.boolean;
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
			if (a->n != b->n)
				return false;
			for (i = 0; i < a->n; i++)
				if (!set_contains(b, &a->u.elems[i]))
					return false;
			return true;
		case DYN_L:
			if (a->n != b->n)
				return false;
			for (i = 0; i < a->n; i++)
				if (!DynValueEquals(&a->u.elems[i], &b->u.elems[i]))
					return false;
			return true;
		case DYN_M:
			if (a->n != b->n)
				return false;
			for (i = 0; i < a->n; i++)
			{
				DynValue   *other = DynMapGet(b, a->u.attrs[i].name, a->u.attrs[i].namelen);

				if (other == NULL || !DynValueEquals(a->u.attrs[i].value, other))
					return false;
			}
			return true;
	}
	return false;
}
