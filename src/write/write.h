/*
 * write.h — the one item write path, below api/.
 *
 * Every change of an item (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
 * TransactWriteItems, TTL expiry, and any writer added later) goes through
 * this layer: it validates keys against the table's schema, reads the old
 * item under a row lock when someone needs it, runs the caller's mutator
 * (condition and new item), checks the item size, writes the storage row,
 * maintains LSIs and the item-collection size limit, and captures the change
 * for GSIs and for the table's stream.  docs/write-path.md describes it.
 */
#ifndef DYNINDEX_WRITE_H
#define DYNINDEX_WRITE_H

#include "catalog/dyn_catalog.h"
#include "storage/storage.h"

/* ---- write.c: keys ---- */

/* The key of a Key parameter (a parsed map): exactly the table's key attributes. */
extern void DynWriteKeyFromMap(DynTable *t, DynValue *keymap, DynKey *key);
/* The key of a whole item (PutItem): missing/type/empty/size checks. */
extern void DynWriteKeyFromItem(DynTable *t, DynValue *item, DynKey *key);

/* ---- write.c: item locks (multi-item writers) ---- */

/* One item of a multi-item write, for DynWriteLockItems. */
typedef struct DynWriteLockItem
{
	DynTable   *t;
	const DynKey *key;
	int			pos;			/* the caller's index of the item */
} DynWriteLockItem;

/*
 * Lock the n items of a multi-item write (TransactWriteItems, BatchWriteItem)
 * until the transaction ends, in one global order (table number, partition
 * key, sort key), whether they exist or not, before any of their rows is
 * touched: two such writers never deadlock on each other.  Sorts items;
 * *at is the pos of the item being locked (a conflict names it).
 */
extern void DynWriteLockItems(DynWriteLockItem *items, int n, volatile int *at);

/* ---- write.c: writes ---- */

/*
 * Compute the new item from the current one (NULL: absent).  Return NULL to
 * delete (or leave absent), DYN_WRITE_KEEP to leave the item as it is;
 * raise to fail (e.g. ConditionalCheckFailedException).
 */
typedef DynValue *(*DynWriteMutator) (DynTable *t, const DynValue *old, void *arg);

/* A mutator's answer for "leave the item as it is" (nothing is written). */
extern DynValue DynWriteKeepItem;
#define DYN_WRITE_KEEP (&DynWriteKeepItem)

/* Flags of a write. */
#define DYN_WRITE_NEED_OLD	0x01	/* the caller needs res->old (ReturnValues, capacity) */
#define DYN_WRITE_BY_TTL	0x02	/* a Time to Live deletion (its stream record says so) */
#define DYN_WRITE_NEED_OLDSIZE	0x04	/* DynWritePut: the caller needs res->oldsize only (capacity) */
#define DYN_WRITE_COLLECTION_REASON 0x08	/* DynWriteModify: an item collection grown past the
											 * limit sets res->collection_exceeded instead of
											 * raising (a transaction's cancellation reason) */

/* What a write did. */
typedef struct DynWriteResult
{
	DynValue   *old;			/* item before, NULL if absent (or not read) */
	int32		oldsize;
	DynValue   *new;			/* item after, NULL if absent */
	int32		newsize;
	bool		collection_exceeded;	/* with DYN_WRITE_COLLECTION_REASON: the write
										 * (made) grew its item collection past the limit */
} DynWriteResult;

/*
 * Read the item with a row lock, compute its new state with fn and write it,
 * in the current transaction.  size_msg is the message for an item over
 * 400 KB.
 */
extern void DynWriteModify(DynTable *t, const DynKey *key, DynWriteMutator fn, void *arg,
						   const char *size_msg, int flags, DynWriteResult *res);

/*
 * Put an item whatever the old one (no condition).  Without
 * DYN_WRITE_NEED_OLD, and when no LSI or stream needs the old item, this is
 * one upsert (res->old is then not known: NULL), preceded with
 * DYN_WRITE_NEED_OLDSIZE by a locked read of the old item's size only
 * (res->oldsize).  The item's size is checked by the caller.
 */
extern void DynWritePut(DynTable *t, const DynKey *key, DynValue *item, int flags,
						DynWriteResult *res);

/*
 * Delete an item whatever it holds (no condition); res->old is the deleted
 * item.  Returns true when there was one.
 */
extern bool DynWriteDelete(DynTable *t, const DynKey *key, int flags, DynWriteResult *res);

/* ---- expire.c: Time to Live ---- */

/* The table's TTL attribute, or NULL when TTL is disabled (lock: serialize changes). */
extern char *DynTtlAttribute(const char *table, bool lock);
/* One Time to Live round over the database's tables (the worker's; never raises). */
extern bool DynTtlSweepDatabase(int max_items);
#define DYN_TTL_BATCH 1000

#endif
