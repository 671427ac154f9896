/*
 * tables_update.c — UpdateTable: throughput, billing, options, streams, GSI create/delete.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/capacity.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "indexes/indexes.h"
#include "replication/replication.h"
#include "storage/storage.h"
#include "streams/streams.h"

/* Find an index of a table by name. */
static DynIndex *
find_index(DynTable *t, const char *name)
{
	int			i;

	for (i = 0; i < t->nindexes; i++)
		if (strcmp(t->indexes[i].name, name) == 0)
			return &t->indexes[i];
	return NULL;
}

/* Merge request AttributeDefinitions into the table's; returns the merged list. */
static JsonbValue *
merged_definitions(DynTable *t, JsonbContainer *r, int *n)
{
	JsonbValue	tdefs;
	JsonbValue *old;
	JsonbValue *add;
	int			nold;
	int			nadd;
	JsonbValue *all;
	int			i;

	tdefs.type = jbvBinary;
	tdefs.val.binary.data = &t->attribute_definitions->root;
	tdefs.val.binary.len = VARSIZE(t->attribute_definitions) - VARHDRSZ;
	old = RqArrayElems(&tdefs, &nold);
	add = RqArrayElems(RqGet(r, "AttributeDefinitions"), &nadd);
	all = palloc(sizeof(JsonbValue) * (nold + nadd + 1));
	*n = 0;
	for (i = 0; i < nadd; i++)
		all[(*n)++] = add[i];
	for (i = 0; i < nold; i++)
	{
		char	   *an = RqGetString(old[i].val.binary.data, "AttributeName");
		int			j;

		for (j = 0; j < nadd; j++)
		{
			char	   *addname = RqGetString(add[j].val.binary.data, "AttributeName");
			char	   *addtype = RqGetString(add[j].val.binary.data, "AttributeType");
			char	   *oldtype = RqGetString(old[i].val.binary.data, "AttributeType");

			/* an attribute a key already uses keeps its type */
			if (addname && strcmp(addname, an) == 0 && addtype && oldtype && strcmp(addtype, oldtype) != 0)
				DynValidationError("One or more parameter values were invalid: Attributes cannot be redefined. Please check that your attribute has the same type as previously defined.");
		}
		if (!DynTablesIsDefined(add, nadd, an))
			all[(*n)++] = old[i];
	}
	return all;
}

/* Rewrite the table's AttributeDefinitions to the attributes its keys use. */
static void
store_used_definitions(DynTable *t, JsonbValue *defs, int ndefs, JsonbValue *new_keys, int nnew,
					   const char *dropped_index)
{
	JsonbParseState *st = NULL;
	Oid			types[2] = {JSONBOID, TEXTOID};
	Datum		args[2];
	int			i;

	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < ndefs; i++)
	{
		char	   *an = RqGetString(defs[i].val.binary.data, "AttributeName");
		bool		used = strcmp(an, t->hash.name) == 0 || (t->has_range && strcmp(an, t->range.name) == 0);
		int			j;
		int			k;

		for (j = 0; j < nnew && !used; j++)
			used = strcmp(an, RqGetString(new_keys[j].val.binary.data, "AttributeName")) == 0;
		for (j = 0; j < t->nindexes && !used; j++)
		{
			DynIndex   *idx = &t->indexes[j];

			if (dropped_index && strcmp(idx->name, dropped_index) == 0)
				continue;
			for (k = 0; k < idx->nhash && !used; k++)
				used = strcmp(an, idx->hash[k].name) == 0;
			for (k = 0; k < idx->nrange && !used; k++)
				used = strcmp(an, idx->range[k].name) == 0;
		}
		if (used)
			pushJsonbValue(&st, WJB_ELEM, &defs[i]);
	}
	args[0] = JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_ARRAY, NULL)));
	args[1] = CStringGetTextDatum(t->name);
	if (SPI_execute_with_args("UPDATE dynindex.tables SET attribute_definitions = $1 WHERE table_name = $2",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update attribute definitions");
}

/* Create a GSI on an existing table: CREATING until the worker backfilled it. */
static void
update_table_create_gsi(DynTable *t, JsonbContainer *r, JsonbValue *create)
{
	char	   *name = RqGetString(create->val.binary.data, "IndexName");
	JsonbValue *defs;
	JsonbValue *ik;
	int			ndefs;
	int			nik;
	int			nglobal = 0;
	int			i;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];

	if (find_index(t, name))
		DynValidationError("One or more parameter values were invalid: Index with name %s already exists", name);
	for (i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global)
			nglobal++;
	if (nglobal + 1 > MAX_GSIS)
		DynError(DYN_ERR_LIMIT_EXCEEDED,
				 "Subscriber limit exceeded: The number of global secondary indexes exceeds the per-table limit of %d", MAX_GSIS);
	{
		JsonbValue *nk = RqGetJv(RqGetJv(create, "Projection"), "NonKeyAttributes");
		int			nproj = nk && nk->type == jbvBinary ? JsonContainerSize(nk->val.binary.data) : 0;

		for (i = 0; i < t->nindexes; i++)
			nproj += t->indexes[i].nnonkey;
		if (nproj > MAX_PROJECTED_ATTRIBUTES)
			DynValidationError("One or more parameter values were invalid: Number of projected attributes in all indexes exceeds limit of %d",
							   MAX_PROJECTED_ATTRIBUTES);
	}
	defs = merged_definitions(t, r, &ndefs);
	ik = RqArrayElems(RqGetJv(create, "KeySchema"), &nik);
	{
		/*
		 * The request itself must define every key attribute of the new
		 * index, even one the table already defines (DynamoDB does not look
		 * at the stored definitions for this).
		 */
		int			nreq;
		JsonbValue *req_defs = RqArrayElems(RqGet(r, "AttributeDefinitions"), &nreq);

		if (nreq == 0)
			DynValidationError("One or more parameter values were invalid: AttributeDefinitions is not specified for index: %s", name);
		DynTablesCheckKeysDefined(ik, nik, req_defs, nreq);
	}
	DynTablesCheckGsiKeySchema(ik, nik);
	DynTablesCheckProjection(RqGetJv(create, "Projection"));
	if (strcmp(t->billing_mode, "PAY_PER_REQUEST") == 0 && RqGetJv(create, "ProvisionedThroughput"))
		DynValidationError("One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", name);
	if (strcmp(t->billing_mode, "PROVISIONED") == 0 && RqGetJv(create, "ProvisionedThroughput") == NULL)
		DynValidationError("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", name);
	DynTablesCheckOnDemand(RqGetJv(create, "OnDemandThroughput"), name, strcmp(t->billing_mode, "PROVISIONED") == 0,
						   DYN_OD_CREATE);

	store_used_definitions(t, defs, ndefs, ik, nik, NULL);
	{
		int			position = 0;
		int			ret;
		bool		isnull;

		args[0] = CStringGetTextDatum(t->name);
		ret = SPI_execute_with_args("SELECT coalesce(max(position) + 1, 0) FROM dynindex.indexes WHERE table_name = $1",
									1, types, args, NULL, false, 1);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "could not read indexes");
		position = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		DynTablesCreateIndex(t->name, t->num, position, true, create);
	}
	args[0] = CStringGetTextDatum(t->name);
	args[1] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("UPDATE dynindex.indexes SET status = 'CREATING', backfilling = true "
							  "WHERE table_name = $1 AND index_name = $2",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not mark the index as creating");
}

/* Delete a GSI and its storage. */
static void
update_table_delete_gsi(DynTable *t, JsonbContainer *r, const char *name)
{
	DynIndex   *idx = find_index(t, name);
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	JsonbValue *defs;
	int			ndefs;

	if (idx == NULL || !idx->is_global)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Requested index %s not found", name);
	defs = merged_definitions(t, r, &ndefs);
	store_used_definitions(t, defs, ndefs, NULL, 0, name);
	args[0] = CStringGetTextDatum(t->name);
	args[1] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("DELETE FROM dynindex.indexes WHERE table_name = $1 AND index_name = $2",
							  2, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the index");
	if (SPI_execute_with_args("DELETE FROM dynindex.gsi_applied WHERE table_num = (SELECT num FROM dynindex.tables "
							  "WHERE table_name = $1) AND index_name = $2",
							  2, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the index's counters");
	DynStorageDropTable(idx->storage);
}

/* The table's OnDemandThroughput as stored in its options, or NULL. */
static Jsonb *
stored_on_demand(DynTable *t)
{
	JsonbValue *v = RqGet(&t->options->root, "OnDemandThroughput");

	return v && v->type == jbvBinary ? JsonbValueToJsonb(v) : NULL;
}

/* Store the table's OnDemandThroughput (NULL: no maximum, the member leaves its options). */
static void
store_table_on_demand(DynTable *t, Jsonb *od)
{
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		args[2] = {CStringGetTextDatum(t->name), od ? JsonbPGetDatum(od) : (Datum) 0};
	char		nulls[3] = {' ', od ? ' ' : 'n', '\0'};

	if (SPI_execute_with_args("UPDATE dynindex.tables SET options = CASE WHEN $2 IS NULL THEN options - 'OnDemandThroughput' "
							  "ELSE options || jsonb_build_object('OnDemandThroughput', $2) END WHERE table_name = $1",
							  2, types, args, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update the table's OnDemandThroughput");
}

/* Store a GSI's OnDemandThroughput (NULL: no maximum). */
static void
store_index_on_demand(DynTable *t, const char *index, Jsonb *od)
{
	Oid			types[3] = {TEXTOID, TEXTOID, JSONBOID};
	Datum		args[3] = {CStringGetTextDatum(t->name), CStringGetTextDatum(index), od ? JsonbPGetDatum(od) : (Datum) 0};
	char		nulls[4] = {' ', ' ', od ? ' ' : 'n', '\0'};

	if (!DynCatalogHasIndexOnDemand())
	{
		if (od == NULL)
			return;				/* before 0.3 no GSI has a maximum */
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the OnDemandThroughput of a global secondary index needs version 0.3 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE.")));
	}
	if (SPI_execute_with_args("UPDATE dynindex.indexes SET on_demand_throughput = $3 WHERE table_name = $1 AND index_name = $2",
							  3, types, args, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update the index's OnDemandThroughput");
}

/*
 * The table turns PROVISIONED: its and its GSIs' OnDemandThroughput are
 * dropped, as DynamoDB drops them (they do not come back with
 * PAY_PER_REQUEST; docs/capacity.md).
 */
static void
drop_on_demand(DynTable *t)
{
	int			i;

	if (stored_on_demand(t))
		store_table_on_demand(t, NULL);
	for (i = 0; i < t->nindexes; i++)
		if (t->indexes[i].on_demand)
			store_index_on_demand(t, t->indexes[i].name, NULL);
}

/* Merge a member of the request into the table's options. */
static void
update_option(DynTable *t, JsonbContainer *r, const char *member)
{
	JsonbValue *v = RqGet(r, member);
	Oid			types[3] = {TEXTOID, JSONBOID, TEXTOID};
	Datum		args[3];
	JsonbParseState *st = NULL;

	if (v == NULL)
		return;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, member);
	pushJsonbValue(&st, WJB_VALUE, v);
	args[0] = CStringGetTextDatum(t->name);
	args[1] = JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
	args[2] = CStringGetTextDatum(member);
	if (SPI_execute_with_args("UPDATE dynindex.tables SET options = options || $2 WHERE table_name = $1",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update table options");
}

/*
 * Record a provisioned-throughput change in the table's ThroughputHistory
 * option: LastIncreaseDateTime / LastDecreaseDateTime, and the decreases of
 * the current UTC day (NumberOfDecreasesToday).
 */
static void
record_throughput_change(DynTable *t, bool increase, bool decrease)
{
	JsonbValue *old = RqGet(&t->options->root, "ThroughputHistory");
	JsonbParseState *st = NULL;
	JsonbValue *v;
	char	   *today = DynTablesUtcDay();
	int64		decreases = 0;
	double		now = DynTablesEpochSeconds(GetCurrentTransactionStartTimestamp());
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		args[2];

	if (old && RqGetJv(old, "DecreasesDay") &&
		strcmp(RqGetString(old->val.binary.data, "DecreasesDay"), today) == 0)
		decreases = RqGetInt(old->val.binary.data, "NumberOfDecreasesToday", 0);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "ThroughputHistory");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "LastIncreaseDateTime");
	if (increase)
		RqPushNumeric(&st, WJB_VALUE, now);
	else if (old && (v = RqGetJv(old, "LastIncreaseDateTime")) != NULL)
		pushJsonbValue(&st, WJB_VALUE, v);
	else
		pushJsonbValue(&st, WJB_VALUE, &(JsonbValue) {.type = jbvNull});
	RqPushKey(&st, "LastDecreaseDateTime");
	if (decrease)
		RqPushNumeric(&st, WJB_VALUE, now);
	else if (old && (v = RqGetJv(old, "LastDecreaseDateTime")) != NULL)
		pushJsonbValue(&st, WJB_VALUE, v);
	else
		pushJsonbValue(&st, WJB_VALUE, &(JsonbValue) {.type = jbvNull});
	DynTablesPushString(&st, "DecreasesDay", today);
	DynTablesPushInt(&st, "NumberOfDecreasesToday", decreases + (decrease ? 1 : 0));
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	args[0] = CStringGetTextDatum(t->name);
	args[1] = JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
	if (SPI_execute_with_args("UPDATE dynindex.tables SET options = options || $2 WHERE table_name = $1",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the throughput change");
}

/* UpdateTable */
/*
 * What DynamoDB applies to every replica of a global table: its time to live
 * (ttl.c), and of UpdateTable its GSIs, billing mode and capacity (with the
 * attribute definitions a new GSI needs).  The rest — table class, deletion
 * protection, encryption, warm throughput, the stream, ReplicaUpdates — is
 * each replica's own.  Sends those members to the other regions.
 */
static void
replicate_update(DynTable *t, JsonbContainer *r)
{
	static const char *const shared[] = {
		"BillingMode", "ProvisionedThroughput", "OnDemandThroughput", "GlobalSecondaryIndexUpdates", NULL
	};
	JsonbParseState *st = NULL;
	JsonbValue *v;
	bool		any = false;
	const char *const *m;

	if (!DynReplicationIsReplicated(t))
		return;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TableName");
	RqPushString(&st, WJB_VALUE, t->name);
	for (m = shared; *m; m++)
		if ((v = RqGet(r, *m)) != NULL)
		{
			RqPushKey(&st, *m);
			pushJsonbValue(&st, WJB_VALUE, v);
			any = true;
		}
	if (!any)
		return;
	if ((v = RqGet(r, "AttributeDefinitions")) != NULL)
	{
		RqPushKey(&st, "AttributeDefinitions");
		pushJsonbValue(&st, WJB_VALUE, v);
	}
	DynReplicationCaptureOperation(t, "UpdateTable", JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
}

Jsonb *
DynUpdateTable(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	DynTable   *t;
	JsonbValue *updates;
	int			nupdates;
	int			i;
	int			j;
	int			online = 0;
	char	   *billing;
	JsonbValue *pt = RqGet(r, "ProvisionedThroughput");
	bool		index_change = false;
	JsonbValue *stream;
	DynStreamView view;
	ThroughputChange change = {0};
	static const char *const simple_options[] = {
		"SSESpecification", "TableClass", "DeletionProtectionEnabled", "WarmThroughput", NULL
	};
	JsonbValue *odt = RqGet(r, "OnDemandThroughput");
	bool		to_provisioned;
	const char *const *opt;
	DynReplicaPlan replica = {0};

	RqValidate(req, DynUpdateTableFields);
	updates = RqArrayElems(RqGet(r, "GlobalSecondaryIndexUpdates"), &nupdates);
	if (!pt && !RqGet(r, "BillingMode") && !RqGet(r, "StreamSpecification") && nupdates == 0 &&
		!RqGet(r, "SSESpecification") && !RqGet(r, "ReplicaUpdates") && !RqGet(r, "TableClass") &&
		!RqGet(r, "DeletionProtectionEnabled") && !RqGet(r, "OnDemandThroughput") && !RqGet(r, "WarmThroughput"))
		DynValidationError("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
						   "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
						   "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required");
	if (RqStringIs(r, "BillingMode", "PROVISIONED") && !pt)
		DynValidationError("One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED");
	if (pt)
	{
		int64		rcu = RqGetInt(pt->val.binary.data, "ReadCapacityUnits", 0);
		int64		wcu = RqGetInt(pt->val.binary.data, "WriteCapacityUnits", 0);

		if (rcu > INT64CONST(1000000000000))
			DynValidationError("Given value " INT64_FORMAT " for ReadCapacityUnits is out of bounds", rcu);
		if (wcu > INT64CONST(1000000000000))
			DynValidationError("Given value " INT64_FORMAT " for WriteCapacityUnits is out of bounds", wcu);
	}
	for (i = 0; i < nupdates; i++)
	{
		JsonbContainer *u;
		const char *kinds[3] = {"Update", "Create", "Delete"};
		char	   *name = NULL;
		int			k;

		/* a null entry is an update with none of the three actions */
		if (updates[i].type != jbvBinary)
			DynValidationError("One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null");
		u = updates[i].val.binary.data;
		for (k = 0; k < 3 && name == NULL; k++)
			if (RqGet(u, kinds[k]))
				name = RqGetString(RqGet(u, kinds[k])->val.binary.data, "IndexName");
		if (name == NULL)
			DynValidationError("One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null");
		if ((RqGet(u, "Update") != NULL) + (RqGet(u, "Create") != NULL) + (RqGet(u, "Delete") != NULL) > 1)
			DynValidationError("One or more parameter values were invalid: Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object");
		for (j = 0; j < i; j++)
		{
			JsonbContainer *o = updates[j].val.binary.data;

			for (k = 0; k < 3; k++)
				if (RqGet(o, kinds[k]) &&
					strcmp(name, RqGetString(RqGet(o, kinds[k])->val.binary.data, "IndexName")) == 0)
					DynValidationError("One or more parameter values were invalid: Only one global secondary index update per index is allowed simultaneously. Index: %s", name);
		}
		if (RqGet(u, "Create") || RqGet(u, "Delete"))
			online++;
	}
	stream = RqGet(r, "StreamSpecification");
	view = DynTablesCheckStreamSpecification(stream, false);
	if (stream && (pt || RqStringIs(r, "BillingMode", "PROVISIONED")))
		DynValidationError("One or more parameter values were invalid: You cannot modify stream status while updating table IOPS");
	if (stream && online > 0)
		DynValidationError("One or more parameter values were invalid: You cannot create or delete index while changing stream status");

	t = DynTablesForChange(RqGetString(r, "TableName"));
	DynTablesCheckConsistency(r);
	if (RqGet(r, "ReplicaUpdates"))
		DynTablesCheckReplicaUpdates(t, RqGet(r, "ReplicaUpdates"), &replica);
	billing = RqGetString(r, "BillingMode");
	if (pt && strcmp(billing ? billing : t->billing_mode, "PAY_PER_REQUEST") == 0)
		DynValidationError("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
	/* the billing mode the table ends with: OnDemandThroughput only for PAY_PER_REQUEST */
	to_provisioned = strcmp(billing ? billing : t->billing_mode, "PROVISIONED") == 0;
	DynTablesCheckOnDemand(odt, NULL, to_provisioned, DYN_OD_UPDATE);
	if (pt && strcmp(t->billing_mode, "PROVISIONED") == 0)
	{
		int64		rcu = RqGetInt(pt->val.binary.data, "ReadCapacityUnits", 0);
		int64		wcu = RqGetInt(pt->val.binary.data, "WriteCapacityUnits", 0);

		if (rcu == t->read_capacity && wcu == t->write_capacity)
			DynValidationError("The provisioned throughput for the table will not change. The requested value equals the current value. "
							   "Current ReadCapacityUnits provisioned for the table: " INT64_FORMAT ". Requested ReadCapacityUnits: " INT64_FORMAT ". "
							   "Current WriteCapacityUnits provisioned for the table: " INT64_FORMAT ". Requested WriteCapacityUnits: " INT64_FORMAT ". "
							   "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
							   t->read_capacity, rcu, t->write_capacity, wcu);
		change.capacity = true;
		change.old_rcu = t->read_capacity;
		change.old_wcu = t->write_capacity;
		change.decrease = rcu < t->read_capacity || wcu < t->write_capacity;
		record_throughput_change(t, rcu > t->read_capacity || wcu > t->write_capacity, change.decrease);
	}
	if (online > 1)
		DynError(DYN_ERR_LIMIT_EXCEEDED,
				 "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table");
	for (i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global && strcmp(t->indexes[i].status, "ACTIVE") != 0 && online > 0)
			DynError(DYN_ERR_LIMIT_EXCEEDED,
					 "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table");
	if (stream && view != DYN_STREAM_NONE && t->stream.id != 0)
		DynValidationError("Table already has an enabled stream: TableName: %s", t->name);
	if (stream && view == DYN_STREAM_NONE && t->stream.id == 0)
		DynValidationError("Table has no stream to disable: TableName: %s", t->name);

	for (i = 0; i < nupdates; i++)
	{
		JsonbContainer *u = updates[i].val.binary.data;
		JsonbValue *v;

		if ((v = RqGet(u, "Create")) != NULL)
		{
			update_table_create_gsi(t, r, v);
			index_change = true;
		}
		else if ((v = RqGet(u, "Delete")) != NULL)
		{
			update_table_delete_gsi(t, r, RqGetString(v->val.binary.data, "IndexName"));
			index_change = true;
		}
		else if ((v = RqGet(u, "Update")) != NULL)
		{
			char	   *name = RqGetString(v->val.binary.data, "IndexName");
			DynIndex   *idx = find_index(t, name);
			JsonbValue *ipt = RqGetJv(v, "ProvisionedThroughput");
			JsonbValue *iodt = RqGetJv(v, "OnDemandThroughput");

			if (idx == NULL || !idx->is_global)
				DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Requested index %s not found", name);
			/* the GSI's maximum merges as the table's does */
			DynTablesCheckOnDemand(iodt, name, to_provisioned, DYN_OD_UPDATE);
			if (iodt)
				store_index_on_demand(t, name, DynTablesOnDemandMerge(idx->on_demand, iodt, false));
			if (ipt && idx->throughput && strcmp(t->billing_mode, "PROVISIONED") == 0)
			{
				int64		cur_r = RqGetInt(&idx->throughput->root, "ReadCapacityUnits", 0);
				int64		cur_w = RqGetInt(&idx->throughput->root, "WriteCapacityUnits", 0);
				int64		req_r = RqGetInt(ipt->val.binary.data, "ReadCapacityUnits", 0);
				int64		req_w = RqGetInt(ipt->val.binary.data, "WriteCapacityUnits", 0);

				if (cur_r == req_r && cur_w == req_w)
					DynValidationError("The provisioned throughput for the index %s will not change. The requested value equals the current value. "
									   "Current ReadCapacityUnits provisioned for index %s: " INT64_FORMAT ". Requested ReadCapacityUnits: " INT64_FORMAT ". "
									   "Current WriteCapacityUnits provisioned for index %s: " INT64_FORMAT ". Requested WriteCapacityUnits: " INT64_FORMAT ". "
									   "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
									   name, name, cur_r, req_r, name, cur_w, req_w);
			}
			if (ipt)
			{
				Oid			types[3] = {JSONBOID, TEXTOID, TEXTOID};
				Datum		args[3] = {JsonbPGetDatum(DynTablesValueJsonb(ipt)), CStringGetTextDatum(t->name),
				CStringGetTextDatum(name)};

				if (SPI_execute_with_args("UPDATE dynindex.indexes SET throughput = $1 WHERE table_name = $2 AND index_name = $3",
										  3, types, args, NULL, false, 0) != SPI_OK_UPDATE)
					elog(ERROR, "could not update index throughput");
			}
		}
	}
	if (billing || pt)
	{
		Oid			types[4] = {TEXTOID, TEXTOID, INT8OID, INT8OID};
		Datum		args[4];
		char		nulls[5] = "    ";

		args[0] = CStringGetTextDatum(t->name);
		args[1] = CStringGetTextDatum(billing ? billing : t->billing_mode);
		if (pt)
		{
			args[2] = Int64GetDatum(RqGetInt(pt->val.binary.data, "ReadCapacityUnits", 0));
			args[3] = Int64GetDatum(RqGetInt(pt->val.binary.data, "WriteCapacityUnits", 0));
		}
		else
			nulls[2] = nulls[3] = 'n';
		if (SPI_execute_with_args("UPDATE dynindex.tables SET billing_mode = $2, read_capacity = coalesce($3, read_capacity), "
								  "write_capacity = coalesce($4, write_capacity) WHERE table_name = $1",
								  4, types, args, nulls, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not update billing");
	}
	/*
	 * OnDemandThroughput merges member by member, -1 removing a member; the
	 * response shows the merge with the removed members as -1 (DynamoDB's
	 * answer; DescribeTable leaves them out).  Turning PROVISIONED drops it.
	 */
	if (odt)
	{
		Jsonb	   *stored = stored_on_demand(t);

		change.on_demand = DynTablesOnDemandMerge(stored, odt, true);
		store_table_on_demand(t, DynTablesOnDemandMerge(stored, odt, false));
	}
	else if (to_provisioned && strcmp(t->billing_mode, "PAY_PER_REQUEST") == 0)
		drop_on_demand(t);
	for (opt = simple_options; *opt; opt++)
		update_option(t, r, *opt);
	if (stream && view != DYN_STREAM_NONE)
		DynStreamEnable(t, view);
	else if (stream)
		DynStreamDisable(t);
	DynTablesApplyReplicaUpdates(t, &replica);

	if (index_change)
	{
		/* a new GSI's storage gets the table's grants and LeadingKeys policies */
		Oid			types[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(t->name)};

		if (SPI_execute_with_args("SELECT dynindex._secure_storage($1, false)", 1, types, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not secure the index storage");
	}
	DynCatalogChanged();
	CommandCounterIncrement();
	DynCatalogRevalidate();
	t = DynCatalogGetTableOrNotFound(RqGetString(r, "TableName"));
	DynThroughputRatesChanged(t);	/* capacity changes apply at once (api/throughput.c) */
	replicate_update(t, r);
	/* the worker backfills the new index: woken at commit, when it can see it */
	if (index_change)
		DynGsiWakeAtCommit();
	/* the response shows the throughput in force until the change completes */
	return DynTablesWrap("TableDescription", DynTablesDescribeAs(t, "UPDATING", false, &change));
}
