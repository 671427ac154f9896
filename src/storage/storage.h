/*
 * storage.h — item storage: each DynamoDB table is a PostgreSQL table
 * (pk bytea, sk bytea, size int4, item jsonb, stamp timestamptz, region
 * text, PRIMARY KEY (pk, sk)) whose key columns hold the order-preserving key
 * encodings (types/keyenc.c); stamp and region are a replicated table's
 * (NULL otherwise).
 */
#ifndef DYNINDEX_STORAGE_H
#define DYNINDEX_STORAGE_H

#include "catalog/dyn_catalog.h"
#include "datatype/timestamp.h"

/* An item's primary key: the values and their encodings. */
typedef struct DynKey
{
	DynValue   *hash;
	DynValue   *range;			/* NULL for a hash-only table */
	bytea	   *pk;
	bytea	   *sk;				/* empty for a hash-only table */
} DynKey;

/* A stored item as read. */
typedef struct DynStoredItem
{
	Jsonb	   *item;
	int32		size;			/* DynamoDB size of the item */
	/* a replicated table's row (DynStorageGetStamped): the write that made it */
	bool		stamped;		/* false: written before the table was replicated */
	TimestampTz stamp;
	char	   *region;
} DynStoredItem;

/* Name of the schema that holds storage tables. */
#define DYN_DATA_SCHEMA "dynindex_data"

extern int	dynindex_table_partitions;	/* GUC: hash partitions per new table */

/* DDL */
extern void DynStorageCreateTable(const char *storage, int partitions);
/* An index's storage relation (LSI: co-located with table_storage; GSI: its own partition key). */
extern void DynStorageCreateIndexTable(const char *storage, bool global, const char *table_storage);
extern void DynStorageDropTable(const char *storage);
/*
 * The key of an index relation's one btree (0.3; a relation with a primary key
 * on (ipk, isk, pk, sk) is older): SQL, and its value (prefixes: NULL parts).
 */
#define DYN_INDEX_KEY "dynindex.index_key(ipk, isk, pk, sk)"
extern bytea *DynIndexKey(const bytea *ipk, const bytea *isk, const bytea *pk, const bytea *sk);
extern bytea *DynIndexKeyAfter(const bytea *ipk);
extern bytea *DynIndexKeyOfHash(int64 hash);
/* An index relation's statements: ON CONFLICT target, an entry by its key, by its base key. */
extern const char *DynIndexConflictTarget(const DynIndex *idx);
extern const char *DynIndexKeyEquals(const DynIndex *idx);
extern const char *DynIndexBaseKeyEquals(const DynIndex *idx);
extern void DynStorageIndexKeyForCitus(const char *storage);

/* Parallel-scan segments: disjoint ranges of the partition key's hash. */
extern int32 DynKeyHash(const bytea *key);
extern int64 DynSegmentLowHash(int segment, int total);
extern int	DynKeySegment(const bytea *key, int total);
extern bool DynStorageHasSegmentIndexes(void);

/* Same bytes (any varlena header)? */
extern bool DynByteaEquals(const bytea *a, const bytea *b);
/* Do two encoded keys name the same item of a table? */
extern bool DynKeyEquals(const DynKey *a, const DynKey *b);

/* Encode key values into a DynKey. */
extern void DynKeyMake(DynTable *t, DynValue *hash, DynValue *range, DynKey *key);
extern bytea *DynEncodeKeyBytes(const DynValue *v, bool terminated);

/* Read an item; lock = FOR UPDATE.  False if absent. */
extern bool DynStorageGet(DynTable *t, const DynKey *key, bool lock, DynStoredItem *out);
/* Insert unless present; false if a row with the key exists.  region: a replicated table's stamp (NULL: none). */
extern bool DynStorageInsert(DynTable *t, const DynKey *key, Jsonb *item, int32 size,
							 TimestampTz stamp, const char *region);
/* Insert or replace. */
extern void DynStorageUpsert(DynTable *t, const DynKey *key, Jsonb *item, int32 size);
/* Replace an existing row, returning the replaced one; false if there is none (or not yet visible). */
extern bool DynStorageReplace(DynTable *t, const DynKey *key, Jsonb *item, int32 size, DynStoredItem *old);
/*
 * A replicated table's rows carry the replication stamp and region of the
 * write that made them (docs/global-tables.md): a locked read with them, a
 * local write's replace (DynStorageInsert and DynStorageUpdate set them).
 */
extern bool DynStorageGetStamped(DynTable *t, const DynKey *key, DynStoredItem *out);
extern bool DynStoragePutStamped(DynTable *t, const DynKey *key, Jsonb *item, int32 size,
								 TimestampTz *stamp, const char *region);
/* Replace an existing row.  region: a replicated table's stamp (NULL: left as it is). */
extern void DynStorageUpdate(DynTable *t, const DynKey *key, Jsonb *item, int32 size,
							 TimestampTz stamp, const char *region);
/* Lock an item's row; its size, 0 when absent. */
extern int32 DynStorageLockSize(DynTable *t, const DynKey *key);
/* Delete; returns the old row when there was one. */
extern bool DynStorageDelete(DynTable *t, const DynKey *key, DynStoredItem *old);
/* guard.c: storage is written only through dynindex */
extern void DynStorageWritesBegin(void);
extern void DynStorageWritesEnd(void);
extern void DynStorageAddGuard(const char *relation);

/* distribute.c: storage relations as Citus distributed tables */
extern bool dynindex_distributed;	/* GUC: distribute new tables over the Citus cluster */
extern bool DynStorageDistributing(void);
extern bool DynStorageIsDistributed(const char *relation);
extern void DynStorageDistribute(const char *relation, const char *column, const char *colocate_with);
extern void DynStorageCommitWithLocal(void);
extern bool DynStorageWritersCommitted(const TransactionId *xids, int n);

/* Item count and total size (exact). */
extern void DynStorageStats(const char *storage, int64 *count, int64 *bytes);
/* Run a write plan whose first nkeys args form a btree key; *too_big if the key cannot be stored. */
extern int	DynStorageExecKeyed(SPIPlanPtr plan, Datum *args, int nkeys, bool *too_big);

#endif
