/*
 * dynindex.c — module load: GUCs, catalog cache callbacks, workers.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "catalog/catalog.h"
#include "storage/storage.h"
#include "worker/worker.h"
#include "indexes/indexes.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Module initialization. */
void
_PG_init(void)
{
	DefineCustomIntVariable("dynindex.table_partitions",
							"Number of hash partitions (on the partition key) for new tables; 0 for none.",
							NULL, &dynindex_table_partitions, 0, 0, 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DynWorkerInit();
	DynCollectionInit();
	MarkGUCPrefixReserved("dynindex");
	DynCatalogInit();
}
