/*
 * transact.c — TransactWriteItems and TransactGetItems.
 *
 * A transaction runs inside the calling PostgreSQL transaction, so
 * all-or-nothing comes from PostgreSQL: when any action fails, the request
 * raises TransactionCanceledException and everything it wrote is rolled
 * back with the statement.  As DynamoDB does, requests are checked in three
 * steps:
 *   1. the whole request (shape, expressions, names and values, tables,
 *      empty key values, two actions on one item): a failure is a
 *      ValidationException for the whole request;
 *   2. each action's data (key types and shapes, sizes, index key types), in
 *      order: the first failure cancels the transaction with reason
 *      ValidationError and the remaining actions report None;
 *   3. each action's condition, against the current item read with a row
 *      lock: every action is evaluated (no short circuit), and any false
 *      condition cancels with ConditionalCheckFailed; an Update's new item
 *      whose index key has the wrong type is a ValidationError reason (one
 *      made empty, a ValidationException).
 * TransactGetItems: a Key not matching the schema is a ValidationError reason
 * at its position, an empty key value a ValidationException.
 * Then the writes are made.  A condition that no longer holds at write time
 * (a single-item writer created the item after step 3) cancels with
 * TransactionConflict.  A write that grows an item collection (a table with
 * LSIs) past the limit is reason ItemCollectionSizeLimitExceeded, not the
 * ItemCollectionSizeLimitExceededException of the single-item operations:
 * every write is made and checked, then the transaction is cancelled with
 * the reason at each such action (the writes roll back with the statement).
 * Reads and writes cost twice the units.
 *
 * Locking (docs/transactions.md, "Concurrency"): before step 3 the request
 * takes one transaction-level lock per item, in one global order (table,
 * partition key, sort key), whether or not the item exists; step 3 and the
 * writes then lock rows only of items whose lock they hold, so two
 * TransactWriteItems never wait for each other in a circle.  A deadlock
 * still possible (with a write earlier in the same PostgreSQL transaction,
 * with a BatchWriteItem), a lock timeout or a serialization failure
 * (REPEATABLE READ, SERIALIZABLE) cancels with reason TransactionConflict, as
 * DynamoDB answers a conflicting transaction (answer_conflict).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/capacity.h"
#include "api/items.h"
#include "common/errors.h"
#include "indexes/indexes.h"
#include "security/security.h"
#include "storage/storage.h"

#define MAX_TRANSACT_ITEMS 100
#define MAX_TRANSACT_PAYLOAD (4 * 1024 * 1024)

/* ---------------------------------------------------------------- schemas */

static const char *const return_values_on_ccf_enum[] = {"ALL_OLD", "NONE", NULL};
static const RqField attrvalue_elem = {.type = RQ_ATTRVALUE};
static const RqField string_elem = {.type = RQ_STRING};

#define TX_TABLE_NAME RQ_TABLE_NAME_OR_ARN
#define TX_NAMES {.name = "ExpressionAttributeNames",.type = RQ_MAP,.elem = &string_elem}
#define TX_VALUES {.name = "ExpressionAttributeValues",.type = RQ_MAP,.elem = &attrvalue_elem}
#define TX_RVOCCF {.name = "ReturnValuesOnConditionCheckFailure",.type = RQ_STRING,.enumvals = return_values_on_ccf_enum}

static const RqField check_fields[] = {
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	TX_TABLE_NAME,
	{.name = "ConditionExpression",.type = RQ_STRING,.notnull = true},
	TX_NAMES, TX_VALUES, TX_RVOCCF,
	{0}
};
static const RqField put_fields[] = {
	{.name = "Item",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	TX_TABLE_NAME,
	{.name = "ConditionExpression",.type = RQ_STRING},
	TX_NAMES, TX_VALUES, TX_RVOCCF,
	{0}
};
static const RqField delete_fields[] = {
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	TX_TABLE_NAME,
	{.name = "ConditionExpression",.type = RQ_STRING},
	TX_NAMES, TX_VALUES, TX_RVOCCF,
	{0}
};
static const RqField update_fields[] = {
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	{.name = "UpdateExpression",.type = RQ_STRING,.notnull = true},
	TX_TABLE_NAME,
	{.name = "ConditionExpression",.type = RQ_STRING},
	TX_NAMES, TX_VALUES, TX_RVOCCF,
	{0}
};
static const RqField write_item_fields[] = {
	{.name = "ConditionCheck",.type = RQ_STRUCT,.structname = "ConditionCheck",.fields = check_fields},
	{.name = "Put",.type = RQ_STRUCT,.structname = "Put",.fields = put_fields},
	{.name = "Delete",.type = RQ_STRUCT,.structname = "Delete",.fields = delete_fields},
	{.name = "Update",.type = RQ_STRUCT,.structname = "Update",.fields = update_fields},
	{0}
};
static const RqField write_item_elem = {.type = RQ_STRUCT,.structname = "TransactWriteItem",.fields = write_item_fields};

static const RqField transact_write_fields[] = {
	{.name = "TransactItems",.type = RQ_LIST,.elem = &write_item_elem,.notnull = true,.minlen = 1,
	.maxlen = MAX_TRANSACT_ITEMS},
	/* DynamoDB reports a too long token ahead of the enums (us-east-1, 2026-10-09) */
	{.name = "ClientRequestToken",.type = RQ_STRING,.minlen = 1,.maxlen = 36},
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	{.name = "ReturnItemCollectionMetrics",.type = RQ_STRING,.enumvals = RqReturnItemCollectionMetricsEnum},
	{0}
};

static const RqField get_fields[] = {
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	TX_TABLE_NAME,
	{.name = "ProjectionExpression",.type = RQ_STRING},
	TX_NAMES,
	{0}
};
static const RqField get_item_fields[] = {
	{.name = "Get",.type = RQ_STRUCT,.structname = "Get",.fields = get_fields,.notnull = true},
	{0}
};
static const RqField get_item_elem = {.type = RQ_STRUCT,.structname = "TransactGetItem",.fields = get_item_fields};

static const RqField transact_get_fields[] = {
	{.name = "TransactItems",.type = RQ_LIST,.elem = &get_item_elem,.notnull = true,.minlen = 1,
	.maxlen = MAX_TRANSACT_ITEMS},
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	{0}
};

/* ---------------------------------------------------------------- actions */

typedef enum TxKind
{
	TX_CHECK,
	TX_PUT,
	TX_DELETE,
	TX_UPDATE
} TxKind;

typedef enum TxReason
{
	TX_REASON_NONE,
	TX_REASON_CONDITION,
	TX_REASON_VALIDATION,
	TX_REASON_CONFLICT,
	TX_REASON_COLLECTION,		/* ItemCollectionSizeLimitExceeded */
	TX_REASON_THROTTLED			/* ProvisionedThroughputExceeded, ThrottlingError */
} TxReason;

/* One action of a TransactWriteItems request. */
typedef struct TxAction
{
	TxKind		kind;
	JsonbValue *spec;			/* the action's object */
	DynTable   *t;
	DynValue   *item;			/* Put: the new item */
	DynExpr    *cond;
	DynExpr    *update;
	bool		return_old;
	DynKey		key;
	TxReason	reason;
	char	   *message;		/* ValidationError: its message */
	char	   *fatal;			/* a whole-request ValidationException found in step 3 */
	DynValue   *old;			/* ConditionalCheckFailed with ALL_OLD: the item */
	DynThrottleReason throttle; /* TX_REASON_THROTTLED: which bucket was empty */
	struct TxAction *all;		/* every action of the request (for cancelling) */
	int			nall;
} TxAction;

static const char *const kind_names[] = {"ConditionCheck", "Put", "Delete", "Update"};

/* Parse one action's expressions, items and key (whole-request errors; the table comes later). */
static void
parse_action(TxAction *a)
{
	JsonbContainer *s = a->spec->val.binary.data;
	JsonbValue *names = RqGet(s, "ExpressionAttributeNames");
	JsonbValue *values = RqGet(s, "ExpressionAttributeValues");
	JsonbValue *cond = RqGet(s, "ConditionExpression");
	JsonbValue *upd = RqGet(s, "UpdateExpression");
	DynExprContext *ctx = DynExprContextCreate(names, values);

	if (upd)
		a->update = DynParseUpdate(ctx, upd->val.string.val, upd->val.string.len);
	if (cond)
		a->cond = DynParseCondition(ctx, "ConditionExpression", cond->val.string.val, cond->val.string.len);
	DynExprCheckUnused(ctx);
	a->return_old = RqStringIs(s, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	if (a->kind == TX_PUT)
	{
		a->item = RqParseItem(RqGet(s, "Item"));

		/*
		 * A Put's size is known from the request: DynamoDB refuses it before
		 * the transaction opens, a ValidationException for the whole request
		 * (the DynamoDB conformance suite, limits/itemSizeBySurface.test.ts,
		 * eu-west-2, 2026-08-18); an Update's is a cancellation reason.
		 */
		if (DynItemSize(a->item) > DYN_MAX_ITEM_SIZE)
			DynValidationError("Item size has exceeded the maximum allowed size");
	}
	else
		RqParseItem(RqGet(s, "Key"));
}

/* An empty S or B value (the one kind of key value refused up front). */
static bool
empty_key_value(const DynValue *v)
{
	return v && (v->type == DYN_S || v->type == DYN_B) && v->u.str.len == 0;
}

/* Refuse an empty key value of a Key parameter (step 1, a whole-request error). */
static void
check_empty_key(DynTable *t, DynValue *key)
{
	const DynKeyAttr *attrs[2] = {&t->hash, t->has_range ? &t->range : NULL};
	int			i;

	for (i = 0; i < 2 && attrs[i]; i++)
	{
		DynValue   *v = DynMapGetStr(key, attrs[i]->name);

		if (empty_key_value(v))
			DynValidationError("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
							   v->type == DYN_S ? "string" : "binary", attrs[i]->name);
	}
}

/*
 * Refuse empty key values up front (step 1): DynamoDB's input validation
 * rejects an empty string or binary in a table or index key of a Put item or
 * in a Key with a ValidationException for the whole request, where a key of
 * the wrong type is found later, per action (step 2, a ValidationError
 * cancellation reason).
 */
static void
check_empty_keys(TxAction *a)
{
	JsonbContainer *s = a->spec->val.binary.data;
	DynIndex   *first = NULL;
	const DynKeyAttr *first_attr = NULL;
	DynValue   *first_value = NULL;
	int			i;
	int			j;

	if (a->kind != TX_PUT)
	{
		check_empty_key(a->t, RqParseItem(RqGet(s, "Key")));
		return;
	}
	check_empty_key(a->t, a->item);
	for (i = 0; i < a->t->nindexes; i++)
	{
		DynIndex   *idx = &a->t->indexes[i];

		for (j = 0; j < idx->nhash + idx->nrange; j++)
		{
			const DynKeyAttr *ka = j < idx->nhash ? &idx->hash[j] : &idx->range[j - idx->nhash];
			DynValue   *v = DynMapGetStr(a->item, ka->name);

			/* the message names the alphabetically first index the attribute keys */
			if (empty_key_value(v) && (first == NULL || strcmp(idx->name, first->name) < 0))
			{
				first = idx;
				first_attr = ka;
				first_value = v;
			}
		}
	}
	if (first)
		DynValidationError("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s",
						   first_value->type == DYN_S ? "string" : "binary", first->name, first_attr->name);
}

/* Check one action's data against its table (step 2); raises ValidationException. */
static void
validate_action(TxAction *a)
{
	JsonbContainer *s = a->spec->val.binary.data;

	if (a->kind == TX_PUT)
	{
		DynWriteKeyFromItem(a->t, a->item, &a->key);
		if (DynItemSize(a->item) > DYN_MAX_ITEM_SIZE)
			DynValidationError("Item size has exceeded the maximum allowed size");
		if (a->t->nindexes > 0)
			DynIndexesCheckItem(a->t, a->item);
		DynItemsCheckKeyPaths(a->t, a->cond);
	}
	else
	{
		DynItemsParseKey(a->t, RqGet(s, "Key"), &a->key);
		DynItemsCheckKeyPaths(a->t, a->cond);
		if (a->kind == TX_UPDATE)
		{
			DynItemsCheckUpdateKeys(a->t, a->update);
			DynItemsCheckKeyPaths(a->t, a->update);
		}
	}
}

/*
 * The new item of an Update, checked against the indexes (step 3): an index
 * key made empty is a ValidationException for the whole request, one of the
 * wrong type a ValidationError reason (raised here, caught by the caller).
 */
static void
validate_update_result(TxAction *a, const DynValue *current)
{
	DynValue   *newitem = DynItemsApplyUpdate(a->t, a->update, current, &a->key);

	if (newitem == NULL)
		return;					/* an update that only removes, of a missing item */
	if (DynItemSize(newitem) > DYN_MAX_ITEM_SIZE)
		DynValidationError("Item size to update has exceeded the maximum allowed size");
	if (a->t->nindexes == 0)
		return;
	/* found here, raised by the caller: not a reason but the whole request's error */
	a->fatal = (char *) DynItemsUpdatedIndexKeyProblem(a->t, newitem);
	if (a->fatal == NULL)
		DynIndexesCheckItem(a->t, newitem);
}

/* Run fn(a, arg), turning a ValidationException into the action's reason. */
static bool
action_reason(TxAction *a, void (*fn) (TxAction *, const DynValue *), const DynValue *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool ok = true;

	/* fn only computes: it holds no resources to release */
	PG_TRY();
	{
		fn(a, arg);
	}
	PG_CATCH();
	{
		ErrorData  *ed;
		const char *prefix = "ValidationException: ";

		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		if (strncmp(ed->message, prefix, strlen(prefix)) != 0)
			PG_RE_THROW();
		FlushErrorState();
		a->reason = TX_REASON_VALIDATION;
		a->message = pstrdup(ed->message + strlen(prefix));
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* validate_action with action_reason's signature. */
static void
validate_action_fn(TxAction *a, const DynValue *unused)
{
	validate_action(a);
}

/* Run validate_action, turning a ValidationException into a reason. */
static bool
validate_action_reason(TxAction *a)
{
	return action_reason(a, validate_action_fn, NULL);
}

/* Do two actions name the same item? */
static bool
same_item(const TxAction *a, const TxAction *b)
{
	return a->t == b->t && DynKeyEquals(&a->key, &b->key);
}

pg_noreturn static void cancel(TxAction *actions, int n);

/* Raise TransactionCanceledException with every action's reason. */
static void
cancel(TxAction *actions, int n)
{
	StringInfoData msg;
	JsonbParseState *st = NULL;
	Jsonb	   *detail;
	int			i;

	initStringInfo(&msg);
	appendStringInfoString(&msg, "Transaction cancelled, please refer cancellation reasons for specific reasons [");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "CancellationReasons");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
	{
		TxAction   *a = &actions[i];
		const char *code = a->reason == TX_REASON_CONDITION ? "ConditionalCheckFailed" :
			a->reason == TX_REASON_VALIDATION ? "ValidationError" :
			a->reason == TX_REASON_CONFLICT ? "TransactionConflict" :
			a->reason == TX_REASON_COLLECTION ? "ItemCollectionSizeLimitExceeded" :
			a->reason == TX_REASON_THROTTLED ?
			(a->throttle.provisioned ? "ProvisionedThroughputExceeded" : "ThrottlingError") : "None";

		appendStringInfo(&msg, "%s%s", i ? ", " : "", code);
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "Code");
		RqPushString(&st, WJB_VALUE, code);
		if (a->reason != TX_REASON_NONE)
		{
			RqPushKey(&st, "Message");
			RqPushString(&st, WJB_VALUE,
						 a->reason == TX_REASON_CONDITION ? "The conditional request failed" :
						 a->reason == TX_REASON_CONFLICT ? "Transaction is ongoing for the item" :
						 a->reason == TX_REASON_COLLECTION ? DYN_COLLECTION_EXCEEDED_MESSAGE :
						 a->reason == TX_REASON_THROTTLED ? DynThroughputReasonMessage(&a->throttle) :
						 a->message);
		}
		if (a->reason == TX_REASON_CONDITION && a->return_old && a->old)
		{
			RqPushKey(&st, "Item");
			RqPushJsonb(&st, WJB_VALUE, DynItemToJsonb(a->old));
		}
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	detail = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	appendStringInfoChar(&msg, ']');
	DynErrorWithDetail(DYN_ERR_TRANSACTION_CANCELED, JsonbToCString(NULL, &detail->root, VARSIZE(detail)),
					   "%s", msg.data);
}

/* ---------------------------------------------------------------- locking */

/* Lock every item of the request (DynWriteLockItems); *at: the action being locked. */
static void
lock_items(TxAction *actions, int n, volatile int *at)
{
	DynWriteLockItem *items = palloc(sizeof(DynWriteLockItem) * n);
	int			i;

	for (i = 0; i < n; i++)
	{
		items[i].t = actions[i].t;
		items[i].key = &actions[i].key;
		items[i].pos = i;
	}
	DynWriteLockItems(items, n, at);
	pfree(items);
}

/*
 * Is an error a conflict with a concurrent transaction: a deadlock (with a
 * writer that does not take the item locks, or across the statements of one
 * PostgreSQL transaction), a serialization failure (REPEATABLE READ,
 * SERIALIZABLE), or a lock not available (lock_timeout)?
 */
static bool
is_conflict_error(const ErrorData *ed)
{
	return ed->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED ||
		ed->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
		ed->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
}

/*
 * In a PG_CATCH of the locked part of a transaction: a conflict cancels with
 * reason TransactionConflict at action at (every action when unknown), any
 * other error goes on.  The caught error is not survived but replaced: the
 * (sub)transaction aborts with the cancellation, so no subtransaction is
 * needed, and nothing touches the database between the two.
 */
pg_noreturn static void
answer_conflict(MemoryContext cxt, TxAction *actions, int n, int at)
{
	ErrorData  *ed;
	int			i;

	MemoryContextSwitchTo(cxt);
	ed = CopyErrorData();
	if (!is_conflict_error(ed))
		PG_RE_THROW();
	FlushErrorState();
	for (i = 0; i < n; i++)
		if (i == at || at < 0 || at >= n)
			actions[i].reason = TX_REASON_CONFLICT;
	cancel(actions, n);
}

/*
 * Throughput (api/throughput.c): an action whose table (or, for a write, one
 * of its GSIs) has an empty bucket cancels the transaction with a
 * ProvisionedThroughputExceeded or ThrottlingError reason.  Checked after
 * the request's validation, before any condition is evaluated.
 */
static void
check_throughput(TxAction *actions, int n, bool is_read)
{
	bool		failed = false;
	int			i;

	for (i = 0; i < n; i++)
	{
		actions[i].throttle = DynThroughputCheck(actions[i].t, is_read, -1, &actions[i].key);
		if (actions[i].throttle.throttled && !failed)
		{
			DynThroughputCountRequest(actions[i].t);
			failed = true;
		}
		if (actions[i].throttle.throttled)
			actions[i].reason = TX_REASON_THROTTLED;
	}
	if (failed)
	{
		DynThroughputRelease();
		cancel(actions, n);
	}
}

/* Write-phase mutation: re-check the condition, compute the new item. */
static DynValue *
tx_mutator(DynTable *t, const DynValue *old, void *arg)
{
	TxAction   *a = (TxAction *) arg;

	if (a->cond && !DynEvalCondition(a->cond, old))
	{
		/* a concurrent writer changed the item since step 3 */
		a->reason = TX_REASON_CONFLICT;
		cancel(a->all, a->nall);
	}
	switch (a->kind)
	{
		case TX_PUT:
			return a->item;
		case TX_DELETE:
			return NULL;
		case TX_UPDATE:
			return DynItemsApplyUpdate(t, a->update, old, &a->key);
		case TX_CHECK:
			break;
	}
	return (DynValue *) old;
}

/* The capacity counter of a table, adding one if needed. */
static DynCapacity *
capacity_for(DynCapacity *caps, int *ncaps, DynTable *t, DynCapacityMode mode, bool is_read)
{
	int			i;

	for (i = 0; i < *ncaps; i++)
		if (caps[i].t == t)
			return &caps[i];
	DynCapacityInit(&caps[*ncaps], t, mode, is_read);
	caps[*ncaps].factor = 2;
	caps[*ncaps].rw_units = true;
	return &caps[(*ncaps)++];
}

/* Step 3: every condition, against the current item under a row lock; false if one failed. */
static bool
check_conditions(TxAction *actions, int n, volatile int *at)
{
	bool		failed = false;
	int			i;

	for (i = 0; i < n; i++)
	{
		TxAction   *a = &actions[i];
		DynStoredItem stored;
		DynValue   *current;

		*at = i;
		current = DynStorageGet(a->t, &a->key, true, &stored) ? DynItemFromStored(stored.item) : NULL;
		if (a->cond && !DynEvalCondition(a->cond, current))
		{
			a->reason = TX_REASON_CONDITION;
			a->old = current;
			failed = true;
		}
		else if (a->kind == TX_UPDATE && !action_reason(a, validate_update_result, current))
			failed = true;
		if (a->fatal)
			DynValidationError("%s", a->fatal);
	}
	return !failed;
}

/*
 * The writes, counting capacity in caps (*ncaps tables); false if one grew
 * its item collection past the limit (the reason is set).
 */
static bool
write_items(TxAction *actions, int n, DynCapacityMode mode, DynCapacity *caps, int *ncaps,
			volatile int *at)
{
	bool		failed = false;
	int			i;

	for (i = 0; i < n; i++)
	{
		TxAction   *a = &actions[i];
		DynWriteResult res;
		DynCapacity *c = capacity_for(caps, ncaps, a->t, mode, false);

		*at = i;
		if (a->kind == TX_CHECK)
		{
			DynStoredItem stored;
			bool		found = DynStorageGet(a->t, &a->key, false, &stored);

			DynCapacityAddItemRead(c, found ? stored.size : 0, true);
			continue;
		}
		DynWriteModify(a->t, &a->key, tx_mutator, a,
					   a->kind == TX_UPDATE ? "Item size to update has exceeded the maximum allowed size" :
					   "Item size has exceeded the maximum allowed size", DYN_WRITE_COLLECTION_REASON, &res);
		DynCapacityAddWrite(c, res.old, res.oldsize, res.new, res.newsize);
		if (res.collection_exceeded)
		{
			a->reason = TX_REASON_COLLECTION;
			failed = true;
		}
	}
	return !failed;
}

/*
 * "ItemCollectionMetrics": for each table with an LSI, one object per item the
 * transaction wrote, as BatchWriteItem shapes it.
 */
static void
push_collection_metrics(JsonbParseState **st, TxAction *actions, int n)
{
	bool		any = false;
	int			i;
	int			j;

	for (i = 0; i < n; i++)
	{
		bool		seen = false;

		if (actions[i].kind == TX_CHECK || !DynTableHasLsi(actions[i].t))
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = actions[j].kind != TX_CHECK && actions[j].t == actions[i].t;
		if (seen)
			continue;			/* the table's list is already out */
		if (!any)
		{
			RqPushKey(st, "ItemCollectionMetrics");
			pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
			any = true;
		}
		RqPushKey(st, DynCatalogRequestName(actions[i].t->name));
		pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
		for (j = i; j < n; j++)
			if (actions[j].kind != TX_CHECK && actions[j].t == actions[i].t)
				DynCollectionPushMetrics(st, actions[j].t, &actions[j].key);
		pushJsonbValue(st, WJB_END_ARRAY, NULL);
	}
	if (any)
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* ---------------------------------------------------------------- idempotency */

/*
 * ClientRequestToken: a token seen in the last 10 minutes with the same
 * request makes the request a no-op that succeeds; with another request it
 * is IdempotentParameterMismatchException.  Returns true when the request
 * was already done.  Tokens are scoped to the calling role (another role's
 * token is a new request for it, and cannot block or replay another's), and
 * the check comes after the authorization of every table of the request
 * (the table lookups of step 1).  dynindex.transaction_tokens is internal:
 * it is read and written with the extension owner's rights.
 */
static bool
check_token(Jsonb *req, const char *token)
{
	uint8		hash[PG_SHA256_DIGEST_LENGTH];
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	char	   *canonical = JsonbToCString(NULL, &req->root, VARSIZE(req));
	bytea	   *digest = palloc(VARHDRSZ + sizeof(hash));
	Oid			types[3] = {TEXTOID, BYTEAOID, OIDOID};
	Datum		args[3];
	bool		isnull;
	bool		done = false;
	bool		mismatch = false;
	DynSecurityState sec;

	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (uint8 *) canonical, strlen(canonical)) < 0 ||
		pg_cryptohash_final(ctx, hash, sizeof(hash)) < 0)
		elog(ERROR, "could not hash the request");
	pg_cryptohash_free(ctx);
	SET_VARSIZE(digest, VARHDRSZ + sizeof(hash));
	memcpy(VARDATA(digest), hash, sizeof(hash));
	args[0] = CStringGetTextDatum(token);
	args[1] = PointerGetDatum(digest);
	args[2] = ObjectIdGetDatum(DynSecurityCaller());

	DynSecurityBeginInternal(&sec);
	if (SPI_execute("DELETE FROM dynindex.transaction_tokens WHERE created_at < now() - interval '10 minutes'",
					false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not expire transaction tokens");
	if (SPI_execute_with_args("SELECT request_hash = $2 FROM dynindex.transaction_tokens WHERE token = $1 AND role_oid = $3",
							  3, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read transaction tokens");
	if (SPI_processed > 0)
	{
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			done = true;
		else
			mismatch = true;
	}
	else if (SPI_execute_with_args("INSERT INTO dynindex.transaction_tokens (token, request_hash, role_oid) VALUES ($1, $2, $3)",
								   3, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the transaction token");
	DynSecurityEndInternal(&sec);
	if (mismatch)
		DynError(DYN_ERR_IDEMPOTENT_PARAMETER_MISMATCH,
				 "Request has the same client token as a previous request, but is not the same request");
	if (!done)
		DynStorageCommitWithLocal();	/* on Citus: the token commits with the items */
	return done;
}

/* ---------------------------------------------------------------- operations */

/* TransactWriteItems */
Jsonb *
DynTransactWriteItems(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *elems;
	int			n;
	int			i;
	int			j;
	TxAction   *actions;
	bool		failed = false;
	DynCapacityMode mode;
	DynCapacity *caps;
	int			ncaps = 0;
	char	   *token;
	JsonbParseState *st = NULL;
	MemoryContext cxt = CurrentMemoryContext;
	volatile int at = -1;

	RqValidate(req, transact_write_fields);
	if (VARSIZE(req) > MAX_TRANSACT_PAYLOAD)
		DynValidationError("Transaction request payload size cannot exceed 4 MB");
	elems = RqArrayElems(RqGet(r, "TransactItems"), &n);
	actions = palloc0(sizeof(TxAction) * n);
	mode = DynCapacityModeOf(r);
	caps = palloc0(sizeof(DynCapacity) * n);

	/* step 1: the whole request */
	for (i = 0; i < n; i++)
	{
		int			found = 0;
		int			k;

		for (k = 0; k < 4; k++)
		{
			JsonbValue *spec = RqGetJv(&elems[i], kind_names[k]);

			if (spec)
			{
				actions[i].kind = (TxKind) k;
				actions[i].spec = spec;
				found++;
			}
		}
		if (found != 1)
			DynValidationError("TransactItems can only contain one of Check, Put, Update or Delete");
	}
	for (i = 0; i < n; i++)
		parse_action(&actions[i]);
	/* every action's expressions before any table's existence */
	for (i = 0; i < n; i++)
		actions[i].t = DynItemsGetTable(RqGetString(actions[i].spec->val.binary.data, "TableName"));
	for (i = 0; i < n; i++)
		check_empty_keys(&actions[i]);

	token = RqGetString(r, "ClientRequestToken");
	if (token && check_token(req, token))
		return RqEmptyObject();

	/* step 2: each action's data, stopping at the first problem */
	for (i = 0; i < n && !failed; i++)
		failed = !validate_action_reason(&actions[i]);
	if (failed)
		cancel(actions, n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (same_item(&actions[i], &actions[j]))
				DynValidationError("Transaction request cannot include multiple operations on one item");
	check_throughput(actions, n, false);

	/* the items' locks, step 3 and the writes: a conflict is a cancellation reason */
	for (i = 0; i < n; i++)
	{
		actions[i].all = actions;
		actions[i].nall = n;
	}
	PG_TRY();
	{
		lock_items(actions, n, &at);
		if (!check_conditions(actions, n, &at))
			cancel(actions, n);
		/* an item collection grown past the limit: the whole transaction rolls back */
		if (!write_items(actions, n, mode, caps, &ncaps, &at))
			cancel(actions, n);
	}
	PG_CATCH();
	{
		answer_conflict(cxt, actions, n, at);
	}
	PG_END_TRY();

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	DynCapacityPushList(&st, caps, ncaps);
	if (RqStringIs(r, "ReturnItemCollectionMetrics", "SIZE"))
		push_collection_metrics(&st, actions, n);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* The key of a TransactGetItems action (with action_reason's signature). */
static void
parse_get_key(TxAction *a, const DynValue *unused)
{
	DynItemsParseKey(a->t, RqGetJv(a->spec, "Key"), &a->key);
}

/* TransactGetItems */
Jsonb *
DynTransactGetItems(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *elems;
	int			n;
	int			i;
	DynTable  **tables;
	DynKey	   *keys;
	DynExpr   **projections;
	DynCapacityMode mode = DynCapacityModeOf(r);
	DynCapacity *caps;
	int			ncaps = 0;
	JsonbParseState *st = NULL;
	TxAction   *gets;
	bool	   *found;
	DynStoredItem *stored;
	MemoryContext cxt = CurrentMemoryContext;
	volatile int at = -1;

	RqValidate(req, transact_get_fields);
	elems = RqArrayElems(RqGet(r, "TransactItems"), &n);
	tables = palloc0(sizeof(DynTable *) * n);
	keys = palloc0(sizeof(DynKey) * n);
	projections = palloc0(sizeof(DynExpr *) * n);
	caps = palloc0(sizeof(DynCapacity) * n);

	for (i = 0; i < n; i++)
	{
		JsonbValue *get = RqGetJv(&elems[i], "Get");

		projections[i] = DynItemsParseProjection(get->val.binary.data);
		RqParseItem(RqGetJv(get, "Key"));
	}
	for (i = 0; i < n; i++)
	{
		JsonbValue *get = RqGetJv(&elems[i], "Get");

		tables[i] = DynItemsGetTable(RqGetString(get->val.binary.data, "TableName"));
	}
	/* empty key values: the whole request; a key not matching the schema: that action's reason */
	for (i = 0; i < n; i++)
		check_empty_key(tables[i], RqParseItem(RqGetJv(RqGetJv(&elems[i], "Get"), "Key")));
	gets = palloc0(sizeof(TxAction) * n);
	{
		bool		failed = false;

		for (i = 0; i < n && !failed; i++)
		{
			gets[i].t = tables[i];
			gets[i].spec = RqGetJv(&elems[i], "Get");
			failed = !action_reason(&gets[i], parse_get_key, NULL);
			keys[i] = gets[i].key;
		}
		if (failed)
			cancel(gets, n);
	}
	for (i = 0; i < n; i++)
	{
		int			j;

		for (j = 0; j < i; j++)
			if (tables[i] == tables[j] && DynKeyEquals(&keys[i], &keys[j]))
				DynValidationError("Transaction request cannot include multiple operations on one item");
		DynItemsCheckKeyPaths(tables[i], projections[i]);
	}
	check_throughput(gets, n, true);

	/*
	 * one snapshot for every read: the reads see one consistent state.  They
	 * take no lock, but SERIALIZABLE can refuse one: a conflict, the
	 * cancellation reason TransactionConflict at that read.
	 */
	found = palloc0(sizeof(bool) * n);
	stored = palloc0(sizeof(DynStoredItem) * n);
	PG_TRY();
	{
		for (i = 0; i < n; i++)
		{
			at = i;
			found[i] = DynStorageGet(tables[i], &keys[i], false, &stored[i]);
		}
	}
	PG_CATCH();
	{
		answer_conflict(cxt, gets, n, at);
	}
	PG_END_TRY();

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Responses");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
	{
		DynCapacity *c = capacity_for(caps, &ncaps, tables[i], mode, true);

		DynCapacityAddItemRead(c, found[i] ? stored[i].size : 0, true);
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		if (found[i])
		{
			RqPushKey(&st, "Item");
			if (projections[i])
				RqPushJsonb(&st, WJB_VALUE,
							DynItemToJsonb(DynApplyProjection(projections[i], DynItemFromStored(stored[i].item))));
			else
				RqPushJsonb(&st, WJB_VALUE, stored[i].item);
		}
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	DynCapacityPushList(&st, caps, ncaps);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
