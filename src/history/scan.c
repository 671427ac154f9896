/*
 * scan.c — reading a table as of a time, and the changes of a time range.
 *
 * The state of key k at T is its history row with the smallest valid_to > T
 * (item NULL: absent), or its current storage row when it has none.  A whole
 * table at T is one statement (one snapshot):
 *
 *   - the keys changed after T, each with its version at T (v), come from
 *     the history rows ending after T when they are few (through the BRIN
 *     index on valid_to, sorted by key), or else from a skip scan of the
 *     history's keys (a recursive query: the first key, then repeatedly the
 *     first key after the previous one) with one probe of (pk, sk,
 *     valid_to > T) per key, a cost that does not grow with the length of
 *     a key's history;
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
 * item (see the file comment).  v, each key changed after $1 with its
 * version at $1, is found one of two ways: AT_KEYS_SKIP visits every key of
 * the history (its cost follows the keys, however many times each changed);
 * AT_KEYS_RANGE reads the rows ending after $1 through the BRIN index on
 * valid_to and sorts them (its cost follows the changes since $1: next to
 * nothing for a time of a few minutes ago, an export's usual ExportTime,
 * where the skip scan took seconds of CPU for millions of keys before the
 * first item, time an export cannot pace for the table's writers).
 * at_sql picks one.
 */
#define AT_KEYS_SKIP \
	"WITH RECURSIVE keys(pk, sk) AS ( " \
	"  (SELECT h.pk, h.sk FROM %2$s h ORDER BY h.pk, h.sk, h.valid_to LIMIT 1) " \
	"  UNION ALL " \
	"  SELECT n.pk, n.sk FROM keys k CROSS JOIN LATERAL " \
	"    (SELECT h.pk, h.sk FROM %2$s h WHERE (h.pk, h.sk) > (k.pk, k.sk) " \
	"     ORDER BY h.pk, h.sk, h.valid_to LIMIT 1) n), " \
	"v AS MATERIALIZED ( " \
	"  SELECT k.pk, k.sk, f.size, f.item FROM keys k CROSS JOIN LATERAL " \
	"    (SELECT h.size, h.item FROM %2$s h WHERE h.pk = k.pk AND h.sk = k.sk AND h.valid_to > $1 " \
	"     ORDER BY h.valid_to LIMIT 1) f) "
#define AT_KEYS_RANGE \
	"WITH v AS MATERIALIZED ( " \
	"  SELECT DISTINCT ON (h.pk, h.sk) h.pk, h.sk, h.size, h.item FROM %2$s h WHERE h.valid_to > $1 " \
	"  ORDER BY h.pk, h.sk, h.valid_to) "
#define AT_ITEMS \
	"SELECT s.pk, s.sk, s.size, s.item FROM %1$s s " \
	"  WHERE NOT EXISTS (SELECT 1 FROM v WHERE v.pk = s.pk AND v.sk = s.sk) " \
	"UNION ALL " \
	"SELECT v.pk, v.sk, v.size, v.item FROM v WHERE v.item IS NOT NULL"

/*
 * The history rows ending after $1 are few enough to read them all: fewer
 * than a sixteenth of the history's rows (at most that many are counted).
 * Reading rows costs about a quarter of a skip-scan step, so where each key
 * changed many times the range costs at most a few times the skip scan, and
 * where most keys changed once (or the time is recent) far less.
 */
#define AT_RANGE_CHECK \
	"SELECT (SELECT count(*) FROM (SELECT 1 FROM %1$s h WHERE h.valid_to > $1 LIMIT l) x) < l " \
	"FROM (SELECT greatest(c.reltuples / 16, 10000)::bigint AS l FROM pg_class c WHERE c.oid = '%1$s'::regclass) p"

/* The statement of the items at `at` of storage relation storage with history history. */
static char *
at_sql(const char *storage, const char *history, TimestampTz at)
{
	Oid			types[1] = {TIMESTAMPTZOID};
	Datum		args[1] = {TimestampTzGetDatum(at)};
	bool		isnull;
	bool		range;

	if (SPI_execute_with_args(psprintf(AT_RANGE_CHECK, history), 1, types, args, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not count the changes of %s", history);
	range = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return psprintf(range ? AT_KEYS_RANGE AT_ITEMS : AT_KEYS_SKIP AT_ITEMS, storage, history);
}

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
	if (SPI_execute_with_args(psprintf("INSERT INTO %s (pk, sk, size, item) %s", target, at_sql(storage, history, at)),
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

/* A row of the items at a time (at_sql) to the item callback. */
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
	scan_cursor(at_sql(t->storage, DynHistoryRelation(t->num), at), 1, args, at_row, &a);
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
