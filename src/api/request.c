/*
 * request.c — DynamoDB's request validation (deserialization, then member
 * constraints) and helpers to read requests and build responses.
 */
#include "postgres.h"

#include "executor/spi.h"

#include <math.h>

#include "common/base64.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/numeric.h"

#include "api/request.h"
#include "common/errors.h"

#define MAX_REPORTED_ERRORS 10

const char *const RqReturnConsumedCapacityEnum[] = {"INDEXES", "TOTAL", "NONE", NULL};
const char *const RqReturnItemCollectionMetricsEnum[] = {"SIZE", "NONE", NULL};
const char *const RqReturnValuesEnum[] = {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW", NULL};

const RqField RqTableNameField = RQ_TABLE_NAME_OR_ARN;
const RqField RqAttrValueField = {.type = RQ_ATTRVALUE};

/*
 * Elements of a list of names are never null: a null element fails stage 2
 * ("Value null at '<list>.N.member' ... Member must not be null"), so that
 * no reader meets a null where it expects a string (docs/errors.md).
 */
const RqField RqAttributeNameElem = {.type = RQ_STRING,.notnull = true};

/* ---------------------------------------------------------------- reading */

/* Boolean member. */
bool
RqGetBool(JsonbContainer *obj, const char *name, bool dflt)
{
	JsonbValue *v = RqGet(obj, name);
	bool		ok;
	bool		b;

	if (v == NULL)
		return dflt;
	b = DynJsonBoolean(v, &ok);
	return ok ? b : dflt;
}

/* Integer value of a JSON number (floored, clamped to int64). */
static int64
json_int(JsonbValue *v)
{
	double		d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
													   NumericGetDatum(v->val.numeric)));

	d = floor(d);
	if (d > (double) PG_INT64_MAX)
		return PG_INT64_MAX;
	if (d < (double) PG_INT64_MIN)
		return PG_INT64_MIN;
	return (int64) d;
}

/* Integer member. */
int64
RqGetInt(JsonbContainer *obj, const char *name, int64 dflt)
{
	JsonbValue *v = RqGet(obj, name);

	if (v == NULL || v->type != jbvNumeric)
		return dflt;
	return json_int(v);
}

/* Parse a map of AttributeValues, raising DynamoDB's message on error. */
DynValue *
RqParseItem(JsonbValue *jv)
{
	const char *msg;
	DynValue   *item = DynItemFromJsonb(jv, &msg);

	if (item == NULL)
		DynValidationError("%s", msg);
	return item;
}

/* ---------------------------------------------------------------- stage 1 */

/*
 * Stage 1 mirrors DynamoDB's deserializer (Jackson under "coral"), whose
 * messages depend on where a value sits: a member of a structure is a
 * "field", an element of a list or a value of a map is a "value".  A scalar
 * where a structure or AttributeValue belongs is "Unexpected field type" for
 * a field and "Unexpected value type in payload" for a value; a scalar where
 * a list or map is nested in another collection fails in Java's reflection
 * (RQ_CAST_MSG).  Collections of the wrong kind name the Java type expected.
 * Sources: dynalite's test helpers (assertType, checked against DynamoDB),
 * docs/errors.md.
 */
#define RQ_CAST_MSG "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class " \
	"java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in " \
	"module java.base of loader 'bootstrap')"
#define RQ_MODEL_PACKAGE "com.amazonaws.dynamodb.v20120810."

static void check_kinds(JsonbValue *v, const RqField *f, bool as_value);

/* The Java type DynamoDB's deserializer names for a field's shape. */
static const char *
java_type(const RqField *f)
{
	switch (f->type)
	{
		case RQ_STRING:
			return "java.lang.String";
		case RQ_BOOLEAN:
			return "java.lang.Boolean";
		case RQ_INTEGER:
			return "java.lang.Integer";
		case RQ_LONG:
			return "java.lang.Long";
		case RQ_LIST:
			return psprintf("java.util.List<%s>", java_type(f->elem));
		case RQ_MAP:
			return psprintf("java.util.Map<java.lang.String, %s>", java_type(f->elem));
		case RQ_STRUCT:
			Assert(f->structname != NULL);
			return psprintf(RQ_MODEL_PACKAGE "%s", f->structname ? f->structname : "Object");
		case RQ_ATTRVALUE:
			return RQ_MODEL_PACKAGE "AttributeValue";
		case RQ_END:
		case RQ_ANY:
			break;
	}
	return "java.lang.Object";
}

/* A structure (or AttributeValue) of class structname expected: is v an object? */
static void
expect_structure(JsonbValue *v, const char *structname, bool as_value)
{
	if (v->type != jbvBinary || JsonContainerIsScalar(v->val.binary.data))
		DynError(DYN_ERR_SERIALIZATION, as_value ? "Unexpected value type in payload" : "Unexpected field type");
	if (JsonContainerIsArray(v->val.binary.data))
		DynError(DYN_ERR_SERIALIZATION, "Unrecognized collection type class " RQ_MODEL_PACKAGE "%s", structname);
}

/* A list expected: is v an array? */
static void
expect_list(JsonbValue *v, bool as_value)
{
	if (v->type != jbvBinary || JsonContainerIsScalar(v->val.binary.data))
		DynError(DYN_ERR_SERIALIZATION, as_value ? RQ_CAST_MSG : "Unexpected field type");
	if (!JsonContainerIsArray(v->val.binary.data))
		DynError(DYN_ERR_SERIALIZATION, "Start of structure or map found where not expected");
}

/* A map of elemtype expected: is v an object? */
static void
expect_map(JsonbValue *v, const char *elemtype, bool as_value)
{
	if (v->type != jbvBinary || JsonContainerIsScalar(v->val.binary.data))
		DynError(DYN_ERR_SERIALIZATION, as_value ? RQ_CAST_MSG : "Unexpected field type");
	if (JsonContainerIsArray(v->val.binary.data))
		DynError(DYN_ERR_SERIALIZATION, "Unrecognized collection type java.util.Map<java.lang.String, %s>", elemtype);
}

/* Check a Boolean member's JSON kind. */
static void
expect_boolean_kind(JsonbValue *v)
{
	bool		ok;

	DynJsonBoolean(v, &ok);
	if (!ok)
	{
		if (v->type == jbvString)
			DynError(DYN_ERR_SERIALIZATION, "Unexpected token received from parser");
		DynSerializationErrorFor(v, "Boolean");
	}
}

/* Check an AttributeValue's JSON shape, base64 of B and BS included (stage 1). */
static void
check_attrvalue_kinds(JsonbValue *v, bool as_value)
{
	JsonbValue *keys;
	JsonbValue *vals;
	int			n;
	int			i;

	check_stack_depth();
	expect_structure(v, "AttributeValue", as_value);
	n = RqObjectMembers(v, &keys, &vals);
	for (i = 0; i < n; i++)
	{
		DynType		t;
		JsonbValue *elems;
		int			ne;
		int			j;

		if (vals[i].type == jbvNull ||
			!DynTypeFromName(keys[i].val.string.val, keys[i].val.string.len, &t))
			continue;
		switch (t)
		{
			case DYN_S:
			case DYN_N:
				if (vals[i].type != jbvString)
					DynSerializationErrorFor(&vals[i], "String");
				break;
			case DYN_B:
				DynCheckBlobKind(&vals[i]);
				break;
			case DYN_BOOL:
			case DYN_NULL:
				expect_boolean_kind(&vals[i]);
				break;
			case DYN_SS:
			case DYN_NS:
			case DYN_BS:
			case DYN_L:
				expect_list(&vals[i], false);
				elems = RqArrayElems(&vals[i], &ne);
				for (j = 0; j < ne; j++)
				{
					if (t == DYN_L)
						check_attrvalue_kinds(&elems[j], true);
					else if (elems[j].type == jbvNull)
						continue;	/* SS: a ValidationException, found while parsing */
					else if (t == DYN_BS)
						DynCheckBlobKind(&elems[j]);
					else if (elems[j].type != jbvString)
						DynSerializationErrorFor(&elems[j], "String");
				}
				break;
			case DYN_M:
				{
					JsonbValue *mk;
					JsonbValue *mv;
					int			nm;

					expect_map(&vals[i], RQ_MODEL_PACKAGE "AttributeValue", false);
					nm = RqObjectMembers(&vals[i], &mk, &mv);
					for (j = 0; j < nm; j++)
						if (mv[j].type != jbvNull)
							check_attrvalue_kinds(&mv[j], true);
					break;
				}
		}
	}
}

/* Check the members of a structure (stage 1). */
static void
check_struct_kinds(JsonbValue *v, const RqField *fields)
{
	const RqField *f;

	for (f = fields; f->type != RQ_END; f++)
	{
		JsonbValue *m = RqGetJv(v, f->name);

		if (m)
			check_kinds(m, f, false);
	}
}

/* Check one value's JSON kind against its field; as_value: a list element or map value (stage 1). */
static void
check_kinds(JsonbValue *v, const RqField *f, bool as_value)
{
	check_stack_depth();
	switch (f->type)
	{
		case RQ_END:
		case RQ_ANY:
			break;
		case RQ_STRING:
			if (v->type != jbvString)
				DynSerializationErrorFor(v, "String");
			break;
		case RQ_BOOLEAN:
			expect_boolean_kind(v);
			break;
		case RQ_INTEGER:
		case RQ_LONG:
			if (v->type != jbvNumeric)
				DynSerializationErrorFor(v, f->type == RQ_INTEGER ? "Integer" : "Long");
			break;
		case RQ_LIST:
			{
				JsonbValue *elems;
				int			n;
				int			i;

				expect_list(v, as_value);
				elems = RqArrayElems(v, &n);
				for (i = 0; i < n; i++)
				{
					if (elems[i].type == jbvNull)
						continue;
					check_kinds(&elems[i], f->elem, true);
				}
				break;
			}
		case RQ_MAP:
			{
				JsonbValue *keys;
				JsonbValue *vals;
				int			n;
				int			i;

				expect_map(v, java_type(f->elem), as_value);
				n = RqObjectMembers(v, &keys, &vals);
				for (i = 0; i < n; i++)
					if (vals[i].type != jbvNull)
						check_kinds(&vals[i], f->elem, true);
				break;
			}
		case RQ_STRUCT:
			expect_structure(v, f->structname, as_value);
			check_struct_kinds(v, f->fields);
			break;
		case RQ_ATTRVALUE:
			check_attrvalue_kinds(v, as_value);
			break;
	}
}

/* ---------------------------------------------------------------- stage 2 */

typedef struct ConstraintState
{
	int			nerrors;
	StringInfoData msgs;
	char	   *deferred;		/* a failure reported only if nothing else fails */
} ConstraintState;

static void render_value(StringInfo buf, JsonbValue *v, const RqField *f);

/* Render an AttributeValue the way DynamoDB's messages show it. */
static void
render_attrvalue(StringInfo buf, JsonbValue *v)
{
	JsonbValue *keys;
	JsonbValue *vals;
	int			n = RqObjectMembers(v, &keys, &vals);
	int			i;
	bool		first = true;

	appendStringInfoString(buf, "AttributeValue(");
	for (i = 0; i < n; i++)
	{
		if (vals[i].type == jbvNull)
			continue;
		if (!first)
			appendStringInfoString(buf, ", ");
		first = false;
		appendBinaryStringInfo(buf, keys[i].val.string.val, keys[i].val.string.len);
		appendStringInfoChar(buf, '=');
		render_value(buf, &vals[i], NULL);
	}
	appendStringInfoChar(buf, ')');
}

/* Render a value the way DynamoDB's (Java) messages show it. */
static void
render_value(StringInfo buf, JsonbValue *v, const RqField *f)
{
	check_stack_depth();
	if (v == NULL || v->type == jbvNull)
	{
		appendStringInfoString(buf, "null");
		return;
	}
	if (f && f->type == RQ_ATTRVALUE)
	{
		render_attrvalue(buf, v);
		return;
	}
	switch (v->type)
	{
		case jbvString:
			appendBinaryStringInfo(buf, v->val.string.val, v->val.string.len);
			break;
		case jbvNumeric:
			appendStringInfoString(buf, DatumGetCString(DirectFunctionCall1(numeric_out,
																			 NumericGetDatum(v->val.numeric))));
			break;
		case jbvBool:
			appendStringInfoString(buf, v->val.boolean ? "true" : "false");
			break;
		case jbvBinary:
			if (JsonContainerIsArray(v->val.binary.data))
			{
				JsonbValue *elems;
				int			n;
				int			i;

				elems = RqArrayElems(v, &n);
				appendStringInfoChar(buf, '[');
				for (i = 0; i < n; i++)
				{
					if (i > 0)
						appendStringInfoString(buf, ", ");
					render_value(buf, &elems[i], f ? f->elem : NULL);
				}
				appendStringInfoChar(buf, ']');
			}
			else if (f && f->type == RQ_STRUCT)
			{
				const RqField *m;

				appendStringInfo(buf, "%s(", f->structname);
				for (m = f->fields; m->type != RQ_END; m++)
				{
					if (m != f->fields)
						appendStringInfoString(buf, ", ");
					appendStringInfo(buf, "%c%s=", pg_tolower((unsigned char) m->name[0]), m->name + 1);
					render_value(buf, RqGetJv(v, m->name), m);
				}
				appendStringInfoChar(buf, ')');
			}
			else
			{
				JsonbValue *keys;
				JsonbValue *vals;
				int			n = RqObjectMembers(v, &keys, &vals);
				int			i;

				appendStringInfoChar(buf, '{');
				for (i = 0; i < n; i++)
				{
					if (i > 0)
						appendStringInfoString(buf, ", ");
					appendBinaryStringInfo(buf, keys[i].val.string.val, keys[i].val.string.len);
					appendStringInfoChar(buf, '=');
					render_value(buf, &vals[i], f && f->type == RQ_MAP ? f->elem : NULL);
				}
				appendStringInfoChar(buf, '}');
			}
			break;
		default:
			appendStringInfoString(buf, "null");
	}
}

/* Record one constraint failure. */
static void
constraint_error(ConstraintState *st, JsonbValue *v, const RqField *f, const char *path,
				 const char *msg)
{
	if (st->nerrors >= MAX_REPORTED_ERRORS)
		return;
	if (st->nerrors > 0)
		appendStringInfoString(&st->msgs, "; ");
	appendStringInfoString(&st->msgs, "Value ");
	if (v == NULL)
		appendStringInfoString(&st->msgs, "null");
	else
	{
		appendStringInfoChar(&st->msgs, '\'');
		render_value(&st->msgs, v, f);
		appendStringInfoChar(&st->msgs, '\'');
	}
	appendStringInfo(&st->msgs, " at '%s' failed to satisfy constraint: %s", path, msg);
	st->nerrors++;
}

/* Render a JSON value compactly, as DynamoDB's newer validation framework quotes a member. */
static void
render_json_compact(StringInfo buf, JsonbValue *v)
{
	check_stack_depth();
	if (v->type == jbvBinary)
	{
		JsonbValue *keys;
		JsonbValue *vals;
		int			n;
		int			i;

		if (JsonContainerIsArray(v->val.binary.data))
		{
			vals = RqArrayElems(v, &n);
			appendStringInfoChar(buf, '[');
			for (i = 0; i < n; i++)
			{
				if (i > 0)
					appendStringInfoChar(buf, ',');
				render_json_compact(buf, &vals[i]);
			}
			appendStringInfoChar(buf, ']');
			return;
		}
		n = RqObjectMembers(v, &keys, &vals);
		appendStringInfoChar(buf, '{');
		for (i = 0; i < n; i++)
		{
			if (i > 0)
				appendStringInfoChar(buf, ',');
			escape_json(buf, pnstrdup(keys[i].val.string.val, keys[i].val.string.len));
			appendStringInfoChar(buf, ':');
			render_json_compact(buf, &vals[i]);
		}
		appendStringInfoChar(buf, '}');
		return;
	}
	switch (v->type)
	{
		case jbvString:
			escape_json(buf, pnstrdup(v->val.string.val, v->val.string.len));
			break;
		case jbvNumeric:
			appendStringInfoString(buf, DatumGetCString(DirectFunctionCall1(numeric_out,
																			NumericGetDatum(v->val.numeric))));
			break;
		case jbvBool:
			appendStringInfoString(buf, v->val.boolean ? "true" : "false");
			break;
		default:
			appendStringInfoString(buf, "null");
	}
}

/*
 * Record one constraint failure in DynamoDB's newer form, which names the
 * member as the API spells it and quotes no value:
 * "Value at 'Limit' failed to satisfy constraint: ...".
 */
static void
constraint_error_new(ConstraintState *st, const char *rawpath, const char *msg)
{
	if (st->nerrors >= MAX_REPORTED_ERRORS)
		return;
	if (st->nerrors > 0)
		appendStringInfoString(&st->msgs, "; ");
	appendStringInfo(&st->msgs, "Value at '%s' failed to satisfy constraint: %s", rawpath, msg);
	st->nerrors++;
}

/* Does s match [a-zA-Z0-9_.-]+ ? */
static bool
matches_name_pattern(const char *s, int len)
{
	int			i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
	{
		char		c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* Is a table-name member an ARN (then 1..1024 characters, no pattern)? */
static bool
is_arn(const char *s, int len)
{
	return len >= 4 && memcmp(s, "arn:", 4) == 0;
}

/*
 * A table name or ARN (every TableName but CreateTable's): 1..1024
 * characters; a plain name also at most 255 and the name pattern.  The
 * minimum of 3 is CreateTable's alone: a shorter name is simply not found.
 */
static void
check_table_name_or_arn(ConstraintState *st, JsonbValue *v, const RqField *f, const char *path)
{
	int			len = pg_mbstrlen_with_len(v->val.string.val, v->val.string.len);

	if (len < 1)
		constraint_error(st, v, f, path, "Member must have length greater than or equal to 1");
	else if (is_arn(v->val.string.val, v->val.string.len))
	{
		if (len > 1024)
			constraint_error(st, v, f, path, "Member must have length less than or equal to 1024");
	}
	else
	{
		if (!matches_name_pattern(v->val.string.val, v->val.string.len))
			constraint_error(st, v, f, path, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
		if (len > 255)
			constraint_error(st, v, f, path, "Member must have length less than or equal to 255");
	}
}

/* Size of a value for length constraints (characters, or members). */
static int
value_length(JsonbValue *v)
{
	if (v->type == jbvString)
		return pg_mbstrlen_with_len(v->val.string.val, v->val.string.len);
	if (v->type == jbvBinary)
		return JsonContainerSize(v->val.binary.data);
	return 0;
}

static void check_constraints(ConstraintState *st, JsonbValue *v, const RqField *f, const char *path,
							  const char *rawpath);

/* Member path as DynamoDB writes it: lower-case first letter. */
static char *
member_path(const char *parent, const char *name)
{
	char	   *lower = pstrdup(name);

	lower[0] = pg_tolower((unsigned char) lower[0]);
	if (parent == NULL || parent[0] == '\0')
		return lower;
	return psprintf("%s.%s", parent, lower);
}

/* Member path as the API spells it (DynamoDB's newer messages). */
static char *
raw_member_path(const char *parent, const char *name)
{
	if (parent == NULL || parent[0] == '\0')
		return pstrdup(name);
	return psprintf("%s.%s", parent, name);
}

/* Check the members of a structure (stage 2). */
static void
check_struct_constraints(ConstraintState *st, JsonbValue *obj, const RqField *fields, const char *parent,
						 const char *rawparent)
{
	const RqField *f;

	for (f = fields; f->type != RQ_END; f++)
	{
		JsonbValue *m = obj ? RqGetJv(obj, f->name) : NULL;

		check_constraints(st, m, f, member_path(parent, f->name), raw_member_path(rawparent, f->name));
	}
}

/* Check one value's constraints (stage 2); rawpath is the path as the API spells it. */
static void
check_constraints(ConstraintState *st, JsonbValue *v, const RqField *f, const char *path,
				  const char *rawpath)
{
	check_stack_depth();
	if (v == NULL)
	{
		if (f->notnull)
			constraint_error(st, NULL, f, path, "Member must not be null");
		return;
	}
	if (f->enumvals && v->type == jbvString)
	{
		const char *const *e;
		bool		found = false;

		for (e = f->enumvals; *e; e++)
			if ((int) strlen(*e) == v->val.string.len && memcmp(*e, v->val.string.val, v->val.string.len) == 0)
				found = true;
		if (!found)
		{
			StringInfoData m;

			initStringInfo(&m);
			appendStringInfoString(&m, "Member must satisfy enum value set: [");
			for (e = f->enumvals; *e; e++)
				appendStringInfo(&m, "%s%s", e == f->enumvals ? "" : ", ", *e);
			appendStringInfoChar(&m, ']');
			constraint_error(st, v, f, path, m.data);
		}
	}
	if ((f->tablearn || f->tablename) && v->type == jbvString)
		check_table_name_or_arn(st, v, f, path);
	if (f->namepattern && v->type == jbvString &&
		!matches_name_pattern(v->val.string.val, v->val.string.len))
		constraint_error(st, v, f, path, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
	if (f->minlen > 0 && value_length(v) < f->minlen)
	{
		char	   *m = psprintf("Member must have length greater than or equal to %d", f->minlen);

		if (f->newform & RQ_NEWFORM_MIN)
			constraint_error_new(st, rawpath, m);
		else
			constraint_error(st, v, f, path, m);
	}
	if (f->maxlen > 0 && value_length(v) > f->maxlen)
	{
		char	   *m = psprintf("Member must have length less than or equal to %d", f->maxlen);

		if (f->newform & RQ_NEWFORM_MAX)
			constraint_error_new(st, rawpath, m);
		else
			constraint_error(st, v, f, path, m);
	}
	if ((f->hasmin || f->hasmax) && v->type == jbvNumeric)
	{
		int64		i = json_int(v);

		if (f->hasmin && i < f->minval)
		{
			char	   *m = psprintf("Member must have value greater than or equal to " INT64_FORMAT, f->minval);

			if (f->newform & RQ_NEWFORM_MIN)
				constraint_error_new(st, rawpath, m);
			else
				constraint_error(st, v, f, path, m);
		}
		if (f->hasmax && i > f->maxval)
		{
			char	   *m = psprintf("Member must have value less than or equal to " INT64_FORMAT, f->maxval);

			if (f->newform & RQ_NEWFORM_MAX)
				constraint_error_new(st, rawpath, m);
			else
				constraint_error(st, v, f, path, m);
		}
	}
	if (f->type == RQ_MAP && (f->mapkeys_tablename || f->elem->minlen > 0 || f->elem->maxlen > 0))
	{
		JsonbValue *keys;
		JsonbValue *vals;
		int			n = RqObjectMembers(v, &keys, &vals);
		int			i;

		for (i = 0; i < n; i++)
		{
			int			klen = pg_mbstrlen_with_len(keys[i].val.string.val, keys[i].val.string.len);

			/* keys are table names or ARNs, as TableName (RQ_TABLE_NAME_OR_ARN) */
			if (f->mapkeys_tablename && (klen < 1 || klen > 1024))
				constraint_error(st, v, f, path,
								 "Map keys must satisfy constraint: [Member must have length less than or equal to 1024, "
								 "Member must have length greater than or equal to 1]");
			else if (f->mapkeys_tablename && !is_arn(keys[i].val.string.val, keys[i].val.string.len) &&
					 (klen > 255 || !matches_name_pattern(keys[i].val.string.val, keys[i].val.string.len)))
			{
				/*
				 * BatchGetItem words it in the newer framework (the map as
				 * JSON, the minimum length listed); BatchWriteItem gives way to
				 * any other failure (us-east-1 and eu-west-2, 2026-10-09).
				 */
				if (f->mapkeys_json && st->nerrors < MAX_REPORTED_ERRORS)
				{
					StringInfoData json;

					initStringInfo(&json);
					render_json_compact(&json, v);
					if (st->nerrors > 0)
						appendStringInfoString(&st->msgs, "; ");
					appendStringInfo(&st->msgs, "Value '%s' at '%s' failed to satisfy constraint: "
									 "Map keys must satisfy constraint: [Member must have length less than or equal to 255, "
									 "Member must have length greater than or equal to 3, "
									 "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]",
									 json.data, path);
					st->nerrors++;
				}
				else if (f->mapkeys_yield)
				{
					ConstraintState one;

					one.nerrors = 0;
					one.deferred = NULL;
					initStringInfo(&one.msgs);
					constraint_error(&one, v, f, path,
									 "Map keys must satisfy constraint: [Member must have length less than or equal to 255, "
									 "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]");
					if (st->deferred == NULL)
						st->deferred = one.msgs.data;
				}
				else
					constraint_error(st, v, f, path,
									 "Map keys must satisfy constraint: [Member must have length less than or equal to 255, "
									 "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]");
			}
			if ((f->elem->maxlen > 0 && value_length(&vals[i]) > f->elem->maxlen) ||
				(f->elem->minlen > 0 && value_length(&vals[i]) < f->elem->minlen))
				constraint_error(st, v, f, path,
								 psprintf("Map value must satisfy constraint: [Member must have length less than or equal to %d, "
										  "Member must have length greater than or equal to %d]",
										  f->elem->maxlen, f->elem->minlen));
		}
	}
	if (f->type == RQ_LIST && f->elem && f->elem->type != RQ_ATTRVALUE)
	{
		JsonbValue *elems;
		int			n;
		int			i;

		elems = RqArrayElems(v, &n);
		for (i = 0; i < n; i++)
		{
			char	   *p = psprintf("%s.%d.member", path, i + 1);
			char	   *rp = psprintf("%s.%d.member", rawpath, i + 1);

			if (f->elem->type == RQ_STRUCT)
				check_struct_constraints(st, elems[i].type == jbvNull ? NULL : &elems[i], f->elem->fields, p, rp);
			else
				check_constraints(st, elems[i].type == jbvNull ? NULL : &elems[i], f->elem, p, rp);
		}
	}
	else if (f->type == RQ_MAP && f->elem && f->elem->type == RQ_STRUCT)
	{
		JsonbValue *keys;
		JsonbValue *vals;
		int			n = RqObjectMembers(v, &keys, &vals);
		int			i;

		for (i = 0; i < n; i++)
		{
			char	   *p = psprintf("%s.%.*s.member", path, keys[i].val.string.len, keys[i].val.string.val);
			char	   *rp = psprintf("%s.%.*s.member", rawpath, keys[i].val.string.len, keys[i].val.string.val);

			check_struct_constraints(st, vals[i].type == jbvNull ? NULL : &vals[i], f->elem->fields, p, rp);
		}
	}
	else if (f->type == RQ_MAP && f->elem && f->elem->type == RQ_LIST &&
			 f->elem->elem && f->elem->elem->type == RQ_STRUCT)
	{
		/* a map of lists of structures (BatchWriteItem's RequestItems) */
		JsonbValue *keys;
		JsonbValue *vals;
		int			n = RqObjectMembers(v, &keys, &vals);
		int			i;

		for (i = 0; i < n; i++)
		{
			JsonbValue *elems;
			int			ne;
			int			j;

			if (!(vals[i].type == jbvBinary && JsonContainerIsArray(vals[i].val.binary.data)))
				continue;
			elems = RqArrayElems(&vals[i], &ne);
			for (j = 0; j < ne; j++)
			{
				char	   *p = psprintf("%s.%.*s.member.%d.member", path, keys[i].val.string.len,
										 keys[i].val.string.val, j + 1);
				char	   *rp = psprintf("%s.%.*s.member.%d.member", rawpath, keys[i].val.string.len,
										  keys[i].val.string.val, j + 1);

				check_struct_constraints(st, elems[j].type == jbvNull ? NULL : &elems[j],
										 f->elem->elem->fields, p, rp);
			}
		}
	}
	else if (f->type == RQ_STRUCT)
		check_struct_constraints(st, v, f->fields, path, rawpath);
}

/*
 * The validation layer of the operation being served, as DynamoDB's answers of
 * 2026-10 show it (docs/errors.md, "Validation layers"): PutItem, UpdateItem
 * and DeleteItem in the current layer and inside the envelope until the table
 * is looked up; GetItem, BatchGetItem and Query in the current layer, bare;
 * the others (and NULL: no request) in the older layer.  src/api/api.c sets
 * it around each operation.
 */
void
RqSetValidationLayer(const char *op)
{
	static const char *const enveloped[] = {"PutItem", "UpdateItem", "DeleteItem", NULL};
	static const char *const current[] = {"GetItem", "BatchGetItem", "Query", NULL};
	int			i;

	DynValueLayer = DYN_LAYER_OLDER;
	DynValidationEnvelope = false;
	if (op == NULL)
		return;
	for (i = 0; enveloped[i]; i++)
		if (strcmp(op, enveloped[i]) == 0)
		{
			DynValueLayer = DYN_LAYER_CURRENT;
			DynValidationEnvelope = true;
		}
	for (i = 0; current[i]; i++)
		if (strcmp(op, current[i]) == 0)
			DynValueLayer = DYN_LAYER_CURRENT;
}

/* Validate a request: required members, kinds, then constraints. */
void
RqValidate(Jsonb *req, const RqField *fields)
{
	JsonbValue	root;
	const RqField *f;
	ConstraintState st;

	if (!JB_ROOT_IS_OBJECT(req) || JB_ROOT_IS_SCALAR(req))
		DynError(DYN_ERR_SERIALIZATION, "Start of list found where not expected");
	root.type = jbvBinary;
	root.val.binary.data = &req->root;
	root.val.binary.len = VARSIZE(req) - VARHDRSZ;

	/*
	 * DynamoDB deserializes the whole request before it judges anything: a
	 * member of the wrong kind is a SerializationException even when a
	 * required member is missing.
	 */
	check_struct_kinds(&root, fields);
	for (f = fields; f->type != RQ_END; f++)
		if (f->required && RqGetJv(&root, f->name) == NULL)
			DynValidationError("The parameter '%s' is required but was not present in the request", f->name);

	for (f = fields; f->type != RQ_END; f++)
	{
		JsonbValue *m = RqGetJv(&root, f->name);

		if (m == NULL)
			continue;
		/*
		 * An empty TableName is reported alone: DynamoDB stops there.
		 * DescribeTable reports its minimum of 3 and the pattern together
		 * (us-west-2, 2026-10-09: the ACK DynamoDB controller's behaviour
		 * catalogue, DDB-TABLE-457).
		 */
		if ((f->tablearn || f->tablename) && m->type == jbvString && m->val.string.len == 0)
		{
			if (f->empty_name_min3)
				DynValidationError("2 validation errors detected: Value '' at '%s' failed to satisfy constraint: "
								   "Member must have length greater than or equal to 3; Value '' at '%s' failed to "
								   "satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
								   member_path("", f->name), member_path("", f->name));
			DynValidationError("1 validation error detected: Value '' at '%s' failed to satisfy constraint: "
							   "Member must have length greater than or equal to 1", member_path("", f->name));
		}
		/* an empty map or list with a message of its own (BatchGetItem's RequestItems) */
		if (f->empty_msg && m->type == jbvBinary && !JsonContainerIsScalar(m->val.binary.data) &&
			JsonContainerSize(m->val.binary.data) == 0)
			DynValidationError("%s", f->empty_msg);
	}

	st.nerrors = 0;
	st.deferred = NULL;
	initStringInfo(&st.msgs);
	check_struct_constraints(&st, &root, fields, "", "");
	if (st.nerrors == 0 && st.deferred)
		DynValidationError("1 validation error detected: %s", st.deferred);
	if (st.nerrors > 0)
		DynValidationError("%d validation error%s detected: %s", st.nerrors,
						   st.nerrors > 1 ? "s" : "", st.msgs.data);
}

/* ---------------------------------------------------------------- building */

/* Push an object key. */
void
RqPushKey(JsonbParseState **st, const char *key)
{
	RqPushString(st, WJB_KEY, key);
}

/* Push a string. */
void
RqPushString(JsonbParseState **st, JsonbIteratorToken tok, const char *s)
{
	DynPushJsonbString(st, tok, s, strlen(s));
}

/* Push a number given as a double. */
void
RqPushNumeric(JsonbParseState **st, JsonbIteratorToken tok, double d)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(d)));
	pushJsonbValue(st, tok, &v);
}

/* Push an integer. */
void
RqPushInt(JsonbParseState **st, JsonbIteratorToken tok, int64 i)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(i);
	pushJsonbValue(st, tok, &v);
}

/* Push a boolean. */
void
RqPushBool(JsonbParseState **st, JsonbIteratorToken tok, bool b)
{
	JsonbValue	v;

	v.type = jbvBool;
	v.val.boolean = b;
	pushJsonbValue(st, tok, &v);
}

/* Push a whole jsonb document as a value. */
void
RqPushJsonb(JsonbParseState **st, JsonbIteratorToken tok, Jsonb *jb)
{
	JsonbValue	v;

	v.type = jbvBinary;
	v.val.binary.data = &jb->root;
	v.val.binary.len = VARSIZE(jb) - VARHDRSZ;
	pushJsonbValue(st, tok, &v);
}

/* An empty JSON object. */
Jsonb *
RqEmptyObject(void)
{
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* {"<key>": value} */
Jsonb *
RqWrap(const char *key, Jsonb *value)
{
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, key);
	RqPushJsonb(&st, WJB_VALUE, value);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* Run an SPI query returning one jsonb (none, or NULL: NULL), copied out of SPI's memory. */
Jsonb *
RqQueryJsonb(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls)
{
	bool		isnull;
	Datum		d;

	if (SPI_execute_with_args(sql, nargs, types, args, nulls, false, 0) < 0)
		elog(ERROR, "could not run a catalog query");
	if (SPI_processed == 0)
		return NULL;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? NULL : DatumGetJsonbPCopy(d);
}

/* A List operation's page from the last SPI query's (summary, position) rows. */
Jsonb *
RqListPage(const char *list_key, int64 page_size, char *(*token) (int64 position))
{
	JsonbParseState *st = NULL;
	uint64		shown = Min(SPI_processed, (uint64) page_size);
	bool		isnull;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, list_key);
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (uint64 i = 0; i < shown; i++)
		RqPushJsonb(&st, WJB_ELEM, DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)));
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (SPI_processed > shown && shown > 0)
	{
		RqPushKey(&st, "NextToken");
		RqPushString(&st, WJB_VALUE,
					 token(DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[shown - 1], SPI_tuptable->tupdesc, 2, &isnull))));
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
