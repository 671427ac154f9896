/*
 * guard.c — storage relations are written only by dynindex itself.
 *
 * Each table's and index's storage relation carries a statement-level
 * trigger that refuses INSERT, UPDATE, DELETE and TRUNCATE unless dynindex
 * code is running (dynindex.api, the GSI worker): a direct write would
 * bypass index maintenance and the change queue and silently break the
 * indexes.  Reads are free.  One check per statement costs next to nothing
 * on dynindex's own writes.
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "fmgr.h"

#include "storage/storage.h"

static int	guard_depth = 0;

/* dynindex code starts writing storage. */
void
DynStorageWritesBegin(void)
{
	guard_depth++;
}

/* dynindex code stops writing storage. */
void
DynStorageWritesEnd(void)
{
	if (guard_depth > 0)
		guard_depth--;
}

PG_FUNCTION_INFO_V1(dynindex_storage_guard);

/* Statement trigger on storage relations: refuse writes from outside dynindex. */
Datum
dynindex_storage_guard(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "dynindex_storage_guard must be called as a trigger");
	if (guard_depth == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex storage relation \"%s\" can only be changed through dynindex",
						RelationGetRelationName(((TriggerData *) fcinfo->context)->tg_relation)),
				 errhint("Write items with dynindex.api (PutItem, UpdateItem, DeleteItem, BatchWriteItem): direct writes would bypass index maintenance.")));
	return PointerGetDatum(NULL);
}

/* Attach the guard trigger to a storage relation. */
void
DynStorageAddGuard(const char *relation)
{
	if (SPI_execute(psprintf("CREATE TRIGGER dynindex_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s "
							 "FOR EACH STATEMENT EXECUTE FUNCTION dynindex._storage_guard()", relation),
					false, 0) < 0)
		elog(ERROR, "could not protect %s", relation);
}
