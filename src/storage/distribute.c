/*
 * distribute.c — storage relations as Citus distributed tables.
 *
 * With dynindex.distributed on and the citus extension installed in the
 * database, every new storage relation is distributed over the cluster:
 * a table on its encoded partition key (pk), its LSIs co-located with it
 * (their ipk is the table's pk), each GSI on its own partition key (ipk).
 * All storage columns are bytea, so every relation joins Citus's default
 * co-location group for bytea: an item collection and its LSI entries live
 * on one shard group, and a GetItem/PutItem/Query of one partition key is
 * a router statement on one worker.  The catalog, the GSI queue and the
 * streams stay ordinary tables on the coordinator, the only node that runs
 * dynindex.api.
 *
 * Citus does not run statement triggers on distributed tables (it refuses
 * to distribute a relation that has one), so a distributed relation has no
 * write guard: direct writes are kept out by privileges instead (only the
 * extension's owner may write storage; docs/scaling.md).
 *
 * Commit: a write that also records something on the coordinator (a GSI
 * change, a stream record, a transaction token) commits with Citus's
 * two-phase commit, so that the coordinator's local commit decides for the
 * workers too (DynStorageCommitWithLocal: it updates a Citus local table on
 * the coordinator, which makes Citus choose 2PC), and the GSI worker reads an item
 * only once the prepared transactions of its writer are committed on every
 * worker (DynStorageWritersCommitted).
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "common/pg_compat.h"
#include "security/security.h"
#include "storage/storage.h"

bool		dynindex_distributed = false;

/* Is the citus extension installed in this database? */
static bool
citus_present(void)
{
	return OidIsValid(get_extension_oid("citus", true));
}

/* Should new storage relations be distributed? */
bool
DynStorageDistributing(void)
{
	if (!dynindex_distributed)
		return false;
	if (!citus_present())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex.distributed is on, but the citus extension is not installed in this database"),
				 errhint("CREATE EXTENSION citus (and add worker nodes), or turn dynindex.distributed off.")));
	return true;
}

/*
 * Two-phase commit for a write with records on the coordinator.
 *
 * The current transaction may write records on the coordinator (the GSI
 * queue, a stream, a transaction token) that must commit if and only if its
 * storage writes on the workers commit.  A transaction that modified one
 * worker only is committed by Citus with a plain COMMIT sent to the worker
 * before the local commit: when the worker commits but its answer is lost
 * (it crashed at that moment), the local transaction aborts and the item
 * stays written without its records, for good.  With two-phase commit the
 * local commit is the decision, and Citus's recovery commits a worker's
 * prepared transaction later if the worker was unreachable.
 *
 * Citus has no SQL to ask for two-phase commit, and its C entry point
 * (Use2PCForCoordinatedTransaction) is not exported by builds for
 * PostgreSQL 16 and later (PGXS compiles with -fvisibility=hidden).  But
 * Citus chooses two-phase commit itself for a transaction that modifies a
 * Citus table on the coordinator besides a worker: any modification its
 * local executor runs does (local_executor.c).  So the coordinator has one
 * such table, the commit marker (COMMIT_MARKER, a Citus local table:
 * citus_add_local_table_to_metadata), registered when dynindex distributes
 * its first relation, and a write with records updates its backend's row
 * of it, once per transaction.  The rows are per backend slot, so
 * concurrent writers never wait for each other; the update is a HOT update
 * of one small row.  docs/scaling.md has the options weighed.
 */
#define COMMIT_MARKER_NAME "citus_commit"
#define COMMIT_MARKER "dynindex." COMMIT_MARKER_NAME

/* What a write with coordinator records does in this backend. */
typedef enum CommitMode
{
	COMMIT_UNKNOWN,				/* look it up (again, after a relcache invalidation) */
	COMMIT_LOCAL,				/* no Citus, or no distributed storage: nothing */
	COMMIT_MARKER_UPDATE,		/* update the commit marker */
	COMMIT_UNREGISTERED			/* distributed storage but no marker: warn */
} CommitMode;

static CommitMode commit_mode = COMMIT_UNKNOWN;
static bool commit_callbacks_registered = false;
static bool commit_marked = false;	/* the marker was updated in this transaction */
static bool commit_warned = false;
static SPIPlanPtr commit_plan = NULL;

/* Any relcache invalidation (the marker registered, a table distributed): look again. */
static void
commit_mode_inval(Datum arg, Oid relid)
{
	commit_mode = COMMIT_UNKNOWN;
}

/* The marker is updated once per transaction. */
static void
commit_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		commit_marked = false;
}

/* Is the commit marker a Citus table (Citus installed)? */
static bool
commit_marker_registered(void)
{
	if (SPI_execute("SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = "
					"pg_catalog.to_regclass('" COMMIT_MARKER "')", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the commit marker");
	return SPI_processed > 0;
}

/* This backend's commit mode (one look-up per relcache invalidation). */
static CommitMode
commit_mode_lookup(void)
{
	if (!citus_present())
		return COMMIT_LOCAL;
	if (commit_marker_registered())
		return COMMIT_MARKER_UPDATE;
	if (SPI_execute("SELECT 1 FROM pg_catalog.pg_dist_partition p JOIN pg_catalog.pg_class c "
					"ON c.oid = p.logicalrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
					"WHERE n.nspname = '" DYN_DATA_SCHEMA "'", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up distributed storage");
	return SPI_processed > 0 ? COMMIT_UNREGISTERED : COMMIT_LOCAL;
}

/*
 * Make the commit marker a Citus local table, once (a no-op when it is):
 * created in the extension's schema with the owner's rights, registered in
 * Citus's metadata, which needs the coordinator there
 * (citus_set_coordinator_host).
 */
static void
commit_marker_register(void)
{
	DynSecurityState sec;

	if (commit_marker_registered())
		return;
	if (SPI_execute("SELECT 1 FROM pg_catalog.pg_dist_node WHERE groupid = 0", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the coordinator in Citus's metadata");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex on Citus needs the coordinator in Citus's metadata"),
				 errdetail("Writes with records on the coordinator commit with two-phase commit through a "
						   "Citus local table there."),
				 errhint("SELECT citus_set_coordinator_host('<coordinator host>', <port>); on the coordinator.")));
	DynSecurityBeginInternal(&sec);
	if (!OidIsValid(get_relname_relid(COMMIT_MARKER_NAME, get_namespace_oid("dynindex", false))) &&
		(SPI_execute("CREATE TABLE " COMMIT_MARKER " (slot int4 PRIMARY KEY, writer int8 NOT NULL)",
					 false, 0) != SPI_OK_UTILITY ||
		 SPI_execute("COMMENT ON TABLE " COMMIT_MARKER " IS 'One row per backend slot, updated by a write "
					 "with records on the coordinator so that Citus commits it with two-phase commit "
					 "(internal; docs/scaling.md).'", false, 0) != SPI_OK_UTILITY))
		elog(ERROR, "could not create the commit marker");
	if (SPI_execute("SELECT pg_catalog.citus_add_local_table_to_metadata('" COMMIT_MARKER "')",
					false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not register the commit marker");
	DynSecurityEndInternal(&sec);
}

/*
 * The current transaction writes records on the coordinator that must
 * commit with its storage writes: on Citus, make it commit with two-phase
 * commit (see above).  Without Citus, or with no distributed storage, this
 * does nothing.
 */
void
DynStorageCommitWithLocal(void)
{
	DynSecurityState sec;
	Datum		args[2];

	if (commit_marked)
		return;
	if (!commit_callbacks_registered)
	{
		CacheRegisterRelcacheCallback(commit_mode_inval, (Datum) 0);
		RegisterXactCallback(commit_xact_callback, NULL);
		commit_callbacks_registered = true;
	}
	if (commit_mode == COMMIT_UNKNOWN)
		commit_mode = commit_mode_lookup();
	if (commit_mode == COMMIT_LOCAL)
		return;
	if (commit_mode == COMMIT_UNREGISTERED)
	{
		if (!commit_warned)
			ereport(WARNING,
					(errmsg("dynindex: distributed tables but no commit marker: writes to one worker commit with single-phase commit"),
					 errdetail("A worker failing at commit can leave an item without its GSI change or stream record."),
					 errhint("SELECT dynindex.distribute_table('<any table>') registers it (docs/scaling.md).")));
		commit_warned = true;
		return;
	}
	if (commit_plan == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare("INSERT INTO " COMMIT_MARKER " (slot, writer) VALUES ($1, $2) "
									   "ON CONFLICT (slot) DO UPDATE SET writer = EXCLUDED.writer",
									   2, (Oid[]) {INT4OID, INT8OID});

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare the commit marker's update");
		commit_plan = plan;
	}
	args[0] = Int32GetDatum(GetNumberFromPGProc(MyProc));
	args[1] = Int64GetDatum((int64) U64FromFullTransactionId(GetTopFullTransactionId()));
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_plan(commit_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not update the commit marker");
	DynSecurityEndInternal(&sec);
	commit_marked = true;
}

/*
 * Have the (committed, top-level) transactions xids[] finished committing
 * on every Citus worker?  A two-phase commit records each worker's prepared
 * transaction in pg_dist_transaction, in the coordinator's transaction (so
 * the record's xmin is the writer's xid); the writer's COMMIT PREPARED runs
 * after its local commit and fails when the worker is down, leaving the
 * worker's changes invisible until Citus's recovery commits them.  When a
 * writer has records, run that recovery now (it commits what is prepared
 * and deletes the records of what is committed); true when no record of
 * the writers remains.  True at once without Citus or 2PC records.
 */
bool
DynStorageWritersCommitted(const TransactionId *xids, int n)
{
	static const char *const sql = "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_transaction WHERE xmin = ANY ($1))";
	Oid			types[1] = {XIDARRAYOID};
	Datum	   *elems;
	Datum		args[1];
	bool		isnull;

	if (n == 0 || !OidIsValid(get_relname_relid("pg_dist_transaction", PG_CATALOG_NAMESPACE)))
		return true;
	elems = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		elems[i] = TransactionIdGetDatum(xids[i]);
	args[0] = PointerGetDatum(construct_array(elems, n, XIDOID, sizeof(TransactionId), true, TYPALIGN_INT));
	for (int attempt = 0; attempt < 2; attempt++)
	{
		if (SPI_execute_with_args(sql, 1, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read pg_dist_transaction");
		if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			return true;
		if (attempt == 0 &&
			SPI_execute("SELECT pg_catalog.recover_prepared_transactions()", false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not recover prepared transactions");
	}
	return false;
}

/* Is a storage relation a Citus distributed table? */
bool
DynStorageIsDistributed(const char *relation)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1];

	if (!citus_present())
		return false;
	args[0] = CStringGetTextDatum(relation);
	if (SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_dist_partition "
							  "WHERE logicalrelid = $1::regclass",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the distribution of %s", relation);
	return SPI_processed > 0;
}

/*
 * Distribute a storage relation on column, co-located with colocate_with
 * (NULL: Citus's default group).  The commit marker is registered first
 * (once), its write guard dropped.
 */
void
DynStorageDistribute(const char *relation, const char *column, const char *colocate_with)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3];

	commit_marker_register();
	args[0] = CStringGetTextDatum(relation);
	if (SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = $1::regclass "
							  "AND tgname = 'dynindex_guard'", 1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the write guard of %s", relation);
	if (SPI_processed > 0 &&
		SPI_execute(psprintf("DROP TRIGGER dynindex_guard ON %s", relation), false, 0) < 0)
		elog(ERROR, "could not drop the write guard of %s", relation);
	args[1] = CStringGetTextDatum(column);
	args[2] = CStringGetTextDatum(colocate_with ? colocate_with : "default");
	if (SPI_execute_with_args("SELECT pg_catalog.create_distributed_table($1::regclass, $2, "
							  "colocate_with => $3)",
							  3, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not distribute %s", relation);
}

PG_FUNCTION_INFO_V1(dynindex_distribute_table);

/*
 * dynindex.distribute_table(table_name text): distribute an existing table's
 * storage and its indexes' storage over the Citus cluster (moving the rows).
 */
Datum
dynindex_distribute_table(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	DynTable   *t;
	int			done = 0;

	if (!citus_present())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the citus extension is not installed in this database")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynCatalogRevalidate();
	t = DynCatalogGetTableOrNotFound(name);
	commit_marker_register();	/* also for tables distributed before it existed */
	if (!DynStorageIsDistributed(t->storage))
	{
		DynStorageDistribute(t->storage, "pk", NULL);
		done++;
	}
	for (int i = 0; i < t->nindexes; i++)
	{
		DynIndex   *idx = &t->indexes[i];

		if (DynStorageIsDistributed(idx->storage))
			continue;
		DynStorageIndexKeyForCitus(idx->storage);
		DynStorageDistribute(idx->storage, "ipk", idx->is_global ? NULL : t->storage);
		done++;
	}
	/* the recipes' grants were copied to the new shards: they stay on the coordinator (docs/security.md) */
	if (done > 0 &&
		SPI_execute_with_args("SELECT dynindex._revoke_shard_grants($1)", 1, (Oid[]) {TEXTOID},
							  (Datum[]) {CStringGetTextDatum(t->name)}, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not revoke the shards' grants of %s", t->name);
	DynCatalogChanged();
	SPI_finish();
	PG_RETURN_INT32(done);
}
