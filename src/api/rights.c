/*
 * rights.c — the SQL functions that manage and test rights on tables
 * (dynindex.grant_table, revoke_table, restrict_leading_keys,
 * unrestrict_leading_keys, has_table_access; docs/security.md).  They look
 * their table up through the catalog, which checks the caller's right, so
 * they sit above both the catalog and src/security/ (docs/layers.md).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "catalog/dyn_catalog.h"
#include "security/security.h"

/*
 * Run "SELECT <sql>" with the given text arguments on a table the caller
 * administers: the lookup checks the admin right (operation "grant_table"),
 * the statement runs with the extension owner's rights.
 */
static void
admin_call(const char *operation, const char *table, const char *sql, int nargs, Oid *types,
		   Datum *args, const char *nulls)
{
	DynSecurityOp op;
	DynSecurityState sec;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynCatalogRevalidate();
	DynSecurityEnter(operation, &op);
	PG_TRY();
	{
		(void) DynCatalogGetTableOrNotFound(table);
		DynSecurityBeginInternal(&sec);
		if (SPI_execute_with_args(sql, nargs, types, args, nulls, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "%s failed", operation);
		DynSecurityEndInternal(&sec);
		DynCatalogChanged();
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&op);
	}
	PG_END_TRY();
	SPI_finish();
}

PG_FUNCTION_INFO_V1(dynindex_grant_table);

/* dynindex.grant_table(table_name text, role_name name, access text) */
Datum
dynindex_grant_table(PG_FUNCTION_ARGS)
{
	Oid			types[3] = {TEXTOID, NAMEOID, TEXTOID};
	Datum		args[3] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2)};

	admin_call("grant_table", text_to_cstring(PG_GETARG_TEXT_PP(0)),
			   "SELECT dynindex._apply_grant($1, $2, $3, true)", 3, types, args, NULL);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_revoke_table);

/* dynindex.revoke_table(table_name text, role_name name, access text) */
Datum
dynindex_revoke_table(PG_FUNCTION_ARGS)
{
	Oid			types[3] = {TEXTOID, NAMEOID, TEXTOID};
	Datum		args[3] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2)};

	admin_call("revoke_table", text_to_cstring(PG_GETARG_TEXT_PP(0)),
			   "SELECT dynindex._apply_grant($1, $2, $3, false)", 3, types, args, NULL);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_restrict_leading_keys);

/* dynindex.restrict_leading_keys(table_name, role_name, key_value, begins_with) */
Datum
dynindex_restrict_leading_keys(PG_FUNCTION_ARGS)
{
	Oid			types[4] = {TEXTOID, NAMEOID, TEXTOID, BOOLOID};
	Datum		args[4];
	char		nulls[5] = "    ";

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("table_name and role_name must not be null")));
	args[0] = PG_GETARG_DATUM(0);
	args[1] = PG_GETARG_DATUM(1);
	args[2] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	nulls[2] = PG_ARGISNULL(2) ? 'n' : ' ';
	args[3] = BoolGetDatum(!PG_ARGISNULL(3) && PG_GETARG_BOOL(3));
	admin_call("restrict_leading_keys", text_to_cstring(PG_GETARG_TEXT_PP(0)),
			   "SELECT dynindex._apply_leading_keys($1, $2, $3, $4, true)", 4, types, args, nulls);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_unrestrict_leading_keys);

/* dynindex.unrestrict_leading_keys(table_name, role_name) */
Datum
dynindex_unrestrict_leading_keys(PG_FUNCTION_ARGS)
{
	Oid			types[2] = {TEXTOID, NAMEOID};
	Datum		args[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};

	admin_call("unrestrict_leading_keys", text_to_cstring(PG_GETARG_TEXT_PP(0)),
			   "SELECT dynindex._apply_leading_keys($1, $2, NULL, false, false)", 2, types, args, NULL);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_has_table_access);

/* dynindex.has_table_access(table_name text, access text, role_name name) RETURNS boolean */
Datum
dynindex_has_table_access(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *access = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Oid			role = get_role_oid(NameStr(*PG_GETARG_NAME(2)), false);
	DynAccess	right;
	volatile bool result = false;
	DynSecurityOp op;

	if (strcmp(access, "read") == 0)
		right = DYN_ACCESS_READ;
	else if (strcmp(access, "write") == 0)
		right = DYN_ACCESS_WRITE;
	else if (strcmp(access, "admin") == 0)
		right = DYN_ACCESS_ADMIN;
	else if (strcmp(access, "stream") == 0)
		right = DYN_ACCESS_STREAM;
	else if (strcmp(access, "describe") == 0)
		right = DYN_ACCESS_DESCRIBE;
	else
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("access must be read, write, admin, stream or describe, not \"%s\"", access)));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynCatalogRevalidate();
	/* about another role: only for the table's administrators */
	DynSecurityEnter(role == GetUserId() ? "DescribeLimits" : "has_table_access", &op);
	PG_TRY();
	{
		DynTable   *t;

		DynCatalogAuthorize(table);
		t = DynCatalogGetTableUnchecked(table);
		result = t != NULL && DynSecurityHasRight(role, t->name, t->storage_relid, right);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&op);
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_BOOL(result);
}
