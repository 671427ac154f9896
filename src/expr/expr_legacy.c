/*
 * expr_legacy.c — DynamoDB's non-expression ("legacy") parameters translated
 * onto the expression AST: Expected + ConditionalOperator, QueryFilter,
 * ScanFilter, KeyConditions, AttributeUpdates, AttributesToGet; and the
 * check that a request does not mix them with expressions.
 */
#include "postgres.h"

#include "common/errors.h"
#include "expr/expr_int.h"

/* The legacy comparison operators. */
typedef enum LegacyOp
{
	L_EQ, L_NE, L_LE, L_LT, L_GE, L_GT, L_NOT_NULL, L_NULL, L_CONTAINS,
	L_NOT_CONTAINS, L_BEGINS_WITH, L_IN, L_BETWEEN, L_INVALID
} LegacyOp;

static const char *const legacy_op_names[] = {
	"EQ", "NE", "LE", "LT", "GE", "GT", "NOT_NULL", "NULL", "CONTAINS",
	"NOT_CONTAINS", "BEGINS_WITH", "IN", "BETWEEN"
};

/* The operator named by a JSON string value. */
static LegacyOp
legacy_op(JsonbValue *jv)
{
	int			i;

	if (jv == NULL || jv->type != jbvString)
		return L_INVALID;
	for (i = 0; i < lengthof(legacy_op_names); i++)
		if (strlen(legacy_op_names[i]) == (size_t) jv->val.string.len &&
			memcmp(legacy_op_names[i], jv->val.string.val, jv->val.string.len) == 0)
			return (LegacyOp) i;
	return L_INVALID;
}

/* A member of a JSON object value (NULL when absent or JSON null). */
static JsonbValue *
member(JsonbValue *obj, const char *name)
{
	char	  **keys;
	int		   *lens;
	JsonbValue *vals;
	int			n = DynJsonObjectMembers(obj, &keys, &lens, &vals);
	int			i;

	for (i = 0; i < n; i++)
		if (lens[i] == (int) strlen(name) && memcmp(keys[i], name, lens[i]) == 0)
			return vals[i].type == jbvNull ? NULL : &vals[i];
	return NULL;
}

/* Parse one AttributeValue, raising DynamoDB's message. */
static DynValue *
parse_value(JsonbValue *jv)
{
	const char *err = NULL;
	DynValue   *v = DynValueFromJsonb(jv, &err);

	if (v == NULL)
		DynValidationError("%s", err ? err : "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes");
	return v;
}

/* Whether type t is allowed as an argument of op. */
static bool
type_allowed(LegacyOp op, DynType t)
{
	bool		scalar = (t == DYN_S || t == DYN_N || t == DYN_B);

	switch (op)
	{
		case L_EQ:
		case L_NE:
			/* "EQ is supported for all data types, including lists and maps" */
			return true;
		case L_BEGINS_WITH:
			return t == DYN_S || t == DYN_B;
		default:
			return scalar;
	}
}

/* Check the argument list of a legacy condition (counts, types, BETWEEN order). */
static void
check_arguments(LegacyOp op, DynValue **args, int nargs)
{
	int			i;
	bool		ok;

	switch (op)
	{
		case L_NOT_NULL:
		case L_NULL:
			ok = (nargs == 0);
			break;
		case L_IN:
			ok = (nargs > 0);
			break;
		case L_BETWEEN:
			ok = (nargs == 2);
			break;
		default:
			ok = (nargs == 1);
			break;
	}
	if (!ok)
		DynValidationError("One or more parameter values were invalid: Invalid number of argument(s) for the %s ComparisonOperator",
						   legacy_op_names[op]);
	for (i = 1; i < nargs; i++)
		if (args[i]->type != args[0]->type)
			DynValidationError("One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type");
	for (i = 0; i < nargs; i++)
		if (!type_allowed(op, args[i]->type))
			DynValidationError("One or more parameter values were invalid: ComparisonOperator %s is not valid for %s AttributeValue type",
							   legacy_op_names[op], DynTypeName(args[i]->type));
	if (op == L_BETWEEN && DynScalarCompare(args[0], args[1]) > 0)
		DynValidationError("The BETWEEN condition was provided a range where the lower bound is greater than the upper bound");
}

/* A two-operand node. */
static DynExpr *
binary(DynExprKind kind, DynExpr *a, DynExpr *b)
{
	DynExpr    *e = DynExprMakeNode(kind, 2);

	e->args[0] = a;
	e->args[1] = b;
	return e;
}

/* A function node. */
static DynExpr *
func(DynFunc f, DynExpr *a, DynExpr *b)
{
	DynExpr    *e = DynExprMakeNode(DYN_EXPR_FUNC, b ? 2 : 1);

	e->func = f;
	e->fname = DynFuncName(f);
	e->fnamelen = strlen(e->fname);
	e->args[0] = a;
	if (b)
		e->args[1] = b;
	return e;
}

/* The condition node of one legacy comparison on attribute name. */
static DynExpr *
build_condition(const char *name, int namelen, LegacyOp op, DynValue **args, int nargs)
{
	DynExpr    *path = DynExprMakePath(name, namelen);
	DynExpr    *e;
	int			i;

	switch (op)
	{
		case L_NOT_NULL:
			return func(DYN_FN_ATTRIBUTE_EXISTS, path, NULL);
		case L_NULL:
			return func(DYN_FN_ATTRIBUTE_NOT_EXISTS, path, NULL);
		case L_CONTAINS:
			return func(DYN_FN_CONTAINS, path, DynExprMakeConst(args[0]));
		case L_NOT_CONTAINS:
			return func(DYN_FN_NOT_CONTAINS, path, DynExprMakeConst(args[0]));
		case L_BEGINS_WITH:
			return func(DYN_FN_BEGINS_WITH, path, DynExprMakeConst(args[0]));
		case L_IN:
			e = DynExprMakeNode(DYN_EXPR_IN, nargs + 1);
			e->args[0] = path;
			for (i = 0; i < nargs; i++)
				e->args[i + 1] = DynExprMakeConst(args[i]);
			return e;
		case L_BETWEEN:
			e = DynExprMakeNode(DYN_EXPR_BETWEEN, 3);
			e->args[0] = path;
			e->args[1] = DynExprMakeConst(args[0]);
			e->args[2] = DynExprMakeConst(args[1]);
			return e;
		default:
			e = binary(DYN_EXPR_CMP, path, DynExprMakeConst(args[0]));
			e->cmp = op == L_EQ ? DYN_CMP_EQ : op == L_NE ? DYN_CMP_NE :
				op == L_LE ? DYN_CMP_LE : op == L_LT ? DYN_CMP_LT :
				op == L_GE ? DYN_CMP_GE : DYN_CMP_GT;
			return e;
	}
}

/* Combine conditions with AND or OR (NULL when there are none). */
static DynExpr *
combine(DynExpr *acc, DynExpr *next, bool use_or)
{
	if (acc == NULL)
		return next;
	return binary(use_or ? DYN_EXPR_OR : DYN_EXPR_AND, acc, next);
}

/* The parsed AttributeValueList of a condition. */
static int
value_list(JsonbValue *list, DynValue ***out)
{
	JsonbValue *elems;
	int			n = list ? DynJsonArrayElements(list, &elems) : 0;
	int			i;

	if (n < 0)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	*out = palloc(sizeof(DynValue *) * Max(n, 1));
	for (i = 0; i < n; i++)
		(*out)[i] = parse_value(&elems[i]);
	return n;
}

/* Whether ConditionalOperator says OR. */
static bool
is_or(const char *conditional_operator)
{
	return conditional_operator != NULL && strcmp(conditional_operator, "OR") == 0;
}

/* ConditionalOperator without a condition map of two or more entries. */
void
DynLegacyCheckConditionalOperator(JsonbValue *conditional_operator, JsonbValue *conditions)
{
	char	  **keys;
	int		   *lens;
	JsonbValue *vals;
	int			n;

	if (conditional_operator == NULL)
		return;
	n = conditions ? DynJsonObjectMembers(conditions, &keys, &lens, &vals) : 0;
	if (n < 0)
		return;					/* not a map: reported when it is parsed */
	if (n == 0)
		DynValidationError("ConditionalOperator cannot be used without Filter or Expected");
	if (n == 1)
		DynValidationError("ConditionalOperator can only be used when Filter or Expected has two or more elements");
}

/* Expected (+ ConditionalOperator) as a condition. */
DynExpr *
DynLegacyExpected(JsonbValue *expected, const char *conditional_operator)
{
	char	  **keys;
	int		   *lens;
	JsonbValue *vals;
	int			n = DynJsonObjectMembers(expected, &keys, &lens, &vals);
	DynExpr    *acc = NULL;
	int			i;

	if (n < 0)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	for (i = 0; i < n; i++)
	{
		JsonbValue *cond = &vals[i];
		JsonbValue *value = member(cond, "Value");
		JsonbValue *list = member(cond, "AttributeValueList");
		JsonbValue *opjv = member(cond, "ComparisonOperator");
		JsonbValue *exists = member(cond, "Exists");
		DynExpr    *e;

		if (list && value)
			DynValidationError("One or more parameter values were invalid: Value and AttributeValueList cannot be used together for Attribute: %.*s",
							   lens[i], keys[i]);
		if (opjv)
		{
			LegacyOp	op = legacy_op(opjv);
			DynValue  **args;
			int			nargs;

			if (exists)
				DynValidationError("One or more parameter values were invalid: Exists and ComparisonOperator cannot be used together for Attribute: %.*s",
								   lens[i], keys[i]);
			if (op == L_INVALID)
				DynValidationError("1 validation error detected: Value '%.*s' at 'expected.%.*s.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]",
								   opjv->type == jbvString ? opjv->val.string.len : 0,
								   opjv->type == jbvString ? opjv->val.string.val : "",
								   lens[i], keys[i]);
			if (op != L_NULL && op != L_NOT_NULL && !list && !value)
				DynValidationError("One or more parameter values were invalid: Value or AttributeValueList must be used with ComparisonOperator: %s for Attribute: %.*s",
								   legacy_op_names[op], lens[i], keys[i]);
			if (value)
			{
				args = palloc(sizeof(DynValue *));
				args[0] = parse_value(value);
				nargs = 1;
			}
			else
				nargs = value_list(list, &args);
			check_arguments(op, args, nargs);
			e = build_condition(keys[i], lens[i], op, args, nargs);
		}
		else if (list)
			DynValidationError("One or more parameter values were invalid: AttributeValueList can only be used with a ComparisonOperator for Attribute: %.*s",
							   lens[i], keys[i]);
		else
		{
			bool		exists_given = (exists != NULL);
			bool		exists_val = !exists_given || (exists->type == jbvBool && exists->val.boolean);

			if (exists_val && value == NULL)
				DynValidationError("One or more parameter values were invalid: Value must be provided when Exists is %s for Attribute: %.*s",
								   exists_given ? "true" : "null", lens[i], keys[i]);
			if (!exists_val && value != NULL)
				DynValidationError("One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: %.*s",
								   lens[i], keys[i]);
			if (exists_val)
			{
				DynValue   *v = parse_value(value);

				e = build_condition(keys[i], lens[i], L_EQ, &v, 1);
			}
			else
				e = build_condition(keys[i], lens[i], L_NULL, NULL, 0);
		}
		acc = combine(acc, e, is_or(conditional_operator));
	}
	return acc;
}

/*
 * A map of attribute -> {ComparisonOperator, AttributeValueList} as one
 * condition, joined by AND (or OR).  path names the parameter in messages
 * ("queryFilter", "keyConditions"); key_only restricts the operators to
 * those a key condition may use.
 */
static DynExpr *
legacy_conditions(const char *path, JsonbValue *conditions, bool or, bool key_only)
{
	char	  **keys;
	int		   *lens;
	JsonbValue *vals;
	int			n = DynJsonObjectMembers(conditions, &keys, &lens, &vals);
	DynExpr    *acc = NULL;
	int			i;

	if (n < 0)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	for (i = 0; i < n; i++)
	{
		LegacyOp	op = legacy_op(member(&vals[i], "ComparisonOperator"));
		DynValue  **args;
		int			nargs = value_list(member(&vals[i], "AttributeValueList"), &args);

		if (op == L_INVALID)
			DynValidationError("1 validation error detected: Value null at '%s.%.*s.member.comparisonOperator' failed to satisfy constraint: Member must not be null",
							   path, lens[i], keys[i]);
		check_arguments(op, args, nargs);
		if (key_only && op != L_EQ && op != L_LE && op != L_LT && op != L_GE && op != L_GT &&
			op != L_BEGINS_WITH && op != L_BETWEEN)
			DynValidationError("Attempted conditional constraint is not an indexable operation");
		acc = combine(acc, build_condition(keys[i], lens[i], op, args, nargs), or);
	}
	return acc;
}

/* QueryFilter / ScanFilter as a condition. */
DynExpr *
DynLegacyFilter(const char *param, JsonbValue *conditions, const char *conditional_operator)
{
	return legacy_conditions(param[0] == 'Q' ? "queryFilter" : "scanFilter", conditions,
							 is_or(conditional_operator), false);
}

/* KeyConditions as a condition shaped like a parsed KeyConditionExpression. */
DynExpr *
DynLegacyKeyConditions(JsonbValue *conditions)
{
	return legacy_conditions("keyConditions", conditions, false, true);
}

/* AttributeUpdates as an update. */
DynExpr *
DynLegacyAttributeUpdates(JsonbValue *updates)
{
	char	  **keys;
	int		   *lens;
	JsonbValue *vals;
	int			n = DynJsonObjectMembers(updates, &keys, &lens, &vals);
	DynExpr    *u = DynExprMakeNode(DYN_EXPR_UPDATE, 0);
	int			i;

	if (n < 0)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	u->actions = palloc0(sizeof(DynUpdateAction) * Max(n, 1));
	u->nclauses = 1;
	u->exprkind = "AttributeUpdates";
	for (i = 0; i < n; i++)
	{
		JsonbValue *valuejv = member(&vals[i], "Value");
		JsonbValue *actjv = member(&vals[i], "Action");
		DynValue   *value = valuejv ? parse_value(valuejv) : NULL;
		DynUpdateAction *a = &u->actions[u->nactions++];
		const char *act = "PUT";
		int			actlen = 3;

		DynCheckAttributeNameLength(lens[i]);
		if (actjv && actjv->type == jbvString)
		{
			act = actjv->val.string.val;
			actlen = actjv->val.string.len;
		}
		if (value == NULL && !(actlen == 6 && memcmp(act, "DELETE", 6) == 0))
			DynValidationError("One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified");
		a->path = DynExprMakePath(keys[i], lens[i]);
		a->legacy = true;
		if (actlen == 6 && memcmp(act, "DELETE", 6) == 0)
		{
			if (value == NULL)
				a->op = DYN_UPD_REMOVE;
			else
			{
				if (!DynTypeIsSet(value->type))
					DynValidationError("One or more parameter values were invalid: DELETE action with value is not supported for the type %s",
									   DynTypeName(value->type));
				a->op = DYN_UPD_DELETE;
				a->value = DynExprMakeConst(value);
			}
		}
		else if (actlen == 3 && memcmp(act, "ADD", 3) == 0)
		{
			if (value->type != DYN_N && value->type != DYN_L && !DynTypeIsSet(value->type))
				DynValidationError("One or more parameter values were invalid: ADD action is not supported for the type %s",
								   DynTypeName(value->type));
			a->op = DYN_UPD_ADD;
			a->value = DynExprMakeConst(value);
		}
		else
		{
			a->op = DYN_UPD_SET;
			a->value = DynExprMakeConst(value);
		}
	}
	return u;
}

/* AttributesToGet as a projection. */
DynExpr *
DynLegacyAttributesToGet(JsonbValue *list)
{
	JsonbValue *elems;
	int			n = DynJsonArrayElements(list, &elems);
	DynExpr    *p = DynExprMakeNode(DYN_EXPR_PROJECTION, 0);
	int			i,
				k;

	if (n < 0)
		DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
	p->args = palloc(sizeof(DynExpr *) * Max(n, 1));
	p->exprkind = "AttributesToGet";
	for (i = 0; i < n; i++)
	{
		if (elems[i].type != jbvString)
			DynError(DYN_ERR_SERIALIZATION, "Unexpected field type");
		DynCheckAttributeNameLength(elems[i].val.string.len);
		for (k = 0; k < i; k++)
			if (elems[k].val.string.len == elems[i].val.string.len &&
				memcmp(elems[k].val.string.val, elems[i].val.string.val, elems[i].val.string.len) == 0)
				DynValidationError("One or more parameter values were invalid: Duplicate value in attribute name: %.*s",
								   elems[i].val.string.len, elems[i].val.string.val);
		{
			/* a name may hold U+0000, escaped in jsonb (types/nulstr.c) */
			int			nlen;
			const char *name = DynNulDecode(elems[i].val.string.val, elems[i].val.string.len, &nlen);

			p->args[p->nargs++] = DynExprMakePath(name, nlen);
		}
	}
	return p;
}

/* Reject mixing expression and non-expression parameters (DynamoDB's messages). */
void
DynExprCheckParamMix(const DynParamPresence *exprs, int nexprs,
					 const DynParamPresence *legacy, int nlegacy,
					 bool has_names, bool has_values)
{
	int			i;
	int			nexpr_present = 0;
	bool		key_conditions_only = false;
	StringInfoData e,
				l;

	initStringInfo(&e);
	initStringInfo(&l);
	for (i = 0; i < nexprs; i++)
		if (exprs[i].present)
		{
			if (nexpr_present++)
				appendStringInfoString(&e, ", ");
			appendStringInfoString(&e, exprs[i].name);
		}
	if (nexpr_present > 0)
	{
		int			nleg = 0;

		/* KeyConditions with a FilterExpression but no KeyConditionExpression is allowed */
		for (i = 0; i < nexprs; i++)
			if (strcmp(exprs[i].name, "KeyConditionExpression") == 0 && !exprs[i].present)
				key_conditions_only = true;
		for (i = 0; i < nlegacy; i++)
		{
			if (!legacy[i].present)
				continue;
			if (key_conditions_only && strcmp(legacy[i].name, "KeyConditions") == 0)
				continue;
			if (nleg++)
				appendStringInfoString(&l, ", ");
			appendStringInfoString(&l, legacy[i].name);
		}
		if (nleg > 0)
			DynValidationError("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}",
							   l.data, e.data);
	}
	if (has_names && nexpr_present == 0)
		DynValidationError("ExpressionAttributeNames can only be specified when using expressions");
	if (has_values)
	{
		int			nval = 0;
		bool		any = false;

		resetStringInfo(&e);
		for (i = 0; i < nexprs; i++)
		{
			if (strcmp(exprs[i].name, "ProjectionExpression") == 0)
				continue;
			if (nval++)
				appendStringInfoString(&e, " and ");
			appendStringInfoString(&e, exprs[i].name);
			if (exprs[i].present)
				any = true;
		}
		/* PutItem, UpdateItem and DeleteItem say it without the suffix (2026-10) */
		if (nval > 0 && !any && DynValidationEnvelope)
			DynValidationError("ExpressionAttributeValues can only be specified when using expressions");
		if (nval > 0 && !any)
			DynValidationError("ExpressionAttributeValues can only be specified when using expressions: %s %s null",
							   e.data, nval > 1 ? "are" : "is");
	}
}
