/*
 * expr_util.c — small helpers of the expression module: node constructors,
 * names of operators and functions, message rendering, JSON iteration.
 */
#include "postgres.h"

#include "common/errors.h"
#include "common/json.h"
#include "expr/expr_int.h"

/* Raise "Invalid <kind>: <message>" as a ValidationException. */
void
DynExprRaise(const char *kind, const char *fmt,...)
{
	va_list		args;
	char	   *msg;

	va_start(args, fmt);
	msg = DynFormatVA(fmt, args);
	va_end(args);
	DynValidationError("Invalid %s: %s", kind, msg);
}

/* A zeroed node with room for nargs operands. */
DynExpr *
DynExprMakeNode(DynExprKind kind, int nargs)
{
	DynExpr    *e = palloc0(sizeof(DynExpr));

	e->kind = kind;
	e->nargs = nargs;
	if (nargs > 0)
		e->args = palloc0(sizeof(DynExpr *) * nargs);
	return e;
}

/* A one-step path naming a top-level attribute. */
DynExpr *
DynExprMakePath(const char *name, int namelen)
{
	DynExpr    *e = DynExprMakeNode(DYN_EXPR_PATH, 0);

	e->npath = 1;
	e->path = palloc0(sizeof(DynPathElem));
	e->path[0].name = name;
	e->path[0].namelen = namelen;
	return e;
}

/* A literal value operand (legacy parameters). */
DynExpr *
DynExprMakeConst(DynValue *value)
{
	DynExpr    *e = DynExprMakeNode(DYN_EXPR_VALUE, 0);

	e->value = value;
	return e;
}

/* The text of a comparison operator. */
const char *
DynCmpOpName(DynCmpOp op)
{
	static const char *const names[] = {"=", "<>", "<", "<=", ">", ">="};

	return names[op];
}

/* The name of a function. */
const char *
DynFuncName(DynFunc f)
{
	switch (f)
	{
		case DYN_FN_ATTRIBUTE_EXISTS:
			return "attribute_exists";
		case DYN_FN_ATTRIBUTE_NOT_EXISTS:
			return "attribute_not_exists";
		case DYN_FN_ATTRIBUTE_TYPE:
			return "attribute_type";
		case DYN_FN_BEGINS_WITH:
			return "begins_with";
		case DYN_FN_CONTAINS:
			return "contains";
		case DYN_FN_SIZE:
			return "size";
		case DYN_FN_IF_NOT_EXISTS:
			return "if_not_exists";
		case DYN_FN_LIST_APPEND:
			return "list_append";
		case DYN_FN_NOT_CONTAINS:
			return "NOT_CONTAINS";
		default:
			return "unknown";
	}
}

/* Render a path as DynamoDB does in messages: [a, b, [2]]. */
void
DynPathAppendForMessage(StringInfo buf, const DynExpr *path)
{
	int			i;

	appendStringInfoChar(buf, '[');
	for (i = 0; i < path->npath; i++)
	{
		const DynPathElem *el = &path->path[i];

		if (i > 0)
			appendStringInfoString(buf, ", ");
		if (el->is_index)
			appendStringInfo(buf, "[%d]", el->index);
		else
			appendBinaryStringInfo(buf, el->name, el->namelen);
	}
	appendStringInfoChar(buf, ']');
}

/* A number value from an integer. */
DynValue *
DynMakeNumberFromInt(int64 v)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), INT64_FORMAT, v);
	return DynMakeString(DYN_N, pstrdup(buf), strlen(buf));
}

/* A BETWEEN bound as DynamoDB prints it: AttributeValue: {S:b}. */
void
DynAppendBoundForMessage(StringInfo buf, const DynValue *v)
{
	appendStringInfo(buf, "AttributeValue: {%s:", DynTypeName(v->type));
	if (v->type == DYN_S || v->type == DYN_N)
		appendBinaryStringInfo(buf, v->u.str.data, v->u.str.len);
	else if (v->type == DYN_B)
		appendStringInfo(buf, "java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]",
						 v->u.str.len, v->u.str.len);
	else
		DynValueAppendForMessage(buf, v);
	appendStringInfoChar(buf, '}');
}

/* DynamoDB's long type names used in ADD/DELETE operand messages. */
const char *
DynLongTypeName(DynType t)
{
	switch (t)
	{
		case DYN_S:
			return "STRING";
		case DYN_N:
			return "NUMBER";
		case DYN_B:
			return "BINARY";
		case DYN_BOOL:
			return "BOOLEAN";
		case DYN_NULL:
			return "NULL";
		case DYN_L:
			return "LIST";
		case DYN_M:
			return "MAP";
		case DYN_SS:
			return "STRING_SET";
		case DYN_NS:
			return "NUMBER_SET";
		case DYN_BS:
			return "BINARY_SET";
	}
	return "UNKNOWN";
}

/* The members of a JSON object; -1 when jv is not an object. */
int
DynJsonObjectMembers(JsonbValue *jv, char ***keys, int **keylens, JsonbValue **values)
{
	int			n = 0;

	if (jv == NULL)
		return -1;
	if (jv->type == jbvObject)
	{
		int			i;

		n = jv->val.object.nPairs;
		*keys = palloc(sizeof(char *) * Max(n, 1));
		*keylens = palloc(sizeof(int) * Max(n, 1));
		*values = palloc(sizeof(JsonbValue) * Max(n, 1));
		for (i = 0; i < n; i++)
		{
			/* attribute names may hold U+0000, escaped in jsonb (types/nulstr.c) */
			(*keys)[i] = (char *) DynNulDecode(jv->val.object.pairs[i].key.val.string.val,
									  jv->val.object.pairs[i].key.val.string.len, &(*keylens)[i]);
			(*values)[i] = jv->val.object.pairs[i].value;
		}
		return n;
	}
	if (jv->type == jbvBinary && JsonContainerIsObject(jv->val.binary.data))
	{
		JsonbIterator *it = JsonbIteratorInit(jv->val.binary.data);
		JsonbValue	v;
		JsonbIteratorToken tok;
		int			cap = JsonContainerSize(jv->val.binary.data);

		*keys = palloc(sizeof(char *) * Max(cap, 1));
		*keylens = palloc(sizeof(int) * Max(cap, 1));
		*values = palloc(sizeof(JsonbValue) * Max(cap, 1));
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
			{
				(*keys)[n] = (char *) DynNulDecode(v.val.string.val, v.val.string.len, &(*keylens)[n]);
			}
			else if (tok == WJB_VALUE)
				(*values)[n++] = v;
		}
		return n;
	}
	return -1;
}

/* The elements of a JSON array; -1 when jv is not an array. */
int
DynJsonArrayElements(JsonbValue *jv, JsonbValue **elems)
{
	int			n = 0;

	if (jv == NULL)
		return -1;
	if (jv->type == jbvArray)
	{
		n = jv->val.array.nElems;
		*elems = palloc(sizeof(JsonbValue) * Max(n, 1));
		memcpy(*elems, jv->val.array.elems, sizeof(JsonbValue) * n);
		return n;
	}
	if (jv->type == jbvBinary && JsonContainerIsArray(jv->val.binary.data) &&
		!JsonContainerIsScalar(jv->val.binary.data))
	{
		JsonbIterator *it = JsonbIteratorInit(jv->val.binary.data);
		JsonbValue	v;
		JsonbIteratorToken tok;
		int			cap = JsonContainerSize(jv->val.binary.data);

		*elems = palloc(sizeof(JsonbValue) * Max(cap, 1));
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_ELEM)
			{
				DynJsonClobberNull(&v);
				(*elems)[n++] = v;
			}
		}
		return n;
	}
	return -1;
}
