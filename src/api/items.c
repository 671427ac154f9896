/*
 * items.c — PutItem, GetItem, DeleteItem (their writes go through
 * src/write/, the one write path).
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/items.h"
#include "common/errors.h"
#include "expr/expr.h"
#include "expr/expr_ast.h"
#include "indexes/indexes.h"

/* ---------------------------------------------------------------- schemas */

static const char *const return_values_on_ccf_enum[] = {"ALL_OLD", "NONE", NULL};
static const char *const conditional_operator_enum[] = {"OR", "AND", NULL};
static const char *const comparison_operator_enum[] = {
	"EQ", "NE", "IN", "LE", "LT", "GE", "GT", "BETWEEN", "NOT_NULL", "NULL", "CONTAINS",
	"NOT_CONTAINS", "BEGINS_WITH", NULL
};

static const RqField attrvalue_list_elem = {.type = RQ_ATTRVALUE};
static const RqField expected_fields[] = {
	{.name = "Value",.type = RQ_ATTRVALUE},
	{.name = "Exists",.type = RQ_BOOLEAN},
	{.name = "ComparisonOperator",.type = RQ_STRING,.enumvals = comparison_operator_enum},
	{.name = "AttributeValueList",.type = RQ_LIST,.elem = &attrvalue_list_elem},
	{0}
};
static const RqField expected_elem = {.type = RQ_STRUCT,.structname = "ExpectedAttributeValue",.fields = expected_fields};
static const RqField string_elem = {.type = RQ_STRING};

#define TABLE_NAME_FIELD RQ_TABLE_NAME_OR_ARN
#define EXPR_NAMES_FIELD {.name = "ExpressionAttributeNames",.type = RQ_MAP,.elem = &string_elem}
#define EXPR_VALUES_FIELD {.name = "ExpressionAttributeValues",.type = RQ_MAP,.elem = &attrvalue_list_elem}
#define CAPACITY_FIELD {.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum}

static const RqField put_item_fields[] = {
	TABLE_NAME_FIELD,
	{.name = "Item",.type = RQ_MAP,.elem = &attrvalue_list_elem,.notnull = true},
	{.name = "Expected",.type = RQ_MAP,.elem = &expected_elem},
	{.name = "ReturnValues",.type = RQ_STRING,.enumvals = RqReturnValuesEnum},
	CAPACITY_FIELD,
	{.name = "ReturnItemCollectionMetrics",.type = RQ_STRING,.enumvals = RqReturnItemCollectionMetricsEnum},
	{.name = "ConditionalOperator",.type = RQ_STRING,.enumvals = conditional_operator_enum},
	{.name = "ConditionExpression",.type = RQ_STRING},
	EXPR_NAMES_FIELD,
	EXPR_VALUES_FIELD,
	{.name = "ReturnValuesOnConditionCheckFailure",.type = RQ_STRING,.enumvals = return_values_on_ccf_enum},
	{0}
};

static const RqField get_item_fields[] = {
	TABLE_NAME_FIELD,
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_list_elem,.notnull = true},
	{.name = "AttributesToGet",.type = RQ_LIST,.elem = &RqAttributeNameElem,.minlen = 1},
	{.name = "ConsistentRead",.type = RQ_BOOLEAN},
	CAPACITY_FIELD,
	{.name = "ProjectionExpression",.type = RQ_STRING},
	EXPR_NAMES_FIELD,
	{0}
};

static const RqField delete_item_fields[] = {
	TABLE_NAME_FIELD,
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_list_elem,.notnull = true},
	{.name = "Expected",.type = RQ_MAP,.elem = &expected_elem},
	{.name = "ConditionalOperator",.type = RQ_STRING,.enumvals = conditional_operator_enum},
	{.name = "ReturnValues",.type = RQ_STRING,.enumvals = RqReturnValuesEnum},
	CAPACITY_FIELD,
	{.name = "ReturnItemCollectionMetrics",.type = RQ_STRING,.enumvals = RqReturnItemCollectionMetricsEnum},
	{.name = "ConditionExpression",.type = RQ_STRING},
	EXPR_NAMES_FIELD,
	EXPR_VALUES_FIELD,
	{.name = "ReturnValuesOnConditionCheckFailure",.type = RQ_STRING,.enumvals = return_values_on_ccf_enum},
	{0}
};

/* ---------------------------------------------------------------- item collections */

/* Push "ItemCollectionMetrics" when asked for (SIZE) and the table has an LSI. */
void
DynPushItemCollectionMetrics(JsonbParseState **st, JsonbContainer *r, DynTable *t, const DynKey *key)
{
	if (!RqStringIs(r, "ReturnItemCollectionMetrics", "SIZE") || !DynTableHasLsi(t))
		return;
	RqPushKey(st, "ItemCollectionMetrics");
	DynCollectionPushMetrics(st, t, key);
}

/* ---------------------------------------------------------------- keys */

/* The table of an item operation (request validation, and its envelope, end here). */
DynTable *
DynItemsGetTable(const char *name)
{
	DynTable   *t;

	DynValidationEnvelope = false;
	t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found");
	return t;
}

/* Parse and check a Key parameter. */
void
DynItemsParseKey(DynTable *t, JsonbValue *keyjv, DynKey *key)
{
	DynWriteKeyFromMap(t, RqParseItem(keyjv), key);
}

/* ---------------------------------------------------------------- condition failures */

/* Raise ConditionalCheckFailedException. */
void
DynItemsConditionFailed(const DynValue *old, bool return_old)
{
	DynCapacityCountFailure(old);	/* metrics: failed writes consume too */
	if ((return_old && old) || DynCapacityFailureArmed())
	{
		JsonbParseState *st = NULL;
		Jsonb	   *detail;

		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		if (return_old && old)
		{
			RqPushKey(&st, "Item");
			RqPushJsonb(&st, WJB_VALUE, DynItemToJsonb(old));
		}
		DynCapacityPushFailure(&st, old);
		detail = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
		DynErrorWithDetail(DYN_ERR_CONDITIONAL_CHECK_FAILED,
						   JsonbToCString(NULL, &detail->root, VARSIZE(detail)),
						   "The conditional request failed");
	}
	DynError(DYN_ERR_CONDITIONAL_CHECK_FAILED, "The conditional request failed");
}

/* ---------------------------------------------------------------- conditions */

/* Parsed write condition of a request (expression or Expected), or NULL. */
typedef struct WriteCondition
{
	DynExpr    *cond;
	bool		return_old_on_failure;
} WriteCondition;

/* Parse ConditionExpression/Expected and names/values of a write request. */
static void
parse_write_condition(JsonbContainer *r, WriteCondition *wc)
{
	JsonbValue *names = RqGet(r, "ExpressionAttributeNames");
	JsonbValue *values = RqGet(r, "ExpressionAttributeValues");
	JsonbValue *condexpr = RqGet(r, "ConditionExpression");
	JsonbValue *expected = RqGet(r, "Expected");
	DynParamPresence exprs[1] = {{"ConditionExpression", condexpr != NULL}};
	JsonbValue *condop = RqGet(r, "ConditionalOperator");
	DynParamPresence legacy[2] = {{"Expected", expected != NULL},
	{"ConditionalOperator", condop != NULL}};

	DynExprCheckParamMix(exprs, 1, legacy, 2, names != NULL, values != NULL);
	DynLegacyCheckConditionalOperator(condop, expected);
	wc->cond = NULL;
	wc->return_old_on_failure = RqStringIs(r, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	if (condexpr)
	{
		DynExprContext *ctx = DynExprContextCreate(names, values);

		wc->cond = DynParseCondition(ctx, "ConditionExpression",
									 condexpr->val.string.val, condexpr->val.string.len);
		DynExprCheckUnused(ctx);
	}
	else if (expected)
		wc->cond = DynLegacyExpected(expected, RqGetString(r, "ConditionalOperator"));
	else if (names || values)
	{
		DynExprContext *ctx = DynExprContextCreate(names, values);

		DynExprCheckUnused(ctx);
	}
}

/* Check the condition against the current item. */
static void
check_condition(const WriteCondition *wc, const DynValue *old)
{
	if (wc->cond && !DynEvalCondition(wc->cond, old))
		DynItemsConditionFailed(old, wc->return_old_on_failure);
}

/* ---------------------------------------------------------------- PutItem */

typedef struct PutArgs
{
	DynValue   *item;
	WriteCondition wc;
} PutArgs;

/* PutItem's mutation: check the condition, return the new item. */
static DynValue *
put_mutator(DynTable *t, const DynValue *old, void *arg)
{
	PutArgs    *pa = (PutArgs *) arg;

	check_condition(&pa->wc, old);
	return pa->item;
}

/* Build {"Attributes": item} (when present) plus ConsumedCapacity and ItemCollectionMetrics. */
static Jsonb *
write_response(DynTable *t, JsonbContainer *r, const DynKey *key, const DynValue *attributes,
			   const DynCapacity *cap)
{
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (attributes)
	{
		RqPushKey(&st, "Attributes");
		RqPushJsonb(&st, WJB_VALUE, DynItemToJsonb(attributes));
	}
	DynCapacityPush(&st, cap);
	DynPushItemCollectionMetrics(&st, r, t, key);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* Check ReturnValues of PutItem/DeleteItem. */
static bool
return_all_old(JsonbContainer *r)
{
	char	   *rv = RqGetString(r, "ReturnValues");

	if (rv && strcmp(rv, "ALL_OLD") != 0 && strcmp(rv, "NONE") != 0)
		DynValidationError("ReturnValues can only be ALL_OLD or NONE");
	return rv && strcmp(rv, "ALL_OLD") == 0;
}

/* PutItem */
Jsonb *
DynPutItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	PutArgs		pa;
	DynTable   *t;
	DynKey		key;
	bool		all_old;
	DynWriteResult res;
	DynCapacity cap;

	RqValidate(req, put_item_fields);
	pa.item = RqParseItem(RqGet(r, "Item"));
	all_old = return_all_old(r);
	if (DynItemSize(pa.item) > DYN_MAX_ITEM_SIZE)
	{
		/* no capture shows this one inside the envelope: it stays bare */
		DynValidationEnvelope = false;
		DynValidationError("Item size has exceeded the maximum allowed size");
	}
	parse_write_condition(r, &pa.wc);

	t = DynItemsGetTable(RqGetString(r, "TableName"));
	DynWriteKeyFromItem(t, pa.item, &key);
	DynItemsCheckKeyPaths(t, pa.wc.cond);
	DynThroughputAdmit(t, false, -1, &key);

	if (!all_old && pa.wc.cond == NULL && !DynTableHasLsi(t) && !DynCapacityWanted(DynCapacityModeOf(r)))
	{
		/* nothing needs the old item: the write path may skip reading it */
		DynWritePut(t, &key, pa.item, 0, &res);
		return RqEmptyObject();
	}
	DynCapacityInit(&cap, t, DynCapacityModeOf(r), false);
	if (!all_old && pa.wc.cond == NULL && t->nindexes == 0)
	{
		/* the capacity (asked for, or counted by the metrics) needs the old item's size only */
		DynWritePut(t, &key, pa.item, DYN_WRITE_NEED_OLDSIZE, &res);
		DynCapacityAddWrite(&cap, NULL, res.oldsize, res.new, res.newsize);
		return write_response(t, r, &key, NULL, &cap);
	}
	DynCapacityArmFailure(t, cap.mode);
	DynWriteModify(t, &key, put_mutator, &pa, "Item size has exceeded the maximum allowed size", 0, &res);
	DynCapacityDisarmFailure();
	if (DynCapacityWanted(cap.mode))
		DynCapacityAddWrite(&cap, res.old, res.oldsize, res.new, res.newsize);
	return write_response(t, r, &key, all_old ? res.old : NULL, &cap);
}

/* ---------------------------------------------------------------- DeleteItem */

/* DeleteItem's mutation: check the condition, delete. */
static DynValue *
delete_mutator(DynTable *t, const DynValue *old, void *arg)
{
	check_condition((WriteCondition *) arg, old);
	return NULL;
}

/* DeleteItem */
Jsonb *
DynDeleteItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	WriteCondition wc;
	DynTable   *t;
	DynKey		key;
	bool		all_old;
	DynWriteResult res;
	DynCapacity cap;

	RqValidate(req, delete_item_fields);
	all_old = return_all_old(r);
	parse_write_condition(r, &wc);
	(void) RqParseItem(RqGet(r, "Key"));	/* its values are request validation */
	t = DynItemsGetTable(RqGetString(r, "TableName"));
	DynItemsParseKey(t, RqGet(r, "Key"), &key);
	DynItemsCheckKeyPaths(t, wc.cond);
	DynThroughputAdmit(t, false, -1, &key);
	DynCapacityInit(&cap, t, DynCapacityModeOf(r), false);

	if (wc.cond == NULL && !DynTableHasLsi(t) && (t->nindexes == 0 || !DynCapacityWanted(cap.mode)))
	{
		DynWriteDelete(t, &key, all_old ? DYN_WRITE_NEED_OLD : 0, &res);
		DynCapacityAddTable(&cap, DynWriteUnits(res.oldsize));
		return write_response(t, r, &key, res.old, &cap);
	}
	DynCapacityArmFailure(t, cap.mode);
	DynWriteModify(t, &key, delete_mutator, &wc, "", 0, &res);
	DynCapacityDisarmFailure();
	if (DynCapacityWanted(cap.mode))
		DynCapacityAddWrite(&cap, res.old, res.oldsize, res.new, res.newsize);
	return write_response(t, r, &key, all_old ? res.old : NULL, &cap);
}

/* ---------------------------------------------------------------- GetItem */

/* Parse ProjectionExpression / AttributesToGet of a read; NULL for all attributes. */
DynExpr *
DynItemsParseProjection(JsonbContainer *r)
{
	JsonbValue *names = RqGet(r, "ExpressionAttributeNames");
	JsonbValue *proj = RqGet(r, "ProjectionExpression");
	JsonbValue *atg = RqGet(r, "AttributesToGet");
	DynParamPresence exprs[1] = {{"ProjectionExpression", proj != NULL}};
	DynParamPresence legacy[1] = {{"AttributesToGet", atg != NULL}};
	DynExpr    *result = NULL;

	DynExprCheckParamMix(exprs, 1, legacy, 1, names != NULL, false);
	if (proj)
	{
		DynExprContext *ctx = DynExprContextCreate(names, NULL);

		result = DynParseProjection(ctx, proj->val.string.val, proj->val.string.len);
		DynExprCheckUnused(ctx);
	}
	else if (atg)
		result = DynLegacyAttributesToGet(atg);
	return result;
}

/* Is name (len bytes) a key attribute of t (1), of one of its indexes (2), or neither (0)? */
static int
key_role(DynTable *t, const char *name, int len)
{
	int			i;
	int			j;

	if (((int) strlen(t->hash.name) == len && memcmp(t->hash.name, name, len) == 0) ||
		(t->has_range && (int) strlen(t->range.name) == len && memcmp(t->range.name, name, len) == 0))
		return 1;
	for (i = 0; i < t->nindexes; i++)
	{
		DynIndex   *idx = &t->indexes[i];

		for (j = 0; j < idx->nhash + idx->nrange; j++)
		{
			const DynKeyAttr *ka = j < idx->nhash ? &idx->hash[j] : &idx->range[j - idx->nhash];

			if ((int) strlen(ka->name) == len && memcmp(ka->name, name, len) == 0)
				return 2;
		}
	}
	return 0;
}

/*
 * Key attributes are scalars: a projection, filter, condition or update path
 * into one (pk.a, pk[0]) is refused, naming the table key ("Key: pk") or an
 * index key attribute ("IndexKey: g"), as DynamoDB does.
 */
void
DynItemsCheckKeyPaths(DynTable *t, DynExpr *e)
{
	int			i;

	if (e == NULL)
		return;
	check_stack_depth();
	if (e->kind == DYN_EXPR_UPDATE)
	{
		for (i = 0; i < e->nactions; i++)
		{
			DynItemsCheckKeyPaths(t, e->actions[i].path);
			DynItemsCheckKeyPaths(t, e->actions[i].value);
		}
		return;
	}
	if (e->kind == DYN_EXPR_PATH && e->npath > 1 && !e->path[0].is_index)
	{
		int			role = key_role(t, e->path[0].name, e->path[0].namelen);

		if (role != 0)
			DynValidationError("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: %s: %.*s",
							   role == 1 ? "Key" : "IndexKey", e->path[0].namelen, e->path[0].name);
	}
	for (i = 0; i < e->nargs; i++)
		DynItemsCheckKeyPaths(t, e->args[i]);
}

/* ExecuteStatement (src/api/partiql.c): GetItem answers in its shape, "Items": [item] */
static bool get_as_items = false;

/*
 * The read and the response of GetItem, once the request is checked: r holds
 * ReturnConsumedCapacity (GetItem's request, or ExecuteStatement's).
 */
static Jsonb *
get_item(DynTable *t, JsonbValue *keyjv, DynExpr *proj, bool consistent, JsonbContainer *r)
{
	JsonbParseState *st = NULL;
	DynKey		key;
	DynStoredItem stored;
	bool		found;
	DynCapacity cap;

	DynItemsParseKey(t, keyjv, &key);
	DynItemsCheckKeyPaths(t, proj);
	DynThroughputAdmit(t, true, -1, &key);
	found = DynStorageGet(t, &key, false, &stored);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (get_as_items)
	{
		/* ExecuteStatement's shape: "Items": [] or [item] */
		RqPushKey(&st, "Items");
		pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	}
	if (found)
	{
		if (!get_as_items)
			RqPushKey(&st, "Item");
		if (proj)
			RqPushJsonb(&st, get_as_items ? WJB_ELEM : WJB_VALUE,
						DynItemToJsonb(DynApplyProjection(proj, DynItemFromStored(stored.item))));
		else
			RqPushJsonb(&st, get_as_items ? WJB_ELEM : WJB_VALUE, stored.item);
	}
	if (get_as_items)
		pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	DynCapacityInit(&cap, t, DynCapacityModeOf(r), true);
	DynCapacityAddItemRead(&cap, found ? stored.size : 0, consistent);
	DynCapacityPush(&st, &cap);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* GetItem */
Jsonb *
DynGetItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	DynExpr    *proj;
	DynTable   *t;

	RqValidate(req, get_item_fields);
	/* the Key's values before ExpressionAttributeNames and the projection */
	(void) RqParseItem(RqGet(r, "Key"));
	proj = DynItemsParseProjection(r);
	t = DynItemsGetTable(RqGetString(r, "TableName"));
	return get_item(t, RqGet(r, "Key"), proj, RqGetBool(r, "ConsistentRead", false), r);
}

/*
 * GetItem of a PartiQL SELECT by key whose plan ExecuteStatement kept
 * (src/api/partiql.c): the table looked up by the caller (DynItemsGetTable,
 * rights checked) as GetItem does, the projection parsed from projreq (the planned GetItem
 * request), the key checked as GetItem checks it; no GetItem request is
 * built or validated (its members come from the plan and from Parameters
 * ExecuteStatement validated).  Answers {"Items": [item]}.
 */
Jsonb *
DynGetItemByKeyForPartiQL(DynTable *t, JsonbValue *keyjv, JsonbContainer *projreq,
						  bool consistent, JsonbContainer *r)
{
	Jsonb	   *volatile res = NULL;
	DynExpr    *proj = DynItemsParseProjection(projreq);

	get_as_items = true;
	PG_TRY();
	{
		res = get_item(t, keyjv, proj, consistent, r);
	}
	PG_FINALLY();
	{
		get_as_items = false;
	}
	PG_END_TRY();
	return res;
}

/*
 * GetItem for a PartiQL SELECT by full key (src/api/partiql.c): the same
 * GetItem, answering {"Items": [item]} as ExecuteStatement does, so the item
 * is not copied into another response.
 */
Jsonb *
DynGetItemForPartiQL(Jsonb *req)
{
	Jsonb	   *volatile res = NULL;

	get_as_items = true;
	PG_TRY();
	{
		res = DynGetItem(req);
	}
	PG_FINALLY();
	{
		get_as_items = false;
	}
	PG_END_TRY();
	return res;
}

