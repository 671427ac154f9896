/*
 * history.h — item history for point-in-time recovery (PITR) and
 * incremental export: a consumer of the write path's capture, beside
 * indexes/ and streams/.
 *
 * When PITR is on for a table (dynindex.pitr), every write that replaces or
 * removes an item, or inserts a new key, keeps the state it supersedes —
 * the old item, or its absence — in dynindex_history.h<num>
 * (pk, sk, valid_to, size, item), PRIMARY KEY (pk, sk, valid_to).  valid_to
 * is the writing transaction's commit stamp: the rows are buffered in the
 * transaction and inserted at pre-commit with one stamp taken then, strictly
 * increasing across the server (capture.c).  So the state of key k at time T
 * is its row with the smallest valid_to > T (one index probe), or, without
 * one, the current item in storage; and restoring to T gives exactly the
 * transactions whose commit began at or before T (docs/backups.md has the
 * argument).
 */
#ifndef DYNINDEX_HISTORY_H
#define DYNINDEX_HISTORY_H

#include "datatype/timestamp.h"
#include "utils/jsonb.h"

#include "catalog/dyn_catalog.h"
#include "storage/storage.h"

/* Schema of the history relations (and of nothing else). */
#define DYN_HISTORY_SCHEMA "dynindex_history"

/* ---- capture.c: history rows of the writing transaction, commit stamps ---- */

/* Shared memory and callbacks (from _PG_init). */
extern void DynHistoryInit(void);
/* Is the history machinery available (dynindex in shared_preload_libraries)? */
extern bool DynHistoryAvailable(void);
/*
 * Record the state a write of table t supersedes: its old item as stored
 * (NULL: the key was absent).  The caller holds the item's row lock (or the
 * conflicting insert's), in the writing transaction; the row is written at
 * its commit with the commit stamp as valid_to.
 */
extern void DynHistoryCapture(DynTable *t, const DynKey *key, Jsonb *old_item, int32 old_size);
/*
 * The restorable horizon: every transaction whose stamp is <= the result
 * has committed (and is visible to snapshots taken after the call) or
 * aborted; later ones get larger stamps.
 */
extern TimestampTz DynHistoryHorizon(void);
/* Has the current transaction written items of a PITR table (history not yet recorded)? */
extern bool DynHistoryPending(void);
/* A new stamp (strictly after every stamp given so far): enabling, deleting. */
extern TimestampTz DynHistoryNextStamp(void);

/* ---- lifecycle.c: enabling, disabling, deleted tables, the window ---- */

/* The history relation of table number num: dynindex_history.h<num>. */
extern char *DynHistoryRelation(int64 table_num);
/*
 * Enable PITR for a table (days 1..35) or change its period; waits for the
 * table's running writers, later writers capture.  Raises for Citus tables.
 */
extern void DynHistoryEnable(DynTable *t, int days);
/* Disable PITR: the history is dropped (waits for running writers); false if it was off. */
extern bool DynHistoryDisable(DynTable *t);
/*
 * DeleteTable of a table with PITR: keep its storage relation, history and
 * definition until the window closes; true if kept (the caller must not
 * drop the storage).
 */
extern bool DynHistoryKeepDeleted(DynTable *t, Jsonb *definition);
/*
 * The restorable window of a table: false when PITR is off.  earliest =
 * max(enabled, now - period); latest = the horizon (DynHistoryHorizon).
 */
extern bool DynHistoryWindow(DynTable *t, TimestampTz *earliest, TimestampTz *latest);

/* ---- scan.c: reading the history ---- */

/* One item of a table as of a time. */
typedef void (*DynHistoryItemFn) (const bytea *pk, const bytea *sk, Jsonb *item, int32 size, void *arg);
/* One key changed in a time range: its state at both ends (NULL: absent), its last write. */
typedef void (*DynHistoryChangeFn) (const bytea *pk, const bytea *sk, Jsonb *old_item, Jsonb *new_item,
									TimestampTz last_write_time, void *arg);

/*
 * Every item of the table as of `at` (within DynHistoryWindow), streamed in
 * bounded memory, in no particular order, from one snapshot.  Run it in
 * READ COMMITTED (a snapshot-isolation transaction's snapshot may predate
 * commits before `at`: refused).
 */
extern void DynHistoryScanAt(DynTable *t, TimestampTz at, DynHistoryItemFn fn, void *arg);
/*
 * Each key changed in (from, to]: its state at from and at to (either
 * absent: NULL) and the stamp of its last write <= to.  Keys whose state
 * is the same at both ends are reported too (changed and changed back).
 * from and to within DynHistoryWindow; one snapshot; READ COMMITTED.
 */
extern void DynHistoryChanges(DynTable *t, TimestampTz from, TimestampTz to, DynHistoryChangeFn fn, void *arg);
/*
 * Fill the (new, empty) storage relation target with the items of a table
 * (storage relation and history relation given: the table may be deleted)
 * as of `at`, in one statement; returns the item count.
 */
extern int64 DynHistoryRestoreInto(const char *storage, const char *history, TimestampTz at, const char *target);

/* ---- trim.c: the worker's round ---- */

/* Rows deleted per transaction by the worker's trim. */
#define DYN_HISTORY_TRIM_BATCH 1000
/*
 * Delete up to max_rows history rows older than their table's recovery
 * period, and drop deleted tables whose window closed, in the current
 * transaction; *more: rows may be left.  Returns the rows deleted.
 */
extern int64 DynHistoryTrim(int max_rows, bool *more);
/* The worker's round: DynHistoryTrim in transactions of its own until done; never raises. */
extern void DynHistoryTrimDatabase(void);

#endif
