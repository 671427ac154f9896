/*
 * replication.h — global tables' regions: the dynindex servers of a
 * deployment, each named by its region (docs/global-tables.md).
 *
 * regions.c: the catalog dynindex.regions (region name -> libpq connection
 * string, readable by the extension's owner only) and the administrators'
 * SQL functions set_region, drop_region, list_regions, replication_status.
 * capture.c: what a write of a global table records for the other regions
 * (its replication stamp, a logical decoding message), last writer wins,
 * the replicas of a table (dynindex.replicas).
 * decode.c: the output plugin "dynindex" the other regions stream.
 * replica.c: adding and removing a replica (the job of ReplicaUpdates
 * Create and Delete, and the internal functions the other servers run).
 * lag.c: the replication latency per source region (shared memory).
 * The apply of their changes is a driver: worker/apply.c.
 */
#ifndef DYNINDEX_REPLICATION_H
#define DYNINDEX_REPLICATION_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"
#include "datatype/timestamp.h"
#include "utils/jsonb.h"

#include "catalog/dyn_catalog.h"
#include "storage/storage.h"

/* The prefix of the logical decoding messages of replicated changes. */
#define DYN_REPLICATION_PREFIX "dynindex"
/* The output plugin's name (a slot's plugin: dynindex.so). */
#define DYN_REPLICATION_PLUGIN "dynindex"

/*
 * The change the apply worker is applying (active: it came from another
 * region): its stamp and region, and whether it has won over the key's
 * tombstone already (recorded there: not judged again when the write starts over).
 */
typedef struct DynReplicationApply
{
	bool		active;
	TimestampTz stamp;
	const char *region;
	bool		won;
} DynReplicationApply;

/* The replication stamp a write gives the item it writes (see DynReplicationStampBefore). */
typedef struct DynWriteStamp
{
	TimestampTz stamp;
	const char *region;
	TimestampTz floor;			/* a local write: at least this (its attempts before: 0 at first) */
} DynWriteStamp;

/* regions.c */
/* This server's own region: dynindex.region as configured (not a session's SET). */
extern const char *DynRegionLocal(void);
/* The regions declared to this server, sorted by name (empty before version 0.3). */
extern List *DynRegionsDeclared(void);
/* Is region declared to this server? */
extern bool DynRegionIsDeclared(const char *region);
/* Is the catalog of regions there (version 0.3)? */
extern bool DynRegionsCatalogPresent(void);
/* A declared region's connection string (NULL: not declared).  Never log it. */
extern char *DynRegionConninfo(const char *region);

/* capture.c */
extern DynReplicationApply DynReplicationApplying;
/* Is table t replicated to another region? */
extern bool DynReplicationIsReplicated(DynTable *t);
/* Last writer wins, before a write of key (old: its row read under lock, NULL: none); false: an applied change lost. */
extern bool DynReplicationStampBefore(DynTable *t, const DynKey *key, const DynStoredItem *old, bool deleting,
									  DynWriteStamp *ws);
/* After a local insert (newjson, size) or delete (newjson NULL) of key: past the key's tombstone, which it moves. */
extern void DynReplicationStampAfter(DynTable *t, const DynKey *key, Jsonb *newjson, int32 size, DynWriteStamp *ws);
/* A write of replicated table t changed key to the item stored as newjson (NULL: deleted), stamped stamp: log it. */
extern void DynReplicationCapture(DynTable *t, const DynKey *key, Jsonb *newjson, TimestampTz stamp);
/*
 * A table-wide setting of replicated table t changed (DynamoDB applies these
 * to every replica: time to live, GSIs, billing and write capacity): log
 * operation op with request req (naming the table by name) for the other
 * regions, whose apply workers run it there.  Nothing for a change being
 * applied from another region.
 */
extern void DynReplicationCaptureOperation(DynTable *t, const char *op, Jsonb *req);
/* Record (stamp, region) as key's tombstone if later than the stored one; true if it was (last writer wins). */
extern bool DynReplicationStampIfNewer(DynTable *t, const DynKey *key, bool deleted, TimestampTz stamp,
									   const char *region);

/* The other regions of global table t: "region\tstatus" strings, sorted (NIL: none). */
extern List *DynReplicationReplicas(DynTable *t);
/* Table t is being deleted: forget its replicas and stamps. */
extern void DynReplicationForgetTable(DynTable *t);
/* Drop this server's slot for region if no replica needs it (its walsender ended first); in SPI. */
extern void DynReplicationDropUnneededSlot(const char *region);
/* The slot a region's apply worker streams from, on the sending server. */
extern char *DynReplicationSlotName(const char *region);

/* replica.c: ReplicaUpdates Create and Delete, a job of kind "replica" (worker/jobs.c runs it) */
extern void DynReplicaRun(int64 id);
extern void DynReplicaFail(int64 id, const char *message);
/* The settings overrides of table t's replica in region, as DescribeTable shows them (NULL: none). */
extern Jsonb *DynReplicationReplicaOverrides(DynTable *t, const char *region);

/* decode.c: the output plugin (_PG_output_plugin_init) */

/* lag.c: the changes of a region applied to this database, since the server started */
typedef struct DynReplicationLag
{
	int64		last_latency_us;	/* of the last applied transaction's changes */
	int64		sum_latency_us; /* over every applied change */
	int64		applied_changes;
	TimestampTz last_applied_at;
} DynReplicationLag;

/* Shared memory (from _PG_init). */
extern void DynReplicationLagInit(void);
/* The apply worker of region committed n changes committed there at commit_time. */
extern void DynReplicationLagRecord(const char *region, int64 n, TimestampTz commit_time, TimestampTz now);
/* The lag of region's changes applied to this database (false: none applied since the start). */
extern bool DynReplicationLagGet(const char *region, DynReplicationLag *out);
/* lag.c: PendingReplicationCount, the changes this database committed, by commit position */
/* Counting starts in this database (before its first change or slot). */
extern void DynReplicationCountStart(void);
/* A transaction of this database that logged n changes committed, ending at lsn. */
extern void DynReplicationCountCommit(uint64 n, XLogRecPtr lsn);
/* The changes not confirmed by a slot confirmed at confirmed (false: not counted; !*exact: at least). */
extern bool DynReplicationPendingCount(XLogRecPtr confirmed, int64 *count, bool *exact);

#endif
