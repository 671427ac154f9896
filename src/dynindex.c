/*
 * dynindex.c — module load: GUCs, catalog cache callbacks, workers.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "catalog/dyn_catalog.h"
#include "common/arn.h"
#include "common/errors.h"
#include "exchange/objstore.h"
#include "history/history.h"
#include "storage/storage.h"
#include "worker/worker.h"
#include "indexes/indexes.h"
#include "metrics/metrics.h"
#include "replication/replication.h"
#include "throttle/throttle.h"
#include "streams/streams.h"

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
	DefineCustomBoolVariable("dynindex.distributed",
							 "Distribute new tables over the Citus cluster (needs the citus extension).",
							 NULL, &dynindex_distributed, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex.region",
							   "Region named in ARNs (the endpoints set the region of the request's credential scope).",
							   "The default is the AWS SDKs' default region; the endpoints use it too for requests that name none.",
							   &dynindex_region, "us-east-1",
							   PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex.account_id",
							   "Account id named in ARNs.",
							   NULL, &dynindex_account_id, "000000000000",
							   PGC_USERSET, 0, NULL, NULL, NULL);
	DynErrorsInit();
	DynWorkerInit();
	DynStreamsInit();
	DynHistoryInit();
	DynCollectionInit();
	DynGsiWaitInit();
	DynStreamsMaintainInit();
	DynMetricsInit();
	DynObjStoreDefineSettings();
	DynThrottleInit();
	DynReplicationLagInit();
	MarkGUCPrefixReserved("dynindex");
	DynCatalogInit();
}
