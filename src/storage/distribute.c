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
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "catalog/catalog.h"
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
	DynCatalogChanged();
	SPI_finish();
	PG_RETURN_INT32(done);
}
