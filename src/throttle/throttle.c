/*
 * throttle.c — token buckets (GCRA) and Space-Saving sketches in shared
 * memory (throttle.h).
 *
 * Slots: an open-addressed array of dynindex.throughput_max_resources
 * entries (a power of two), each a cache line: the resource's tag, its read
 * and write buckets, and the pool numbers of its Contributor Insights
 * sketches.  A slot is claimed with a CAS of its tag from 0, never freed
 * while in use; when the probe finds no room, a slot idle for longer than
 * any burst (its buckets full) and without sketches is taken over.
 * Requests never lock anything here.
 *
 * Sketches: a pool of dynindex.contributor_insights_max_rules sketches, each
 * DYN_CI_K counters under its own spinlock (held for one pass over the
 * counters).  Space-Saving (Metwally, Agrawal, El Abbadi 2005): a key
 * present is incremented; a new key takes a free counter, or replaces the
 * counter with the smallest count c and starts at c + 1 with error c.  After
 * N occurrences every count overestimates its key's by at most its error,
 * error <= N / k, and every key occurring more than N / k times is present.
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "throttle/throttle.h"

#define THR_PROBE 32
#define NS_PER_SEC 1000000000.0
/* a slot idle this long has full buckets whatever its rate (the longest burst is 300 s) */
#define THR_IDLE_NS (INT64CONST(301) * INT64CONST(1000000000))

typedef struct ThrSlot
{
	pg_atomic_uint64 tag;		/* 0: free */
	pg_atomic_uint64 tat[2];	/* read, write: theoretical arrival time, ns; 0: never charged */
	pg_atomic_uint64 rate[2];	/* the rate tat was computed at (a double's bits); 0: none yet */
	pg_atomic_uint32 sketch[DYN_CI__COUNT];	/* pool number + 1; 0: none */
	char		pad[64 - 5 * sizeof(pg_atomic_uint64) - DYN_CI__COUNT * sizeof(pg_atomic_uint32)];
} ThrSlot;

typedef struct CiCounter
{
	uint64		hash;
	int64		count;
	int64		error;
	char		text[DYN_CI_TEXT];
} CiCounter;

/* One closed minute of a rule: its most counted keys. */
typedef struct CiMinute
{
	int64		minute;			/* minutes since 1970; 0: empty */
	int64		total;
	int			n;
	DynInsightsEntry top[DYN_CI_MINUTE_TOP];
} CiMinute;

/*
 * A rule's sketches: c since the rule started, m for the current minute;
 * when a count (or a read) finds the minute changed, m's most counted keys
 * go to the ring of the last minutes and m starts again.
 */
typedef struct CiSketch
{
	slock_t		mutex;
	pg_atomic_uint32 in_use;
	uint64		owner;			/* tag * DYN_CI__COUNT + rule, under mutex */
	int64		total;
	int			n;
	CiCounter	c[DYN_CI_K];
	int64		minute;			/* the minute m counts */
	int64		mtotal;
	int			mn;
	CiCounter	m[DYN_CI_K];
	CiMinute	ring[FLEXIBLE_ARRAY_MEMBER];	/* ci_minutes of them, by minute % ci_minutes */
} CiSketch;

typedef struct ThrShared
{
	pg_atomic_uint64 dropped;	/* resources not enforced: no slot */
} ThrShared;

bool		dynindex_enforce_throughput = true;
double		dynindex_throughput_test_clock = 0;
static int	max_resources = 8192;
static int	max_rules = 128;
static int	ci_minutes = 60;
static ThrShared *tshared = NULL;
static ThrSlot *slots = NULL;
static CiSketch *sketches = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Bytes of one sketch with its ring of minutes. */
static Size
sketch_size(void)
{
	return MAXALIGN(add_size(offsetof(CiSketch, ring), mul_size(ci_minutes, sizeof(CiMinute))));
}

/* Sketch i of the pool. */
static CiSketch *
sketch_at(int i)
{
	return (CiSketch *) ((char *) sketches + (Size) i * sketch_size());
}

/* Slots, rounded up to a power of two. */
static int
nslots(void)
{
	int			n = 64;

	while (n < max_resources)
		n <<= 1;
	return n;
}

/* Bytes of shared memory. */
static Size
shmem_size(void)
{
	return add_size(add_size(MAXALIGN(sizeof(ThrShared)), mul_size(nslots() + 1, sizeof(ThrSlot))),
					mul_size(max_rules, sketch_size()));
}

/* Reserve the shared memory. */
static void
throttle_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shmem_size());
}

/* Create or attach to the slots and sketches. */
static void
throttle_shmem_startup(void)
{
	bool		found;
	char	   *base;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	base = ShmemInitStruct("dynindex_throttle", shmem_size(), &found);
	tshared = (ThrShared *) base;
	/* slots start on a cache line (one spare slot pays for the alignment) */
	slots = (ThrSlot *) TYPEALIGN(64, base + MAXALIGN(sizeof(ThrShared)));
	sketches = (CiSketch *) (base + MAXALIGN(sizeof(ThrShared)) + (Size) (nslots() + 1) * sizeof(ThrSlot));
	if (!found)
	{
		int			i;

		pg_atomic_init_u64(&tshared->dropped, 0);
		for (i = 0; i < nslots(); i++)
		{
			int			k;

			pg_atomic_init_u64(&slots[i].tag, 0);
			pg_atomic_init_u64(&slots[i].tat[0], 0);
			pg_atomic_init_u64(&slots[i].tat[1], 0);
			pg_atomic_init_u64(&slots[i].rate[0], 0);
			pg_atomic_init_u64(&slots[i].rate[1], 0);
			for (k = 0; k < DYN_CI__COUNT; k++)
				pg_atomic_init_u32(&slots[i].sketch[k], 0);
		}
		for (i = 0; i < max_rules; i++)
		{
			CiSketch   *k = sketch_at(i);

			SpinLockInit(&k->mutex);
			pg_atomic_init_u32(&k->in_use, 0);
			k->owner = 0;
			k->total = 0;
			k->n = 0;
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Settings and shared memory (preloaded only: else nothing is enforced). */
void
DynThrottleInit(void)
{
	DefineCustomBoolVariable("dynindex.enforce_throughput",
							 "Throttle requests beyond a table's or index's provisioned throughput or on-demand maximum, as DynamoDB does.",
							 "Set it off for a database with ALTER DATABASE ... SET (superuser).",
							 &dynindex_enforce_throughput, true, PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("dynindex.throughput_test_clock",
							 "For tests: the time, in seconds since 1970, that the token buckets see (0: the real clock).",
							 "Frozen, the buckets refill only when the setting moves: tests count admitted requests exactly.",
							 &dynindex_throughput_test_clock, 0, 0, 1e11, PGC_SUSET, 0, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("dynindex.throughput_max_resources",
							"Tables and indexes (over all databases) whose token buckets are kept in shared memory.",
							NULL, &max_resources, 8192, 64, 1 << 22, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.contributor_insights_max_rules",
							"Contributor Insights rules (sketches of top keys, over all databases) kept in shared memory.",
							NULL, &max_rules, 128, 1, 100000, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.contributor_insights_minutes",
							"Minutes of Contributor Insights history (the most counted keys of each minute) kept per rule.",
							"Each minute costs about 1.4 kB of shared memory per rule.",
							&ci_minutes, 60, 1, 1440, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = throttle_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = throttle_shmem_startup;
}

/* ---------------------------------------------------------------- buckets */

/* The tag of a resource; never 0. */
uint64
DynThrottleTag(Oid db, int64 table_num, const char *index)
{
	uint64		h = hash_bytes_uint32_extended(db, (uint64) table_num);

	if (index)
		h = hash_bytes_extended((const unsigned char *) index, strlen(index), h + 0x9e3779b97f4a7c15ULL);
	return h ? h : 1;
}

/* Now in nanoseconds since 1970 (the test clock when set). */
int64
DynThrottleNow(void)
{
	if (dynindex_throughput_test_clock > 0)
		return (int64) llround(dynindex_throughput_test_clock * NS_PER_SEC);
	/* TimestampTz: microseconds since 2000 */
	return (GetCurrentTimestamp() +
			(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC) * 1000;
}

/*
 * The slot of tag; with create, claimed if missing (NULL when there is no
 * room).  Without create, NULL when missing.
 */
static ThrSlot *
find_slot(uint64 tag, bool create, int64 now)
{
	int			mask;
	int			start;
	int			i;

	if (slots == NULL)
		return NULL;
	mask = nslots() - 1;
	start = (int) (tag & mask);
	for (i = 0; i < THR_PROBE; i++)
	{
		ThrSlot    *s = &slots[(start + i) & mask];
		uint64		cur = pg_atomic_read_u64(&s->tag);

		if (cur == tag)
			return s;
		if (cur == 0)
		{
			uint64		expected = 0;

			if (!create)
				return NULL;
			if (pg_atomic_compare_exchange_u64(&s->tag, &expected, tag))
				return s;
			if (expected == tag)
				return s;		/* another backend claimed it for the same resource */
		}
	}
	if (!create)
		return NULL;
	/* full: take over a slot whose buckets are full again and that has no sketch */
	for (i = 0; i < THR_PROBE; i++)
	{
		ThrSlot    *s = &slots[(start + i) & mask];
		uint64		cur = pg_atomic_read_u64(&s->tag);
		int			k;
		bool		busy = false;

		for (k = 0; k < DYN_CI__COUNT; k++)
			busy |= pg_atomic_read_u32(&s->sketch[k]) != 0;
		if (busy || (int64) pg_atomic_read_u64(&s->tat[0]) > now - THR_IDLE_NS ||
			(int64) pg_atomic_read_u64(&s->tat[1]) > now - THR_IDLE_NS)
			continue;
		if (pg_atomic_compare_exchange_u64(&s->tag, &cur, tag))
		{
			pg_atomic_write_u64(&s->tat[0], 0);
			pg_atomic_write_u64(&s->tat[1], 0);
			pg_atomic_write_u64(&s->rate[0], 0);
			pg_atomic_write_u64(&s->rate[1], 0);
			return s;
		}
	}
	pg_atomic_fetch_add_u64(&tshared->dropped, 1);
	return NULL;
}

/* A double kept in a pg_atomic_uint64. */
static double
bits_double(uint64 bits)
{
	double		d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* The bits of a double. */
static uint64
double_bits(double d)
{
	uint64		bits;

	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

/*
 * tat as the same number of units at a new rate: the time to now (tokens
 * in hand, or units owed) scales by old / new.  A capacity change keeps the
 * tokens and the debt and refills at the new rate from now on.
 */
static int64
rescale(int64 tat, int64 now, double old_rate, double new_rate)
{
	if (old_rate <= 0 || old_rate == new_rate || tat == 0)
		return tat;
	return now + (int64) ((double) (tat - now) * old_rate / new_rate);
}

/*
 * Move the bucket's tat by units (negative: give them back), never above
 * burst_seconds of tokens.  With admit, only while the bucket is not empty
 * (false, and nothing taken, when it is): the test and the taking are one
 * compare-and-swap, so that concurrent requests cannot all see the last
 * token and all take it.
 */
static bool
move_tat(uint64 tag, int bucket, double rate, double burst_seconds, double units, int64 now, bool admit)
{
	ThrSlot    *s;
	uint64		old;
	int64		cost;
	int64		floor_tat;
	double		old_rate;

	if (units == 0 || rate <= 0)
		return true;
	s = find_slot(tag, true, now);
	if (s == NULL)
		return true;			/* no room in shared memory: not enforced (counted as dropped) */
	cost = (int64) (units > 0 ? ceil(units * NS_PER_SEC / rate) : -ceil(-units * NS_PER_SEC / rate));
	floor_tat = now - (int64) (burst_seconds * NS_PER_SEC);
	old_rate = bits_double(pg_atomic_read_u64(&s->rate[bucket]));
	old = pg_atomic_read_u64(&s->tat[bucket]);
	for (;;)
	{
		int64		base = Max(rescale((int64) old, now, old_rate, rate), floor_tat);

		if (admit && base >= now)
			return false;
		if (pg_atomic_compare_exchange_u64(&s->tat[bucket], &old, (uint64) Max(base + cost, floor_tat)))
			break;
	}
	/* concurrent charges during a rate change may rescale twice: off by one request's units */
	if (old_rate != rate)
		pg_atomic_write_u64(&s->rate[bucket], double_bits(rate));
	return true;
}

/* Take units from a bucket of rate units per second holding at most burst_seconds of them. */
void
DynThrottleCharge(uint64 tag, int bucket, double rate, double burst_seconds, double units, int64 now)
{
	(void) move_tat(tag, bucket, rate, burst_seconds, units, now, false);
}

/* Take units from the bucket if it is not empty (false: it is, nothing taken). */
bool
DynThrottleTake(uint64 tag, int bucket, double rate, double burst_seconds, double units, int64 now)
{
	return move_tat(tag, bucket, rate, burst_seconds, units, now, true);
}

/* The bucket's rate changes now: its tokens (or debt) stay, the refill follows the new rate. */
void
DynThrottleSetRate(uint64 tag, int bucket, double rate, int64 now)
{
	ThrSlot    *s = find_slot(tag, false, now);
	double		old_rate;
	uint64		old;

	if (s == NULL || rate <= 0)
		return;
	old_rate = bits_double(pg_atomic_read_u64(&s->rate[bucket]));
	if (old_rate <= 0 || old_rate == rate)
		return;
	old = pg_atomic_read_u64(&s->tat[bucket]);
	while (!pg_atomic_compare_exchange_u64(&s->tat[bucket], &old,
										   (uint64) rescale((int64) old, now, old_rate, rate)))
		;
	pg_atomic_write_u64(&s->rate[bucket], double_bits(rate));
}

/* Tokens in a bucket at now (negative: borrowed); NaN without shared memory. */
double
DynThrottleTokens(uint64 tag, int bucket, double rate, double burst_seconds, int64 now)
{
	ThrSlot    *s;
	int64		tat;

	if (slots == NULL)
		return NAN;
	s = find_slot(tag, false, now);
	tat = s ? (int64) pg_atomic_read_u64(&s->tat[bucket]) : 0;
	if (s)
		tat = rescale(tat, now, bits_double(pg_atomic_read_u64(&s->rate[bucket])), rate);
	return Min(burst_seconds * rate, (double) (now - tat) / NS_PER_SEC * rate);
}

/* ---------------------------------------------------------------- sketches */

/* The sketch of (tag, rule), or NULL. */
static CiSketch *
sketch_of(uint64 tag, DynInsightsRule rule, ThrSlot **slotp)
{
	ThrSlot    *s = find_slot(tag, false, 0);
	uint32		no;

	if (slotp)
		*slotp = s;
	if (s == NULL || sketches == NULL)
		return NULL;
	no = pg_atomic_read_u32(&s->sketch[rule]);
	return no == 0 || no > (uint32) max_rules ? NULL : sketch_at(no - 1);
}

/* Empty sketch k for a new owner (under its mutex). */
static void
sketch_reset(CiSketch *k, uint64 owner)
{
	int			i;

	k->owner = owner;
	k->total = 0;
	k->n = 0;
	k->minute = 0;
	k->mtotal = 0;
	k->mn = 0;
	for (i = 0; i < ci_minutes; i++)
		k->ring[i].minute = 0;
}

/* Give the resource a sketch for rule. */
bool
DynInsightsStart(uint64 tag, DynInsightsRule rule)
{
	ThrSlot    *s;
	int			i;

	if (sketches == NULL)
		return false;
	if (sketch_of(tag, rule, NULL))
		return true;
	s = find_slot(tag, true, DynThrottleNow());
	if (s == NULL)
		return false;
	for (i = 0; i < max_rules; i++)
	{
		CiSketch   *k = sketch_at(i);
		uint32		expected = 0;
		uint32		none = 0;

		if (pg_atomic_read_u32(&k->in_use) != 0 ||
			!pg_atomic_compare_exchange_u32(&k->in_use, &expected, 1))
			continue;
		SpinLockAcquire(&k->mutex);
		sketch_reset(k, tag * DYN_CI__COUNT + rule);
		SpinLockRelease(&k->mutex);
		if (pg_atomic_compare_exchange_u32(&s->sketch[rule], &none, (uint32) i + 1))
			return true;
		/* another backend started it first: give this one back */
		pg_atomic_write_u32(&k->in_use, 0);
		return true;
	}
	return false;
}

/* Drop the resource's sketch for rule. */
void
DynInsightsStop(uint64 tag, DynInsightsRule rule)
{
	ThrSlot    *s = find_slot(tag, false, 0);
	CiSketch   *k;
	uint32		no;

	if (s == NULL || sketches == NULL)
		return;
	no = pg_atomic_exchange_u32(&s->sketch[rule], 0);
	if (no == 0 || no > (uint32) max_rules)
		return;
	k = sketch_at(no - 1);
	SpinLockAcquire(&k->mutex);
	sketch_reset(k, 0);
	SpinLockRelease(&k->mutex);
	pg_atomic_write_u32(&k->in_use, 0);
}

/*
 * Count one occurrence of the key of hash h in the counters c (n of them,
 * DYN_CI_K at most) of a Space-Saving sketch; its text is text (len bytes)
 * followed by " | " and text2 (len2 bytes) when text2 is not NULL, cut to
 * DYN_CI_TEXT - 1.
 */
static void
space_saving(CiCounter *c, int *n, uint64 h, const char *text, int len, const char *text2, int len2)
{
	int			i;
	int			min = 0;
	int			t;

	for (i = 0; i < *n; i++)
	{
		if (c[i].hash == h)
		{
			c[i].count++;
			return;
		}
		if (c[i].count < c[min].count)
			min = i;
	}
	if (*n < DYN_CI_K)
	{
		min = (*n)++;
		c[min].count = 0;
	}
	c[min].hash = h;
	c[min].error = c[min].count;
	c[min].count++;
	t = Min(len, DYN_CI_TEXT - 1);
	memcpy(c[min].text, text, t);
	if (text2 && t + 3 < DYN_CI_TEXT - 1)
	{
		memcpy(c[min].text + t, " | ", 3);
		t += 3;
		len2 = Min(len2, DYN_CI_TEXT - 1 - t);
		memcpy(c[min].text + t, text2, len2);
		t += len2;
	}
	c[min].text[t] = '\0';
}

/*
 * The minute changed (under the mutex): the most counted keys of the one
 * that ended go to the ring, by a selection of DYN_CI_MINUTE_TOP passes over
 * the k counters (no sort, no call: a spinlock is held), and m starts again.
 */
static void
roll_minute(CiSketch *k, int64 minute)
{
	if (k->minute == minute)
		return;
	if (k->minute != 0 && k->mtotal > 0)
	{
		CiMinute   *out = &k->ring[k->minute % ci_minutes];
		uint64		taken = 0;		/* counters already chosen, for k->mn <= 64 */
		int			j;

		StaticAssertStmt(DYN_CI_K <= 64, "one bit per counter");
		out->minute = k->minute;
		out->total = k->mtotal;
		out->n = 0;
		for (j = 0; j < DYN_CI_MINUTE_TOP && j < k->mn; j++)
		{
			int			best = -1;
			int			i;

			for (i = 0; i < k->mn; i++)
				if (!(taken & (UINT64CONST(1) << i)) && (best < 0 || k->m[i].count > k->m[best].count))
					best = i;
			taken |= UINT64CONST(1) << best;
			memcpy(out->top[j].text, k->m[best].text, DYN_CI_TEXT);
			out->top[j].count = k->m[best].count;
			out->top[j].error = k->m[best].error;
			out->n++;
		}
	}
	k->minute = minute;
	k->mtotal = 0;
	k->mn = 0;
}

/* Count one occurrence of a key in sketch k of (tag, rule): since the start, and in its minute. */
static void
count_in(CiSketch *k, uint64 tag, DynInsightsRule rule, int64 minute, uint64 h,
		 const char *text, int len, const char *text2, int len2)
{
	SpinLockAcquire(&k->mutex);
	if (k->owner != tag * DYN_CI__COUNT + rule)
	{
		/* stopped and reused meanwhile */
		SpinLockRelease(&k->mutex);
		return;
	}
	roll_minute(k, minute);
	k->total++;
	space_saving(k->c, &k->n, h, text, len, text2, len2);
	k->mtotal++;
	space_saving(k->m, &k->mn, h, text, len, text2, len2);
	SpinLockRelease(&k->mutex);
}

/* The minute (since 1970) of a time in nanoseconds. */
static int64
minute_of(int64 now)
{
	return now / (INT64CONST(60) * NS_PER_SEC);
}

/* Count one item in the rules of mask the resource has; returns the rules it lacks. */
int
DynInsightsCountItem(uint64 tag, int mask, const char *pk, int pklen, const char *sk, int sklen)
{
	ThrSlot    *s = find_slot(tag, false, 0);
	uint64		hpk;
	uint64		hitem = 0;
	int64		minute;
	int			missing = 0;
	int			r;

	if (s == NULL || sketches == NULL)
		return mask;
	minute = minute_of(DynThrottleNow());
	hpk = hash_bytes_extended((const unsigned char *) pk, pklen, 0x5bd1e995);
	if (sk)
		hitem = hash_combine64(hpk, hash_bytes_extended((const unsigned char *) sk, sklen, 0x5bd1e995));
	for (r = 0; r < DYN_CI__COUNT; r++)
	{
		uint32		no;
		bool		item = r == DYN_CI_SKC || r == DYN_CI_SKT;

		if (!(mask & (1 << r)))
			continue;
		no = pg_atomic_read_u32(&s->sketch[r]);
		if (no == 0 || no > (uint32) max_rules)
		{
			missing |= 1 << r;
			continue;
		}
		if (item)
			count_in(sketch_at(no - 1), tag, r, minute, hitem, pk, pklen, sk, sklen);
		else
			count_in(sketch_at(no - 1), tag, r, minute, hpk, pk, pklen, NULL, 0);
	}
	return missing;
}

/* Order entries by count, largest first. */
static int
entry_cmp(const void *a, const void *b)
{
	int64		ca = ((const DynInsightsEntry *) a)->count;
	int64		cb = ((const DynInsightsEntry *) b)->count;

	return ca > cb ? -1 : ca < cb ? 1 : strcmp(((const DynInsightsEntry *) a)->text,
											   ((const DynInsightsEntry *) b)->text);
}

/* Copy n counters into entries. */
static void
copy_counters(DynInsightsEntry *out, const CiCounter *c, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		memcpy(out[i].text, c[i].text, DYN_CI_TEXT);
		out[i].count = c[i].count;
		out[i].error = c[i].error;
	}
}

/* The sketch's entries, largest count first. */
DynInsightsEntry *
DynInsightsRead(uint64 tag, DynInsightsRule rule, int *n, int64 *total)
{
	CiSketch   *k = sketch_of(tag, rule, NULL);
	DynInsightsEntry *out = palloc0(sizeof(DynInsightsEntry) * DYN_CI_K);

	*n = 0;
	*total = 0;
	if (k == NULL)
		return out;
	SpinLockAcquire(&k->mutex);
	if (k->owner == tag * DYN_CI__COUNT + rule)
	{
		copy_counters(out, k->c, k->n);
		*n = k->n;
		*total = k->total;
	}
	SpinLockRelease(&k->mutex);
	qsort(out, *n, sizeof(DynInsightsEntry), entry_cmp);
	return out;
}

/* Order minutes, oldest first. */
static int
minute_cmp(const void *a, const void *b)
{
	int64		ma = ((const DynInsightsMinute *) a)->minute;
	int64		mb = ((const DynInsightsMinute *) b)->minute;

	return ma < mb ? -1 : ma > mb ? 1 : 0;
}

/*
 * The rule's last minutes that counted something (the running one
 * included), oldest first, each with its most counted keys, largest count
 * first (at most DYN_CI_MINUTE_TOP of them); palloc'd, *n of them.
 */
DynInsightsMinute *
DynInsightsReadMinutes(uint64 tag, DynInsightsRule rule, int *n)
{
	CiSketch   *k = sketch_of(tag, rule, NULL);
	DynInsightsMinute *out = palloc0(sizeof(DynInsightsMinute) * (ci_minutes + 1));
	DynInsightsEntry *cur = palloc0(sizeof(DynInsightsEntry) * DYN_CI_K);
	int64		now = minute_of(DynThrottleNow());
	int			ncur = 0;
	int64		curminute = 0;
	int64		curtotal = 0;
	int			i;

	*n = 0;
	if (k == NULL)
		return out;
	SpinLockAcquire(&k->mutex);
	if (k->owner == tag * DYN_CI__COUNT + rule)
	{
		roll_minute(k, now);
		for (i = 0; i < ci_minutes; i++)
		{
			CiMinute   *m = &k->ring[i];

			/* a slot not overwritten since: older than the ring holds */
			if (m->minute == 0 || m->minute <= now - ci_minutes || m->minute >= now)
				continue;
			out[*n].minute = m->minute;
			out[*n].total = m->total;
			out[*n].n = m->n;
			memcpy(out[*n].top, m->top, sizeof(DynInsightsEntry) * m->n);
			(*n)++;
		}
		curminute = k->minute;
		curtotal = k->mtotal;
		ncur = k->mn;
		copy_counters(cur, k->m, ncur);
	}
	SpinLockRelease(&k->mutex);
	if (curtotal > 0)
	{
		qsort(cur, ncur, sizeof(DynInsightsEntry), entry_cmp);
		out[*n].minute = curminute;
		out[*n].total = curtotal;
		out[*n].n = Min(ncur, DYN_CI_MINUTE_TOP);
		memcpy(out[*n].top, cur, sizeof(DynInsightsEntry) * out[*n].n);
		(*n)++;
	}
	pfree(cur);
	qsort(out, *n, sizeof(DynInsightsMinute), minute_cmp);
	return out;
}
