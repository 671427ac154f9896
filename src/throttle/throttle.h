/*
 * throttle.h — throughput enforcement and Contributor Insights in shared
 * memory: token buckets per table and per index (docs/capacity.md,
 * "Throughput enforcement") and Space-Saving heavy-hitter sketches of the
 * most accessed and most throttled keys (docs/contributor-insights.md).
 *
 * This layer is mechanism only: it knows a resource as a 64-bit tag (a hash
 * of database, table number and index name), never a table.  The policy —
 * which rate a table has, which buckets a request must pass, which error
 * DynamoDB answers — is the operations' (src/api/throughput.c).
 *
 * A bucket is one 64-bit "theoretical arrival time" (GCRA, the virtual
 * scheduling form of a token bucket): tokens(now) = min(burst, (now - tat) *
 * rate).  The bucket is empty when tat >= now; charging u units moves tat to
 * max(tat, now - burst_seconds) + u / rate with a compare-and-swap.  No lock:
 * an admission check is one atomic read, a charge one CAS loop.
 */
#ifndef DYNINDEX_THROTTLE_H
#define DYNINDEX_THROTTLE_H

#include "common/pg_compat.h"

/* The two buckets of a resource. */
#define DYN_BUCKET_READ 0
#define DYN_BUCKET_WRITE 1

/* The four Contributor Insights rules of a resource (DynamoDB's rule names). */
typedef enum DynInsightsRule
{
	DYN_CI_PKC,					/* most accessed partition keys */
	DYN_CI_SKC,					/* most accessed items (partition + sort key) */
	DYN_CI_PKT,					/* most throttled partition keys */
	DYN_CI_SKT,					/* most throttled items */
	DYN_CI__COUNT
} DynInsightsRule;

/* Counters kept per sketch (Space-Saving's k). */
#define DYN_CI_K 64
/* Bytes of a key's text kept for display. */
#define DYN_CI_TEXT 120

/* Keys kept of each minute of a rule's history. */
#define DYN_CI_MINUTE_TOP 10

/* One entry of a sketch, as read. */
typedef struct DynInsightsEntry
{
	char		text[DYN_CI_TEXT];
	int64		count;			/* an upper bound of the key's true count */
	int64		error;			/* count - error is a lower bound */
} DynInsightsEntry;

/* One minute of a rule's history, as read. */
typedef struct DynInsightsMinute
{
	int64		minute;			/* minutes since 1970 */
	int64		total;			/* occurrences counted in the minute */
	int			n;
	DynInsightsEntry top[DYN_CI_MINUTE_TOP];	/* largest count first */
} DynInsightsMinute;

/* GUC dynindex.enforce_throughput (on by default; docs/capacity.md says why). */
extern bool dynindex_enforce_throughput;
/* GUC dynindex.throughput_test_clock: seconds; 0 = the real clock. */
extern double dynindex_throughput_test_clock;

/* The tag of a table (index NULL) or of one of its indexes in database db; never 0. */
extern uint64 DynThrottleTag(Oid db, int64 table_num, const char *index);
/* Now, in nanoseconds since the Unix epoch (the test clock when set). */
extern int64 DynThrottleNow(void);
/*
 * Take units from the bucket (possibly below zero; negative units give them
 * back, up to a full bucket); rate in units per second.
 */
extern void DynThrottleCharge(uint64 tag, int bucket, double rate, double burst_seconds,
							  double units, int64 now);
/*
 * Take units from the bucket only if it is not empty, in one atomic step
 * (false: empty, nothing taken).  true when shared memory is missing or full.
 */
extern bool DynThrottleTake(uint64 tag, int bucket, double rate, double burst_seconds,
							double units, int64 now);
/* The bucket's rate changed (UpdateTable): keep its tokens, refill at the new rate from now. */
extern void DynThrottleSetRate(uint64 tag, int bucket, double rate, int64 now);
/* Tokens left in a bucket at now (negative: borrowed), for tests and monitoring; NaN if unknown. */
extern double DynThrottleTokens(uint64 tag, int bucket, double rate, double burst_seconds, int64 now);

/* Give the resource a sketch for rule; false when the pool is full. */
extern bool DynInsightsStart(uint64 tag, DynInsightsRule rule);
/* Drop the resource's sketch for rule (its counts are lost). */
extern void DynInsightsStop(uint64 tag, DynInsightsRule rule);
/*
 * Count one item in the rules of mask (1 << rule) the resource has: its
 * partition key (pk) in PKC and PKT, the item (pk and sk, sk NULL for none)
 * in SKC and SKT.  One look-up of the resource; returns the rules of mask it
 * has no sketch for.
 */
extern int	DynInsightsCountItem(uint64 tag, int mask, const char *pk, int pklen, const char *sk, int sklen);
/* The sketch's entries, largest count first (palloc'd); *total: occurrences counted. */
extern DynInsightsEntry *DynInsightsRead(uint64 tag, DynInsightsRule rule, int *n, int64 *total);

/*
 * The rule's last minutes that counted something (dynindex.contributor_insights_minutes
 * of them, the running one included), oldest first, each with its most
 * counted keys (palloc'd, *n of them).
 */
extern DynInsightsMinute *DynInsightsReadMinutes(uint64 tag, DynInsightsRule rule, int *n);

/* Reserve shared memory and define the settings (from _PG_init). */
extern void DynThrottleInit(void);

#endif
