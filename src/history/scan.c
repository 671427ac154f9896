/*
 * scan.c — reading a table as of a time, and the changes of a time range.
 *
 * The state of key k at T is its history row with the smallest valid_to > T
 * (item NULL: absent), or its current storage row when it has none.  A whole
 * table at T is one statement (one snapshot):
 *
 *   - the history keys are visited by a skip scan (a recursive query: the
 *     first key, then repeatedly the first key after the previous one), and
 *     each key's version at T is one probe of (pk, sk, valid_to > T): the
 *     cost per key does not grow with the length of its history, and only
 *     the keys changed after T give a row (v);
 *   - the items are v's items, plus the storage rows whose key is not in v
 *     (a hash anti-join on v, which holds one row per key changed since T).
 *
 * The snapshot must be taken after every commit up to T: the callers check
 * T against the horizon (DynHistoryHorizon) before the statement starts,
 * in READ COMMITTED (a snapshot-isolation transaction's snapshot may be
 * older: refused).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "history/history.h"
#include "security/security.h"

/* Fetched per cursor step. */
#define SCAN_BATCH 1000

/*
 * The items of storage relation %1$s with history %2$s at $1: pk, sk, size,
 * item (see the file comment).
 */
#define AT_SQL \
	"WITH RECURSIVE keys(pk, sk) AS ( " \
	"  (SELECT h.pk, h.sk FROM %2$s h ORDER BY h.pk, h.sk, h.valid_to LIMIT 1) " \
	"  UNION ALL " \
	"  SELECT n.pk, n.sk FROM keys k CROSS JOIN LATERAL " \
	"    (SELECT h.pk, h.sk FROM %2$s h WHERE (h.pk, h.sk) > (k.pk, k.sk) " \
	"     ORDER BY h.pk, h.sk, h.valid_to LIMIT 1) n), " \
	"v AS MATERIALIZED ( " \
	"  SELECT k.pk, k.sk, f.size, f.item FROM keys k CROSS JOIN LATERAL " \
	"    (SELECT h.size, h.item FROM %2$s h WHERE h.pk = k.pk AND h.sk = k.sk AND h.valid_to > $1 " \
	"     ORDER BY h.valid_to LIMIT 1) f) " \
	"SELECT s.pk, s.sk, s.size, s.item FROM %1$s s " \
	"  WHERE NOT EXISTS (SELECT 1 FROM v WHERE v.pk = s.pk AND v.sk = s.sk) " \
	"UNION ALL " \
	"SELECT v.pk, v.sk, v.size, v.item FROM v WHERE v.item IS NOT NULL"

/*
 * Each key of history %2$s changed in ($1, $2]: its state at $1 (the row
 * ending first in the range), at $2 (the first row after it, or the current
 * storage row of %1$s), and its last write <= $2.
 */
#define CHANGES_SQL \
	"WITH c AS (SELECT h.pk, h.sk, min(h.valid_to) AS first, max(h.valid_to) AS last FROM %2$s h " \
	"  WHERE h.valid_to > $1 AND h.valid_to <= $2 GROUP BY h.pk, h.sk) " \
	"SELECT c.pk, c.sk, a.item, CASE WHEN b.valid_to IS NOT NULL THEN b.item ELSE s.item END, c.last " \
	"FROM c JOIN %2$s a ON a.pk = c.pk AND a.sk = c.sk AND a.valid_to = c.first " \
	"LEFT JOIN LATERAL (SELECT h.valid_to, h.item FROM %2$s h WHERE h.pk = c.pk AND h.sk = c.sk " \
	"  AND h.valid_to > $2 ORDER BY h.valid_to LIMIT 1) b ON true " \
	"LEFT JOIN %1$s s ON s.pk = c.pk AND s.sk = c.sk"

/* Refuse a time not settled yet, a snapshot that may predate it, or a transaction with its own writes. */
static void
check_settled(TimestampTz at)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex item history reads need the READ COMMITTED isolation level"),
				 errhint("Read the history in its own READ COMMITTED transaction.")));
	/* its own writes are in storage, their history only at its commit */
	if (DynHistoryPending())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex item history cannot be read in a transaction that wrote items of a table with point-in-time recovery"),
				 errhint("Restore or read the history in another transaction.")));
	if (at > DynHistoryHorizon())
		elog(ERROR, "time %s is after the latest restorable time", timestamptz_to_str(at));
}

/* Fill target with the items of storage/history at `at`. */
int64
DynHistoryRestoreInto(const char *storage, const char *history, TimestampTz at, const char *target)
{
	Oid			types[1] = {TIMESTAMPTZOID};
	Datum		args[1] = {TimestampTzGetDatum(at)};

	check_settled(at);
	/* read_only = false: a snapshot taken now, after the horizon */
	if (SPI_execute_with_args(psprintf("INSERT INTO %3$s (pk, sk, size, item) " AT_SQL, storage, history, target),
							  1, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not restore the items of %s", storage);
	return (int64) SPI_processed;
}

/* Run a query with a cursor (one snapshot, taken now) and hand each row to fn. */
static void
scan_cursor(const char *sql, int nargs, Datum *args, void (*row) (HeapTuple, TupleDesc, void *), void *arg)
{
	Oid			types[2] = {TIMESTAMPTZOID, TIMESTAMPTZOID};
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);
	Portal		portal;
	MemoryContext batch = AllocSetContextCreate(CurrentMemoryContext, "dynindex history scan",
												ALLOCSET_DEFAULT_SIZES);

	if (plan == NULL)
		elog(ERROR, "could not prepare a history scan");
	portal = SPI_cursor_open(NULL, plan, args, NULL, false);
	for (;;)
	{
		uint64		i;
		MemoryContext old;
		SPITupleTable *tt;
		uint64		n;

		SPI_cursor_fetch(portal, true, SCAN_BATCH);
		tt = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
			break;
		old = MemoryContextSwitchTo(batch);
		for (i = 0; i < n; i++)
			row(tt->vals[i], tt->tupdesc, arg);
		MemoryContextSwitchTo(old);
		MemoryContextReset(batch);
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
	MemoryContextDelete(batch);
}

typedef struct ScanArg
{
	DynHistoryItemFn item_fn;
	DynHistoryChangeFn change_fn;
	void	   *arg;
} ScanArg;

/* A row of AT_SQL to the item callback. */
static void
at_row(HeapTuple tup, TupleDesc td, void *arg)
{
	ScanArg    *a = arg;
	bool		isnull;
	bytea	   *pk = DatumGetByteaPP(SPI_getbinval(tup, td, 1, &isnull));
	bytea	   *sk = DatumGetByteaPP(SPI_getbinval(tup, td, 2, &isnull));
	int32		size = DatumGetInt32(SPI_getbinval(tup, td, 3, &isnull));
	Jsonb	   *item = DatumGetJsonbP(SPI_getbinval(tup, td, 4, &isnull));

	a->item_fn(pk, sk, item, size, a->arg);
}

/* Every item of the table as of `at`. */
void
DynHistoryScanAt(DynTable *t, TimestampTz at, DynHistoryItemFn fn, void *arg)
{
	ScanArg		a = {fn, NULL, arg};
	Datum		args[1] = {TimestampTzGetDatum(at)};
	DynSecurityState sec;

	if (t->pitr.days == 0)
		elog(ERROR, "table %s has no point-in-time recovery", t->name);
	check_settled(at);
	DynSecurityBeginInternal(&sec);
	scan_cursor(psprintf(AT_SQL, t->storage, DynHistoryRelation(t->num)), 1, args, at_row, &a);
	DynSecurityEndInternal(&sec);
}

/* A row of CHANGES_SQL to the change callback. */
static void
change_row(HeapTuple tup, TupleDesc td, void *arg)
{
	ScanArg    *a = arg;
	bool		isnull;
	bytea	   *pk = DatumGetByteaPP(SPI_getbinval(tup, td, 1, &isnull));
	bytea	   *sk = DatumGetByteaPP(SPI_getbinval(tup, td, 2, &isnull));
	Datum		d;
	Jsonb	   *old_item;
	Jsonb	   *new_item;
	TimestampTz last;

	d = SPI_getbinval(tup, td, 3, &isnull);
	old_item = isnull ? NULL : DatumGetJsonbP(d);
	d = SPI_getbinval(tup, td, 4, &isnull);
	new_item = isnull ? NULL : DatumGetJsonbP(d);
	last = DatumGetTimestampTz(SPI_getbinval(tup, td, 5, &isnull));
	a->change_fn(pk, sk, old_item, new_item, last, a->arg);
}

/* Each key changed in (from, to]. */
void
DynHistoryChanges(DynTable *t, TimestampTz from, TimestampTz to, DynHistoryChangeFn fn, void *arg)
{
	ScanArg		a = {NULL, fn, arg};
	Datum		args[2] = {TimestampTzGetDatum(from), TimestampTzGetDatum(to)};
	DynSecurityState sec;

	if (t->pitr.days == 0)
		elog(ERROR, "table %s has no point-in-time recovery", t->name);
	check_settled(to);
	DynSecurityBeginInternal(&sec);
	scan_cursor(psprintf(CHANGES_SQL, t->storage, DynHistoryRelation(t->num)), 2, args, change_row, &a);
	DynSecurityEndInternal(&sec);
}
