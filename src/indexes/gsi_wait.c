/*
 * gsi_wait.c — GSIs you can read your writes from (beyond DynamoDB, opt-in):
 * under dynindex.gsi_read_your_writes a Query or Scan of a GSI first waits,
 * at most dynindex.gsi_read_your_writes_timeout, until every change of the
 * index's table committed before the read began has been applied.
 *
 * What to wait for is read from the queue itself: the largest id of the
 * table's queued changes visible when the read begins (the reader's own
 * uncommitted changes aside: the worker cannot apply them before the reader
 * commits).  The wait ends when no change of the table with that id or a
 * smaller one is queued any more, also none the worker moved to the end of
 * the queue after a failure (first_id keeps the id it was queued with).
 * Between checks the reader sleeps on its database's condition variable,
 * which the worker broadcasts after each committed batch (common/wakeup.c):
 * one cheap index probe per applied batch, no polling.  The read that
 * follows takes a snapshot after the wait (src/api/query_scan.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "common/errors.h"
#include "common/wakeup.h"
#include "indexes/indexes.h"
#include "security/security.h"
#include "storage/storage.h"

/* the settings (docs/gsi.md, "Reading your writes") */
bool		dynindex_gsi_read_your_writes = false;
int			dynindex_gsi_read_your_writes_timeout_ms = 5000;

/* a standby has no worker to announce its applies: it looks again this often (ms) */
#define STANDBY_RECHECK_MS 10
/* the longest sleep between two checks on a primary, should an announcement be missed (ms) */
#define MAX_SLEEP_MS 1000

static SPIPlanPtr latest_plan = NULL;
static SPIPlanPtr latest_all_plan = NULL;
static SPIPlanPtr pending_plan = NULL;
static SPIPlanPtr pending_plan_v01 = NULL;

/* Register the settings (from _PG_init). */
void
DynGsiWaitInit(void)
{
	DefineCustomBoolVariable("dynindex.gsi_read_your_writes",
							 "A Query or Scan of a global secondary index first waits until every change of its table committed before it began is applied (beyond DynamoDB).",
							 "Off: DynamoDB's eventual consistency. The endpoints also turn it on per request (header X-Dynindex-Gsi-Consistency).",
							 &dynindex_gsi_read_your_writes, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.gsi_read_your_writes_timeout",
							"How long a read-your-writes Query or Scan of a global secondary index waits at most; then it fails with ServiceUnavailable.",
							NULL, &dynindex_gsi_read_your_writes_timeout_ms, 5000, 0, 3600000,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
}

/*
 * The largest id of the table's queued changes visible now, leaving out the
 * current transaction's own (uncommitted) ones; 0 if there is none.
 */
static int64
latest_change(int64 num)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(num)};
	bool		isnull;
	int64		latest = 0;

	if (!TransactionIdIsValid(GetTopTransactionIdIfAny()))
	{
		/* the transaction has written nothing: none of the changes is its own */
		if (SPI_execute_plan(DynGsiKeptPlan(&latest_plan, "SELECT max(id) FROM dynindex.gsi_changes WHERE table_num = $1",
									   1, types), args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the GSI queue");
		latest = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		return isnull ? 0 : latest;
	}
	if (SPI_execute_plan(DynGsiKeptPlan(&latest_all_plan,
								   "SELECT id, xmin FROM dynindex.gsi_changes WHERE table_num = $1 ORDER BY id DESC",
								   1, types), args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the GSI queue");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];

		if (!TransactionIdIsCurrentTransactionId(DatumGetTransactionId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull))))
			return DatumGetInt64(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
	}
	return 0;
}

/*
 * Is a change of the table queued up to id target (or first queued up to
 * it, then moved to the end of the queue) still waiting to be applied?  The
 * current transaction's own changes do not count.
 */
static bool
changes_pending(int64 num, int64 target)
{
	Oid			types[3] = {INT8OID, INT8OID, INT8OID};
	Datum		args[3] = {Int64GetDatum(num), Int64GetDatum(target), Int64GetDatum(1)};
	char		nulls[3] = {' ', ' ', ' '};
	bool		own_writes = TransactionIdIsValid(GetTopTransactionIdIfAny());
	SPIPlanPtr	plan;
	bool		isnull;

	/* a database still at 0.1 has no first_id (nor a change requeued with it) */
	if (DynGsiQueueHasColumn("first_id"))
		plan = DynGsiKeptPlan(&pending_plan,
						 "(SELECT xmin FROM dynindex.gsi_changes WHERE table_num = $1 AND id <= $2 LIMIT $3) UNION ALL "
						 "(SELECT xmin FROM dynindex.gsi_changes WHERE table_num = $1 AND first_id <= $2 LIMIT $3)",
						 3, types);
	else
		plan = DynGsiKeptPlan(&pending_plan_v01,
						 "SELECT xmin FROM dynindex.gsi_changes WHERE table_num = $1 AND id <= $2 LIMIT $3",
						 3, types);
	if (own_writes)
		nulls[2] = 'n';			/* LIMIT NULL: all of them, to skip our own */
	if (SPI_execute_plan(plan, args, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the GSI queue");
	for (uint64 i = 0; i < SPI_processed; i++)
		if (!own_writes ||
			!TransactionIdIsCurrentTransactionId(DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[i],
																					  SPI_tuptable->tupdesc, 1, &isnull))))
			return true;
	return false;
}

/*
 * The answer when the index did not catch up in time (or cannot in this
 * snapshot).  A server error (HTTP 503), so it is logged: the hint names no
 * table or index, which are the request's.
 */
static void
not_caught_up(const char *why)
{
	DynServiceUnavailable("The global secondary index has not applied every change of its table committed before the read %s (dynindex.gsi_read_your_writes).",
						  why);
}

/*
 * Before a Query or Scan of a GSI: under dynindex.gsi_read_your_writes, wait
 * until every change of the table committed before now is applied to its
 * GSIs, at most dynindex.gsi_read_your_writes_timeout; then ServiceUnavailable
 * (DynamoDB's retryable "temporary failure", HTTP 503).  Returns true if the
 * read must take a new snapshot to see what was applied (READ COMMITTED;
 * also when nothing was waited for: the statement's snapshot may predate an
 * apply the check saw).
 * Requires SPI to be connected.
 */
bool
DynGsiReadYourWrites(DynTable *t, DynIndex *idx)
{
	DynSecurityState sec;
	int64		target;
	bool		done = false;
	ConditionVariable *cv;
	TimestampTz deadline;

	if (!dynindex_gsi_read_your_writes || idx == NULL || !idx->is_global)
		return false;
	/* the queue is internal: read with the extension owner's rights */
	DynSecurityBeginInternal(&sec);
	target = latest_change(t->num);
	if (target != 0 && IsolationUsesXactSnapshot())
	{
		/* the transaction's snapshot cannot see what the worker applies later: waiting is in vain */
		DynSecurityEndInternal(&sec);
		not_caught_up("in this transaction's snapshot (REPEATABLE READ or SERIALIZABLE)");
	}
	if (target == 0)
		done = true;
	else
	{
		cv = DynWorkerAppliedCV(MyDatabaseId);
		deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), dynindex_gsi_read_your_writes_timeout_ms);
		if (!RecoveryInProgress())
			DynWorkerWake(MyDatabaseId);	/* should the worker be backing off */
		if (cv)
			ConditionVariablePrepareToSleep(cv);
		for (;;)
		{
			TimestampTz now;
			long		secs;
			int			usecs;
			long		sleep_ms;

			if (!changes_pending(t->num, target))
			{
				done = true;
				break;
			}
			now = GetCurrentTimestamp();
			if (now >= deadline)
				break;
			TimestampDifference(now, deadline, &secs, &usecs);
			sleep_ms = Max(1L, secs * 1000L + (usecs + 999) / 1000);
			if (cv == NULL || RecoveryInProgress())
			{
				/* no worker here to announce its batches (a standby, or dynindex not preloaded) */
				(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 Min(sleep_ms, STANDBY_RECHECK_MS), PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
			}
			else
				(void) ConditionVariableTimedSleep(cv, Min(sleep_ms, MAX_SLEEP_MS), PG_WAIT_EXTENSION);
			CHECK_FOR_INTERRUPTS();
		}
		if (cv)
			ConditionVariableCancelSleep();
	}
	/* on a Citus cluster: the last apply has also committed on the workers */
	if (done && DynStorageIsDistributed(idx->storage))
		DynGsiWaitApplied();
	DynSecurityEndInternal(&sec);
	if (!done)
		not_caught_up(psprintf("within %d ms", dynindex_gsi_read_your_writes_timeout_ms));
	return !IsolationUsesXactSnapshot();
}
