/*
 * apply.c — global tables: one apply worker per (database, remote region)
 * with a replicated table (docs/global-tables.md).
 *
 * It connects to the region's server with the declared connection string
 * (a libpq replication connection), streams the slot dynindex_<this region>
 * there (START_REPLICATION ... LOGICAL, the output plugin of
 * replication/decode.c) and applies each change through the one write path
 * (so LSIs, GSIs, streams and item history follow), last writer wins on the
 * change's (stamp, region).  Each remote transaction is applied in one local
 * transaction under the replication origin dynindex_<region>, whose progress
 * commits with it: after a crash the stream resumes after the last applied
 * transaction, exactly once.  Changes applied under the origin are not
 * decoded for other regions (no change goes back where it came from).
 *
 * The database's worker (worker.c) starts missing apply workers each round
 * (DynApplyLaunch).  A region that cannot be reached, or a stream that ends,
 * is tried again by the same worker every DYN_APPLY_RETRY_MS; an error while
 * applying ends the worker (the transaction rolls back, the origin stays
 * where it was) and the database's worker starts it again.
 *
 * A peer that goes silent (a partition that drops packets, a host that
 * died without closing its connections) is noticed as PostgreSQL's own
 * subscriptions notice it: nothing received for wal_receiver_timeout ends
 * the session (half of it without anything asks the sender for a reply),
 * and connecting and starting the stream wait on the latch, interruptible
 * and no longer than wal_receiver_timeout.  Without this the worker waited
 * forever on a connection nobody answered (test/t/136_global_partition.pl).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/origin.h"
#include "replication/walreceiver.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "common/json.h"
#include "common/wakeup.h"
#include "replication/replication.h"
#include "security/security.h"
#include "storage/storage.h"
#include "types/types.h"
#include "worker/worker.h"
#include "write/write.h"

/* advisory lock key1 of the apply workers (key2: the region's hash) */
#define DYN_APPLY_LOCK_KEY 0x64796e61	/* "dyna" */
/* status updates to the sender at least this often */
#define DYN_APPLY_STATUS_MS 1000
/* a region that cannot be reached is tried again after this long */
#define DYN_APPLY_RETRY_MS 2000

/* The advisory lock an apply worker of region holds while it runs. */
static void
apply_locktag(LOCKTAG *tag, const char *region)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, DYN_APPLY_LOCK_KEY,
						 hash_bytes((const unsigned char *) region, strlen(region)), 2);
}

/* The region streamed, and the changes applied in the open remote transaction (for lag.c). */
static const char *apply_region = NULL;
static int64 applied_in_xact = 0;

/* One change as the output plugin sends it. */
typedef struct ApplyChange
{
	DynKey		key;
	DynValue   *item;			/* NULL: a delete */
	TimestampTz stamp;
	char	   *region;
	bool		won;			/* has won over the key's tombstone already */
} ApplyChange;

/*
 * The change's item.  Last writer wins is the write path's
 * (DynReplicationStampBefore, with DynReplicationApplying): the item is
 * written only when the change's (stamp, region) is later than the stored
 * one.
 */
static DynValue *
apply_mutator(DynTable *t, const DynValue *old, void *arg)
{
	return ((ApplyChange *) arg)->item;
}

/*
 * Apply change c of table t (c->key is its key; c->won: it has won over the
 * key's tombstone already).  A delete that won over no item is tried once
 * more: an item that a change applied at the same time inserted (unseen by
 * the read, committed before the tombstone could be taken) is deleted by it
 * too, if older.
 */
static void
apply_one(DynTable *t, ApplyChange *c)
{
	DynWriteResult res;
	DynReplicationApply *a = &DynReplicationApplying;

	a->stamp = c->stamp;
	a->region = c->region;
	a->won = c->won;
	DynWriteModify(t, &c->key, apply_mutator, c, "Item size has exceeded the maximum allowed size", 0, &res);
	if (c->item == NULL && a->won && res.old == NULL)
		DynWriteModify(t, &c->key, apply_mutator, c, "", 0, &res);
}

/* A member of a change as a Jsonb (NULL: absent or null). */
static Jsonb *
member_jsonb(Jsonb *msg, const char *name)
{
	JsonbValue *v = RqGet(&msg->root, name);

	if (v == NULL || v->type == jbvNull)
		return NULL;
	return JsonbValueToJsonb(v);
}

/*
 * Run a table-wide setting change of the region (time to live, GSIs, billing:
 * what DynamoDB applies to every replica) through dynindex.api, in a
 * subtransaction.  What this replica refuses for good — the setting is
 * already so (the same change made here too), or cannot be (a ValidationException,
 * ResourceInUse, ResourceNotFound) — is logged and skipped, so that the
 * region's stream goes on; LimitExceeded (an index still being built here)
 * and anything else fails the transaction: it comes again later.
 */
static void
apply_operation(const char *table, const char *op, Jsonb *req)
{
	static const char *const skipped[] = {"ValidationException: ", "ResourceInUseException: ",
	"ResourceNotFoundException: ", NULL};
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		args[2] = {CStringGetTextDatum(op), JsonbPGetDatum(req)};

	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		if (SPI_execute_with_args("SELECT dynindex.api($1, $2)", 2, types, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not run a replicated %s", op);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *e;
		const char *const *p;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		for (p = skipped; *p; p++)
			if (e->message && strncmp(e->message, *p, strlen(*p)) == 0)
				break;
		if (*p == NULL)
			PG_RE_THROW();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(WARNING, (errmsg("dynindex apply: %s of table \"%s\" from region \"%s\" not applied here: %s",
								 op, table, apply_region, e->message)));
	}
	PG_END_TRY();
	DynCatalogRevalidate();
}

/* Apply one change ("M" line) in the current transaction (false: its table is gone here). */
static bool
apply_change(const char *json)
{
	Jsonb	   *msg = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	char	   *table = RqGetString(&msg->root, "t");
	char	   *op = RqGetString(&msg->root, "op");
	DynTable   *t;
	DynValue   *keymap;
	Jsonb	   *h = member_jsonb(msg, "h");
	Jsonb	   *r = member_jsonb(msg, "r");
	Jsonb	   *item = member_jsonb(msg, "i");
	ApplyChange c;
	const char *err = NULL;
	JsonbValue	jv;

	DynCatalogRevalidate();
	t = DynCatalogGetTableUnchecked(table);
	if (t == NULL)
		return false;			/* the table is gone here: nothing to apply */
	if (op != NULL)
	{
		DynReplicationApplying.active = true;
		PG_TRY();
		{
			apply_operation(table, op, member_jsonb(msg, "q"));
		}
		PG_FINALLY();
		{
			DynReplicationApplying.active = false;
		}
		PG_END_TRY();
		return true;
	}
	keymap = DynMakeMap(2);
	jv.type = jbvBinary;
	jv.val.binary.data = &h->root;
	jv.val.binary.len = VARSIZE(h) - VARHDRSZ;
	DynMapAppend(keymap, t->hash.name, strlen(t->hash.name), DynValueFromJsonb(&jv, &err));
	if (t->has_range && r)
	{
		jv.val.binary.data = &r->root;
		jv.val.binary.len = VARSIZE(r) - VARHDRSZ;
		DynMapAppend(keymap, t->range.name, strlen(t->range.name), DynValueFromJsonb(&jv, &err));
	}
	if (err)
		elog(ERROR, "replicated change of table \"%s\" with an invalid key", table);
	DynWriteKeyFromMap(t, keymap, &c.key);
	c.item = item ? DynItemFromStored(item) : NULL;
	c.stamp = (TimestampTz) strtoi64(RqGetString(&msg->root, "s"), NULL, 10);
	c.region = RqGetString(&msg->root, "o");
	c.won = false;
	DynReplicationApplying.active = true;
	PG_TRY();
	{
		apply_one(t, &c);
	}
	PG_FINALLY();
	{
		DynReplicationApplying.active = false;
	}
	PG_END_TRY();
	return true;
}

/* Big-endian integers of the replication protocol. */
static int64
get_int64(const char *p)
{
	uint64		v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | (unsigned char) p[i];
	return (int64) v;
}

static void
put_int64(char *p, int64 v)
{
	for (int i = 7; i >= 0; i--)
	{
		p[i] = (char) (v & 0xff);
		v >>= 8;
	}
}

/* The sender's position as of its last message (what it has sent). */
static XLogRecPtr last_received = InvalidXLogRecPtr;

/*
 * Memory of a session (its slot name and command), reset when it ends, and
 * of the message being handled (its text), reset after each message.  Not
 * the current context: while a remote transaction is open that is the SPI
 * procedure context of begin_remote(), which commit_remote() deletes (a
 * "C" message's text must outlive the commit it asks for).
 */
static MemoryContext session_context = NULL;
static MemoryContext message_context = NULL;

/*
 * Tell the sender how far this region has applied, durably: the origin's
 * flushed progress.  With no remote transaction open and every applied one
 * flushed, everything the sender has sent is done (the rest carried no
 * change for us): report its position, as PostgreSQL's apply worker does, so
 * that the slot advances and a shutting-down sender sees us caught up.
 */
static void
send_status(PGconn *conn, bool reply)
{
	char		buf[1 + 8 * 4 + 1];
	XLogRecPtr	flushed = replorigin_session_get_progress(true);
	XLogRecPtr	written = replorigin_session_get_progress(false);

	if (!IsTransactionState() && flushed == written && last_received > flushed)
		flushed = written = last_received;

	buf[0] = 'r';
	put_int64(buf + 1, written);
	put_int64(buf + 9, flushed);
	put_int64(buf + 17, flushed);
	put_int64(buf + 25, GetCurrentTimestamp());
	buf[33] = reply ? 1 : 0;
	if (PQputCopyData(conn, buf, sizeof(buf)) <= 0 || PQflush(conn) != 0)
		ereport(ERROR, (errmsg("dynindex apply: lost the connection to the sending region")));
}

/* Begin applying a remote transaction (a no-op when one is open). */
static void
begin_remote(void)
{
	if (IsTransactionState())
		return;
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynStorageWritesBegin();
}

/* Commit the applied remote transaction that ended at end_lsn, committed at commit_time. */
static void
commit_remote(XLogRecPtr end_lsn, TimestampTz commit_time)
{
	if (!IsTransactionState())
		return;
	DynStorageWritesEnd();
	SPI_finish();
	PopActiveSnapshot();
	replorigin_session_origin_lsn = end_lsn;
	replorigin_session_origin_timestamp = commit_time;
	CommitTransactionCommand();
	replorigin_session_origin_lsn = InvalidXLogRecPtr;
	replorigin_session_origin_timestamp = 0;
	DynReplicationLagRecord(apply_region, applied_in_xact, commit_time, GetCurrentTimestamp());
	applied_in_xact = 0;
}

/* Handle one CopyData message of the stream. */
static void
handle_message(PGconn *conn, const char *buf, int len)
{
	if (buf[0] == 'k' && len >= 18)
	{
		last_received = Max(last_received, (XLogRecPtr) get_int64(buf + 1));
		if (buf[17])
			send_status(conn, false);
		return;
	}
	if (buf[0] != 'w' || len < 25)
		return;
	{
		XLogRecPtr	start = (XLogRecPtr) get_int64(buf + 1);
		MemoryContext old = MemoryContextSwitchTo(message_context);
		char	   *text = pnstrdup(buf + 25, len - 25);
		char	   *line = text;

		MemoryContextSwitchTo(old);
		last_received = Max(last_received, start);
		/* its lines (decode.c): changes, and a commit last */
		while (line)
		{
			char	   *next = strchr(line, '\n');

			if (next)
				*next++ = '\0';
			if (line[0] == 'M' && line[1] == ' ')
			{
				begin_remote();
				if (apply_change(line + 2))
					applied_in_xact++;
			}
			else if (line[0] == 'C' && line[1] == ' ')
				commit_remote(start, (TimestampTz) strtoi64(line + 2, NULL, 10));
			line = next;
		}
	}
}

/*
 * Before exiting on a failed connection or stream: wait, so that a region
 * that is down is not asked again at every round of the database's worker.
 */
static void
backoff(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, DYN_APPLY_RETRY_MS, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Wait on the latch for socket event io of conn, or until deadline (0: no
 * deadline); interruptible.  False when the deadline passed.
 */
static bool
wait_socket(PGconn *conn, int io, TimestampTz deadline)
{
	long		timeout = -1;
	int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | io;
	int			rc;

	if (deadline != 0)
	{
		timeout = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (timeout <= 0)
			return false;
		events |= WL_TIMEOUT;
	}
	rc = WaitLatchOrSocket(MyLatch, events, PQsocket(conn), timeout, PG_WAIT_EXTENSION);
	if (rc & WL_LATCH_SET)
	{
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return !((rc & WL_TIMEOUT) && !(rc & io));
}

/* The deadline of a step that waits for the region's server (0: none, wal_receiver_timeout = 0). */
static TimestampTz
answer_deadline(void)
{
	if (wal_receiver_timeout <= 0)
		return 0;
	return TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wal_receiver_timeout);
}

/*
 * Connect to the region's server for replication (NULL: could not; the
 * conninfo is never logged).  Asynchronously, as libpqwalreceiver does: a
 * server that accepts the connection and never answers holds the worker no
 * longer than wal_receiver_timeout, and a SIGTERM is served meanwhile.
 */
static PGconn *
connect_region(const char *region, const char *conninfo)
{
	const char *keys[] = {"dbname", "replication", "fallback_application_name", NULL};
	const char *vals[] = {conninfo, "database", "dynindex_apply", NULL};
	PGconn	   *conn = PQconnectStartParams(keys, vals, 1);
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;
	TimestampTz deadline = answer_deadline();
	const char *why = NULL;

	if (conn == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (PQstatus(conn) == CONNECTION_BAD)
		status = PGRES_POLLING_FAILED;
	while (status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
	{
		int			io = status == PGRES_POLLING_READING ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;

		if (!wait_socket(conn, io, deadline))
		{
			why = "no answer within wal_receiver_timeout";
			break;
		}
		status = PQconnectPoll(conn);
	}
	if (why != NULL || PQstatus(conn) != CONNECTION_OK)
	{
		ereport(LOG, (errmsg("dynindex apply: could not connect to region \"%s\"", region),
					  errdetail_internal("%s", why ? why : PQerrorMessage(conn))));	/* libpq's, without the password */
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/*
 * Send command on conn and return its result, waiting for it on the latch;
 * NULL, with *why, when none came before the deadline or the connection was
 * lost.
 */
static PGresult *
exec_command(PGconn *conn, const char *command, TimestampTz deadline, const char **why)
{
	*why = NULL;
	if (PQsendQuery(conn, command) == 0)
	{
		*why = PQerrorMessage(conn);
		return NULL;
	}
	while (PQisBusy(conn))
	{
		if (!wait_socket(conn, WL_SOCKET_READABLE, deadline))
		{
			*why = "no answer within wal_receiver_timeout";
			return NULL;
		}
		if (PQconsumeInput(conn) == 0)
		{
			*why = PQerrorMessage(conn);
			return NULL;
		}
	}
	return PQgetResult(conn);
}

/*
 * The region's connection string, read again for each session (NULL: no
 * longer declared, or no table of this database has a replica there any
 * more: a removed replica's region is not streamed).
 */
static char *
read_conninfo(const char *region)
{
	char	   *conninfo;
	DynSecurityState sec;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	conninfo = DynRegionConninfo(region);
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT FROM dynindex.replicas WHERE region_name = $1 AND status <> 'CREATION_FAILED'",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(region)}, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.replicas");
	if (SPI_processed == 0)
		conninfo = NULL;
	DynSecurityEndInternal(&sec);
	if (conninfo)
		conninfo = MemoryContextStrdup(TopMemoryContext, conninfo);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return conninfo;
}

/*
 * One session: stream the region's slot from where this server's origin
 * is, applying, until the connection ends.  A remote transaction it leaves
 * half applied is rolled back: the next session gets it again whole.
 */
static void
stream_session(const char *region, PGconn *conn)
{
	XLogRecPtr	start = replorigin_session_get_progress(false);
	MemoryContext old = MemoryContextSwitchTo(session_context);
	char	   *slot = DynReplicationSlotName(DynRegionLocal());
	char	   *command = psprintf("START_REPLICATION SLOT %s LOGICAL %X/%X", slot, LSN_FORMAT_ARGS(start));
	PGresult   *res;
	TimestampTz last_status = 0;
	TimestampTz last_received_at;
	bool		ping_sent = false;
	const char *why;

	MemoryContextSwitchTo(old);

	/*
	 * What the previous session received is not this one's to confirm: a
	 * remote transaction it left half applied (rolled back) lies beyond the
	 * origin's progress, and reporting that position as flushed would move
	 * the slot past the transaction — a later session would never get it.
	 */
	last_received = InvalidXLogRecPtr;
	res = exec_command(conn, command, answer_deadline(), &why);
	if (res == NULL)
	{
		ereport(LOG, (errmsg("dynindex apply: region \"%s\" did not start streaming slot %s", region, slot),
					  errdetail_internal("%s", why)));
		return;
	}
	if (PQresultStatus(res) != PGRES_COPY_BOTH)
	{
		ereport(LOG, (errmsg("dynindex apply: region \"%s\" did not start streaming slot %s", region, slot),
					  errdetail_internal("%s", PQerrorMessage(conn))));
		PQclear(res);
		return;
	}
	PQclear(res);
	last_received_at = GetCurrentTimestamp();
	for (;;)
	{
		char	   *buf;
		int			len;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);	/* wal_receiver_timeout */
		}
		len = PQgetCopyData(conn, &buf, 1);
		if (len > 0)
		{
			last_received_at = GetCurrentTimestamp();
			ping_sent = false;
			handle_message(conn, buf, len);
			PQfreemem(buf);
			MemoryContextReset(message_context);
			continue;
		}
		if (len < 0)
			break;				/* the sender ended the stream */

		/*
		 * A silent sender: after half of wal_receiver_timeout ask it for a
		 * reply (a sender that is alive answers with a keepalive); after all
		 * of it, give the session up as dead.
		 */
		if (wal_receiver_timeout > 0)
		{
			TimestampTz now = GetCurrentTimestamp();

			if (TimestampDifferenceExceeds(last_received_at, now, wal_receiver_timeout))
			{
				ereport(LOG, (errmsg("dynindex apply: region \"%s\" sent nothing within wal_receiver_timeout (%d ms)",
									 region, wal_receiver_timeout)));
				break;
			}
			if (!ping_sent && TimestampDifferenceExceeds(last_received_at, now, wal_receiver_timeout / 2))
			{
				send_status(conn, true);
				last_status = now;
				ping_sent = true;
			}
		}
		/* nothing buffered: report progress, then wait for the socket */
		if (!IsTransactionState() &&
			TimestampDifferenceExceeds(last_status, GetCurrentTimestamp(), DYN_APPLY_STATUS_MS))
		{
			send_status(conn, false);
			last_status = GetCurrentTimestamp();
		}
		(void) WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_SOCKET_READABLE | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 PQsocket(conn), DYN_APPLY_STATUS_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (PQconsumeInput(conn) == 0)
			break;				/* the connection is lost */
	}
	ereport(LOG, (errmsg("dynindex apply: the stream of region \"%s\" ended", region)));
	if (IsTransactionState())
	{
		DynStorageWritesEnd();
		AbortCurrentTransaction();
	}
	applied_in_xact = 0;
}

/*
 * When an apply worker ends — an error (a deadlock victim, a lost
 * connection), its region forgotten — wake the database's worker, whose next
 * round starts another if a table still needs the region: idle, it would
 * sleep up to a minute first.  An on_shmem_exit callback runs after the
 * session's advisory locks are released (ShutdownPostgres, before_shmem_exit),
 * so the round sees this worker gone.
 */
static void
apply_exit_wake(int code, Datum arg)
{
	DynWorkerWake(MyDatabaseId);
}

/*
 * bgworker entry: apply the changes of the region named in bgw_extra to
 * database main_arg, session after session (a region that cannot be reached
 * is tried again every DYN_APPLY_RETRY_MS), until the region is dropped.
 */
void
dynindex_apply_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	char		region[BGW_EXTRALEN];
	LOCKTAG		tag;
	RepOriginId origin;
	char	   *origin_name;

	memcpy(region, MyBgworkerEntry->bgw_extra, BGW_EXTRALEN);
	region[BGW_EXTRALEN - 1] = '\0';
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);	/* one change at a time: never worth compiling */

	/*
	 * Commit applied transactions without waiting for their WAL flush, as
	 * PostgreSQL's own apply worker does (a subscription's default): the
	 * sender is told only the flushed progress (send_status:
	 * replorigin_session_get_progress(true) flushes the WAL up to the last
	 * applied commit first), so a crash loses only transactions the sender
	 * has not seen confirmed, and the origin's progress with them: they come
	 * again.  A flush per applied transaction made the apply worker fall
	 * behind 8 writers (bench/global.sh).
	 */
	SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);

	/*
	 * A local write and an applied change of one new key lock the item and
	 * its stamp in opposite orders (the write inserts, then stamps; the
	 * change must win the stamp before it inserts) and can deadlock.  The
	 * process whose deadlock_timeout ends first finds the cycle and is
	 * cancelled: let it be this worker, whose remote transaction simply comes
	 * again, rather than a client's write (the default is 1 s).
	 */
	SetConfigOption("deadlock_timeout", "100", PGC_SUSET, PGC_S_OVERRIDE);

	apply_locktag(&tag, region);
	if (LockAcquire(&tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		proc_exit(0);			/* another one runs */
	on_shmem_exit(apply_exit_wake, (Datum) 0);
	pgstat_report_activity(STATE_RUNNING, psprintf("dynindex apply from region %s", region));

	apply_region = region;
	origin_name = psprintf("dynindex_%s", region);
	StartTransactionCommand();
	origin = replorigin_by_name(origin_name, true);
	if (origin == InvalidRepOriginId)
		origin = replorigin_create(origin_name);
	CommitTransactionCommand();
	replorigin_session_setup(origin, 0);
	replorigin_session_origin = origin;
	session_context = AllocSetContextCreate(TopMemoryContext, "dynindex apply session", ALLOCSET_DEFAULT_SIZES);
	/*
	 * Not a child of session_context: resetting a context deletes its
	 * children, and the session's is reset after each session (a stream that
	 * ended, or a slot not there yet) — the next session would use a deleted
	 * context (a segmentation fault planning a storage statement in TAP 136,
	 * after the link between the regions was dropped and came back).
	 */
	message_context = AllocSetContextCreate(TopMemoryContext, "dynindex apply message", ALLOCSET_SMALL_SIZES);

	for (;;)
	{
		char	   *conninfo;
		PGconn	   *conn;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		conninfo = read_conninfo(region);
		if (conninfo == NULL)
		{
			/*
			 * The region was dropped, or its replicas removed: forget how far
			 * its stream was applied, so that a replica added again later —
			 * perhaps on a new server, whose WAL positions start again —
			 * streams its new slot from the start, not from a position of
			 * the old one (changes before it would be skipped).
			 */
			replorigin_session_reset();
			replorigin_session_origin = InvalidRepOriginId;
			StartTransactionCommand();
			replorigin_drop_by_name(origin_name, true, false);
			CommitTransactionCommand();
			proc_exit(0);
		}
		conn = connect_region(region, conninfo);
		pfree(conninfo);
		if (conn)
		{
			stream_session(region, conn);
			PQfinish(conn);
			MemoryContextReset(session_context);
		}
		backoff();
	}
}

/* Start an apply worker for region in this database. */
static void
start_apply(const char *region)
{
	char		name[BGW_MAXLEN];

	static TimestampTz last_logged = 0;

	snprintf(name, sizeof(name), "dynindex apply %s", region);
	if (!DynStartDatabaseWorker("dynindex_apply_main", "dynindex apply", name,
								ObjectIdGetDatum(MyDatabaseId), region, strlen(region) + 1, 0) &&
		TimestampDifferenceExceeds(last_logged, GetCurrentTimestamp(), 60000))
	{
		/* once a minute at most: the database's worker tries again every round */
		ereport(LOG, (errmsg("dynindex apply: no background worker slot to apply the changes of region \"%s\"", region),
					  errhint("Raise max_worker_processes.")));
		last_logged = GetCurrentTimestamp();
	}
}

/*
 * From the database's worker, each round: start the apply worker of every
 * region a table of this database is replicated with, unless it runs (it
 * holds its advisory lock).  Errors are reported, never raised.
 */
void
DynApplyLaunch(void)
{
	List	   *regions = NIL;
	MemoryContext outer = CurrentMemoryContext;
	ListCell   *lc;

	PG_TRY();
	{
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (DynRegionsCatalogPresent())
		{
			DynSecurityState sec;

			DynSecurityBeginInternal(&sec);
			if (SPI_execute("SELECT DISTINCT region_name FROM dynindex.replicas WHERE status <> 'CREATION_FAILED'", true, 0) != SPI_OK_SELECT)
				elog(ERROR, "could not read dynindex.replicas");
			for (uint64 i = 0; i < SPI_processed; i++)
			{
				MemoryContext spi = MemoryContextSwitchTo(outer);

				regions = lappend(regions, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
				MemoryContextSwitchTo(spi);
			}
			DynSecurityEndInternal(&sec);
		}
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		MemoryContextSwitchTo(outer);
		return;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(outer);
	/* PendingReplicationCount counts from now on (lag.c): soon after a start, before a new replica's slot */
	if (regions != NIL)
		DynReplicationCountStart();
	foreach(lc, regions)
	{
		LOCKTAG		tag;
		const char *region = lfirst(lc);

		apply_locktag(&tag, region);
		if (LockAcquire(&tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
			continue;			/* running */
		LockRelease(&tag, ExclusiveLock, true);
		start_apply(region);
	}
}

PG_FUNCTION_INFO_V1(dynindex_replica_apply);

/*
 * dynindex._replica_apply(table_name, source_region, batch): apply a batch
 * of the initial copy of a new replica (replication/replica.c), each element
 * {"p", "s": the encoded key in base64, "i": the stored item (absent: a
 * tombstone), "t": its stamp (null: never stamped, 0), "o": its region (null:
 * source_region)}, with the apply worker's rule: a copied state wins only if
 * its (stamp, region) is later than the stored one, so the copy and the
 * streams can arrive in any order.  Not captured for other regions (they
 * have it).  Returns the elements applied.
 */
Datum
dynindex_replica_apply(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Datum		source = PG_GETARG_DATUM(1);
	Datum		batch = PG_GETARG_DATUM(2);
	DynTable   *t;
	SPITupleTable *tt;
	uint64		n;
	DynSecurityState sec;

	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied to copy items to a dynindex replica"),
						errdetail("Only superusers may (UpdateTable ReplicaUpdates is the API).")));
	DynCatalogRevalidate();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	t = DynCatalogGetTableUnchecked(table);
	if (t == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("table \"%s\" does not exist", table)));
	if (SPI_execute_with_args("SELECT pg_catalog.decode(e->>'p', 'base64'), pg_catalog.decode(e->>'s', 'base64'), e->'i', "
							  "coalesce((e->>'t')::timestamptz, '2000-01-01 00:00:00+00'::timestamptz), coalesce(e->>'o', $2) "
							  "FROM pg_catalog.jsonb_array_elements($1) e",
							  2, (Oid[]) {JSONBOID, TEXTOID}, (Datum[]) {batch, source}, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the batch");
	tt = SPI_tuptable;
	n = SPI_processed;
	DynStorageWritesBegin();
	DynReplicationApplying.active = true;
	PG_TRY();
	{
		for (uint64 i = 0; i < n; i++)
		{
			bool		isnull;
			ApplyChange c;
			Datum		item;
			DynKey		raw;

			raw.hash = raw.range = NULL;
			raw.pk = DatumGetByteaP(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
			raw.sk = DatumGetByteaP(SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &isnull));
			item = SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull);
			if (!isnull && JB_ROOT_IS_SCALAR(DatumGetJsonbP(item)))
				isnull = true;	/* a JSON null: a tombstone */
			{
				bool		n2;

				c.stamp = DatumGetTimestampTz(SPI_getbinval(tt->vals[i], tt->tupdesc, 4, &n2));
				c.region = TextDatumGetCString(SPI_getbinval(tt->vals[i], tt->tupdesc, 5, &n2));
			}
			c.won = false;
			if (!isnull)
			{
				c.item = DynItemFromStored(DatumGetJsonbP(item));
				DynWriteKeyFromItem(t, c.item, &c.key);
			}
			else
			{
				DynStoredItem old;

				/*
				 * A tombstone: its key's values come from the item it
				 * deletes.  With no item, the tombstone is recorded if it
				 * wins; an item inserted meanwhile by a change applied at the
				 * same time (its stamp was waited for) is then deleted.
				 */
				c.item = NULL;
				if (!DynStorageGet(t, &raw, true, &old))
				{
					if (!DynReplicationStampIfNewer(t, &raw, true, c.stamp, c.region) ||
						!DynStorageGet(t, &raw, true, &old))
						continue;
					c.won = true;
				}
				DynWriteKeyFromItem(t, DynItemFromStored(old.item), &c.key);
			}
			apply_one(t, &c);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		DynReplicationApplying.active = false;
		DynStorageWritesEnd();
	}
	PG_END_TRY();
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_INT64((int64) n);
}

PG_FUNCTION_INFO_V1(dynindex_replica_local_api);

/*
 * dynindex._replica_local_api(op, request): run an operation on this
 * region's replica only, not sent to the other regions — the replica job's
 * way to apply a ReplicaUpdates Update's overrides (its read capacity, its
 * GSIs', its table class) to this region's table (replication/replica.c),
 * which an UpdateTable made here would otherwise send to every replica.
 */
Datum
dynindex_replica_local_api(PG_FUNCTION_ARGS)
{
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		args[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};
	Datum		out;
	bool		isnull;

	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied to change a dynindex replica"),
						errdetail("Only superusers may (UpdateTable ReplicaUpdates is the API).")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynReplicationApplying.active = true;
	PG_TRY();
	{
		if (SPI_execute_with_args("SELECT dynindex.api($1, $2)", 2, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not run the operation");
	}
	PG_FINALLY();
	{
		DynReplicationApplying.active = false;
	}
	PG_END_TRY();
	out = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
	{
		/* the answer outlives SPI: copied into the caller's memory */
		Jsonb	   *j = DatumGetJsonbP(out);
		Jsonb	   *copy = SPI_palloc(VARSIZE(j));

		memcpy(copy, j, VARSIZE(j));
		out = JsonbPGetDatum(copy);
	}
	SPI_finish();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(out);
}
