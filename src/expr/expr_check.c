/*
 * expr_check.c — ExpressionAttributeNames/Values validation and the semantic
 * checks DynamoDB makes on a parsed expression, in DynamoDB's order:
 *
 *   1. in textual order: list index range, reserved words, function names,
 *      where each function may stand, operand counts (conditions);
 *      for updates, each of SET/REMOVE/ADD/DELETE at most once;
 *   2. updates: the #names of the written paths, then overlapping paths;
 *   3. placeholders (#names, :values), operand types, distinct operands,
 *      BETWEEN bounds, IN operand count; updates walk their actions from the
 *      last to the first; projections check overlapping paths last.
 *
 * After a request's expressions are parsed, DynExprCheckUnused rejects names
 * and values no expression used.  Keys listed in messages follow Java's
 * HashSet iteration order, as DynamoDB's do.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "common/errors.h"
#include "expr/expr_int.h"

#define ANY_TYPE_SET "{SS,M,DECIMAL,DOUBLESET,HDS,N,B,DICT,INTSET,BOOL,HD,BS,INT,DECIMALSET,NULL,FLOAT,FS,S,L,NS,DOUBLE}"
#define TYPE_NAME_SET "{N,BS,L,B,NULL,M,S,SS,NS,BOOL}"

typedef enum Place
{
	PLACE_CONDITION,
	PLACE_OPERAND
} Place;

typedef struct Checker
{
	DynExprContext *ctx;
	const char *kind;
	bool		update;
} Checker;

/* ---- Java HashSet order ---- */

/* Java's String.hashCode over the bytes of an ASCII key. */
static int32
java_hash(const char *s, int len)
{
	uint32		h = 0;
	int			i;

	for (i = 0; i < len; i++)
		h = 31 * h + (unsigned char) s[i];
	return (int32) h;
}

typedef struct SlotEntry
{
	int			slot;
	int			ord;
} SlotEntry;

/* qsort comparator: by hash slot, then insertion order. */
static int
slot_cmp(const void *a, const void *b)
{
	const SlotEntry *x = a;
	const SlotEntry *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->ord - y->ord;
}

/*
 * Append "{k1, k2}" listing keys in the iteration order of a Java HashSet
 * built from total keys (DynamoDB lists unused placeholders that way).
 */
static void
append_java_set(StringInfo buf, char **keys, int *lens, int n, int total)
{
	SlotEntry  *e = palloc(sizeof(SlotEntry) * Max(n, 1));
	int			cap = 1;
	int			want = Max((int) (total / 0.75) + 1, 16);
	int			i;

	while (cap < want)
		cap *= 2;
	for (i = 0; i < n; i++)
	{
		uint32		h = (uint32) java_hash(keys[i], lens[i]);

		e[i].slot = (int) ((h ^ (h >> 16)) & (uint32) (cap - 1));
		e[i].ord = i;
	}
	qsort(e, n, sizeof(SlotEntry), slot_cmp);
	appendStringInfoChar(buf, '{');
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(buf, ", ");
		appendBinaryStringInfo(buf, keys[e[i].ord], lens[e[i].ord]);
	}
	appendStringInfoChar(buf, '}');
	pfree(e);
}

/* ---- ExpressionAttributeNames / Values ---- */

/* Whether key is prefix followed by one or more of [A-Za-z0-9_]. */
static bool
valid_placeholder_key(const char *key, int len, char prefix)
{
	int			i;

	if (len < 2 || key[0] != prefix)
		return false;
	for (i = 1; i < len; i++)
	{
		char		c = key[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* Validate the request's names and values and build the context. */
DynExprContext *
DynExprContextCreate(JsonbValue *names, JsonbValue *values)
{
	DynExprContext *ctx = palloc0(sizeof(DynExprContext));
	char	  **keys;
	int		   *lens;
	JsonbValue *vals;
	int			n;
	int			i;

	if (names != NULL && names->type != jbvNull)
	{
		n = DynJsonObjectMembers(names, &keys, &lens, &vals);
		if (n < 0)
			DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
		if (n == 0)
			DynValidationError("ExpressionAttributeNames must not be empty");
		ctx->has_names = true;
		ctx->nnames = n;
		ctx->names = palloc0(sizeof(DynExprName) * n);
		for (i = 0; i < n; i++)
		{
			if (lens[i] > DYN_MAX_PLACEHOLDER_LEN)
				DynValidationError("ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: %d",
								   lens[i]);
			if (!valid_placeholder_key(keys[i], lens[i], '#'))
				DynValidationError("ExpressionAttributeNames contains invalid key: Syntax error; key: \"%.*s\"",
								   lens[i], keys[i]);
			if (vals[i].type != jbvString)
				DynError(DYN_ERR_SERIALIZATION, "Unexpected value type in payload");
			if (vals[i].val.string.len == 0)
				DynValidationError("ExpressionAttributeNames contains invalid value: Empty attribute name for key %.*s",
								   lens[i], keys[i]);
			DynCheckAttributeNameLength(vals[i].val.string.len);
			ctx->names[i].key = pnstrdup(keys[i], lens[i]);
			ctx->names[i].keylen = lens[i];
			{
				/* a name may hold U+0000, escaped in jsonb (types/nulstr.c) */
				int			dlen;
				const char *d = DynNulDecode(vals[i].val.string.val, vals[i].val.string.len, &dlen);

				ctx->names[i].value = palloc(dlen + 1);
				memcpy(ctx->names[i].value, d, dlen);
				ctx->names[i].value[dlen] = '\0';
				ctx->names[i].valuelen = dlen;
			}
		}
	}

	if (values != NULL && values->type != jbvNull)
	{
		SlotEntry  *order;
		int			cap = 1;
		int			want;

		n = DynJsonObjectMembers(values, &keys, &lens, &vals);
		if (n < 0)
			DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
		if (n == 0)
			DynValidationError("ExpressionAttributeValues must not be empty");
		ctx->has_values = true;
		ctx->nvalues = n;
		ctx->values = palloc0(sizeof(DynExprVal) * n);
		for (i = 0; i < n; i++)
		{
			if (lens[i] > DYN_MAX_PLACEHOLDER_LEN)
				DynValidationError("ExpressionAttributeValues contains invalid key: The expression attribute map contains a key that is too long;");
			if (!valid_placeholder_key(keys[i], lens[i], ':'))
				DynValidationError("ExpressionAttributeValues contains invalid key: Syntax error; key: \"%.*s\"",
								   lens[i], keys[i]);
		}
		/* values are validated in Java HashSet order, as DynamoDB does */
		want = Max((int) (n / 0.75) + 1, 16);
		while (cap < want)
			cap *= 2;
		order = palloc(sizeof(SlotEntry) * n);
		for (i = 0; i < n; i++)
		{
			uint32		h = (uint32) java_hash(keys[i], lens[i]);

			order[i].slot = (int) ((h ^ (h >> 16)) & (uint32) (cap - 1));
			order[i].ord = i;
		}
		qsort(order, n, sizeof(SlotEntry), slot_cmp);
		for (i = 0; i < n; i++)
		{
			int			k = order[i].ord;
			const char *err = NULL;
			DynValue   *v = DynValueFromJsonb(&vals[k], &err);

			if (v == NULL && DynValueLayer == DYN_LAYER_CURRENT)
				DynValidationError("%s", err ? err : "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes");
			if (v == NULL)
				DynValidationError("ExpressionAttributeValues contains invalid value: %s for key %.*s",
								   err ? err : "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
								   lens[k], keys[k]);
			ctx->values[k].key = pnstrdup(keys[k], lens[k]);
			ctx->values[k].keylen = lens[k];
			ctx->values[k].value = v;
		}
		pfree(order);
	}
	return ctx;
}

/* Reject names and values that no expression of the request used. */
void
DynExprCheckUnused(DynExprContext *ctx)
{
	char	  **keys;
	int		   *lens;
	int			n = 0;
	int			i;
	StringInfoData buf;

	if (ctx == NULL)
		return;
	if (ctx->nnames > 0)
	{
		keys = palloc(sizeof(char *) * ctx->nnames);
		lens = palloc(sizeof(int) * ctx->nnames);
		for (i = 0; i < ctx->nnames; i++)
			if (!ctx->names[i].used)
			{
				keys[n] = ctx->names[i].key;
				lens[n++] = ctx->names[i].keylen;
			}
		if (n > 0)
		{
			initStringInfo(&buf);
			append_java_set(&buf, keys, lens, n, ctx->nnames);
			DynValidationError("Value provided in ExpressionAttributeNames unused in expressions: keys: %s", buf.data);
		}
	}
	n = 0;
	if (ctx->nvalues > 0)
	{
		keys = palloc(sizeof(char *) * ctx->nvalues);
		lens = palloc(sizeof(int) * ctx->nvalues);
		for (i = 0; i < ctx->nvalues; i++)
			if (!ctx->values[i].used)
			{
				keys[n] = ctx->values[i].key;
				lens[n++] = ctx->values[i].keylen;
			}
		if (n > 0)
		{
			initStringInfo(&buf);
			append_java_set(&buf, keys, lens, n, ctx->nvalues);
			DynValidationError("Value provided in ExpressionAttributeValues unused in expressions: keys: %s", buf.data);
		}
	}
}

/* ---- pass 1: textual order ---- */

/* The function named name[0..len), or DYN_FN_UNKNOWN. */
static DynFunc
lookup_function(const char *name, int len)
{
	static const DynFunc all[] = {
		DYN_FN_ATTRIBUTE_EXISTS, DYN_FN_ATTRIBUTE_NOT_EXISTS, DYN_FN_ATTRIBUTE_TYPE,
		DYN_FN_BEGINS_WITH, DYN_FN_CONTAINS, DYN_FN_SIZE, DYN_FN_IF_NOT_EXISTS,
		DYN_FN_LIST_APPEND
	};
	int			i;

	for (i = 0; i < lengthof(all); i++)
	{
		const char *fn = DynFuncName(all[i]);

		if (strlen(fn) == (size_t) len && memcmp(fn, name, len) == 0)
			return all[i];
	}
	return DYN_FN_UNKNOWN;
}

/* The number of operands a function takes. */
static int
function_arity(DynFunc f)
{
	switch (f)
	{
		case DYN_FN_ATTRIBUTE_EXISTS:
		case DYN_FN_ATTRIBUTE_NOT_EXISTS:
		case DYN_FN_SIZE:
			return 1;
		default:
			return 2;
	}
}

/* Whether a function is a condition on its own (not an operand). */
static bool
is_condition_function(DynFunc f)
{
	return f == DYN_FN_ATTRIBUTE_EXISTS || f == DYN_FN_ATTRIBUTE_NOT_EXISTS ||
		f == DYN_FN_ATTRIBUTE_TYPE || f == DYN_FN_BEGINS_WITH || f == DYN_FN_CONTAINS;
}

/* Raise the operand-count error for a function call. */
static void
check_arity(Checker *c, DynExpr *e)
{
	if (e->nargs != function_arity(e->func))
		DynExprRaise(c->kind, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d",
					 DynFuncName(e->func), e->nargs);
}

/* Pass 1 on a path: list index range, reserved words. */
static void
pass1_path(Checker *c, DynExpr *e)
{
	int			i;

	for (i = 0; i < e->npath; i++)
	{
		DynPathElem *el = &e->path[i];

		if (el->is_index)
		{
			int64		v = 0;
			int			k;

			if (el->namelen > 10)
				DynExprRaise(c->kind, "List index is not within the allowable range; index: [%.*s]",
							 el->namelen, el->name);
			for (k = 0; k < el->namelen; k++)
				v = v * 10 + (el->name[k] - '0');
			if (v > PG_INT32_MAX)
				DynExprRaise(c->kind, "List index is not within the allowable range; index: [%.*s]",
							 el->namelen, el->name);
			el->index = (int) v;
		}
		else if (el->placeholder == NULL && DynIsReservedWord(el->name, el->namelen))
			DynExprRaise(c->kind, "Attribute name is a reserved keyword; reserved keyword: %.*s",
						 el->namelen, el->name);
	}
}

/* Pass 1 over a node, in textual order. */
static void
pass1(Checker *c, DynExpr *e, Place place)
{
	int			i;

	check_stack_depth();
	switch (e->kind)
	{
		case DYN_EXPR_PATH:
			pass1_path(c, e);
			return;
		case DYN_EXPR_VALUE:
			return;
		case DYN_EXPR_FUNC:
			e->func = lookup_function(e->fname, e->fnamelen);
			if (e->func == DYN_FN_UNKNOWN)
				DynExprRaise(c->kind, "Invalid function name; function: %.*s", e->fnamelen, e->fname);
			if (c->update)
			{
				if (e->func != DYN_FN_IF_NOT_EXISTS && e->func != DYN_FN_LIST_APPEND)
					DynExprRaise(c->kind, "The function is not allowed in an update expression; function: %s",
								 DynFuncName(e->func));
				/* DynamoDB refuses list_append(list_append(...), ...) */
				if (e->func == DYN_FN_LIST_APPEND)
					for (i = 0; i < e->nargs; i++)
						if (e->args[i]->kind == DYN_EXPR_FUNC &&
							lookup_function(e->args[i]->fname, e->args[i]->fnamelen) == DYN_FN_LIST_APPEND)
							DynExprRaise(c->kind, "The function is not allowed to be used this way in an expression; function: %s",
										 DynFuncName(e->func));
			}
			else
			{
				if (e->func == DYN_FN_IF_NOT_EXISTS || e->func == DYN_FN_LIST_APPEND)
					DynExprRaise(c->kind, "The function is not allowed in a condition expression; function: %s",
								 DynFuncName(e->func));
				if ((place == PLACE_CONDITION) != is_condition_function(e->func))
					DynExprRaise(c->kind, "The function is not allowed to be used this way in an expression; function: %s",
								 DynFuncName(e->func));
				check_arity(c, e);
			}
			for (i = 0; i < e->nargs; i++)
				pass1(c, e->args[i], PLACE_OPERAND);
			return;
		case DYN_EXPR_AND:
		case DYN_EXPR_OR:
		case DYN_EXPR_NOT:
			for (i = 0; i < e->nargs; i++)
				pass1(c, e->args[i], PLACE_CONDITION);
			return;
		default:
			for (i = 0; i < e->nargs; i++)
				pass1(c, e->args[i], PLACE_OPERAND);
			return;
	}
}

/* ---- placeholders ---- */

/* Resolve the #names of a path (marking them used); raise when undefined. */
static void
resolve_path_names(Checker *c, DynExpr *e)
{
	int			i;

	for (i = 0; i < e->npath; i++)
	{
		DynPathElem *el = &e->path[i];
		int			k;
		bool		found = false;

		if (el->is_index || el->placeholder == NULL)
			continue;
		for (k = 0; k < c->ctx->nnames; k++)
		{
			DynExprName *nm = &c->ctx->names[k];

			if (nm->keylen == (int) strlen(el->placeholder) &&
				memcmp(nm->key, el->placeholder, nm->keylen) == 0)
			{
				nm->used = true;
				el->name = nm->value;
				el->namelen = nm->valuelen;
				found = true;
				break;
			}
		}
		if (!found)
			DynExprRaise(c->kind, "An expression attribute name used in the document path is not defined; attribute name: %s",
						 el->placeholder);
	}
}

/* Check only the #names of every path under e (updates do this first). */
static void
names_only(Checker *c, DynExpr *e)
{
	int			i;

	check_stack_depth();
	if (e->kind == DYN_EXPR_PATH)
	{
		resolve_path_names(c, e);
		return;
	}
	for (i = 0; i < e->nargs; i++)
		names_only(c, e->args[i]);
}

/* Resolve a :value placeholder (marking it used); raise when undefined. */
static void
resolve_value(Checker *c, DynExpr *e)
{
	int			k;

	if (e->placeholder == NULL)
		return;					/* a literal */
	for (k = 0; k < c->ctx->nvalues; k++)
	{
		DynExprVal *v = &c->ctx->values[k];

		if (v->keylen == (int) strlen(e->placeholder) &&
			memcmp(v->key, e->placeholder, v->keylen) == 0)
		{
			v->used = true;
			e->value = v->value;
			return;
		}
	}
	DynExprRaise(c->kind, "An expression attribute value used in expression is not defined; attribute value: %s",
				 e->placeholder);
}

/* ---- pass 3: placeholders and types ---- */

/* The type an operand has before any item is seen; false when unknown. */
static bool
static_type(DynExpr *e, DynType *t)
{
	if (e->kind == DYN_EXPR_VALUE && e->value != NULL)
	{
		*t = e->value->type;
		return true;
	}
	if (e->kind == DYN_EXPR_FUNC && e->func == DYN_FN_SIZE)
	{
		*t = DYN_N;
		return true;
	}
	return false;
}

/* Whether two path nodes name the same document path. */
static bool
same_path(DynExpr *a, DynExpr *b)
{
	int			i;

	if (a->kind != DYN_EXPR_PATH || b->kind != DYN_EXPR_PATH || a->npath != b->npath)
		return false;
	for (i = 0; i < a->npath; i++)
	{
		DynPathElem *x = &a->path[i];
		DynPathElem *y = &b->path[i];

		if (x->is_index != y->is_index)
			return false;
		if (x->is_index ? x->index != y->index :
			(x->namelen != y->namelen || memcmp(x->name, y->name, x->namelen) != 0))
			return false;
	}
	return true;
}

/* The first operand must differ from the others (when it is a path). */
static void
check_distinct(Checker *c, const char *op, DynExpr *first, DynExpr **rest, int nrest)
{
	int			i;

	if (first->kind != DYN_EXPR_PATH)
		return;
	for (i = 0; i < nrest; i++)
	{
		if (same_path(first, rest[i]))
		{
			StringInfoData buf;

			initStringInfo(&buf);
			DynPathAppendForMessage(&buf, first);
			DynExprRaise(c->kind, "The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s",
						 op, buf.data);
		}
	}
}

/* Raise the operand-type error. */
static void
type_error(Checker *c, const char *op, const char *type)
{
	DynExprRaise(c->kind, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s",
				 op, type);
}

/* Operands of ordering comparisons and BETWEEN must be S, N or B. */
static void
check_scalar_operand(Checker *c, const char *op, DynExpr *e)
{
	DynType		t;

	if (static_type(e, &t) && t != DYN_S && t != DYN_N && t != DYN_B)
		type_error(c, op, DynTypeName(t));
}

/* Pass 3 over a node: placeholders, types, distinct operands. */
static void
pass3(Checker *c, DynExpr *e)
{
	int			i;
	DynType		t;

	check_stack_depth();
	switch (e->kind)
	{
		case DYN_EXPR_PATH:
			resolve_path_names(c, e);
			if (e->npath > DYN_MAX_PATH_DEPTH)
				DynExprRaise(c->kind, "The document path has too many nesting levels; nesting levels: %d",
							 e->npath);
			return;
		case DYN_EXPR_VALUE:
			resolve_value(c, e);
			return;
		case DYN_EXPR_AND:
		case DYN_EXPR_OR:
		case DYN_EXPR_NOT:
			for (i = 0; i < e->nargs; i++)
				pass3(c, e->args[i]);
			return;
		case DYN_EXPR_CMP:
			pass3(c, e->args[0]);
			pass3(c, e->args[1]);
			check_distinct(c, DynCmpOpName(e->cmp), e->args[0], &e->args[1], 1);
			if (e->cmp != DYN_CMP_EQ && e->cmp != DYN_CMP_NE)
			{
				check_scalar_operand(c, DynCmpOpName(e->cmp), e->args[0]);
				check_scalar_operand(c, DynCmpOpName(e->cmp), e->args[1]);
			}
			return;
		case DYN_EXPR_BETWEEN:
			for (i = 0; i < 3; i++)
				pass3(c, e->args[i]);
			check_distinct(c, "BETWEEN", e->args[0], &e->args[1], 2);
			for (i = 0; i < 3; i++)
				check_scalar_operand(c, "BETWEEN", e->args[i]);
			if (e->args[1]->kind == DYN_EXPR_VALUE && e->args[2]->kind == DYN_EXPR_VALUE &&
				e->args[1]->value && e->args[2]->value)
			{
				DynValue   *lo = e->args[1]->value;
				DynValue   *hi = e->args[2]->value;
				StringInfoData buf;

				initStringInfo(&buf);
				appendStringInfoString(&buf, "lower bound operand: ");
				DynAppendBoundForMessage(&buf, lo);
				appendStringInfoString(&buf, ", upper bound operand: ");
				DynAppendBoundForMessage(&buf, hi);
				if (lo->type != hi->type)
					DynExprRaise(c->kind, "The BETWEEN operator requires same data type for lower and upper bounds; %s",
								 buf.data);
				if (DynScalarCompare(lo, hi) > 0)
					DynExprRaise(c->kind, "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; %s",
								 buf.data);
			}
			return;
		case DYN_EXPR_IN:
			for (i = 0; i < e->nargs; i++)
				pass3(c, e->args[i]);
			if (e->nargs - 1 > DYN_MAX_IN_OPERANDS)
				DynExprRaise(c->kind, "The IN operator is provided with too many operands; number of operands: %d",
							 e->nargs - 1);
			check_distinct(c, "IN", e->args[0], &e->args[1], e->nargs - 1);
			return;
		case DYN_EXPR_FUNC:
			if (c->update)
				check_arity(c, e);
			for (i = 0; i < e->nargs; i++)
				pass3(c, e->args[i]);
			/* attribute_type's first operand may be a value (DynamoDB accepts it) */
			if ((e->func == DYN_FN_ATTRIBUTE_EXISTS || e->func == DYN_FN_ATTRIBUTE_NOT_EXISTS ||
				 e->func == DYN_FN_IF_NOT_EXISTS) &&
				e->args[0]->kind != DYN_EXPR_PATH)
				DynExprRaise(c->kind, "Operator or function requires a document path; operator or function: %s",
							 DynFuncName(e->func));
			if (e->func != DYN_FN_SIZE && e->func != DYN_FN_LIST_APPEND)
				check_distinct(c, DynFuncName(e->func), e->args[0], &e->args[1], e->nargs - 1);
			switch (e->func)
			{
				case DYN_FN_SIZE:
					if (static_type(e->args[0], &t) && t != DYN_S && t != DYN_B &&
						t != DYN_SS && t != DYN_NS && t != DYN_BS && t != DYN_L && t != DYN_M)
						type_error(c, "size", DynTypeName(t));
					break;
				case DYN_FN_BEGINS_WITH:
					for (i = 0; i < e->nargs; i++)
						if (static_type(e->args[i], &t) && t != DYN_S && t != DYN_B)
							type_error(c, "begins_with", DynTypeName(t));
					break;
				case DYN_FN_ATTRIBUTE_TYPE:
					{
						DynExpr    *second = e->args[1];
						DynType		tt;

						if (second->kind != DYN_EXPR_VALUE)
							type_error(c, "attribute_type",
									   second->kind == DYN_EXPR_FUNC && second->func == DYN_FN_SIZE ? "N" : ANY_TYPE_SET);
						if (second->value->type != DYN_S)
							type_error(c, "attribute_type", DynTypeName(second->value->type));
						if (!DynTypeFromName(second->value->u.str.data, second->value->u.str.len, &tt))
							DynExprRaise(c->kind, "Invalid attribute type name found; type: %.*s, valid types: %s",
										 second->value->u.str.len, second->value->u.str.data, TYPE_NAME_SET);
					}
					break;
				case DYN_FN_LIST_APPEND:
					for (i = 0; i < e->nargs; i++)
						if (static_type(e->args[i], &t) && t != DYN_L)
							type_error(c, "list_append", DynTypeName(t));
					break;
				default:
					break;
			}
			return;
		case DYN_EXPR_ARITH:
			pass3(c, e->args[0]);
			pass3(c, e->args[1]);
			for (i = 0; i < 2; i++)
				if (static_type(e->args[i], &t) && t != DYN_N)
					type_error(c, e->subtract ? "-" : "+", DynTypeName(t));
			return;
		default:
			for (i = 0; i < e->nargs; i++)
				pass3(c, e->args[i]);
			return;
	}
}

/* ---- overlapping paths ---- */

/*
 * Two paths of one update or projection may not be the same or one inside
 * the other (overlap), nor use one step as a map key and a list index
 * (conflict).  The earlier path is "path one".
 */
static void
check_overlaps(Checker *c, DynExpr **paths, int n)
{
	int			i,
				j;

	for (j = 1; j < n; j++)
	{
		for (i = 0; i < j; i++)
		{
			DynExpr    *a = paths[i];
			DynExpr    *b = paths[j];
			int			k;
			int			m = Min(a->npath, b->npath);
			const char *what = NULL;

			for (k = 0; k < m; k++)
			{
				DynPathElem *x = &a->path[k];
				DynPathElem *y = &b->path[k];

				if (x->is_index != y->is_index)
				{
					what = "conflict";
					break;
				}
				if (x->is_index ? x->index != y->index :
					(x->namelen != y->namelen || memcmp(x->name, y->name, x->namelen) != 0))
					break;
			}
			if (what == NULL && k == m)
				what = "overlap";
			if (what)
			{
				StringInfoData one,
							two;

				initStringInfo(&one);
				initStringInfo(&two);
				DynPathAppendForMessage(&one, a);
				DynPathAppendForMessage(&two, b);
				DynExprRaise(c->kind, "Two document paths %s with each other; must remove or rewrite one of these paths; path one: %s, path two: %s",
							 what, one.data, two.data);
			}
		}
	}
}

/* ---- operator count ---- */

/* The number of operators and functions in an expression. */
static int
count_operators(DynExpr *e)
{
	int			n = 0;
	int			i;

	check_stack_depth();
	switch (e->kind)
	{
		case DYN_EXPR_CMP:
		case DYN_EXPR_BETWEEN:
		case DYN_EXPR_IN:
		case DYN_EXPR_AND:
		case DYN_EXPR_OR:
		case DYN_EXPR_NOT:
		case DYN_EXPR_FUNC:
		case DYN_EXPR_ARITH:
			n = 1;
			break;
		default:
			break;
	}
	for (i = 0; i < e->nargs; i++)
		n += count_operators(e->args[i]);
	for (i = 0; i < e->nactions; i++)
	{
		if (e->actions[i].value)
			n += count_operators(e->actions[i].value);
	}
	return n;
}

/* Common front: empty, size, parse, operator count. */
static DynExpr *
parse_common(Checker *c, DynParseMode mode, const char *text, int len)
{
	DynExpr    *e;
	int			ops;

	if (text == NULL || len == 0)
		DynExprRaise(c->kind, "The expression can not be empty;");
	if (len > DYN_MAX_EXPR_SIZE)
		DynExprRaise(c->kind, "Expression size has exceeded the maximum allowed size; expression size: %d", len);
	e = DynExprParseText(c->kind, mode, text, len);
	ops = count_operators(e);
	if (ops > DYN_MAX_EXPR_OPERATORS)
		DynExprRaise(c->kind, "The expression contains too many operators; operator count: %d", ops);
	return e;
}

/* A context with no names and values (when the caller has none). */
static DynExprContext *
empty_context(DynExprContext *ctx)
{
	return ctx ? ctx : palloc0(sizeof(DynExprContext));
}

/* Parse and check a ConditionExpression, FilterExpression or KeyConditionExpression. */
DynExpr *
DynParseCondition(DynExprContext *ctx, const char *kind, const char *text, int len)
{
	Checker		c;
	DynExpr    *e;

	c.ctx = empty_context(ctx);
	c.kind = kind;
	c.update = false;
	e = parse_common(&c, DYN_PARSE_CONDITION, text, len);
	pass1(&c, e, PLACE_CONDITION);
	pass3(&c, e);
	return e;
}

/* Parse and check an UpdateExpression. */
DynExpr *
DynParseUpdate(DynExprContext *ctx, const char *text, int len)
{
	Checker		c;
	DynExpr    *e;
	DynExpr   **paths;
	int			i,
				s;
	static const char *const section_names[] = {"SET", "REMOVE", "ADD", "DELETE"};
	int			first_clause[4] = {-1, -1, -1, -1};
	int			section_order[4];
	int			nsections = 0;

	c.ctx = empty_context(ctx);
	c.kind = "UpdateExpression";
	c.update = true;
	e = parse_common(&c, DYN_PARSE_UPDATE, text, len);

	/* sections in the order they first appear */
	for (i = 0; i < e->nactions; i++)
	{
		int			op = e->actions[i].op;

		if (first_clause[op] < 0)
		{
			first_clause[op] = e->actions[i].clause;
			section_order[nsections++] = op;
		}
	}
	for (s = 0; s < nsections; s++)
	{
		int			op = section_order[s];
		int			nclauses = 0;
		int			last_clause = -1;

		for (i = 0; i < e->nactions; i++)
		{
			DynUpdateAction *a = &e->actions[i];

			if ((int) a->op != op)
				continue;
			if (a->clause != last_clause)
			{
				nclauses++;
				last_clause = a->clause;
			}
			pass1(&c, a->path, PLACE_OPERAND);
			if (a->value)
				pass1(&c, a->value, PLACE_OPERAND);
		}
		if (nclauses > 1)
			DynExprRaise(c.kind, "The \"%s\" section can only be used once in an update expression;",
						 section_names[op]);
	}

	/* the written paths' #names, then overlapping paths */
	paths = palloc(sizeof(DynExpr *) * e->nactions);
	for (i = 0; i < e->nactions; i++)
	{
		resolve_path_names(&c, e->actions[i].path);
		paths[i] = e->actions[i].path;
	}
	check_overlaps(&c, paths, e->nactions);

	/* from the last action back to the first: names, then values and types */
	for (i = e->nactions - 1; i >= 0; i--)
	{
		names_only(&c, e->actions[i].path);
		if (e->actions[i].value)
			names_only(&c, e->actions[i].value);
	}
	for (i = e->nactions - 1; i >= 0; i--)
	{
		DynUpdateAction *a = &e->actions[i];
		DynType		t;

		pass3(&c, a->path);
		if (a->value)
			pass3(&c, a->value);
		if ((a->op == DYN_UPD_ADD || a->op == DYN_UPD_DELETE) && static_type(a->value, &t))
		{
			bool		ok = (t == DYN_SS || t == DYN_NS || t == DYN_BS ||
							  (a->op == DYN_UPD_ADD && t == DYN_N));

			if (!ok)
				DynExprRaise(c.kind, "Incorrect operand type for operator or function; operator: %s, operand type: %s, typeSet: ALLOWED_FOR_%s_OPERAND",
							 section_names[a->op], DynLongTypeName(t), section_names[a->op]);
		}
	}
	return e;
}

/* Parse and check a ProjectionExpression. */
DynExpr *
DynParseProjection(DynExprContext *ctx, const char *text, int len)
{
	Checker		c;
	DynExpr    *e;
	int			i;

	c.ctx = empty_context(ctx);
	c.kind = "ProjectionExpression";
	c.update = false;
	e = parse_common(&c, DYN_PARSE_PROJECTION, text, len);
	for (i = 0; i < e->nargs; i++)
		pass1(&c, e->args[i], PLACE_OPERAND);
	for (i = 0; i < e->nargs; i++)
		pass3(&c, e->args[i]);
	check_overlaps(&c, e->args, e->nargs);
	return e;
}

/* The kind name an expression was parsed as. */
const char *
DynExprKindName(DynExpr *expr)
{
	return expr && expr->exprkind ? expr->exprkind : "Expression";
}
