/*
 * metrics.h — per-table and per-index counters matching DynamoDB's CloudWatch
 * metrics (docs/monitoring.md), kept in shared memory.
 *
 * Counters live in a shared hash keyed by (database, table name, index name),
 * as CloudWatch keys them by the TableName / GlobalSecondaryIndexName
 * dimensions: a table deleted and created again keeps counting.  Writers only
 * take the hash's lock in shared mode and add with atomics, so requests never
 * wait on each other (a table updated per request would serialize them).
 * Counts are not transactional: a request counts what it consumed even if
 * its transaction rolls back later, as DynamoDB charges what it did.
 */
#ifndef DYNINDEX_METRICS_H
#define DYNINDEX_METRICS_H

#include "utils/timestamp.h"

typedef enum DynMetric
{
	DYN_M_READ_UNITS,			/* ConsumedReadCapacityUnits, in half units */
	DYN_M_WRITE_UNITS,			/* ConsumedWriteCapacityUnits, in half units */
	DYN_M_RETURNED_ITEMS,		/* ReturnedItemCount (Query, Scan) */
	DYN_M_CONDITIONAL_CHECK_FAILED, /* ConditionalCheckFailedRequests */
	DYN_M_USER_ERRORS,			/* UserErrors (HTTP 400 other than the above) */
	DYN_M_SYSTEM_ERRORS,		/* SystemErrors (HTTP 500) */
	DYN_M_SUCCESSFUL_REQUESTS,	/* SuccessfulRequestLatency: SampleCount */
	DYN_M_LATENCY_US,			/* SuccessfulRequestLatency: Sum, microseconds */
	DYN_M_TTL_DELETED,			/* TimeToLiveDeletedItemCount */
	DYN_M_GSI_REPLICATED,		/* GSI: changes applied by the worker */
	DYN_M_GSI_LATENCY_US,		/* GSI: sum of enqueue-to-apply latencies, microseconds */
	DYN_M_GSI_LATENCY_LAST_US,	/* GSI: latency of the oldest change of the last applied batch */
	DYN_M_READ_THROTTLE_EVENTS,	/* ReadThrottleEvents */
	DYN_M_WRITE_THROTTLE_EVENTS,	/* WriteThrottleEvents */
	DYN_M_THROTTLED_REQUESTS,	/* ThrottledRequests */
	DYN_M__COUNT
} DynMetric;

/* GUC dynindex.metrics: count (on, the default) or not. */
extern bool dynindex_metrics_enabled;

/* Add n to a counter of table (index NULL or "": the table itself) in this database. */
extern void DynMetricsAdd(const char *table, const char *index, DynMetric m, uint64 n);
/* Set a gauge (DYN_M_GSI_LATENCY_LAST_US). */
extern void DynMetricsSet(const char *table, const char *index, DynMetric m, uint64 v);
/* Count the outcome of one dynindex.api request that failed with SQLSTATE sqlerrcode. */
extern void DynMetricsCountError(const char *table, int sqlerrcode);
/* Count a successful request that started at start. */
extern void DynMetricsCountSuccess(const char *table, TimestampTz start);
/* Reserve shared memory (from _PG_init, when preloaded). */
extern void DynMetricsInit(void);

#endif
