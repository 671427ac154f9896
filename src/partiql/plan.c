/*
 * plan.c — PartiQL planner: a parsed statement becomes the request of an
 * existing DynamoDB operation, as DynamoDB's own PartiQL front end does it.
 *
 * WHERE clauses become condition expressions (names as #nK, values as :vK),
 * so a PartiQL condition means exactly what the JSON API's does.  Key
 * extraction follows DynamoDB:
 *   - SELECT: the top-level AND conjuncts are searched for the partition key
 *     pinned by equality, IN or an OR of equalities.  Pinned: a Query per
 *     value (with the first usable sort-key conjunct as the key condition);
 *     pinned with the full primary key by equality and nothing else: a
 *     GetItem; otherwise a Scan with the whole WHERE as its filter.
 *   - UPDATE, DELETE, EXISTS: every key attribute must be pinned by a
 *     top-level equality ("Where clause does not contain a mandatory
 *     equality on all key attributes"); the rest is the write's condition.
 *   - INSERT: PutItem with attribute_not_exists on the partition key.
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "partiql/partiql.h"
#include "security/security.h"

#define MAX_IN_HASH_VALUES 50

/* Names and values collected while rendering expressions. */
typedef struct Render
{
	List	   *names;			/* distinct attribute names: #n0, #n1, ... */
	List	   *values;			/* typed JSON texts: :v0, :v1, ... */
	List	   *sources;		/* int list: the `?` each value is (1, 2, ...), 0: not one */
	const char *expr;			/* the expression being rendered: "FilterExpression", ... */
} Render;

/* A key schema to plan against (the table's or the index's). */
typedef struct Keys
{
	int			nhash;
	DynKeyAttr *hash;
	int			nrange;
	DynKeyAttr *range;
	bool		is_gsi;
} Keys;

/* ---------------------------------------------------------------- rendering */

/* The placeholder of an attribute name. */
static void
render_name(Render *r, StringInfo buf, const char *name)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, r->names)
	{
		if (strcmp((char *) lfirst(lc), name) == 0)
		{
			appendStringInfo(buf, "#n%d", i);
			return;
		}
		i++;
	}
	r->names = lappend(r->names, (char *) name);
	appendStringInfo(buf, "#n%d", i);
}

/* A document path with placeholders. */
static void
render_path(Render *r, StringInfo buf, PqNode *n)
{
	int			i;

	for (i = 0; i < n->npath; i++)
	{
		if (n->path[i].name)
		{
			if (i > 0)
				appendStringInfoChar(buf, '.');
			if (n->path[i].name[0] == '\0')
				DynValidationError("Path component cannot be an empty string");
			render_name(r, buf, n->path[i].name);
		}
		else
			appendStringInfo(buf, "[%d]", n->path[i].index);
	}
}

/* The typed JSON member (after the type key) of a scalar value: "x" of {"S":"x"}. */
static char *
scalar_payload(const char *json)
{
	const char *colon = strchr(json, ':');
	const char *end = strrchr(json, '}');

	if (colon == NULL || end == NULL || end < colon)
		return pstrdup("null");
	return pnstrdup(colon + 1, end - colon - 1);
}

/* The typed JSON of a value node; a number literal DynamoDB refuses is reported here. */
static const char *
value_json(PqNode *n, const char *under)
{
	if (n->json == NULL)
		DynValidationError("%s under %s", n->name ? n->name : "Unsupported value", under);
	return n->json;
}

/* Append the path of a value inside a literal, for messages: root.x[1]. */
static char *
sub_path(const char *under, const char *key, int index)
{
	return key ? psprintf("%s.%s", under, key) : psprintf("%s[%d]", under, index);
}

/*
 * The class of PartiQL's AST node a non-constant would be (DynamoDB's PartiQL
 * front end names it in "Unsupported data type: %s under key %s", the error
 * of a literal holding something that is no value: DynamoDB Local's
 * PartiQLToAttributeValueConverterBase).
 */
static const char *
node_class(PqNode *n)
{
	switch (n->kind)
	{
		case PQ_PATH:
			return n->npath == 1 && n->path[0].name ? "VariableReference" : "Path";
		case PQ_MISSING:
			return "LiteralMissing";
		case PQ_IS:
			return "Typed";
		default:
			return "NAry";
	}
}

/* Append the typed JSON of a constant. */
static void
constant_json(StringInfo buf, PqNode *n, const char *under)
{
	int			i;
	int			j;

	switch (n->kind)
	{
		case PQ_VALUE:
			appendStringInfoString(buf, value_json(n, under));
			return;
		case PQ_LIST:
			appendStringInfoString(buf, "{\"L\":[");
			for (i = 0; i < n->nargs; i++)
			{
				if (i)
					appendStringInfoChar(buf, ',');
				constant_json(buf, n->args[i], sub_path(under, NULL, i));
			}
			appendStringInfoString(buf, "]}");
			return;
		case PQ_TUPLE:
			appendStringInfoString(buf, "{\"M\":{");
			for (i = 0; i < n->nargs; i++)
			{
				for (j = 0; j < i; j++)
					if (strcmp(n->keys[i], n->keys[j]) == 0)
						DynValidationError("Duplicate keys in tuple. Key: %s under %s", n->keys[i], under);
				if (i)
					appendStringInfoChar(buf, ',');
				escape_json(buf, n->keys[i]);
				appendStringInfoChar(buf, ':');
				constant_json(buf, n->args[i], sub_path(under, n->keys[i], -1));
			}
			appendStringInfoString(buf, "}}");
			return;
		case PQ_BAG:
			{
				const char *t = NULL;

				if (n->nargs == 0)
					DynValidationError("Empty bags are not supported");
				for (i = 0; i < n->nargs; i++)
				{
					PqNode	   *e = n->args[i];

					if (e->kind != PQ_VALUE ||
						(strcmp(e->vtype, "S") != 0 && strcmp(e->vtype, "N") != 0 && strcmp(e->vtype, "B") != 0) ||
						(t && strcmp(t, e->vtype) != 0))
						DynValidationError("Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags");
					t = e->vtype;
				}
				appendStringInfo(buf, "{\"%sS\":[", t);
				for (i = 0; i < n->nargs; i++)
				{
					if (i)
						appendStringInfoChar(buf, ',');
					appendStringInfoString(buf, scalar_payload(value_json(n->args[i], sub_path(under, NULL, i))));
				}
				appendStringInfoString(buf, "]}");
				return;
			}
		default:
			/* MISSING alone is compared; inside a literal it is no value */
			if (n->kind == PQ_MISSING && strcmp(under, "root") == 0)
				DynValidationError("MISSING must be compared using IS operator");
			DynValidationError("Unsupported data type: %s under key %s", node_class(n), under);
	}
}

/* The typed JSON text of a constant. */
static char *
constant_text(PqNode *n)
{
	StringInfoData b;

	initStringInfo(&b);
	constant_json(&b, n, "root");
	return b.data;
}

/* A value placeholder for a constant. */
static void
render_value(Render *r, StringInfo buf, PqNode *n)
{
	appendStringInfo(buf, ":v%d", list_length(r->values));
	r->values = lappend(r->values, constant_text(n));
	r->sources = lappend_int(r->sources, n->kind == PQ_VALUE ? n->param : 0);
}

static void render_function(Render *r, StringInfo buf, PqNode *n);
static void no_operands(Render *r, const char *name);

/* An operand of a comparison or function: path, constant or size(path). */
static void
render_operand(Render *r, StringInfo buf, PqNode *n)
{
	switch (n->kind)
	{
		case PQ_PATH:
			render_path(r, buf, n);
			return;
		case PQ_MISSING:
			DynValidationError("MISSING must be compared using IS operator");
		case PQ_ARITH:
			DynValidationError("Unsupported operator in Condition Expression. Operator: %s",
							   n->op == '+' ? "PLUS" : "MINUS");
		case PQ_FUNC:
			if (strcmp(n->name, "size") == 0)
			{
				int			i;

				/* its arguments are the expression parser's to check, as for the functions */
				if (n->nargs == 0)
					no_operands(r, "size");
				appendStringInfoString(buf, "size(");
				for (i = 0; i < n->nargs; i++)
				{
					if (i)
						appendStringInfoString(buf, ", ");
					render_operand(r, buf, n->args[i]);
				}
				appendStringInfoChar(buf, ')');
				return;
			}
			/* a condition function where a value goes: the expression parser decides */
			render_function(r, buf, n);
			return;
		case PQ_CMP:
		case PQ_BETWEEN:
		case PQ_IN:
		case PQ_IS:
		case PQ_AND:
		case PQ_OR:
		case PQ_NOT:
			DynValidationError("Unsupported operation: a condition used as a value");
		default:
			render_value(r, buf, n);
	}
}

static void render_cond(Render *r, StringInfo buf, PqNode *n);

/* The DynamoDB type name an IS <type> tests. */
static const char *
is_type_code(const char *name)
{
	if (strcmp(name, "NULL") == 0)
		return "NULL";
	if (strcmp(name, "BOOLEAN") == 0 || strcmp(name, "BOOL") == 0)
		return "BOOL";
	if (strcmp(name, "BLOB") == 0)
		return "B";
	if (strcmp(name, "STRING") == 0)
		return "S";
	if (strcmp(name, "NUMERIC") == 0 || strcmp(name, "INT") == 0 || strcmp(name, "INTEGER") == 0 ||
		strcmp(name, "DECIMAL") == 0 || strcmp(name, "FLOAT") == 0 || strcmp(name, "INT4") == 0 ||
		strcmp(name, "INT8") == 0 || strcmp(name, "DOUBLE") == 0 || strcmp(name, "REAL") == 0 ||
		strcmp(name, "SMALLINT") == 0)
		return "N";
	if (strcmp(name, "STRUCT") == 0 || strcmp(name, "TUPLE") == 0)
		return "M";
	if (strcmp(name, "LIST") == 0)
		return "L";
	return NULL;
}

/*
 * A call without arguments, which the expression syntax cannot write: the
 * expression parser's message for the operand count, as it would give it.
 */
static void
no_operands(Render *r, const char *name)
{
	DynValidationError("Invalid %s: Incorrect number of operands for operator or function; operator or function: %s, number of operands: 0",
					   r->expr ? r->expr : "FilterExpression", name);
}

/* A condition function: begins_with, contains, attribute_type, exists, missing. */
static void
render_function(Render *r, StringInfo buf, PqNode *n)
{
	int			i;
	const char *name = n->name;

	/*
	 * The number and kinds of the arguments are checked by the operation's
	 * expression parser, as DynamoDB's PartiQL front end leaves them to the
	 * expression validator the JSON API uses (DynamoDB Local's
	 * ExpressionParser: a call becomes an operator node of its converted
	 * arguments); exists and missing are attribute_exists and
	 * attribute_not_exists by then.
	 */
	if (strcmp(name, "size") == 0)
		DynValidationError("WHERE clause must contain an expression that resolves to a boolean");
	if (strcmp(name, "begins_with") != 0 && strcmp(name, "contains") != 0 &&
		strcmp(name, "attribute_type") != 0 && strcmp(name, "exists") != 0 &&
		strcmp(name, "missing") != 0 && strcmp(name, "attribute_exists") != 0 &&
		strcmp(name, "attribute_not_exists") != 0)
		DynValidationError("Unrecognized function: %s", name);
	if (strcmp(name, "exists") == 0)
		name = "attribute_exists";
	else if (strcmp(name, "missing") == 0)
		name = "attribute_not_exists";
	if (n->nargs == 0)
		no_operands(r, name);
	appendStringInfo(buf, "%s(", name);
	for (i = 0; i < n->nargs; i++)
	{
		if (i)
			appendStringInfoString(buf, ", ");
		render_operand(r, buf, n->args[i]);
	}
	appendStringInfoChar(buf, ')');
}

/* A condition in DynamoDB's expression language. */
static void
render_cond(Render *r, StringInfo buf, PqNode *n)
{
	static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
	int			i;

	switch (n->kind)
	{
		case PQ_AND:
		case PQ_OR:
			appendStringInfoChar(buf, '(');
			render_cond(r, buf, n->args[0]);
			appendStringInfoString(buf, n->kind == PQ_AND ? ") AND (" : ") OR (");
			render_cond(r, buf, n->args[1]);
			appendStringInfoChar(buf, ')');
			return;
		case PQ_NOT:
			if (n->args[0]->kind == PQ_PATH || n->args[0]->kind == PQ_VALUE)
				DynValidationError("The argument to NOT must be a Type or Expression");
			appendStringInfoString(buf, "NOT (");
			render_cond(r, buf, n->args[0]);
			appendStringInfoChar(buf, ')');
			return;
		case PQ_CMP:
			render_operand(r, buf, n->args[0]);
			appendStringInfo(buf, " %s ", ops[n->op]);
			render_operand(r, buf, n->args[1]);
			return;
		case PQ_BETWEEN:
			if (n->negated)
				appendStringInfoString(buf, "NOT (");
			render_operand(r, buf, n->args[0]);
			appendStringInfoString(buf, " BETWEEN ");
			render_operand(r, buf, n->args[1]);
			appendStringInfoString(buf, " AND ");
			render_operand(r, buf, n->args[2]);
			if (n->negated)
				appendStringInfoChar(buf, ')');
			return;
		case PQ_IN:
			{
				PqNode	   *list = n->args[1];

				if (n->args[0]->kind != PQ_PATH || list->kind != PQ_LIST || list->nargs == 0)
					DynValidationError("IN operator must have a left hand argument of type Variable Reference and right hand argument of type Seq with at least one member");
				if (n->negated)
					appendStringInfoString(buf, "NOT (");
				render_operand(r, buf, n->args[0]);
				appendStringInfoString(buf, " IN (");
				for (i = 0; i < list->nargs; i++)
				{
					if (i)
						appendStringInfoString(buf, ", ");
					render_operand(r, buf, list->args[i]);
				}
				appendStringInfoChar(buf, ')');
				if (n->negated)
					appendStringInfoChar(buf, ')');
				return;
			}
		case PQ_IS:
			{
				PqNode	   *arg = n->args[0];
				const char *code;

				if (arg->kind != PQ_PATH)
					DynValidationError("The left hand side argument to IS must be a Variable Reference, Literal, or Path");
				if (strcmp(n->name, "MISSING") == 0)
				{
					appendStringInfoString(buf, n->negated ? "attribute_exists(" : "attribute_not_exists(");
					render_path(r, buf, arg);
					appendStringInfoChar(buf, ')');
					return;
				}
				code = is_type_code(n->name);
				if (code == NULL)
					DynValidationError("Unsupported data type for IS operator: %s. Supported data types are [MISSING, NULL, BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, TUPLE, LIST]",
									   n->name);
				if (n->negated)
					appendStringInfoString(buf, "NOT ");
				appendStringInfoString(buf, "attribute_type(");
				render_path(r, buf, arg);
				appendStringInfo(buf, ", :v%d)", list_length(r->values));
				r->values = lappend(r->values, psprintf("{\"S\":\"%s\"}", code));
				r->sources = lappend_int(r->sources, 0);
				return;
			}
		case PQ_FUNC:
			render_function(r, buf, n);
			return;
		default:
			DynValidationError("WHERE clause must contain an expression that resolves to a boolean");
	}
}

/* Append ExpressionAttributeNames/Values members for what was rendered. */
static void
append_names_values(StringInfo body, Render *r)
{
	ListCell   *lc;
	int			i = 0;

	if (r->names != NIL)
	{
		appendStringInfoString(body, ",\"ExpressionAttributeNames\":{");
		foreach(lc, r->names)
		{
			appendStringInfo(body, "%s\"#n%d\":", i ? "," : "", i);
			escape_json(body, (char *) lfirst(lc));
			i++;
		}
		appendStringInfoChar(body, '}');
	}
	if (r->values != NIL)
	{
		i = 0;
		appendStringInfoString(body, ",\"ExpressionAttributeValues\":{");
		foreach(lc, r->values)
		{
			appendStringInfo(body, "%s\":v%d\":%s", i ? "," : "", i, (char *) lfirst(lc));
			i++;
		}
		appendStringInfoChar(body, '}');
	}
}

/* Append "Member":"text". */
static void
append_member(StringInfo body, const char *member, const char *text)
{
	appendStringInfo(body, ",\"%s\":", member);
	escape_json(body, text);
}

/* ---------------------------------------------------------------- keys */

/* The top-level AND conjuncts of a condition. */
static List *
conjuncts(PqNode *n, List *acc)
{
	if (n == NULL)
		return acc;
	if (n->kind == PQ_AND)
		return conjuncts(n->args[1], conjuncts(n->args[0], acc));
	return lappend(acc, n);
}

/* Is n a one-step path naming attribute name? */
static bool
is_attr(PqNode *n, const char *name)
{
	return n->kind == PQ_PATH && n->npath == 1 && n->path[0].name && strcmp(n->path[0].name, name) == 0;
}

/* If c is `name = constant` (either side), the constant. */
static PqNode *
eq_value(PqNode *c, const char *name)
{
	if (c->kind != PQ_CMP || c->op != PQ_EQ)
		return NULL;
	if (is_attr(c->args[0], name) && c->args[1]->kind == PQ_VALUE)
		return value_json(c->args[1], "root") ? c->args[1] : NULL;
	if (is_attr(c->args[1], name) && c->args[0]->kind == PQ_VALUE)
		return value_json(c->args[0], "root") ? c->args[0] : NULL;
	return NULL;
}

/* Collect the values of an OR of `name = constant`; false if c is not one. */
static bool
or_values(PqNode *c, const char *name, List **vals)
{
	PqNode	   *v;

	if (c->kind == PQ_OR)
		return or_values(c->args[0], name, vals) && or_values(c->args[1], name, vals);
	v = eq_value(c, name);
	if (v == NULL)
		return false;
	*vals = lappend(*vals, v);
	return true;
}

/* The values a conjunct pins a partition key attribute to (NIL: none). */
static List *
pinned_values(PqNode *c, const char *name)
{
	List	   *vals = NIL;
	PqNode	   *v = eq_value(c, name);
	int			i;

	if (v)
		return list_make1(v);
	if (c->kind == PQ_IN && !c->negated && is_attr(c->args[0], name) && c->args[1]->kind == PQ_LIST &&
		c->args[1]->nargs > 0)
	{
		for (i = 0; i < c->args[1]->nargs; i++)
		{
			if (c->args[1]->args[i]->kind != PQ_VALUE)
				return NIL;
			(void) value_json(c->args[1]->args[i], "root");
			vals = lappend(vals, c->args[1]->args[i]);
		}
		return vals;
	}
	if (c->kind == PQ_OR && or_values(c, name, &vals))
		return vals;
	return NIL;
}

/* Is conjunct c a usable sort-key condition on name (op not EQ)? */
static bool
range_condition(PqNode *c, const char *name)
{
	if (c->kind == PQ_CMP && c->op != PQ_NE &&
		((is_attr(c->args[0], name) && c->args[1]->kind == PQ_VALUE) ||
		 (is_attr(c->args[1], name) && c->args[0]->kind == PQ_VALUE)))
		return true;
	if (c->kind == PQ_BETWEEN && !c->negated && is_attr(c->args[0], name) &&
		c->args[1]->kind == PQ_VALUE && c->args[2]->kind == PQ_VALUE)
		return true;
	if (c->kind == PQ_FUNC && strcmp(c->name, "begins_with") == 0 && c->nargs == 2 &&
		is_attr(c->args[0], name) && c->args[1]->kind == PQ_VALUE)
		return true;
	return false;
}

/* The key schema of the table or of one of its indexes. */
static void
keys_of(DynTable *t, const char *index, Keys *k)
{
	int			i;

	memset(k, 0, sizeof(*k));
	if (index == NULL)
	{
		k->nhash = 1;
		k->hash = &t->hash;
		k->nrange = t->has_range ? 1 : 0;
		k->range = &t->range;
		return;
	}
	for (i = 0; i < t->nindexes; i++)
		if (strcmp(t->indexes[i].name, index) == 0)
		{
			k->nhash = t->indexes[i].nhash;
			k->hash = t->indexes[i].hash;
			k->nrange = t->indexes[i].nrange;
			k->range = t->indexes[i].range;
			k->is_gsi = t->indexes[i].is_global;
			return;
		}
	/* unknown index: the read operation reports it */
	k->nhash = 0;
}

/* DML: the equality of every key attribute; the rest of the WHERE. */
static List *
dml_keys(DynTable *t, PqNode *where, PqNode **keyvals, const char *missing_msg)
{
	List	   *cs = conjuncts(where, NIL);
	List	   *rest = NIL;
	ListCell   *lc;
	int			nkeys = t->has_range ? 2 : 1;
	const DynKeyAttr *ka[2] = {&t->hash, &t->range};
	int			i;

	keyvals[0] = keyvals[1] = NULL;
	foreach(lc, cs)
	{
		PqNode	   *c = lfirst(lc);
		bool		used = false;

		for (i = 0; i < nkeys && !used; i++)
		{
			PqNode	   *v = eq_value(c, ka[i]->name);

			if (v == NULL)
				continue;
			if (keyvals[i] && strcmp(keyvals[i]->json, v->json) != 0)
				DynValidationError("Multiple conditions on same key %s. Only single item Update/Insert/Delete are supported",
								   ka[i]->name);
			keyvals[i] = v;
			used = true;
		}
		if (!used)
			rest = lappend(rest, c);
	}
	for (i = 0; i < nkeys; i++)
	{
		if (keyvals[i] == NULL)
			DynValidationError("%s", missing_msg);
		if (strcmp(keyvals[i]->vtype, DynTypeName(ka[i]->type)) != 0)
			DynValidationError("Key attribute's data type should match its data type in table's schema: Key %s",
							   ka[i]->name);
	}
	return rest;
}

/* Append "Key":{...}. */
static void
append_key(StringInfo body, DynTable *t, PqNode **keyvals)
{
	appendStringInfoString(body, ",\"Key\":{");
	escape_json(body, t->hash.name);
	appendStringInfo(body, ":%s", keyvals[0]->json);
	if (t->has_range)
	{
		appendStringInfoChar(body, ',');
		escape_json(body, t->range.name);
		appendStringInfo(body, ":%s", keyvals[1]->json);
	}
	appendStringInfoChar(body, '}');
}

/* AND of a list of conditions, rendered; false when the list is empty. */
static bool
render_conjuncts(Render *r, StringInfo buf, List *cs)
{
	ListCell   *lc;
	bool		first = true;

	foreach(lc, cs)
	{
		appendStringInfoString(buf, first ? "(" : " AND (");
		render_cond(r, buf, lfirst(lc));
		appendStringInfoChar(buf, ')');
		first = false;
	}
	return !first;
}

/* The body start: "TableName":"t". */
static StringInfo
body_start(const char *table)
{
	StringInfo	b = makeStringInfo();

	appendStringInfoString(b, "\"TableName\":");
	escape_json(b, table);
	return b;
}

/* The table, or ResourceNotFoundException. */
static DynTable *
get_table(const char *name)
{
	DynTable   *t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found");
	return t;
}

/* ---------------------------------------------------------------- SELECT */

/* A ProjectionExpression for the SELECT list (false for *). */
static bool
render_projection(Render *r, StringInfo buf, PqStatement *st)
{
	int			i;
	int			j;

	if (st->star)
		return false;
	for (i = 0; i < st->nproj; i++)
	{
		for (j = 0; j < i; j++)
			if (st->proj[j]->npath == 1 && st->proj[i]->npath == 1 &&
				strcmp(st->proj[i]->path[0].name, st->proj[j]->path[0].name) == 0)
				DynValidationError("Duplicate identifiers in select clause: %s", st->proj[i]->path[0].name);
		if (i)
			appendStringInfoString(buf, ", ");
		render_path(r, buf, st->proj[i]);
	}
	return true;
}

/* Compare two constant key values (for ORDER BY on an IN partition key). */
static int
cmp_values(const ListCell *a, const ListCell *b)
{
	PqNode	   *x = lfirst(a);
	PqNode	   *y = lfirst(b);
	DynValue   *vx;
	DynValue   *vy;
	const char *err = NULL;
	Jsonb	   *jx = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(x->json)));
	Jsonb	   *jy = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(y->json)));
	JsonbValue	bx;
	JsonbValue	by;

	bx.type = jbvBinary;
	bx.val.binary.data = &jx->root;
	bx.val.binary.len = VARSIZE(jx);
	by = bx;
	by.val.binary.data = &jy->root;
	by.val.binary.len = VARSIZE(jy);
	vx = DynValueFromJsonb(&bx, &err);
	vy = err ? NULL : DynValueFromJsonb(&by, &err);
	if (err || vx->type != vy->type)
		return 0;
	return DynScalarCompare(vx, vy);
}

/*
 * A one-body Query or Scan can be kept and run again with other Parameters
 * when every `?` of the statement is a whole :v value of its request
 * (value_params[k] is the `?` of :vk): then nothing but those values depends
 * on the Parameters.  A `?` inside a list, map or set literal is not.
 */
static void
note_value_params(PqPlan *plan, Render *r)
{
	int			nparams = plan->stmt->nparams;
	bool	   *seen = palloc0(sizeof(bool) * (nparams + 1));
	ListCell   *lc;
	int			i = 0;

	plan->nvalues = list_length(r->sources);
	plan->value_params = palloc0(sizeof(int) * (plan->nvalues + 1));
	foreach(lc, r->sources)
	{
		int			p = lfirst_int(lc);

		plan->value_params[i++] = p;
		if (p > 0 && p <= nparams)
			seen[p] = true;
	}
	plan->reusable = true;
	for (i = 1; i <= nparams; i++)
		if (!seen[i])
			plan->reusable = false;
}

/* Plan a SELECT (or the read of an EXISTS). */
static void
plan_select(PqPlan *plan, PqStatement *st, PqContext ctx, bool consistent_read)
{
	DynTable   *t = get_table(st->table);
	Keys		k;
	List	   *cs = conjuncts(st->where, NIL);
	PqNode	   *hash_conj[DYN_MAX_KEY_ATTRS] = {0};
	List	   *hash_vals[DYN_MAX_KEY_ATTRS] = {0};
	List	   *range_conj = NIL;
	bool		range_eq_full = false;
	bool		pinned = false;
	int			nmulti = 1;
	int			i;
	int			j;
	ListCell   *lc;

	keys_of(t, st->index, &k);
	if (st->index && k.is_gsi && consistent_read)
		DynValidationError("Strongly consistent read is not supported on Global Secondary Indexes");

	/* the partition key: every HASH attribute pinned by a top-level conjunct */
	if (k.nhash > 0)
	{
		pinned = true;
		for (i = 0; i < k.nhash && pinned; i++)
		{
			foreach(lc, cs)
			{
				List	   *vals = pinned_values(lfirst(lc), k.hash[i].name);

				if (vals != NIL && (k.nhash == 1 || list_length(vals) == 1))
				{
					hash_conj[i] = lfirst(lc);
					hash_vals[i] = vals;
					break;
				}
			}
			if (hash_conj[i] == NULL)
				pinned = false;
		}
	}
	if (pinned)
	{
		nmulti = list_length(hash_vals[0]);
		if (nmulti > MAX_IN_HASH_VALUES)
			DynValidationError("Too many decomposed read operations for a given query.");
		for (i = 0; i < nmulti; i++)
			for (j = 0; j < i; j++)
				if (strcmp(((PqNode *) list_nth(hash_vals[0], i))->json,
						   ((PqNode *) list_nth(hash_vals[0], j))->json) == 0)
					DynValidationError("Overlapping conditions with range keys are not supported in where clause");
		/* the sort key: equalities left to right, then one other condition */
		for (i = 0; i < k.nrange; i++)
		{
			PqNode	   *found = NULL;
			bool		is_eq = false;

			foreach(lc, cs)
			{
				PqNode	   *c = lfirst(lc);

				if (list_member_ptr(range_conj, c))
					continue;
				for (j = 0; j < k.nhash; j++)
					if (c == hash_conj[j])
						break;
				if (j < k.nhash)
					continue;
				if (eq_value(c, k.range[i].name))
				{
					found = c;
					is_eq = true;
					break;
				}
				if (found == NULL && range_condition(c, k.range[i].name))
					found = c;
			}
			if (found == NULL)
				break;
			range_conj = lappend(range_conj, found);
			if (!is_eq)
				break;
			if (i == k.nrange - 1)
				range_eq_full = true;
		}
		if (k.nrange == 0)
			range_eq_full = true;
	}

	/* ORDER BY: the key attributes of a Query */
	plan->forward = true;
	if (st->norder > 0)
	{
		bool		hash_named = false;

		if (st->where == NULL)
			DynValidationError("Must have WHERE clause in the statement when using ORDER BY clause.");
		if (!pinned)
			DynValidationError("Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.");
		for (i = 0; i < st->norder; i++)
		{
			PqNode	   *o = st->order[i];
			bool		is_key = false;

			if (o->kind != PQ_PATH)
				DynValidationError("Argument to ORDER BY must be of type VariableReference. Type: %s",
								   o->kind == PQ_VALUE ? "Literal" : "Expression");
			for (j = 0; j < k.nhash; j++)
				if (is_attr(o, k.hash[j].name))
				{
					is_key = true;
					hash_named = true;
					if (nmulti > 1)
					{
						hash_vals[0] = list_copy(hash_vals[0]);
						list_sort(hash_vals[0], cmp_values);
						if (st->order_desc[i])
						{
							List	   *rev = NIL;
							ListCell   *lv;

							foreach(lv, hash_vals[0])
								rev = lcons(lfirst(lv), rev);
							hash_vals[0] = rev;
						}
					}
				}
			for (j = 0; j < k.nrange; j++)
				if (is_attr(o, k.range[j].name))
				{
					is_key = true;
					plan->forward = !st->order_desc[i];
				}
			if (!is_key)
				DynValidationError("Variable reference %s in ORDER BY clause must be part of the primary key",
								   o->npath > 0 && o->path[0].name ? o->path[0].name : "");
		}
		if (nmulti > 1 && !hash_named)
			DynValidationError("Must have hash key in ORDER BY clause when more than one hash key condition specified in WHERE clause.");
	}

	/* the operation */
	if (pinned && st->index == NULL && range_eq_full && nmulti == 1 &&
		list_length(cs) == 1 + list_length(range_conj))
		plan->op = PQ_OP_GET;
	else if (pinned)
		plan->op = PQ_OP_QUERY;
	else
		plan->op = PQ_OP_SCAN;
	if (ctx == PQ_CTX_TRANSACTION && st->kind == PQ_SELECT)
	{
		if (st->index)
			DynValidationError("Reads on indices are not supported within transactions.");
		if (plan->op != PQ_OP_GET)
			DynValidationError("Select statements within ExecuteTransaction must specify the primary key in the where clause.");
	}
	if (ctx == PQ_CTX_BATCH && plan->op != PQ_OP_GET)
		DynValidationError("Where clause does not contain a mandatory equality on all key attributes");

	plan->nbodies = plan->op == PQ_OP_QUERY ? nmulti : 1;
	plan->bodies = palloc(sizeof(char *) * plan->nbodies);
	for (i = 0; i < plan->nbodies; i++)
	{
		Render		r = {0};
		StringInfo	body = body_start(st->table);
		StringInfoData e;

		initStringInfo(&e);
		if (plan->op == PQ_OP_GET)
		{
			plan->nkeys = 1 + k.nrange;
			plan->key_names[0] = k.hash[0].name;
			plan->key_values[0] = linitial(hash_vals[0]);
			appendStringInfoString(body, ",\"Key\":{");
			escape_json(body, k.hash[0].name);
			appendStringInfo(body, ":%s", plan->key_values[0]->json);
			if (k.nrange == 1)
			{
				plan->key_names[1] = k.range[0].name;
				plan->key_values[1] = eq_value(linitial(range_conj), k.range[0].name);
				appendStringInfoChar(body, ',');
				escape_json(body, k.range[0].name);
				appendStringInfo(body, ":%s", plan->key_values[1]->json);
			}
			appendStringInfoChar(body, '}');
			if (render_projection(&r, &e, st))
				append_member(body, "ProjectionExpression", e.data);
			append_names_values(body, &r);
			plan->bodies[i] = body->data;
			continue;
		}
		if (st->index)
			append_member(body, "IndexName", st->index);
		if (plan->op == PQ_OP_QUERY)
		{
			List	   *filter = NIL;

			/* key condition: each HASH = its value, then the sort-key conjuncts */
			for (j = 0; j < k.nhash; j++)
			{
				PqNode	   *v = list_nth(hash_vals[j], j == 0 ? i : 0);

				if (j)
					appendStringInfoString(&e, " AND ");
				render_name(&r, &e, k.hash[j].name);
				appendStringInfoString(&e, " = ");
				render_value(&r, &e, v);
			}
			foreach(lc, range_conj)
			{
				appendStringInfoString(&e, " AND ");
				r.expr = "KeyConditionExpression";
				render_cond(&r, &e, lfirst(lc));
			}
			append_member(body, "KeyConditionExpression", e.data);
			foreach(lc, cs)
			{
				PqNode	   *c = lfirst(lc);

				for (j = 0; j < k.nhash; j++)
					if (c == hash_conj[j])
						break;
				if (j == k.nhash && !list_member_ptr(range_conj, c))
					filter = lappend(filter, c);
			}
			resetStringInfo(&e);
			r.expr = "FilterExpression";
			if (render_conjuncts(&r, &e, filter))
				append_member(body, "FilterExpression", e.data);
			if (!plan->forward)
				appendStringInfoString(body, ",\"ScanIndexForward\":false");
		}
		else if (st->where)
		{
			r.expr = "FilterExpression";
			render_cond(&r, &e, st->where);
			append_member(body, "FilterExpression", e.data);
		}
		resetStringInfo(&e);
		if (render_projection(&r, &e, st))
			append_member(body, "ProjectionExpression", e.data);
		append_names_values(body, &r);
		plan->bodies[i] = body->data;
		if (plan->nbodies == 1)
			note_value_params(plan, &r);
	}
}

/* ---------------------------------------------------------------- writes */

/* INSERT INTO t VALUE {...}: PutItem that refuses an existing item. */
static void
plan_insert(PqPlan *plan, PqStatement *st)
{
	DynTable   *t;
	StringInfo	body;
	char	   *item;
	const DynKeyAttr *ka[2];
	int			i;
	int			j;

	if (st->value->kind != PQ_TUPLE)
		DynValidationError("Unsupported format in item expression. Please use struct format {...} to express item values for insert statement.");
	item = constant_text(st->value);
	t = get_table(st->table);
	ka[0] = &t->hash;
	ka[1] = &t->range;
	for (i = 0; i < (t->has_range ? 2 : 1); i++)
	{
		PqNode	   *v = NULL;

		for (j = 0; j < st->value->nargs; j++)
			if (strcmp(st->value->keys[j], ka[i]->name) == 0)
				v = st->value->args[j];
		if (v == NULL)
			DynValidationError("Key attribute should be present in the item: Key %s", ka[i]->name);
		if (v->kind != PQ_VALUE || strcmp(v->vtype, DynTypeName(ka[i]->type)) != 0)
			DynValidationError("Key attribute's data type should match its data type in table's schema: Key %s",
							   ka[i]->name);
	}
	plan->op = PQ_OP_PUT;
	body = body_start(st->table);
	/* the item is {"M":{...}}: its members are the Item */
	appendStringInfoString(body, ",\"Item\":");
	appendBinaryStringInfo(body, item + strlen("{\"M\":"), strlen(item) - strlen("{\"M\":") - 1);
	appendStringInfoString(body, ",\"ConditionExpression\":\"attribute_not_exists(#n0)\",\"ExpressionAttributeNames\":{\"#n0\":");
	escape_json(body, t->hash.name);
	appendStringInfoChar(body, '}');
	plan->nbodies = 1;
	plan->bodies = palloc(sizeof(char *));
	plan->bodies[0] = body->data;
}

/* One SET value of an UPDATE: constant, path, a +/- b, list_append(...). */
static void
render_set_value(Render *r, StringInfo buf, PqNode *n)
{
	/* operator names as DynamoDB gives them (PLUS, NEG: PartiQL's AST node names) */
	static const char *const cmp_names[] = {"EQ", "NE", "LT", "LTE", "GT", "GTE"};
	int			i;

	switch (n->kind)
	{
		case PQ_PATH:
			render_path(r, buf, n);
			return;
		case PQ_ARITH:
			render_set_value(r, buf, n->args[0]);
			appendStringInfo(buf, " %c ", n->op);
			render_set_value(r, buf, n->args[1]);
			return;
		case PQ_FUNC:
			if (strcmp(n->name, "list_append") != 0 && strcmp(n->name, "if_not_exists") != 0)
				DynValidationError("Unrecognized function: %s", n->name);
			appendStringInfo(buf, "%s(", n->name);
			for (i = 0; i < n->nargs; i++)
			{
				if (i)
					appendStringInfoString(buf, ", ");
				render_set_value(r, buf, n->args[i]);
			}
			appendStringInfoChar(buf, ')');
			return;
		case PQ_IS:
			DynValidationError("IS operator is not supported in update expressions");
		case PQ_CMP:
		case PQ_BETWEEN:
		case PQ_IN:
		case PQ_AND:
		case PQ_OR:
		case PQ_NOT:
			DynValidationError("Unsupported operator in Update Expression. Operator: %s",
							   n->kind == PQ_CMP ? cmp_names[n->op] : n->kind == PQ_AND ? "AND" :
							   n->kind == PQ_OR ? "OR" : n->kind == PQ_NOT ? "NOT" :
							   n->kind == PQ_IN ? "IN" : "BETWEEN");
		default:
			render_value(r, buf, n);
	}
}

/* Same path? */
static bool
same_path(PqNode *a, PqNode *b)
{
	int			i;

	if (a->kind != PQ_PATH || b->kind != PQ_PATH || a->npath != b->npath)
		return false;
	for (i = 0; i < a->npath; i++)
	{
		if ((a->path[i].name == NULL) != (b->path[i].name == NULL))
			return false;
		if (a->path[i].name ? strcmp(a->path[i].name, b->path[i].name) != 0 : a->path[i].index != b->path[i].index)
			return false;
	}
	return true;
}

/* UPDATE t SET/REMOVE ... WHERE key [AND cond]: UpdateItem of an existing item. */
static void
plan_update(PqPlan *plan, PqStatement *st)
{
	DynTable   *t = get_table(st->table);
	PqNode	   *keyvals[2];
	List	   *rest = dml_keys(t, st->where, keyvals,
								"Where clause does not contain a mandatory equality on all key attributes");
	Render		r = {0};
	StringInfoData set,
				remove,
				add,
				del,
				e;
	StringInfo	body = body_start(st->table);
	int			i;

	initStringInfo(&set);
	initStringInfo(&remove);
	initStringInfo(&add);
	initStringInfo(&del);
	initStringInfo(&e);
	for (i = 0; i < st->nassign; i++)
	{
		PqAssign   *a = &st->assign[i];
		PqNode	   *v = a->value;

		if (a->remove)
		{
			appendStringInfoString(&remove, remove.len ? ", " : " REMOVE ");
			render_path(&r, &remove, a->target);
			continue;
		}
		if (v->kind == PQ_FUNC && (strcmp(v->name, "set_add") == 0 || strcmp(v->name, "set_delete") == 0))
		{
			const char *which = strcmp(v->name, "set_add") == 0 ? "ADD" : "DELETE";
			StringInfo	out = which[0] == 'A' ? &add : &del;
			PqNode	   *s;

			if (v->nargs != 2)
				DynValidationError("SET_%s must have exactly two arguments", which);
			if (!same_path(v->args[0], a->target))
				DynValidationError("The first argument to SET_%s must equal the assignment value", which);
			s = v->args[1];
			if (!(s->kind == PQ_BAG ||
				  (s->kind == PQ_VALUE && (strcmp(s->vtype, "SS") == 0 || strcmp(s->vtype, "NS") == 0 ||
										   strcmp(s->vtype, "BS") == 0))))
				DynValidationError("The second argument to SET_%s must be a value with type SET", which);
			appendStringInfoString(out, out->len ? ", " : (which[0] == 'A' ? " ADD " : " DELETE "));
			render_path(&r, out, a->target);
			appendStringInfoChar(out, ' ');
			render_value(&r, out, s);
			continue;
		}
		appendStringInfoString(&set, set.len ? ", " : "SET ");
		render_path(&r, &set, a->target);
		appendStringInfoString(&set, " = ");
		render_set_value(&r, &set, v);
	}
	appendStringInfoString(&set, remove.data);
	appendStringInfoString(&set, add.data);
	appendStringInfoString(&set, del.data);
	append_key(body, t, keyvals);
	append_member(body, "UpdateExpression", set.data[0] == ' ' ? set.data + 1 : set.data);
	/* UPDATE of a missing item fails: the item must exist */
	appendStringInfoString(&e, "attribute_exists(");
	render_name(&r, &e, t->hash.name);
	appendStringInfoChar(&e, ')');
	if (rest != NIL)
	{
		appendStringInfoString(&e, " AND ");
		r.expr = "ConditionExpression";
		render_conjuncts(&r, &e, rest);
	}
	append_member(body, "ConditionExpression", e.data);
	append_names_values(body, &r);
	plan->op = PQ_OP_UPDATE;
	switch (st->returning)
	{
		case PQ_RET_ALL_OLD:
			plan->return_values = "ALL_OLD";
			break;
		case PQ_RET_ALL_NEW:
			plan->return_values = "ALL_NEW";
			break;
		case PQ_RET_MODIFIED_OLD:
			plan->return_values = "UPDATED_OLD";
			break;
		case PQ_RET_MODIFIED_NEW:
			plan->return_values = "UPDATED_NEW";
			break;
		case PQ_RET_NONE:
			break;
	}
	plan->nbodies = 1;
	plan->bodies = palloc(sizeof(char *));
	plan->bodies[0] = body->data;
}

/* DELETE FROM t WHERE key [AND cond], or EXISTS(SELECT ... WHERE key AND cond). */
static void
plan_delete_or_check(PqPlan *plan, PqStatement *st)
{
	DynTable   *t = get_table(st->table);
	PqNode	   *keyvals[2];
	bool		check = st->kind == PQ_EXISTS;
	List	   *rest = dml_keys(t, st->where, keyvals,
								check ? "EXISTS() must contain a single item read with additional condition" :
								"Where clause does not contain a mandatory equality on all key attributes");
	Render		r = {0};
	StringInfoData e;
	StringInfo	body = body_start(st->table);

	initStringInfo(&e);
	append_key(body, t, keyvals);
	if (check)
	{
		appendStringInfoString(&e, "attribute_exists(");
		render_name(&r, &e, t->hash.name);
		appendStringInfoChar(&e, ')');
		if (rest != NIL)
			appendStringInfoString(&e, " AND ");
	}
	r.expr = "ConditionExpression";
	render_conjuncts(&r, &e, rest);
	if (e.len > 0)
		append_member(body, "ConditionExpression", e.data);
	append_names_values(body, &r);
	plan->op = check ? PQ_OP_CHECK : PQ_OP_DELETE;
	if (st->returning == PQ_RET_ALL_OLD)
		plan->return_values = "ALL_OLD";
	plan->nbodies = 1;
	plan->bodies = palloc(sizeof(char *));
	plan->bodies[0] = body->data;
}

/* Plan a parsed statement against the catalog; raises DynamoDB's errors. */
PqPlan *
PqPlanStatement(PqStatement *st, PqContext ctx, bool consistent_read)
{
	PqPlan	   *plan = palloc0(sizeof(PqPlan));

	plan->stmt = st;
	plan->table = st->table;
	plan->forward = true;

	/*
	 * The statement's IAM action, checked at its table lookup before any
	 * validation (DynamoDB's developer guide, "IAM security policies with
	 * PartiQL for DynamoDB": PartiQLSelect, PartiQLInsert, PartiQLUpdate,
	 * PartiQLDelete; an EXISTS reads).
	 */
	DynSecuritySetOperation(st->kind == PQ_INSERT ? "PartiQLInsert" :
							st->kind == PQ_UPDATE ? "PartiQLUpdate" :
							st->kind == PQ_DELETE ? "PartiQLDelete" : "PartiQLSelect");
	switch (st->kind)
	{
		case PQ_SELECT:
			plan->is_read = true;
			plan_select(plan, st, ctx, consistent_read);
			break;
		case PQ_INSERT:
			plan_insert(plan, st);
			break;
		case PQ_UPDATE:
			if (st->returning != PQ_RET_NONE && ctx == PQ_CTX_TRANSACTION)
				DynValidationError("Unsupported operation in transaction.");
			plan_update(plan, st);
			break;
		case PQ_DELETE:
			if (st->returning != PQ_RET_NONE && st->returning != PQ_RET_ALL_OLD)
			{
				static const char *const texts[] = {"", "ALL OLD *", "ALL NEW *", "MODIFIED OLD *", "MODIFIED NEW *"};

				DynValidationError("Invalid returning clause: RETURNING %s. Only RETURNING ALL OLD * is allowed in DELETE statements.",
								   texts[st->returning]);
			}
			if (st->returning != PQ_RET_NONE && ctx == PQ_CTX_TRANSACTION)
				DynValidationError("Unsupported operation in transaction.");
			plan_delete_or_check(plan, st);
			break;
		case PQ_EXISTS:
			if (ctx != PQ_CTX_TRANSACTION)
				DynValidationError("EXISTS can only be used in ExecuteTransaction write requests.");
			if (st->index)
				DynValidationError("Operations on indices are not supported in transactions");
			plan_delete_or_check(plan, st);
			break;
	}
	return plan;
}
