/*
 * trim.c — the worker's history trim: rows whose valid_to is older than
 * the table's recovery period are never needed again (every restorable time
 * is later), so they are deleted, a bounded batch per transaction (the
 * BRIN index on valid_to finds them).  A deleted table whose window closed (its
 * deletion older than the period) loses its kept storage and history.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "common/errors.h"
#include "common/wakeup.h"
#include "history/history.h"
#include "security/security.h"

/* Delete old history rows and closed deleted tables, up to max_rows rows. */
int64
DynHistoryTrim(int max_rows, bool *more)
{
	int64		deleted = 0;
	uint64		n;
	uint64		i;
	SPITupleTable *tt;
	DynSecurityState sec;

	*more = false;
	if (!DynCatalogHasPitr())
		return 0;
	DynSecurityBeginInternal(&sec);
	/* deleted tables whose window closed */
	if (SPI_execute("DELETE FROM dynindex.pitr WHERE deleted_at < now() - make_interval(days => recovery_days) "
					"RETURNING history, kept_storage", false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "could not read the deleted tables with point-in-time recovery");
	tt = SPI_tuptable;
	n = SPI_processed;
	for (i = 0; i < n; i++)
	{
		char	   *history = SPI_getvalue(tt->vals[i], tt->tupdesc, 1);
		char	   *kept = SPI_getvalue(tt->vals[i], tt->tupdesc, 2);

		if (SPI_execute(psprintf("DROP TABLE IF EXISTS %s", history), false, 0) != SPI_OK_UTILITY ||
			(kept && SPI_execute(psprintf("DROP TABLE IF EXISTS %s", kept), false, 0) != SPI_OK_UTILITY))
			elog(ERROR, "could not drop the history of a deleted table");
	}

	if (SPI_execute("SELECT history, recovery_days FROM dynindex.pitr ORDER BY table_num", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the tables with point-in-time recovery");
	tt = SPI_tuptable;
	n = SPI_processed;
	for (i = 0; i < n && deleted < max_rows; i++)
	{
		char	   *history = SPI_getvalue(tt->vals[i], tt->tupdesc, 1);
		char	   *days = SPI_getvalue(tt->vals[i], tt->tupdesc, 2);
		int64		limit = max_rows - deleted;

		/* the BRIN index on valid_to finds the pages of old rows */
		if (SPI_execute(psprintf("DELETE FROM %s WHERE ctid = ANY (ARRAY(SELECT ctid FROM %s "
								 "WHERE valid_to < now() - make_interval(days => %s) LIMIT %lld))",
								 history, history, days, (long long) limit), false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not trim the history %s", history);
		deleted += SPI_processed;
		if ((int64) SPI_processed >= limit)
			*more = true;
	}
	DynSecurityEndInternal(&sec);
	return deleted;
}

/* The worker's round, in transactions of its own; errors are reported, never raised. */
void
DynHistoryTrimDatabase(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool more = true;

	while (more)
	{
		CHECK_FOR_INTERRUPTS();
		DynWorkerExitIfOrphaned();
		PG_TRY();
		{
			bool		m;
			int64		n;

			StartTransactionCommand();
			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			PushActiveSnapshot(GetTransactionSnapshot());
			n = DynHistoryTrim(DYN_HISTORY_TRIM_BATCH, &m);
			SPI_finish();
			PopActiveSnapshot();
			CommitTransactionCommand();
			more = m;
			if (n > 0)
				elog(DEBUG1, "dynindex: trimmed " INT64_FORMAT " item history rows", n);
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(cxt);
			EmitErrorReport();
			AbortOutOfAnyTransaction();
			FlushErrorState();
			more = false;
		}
		PG_END_TRY();
		MemoryContextSwitchTo(cxt);
	}
}

PG_FUNCTION_INFO_V1(dynindex_trim_history);

/* dynindex.trim_history() RETURNS bigint: the whole trim, in the caller's transaction. */
Datum
dynindex_trim_history(PG_FUNCTION_ARGS)
{
	int64		total = 0;
	bool		more = true;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	while (more)
		total += DynHistoryTrim(DYN_HISTORY_TRIM_BATCH, &more);
	SPI_finish();
	PG_RETURN_INT64(total);
}
