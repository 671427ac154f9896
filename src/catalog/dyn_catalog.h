/*
 * dyn_catalog.h — table and index metadata (dynindex.tables, dynindex.indexes),
 * cached per backend and invalidated when the catalog changes.
 *
 * Not catalog/catalog.h: src/ is first on the include path, and PostgreSQL's own
 * utils/rel.h includes its catalog/catalog.h, which a header of ours by that name
 * would shadow (PostgreSQL 17 no longer compiles then).
 */
#ifndef DYNINDEX_CATALOG_H
#define DYNINDEX_CATALOG_H

#include "executor/spi.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "common/arn.h"		/* DynTableArn: tables are named by ARN */
#include "security/security.h"	/* the lookups check the caller's rights */
#include "types/types.h"

#define DYN_MAX_KEY_ATTRS 4

typedef struct DynKeyAttr
{
	char	   *name;
	DynType		type;
} DynKeyAttr;

typedef enum DynProjectionType
{
	DYN_PROJ_ALL,
	DYN_PROJ_KEYS_ONLY,
	DYN_PROJ_INCLUDE
} DynProjectionType;

typedef struct DynIndex
{
	char	   *name;
	bool		is_global;
	int			nhash;
	DynKeyAttr	hash[DYN_MAX_KEY_ATTRS];
	int			nrange;
	DynKeyAttr	range[DYN_MAX_KEY_ATTRS];
	DynProjectionType projection;
	int			nnonkey;
	char	  **nonkey;			/* INCLUDE: NonKeyAttributes */
	char	   *status;			/* ACTIVE, CREATING, ... */
	bool		backfilling;
	char	   *storage;		/* qualified storage table name */
	bool		keyed;			/* its storage's one btree is on DYN_INDEX_KEY (0.3; else a primary key) */
	bool		keyed_ipk;		/* ... then ipk (Citus; storage.c) */
	Jsonb	   *key_schema;		/* as given */
	Jsonb	   *projection_json;	/* as given */
	Jsonb	   *throughput;		/* ProvisionedThroughput as given, or NULL */
	Jsonb	   *on_demand;		/* a GSI's OnDemandThroughput (the members set), or NULL */
	/* cached plans (storage.c) */
	SPIPlanPtr	plans[8];
} DynIndex;

/* A table's enabled stream (dynindex.streams), if any. */
typedef enum DynStreamView
{
	DYN_STREAM_NONE = 0,		/* no enabled stream */
	DYN_STREAM_KEYS_ONLY,
	DYN_STREAM_NEW_IMAGE,
	DYN_STREAM_OLD_IMAGE,
	DYN_STREAM_NEW_AND_OLD_IMAGES
} DynStreamView;

typedef struct DynStreamInfo
{
	int64		id;				/* dynindex.streams.stream_id; 0 when none */
	DynStreamView view;
	int			shard_count;
} DynStreamInfo;

/* A table's point-in-time recovery (dynindex.pitr), if enabled. */
typedef struct DynPitrInfo
{
	int			days;			/* RecoveryPeriodInDays; 0: PITR is off */
	TimestampTz enabled_at;		/* the earliest restorable time (a commit stamp) */
} DynPitrInfo;

typedef struct DynTable
{
	MemoryContext cxt;			/* owns this entry */
	char	   *name;
	char	   *table_id;		/* uuid text */
	int64		num;			/* internal number (storage names) */
	char	   *storage;		/* qualified storage table name */
	DynKeyAttr	hash;
	bool		has_range;
	DynKeyAttr	range;
	Jsonb	   *attribute_definitions;
	Jsonb	   *key_schema;
	char	   *billing_mode;
	int64		read_capacity;
	int64		write_capacity;
	TimestampTz created_at;
	Jsonb	   *options;		/* other CreateTable settings, as given */
	int			nindexes;
	DynIndex   *indexes;
	DynStreamInfo stream;		/* the enabled stream, if any */
	DynPitrInfo pitr;			/* point-in-time recovery, if enabled */
	bool		importing;		/* CREATING: an import loads it (options "Importing") */
	Oid			storage_relid;	/* set when the request locks the storage relation */
	/* cached plans (storage.c) */
	SPIPlanPtr	plans[16];
} DynTable;

/*
 * Find a table; NULL if missing. Requires SPI to be connected.  Locks the
 * table's storage relation (AccessShareLock) until the end of the transaction.
 */
extern DynTable *DynCatalogGetTable(const char *name);
/* The same, raising ResourceNotFoundException ("Table: <name> not found") if missing. */
extern DynTable *DynCatalogGetTableOrNotFound(const char *name);
/* The same for DeleteTable/UpdateTable, once they hold the catalog row lock. */
extern DynTable *DynCatalogGetTableForChange(const char *name);
/* A table without the authorization check: for the rights checks themselves (DynCatalogCheckTableRight, api/rights.c). */
extern DynTable *DynCatalogGetTableUnchecked(const char *name);
/* Only the caller's right on a table (DynSecurityCheckTable), without locking it. */
extern void DynCatalogAuthorize(const char *name);
/* Bumped each time the cache is dropped after a catalog change. */
extern uint64 DynCatalogGeneration(void);
/* Lock an index's storage (after its table's); false if it was dropped. */
extern bool DynCatalogLockIndex(DynIndex *idx);
/* Mark the catalog changed (sends an invalidation at commit). */
extern void DynCatalogChanged(void);
/* Drop stale cache entries; call at the start of each request. */
extern void DynCatalogRevalidate(void);
/* Has the catalog changed since the cache was revalidated (mid-request)? */
extern bool DynCatalogIsStale(void);
/* Does the database have the streams catalog (not before ALTER EXTENSION UPDATE from 0.1)? */
extern bool DynCatalogHasStreams(void);
/* Read the enabled stream of a table (by number) from dynindex.streams, bypassing the cache. */
extern void DynCatalogReadStream(int64 table_num, bool latest, DynStreamInfo *out);
/* Does the database have the point-in-time recovery catalog (dynindex.pitr, version 0.3)? */
extern bool DynCatalogHasPitr(void);
/* Does dynindex.indexes have the on_demand_throughput column (a GSI's own maximum, version 0.3)? */
extern bool DynCatalogHasIndexOnDemand(void);
/* Read a table's point-in-time recovery from dynindex.pitr (latest: in a new snapshot), bypassing the cache. */
extern void DynCatalogReadPitr(int64 table_num, bool latest, DynPitrInfo *out);
/* "KEYS_ONLY", ... for a view type (NULL for none), and back (DYN_STREAM_NONE if unknown). */
extern const char *DynStreamViewName(DynStreamView v);
extern DynStreamView DynStreamViewFromName(const char *name);
/* Register the invalidation callback (from _PG_init). */
extern void DynCatalogInit(void);
/* The operation being served (set by dynindex.api), for messages that name it. */
extern const char *DynRequestOperation;
/* The table a TableName names: a name, or a table ARN of this region and account. */
extern char *DynCatalogTableName(const char *name);
/* The name (or ARN) by which the current request named a table; reset per request. */
extern const char *DynCatalogRequestName(const char *table_name);
extern void DynCatalogRequestReset(void);
/*
 * The given right on a table by name, whatever the operation (a restore's
 * source table, ListBackups' TableName): AccessDeniedException unless held
 * (a missing table: unless the caller has account-wide rights).
 */
extern void DynCatalogCheckTableRight(const char *name, DynAccess right);
/*
 * A stream operation (DescribeStream, GetShardIterator, GetRecords): the
 * stream right on the table named in the stream's ARN
 * (arn:...:table/<name>/stream/<label>), checked before the stream is looked up.
 */
extern void DynCatalogCheckStream(const char *stream_arn);
/*
 * A backup operation (DescribeBackup, DeleteBackup, RestoreTableFromBackup):
 * the admin right on the table named in the backup's ARN
 * (arn:...:table/<name>/backup/<id>), checked before the backup is looked up.
 */
extern void DynCatalogCheckBackup(const char *backup_arn);
/* DescribeExport: the read right on the table an export ARN names. */
extern void DynCatalogCheckExport(const char *export_arn);
/* AccessDeniedException naming the operation being served and the resource. */
pg_noreturn extern void DynCatalogAccessDenied(const char *resource);

#endif
