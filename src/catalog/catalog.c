/*
 * catalog.c — table and index metadata, cached per backend.
 *
 * Entries are loaded from dynindex.tables / dynindex.indexes with SPI and
 * kept in a hash table under CacheMemoryContext.  Every catalog change
 * (CreateTable, DeleteTable, UpdateTable) sends a relcache invalidation for
 * dynindex.tables; the callback only marks the cache stale, and the next
 * request (DynCatalogRevalidate) frees it, so an entry never disappears in
 * the middle of a request.
 *
 * Every lookup checks the caller's right on the table (src/security/,
 * DynSecurityCheckTable): the catalog depends on security, never the other
 * way round (security.h says why).
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "common/pg_compat.h"
#include "storage/lmgr.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "security/security.h"
#include "common/json.h"

#define TABLE_NAME_KEYSIZE 256

typedef struct CacheEntry
{
	char		name[TABLE_NAME_KEYSIZE];
	DynTable   *table;
} CacheEntry;

static HTAB *table_cache = NULL;
/* entries replaced during a request (their storage was dropped): freed with the cache */
static List *retired = NIL;
static bool cache_stale = false;
/* bumped whenever the cache is dropped: caches of other modules follow it */
static uint64 cache_generation = 0;
static Oid	catalog_relid = InvalidOid;

/* Relcache callback: a change to dynindex.tables makes the cache stale. */
static void
catalog_inval_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == catalog_relid)
		cache_stale = true;
}

/* Register the invalidation callback. */
void
DynCatalogInit(void)
{
	CacheRegisterRelcacheCallback(catalog_inval_callback, (Datum) 0);
}

/* Free one table entry and its plans. */
static void
free_table(DynTable *t)
{
	int			i;
	int			j;

	for (i = 0; i < (int) lengthof(t->plans); i++)
		if (t->plans[i])
			SPI_freeplan(t->plans[i]);
	for (j = 0; j < t->nindexes; j++)
		for (i = 0; i < (int) lengthof(t->indexes[j].plans); i++)
			if (t->indexes[j].plans[i])
				SPI_freeplan(t->indexes[j].plans[i]);
	MemoryContextDelete(t->cxt);
}

/* Free every cached entry. */
static void
reset_cache(void)
{
	HASH_SEQ_STATUS seq;
	CacheEntry *e;
	ListCell   *lc;

	cache_generation++;
	foreach(lc, retired)
		free_table((DynTable *) lfirst(lc));
	list_free(retired);
	retired = NIL;
	if (table_cache == NULL)
		return;
	hash_seq_init(&seq, table_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		free_table(e->table);
	hash_destroy(table_cache);
	table_cache = NULL;
	catalog_relid = InvalidOid;
}

/* Drop stale entries; called at the start of each request. */
void
DynCatalogRevalidate(void)
{
	if (cache_stale)
	{
		reset_cache();
		cache_stale = false;
	}
}

/*
 * The number of times the cache was dropped (after catalog changes): a module
 * that caches something per table (such as plans naming a storage relation)
 * drops it when this changes, so that dropped tables leave nothing behind.
 */
uint64
DynCatalogGeneration(void)
{
	return cache_generation;
}

/* Has the catalog changed since the cache was last revalidated? */
bool
DynCatalogIsStale(void)
{
	return cache_stale;
}

/* Mark the catalog changed: every backend drops its cache after commit. */
void
DynCatalogChanged(void)
{
	if (!OidIsValid(catalog_relid))
		catalog_relid = get_relname_relid("tables", get_namespace_oid("dynindex", false));
	CacheInvalidateRelcacheByRelid(catalog_relid);
}

/* Copy a jsonb datum into the current context. */
static Jsonb *
copy_jsonb(Datum d)
{
	Jsonb	   *jb = DatumGetJsonbP(d);
	Jsonb	   *copy = palloc(VARSIZE(jb));

	memcpy(copy, jb, VARSIZE(jb));
	return copy;
}

/* Type of an attribute from AttributeDefinitions. */
static DynType
attribute_type(Jsonb *defs, const char *name)
{
	JsonbValue	arr;
	JsonbValue *elems;
	int			n;
	int			i;

	arr.type = jbvBinary;
	arr.val.binary.data = &defs->root;
	arr.val.binary.len = VARSIZE(defs) - VARHDRSZ;
	elems = RqArrayElems(&arr, &n);
	for (i = 0; i < n; i++)
	{
		char	   *an = RqGetString(elems[i].val.binary.data, "AttributeName");
		char	   *at = RqGetString(elems[i].val.binary.data, "AttributeType");
		DynType		t;

		if (an && at && strcmp(an, name) == 0 && DynTypeFromName(at, strlen(at), &t))
			return t;
	}
	elog(ERROR, "attribute \"%s\" has no definition", name);
	return DYN_S;
}

/* Fill an index's key attributes from its KeySchema. */
static void
load_index_keys(DynIndex *idx, Jsonb *defs)
{
	JsonbValue	arr;
	JsonbValue *elems;
	int			n;
	int			i;

	arr.type = jbvBinary;
	arr.val.binary.data = &idx->key_schema->root;
	arr.val.binary.len = VARSIZE(idx->key_schema) - VARHDRSZ;
	elems = RqArrayElems(&arr, &n);
	idx->nhash = idx->nrange = 0;
	for (i = 0; i < n; i++)
	{
		char	   *an = RqGetString(elems[i].val.binary.data, "AttributeName");
		DynKeyAttr *k;

		if (RqStringIs(elems[i].val.binary.data, "KeyType", "HASH"))
			k = &idx->hash[idx->nhash++];
		else
			k = &idx->range[idx->nrange++];
		k->name = an;
		k->type = attribute_type(defs, an);
	}
}

/* Fill an index's projection from its Projection document. */
static void
load_index_projection(DynIndex *idx)
{
	JsonbContainer *p = &idx->projection_json->root;
	JsonbValue *nk;

	if (RqStringIs(p, "ProjectionType", "KEYS_ONLY"))
		idx->projection = DYN_PROJ_KEYS_ONLY;
	else if (RqStringIs(p, "ProjectionType", "INCLUDE"))
		idx->projection = DYN_PROJ_INCLUDE;
	else
		idx->projection = DYN_PROJ_ALL;
	idx->nnonkey = 0;
	idx->nonkey = NULL;
	nk = RqGet(p, "NonKeyAttributes");
	if (nk)
	{
		JsonbValue *elems;
		int			n;
		int			i;

		elems = RqArrayElems(nk, &n);
		idx->nonkey = palloc(sizeof(char *) * Max(n, 1));

		/*
		 * Names only: before CreateTable and UpdateTable refused a null
		 * element (request.c), one could be stored, and a null's value is
		 * not set by the jsonb iterator.
		 */
		for (i = 0; i < n; i++)
			if (elems[i].type == jbvString)
				idx->nonkey[idx->nnonkey++] = pnstrdup(elems[i].val.string.val, elems[i].val.string.len);
	}
}

/* "KEYS_ONLY", ... for a view type; NULL for none. */
const char *
DynStreamViewName(DynStreamView v)
{
	switch (v)
	{
		case DYN_STREAM_KEYS_ONLY:
			return "KEYS_ONLY";
		case DYN_STREAM_NEW_IMAGE:
			return "NEW_IMAGE";
		case DYN_STREAM_OLD_IMAGE:
			return "OLD_IMAGE";
		case DYN_STREAM_NEW_AND_OLD_IMAGES:
			return "NEW_AND_OLD_IMAGES";
		case DYN_STREAM_NONE:
			break;
	}
	return NULL;
}

/* The view type of a name; DYN_STREAM_NONE if unknown. */
DynStreamView
DynStreamViewFromName(const char *name)
{
	DynStreamView v;

	for (v = DYN_STREAM_KEYS_ONLY; v <= DYN_STREAM_NEW_AND_OLD_IMAGES; v++)
		if (strcmp(name, DynStreamViewName(v)) == 0)
			return v;
	return DYN_STREAM_NONE;
}

/*
 * Does the database have the streams catalog (dynindex.streams, version 0.2)?
 * Not before ALTER EXTENSION dynindex UPDATE in a database created at 0.1,
 * where the new library must still serve tables (docs/versions.md).
 */
bool
DynCatalogHasStreams(void)
{
	return OidIsValid(get_relname_relid("streams", get_namespace_oid("dynindex", true)));
}

/*
 * Read a table's enabled stream from dynindex.streams: in the active
 * snapshot, or (latest) in a new one.  None in a database still at 0.1.
 */
void
DynCatalogReadStream(int64 table_num, bool latest, DynStreamInfo *out)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	bool		isnull;
	DynSecurityState sec;

	memset(out, 0, sizeof(*out));
	/* a 0.1 schema (before ALTER EXTENSION dynindex UPDATE) has no streams */
	if (!OidIsValid(get_relname_relid("streams", get_namespace_oid("dynindex", false))))
		return;
	args[0] = Int64GetDatum(table_num);
	/* the catalog is internal (writers run as their caller) */
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT stream_id, view_type, shard_count FROM dynindex.streams "
							  "WHERE table_num = $1 AND disabled_at IS NULL",
							  1, types, args, NULL, !latest, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the table's stream");
	if (SPI_processed > 0)
	{
		out->id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		out->view = DynStreamViewFromName(TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
																			SPI_tuptable->tupdesc, 2, &isnull)));
		out->shard_count = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	}
	DynSecurityEndInternal(&sec);
}

/*
 * Does the database have the point-in-time recovery catalog (dynindex.pitr,
 * version 0.3)?  Not before ALTER EXTENSION dynindex UPDATE in a database
 * created at 0.1 or 0.2.
 */
bool
DynCatalogHasPitr(void)
{
	return OidIsValid(get_relname_relid("pitr", get_namespace_oid("dynindex", true)));
}

/*
 * Does dynindex.indexes have the on_demand_throughput column (a GSI's own
 * OnDemandThroughput, version 0.3)?  Not before ALTER EXTENSION dynindex
 * UPDATE in a database created at 0.1 or 0.2, where GSIs have no maximum.
 */
bool
DynCatalogHasIndexOnDemand(void)
{
	Oid			nsp = get_namespace_oid("dynindex", true);
	Oid			rel = OidIsValid(nsp) ? get_relname_relid("indexes", nsp) : InvalidOid;

	return OidIsValid(rel) && get_attnum(rel, "on_demand_throughput") != InvalidAttrNumber;
}

/*
 * Read a table's point-in-time recovery from dynindex.pitr: in the active
 * snapshot, or (latest) in a new one.  Off in a database before 0.3.
 */
void
DynCatalogReadPitr(int64 table_num, bool latest, DynPitrInfo *out)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	bool		isnull;
	DynSecurityState sec;

	memset(out, 0, sizeof(*out));
	if (!DynCatalogHasPitr())
		return;
	args[0] = Int64GetDatum(table_num);
	/* the catalog is internal (writers run as their caller) */
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT recovery_days, enabled_at FROM dynindex.pitr "
							  "WHERE table_num = $1 AND deleted_at IS NULL",
							  1, types, args, NULL, !latest, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the table's point-in-time recovery");
	if (SPI_processed > 0)
	{
		out->days = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		out->enabled_at = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	}
	DynSecurityEndInternal(&sec);
}

/* Load one table (and its indexes) from the catalog: see load_table. */
static DynTable *
load_table_in_snapshot(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	int			ret;
	DynTable   *t;
	MemoryContext cxt;
	MemoryContext old;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	uint64		i;

	args[0] = CStringGetTextDatum(name);
	ret = SPI_execute_with_args("SELECT table_name, table_id::text, num, storage, attribute_definitions, "
								"key_schema, billing_mode, read_capacity, write_capacity, created_at, options "
								"FROM dynindex.tables WHERE table_name = $1",
								1, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "catalog lookup failed");
	if (SPI_processed == 0)
		return NULL;

	cxt = AllocSetContextCreate(CacheMemoryContext, "dynindex table", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	t = palloc0(sizeof(DynTable));
	t->cxt = cxt;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	t->name = TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull));
	t->table_id = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
	t->num = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	t->storage = TextDatumGetCString(SPI_getbinval(tup, desc, 4, &isnull));
	t->attribute_definitions = copy_jsonb(SPI_getbinval(tup, desc, 5, &isnull));
	t->key_schema = copy_jsonb(SPI_getbinval(tup, desc, 6, &isnull));
	t->billing_mode = TextDatumGetCString(SPI_getbinval(tup, desc, 7, &isnull));
	t->read_capacity = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
	if (isnull)
		t->read_capacity = 0;
	t->write_capacity = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	if (isnull)
		t->write_capacity = 0;
	t->created_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 10, &isnull));
	t->options = copy_jsonb(SPI_getbinval(tup, desc, 11, &isnull));
	{
		JsonbValue	v;

		t->importing = getKeyJsonValueFromContainer(&t->options->root, "Importing", 9, &v) != NULL;
	}

	/* the table's own key */
	{
		DynIndex	base;

		base.key_schema = t->key_schema;
		load_index_keys(&base, t->attribute_definitions);
		t->hash = base.hash[0];
		t->has_range = base.nrange > 0;
		if (t->has_range)
			t->range = base.range[0];
	}
	MemoryContextSwitchTo(old);

	/* a GSI's own maximum: none before the 0.3 catalog */
	ret = SPI_execute_with_args(psprintf("SELECT index_name, is_global, key_schema, projection, status, "
										 "backfilling, storage, throughput, %s, "
										 "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c WHERE c.contype = 'p' "
										 "AND c.conrelid = pg_catalog.to_regclass(storage)), "
										 "EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indisunique AND i.indnkeyatts = 2 "
										 "AND i.indrelid = pg_catalog.to_regclass(storage)) FROM dynindex.indexes "
										 "WHERE table_name = $1 ORDER BY position",
										 DynCatalogHasIndexOnDemand() ? "on_demand_throughput" : "NULL::jsonb"),
								1, argtypes, args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "catalog lookup failed");
	old = MemoryContextSwitchTo(cxt);
	t->nindexes = (int) SPI_processed;
	t->indexes = palloc0(sizeof(DynIndex) * Max(1, t->nindexes));
	desc = SPI_tuptable->tupdesc;
	for (i = 0; i < SPI_processed; i++)
	{
		DynIndex   *idx = &t->indexes[i];
		Datum		d;

		tup = SPI_tuptable->vals[i];
		idx->name = TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull));
		idx->is_global = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
		idx->key_schema = copy_jsonb(SPI_getbinval(tup, desc, 3, &isnull));
		idx->projection_json = copy_jsonb(SPI_getbinval(tup, desc, 4, &isnull));
		idx->status = TextDatumGetCString(SPI_getbinval(tup, desc, 5, &isnull));
		idx->backfilling = DatumGetBool(SPI_getbinval(tup, desc, 6, &isnull));
		idx->storage = TextDatumGetCString(SPI_getbinval(tup, desc, 7, &isnull));
		d = SPI_getbinval(tup, desc, 8, &isnull);
		idx->throughput = isnull ? NULL : copy_jsonb(d);
		d = SPI_getbinval(tup, desc, 9, &isnull);
		idx->on_demand = isnull ? NULL : copy_jsonb(d);
		idx->keyed = DatumGetBool(SPI_getbinval(tup, desc, 10, &isnull));
		idx->keyed_ipk = DatumGetBool(SPI_getbinval(tup, desc, 11, &isnull));
		load_index_keys(idx, t->attribute_definitions);
		load_index_projection(idx);
	}
	MemoryContextSwitchTo(old);
	DynCatalogReadStream(t->num, false, &t->stream);
	DynCatalogReadPitr(t->num, false, &t->pitr);
	return t;
}

/*
 * Lock a storage relation (AccessShareLock, until the end of the transaction);
 * false if it no longer exists.
 */
static Oid
lock_storage(const char *qualified)
{
	RangeVar   *rv = makeRangeVarFromNameList(stringToQualifiedNameList(qualified, NULL));

	return RangeVarGetRelidExtended(rv, AccessShareLock, RVR_MISSING_OK, NULL, NULL);
}

/*
 * Lock a table's storage relation; false if it was dropped.  Requests lock the
 * table first and an index after it (DynCatalogLockIndex, or their queries on
 * it), the order in which DeleteTable drops them, so that a request and a
 * concurrent DeleteTable or UpdateTable wait for each other instead of
 * deadlocking.
 */
static bool
lock_table(DynTable *t)
{
	t->storage_relid = lock_storage(t->storage);
	return OidIsValid(t->storage_relid);
}

/*
 * Lock an index's storage relation (after its table's); false if a concurrent
 * UpdateTable dropped the index (the caller answers as if it did not exist).
 */
bool
DynCatalogLockIndex(DynIndex *idx)
{
	return OidIsValid(lock_storage(idx->storage));
}

/*
 * Load one table (and its indexes) from the catalog.  The table row and the
 * index rows are read in one snapshot: with a new snapshot per query (READ
 * COMMITTED), an UpdateTable committing between the two could pair the old
 * AttributeDefinitions with a new index on attributes they lack.
 */
static DynTable *
load_table(const char *name)
{
	DynTable   *t;
	DynSecurityState sec;

	/* the catalog is internal: read with the extension owner's rights */
	DynSecurityBeginInternal(&sec);
	PushCopiedSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	t = load_table_in_snapshot(name);
	PopActiveSnapshot();
	DynSecurityEndInternal(&sec);
	return t;
}

/* Find a table by name (cached); NULL if it does not exist. */
static DynTable *
catalog_lookup(const char *name)
{
	CacheEntry *e;
	bool		found;
	DynTable   *t;

	if (strlen(name) >= TABLE_NAME_KEYSIZE)
		return NULL;
	if (table_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = TABLE_NAME_KEYSIZE;
		ctl.entrysize = sizeof(CacheEntry);
		ctl.hcxt = CacheMemoryContext;
		table_cache = hash_create("dynindex tables", 64, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	if (!OidIsValid(catalog_relid))
		catalog_relid = get_relname_relid("tables", get_namespace_oid("dynindex", false));

	e = hash_search(table_cache, name, HASH_FIND, NULL);
	if (e)
		return e->table;
	t = load_table(name);
	if (t == NULL)
		return NULL;
	e = hash_search(table_cache, name, HASH_ENTER, &found);
	e->table = t;
	return t;
}

/*
 * Find a table by name and lock its storage relations for the rest of the
 * transaction; NULL if it does not exist.  A DeleteTable or UpdateTable that
 * committed between the catalog read and the lock dropped relations the entry
 * names: the table is then read again (it may be gone, or have other indexes),
 * and a table still without its relations is reported missing.  The replaced
 * entry stays valid until the next request (callers may hold it).
 */
/* Take a table's entry out of the cache, keeping it valid until the next request. */
static void
retire_entry(const char *name)
{
	CacheEntry *e;
	MemoryContext old;

	if (table_cache == NULL || strlen(name) >= TABLE_NAME_KEYSIZE)
		return;
	e = hash_search(table_cache, name, HASH_FIND, NULL);
	if (e == NULL)
		return;
	old = MemoryContextSwitchTo(CacheMemoryContext);
	retired = lappend(retired, e->table);
	MemoryContextSwitchTo(old);
	hash_search(table_cache, name, HASH_REMOVE, NULL);
}

/* The operation being served, for messages that name it (set by dynindex.api). */
const char *DynRequestOperation = NULL;

/* Table ARNs the current request named tables by: "name\0arn" strings. */
static List *request_arns = NIL;

/* Forget the ARNs of the previous request (dynindex.api, before and after each). */
void
DynCatalogRequestReset(void)
{
	request_arns = NIL;
}

/*
 * The name by which the current request named a table: its ARN when it was
 * named by ARN (DynamoDB then echoes the ARN in ConsumedCapacity and the
 * batch responses' maps), else the name.
 */
const char *
DynCatalogRequestName(const char *table_name)
{
	ListCell   *lc;

	foreach(lc, request_arns)
	{
		const char *pair = lfirst(lc);

		if (strcmp(pair, table_name) == 0)
			return pair + strlen(pair) + 1;
	}
	return table_name;
}

/* Remember that the current request named table_name by arn. */
static void
remember_arn(const char *table_name, const char *arn)
{
	size_t		nl = strlen(table_name);
	size_t		al = strlen(arn);
	char	   *pair;

	if (DynCatalogRequestName(table_name) != table_name)
		return;
	pair = palloc(nl + al + 2);
	memcpy(pair, table_name, nl + 1);
	memcpy(pair + nl + 1, arn, al + 1);
	request_arns = lappend(request_arns, pair);
}

/*
 * AccessDeniedException for a resource the caller may not reach: another
 * account's table (no resource-based policy can allow it here), or, for the
 * tagging operations, a table that does not exist.
 */
void
DynCatalogAccessDenied(const char *resource)
{
	const char *op = DynRequestOperation ? DynRequestOperation : "DescribeTable";

	DynError(DYN_ERR_ACCESS_DENIED,
			 "User: arn:aws:iam::%s:root is not authorized to perform: dynamodb:%s on resource: %s "
			 "because no resource-based policy allows the dynamodb:%s action",
			 dynindex_account_id, op, resource, op);
}

/*
 * The table name a TableName member names: the name itself, or the table of
 * a table ARN "arn:aws:dynamodb:<region>:<account>:table/<name>", which
 * DynamoDB accepts wherever an existing table is named.  An ARN of another
 * account is AccessDeniedException (dynindex has no resource-based policies
 * that could grant it, so the request is refused as DynamoDB refuses a
 * cross-account request that no policy allows); another partition or region,
 * or an ARN of something other than a table, is a ValidationException.
 */
char *
DynCatalogTableName(const char *name)
{
	char	   *parts[6];
	char	   *copy;
	char	   *p;
	int			n = 0;

	if (name == NULL || strncmp(name, "arn:", 4) != 0)
		return (char *) name;
	copy = pstrdup(name);
	p = copy;
	while (n < 5)
	{
		char	   *colon = strchr(p, ':');

		if (colon == NULL)
			break;
		*colon = '\0';
		parts[n++] = p;
		p = colon + 1;
	}
	parts[n++] = p;
	if (n < 6)
		DynValidationError("1 validation error detected: Invalid resource type in '%s'", name);
	if (strcmp(parts[1], "aws") != 0)
		DynValidationError("1 validation error detected: Invalid AWS partition in '%s'", name);
	if (strcmp(parts[2], "dynamodb") != 0 || strncmp(parts[5], "table/", 6) != 0 ||
		parts[5][6] == '\0' || strchr(parts[5] + 6, '/') != NULL)
		DynValidationError("1 validation error detected: Invalid resource type in '%s'", name);
	if (strcmp(parts[4], dynindex_account_id) != 0)
		DynCatalogAccessDenied(name);
	if (strcmp(parts[3], dynindex_region) != 0)
		DynValidationError("1 validation error detected: Invalid AWS region in '%s'", name);
	remember_arn(parts[5] + 6, name);
	return parts[5] + 6;
}

/*
 * The cache holds the catalog as it is (read with the owner's rights), the
 * same for every role; the caller's right on the table is checked at every
 * lookup (DynSecurityCheckTable), never remembered: a pooled connection
 * serving several roles answers each with its own rights.
 */
static DynTable *
get_table(const char *name)
{
	DynTable   *t = catalog_lookup(name);

	if (t == NULL || lock_table(t))
		return t;
	retire_entry(name);
	t = catalog_lookup(name);
	if (t == NULL || lock_table(t))
		return t;
	return NULL;
}

/*
 * The authorization check alone, without locking the table's storage: for
 * DeleteTable and UpdateTable, which check the caller's right before they
 * take the catalog row lock (and lock the storage after it).
 */
void
DynCatalogAuthorize(const char *name)
{
	DynTable   *t;

	name = DynCatalogTableName(name);
	t = catalog_lookup(name);

	if (t)
	{
		RangeVar   *rv = makeRangeVarFromNameList(stringToQualifiedNameList(t->storage, NULL));

		t->storage_relid = RangeVarGetRelid(rv, NoLock, true);
		if (!OidIsValid(t->storage_relid))
			t = NULL;
	}
	DynSecurityCheckTable(name, t ? t->storage_relid : InvalidOid);
}

/* A table without the authorization check (for the rights checks themselves). */
DynTable *
DynCatalogGetTableUnchecked(const char *name)
{
	return get_table(DynCatalogTableName(name));
}

/* Does the operation being served see tables an import is still loading? */
static bool
sees_importing(void)
{
	static const char *const ops[] = {
		"DescribeTable", "DeleteTable", "ListTagsOfResource", "DescribeTimeToLive",
		"DescribeContinuousBackups", "ImportTable", NULL
	};

	for (const char *const *o = ops; *o; o++)
		if (DynRequestOperation && strcmp(*o, DynRequestOperation) == 0)
			return true;
	return false;
}

DynTable *
DynCatalogGetTable(const char *name)
{
	DynTable   *t;

	name = DynCatalogTableName(name);
	t = get_table(name);
	if (t && t->importing && !sees_importing())
		t = NULL;				/* CREATING: not there yet for this operation */
	DynSecurityCheckTable(name, t ? t->storage_relid : InvalidOid);
	return t;
}

DynTable *
DynCatalogGetTableOrNotFound(const char *name)
{
	DynTable   *t;

	name = DynCatalogTableName(name);
	t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Table: %s not found", name);
	return t;
}

/* The given right on a table by name, whatever the operation. */
void
DynCatalogCheckTableRight(const char *name, DynAccess right)
{
	Oid			caller = DynSecurityCaller();
	DynTable   *t;

	if (DynSecurityIsAccountAdmin(caller))
		return;
	t = name ? DynCatalogGetTableUnchecked(name) : NULL;
	if (t == NULL || !DynSecurityHasRight(caller, t->name, t->storage_relid, right))
		DynSecurityDeny(name);
}

/*
 * An operation on something of a table named by an ARN
 * (arn:...:table/<name><part>...): the given right on that table.
 */
static void
check_arn_table_right(const char *arn, const char *part, DynAccess right)
{
	const char *t = arn ? strstr(arn, ":table/") : NULL;
	const char *end = t ? strstr(t + 7, part) : NULL;
	char	   *name = (t && end) ? pnstrdup(t + 7, end - (t + 7)) : NULL;

	if (DynSecurityIsAccountAdmin(DynSecurityCaller()))
		return;
	if (name == NULL)
		DynSecurityDeny(NULL);
	DynCatalogCheckTableRight(name, right);
}

/* A stream operation: the stream right on the stream's table. */
void
DynCatalogCheckStream(const char *stream_arn)
{
	check_arn_table_right(stream_arn, "/stream/", DYN_ACCESS_STREAM);
}

/* A backup operation: the admin right on the backup's table. */
void
DynCatalogCheckBackup(const char *backup_arn)
{
	check_arn_table_right(backup_arn, "/backup/", DYN_ACCESS_ADMIN);
}

/* An export operation: the read right on the export's table. */
void
DynCatalogCheckExport(const char *export_arn)
{
	check_arn_table_right(export_arn, "/export/", DYN_ACCESS_READ);
}

/*
 * DynCatalogGetTable for DeleteTable and UpdateTable, called once they hold
 * the table's catalog row lock: a catalog change committed while they waited
 * for it is read first (the entry of the table is loaded again).
 */
DynTable *
DynCatalogGetTableForChange(const char *name)
{
	AcceptInvalidationMessages();
	if (cache_stale)
		retire_entry(name);
	return DynCatalogGetTable(name);
}
