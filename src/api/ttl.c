/*
 * ttl.c — Time to Live: UpdateTimeToLive and DescribeTimeToLive (the setting
 * is kept in dynindex.ttl, one row per table with TTL enabled, removed with
 * the table).  The expiry sweep (dynindex.expire_items() and the worker's
 * rounds) is part of the write path: src/write/expire.c.  docs/ttl.md
 * describes the behaviour and docs/errors.md lists the messages and their
 * sources.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "common/wakeup.h"
#include "replication/replication.h"
#include "write/write.h"

/* ---------------------------------------------------------------- schemas */

/* TimeToLiveSpecification's members, in DynamoDB's model order. */
static const RqField ttl_spec_fields[] = {
	{.name = "Enabled",.type = RQ_BOOLEAN,.notnull = true},
	{.name = "AttributeName",.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 255},
	{0}
};

static const RqField update_ttl_fields[] = {
	RQ_TABLE_NAME_OR_ARN,
	{.name = "TimeToLiveSpecification",.type = RQ_STRUCT,.structname = "TimeToLiveSpecification",
	.fields = ttl_spec_fields,.notnull = true},
	{0}
};

static const RqField describe_ttl_fields[] = {
	RQ_TABLE_NAME_OR_ARN,
	{0}
};

/* ---------------------------------------------------------------- operations */

/* UpdateTimeToLive */
Jsonb *
DynUpdateTimeToLive(Jsonb *req)
{
	JsonbValue *spec;
	char	   *table;
	char	   *attr;
	char	   *current;
	bool		enabled;
	bool		ok;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	JsonbParseState *st = NULL;

	RqValidate(req, update_ttl_fields);
	table = RqGetString(&req->root, "TableName");
	spec = RqGet(&req->root, "TimeToLiveSpecification");
	attr = pnstrdup(RqGetJv(spec, "AttributeName")->val.string.val,
					RqGetJv(spec, "AttributeName")->val.string.len);
	enabled = DynJsonBoolean(RqGetJv(spec, "Enabled"), &ok);

	table = DynCatalogGetTableOrNotFound(table)->name;
	current = DynTtlAttribute(table, true);
	if (enabled)
	{
		if (current != NULL && strcmp(current, attr) == 0)
			DynValidationError("TimeToLive is already enabled");
		if (current != NULL)
			DynValidationError("TimeToLive is active on a different AttributeName: current AttributeName is %s", current);
	}
	else
	{
		if (current == NULL)
			DynValidationError("TimeToLive is already disabled");
		if (strcmp(current, attr) != 0)
			DynValidationError("TimeToLive is active on a different AttributeName: current AttributeName is %s", current);
	}

	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(attr);
	if (enabled)
	{
		if (SPI_execute_with_args("INSERT INTO dynindex.ttl (table_name, attribute_name) VALUES ($1, $2)",
								  2, types, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not store the time to live setting");
		DynWorkerWake(MyDatabaseId);	/* make sure this database has a worker */
	}
	else if (SPI_execute_with_args("DELETE FROM dynindex.ttl WHERE table_name = $1",
								   1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the time to live setting");

	/* DynamoDB applies it to every replica of a global table */
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TableName");
	RqPushString(&st, WJB_VALUE, table);
	RqPushKey(&st, "TimeToLiveSpecification");
	pushJsonbValue(&st, WJB_VALUE, spec);
	DynReplicationCaptureOperation(DynCatalogGetTableOrNotFound(table), "UpdateTimeToLive",
								   JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
	st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TimeToLiveSpecification");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Enabled");
	RqPushBool(&st, WJB_VALUE, enabled);
	RqPushKey(&st, "AttributeName");
	RqPushString(&st, WJB_VALUE, attr);
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* DescribeTimeToLive: ENABLED with the attribute, or DISABLED. */
Jsonb *
DynDescribeTimeToLive(Jsonb *req)
{
	char	   *table;
	char	   *attr;
	JsonbParseState *st = NULL;

	RqValidate(req, describe_ttl_fields);
	table = RqGetString(&req->root, "TableName");
	table = DynCatalogGetTableOrNotFound(table)->name;
	attr = DynTtlAttribute(table, false);

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TimeToLiveDescription");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TimeToLiveStatus");
	RqPushString(&st, WJB_VALUE, attr ? "ENABLED" : "DISABLED");
	if (attr)
	{
		RqPushKey(&st, "AttributeName");
		RqPushString(&st, WJB_VALUE, attr);
	}
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
