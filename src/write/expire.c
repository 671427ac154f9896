/*
 * expire.c — Time to Live expiry: dynindex.expire_items() and the sweep the
 * per-database worker runs for every table with TTL enabled
 * (dynindex.ttl_interval).  The setting itself is managed by api/ttl.c
 * (UpdateTimeToLive, DescribeTimeToLive).
 *
 * Expired items are deleted through DynWriteModify, the write path of
 * DeleteItem, so LSIs, GSIs, item collections and streams stay right; the
 * expiry is checked again on the locked item, so an item updated meanwhile
 * survives.
 */
#include "postgres.h"

#include <sys/time.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "common/wakeup.h"
#include "metrics/metrics.h"
#include "security/security.h"
#include "storage/storage.h"
#include "write/write.h"

/* DynamoDB ignores expiry times more than five years in the past. */
#define TTL_MAX_AGE_SECS ((int64) 5 * 365 * 86400 + 86400)

/* ---------------------------------------------------------------- catalog */

/* The table's TTL attribute, or NULL when TTL is disabled. */
char *
DynTtlAttribute(const char *table, bool lock)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	char	   *attr = NULL;
	DynSecurityState sec;

	args[0] = CStringGetTextDatum(table);
	/* dynindex.ttl is internal: read with the extension owner's rights */
	DynSecurityBeginInternal(&sec);
	if (lock &&
		SPI_execute_with_args("SELECT pg_advisory_xact_lock(5526348, hashtext($1))",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the table's time to live setting");
	if (SPI_execute_with_args("SELECT attribute_name FROM dynindex.ttl WHERE table_name = $1",
							  1, types, args, NULL, !lock, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the time to live setting");
	if (SPI_processed > 0)
		attr = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	DynSecurityEndInternal(&sec);
	return attr;
}

/* ---------------------------------------------------------------- expiry */

typedef struct ExpiryCheck
{
	const char *attr;
	char	   *now;			/* canonical numbers: the current time, */
	char	   *oldest;			/* and five years before it */
	bool		deleted;
} ExpiryCheck;

static char *
canonical(const char *text)
{
	char	   *canon;
	const char *msg = DynNumberCanonicalize(text, strlen(text), &canon);

	if (msg)
		elog(ERROR, "could not canonicalize %s: %s", text, msg);
	return canon;
}

/* Is this item expired: its attribute a Number in [oldest, now)? */
static bool
item_expired(const DynValue *item, const ExpiryCheck *ec)
{
	DynValue   *v = item ? DynMapGetStr(item, ec->attr) : NULL;

	if (v == NULL || v->type != DYN_N)
		return false;
	return DynNumberCompare(v->u.str.data, v->u.str.len, ec->now, strlen(ec->now)) < 0 &&
		DynNumberCompare(v->u.str.data, v->u.str.len, ec->oldest, strlen(ec->oldest)) >= 0;
}

/* The mutation of an expiry: delete when (still) expired, else keep the item. */
static DynValue *
expire_mutator(DynTable *t, const DynValue *old, void *arg)
{
	ExpiryCheck *ec = (ExpiryCheck *) arg;

	ec->deleted = old != NULL && item_expired(old, ec);
	if (old == NULL || ec->deleted)
		return NULL;
	return DYN_WRITE_KEEP;
}

/*
 * Delete up to max_items expired items of a table (no-op when TTL is
 * disabled).  Runs inside an SPI connection with storage writes allowed.
 */
static int64
expire_table(const char *name, int max_items)
{
	DynTable   *t = DynCatalogGetTableOrNotFound(name);
	char	   *attr = DynTtlAttribute(name, false);
	ExpiryCheck ec;
	struct timeval tv;
	char	   *sql;
	Oid			types[4] = {TEXTOID, NUMERICOID, NUMERICOID, INT4OID};
	Datum		args[4];
	SPITupleTable *tuptable;
	uint64		n;
	uint64		i;
	int64		deleted = 0;

	if (attr == NULL || max_items <= 0)
		return 0;
	gettimeofday(&tv, NULL);
	ec.attr = attr;
	ec.now = canonical(psprintf("%ld.%06ld", (long) tv.tv_sec, (long) tv.tv_usec));
	ec.oldest = canonical(psprintf("%lld", (long long) ((int64) tv.tv_sec - TTL_MAX_AGE_SECS)));

	/* candidates: a Number in range (checked again on the locked item) */
	sql = psprintf("SELECT item FROM %s WHERE item -> $1 ? 'N' "
				   "AND (item -> $1 ->> 'N')::numeric < $2 AND (item -> $1 ->> 'N')::numeric >= $3 LIMIT $4",
				   t->storage);
	args[0] = CStringGetTextDatum(attr);
	args[1] = DirectFunctionCall3(numeric_in, CStringGetDatum(ec.now), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	args[2] = DirectFunctionCall3(numeric_in, CStringGetDatum(ec.oldest), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	args[3] = Int32GetDatum(max_items);
	if (SPI_execute_with_args(sql, 4, types, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not find expired items");
	tuptable = SPI_tuptable;
	n = SPI_processed;
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		Jsonb	   *stored = DatumGetJsonbP(SPI_getbinval(tuptable->vals[i], tuptable->tupdesc, 1, &isnull));
		DynValue   *item = DynItemFromStored(stored);
		DynKey		key;
		DynWriteResult res;

		CHECK_FOR_INTERRUPTS();
		DynWorkerExitIfOrphaned();
		DynWriteKeyFromItem(t, item, &key);
		ec.deleted = false;
		DynWriteModify(t, &key, expire_mutator, &ec, "", DYN_WRITE_BY_TTL, &res);
		if (ec.deleted)
			deleted++;
	}
	SPI_freetuptable(tuptable);
	DynMetricsAdd(t->name, NULL, DYN_M_TTL_DELETED, deleted);	/* TimeToLiveDeletedItemCount */
	return deleted;
}

PG_FUNCTION_INFO_V1(dynindex_expire_items);

/* dynindex.expire_items(table_name text, max_items int DEFAULT 1000) RETURNS bigint */
Datum
dynindex_expire_items(PG_FUNCTION_ARGS)
{
	char	   *name;
	int			max_items;
	volatile int64 deleted = 0;
	DynSecurityOp op;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	max_items = PG_ARGISNULL(1) ? 1000 : PG_GETARG_INT32(1);

	DynCatalogRevalidate();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynStorageWritesBegin();
	DynSecurityEnter("expire_items", &op);
	PG_TRY();
	{
		if (DynSecurityRunsInternal("expire_items"))
		{
			DynSecurityState sec;

			DynSecurityBeginInternal(&sec);
			deleted = expire_table(name, max_items);
			DynSecurityEndInternal(&sec);
		}
		else
			deleted = expire_table(name, max_items);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&op);
		DynStorageWritesEnd();
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_INT64(deleted);
}

/*
 * The worker's TTL round: expire up to max_items items of every table with
 * TTL enabled, each table in its own transaction.  An error is reported and
 * skipped (the table is tried again next round), never raised: the caller's
 * GSI apply loop must go on.  Returns true when a table may have more
 * expired items (the caller runs another round soon).
 */
bool
DynTtlSweepDatabase(int max_items)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	  **volatile names = NULL;
	volatile int n = 0;
	volatile int i;
	volatile bool more = false;

	PG_TRY();
	{
		int			k;

		StartTransactionCommand();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_execute("SELECT table_name FROM dynindex.ttl ORDER BY 1", true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not list the tables with time to live");
		names = MemoryContextAlloc(cxt, sizeof(char *) * Max(SPI_processed, 1));
		for (k = 0; k < (int) SPI_processed; k++)
			names[k] = MemoryContextStrdup(cxt, SPI_getvalue(SPI_tuptable->vals[k], SPI_tuptable->tupdesc, 1));
		n = (int) SPI_processed;
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		return false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);

	for (i = 0; i < n; i++)
	{
		volatile bool writing = false;

		CHECK_FOR_INTERRUPTS();
		DynWorkerExitIfOrphaned();
		PG_TRY();
		{
			int64		deleted;

			StartTransactionCommand();
			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			PushActiveSnapshot(GetTransactionSnapshot());
			DynCatalogRevalidate();
			DynStorageWritesBegin();
			writing = true;
			deleted = expire_table(names[i], max_items);
			DynStorageWritesEnd();
			writing = false;
			SPI_finish();
			PopActiveSnapshot();
			CommitTransactionCommand();
			if (deleted >= max_items)
				more = true;
			if (deleted > 0)
				elog(DEBUG1, "dynindex: time to live deleted " INT64_FORMAT " items of table %s", deleted, names[i]);
		}
		PG_CATCH();
		{
			if (writing)
				DynStorageWritesEnd();
			MemoryContextSwitchTo(cxt);
			EmitErrorReport();
			AbortOutOfAnyTransaction();
			FlushErrorState();
		}
		PG_END_TRY();
		MemoryContextSwitchTo(cxt);
	}
	return more;
}
