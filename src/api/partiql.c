/*
 * partiql.c — ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.
 *
 * Each statement is parsed and planned by src/partiql/ into the request of
 * an existing operation, which is then run through that operation's own
 * function (DynGetItem, DynQuery, DynScan, DynPutItem, DynUpdateItem,
 * DynDeleteItem, DynTransactWriteItems, DynTransactGetItems): validation,
 * capacity, LSIs, GSIs, streams and item-collection limits are the JSON
 * API's.  What PartiQL adds is here: paging across the Queries of an IN on
 * the partition key (NextToken), INSERT's DuplicateItemException, the
 * batch's per-statement Error entries (each statement runs in its own
 * subtransaction) and the transaction's DuplicateItem cancellation reason.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/base64.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "api/api.h"
#include "api/capacity.h"
#include "api/items.h"
#include "api/query.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "partiql/partiql.h"
#include "security/security.h"

#define MAX_STATEMENT_LENGTH 8192
#define MAX_BATCH_STATEMENTS 25
#define MAX_TRANSACT_STATEMENTS 100
#define PAGE_BYTES (1024 * 1024)
/*
 * A SELECT whose partition key is pinned by IN (or an OR of equalities) is
 * several Queries; "Results are returned in pages of up to 10 items"
 * (DynamoDB Developer Guide, PartiQL operators, IN), NextToken going on.
 */
#define IN_PAGE_ITEMS 10

/* ---------------------------------------------------------------- schemas */

static const char *const rvoccf_enum[] = {"ALL_OLD", "NONE", NULL};
static const RqField attrvalue_elem = {.type = RQ_ATTRVALUE};

#define STATEMENT_FIELD {.name = "Statement",.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = MAX_STATEMENT_LENGTH}
#define PARAMETERS_FIELD {.name = "Parameters",.type = RQ_LIST,.elem = &attrvalue_elem,.minlen = 1}
#define RVOCCF_FIELD {.name = "ReturnValuesOnConditionCheckFailure",.type = RQ_STRING,.enumvals = rvoccf_enum}
#define RCC_FIELD {.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum}

static const RqField execute_fields[] = {
	STATEMENT_FIELD,
	PARAMETERS_FIELD,
	{.name = "ConsistentRead",.type = RQ_BOOLEAN},
	{.name = "NextToken",.type = RQ_STRING,.minlen = 1,.maxlen = 32768},
	RCC_FIELD,
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1},
	RVOCCF_FIELD,
	{0}
};

static const RqField batch_statement_fields[] = {
	STATEMENT_FIELD,
	PARAMETERS_FIELD,
	{.name = "ConsistentRead",.type = RQ_BOOLEAN},
	RVOCCF_FIELD,
	{0}
};
static const RqField batch_statement_elem = {.type = RQ_STRUCT,.structname = "BatchStatementRequest",.fields = batch_statement_fields};
static const RqField batch_fields[] = {
	{.name = "Statements",.type = RQ_LIST,.elem = &batch_statement_elem,.notnull = true,.minlen = 1,
	.maxlen = MAX_BATCH_STATEMENTS},
	RCC_FIELD,
	{0}
};

static const RqField parameterized_fields[] = {
	STATEMENT_FIELD,
	PARAMETERS_FIELD,
	RVOCCF_FIELD,
	{0}
};
static const RqField parameterized_elem = {.type = RQ_STRUCT,.structname = "ParameterizedStatement",.fields = parameterized_fields};
static const RqField transaction_fields[] = {
	{.name = "TransactStatements",.type = RQ_LIST,.elem = &parameterized_elem,.notnull = true,.minlen = 1,
	.maxlen = MAX_TRANSACT_STATEMENTS},
	{.name = "ClientRequestToken",.type = RQ_STRING,.minlen = 1,.maxlen = 36},
	RCC_FIELD,
	{0}
};

/* ---------------------------------------------------------------- helpers */

/* The Parameters of a statement as typed JSON texts. */
static PqParam *
get_params(JsonbValue *jv, int *n)
{
	JsonbValue *elems;
	PqParam    *params;
	int			i;

	*n = 0;
	if (jv == NULL)
		return NULL;
	elems = RqArrayElems(jv, n);
	params = palloc0(sizeof(PqParam) * (*n + 1));
	for (i = 0; i < *n; i++)
	{
		JsonbValue *e = &elems[i];
		JsonbIterator *it;
		JsonbValue	v;

		params[i].type = "";
		if (e->type != jbvBinary)
		{
			params[i].json = "{}";
			continue;
		}
		params[i].json = JsonbToCString(NULL, e->val.binary.data, e->val.binary.len);
		it = JsonbIteratorInit(e->val.binary.data);
		if (JsonbIteratorNext(&it, &v, false) == WJB_BEGIN_OBJECT &&
			JsonbIteratorNext(&it, &v, true) == WJB_KEY)
			params[i].type = pnstrdup(v.val.string.val, v.val.string.len);
	}
	return params;
}

/* Parse and plan one statement object (Statement, Parameters). */
static PqPlan *
plan_statement(JsonbValue *obj, PqContext ctx, bool consistent)
{
	JsonbValue *s = RqGetJv(obj, "Statement");
	int			nparams;
	PqParam    *params = get_params(RqGetJv(obj, "Parameters"), &nparams);
	PqStatement *st = PqParse(s->val.string.val, s->val.string.len, params, nparams);

	return PqPlanStatement(st, ctx, consistent);
}

/* Run an operation on a request given as JSON text. */
static Jsonb *
run(DynOperation fn, const char *json)
{
	Jsonb	   *req = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));

	return fn(req);
}

/* The operation function of a planned statement. */
static DynOperation
plan_function(PqPlan *plan)
{
	switch (plan->op)
	{
		case PQ_OP_GET:
			return DynGetItem;
		case PQ_OP_QUERY:
			return DynQuery;	/* reads go through DynReadForPartiQL */
		case PQ_OP_SCAN:
			return DynScan;
		case PQ_OP_PUT:
			return DynPutItem;
		case PQ_OP_UPDATE:
			return DynUpdateItem;
		case PQ_OP_DELETE:
		case PQ_OP_CHECK:
			return DynDeleteItem;
	}
	return NULL;
}

/* Append ,"member":"value" when value is set. */
static void
add_string_member(StringInfo b, const char *member, const char *value)
{
	if (value == NULL)
		return;
	appendStringInfo(b, ",\"%s\":", member);
	escape_json(b, value);
}

/* Error data of the error being handled, copied; the error state is flushed. */
static ErrorData *
take_error(MemoryContext cxt)
{
	ErrorData  *ed;

	MemoryContextSwitchTo(cxt);
	ed = CopyErrorData();
	FlushErrorState();
	return ed;
}

/* Is an error one of dynindex's DynamoDB errors (SQLSTATE class YD)? */
static bool
is_dynamodb_error(ErrorData *ed)
{
	return ERRCODE_TO_CATEGORY(ed->sqlerrcode) == ERRCODE_TO_CATEGORY(MAKE_SQLSTATE('Y', 'D', '0', '0', '0'));
}

/* The DynamoDB text of an error's message (after "<Type>: "). */
static const char *
error_text(ErrorData *ed)
{
	const char *sep = strstr(ed->message, ": ");

	return sep ? sep + 2 : ed->message;
}

/* The error type name of an error's message (before ": "). */
static char *
error_type(ErrorData *ed)
{
	const char *sep = strstr(ed->message, ": ");

	return sep ? pnstrdup(ed->message, sep - ed->message) : pstrdup("InternalServerError");
}

pg_noreturn static void rethrow_as(ErrorData *ed, DynErrorCode code, const char *prefix);

/* Raise a DynamoDB error again with another type or a message prefix. */
static void
rethrow_as(ErrorData *ed, DynErrorCode code, const char *prefix)
{
	DynErrorWithDetail(code, ed->detail, "%s%s", prefix ? prefix : "", error_text(ed));
}

/* ---------------------------------------------------------------- capacity */

/* Push the sum of two ConsumedCapacity objects (numbers added member by member). */
static JsonbValue *
push_capacity_sum(JsonbParseState **st, JsonbContainer *a, JsonbContainer *b)
{
	JsonbIterator *it = JsonbIteratorInit(a);
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *bv;

	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	tok = JsonbIteratorNext(&it, &k, true);
	while ((tok = JsonbIteratorNext(&it, &k, true)) == WJB_KEY)
	{
		JsonbIteratorNext(&it, &v, true);
		pushJsonbValue(st, WJB_KEY, &k);
		bv = b ? getKeyJsonValueFromContainer(b, k.val.string.val, k.val.string.len, NULL) : NULL;
		if (v.type == jbvNumeric && bv && bv->type == jbvNumeric)
		{
			JsonbValue	sum;

			sum.type = jbvNumeric;
			sum.val.numeric = DatumGetNumeric(DirectFunctionCall2(numeric_add, NumericGetDatum(v.val.numeric),
																 NumericGetDatum(bv->val.numeric)));
			pushJsonbValue(st, WJB_VALUE, &sum);
		}
		else if (v.type == jbvBinary && JsonContainerIsObject(v.val.binary.data))
			push_capacity_sum(st, v.val.binary.data,
							  bv && bv->type == jbvBinary && JsonContainerIsObject(bv->val.binary.data) ?
							  bv->val.binary.data : NULL);
		else
			pushJsonbValue(st, WJB_VALUE, &v);
	}
	/* members only b has (an index read by a later Query) */
	if (b)
	{
		it = JsonbIteratorInit(b);
		tok = JsonbIteratorNext(&it, &k, true);
		while ((tok = JsonbIteratorNext(&it, &k, true)) == WJB_KEY)
		{
			JsonbIteratorNext(&it, &v, true);
			if (getKeyJsonValueFromContainer(a, k.val.string.val, k.val.string.len, NULL) == NULL)
			{
				pushJsonbValue(st, WJB_KEY, &k);
				pushJsonbValue(st, WJB_VALUE, &v);
			}
		}
	}
	return pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* acc + the ConsumedCapacity of a response (either may be NULL). */
static Jsonb *
add_capacity(Jsonb *acc, Jsonb *res)
{
	JsonbValue *c = getKeyJsonValueFromContainer(&res->root, "ConsumedCapacity", strlen("ConsumedCapacity"), NULL);
	JsonbParseState *st = NULL;

	if (c == NULL || c->type != jbvBinary)
		return acc;
	if (JsonContainerIsArray(c->val.binary.data))
	{
		/* a list of one entry per table (transactions): take the first */
		JsonbValue *e = getIthJsonbValueFromContainer(c->val.binary.data, 0);

		if (e == NULL || e->type != jbvBinary)
			return acc;
		c = e;
	}
	if (acc == NULL)
		return JsonbValueToJsonb(c);
	return JsonbValueToJsonb(push_capacity_sum(&st, &acc->root, c->val.binary.data));
}

/* ---------------------------------------------------------------- NextToken */

/* A hash of what a NextToken belongs to: the statement and its parameters. */
static uint32
request_hash(JsonbContainer *r)
{
	JsonbValue *s = RqGet(r, "Statement");
	JsonbValue *p = RqGet(r, "Parameters");
	uint32		h = hash_bytes((const unsigned char *) s->val.string.val, s->val.string.len);

	if (p && p->type == jbvBinary)
	{
		char	   *txt = JsonbToCString(NULL, p->val.binary.data, p->val.binary.len);

		h = hash_combine(h, hash_bytes((const unsigned char *) txt, strlen(txt)));
	}
	return h;
}

/* Encode a NextToken: which Query of the plan, and its ExclusiveStartKey. */
static char *
encode_token(uint32 hash, int query, Jsonb *lek)
{
	char	   *json = psprintf("{\"h\":%u,\"q\":%d,\"k\":%s}", hash, query,
								lek ? JsonbToCString(NULL, &lek->root, VARSIZE(lek)) : "null");
	int			len = strlen(json);
	char	   *out = palloc(pg_b64_enc_len(len) + 1);
	int			n = pg_b64_encode((const uint8 *) json, len, out, pg_b64_enc_len(len));

	if (n < 0)
		elog(ERROR, "could not encode a NextToken");
	out[n] = '\0';
	return out;
}

/* JSON text as jsonb, or NULL when it is not JSON (jsonb_in has no side effects). */
static Jsonb *
parse_json_or_null(const char *text)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *volatile jb = NULL;

	PG_TRY();
	{
		jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		jb = NULL;
	}
	PG_END_TRY();
	return jb;
}

/* Decode a NextToken; sets the Query index and start key text (or NULL). */
static void
decode_token(const char *token, uint32 hash, int nqueries, int *query, char **esk)
{
	int			len = strlen(token);
	char	   *buf = palloc(pg_b64_dec_len(len) + 1);
	int			n = pg_b64_decode(token, len, (uint8 *) buf, pg_b64_dec_len(len));
	Jsonb	   *jb;
	JsonbValue *h;
	JsonbValue *q;
	JsonbValue *k;

	if (n <= 0)
		DynValidationError("Invalid NextToken");
	buf[n] = '\0';
	jb = parse_json_or_null(buf);
	if (jb == NULL)
		DynValidationError("Invalid NextToken");
	if (!JB_ROOT_IS_OBJECT(jb))
		DynValidationError("Invalid NextToken");
	h = getKeyJsonValueFromContainer(&jb->root, "h", 1, NULL);
	q = getKeyJsonValueFromContainer(&jb->root, "q", 1, NULL);
	k = getKeyJsonValueFromContainer(&jb->root, "k", 1, NULL);
	if (h == NULL || q == NULL || h->type != jbvNumeric || q->type != jbvNumeric)
		DynValidationError("Invalid NextToken");
	if (DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(h->val.numeric))) != (int64) hash)
		DynValidationError("NextToken does not match request");
	*query = DatumGetInt32(DirectFunctionCall1(numeric_int4, NumericGetDatum(q->val.numeric)));
	if (*query < 0 || *query >= nqueries)
		DynValidationError("Invalid NextToken");
	*esk = NULL;
	if (k && k->type == jbvBinary)
		*esk = JsonbToCString(NULL, k->val.binary.data, k->val.binary.len);
}

/* ---------------------------------------------------------------- running one statement */

/* The root of a request as a JsonbValue (for RqGetJv). */
static JsonbValue *
root_value(Jsonb *req)
{
	JsonbValue *v = palloc(sizeof(JsonbValue));

	v->type = jbvBinary;
	v->val.binary.data = &req->root;
	v->val.binary.len = VARSIZE(req);
	return v;
}

/* The request of a read: the planned body plus ExecuteStatement's members. */
static char *
read_request(PqPlan *plan, int q, bool consistent, const char *rcc, int64 limit, const char *esk)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "{%s", plan->bodies[q]);
	if (consistent)
		appendStringInfoString(&b, ",\"ConsistentRead\":true");
	add_string_member(&b, "ReturnConsumedCapacity", rcc);
	if (limit > 0 && plan->op != PQ_OP_GET)
		appendStringInfo(&b, ",\"Limit\":" INT64_FORMAT, limit);
	if (esk)
		appendStringInfo(&b, ",\"ExclusiveStartKey\":%s", esk);
	appendStringInfoChar(&b, '}');
	return b.data;
}

/* The request of a write: the planned body plus ReturnValues and the others. */
static char *
write_request(PqPlan *plan, const char *rcc, const char *rvoccf)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "{%s", plan->bodies[0]);
	add_string_member(&b, "ReturnValues", plan->return_values);
	add_string_member(&b, "ReturnConsumedCapacity", rcc);
	add_string_member(&b, "ReturnValuesOnConditionCheckFailure", rvoccf);
	appendStringInfoChar(&b, '}');
	return b.data;
}

/*
 * Run a planned write.  INSERT's failed attribute_not_exists is DynamoDB's
 * DuplicateItemException (ExecuteStatement errors: "Duplicate primary key
 * exists in table").
 */
static Jsonb *
run_write(PqPlan *plan, const char *rcc, const char *rvoccf)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *json = write_request(plan, rcc, rvoccf);
	Jsonb	   *volatile res = NULL;

	if (plan->op != PQ_OP_PUT)
		return run(plan_function(plan), json);
	PG_TRY();
	{
		res = run(DynPutItem, json);
	}
	PG_CATCH();
	{
		ErrorData  *ed = take_error(cxt);

		if (ed->sqlerrcode == MAKE_SQLSTATE('Y', 'D', '0', '0', '4'))
			DynError(DYN_ERR_DUPLICATE_ITEM, "Duplicate primary key exists in table");
		ReThrowError(ed);
	}
	PG_END_TRY();
	return res;
}

/* What push_next_token needs. */
typedef struct TokenArg
{
	JsonbContainer *request;	/* hashed only when a token is made */
	int			query;
} TokenArg;

/* DynPartiQLRead callback: "NextToken" for a page of Query number ta->query. */
static void
push_next_token(JsonbParseState **st, void *arg, Jsonb *last_key)
{
	TokenArg   *ta = (TokenArg *) arg;

	RqPushKey(st, "NextToken");
	RqPushString(st, WJB_VALUE, encode_token(request_hash(ta->request), ta->query, last_key));
}

/* Run a planned Query or Scan page in ExecuteStatement's shape. */
static Jsonb *
run_read(PqPlan *plan, const char *json, DynPartiQLRead *pr)
{
	Jsonb	   *req = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));

	return DynReadForPartiQL(req, plan->op == PQ_OP_QUERY, pr);
}

/* A member of a response, or NULL. */
static JsonbValue *
member(Jsonb *res, const char *name)
{
	return getKeyJsonValueFromContainer(&res->root, name, strlen(name), NULL);
}

/* ---------------------------------------------------------------- projected paths */

/*
 * A SELECT's projection of a nested path answers the value at the path under
 * one attribute, named by the path's last element: SELECT m.a.b gives
 * {"b": ...}, not the item's {"m": {"M": {"a": ...}}} that the Query or Scan
 * the statement became returns (issue 23 item 6).  A path ending in a list
 * index gets PartiQL's implicit name of an unnamed projection, "_<n>" for the
 * n-th item of the SELECT list (docs/partiql.md).
 */

/* Does any item of the SELECT list name a nested path? */
static bool
select_reshapes(PqStatement *st)
{
	int			i;

	if (st == NULL || st->kind != PQ_SELECT || st->star)
		return false;
	for (i = 0; i < st->nproj; i++)
		if (st->proj[i]->kind == PQ_PATH && st->proj[i]->npath > 1)
			return true;
	return false;
}

/* Are the first n elements of two paths the same? */
static bool
same_prefix(PqNode *a, PqNode *b, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		PqPathElem *x = &a->path[i];
		PqPathElem *y = &b->path[i];

		if ((x->name == NULL) != (y->name == NULL))
			return false;
		if (x->name ? strcmp(x->name, y->name) != 0 : x->index != y->index)
			return false;
	}
	return true;
}

/*
 * Where the element path->path[d] (an index) stands in the list the read
 * returned: a ProjectionExpression keeps of a list only the elements it
 * names, in index order, so the position is the number of other indices
 * named at the same place that are smaller.
 */
static int
projected_position(PqStatement *st, PqNode *path, int d)
{
	int			want = path->path[d].index;
	int		   *seen = palloc(sizeof(int) * Max(st->nproj, 1));
	int			nseen = 0;
	int			i;
	int			j;

	for (i = 0; i < st->nproj; i++)
	{
		PqNode	   *q = st->proj[i];
		int			idx;
		bool		dup = false;

		if (q->kind != PQ_PATH || q->npath <= d || q->path[d].name != NULL || !same_prefix(q, path, d))
			continue;
		idx = q->path[d].index;
		if (idx >= want)
			continue;
		for (j = 0; j < nseen; j++)
			dup |= seen[j] == idx;
		if (!dup)
			seen[nseen++] = idx;
	}
	return nseen;
}

/* The value a projected item (a JSON object of AttributeValues) holds at a path, or NULL. */
static JsonbValue *
value_at_path(PqStatement *st, JsonbValue *item, PqNode *path)
{
	JsonbValue *cur = item;
	int			i;

	for (i = 0; i < path->npath; i++)
	{
		PqPathElem *pe = &path->path[i];
		JsonbValue *inner;

		if (cur == NULL || cur->type != jbvBinary)
			return NULL;
		if (i == 0)
		{
			cur = pe->name ? RqGetJv(cur, pe->name) : NULL;
			continue;
		}
		inner = RqGetJv(cur, pe->name ? "M" : "L");
		if (inner == NULL || inner->type != jbvBinary)
			return NULL;
		if (pe->name)
			cur = RqGetJv(inner, pe->name);
		else
		{
			int			n;
			JsonbValue *elems = RqArrayElems(inner, &n);
			int			pos = projected_position(st, path, i);

			cur = pos < n ? &elems[pos] : NULL;
		}
	}
	return cur;
}

/* A JSON object value of a jsonb document. */
static JsonbValue *
jsonb_value(Jsonb *jb)
{
	JsonbValue *v = palloc_object(JsonbValue);

	v->type = jbvBinary;
	v->val.binary.data = &jb->root;
	v->val.binary.len = VARSIZE(jb) - VARHDRSZ;
	return v;
}

/* An item as the SELECT list names its attributes (select_reshapes). */
static JsonbValue *
reshape_item(PqStatement *st, JsonbValue *item)
{
	JsonbParseState *ps = NULL;
	int			i;

	if (item == NULL || item->type != jbvBinary || !select_reshapes(st))
		return item;
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < st->nproj; i++)
	{
		PqNode	   *p = st->proj[i];
		PqPathElem *last;
		JsonbValue *v;

		if (p->kind != PQ_PATH)
			continue;
		v = value_at_path(st, item, p);
		if (v == NULL)
			continue;
		last = &p->path[p->npath - 1];
		RqPushKey(&ps, last->name ? last->name : psprintf("_%d", i + 1));
		pushJsonbValue(&ps, WJB_VALUE, v);
	}
	return jsonb_value(JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL)));
}

/*
 * A read's response with its items reshaped (reshape_item): "Items" and
 * "Item" by stmts[0], the "Item" of the n-th of "Responses" (a transaction's
 * reads) by stmts[n].
 */
static Jsonb *
reshape_response(PqStatement **stmts, int nstmts, Jsonb *res)
{
	JsonbParseState *ps = NULL;
	JsonbValue *keys;
	JsonbValue *vals;
	JsonbValue	root;
	int			n;
	int			i;
	bool		any = false;

	for (i = 0; i < nstmts; i++)
		any |= select_reshapes(stmts[i]);
	if (!any || !JB_ROOT_IS_OBJECT(res))
		return res;
	root = *jsonb_value(res);
	n = RqObjectMembers(&root, &keys, &vals);
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < n; i++)
	{
		const char *k = pnstrdup(keys[i].val.string.val, keys[i].val.string.len);
		bool		is_items = strcmp(k, "Items") == 0;
		bool		is_responses = strcmp(k, "Responses") == 0;

		pushJsonbValue(&ps, WJB_KEY, &keys[i]);
		if (strcmp(k, "Item") == 0)
			pushJsonbValue(&ps, WJB_VALUE, reshape_item(stmts[0], &vals[i]));
		else if ((is_items || is_responses) && vals[i].type == jbvBinary &&
				 JsonContainerIsArray(vals[i].val.binary.data))
		{
			int			ne;
			int			j;
			JsonbValue *elems = RqArrayElems(&vals[i], &ne);

			pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
			for (j = 0; j < ne; j++)
			{
				if (is_items)
					pushJsonbValue(&ps, WJB_ELEM, reshape_item(stmts[0], &elems[j]));
				else if (j < nstmts && elems[j].type == jbvBinary)
				{
					/* {"Item": ...} of a transaction's j-th read */
					JsonbValue *ek;
					JsonbValue *ev;
					int			nk = RqObjectMembers(&elems[j], &ek, &ev);
					int			m;

					pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
					for (m = 0; m < nk; m++)
					{
						pushJsonbValue(&ps, WJB_KEY, &ek[m]);
						if (ek[m].val.string.len == 4 && memcmp(ek[m].val.string.val, "Item", 4) == 0)
							pushJsonbValue(&ps, WJB_VALUE, reshape_item(stmts[j], &ev[m]));
						else
							pushJsonbValue(&ps, WJB_VALUE, &ev[m]);
					}
					pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
				}
				else
					pushJsonbValue(&ps, WJB_ELEM, &elems[j]);
			}
			pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
		}
		else
			pushJsonbValue(&ps, WJB_VALUE, &vals[i]);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- kept plans of SELECTs */

/*
 * The plans of SELECTs, kept per backend by statement text: a SELECT by full
 * key (GetItem), and a SELECT that is one Query or Scan whose `?` are all
 * whole values of its request (PqPlan.reusable).  The next use of the text
 * takes only its Parameters (and the literals): no parsing or planning, and
 * for a SELECT by key no GetItem request built and validated either (the key
 * is checked as GetItem checks it).  A plan is good while the catalog has not
 * changed (DynCatalogGeneration); the table is still looked up (and its
 * rights checked) on every use.  A use with NextToken, or that the plan
 * cannot answer the same way (ConsistentRead on an index, a Parameter that
 * is no object), is planned as a first use is.
 */
#define KEPT_PLANS 64

typedef struct KeptPlan
{
	MemoryContext cxt;			/* owns the entry; NULL: empty slot */
	uint32		hash;
	char	   *text;
	int			len;
	uint64		generation;		/* DynCatalogGeneration() when planned */
	PqOp		op;				/* PQ_OP_GET, PQ_OP_QUERY or PQ_OP_SCAN */
	int			nparams;		/* the statement's `?` */
	char	   *table;
	bool		on_index;
	Jsonb	   *request;		/* the planned request (first use's values) */
	/* PQ_OP_GET */
	int			nkeys;
	char	   *key_names[2];
	int			key_params[2];	/* the `?` of each key value (1, 2, ...); 0: a literal */
	/* PQ_OP_QUERY, PQ_OP_SCAN */
	int			nvalues;
	int		   *value_params;	/* the `?` of :vK, 0: a literal */
} KeptPlan;

static KeptPlan kept_plans[KEPT_PLANS];
static int	kept_plans_next = 0;

/* The kept plan of a statement text, or NULL. */
static KeptPlan *
kept_plan_lookup(const char *text, int len, uint32 hash)
{
	int			i;

	for (i = 0; i < KEPT_PLANS; i++)
	{
		KeptPlan   *kp = &kept_plans[i];

		if (kp->cxt && kp->hash == hash && kp->len == len && memcmp(kp->text, text, len) == 0)
			return kp;
	}
	return NULL;
}

/* Keep the plan of a SELECT by key or of a reusable one-body Query or Scan. */
static void
kept_plan_store(const char *text, int len, uint32 hash, PqPlan *plan)
{
	KeptPlan   *kp;
	MemoryContext cxt;
	MemoryContext old;
	char	   *json;
	int			i;

	if (plan->op != PQ_OP_GET && !(plan->nbodies == 1 && plan->reusable))
		return;
	/* a kept plan answers the read's items as they are: not for nested paths */
	if (select_reshapes(plan->stmt))
		return;
	kp = kept_plan_lookup(text, len, hash);
	if (kp == NULL)
	{
		kp = &kept_plans[kept_plans_next];
		kept_plans_next = (kept_plans_next + 1) % KEPT_PLANS;
	}
	if (kp->cxt)
		MemoryContextDelete(kp->cxt);
	memset(kp, 0, sizeof(*kp));
	json = psprintf("{%s}", plan->bodies[0]);
	cxt = AllocSetContextCreate(TopMemoryContext, "dynindex PartiQL kept plan", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	kp->hash = hash;
	kp->text = pnstrdup(text, len);
	kp->len = len;
	kp->generation = DynCatalogGeneration();
	kp->op = plan->op;
	kp->nparams = plan->stmt->nparams;
	kp->table = pstrdup(plan->table);
	kp->on_index = plan->stmt->index != NULL;
	kp->nkeys = plan->nkeys;
	for (i = 0; i < plan->nkeys; i++)
	{
		kp->key_names[i] = pstrdup(plan->key_names[i]);
		kp->key_params[i] = plan->key_values[i]->param;
	}
	kp->nvalues = plan->nvalues;
	kp->value_params = palloc0(sizeof(int) * (plan->nvalues + 1));
	for (i = 0; i < plan->nvalues; i++)
		kp->value_params[i] = plan->value_params[i];
	kp->request = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	MemoryContextSwitchTo(old);
	kp->cxt = cxt;
}

/* Push a string as a key (or value: tok). */
static void
push_string(JsonbParseState **st, JsonbIteratorToken tok, const char *s)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) s;
	k.val.string.len = strlen(s);
	pushJsonbValue(st, tok, &k);
}

/* Parameter number p (1, 2, ...) if it is an object, else NULL. */
static JsonbValue *
object_param(JsonbValue *params, int p)
{
	JsonbValue *v = &params[p - 1];

	return v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data) ? v : NULL;
}

/* A SELECT by key from its kept plan; NULL when the plan cannot answer. */
static Jsonb *
run_kept_get(KeptPlan *kp, JsonbContainer *r, JsonbValue *params, bool consistent)
{
	JsonbValue *keymap = getKeyJsonValueFromContainer(&kp->request->root, "Key", 3, NULL);
	JsonbParseState *st = NULL;
	JsonbValue	keyjv;
	Jsonb	   *key;
	DynTable   *t;
	int			i;

	t = DynItemsGetTable(kp->table);	/* as GetItem: rights, ResourceNotFoundException */
	if (kp->nkeys != (t->has_range ? 2 : 1) || strcmp(kp->key_names[0], t->hash.name) != 0 ||
		(t->has_range && strcmp(kp->key_names[1], t->range.name) != 0))
		return NULL;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < kp->nkeys; i++)
	{
		JsonbValue *v;

		if (kp->key_params[i] > 0)
		{
			if ((v = object_param(params, kp->key_params[i])) == NULL)
				return NULL;
		}
		else
			v = getKeyJsonValueFromContainer(keymap->val.binary.data, kp->key_names[i],
											 strlen(kp->key_names[i]), NULL);
		push_string(&st, WJB_KEY, kp->key_names[i]);
		pushJsonbValue(&st, WJB_VALUE, v);
	}
	key = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	keyjv.type = jbvBinary;
	keyjv.val.binary.data = &key->root;
	keyjv.val.binary.len = VARSIZE(key) - VARHDRSZ;
	return DynGetItemByKeyForPartiQL(t, &keyjv, &kp->request->root, consistent, r);
}

/* A one-body Query or Scan from its kept plan: the request with this use's values. */
static Jsonb *
run_kept_read(KeptPlan *kp, JsonbContainer *r, JsonbValue *params, bool consistent)
{
	JsonbParseState *st = NULL;
	JsonbIterator *it = JsonbIteratorInit(&kp->request->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	const char *rcc = RqGetString(r, "ReturnConsumedCapacity");
	int64		limit = RqGetInt(r, "Limit", 0);
	TokenArg	ta = {r, 0};
	DynPartiQLRead pr = {.push_token = push_next_token,.arg = &ta};
	JsonbValue *res = NULL;
	int			i;

	if (consistent && kp->on_index)
		return NULL;			/* the planner's message for a GSI */
	for (i = 0; i < kp->nvalues; i++)
		if (kp->value_params[i] > 0 && object_param(params, kp->value_params[i]) == NULL)
			return NULL;
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY && v.val.string.len == strlen("ExpressionAttributeValues") &&
			memcmp(v.val.string.val, "ExpressionAttributeValues", v.val.string.len) == 0)
		{
			JsonbIterator *vit;
			JsonbValue	vv;

			pushJsonbValue(&st, WJB_KEY, &v);
			tok = JsonbIteratorNext(&it, &v, true);
			vit = JsonbIteratorInit(v.val.binary.data);
			while ((tok = JsonbIteratorNext(&vit, &vv, true)) != WJB_DONE)
			{
				if (tok == WJB_KEY)
				{
					/* ":vK": this use's parameter, or the literal */
					int			k = atoi(pnstrdup(vv.val.string.val + 2, vv.val.string.len - 2));

					pushJsonbValue(&st, WJB_KEY, &vv);
					JsonbIteratorNext(&vit, &vv, true);
					if (k >= 0 && k < kp->nvalues && kp->value_params[k] > 0)
						pushJsonbValue(&st, WJB_VALUE, &params[kp->value_params[k] - 1]);
					else
						pushJsonbValue(&st, WJB_VALUE, &vv);
					continue;
				}
				pushJsonbValue(&st, tok, NULL);
			}
			continue;
		}
		res = pushJsonbValue(&st, tok, tok == WJB_BEGIN_OBJECT || tok == WJB_END_OBJECT ? NULL : &v);
		if (tok == WJB_BEGIN_OBJECT)
		{
			JsonbValue	b;

			/* this use's members (the object's keys are sorted when it ends) */
			if (consistent)
			{
				push_string(&st, WJB_KEY, "ConsistentRead");
				b.type = jbvBool;
				b.val.boolean = true;
				pushJsonbValue(&st, WJB_VALUE, &b);
			}
			if (rcc)
			{
				push_string(&st, WJB_KEY, "ReturnConsumedCapacity");
				push_string(&st, WJB_VALUE, rcc);
			}
			if (limit > 0)
			{
				push_string(&st, WJB_KEY, "Limit");
				b.type = jbvNumeric;
				b.val.numeric = int64_to_numeric(limit);
				pushJsonbValue(&st, WJB_VALUE, &b);
			}
		}
	}
	return DynReadForPartiQL(JsonbValueToJsonb(res), kp->op == PQ_OP_QUERY, &pr);
}

/* Answer from a kept plan; NULL when it cannot (the caller plans). */
static Jsonb *
run_kept(KeptPlan *kp, JsonbContainer *r, bool consistent)
{
	JsonbValue *pv = RqGet(r, "Parameters");
	JsonbValue *params = NULL;
	int			nparams = 0;

	if (kp->generation != DynCatalogGeneration())
		return NULL;
	if (pv)
		params = RqArrayElems(pv, &nparams);
	if (kp->nparams > nparams)
		DynValidationError("Number of parameters in request and statement don't match.");
	/* the statement's IAM action, as the planner names it (src/partiql/plan.c) */
	DynSecuritySetOperation("PartiQLSelect");
	if (kp->op == PQ_OP_GET)
		return run_kept_get(kp, r, params, consistent);
	return run_kept_read(kp, r, params, consistent);
}

/* ExecuteStatement */
Jsonb *
DynExecuteStatement(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	bool		consistent;
	const char *rcc;
	PqPlan	   *plan;
	List	   *items = NIL;
	Jsonb	   *cap = NULL;
	char	   *next = NULL;
	JsonbValue *lek = NULL;
	JsonbParseState *st = NULL;
	ListCell   *lc;
	JsonbValue *stmt;
	uint32		text_hash;

	RqValidate(req, execute_fields);
	consistent = RqGetBool(r, "ConsistentRead", false);
	stmt = RqGet(r, "Statement");
	text_hash = hash_bytes((const unsigned char *) stmt->val.string.val, stmt->val.string.len);
	if (RqGet(r, "NextToken") == NULL)
	{
		KeptPlan   *kp = kept_plan_lookup(stmt->val.string.val, stmt->val.string.len, text_hash);
		Jsonb	   *res = kp ? run_kept(kp, r, consistent) : NULL;

		if (res)
			return res;
	}
	rcc = RqGetString(r, "ReturnConsumedCapacity");
	plan = plan_statement(root_value(req), PQ_CTX_STATEMENT, consistent);

	if (plan->is_read)
	{
		uint32		h = 0;
		int64		limit = RqGetInt(r, "Limit", 0);
		int64		remaining = limit;
		int64		bytes = 0;
		int			q = 0;
		char	   *esk = NULL;
		char	   *token = RqGetString(r, "NextToken");

		if (token || plan->nbodies > 1)
			h = request_hash(r);
		if (token)
			decode_token(token, h, plan->nbodies, &q, &esk);
		if (plan->op == PQ_OP_GET)
		{
			Jsonb	   *res = run(DynGetItemForPartiQL, read_request(plan, 0, consistent, rcc, 0, NULL));

			kept_plan_store(stmt->val.string.val, stmt->val.string.len, text_hash, plan);
			return reshape_response(&plan->stmt, 1, res);
		}
		if (plan->nbodies == 1)
		{
			/* one Query or Scan: its page is the answer */
			TokenArg	ta = {r, 0};
			DynPartiQLRead pr = {.push_token = push_next_token,.arg = &ta};
			Jsonb	   *res = run_read(plan, read_request(plan, 0, consistent, rcc, limit, esk), &pr);

			if (token == NULL)
				kept_plan_store(stmt->val.string.val, stmt->val.string.len, text_hash, plan);
			return reshape_response(&plan->stmt, 1, res);
		}
		/* several Queries: a page of at most IN_PAGE_ITEMS items, 1 MB and Limit in all */
		for (; q < plan->nbodies; q++)
		{
			DynPartiQLRead pr = {.max_items = IN_PAGE_ITEMS - list_length(items),.max_bytes = PAGE_BYTES - bytes};
			Jsonb	   *res;
			JsonbValue *v;

			res = run_read(plan, read_request(plan, q, consistent, rcc, remaining, esk), &pr);
			esk = NULL;
			cap = add_capacity(cap, res);
			v = member(res, "Items");
			if (v && v->type == jbvBinary)
			{
				JsonbIterator *it = JsonbIteratorInit(v->val.binary.data);
				JsonbValue	e;
				JsonbIteratorToken tok;

				while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
					if (tok == WJB_ELEM)
					{
						JsonbValue *copy = palloc(sizeof(JsonbValue));

						*copy = e;
						items = lappend(items, reshape_item(plan->stmt, copy));
					}
			}
			if (limit > 0)
				remaining -= pr.scanned;
			lek = member(res, "LastEvaluatedKey");
			if (lek)
			{
				next = encode_token(h, q, JsonbValueToJsonb(lek));
				break;
			}
			bytes += pr.bytes;
			if (q + 1 < plan->nbodies && ((limit > 0 && remaining <= 0) || bytes >= PAGE_BYTES ||
										  list_length(items) >= IN_PAGE_ITEMS))
			{
				next = encode_token(h, q + 1, NULL);
				break;
			}
		}
	}
	else
	{
		Jsonb	   *res = run_write(plan, rcc, RqGetString(r, "ReturnValuesOnConditionCheckFailure"));
		JsonbValue *attrs = member(res, "Attributes");

		cap = add_capacity(cap, res);
		if (attrs)
			items = lappend(items, attrs);
	}

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Items");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, items)
		pushJsonbValue(&st, WJB_ELEM, lfirst(lc));
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (next)
	{
		RqPushKey(&st, "NextToken");
		RqPushString(&st, WJB_VALUE, next);
	}
	if (lek)
	{
		RqPushKey(&st, "LastEvaluatedKey");
		pushJsonbValue(&st, WJB_VALUE, lek);
	}
	if (cap)
	{
		RqPushKey(&st, "ConsumedCapacity");
		RqPushJsonb(&st, WJB_VALUE, cap);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- BatchExecuteStatement */

/* One statement of a batch. */
typedef struct BatchEntry
{
	JsonbValue *spec;
	PqStatement *stmt;			/* parsed, or NULL with error set */
	ErrorData  *error;
	char	   *table;
	Jsonb	   *result;			/* the operation's response */
} BatchEntry;

/* Parse one statement; a parse error is kept (parsing has no side effects). */
static void
batch_parse(BatchEntry *e)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		JsonbValue *s = RqGetJv(e->spec, "Statement");
		int			nparams;
		PqParam    *params = get_params(RqGetJv(e->spec, "Parameters"), &nparams);

		e->stmt = PqParse(s->val.string.val, s->val.string.len, params, nparams);
		e->table = e->stmt->table;
	}
	PG_CATCH();
	{
		ErrorData  *ed = take_error(cxt);

		if (!is_dynamodb_error(ed))
			ReThrowError(ed);
		e->error = ed;
	}
	PG_END_TRY();
}

/* Plan and run one statement of a batch in a subtransaction of its own. */
static void
batch_run(BatchEntry *e, const char *rcc)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		bool		consistent = false;
		JsonbValue *cr = RqGetJv(e->spec, "ConsistentRead");
		PqPlan	   *plan;

		if (cr && cr->type == jbvBool)
			consistent = cr->val.boolean;
		/* parsed trees are shared by equal texts (parse.c's cache): bind this one's parameters again */
		plan = plan_statement(e->spec, PQ_CTX_BATCH, consistent);
		if (plan->is_read)
			e->result = run(plan_function(plan), read_request(plan, 0, consistent, rcc, 0, NULL));
		else
		{
			JsonbValue *rv = RqGetJv(e->spec, "ReturnValuesOnConditionCheckFailure");

			e->result = run_write(plan, rcc,
								  rv && rv->type == jbvString ? pnstrdup(rv->val.string.val, rv->val.string.len) : NULL);
		}
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *ed = take_error(cxt);

		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (!is_dynamodb_error(ed))
			ReThrowError(ed);
		e->error = ed;
	}
	PG_END_TRY();
}

/* A batch Error entry: Code (the type without "Exception"), Message, Item. */
static void
push_batch_error(JsonbParseState **st, ErrorData *ed)
{
	char	   *type = error_type(ed);
	int			len = strlen(type);
	Jsonb	   *detail = ed->detail ? parse_json_or_null(ed->detail) : NULL;
	JsonbValue *item;

	if (strcmp(type, "ValidationException") == 0)
		type = "ValidationError";
	else if (len > 9 && strcmp(type + len - 9, "Exception") == 0)
		type[len - 9] = '\0';
	RqPushKey(st, "Error");
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(st, "Code");
	RqPushString(st, WJB_VALUE, type);
	RqPushKey(st, "Message");
	RqPushString(st, WJB_VALUE, error_text(ed));
	if (detail && JB_ROOT_IS_OBJECT(detail) && (item = member(detail, "Item")) != NULL)
	{
		RqPushKey(st, "Item");
		pushJsonbValue(st, WJB_VALUE, item);
	}
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Add a response's ConsumedCapacity to the per-table list. */
static void
add_table_capacity(List **caps, Jsonb *res)
{
	Jsonb	   *c = add_capacity(NULL, res);
	ListCell   *lc;
	JsonbValue *name;

	if (c == NULL)
		return;
	name = member(c, "TableName");
	foreach(lc, *caps)
	{
		Jsonb	   *other = lfirst(lc);
		JsonbValue *oname = member(other, "TableName");

		if (name && oname && name->type == jbvString && oname->type == jbvString &&
			name->val.string.len == oname->val.string.len &&
			memcmp(name->val.string.val, oname->val.string.val, name->val.string.len) == 0)
		{
			lfirst(lc) = add_capacity(other, res);
			return;
		}
	}
	*caps = lappend(*caps, c);
}

/* Push "ConsumedCapacity": [...] when there is any. */
static void
push_capacity_list(JsonbParseState **st, List *caps)
{
	ListCell   *lc;

	if (caps == NIL)
		return;
	RqPushKey(st, "ConsumedCapacity");
	pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, caps)
		RqPushJsonb(st, WJB_ELEM, lfirst(lc));
	pushJsonbValue(st, WJB_END_ARRAY, NULL);
}

/* BatchExecuteStatement */
Jsonb *
DynBatchExecuteStatement(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *elems;
	int			n;
	int			i;
	BatchEntry *entries;
	bool		reads = false;
	bool		writes = false;
	const char *rcc;
	List	   *caps = NIL;
	JsonbParseState *st = NULL;

	RqValidate(req, batch_fields);
	rcc = RqGetString(r, "ReturnConsumedCapacity");
	elems = RqArrayElems(RqGet(r, "Statements"), &n);
	entries = palloc0(sizeof(BatchEntry) * n);
	for (i = 0; i < n; i++)
	{
		entries[i].spec = &elems[i];
		batch_parse(&entries[i]);
		if (entries[i].stmt)
		{
			if (entries[i].stmt->kind == PQ_SELECT)
				reads = true;
			else
				writes = true;
		}
	}
	if (reads && writes)
		DynValidationError("Unsupported operation: Batch must consist of either all read statements or all write statements");
	for (i = 0; i < n; i++)
		if (entries[i].stmt)
			batch_run(&entries[i], rcc);

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Responses");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
	{
		BatchEntry *e = &entries[i];
		JsonbValue *item;

		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		if (e->error)
			push_batch_error(&st, e->error);
		if (e->table)
		{
			RqPushKey(&st, "TableName");
			RqPushString(&st, WJB_VALUE, e->table);
		}
		if (e->result)
		{
			if ((item = member(e->result, "Item")) != NULL)
			{
				RqPushKey(&st, "Item");
				pushJsonbValue(&st, WJB_VALUE, reshape_item(e->stmt, item));
			}
			add_table_capacity(&caps, e->result);
		}
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	push_capacity_list(&st, caps);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- ExecuteTransaction */

/*
 * Rewrite a TransactionCanceledException of the TransactWriteItems request:
 * an INSERT's failed attribute_not_exists is reason DuplicateItem.
 */
static void
rethrow_cancellation(ErrorData *ed, PqPlan **plans, int n)
{
	Jsonb	   *detail = ed->detail ? parse_json_or_null(ed->detail) : NULL;
	JsonbValue *reasons = detail && JB_ROOT_IS_OBJECT(detail) ? member(detail, "CancellationReasons") : NULL;
	JsonbParseState *st = NULL;
	StringInfoData msg;
	Jsonb	   *out;
	int			i;

	if (reasons == NULL || reasons->type != jbvBinary)
		ReThrowError(ed);
	initStringInfo(&msg);
	appendStringInfoString(&msg, "Transaction cancelled, please refer cancellation reasons for specific reasons [");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "CancellationReasons");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
	{
		JsonbValue *reason = getIthJsonbValueFromContainer(reasons->val.binary.data, i);
		JsonbValue *code = reason && reason->type == jbvBinary ?
			getKeyJsonValueFromContainer(reason->val.binary.data, "Code", 4, NULL) : NULL;
		char	   *c = code && code->type == jbvString ? pnstrdup(code->val.string.val, code->val.string.len) : "None";

		if (plans[i]->op == PQ_OP_PUT && strcmp(c, "ConditionalCheckFailed") == 0)
		{
			c = "DuplicateItem";
			pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
			RqPushKey(&st, "Code");
			RqPushString(&st, WJB_VALUE, c);
			RqPushKey(&st, "Message");
			RqPushString(&st, WJB_VALUE, "Duplicate primary key exists in table");
			pushJsonbValue(&st, WJB_END_OBJECT, NULL);
		}
		else if (reason)
			pushJsonbValue(&st, WJB_ELEM, reason);
		appendStringInfo(&msg, "%s%s", i ? ", " : "", c);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	out = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	appendStringInfoChar(&msg, ']');
	DynErrorWithDetail(DYN_ERR_TRANSACTION_CANCELED, JsonbToCString(NULL, &out->root, VARSIZE(out)), "%s", msg.data);
}

/* ExecuteTransaction */
Jsonb *
DynExecuteTransaction(Jsonb *req)
{
	MemoryContext cxt = CurrentMemoryContext;
	JsonbContainer *r = &req->root;
	JsonbValue *elems;
	int			n;
	int			i;
	PqPlan	  **plans;
	volatile bool reads = false;
	volatile bool writes = false;
	const char *rcc;
	StringInfoData b;
	Jsonb	   *volatile res = NULL;

	RqValidate(req, transaction_fields);
	rcc = RqGetString(r, "ReturnConsumedCapacity");
	elems = RqArrayElems(RqGet(r, "TransactStatements"), &n);
	plans = palloc0(sizeof(PqPlan *) * n);
	for (i = 0; i < n; i++)
	{
		PG_TRY();
		{
			plans[i] = plan_statement(&elems[i], PQ_CTX_TRANSACTION, false);
		}
		PG_CATCH();
		{
			ErrorData  *ed = take_error(cxt);

			if (ed->sqlerrcode != MAKE_SQLSTATE('Y', 'D', '0', '0', '1'))
				ReThrowError(ed);
			rethrow_as(ed, DYN_ERR_VALIDATION, psprintf("Validation failed in TransactStatements[%d]: ", i));
		}
		PG_END_TRY();
		if (plans[i]->is_read)
			reads = true;
		else
			writes = true;
	}
	if (reads && writes)
		DynValidationError("ExecuteTransaction API does not support both read and write operations in the same request.");

	initStringInfo(&b);
	appendStringInfoString(&b, "{\"TransactItems\":[");
	for (i = 0; i < n; i++)
	{
		static const char *const actions[] = {"Get", "", "", "Put", "Update", "Delete", "ConditionCheck"};
		JsonbValue *rv = RqGetJv(&elems[i], "ReturnValuesOnConditionCheckFailure");

		appendStringInfo(&b, "%s{\"%s\":{%s", i ? "," : "", actions[plans[i]->op], plans[i]->bodies[0]);
		if (rv && rv->type == jbvString && !reads)
			add_string_member(&b, "ReturnValuesOnConditionCheckFailure",
							  pnstrdup(rv->val.string.val, rv->val.string.len));
		appendStringInfoString(&b, "}}");
	}
	appendStringInfoChar(&b, ']');
	add_string_member(&b, "ReturnConsumedCapacity", rcc);
	if (writes)
		add_string_member(&b, "ClientRequestToken", RqGetString(r, "ClientRequestToken"));
	appendStringInfoChar(&b, '}');

	if (reads)
	{
		PqStatement **stmts = palloc(sizeof(PqStatement *) * n);

		for (i = 0; i < n; i++)
			stmts[i] = plans[i]->stmt;
		return reshape_response(stmts, n, run(DynTransactGetItems, b.data));
	}
	PG_TRY();
	{
		res = run(DynTransactWriteItems, b.data);
	}
	PG_CATCH();
	{
		ErrorData  *ed = take_error(cxt);

		if (ed->sqlerrcode != MAKE_SQLSTATE('Y', 'D', '0', '0', '5'))
			ReThrowError(ed);
		rethrow_cancellation(ed, plans, n);
	}
	PG_END_TRY();
	return res;
}
