/*
 * metrics.c — shared-memory counters per table and index (metrics.h), and
 * dynindex.metrics() / dynindex.reset_metrics() that read and clear them.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"

#include "metrics/metrics.h"

#define METRICS_NAME_LEN 256	/* DynamoDB names: at most 255 bytes */

typedef struct MetricsKey
{
	Oid			dbid;
	char		table[METRICS_NAME_LEN];	/* "" for requests that name no table */
	char		index[METRICS_NAME_LEN];	/* "" for the table itself */
} MetricsKey;

typedef struct MetricsEntry
{
	MetricsKey	key;
	pg_atomic_uint64 c[DYN_M__COUNT];
} MetricsEntry;

typedef struct MetricsShared
{
	LWLock	   *lock;			/* shared: look up and add; exclusive: insert, reset */
	pg_atomic_uint64 dropped;	/* counts lost because the hash was full */
} MetricsShared;

bool		dynindex_metrics_enabled = true;
static int	metrics_max_entries = 4096;
static MetricsShared *mshared = NULL;
static HTAB *mhash = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Reserve the shared hash and its lock. */
static void
metrics_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(MetricsShared)) +
						   hash_estimate_size(metrics_max_entries, sizeof(MetricsEntry)));
	RequestNamedLWLockTranche("dynindex_metrics", 1);
}

/* Create or attach to the shared hash. */
static void
metrics_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	mshared = ShmemInitStruct("dynindex_metrics", sizeof(MetricsShared), &found);
	if (!found)
	{
		mshared->lock = &(GetNamedLWLockTranche("dynindex_metrics"))->lock;
		pg_atomic_init_u64(&mshared->dropped, 0);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(MetricsKey);
	info.entrysize = sizeof(MetricsEntry);
	mhash = ShmemInitHash("dynindex_metrics hash", metrics_max_entries, metrics_max_entries,
						  &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

/* Reserve shared memory and define dynindex.metrics_max_entries (preloaded only). */
void
DynMetricsInit(void)
{
	DefineCustomBoolVariable("dynindex.metrics",
							 "Count per-table and per-index metrics (dynindex.table_metrics); writes then always compute their consumed capacity.",
							 NULL, &dynindex_metrics_enabled, true, PGC_SUSET, 0, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
	{
		dynindex_metrics_enabled = false;	/* no shared memory: nothing to count in */
		return;
	}
	DefineCustomIntVariable("dynindex.metrics_max_entries",
							"Tables and indexes (over all databases) whose metrics are kept in shared memory.",
							NULL, &metrics_max_entries, 4096, 16, 1000000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = metrics_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = metrics_shmem_startup;
}

/* Fill a hash key; false if a name does not fit (not a valid DynamoDB name). */
static bool
make_key(MetricsKey *key, const char *table, const char *index)
{
	memset(key, 0, sizeof(*key));
	key->dbid = MyDatabaseId;
	if (table && strlcpy(key->table, table, METRICS_NAME_LEN) >= METRICS_NAME_LEN)
		return false;
	if (index && strlcpy(key->index, index, METRICS_NAME_LEN) >= METRICS_NAME_LEN)
		return false;
	return true;
}

/*
 * The entry of (table, index), created if missing and create is set; NULL
 * when metrics are off (not preloaded), the hash is full or the entry is
 * missing.  Returns with mshared->lock held in shared mode when not NULL.
 */
static MetricsEntry *
get_entry(const char *table, const char *index, bool create)
{
	MetricsKey	key;
	MetricsEntry *e;
	bool		found;
	int			i;

	if (mhash == NULL || !dynindex_metrics_enabled || !make_key(&key, table, index))
		return NULL;
	LWLockAcquire(mshared->lock, LW_SHARED);
	e = hash_search(mhash, &key, HASH_FIND, NULL);
	if (e)
		return e;
	LWLockRelease(mshared->lock);
	if (!create)
		return NULL;

	LWLockAcquire(mshared->lock, LW_EXCLUSIVE);
	e = hash_search(mhash, &key, HASH_ENTER_NULL, &found);
	if (e && !found)
		for (i = 0; i < DYN_M__COUNT; i++)
			pg_atomic_init_u64(&e->c[i], 0);
	LWLockRelease(mshared->lock);
	if (e == NULL)
	{
		pg_atomic_fetch_add_u64(&mshared->dropped, 1);
		return NULL;
	}
	/* entries are removed only by reset_metrics: look it up again, shared */
	LWLockAcquire(mshared->lock, LW_SHARED);
	e = hash_search(mhash, &key, HASH_FIND, NULL);
	if (e == NULL)
		LWLockRelease(mshared->lock);
	return e;
}

/* Add n to a counter. */
void
DynMetricsAdd(const char *table, const char *index, DynMetric m, uint64 n)
{
	MetricsEntry *e;

	if (n == 0)
		return;
	e = get_entry(table, index, true);
	if (e == NULL)
		return;
	pg_atomic_fetch_add_u64(&e->c[m], n);
	LWLockRelease(mshared->lock);
}

/* Set a gauge. */
void
DynMetricsSet(const char *table, const char *index, DynMetric m, uint64 v)
{
	MetricsEntry *e = get_entry(table, index, true);

	if (e == NULL)
		return;
	pg_atomic_write_u64(&e->c[m], v);
	LWLockRelease(mshared->lock);
}

/*
 * Count a failed request.  ConditionalCheckFailedException (YD004) has its
 * own metric and is not a UserError (CloudWatch: "ConditionalCheckFailed-
 * Requests ... are not reflected in the UserErrors metric"); other DynamoDB
 * errors (class YD) and permission errors (42501, the gateway's
 * AccessDeniedException) are UserErrors, InternalServerError (YD500) and any
 * other PostgreSQL error are SystemErrors.  An error counts on its table only
 * when the table has counters already (any successful request made them), so
 * requests naming made-up tables cannot fill the hash; else on the account's
 * row (table "").
 */
void
DynMetricsCountError(const char *table, int sqlerrcode)
{
	DynMetric	m;
	MetricsEntry *e;

	if (sqlerrcode == MAKE_SQLSTATE('Y', 'D', '0', '0', '4'))
		m = DYN_M_CONDITIONAL_CHECK_FAILED;
	else if (sqlerrcode == MAKE_SQLSTATE('Y', 'D', '5', '0', '0'))
		m = DYN_M_SYSTEM_ERRORS;
	else if (ERRCODE_TO_CATEGORY(sqlerrcode) == MAKE_SQLSTATE('Y', 'D', '0', '0', '0') ||
			 sqlerrcode == MAKE_SQLSTATE('4', '2', '5', '0', '1'))
		m = DYN_M_USER_ERRORS;
	else
		m = DYN_M_SYSTEM_ERRORS;
	e = get_entry(table, NULL, false);
	if (e == NULL)
		e = get_entry("", NULL, true);
	if (e == NULL)
		return;
	pg_atomic_fetch_add_u64(&e->c[m], 1);
	LWLockRelease(mshared->lock);
}

/* Count a successful request and its latency. */
void
DynMetricsCountSuccess(const char *table, TimestampTz start)
{
	MetricsEntry *e = get_entry(table, NULL, true);
	TimestampTz now;

	if (e == NULL)
		return;
	now = GetCurrentTimestamp();
	pg_atomic_fetch_add_u64(&e->c[DYN_M_SUCCESSFUL_REQUESTS], 1);
	pg_atomic_fetch_add_u64(&e->c[DYN_M_LATENCY_US], now > start ? (uint64) (now - start) : 0);
	LWLockRelease(mshared->lock);
}

PG_FUNCTION_INFO_V1(dynindex_metrics);

/* dynindex.metrics(): the raw counters of the current database, one row per table and index. */
Datum
dynindex_metrics(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	MetricsEntry *e;

	InitMaterializedSRF(fcinfo, 0);
	if (mhash == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(mshared->lock, LW_SHARED);
	hash_seq_init(&seq, mhash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[14];
		bool		nulls[14] = {0};

		if (e->key.dbid != MyDatabaseId)
			continue;
		values[0] = CStringGetTextDatum(e->key.table);
		nulls[0] = e->key.table[0] == '\0';
		values[1] = CStringGetTextDatum(e->key.index);
		nulls[1] = e->key.index[0] == '\0';
		values[2] = Float8GetDatum(pg_atomic_read_u64(&e->c[DYN_M_READ_UNITS]) / 2.0);
		values[3] = Float8GetDatum(pg_atomic_read_u64(&e->c[DYN_M_WRITE_UNITS]) / 2.0);
		values[4] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_RETURNED_ITEMS]));
		values[5] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_CONDITIONAL_CHECK_FAILED]));
		values[6] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_USER_ERRORS]));
		values[7] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_SYSTEM_ERRORS]));
		values[8] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_SUCCESSFUL_REQUESTS]));
		values[9] = Float8GetDatum(pg_atomic_read_u64(&e->c[DYN_M_LATENCY_US]) / 1000.0);
		values[10] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_TTL_DELETED]));
		values[11] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_GSI_REPLICATED]));
		values[12] = Float8GetDatum(pg_atomic_read_u64(&e->c[DYN_M_GSI_LATENCY_US]) / 1000.0);
		values[13] = Float8GetDatum(pg_atomic_read_u64(&e->c[DYN_M_GSI_LATENCY_LAST_US]) / 1000.0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(mshared->lock);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_throttle_metrics);

/*
 * dynindex.throttle_metrics(): the throttling counters of the current
 * database (ReadThrottleEvents, WriteThrottleEvents, ThrottledRequests), one
 * row per table and index that has counters; a function of its own so that
 * dynindex.metrics() keeps the columns a database at 0.2 declares.
 */
Datum
dynindex_throttle_metrics(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	MetricsEntry *e;

	InitMaterializedSRF(fcinfo, 0);
	if (mhash == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(mshared->lock, LW_SHARED);
	hash_seq_init(&seq, mhash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[5];
		bool		nulls[5] = {0};

		if (e->key.dbid != MyDatabaseId)
			continue;
		values[0] = CStringGetTextDatum(e->key.table);
		nulls[0] = e->key.table[0] == '\0';
		values[1] = CStringGetTextDatum(e->key.index);
		nulls[1] = e->key.index[0] == '\0';
		values[2] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_READ_THROTTLE_EVENTS]));
		values[3] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_WRITE_THROTTLE_EVENTS]));
		values[4] = Int64GetDatum(pg_atomic_read_u64(&e->c[DYN_M_THROTTLED_REQUESTS]));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(mshared->lock);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_reset_metrics);

/* dynindex.reset_metrics(table_name text DEFAULT NULL): forget the counters of one table (NULL: all) of this database. */
Datum
dynindex_reset_metrics(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	MetricsEntry *e;
	char	   *table = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	int64		n = 0;

	if (mhash == NULL)
		PG_RETURN_INT64(0);
	LWLockAcquire(mshared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, mhash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->key.dbid != MyDatabaseId || (table && strcmp(e->key.table, table) != 0))
			continue;
		hash_search(mhash, &e->key, HASH_REMOVE, NULL);
		n++;
	}
	LWLockRelease(mshared->lock);
	PG_RETURN_INT64(n);
}
