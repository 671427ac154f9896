/*
 * batch.c — BatchGetItem and BatchWriteItem.
 *
 * Everything runs in the calling transaction.  A key or write whose table
 * (or, for writes, one of its GSIs) has an empty token bucket is left
 * unprocessed (UnprocessedKeys, UnprocessedItems), as DynamoDB does; when
 * none can be processed for that reason the request fails with the
 * throttling error (api/throughput.c).  UnprocessedKeys also holds what the
 * 16 MB response limit left over; UnprocessedItems is always present.
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "api/api.h"
#include "api/items.h"
#include "common/errors.h"
#include "indexes/indexes.h"

#define MAX_BATCH_GET_KEYS		100
#define MAX_BATCH_WRITE_ITEMS	25
#define MAX_BATCH_GET_RESPONSE	(16 * 1024 * 1024)

static const RqField string_elem = {.type = RQ_STRING};
static const RqField attrvalue_elem = {.type = RQ_ATTRVALUE};
static const RqField key_map_elem = {.type = RQ_MAP,.elem = &attrvalue_elem};

static const RqField keys_and_attributes_fields[] = {
	{.name = "Keys",.type = RQ_LIST,.elem = &key_map_elem,.notnull = true,.minlen = 1,.maxlen = 100,
	.newform = RQ_NEWFORM_MIN | RQ_NEWFORM_MAX},
	{.name = "AttributesToGet",.type = RQ_LIST,.elem = &RqAttributeNameElem,.minlen = 1},
	{.name = "ConsistentRead",.type = RQ_BOOLEAN},
	{.name = "ProjectionExpression",.type = RQ_STRING},
	{.name = "ExpressionAttributeNames",.type = RQ_MAP,.elem = &string_elem},
	{0}
};
static const RqField keys_and_attributes = {
	.type = RQ_STRUCT,.structname = "KeysAndAttributes",.fields = keys_and_attributes_fields
};

static const RqField batch_get_fields[] = {
	/*
	 * An empty map or Keys list in DynamoDB's newer constraint form ("Value at
	 * 'RequestItems' ..."): every region but me-central-1 since 2026-09-02
	 * (the DynamoDB conformance suite, error-messages/batchGetItem.test.ts).
	 */
	{.name = "RequestItems",.type = RQ_MAP,.elem = &keys_and_attributes,.notnull = true,.minlen = 1,
	.mapkeys_tablename = true,.mapkeys_json = true,.newform = RQ_NEWFORM_MIN},
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	{0}
};

static const RqField put_request_fields[] = {
	{.name = "Item",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	{0}
};
static const RqField delete_request_fields[] = {
	{.name = "Key",.type = RQ_MAP,.elem = &attrvalue_elem,.notnull = true},
	{0}
};
static const RqField write_request_fields[] = {
	{.name = "PutRequest",.type = RQ_STRUCT,.structname = "PutRequest",.fields = put_request_fields},
	{.name = "DeleteRequest",.type = RQ_STRUCT,.structname = "DeleteRequest",.fields = delete_request_fields},
	{0}
};
static const RqField write_request = {.type = RQ_STRUCT,.structname = "WriteRequest",.fields = write_request_fields};
static const RqField write_request_list = {.type = RQ_LIST,.elem = &write_request,.minlen = 1,.maxlen = 25};

static const RqField batch_write_fields[] = {
	{.name = "RequestItems",.type = RQ_MAP,.elem = &write_request_list,.notnull = true,.minlen = 1,
	.mapkeys_tablename = true,.mapkeys_yield = true,.empty_msg = "The requestItems parameter is required for BatchWriteItem"},
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	{.name = "ReturnItemCollectionMetrics",.type = RQ_STRING,.enumvals = RqReturnItemCollectionMetricsEnum},
	{0}
};

/*
 * A PutRequest item that lacks a table key attribute, or holds one of the
 * wrong type (or not a scalar): BatchWriteItem answers "The provided key
 * element does not match the schema", where PutItem names the key (and both
 * types).  Sources: DynamoDB eu-west-2, 2026-06 (nubo-db/dynoxide#97), and
 * the conformance suite and live AWS, 2026-09 (floci-io/floci#3227).
 */
static void
check_put_key_types(DynTable *t, DynValue *item)
{
	const DynKeyAttr *attrs[2] = {&t->hash, t->has_range ? &t->range : NULL};
	int			i;

	for (i = 0; i < 2 && attrs[i]; i++)
	{
		DynValue   *v = DynMapGetStr(item, attrs[i]->name);

		if (v == NULL || v->type != attrs[i]->type)
			DynValidationError("The provided key element does not match the schema");
	}
}

/* Reject a key list with the same key twice. */
static void
check_duplicate_keys(DynKey *keys, int n)
{
	int			i;
	int			j;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (DynKeyEquals(&keys[i], &keys[j]))
				DynValidationError("Provided list of item keys contains duplicates");
}

/*
 * What throughput left undone in a batch (api/throughput.c): per table,
 * whether anything was throttled, and the first reason, for the error
 * raised when nothing at all could be processed.
 */
typedef struct BatchThrottle
{
	int			processed;
	int			first_table;	/* -1: nothing throttled */
	DynThrottleReason first;
	bool	   *throttled;		/* per table */
} BatchThrottle;

/* Start counting for ntables tables. */
static void
batch_throttle_init(BatchThrottle *bt, int ntables)
{
	memset(bt, 0, sizeof(*bt));
	bt->first_table = -1;
	bt->throttled = palloc0(sizeof(bool) * Max(1, ntables));
}

/* May the batch read (write) key of table i?  Counts it as processed or throttled. */
static bool
batch_admit(BatchThrottle *bt, DynTable *t, int i, bool is_read, const DynKey *key)
{
	DynThrottleReason why = DynThroughputCheck(t, is_read, -1, key);

	if (!why.throttled)
	{
		bt->processed++;
		return true;
	}
	bt->throttled[i] = true;
	if (bt->first_table < 0)
	{
		bt->first = why;
		bt->first_table = i;
	}
	return false;
}

/*
 * The batch is done: when nothing could be processed for want of throughput,
 * the throttling error (DynamoDB's answer then); else one ThrottledRequests
 * per table that had something throttled.
 */
static void
batch_throttle_finish(BatchThrottle *bt, DynTable **tables, int ntables)
{
	int			i;

	if (bt->processed == 0 && bt->first_table >= 0)
		DynThroughputRaise(tables[bt->first_table], &bt->first);
	for (i = 0; i < ntables; i++)
		if (bt->throttled[i])
			DynThroughputCountRequest(tables[i]);
}

/* Table name of a RequestItems member. */
static char *
member_name(JsonbValue *k)
{
	return pnstrdup(k->val.string.val, k->val.string.len);
}

/* BatchGetItem */
Jsonb *
DynBatchGetItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *names;
	JsonbValue *specs;
	int			ntables;
	int			i;
	int			total = 0;
	DynCapacityMode mode;
	JsonbParseState *st = NULL;
	DynExpr   **projections;
	DynTable  **tables;
	DynKey	  **keys;
	int		   *nkeys;
	DynCapacity *caps;
	int64		response_bytes = 0;
	bool		any_unprocessed = false;
	bool	  **unprocessed;
	BatchThrottle bt;

	RqValidate(req, batch_get_fields);
	mode = DynCapacityModeOf(r);
	ntables = RqObjectMembers(RqGet(r, "RequestItems"), &names, &specs);
	projections = palloc0(sizeof(DynExpr *) * ntables);
	tables = palloc0(sizeof(DynTable *) * ntables);
	keys = palloc0(sizeof(DynKey *) * ntables);
	nkeys = palloc0(sizeof(int) * ntables);
	caps = palloc0(sizeof(DynCapacity) * ntables);
	unprocessed = palloc0(sizeof(bool *) * ntables);
	batch_throttle_init(&bt, ntables);

	/* validate everything before reading anything */
	for (i = 0; i < ntables; i++)
	{
		JsonbValue *kl;
		int			j;

		projections[i] = DynItemsParseProjection(specs[i].val.binary.data);
		kl = RqArrayElems(RqGetJv(&specs[i], "Keys"), &nkeys[i]);
		total += nkeys[i];
		if (total > MAX_BATCH_GET_KEYS)
			DynValidationError("Too many items requested for the BatchGetItem call");
		for (j = 0; j < nkeys[i]; j++)
			RqParseItem(&kl[j]);
	}
	for (i = 0; i < ntables; i++)
	{
		JsonbValue *kl;
		int			j;

		tables[i] = DynItemsGetTable(member_name(&names[i]));
		DynCapacityInit(&caps[i], tables[i], mode, true);
		caps[i].precharged = true;
		kl = RqArrayElems(RqGetJv(&specs[i], "Keys"), &nkeys[i]);
		keys[i] = palloc(sizeof(DynKey) * Max(1, nkeys[i]));
		for (j = 0; j < nkeys[i]; j++)
			DynItemsParseKey(tables[i], &kl[j], &keys[i][j]);
		check_duplicate_keys(keys[i], nkeys[i]);
		DynItemsCheckKeyPaths(tables[i], projections[i]);
	}

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Responses");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < ntables; i++)
	{
		bool		consistent = RqGetBool(specs[i].val.binary.data, "ConsistentRead", false);
		int			j;

		unprocessed[i] = palloc0(sizeof(bool) * Max(1, nkeys[i]));
		RqPushKey(&st, DynCatalogRequestName(tables[i]->name));
		pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
		for (j = 0; j < nkeys[i]; j++)
		{
			DynStoredItem stored;
			bool		found;
			DynCapacity one;

			if (response_bytes > MAX_BATCH_GET_RESPONSE)
			{
				any_unprocessed = unprocessed[i][j] = true;
				continue;
			}
			if (!batch_admit(&bt, tables[i], i, true, &keys[i][j]))
			{
				any_unprocessed = unprocessed[i][j] = true;
				continue;
			}
			found = DynStorageGet(tables[i], &keys[i][j], false, &stored);
			/* charged key by key: the next key's admission sees this one's units */
			DynCapacityInit(&one, tables[i], mode, true);
			DynCapacityAddItemRead(&one, found ? stored.size : 0, consistent);
			DynThroughputCharge(&one);
			DynCapacityMerge(&caps[i], &one);
			if (!found)
				continue;
			response_bytes += stored.size;
			if (projections[i])
				RqPushJsonb(&st, WJB_ELEM,
							DynItemToJsonb(DynApplyProjection(projections[i], DynItemFromStored(stored.item))));
			else
				RqPushJsonb(&st, WJB_ELEM, stored.item);
		}
		pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	batch_throttle_finish(&bt, tables, ntables);

	/* UnprocessedKeys: what throttling or the 16 MB limit left over, with its options */
	RqPushKey(&st, "UnprocessedKeys");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (any_unprocessed)
	{
		for (i = 0; i < ntables; i++)
		{
			JsonbValue *kl;
			int			n;
			int			j;
			bool		started = false;

			kl = RqArrayElems(RqGetJv(&specs[i], "Keys"), &n);
			for (j = 0; j < n; j++)
			{
				if (!unprocessed[i][j])
					continue;
				if (!started)
				{
					JsonbIterator *it = JsonbIteratorInit(specs[i].val.binary.data);
					JsonbValue	v;
					JsonbIteratorToken tok;

					RqPushKey(&st, DynCatalogRequestName(tables[i]->name));
					pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
					/* the table's other members (ConsistentRead, ProjectionExpression, ...) as given */
					while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
					{
						if (tok != WJB_KEY)
							continue;
						if (v.val.string.len == 4 && memcmp(v.val.string.val, "Keys", 4) == 0)
						{
							(void) JsonbIteratorNext(&it, &v, true);
							continue;
						}
						pushJsonbValue(&st, WJB_KEY, &v);
						tok = JsonbIteratorNext(&it, &v, true);
						pushJsonbValue(&st, WJB_VALUE, &v);
					}
					RqPushKey(&st, "Keys");
					pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
					started = true;
				}
				pushJsonbValue(&st, WJB_ELEM, &kl[j]);
			}
			if (started)
			{
				pushJsonbValue(&st, WJB_END_ARRAY, NULL);
				pushJsonbValue(&st, WJB_END_OBJECT, NULL);
			}
		}
	}
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);

	DynCapacityPushList(&st, caps, ntables);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* One parsed write request. */
typedef struct WriteOp
{
	DynValue   *item;			/* PutRequest, or NULL for DeleteRequest */
	DynKey		key;
} WriteOp;

/*
 * ItemCollectionMetrics of a BatchWriteItem (ReturnItemCollectionMetrics=SIZE):
 * table name -> one metrics object per write to a table with an LSI.
 */
static void
push_collection_metrics(JsonbParseState **st, JsonbContainer *r, DynTable **tables, WriteOp **ops,
						int *nops, bool **unprocessed, int ntables)
{
	int			i;
	int			j;
	bool		any = false;

	if (!RqStringIs(r, "ReturnItemCollectionMetrics", "SIZE"))
		return;
	for (i = 0; i < ntables; i++)
	{
		if (!DynTableHasLsi(tables[i]) || nops[i] == 0)
			continue;
		if (!any)
		{
			RqPushKey(st, "ItemCollectionMetrics");
			pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
			any = true;
		}
		RqPushKey(st, DynCatalogRequestName(tables[i]->name));
		pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
		for (j = 0; j < nops[i]; j++)
			if (!unprocessed[i][j])
				DynCollectionPushMetrics(st, tables[i], &ops[i][j].key);
		pushJsonbValue(st, WJB_END_ARRAY, NULL);
	}
	if (any)
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* BatchWriteItem */
Jsonb *
DynBatchWriteItem(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *names;
	JsonbValue *lists;
	int			ntables;
	int			i;
	int			total = 0;
	DynCapacityMode mode;
	JsonbParseState *st = NULL;
	DynTable  **tables;
	WriteOp   **ops;
	int		   *nops;
	DynCapacity *caps;
	bool	  **unprocessed;
	bool		any_unprocessed = false;
	BatchThrottle bt;

	RqValidate(req, batch_write_fields);
	mode = DynCapacityModeOf(r);
	ntables = RqObjectMembers(RqGet(r, "RequestItems"), &names, &lists);
	tables = palloc0(sizeof(DynTable *) * ntables);
	ops = palloc0(sizeof(WriteOp *) * ntables);
	nops = palloc0(sizeof(int) * ntables);
	caps = palloc0(sizeof(DynCapacity) * ntables);

	/* validate every request before writing anything */
	for (i = 0; i < ntables; i++)
	{
		JsonbValue *reqs = RqArrayElems(&lists[i], &nops[i]);
		int			j;

		total += nops[i];
		ops[i] = palloc0(sizeof(WriteOp) * Max(1, nops[i]));
		for (j = 0; j < nops[i]; j++)
		{
			JsonbValue *put = RqGetJv(&reqs[j], "PutRequest");
			JsonbValue *del = RqGetJv(&reqs[j], "DeleteRequest");

			if ((put == NULL) == (del == NULL))
				DynValidationError("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes");
			if (put)
			{
				ops[i][j].item = RqParseItem(RqGetJv(put, "Item"));
				if (DynItemSize(ops[i][j].item) > DYN_MAX_ITEM_SIZE)
					DynValidationError("Item size has exceeded the maximum allowed size");
			}
			else
				RqParseItem(RqGetJv(del, "Key"));
		}
	}
	if (total > MAX_BATCH_WRITE_ITEMS)
		DynValidationError("Too many items requested for the BatchWriteItem call");
	for (i = 0; i < ntables; i++)
	{
		JsonbValue *reqs = RqArrayElems(&lists[i], &nops[i]);
		DynKey	   *keys = palloc(sizeof(DynKey) * Max(1, nops[i]));
		int			j;

		tables[i] = DynItemsGetTable(member_name(&names[i]));
		DynCapacityInit(&caps[i], tables[i], mode, false);
		caps[i].precharged = true;
		for (j = 0; j < nops[i]; j++)
		{
			if (ops[i][j].item)
			{
				check_put_key_types(tables[i], ops[i][j].item);
				DynWriteKeyFromItem(tables[i], ops[i][j].item, &ops[i][j].key);
			}
			else
				DynItemsParseKey(tables[i], RqGetJv(RqGetJv(&reqs[j], "DeleteRequest"), "Key"), &ops[i][j].key);
			keys[j] = ops[i][j].key;
		}
		check_duplicate_keys(keys, nops[i]);
	}

	/* the items' locks, in the order every multi-item writer takes them (write.h) */
	{
		DynWriteLockItem *items = palloc(sizeof(DynWriteLockItem) * Max(1, total));
		int			n = 0;
		int			at;

		for (i = 0; i < ntables; i++)
			for (int j = 0; j < nops[i]; j++)
			{
				items[n].t = tables[i];
				items[n].key = &ops[i][j].key;
				items[n++].pos = 0;
			}
		DynWriteLockItems(items, n, &at);
		pfree(items);
	}

	unprocessed = palloc0(sizeof(bool *) * ntables);
	batch_throttle_init(&bt, ntables);
	for (i = 0; i < ntables; i++)
	{
		int			j;

		unprocessed[i] = palloc0(sizeof(bool) * Max(1, nops[i]));
		for (j = 0; j < nops[i]; j++)
		{
			WriteOp    *op = &ops[i][j];
			DynWriteResult res;
			/*
			 * the old item is read only when capacity needs it (or an LSI, or a
			 * stream); without indexes the capacity needs its size only
			 */
			int			flags = !DynCapacityWanted(mode) ? 0 :
				tables[i]->nindexes == 0 ? DYN_WRITE_NEED_OLDSIZE : DYN_WRITE_NEED_OLD;

			if (!batch_admit(&bt, tables[i], i, false, &op->key))
			{
				any_unprocessed = unprocessed[i][j] = true;
				continue;
			}
			if (op->item)
				DynWritePut(tables[i], &op->key, op->item, flags, &res);
			else
				DynWriteDelete(tables[i], &op->key, flags, &res);
			if (DynCapacityWanted(mode))
			{
				/* charged write by write: the next write's admission sees this one's units */
				DynCapacity one;

				DynCapacityInit(&one, tables[i], mode, false);
				DynCapacityAddWrite(&one, res.old, res.oldsize, res.new, res.newsize);
				DynThroughputCharge(&one);
				DynCapacityMerge(&caps[i], &one);
			}
		}
	}
	batch_throttle_finish(&bt, tables, ntables);

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "UnprocessedItems");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < ntables && any_unprocessed; i++)
	{
		JsonbValue *reqs = RqArrayElems(&lists[i], &nops[i]);
		int			j;
		bool		started = false;

		for (j = 0; j < nops[i]; j++)
		{
			if (!unprocessed[i][j])
				continue;
			if (!started)
			{
				RqPushKey(&st, DynCatalogRequestName(tables[i]->name));
				pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
				started = true;
			}
			pushJsonbValue(&st, WJB_ELEM, &reqs[j]);
		}
		if (started)
			pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	DynCapacityPushList(&st, caps, ntables);
	push_collection_metrics(&st, r, tables, ops, nops, unprocessed, ntables);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
