/*
 * tables.c — DeleteTable, ListTables, and the locked lookup of a table to change.
 * The other table operations: tables_create.c (CreateTable), tables_describe.c
 * (DescribeTable, TableDescription), tables_update.c (UpdateTable),
 * tables_validate.c (request shapes and rules); tables.h joins them.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "history/history.h"
#include "replication/replication.h"
#include "security/security.h"
#include "storage/storage.h"
#include "streams/streams.h"

/*
 * The table a DeleteTable or UpdateTable changes: its catalog row is locked
 * first, before any of its storage relations, so that two such requests on one
 * table wait for each other instead of deadlocking over the storage locks (or
 * failing on a relation the other one dropped).
 */
DynTable *
DynTablesForChange(const char *name)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	DynTable   *t;

	if (name == NULL)			/* RqValidate requires TableName */
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found");
	name = DynCatalogTableName(name);
	/* the caller's right first: before the row lock, and before "not found" */
	DynCatalogAuthorize(name);
	args[0] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("SELECT 1 FROM dynindex.tables WHERE table_name = $1 FOR UPDATE",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock table \"%s\"", name);
	t = SPI_processed == 0 ? NULL : DynCatalogGetTableForChange(name);
	if (t == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Table: %s not found", name);
	return t;
}

/* DeleteTable */
Jsonb *
DynDeleteTable(Jsonb *req)
{
	DynTable   *t;
	Jsonb	   *desc;
	Jsonb	   *definition = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	int			i;

	RqValidate(req, DynTableNameOnlyFields);
	t = DynTablesForChange(RqGetString(&req->root, "TableName"));
	if (t->importing)
		DynError(DYN_ERR_RESOURCE_IN_USE, "Attempt to change a resource which is still in use: Table is being created: %s", t->name);
	if (RqGetBool(&t->options->root, "DeletionProtectionEnabled", false))
		DynValidationError("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.");
	desc = DynTablesDescribe(t, "DELETING", true);
	/* with point-in-time recovery the table stays restorable: its definition as it is now */
	if (t->pitr.days > 0)
		definition = DynBackupsTableDefinition(t->name);

	/* lock the catalog row so concurrent writers of this table serialize with us */
	args[0] = CStringGetTextDatum(t->name);
	if (SPI_execute_with_args("DELETE FROM dynindex.tables WHERE table_name = $1", 1, types, args, NULL, false, 0)
		!= SPI_OK_DELETE)
		elog(ERROR, "could not delete table");
	if (SPI_processed == 0)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Table: %s not found", t->name);
	/*
	 * The table first, then its indexes: the order in which requests lock
	 * them.  A table with point-in-time recovery keeps its storage (and
	 * history) until its window closes.
	 */
	if (!DynHistoryKeepDeleted(t, definition))
		DynStorageDropTable(t->storage);
	for (i = 0; i < t->nindexes; i++)
		DynStorageDropTable(t->indexes[i].storage);
	/* its stream is disabled; the records stay readable until they expire */
	DynStreamDisable(t);
	/* a global table: this replica goes, the other regions' stay (their changes are skipped here) */
	DynReplicationForgetTable(t);
	DynCatalogChanged();
	return DynTablesWrap("TableDescription", desc);
}

/* ListTables */
Jsonb *
DynListTables(Jsonb *req)
{
	JsonbParseState *st = NULL;
	char	   *start;
	int64		limit;
	Oid			types[4] = {TEXTOID, INT8OID, BOOLOID, OIDOID};
	Datum		args[4];
	char		nulls[5] = "    ";
	uint64		i;
	uint64		shown;
	bool		isnull;

	RqValidate(req, DynListTablesFields);
	start = RqGetString(&req->root, "ExclusiveStartTableName");
	limit = RqGetInt(&req->root, "Limit", 100);
	if (start)
		args[0] = CStringGetTextDatum(start);
	else
		nulls[0] = 'n';
	args[1] = Int64GetDatum(limit + 1);
	/* the tables the caller holds a right on (docs/security.md) */
	args[2] = BoolGetDatum(DynSecurityIsAccountAdmin(DynSecurityCaller()));
	args[3] = ObjectIdGetDatum(DynSecurityCaller());
	if (SPI_execute_with_args("SELECT table_name FROM dynindex.tables t WHERE ($1 IS NULL OR table_name COLLATE \"C\" > $1) "
							  "AND ($3 OR pg_catalog.has_table_privilege($4, t.storage, 'SELECT, INSERT, UPDATE, DELETE') "
							  "OR EXISTS (SELECT 1 FROM dynindex.table_rights r JOIN pg_catalog.pg_roles g ON g.rolname = r.role_name "
							  "WHERE r.table_name = t.table_name AND pg_catalog.pg_has_role($4, g.oid, 'USAGE'))) "
							  "ORDER BY table_name COLLATE \"C\" LIMIT $2",
							  4, types, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list tables");
	shown = Min(SPI_processed, (uint64) limit);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TableNames");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < shown; i++)
		RqPushString(&st, WJB_ELEM,
					 TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)));
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (SPI_processed > shown)
		DynTablesPushString(&st, "LastEvaluatedTableName",
						   TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[shown - 1],
															 SPI_tuptable->tupdesc, 1, &isnull)));
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
