/*
 * indexes.h — secondary index maintenance.
 *
 * Every write path calls DynIndexesCheckItem before writing a new item and
 * DynIndexesOnWrite after writing (old/new may be NULL).  LSIs are
 * maintained right there, in the writing transaction (lsi.c); GSIs get one
 * change record in the durable queue, applied after commit by a background
 * worker (gsi_capture.c, gsi_apply.c, src/worker/).
 *
 * Index storage relations hold (ipk, isk, pk, sk, size, item) with primary
 * key (ipk, isk, pk, sk): the encoded index key, then the base key so ties
 * are ordered by base key.  A single key attribute is encoded raw (like the
 * table's own keys); several attributes (multi-attribute GSI keys) are the
 * concatenation of their terminated encodings.  A hash-only GSI has isk = ''.
 * item is the projected entry: table keys, index keys and projected
 * attributes; size is its DynamoDB size.
 */
#ifndef DYNINDEX_INDEXES_H
#define DYNINDEX_INDEXES_H

#include "catalog/dyn_catalog.h"
#include "storage/storage.h"

/* ---- indexes.c ---- */

/*
 * Check an item about to be written against every index's key attributes:
 * a present key attribute of the wrong type or an empty S/B value is a
 * ValidationException with DynamoDB's message, and nothing is written.
 */
extern void DynIndexesCheckItem(DynTable *t, const DynValue *item);

/*
 * Compute the encoded index key of an item; false when the item is not in
 * the index (it lacks a key attribute: sparse).
 */
extern bool DynIndexEntryKey(DynTable *t, DynIndex *idx, const DynValue *item,
							 bytea **ipk, bytea **isk);

/* The projected index entry of an item (table keys, index keys, projection). */
extern DynValue *DynIndexProject(DynTable *t, DynIndex *idx, const DynValue *item);

/* Is attribute name projected into the index (keys always are)? */
extern bool DynIndexProjects(DynTable *t, DynIndex *idx, const char *name, int namelen);

/* Maintain every index after a write of one item (old/new: NULL if absent). */
extern void DynIndexesOnWrite(DynTable *t, const DynKey *key, const DynValue *old, const DynValue *new);

/* ---- lsi.c ---- */
extern void DynLsiOnWrite(DynTable *t, DynIndex *idx, const DynKey *key,
						  const DynValue *old, const DynValue *new);

/* ---- collection.c (item collections of tables with LSIs) ---- */
extern double dynindex_item_collection_size_limit;	/* GUC, bytes */
/* Register dynindex.item_collection_size_limit (from _PG_init). */
extern void DynCollectionInit(void);
/* Does the table have a local secondary index? */
extern bool DynTableHasLsi(DynTable *t);
/* Size in bytes of the item collection of an encoded partition key. */
extern int64 DynCollectionSize(DynTable *t, bytea *pk);
/* DynamoDB's message of ItemCollectionSizeLimitExceededException and of the transaction reason. */
#define DYN_COLLECTION_EXCEEDED_MESSAGE "Collection size exceeded."
/* After a write: did it grow its item collection past the limit? */
extern bool DynCollectionExceeded(DynTable *t, const DynKey *key, const DynValue *old, int32 oldsize,
								  const DynValue *new, int32 newsize);
/* After a write: ItemCollectionSizeLimitExceededException if it grew a collection over the limit. */
extern void DynCollectionCheckWrite(DynTable *t, const DynKey *key, const DynValue *old, int32 oldsize,
									const DynValue *new, int32 newsize);
/* Push one ItemCollectionMetrics object for the collection of key. */
extern void DynCollectionPushMetrics(JsonbParseState **st, DynTable *t, const DynKey *key);

/* ---- gsi_capture.c ---- */
/* Record that the item with this key changed (applied to GSIs after commit). */
extern void DynGsiCapture(DynTable *t, const DynKey *key);
/* Wake the database's GSI worker when the current transaction commits. */
extern void DynGsiWakeAtCommit(void);
/* gsi_apply.c: does dynindex.gsi_changes have this (0.2) column? */
extern bool DynGsiQueueHasColumn(const char *column);
/* gsi_apply.c: a statement prepared once and kept in *plan */
extern SPIPlanPtr DynGsiKeptPlan(SPIPlanPtr *plan, const char *sql, int nargs, Oid *types);
/* gsi_apply.c: wait until no apply or backfill transaction is committing */
extern void DynGsiWaitApplied(void);
/*
 * After a write to a table that had no GSI when the request began: capture
 * the change anyway if a GSI was created meanwhile (UpdateTable committed
 * while this request ran with the old catalog).
 */
extern void DynGsiCaptureIfCreated(DynTable *t, const DynKey *key);

/* ---- gsi_wait.c (read-your-writes reads of GSIs) ---- */
extern bool dynindex_gsi_read_your_writes;	/* GUC dynindex.gsi_read_your_writes */
extern int	dynindex_gsi_read_your_writes_timeout_ms;	/* GUC, ms */
/* Register the settings (from _PG_init). */
extern void DynGsiWaitInit(void);
/* Before reading a GSI: wait for the changes committed so far (if asked); true: take a new snapshot. */
extern bool DynGsiReadYourWrites(DynTable *t, DynIndex *idx);

/* ---- gsi_apply.c (run by the worker, src/worker/) ---- */
/* dynindex.backfill_chunk_size (defined with the worker's settings) */
extern int	dynindex_backfill_chunk_size;
/* Apply one batch of queued changes; returns how many were applied, -1 if their writers
 * have not finished committing on every Citus worker (retry later). */
extern int	DynGsiApplyBatch(int limit);
/* Move the oldest queued change to the end of the queue (after it failed alone). */
extern int64 DynGsiRequeueOldest(int64 *old_id);
/* Do one step of any pending GSI backfill; returns true if work remains. */
extern bool DynGsiBackfillStep(void);

/* ---- build.c ---- */

/*
 * Build every secondary index (LSIs and GSIs) of a table nobody else can
 * see yet from the items of relation (pk, sk, item columns): one pass in key
 * order, in the current transaction.  GSI entries whose keys are too large
 * for a btree entry are left out with a WARNING, as the worker does.
 */
extern void DynIndexesBuildFrom(DynTable *t, const char *relation);

#endif
