/*
 * expr_sql.c — SQL-callable entry points of the expression language:
 * dynindex.eval_condition, dynindex.apply_update, dynindex.project, and the
 * in-process fuzz harness dynindex._fuzz_expressions.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "common/errors.h"
#include "expr/expr_int.h"

PG_FUNCTION_INFO_V1(dynindex_eval_condition);
PG_FUNCTION_INFO_V1(dynindex_apply_update);
PG_FUNCTION_INFO_V1(dynindex_project);
PG_FUNCTION_INFO_V1(dynindex_fuzz_expressions);

/* A jsonb argument as a JsonbValue (NULL when the argument is NULL). */
static JsonbValue *
jsonb_arg(FunctionCallInfo fcinfo, int argno)
{
	Jsonb	   *jb;
	JsonbValue *jv;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return NULL;
	jb = PG_GETARG_JSONB_P(argno);
	jv = palloc0(sizeof(JsonbValue));
	jv->type = jbvBinary;
	jv->val.binary.data = &jb->root;
	jv->val.binary.len = VARSIZE(jb) - VARHDRSZ;
	return jv;
}

/* Parse an item argument (typed JSON); NULL when the argument is NULL. */
static DynValue *
item_arg(FunctionCallInfo fcinfo, int argno)
{
	JsonbValue *jv = jsonb_arg(fcinfo, argno);
	const char *err = NULL;
	DynValue   *item;

	if (jv == NULL)
		return NULL;
	item = DynItemFromJsonb(jv, &err);
	if (item == NULL)
		DynValidationError("%s", err ? err : "The item is not a map of attribute values");
	return item;
}

/* dynindex.eval_condition(expression, item, names, vals) RETURNS boolean */
Datum
dynindex_eval_condition(PG_FUNCTION_ARGS)
{
	text	   *expr;
	DynExprContext *ctx;
	DynExpr    *cond;
	DynValue   *item;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	expr = PG_GETARG_TEXT_PP(0);
	ctx = DynExprContextCreate(jsonb_arg(fcinfo, 2), jsonb_arg(fcinfo, 3));
	cond = DynParseCondition(ctx, "ConditionExpression", VARDATA_ANY(expr), VARSIZE_ANY_EXHDR(expr));
	DynExprCheckUnused(ctx);
	item = item_arg(fcinfo, 1);
	PG_RETURN_BOOL(DynEvalCondition(cond, item));
}

/* dynindex.apply_update(expression, item, names, vals) RETURNS jsonb */
Datum
dynindex_apply_update(PG_FUNCTION_ARGS)
{
	text	   *expr;
	DynExprContext *ctx;
	DynExpr    *upd;
	DynValue   *item;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	expr = PG_GETARG_TEXT_PP(0);
	ctx = DynExprContextCreate(jsonb_arg(fcinfo, 2), jsonb_arg(fcinfo, 3));
	upd = DynParseUpdate(ctx, VARDATA_ANY(expr), VARSIZE_ANY_EXHDR(expr));
	DynExprCheckUnused(ctx);
	item = item_arg(fcinfo, 1);
	PG_RETURN_JSONB_P(DynItemToJsonb(DynApplyUpdate(upd, item)));
}

/* dynindex.project(expression, item, names) RETURNS jsonb */
Datum
dynindex_project(PG_FUNCTION_ARGS)
{
	text	   *expr;
	DynExprContext *ctx;
	DynExpr    *proj;
	DynValue   *item;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	expr = PG_GETARG_TEXT_PP(0);
	ctx = DynExprContextCreate(jsonb_arg(fcinfo, 2), NULL);
	proj = DynParseProjection(ctx, VARDATA_ANY(expr), VARSIZE_ANY_EXHDR(expr));
	DynExprCheckUnused(ctx);
	item = item_arg(fcinfo, 1);
	if (item == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(DynItemToJsonb(DynApplyProjection(proj, item)));
}

/* ---- fuzzing ---- */

typedef struct Rng
{
	uint64		s;
} Rng;

/* xorshift64* */
static uint64
rng_next(Rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * UINT64CONST(2685821657736338717);
}

/* A random integer in [0, n). */
static int
rnd(Rng *r, int n)
{
	return n <= 0 ? 0 : (int) (rng_next(r) % (uint64) n);
}

static const char *const fz_names[] = {"a", "b", "c", "pk", "list", "map", "#n0", "#n1", "#n2", "x_1", "size", "#bad", "name", "Year"};
static const char *const fz_values[] = {":s", ":n", ":b", ":ss", ":ns", ":l", ":m", ":t", ":z", ":bool", ":bs", ":neg", ":missing"};
static const char *const fz_funcs[] = {"attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains", "size", "if_not_exists", "list_append", "foo"};
static const char *const fz_cmps[] = {"=", "<>", "<", "<=", ">", ">="};
static const char *const fz_junk[] = {"(", ")", "[", "]", ",", ".", "=", "<", ">", "+", "-", "AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE", "#", ":", "0", "99999999999", "\"", "\xc3\xa9", "_x", " ", "\t", "\xff"};

/* Append a random document path. */
static void
fz_path(Rng *r, StringInfo b)
{
	int			steps = rnd(r, 4);

	appendStringInfoString(b, fz_names[rnd(r, rnd(r, 8) ? 11 : lengthof(fz_names))]);
	while (steps-- > 0)
	{
		if (rnd(r, 2))
			appendStringInfo(b, "[%d]", rnd(r, 5) == 0 ? rnd(r, 100000) : rnd(r, 3));
		else
			appendStringInfo(b, ".%s", fz_names[rnd(r, rnd(r, 8) ? 11 : lengthof(fz_names))]);
	}
}

/* Append a random operand. */
static void
fz_operand(Rng *r, StringInfo b, int depth)
{
	switch (rnd(r, depth > 3 ? 2 : 5))
	{
		case 0:
			fz_path(r, b);
			break;
		case 1:
			appendStringInfoString(b, fz_values[rnd(r, rnd(r, 8) ? 12 : lengthof(fz_values))]);
			break;
		case 2:
			appendStringInfoString(b, "size(");
			fz_path(r, b);
			appendStringInfoChar(b, ')');
			break;
		case 3:
			appendStringInfo(b, "%s(", fz_funcs[rnd(r, lengthof(fz_funcs))]);
			fz_operand(r, b, depth + 1);
			if (rnd(r, 4))
			{
				appendStringInfoString(b, ", ");
				fz_operand(r, b, depth + 1);
			}
			appendStringInfoChar(b, ')');
			break;
		default:
			appendStringInfoChar(b, '(');
			fz_operand(r, b, depth + 1);
			appendStringInfoChar(b, ')');
			break;
	}
}

/* Append a random condition. */
static void
fz_condition(Rng *r, StringInfo b, int depth)
{
	int			i,
				n;

	switch (rnd(r, depth > 6 ? 4 : 8))
	{
		case 0:
			fz_operand(r, b, depth);
			appendStringInfo(b, " %s ", fz_cmps[rnd(r, lengthof(fz_cmps))]);
			fz_operand(r, b, depth);
			break;
		case 1:
			fz_operand(r, b, depth);
			appendStringInfoString(b, " BETWEEN ");
			fz_operand(r, b, depth);
			appendStringInfoString(b, " AND ");
			fz_operand(r, b, depth);
			break;
		case 2:
			fz_operand(r, b, depth);
			appendStringInfoString(b, " IN (");
			n = 1 + rnd(r, rnd(r, 10) == 0 ? 120 : 4);
			for (i = 0; i < n; i++)
			{
				if (i)
					appendStringInfoChar(b, ',');
				fz_operand(r, b, depth + 1);
			}
			appendStringInfoChar(b, ')');
			break;
		case 3:
			appendStringInfo(b, "%s(", fz_funcs[rnd(r, 5)]);
			fz_operand(r, b, depth + 1);
			if (rnd(r, 5))
			{
				appendStringInfoChar(b, ',');
				fz_operand(r, b, depth + 1);
			}
			appendStringInfoChar(b, ')');
			break;
		case 4:
		case 5:
			fz_condition(r, b, depth + 1);
			appendStringInfoString(b, rnd(r, 2) ? " AND " : " or ");
			fz_condition(r, b, depth + 1);
			break;
		case 6:
			appendStringInfoString(b, "NOT ");
			fz_condition(r, b, depth + 1);
			break;
		default:
			appendStringInfoChar(b, '(');
			fz_condition(r, b, depth + 1);
			appendStringInfoChar(b, ')');
			break;
	}
}

/* Append a random update expression. */
static void
fz_update(Rng *r, StringInfo b)
{
	int			clauses = 1 + rnd(r, 3);

	while (clauses-- > 0)
	{
		int			kw = rnd(r, 4);
		int			n = 1 + rnd(r, 3);

		appendStringInfoString(b, kw == 0 ? "SET " : kw == 1 ? "REMOVE " : kw == 2 ? "ADD " : "DELETE ");
		while (n-- > 0)
		{
			fz_path(r, b);
			if (kw == 0)
			{
				appendStringInfoString(b, " = ");
				fz_operand(r, b, 1);
				if (rnd(r, 3) == 0)
				{
					appendStringInfoString(b, rnd(r, 2) ? " + " : " - ");
					fz_operand(r, b, 1);
				}
			}
			else if (kw >= 2)
				appendStringInfo(b, " %s", fz_values[rnd(r, rnd(r, 8) ? 12 : lengthof(fz_values))]);
			if (n > 0)
				appendStringInfoString(b, ", ");
		}
		appendStringInfoChar(b, ' ');
	}
}

/* Mutate an expression: delete, duplicate or insert junk at random places. */
static void
fz_mutate(Rng *r, StringInfo b)
{
	int			k = 1 + rnd(r, 4);

	while (k-- > 0 && b->len > 0)
	{
		int			pos = rnd(r, b->len);
		StringInfoData o;

		initStringInfo(&o);
		appendBinaryStringInfo(&o, b->data, pos);
		switch (rnd(r, 3))
		{
			case 0:				/* delete a few bytes */
				pos += 1 + rnd(r, 3);
				break;
			case 1:				/* insert junk */
				appendStringInfoString(&o, fz_junk[rnd(r, lengthof(fz_junk))]);
				break;
			default:			/* repeat a prefix */
				appendBinaryStringInfo(&o, b->data, Min(pos, 64));
				break;
		}
		if (pos < b->len)
			appendBinaryStringInfo(&o, b->data + pos, b->len - pos);
		resetStringInfo(b);
		appendBinaryStringInfo(b, o.data, o.len);
		pfree(o.data);
	}
}

/* A jsonb value parsed from JSON text (as a JsonbValue over its container). */
static JsonbValue *
fz_json(const char *json)
{
	Jsonb	   *jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	JsonbValue *jv = palloc0(sizeof(JsonbValue));

	jv->type = jbvBinary;
	jv->val.binary.data = &jb->root;
	jv->val.binary.len = VARSIZE(jb) - VARHDRSZ;
	return jv;
}

static const char *const fz_items[] = {
	"{}",
	"{\"a\":{\"S\":\"abc\"},\"b\":{\"N\":\"5\"},\"c\":{\"B\":\"AAEC\"}}",
	"{\"a\":{\"N\":\"1\"},\"list\":{\"L\":[{\"S\":\"x\"},{\"N\":\"2\"},{\"M\":{\"a\":{\"S\":\"y\"}}}]},\"map\":{\"M\":{\"a\":{\"L\":[]},\"b\":{\"NULL\":true}}}}",
	"{\"a\":{\"SS\":[\"x\",\"y\"]},\"b\":{\"NS\":[\"1\",\"2\"]},\"c\":{\"BS\":[\"AA==\"]},\"name\":{\"BOOL\":false}}",
	"{\"pk\":{\"S\":\"k\"},\"a\":{\"M\":{\"b\":{\"M\":{\"c\":{\"N\":\"9.9999999999999999999999999999999999999E+125\"}}}}},\"b\":{\"N\":\"-1E-130\"}}"
};

/* dynindex._fuzz_expressions(seed int, iterations int) RETURNS bigint: inputs evaluated */
Datum
dynindex_fuzz_expressions(PG_FUNCTION_ARGS)
{
	Rng			r;
	int			iterations = PG_GETARG_INT32(1);
	volatile int64 evaluated = 0;
	int			it;
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext work = AllocSetContextCreate(CurrentMemoryContext, "dynindex fuzz",
											   ALLOCSET_DEFAULT_SIZES);
	const char *names_json = "{\"#n0\":\"a\",\"#n1\":\"list\",\"#n2\":\"size\"}";
	const char *values_json = "{\":s\":{\"S\":\"ab\"},\":n\":{\"N\":\"1\"},\":b\":{\"B\":\"AA==\"},"
		"\":ss\":{\"SS\":[\"x\"]},\":ns\":{\"NS\":[\"1\",\"3\"]},\":l\":{\"L\":[{\"S\":\"q\"}]},"
		"\":m\":{\"M\":{\"a\":{\"S\":\"x\"}}},\":t\":{\"S\":\"SS\"},\":z\":{\"S\":\"\"},"
		"\":bool\":{\"BOOL\":true},\":bs\":{\"BS\":[\"AA==\"]},\":neg\":{\"N\":\"-9.9999999999999999999999999999999999999E+125\"}}";

	r.s = (uint64) PG_GETARG_INT32(0) * UINT64CONST(0x9E3779B97F4A7C15) + 1;
	for (it = 0; it < iterations; it++)
	{
		StringInfoData b;
		volatile int mode = rnd(&r, 3);
		uint64		before = r.s;

		CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(work);
		initStringInfo(&b);
		if (rnd(&r, 50) == 0)
		{
			/* deep nesting and long inputs */
			int			depth = rnd(&r, 3000);
			int			i;

			for (i = 0; i < depth; i++)
				appendStringInfoString(&b, rnd(&r, 2) ? "(" : "NOT ");
			appendStringInfoString(&b, "a = :n");
			for (i = 0; i < depth; i++)
				appendStringInfoChar(&b, ')');
			mode = 0;
		}
		else if (mode == 0)
			fz_condition(&r, &b, 0);
		else if (mode == 1)
			fz_update(&r, &b);
		else
		{
			int			n = 1 + rnd(&r, 4);

			while (n-- > 0)
			{
				fz_path(&r, &b);
				if (n)
					appendStringInfoChar(&b, ',');
			}
		}
		if (rnd(&r, 5) == 0)
			fz_mutate(&r, &b);

		PG_TRY();
		{
			DynExprContext *ctx = DynExprContextCreate(rnd(&r, 16) ? fz_json(names_json) : NULL,
													   rnd(&r, 16) ? fz_json(values_json) : NULL);
			const char *err = NULL;
			DynValue   *item = DynItemFromJsonb(fz_json(fz_items[rnd(&r, lengthof(fz_items))]), &err);
			DynExpr    *e;

			if (item == NULL)
				elog(ERROR, "fuzz item invalid: %s", err ? err : "?");
			if (mode == 0)
			{
				e = DynParseCondition(ctx, "ConditionExpression", b.data, b.len);
				(void) DynEvalCondition(e, item);
				(void) DynEvalCondition(e, NULL);
			}
			else if (mode == 1)
			{
				e = DynParseUpdate(ctx, b.data, b.len);
				(void) DynItemToJsonb(DynApplyUpdate(e, item));
				(void) DynItemToJsonb(DynUpdatedAttributes(e, item));
			}
			else
			{
				e = DynParseProjection(ctx, b.data, b.len);
				(void) DynItemToJsonb(DynApplyProjection(e, item));
			}
			evaluated++;
			DynExprCheckUnused(ctx);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(work);
			edata = CopyErrorData();
			FlushErrorState();
			if (edata->sqlerrcode != MAKE_SQLSTATE('Y', 'D', '0', '0', '1'))
			{
				MemoryContextSwitchTo(oldcxt);
				ereport(ERROR,
						(errmsg("fuzz: unexpected error on input %d (rng state " UINT64_FORMAT "): %s",
								it, before, edata->message),
						 errdetail_internal("expression: %s", b.data)));
			}
		}
		PG_END_TRY();
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(work);
	}
	MemoryContextDelete(work);
	PG_RETURN_INT64(evaluated);
}
