/*
 * capacity.c — DynamoDB's capacity arithmetic and the ConsumedCapacity shapes.
 *
 * Rules (DynamoDB developer guide, "Read/write capacity", "GSI/LSI provisioned
 * throughput considerations"; checked against captures of the real service):
 * - Read: per 4 KB, at least one; eventually consistent halves.  A missing item
 *   still costs 0.5 / 1.  Query/Scan sum the sizes read, then round (the caller
 *   passes the sum); on an index the entry sizes.
 * - Write: per 1 KB, at least one, of max(before, after) (Put/Update) or of the
 *   deleted item; writing or deleting a missing item costs 1.
 * - Index writes, on the projected index entry per 1 KB: enters the index:
 *   W(new); leaves: W(old); index key changes: W(old) + W(new) (a delete and a
 *   put, each rounded); stays with the same key: max(W(old), W(new)) when the
 *   projected entry changed, nothing when it did not; in neither: nothing.
 *   The same rules hold for LSIs (captures of the service show an LSI charged
 *   for a change of a projected non-key attribute just like a GSI).  An index
 *   with nothing charged is absent from the INDEXES maps.
 * - Shape: TOTAL {TableName, CapacityUnits}; INDEXES adds Table {CapacityUnits}
 *   and LocalSecondaryIndexes / GlobalSecondaryIndexes {name: {CapacityUnits}}
 *   (a Query/Scan of an index shows Table even at 0.0).
 *   The aggregate is table + indexes.  Read/WriteCapacityUnits appear only for
 *   transactions (rw_units).  Units print with one decimal, as DynamoDB does.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "api/capacity.h"
#include "catalog/dyn_catalog.h"
#include "api/request.h"
#include "indexes/indexes.h"
#include "metrics/metrics.h"
#include "throttle/throttle.h"

/* ---------------------------------------------------------------- arithmetic */

/* ReturnConsumedCapacity of a request. */
DynCapacityMode
DynCapacityModeOf(JsonbContainer *req)
{
	if (RqStringIs(req, "ReturnConsumedCapacity", "TOTAL"))
		return DYN_CAP_TOTAL;
	if (RqStringIs(req, "ReturnConsumedCapacity", "INDEXES"))
		return DYN_CAP_INDEXES;
	return DYN_CAP_NONE;
}

/* Must the operation compute its capacity (asked for, or counted by the metrics)? */
bool
DynCapacityWanted(DynCapacityMode mode)
{
	return mode != DYN_CAP_NONE || dynindex_metrics_enabled || dynindex_enforce_throughput;
}

/* Read units for size bytes: per 4 KB, at least one, halved when eventually consistent. */
double
DynReadUnits(int64 size, bool consistent)
{
	double		units = (double) Max(1, (size + 4095) / 4096);

	return consistent ? units : units / 2;
}

/* Write units for size bytes: per 1 KB, at least one. */
double
DynWriteUnits(int64 size)
{
	return (double) Max(1, (size + 1023) / 1024);
}

/* Start counting for table t. */
void
DynCapacityInit(DynCapacity *c, DynTable *t, DynCapacityMode mode, bool is_read)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->mode = mode;
	c->is_read = is_read;
	c->factor = 1;
	c->index_units = palloc0(sizeof(double) * Max(1, t->nindexes));
	c->index_charged = palloc0(sizeof(bool) * Max(1, t->nindexes));
}

/* Charge units to the table. */
void
DynCapacityAddTable(DynCapacity *c, double units)
{
	c->table_units += units * c->factor;
	c->table_charged = true;
}

/* Charge units to index i of the table. */
void
DynCapacityAddIndex(DynCapacity *c, int i, double units)
{
	Assert(i >= 0 && i < c->t->nindexes);
	c->index_units[i] += units * c->factor;
	c->index_charged[i] = true;
}

/* Charge a single-item read of size bytes (0: the item is missing). */
void
DynCapacityAddItemRead(DynCapacity *c, int64 size, bool consistent)
{
	DynCapacityAddTable(c, DynReadUnits(size, consistent));
}

/* Size of an item's projected entry in an index. */
static int64
entry_size(DynTable *t, DynIndex *idx, const DynValue *item)
{
	return DynItemSize(DynIndexProject(t, idx, item));
}

/* Same encoded key bytes? */
static bool
same_bytes(const bytea *a, const bytea *b)
{
	return VARSIZE(a) == VARSIZE(b) && memcmp(VARDATA(a), VARDATA(b), VARSIZE(a) - VARHDRSZ) == 0;
}

/* Index write units of one index for a write (0 when its entry did not change). */
double
DynIndexWriteUnits(DynTable *t, DynIndex *idx, const DynValue *old, const DynValue *new)
{
	bytea	   *oipk = NULL,
			   *oisk = NULL,
			   *nipk = NULL,
			   *nisk = NULL;
	bool		old_in = old && DynIndexEntryKey(t, idx, old, &oipk, &oisk);
	bool		new_in = new && DynIndexEntryKey(t, idx, new, &nipk, &nisk);
	DynValue   *oe;
	DynValue   *ne;

	if (!old_in && !new_in)
		return 0;
	if (!old_in)
		return DynWriteUnits(entry_size(t, idx, new));
	if (!new_in)
		return DynWriteUnits(entry_size(t, idx, old));
	oe = DynIndexProject(t, idx, old);
	ne = DynIndexProject(t, idx, new);
	if (!same_bytes(oipk, nipk) || !same_bytes(oisk, nisk))
		return DynWriteUnits(DynItemSize(oe)) + DynWriteUnits(DynItemSize(ne));
	if (DynValueEquals(oe, ne))
		return 0;
	return Max(DynWriteUnits(DynItemSize(oe)), DynWriteUnits(DynItemSize(ne)));
}

/* Charge a write of old into new to the table and every index. */
void
DynCapacityAddWrite(DynCapacity *c, const DynValue *old, int64 oldsize,
					const DynValue *new, int64 newsize)
{
	int			i;

	DynCapacityAddTable(c, DynWriteUnits(Max(oldsize, newsize)));
	for (i = 0; i < c->t->nindexes; i++)
	{
		double		u = DynIndexWriteUnits(c->t, &c->t->indexes[i], old, new);

		if (u > 0)
			DynCapacityAddIndex(c, i, u);
	}
}

/* Total units (table + indexes). */
double
DynCapacityTotal(const DynCapacity *c)
{
	double		total = c->table_units;
	int			i;

	for (i = 0; i < c->t->nindexes; i++)
		total += c->index_units[i];
	return total;
}

/* Add the units of one item (src, of the same table) to dst. */
void
DynCapacityMerge(DynCapacity *dst, const DynCapacity *src)
{
	int			i;

	Assert(dst->t == src->t);
	dst->table_units += src->table_units;
	dst->table_charged |= src->table_charged;
	for (i = 0; i < dst->t->nindexes; i++)
	{
		dst->index_units[i] += src->index_units[i];
		dst->index_charged[i] |= src->index_charged[i];
	}
}

/* ---------------------------------------------------------------- shapes */

/* Push units with one decimal, as DynamoDB prints doubles (0.5, 1.0). */
static void
push_units(JsonbParseState **st, double units)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														CStringGetDatum(psprintf("%.1f", units)),
														ObjectIdGetDatum(InvalidOid),
														Int32GetDatum(-1)));
	pushJsonbValue(st, WJB_VALUE, &v);
}

/* Push the members of a Capacity object: CapacityUnits [, Read|WriteCapacityUnits]. */
static void
push_capacity_members(JsonbParseState **st, double units, bool rw_units, bool is_read)
{
	RqPushKey(st, "CapacityUnits");
	push_units(st, units);
	if (rw_units)
	{
		RqPushKey(st, is_read ? "ReadCapacityUnits" : "WriteCapacityUnits");
		push_units(st, units);
	}
}

/* Push "<which>": {name: {CapacityUnits}} for the charged indexes of one kind. */
static void
push_index_map(JsonbParseState **st, const DynCapacity *c, bool global)
{
	int			i;
	bool		any = false;

	for (i = 0; i < c->t->nindexes; i++)
	{
		if (c->t->indexes[i].is_global != global || !c->index_charged[i])
			continue;
		if (!any)
		{
			RqPushKey(st, global ? "GlobalSecondaryIndexes" : "LocalSecondaryIndexes");
			pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
			any = true;
		}
		RqPushKey(st, c->t->indexes[i].name);
		pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
		push_capacity_members(st, c->index_units[i], c->rw_units, c->is_read);
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
	}
	if (any)
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Push one ConsumedCapacity object. */
void
DynCapacityPushObject(JsonbParseState **st, JsonbIteratorToken tok, const DynCapacity *c)
{
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(st, "TableName");
	RqPushString(st, WJB_VALUE, DynCatalogRequestName(c->t->name));
	push_capacity_members(st, DynCapacityTotal(c), c->rw_units, c->is_read);
	if (c->mode == DYN_CAP_INDEXES)
	{
		if (c->table_charged)
		{
			RqPushKey(st, "Table");
			pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
			push_capacity_members(st, c->table_units, c->rw_units, c->is_read);
			pushJsonbValue(st, WJB_END_OBJECT, NULL);
		}
		push_index_map(st, c, false);
		push_index_map(st, c, true);
	}
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Units in the half units metrics.c counts (eventually consistent reads cost 0.5). */
static uint64
half_units(double units)
{
	return units > 0 ? (uint64) (units * 2 + 0.5) : 0;
}

/*
 * Add the units of c to the table's and its indexes' metrics
 * (ConsumedRead/WriteCapacityUnits) and take them from their token buckets.
 */
static void
count_metrics(const DynCapacity *c)
{
	DynMetric	m = c->is_read ? DYN_M_READ_UNITS : DYN_M_WRITE_UNITS;
	int			i;

	if (!c->precharged)
		DynThroughputCharge(c);
	DynMetricsAdd(c->t->name, NULL, m, half_units(c->table_units));
	for (i = 0; i < c->t->nindexes; i++)
		DynMetricsAdd(c->t->name, c->t->indexes[i].name, m, half_units(c->index_units[i]));
}

/* Push "ConsumedCapacity": {...} when asked for (and count the metrics, always). */
void
DynCapacityPush(JsonbParseState **st, const DynCapacity *c)
{
	count_metrics(c);
	if (c->mode == DYN_CAP_NONE)
		return;
	RqPushKey(st, "ConsumedCapacity");
	DynCapacityPushObject(st, WJB_VALUE, c);
}

/* Push "ConsumedCapacity": [...] for a batch when asked for (and count the metrics, always). */
void
DynCapacityPushList(JsonbParseState **st, DynCapacity *cs, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		count_metrics(&cs[i]);
	if (n == 0 || cs[0].mode == DYN_CAP_NONE)
		return;
	RqPushKey(st, "ConsumedCapacity");
	pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
		DynCapacityPushObject(st, WJB_ELEM, &cs[i]);
	pushJsonbValue(st, WJB_END_ARRAY, NULL);
}

/* ---------------------------------------------------------------- failed conditional writes */

/*
 * The armed failure charge: plain static storage (no pointers into request
 * memory), so a request that errors out before disarming leaves nothing
 * dangling; the next write re-arms or disarms.
 */
static struct
{
	bool		armed;
	bool		metrics_armed;	/* count the failed write's units in the metrics */
	DynCapacityMode mode;
	char		table[256];
	bool		bucket;			/* charge the table's write bucket too */
	uint64		tag;
	double		rate;
	double		burst;
} failure;

/* Arm the charge of a failed conditional write on table t. */
void
DynCapacityArmFailure(DynTable *t, DynCapacityMode mode)
{
	failure.armed = mode != DYN_CAP_NONE;
	failure.metrics_armed = true;
	failure.mode = mode;
	strlcpy(failure.table, t->name, sizeof(failure.table));
	failure.bucket = DynThroughputWriteBucket(t, &failure.tag, &failure.rate, &failure.burst);
}

/* Disarm it (the write is past its condition). */
void
DynCapacityDisarmFailure(void)
{
	failure.armed = false;
	failure.metrics_armed = false;
	failure.bucket = false;
}

/* Is a failure charge armed with capacity asked for? */
bool
DynCapacityFailureArmed(void)
{
	return failure.armed;
}

/* Count the units of a failed conditional write of old in the metrics (once per arming). */
void
DynCapacityCountFailure(const DynValue *old)
{
	if (failure.metrics_armed)
	{
		double		units = DynWriteUnits(old ? DynItemSize(old) : 0);

		DynMetricsAdd(failure.table, NULL, DYN_M_WRITE_UNITS, half_units(units));
		if (failure.bucket)
			DynThroughputChargeWrite(failure.tag, failure.rate, failure.burst, units);
	}
	failure.metrics_armed = false;
}

/* Push "ConsumedCapacity" for a failed write of old (the existing item per 1 KB, 1 when absent). */
void
DynCapacityPushFailure(JsonbParseState **st, const DynValue *old)
{
	if (!failure.armed)
		return;
	failure.armed = false;
	DynPushConsumedCapacity(st, failure.mode, failure.table,
							DynWriteUnits(old ? DynItemSize(old) : 0), false);
}

/* ---------------------------------------------------------------- compatibility */

/* Push one table-only ConsumedCapacity object. */
void
DynPushCapacityObject(JsonbParseState **st, JsonbIteratorToken tok, DynCapacityMode mode,
					  const char *table, double units, bool is_read)
{
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(st, "TableName");
	RqPushString(st, WJB_VALUE, DynCatalogRequestName(table));
	push_capacity_members(st, units, false, is_read);
	if (mode == DYN_CAP_INDEXES)
	{
		RqPushKey(st, "Table");
		pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
		push_capacity_members(st, units, false, is_read);
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Push "ConsumedCapacity": {...} for one table when asked for. */
void
DynPushConsumedCapacity(JsonbParseState **st, DynCapacityMode mode, const char *table,
						double units, bool is_read)
{
	if (mode == DYN_CAP_NONE)
		return;
	RqPushKey(st, "ConsumedCapacity");
	DynPushCapacityObject(st, WJB_VALUE, mode, table, units, is_read);
}
