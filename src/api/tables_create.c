/*
 * tables_create.c — CreateTable (and the table creation RestoreTableFromBackup shares).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "indexes/indexes.h"
#include "security/security.h"
#include "storage/storage.h"
#include "streams/streams.h"

/* ---------------------------------------------------------------- CreateTable */

/* Copy selected request members into a new object. */
static Jsonb *
pick_members(Jsonb *req, const char *const *names)
{
	JsonbParseState *st = NULL;
	const char *const *n;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (n = names; *n; n++)
	{
		JsonbValue *v = RqGet(&req->root, *n);

		if (v)
		{
			RqPushKey(&st, *n);
			pushJsonbValue(&st, WJB_VALUE, v);
		}
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* Jsonb of one JSON value (a container). */
Jsonb *
DynTablesValueJsonb(JsonbValue *v)
{
	return JsonbValueToJsonb(v);
}

/*
 * An OnDemandThroughput merged member by member, as DynamoDB's UpdateTable
 * merges it: the members of current (NULL: none) with those of request over
 * them, where -1 removes its member (show_removed: keeps it as -1, as
 * UpdateTable's response shows it).  Only members of at least 1 are kept;
 * NULL when none is left.  With current NULL: request as stored.
 */
Jsonb *
DynTablesOnDemandMerge(Jsonb *current, JsonbValue *request, bool show_removed)
{
	static const char *const members[] = {"MaxReadRequestUnits", "MaxWriteRequestUnits", NULL};
	JsonbParseState *st = NULL;
	const char *const *m;
	bool		any = false;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (m = members; *m; m++)
	{
		int64		v = current && JB_ROOT_IS_OBJECT(current) ? RqGetInt(&current->root, *m, 0) : 0;
		JsonbValue *r = request && request->type == jbvBinary ? RqGetJv(request, *m) : NULL;

		if (v < 1)
			v = 0;				/* none (a value stored before 0.3 may be anything) */
		if (r && r->type == jbvNumeric)
			v = RqGetInt(request->val.binary.data, *m, 0);
		if (v >= 1 || (v == -1 && show_removed))
		{
			DynTablesPushInt(&st, *m, v);
			any = true;
		}
	}
	return any ? JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)) : NULL;
}

/* Insert one secondary index into the catalog and create its storage. */
void
DynTablesCreateIndex(const char *table, int64 num, int position, bool global, JsonbValue *def)
{
	Oid			types[9] = {TEXTOID, TEXTOID, INT4OID, BOOLOID, JSONBOID, JSONBOID, TEXTOID, JSONBOID, JSONBOID};
	Datum		args[9];
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	char	   *storage = psprintf("%s.t%lld_i%d", DYN_DATA_SCHEMA, (long long) num, position);
	JsonbValue *tp = RqGetJv(def, "ProvisionedThroughput");
	/* a GSI's own maximum: its column is new in 0.3 */
	bool		has_od = DynCatalogHasIndexOnDemand();
	Jsonb	   *od = global ? DynTablesOnDemandMerge(NULL, RqGetJv(def, "OnDemandThroughput"), false) : NULL;

	if (od && !has_od)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the OnDemandThroughput of a global secondary index needs version 0.3 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE.")));

	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(RqGetString(def->val.binary.data, "IndexName"));
	args[2] = Int32GetDatum(position);
	args[3] = BoolGetDatum(global);
	args[4] = JsonbPGetDatum(DynTablesValueJsonb(RqGetJv(def, "KeySchema")));
	args[5] = JsonbPGetDatum(DynTablesValueJsonb(RqGetJv(def, "Projection")));
	args[6] = CStringGetTextDatum(storage);
	if (tp)
		args[7] = JsonbPGetDatum(DynTablesValueJsonb(tp));
	else
		nulls[7] = 'n';
	if (od)
		args[8] = JsonbPGetDatum(od);
	else
		nulls[8] = 'n';
	if (SPI_execute_with_args(has_od ?
							  "INSERT INTO dynindex.indexes (table_name, index_name, position, is_global, key_schema, "
							  "projection, storage, throughput, on_demand_throughput) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)" :
							  "INSERT INTO dynindex.indexes (table_name, index_name, position, is_global, "
							  "key_schema, projection, storage, throughput) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
							  has_od ? 9 : 8, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record index");
	/* index entries: encoded index key, base key, projected item */
	DynStorageCreateIndexTable(storage, global, psprintf("%s.t%lld", DYN_DATA_SCHEMA, (long long) num));
}

/* Grant a role a recipe on a table (dynindex._apply_grant; runs in the operation's internal section). */
static void
apply_grant(const char *table, Oid role, const char *access)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3] = {CStringGetTextDatum(table), CStringGetTextDatum(GetUserNameFromId(role, false)),
	CStringGetTextDatum(access)};

	if (SPI_execute_with_args("SELECT dynindex._apply_grant($1, $2::name, $3, true)", 3, types, args, NULL, false, 0)
		!= SPI_OK_SELECT)
		elog(ERROR, "could not grant the table's creator its rights");
}

/*
 * Create a table from a CreateTable request (validated here) and return its
 * catalog entry.  CreateTable and RestoreTableFromBackup (src/api/backups.c)
 * share it: extra_options (or NULL) is merged into the table's options (the
 * restore's RestoreSummary), and a restore reports an existing table as
 * TableAlreadyExistsException instead of ResourceInUseException.
 */
DynTable *
DynTableCreate(Jsonb *req, Jsonb *extra_options, bool restoring)
{
	static const char *const option_names[] = {
		"SSESpecification", "TableClass",
		"DeletionProtectionEnabled", "ResourcePolicy", "WarmThroughput", NULL
	};
	JsonbContainer *r = &req->root;
	char	   *name;
	Oid			types[9] = {TEXTOID, TEXTOID, JSONBOID, JSONBOID, TEXTOID, INT8OID, INT8OID, INT8OID, JSONBOID};
	Datum		args[9];
	char		nulls[10] = "         ";
	JsonbValue *pt;
	int64		num;
	bool		isnull;
	int			ret;
	DynTable   *t;
	int			i;
	int			n;
	JsonbValue *elems;
	DynStreamView view;
	Jsonb	   *on_demand;

	RqValidate(req, DynCreateTableFields);
	DynTablesCheckCreate(req);
	/* after the indexes' checks; a restore's override has messages of its own */
	DynTablesCheckOnDemand(RqGet(r, "OnDemandThroughput"), NULL, !RqStringIs(r, "BillingMode", "PAY_PER_REQUEST"),
						   restoring ? DYN_OD_RESTORE : DYN_OD_CREATE);
	/* kept with the members set: {} is accepted and keeps nothing */
	on_demand = DynTablesOnDemandMerge(NULL, RqGet(r, "OnDemandThroughput"), false);
	view = DynTablesCheckStreamSpecification(RqGet(r, "StreamSpecification"), true);
	DynCheckCreateTableTags(RqGet(r, "Tags"));
	name = RqGetString(r, "TableName");

	/* serialize CreateTable of one name; a committed twin is then visible */
	types[0] = TEXTOID;
	args[0] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("SELECT pg_advisory_xact_lock(4475213, hashtext($1))",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT ||
		SPI_execute_with_args("SELECT 1 FROM dynindex.tables WHERE table_name = $1",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not check for an existing table");
	if (SPI_processed > 0)
		DynError(restoring ? DYN_ERR_TABLE_ALREADY_EXISTS : DYN_ERR_RESOURCE_IN_USE, "Table already exists: %s", name);

	ret = SPI_execute("SELECT nextval('dynindex.table_num_seq')", false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not allocate a table number");
	num = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	pt = RqGet(r, "ProvisionedThroughput");
	args[0] = CStringGetTextDatum(name);
	args[1] = CStringGetTextDatum(psprintf("%s.t%lld", DYN_DATA_SCHEMA, (long long) num));
	args[2] = JsonbPGetDatum(DynTablesValueJsonb(RqGet(r, "AttributeDefinitions")));
	args[3] = JsonbPGetDatum(DynTablesValueJsonb(RqGet(r, "KeySchema")));
	args[4] = CStringGetTextDatum(RqStringIs(r, "BillingMode", "PAY_PER_REQUEST") ? "PAY_PER_REQUEST" : "PROVISIONED");
	if (pt)
	{
		args[5] = Int64GetDatum(RqGetInt(pt->val.binary.data, "ReadCapacityUnits", 0));
		args[6] = Int64GetDatum(RqGetInt(pt->val.binary.data, "WriteCapacityUnits", 0));
	}
	else
		nulls[5] = nulls[6] = 'n';
	args[7] = Int64GetDatum(num);
	args[8] = JsonbPGetDatum(pick_members(req, option_names));
	if (on_demand)
	{
		JsonbParseState *st = NULL;

		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "OnDemandThroughput");
		RqPushJsonb(&st, WJB_VALUE, on_demand);
		args[8] = DirectFunctionCall2(jsonb_concat, args[8],
									  JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL))));
	}
	if (extra_options)
		args[8] = DirectFunctionCall2(jsonb_concat, args[8], JsonbPGetDatum(extra_options));
	if (SPI_execute_with_args("INSERT INTO dynindex.tables (table_name, storage, attribute_definitions, "
							  "key_schema, billing_mode, read_capacity, write_capacity, num, options) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
							  9, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record table");
	DynStoreCreateTableTags(name, RqGet(r, "Tags"));

	DynStorageCreateTable(psprintf("%s.t%lld", DYN_DATA_SCHEMA, (long long) num), dynindex_table_partitions);
	elems = RqArrayElems(RqGet(r, "LocalSecondaryIndexes"), &n);
	for (i = 0; i < n; i++)
		DynTablesCreateIndex(name, num, i, false, &elems[i]);
	{
		int			nl = n;

		elems = RqArrayElems(RqGet(r, "GlobalSecondaryIndexes"), &n);
		for (i = 0; i < n; i++)
			DynTablesCreateIndex(name, num, nl + i, true, &elems[i]);

		/*
		 * GSIs: start (or wake) the database's worker at commit, so that a
		 * first write into a new database need not wait for the worker
		 * process to start (about 10 ms; bench/gsi_lag.sh)
		 */
		if (n > 0)
			DynGsiWakeAtCommit();
	}

	/* the creator administers its table (account administrators need no grant) */
	if (!DynSecurityIsAccountAdmin(DynSecurityCaller()))
		apply_grant(name, DynSecurityCaller(), "admin");

	DynCatalogChanged();
	CommandCounterIncrement();
	DynCatalogRevalidate();
	t = DynCatalogGetTable(name);
	if (t == NULL)
		elog(ERROR, "table \"%s\" vanished after creation", name);
	if (view != DYN_STREAM_NONE)
	{
		DynStreamEnable(t, view);
		DynCatalogChanged();
		CommandCounterIncrement();
		DynCatalogRevalidate();
		t = DynCatalogGetTableOrNotFound(name);
	}
	return t;
}

/* CreateTable */
Jsonb *
DynCreateTable(Jsonb *req)
{
	/*
	 * DynamoDB answers CreateTable with the table (and its GSIs) CREATING;
	 * here it is ready at once, so DescribeTable says ACTIVE from then on.
	 */
	return DynTablesWrap("TableDescription", DynTablesDescribe(DynTableCreate(req, NULL, false), "CREATING", false));
}
