/*
 * import.h — importing items from files (ImportTable): the readers of
 * DynamoDB JSON lines, Ion text and CSV, plain or compressed with gzip or
 * zstd (import_read.c, import_ion.c), and the job that loads an import's
 * objects into its new table (import.c, run by the background job runner).
 */
#ifndef DYNINDEX_IMPORT_H
#define DYNINDEX_IMPORT_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

/* Input formats and compressions (ImportTable's InputFormat, InputCompressionType). */
typedef enum DynImportFormat
{
	DYN_IMPORT_DYNAMODB_JSON,
	DYN_IMPORT_ION,
	DYN_IMPORT_CSV
} DynImportFormat;

typedef enum DynImportCompression
{
	DYN_IMPORT_NONE,
	DYN_IMPORT_GZIP,
	DYN_IMPORT_ZSTD
} DynImportCompression;

/* Reads the raw bytes of an object: up to len bytes, 0 at the end. */
typedef size_t (*DynImportSourceFn) (void *arg, char *buf, size_t len);

/* Records longer than this are an error (an item is at most 400 KB; text and CSV quoting add some). */
#define DYN_IMPORT_MAX_RECORD (4 * 1024 * 1024)

typedef struct DynImportInput DynImportInput;

/*
 * One record of an object, parsed into DynamoDB's typed JSON of an item
 * (a jsonb object name -> AttributeValue), or an error.
 */
struct DynValue;
typedef struct DynImportRecord
{
	Jsonb	   *item;			/* NULL on error (or when value is set) */
	struct DynValue *value;		/* or the item already read (import_json.c), its form checked */
	const char *error_type;		/* on error: "InvalidFormat", "ValidationException", ... */
	const char *error;			/* on error: the message (never item content) */
	bool		fatal;			/* the rest of the object cannot be read */
} DynImportRecord;

/* CSV settings: InputFormatOptions.Csv and the key types CSV needs. */
typedef struct DynImportCsv
{
	char		delimiter;
	int			nheader;		/* HeaderList given: names; else the object's first record */
	char	  **header;
	int			nkeys;			/* key attributes typed by AttributeDefinitions (others are S) */
	char	  **key_names;
	char	  **key_types;		/* "S", "N", "B" */
} DynImportCsv;

/* ---- import_read.c ---- */
extern DynImportInput *DynImportOpen(DynImportSourceFn fn, void *arg, DynImportCompression compression,
									 DynImportFormat format, const DynImportCsv *csv);
/* The next record; false at the end of the object. */
extern bool DynImportNext(DynImportInput *in, DynImportRecord *rec);
/* Uncompressed bytes read so far. */
extern int64 DynImportBytes(DynImportInput *in);
extern void DynImportClose(DynImportInput *in);
/* parse names */
extern bool DynImportFormatFromName(const char *name, DynImportFormat *f);
extern bool DynImportCompressionFromName(const char *name, DynImportCompression *c);

/* ---- import_json.c: a DynamoDB JSON line straight to its item, when nothing can go wrong ---- */
extern bool dynindex_import_fast_json;
extern bool DynImportJsonItem(const char *line, int len, struct DynValue **item);
/* The stored jsonb of an item (DynItemToJsonb's bytes, built without pushJsonbValue). */
extern Jsonb *DynImportItemToJsonb(const struct DynValue *item);
extern void DynImportDefineSettings(void);

/* ---- import_ion.c: one Ion text value {Item: {...}} -> typed JSON of the item ---- */
/* Reads one top-level value with the reader's byte functions; NULL and *error at a malformed value. */
typedef int (*DynIonGetc) (void *arg);	/* next byte, -1 at the end */
typedef int (*DynIonPeek) (void *arg);
extern Jsonb *DynIonReadItem(DynIonGetc get, DynIonPeek peek, void *arg, bool *eof, const char **error);

/* ---- import_ionbin.c: one binary Ion value {Item: {...}} ---- */
typedef struct DynIonBinSymbols
{
	int			n;				/* local symbols (ids 10 ..) */
	int			cap;
	char	  **names;			/* NULL: a symbol without text */
} DynIonBinSymbols;
extern Jsonb *DynIonBinReadItem(DynIonGetc get, void *arg, DynIonBinSymbols *syms, bool *eof, const char **error);

/* ---- import_bulk.c: the bulk load (heaps by table_multi_insert, btrees built after) ---- */
#define DYN_IMPORT_BULK_BATCH 1000	/* items added between flushes, at most */
struct DynTable;
struct DynIndex;
struct DynValue;
typedef struct DynImportBulk DynImportBulk;
extern bool DynImportBulkEligible(struct DynTable *t);
extern void DynImportBulkDefer(int64 import_id, struct DynTable *t, int first_task);
extern List *DynImportDropIndexes(const char *relation);
extern DynImportBulk *DynImportBulkBegin(struct DynTable *t);
extern void DynImportBulkAdd(DynImportBulk *b, bytea *pk, bytea *sk, int32 size, Jsonb *stored,
							 const struct DynValue *item);
extern void DynImportBulkFlush(DynImportBulk *b);
extern void DynImportBulkEnd(DynImportBulk *b);
extern void DynImportBulkBuild(int64 import_id, struct DynTable *t, const char *relation, const char *statement,
							   void (*rebuild_gsi) (struct DynTable *t, struct DynIndex *idx));

/* ---- import.c: the job ---- */
extern void DynImportRun(int64 id);
extern void DynImportFail(int64 id, const char *message);
/* The import's second process: takes its tasks as the job's process does. */
extern void DynImportHelp(int64 id);

#endif
