/*
 * pitr.c — point-in-time recovery: UpdateContinuousBackups,
 * DescribeContinuousBackups, RestoreTableToPointInTime, and the SQL entry
 * point dynindex.item_history.
 *
 * The history itself is kept by the write path (src/history/): with PITR on,
 * every write records the state it supersedes with its commit stamp.  A
 * restore to T creates the target table as RestoreTableFromBackup does (the
 * source's current definition with the request's overrides, through
 * CreateTable's code), fills it with the items as of T in one statement
 * (history/scan.c) and builds its secondary indexes in bulk, all in the
 * request's transaction.  A table deleted with PITR on stays restorable
 * (by SourceTableArn) up to its deletion until its window closes.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "history/history.h"
#include "indexes/indexes.h"
#include "security/security.h"
#include "write/write.h"

/* ---------------------------------------------------------------- schemas */

static const char *const billing_enum[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};

static const RqField table_name_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablename = true},
	{0}
};

static const RqField pitr_spec_fields[] = {
	{.name = "PointInTimeRecoveryEnabled",.type = RQ_BOOLEAN,.notnull = true},
	{.name = "RecoveryPeriodInDays",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 35},
	{0}
};

static const RqField update_continuous_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablename = true},
	{.name = "PointInTimeRecoverySpecification",.type = RQ_STRUCT,.structname = "PointInTimeRecoverySpecification",
	.fields = pitr_spec_fields,.notnull = true},
	{0}
};

/* the override structs' members are CreateTable's, filled in by DynBackupsRestoreSchema() */
static RqField restore_fields[] = {
	{.name = "SourceTableArn",.type = RQ_STRING,.minlen = 1,.maxlen = 1024},
	{.name = "SourceTableName",.type = RQ_STRING,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "TargetTableName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "UseLatestRestorableTime",.type = RQ_BOOLEAN},
	{.name = "RestoreDateTime",.type = RQ_ANY},
	{.name = "BillingModeOverride",.type = RQ_STRING,.enumvals = billing_enum},
	{.name = "GlobalSecondaryIndexOverride",.type = RQ_LIST,.elem = &DynGsiElemField},
	{.name = "LocalSecondaryIndexOverride",.type = RQ_LIST,.elem = &DynLsiElemField},
	{.name = "ProvisionedThroughputOverride",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",
	.fields = NULL},
	{.name = "OnDemandThroughputOverride",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = NULL},
	{.name = "SSESpecificationOverride",.type = RQ_STRUCT,.structname = "SSESpecification",.fields = NULL},
	{0}
};

/* ---------------------------------------------------------------- helpers */

/* Run a query returning one jsonb (or none: NULL). */
static Jsonb *
query_jsonb(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls)
{
	bool		isnull;
	Datum		d;

	if (SPI_execute_with_args(sql, nargs, types, args, nulls, false, 0) < 0)
		elog(ERROR, "could not run a point-in-time recovery query");
	if (SPI_processed == 0)
		return NULL;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? NULL : DatumGetJsonbPCopy(d);
}

/* The table an UpdateContinuousBackups / DescribeContinuousBackups names: TableNotFoundException if missing. */
static DynTable *
named_table(const char *name)
{
	DynTable   *t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_TABLE_NOT_FOUND, "Table not found: %s", name);
	return t;
}

/*
 * The ContinuousBackupsDescription of a table: PITR ENABLED with its period
 * and window (epoch seconds, milliseconds: the earliest rounded up, the
 * latest down, so that both are restorable), or DISABLED.
 */
static Jsonb *
continuous_description(DynTable *t)
{
	TimestampTz earliest;
	TimestampTz latest;
	Oid			types[3] = {INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum		args[3];
	char		nulls[4] = "   ";

	if (DynHistoryWindow(t, &earliest, &latest))
	{
		args[0] = Int32GetDatum(t->pitr.days);
		args[1] = TimestampTzGetDatum(earliest);
		args[2] = TimestampTzGetDatum(Max(latest, earliest));
	}
	else
		nulls[0] = nulls[1] = nulls[2] = 'n';
	return query_jsonb("SELECT jsonb_build_object('ContinuousBackupsDescription', jsonb_build_object("
					   "'ContinuousBackupsStatus', 'ENABLED', 'PointInTimeRecoveryDescription', "
					   "CASE WHEN $1 IS NULL THEN jsonb_build_object('PointInTimeRecoveryStatus', 'DISABLED') "
					   "ELSE jsonb_build_object('PointInTimeRecoveryStatus', 'ENABLED', 'RecoveryPeriodInDays', $1, "
					   "'EarliestRestorableDateTime', round(ceil(extract(epoch FROM $2) * 1000) / 1000, 3), "
					   "'LatestRestorableDateTime', round(greatest(ceil(extract(epoch FROM $2) * 1000), "
					   "  floor(extract(epoch FROM $3) * 1000)) / 1000, 3)) END))",
					   3, types, args, nulls);
}

/* ---------------------------------------------------------------- operations */

/* DescribeContinuousBackups */
Jsonb *
DynDescribeContinuousBackups(Jsonb *req)
{
	RqValidate(req, table_name_fields);
	return continuous_description(named_table(RqGetString(&req->root, "TableName")));
}

/*
 * UpdateContinuousBackups: enable PITR (RecoveryPeriodInDays, default 35,
 * also changes the period of an enabled table) or disable it (its history
 * is dropped).
 */
Jsonb *
DynUpdateContinuousBackups(Jsonb *req)
{
	JsonbValue *spec;
	DynTable   *t;
	char	   *name;

	RqValidate(req, update_continuous_fields);
	name = RqGetString(&req->root, "TableName");
	t = named_table(name);
	spec = RqGet(&req->root, "PointInTimeRecoverySpecification");
	if (RqGetBool(spec->val.binary.data, "PointInTimeRecoveryEnabled", false))
		DynHistoryEnable(t, (int) RqGetInt(spec->val.binary.data, "RecoveryPeriodInDays", 35));
	else
		DynHistoryDisable(t);
	CommandCounterIncrement();
	DynCatalogRevalidate();
	return continuous_description(named_table(t->name));
}

/* A restore source: a live table, or a table deleted with PITR on. */
typedef struct RestoreSource
{
	char	   *name;
	char	   *arn;
	char	   *storage;
	char	   *history;
	Jsonb	   *definition;
	TimestampTz earliest;
	TimestampTz latest;
} RestoreSource;

/* The latest deleted table of an ARN whose window is open; false if none. */
static bool
deleted_source(const char *arn, RestoreSource *src)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(arn)};
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	td;
	int			days;

	if (!DynCatalogHasPitr())
		return false;
	if (SPI_execute_with_args("SELECT table_name, history, kept_storage, definition, recovery_days, enabled_at, deleted_at "
							  "FROM dynindex.pitr WHERE table_arn = $1 AND deleted_at IS NOT NULL "
							  "ORDER BY deleted_at DESC LIMIT 1", 1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the deleted tables with point-in-time recovery");
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	src->name = SPI_getvalue(tup, td, 1);
	src->arn = pstrdup(arn);
	src->history = SPI_getvalue(tup, td, 2);
	src->storage = SPI_getvalue(tup, td, 3);
	src->definition = DatumGetJsonbPCopy(SPI_getbinval(tup, td, 4, &isnull));
	days = DatumGetInt32(SPI_getbinval(tup, td, 5, &isnull));
	src->earliest = Max(DatumGetTimestampTz(SPI_getbinval(tup, td, 6, &isnull)),
						GetCurrentTimestamp() - (TimestampTz) days * USECS_PER_DAY);
	src->latest = DatumGetTimestampTz(SPI_getbinval(tup, td, 7, &isnull));
	return src->storage != NULL && src->definition != NULL;
}

/* RestoreDateTime (epoch seconds, to the microsecond) as a timestamp. */
static TimestampTz
restore_time(JsonbValue *v)
{
	Numeric		usecs;
	Numeric		million = int64_to_numeric(USECS_PER_SEC);
	Numeric		low = int64_to_numeric(-1000000000000LL);
	Numeric		high = int64_to_numeric(1000000000000LL);

	if (v->type != jbvNumeric)
		DynError(DYN_ERR_SERIALIZATION, "class java.lang.String can not be converted to milliseconds since epoch");
	/* far outside any window (and outside int64 microseconds) */
	if (DatumGetBool(DirectFunctionCall2(numeric_le, NumericGetDatum(v->val.numeric), NumericGetDatum(low))) ||
		DatumGetBool(DirectFunctionCall2(numeric_ge, NumericGetDatum(v->val.numeric), NumericGetDatum(high))))
		DynError(DYN_ERR_INVALID_RESTORE_TIME,
				 "RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime");
	usecs = DatumGetNumeric(DirectFunctionCall2(numeric_mul, NumericGetDatum(v->val.numeric), NumericGetDatum(million)));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(usecs))) -
		(TimestampTz) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
}

/* RestoreTableToPointInTime */
Jsonb *
DynRestoreTableToPointInTime(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *source_name;
	char	   *source_arn;
	char	   *target;
	JsonbValue *when;
	bool		latest;
	RestoreSource src;
	TimestampTz at;
	DynTable   *t;
	Jsonb	   *create;
	Jsonb	   *summary;

	RqValidate(req, DynBackupsRestoreSchema(restore_fields));
	source_name = RqGetString(r, "SourceTableName");
	source_arn = RqGetString(r, "SourceTableArn");
	target = RqGetString(r, "TargetTableName");
	when = RqGet(r, "RestoreDateTime");
	latest = RqGetBool(r, "UseLatestRestorableTime", false);
	if (source_name == NULL && source_arn == NULL)
		DynValidationError("Either SourceTableArn or SourceTableName must be specified");
	if (source_name != NULL && source_arn != NULL)
		DynValidationError("Only one of SourceTableArn or SourceTableName can be specified");
	if (latest && when != NULL)
		DynValidationError("Only one of RestoreDateTime or UseLatestRestorableTime can be specified");
	if (!latest && when == NULL)
		DynValidationError("Either RestoreDateTime or UseLatestRestorableTime must be specified");

	/* the admin right on the source (and CreateTable's right: dynindex.api checked it) */
	memset(&src, 0, sizeof(src));
	src.name = source_name ? source_name : DynCatalogTableName(source_arn);
	DynCatalogCheckTableRight(src.name, DYN_ACCESS_ADMIN);
	{
		DynTable   *s = DynCatalogGetTable(src.name);

		if (s != NULL)
		{
			if (!DynHistoryWindow(s, &src.earliest, &src.latest))
				DynError(DYN_ERR_POINT_IN_TIME_RECOVERY_UNAVAILABLE,
						 "Point in time recovery is not enabled for table '%s'", s->name);
			/* copies: creating the target drops the catalog cache holding s */
			src.arn = pstrdup(DynTableArn(s->name));
			src.storage = pstrdup(s->storage);
			src.history = DynHistoryRelation(s->num);
			src.definition = DynBackupsTableDefinition(s->name);
			if (src.definition == NULL)
				DynError(DYN_ERR_SOURCE_TABLE_NOT_FOUND, "Source table not found: %s", src.name);
		}
		else if (source_arn == NULL || !deleted_source(DynTableArn(src.name), &src))
			DynError(DYN_ERR_SOURCE_TABLE_NOT_FOUND, "Source table not found: %s",
					 source_name ? source_name : source_arn);
	}
	if (latest)
		at = src.latest;
	else
	{
		at = restore_time(when);
		if (at < src.earliest - (src.earliest % 1000) || at > src.latest)
			DynError(DYN_ERR_INVALID_RESTORE_TIME,
					 "RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime");
		at = Max(at, src.earliest);
	}

	create = DynBackupsRestoreRequest(src.definition, target, r);
	{
		Oid			types[2] = {TEXTOID, TIMESTAMPTZOID};
		Datum		args[2] = {CStringGetTextDatum(src.arn), TimestampTzGetDatum(at)};

		summary = query_jsonb("SELECT jsonb_build_object('RestoreSummary', jsonb_build_object("
							  "'SourceTableArn', $1::text, 'RestoreDateTime', round(extract(epoch FROM $2), 3), "
							  "'RestoreInProgress', false))", 2, types, args, NULL);
	}
	t = DynTableCreate(create, summary, true);
	DynHistoryRestoreInto(src.storage, src.history, at, t->storage);
	DynIndexesBuildFrom(t, t->storage);
	return DynBackupsRestoredDescription(t);
}

/* ---------------------------------------------------------------- SQL */

PG_FUNCTION_INFO_V1(dynindex_item_history);

/*
 * dynindex.item_history(table_name text, key jsonb) RETURNS TABLE
 * (valid_from timestamptz, valid_to timestamptz, item jsonb): the recorded
 * versions of one item, oldest first, then the current one (valid_to NULL).
 */
Datum
dynindex_item_history(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name;
	Jsonb	   *keyjson;
	JsonbValue	keyjv;
	DynTable   *t;
	DynKey		key;
	DynSecurityOp sec_op;
	DynSecurityState sec;
	Oid			types[2] = {BYTEAOID, BYTEAOID};
	Datum		args[2];
	MemoryContext oldcxt;
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return (Datum) 0;
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	keyjson = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_OBJECT(keyjson))
		DynValidationError("The provided key element does not match the schema");

	DynCatalogRevalidate();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the admin right on the table; the history is read with the owner's rights */
	DynSecurityEnter("item_history", &sec_op);
	PG_TRY();
	{
		t = DynCatalogGetTableOrNotFound(name);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&sec_op);
	}
	PG_END_TRY();
	if (t->pitr.days == 0)
		DynError(DYN_ERR_POINT_IN_TIME_RECOVERY_UNAVAILABLE,
				 "Point in time recovery is not enabled for table '%s'", t->name);
	keyjv.type = jbvBinary;
	keyjv.val.binary.data = &keyjson->root;
	keyjv.val.binary.len = VARSIZE(keyjson) - VARHDRSZ;
	DynWriteKeyFromMap(t, RqParseItem(&keyjv), &key);

	DynSecurityBeginInternal(&sec);
	args[0] = PointerGetDatum(key.pk);
	args[1] = PointerGetDatum(key.sk);
	if (SPI_execute_with_args(psprintf("WITH h AS (SELECT valid_to, item FROM %s WHERE pk = $1 AND sk = $2), "
									   "c AS (SELECT NULL::timestamptz AS valid_to, "
									   "  (SELECT item FROM %s WHERE pk = $1 AND sk = $2) AS item) "
									   "SELECT lag(valid_to) OVER w, valid_to, item FROM "
									   "  (SELECT * FROM h UNION ALL SELECT * FROM c "
									   "   WHERE c.item IS NOT NULL OR EXISTS (SELECT 1 FROM h)) x "
									   "WINDOW w AS (ORDER BY valid_to NULLS LAST) ORDER BY valid_to NULLS LAST",
									   DynHistoryRelation(t->num), t->storage),
							  2, types, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the item history");
	oldcxt = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		Datum		values[3];
		bool		nulls[3];
		int			c;

		for (c = 0; c < 3; c++)
		{
			values[c] = SPI_getbinval(tup, td, c + 1, &nulls[c]);
			if (!nulls[c])
				values[c] = SPI_datumTransfer(values[c], TupleDescAttr(td, c)->attbyval,
											  TupleDescAttr(td, c)->attlen);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextSwitchTo(oldcxt);
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}
