/*
 * keycond.c — KeyConditionExpression / KeyConditions analysis: DynamoDB's
 * rules for which conditions a Query may put on a key schema, and the
 * encoded byte range a valid condition selects.
 *
 * Checks run in this order, each in textual order of the conditions:
 *   1. shape of each condition (operators, functions, nested paths, operands,
 *      one condition per key) while walking the AND tree left to right;
 *   2. the number of conditions against the number of key attributes;
 *   3. per condition: operand type against the key type, partition key
 *      conditions other than =;
 *   4. missing key schema elements and, for multi-attribute RANGE keys,
 *      gaps and inequalities before the last constrained attribute.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "api/query.h"
#include "common/errors.h"
#include "expr/expr_ast.h"

/* One condition of the AND tree. */
typedef struct Leaf
{
	const char *name;
	int			namelen;
	DynKeyOp	op;
	DynValue   *v1;
	DynValue   *v2;
} Leaf;

#define MAX_LEAVES 64

typedef struct Walk
{
	Leaf		leaves[MAX_LEAVES];
	int			n;
} Walk;

/* The key schema of the table (idx NULL) or of an index. */
void
DynKeySchemaOf(DynTable *t, DynIndex *idx, DynKeySchema *ks)
{
	int			i;

	if (idx == NULL)
	{
		ks->nhash = 1;
		ks->hash[0] = t->hash;
		ks->nrange = t->has_range ? 1 : 0;
		if (t->has_range)
			ks->range[0] = t->range;
		return;
	}
	ks->nhash = idx->nhash;
	for (i = 0; i < idx->nhash; i++)
		ks->hash[i] = idx->hash[i];
	ks->nrange = idx->nrange;
	for (i = 0; i < idx->nrange; i++)
		ks->range[i] = idx->range[i];
}

/* Raise a key-condition shape error. */
static void
invalid_operator(const char *op)
{
	DynValidationError("Invalid operator used in KeyConditionExpression: %s", op);
}

/* Check one operand of a comparison; returns true if it is a path. */
static bool
check_operand(DynExpr *e)
{
	if (e->kind == DYN_EXPR_FUNC)
	{
		if (e->func == DYN_FN_SIZE)
			DynValidationError("KeyConditionExpressions cannot contain nested operations");
		invalid_operator(DynFuncName(e->func));
	}
	if (e->kind == DYN_EXPR_PATH)
	{
		if (e->npath != 1 || e->path[0].is_index)
			DynValidationError("Invalid KeyConditionExpression: KeyConditionExpressions cannot have conditions on nested attributes");
		return true;
	}
	return false;
}

/* Record a condition on the attribute path (one condition per key). */
static void
add_leaf(Walk *w, DynExpr *path, DynKeyOp op, DynExpr *a, DynExpr *b)
{
	Leaf	   *l;
	int			i;

	for (i = 0; i < w->n; i++)
		if (w->leaves[i].namelen == path->path[0].namelen &&
			memcmp(w->leaves[i].name, path->path[0].name, path->path[0].namelen) == 0)
			DynValidationError("Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key");
	if (w->n >= MAX_LEAVES)
		DynValidationError("The number of query conditions (%d) exceeds the number of key attributes defined in the schema (%d)",
						   w->n + 1, 2);
	l = &w->leaves[w->n++];
	l->name = path->path[0].name;
	l->namelen = path->path[0].namelen;
	l->op = op;
	l->v1 = a ? a->value : NULL;
	l->v2 = b ? b->value : NULL;
}

/* Walk the AND tree in textual order, checking each condition's shape. */
static void
walk(Walk *w, DynExpr *e)
{
	check_stack_depth();
	switch (e->kind)
	{
		case DYN_EXPR_AND:
			walk(w, e->args[0]);
			walk(w, e->args[1]);
			return;
		case DYN_EXPR_OR:
			walk(w, e->args[0]);
			invalid_operator("OR");
			return;
		case DYN_EXPR_NOT:
			invalid_operator("NOT");
			return;
		case DYN_EXPR_IN:
			check_operand(e->args[0]);
			invalid_operator("IN");
			return;
		case DYN_EXPR_FUNC:
			if (e->func == DYN_FN_SIZE)
				DynValidationError("KeyConditionExpressions cannot contain nested operations");
			if (e->func != DYN_FN_BEGINS_WITH)
			{
				if (e->func == DYN_FN_UNKNOWN)
					DynValidationError("Invalid KeyConditionExpression: Invalid function name; function: %.*s",
									   e->fnamelen, e->fname);
				invalid_operator(DynFuncName(e->func));
			}
			if (e->nargs != 2 || !check_operand(e->args[0]))
				DynValidationError("Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand");
			if (check_operand(e->args[1]))
				DynValidationError("Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition");
			add_leaf(w, e->args[0], DYN_KEY_BEGINS_WITH, e->args[1], NULL);
			return;
		case DYN_EXPR_BETWEEN:
			if (!check_operand(e->args[0]))
				DynValidationError("Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand");
			if (check_operand(e->args[1]) || check_operand(e->args[2]))
				DynValidationError("Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition");
			add_leaf(w, e->args[0], DYN_KEY_BETWEEN, e->args[1], e->args[2]);
			return;
		case DYN_EXPR_CMP:
			{
				bool		p0 = check_operand(e->args[0]);
				bool		p1 = check_operand(e->args[1]);
				DynKeyOp	op;

				if (e->cmp == DYN_CMP_NE)
					invalid_operator("<>");
				if (p0 && p1)
					DynValidationError("Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition");
				if (!p0 && !p1)
					DynValidationError("Invalid condition in KeyConditionExpression: No key attribute specified");
				switch (e->cmp)
				{
					case DYN_CMP_LT:
						op = p0 ? DYN_KEY_LT : DYN_KEY_GT;
						break;
					case DYN_CMP_LE:
						op = p0 ? DYN_KEY_LE : DYN_KEY_GE;
						break;
					case DYN_CMP_GT:
						op = p0 ? DYN_KEY_GT : DYN_KEY_LT;
						break;
					case DYN_CMP_GE:
						op = p0 ? DYN_KEY_GE : DYN_KEY_LE;
						break;
					default:
						op = DYN_KEY_EQ;
						break;
				}
				if (p0)
					add_leaf(w, e->args[0], op, e->args[1], NULL);
				else
					add_leaf(w, e->args[1], op, e->args[0], NULL);
				return;
			}
		default:
			DynValidationError("Invalid condition in KeyConditionExpression: No key attribute specified");
	}
}

/* Does the leaf name the key attribute? */
static bool
leaf_is(const Leaf *l, const DynKeyAttr *ka)
{
	return (int) strlen(ka->name) == l->namelen && memcmp(ka->name, l->name, l->namelen) == 0;
}

/* The leaf on a key attribute, or NULL. */
static Leaf *
find_leaf(Walk *w, const DynKeyAttr *ka)
{
	int			i;

	for (i = 0; i < w->n; i++)
		if (leaf_is(&w->leaves[i], ka))
			return &w->leaves[i];
	return NULL;
}

/* Key attribute of a leaf (*is_hash set), or NULL for a non-key attribute. */
static const DynKeyAttr *
leaf_attr(const DynKeySchema *ks, const Leaf *l, bool *is_hash)
{
	int			i;

	for (i = 0; i < ks->nhash; i++)
		if (leaf_is(l, &ks->hash[i]))
		{
			*is_hash = true;
			return &ks->hash[i];
		}
	for (i = 0; i < ks->nrange; i++)
		if (leaf_is(l, &ks->range[i]))
		{
			*is_hash = false;
			return &ks->range[i];
		}
	return NULL;
}

/* Check a condition against the key schema; fill kc. */
void
DynKeyCondAnalyse(DynExpr *cond, const DynKeySchema *ks, DynKeyCond *kc)
{
	Walk	   *w = palloc0(sizeof(Walk));
	int			nkeys = ks->nhash + ks->nrange;
	int			i,
				last;

	memset(kc, 0, sizeof(*kc));
	if (cond == NULL)
		DynValidationError("Conditions can be of length 1 or 2 only");
	walk(w, cond);

	if (w->n > nkeys && !(nkeys == 1 && w->n == 2))
		DynValidationError("The number of query conditions (%d) exceeds the number of key attributes defined in the schema (%d)",
						   w->n, nkeys);

	/* per condition, in textual order: operand types, partition key operators */
	for (i = 0; i < w->n; i++)
	{
		Leaf	   *l = &w->leaves[i];
		bool		is_hash = false;
		const DynKeyAttr *ka = leaf_attr(ks, l, &is_hash);

		if (ka == NULL)
			continue;
		if (l->v1->type != ka->type || (l->v2 && l->v2->type != ka->type))
			DynValidationError("One or more parameter values were invalid: Condition parameter type does not match schema type");
		if (is_hash && l->op != DYN_KEY_EQ)
			DynValidationError("Query key condition not supported");
	}
	if (nkeys == 1 && w->n > 1)
		DynValidationError("Query key condition not supported");

	for (i = 0; i < ks->nhash; i++)
	{
		Leaf	   *l = find_leaf(w, &ks->hash[i]);

		if (l == NULL)
			DynValidationError("Query condition missed key schema element: %s", ks->hash[i].name);
		kc->hash[i] = l->v1;
	}

	/* conditions on non-key attributes: the first unconstrained RANGE attribute is missed */
	for (i = 0; i < w->n; i++)
	{
		bool		is_hash;

		if (leaf_attr(ks, &w->leaves[i], &is_hash) == NULL)
		{
			int			k;

			for (k = 0; k < ks->nrange; k++)
				if (find_leaf(w, &ks->range[k]) == NULL)
					DynValidationError("Query condition missed key schema element: %s", ks->range[k].name);
			DynValidationError("Query key condition not supported");
		}
	}

	/* RANGE attributes: left to right without gaps, only the last may be an inequality */
	last = -1;
	for (i = 0; i < ks->nrange; i++)
		if (find_leaf(w, &ks->range[i]))
			last = i;
	if (last > 0)
	{
		StringInfoData bad;
		int			nbad = 0;

		initStringInfo(&bad);
		for (i = 0; i < last; i++)
		{
			Leaf	   *l = find_leaf(w, &ks->range[i]);

			if (l == NULL || l->op != DYN_KEY_EQ)
			{
				if (nbad++)
					appendStringInfoString(&bad, ", ");
				appendStringInfoString(&bad, ks->range[i].name);
			}
		}
		if (nbad)
			DynValidationError("RANGE key attributes %s must have equality conditions specified in the query because a condition is present on key attribute %s",
							   bad.data, ks->range[last].name);
	}
	kc->nrange = last + 1;
	for (i = 0; i <= last; i++)
	{
		Leaf	   *l = find_leaf(w, &ks->range[i]);

		kc->op[i] = l->op;
		kc->v1[i] = l->v1;
		kc->v2[i] = l->v2;
	}
}

/* ---------------------------------------------------------------- bytes */

/* A bytea of len bytes copied from data. */
static bytea *
make_bytea(const char *data, int len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), data, len);
	return b;
}

/* Compare two byte strings as bytea does (memcmp, then length). */
int
DynBytesCompare(const bytea *a, const bytea *b)
{
	int			la = VARSIZE_ANY_EXHDR(a);
	int			lb = VARSIZE_ANY_EXHDR(b);
	int			c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(la, lb));

	if (c != 0)
		return c;
	return (la > lb) - (la < lb);
}

/* b || 0x00: the immediate successor of b in bytea order. */
bytea *
DynBytesSuccessor(const bytea *b)
{
	int			len = VARSIZE_ANY_EXHDR(b);
	bytea	   *r = palloc(VARHDRSZ + len + 1);

	SET_VARSIZE(r, VARHDRSZ + len + 1);
	memcpy(VARDATA(r), VARDATA_ANY(b), len);
	VARDATA(r)[len] = 0;
	return r;
}

/* The smallest string above every string with prefix b: drop trailing 0xFF, add one. */
bytea *
DynBytesPrefixSuccessor(const bytea *b)
{
	int			len = VARSIZE_ANY_EXHDR(b);
	const unsigned char *d = (const unsigned char *) VARDATA_ANY(b);
	bytea	   *r;

	while (len > 0 && d[len - 1] == 0xFF)
		len--;
	if (len == 0)
		return NULL;
	r = make_bytea((const char *) d, len);
	((unsigned char *) VARDATA(r))[len - 1]++;
	return r;
}

/* Encode n values as one key column (raw when n == 1, terminated otherwise). */
bytea *
DynKeyEncodeAttrs(DynValue **vals, int n)
{
	StringInfoData buf;
	bytea	   *b;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < n; i++)
		DynKeyEncode(&buf, vals[i], n > 1);
	b = make_bytea(buf.data, buf.len);
	pfree(buf.data);
	return b;
}

/* Append a value's encoding to buf and return the resulting bytea. */
static bytea *
with_value(StringInfo prefix, const DynValue *v, bool terminated, bool as_prefix)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, prefix->data, prefix->len);
	if (as_prefix)
		DynKeyEncodePrefix(&buf, v, terminated);
	else
		DynKeyEncode(&buf, v, terminated);
	return make_bytea(buf.data, buf.len);
}

/* The encoded byte range of a key condition. */
void
DynKeyCondRange(const DynKeySchema *ks, const DynKeyCond *kc, DynKeyRange *r)
{
	bool		multi = ks->nrange > 1;
	StringInfoData eq;
	bytea	   *eqb;
	int			i,
				j;

	r->hash = DynKeyEncodeAttrs((DynValue **) kc->hash, ks->nhash);

	/* the equality prefix: every constrained RANGE attribute but the last */
	initStringInfo(&eq);
	for (i = 0; i + 1 < kc->nrange; i++)
		DynKeyEncode(&eq, kc->v1[i], multi);
	eqb = make_bytea(eq.data, eq.len);
	r->lo = eqb;
	r->hi = eq.len > 0 ? DynBytesPrefixSuccessor(eqb) : NULL;
	if (kc->nrange == 0)
		return;

	j = kc->nrange - 1;
	switch (kc->op[j])
	{
		case DYN_KEY_EQ:
			r->lo = with_value(&eq, kc->v1[j], multi, false);
			r->hi = multi ? DynBytesPrefixSuccessor(r->lo) : DynBytesSuccessor(r->lo);
			break;
		case DYN_KEY_LT:
			r->hi = with_value(&eq, kc->v1[j], multi, false);
			break;
		case DYN_KEY_LE:
			{
				bytea	   *v = with_value(&eq, kc->v1[j], multi, false);

				r->hi = multi ? DynBytesPrefixSuccessor(v) : DynBytesSuccessor(v);
				break;
			}
		case DYN_KEY_GT:
			{
				bytea	   *v = with_value(&eq, kc->v1[j], multi, false);

				r->lo = multi ? DynBytesPrefixSuccessor(v) : DynBytesSuccessor(v);
				if (r->lo == NULL)
					r->lo = r->hi ? r->hi : v;	/* nothing above: empty */
				break;
			}
		case DYN_KEY_GE:
			r->lo = with_value(&eq, kc->v1[j], multi, false);
			break;
		case DYN_KEY_BETWEEN:
			{
				bytea	   *v = with_value(&eq, kc->v1[j], multi, false);
				bytea	   *w = with_value(&eq, kc->v2[j], multi, false);

				r->lo = v;
				r->hi = multi ? DynBytesPrefixSuccessor(w) : DynBytesSuccessor(w);
				break;
			}
		case DYN_KEY_BEGINS_WITH:
			r->lo = with_value(&eq, kc->v1[j], multi, true);
			r->hi = DynBytesPrefixSuccessor(r->lo);
			break;
	}
}
