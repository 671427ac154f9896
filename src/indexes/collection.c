/*
 * collection.c — item collections of tables with local secondary indexes:
 * the size limit per partition key (ItemCollectionSizeLimitExceededException)
 * and ItemCollectionMetrics.
 *
 * An item collection is every base item with one partition key plus every
 * LSI entry with that partition key.  Its size is summed when needed from
 * the storage relations (the table's rows with that pk, each LSI's entries
 * with that ipk): btree range scans proportional to the collection, run only
 * for tables that have LSIs, and for the limit only when a write grows the
 * collection.  DynamoDB counts an LSI entry as its projected size plus 100
 * bytes of overhead; we do the same.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/numeric.h"

#include "common/errors.h"
#include "indexes/indexes.h"

/* DynamoDB's per-entry overhead of a local secondary index entry. */
#define LSI_ENTRY_OVERHEAD 100
/* t->plans slots of the collection plans (15: size, 14: count; storage.c uses the low slots). */
#define COLLECTION_PLAN_SLOT 15

double		dynindex_item_collection_size_limit = 10737418240.0;	/* 10 GB */

/* Register the GUC (from _PG_init). */
void
DynCollectionInit(void)
{
	DefineCustomRealVariable("dynindex.item_collection_size_limit",
							 "Largest item collection (bytes: items of one partition key plus their LSI entries) of a table with local secondary indexes.",
							 "DynamoDB's limit is 10 GB; set it lower to test ItemCollectionSizeLimitExceededException.",
							 &dynindex_item_collection_size_limit,
							 10737418240.0, 0.0, 1e15,
							 PGC_USERSET, GUC_UNIT_BYTE, NULL, NULL, NULL);
}

/* Does the table have a local secondary index? */
bool
DynTableHasLsi(DynTable *t)
{
	int			i;

	for (i = 0; i < t->nindexes; i++)
		if (!t->indexes[i].is_global)
			return true;
	return false;
}

/* The table's prepared collection-size plan, preparing it on first use. */
static SPIPlanPtr
collection_plan(DynTable *t)
{
	static Oid	types[3] = {BYTEAOID, BYTEAOID, BYTEAOID};
	StringInfoData sql;
	SPIPlanPtr	plan;
	int			i;

	if (t->plans[COLLECTION_PLAN_SLOT])
		return t->plans[COLLECTION_PLAN_SLOT];
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT (SELECT coalesce(sum(size), 0) FROM %s WHERE pk = $1)::int8", t->storage);
	for (i = 0; i < t->nindexes; i++)
		if (!t->indexes[i].is_global)
			appendStringInfo(&sql, " + (SELECT coalesce(sum(size + %d), 0) FROM %s WHERE %s)::int8",
							 LSI_ENTRY_OVERHEAD, t->indexes[i].storage,
							 t->indexes[i].keyed ? "ipk = $1 AND " DYN_INDEX_KEY " >= $2 AND " DYN_INDEX_KEY " < $3" : "ipk = $1");
	plan = SPI_prepare(sql.data, 3, types);
	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "could not prepare \"%s\"", sql.data);
	t->plans[COLLECTION_PLAN_SLOT] = plan;
	return plan;
}

/*
 * Current size in bytes of the item collection of partition key pk.  Not
 * read-only: the query must see the write this command just made.
 */
int64
DynCollectionSize(DynTable *t, bytea *pk)
{
	/* $2, $3: the LSI entries of pk are this range of their key */
	Datum		args[3] = {PointerGetDatum(pk), PointerGetDatum(DynIndexKey(pk, NULL, NULL, NULL)),
	PointerGetDatum(DynIndexKeyAfter(pk))};
	bool		isnull;
	Datum		d;

	if (SPI_execute_plan(collection_plan(t), args, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not compute the item collection size");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? 0 : DatumGetInt64(d);
}

/*
 * Cheap test that a collection is under the limit without summing it: with
 * at most n items of at most 400 KB, each in every LSI (+100 bytes), the
 * collection is at most n * (400 KB * (1 + nlsi) + 100 * nlsi).  Counting up
 * to the largest n that surely fits reads only the table's btree (often
 * index-only) and stops early; under the default 10 GB limit, collections of
 * up to a few thousand items never need the full sum.
 */
static bool
collection_surely_fits(DynTable *t, bytea *pk)
{
	static Oid	types[2] = {BYTEAOID, INT8OID};
	int			nlsi = 0;
	double		per_item;
	int64		threshold;
	Datum		args[2];
	bool		isnull;
	int			i;

	for (i = 0; i < t->nindexes; i++)
		if (!t->indexes[i].is_global)
			nlsi++;
	per_item = (double) DYN_MAX_ITEM_SIZE * (1 + nlsi) + (double) LSI_ENTRY_OVERHEAD * nlsi;
	if (dynindex_item_collection_size_limit / per_item < 1.0)
		return false;
	threshold = (int64) Min(dynindex_item_collection_size_limit / per_item, 1e6);
	if (t->plans[COLLECTION_PLAN_SLOT - 1] == NULL)
	{
		char	   *sql = psprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE pk = $1 LIMIT $2) s", t->storage);
		SPIPlanPtr	plan = SPI_prepare(sql, 2, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare \"%s\"", sql);
		t->plans[COLLECTION_PLAN_SLOT - 1] = plan;
	}
	args[0] = PointerGetDatum(pk);
	args[1] = Int64GetDatum(threshold + 1);
	if (SPI_execute_plan(t->plans[COLLECTION_PLAN_SLOT - 1], args, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not count the item collection");
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) <= threshold;
}

/* What one item contributes to its collection: the item and its LSI entries. */
static int64
contribution(DynTable *t, const DynValue *item, int32 size)
{
	int64		total = size;
	int			i;

	if (item == NULL)
		return 0;
	for (i = 0; i < t->nindexes; i++)
	{
		DynIndex   *idx = &t->indexes[i];
		bytea	   *ipk;
		bytea	   *isk;

		if (idx->is_global || !DynIndexEntryKey(t, idx, item, &ipk, &isk))
			continue;
		total += LSI_ENTRY_OVERHEAD +
			(idx->projection == DYN_PROJ_ALL ? size : DynItemSize(DynIndexProject(t, idx, item)));
	}
	return total;
}

/*
 * After a write to a table with LSIs: did it grow the item collection past
 * the limit?  Writes that do not grow it (deletes, shrinking updates) are
 * always allowed, as in DynamoDB.
 */
bool
DynCollectionExceeded(DynTable *t, const DynKey *key, const DynValue *old, int32 oldsize,
					  const DynValue *new, int32 newsize)
{
	if (!DynTableHasLsi(t) || new == NULL)
		return false;
	if (contribution(t, new, newsize) <= contribution(t, old, oldsize))
		return false;
	if (collection_surely_fits(t, key->pk))
		return false;
	return (double) DynCollectionSize(t, key->pk) > dynindex_item_collection_size_limit;
}

/* After a write: ItemCollectionSizeLimitExceededException if it grew the collection past the limit. */
void
DynCollectionCheckWrite(DynTable *t, const DynKey *key, const DynValue *old, int32 oldsize,
						const DynValue *new, int32 newsize)
{
	if (DynCollectionExceeded(t, key, old, oldsize, new, newsize))
		DynError(DYN_ERR_ITEM_COLLECTION_SIZE_LIMIT_EXCEEDED, "%s", DYN_COLLECTION_EXCEEDED_MESSAGE);
}

/* Push a numeric with one decimal, as DynamoDB prints doubles (0.0, 1.0). */
static void
push_gb(JsonbParseState **st, int64 gb)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														CStringGetDatum(psprintf(INT64_FORMAT ".0", gb)),
														ObjectIdGetDatum(InvalidOid),
														Int32GetDatum(-1)));
	pushJsonbValue(st, WJB_ELEM, &v);
}

/*
 * Push one ItemCollectionMetrics object (as a member value or list element):
 * {"ItemCollectionKey": {<hash>: value}, "SizeEstimateRangeGB": [lo, hi]}
 * where lo is the collection size in whole GB rounded down and hi = lo + 1
 * (DynamoDB's estimate is a 1 GB bracket around the size).
 */
void
DynCollectionPushMetrics(JsonbParseState **st, DynTable *t, const DynKey *key)
{
	int64		gb = DynCollectionSize(t, key->pk) / (INT64CONST(1024) * 1024 * 1024);
	JsonbValue	k;

	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = "ItemCollectionKey";
	k.val.string.len = strlen(k.val.string.val);
	pushJsonbValue(st, WJB_KEY, &k);
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	k.val.string.val = t->hash.name;
	k.val.string.len = strlen(k.val.string.val);
	pushJsonbValue(st, WJB_KEY, &k);
	DynValuePushJsonb(st, key->hash);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
	k.val.string.val = "SizeEstimateRangeGB";
	k.val.string.len = strlen(k.val.string.val);
	pushJsonbValue(st, WJB_KEY, &k);
	pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	push_gb(st, gb);
	push_gb(st, gb + 1);
	pushJsonbValue(st, WJB_END_ARRAY, NULL);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}
