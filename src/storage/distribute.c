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
 * workers too (DynStorageCommitWithLocal), and the GSI worker reads an item
 * only once the prepared transactions of its writer are committed on every
 * worker (DynStorageWritersCommitted).
 */
#include "postgres.h"

#include <dlfcn.h>

#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
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

/* Citus's Use2PCForCoordinatedTransaction, or NULL when Citus is not loaded. */
typedef void (*use_2pc_fn) (void);
static use_2pc_fn citus_use_2pc = NULL;
static bool citus_use_2pc_looked_up = false;

/*
 * The current transaction writes records on the coordinator (the GSI queue,
 * a stream, a transaction token) that must commit if and only if its
 * storage writes on the workers commit.  A transaction that modified one
 * worker only is committed by Citus with a plain COMMIT sent to the worker
 * before the local commit: when the worker commits but its answer is lost
 * (it crashed at that moment), the local transaction aborts and the item
 * stays written without its records — a GSI entry or stream record missing
 * for good.  With two-phase commit the local commit is the decision, and
 * Citus's recovery commits a worker's prepared transaction later if the
 * worker was unreachable.  Citus exports no SQL for this, so its C entry
 * point is looked up among the loaded libraries (citus is in
 * shared_preload_libraries); without Citus this does nothing.
 */
void
DynStorageCommitWithLocal(void)
{
	if (!citus_use_2pc_looked_up)
	{
		citus_use_2pc_looked_up = true;
		citus_use_2pc = (use_2pc_fn) dlsym(RTLD_DEFAULT, "Use2PCForCoordinatedTransaction");
		if (citus_use_2pc == NULL && dlsym(RTLD_DEFAULT, "pg_finfo_citus_version") != NULL)
			ereport(WARNING,
					(errmsg("dynindex: this build of Citus does not export Use2PCForCoordinatedTransaction"),
					 errdetail("Writes to one worker commit with single-phase commit: a worker failing at "
							   "commit can leave an item without its GSI change or stream record.")));
	}
	if (citus_use_2pc)
		citus_use_2pc();
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
 * (NULL: Citus's default group).  Its write guard goes first.
 */
void
DynStorageDistribute(const char *relation, const char *column, const char *colocate_with)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3];

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
