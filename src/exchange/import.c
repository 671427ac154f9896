/*
 * import.c — the import job (ImportTable's background work, started by the job
 * runner, src/worker/jobs.c): read every object under the import's key prefix,
 * check each record as a PutItem's item is checked, load the items into the
 * new table, build its secondary indexes in bulk, and make it ACTIVE.
 *
 * Transactions: the first records the import's tasks (its objects, listed
 * once, then on the bulk path the btrees it drops for the load:
 * dynindex.import_tasks); each task then has one of its own (an object's
 * items, error records and counts commit together with the task marked
 * done; a btree is built and marked done); the last turns the table ACTIVE
 * and the import COMPLETED (after the INSERT path, it first builds the
 * secondary indexes).  On the bulk path the job's process and a helper
 * process (DynImportHelp) take the tasks at once, two objects then two
 * btrees at a time.  A crash mid-task loses that task's uncommitted part
 * only; the job's next process resumes with the tasks not done.  The table
 * is CREATING (invisible to item operations, catalog.c) until the last
 * transaction, so it is never ACTIVE half-filled.  A failed import drops
 * the table it created.
 *
 * Rules (DynamoDB's "Import format quotas and validation"): an item-level
 * error is counted (ErrorCount), logged without item content
 * (dynindex.import_errors, our CloudWatch log group) and skipped; a malformed
 * object ends that object (its remaining part is skipped); items sharing a
 * key overwrite each other until one remains, and are not errors; at most
 * 50,000 objects per import.
 */
#include "postgres.h"

#include <sys/resource.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "funcapi.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "common/jobs.h"
#include "common/json.h"
#include "exchange/import.h"
#include "exchange/objstore.h"
#include "indexes/indexes.h"
#include "storage/storage.h"
#include "write/write.h"

/* Items written per statement (or per table_multi_insert). */
#define IMPORT_BATCH DYN_IMPORT_BULK_BATCH
/* DynamoDB: "Each import job can take up to 50,000 Amazon S3 objects" */
#define IMPORT_MAX_OBJECTS 50000

/* An item ready to be written. */
typedef struct PendingItem
{
	bytea	   *pk;
	bytea	   *sk;
	int32		size;
	Jsonb	   *item;
	DynValue   *value;			/* the item (the bulk path computes its GSI entries) */
	int			seq;			/* order in the batch: the last of a key wins */
} PendingItem;

/* One import being run. */
typedef struct ImportJob
{
	int64		id;
	char	   *arn;
	char	   *table;
	Jsonb	   *request;
	DynImportFormat format;
	DynImportCompression compression;
	DynImportCsv csv;
	/* counts of the object being read */
	int64		processed;
	int64		imported;
	int64		errors;
	/* the batch */
	PendingItem *batch;
	int			nbatch;
	SPIPlanPtr	insert_plan;
	SPIPlanPtr	upsert_plan;
	bool		seen_duplicate; /* a key of this object was already in the table */
	SPIPlanPtr	error_plan;
	DynImportBulk *bulk;		/* the bulk path (import_bulk.c), or NULL: INSERTs */
} ImportJob;

/* The object keys of the import, in order. */
typedef struct KeyList
{
	MemoryContext cxt;			/* where the list lives (the job's context) */
	List	   *keys;
	int			n;
} KeyList;

/* ---------------------------------------------------------------- checks */

/*
 * A message safe to keep in the error log: DynamoDB's validation messages,
 * except the one that quotes a set's values.
 */
static const char *
loggable(const char *msg)
{
	const char *value_msgs[] = {"The parameter cannot be converted to a numeric value", NULL};

	if (strstr(msg, "Input collection") != NULL)
		return "One or more parameter values were invalid: Input collection contains duplicates.";
	for (const char **m = value_msgs; *m; m++)
		if (strncmp(msg, *m, strlen(*m)) == 0)
			return *m;			/* without the value DynamoDB quotes after it */
	return msg;
}

/*
 * Check a record's item as PutItem checks its item (values, size, key
 * attributes, index key attributes) and encode its key.  False with the
 * error type and message when it is refused.  The checks raise DynamoDB's
 * errors; they are caught here without a subtransaction (they write nothing).
 */
static bool
check_item(DynTable *t, Jsonb *jb, DynValue *parsed, DynValue **item, DynKey *key, const char **etype, const char **emsg)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool ok = true;

	PG_TRY();
	{
		DynValue   *v = parsed;

		if (v == NULL)
		{
			JsonbValue	jv;
			const char *err = NULL;

			jv.type = jbvBinary;
			jv.val.binary.data = &jb->root;
			jv.val.binary.len = VARSIZE(jb) - VARHDRSZ;
			v = DynItemFromJsonb(&jv, &err);
			if (v == NULL)
				DynValidationError("%s", err ? err : "One or more parameter values were invalid");
		}
		if (DynItemSize(v) > DYN_MAX_ITEM_SIZE)
			DynValidationError("Item size has exceeded the maximum allowed size");
		DynWriteKeyFromItem(t, v, key);
		DynIndexesCheckItem(t, v);
		*item = v;
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		int			code = geterrcode();
		char	   *colon;

		/* DynamoDB's errors (class YD) and data errors are the item's; the rest is not */
		if (!(code >= MAKE_SQLSTATE('Y', 'D', '0', '0', '0') && code <= MAKE_SQLSTATE('Y', 'D', 'Z', 'Z', 'Z')) &&
			ERRCODE_TO_CATEGORY(code) != ERRCODE_DATA_EXCEPTION &&
			ERRCODE_TO_CATEGORY(code) != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			PG_RE_THROW();
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		colon = strstr(edata->message, ": ");
		if (colon && colon - edata->message < 64 && strchr(edata->message, ' ') > colon)
		{
			*etype = pnstrdup(edata->message, colon - edata->message);
			*emsg = loggable(colon + 2);
		}
		else
		{
			*etype = "ValidationException";
			*emsg = "The record cannot be stored as an item";
		}
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* ---------------------------------------------------------------- writing */

/* Batch order: by key, then by position (the last of a key wins). */
static int
pending_cmp(const void *a, const void *b)
{
	const PendingItem *x = a;
	const PendingItem *y = b;
	int			lx = VARSIZE_ANY_EXHDR(x->pk);
	int			ly = VARSIZE_ANY_EXHDR(y->pk);
	int			c = memcmp(VARDATA_ANY(x->pk), VARDATA_ANY(y->pk), Min(lx, ly));

	if (c == 0)
		c = lx - ly;
	if (c == 0)
	{
		lx = VARSIZE_ANY_EXHDR(x->sk);
		ly = VARSIZE_ANY_EXHDR(y->sk);
		c = memcmp(VARDATA_ANY(x->sk), VARDATA_ANY(y->sk), Min(lx, ly));
		if (c == 0)
			c = lx - ly;
	}
	if (c == 0)
		c = x->seq - y->seq;
	return c;
}

/* Is b the same key as a? */
static bool
same_key(const PendingItem *a, const PendingItem *b)
{
	return DynByteaEquals(a->pk, b->pk) && DynByteaEquals(a->sk, b->sk);
}

/*
 * Write the batch: on the bulk path, into the heaps as read; else one INSERT
 * of arrays, an existing key replaced (items with one key overwrite each
 * other; within the batch the last one is kept, as an INSERT ... ON CONFLICT
 * may touch a row once).
 */
static void
flush_batch(ImportJob *job, DynTable *t)
{
	Datum	   *pks;
	Datum	   *sks;
	Datum	   *sizes;
	Datum	   *items;
	int			n = 0;
	Datum		args[4];

	if (job->nbatch == 0)
		return;
	if (job->bulk)
	{
		/*
		 * In the order read: a key met twice is settled when the primary key
		 * is built (the higher ctid of one object is the later item).
		 */
		for (int i = 0; i < job->nbatch; i++)
		{
			PendingItem *p = &job->batch[i];

			DynImportBulkAdd(job->bulk, p->pk, p->sk, p->size, p->item, p->value);
		}
		DynImportBulkFlush(job->bulk);
		job->nbatch = 0;
		return;
	}
	qsort(job->batch, job->nbatch, sizeof(PendingItem), pending_cmp);
	pks = palloc(sizeof(Datum) * job->nbatch);
	sks = palloc(sizeof(Datum) * job->nbatch);
	sizes = palloc(sizeof(Datum) * job->nbatch);
	items = palloc(sizeof(Datum) * job->nbatch);
	for (int i = 0; i < job->nbatch; i++)
	{
		PendingItem *p = &job->batch[i];

		if (i + 1 < job->nbatch && same_key(p, &job->batch[i + 1]))
			continue;			/* a later item of this key replaces it */
		pks[n] = PointerGetDatum(p->pk);
		sks[n] = PointerGetDatum(p->sk);
		sizes[n] = Int32GetDatum(p->size);
		items[n] = JsonbPGetDatum(p->item);
		n++;
	}
	if (job->insert_plan == NULL)
	{
		Oid			types[4] = {BYTEAARRAYOID, BYTEAARRAYOID, INT4ARRAYOID, JSONBARRAYOID};
		const char *insert = psprintf("INSERT INTO %s (pk, sk, size, item) SELECT * FROM unnest($1, $2, $3, $4)",
									  t->storage);

		job->insert_plan = SPI_prepare(insert, 4, types);
		job->upsert_plan = SPI_prepare(psprintf("%s ON CONFLICT (pk, sk) DO UPDATE SET size = excluded.size, "
												"item = excluded.item", insert), 4, types);
		if (job->insert_plan == NULL || job->upsert_plan == NULL)
			elog(ERROR, "could not prepare the import's insert");
	}
	args[0] = PointerGetDatum(construct_array(pks, n, BYTEAOID, -1, false, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(sks, n, BYTEAOID, -1, false, TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_array(sizes, n, INT4OID, 4, true, TYPALIGN_INT));
	args[3] = PointerGetDatum(construct_array(items, n, JSONBOID, -1, false, TYPALIGN_INT));

	/*
	 * A plain INSERT (no speculative insertion: cheaper) in a subtransaction;
	 * when a key is already in the table (an item of an earlier batch with the
	 * same key), the batch is written again as an upsert, and so are the
	 * object's next batches.
	 */
	if (!job->seen_duplicate)
	{
		MemoryContext cxt = CurrentMemoryContext;
		ResourceOwner owner = CurrentResourceOwner;
		volatile bool duplicate = false;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			if (SPI_execute_plan(job->insert_plan, args, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not write imported items");
			ReleaseCurrentSubTransaction();
		}
		PG_CATCH();
		{
			if (geterrcode() != ERRCODE_UNIQUE_VIOLATION)
				PG_RE_THROW();
			MemoryContextSwitchTo(cxt);
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
			duplicate = true;
		}
		PG_END_TRY();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (!duplicate)
		{
			job->nbatch = 0;
			return;
		}
		job->seen_duplicate = true;
	}
	if (SPI_execute_plan(job->upsert_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write imported items");
	job->nbatch = 0;
}

/* Log one item-level error (the object, the record's number, the error; never the item). */
static void
log_error(ImportJob *job, const char *key, int64 record, const char *type, const char *msg)
{
	Datum		args[5];

	if (job->error_plan == NULL)
	{
		Oid			types[5] = {INT8OID, TEXTOID, INT8OID, TEXTOID, TEXTOID};

		job->error_plan = SPI_prepare("INSERT INTO dynindex.import_errors (import_id, object_key, record, error_type, message) "
									  "VALUES ($1, $2, $3, $4, $5)", 5, types);
		if (job->error_plan == NULL)
			elog(ERROR, "could not prepare the import's error log");
	}
	args[0] = Int64GetDatum(job->id);
	args[1] = CStringGetTextDatum(key);
	args[2] = Int64GetDatum(record);
	args[3] = CStringGetTextDatum(type);
	args[4] = CStringGetTextDatum(msg);
	if (SPI_execute_plan(job->error_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not log an import error");
	job->errors++;
}

/* Raw bytes of an object, for the record reader. */
static size_t
object_source(void *arg, char *buf, size_t len)
{
	return DynObjRead((DynObjReader *) arg, buf, len);
}

/*
 * Load one object: every record checked, the good ones written, the bad ones
 * logged.  Returns the uncompressed bytes read.
 */
static int64
load_object(ImportJob *job, DynTable *t, DynObjStore *store, const char *key)
{
	DynObjReader *r = DynObjReaderOpen(store, key, NULL);
	DynImportInput *in = DynImportOpen(object_source, r, job->compression, job->format, &job->csv);
	MemoryContext rec_cxt = AllocSetContextCreate(CurrentMemoryContext, "dynindex import batch", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(rec_cxt);
	DynImportRecord rec;
	int64		record = 0;
	int64		bytes;

	job->batch = MemoryContextAlloc(old, sizeof(PendingItem) * IMPORT_BATCH);
	while (DynImportNext(in, &rec))
	{
		DynValue   *item;
		DynKey		k;
		const char *etype;
		const char *emsg;

		CHECK_FOR_INTERRUPTS();
		record++;
		job->processed++;
		if (rec.item == NULL && rec.value == NULL)
		{
			log_error(job, key, record, rec.error_type, rec.error);
			if (rec.fatal)
				break;
			continue;
		}
		if (!check_item(t, rec.item, rec.value, &item, &k, &etype, &emsg))
		{
			log_error(job, key, record, etype, emsg);
			continue;
		}
		{
			PendingItem *p = &job->batch[job->nbatch];

			p->pk = k.pk;
			p->sk = k.sk;
			p->item = DynImportItemToJsonb(item);
			p->value = item;
			p->size = (int32) DynItemSize(item);
			p->seq = job->nbatch++;
			job->imported++;
		}
		if (job->nbatch == IMPORT_BATCH)
		{
			flush_batch(job, t);
			MemoryContextSwitchTo(old);
			MemoryContextReset(rec_cxt);
			MemoryContextSwitchTo(rec_cxt);
			if (job->processed % 10000 < IMPORT_BATCH)
				pgstat_report_activity(STATE_RUNNING,
									   psprintf("dynindex import %lld: %lld records of object %s",
												(long long) job->id, (long long) record, key));
		}
	}
	flush_batch(job, t);
	bytes = DynImportBytes(in);
	DynImportClose(in);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(rec_cxt);
	DynObjReaderClose(r);
	return bytes;
}

/* ---------------------------------------------------------------- indexes */

/* What dynindex._import_index_entry keeps between calls of one statement. */
typedef struct EntryState
{
	DynTable   *t;
	DynIndex   *idx;
	TupleDesc	desc;
} EntryState;

/* Add one attribute of a stored item to a map, if the item has it. */
static void
add_attribute(DynValue *map, Jsonb *stored, const char *name)
{
	JsonbValue	v;
	const char *err = NULL;
	DynValue   *val;

	if (name == NULL || DynMapGetStr(map, name) != NULL ||
		getKeyJsonValueFromContainer(&stored->root, name, strlen(name), &v) == NULL)
		return;
	val = DynValueFromJsonb(&v, &err);
	if (val)
		DynMapAppend(map, name, strlen(name), val);
}

/*
 * The attributes of a stored item an index entry needs (the table's key, the
 * index's key, the INCLUDE attributes): reading those alone is much cheaper
 * than the whole item, and the entry is the same (DynIndexProject keeps only
 * them; an ALL projection's entry is the stored item itself).
 */
static DynValue *
needed_attributes(EntryState *st, Jsonb *stored)
{
	DynTable   *t = st->t;
	DynIndex   *idx = st->idx;
	DynValue   *map;

	map = DynMakeMap(4 + idx->nnonkey);
	add_attribute(map, stored, t->hash.name);
	if (t->has_range)
		add_attribute(map, stored, t->range.name);
	for (int i = 0; i < idx->nhash; i++)
		add_attribute(map, stored, idx->hash[i].name);
	for (int i = 0; i < idx->nrange; i++)
		add_attribute(map, stored, idx->range[i].name);
	if (idx->projection == DYN_PROJ_INCLUDE)
		for (int i = 0; i < idx->nnonkey; i++)
			add_attribute(map, stored, idx->nonkey[i]);
	return map;
}

PG_FUNCTION_INFO_V1(dynindex_import_index_entry);

/*
 * dynindex._import_index_entry(table, index, item, size) -> (ipk, isk, size, entry):
 * the entry of an item in a global secondary index, or NULL when the item is
 * not in it (sparse) or its key is too large for a btree entry (left out, as
 * the worker and DynIndexesBuildFrom leave it out).  The import builds each
 * GSI with one INSERT ... SELECT of these, sorted by the index key, so that
 * the entries go into the btree in order (src/exchange/import.c).
 */
Datum
dynindex_import_index_entry(PG_FUNCTION_ARGS)
{
	EntryState *st = fcinfo->flinfo->fn_extra;
	DynValue   *item;
	Jsonb	   *stored;
	bytea	   *ipk;
	bytea	   *isk;
	DynValue   *entry;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	if (st == NULL)
	{
		char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
		char	   *index = text_to_cstring(PG_GETARG_TEXT_PP(1));
		TupleDesc	desc;
		DynTable   *t;

		if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "dynindex._import_index_entry must return a record");
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		t = DynCatalogGetTableUnchecked(table);
		SPI_finish();
		if (t == NULL)
			ereport(ERROR, (errmsg("dynindex: no table \"%s\"", table)));
		st = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(EntryState));
		st->t = t;
		for (int i = 0; i < t->nindexes; i++)
			if (t->indexes[i].is_global && strcmp(t->indexes[i].name, index) == 0)
				st->idx = &t->indexes[i];
		if (st->idx == NULL)
			ereport(ERROR, (errmsg("dynindex: table \"%s\" has no global secondary index \"%s\"", table, index)));
		{
			MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

			st->desc = BlessTupleDesc(CreateTupleDescCopy(desc));
			MemoryContextSwitchTo(old);
		}
		fcinfo->flinfo->fn_extra = st;
	}
	stored = PG_GETARG_JSONB_P(2);
	item = needed_attributes(st, stored);
	if (!DynIndexEntryKey(st->t, st->idx, item, &ipk, &isk))
		PG_RETURN_NULL();		/* sparse */
	values[0] = PointerGetDatum(ipk);
	values[1] = PointerGetDatum(isk);
	if (st->idx->projection == DYN_PROJ_ALL && !PG_ARGISNULL(3))
	{
		/* the entry is the item itself */
		values[2] = PG_GETARG_DATUM(3);
		values[3] = JsonbPGetDatum(stored);
	}
	else
	{
		entry = DynIndexProject(st->t, st->idx, item);
		values[2] = Int32GetDatum((int32) DynItemSize(entry));
		values[3] = JsonbPGetDatum(DynItemToJsonb(entry));
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(st->desc, values, nulls)));
}

/*
 * Run an INSERT into a relation of our own (a new GSI's storage) with its
 * indexes dropped first and built again after it: a sort-based CREATE INDEX
 * is much faster than inserting a million entries into each btree.  The
 * definitions are read back from the catalog (pg_get_constraintdef,
 * pg_get_indexdef), so the indexes are the same as before, names included.
 */
static void
insert_without_indexes(const char *relation, const char *insert)
{
	List	   *creates;
	ListCell   *lc;

	if (DynStorageIsDistributed(relation))
	{
		if (SPI_execute(insert, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not build a global secondary index");
		return;
	}
	creates = DynImportDropIndexes(relation);
	if (SPI_execute(insert, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not build a global secondary index");
	foreach(lc, creates)
		if (SPI_execute(lfirst(lc), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not build an index of %s", relation);
}

/*
 * The statement that fills a GSI's storage from the table's: each item's
 * entry (dynindex._import_index_entry); entries whose
 * keys cannot fit a btree entry are left out, as the worker leaves them out.
 */
static char *
gsi_insert_sql(DynTable *t, DynIndex *idx)
{
	return psprintf("INSERT INTO %s (ipk, isk, pk, sk, size, item) "
					"SELECT (x.e).ipk, (x.e).isk, x.pk, x.sk, (x.e).size, (x.e).entry "
					"FROM (SELECT s.pk, s.sk, dynindex._import_index_entry(%s, %s, s.item, s.size) AS e "
					"      FROM %s s OFFSET 0) x "
					"WHERE x.e IS NOT NULL AND octet_length((x.e).ipk) + octet_length((x.e).isk) "
					"+ octet_length(x.pk) + octet_length(x.sk) <= 2600",
					idx->storage, quote_literal_cstr(t->name), quote_literal_cstr(idx->name),
					t->storage);
}

/* Fill a GSI's storage from the table's (its btrees are not there: built after). */
static void
gsi_from_table(DynTable *t, DynIndex *idx)
{
	if (SPI_execute(gsi_insert_sql(t, idx), false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not build a global secondary index");
}

/* Index builds sort within this much memory each, spilling to disk beyond it: memory stays flat. */
static void
set_build_memory(void)
{
	if (SPI_execute("SET LOCAL maintenance_work_mem = '64MB'", false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not set maintenance_work_mem");
}

/*
 * Build the new table's secondary indexes after the INSERT path (the bulk
 * path builds its btrees as tasks, import_bulk.c): one INSERT ... SELECT per
 * GSI from the table's storage into its storage with its btrees dropped,
 * then the btrees built.  A table with LSIs (an ImportTable request has
 * none: TableCreationParameters has no LocalSecondaryIndexes) goes through
 * DynIndexesBuildFrom.
 */
static void
build_indexes(DynTable *t)
{
	for (int i = 0; i < t->nindexes; i++)
		if (!t->indexes[i].is_global)
		{
			DynIndexesBuildFrom(t, t->storage);
			return;
		}
	set_build_memory();
	for (int i = 0; i < t->nindexes; i++)
		insert_without_indexes(t->indexes[i].storage, gsi_insert_sql(t, &t->indexes[i]));
}

/* ---------------------------------------------------------------- the job */

/* Begin a transaction of the job (SPI connected, a snapshot, writes to storage allowed). */
static void
begin_step(void)
{
	SetCurrentStatementStartTimestamp();	/* now() in a background worker */
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	DynStorageWritesBegin();
	DynRequestOperation = "ImportTable";	/* the table is CREATING: only its import sees it */
	DynCatalogRevalidate();
}

/* Commit a transaction of the job. */
static void
end_step(void)
{
	DynStorageWritesEnd();
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/* Collect an object key of the listing (not "directories", never the manifest of a failed listing). */
static void
collect_key(const char *key, int64 size, void *arg)
{
	KeyList    *kl = arg;
	size_t		len = strlen(key);

	if (len > 0 && key[len - 1] == '/')
		return;					/* a folder marker */
	kl->n++;
	if (kl->n <= IMPORT_MAX_OBJECTS)
	{
		MemoryContext old = MemoryContextSwitchTo(kl->cxt);

		kl->keys = lappend(kl->keys, pstrdup(key));
		MemoryContextSwitchTo(old);
	}
}

/* Read the settings of an import from its request. */
static void
job_settings(ImportJob *job, DynTable *t)
{
	JsonbContainer *r = &job->request->root;
	char	   *s;
	JsonbValue *csv = NULL;
	JsonbValue *opts = RqGet(r, "InputFormatOptions");

	s = RqGetString(r, "InputFormat");
	if (s == NULL || !DynImportFormatFromName(s, &job->format))
		elog(ERROR, "import %lld has no valid InputFormat", (long long) job->id);
	s = RqGetString(r, "InputCompressionType");
	if (s == NULL || !DynImportCompressionFromName(s, &job->compression))
		job->compression = DYN_IMPORT_NONE;
	memset(&job->csv, 0, sizeof(job->csv));
	job->csv.delimiter = ',';
	if (opts && opts->type == jbvBinary)
		csv = RqGet(opts->val.binary.data, "Csv");
	if (csv && csv->type == jbvBinary)
	{
		JsonbValue *hl = RqGet(csv->val.binary.data, "HeaderList");
		char	   *d = RqGetString(csv->val.binary.data, "Delimiter");

		if (d && d[0])
			job->csv.delimiter = d[0];
		if (hl)
		{
			int			n;
			JsonbValue *elems = RqArrayElems(hl, &n);

			job->csv.nheader = n;
			job->csv.header = palloc(sizeof(char *) * Max(n, 1));
			for (int i = 0; i < n; i++)
			{
				/* ImportTable refuses a null name (api/imports.c); a job stored before that fails */
				if (elems[i].type != jbvString)
					elog(ERROR, "import %lld has a HeaderList element that is not a string", (long long) job->id);
				job->csv.header[i] = pnstrdup(elems[i].val.string.val, elems[i].val.string.len);
			}
		}
	}
	/* CSV: key attributes (table and indexes) take their defined types */
	{
		JsonbIterator *it = JsonbIteratorInit(&t->attribute_definitions->root);
		JsonbValue	v;
		JsonbIteratorToken tok;
		int			cap = 8;

		job->csv.key_names = palloc(sizeof(char *) * cap);
		job->csv.key_types = palloc(sizeof(char *) * cap);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok != WJB_ELEM || v.type != jbvBinary)
				continue;
			if (job->csv.nkeys == cap)
			{
				cap *= 2;
				job->csv.key_names = repalloc(job->csv.key_names, sizeof(char *) * cap);
				job->csv.key_types = repalloc(job->csv.key_types, sizeof(char *) * cap);
			}
			job->csv.key_names[job->csv.nkeys] = RqGetString(v.val.binary.data, "AttributeName");
			job->csv.key_types[job->csv.nkeys] = RqGetString(v.val.binary.data, "AttributeType");
			job->csv.nkeys++;
		}
	}
}

/*
 * Read the import's row (locked when lock: the first and last steps of the
 * job): false when it is not IN_PROGRESS (nothing to do).
 */
static bool
read_import(ImportJob *job, bool lock)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(job->id)};
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;

	if (SPI_execute_with_args(psprintf("SELECT import_arn, table_name, request, status "
									   "FROM dynindex.imports WHERE import_id = $1%s", lock ? " FOR UPDATE" : ""),
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read import %lld", (long long) job->id);
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	if (strcmp(TextDatumGetCString(SPI_getbinval(tup, desc, 4, &isnull)), "IN_PROGRESS") != 0)
		return false;
	job->arn = MemoryContextStrdup(TopMemoryContext, TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull)));
	job->table = MemoryContextStrdup(TopMemoryContext, TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull)));
	{
		Jsonb	   *jb = DatumGetJsonbP(SPI_getbinval(tup, desc, 3, &isnull));

		job->request = MemoryContextAlloc(TopMemoryContext, VARSIZE(jb));
		memcpy(job->request, jb, VARSIZE(jb));
	}
	return true;
}

/* The import's table, CREATING: NULL if it is gone. */
static DynTable *
import_table(ImportJob *job)
{
	DynTable   *t = DynCatalogGetTableUnchecked(job->table);

	return (t && t->importing) ? t : NULL;
}

/* Fail the import from inside the job: "<FailureCode>: <message>". */
pg_noreturn static void
import_failure(const char *code, const char *msg)
{
	ereport(ERROR, (errcode(ERRCODE_IO_ERROR), errmsg("%s: %s", code, msg)));
	pg_unreachable();
}

/* CPU seconds (user + system) of this process so far (the job's log line). */
static double
process_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* ---------------------------------------------------------------- tasks */

/* The application_name of an import's helper process (DynImportHelp). */
static char *
helper_name(int64 id)
{
	return psprintf("dynindex import %lld helper", (long long) id);
}

/*
 * The import's work is a list of tasks (dynindex.import_tasks): its objects,
 * then (bulk path) the btrees to build and the constraints to attach to them
 * (import_bulk.c).  The job's process and a helper
 * process (DynImportHelp) take them one at a time, each in a transaction of
 * its own that marks it done, so the objects load two at a time and the
 * btrees build two at a time; a task's row stays locked while it runs, and a
 * crash leaves it not done for the next process.
 */
typedef struct ImportTask
{
	int			task_no;
	char	   *kind;			/* "object" to load, "table_index" or "index" to build, "constraint" to attach */
	char	   *target;			/* the object's key, or the btree's relation */
	char	   *statement;		/* a btree, a constraint: the statement that makes it */
} ImportTask;

/*
 * Take the next task not done and not taken (SKIP LOCKED: the other process's
 * is passed over; the btrees wait for every object, the constraints for
 * every btree; both reads go through the index of the tasks not done, so a
 * claim costs the same at the 50,000th object as at the first).  False when
 * none can be taken now, *pending then telling whether some are not done
 * (taken by the other process; never when the import is no longer
 * IN_PROGRESS).
 */
static bool
claim_task(int64 id, ImportTask *task, bool *pending)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};
	bool		isnull;
	const char *in_progress = "EXISTS (SELECT 1 FROM dynindex.imports i WHERE i.import_id = $1 AND i.status = 'IN_PROGRESS')";

	if (SPI_execute_with_args(psprintf("SELECT t.task_no, t.kind, t.target, t.statement "
									   "FROM dynindex.import_tasks t WHERE t.import_id = $1 AND t.done_by IS NULL "
									   "AND NOT EXISTS (SELECT 1 FROM dynindex.import_tasks o WHERE o.import_id = $1 "
									   "AND o.task_no < t.task_no AND o.kind <> t.kind AND o.done_by IS NULL) AND %s "
									   "ORDER BY t.task_no LIMIT 1 FOR UPDATE OF t SKIP LOCKED", in_progress),
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tasks of import %lld", (long long) id);
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		task->task_no = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		task->kind = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
		task->target = TextDatumGetCString(SPI_getbinval(tup, desc, 3, &isnull));
		task->statement = SPI_getvalue(tup, desc, 4);
		return true;
	}
	if (SPI_execute_with_args(psprintf("SELECT EXISTS (SELECT 1 FROM dynindex.import_tasks WHERE import_id = $1 "
									   "AND done_by IS NULL) AND %s", in_progress),
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tasks of import %lld", (long long) id);
	*pending = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return false;
}

/* Mark a task done by this transaction (for an object: the xmin of its rows). */
static void
task_done(int64 id, int task_no)
{
	Oid			types[3] = {INT8OID, INT4OID, XIDOID};
	Datum		args[3] = {Int64GetDatum(id), Int32GetDatum(task_no), TransactionIdGetDatum(GetTopTransactionId())};

	if (SPI_execute_with_args("UPDATE dynindex.import_tasks SET done_by = $3 WHERE import_id = $1 AND task_no = $2",
							  3, types, args, NULL, false, 0) != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not update import %lld", (long long) id);
}

/* Load one object (a task, in its transaction) and add its counts to the import's. */
static void
run_object(ImportJob *job, DynTable *t, DynObjStore *store, const ImportTask *task)
{
	Oid			types[5] = {INT8OID, INT8OID, INT8OID, INT8OID, INT8OID};
	Datum		args[5];
	int64		bytes;

	job_settings(job, t);
	job->processed = job->imported = job->errors = 0;
	job->insert_plan = job->upsert_plan = job->error_plan = NULL;
	job->seen_duplicate = false;
	job->bulk = DynImportBulkEligible(t) ? DynImportBulkBegin(t) : NULL;
	bytes = load_object(job, t, store, task->target);
	if (job->bulk)
		DynImportBulkEnd(job->bulk);
	job->bulk = NULL;
	task_done(job->id, task->task_no);
	/* read committed: the other process's counts, committed meanwhile, are added to */
	args[0] = Int64GetDatum(job->id);
	args[1] = Int64GetDatum(job->processed);
	args[2] = Int64GetDatum(job->imported);
	args[3] = Int64GetDatum(bytes);
	args[4] = Int64GetDatum(job->errors);
	if (SPI_execute_with_args("UPDATE dynindex.imports SET processed_items = processed_items + $2, "
							  "imported_items = imported_items + $3, processed_bytes = processed_bytes + $4, "
							  "error_count = error_count + $5, files_done = files_done + 1 WHERE import_id = $1",
							  5, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update import %lld", (long long) job->id);
}

/* What a process of the job did (its log line). */
typedef struct TaskCounts
{
	int			objects;
	int			indexes;
	TimestampTz loaded;			/* when it found every object loaded (0: not yet) */
	double		cpu_loaded;
} TaskCounts;

/* The end of this process's load phase: the first btree it builds, or its last task. */
static void
mark_loaded(TaskCounts *counts)
{
	if (counts->loaded != 0)
		return;
	counts->loaded = GetCurrentTimestamp();
	counts->cpu_loaded = process_cpu_seconds();
}

/*
 * Do the import's tasks until none is left.  The job's process waits for the
 * helper's last ones (it then builds on them, or finishes the import); the
 * helper too, as it may take the btrees after the objects.  False when the
 * table is gone.
 */
static bool
run_tasks(ImportJob *job, const char *bucket, const char *owner, TaskCounts *counts)
{
	for (;;)
	{
		ImportTask	task;
		bool		pending = false;
		DynTable   *t;

		begin_step();
		t = import_table(job);
		if (t == NULL)
		{
			end_step();
			return false;
		}
		if (!claim_task(job->id, &task, &pending))
		{
			end_step();
			if (!pending)
				break;
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 20, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (strcmp(task.kind, "object") == 0)
		{
			pgstat_report_activity(STATE_RUNNING, psprintf("dynindex import %lld: object %d",
														   (long long) job->id, task.task_no));
			run_object(job, t, DynObjStoreOpen(bucket, owner), &task);
			counts->objects++;
		}
		else
		{
			mark_loaded(counts);
			pgstat_report_activity(STATE_RUNNING, psprintf("dynindex import %lld: building the %s of %s",
														   (long long) job->id, task.kind, task.target));
			if (strcmp(task.kind, "constraint") != 0)
			{
				set_build_memory();
				DynImportBulkBuild(job->id, t, task.target, task.statement, gsi_from_table);
				counts->indexes++;
			}
			else if (SPI_execute(task.statement, false, 0) != SPI_OK_UTILITY)
				elog(ERROR, "could not attach a constraint of %s", task.target);
			task_done(job->id, task.task_no);
		}
		end_step();
	}
	mark_loaded(counts);
	return true;
}

/*
 * Record the import's tasks (its first transaction): its objects, listed
 * once, in order — their count is the import's first limit — then, on the
 * bulk path, the btrees it drops for the load.
 */
static void
record_tasks(ImportJob *job, DynTable *t, DynObjStore *store, const char *prefix)
{
	KeyList		kl = {CurrentMemoryContext, NIL, 0};
	ArrayBuildState *keys = initArrayResult(TEXTOID, CurrentMemoryContext, false);
	ListCell   *lc;
	Oid			types[3] = {INT8OID, TEXTARRAYOID, INT4OID};
	Datum		args[3];

	DynObjList(store, prefix ? prefix : "", collect_key, &kl);
	if (kl.n == 0)
		import_failure("InvalidSource", "No objects were found under the given S3KeyPrefix.");
	if (kl.n > IMPORT_MAX_OBJECTS)
		import_failure("LimitExceeded",
					   psprintf("The import source has %d objects; an import reads at most %d.", kl.n, IMPORT_MAX_OBJECTS));
	foreach(lc, kl.keys)
		accumArrayResult(keys, CStringGetTextDatum(lfirst(lc)), false, TEXTOID, CurrentMemoryContext);
	args[0] = Int64GetDatum(job->id);
	args[1] = makeArrayResult(keys, CurrentMemoryContext);
	args[2] = Int32GetDatum(kl.n);
	if (SPI_execute_with_args("INSERT INTO dynindex.import_tasks (import_id, task_no, kind, target) "
							  "SELECT $1, n, 'object', k FROM unnest($2::text[]) WITH ORDINALITY AS u(k, n)",
							  3, types, args, NULL, false, 0) != SPI_OK_INSERT ||
		SPI_execute_with_args("UPDATE dynindex.imports SET files_total = $3 WHERE import_id = $1",
							  3, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update import %lld", (long long) job->id);
	if (DynImportBulkEligible(t))
		DynImportBulkDefer(job->id, t, kl.n + 1);
}

/* Has the import recorded its tasks (a job that resumes)? */
static bool
tasks_recorded(int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};

	if (SPI_execute_with_args("SELECT 1 FROM dynindex.import_tasks WHERE import_id = $1 LIMIT 1",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tasks of import %lld", (long long) id);
	return SPI_processed > 0;
}

/* The store of the import's request: its bucket and owner (kept in cxt). */
static void
request_source(ImportJob *job, MemoryContext cxt, char **bucket, char **owner, char **prefix)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	JsonbValue *src = RqGet(&job->request->root, "S3BucketSource");

	*bucket = RqGetString(src->val.binary.data, "S3Bucket");
	*owner = RqGetString(src->val.binary.data, "S3BucketOwner");
	*prefix = RqGetString(src->val.binary.data, "S3KeyPrefix");
	MemoryContextSwitchTo(old);
}

/* Run an import (the job runner calls it in the job's process). */
void
DynImportRun(int64 id)
{
	ImportJob	job;
	DynTable   *t;
	char	   *bucket;
	char	   *owner;
	char	   *prefix;
	MemoryContext job_cxt = AllocSetContextCreate(TopMemoryContext, "dynindex import job", ALLOCSET_DEFAULT_SIZES);
	TimestampTz started;
	TaskCounts	counts = {0, 0, 0, 0};
	bool		bulk;
	bool		helped;
	int			nobjects;

	memset(&job, 0, sizeof(job));
	job.id = id;
	started = GetCurrentTimestamp();

	/* the first transaction: the tasks (a job resumed finds them recorded) */
	begin_step();
	if (!read_import(&job, true))
	{
		end_step();
		return;
	}
	t = import_table(&job);
	if (t == NULL)
		import_failure("UnknownError", "The table being imported into was deleted.");
	request_source(&job, job_cxt, &bucket, &owner, &prefix);
	if (!tasks_recorded(id))
		record_tasks(&job, t, DynObjStoreOpen(bucket, owner), prefix);
	bulk = DynImportBulkEligible(t);
	end_step();
	/* the bulk path loads and builds in two processes (the INSERT path keeps the objects' order) */
	helped = bulk && DynJobLaunchHelper(MyDatabaseId, id);

	if (!run_tasks(&job, bucket, owner, &counts))
		import_failure("UnknownError", "The table being imported into was deleted.");

	/* the table ACTIVE and the import COMPLETED: one commit, every task done */
	begin_step();
	if (!read_import(&job, true))
	{
		end_step();
		return;
	}
	t = import_table(&job);
	if (t == NULL)
		import_failure("UnknownError", "The table being imported into was deleted.");
	{
		Oid			types[2] = {INT8OID, TEXTOID};
		Datum		args[2] = {Int64GetDatum(id), CStringGetTextDatum(t->name)};
		bool		isnull;

		if (SPI_execute_with_args("SELECT count(*) FILTER (WHERE kind = 'object'), count(*) FILTER (WHERE done_by IS NULL) "
								  "FROM dynindex.import_tasks WHERE import_id = $1",
								  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the tasks of import %lld", (long long) id);
		nobjects = (int) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)) != 0)
			elog(ERROR, "import %lld has tasks not done", (long long) id);
		if (!bulk)
		{
			pgstat_report_activity(STATE_RUNNING, psprintf("dynindex import %lld: building indexes", (long long) id));
			build_indexes(t);
		}
		if (SPI_execute_with_args("UPDATE dynindex.tables SET options = options - 'Importing' WHERE table_name = $2",
								  2, types, args, NULL, false, 0) != SPI_OK_UPDATE ||
			SPI_execute_with_args("UPDATE dynindex.imports SET status = 'COMPLETED', end_time = clock_timestamp() "
								  "WHERE import_id = $1", 2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not complete import %lld", (long long) id);
	}
	DynCatalogChanged();
	end_step();
	{
		long		secs;
		int			usecs;
		long		bsecs;
		int			busecs;

		TimestampDifference(started, counts.loaded, &secs, &usecs);
		TimestampDifference(counts.loaded, GetCurrentTimestamp(), &bsecs, &busecs);
		ereport(LOG, (errmsg("dynindex: import %lld completed: %d objects loaded in %ld.%03d s (CPU %.1f s), indexes built in %ld.%03d s (CPU %.1f s); "
							 "this process loaded %d objects and built %d indexes, %s",
							 (long long) id, nobjects, secs, usecs / 1000, counts.cpu_loaded, bsecs, busecs / 1000,
							 process_cpu_seconds() - counts.cpu_loaded, counts.objects, counts.indexes,
							 helped ? "a helper the rest" : "no helper")));
	}
	MemoryContextDelete(job_cxt);
}

/*
 * The import's second process (src/worker/jobs.c, started by DynImportRun):
 * takes the import's tasks as the job's process does, until none is left.
 * It stops on any error (the job's process then does the task it was doing)
 * and fails nothing.
 */
void
DynImportHelp(int64 id)
{
	ImportJob	job;
	char	   *bucket;
	char	   *owner;
	char	   *prefix;
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "dynindex import helper", ALLOCSET_DEFAULT_SIZES);
	TaskCounts	counts = {0, 0, 0, 0};

	memset(&job, 0, sizeof(job));
	job.id = id;
	pgstat_report_appname(helper_name(id));
	begin_step();
	if (!read_import(&job, false))
	{
		end_step();
		return;
	}
	request_source(&job, cxt, &bucket, &owner, &prefix);
	end_step();
	(void) run_tasks(&job, bucket, owner, &counts);
	ereport(LOG, (errmsg("dynindex: import %lld helper done: loaded %d objects and built %d indexes (CPU %.1f s, %.1f s loading)",
						 (long long) id, counts.objects, counts.indexes, process_cpu_seconds(), counts.cpu_loaded)));
	MemoryContextDelete(cxt);
}

/*
 * End the import's helper processes: a failed import does not wait for the
 * object one of them is loading (its locks would hold the table's drop).
 */
static void
stop_helpers(int64 id)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(helper_name(id))};

	if (SPI_execute_with_args("SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity "
							  "WHERE application_name = $1 AND pid <> pg_catalog.pg_backend_pid()",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not end the helper of import %lld", (long long) id);
}

/*
 * Fail an import: the table it created is dropped (with its indexes), and the
 * import is FAILED with the code and message ("<FailureCode>: <message>", or
 * a message alone: UnknownError).
 */
void
DynImportFail(int64 id, const char *message)
{
	ImportJob	job;
	const char *colon = strstr(message, ": ");
	char	   *code = "UnknownError";
	const char *msg = message;

	if (colon && colon - message < 64 && memchr(message, ' ', colon - message) == NULL)
	{
		code = pnstrdup(message, colon - message);
		msg = colon + 2;
	}
	memset(&job, 0, sizeof(job));
	job.id = id;
	begin_step();
	stop_helpers(id);
	if (read_import(&job, true))
	{
		DynTable   *t = import_table(&job);
		Oid			types[4] = {INT8OID, TEXTOID, TEXTOID, TEXTOID};
		Datum		args[4] = {Int64GetDatum(id), CStringGetTextDatum(code), CStringGetTextDatum(msg),
		CStringGetTextDatum(job.table)};

		if (t)
		{
			if (SPI_execute_with_args("DELETE FROM dynindex.tables WHERE table_name = $4 AND options ? 'Importing'",
									  4, types, args, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not drop the table of import %lld", (long long) id);
			DynStorageDropTable(t->storage);
			for (int i = 0; i < t->nindexes; i++)
				DynStorageDropTable(t->indexes[i].storage);
			DynCatalogChanged();
		}
		if (SPI_execute_with_args("UPDATE dynindex.imports SET status = 'FAILED', failure_code = $2, "
								  "failure_message = $3, end_time = clock_timestamp() WHERE import_id = $1",
								  4, types, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not fail import %lld", (long long) id);
	}
	end_step();
}
