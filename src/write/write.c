/*
 * write.c — the item write path: key validation, the locked
 * read-modify-write of one item, and the unconditional put and delete that
 * skip the read when nothing needs the old item.  Every writer calls these;
 * index and stream capture happen here and nowhere else.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"

#include "common/errors.h"
#include "history/history.h"
#include "indexes/indexes.h"
#include "replication/replication.h"
#include "streams/streams.h"
#include "write/write.h"

DynValue	DynWriteKeepItem;

/* ---------------------------------------------------------------- keys */

/* Check a key value's size. */
static void
check_key_size(const DynValue *v, bool is_hash)
{
	if (v->type == DYN_N)
		return;
	if (is_hash && v->u.str.len > DYN_MAX_HASH_KEY_SIZE)
		DynValidationError("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes");
	if (!is_hash && v->u.str.len > DYN_MAX_RANGE_KEY_SIZE)
		DynValidationError("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes");
}

/* Check one key attribute of a Key parameter. */
static DynValue *
key_piece(DynValue *keymap, const DynKeyAttr *ka, bool is_hash)
{
	DynValue   *v = DynMapGetStr(keymap, ka->name);

	if (v == NULL || v->type != ka->type)
		DynValidationError("The provided key element does not match the schema");
	if (v->type != DYN_N && v->u.str.len == 0)
		DynValidationError("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						   v->type == DYN_S ? "string" : "binary", ka->name);
	check_key_size(v, is_hash);
	return v;
}

/* The key of a Key parameter, checked against the schema. */
void
DynWriteKeyFromMap(DynTable *t, DynValue *keymap, DynKey *key)
{
	DynValue   *hash;
	DynValue   *range = NULL;

	if (keymap->n != (t->has_range ? 2 : 1))
		DynValidationError("The provided key element does not match the schema");
	hash = key_piece(keymap, &t->hash, true);
	if (t->has_range)
		range = key_piece(keymap, &t->range, false);
	DynKeyMake(t, hash, range, key);
}

/* Check one key attribute of a whole item. */
static DynValue *
item_key_piece(DynValue *item, const DynKeyAttr *ka, bool is_hash)
{
	DynValue   *v = DynMapGetStr(item, ka->name);

	if (v == NULL)
		DynValidationError("One or more parameter values were invalid: Missing the key %s in the item", ka->name);
	if (v->type != ka->type)
		DynValidationError("One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s",
						   ka->name, DynTypeName(ka->type), DynTypeName(v->type));
	if (v->type != DYN_N && v->u.str.len == 0)
		DynValidationError("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						   v->type == DYN_S ? "string" : "binary", ka->name);
	check_key_size(v, is_hash);
	return v;
}

/* The key of a whole item. */
void
DynWriteKeyFromItem(DynTable *t, DynValue *item, DynKey *key)
{
	DynValue   *hash = item_key_piece(item, &t->hash, true);
	DynValue   *range = t->has_range ? item_key_piece(item, &t->range, false) : NULL;

	DynKeyMake(t, hash, range, key);
}

/* ---------------------------------------------------------------- item locks */

/*
 * field4 of the advisory lock tag of an item lock (pg_locks.objsubid): the
 * SQL advisory functions use 1 and 2, the GSI apply lock 3 (gsi_apply.c).
 */
#define ITEM_LOCK_CLASS 4

/* Total order of two encoded key parts: bytes, then length. */
static int
bytea_cmp(const bytea *x, const bytea *y)
{
	int			lx = VARSIZE_ANY_EXHDR(x);
	int			ly = VARSIZE_ANY_EXHDR(y);
	int			c = memcmp(VARDATA_ANY(x), VARDATA_ANY(y), Min(lx, ly));

	return c != 0 ? c : (lx > ly) - (lx < ly);
}

/* qsort order of items: table number, partition key, sort key. */
static int
lock_order_cmp(const void *x, const void *y)
{
	const DynWriteLockItem *a = x;
	const DynWriteLockItem *b = y;
	int			c;

	if (a->t->num != b->t->num)
		return a->t->num < b->t->num ? -1 : 1;
	c = bytea_cmp(a->key->pk, b->key->pk);
	return c != 0 ? c : bytea_cmp(a->key->sk, b->key->sk);
}

/* The lock tag of an item: a 64-bit hash of its table number and encoded key. */
static void
item_lock_tag(const DynWriteLockItem *a, LOCKTAG *tag)
{
	uint64		h = hash_bytes_extended((const unsigned char *) VARDATA_ANY(a->key->pk),
										VARSIZE_ANY_EXHDR(a->key->pk), (uint64) a->t->num);

	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) VARDATA_ANY(a->key->sk),
											  VARSIZE_ANY_EXHDR(a->key->sk), 0));
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h, ITEM_LOCK_CLASS);
}

/*
 * Lock the items of a multi-item write, in the global order of
 * lock_order_cmp, until the PostgreSQL transaction ends.  Row locks alone
 * cannot give one order: a transaction's step 3 can lock only the items that
 * exist (SELECT ... FOR UPDATE of an absent key locks nothing), and an absent
 * item is locked later by its INSERT (the unique index makes a concurrent
 * inserter of the key wait), so the effective order was "existing items in
 * request order, then new ones", different between two writers of the same
 * keys.  A heavyweight lock on a hash of the key exists whether or not the
 * row does; taken before any row lock, in sorted order, it makes every
 * TransactWriteItems and BatchWriteItem wait for a conflicting one before
 * touching a row: they never deadlock among themselves.  Single-item writers
 * (PutItem, ...) do not take it: they hold one row lock at a time and so
 * cannot close a circle alone.  Costs: one entry of the shared lock table per
 * item (max_locks_per_transaction), no I/O.  Two keys with one hash (2^-64)
 * share a lock: more waiting, never less exclusion.
 */
void
DynWriteLockItems(DynWriteLockItem *items, int n, volatile int *at)
{
	int			i;

	qsort(items, n, sizeof(DynWriteLockItem), lock_order_cmp);
	for (i = 0; i < n; i++)
	{
		LOCKTAG		tag;

		*at = items[i].pos;
		item_lock_tag(&items[i], &tag);
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
	}
}

/* ---------------------------------------------------------------- capture */

/*
 * After a write that skipped the locked read (a table without LSIs, nothing
 * needing the old item): queue the change for the table's GSIs, which
 * re-read the committed item after commit.
 */
static void
fast_write_done(DynTable *t, const DynKey *key)
{
	if (t->nindexes > 0)
		DynGsiCapture(t, key);
	else
		DynGsiCaptureIfCreated(t, key);
}

/* What a write of a table captures besides its indexes: the table's stream, its item history. */
typedef struct WriteCapture
{
	DynStreamInfo stream;		/* id 0: no stream */
	bool		history;		/* point-in-time recovery is on */
	bool		replicated;		/* a global table: other regions get the change */
	bool		stamping;		/* its rows carry replication stamps: replicated, or a change applied to it */
} WriteCapture;

/*
 * The stream and history state a write of table t captures for.  The
 * storage relation is locked for writing first: enabling or disabling a
 * stream or point-in-time recovery locks it in SHARE mode
 * (streams/lifecycle.c, history/lifecycle.c), so a writer that waited here
 * receives the catalog invalidation and reads the committed state instead
 * of the one cached when the request began.
 */
static void
write_capture(DynTable *t, WriteCapture *wc)
{
	DynPitrInfo pitr;

	if (OidIsValid(t->storage_relid))
		LockRelationOid(t->storage_relid, RowExclusiveLock);
	wc->replicated = DynReplicationIsReplicated(t);
	wc->stamping = wc->replicated || DynReplicationApplying.active;
	if (!DynCatalogIsStale())
	{
		wc->stream = t->stream;
		wc->history = t->pitr.days > 0;
		return;
	}
	DynCatalogReadStream(t->num, true, &wc->stream);
	DynCatalogReadPitr(t->num, true, &pitr);
	wc->history = pitr.days > 0;
}

/* ---------------------------------------------------------------- writes */

/* Read, compute and write one item under a row lock (what to capture is known). */
static void
modify(DynTable *t, const DynKey *key, DynWriteMutator fn, void *arg,
	   const char *size_msg, int flags, const WriteCapture *wc, DynWriteResult *res)
{
	DynWriteStamp ws = {0};

	res->collection_exceeded = false;
	for (;;)
	{
		DynStoredItem stored;
		bool		exists = wc->stamping ? DynStorageGetStamped(t, key, &stored) :
			DynStorageGet(t, key, true, &stored);
		DynValue   *newitem;
		Jsonb	   *newjson = NULL;
		int64		newsize = 0;

		res->old = exists ? DynItemFromStored(stored.item) : NULL;
		res->oldsize = exists ? stored.size : 0;
		newitem = fn(t, res->old, arg);
		/* last writer wins (an applied delete of no item records its tombstone) */
		if (newitem != DYN_WRITE_KEEP && wc->stamping && (exists || newitem || DynReplicationApplying.active) &&
			!DynReplicationStampBefore(t, key, exists ? &stored : NULL, newitem == NULL, &ws))
			newitem = DYN_WRITE_KEEP;
		if (newitem == DYN_WRITE_KEEP)
		{
			/* unchanged: nothing to write (TTL expiry of an item updated meanwhile) */
			res->new = res->old;
			res->newsize = res->oldsize;
			return;
		}
		if (newitem)
		{
			newsize = DynItemSize(newitem);
			if (newsize > DYN_MAX_ITEM_SIZE)
				DynValidationError("%s", size_msg);
			if (t->nindexes > 0)
				DynIndexesCheckItem(t, newitem);
		}
		res->new = newitem;
		res->newsize = (int32) newsize;

		if (newitem == NULL)
		{
			if (!exists)
				return;
			DynStorageDelete(t, key, NULL);
		}
		else
		{
			newjson = DynItemToJsonb(newitem);
			/* ws.region: set by the stamp of a table that stamps its rows, NULL otherwise */
			if (exists)
				DynStorageUpdate(t, key, newjson, res->newsize, ws.stamp, ws.region);
			else if (!DynStorageInsert(t, key, newjson, res->newsize, ws.stamp, ws.region))
			{
				/* a concurrent writer inserted the item meanwhile: start over */
				CHECK_FOR_INTERRUPTS();
				continue;
			}
		}
		if (wc->stamping && !(exists && newitem))
			DynReplicationStampAfter(t, key, newjson, res->newsize, &ws);
		if (t->nindexes > 0)
		{
			DynIndexesOnWrite(t, key, res->old, res->new);
			if (flags & DYN_WRITE_COLLECTION_REASON)
				res->collection_exceeded = DynCollectionExceeded(t, key, res->old, res->oldsize,
																 res->new, res->newsize);
			else
				DynCollectionCheckWrite(t, key, res->old, res->oldsize, res->new, res->newsize);
		}
		if (wc->stream.id != 0)
		{
			DynStreamChange c = {key, res->old, exists ? stored.item : NULL, res->oldsize,
			res->new, newjson, res->newsize, (flags & DYN_WRITE_BY_TTL) != 0};

			DynStreamCapture(t, &wc->stream, &c);
		}
		/* the state this write supersedes: the old item, or the key's absence */
		if (wc->history)
			DynHistoryCapture(t, key, exists ? stored.item : NULL, res->oldsize);
		if (wc->replicated)
			DynReplicationCapture(t, key, newjson, ws.stamp);
		return;
	}
}

/* Read, compute and write one item under a row lock. */
void
DynWriteModify(DynTable *t, const DynKey *key, DynWriteMutator fn, void *arg,
			   const char *size_msg, int flags, DynWriteResult *res)
{
	WriteCapture wc;

	write_capture(t, &wc);
	modify(t, key, fn, arg, size_msg, flags, &wc, res);
}

/* The mutation of an unconditional put: the new item. */
static DynValue *
put_mutator(DynTable *t, const DynValue *old, void *arg)
{
	return (DynValue *) arg;
}

/*
 * The result of a put that does not read the old item (no LSI: no item
 * collection), its item checked against the table's indexes; the old size
 * only when asked (the row locked to read it).
 */
static void
put_result(DynTable *t, const DynKey *key, DynValue *item, int flags, DynWriteResult *res)
{
	if (t->nindexes > 0)
		DynIndexesCheckItem(t, item);
	res->collection_exceeded = false;
	res->old = NULL;
	res->oldsize = (flags & DYN_WRITE_NEED_OLDSIZE) ? DynStorageLockSize(t, key) : 0;
	res->new = item;
	res->newsize = (int32) DynItemSize(item);
}

/*
 * Put an item whatever the old one, on a table whose item history needs the
 * replaced item (nothing else does): the replace returns it in one
 * statement, under the row lock it takes; a new key is inserted.  Either
 * fails when a concurrent writer got there first, and the put starts over.
 */
static void
put_with_history(DynTable *t, const DynKey *key, DynValue *item, Jsonb *json, DynWriteResult *res)
{
	put_result(t, key, item, 0, res);
	for (;;)
	{
		DynStoredItem old;

		if (DynStorageReplace(t, key, json, res->newsize, &old))
		{
			res->oldsize = old.size;
			DynHistoryCapture(t, key, old.item, old.size);
			break;
		}
		if (DynStorageInsert(t, key, json, res->newsize, 0, NULL))
		{
			res->oldsize = 0;
			DynHistoryCapture(t, key, NULL, 0);
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	fast_write_done(t, key);
}

/*
 * Put an item whatever the old one, on a global table with nothing needing
 * the old item: the replace stamps the row just after its stamp (in the same
 * statement), or a new key is inserted, past the key's tombstone; either
 * fails when a concurrent writer got there first, and the put starts over.
 * Then the change is captured for the other regions.
 */
static void
put_stamped(DynTable *t, const DynKey *key, DynValue *item, Jsonb *json, int flags, DynWriteResult *res)
{
	DynWriteStamp ws = {0};

	put_result(t, key, item, flags, res);
	for (;;)
	{
		(void) DynReplicationStampBefore(t, key, NULL, false, &ws);
		if (DynStoragePutStamped(t, key, json, res->newsize, &ws.stamp, ws.region))
			break;
		if (DynStorageInsert(t, key, json, res->newsize, ws.stamp, ws.region))
		{
			DynReplicationStampAfter(t, key, json, res->newsize, &ws);
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	fast_write_done(t, key);
	DynReplicationCapture(t, key, json, ws.stamp);
}

/* Put an item whatever the old one. */
void
DynWritePut(DynTable *t, const DynKey *key, DynValue *item, int flags, DynWriteResult *res)
{
	WriteCapture wc;
	Jsonb	   *json;

	write_capture(t, &wc);

	/*
	 * A stream needs the old item: INSERT or MODIFY, an unchanged item,
	 * OldImage.  A global table's write needs only its stamp (put_stamped),
	 * except with item history, which the locked read serves both.
	 */
	if ((flags & DYN_WRITE_NEED_OLD) || DynTableHasLsi(t) || wc.stream.id != 0 ||
		(wc.stamping && (wc.history || !wc.replicated)))
	{
		modify(t, key, put_mutator, item,
			   "Item size has exceeded the maximum allowed size", flags, &wc, res);
		return;
	}
	json = DynItemToJsonb(item);
	if (wc.history)
		put_with_history(t, key, item, json, res);
	else if (wc.replicated)
		put_stamped(t, key, item, json, flags, res);
	else
	{
		/*
		 * Nothing needs the old item (GSIs don't: their worker re-reads the
		 * committed item): one upsert, and the change record if there are
		 * GSIs.
		 */
		put_result(t, key, item, flags, res);
		DynStorageUpsert(t, key, json, res->newsize);
		fast_write_done(t, key);
	}
}

/* The mutation of an unconditional delete. */
static DynValue *
delete_mutator(DynTable *t, const DynValue *old, void *arg)
{
	return NULL;
}

/* Delete an item whatever it holds; true if there was one. */
bool
DynWriteDelete(DynTable *t, const DynKey *key, int flags, DynWriteResult *res)
{
	DynStoredItem old;
	bool		existed;
	WriteCapture wc;

	write_capture(t, &wc);
	if (DynTableHasLsi(t) || wc.stamping)
	{
		/* an LSI needs the old item; a global table its stamp */
		modify(t, key, delete_mutator, NULL, "", flags, &wc, res);
		existed = res->old != NULL;
		if (!(flags & DYN_WRITE_NEED_OLD))
			res->old = NULL;	/* as below: the old item only when asked */
		return existed;
	}
	/* DELETE ... RETURNING gives the old item: no read needed, even for a stream or the history */
	res->collection_exceeded = false;	/* a delete never grows a collection */
	existed = DynStorageDelete(t, key, &old);
	res->old = existed && (flags & DYN_WRITE_NEED_OLD) ? DynItemFromStored(old.item) : NULL;
	res->oldsize = existed ? old.size : 0;
	res->new = NULL;
	res->newsize = 0;
	if (existed)
	{
		fast_write_done(t, key);
		if (wc.stream.id != 0)
		{
			DynStreamChange c = {key, res->old, old.item, old.size, NULL, NULL, 0,
			(flags & DYN_WRITE_BY_TTL) != 0};

			DynStreamCapture(t, &wc.stream, &c);
		}
		if (wc.history)
			DynHistoryCapture(t, key, old.item, old.size);
	}
	return existed;
}
