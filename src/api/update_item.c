/*
 * update_item.c — UpdateItem: creates the item when absent, checks
 * ConditionExpression/Expected, applies UpdateExpression/AttributeUpdates,
 * and returns ReturnValues NONE, ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATED_NEW.
 */
#include "postgres.h"

#include "api/api.h"
#include "api/items.h"
#include "common/errors.h"
#include "expr/expr_ast.h"

static const char *const return_values_on_ccf_enum[] = {"ALL_OLD", "NONE", NULL};
static const char *const conditional_operator_enum[] = {"OR", "AND", NULL};
static const char *const comparison_operator_enum[] = {
	"EQ", "NE", "IN", "LE", "LT", "GE", "GT", "BETWEEN", "NOT_NULL", "NULL", "CONTAINS",
	"NOT_CONTAINS", "BEGINS_WITH", NULL
};
static const char *const attribute_action_enum[] = {"ADD", "PUT", "DELETE", NULL};

static const RqField attrvalue_elem = {.type = RQ_ATTRVALUE};
static const RqField string_elem = {.type = RQ_STRING};
static const RqField expected_fields[] = {
	{.name = "Value",.type = RQ_ATTRVALUE},
	{.name = "Exists",.type = RQ_BOOLEAN},
	{.name = "ComparisonOperator",.type = RQ_STRING,.enumvals = comparison_operator_enum},
	{.name = "AttributeValueList",.type = RQ_LIST,.elem = &attrvalue_elem},
	{0}
};
static const RqField expected_elem = {.type = RQ_STRUCT,.structname = "ExpectedAttributeValue",.fields = expected_fields};
static const RqField attribute_update_fields[] = {
	{.name = "Value",.type = RQ_ATTRVALUE},
	{.name = "Action",.type = RQ_STRING,.enumvals = attribute_action_enum},
	{0}
};
static const RqField attribute_update_elem = {.type = RQ_STRUCT,.structname = "AttributeValueUpdate",.fields = attribute_update_fields};

static const RqField update_item_fields[] = {
	RQ_TABLE_NAME_OR_ARN,
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	{.name = "AttributeUpdates",.type = RQ_MAP,.elem = &attribute_update_elem},
	{.name = "Expected",.type = RQ_MAP,.elem = &expected_elem},
	{.name = "ConditionalOperator",.type = RQ_STRING,.enumvals = conditional_operator_enum},
	{.name = "ReturnValues",.type = RQ_STRING,.enumvals = RqReturnValuesEnum},
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	{.name = "ReturnItemCollectionMetrics",.type = RQ_STRING,.enumvals = RqReturnItemCollectionMetricsEnum},
	{.name = "UpdateExpression",.type = RQ_STRING},
	{.name = "ConditionExpression",.type = RQ_STRING},
	{.name = "ExpressionAttributeNames",.type = RQ_MAP,.elem = &string_elem},
	{.name = "ExpressionAttributeValues",.type = RQ_MAP,.elem = &attrvalue_elem},
	{.name = "ReturnValuesOnConditionCheckFailure",.type = RQ_STRING,.enumvals = return_values_on_ccf_enum},
	{0}
};

typedef struct UpdateArgs
{
	DynExpr    *update;			/* NULL: no update (the key-only item is still created) */
	DynExpr    *cond;
	bool		return_old_on_failure;
	const DynKey *key;
} UpdateArgs;

/* A new item holding only the key attributes. */
DynValue *
DynItemsKeyOnlyItem(DynTable *t, const DynKey *key)
{
	DynValue   *item = DynMakeMap(2);

	DynMapAppend(item, t->hash.name, strlen(t->hash.name), key->hash);
	if (t->has_range && key->range)
		DynMapAppend(item, t->range.name, strlen(t->range.name), key->range);
	return item;
}

/*
 * The item an update leaves: the update applied to the old item, or to a
 * key-only item when there is none.  DynamoDB does not create an absent item
 * for an update that only removes (REMOVE, DELETE from a set; AttributeUpdates
 * DELETE): NULL then.
 */
DynValue *
DynItemsApplyUpdate(DynTable *t, DynExpr *update, const DynValue *old, const DynKey *key)
{
	int			i;

	if (update == NULL)
		return old ? (DynValue *) old : DynItemsKeyOnlyItem(t, key);
	if (old == NULL && update->nactions > 0)
	{
		/* nothing to remove: not even a nested path is checked (REMOVE x.y) */
		for (i = 0; i < update->nactions; i++)
			if (update->actions[i].op != DYN_UPD_REMOVE && update->actions[i].op != DYN_UPD_DELETE)
				break;
		if (i == update->nactions)
			return NULL;
	}
	return DynApplyUpdate(update, old ? old : DynItemsKeyOnlyItem(t, key));
}

/*
 * DynamoDB's message when an update makes a secondary index key attribute an
 * empty string or binary (of the index key's type), or NULL: unlike a Put
 * ("A value specified for a secondary index key is not supported ..."), an
 * update is told that the update expression did it.
 */
const char *
DynItemsUpdatedIndexKeyProblem(DynTable *t, const DynValue *item)
{
	int			i;
	int			j;

	if (item == NULL)
		return NULL;
	for (i = 0; i < t->nindexes; i++)
	{
		DynIndex   *idx = &t->indexes[i];

		for (j = 0; j < idx->nhash + idx->nrange; j++)
		{
			const DynKeyAttr *ka = j < idx->nhash ? &idx->hash[j] : &idx->range[j - idx->nhash];
			DynValue   *v = DynMapGetStr((DynValue *) item, ka->name);

			if (v && v->type == ka->type && (v->type == DYN_S || v->type == DYN_B) && v->u.str.len == 0)
				return psprintf("One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty %s value.",
								v->type == DYN_S ? "string" : "binary");
		}
	}
	return NULL;
}

/* UpdateItem's mutation: check the condition, apply the update. */
static DynValue *
update_mutator(DynTable *t, const DynValue *old, void *arg)
{
	UpdateArgs *ua = (UpdateArgs *) arg;
	DynValue   *new;
	const char *problem;

	if (ua->cond && !DynEvalCondition(ua->cond, old))
		DynItemsConditionFailed(old, ua->return_old_on_failure);
	new = DynItemsApplyUpdate(t, ua->update, old, ua->key);
	if ((problem = DynItemsUpdatedIndexKeyProblem(t, new)) != NULL)
		DynValidationError("%s", problem);
	return new;
}

/* Reject updates of key attributes. */
void
DynItemsCheckUpdateKeys(DynTable *t, DynExpr *update)
{
	const char **names;
	int		   *lens;
	int			n,
				i;

	if (update == NULL)
		return;
	n = DynUpdateTopLevelNames(update, &names, &lens);
	for (i = 0; i < n; i++)
	{
		if ((lens[i] == (int) strlen(t->hash.name) && memcmp(names[i], t->hash.name, lens[i]) == 0) ||
			(t->has_range && lens[i] == (int) strlen(t->range.name) &&
			 memcmp(names[i], t->range.name, lens[i]) == 0))
			DynValidationError("One or more parameter values were invalid: Cannot update attribute %.*s. This attribute is part of the key",
							   lens[i], names[i]);
	}
}

/* UpdateItem */
Jsonb *
DynUpdateItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *names,
			   *values,
			   *updexpr,
			   *condexpr,
			   *attrupdates,
			   *expected;
	UpdateArgs	ua;
	DynTable   *t;
	DynKey		key;
	DynWriteResult res;
	DynCapacity cap;
	char	   *rv;
	const DynValue *attrs = NULL;
	JsonbParseState *st = NULL;

	RqValidate(req, update_item_fields);
	names = RqGet(r, "ExpressionAttributeNames");
	values = RqGet(r, "ExpressionAttributeValues");
	updexpr = RqGet(r, "UpdateExpression");
	condexpr = RqGet(r, "ConditionExpression");
	attrupdates = RqGet(r, "AttributeUpdates");
	expected = RqGet(r, "Expected");
	{
		DynParamPresence exprs[2] = {{"UpdateExpression", updexpr != NULL},
		{"ConditionExpression", condexpr != NULL}};
		JsonbValue *condop = RqGet(r, "ConditionalOperator");
		DynParamPresence legacy[3] = {{"AttributeUpdates", attrupdates != NULL},
		{"Expected", expected != NULL}, {"ConditionalOperator", condop != NULL}};

		DynExprCheckParamMix(exprs, 2, legacy, 3, names != NULL, values != NULL);
		DynLegacyCheckConditionalOperator(condop, expected);
	}

	memset(&ua, 0, sizeof(ua));
	ua.return_old_on_failure = RqStringIs(r, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	if (updexpr || condexpr)
	{
		DynExprContext *ctx = DynExprContextCreate(names, values);

		if (updexpr)
			ua.update = DynParseUpdate(ctx, updexpr->val.string.val, updexpr->val.string.len);
		if (condexpr)
			ua.cond = DynParseCondition(ctx, "ConditionExpression",
										condexpr->val.string.val, condexpr->val.string.len);
		DynExprCheckUnused(ctx);
	}
	else
	{
		if (names || values)
			DynExprCheckUnused(DynExprContextCreate(names, values));
		if (attrupdates)
			ua.update = DynLegacyAttributeUpdates(attrupdates);
		if (expected)
			ua.cond = DynLegacyExpected(expected, RqGetString(r, "ConditionalOperator"));
	}

	(void) RqParseItem(RqGet(r, "Key"));	/* its values are request validation */
	t = DynItemsGetTable(RqGetString(r, "TableName"));
	DynItemsParseKey(t, RqGet(r, "Key"), &key);
	DynItemsCheckKeyPaths(t, ua.cond);
	DynItemsCheckUpdateKeys(t, ua.update);
	DynItemsCheckKeyPaths(t, ua.update);
	ua.key = &key;
	DynThroughputAdmit(t, false, -1, &key);

	DynCapacityInit(&cap, t, DynCapacityModeOf(r), false);
	DynCapacityArmFailure(t, cap.mode);
	DynWriteModify(t, &key, update_mutator, &ua,
				   "Item size to update has exceeded the maximum allowed size", 0, &res);
	DynCapacityDisarmFailure();
	if (DynCapacityWanted(cap.mode))
		DynCapacityAddWrite(&cap, res.old, res.oldsize, res.new, res.newsize);

	rv = RqGetString(r, "ReturnValues");
	if (rv == NULL || strcmp(rv, "NONE") == 0)
		attrs = NULL;
	else if (strcmp(rv, "ALL_OLD") == 0)
		attrs = res.old;
	else if (strcmp(rv, "ALL_NEW") == 0)
		attrs = res.new;
	else if (strcmp(rv, "UPDATED_OLD") == 0)
		attrs = (ua.update && res.old) ? DynUpdatedAttributes(ua.update, res.old) : NULL;
	else if (strcmp(rv, "UPDATED_NEW") == 0)
		attrs = (ua.update && res.new) ? DynUpdatedAttributes(ua.update, res.new) : NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (attrs && attrs->n > 0)
	{
		RqPushKey(&st, "Attributes");
		RqPushJsonb(&st, WJB_VALUE, DynItemToJsonb(attrs));
	}
	DynCapacityPush(&st, &cap);
	DynPushItemCollectionMetrics(&st, r, t, &key);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
