/*
 * capture.c — what a write of a replicated table records for the other
 * regions (docs/global-tables.md): its replication stamp, and one
 * transactional logical decoding message with the change, which the
 * output plugin (decode.c) sends to the other regions' apply workers.
 *
 * Last writer wins on (stamp, region), a total order every region agrees
 * on: a local write stamps the item max(now, stored stamp + 1 µs), so one
 * region's writes of an item keep their order whatever its clock does; an
 * applied change keeps the stamp it was made with.  An item's stamp is in
 * its row (storage.c's stamped statements, set by the statement that writes
 * the item); a key with no item keeps its stamp in
 * dynindex.replication_stamps: a delete's (a tombstone, so that an older
 * write arriving late does not bring the item back), and the floor an
 * insert of the key must pass.
 *
 * Numbering (PendingReplicationCount, lag.c): the changes a transaction
 * logs are counted per subtransaction level, so that a rolled-back
 * subtransaction's changes (whose messages are never decoded) do not count,
 * and the commit records the transaction's count at its commit position.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/message.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "catalog/dyn_catalog.h"
#include "types/types.h"
#include "common/errors.h"
#include "common/wakeup.h"
#include "replication/replication.h"
#include "security/security.h"

/* Set by the apply worker while it applies a change of another region. */
DynReplicationApply DynReplicationApplying;

/* The changes this transaction logged, and per open subtransaction level that logged some, the count before it. */
typedef struct SubCount
{
	int			level;
	uint64		before;
} SubCount;

static uint64 xact_changes = 0;
static SubCount *sub_counts = NULL;
static int	nsub = 0;
static int	maxsub = 0;
static bool count_callbacks = false;

/* The top transaction ended: a commit records its count (lag.c). */
static void
count_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && xact_changes > 0)
		DynReplicationCountCommit(xact_changes, XactLastCommitEnd);
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		xact_changes = 0;
		nsub = 0;
	}
}

/* A subtransaction ended: an abort forgets its changes, a commit gives them to its parent. */
static void
count_subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();

	if (nsub == 0 || sub_counts[nsub - 1].level != level)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		xact_changes = sub_counts[--nsub].before;
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		if (level - 1 <= 1 || (nsub >= 2 && sub_counts[nsub - 2].level == level - 1))
			nsub--;
		else
			sub_counts[nsub - 1].level = level - 1;
	}
}

/* Count one change logged by this transaction. */
static void
count_change(void)
{
	int			level = GetCurrentTransactionNestLevel();

	if (!count_callbacks)
	{
		RegisterXactCallback(count_xact_callback, NULL);
		RegisterSubXactCallback(count_subxact_callback, NULL);
		DynReplicationCountStart();
		count_callbacks = true;
	}
	if (level > 1 && (nsub == 0 || sub_counts[nsub - 1].level < level))
	{
		if (nsub == maxsub)
		{
			maxsub = Max(8, maxsub * 2);
			sub_counts = sub_counts ?
				repalloc(sub_counts, maxsub * sizeof(SubCount)) :
				MemoryContextAlloc(TopMemoryContext, maxsub * sizeof(SubCount));
		}
		sub_counts[nsub].level = level;
		sub_counts[nsub].before = xact_changes;
		nsub++;
	}
	xact_changes++;
}

/*
 * The numbers of the tables replicated to another region (a replica not
 * CREATION_FAILED: their writes are captured) and of the tables with any
 * replica row (DescribeTable shows them), as of catalog generation
 * cached_gen.
 */
static List *replicated = NIL;
static List *listed = NIL;
static uint64 cached_gen = 0;
static bool cached = false;

/*
 * Read the numbers of the replicated tables (none before version 0.3), in a
 * new snapshot (not read-only SPI): a writer that waited for a replica's
 * _replica_join (replica.c) to commit must see its row, and UpdateTable the
 * row it has just written.
 */
static void
load_replicated(void)
{
	DynSecurityState sec;
	MemoryContext outer = CurrentMemoryContext;
	List	   *nums = NIL;
	List	   *all = NIL;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute("SELECT t.num, bool_or(r.status <> 'CREATION_FAILED') FROM dynindex.replicas r "
					"JOIN dynindex.tables t USING (table_name) GROUP BY t.num",
					false, 0) == SPI_OK_SELECT)
	{
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			int64		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
			bool		capturing = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
			MemoryContext spi = MemoryContextSwitchTo(TopMemoryContext);

			all = lappend_int(all, (int) n);
			if (capturing)
				nums = lappend_int(nums, (int) n);
			MemoryContextSwitchTo(spi);
		}
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	MemoryContextSwitchTo(outer);
	replicated = nums;
	listed = all;
}

/*
 * Read the lists again when the catalog generation changed, or while the
 * catalog is stale (an invalidation arrived during this request: a writer
 * that waited for _replica_join's lock reads the committed rows).
 */
static void
refresh_replicated(void)
{
	bool		stale = DynCatalogIsStale();

	if (!cached || cached_gen != DynCatalogGeneration() || stale)
	{
		list_free(replicated);
		list_free(listed);
		replicated = NIL;
		listed = NIL;
		if (DynRegionsCatalogPresent())
			load_replicated();
		cached_gen = DynCatalogGeneration();
		cached = !stale;
	}
}

/* Is table t replicated to another region? (cached per catalog generation) */
bool
DynReplicationIsReplicated(DynTable *t)
{
	refresh_replicated();
	return list_member_int(replicated, (int) t->num);
}

/* Has table t replicas (any status)? */
static bool
has_replicas(DynTable *t)
{
	refresh_replicated();
	return list_member_int(listed, (int) t->num);
}

/* Push a key attribute's value into the message. */
static void
push_value(JsonbParseState **st, const char *k, const DynValue *v)
{
	JsonbValue	key;

	key.type = jbvString;
	key.val.string.val = (char *) k;
	key.val.string.len = strlen(k);
	pushJsonbValue(st, WJB_KEY, &key);
	DynValuePushJsonb(st, v);
}

/* Push a string member. */
static void
push_string(JsonbParseState **st, const char *k, const char *s)
{
	JsonbValue	key;
	JsonbValue	val;

	key.type = jbvString;
	key.val.string.val = (char *) k;
	key.val.string.len = strlen(k);
	pushJsonbValue(st, WJB_KEY, &key);
	val.type = jbvString;
	val.val.string.val = (char *) s;
	val.val.string.len = strlen(s);
	pushJsonbValue(st, WJB_VALUE, &val);
}

/* The stamp statements, prepared once per backend (a parse and plan per change cost the apply half its time). */
typedef enum StampPlan
{
	PLAN_STAMP,
	PLAN_STAMP_IF_NEWER,
	PLAN__COUNT
} StampPlan;

static SPIPlanPtr stamp_plans[PLAN__COUNT];

/*
 * Run stamp statement which ($1..$6: table_num, pk, sk, stamp, region,
 * deleted) for key's new state; SPI_processed and SPI_tuptable are its
 * result.
 */
static void
stamp_exec(StampPlan which, DynTable *t, const DynKey *key, bool deleted, TimestampTz stamp, const char *region)
{
	static const char *const sql[PLAN__COUNT] = {
		/* a local insert or delete: now, or just after the stored stamp if that is later (a clock behind) */
		"INSERT INTO dynindex.replication_stamps AS s VALUES ($1, $2, $3, $4, $5, $6) "
		"ON CONFLICT (table_num, pk, sk) DO UPDATE SET "
		"stamp = greatest($4, s.stamp + interval '1 microsecond'), region = $5, deleted = $6 "
		"RETURNING stamp",
		/* an applied change over no item: only over an earlier (stamp, region); the row is locked either way */
		"INSERT INTO dynindex.replication_stamps AS s VALUES ($1, $2, $3, $4, $5, $6) "
		"ON CONFLICT (table_num, pk, sk) DO UPDATE SET stamp = $4, region = $5, deleted = $6 "
		"WHERE ($4, $5) > (s.stamp, s.region COLLATE \"C\") "
		"RETURNING stamp"
	};
	Oid			types[6] = {INT8OID, BYTEAOID, BYTEAOID, TIMESTAMPTZOID, TEXTOID, BOOLOID};
	Datum		args[6];

	if (stamp_plans[which] == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(sql[which], 6, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare a statement on dynindex.replication_stamps");
		stamp_plans[which] = plan;
	}
	args[0] = Int64GetDatum(t->num);
	args[1] = PointerGetDatum(key->pk);
	args[2] = PointerGetDatum(key->sk);
	args[3] = TimestampTzGetDatum(stamp);
	args[4] = CStringGetTextDatum(region);
	args[5] = BoolGetDatum(deleted);
	if (SPI_execute_plan(stamp_plans[which], args, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not write dynindex.replication_stamps");
}

/*
 * Record, in the key's row of dynindex.replication_stamps (its tombstone, or
 * the floor an insert must pass), the stamp of a local write that deleted
 * (deleted) or inserted key, and return it: stamp, or the stored one + 1 µs
 * when that is later, so that a write here always follows what it replaces.
 */
static TimestampTz
stamp_floor(DynTable *t, const DynKey *key, bool deleted, TimestampTz stamp, const char *region)
{
	DynSecurityState sec;
	bool		isnull;
	TimestampTz out;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	stamp_exec(PLAN_STAMP, t, key, deleted, stamp, region);
	if (SPI_processed != 1)
		elog(ERROR, "could not write dynindex.replication_stamps");
	out = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return out;
}

/*
 * Last writer wins, for a change applied from another region (or copied to
 * a new replica) of a key with no item: record (stamp, region) as the key's
 * tombstone if it is later than the stored one, or if there is none, and
 * say whether it was.  One statement, so that the decision and the record
 * cannot part: the key's row stays locked until the transaction ends, and a
 * concurrent change of the key waits for it and compares with what it
 * committed.
 */
bool
DynReplicationStampIfNewer(DynTable *t, const DynKey *key, bool deleted, TimestampTz stamp, const char *region)
{
	DynSecurityState sec;
	bool		newer;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	stamp_exec(PLAN_STAMP_IF_NEWER, t, key, deleted, stamp, region);
	newer = SPI_processed == 1;
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return newer;
}

/* Is (s1, r1) later than (s2, r2)?  Regions compare bytewise, as COLLATE "C". */
static bool
stamp_later(TimestampTz s1, const char *r1, TimestampTz s2, const char *r2)
{
	return s1 != s2 ? s1 > s2 : strcmp(r1, r2) > 0;
}

/*
 * Last writer wins, before a write of key in table t whose rows carry
 * stamps (a replicated table, or one a change is applied to).  old is the
 * key's row, read under lock (NULL: none); deleting: the write deletes it.
 *
 * A change applied from another region keeps its stamp and is written only
 * if it is later than old's — or, with no row, than the key's tombstone,
 * which it then becomes (DynReplicationStampIfNewer: the row of
 * dynindex.replication_stamps stays locked, and a write that starts over
 * has won already).  False: it loses, and nothing is written.  A row
 * without a stamp (written before the table was replicated) loses to any
 * change.
 *
 * A local write is stamped now, or just after old's stamp (or an earlier
 * attempt of the same write) when that is later; an insert or delete then
 * passes the key's tombstone in DynReplicationStampAfter.
 */
bool
DynReplicationStampBefore(DynTable *t, const DynKey *key, const DynStoredItem *old, bool deleting, DynWriteStamp *ws)
{
	DynReplicationApply *a = &DynReplicationApplying;

	if (a->active)
	{
		ws->stamp = a->stamp;
		ws->region = a->region;
		if (old)
			return !old->stamped || stamp_later(a->stamp, a->region, old->stamp, old->region);
		if (!a->won && !DynReplicationStampIfNewer(t, key, deleting, a->stamp, a->region))
			return false;
		a->won = true;
		return true;
	}
	ws->region = DynRegionLocal();
	ws->stamp = Max(GetCurrentTimestamp(), ws->floor);
	if (old && old->stamped)
		ws->stamp = Max(ws->stamp, old->stamp + 1);
	ws->floor = ws->stamp;
	return true;
}

/*
 * After a write of key that deleted its item (newjson NULL) or inserted one
 * (newjson, size), stamped by DynReplicationStampBefore: a delete leaves its
 * stamp as the key's tombstone.  A local insert is then stamped past the
 * tombstone (or the floor an earlier insert left) if that is later, the
 * item's row stamped again (rare: a clock behind, or a delete just
 * committed), and the floor moved to its stamp.  The item's row is written
 * first and the tombstone after, as every local write does (no circle of
 * waits among them); an applied change has recorded its tombstone before
 * (DynReplicationStampBefore), so an applied delete records it here only
 * over an item it deleted.
 */
void
DynReplicationStampAfter(DynTable *t, const DynKey *key, Jsonb *newjson, int32 size, DynWriteStamp *ws)
{
	TimestampTz s;

	if (DynReplicationApplying.active)
	{
		if (newjson == NULL)
			(void) DynReplicationStampIfNewer(t, key, true, ws->stamp, ws->region);
		return;
	}
	s = stamp_floor(t, key, newjson == NULL, ws->stamp, ws->region);
	if (newjson && s != ws->stamp)
		DynStorageUpdate(t, key, newjson, size, s, ws->region);
	ws->stamp = ws->floor = s;
}

/*
 * A write of replicated table t changed key to the item stored as newjson
 * (NULL: deleted), stamped stamp: log the change for the other regions.  A
 * change being applied from another region is never sent back (its origin
 * is set: the output plugin filters it).
 */
void
DynReplicationCapture(DynTable *t, const DynKey *key, Jsonb *newjson, TimestampTz stamp)
{
	JsonbParseState *st = NULL;
	const char *region = DynRegionLocal();
	Jsonb	   *msg;
	char	   *text;
	JsonbValue	k;

	if (DynReplicationApplying.active)
		return;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_string(&st, "t", t->name);
	push_value(&st, "h", key->hash);
	if (key->range)
		push_value(&st, "r", key->range);
	k.type = jbvString;
	k.val.string.val = "i";
	k.val.string.len = 1;
	pushJsonbValue(&st, WJB_KEY, &k);
	if (newjson)
	{
		JsonbValue	b;

		b.type = jbvBinary;
		b.val.binary.data = &newjson->root;
		b.val.binary.len = VARSIZE(newjson) - VARHDRSZ;
		pushJsonbValue(&st, WJB_VALUE, &b);
	}
	else
	{
		JsonbValue	n;

		n.type = jbvNull;
		pushJsonbValue(&st, WJB_VALUE, &n);
	}
	push_string(&st, "s", psprintf(INT64_FORMAT, (int64) stamp));
	push_string(&st, "o", region);
	msg = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	text = JsonbToCString(NULL, &msg->root, VARSIZE(msg));
	LogLogicalMessage(DYN_REPLICATION_PREFIX, text, strlen(text), true, false);
	count_change();
}

/*
 * A setting of replicated table t changed: one message {"t", "op", "q", "o"}
 * in the same transaction, so that it reaches each region in commit order
 * with the item changes around it, exactly once (worker/apply.c runs it).
 */
void
DynReplicationCaptureOperation(DynTable *t, const char *op, Jsonb *req)
{
	JsonbParseState *st = NULL;
	JsonbValue	k;
	JsonbValue	q;
	Jsonb	   *msg;
	char	   *text;

	if (DynReplicationApplying.active || !DynReplicationIsReplicated(t))
		return;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_string(&st, "t", t->name);
	push_string(&st, "op", op);
	k.type = jbvString;
	k.val.string.val = "q";
	k.val.string.len = 1;
	pushJsonbValue(&st, WJB_KEY, &k);
	q.type = jbvBinary;
	q.val.binary.data = &req->root;
	q.val.binary.len = VARSIZE(req) - VARHDRSZ;
	pushJsonbValue(&st, WJB_VALUE, &q);
	push_string(&st, "o", DynRegionLocal());
	msg = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	text = JsonbToCString(NULL, &msg->root, VARSIZE(msg));
	LogLogicalMessage(DYN_REPLICATION_PREFIX, text, strlen(text), true, false);
}

/* The slot a region's apply worker streams from, on the server that sends: dynindex_<region>. */
char *
DynReplicationSlotName(const char *region)
{
	char	   *s = psprintf("dynindex_%s", region);

	for (char *p = s; *p; p++)
		if (*p == '-')
			*p = '_';
	return s;
}

PG_FUNCTION_INFO_V1(dynindex_replicate_table);

/*
 * dynindex._replicate_table(table_name, region_name): mark an existing table
 * replicated with a declared region whose server has the same table (the
 * test's way in until ReplicaUpdates Create copies a table: not built).
 * Creates this server's slot for the region first (a slot cannot be made
 * after a write in the same transaction): changes committed from then on
 * reach the region.
 */
Datum
dynindex_replicate_table(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *region = text_to_cstring(PG_GETARG_TEXT_PP(1));
	DynSecurityState sec;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];

	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied to replicate a dynindex table"),
						errdetail("Only superusers may (ReplicaUpdates is the API).")));
	if (!DynRegionIsDeclared(region))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("region \"%s\" is not declared", region)));
	DynReplicationCountStart();	/* before the slot: its changes are all counted */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (DynCatalogGetTableUnchecked(table) == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("table \"%s\" does not exist", table)));
	args[0] = CStringGetTextDatum(DynReplicationSlotName(region));
	if (SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, '" DYN_REPLICATION_PLUGIN "') "
							  "WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_slots WHERE slot_name = $1)",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not create the replication slot");
	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(region);
	if (SPI_execute_with_args("INSERT INTO dynindex.replicas (table_name, region_name) VALUES ($1, $2) "
							  "ON CONFLICT DO NOTHING", 2, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write dynindex.replicas");
	DynSecurityEndInternal(&sec);
	SPI_finish();
	DynCatalogChanged();
	DynWorkerWake(MyDatabaseId);
	PG_RETURN_VOID();
}

/*
 * The other regions table t is replicated with, as "region\tstatus"
 * strings sorted by region (NIL: not a global table, or before 0.3).
 */
List *
DynReplicationReplicas(DynTable *t)
{
	DynSecurityState sec;
	MemoryContext outer = CurrentMemoryContext;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	List	   *out = NIL;

	if (!has_replicas(t))
		return NIL;
	args[0] = CStringGetTextDatum(t->name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT region_name || E'\\t' || status FROM dynindex.replicas "
							  "WHERE table_name = $1 ORDER BY region_name",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.replicas");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext spi = MemoryContextSwitchTo(outer);

		out = lappend(out, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		MemoryContextSwitchTo(spi);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return out;
}

/* Table t is being deleted: it is no longer replicated, and its stamps go. */
void
DynReplicationForgetTable(DynTable *t)
{
	DynSecurityState sec;
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		args[2];

	if (!DynRegionsCatalogPresent())
		return;
	args[0] = CStringGetTextDatum(t->name);
	args[1] = Int64GetDatum(t->num);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("DELETE FROM dynindex.replicas WHERE table_name = $1", 2, types, args, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args("DELETE FROM dynindex.replication_stamps WHERE table_num = $2", 2, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget the replicas of a deleted table");
	DynSecurityEndInternal(&sec);
	SPI_finish();
}
