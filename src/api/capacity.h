/*
 * capacity.h — DynamoDB's capacity arithmetic and ConsumedCapacity.
 *
 * An operation keeps one DynCapacity per table it touches: the units charged
 * to the table and to each of its secondary indexes.  The item operations add
 * reads (DynCapacityAddRead*) or writes (DynCapacityAddWrite, which applies the
 * per-index 0/1/2 rules from the old and new items) and push the result in the
 * shape the request asked for (TOTAL: the aggregate; INDEXES: plus the Table
 * and per-index maps).  Batches push a list, one object per table.
 *
 * Transactions (TransactWriteItems, TransactGetItems) plug in by setting
 * factor = 2 (each item's rounded units are doubled) and rw_units = true
 * (DynamoDB then also reports ReadCapacityUnits / WriteCapacityUnits).
 */
#ifndef DYNINDEX_CAPACITY_H
#define DYNINDEX_CAPACITY_H

#include "utils/jsonb.h"

#include "catalog/dyn_catalog.h"

typedef enum DynCapacityMode
{
	DYN_CAP_NONE,
	DYN_CAP_TOTAL,
	DYN_CAP_INDEXES
} DynCapacityMode;

/* Units consumed on one table and its indexes by one operation. */
typedef struct DynCapacity
{
	DynTable   *t;
	DynCapacityMode mode;
	bool		is_read;
	double		factor;			/* 1; 2 for transactions */
	bool		rw_units;		/* also report Read/WriteCapacityUnits (transactions) */
	bool		table_charged;	/* report a Table map (INDEXES) */
	double		table_units;
	double	   *index_units;	/* per t->indexes[i] */
	bool	   *index_charged;	/* per index: reported in its map */
	bool		precharged;		/* the units were taken from the buckets item by item (batches) */
} DynCapacity;

/* ReturnConsumedCapacity of a request. */
extern DynCapacityMode DynCapacityModeOf(JsonbContainer *req);

/*
 * Must the operation compute its capacity: asked for, or counted by the
 * metrics (dynindex.metrics on)?  When not, writes may skip reading the old item.
 */
extern bool DynCapacityWanted(DynCapacityMode mode);

/* Read units for size bytes: per 4 KB (at least one), halved when eventually consistent. */
extern double DynReadUnits(int64 size, bool consistent);
/* Write units for size bytes: per 1 KB, at least one. */
extern double DynWriteUnits(int64 size);

/* Start counting for table t. */
extern void DynCapacityInit(DynCapacity *c, DynTable *t, DynCapacityMode mode, bool is_read);
/* Charge units to the table. */
extern void DynCapacityAddTable(DynCapacity *c, double units);
/* Charge units to index i of the table. */
extern void DynCapacityAddIndex(DynCapacity *c, int i, double units);
/* Charge a read of size bytes (GetItem, BatchGetItem: a missing item has size 0). */
extern void DynCapacityAddItemRead(DynCapacity *c, int64 size, bool consistent);
/*
 * Charge a write that changed old (NULL: absent) into new (NULL: deleted or
 * still absent): the table per 1 KB of the larger item, and every index by
 * DynamoDB's rules on its projected entries.
 */
extern void DynCapacityAddWrite(DynCapacity *c, const DynValue *old, int64 oldsize,
								const DynValue *new, int64 newsize);
/* Index write units of one index for a write (0 when the entry did not change). */
extern double DynIndexWriteUnits(DynTable *t, DynIndex *idx, const DynValue *old, const DynValue *new);
/* Total units (table + indexes). */
extern double DynCapacityTotal(const DynCapacity *c);
/* Add the units of one item (src, of the same table) to dst. */
extern void DynCapacityMerge(DynCapacity *dst, const DynCapacity *src);

/* Push one ConsumedCapacity object (a member value or a list element). */
extern void DynCapacityPushObject(JsonbParseState **st, JsonbIteratorToken tok, const DynCapacity *c);
/* Push "ConsumedCapacity": {...} when the request asked for it. */
extern void DynCapacityPush(JsonbParseState **st, const DynCapacity *c);
/* Push "ConsumedCapacity": [...] for a batch (one object per table) when asked for. */
extern void DynCapacityPushList(JsonbParseState **st, DynCapacity *cs, int n);

/*
 * Failed conditional writes still consume: a write arms the failure charge
 * before its condition is evaluated; DynItemsConditionFailed then adds
 * "ConsumedCapacity" to the exception's DETAIL (the existing item per 1 KB,
 * 1 when absent).  Every caller of DynItemsConditionFailed arms or disarms.
 */
extern void DynCapacityArmFailure(DynTable *t, DynCapacityMode mode);
extern void DynCapacityDisarmFailure(void);
/* If armed (and asked for), push "ConsumedCapacity" for a failed write of old; disarm. */
extern void DynCapacityPushFailure(JsonbParseState **st, const DynValue *old);
/* Count a failed write of old in the metrics (ConsumedWriteCapacityUnits), whatever was asked for. */
extern void DynCapacityCountFailure(const DynValue *old);
/* Is a failure charge armed with capacity asked for? */
extern bool DynCapacityFailureArmed(void);

/* ---- compatibility helpers (table-only charges) ---- */
/* Push "ConsumedCapacity": {...} for one table. */
extern void DynPushConsumedCapacity(JsonbParseState **st, DynCapacityMode mode,
									const char *table, double units, bool is_read);
/* The ConsumedCapacity object alone (for batch lists). */
extern void DynPushCapacityObject(JsonbParseState **st, JsonbIteratorToken tok, DynCapacityMode mode,
								  const char *table, double units, bool is_read);

/* ---- throughput enforcement (throughput.c; docs/capacity.md) ---- */

struct DynKey;

/* Why a request was throttled: which bucket of which resource was empty. */
typedef struct DynThrottleReason
{
	bool		throttled;
	bool		provisioned;	/* ProvisionedThroughputExceededException; else ThrottlingException */
	bool		is_read;
	int			index;			/* the GSI whose bucket was empty; -1: the table */
	bool		max_set;		/* on-demand: OnDemandThroughput's maximum (else the table quota) */
} DynThrottleReason;

/*
 * May a request read (write) table t now?  index: the GSI a Query or Scan
 * reads (-1: the table or an LSI).  A write must pass the table's write
 * bucket and every GSI's.  key (may be NULL) is the item's, counted by
 * Contributor Insights when it is on.  Counts the throttle events; returns
 * the reason when throttled.
 */
extern DynThrottleReason DynThroughputCheck(DynTable *t, bool is_read, int index, const struct DynKey *key);
/* A request begins (api.c): the reservations DynThroughputCheck makes are per request. */
extern void DynThroughputRequestBegin(void);
/* Give back every reservation of the request (a transaction cancelled for want of throughput). */
extern void DynThroughputRelease(void);
/* The same, raising the throttling error (and counting ThrottledRequests). */
extern void DynThroughputAdmit(DynTable *t, bool is_read, int index, const struct DynKey *key);
/* Raise the error of a reason (counting ThrottledRequests). */
pg_noreturn extern void DynThroughputRaise(DynTable *t, const DynThrottleReason *why);
/* The exception's message of a reason (also a transaction's cancellation reason message). */
extern const char *DynThroughputMessage(const DynThrottleReason *why);
/* A transaction's cancellation reason message of a reason (DynamoDB words them apart). */
extern const char *DynThroughputReasonMessage(const DynThrottleReason *why);
/* Count one ThrottledRequests of table t (batches with unprocessed items). */
extern void DynThroughputCountRequest(DynTable *t);
/* Take the units of c from the table's and its indexes' buckets (DynCapacityPush does). */
extern void DynThroughputCharge(const DynCapacity *c);
/* A table's capacity changed (UpdateTable, t as it is now): its buckets take the new rates at once. */
extern void DynThroughputRatesChanged(DynTable *t);
/* The table's write bucket: its tag, rate and burst (false: not enforced). */
extern bool DynThroughputWriteBucket(DynTable *t, uint64 *tag, double *rate, double *burst);
/* Take a failed conditional write's units from a bucket DynThroughputWriteBucket gave. */
extern void DynThroughputChargeWrite(uint64 tag, double rate, double burst, double units);
/* Count the key of a Query (its partition key) in the table's or index's Contributor Insights. */
extern void DynThroughputCountQueryKey(DynTable *t, int index, const DynValue *pk, bool throttled);

#endif
