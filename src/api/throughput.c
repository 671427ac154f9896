/*
 * throughput.c — throughput enforcement, DynamoDB's way (docs/capacity.md,
 * "Throughput enforcement"): which buckets a request must pass, at which
 * rate they refill, what DynamoDB answers when one is empty, and what
 * Contributor Insights counts.  The buckets themselves are src/throttle/.
 *
 * - Provisioned tables and GSIs: a read and a write bucket each, refilled at
 *   the provisioned ReadCapacityUnits / WriteCapacityUnits, holding up to 300
 *   seconds of unused capacity (DynamoDB's burst capacity).  LSIs consume the
 *   table's capacity.
 * - On-demand tables and GSIs: their own OnDemandThroughput's
 *   MaxReadRequestUnits / MaxWriteRequestUnits when set (a GSI's is its own,
 *   not the table's), else the table quota DescribeLimits reports (40,000 per
 *   second), with one second of burst.
 * - A request is admitted while its bucket is not empty, reserving one unit
 *   in the same atomic step, and charged the rest of what it consumed once
 *   done (reads are known only after the read), which may drive the bucket
 *   below zero; later requests wait for the refill.  A write must
 *   pass its table's write bucket and every GSI's: a GSI without write
 *   capacity throttles writes to its base table, as DynamoDB does.
 * - Messages (docs/errors.md): ProvisionedThroughputExceededException for
 *   provisioned resources, ThrottlingException for on-demand ones, both with
 *   ThrottlingReasons [{reason, resource}].
 */
#include "postgres.h"

#include <math.h>

#include "common/base64.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/capacity.h"
#include "api/request.h"
#include "common/arn.h"
#include "common/errors.h"
#include "metrics/metrics.h"
#include "storage/storage.h"
#include "throttle/throttle.h"

#define BURST_SECONDS 300.0		/* DynamoDB retains up to 5 minutes of unused capacity */
#define ON_DEMAND_BURST 1.0
#define TABLE_MAX_UNITS 40000.0	/* DescribeLimits: TableMaxRead/WriteCapacityUnits */

#define MSG_TABLE "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."
#define MSG_GSI "The level of configured provisioned throughput for one or more global secondary indexes of the table was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes with the UpdateTable API"
#define MSG_ON_DEMAND "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"

/* Is the table provisioned? */
static bool
provisioned(DynTable *t)
{
	return strcmp(t->billing_mode, "PROVISIONED") == 0;
}

/* An integer member of a JSON object, or dflt. */
static int64
json_int(Jsonb *obj, const char *member, int64 dflt)
{
	if (obj == NULL || !JB_ROOT_IS_OBJECT(obj))
		return dflt;
	return RqGetInt(&obj->root, member, dflt);
}

/*
 * The on-demand maximum (MaxRead/WriteRequestUnits) of the table (index -1,
 * kept in its options) or of its GSI index (its catalog row), or 0 when none
 * is set.
 */
static double
on_demand_max(DynTable *t, int index, bool is_read)
{
	JsonbContainer *od = NULL;
	JsonbValue *v;
	int64		n;

	if (index >= 0)
	{
		if (t->indexes[index].on_demand && JB_ROOT_IS_OBJECT(t->indexes[index].on_demand))
			od = &t->indexes[index].on_demand->root;
	}
	else if (t->options && JB_ROOT_IS_OBJECT(t->options) &&
			 (v = RqGet(&t->options->root, "OnDemandThroughput")) != NULL && v->type == jbvBinary)
		od = v->val.binary.data;
	if (od == NULL)
		return 0;
	n = RqGetInt(od, is_read ? "MaxReadRequestUnits" : "MaxWriteRequestUnits", 0);
	return n > 0 ? (double) n : 0;
}

/*
 * Rate (units per second) and burst (seconds) of a bucket of the table
 * (index -1) or of its GSI index; *max_set: an on-demand maximum applies.
 */
static void
rate_of(DynTable *t, int index, bool is_read, double *rate, double *burst, bool *max_set)
{
	*max_set = false;
	if (provisioned(t))
	{
		*burst = BURST_SECONDS;
		if (index < 0)
			*rate = (double) (is_read ? t->read_capacity : t->write_capacity);
		else
			*rate = (double) json_int(t->indexes[index].throughput,
									  is_read ? "ReadCapacityUnits" : "WriteCapacityUnits",
									  is_read ? t->read_capacity : t->write_capacity);
		return;
	}
	*burst = ON_DEMAND_BURST;
	*rate = on_demand_max(t, index, is_read);
	*max_set = *rate > 0;
	if (*rate <= 0)
		*rate = TABLE_MAX_UNITS;
}

/* The bucket tag of the table (index -1) or of one of its indexes. */
static uint64
tag_of(DynTable *t, int index)
{
	return DynThrottleTag(MyDatabaseId, t->num, index < 0 ? NULL : t->indexes[index].name);
}

/* The ARN of the table or of its index. */
static char *
resource_arn(DynTable *t, int index)
{
	char	   *arn = DynTableArn(t->name);

	return index < 0 ? arn : psprintf("%s/index/%s", arn, t->indexes[index].name);
}

/* ---------------------------------------------------------------- Contributor Insights */

/*
 * Is Contributor Insights on for the table (index -1) or its index, and
 * does it count accessed keys too (mode ACCESSED_AND_THROTTLED_KEYS)?  The
 * state is in the table's options (api/insights.c writes it); after a
 * restart the first request gives the resource its sketches again.
 */
static bool
insights_lookup(DynTable *t, int index, bool *accessed)
{
	JsonbValue *ci;
	JsonbValue *r;
	const char *name = index < 0 ? "" : t->indexes[index].name;
	char	   *status;

	if (t->options == NULL || !JB_ROOT_IS_OBJECT(t->options) ||
		(ci = RqGet(&t->options->root, "ContributorInsights")) == NULL || ci->type != jbvBinary ||
		(r = RqGet(ci->val.binary.data, name)) == NULL || r->type != jbvBinary)
		return false;
	status = RqGetString(r->val.binary.data, "Status");
	if (status == NULL || strcmp(status, "ENABLED") != 0)
		return false;
	*accessed = !RqStringIs(r->val.binary.data, "Mode", "THROTTLED_KEYS");
	return true;
}

/*
 * insights_lookup, remembered for the last table and index asked about until
 * the catalog changes (the options are the cached table's: a change of the
 * state drops the cache and bumps its generation).
 */
static bool
insights_on(DynTable *t, int index, bool *accessed)
{
	static struct
	{
		DynTable   *t;
		int			index;
		uint64		generation;
		bool		on;
		bool		accessed;
	}			last;

	if (last.t != t || last.index != index || last.generation != DynCatalogGeneration())
	{
		last.on = insights_lookup(t, index, &last.accessed);
		last.t = t;
		last.index = index;
		last.generation = DynCatalogGeneration();
	}
	*accessed = last.accessed;
	return last.on;
}

/* A key attribute's value as text: S as is, N canonical, B in base64 (palloc'd). */
static const char *
key_text(const DynValue *v, int *len)
{
	if (v->type == DYN_B)
	{
		int			blen = pg_b64_enc_len(v->u.str.len);
		char	   *buf = palloc(blen + 1);

		*len = Max(pg_b64_encode((const uint8 *) v->u.str.data, v->u.str.len, buf, blen), 0);
		return buf;
	}
	*len = v->u.str.len;
	return v->u.str.data;
}

/*
 * Count a key in the resource's sketches: accessed (in that mode) and, if
 * throttled, throttled.  The first count after a restart finds no sketch and
 * starts them.
 */
static void
insights_count(DynTable *t, int index, const DynValue *hash, const DynValue *range, bool throttled)
{
	bool		accessed;
	uint64		tag;
	int			mask = 0;
	int			missing;
	const char *pk;
	const char *sk = NULL;
	int			pklen;
	int			sklen = 0;
	int			r;

	if (hash == NULL || !insights_on(t, index, &accessed))
		return;
	if (accessed)
		mask |= (1 << DYN_CI_PKC) | (range ? 1 << DYN_CI_SKC : 0);
	if (throttled)
		mask |= (1 << DYN_CI_PKT) | (range ? 1 << DYN_CI_SKT : 0);
	if (mask == 0)
		return;
	tag = tag_of(t, index);
	pk = key_text(hash, &pklen);
	if (range)
		sk = key_text(range, &sklen);
	missing = DynInsightsCountItem(tag, mask, pk, pklen, sk, sklen);
	if (missing == 0)
		return;
	for (r = 0; r < DYN_CI__COUNT; r++)
		if (missing & (1 << r))
			(void) DynInsightsStart(tag, r);
	(void) DynInsightsCountItem(tag, missing, pk, pklen, sk, sklen);
}

/* Count the partition key of a Query in the table's or index's Contributor Insights. */
void
DynThroughputCountQueryKey(DynTable *t, int index, const DynValue *pk, bool throttled)
{
	insights_count(t, index, pk, NULL, throttled);
}

/* ---------------------------------------------------------------- admission */

/* Count a throttle event of the table (index -1) or index. */
static void
count_event(DynTable *t, int index, bool is_read)
{
	DynMetricsAdd(t->name, index < 0 ? NULL : t->indexes[index].name,
				  is_read ? DYN_M_READ_THROTTLE_EVENTS : DYN_M_WRITE_THROTTLE_EVENTS, 1);
}

/*
 * Reservations.  Admission takes a request's smallest possible cost (one
 * unit: a write, or a strongly consistent read of an item) from each bucket
 * it must pass, in the same atomic step as the test that the bucket is not
 * empty; the charge once the request is done takes what it really consumed
 * less what was reserved (giving back the difference when it consumed less:
 * an eventually consistent read, a GSI the write did not touch).  Without
 * it, concurrent requests would all pass the test on the last token before
 * any of them is charged.  The reservations of the running request are kept
 * here; a new request forgets what an earlier one, failed before its
 * charge, left (its reservation stays taken, as a request that failed after
 * reading or writing would have consumed it).
 */
#define RESERVE_UNITS 1.0
#define MAX_RESERVATIONS 128

typedef struct Reservation
{
	uint64		tag;
	int			bucket;
	double		rate;
	double		burst;
	double		units;
} Reservation;

static Reservation reservations[MAX_RESERVATIONS];
static int	nreservations;

/* A new request begins: earlier requests' reservations are settled or forgotten. */
void
DynThroughputRequestBegin(void)
{
	nreservations = 0;
}

#define RESERVE_EMPTY (-2)

/*
 * Reserve the request's smallest cost in a bucket: the entry that remembers
 * it (-1: none, the table is full), RESERVE_EMPTY when the bucket is empty.
 */
static int
reserve(uint64 tag, int bucket, double rate, double burst, int64 now)
{
	int			i;

	if (!DynThrottleTake(tag, bucket, rate, burst, RESERVE_UNITS, now))
		return RESERVE_EMPTY;
	for (i = 0; i < nreservations; i++)
		if (reservations[i].tag == tag && reservations[i].bucket == bucket)
			break;
	if (i == nreservations)
	{
		if (i == MAX_RESERVATIONS)
			return -1;			/* not remembered: the charge takes the whole cost (one unit more) */
		reservations[i].tag = tag;
		reservations[i].bucket = bucket;
		reservations[i].units = 0;
		nreservations++;
	}
	reservations[i].rate = rate;
	reservations[i].burst = burst;
	reservations[i].units += RESERVE_UNITS;
	return i;
}

/* Take units less what this request reserved in the bucket (negative: give back). */
static void
settle(uint64 tag, int bucket, double rate, double burst, double units, int64 now)
{
	int			i;

	for (i = 0; i < nreservations; i++)
		if (reservations[i].tag == tag && reservations[i].bucket == bucket)
		{
			units -= reservations[i].units;
			reservations[i].units = 0;
			break;
		}
	if (units != 0)
		DynThrottleCharge(tag, bucket, rate, burst, units, now);
}

/* Give back one reservation (i: its entry), or all of them (i < 0). */
static void
unreserve(int i, int64 now)
{
	int			k;

	for (k = i < 0 ? 0 : i; k < (i < 0 ? nreservations : i + 1); k++)
	{
		double		units = i < 0 ? reservations[k].units : RESERVE_UNITS;

		if (units <= 0)
			continue;
		DynThrottleCharge(reservations[k].tag, reservations[k].bucket, reservations[k].rate,
						  reservations[k].burst, -units, now);
		reservations[k].units -= units;
	}
}

/*
 * Reserve in the bucket of the table (index -1) or index, or fill why (it
 * is empty).  *entry: the reservation's entry (-1: not remembered).
 */
static bool
bucket_empty(DynTable *t, int index, bool is_read, int64 now, DynThrottleReason *why, int *entry)
{
	double		rate;
	double		burst;
	bool		max_set;

	rate_of(t, index, is_read, &rate, &burst, &max_set);
	*entry = reserve(tag_of(t, index), is_read ? DYN_BUCKET_READ : DYN_BUCKET_WRITE, rate, burst, now);
	if (*entry != RESERVE_EMPTY)
		return false;
	why->throttled = true;
	why->provisioned = provisioned(t);
	why->is_read = is_read;
	why->index = index;
	why->max_set = max_set;
	count_event(t, index, is_read);
	return true;
}

/*
 * May the request read (write) t now?  Reserves in every bucket it passes
 * (given back when a later one is empty); counts events and Contributor
 * Insights.
 */
DynThrottleReason
DynThroughputCheck(DynTable *t, bool is_read, int index, const struct DynKey *key)
{
	DynThrottleReason why = {0};

	why.index = -1;
	if (dynindex_enforce_throughput)
	{
		int64		now = DynThrottleNow();
		int		   *taken = palloc(sizeof(int) * (1 + t->nindexes));
		int			ntaken = 0;
		int			i;

		if (is_read)
			(void) bucket_empty(t, index >= 0 && t->indexes[index].is_global ? index : -1, true, now, &why, &taken[0]);
		else if (!bucket_empty(t, -1, false, now, &why, &taken[ntaken++]))
		{
			for (i = 0; i < t->nindexes; i++)
				if (t->indexes[i].is_global && bucket_empty(t, i, false, now, &why, &taken[ntaken++]))
					break;
			/* a GSI's bucket was empty: give back the table's and the other GSIs' */
			for (i = 0; why.throttled && i < ntaken - 1; i++)
				if (taken[i] >= 0)
					unreserve(taken[i], now);
		}
		pfree(taken);
	}
	if (key)
		insights_count(t, -1, key->hash, key->range, why.throttled);
	return why;
}

/* A transaction was cancelled for want of throughput: give back what its actions reserved. */
void
DynThroughputRelease(void)
{
	unreserve(-1, DynThrottleNow());
}

/* The exception's message of a reason. */
const char *
DynThroughputMessage(const DynThrottleReason *why)
{
	if (!why->provisioned)
		return MSG_ON_DEMAND;
	return why->index < 0 ? MSG_TABLE : MSG_GSI;
}

/*
 * A transaction's cancellation reason message (TransactionCanceledException's
 * documentation lists them; the provisioned GSI one ends with a period there,
 * the on-demand ones have GSI wording of their own).
 */
const char *
DynThroughputReasonMessage(const DynThrottleReason *why)
{
	if (why->provisioned)
		return why->index < 0 ? MSG_TABLE : MSG_GSI ".";
	return why->index < 0 ? MSG_ON_DEMAND "." :
		"Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically scaling your index so please try again shortly.";
}

/* Count one ThrottledRequests of table t. */
void
DynThroughputCountRequest(DynTable *t)
{
	DynMetricsAdd(t->name, NULL, DYN_M_THROTTLED_REQUESTS, 1);
}

/* Raise the throttling error of a reason. */
void
DynThroughputRaise(DynTable *t, const DynThrottleReason *why)
{
	JsonbParseState *st = NULL;
	Jsonb	   *detail;
	const char *reason;

	DynThroughputCountRequest(t);
	reason = psprintf("%s%s%s", why->index < 0 ? "Table" : "Index", why->is_read ? "Read" : "Write",
					  why->provisioned ? "ProvisionedThroughputExceeded" :
					  why->max_set ? "MaxOnDemandThroughputExceeded" : "AccountLimitExceeded");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "ThrottlingReasons");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "reason");
	RqPushString(&st, WJB_VALUE, reason);
	RqPushKey(&st, "resource");
	RqPushString(&st, WJB_VALUE, resource_arn(t, why->index));
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	detail = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	DynErrorWithDetail(why->provisioned ? DYN_ERR_PROVISIONED_THROUGHPUT_EXCEEDED : DYN_ERR_THROTTLING,
					   JsonbToCString(NULL, &detail->root, VARSIZE(detail)),
					   "%s", DynThroughputMessage(why));
}

/* Admit the request or raise the throttling error. */
void
DynThroughputAdmit(DynTable *t, bool is_read, int index, const struct DynKey *key)
{
	DynThrottleReason why = DynThroughputCheck(t, is_read, index, key);

	if (why.throttled)
		DynThroughputRaise(t, &why);
}

/* ---------------------------------------------------------------- charging */

/* Take units from a bucket of the table (index -1) or of its GSI. */
static void
take_units(DynTable *t, int index, bool is_read, double units, int64 now)
{
	double		rate;
	double		burst;
	bool		max_set;

	rate_of(t, index, is_read, &rate, &burst, &max_set);
	settle(tag_of(t, index), is_read ? DYN_BUCKET_READ : DYN_BUCKET_WRITE, rate, burst, units, now);
}

/* Take the units of c from the buckets: the table's (with its LSIs') and each GSI's. */
void
DynThroughputCharge(const DynCapacity *c)
{
	double		table = c->table_units;
	int64		now;
	int			i;

	if (!dynindex_enforce_throughput)
		return;
	now = DynThrottleNow();
	for (i = 0; i < c->t->nindexes; i++)
	{
		if (!c->t->indexes[i].is_global)
			table += c->index_units[i];
		else
			take_units(c->t, i, c->is_read, c->index_units[i], now);
	}
	take_units(c->t, -1, c->is_read, table, now);
}

/* A table's capacity changed: its buckets and its GSIs' take the new rates at once. */
void
DynThroughputRatesChanged(DynTable *t)
{
	int64		now = DynThrottleNow();
	int			i;

	for (i = -1; i < t->nindexes; i++)
	{
		double		rate;
		double		burst;
		bool		max_set;

		if (i >= 0 && !t->indexes[i].is_global)
			continue;
		rate_of(t, i, true, &rate, &burst, &max_set);
		DynThrottleSetRate(tag_of(t, i), DYN_BUCKET_READ, rate, now);
		rate_of(t, i, false, &rate, &burst, &max_set);
		DynThrottleSetRate(tag_of(t, i), DYN_BUCKET_WRITE, rate, now);
	}
}

/* The table's write bucket. */
bool
DynThroughputWriteBucket(DynTable *t, uint64 *tag, double *rate, double *burst)
{
	bool		max_set;

	if (!dynindex_enforce_throughput)
		return false;
	*tag = tag_of(t, -1);
	rate_of(t, -1, false, rate, burst, &max_set);
	return true;
}

/* Take a failed conditional write's units. */
void
DynThroughputChargeWrite(uint64 tag, double rate, double burst, double units)
{
	settle(tag, DYN_BUCKET_WRITE, rate, burst, units, DynThrottleNow());
}

PG_FUNCTION_INFO_V1(dynindex_throughput_buckets);

/*
 * dynindex.throughput_buckets(table_name text): one row for the table
 * (index_name NULL) and one per GSI: the rates its read and write buckets
 * refill at (units per second), the burst they hold (seconds of that rate)
 * and the tokens in them now (negative: borrowed by requests that consumed
 * more than was left).  LSIs share the table's buckets.
 */
Datum
dynindex_throughput_buckets(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	DynTable   *volatile t = NULL;
	DynSecurityOp sec_op;
	int64		now = DynThrottleNow();
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynCatalogRevalidate();
	DynSecurityEnter("throughput_buckets", &sec_op);
	PG_TRY();
	{
		t = DynCatalogGetTableOrNotFound(name);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&sec_op);
	}
	PG_END_TRY();
	for (i = -1; i < t->nindexes; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};
		double		rrate,
					wrate,
					rburst,
					wburst;
		bool		max_set;

		if (i >= 0 && !t->indexes[i].is_global)
			continue;
		rate_of(t, i, true, &rrate, &rburst, &max_set);
		rate_of(t, i, false, &wrate, &wburst, &max_set);
		values[0] = i < 0 ? (Datum) 0 : CStringGetTextDatum(t->indexes[i].name);
		nulls[0] = i < 0;
		values[1] = Float8GetDatum(rrate);
		values[2] = Float8GetDatum(wrate);
		values[3] = Float8GetDatum(rburst);
		values[4] = Float8GetDatum(DynThrottleTokens(tag_of(t, i), DYN_BUCKET_READ, rrate, rburst, now));
		values[5] = Float8GetDatum(DynThrottleTokens(tag_of(t, i), DYN_BUCKET_WRITE, wrate, wburst, now));
		nulls[4] = isnan(DatumGetFloat8(values[4]));
		nulls[5] = isnan(DatumGetFloat8(values[5]));
		values[6] = BoolGetDatum(dynindex_enforce_throughput);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	PG_RETURN_VOID();
}
