/*
 * worker.c — the launcher and the per-database GSI workers.
 *
 * The launcher (a static background worker, so it exists only when dynindex
 * is in shared_preload_libraries) keeps one dynamic worker running for each
 * database slot.  At startup it registers every connectable database, so a
 * queue left by a crash is drained without waiting for a new write; a
 * worker whose database has no dynindex exits and its slot is released.
 * Writers register their database (DynWorkerWake) when they queue a GSI
 * change and set the worker's latch at commit.  The slots and the wake-up
 * live below the layers in common/wakeup.c: the worker is a driver that
 * calls down into the GSI apply, the TTL sweep and the stream maintenance,
 * and nothing calls up into it (docs/layers.md).
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "common/wakeup.h"
#include "history/history.h"
#include "indexes/indexes.h"
#include "streams/streams.h"
#include "worker/jobs.h"
#include "worker/worker.h"
#include "write/write.h"

/* the item history trim (history/trim.c) runs this often */
#define DYN_HISTORY_TRIM_INTERVAL_S 60

/* an idle worker: after this many empty rounds it sleeps until a deadline, at most DYN_IDLE_SLEEP_MS */
#define DYN_IDLE_ROUNDS 5
#define DYN_IDLE_SLEEP_MS 60000

int			dynindex_worker_naptime_ms = 1000;
int			dynindex_gsi_batch_size = 500;
int			dynindex_ttl_interval_s = 60;

static ProcessUtility_hook_type prev_process_utility = NULL;

/*
 * The database a utility statement needs free of other connections (DROP
 * DATABASE, CREATE DATABASE ... TEMPLATE, ALTER DATABASE RENAME / SET
 * TABLESPACE), or InvalidOid.  Our worker is such a connection, and core
 * PostgreSQL does not ask background workers to leave (only autovacuum).
 */
static Oid
exclusive_database(Node *stmt)
{
	const char *name = NULL;
	ListCell   *lc;

	if (IsA(stmt, DropdbStmt))
		name = ((DropdbStmt *) stmt)->dbname;
	else if (IsA(stmt, RenameStmt) && ((RenameStmt *) stmt)->renameType == OBJECT_DATABASE)
		name = ((RenameStmt *) stmt)->subname;
	else if (IsA(stmt, CreatedbStmt))
	{
		foreach(lc, ((CreatedbStmt *) stmt)->options)
			if (strcmp(((DefElem *) lfirst(lc))->defname, "template") == 0)
				name = defGetString((DefElem *) lfirst(lc));
	}
	else if (IsA(stmt, AlterDatabaseStmt))
	{
		foreach(lc, ((AlterDatabaseStmt *) stmt)->options)
			if (strcmp(((DefElem *) lfirst(lc))->defname, "tablespace") == 0)
				name = ((AlterDatabaseStmt *) stmt)->dbname;
	}
	return name ? get_database_oid(name, true) : InvalidOid;
}

/* Keep (or stop keeping) a database's worker away; blocking also stops it. */
static void
block_worker(Oid dboid, bool block)
{
	WorkerSlot *slot;
	pid_t		pid = 0;
	Latch	   *launcher;

	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	slot = DynWorkerSlotFor(dboid, false);
	if (slot)
	{
		slot->blocked = block;
		pid = slot->pid;
	}
	launcher = DynWorkerShmem->launcher_latch;
	LWLockRelease(DynWorkerShmem->lock);
	if (block && pid != 0)
		kill(pid, SIGTERM);		/* the core command waits up to 5 s for it to go */
	if (!block && launcher)
		SetLatch(launcher);
}

/* ProcessUtility hook: move our worker out of a database that must be free. */
static void
dyn_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					ProcessUtilityContext context, ParamListInfo params,
					QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Oid			dboid = DynWorkerShmem ? exclusive_database(pstmt->utilityStmt) : InvalidOid;

	if (OidIsValid(dboid))
		block_worker(dboid, true);
	PG_TRY();
	{
		if (prev_process_utility)
			prev_process_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		/* a dropped database's slot is released by the launcher */
		if (OidIsValid(dboid))
			block_worker(dboid, false);
	}
	PG_END_TRY();
}

/* Register GUCs, hooks and the launcher. */
void
DynWorkerInit(void)
{
	BackgroundWorker bgw;

	DefineCustomIntVariable("dynindex.worker_naptime",
							"How often a GSI worker polls for a few rounds after its last work (it is woken at every commit that queues changes; idle, it sleeps until a deadline).",
							NULL, &dynindex_worker_naptime_ms, 1000, 10, 3600000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.gsi_batch_size",
							"Queued GSI changes a worker applies per transaction.",
							NULL, &dynindex_gsi_batch_size, 500, 1, 100000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.backfill_chunk_size",
							"Items a GSI backfill indexes per transaction (its position is kept after each).",
							NULL, &dynindex_backfill_chunk_size, 1000, 1, 1000000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.ttl_interval",
							"How often a database's worker deletes expired items of the tables with Time to Live enabled (0: never).",
							NULL, &dynindex_ttl_interval_s, 60, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;

	DynWorkerShmemInit();
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = dyn_process_utility;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 5;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "dynindex");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "dynindex_launcher_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "dynindex launcher");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "dynindex launcher");
	RegisterBackgroundWorker(&bgw);
}

/* Start a worker for a slot. */
static void
start_worker(WorkerSlot *slot)
{
	char		name[BGW_MAXLEN];

	snprintf(name, sizeof(name), "dynindex worker %u", slot->dboid);
	if (DynStartDatabaseWorker("dynindex_worker_main", "dynindex worker", name,
							   ObjectIdGetDatum(slot->dboid), NULL, 0, MyProcPid))
		slot->started = true;
	else
	{
		/* said once a minute at most per database: the launcher tries again at each round */
		static TimestampTz last_warning[MAX_DB_SLOTS];
		int			i = slot - DynWorkerShmem->slots;
		TimestampTz now = GetCurrentTimestamp();

		if (last_warning[i] == 0 || TimestampDifferenceExceeds(last_warning[i], now, 60 * 1000))
		{
			last_warning[i] = now;
			ereport(WARNING,
					(errmsg("dynindex: no background worker slot for the worker of database %u: its GSI changes, Time to Live and stream maintenance wait",
							slot->dboid),
					 errhint("Raise max_worker_processes (it counts the launcher, one worker per database, the endpoint's workers and import/export jobs).")));
		}
	}
}

/* Register every connectable database (launcher startup). */
static void
register_databases(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (db->datallowconn && !db->datistemplate)
			DynWorkerSlotFor(db->oid, true);
	}
	LWLockRelease(DynWorkerShmem->lock);
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * May a worker run in this database: it exists, accepts connections and is
 * not a template (a connected worker would make CREATE DATABASE from it fail)?
 */
static bool
database_usable(Oid dboid)
{
	HeapTuple	tup;
	bool		ok = false;

	StartTransactionCommand();
	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		ok = db->datallowconn && !db->datistemplate;
		ReleaseSysCache(tup);
	}
	CommitTransactionCommand();
	return ok;
}

/* The launcher: keep a worker running for every registered database. */
void
dynindex_launcher_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	DynWorkerShmem->launcher_latch = MyLatch;
	/* workers of a previous launcher are gone or will re-attach */
	LWLockRelease(DynWorkerShmem->lock);
	register_databases();

	for (;;)
	{
		int			i;
		int			ncheck = 0;
		Oid			check[MAX_DB_SLOTS];
		bool		usable[MAX_DB_SLOTS];

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		/* databases that need a worker: check them outside the lock */
		LWLockAcquire(DynWorkerShmem->lock, LW_SHARED);
		for (i = 0; i < MAX_DB_SLOTS; i++)
			if (DynWorkerShmem->slots[i].dboid != InvalidOid && !DynWorkerShmem->slots[i].absent &&
				!DynWorkerShmem->slots[i].blocked && DynWorkerShmem->slots[i].pid == 0 && !DynWorkerShmem->slots[i].started)
				check[ncheck++] = DynWorkerShmem->slots[i].dboid;
		LWLockRelease(DynWorkerShmem->lock);
		for (i = 0; i < ncheck; i++)
			usable[i] = database_usable(check[i]);

		LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
		for (i = 0; i < MAX_DB_SLOTS; i++)
		{
			WorkerSlot *slot = &DynWorkerShmem->slots[i];
			int			j;

			if (slot->dboid == InvalidOid)
				continue;
			if (slot->absent)
			{
				slot->dboid = InvalidOid;	/* no dynindex there: release */
				continue;
			}
			if (slot->pid != 0 || slot->started || slot->blocked)
				continue;
			for (j = 0; j < ncheck && check[j] != slot->dboid; j++)
				;
			if (j == ncheck)
				continue;		/* registered meanwhile: next round */
			if (!usable[j])
				slot->dboid = InvalidOid;	/* dropped, template or closed: release */
			else
				start_worker(slot);
		}
		LWLockRelease(DynWorkerShmem->lock);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* Worker exit: clear our slot so the launcher can start another. */
static void
worker_detach(int code, Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	WorkerSlot *slot;
	Latch	   *launcher;

	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	slot = DynWorkerSlotFor(dboid, false);
	if (slot && slot->pid == MyProcPid)
	{
		slot->pid = 0;
		slot->latch = NULL;
		slot->started = false;
	}
	launcher = DynWorkerShmem->launcher_latch;
	LWLockRelease(DynWorkerShmem->lock);
	if (launcher)
		SetLatch(launcher);
}

/* Does this database have the extension? */
static bool
extension_present(void)
{
	bool		present;

	StartTransactionCommand();
	present = OidIsValid(get_extension_oid("dynindex", true));
	CommitTransactionCommand();
	return present;
}

/* A per-database worker: apply queued GSI changes and run backfills. */
void
dynindex_worker_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	WorkerSlot *slot;
	MemoryContext loop_cxt;
	volatile int isolate = 0;	/* apply this many changes one at a time */
	volatile int failures = 0;	/* > 0: wait before the next round */
	volatile int backfill_failures = 0; /* consecutive failed backfill steps */
	volatile int blocked_rounds = 0;	/* consecutive rounds whose batch waited for Citus */
	volatile int64 cycle_start = 0; /* new id of the first change requeued, or 0 */
	volatile bool in_batch = false;
	TimestampTz next_ttl;		/* when the next Time to Live round is due */
	volatile TimestampTz next_streams = 0;	/* when the next stream maintenance is due */
	TimestampTz next_trim = 0;	/* when the next item history trim is due */
	volatile bool applied;		/* this round applied GSI changes */
	int			idle_rounds = 0;	/* rounds in a row with nothing to do, no wake-up */

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	/*
	 * Batches commit without waiting for their WAL flush (less lag, less
	 * I/O).  Safe: a batch lost in a crash loses its queue deletions together
	 * with its index writes (WAL is replayed in order, and every write that
	 * queued a change committed synchronously), so its records are applied
	 * again after the restart.
	 */
	SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);

	/*
	 * No JIT: the worker's statements are small, but some are estimated
	 * above jit_above_cost (the stream maintenance's lateral generate_series
	 * over streams: 140 ms of LLVM compilation per round on an empty
	 * database), and every GSI change waits behind the round
	 * (bench/gsi_lag.sh: later writes in a new database lagged 400 ms).
	 */
	SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);

	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	slot = DynWorkerSlotFor(dboid, false);
	if (slot == NULL || (slot->pid != 0 && slot->pid != MyProcPid))
	{
		LWLockRelease(DynWorkerShmem->lock);
		proc_exit(0);
	}
	slot->pid = MyProcPid;
	slot->latch = MyLatch;
	LWLockRelease(DynWorkerShmem->lock);
	before_shmem_exit(worker_detach, ObjectIdGetDatum(dboid));

	if (!extension_present())
	{
		LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
		slot->absent = true;
		LWLockRelease(DynWorkerShmem->lock);
		proc_exit(0);
	}

	loop_cxt = AllocSetContextCreate(TopMemoryContext, "dynindex worker loop", ALLOCSET_DEFAULT_SIZES);
	next_ttl = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), (int64) dynindex_ttl_interval_s * 1000);
	for (;;)
	{
		bool		more;
		long		timeout;

		CHECK_FOR_INTERRUPTS();
		DynWorkerExitIfOrphaned();	/* the busy path ("more") never waits */
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			next_streams = 0;	/* the lifetime or retention may have changed */
		}
		ResetLatch(MyLatch);
		MemoryContextSwitchTo(loop_cxt);
		if (!extension_present())
		{
			LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
			slot->absent = true;
			LWLockRelease(DynWorkerShmem->lock);
			proc_exit(0);
		}
		pgstat_report_activity(STATE_RUNNING, "applying GSI changes");
		more = false;
		applied = false;
		in_batch = true;
		PG_TRY();
		{
			int			n;
			int			limit;

			/*
			 * Batches until one is not full: the queue was empty then, and a
			 * change committed after its claim set the latch (reset before
			 * the batches), so the wait below returns at once (an empty claim
			 * after each batch cost a transaction per write).
			 */
			while ((n = DynGsiApplyBatch(limit = (isolate > 0 ? 1 : dynindex_gsi_batch_size))) > 0)
			{
				applied = true;
				isolate = Max(0, isolate - n);
				CHECK_FOR_INTERRUPTS();
				DynWorkerExitIfOrphaned();
				if (n < limit)
					break;
			}
			in_batch = false;
			more = DynGsiBackfillStep();
			failures = backfill_failures = 0;
			/* a writer's prepared transaction waits on an unreachable Citus worker: back off */
			if (n < 0)
				failures = ++blocked_rounds;
			else
				blocked_rounds = 0;
		}
		PG_CATCH();
		{
			/*
			 * An ERROR in a batch or backfill step: report it, roll back, and
			 * go on instead of exiting (a change that fails every time would
			 * otherwise stop all GSI maintenance of the database).  A failed
			 * batch is retried one change at a time; a change that fails on
			 * its own goes to the end of the queue and is retried later.
			 */
			HOLD_INTERRUPTS();
			EmitErrorReport();
			AbortOutOfAnyTransaction();
			FlushErrorState();
			RESUME_INTERRUPTS();
			MemoryContextSwitchTo(loop_cxt);
			failures = 0;
			if (in_batch && isolate > 0)
			{
				int64		old_id = 0;
				int64		new_id = DynGsiRequeueOldest(&old_id);

				isolate--;
				/* back off once every queued change failed since the first requeue */
				if (cycle_start > 0 && old_id >= cycle_start)
				{
					failures = 16;	/* only failing changes left: wait the naptime */
					cycle_start = 0;
				}
				else if (cycle_start == 0)
					cycle_start = new_id;
			}
			else if (in_batch)
				isolate = dynindex_gsi_batch_size;
			else
				failures = ++backfill_failures;
			more = in_batch;	/* go on at once with the changes behind */
		}
		PG_END_TRY();
		pgstat_report_activity(STATE_IDLE, NULL);
		MemoryContextReset(loop_cxt);

		/*
		 * Time to Live, between GSI rounds when due: at most DYN_TTL_BATCH
		 * deletions per table per round, so GSI changes never wait long;
		 * another round follows at once while a table has more expired
		 * items.  DynTtlSweepDatabase reports its errors itself.
		 */
		if (dynindex_ttl_interval_s > 0 && GetCurrentTimestamp() >= next_ttl)
		{
			bool		ttl_more;

			pgstat_report_activity(STATE_RUNNING, "deleting expired items (Time to Live)");
			ttl_more = DynTtlSweepDatabase(DYN_TTL_BATCH);
			pgstat_report_activity(STATE_IDLE, NULL);
			MemoryContextSwitchTo(loop_cxt);
			MemoryContextReset(loop_cxt);
			next_ttl = ttl_more ? GetCurrentTimestamp() :
				TimestampTzPlusMilliseconds(GetCurrentTimestamp(), (int64) dynindex_ttl_interval_s * 1000);
		}
		else if (dynindex_ttl_interval_s > 0 &&
				 next_ttl > TimestampTzPlusMilliseconds(GetCurrentTimestamp(), (int64) dynindex_ttl_interval_s * 1000))
			next_ttl = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), (int64) dynindex_ttl_interval_s * 1000);	/* interval lowered */
		/* streams: shard rotation and trimming (src/streams/maintain.c) */
		if (dynindex_stream_maintenance_interval_s > 0 &&
			GetCurrentTimestamp() >= next_streams)
		{
			pgstat_report_activity(STATE_RUNNING, "maintaining streams");
			/* the next round when the rows say something is due, not every interval */
			next_streams = DynStreamsMaintainDatabase();
			pgstat_report_activity(STATE_IDLE, NULL);
			MemoryContextSwitchTo(loop_cxt);
			MemoryContextReset(loop_cxt);
		}
		/* item history older than each table's recovery period (src/history/trim.c) */
		if (GetCurrentTimestamp() >= next_trim)
		{
			pgstat_report_activity(STATE_RUNNING, "trimming item history");
			DynHistoryTrimDatabase();
			pgstat_report_activity(STATE_IDLE, NULL);
			MemoryContextSwitchTo(loop_cxt);
			MemoryContextReset(loop_cxt);
			next_trim = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), DYN_HISTORY_TRIM_INTERVAL_S * 1000L);
		}

		/*
		 * How long to sleep on the latch.  Writers set it when they commit
		 * GSI changes, so an idle database needs no polling: after
		 * DYN_IDLE_ROUNDS rounds in a row with nothing to do and no wake-up
		 * (a few, for a waker whose transaction was not visible yet when
		 * the latch woke us: UpdateTable and EnableStream wake before their
		 * commit), the worker sleeps until its next deadline (Time to Live,
		 * stream maintenance), at most DYN_IDLE_SLEEP_MS.  Issue #23 item 10:
		 * a worker woke every naptime and maintained streams every 5 s.
		 */
		/* imports and exports waiting for a process (worker/jobs.c) */
		if (DynJobsRelaunch())
			idle_rounds = 0;
		/* global tables: an apply worker per region a table is replicated with (worker/apply.c) */
		DynApplyLaunch();
		MemoryContextSwitchTo(loop_cxt);
		MemoryContextReset(loop_cxt);
		if (applied || more || failures > 0)
			idle_rounds = 0;
		else if (idle_rounds < DYN_IDLE_ROUNDS)
			idle_rounds++;
		timeout = idle_rounds < DYN_IDLE_ROUNDS ? dynindex_worker_naptime_ms :
			Max(dynindex_worker_naptime_ms, DYN_IDLE_SLEEP_MS);
		{
			TimestampTz now = GetCurrentTimestamp();
			TimestampTz deadline = TimestampTzPlusMilliseconds(now, timeout);
			long		secs;
			int			usecs;

			if (dynindex_ttl_interval_s > 0 && next_ttl < deadline)
				deadline = next_ttl;
			if (dynindex_stream_maintenance_interval_s > 0 && next_streams < deadline)
				deadline = next_streams;
			if (next_trim < deadline)
				deadline = next_trim;
			TimestampDifference(now, deadline, &secs, &usecs);
			timeout = Max(1L, Min(timeout, secs * 1000L + usecs / 1000));
		}
		if (failures > 0)
		{
			/* back off: 20 ms doubling per consecutive failed (or blocked) round, at most the naptime */
			(void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min((long) dynindex_worker_naptime_ms, 10L << Min(failures, 16)), PG_WAIT_EXTENSION);
			continue;
		}
		if (more)
			continue;
		if (WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					  timeout, PG_WAIT_EXTENSION) & WL_LATCH_SET)
			idle_rounds = 0;	/* woken: poll a few rounds in case the waker has not committed */
	}
}
