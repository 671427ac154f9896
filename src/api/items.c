/*
 * items.c — PutItem, GetItem, DeleteItem and the item write path.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/items.h"
#include "common/errors.h"
#include "expr/expr.h"
#include "indexes/indexes.h"

/* ---------------------------------------------------------------- schemas */

static const char *const return_values_on_ccf_enum[] = {"ALL_OLD", "NONE", NULL};
static const char *const conditional_operator_enum[] = {"AND", "OR", NULL};
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

#define TABLE_NAME_FIELD {.name = "TableName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255}
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
	{.name = "AttributesToGet",.type = RQ_LIST,.elem = &string_elem,.minlen = 1},
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

/* The table of an item operation. */
DynTable *
DynItemsGetTable(const char *name)
{
	DynTable   *t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found");
	return t;
}

/* Check a key value's size. */
static void
check_key_size(const DynValue *v, bool is_hash)
{
	if (v->type == DYN_N)
		return;
	if (is_hash && v->u.str.len > DYN_MAX_HASH_KEY_SIZE)
		DynValidationError("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes");
	if (!is_hash && v->u.str.len > DYN_MAX_RANGE_KEY_SIZE)
		DynValidationError("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes");
}

/* Check one key attribute of a Key parameter. */
static DynValue *
key_piece(DynValue *keymap, const DynKeyAttr *ka, bool is_hash)
{
	DynValue   *v = DynMapGetStr(keymap, ka->name);

	if (v == NULL || v->type != ka->type)
		DynValidationError("The provided key element does not match the schema");
	if (v->type != DYN_N && v->u.str.len == 0)
		DynValidationError("One or more parameter values were invalid: The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						   v->type == DYN_S ? "string" : "binary", ka->name);
	check_key_size(v, is_hash);
	return v;
}

/* Parse and check a Key parameter. */
void
DynItemsParseKey(DynTable *t, JsonbValue *keyjv, DynKey *key)
{
	DynValue   *keymap = RqParseItem(keyjv);
	DynValue   *hash;
	DynValue   *range = NULL;

	if (keymap->n != (t->has_range ? 2 : 1))
		DynValidationError("The provided key element does not match the schema");
	hash = key_piece(keymap, &t->hash, true);
	if (t->has_range)
		range = key_piece(keymap, &t->range, false);
	DynKeyMake(t, hash, range, key);
}

/* Check one key attribute of a whole item. */
static DynValue *
item_key_piece(DynValue *item, const DynKeyAttr *ka, bool is_hash)
{
	DynValue   *v = DynMapGetStr(item, ka->name);

	if (v == NULL)
		DynValidationError("One or more parameter values were invalid: Missing the key %s in the item", ka->name);
	if (v->type != ka->type)
		DynValidationError("One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s",
						   ka->name, DynTypeName(ka->type), DynTypeName(v->type));
	if (v->type != DYN_N && v->u.str.len == 0)
		DynValidationError("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						   v->type == DYN_S ? "string" : "binary", ka->name);
	check_key_size(v, is_hash);
	return v;
}

/* The key of a whole item. */
void
DynItemsKeyFromItem(DynTable *t, DynValue *item, DynKey *key)
{
	DynValue   *hash = item_key_piece(item, &t->hash, true);
	DynValue   *range = t->has_range ? item_key_piece(item, &t->range, false) : NULL;

	DynKeyMake(t, hash, range, key);
}

/* ---------------------------------------------------------------- write path */

/*
 * After a write that skipped DynItemsModify (a table without LSIs, nothing
 * needing the old item): queue the change for the table's GSIs.
 */
void
DynItemsFastWriteDone(DynTable *t, const DynKey *key)
{
	if (t->nindexes > 0)
		DynGsiCapture(t, key);
	else
		DynGsiCaptureIfCreated(t, key);
}

/* Raise ConditionalCheckFailedException. */
void
DynItemsConditionFailed(const DynValue *old, bool return_old)
{
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

DynValue	DynItemsKeepItem;

/* Read, compute and write one item under a row lock. */
void
DynItemsModify(DynTable *t, const DynKey *key, DynItemMutator fn, void *arg,
			   const char *size_msg, DynWriteResult *res)
{
	for (;;)
	{
		DynStoredItem stored;
		bool		exists = DynStorageGet(t, key, true, &stored);
		DynValue   *newitem;
		int64		newsize = 0;

		res->old = exists ? DynItemFromStored(stored.item) : NULL;
		res->oldsize = exists ? stored.size : 0;
		newitem = fn(t, res->old, arg);
		if (newitem == DYN_ITEMS_KEEP)
		{
			/* unchanged: nothing to write (TTL expiry of an item updated meanwhile) */
			res->new = res->old;
			res->newsize = res->oldsize;
			return;
		}
		if (newitem)
		{
			newsize = DynItemSize(newitem);
			if (newsize > DYN_MAX_ITEM_SIZE)
				DynValidationError("%s", size_msg);
			if (t->nindexes > 0)
				DynIndexesCheckItem(t, newitem);
		}
		res->new = newitem;
		res->newsize = (int32) newsize;

		if (newitem == NULL)
		{
			if (!exists)
				return;
			DynStorageDelete(t, key, NULL);
		}
		else if (exists)
			DynStorageUpdate(t, key, DynItemToJsonb(newitem), res->newsize);
		else if (!DynStorageInsert(t, key, DynItemToJsonb(newitem), res->newsize))
		{
			/* a concurrent writer inserted the item meanwhile: start over */
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (t->nindexes > 0)
		{
			DynIndexesOnWrite(t, key, res->old, res->new);
			DynCollectionCheckWrite(t, key, res->old, res->oldsize, res->new, res->newsize);
		}
		return;
	}
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
		DynValidationError("Item size has exceeded the maximum allowed size");
	parse_write_condition(r, &pa.wc);

	t = DynItemsGetTable(RqGetString(r, "TableName"));
	DynItemsKeyFromItem(t, pa.item, &key);

	if (!all_old && pa.wc.cond == NULL && !DynTableHasLsi(t) && DynCapacityModeOf(r) == DYN_CAP_NONE)
	{
		/*
		 * Nothing needs the old item (GSIs don't: their worker re-reads the
		 * committed item): one upsert, and the change record if there are GSIs.
		 */
		if (t->nindexes > 0)
			DynIndexesCheckItem(t, pa.item);
		DynStorageUpsert(t, &key, DynItemToJsonb(pa.item), (int32) DynItemSize(pa.item));
		DynItemsFastWriteDone(t, &key);
		return RqEmptyObject();
	}
	DynCapacityInit(&cap, t, DynCapacityModeOf(r), false);
	DynCapacityArmFailure(t, cap.mode);
	DynItemsModify(t, &key, put_mutator, &pa, "Item size has exceeded the maximum allowed size", &res);
	DynCapacityDisarmFailure();
	if (cap.mode != DYN_CAP_NONE)
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
	t = DynItemsGetTable(RqGetString(r, "TableName"));
	DynItemsParseKey(t, RqGet(r, "Key"), &key);
	DynCapacityInit(&cap, t, DynCapacityModeOf(r), false);

	if (wc.cond == NULL && !DynTableHasLsi(t) && (t->nindexes == 0 || cap.mode == DYN_CAP_NONE))
	{
		DynStoredItem old;
		bool		existed = DynStorageDelete(t, &key, &old);

		if (existed)
			DynItemsFastWriteDone(t, &key);

		DynCapacityAddTable(&cap, DynWriteUnits(existed ? old.size : 0));
		return write_response(t, r, &key, existed && all_old ? DynItemFromStored(old.item) : NULL, &cap);
	}
	DynCapacityArmFailure(t, cap.mode);
	DynItemsModify(t, &key, delete_mutator, &wc, "", &res);
	DynCapacityDisarmFailure();
	if (cap.mode != DYN_CAP_NONE)
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

/* GetItem */
Jsonb *
DynGetItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbParseState *st = NULL;
	DynTable   *t;
	DynKey		key;
	DynStoredItem stored;
	DynExpr    *proj;
	bool		found;
	bool		consistent;
	DynCapacity cap;

	RqValidate(req, get_item_fields);
	proj = DynItemsParseProjection(r);
	t = DynItemsGetTable(RqGetString(r, "TableName"));
	DynItemsParseKey(t, RqGet(r, "Key"), &key);
	consistent = RqGetBool(r, "ConsistentRead", false);

	found = DynStorageGet(t, &key, false, &stored);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (found)
	{
		RqPushKey(&st, "Item");
		if (proj)
			RqPushJsonb(&st, WJB_VALUE, DynItemToJsonb(DynApplyProjection(proj, DynItemFromStored(stored.item))));
		else
			RqPushJsonb(&st, WJB_VALUE, stored.item);
	}
	DynCapacityInit(&cap, t, DynCapacityModeOf(r), true);
	DynCapacityAddItemRead(&cap, found ? stored.size : 0, consistent);
	DynCapacityPush(&st, &cap);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
