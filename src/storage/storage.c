/*
 * storage.c — reading and writing items of a table's storage relation
 * through SPI plans prepared once per table and backend.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/resowner.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "storage/storage.h"

int			dynindex_table_partitions = 0;

enum
{
	PLAN_GET,
	PLAN_GET_LOCK,
	PLAN_INSERT,
	PLAN_UPSERT,
	PLAN_UPDATE,
	PLAN_DELETE,
	PLAN_LOCK_SIZE,
	PLAN_REPLACE,
	/* a replicated table's writes, with the row's replication stamp (docs/global-tables.md) */
	PLAN_GET_STAMPED,
	PLAN_INSERT_STAMPED,
	PLAN_UPDATE_STAMPED,
	PLAN_PUT_STAMPED
};

/* Run a utility statement. */
static void
exec_ddl(const char *sql)
{
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "could not execute \"%s\"", sql);
}

/*
 * The hash of an encoded partition key: PostgreSQL's hash of a bytea
 * (hashvarlena), as a signed int4 -- the hash Citus distributes bytea
 * columns by, so a segment's hash range and a shard's hash range are ranges
 * of the same space.
 */
int32
DynKeyHash(const bytea *key)
{
	return (int32) DatumGetUInt32(hash_any((const unsigned char *) VARDATA_ANY(key),
										   VARSIZE_ANY_EXHDR(key)));
}

/* First hash of segment of total (segment == total: 2^31, past the last). */
int64
DynSegmentLowHash(int segment, int total)
{
	/* ceil(segment * 2^32 / total) - 2^31: segment s holds the hashes h with
	 * floor((h + 2^31) * total / 2^32) = s */
	return (int64) (((uint64) segment * (UINT64CONST(1) << 32) + (uint64) total - 1) / (uint64) total)
		- (INT64CONST(1) << 31);
}

/* The parallel-scan segment (0 .. total-1) of an encoded partition key. */
int
DynKeySegment(const bytea *key, int total)
{
	uint64		x = (uint64) ((int64) DynKeyHash(key) + (INT64CONST(1) << 31));

	if (total <= 0)
		return 0;
	return (int) ((x * (uint64) total) >> 32);
}

/* Does this database have the function dynindex.name(bytea, ...) of nargs arguments? */
static bool
has_function(const char *name, int nargs)
{
	Oid			argtypes[4] = {BYTEAOID, BYTEAOID, BYTEAOID, BYTEAOID};

	Assert(nargs <= 4);
	return OidIsValid(LookupFuncName(list_make2(makeString("dynindex"), makeString(pstrdup(name))),
									 nargs, argtypes, true));
}

/*
 * Does this database have dynindex.key_hash(bytea), and so a segment index
 * on every storage relation?  (A 0.1 database has neither until ALTER
 * EXTENSION dynindex UPDATE.)
 */
bool
DynStorageHasSegmentIndexes(void)
{
	return has_function("key_hash", 1);
}

/* Does this database have dynindex.index_key (0.3), and so index relations keyed by it? */
static bool
has_index_key(void)
{
	return has_function("index_key", 4);
}

/* ------------------------------------------------------------ index keys */

/* A GSI relation's index on the base key (0.3; before: on (pk, sk)). */
#define DYN_BASE_KEY_HASH "dynindex.key_hash(pk || sk)"

/* Bytes of a key part escaped and terminated (keyenc.c's self-delimiting form). */
static Size
escaped_size(const bytea *b)
{
	return DynKeyEscapedLen(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b)) + 2;
}

static char *
put_escaped(char *out, const bytea *b)
{
	out = DynKeyEscape(out, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
	memcpy(out, DYN_KEY_TERMINATOR, 2);
	return out + 2;
}

/* The 4 bytes that order an int4 hash as unsigned bytes (hash + 2^31, big-endian). */
static char *
put_hash(char *out, int64 hash)
{
	uint32		u = (uint32) (hash + (INT64CONST(1) << 31));

	out[0] = (char) (u >> 24);
	out[1] = (char) (u >> 16);
	out[2] = (char) (u >> 8);
	out[3] = (char) u;
	return out + 4;
}

/*
 * The key of an index entry, the one column of its storage relation's btree
 * (0.3): the hash of ipk (4 bytes, ordered as an int4), then ipk, isk and pk
 * each escaped and terminated as a multi-attribute key's parts are (0x00 as
 * 0x00 0xFF, then 0x00 0x01: keyenc.c), then sk as it is.  Comparing two such keys
 * byte by byte orders them as the tuples (key_hash(ipk), ipk, isk, pk, sk),
 * so a Query is a range of it, a parallel-Scan segment too; and a btree build
 * compares one string, mostly by its first 8 bytes (PostgreSQL's abbreviated
 * key), instead of five columns found one after another in each index tuple
 * (a GSI's build took three times as long).  A prefix: the parts from isk on
 * may be NULL (the key up to the last part given; a NULL sk adds nothing).
 */
bytea *
DynIndexKey(const bytea *ipk, const bytea *isk, const bytea *pk, const bytea *sk)
{
	Size		len = 4 + escaped_size(ipk) + (isk ? escaped_size(isk) : 0) +
		(isk && pk ? escaped_size(pk) : 0) + (isk && pk && sk ? VARSIZE_ANY_EXHDR(sk) : 0);
	bytea	   *k = palloc(VARHDRSZ + len);
	char	   *out = put_hash(VARDATA(k), DynKeyHash(ipk));

	out = put_escaped(out, ipk);
	if (isk)
	{
		out = put_escaped(out, isk);
		if (pk)
		{
			out = put_escaped(out, pk);
			if (sk)
			{
				memcpy(out, VARDATA_ANY(sk), VARSIZE_ANY_EXHDR(sk));
				out += VARSIZE_ANY_EXHDR(sk);
			}
		}
	}
	Assert(out == VARDATA(k) + len);
	SET_VARSIZE(k, VARHDRSZ + len);
	return k;
}

/* The first index key past every entry of partition key ipk. */
bytea *
DynIndexKeyAfter(const bytea *ipk)
{
	bytea	   *k = DynIndexKey(ipk, NULL, NULL, NULL);

	/* h esc(ipk) 00 01 -> h esc(ipk) 00 02: escaped bytes never hold 00 01 or 00 02 */
	VARDATA(k)[VARSIZE(k) - VARHDRSZ - 1] = 2;
	return k;
}

/* The index key where the hashes from hash on begin (4 bytes). */
bytea *
DynIndexKeyOfHash(int64 hash)
{
	bytea	   *k = palloc(VARHDRSZ + 4);

	put_hash(VARDATA(k), hash);
	SET_VARSIZE(k, VARHDRSZ + 4);
	return k;
}

/* The unique key of an index relation, as an ON CONFLICT target. */
const char *
DynIndexConflictTarget(const DynIndex *idx)
{
	return !idx->keyed ? "ipk, isk, pk, sk" : idx->keyed_ipk ? "(" DYN_INDEX_KEY "), ipk" : "(" DYN_INDEX_KEY ")";
}

/*
 * Before an index relation is distributed by ipk: Citus takes a unique index
 * only when the distribution column is one of its columns, so the btree on
 * the key gets ipk after it (never compared: the key decides it).  Not on
 * one node: the btree's entries would carry ipk twice, and a long one would
 * leave less of a btree entry's ~2,700 bytes to the key.
 */
void
DynStorageIndexKeyForCitus(const char *storage)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(storage)};

	if (SPI_execute_with_args("SELECT i.indexrelid::regclass::text FROM pg_catalog.pg_index i "
							  "WHERE i.indrelid = $1::regclass AND i.indisunique AND NOT i.indisprimary "
							  "AND i.indnkeyatts = 1", 1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the indexes of %s", storage);
	if (SPI_processed == 1)
	{
		char	   *old = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		exec_ddl(psprintf("CREATE UNIQUE INDEX ON %s (%s, ipk)", storage, DYN_INDEX_KEY));
		exec_ddl(psprintf("DROP INDEX %s", old));
	}
}

/*
 * The condition that finds an index relation's entry ($1..$4: ipk, isk, pk,
 * sk).  A statement on a keyed relation also names ipk: Citus sends it to the
 * one shard of ipk only then.
 */
const char *
DynIndexKeyEquals(const DynIndex *idx)
{
	return idx->keyed ? DYN_INDEX_KEY " = dynindex.index_key($1, $2, $3, $4) AND ipk = $1" :
		"ipk = $1 AND isk = $2 AND pk = $3 AND sk = $4";
}

/*
 * The condition that finds a GSI entry by its base key ($1, $2: pk, sk),
 * through the relation's index on DYN_BASE_KEY_HASH (0.3) or on (pk, sk).
 */
const char *
DynIndexBaseKeyEquals(const DynIndex *idx)
{
	return idx->keyed ? DYN_BASE_KEY_HASH " = dynindex.key_hash($1 || $2) AND pk = $1 AND sk = $2" :
		"pk = $1 AND sk = $2";
}

PG_FUNCTION_INFO_V1(dynindex_index_key);

/* dynindex.index_key(ipk, isk, pk, sk): the key of an index entry (DynIndexKey). */
Datum
dynindex_index_key(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(DynIndexKey(PG_GETARG_BYTEA_PP(0), PG_GETARG_BYTEA_PP(1),
								  PG_GETARG_BYTEA_PP(2), PG_GETARG_BYTEA_PP(3)));
}

/*
 * The segment index of a storage relation: its rows in (hash of the
 * partition key, key columns) order, so that each parallel-Scan segment
 * reads only its range of hashes.
 */
static void
create_segment_index(const char *storage, const char *hash_col, const char *cols)
{
	if (DynStorageHasSegmentIndexes())
		exec_ddl(psprintf("CREATE INDEX ON %s (dynindex.key_hash(%s), %s)", storage, hash_col, cols));
}

/* Create a storage relation (hash-partitioned on pk when partitions > 0). */
void
DynStorageCreateTable(const char *storage, int partitions)
{
	int			i;

	bool		distribute = DynStorageDistributing();

	exec_ddl(psprintf("CREATE TABLE %s (pk bytea NOT NULL, sk bytea NOT NULL, size int4 NOT NULL, "
					  "item jsonb NOT NULL, stamp timestamptz, region text, PRIMARY KEY (pk, sk))%s",
					  storage, partitions > 0 ? " PARTITION BY HASH (pk)" : ""));
	if (!distribute)
		DynStorageAddGuard(storage);
	for (i = 0; i < partitions; i++)
	{
		char	   *part = psprintf("%s_p%d", storage, i);

		exec_ddl(psprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d)",
						  part, storage, partitions, i));
		if (!distribute)
			DynStorageAddGuard(part);
	}
	create_segment_index(storage, "pk", "pk, sk");
	if (distribute)
		DynStorageDistribute(storage, "pk", NULL);
}

/*
 * Create an index's storage relation: entries keyed by the encoded index key
 * and the base key, in one unique btree on dynindex.index_key(ipk, isk, pk,
 * sk) (DynIndexKey: a Query is a range of it, a Scan, whole or one segment,
 * a range of hashes); on Citus then ipk (DynStorageIndexKeyForCitus).  Before 0.3 an index relation had a primary key on
 * (ipk, isk, pk, sk) beside a segment index on (key_hash(ipk), ipk, isk, pk,
 * sk); the 0.2--0.3 update replaces the two by this one.  A GSI also finds an
 * item's entry by its base key: through an index on the hash of pk || sk (an
 * int4: less than half the size of one on (pk, sk), 0.6 of its build; a
 * collision is one more row the lookup's pk = $1 AND sk = $2 passes over).
 */
void
DynStorageCreateIndexTable(const char *storage, bool global, const char *table_storage)
{
	bool		keyed = has_index_key();

	exec_ddl(psprintf("CREATE TABLE %s (ipk bytea NOT NULL, isk bytea NOT NULL, pk bytea NOT NULL, "
					  "sk bytea NOT NULL, size int4 NOT NULL, item jsonb NOT NULL%s)", storage,
					  keyed ? "" : ", PRIMARY KEY (ipk, isk, pk, sk)"));
	if (global)
		exec_ddl(psprintf("CREATE INDEX ON %s (%s)", storage, keyed ? DYN_BASE_KEY_HASH : "pk, sk"));
	if (keyed)
		exec_ddl(psprintf("CREATE UNIQUE INDEX ON %s (%s%s)", storage, DYN_INDEX_KEY,
						  DynStorageDistributing() ? ", ipk" : ""));
	else
		create_segment_index(storage, "ipk", "ipk, isk, pk, sk");
	if (DynStorageDistributing())
		DynStorageDistribute(storage, "ipk", global ? NULL : table_storage);
	else
		DynStorageAddGuard(storage);
}

/* Drop a storage relation. */
void
DynStorageDropTable(const char *storage)
{
	exec_ddl(psprintf("DROP TABLE IF EXISTS %s", storage));
}

/* A bytea holding the encoding of one key value. */
bytea *
DynEncodeKeyBytes(const DynValue *v, bool terminated)
{
	StringInfoData buf;
	bytea	   *b;

	initStringInfo(&buf);
	if (v)
		DynKeyEncode(&buf, v, terminated);
	b = palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(b, VARHDRSZ + buf.len);
	memcpy(VARDATA(b), buf.data, buf.len);
	pfree(buf.data);
	return b;
}

/* Same bytes (any varlena header)? */
bool
DynByteaEquals(const bytea *a, const bytea *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/* Do two encoded keys name the same item of a table? */
bool
DynKeyEquals(const DynKey *a, const DynKey *b)
{
	return DynByteaEquals(a->pk, b->pk) && DynByteaEquals(a->sk, b->sk);
}

/* Encode a table key. */
void
DynKeyMake(DynTable *t, DynValue *hash, DynValue *range, DynKey *key)
{
	key->hash = hash;
	key->range = range;
	key->pk = DynEncodeKeyBytes(hash, false);
	key->sk = DynEncodeKeyBytes(t->has_range ? range : NULL, false);
}

/*
 * Run a write plan whose first nkeys arguments (bytea) make a btree key.
 * PostgreSQL refuses btree entries over about 2700 bytes (a third of a page;
 * DynamoDB's keys can take 2048 + 1024 bytes, and index entries add the
 * table's key): when the keys are that large (before compression, which may
 * still make them fit), the write runs in a subtransaction, and the error is
 * reported as *too_big (the return value is then 0).  Other errors propagate.
 */
int
DynStorageExecKeyed(SPIPlanPtr plan, Datum *args, int nkeys, bool *too_big)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Size		len = 0;
	int			ret = 0;
	int			i;

	*too_big = false;
	for (i = 0; i < nkeys; i++)
		len += VARSIZE_ANY(DatumGetPointer(args[i]));
	if (len < 2000)
		return SPI_execute_plan(plan, args, NULL, false, 0);

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		ret = SPI_execute_plan(plan, args, NULL, false, 0);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			ReThrowError(edata);
		FreeErrorData(edata);
		*too_big = true;
	}
	PG_END_TRY();
	return ret;
}

/* The table's prepared plan number which, preparing it on first use. */
static SPIPlanPtr
get_plan(DynTable *t, int which)
{
	static Oid	types_key[2] = {BYTEAOID, BYTEAOID};
	static Oid	types_row[6] = {BYTEAOID, BYTEAOID, INT4OID, JSONBOID, TIMESTAMPTZOID, TEXTOID};
	const char *sql;
	SPIPlanPtr	plan;
	int			nargs = 2;
	Oid		   *types = types_key;

	if (t->plans[which])
		return t->plans[which];
	switch (which)
	{
		case PLAN_GET:
			sql = psprintf("SELECT item, size FROM %s WHERE pk = $1 AND sk = $2", t->storage);
			break;
		case PLAN_GET_LOCK:
			sql = psprintf("SELECT item, size FROM %s WHERE pk = $1 AND sk = $2 FOR UPDATE", t->storage);
			break;
		case PLAN_INSERT:
			sql = psprintf("INSERT INTO %s (pk, sk, size, item) VALUES ($1, $2, $3, $4) "
						   "ON CONFLICT (pk, sk) DO NOTHING", t->storage);
			nargs = 4;
			types = types_row;
			break;
		case PLAN_UPSERT:
			sql = psprintf("INSERT INTO %s (pk, sk, size, item) VALUES ($1, $2, $3, $4) "
						   "ON CONFLICT (pk, sk) DO UPDATE SET size = EXCLUDED.size, item = EXCLUDED.item",
						   t->storage);
			nargs = 4;
			types = types_row;
			break;
		case PLAN_UPDATE:
			sql = psprintf("UPDATE %s SET size = $3, item = $4 WHERE pk = $1 AND sk = $2", t->storage);
			nargs = 4;
			types = types_row;
			break;
		case PLAN_DELETE:
			sql = psprintf("DELETE FROM %s WHERE pk = $1 AND sk = $2 RETURNING item, size", t->storage);
			break;
		case PLAN_LOCK_SIZE:
			sql = psprintf("SELECT size FROM %s WHERE pk = $1 AND sk = $2 FOR UPDATE", t->storage);
			break;
		case PLAN_REPLACE:
			/* the row locked by the subquery (its latest version), then replaced: one statement */
			sql = psprintf("UPDATE %s AS n SET size = $3, item = $4 "
						   "FROM (SELECT ctid, size, item FROM %s WHERE pk = $1 AND sk = $2 FOR UPDATE) AS o "
						   "WHERE n.pk = $1 AND n.sk = $2 AND n.ctid = o.ctid RETURNING o.item, o.size",
						   t->storage, t->storage);
			nargs = 4;
			types = types_row;
			break;
		case PLAN_GET_STAMPED:
			sql = psprintf("SELECT item, size, stamp, region FROM %s WHERE pk = $1 AND sk = $2 FOR UPDATE", t->storage);
			break;
		case PLAN_INSERT_STAMPED:
			sql = psprintf("INSERT INTO %s (pk, sk, size, item, stamp, region) VALUES ($1, $2, $3, $4, $5, $6) "
						   "ON CONFLICT (pk, sk) DO NOTHING", t->storage);
			nargs = 6;
			types = types_row;
			break;
		case PLAN_UPDATE_STAMPED:
			sql = psprintf("UPDATE %s SET size = $3, item = $4, stamp = $5, region = $6 WHERE pk = $1 AND sk = $2",
						   t->storage);
			nargs = 6;
			types = types_row;
			break;
		case PLAN_PUT_STAMPED:
			/* a local write replacing a row it has not read: just after the row's stamp if that is later than $5 */
			sql = psprintf("UPDATE %s SET size = $3, item = $4, stamp = greatest($5, stamp + interval '1 microsecond'), "
						   "region = $6 WHERE pk = $1 AND sk = $2 RETURNING stamp", t->storage);
			nargs = 6;
			types = types_row;
			break;
		default:
			elog(ERROR, "unknown storage plan %d", which);
	}
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep plan");
	t->plans[which] = plan;
	return plan;
}

/* Read the first result row's item and size (and stamp and region, when it has them). */
static void
read_row(DynStoredItem *out)
{
	bool		isnull;
	HeapTuple	tup = SPI_tuptable->vals[0];
	TupleDesc	desc = SPI_tuptable->tupdesc;

	out->item = DatumGetJsonbP(SPI_getbinval(tup, desc, 1, &isnull));
	out->size = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	out->stamped = false;
	out->stamp = 0;
	out->region = NULL;
	if (desc->natts >= 4)
	{
		Datum		stamp = SPI_getbinval(tup, desc, 3, &isnull);

		if (!isnull)
		{
			Datum		region = SPI_getbinval(tup, desc, 4, &isnull);

			out->stamped = !isnull;
			out->stamp = DatumGetTimestampTz(stamp);
			out->region = isnull ? NULL : TextDatumGetCString(region);
		}
	}
}

/* Read an item with read plan which (read_only: no lock taken). */
static bool
get_row(DynTable *t, int which, bool read_only, const DynKey *key, DynStoredItem *out)
{
	Datum		args[2] = {PointerGetDatum(key->pk), PointerGetDatum(key->sk)};
	int			ret;

	ret = SPI_execute_plan(get_plan(t, which), args, NULL, read_only, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "item read failed: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return false;
	read_row(out);
	return true;
}

/* Read an item. */
bool
DynStorageGet(DynTable *t, const DynKey *key, bool lock, DynStoredItem *out)
{
	return get_row(t, lock ? PLAN_GET_LOCK : PLAN_GET, !lock, key, out);
}

/*
 * Read an item of a replicated table under a row lock, with its replication
 * stamp (out->stamped false: written before the table was replicated).  Not
 * DynStorageGet's statement: a database not yet updated to 0.3 has no stamp
 * column, and only a replicated table (0.3) reads it.
 */
bool
DynStorageGetStamped(DynTable *t, const DynKey *key, DynStoredItem *out)
{
	return get_row(t, PLAN_GET_STAMPED, false, key, out);
}

/* Lock an item's row and return its size (0 when there is no item), not reading the item. */
int32
DynStorageLockSize(DynTable *t, const DynKey *key)
{
	Datum		args[2] = {PointerGetDatum(key->pk), PointerGetDatum(key->sk)};
	bool		isnull;
	int			ret = SPI_execute_plan(get_plan(t, PLAN_LOCK_SIZE), args, NULL, false, 1);

	if (ret != SPI_OK_SELECT)
		elog(ERROR, "item read failed: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return 0;
	return DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Run a row-writing plan (a stamped one when region is set: the row's
 * replication stamp and region); returns rows processed.
 */
static uint64
write_row(DynTable *t, int which, const DynKey *key, Jsonb *item, int32 size,
		  TimestampTz stamp, const char *region)
{
	Datum		args[6] = {PointerGetDatum(key->pk), PointerGetDatum(key->sk),
		Int32GetDatum(size), JsonbPGetDatum(item),
	TimestampTzGetDatum(stamp), region ? CStringGetTextDatum(region) : (Datum) 0};
	bool		too_big = false;
	int			ret = DynStorageExecKeyed(get_plan(t, which), args, 2, &too_big);

	if (too_big)
		DynValidationError("One or more parameter values were invalid: The key of the item is too large for dynindex: "
						   "its hash and range key values take %d bytes (dynindex stores keys of up to about 2700 bytes)",
						   (int) (VARSIZE_ANY_EXHDR(key->pk) + VARSIZE_ANY_EXHDR(key->sk)));

	if (ret != SPI_OK_INSERT && ret != SPI_OK_UPDATE && ret != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "item write failed: %s", SPI_result_code_string(ret));
	return SPI_processed;
}

/*
 * Insert unless a row with the key exists; a replicated table's row stamped
 * (stamp, region) (region NULL: not stamped).
 */
bool
DynStorageInsert(DynTable *t, const DynKey *key, Jsonb *item, int32 size,
				 TimestampTz stamp, const char *region)
{
	return write_row(t, region ? PLAN_INSERT_STAMPED : PLAN_INSERT, key, item, size, stamp, region) == 1;
}

/*
 * Replace a replicated table's existing item, not read, by a local write of
 * region: its stamp becomes *stamp or, if later, the row's + 1 µs, and is
 * returned in *stamp.  False (nothing written) when there is no row.
 */
bool
DynStoragePutStamped(DynTable *t, const DynKey *key, Jsonb *item, int32 size,
					 TimestampTz *stamp, const char *region)
{
	bool		isnull;

	if (write_row(t, PLAN_PUT_STAMPED, key, item, size, *stamp, region) == 0)
		return false;
	*stamp = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return true;
}

/* Insert or replace. */
void
DynStorageUpsert(DynTable *t, const DynKey *key, Jsonb *item, int32 size)
{
	write_row(t, PLAN_UPSERT, key, item, size, 0, NULL);
}

/*
 * Replace an existing row, returning the row it replaced; false (nothing
 * written) when there is no row, or when its latest version is not visible
 * to the statement's snapshot (a concurrent writer committed it meanwhile:
 * the caller tries again).
 */
bool
DynStorageReplace(DynTable *t, const DynKey *key, Jsonb *item, int32 size, DynStoredItem *old)
{
	Datum		args[4] = {PointerGetDatum(key->pk), PointerGetDatum(key->sk),
	Int32GetDatum(size), JsonbPGetDatum(item)};
	int			ret = SPI_execute_plan(get_plan(t, PLAN_REPLACE), args, NULL, false, 0);

	if (ret != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "item replace failed: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return false;
	read_row(old);
	return true;
}

/*
 * Replace an existing row; a replicated table's stamped (stamp, region)
 * (region NULL: its stamp left as it is).
 */
void
DynStorageUpdate(DynTable *t, const DynKey *key, Jsonb *item, int32 size,
				 TimestampTz stamp, const char *region)
{
	write_row(t, region ? PLAN_UPDATE_STAMPED : PLAN_UPDATE, key, item, size, stamp, region);
}

/* Delete a row, returning it. */
bool
DynStorageDelete(DynTable *t, const DynKey *key, DynStoredItem *old)
{
	Datum		args[2] = {PointerGetDatum(key->pk), PointerGetDatum(key->sk)};
	int			ret = SPI_execute_plan(get_plan(t, PLAN_DELETE), args, NULL, false, 0);

	if (ret != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "item delete failed: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return false;
	if (old)
		read_row(old);
	return true;
}

/*
 * Item count and total DynamoDB size of a storage relation: exact up to
 * DYN_EXACT_STATS_ROWS rows (by the planner's estimate), estimated above
 * that, the way DynamoDB's own figures are periodic approximations, so that
 * DescribeTable stays cheap on big tables.
 */
#define DYN_EXACT_STATS_ROWS 100000

void
DynStorageStats(const char *storage, int64 *count, int64 *bytes)
{
	bool		isnull;
	int			ret;
	const char *sql = psprintf(
		"WITH est AS (SELECT coalesce(sum(greatest(reltuples, 0)), 0)::int8 AS n FROM pg_class "
		"  WHERE oid = '%s'::regclass OR oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = '%s'::regclass)) "
		"SELECT CASE WHEN est.n <= %d THEN (SELECT count(*) FROM %s) ELSE est.n END, "
		"       CASE WHEN est.n <= %d THEN (SELECT coalesce(sum(size), 0)::int8 FROM %s) "
		"            ELSE (est.n * (SELECT coalesce(avg(size), 0) FROM (SELECT size FROM %s LIMIT 10000) s))::int8 END "
		"FROM est",
		storage, storage, DYN_EXACT_STATS_ROWS, storage, DYN_EXACT_STATS_ROWS, storage, storage);

	ret = SPI_execute(sql, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not count items");
	*count = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*bytes = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
}
