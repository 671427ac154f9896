/*
 * gsi_capture.c — the writer's side of GSI maintenance: one change record
 * per written item, in the writing transaction, and a wake-up of the
 * database's GSI worker when that transaction commits.
 *
 * A change record names the table (by its internal number) and the base
 * key only; the worker re-reads the committed item and recomputes every
 * GSI entry, so applying a record is idempotent and records of one key
 * need no ordering among themselves.  A rolled-back write takes its record
 * with it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "common/errors.h"
#include "common/wakeup.h"

#include "indexes/indexes.h"
#include "security/security.h"
#include "storage/storage.h"

static SPIPlanPtr capture_plan = NULL;
static bool wake_at_commit = false;
static bool callback_registered = false;

/* Transaction callback: wake the worker once the changes are committed. */
static void
gsi_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && wake_at_commit)
		DynWorkerWake(MyDatabaseId);
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		wake_at_commit = false;
}

/*
 * Wake the database's GSI worker when the current transaction commits (an
 * UpdateTable that creates a GSI: woken before the commit, the worker would
 * not see the new index yet and look again only after its naptime).
 */
void
DynGsiWakeAtCommit(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(gsi_xact_callback, NULL);
		callback_registered = true;
	}
	wake_at_commit = true;
}

/* Record a change of one item of a table with GSIs. */
void
DynGsiCapture(DynTable *t, const DynKey *key)
{
	Datum		args[3];
	DynSecurityState sec;

	if (capture_plan == NULL)
	{
		Oid			types[3] = {INT8OID, BYTEAOID, BYTEAOID};
		SPIPlanPtr	plan = SPI_prepare("INSERT INTO dynindex.gsi_changes (table_num, pk, sk) VALUES ($1, $2, $3)",
									   3, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare the GSI change capture");
		capture_plan = plan;
	}
	args[0] = Int64GetDatum(t->num);
	args[1] = PointerGetDatum(key->pk);
	args[2] = PointerGetDatum(key->sk);
	/* the queue is internal: written with the extension owner's rights */
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_plan(capture_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record a GSI change");
	DynSecurityEndInternal(&sec);
	DynStorageCommitWithLocal();	/* on Citus: the record commits with the item */
	DynGsiWakeAtCommit();
}

/*
 * The catalog a request works with is fixed when the request starts.  If an
 * UpdateTable that creates the table's first GSI commits while the request
 * runs, the invalidation arrives when the write locks the storage relation,
 * i.e. before this check: the request then looks at the committed catalog
 * and records its change, so the new index cannot miss it (the backfill
 * waits for writers that were already running when it started).
 */
void
DynGsiCaptureIfCreated(DynTable *t, const DynKey *key)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	bool		isnull;
	bool		created;
	int			i;
	DynSecurityState sec;

	if (!DynCatalogIsStale())
		return;
	for (i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global)
			return;				/* captured already */
	args[0] = Int64GetDatum(t->num);
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT EXISTS (SELECT 1 FROM dynindex.indexes i JOIN dynindex.tables t "
							  "USING (table_name) WHERE t.num = $1 AND i.is_global)",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the catalog");
	created = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	DynSecurityEndInternal(&sec);
	if (created)
		DynGsiCapture(t, key);
}

PG_FUNCTION_INFO_V1(dynindex_wait_for_indexes);

/*
 * dynindex.wait_for_indexes(table_name, timeout): wait until every change
 * committed before the call is applied and no GSI of the table is
 * backfilling.  Each check runs with a new snapshot (READ COMMITTED).  The
 * changes to wait for are those queued with an id up to the largest one
 * visible at the start; a change the worker failed to apply and moved to the
 * end of the queue has a new id but keeps its first one in first_id, so it
 * is waited for too, however often it is requeued while we wait.
 */
Datum
dynindex_wait_for_indexes(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Interval   *timeout = PG_GETARG_INTERVAL_P(1);
	TimestampTz deadline;
	DynTable   *volatile t = NULL;
	int64		target = 0;
	bool		isnull;
	bool		done = false;
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		args[2];
	char	   *check_sql;
	DynSecurityOp sec_op;
	DynSecurityState sec;

	deadline = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
													   TimestampTzGetDatum(GetCurrentTimestamp()),
													   IntervalPGetDatum(timeout)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynCatalogRevalidate();
	DynSecurityEnter("wait_for_indexes", &sec_op);
	PG_TRY();
	{
		t = DynCatalogGetTableOrNotFound(name);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&sec_op);
	}
	PG_END_TRY();
	DynSecurityBeginInternal(&sec);
	args[0] = Int64GetDatum(t->num);
	if (SPI_execute_with_args("SELECT max(id) FROM dynindex.gsi_changes WHERE table_num = $1",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the GSI queue");
	target = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull)
		target = 0;
	args[1] = Int64GetDatum(target);
	/* a database still at 0.1 has no first_id (nor a change requeued with it) */
	check_sql = psprintf("SELECT NOT EXISTS (SELECT 1 FROM dynindex.gsi_changes WHERE table_num = $1 AND id <= $2) "
						 "%s AND NOT EXISTS (SELECT 1 FROM dynindex.indexes i JOIN dynindex.tables t USING (table_name) "
						 "WHERE t.num = $1 AND i.status <> 'ACTIVE')",
						 DynGsiQueueHasColumn("first_id") ?
						 "AND NOT EXISTS (SELECT 1 FROM dynindex.gsi_changes WHERE table_num = $1 AND first_id <= $2)" : "");
	DynWorkerWake(MyDatabaseId);

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (SPI_execute_with_args(check_sql, 2, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the GSI queue");
		done = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		SPI_freetuptable(SPI_tuptable);
		if (done)
		{
			DynGsiWaitApplied();	/* the last apply has committed everywhere */
			break;
		}
		if (GetCurrentTimestamp() >= deadline)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 2L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_BOOL(done);
}
