/*
 * backups.c — on-demand backups: CreateBackup, DescribeBackup, ListBackups,
 * DeleteBackup, RestoreTableFromBackup (point-in-time recovery: pitr.c,
 * which shares the restore's request building).
 *
 * A backup is a row of dynindex.backups (the source table's full definition:
 * keys, attribute definitions, LSIs, GSIs, billing, options, stream, tags, TTL) and
 * an item copy (src/backup/backup.c), both made in the CreateBackup request's
 * transaction.  Its ARN is the table's ARN + "/backup/<id>", the id being
 * DynamoDB's form: 14 digits of epoch milliseconds, '-', 8 hex digits (the
 * milliseconds made larger than every existing backup's, so that ids, which
 * order ListBackups, follow creation).
 *
 * Conflicting backup operations are refused, as DynamoDB refuses them, with
 * BackupInUseException: two CreateBackup of one table at once, or a
 * DeleteBackup while a restore from that backup runs (and the reverse).
 * They use transaction-level advisory locks (class BACKUP_LOCK_CLASS), taken
 * with "try" so that nobody waits.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "api/api.h"
#include "api/request.h"
#include "backup/backup.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "security/security.h"

/* Advisory lock classes: per table (CreateBackup), per backup (Delete / Restore). */
#define BACKUP_LOCK_TABLE 4475214
#define BACKUP_LOCK_BACKUP 4475215

/* ---------------------------------------------------------------- schemas */

static const char *const billing_enum[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};
static const char *const backup_type_filter_enum[] = {"USER", "SYSTEM", "AWS_BACKUP", "ALL", NULL};

static const RqField create_backup_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablename = true},
	{.name = "BackupName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{0}
};

static const RqField backup_arn_fields[] = {
	{.name = "BackupArn",.type = RQ_STRING,.notnull = true,.minlen = 37,.maxlen = 1024},
	{0}
};

static const RqField list_backups_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 100},
	{.name = "TimeRangeLowerBound",.type = RQ_LONG},
	{.name = "TimeRangeUpperBound",.type = RQ_LONG},
	{.name = "ExclusiveStartBackupArn",.type = RQ_STRING,.minlen = 37,.maxlen = 1024},
	{.name = "BackupType",.type = RQ_STRING,.enumvals = backup_type_filter_enum},
	{0}
};

/* the three structs' members are CreateTable's, filled in by DynBackupsRestoreSchema() */
static RqField restore_fields[] = {
	{.name = "TargetTableName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "BackupArn",.type = RQ_STRING,.notnull = true,.minlen = 37,.maxlen = 1024},
	{.name = "BillingModeOverride",.type = RQ_STRING,.enumvals = billing_enum},
	{.name = "GlobalSecondaryIndexOverride",.type = RQ_LIST,.elem = &DynGsiElemField},
	{.name = "LocalSecondaryIndexOverride",.type = RQ_LIST,.elem = &DynLsiElemField},
	{.name = "ProvisionedThroughputOverride",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",
	.fields = NULL},
	{.name = "OnDemandThroughputOverride",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = NULL},
	{.name = "SSESpecificationOverride",.type = RQ_STRUCT,.structname = "SSESpecification",.fields = NULL},
	{0}
};

/*
 * A restore's schema (RestoreTableFromBackup's, RestoreTableToPointInTime's):
 * its override structs get CreateTable's members.
 */
const RqField *
DynBackupsRestoreSchema(RqField *fields)
{
	RqField    *f;

	for (f = fields; f->type != RQ_END; f++)
	{
		if (strcmp(f->name, "ProvisionedThroughputOverride") == 0)
			f->fields = DynThroughputField.fields;
		else if (strcmp(f->name, "OnDemandThroughputOverride") == 0)
			f->fields = DynOnDemandThroughputField.fields;
		else if (strcmp(f->name, "SSESpecificationOverride") == 0)
			f->fields = DynSseSpecificationField.fields;
	}
	return fields;
}

/* ---------------------------------------------------------------- SQL */

/* Epoch seconds with milliseconds, as DynamoDB's timestamps. */
#define EPOCH(x) "round(extract(epoch FROM " x "), 3)"

/* BackupDetails of backup row b ($status: the status to report, or NULL for the stored one). */
#define DETAILS_SQL(status) \
	"jsonb_build_object('BackupArn', b.backup_arn, 'BackupName', b.backup_name, " \
	"'BackupSizeBytes', b.size_bytes, 'BackupStatus', " status ", 'BackupType', b.backup_type, " \
	"'BackupCreationDateTime', " EPOCH("b.created_at") ")"

/* A BackupDescription of backup row b, with definition d. */
#define DESCRIPTION_SQL(status) \
	"jsonb_build_object('BackupDetails', " DETAILS_SQL(status) ", " \
	"'SourceTableDetails', jsonb_strip_nulls(jsonb_build_object(" \
	"  'TableName', b.table_name, 'TableId', b.table_id, 'TableArn', b.table_arn, " \
	"  'TableSizeBytes', b.size_bytes, 'KeySchema', d->'KeySchema', " \
	"  'TableCreationDateTime', " EPOCH("b.table_created_at") ", " \
	"  'ProvisionedThroughput', coalesce(d->'ProvisionedThroughput', '{\"ReadCapacityUnits\": 0, \"WriteCapacityUnits\": 0}'), " \
	"  'ItemCount', b.item_count, 'BillingMode', d->>'BillingMode')), " \
	"'SourceTableFeatureDetails', jsonb_strip_nulls(jsonb_build_object(" \
	"  'LocalSecondaryIndexes', d->'LocalSecondaryIndexes', " \
	"  'GlobalSecondaryIndexes', (SELECT jsonb_agg(g || jsonb_build_object('ProvisionedThroughput', " \
	"      coalesce(g->'ProvisionedThroughput', '{\"ReadCapacityUnits\": 0, \"WriteCapacityUnits\": 0}'))) " \
	"      FROM jsonb_array_elements(d->'GlobalSecondaryIndexes') g), " \
	"  'StreamDescription', d->'StreamSpecification', " \
	"  'TimeToLiveDescription', CASE WHEN d ? 'TimeToLive' THEN jsonb_build_object('TimeToLiveStatus', 'ENABLED', " \
	"      'AttributeName', d #>> '{TimeToLive,AttributeName}') END, " \
	"  'SSEDescription', CASE WHEN d #> '{Options,SSESpecification,Enabled}' = 'true' THEN jsonb_strip_nulls(" \
	"      jsonb_build_object('Status', 'ENABLED', 'SSEType', coalesce(d #>> '{Options,SSESpecification,SSEType}', 'KMS'), " \
	"      'KMSMasterKeyArn', d #>> '{Options,SSESpecification,KMSMasterKeyId}')) END)))"

/*
 * The full definition of a table, from the catalog (its row locked FOR
 * SHARE).  A GSI's OnDemandThroughput is read through to_jsonb(i): its
 * column is new in 0.3, and a database not yet updated has none.
 */
static const char *const definition_sql =
"SELECT jsonb_strip_nulls(jsonb_build_object("
"  'AttributeDefinitions', t.attribute_definitions, 'KeySchema', t.key_schema, 'BillingMode', t.billing_mode, "
"  'ProvisionedThroughput', CASE WHEN t.billing_mode = 'PROVISIONED' THEN "
"      jsonb_build_object('ReadCapacityUnits', t.read_capacity, 'WriteCapacityUnits', t.write_capacity) END, "
"  'LocalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', i.index_name, 'KeySchema', i.key_schema, "
"      'Projection', i.projection) ORDER BY i.position) FROM dynindex.indexes i "
"      WHERE i.table_name = t.table_name AND NOT i.is_global), "
"  'GlobalSecondaryIndexes', (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('IndexName', i.index_name, "
"      'KeySchema', i.key_schema, 'Projection', i.projection, 'ProvisionedThroughput', i.throughput, "
"      'OnDemandThroughput', to_jsonb(i) -> 'on_demand_throughput')) ORDER BY i.position) "
"      FROM dynindex.indexes i WHERE i.table_name = t.table_name AND i.is_global), "
"  'Options', t.options, "
"  'StreamSpecification', (SELECT jsonb_build_object('StreamEnabled', true, 'StreamViewType', s.view_type) "
"      FROM dynindex.streams s WHERE s.table_num = t.num AND s.disabled_at IS NULL), "
"  'Tags', (SELECT jsonb_agg(jsonb_build_object('Key', g.tag_key, 'Value', g.tag_value) ORDER BY g.tag_key) "
"      FROM dynindex.tags g WHERE g.table_name = t.table_name), "
"  'TimeToLive', (SELECT jsonb_build_object('AttributeName', l.attribute_name) FROM dynindex.ttl l "
"      WHERE l.table_name = t.table_name))) "
"FROM dynindex.tables t WHERE t.table_name = $1 FOR SHARE OF t";

/*
 * The CreateTable request of a restore: a definition ($1, as CreateBackup
 * records it) with the overrides ($3 billing, $4 throughput, $5 LSIs, $6 GSIs, $7 SSE, $8
 * on-demand throughput).  An empty index list override means no such
 * indexes; attribute definitions no remaining key uses are left out; a
 * PAY_PER_REQUEST table's GSIs lose their provisioned throughput, a
 * PROVISIONED table and the GSIs of its definition their OnDemandThroughput
 * (the source's members set only: values stored before 0.3 were not checked).  Tags,
 * streams and TTL are not restored (DynamoDB: "You must manually set up
 * ... Tags, Stream settings, Time to Live (TTL) settings" on the restored
 * table).
 */
static const char *const restore_request_sql =
"WITH b AS (SELECT $1::jsonb AS d), "
"p AS (SELECT d, coalesce($3, d->>'BillingMode') AS billing, "
"        nullif(coalesce($5, d->'LocalSecondaryIndexes'), '[]') AS lsis, "
"        nullif(coalesce($6, d->'GlobalSecondaryIndexes'), '[]') AS gsis FROM b) "
"SELECT jsonb_strip_nulls(jsonb_build_object("
"  'TableName', $2::text, "
"  'AttributeDefinitions', (SELECT jsonb_agg(a ORDER BY n) FROM jsonb_array_elements(d->'AttributeDefinitions') "
"      WITH ORDINALITY AS e(a, n) "
"      WHERE a->>'AttributeName' IN (SELECT k->>'AttributeName' FROM jsonb_array_elements(d->'KeySchema') k "
"        UNION ALL SELECT k->>'AttributeName' FROM jsonb_array_elements(coalesce(lsis, '[]') || coalesce(gsis, '[]')) i, "
"          jsonb_array_elements(i->'KeySchema') k)), "
"  'KeySchema', d->'KeySchema', "
"  'BillingMode', billing, "
"  'ProvisionedThroughput', CASE WHEN billing = 'PROVISIONED' THEN coalesce($4, d->'ProvisionedThroughput') END, "
"  'LocalSecondaryIndexes', lsis, "
"  'GlobalSecondaryIndexes', (SELECT jsonb_agg(CASE WHEN billing = 'PAY_PER_REQUEST' THEN g - 'ProvisionedThroughput' "
"      WHEN $6 IS NULL THEN g - 'OnDemandThroughput' ELSE g END) FROM jsonb_array_elements(gsis) g), "
"  'SSESpecification', coalesce($7, d #> '{Options,SSESpecification}'), "
"  'OnDemandThroughput', coalesce($8, CASE WHEN billing = 'PAY_PER_REQUEST' THEN "
"      (SELECT jsonb_object_agg(o.key, o.value) FROM jsonb_each(d #> '{Options,OnDemandThroughput}') o "
"        WHERE jsonb_typeof(o.value) = 'number' AND o.value::numeric >= 1) END), "
"  'TableClass', d #> '{Options,TableClass}')) "
"FROM p";

/* ---------------------------------------------------------------- helpers */

/* Take a transaction advisory lock without waiting; false if another holds it. */
static bool
try_lock(int32 class, const char *name, bool shared)
{
	Oid			types[2] = {INT4OID, TEXTOID};
	Datum		args[2] = {Int32GetDatum(class), CStringGetTextDatum(name)};
	bool		isnull;

	if (SPI_execute_with_args(shared ? "SELECT pg_try_advisory_xact_lock_shared($1, hashtext($2))"
							  : "SELECT pg_try_advisory_xact_lock($1, hashtext($2))",
							  2, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not take a backup lock");
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* BackupInUseException with DynamoDB's description of the conflict. */
static void
backup_in_use(void)
{
	DynError(DYN_ERR_BACKUP_IN_USE,
			 "There is another ongoing conflicting backup control plane operation on the table. "
			 "The backup is either being created, deleted or restored to a table.");
}

/* The BackupDescription of a backup, or NULL if there is no such backup. */
static Jsonb *
backup_description(const char *arn, const char *status)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(arn)};

	return RqQueryJsonb(psprintf("SELECT %s FROM dynindex.backups b, LATERAL (SELECT b.definition AS d) x "
								"WHERE b.backup_arn = $1",
								status ? psprintf(DESCRIPTION_SQL("%s"), quote_literal_cstr(status))
								: DESCRIPTION_SQL("b.status")),
					   1, types, args, NULL);
}

/* The storage relation of a backup's item copy; NULL if there is no such backup. */
static char *
backup_copy(const char *arn)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(arn)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT storage FROM dynindex.backups WHERE backup_arn = $1",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read a backup");
	if (SPI_processed == 0)
		return NULL;
	return TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* The table a backup operation names: TableNotFoundException if missing. */
static DynTable *
source_table(const char *name)
{
	DynTable   *t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_TABLE_NOT_FOUND, "Table not found: %s", name);
	return t;
}

/* ---------------------------------------------------------------- operations */

/* CreateBackup */
Jsonb *
DynCreateBackup(Jsonb *req)
{
	char	   *name;
	char	   *backup_name;
	DynTable   *t;
	Jsonb	   *definition;
	int64		num;
	int64		count;
	int64		bytes;
	char	   *copy;
	bool		isnull;

	RqValidate(req, create_backup_fields);
	name = RqGetString(&req->root, "TableName");
	backup_name = RqGetString(&req->root, "BackupName");
	t = source_table(name);
	if (!try_lock(BACKUP_LOCK_TABLE, t->name, false))
		backup_in_use();

	/*
	 * Lock the catalog row (an UpdateTable or DeleteTable waits for the
	 * backup; a concurrent one makes us wait) and read the definition, then
	 * reload the table as it is now.
	 */
	{
		Oid			types[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(t->name)};

		definition = RqQueryJsonb(definition_sql, 1, types, args, NULL);
		if (definition == NULL)
			DynError(DYN_ERR_TABLE_NOT_FOUND, "Table not found: %s", name);
	}
	t = DynCatalogGetTableForChange(t->name);
	if (t == NULL)
		DynError(DYN_ERR_TABLE_NOT_FOUND, "Table not found: %s", name);

	if (SPI_execute("SELECT nextval('dynindex.backup_num_seq')", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not allocate a backup number");
	num = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	copy = psprintf("%s.b%lld", DYN_BACKUP_SCHEMA, (long long) num);
	DynBackupCopyItems(t->storage, copy, &count, &bytes);

	{
		Oid			types[11] = {TEXTOID, TEXTOID, INT8OID, TEXTOID, TEXTOID, UUIDOID, TEXTOID,
		TIMESTAMPTZOID, INT8OID, INT8OID, JSONBOID};
		Datum		args[11];
		Jsonb	   *details;

		args[0] = CStringGetTextDatum(DynTableArn(t->name));
		args[1] = CStringGetTextDatum(backup_name);
		args[2] = Int64GetDatum(num);
		args[3] = CStringGetTextDatum(copy);
		args[4] = CStringGetTextDatum(t->name);
		args[5] = DirectFunctionCall1(uuid_in, CStringGetDatum(t->table_id));
		args[6] = CStringGetTextDatum(DynTableArn(t->name));
		args[7] = TimestampTzGetDatum(t->created_at);
		args[8] = Int64GetDatum(count);
		args[9] = Int64GetDatum(bytes);
		args[10] = JsonbPGetDatum(definition);
		details = RqQueryJsonb("WITH n AS (SELECT clock_timestamp() AS now), "
							  "i AS (SELECT lpad(greatest(floor(extract(epoch FROM n.now) * 1000)::int8, "
							  "             (SELECT max(left(backup_id, 14)::int8) + 1 FROM dynindex.backups))::text, 14, '0') || '-' || "
							  "             substr(md5(random()::text), 1, 8) AS id, n.now FROM n), "
							  "b AS (INSERT INTO dynindex.backups (backup_arn, backup_id, backup_name, num, storage, "
							  "        created_at, table_name, table_id, table_arn, table_created_at, item_count, "
							  "        size_bytes, definition) "
							  "      SELECT $1 || '/backup/' || i.id, i.id, $2, $3, $4, i.now, $5, $6, $7, $8, $9, $10, $11 "
							  "      FROM i RETURNING *) "
							  "SELECT " DETAILS_SQL("'CREATING'") " FROM b",
							  11, types, args, NULL);
		if (details == NULL)
			elog(ERROR, "could not record a backup");
		return RqWrap("BackupDetails", details);
	}
}

/* DescribeBackup */
Jsonb *
DynDescribeBackup(Jsonb *req)
{
	char	   *arn;
	Jsonb	   *desc;

	RqValidate(req, backup_arn_fields);
	arn = RqGetString(&req->root, "BackupArn");
	DynCatalogCheckBackup(arn);	/* the admin right on the backup's table */
	desc = backup_description(arn, NULL);
	if (desc == NULL)
		DynError(DYN_ERR_BACKUP_NOT_FOUND, "Backup not found: %s", arn);
	return RqWrap("BackupDescription", desc);
}

/* DeleteBackup */
Jsonb *
DynDeleteBackup(Jsonb *req)
{
	char	   *arn;
	char	   *copy;
	Jsonb	   *desc;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];

	RqValidate(req, backup_arn_fields);
	arn = RqGetString(&req->root, "BackupArn");
	DynCatalogCheckBackup(arn);	/* the admin right on the backup's table */
	if (backup_copy(arn) == NULL)
		DynError(DYN_ERR_BACKUP_NOT_FOUND, "Backup not found: %s", arn);
	/* a restore from this backup, or another DeleteBackup of it, is running */
	if (!try_lock(BACKUP_LOCK_BACKUP, arn, false))
		backup_in_use();
	copy = backup_copy(arn);	/* again, under the lock */
	desc = backup_description(arn, "DELETED");
	if (copy == NULL || desc == NULL)
		DynError(DYN_ERR_BACKUP_NOT_FOUND, "Backup not found: %s", arn);
	args[0] = CStringGetTextDatum(arn);
	if (SPI_execute_with_args("DELETE FROM dynindex.backups WHERE backup_arn = $1", 1, types, args, NULL, false, 0)
		!= SPI_OK_DELETE)
		elog(ERROR, "could not delete a backup");
	DynBackupDropCopy(copy);
	return RqWrap("BackupDescription", desc);
}

/* ListBackups */
Jsonb *
DynListBackups(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *lo;
	JsonbValue *hi;
	char	   *table;
	char	   *start;
	char	   *type;
	int64		limit;
	Oid			types[8] = {TEXTOID, NUMERICOID, NUMERICOID, TEXTOID, TEXTOID, INT8OID, BOOLOID, OIDOID};
	Datum		args[8];
	char		nulls[9] = "        ";
	JsonbParseState *st = NULL;
	uint64		shown;
	uint64		i;
	bool		isnull;

	RqValidate(req, list_backups_fields);
	lo = RqGet(r, "TimeRangeLowerBound");
	hi = RqGet(r, "TimeRangeUpperBound");
	table = RqGetString(r, "TableName");
	start = RqGetString(r, "ExclusiveStartBackupArn");
	type = RqGetString(r, "BackupType");
	limit = RqGetInt(r, "Limit", 100);
	if (table)
		DynCatalogCheckTableRight(table, DYN_ACCESS_ADMIN);
	if (table)
		args[0] = CStringGetTextDatum(table);
	else
		nulls[0] = 'n';
	if (lo)
		args[1] = NumericGetDatum(lo->val.numeric);
	else
		nulls[1] = 'n';
	if (hi)
		args[2] = NumericGetDatum(hi->val.numeric);
	else
		nulls[2] = 'n';
	/* USER is the default ("The default setting if no other backup types are specified") */
	args[3] = CStringGetTextDatum(type ? type : "USER");
	if (start)
		args[4] = CStringGetTextDatum(start);
	else
		nulls[4] = 'n';
	args[5] = Int64GetDatum(limit + 1);
	/* only backups of tables the caller administers (docs/security.md) */
	args[6] = BoolGetDatum(DynSecurityIsAccountAdmin(DynSecurityCaller()));
	args[7] = ObjectIdGetDatum(DynSecurityCaller());

	/*
	 * Backups in the order of their ids (creation millisecond first); a page
	 * starts after the id of ExclusiveStartBackupArn, which need not exist
	 * any more.  Lower bound inclusive, upper bound exclusive, as documented.
	 */
	if (SPI_execute_with_args("SELECT " DETAILS_SQL("b.status") " || jsonb_build_object('TableName', b.table_name, "
							  "'TableId', b.table_id, 'TableArn', b.table_arn) "
							  "FROM dynindex.backups b "
							  "WHERE ($1::text IS NULL OR b.table_name = $1) "
							  "AND ($2::numeric IS NULL OR extract(epoch FROM b.created_at) >= $2) "
							  "AND ($3::numeric IS NULL OR extract(epoch FROM b.created_at) < $3) "
							  "AND ($4 = 'ALL' OR b.backup_type = $4) "
							  "AND ($5::text IS NULL OR b.backup_id COLLATE \"C\" > split_part($5, '/backup/', 2)) "
							  "AND ($7 OR EXISTS (SELECT 1 FROM dynindex.table_rights r JOIN pg_catalog.pg_roles g "
							  "ON g.rolname = r.role_name WHERE r.table_name = b.table_name AND r.admin "
							  "AND pg_catalog.pg_has_role($8, g.oid, 'USAGE'))) "
							  "ORDER BY b.backup_id COLLATE \"C\" LIMIT $6",
							  8, types, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list backups");
	shown = Min(SPI_processed, (uint64) limit);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "BackupSummaries");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < shown; i++)
		RqPushJsonb(&st, WJB_ELEM, DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)));
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (SPI_processed > shown)
	{
		Jsonb	   *last = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[shown - 1], SPI_tuptable->tupdesc, 1, &isnull));

		RqPushKey(&st, "LastEvaluatedBackupArn");
		RqPushString(&st, WJB_VALUE, RqGetString(&last->root, "BackupArn"));
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/*
 * A restore turned PROVISIONED keeps the backup's GSIs only if they have
 * their own throughput: an on-demand table's GSIs have none, and DynamoDB
 * then wants the GSIs overridden.
 */
static void
check_gsi_throughput(Jsonb *create)
{
	JsonbValue *gsis = RqGet(&create->root, "GlobalSecondaryIndexes");
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	/* without the table's throughput CreateTable's own message comes first */
	if (gsis == NULL || gsis->type != jbvBinary || RqGet(&create->root, "ProvisionedThroughput") == NULL)
		return;
	it = JsonbIteratorInit(gsis->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM || v.type != jbvBinary)
			continue;
		if (RqGet(v.val.binary.data, "ProvisionedThroughput") == NULL)
			DynValidationError("One or more parameter values were invalid: GlobalSecondaryIndexOverride must be specified for index: %s when BillingModeOverride is PROVISIONED",
							   RqGetString(v.val.binary.data, "IndexName"));
	}
}

/*
 * The CreateTable request restoring definition as table target, with the
 * overrides of the restore request r (RestoreTableFromBackup's, and
 * RestoreTableToPointInTime's: the same members).
 */
Jsonb *
DynBackupsRestoreRequest(Jsonb *definition, const char *target, JsonbContainer *r)
{
	static const char *const overrides[] = {
		"BillingModeOverride", "ProvisionedThroughputOverride", "LocalSecondaryIndexOverride",
		"GlobalSecondaryIndexOverride", "SSESpecificationOverride", "OnDemandThroughputOverride", NULL
	};
	Oid			types[8] = {JSONBOID, TEXTOID, TEXTOID, JSONBOID, JSONBOID, JSONBOID, JSONBOID, JSONBOID};
	Datum		args[8];
	char		nulls[9] = "        ";
	int			i;
	Jsonb	   *create;

	args[0] = JsonbPGetDatum(definition);
	args[1] = CStringGetTextDatum(target);
	for (i = 0; overrides[i]; i++)
	{
		JsonbValue *v = RqGet(r, overrides[i]);

		if (v == NULL)
			nulls[2 + i] = 'n';
		else if (i == 0)
			args[2] = CStringGetTextDatum(RqGetString(r, overrides[i]));
		else
			args[2 + i] = JsonbPGetDatum(JsonbValueToJsonb(v));
	}
	create = RqQueryJsonb(restore_request_sql, 8, types, args, nulls);
	if (create == NULL)
		elog(ERROR, "could not build the restored table's definition");
	if (RqStringIs(r, "BillingModeOverride", "PROVISIONED") && RqGet(r, "GlobalSecondaryIndexOverride") == NULL)
		check_gsi_throughput(create);
	return create;
}

/*
 * The response of a restore: complete, but shown as DynamoDB's is at that
 * moment, CREATING with its restore in progress (DescribeTable then shows
 * it ACTIVE, RestoreInProgress false).
 */
Jsonb *
DynBackupsRestoredDescription(DynTable *t)
{
	Oid			types[1] = {JSONBOID};
	Datum		args[1];

	args[0] = JsonbPGetDatum(DynTableDescription(t, "CREATING", false));
	return RqWrap("TableDescription",
				RqQueryJsonb("SELECT jsonb_set($1, '{RestoreSummary,RestoreInProgress}', 'true')",
							1, types, args, NULL));
}

/* The full definition of a table as CreateBackup records it (its catalog row locked FOR SHARE); NULL if missing. */
Jsonb *
DynBackupsTableDefinition(const char *name)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(name)};

	return RqQueryJsonb(definition_sql, 1, types, args, NULL);
}

/* RestoreTableFromBackup */
Jsonb *
DynRestoreTableFromBackup(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *arn;
	char	   *target;
	char	   *copy;
	Jsonb	   *create;
	Jsonb	   *summary;
	DynTable   *t;

	RqValidate(req, DynBackupsRestoreSchema(restore_fields));
	arn = RqGetString(r, "BackupArn");
	DynCatalogCheckBackup(arn);	/* and CreateTable's right (dynindex.api checked it) */
	target = RqGetString(r, "TargetTableName");
	if (backup_copy(arn) == NULL)
		DynError(DYN_ERR_BACKUP_NOT_FOUND, "Backup not found: %s", arn);
	/* a DeleteBackup of this backup is running */
	if (!try_lock(BACKUP_LOCK_BACKUP, arn, true))
		backup_in_use();
	copy = backup_copy(arn);
	if (copy == NULL)
		DynError(DYN_ERR_BACKUP_NOT_FOUND, "Backup not found: %s", arn);

	{
		Oid			types[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(arn)};
		Jsonb	   *definition = RqQueryJsonb("SELECT definition FROM dynindex.backups WHERE backup_arn = $1",
											 1, types, args, NULL);

		if (definition == NULL)
			DynError(DYN_ERR_BACKUP_NOT_FOUND, "Backup not found: %s", arn);
		create = DynBackupsRestoreRequest(definition, target, r);
		summary = RqQueryJsonb("SELECT jsonb_build_object('RestoreSummary', jsonb_build_object("
							  "'SourceBackupArn', b.backup_arn, 'SourceTableArn', b.table_arn, "
							  "'RestoreDateTime', " EPOCH("b.created_at") ", 'RestoreInProgress', false)) "
							  "FROM dynindex.backups b WHERE b.backup_arn = $1",
							  1, types, args, NULL);
	}
	t = DynTableCreate(create, summary, true);
	DynBackupRestoreItems(t, copy);
	return DynBackupsRestoredDescription(t);
}
