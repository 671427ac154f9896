/*
 * streams.h — DynamoDB Streams: the stream of a table (dynindex.streams),
 * its shards (dynindex.stream_shards) and its records
 * (dynindex.stream_records), written by the writing transaction.
 *
 * Writers (src/write/) call DynStreamCapture for every item-level change.
 * A record's seq comes from one source per database (dynindex.stream_seq)
 * and is taken under the item's row lock, so the records of one item are
 * ordered by commit.  Records with seq < DynStreamReadHorizon() are settled:
 * committed and visible to any snapshot taken after the call, or gone.
 * docs/streams.md ("Guarantees") has the argument.
 */
#ifndef DYNINDEX_STREAMS_H
#define DYNINDEX_STREAMS_H

#include "datatype/timestamp.h"

#include "catalog/dyn_catalog.h"
#include "storage/storage.h"

/* ---- streams.c: sequence numbers, the read horizon, buckets ---- */

extern int	dynindex_stream_shard_count;	/* GUC: shards (buckets) of a new stream */

/* GUCs, shared memory and callbacks (from _PG_init). */
extern void DynStreamsInit(void);
/* Is the stream machinery available (dynindex in shared_preload_libraries)? */
extern bool DynStreamsAvailable(void);
/* Take the next sequence number for a record of the current transaction. */
extern int64 DynStreamNextSeq(void);
/*
 * Every record with seq < the result is settled: committed and visible to a
 * snapshot taken after this call, or rolled back.  (Records with a larger
 * seq may still appear.)
 */
extern int64 DynStreamReadHorizon(void);
/* The bucket (0 .. shard_count-1) of an encoded partition key: a stable hash. */
extern int	DynStreamBucket(const bytea *pk, int shard_count);
/* A sequence number as DynamoDB shows it: a decimal string of 21 digits. */
extern char *DynStreamFormatSeq(int64 seq);
/* A shard id "shardId-<20 digits>-<8 hex>" for a new shard of a stream. */
extern char *DynStreamShardId(int64 stream_id, int bucket, int64 start_seq);

/* ---- capture.c: records ---- */

/* One item-level change, as the write path saw it. */
typedef struct DynStreamChange
{
	const DynKey *key;
	const DynValue *old;		/* NULL: absent before */
	Jsonb	   *old_json;		/* old as stored (NULL: absent) */
	int32		old_size;
	const DynValue *new;		/* NULL: absent after */
	Jsonb	   *new_json;		/* new as stored (NULL: absent) */
	int32		new_size;
	bool		by_ttl;			/* a Time to Live deletion */
} DynStreamChange;

/*
 * Write the stream record of a change (INSERT, MODIFY or REMOVE; nothing if
 * the item did not change) to the stream s, in the current transaction.  The
 * caller holds the item's row lock.
 */
extern void DynStreamCapture(DynTable *t, const DynStreamInfo *s, const DynStreamChange *c);

/* ---- lifecycle.c: enabling and disabling ---- */

/*
 * Enable a new stream for a table (waits for the table's running writers;
 * later writers see it).  Its label is its creation time.
 */
extern void DynStreamEnable(DynTable *t, DynStreamView view);
/*
 * Disable the table's enabled stream and close its open shards (after the
 * table's running writers); false if it has none.  Also for DeleteTable,
 * after the storage is dropped.
 */
extern bool DynStreamDisable(DynTable *t);
/* The latest stream of a table (enabled or not): label; NULL if it never had one. */
extern char *DynStreamLatestLabel(int64 table_num);
/* The ARN of a stream: <table ARN>/stream/<label>. */
extern char *DynStreamArn(const char *table_name, const char *label);

/* ---- read.c: the read side (Streams API helpers, the SQL consumer) ---- */
#define DYN_STREAM_SEQ_DIGITS 21	/* fixed width: numeric and text order agree */
/* Parse a SequenceNumber of ours (DynStreamFormatSeq); false if it is not one. */
extern bool DynStreamParseSeq(const char *s, int len, int64 *seq);
/* Split a stream ARN into table name and label; false if it is not one. */
extern bool DynStreamParseArn(const char *arn, int len, char **table_name, char **label);
/* Highest trimmed seq of a stream's bucket (-1: nothing trimmed). */
extern int64 DynStreamTrimmedSeq(int64 stream_id, int bucket);
/* Refuse reads in a transaction-snapshot isolation level (the horizon needs a fresh snapshot). */
extern void DynStreamCheckIsolation(void);

/* ---- maintain.c: shard rotation, retention, removal ---- */
extern int	dynindex_stream_shard_lifetime_s;
extern int	dynindex_stream_retention_s;
extern int	dynindex_stream_maintenance_interval_s;
extern int	dynindex_stream_iterator_lifetime_s;
/* GUCs (from _PG_init). */
extern void DynStreamsMaintainInit(void);
/* The worker's round in its own transaction; never raises. */
/* The worker's round; returns when the next round has work, at the earliest now + interval. */
extern TimestampTz DynStreamsMaintainDatabase(void);

#endif
