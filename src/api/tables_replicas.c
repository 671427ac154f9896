/*
 * tables_replicas.c — UpdateTable's ReplicaUpdates (global tables, version 2019.11.21):
 * the checks of each ReplicationGroupUpdate, with DynamoDB's messages (docs/errors.md),
 * and the request side of a Create or Delete (the job: replication/replica.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "api/request.h"
#include "api/tables.h"
#include "common/errors.h"
#include "catalog/dyn_catalog.h"
#include "common/jobs.h"
#include "replication/replication.h"
#include "streams/streams.h"

/*
 * The regions a replica can be created in, for the "is not supported"
 * message: "[a, b]" — this server's and the declared ones, as DynamoDB
 * lists the regions where global tables exist.
 */
static char *
supported_regions(void)
{
	StringInfoData s;
	ListCell   *lc;

	initStringInfo(&s);
	appendStringInfo(&s, "[%s", DynRegionLocal());
	foreach(lc, DynRegionsDeclared())
		appendStringInfo(&s, ", %s", (char *) lfirst(lc));
	appendStringInfoChar(&s, ']');
	return s.data;
}

/* The status of table t's replica in region (NULL: none). */
static char *
replica_status(DynTable *t, const char *region)
{
	ListCell   *lc;

	foreach(lc, DynReplicationReplicas(t))
	{
		char	   *r = lfirst(lc);
		char	   *tab = strchr(r, '\t');

		*tab = '\0';
		if (strcmp(r, region) == 0)
			return tab + 1;
	}
	return NULL;
}

/* Is a replica of table t being created or deleted? */
static bool
replica_in_transition(DynTable *t)
{
	ListCell   *lc;

	foreach(lc, DynReplicationReplicas(t))
	{
		char	   *r = lfirst(lc);

		if (strstr(r, "\tCREATING") || strstr(r, "\tDELETING") || strstr(r, "\tUPDATING"))
			return true;
	}
	return false;
}

/* Is index a GSI of table t? */
static bool
is_gsi(DynTable *t, const char *index)
{
	for (int i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global && strcmp(t->indexes[i].name, index) == 0)
			return true;
	return false;
}

/*
 * An Update of a replica: what it overrides must fit the table (the same
 * definition in every region): a read capacity override needs provisioned
 * billing, an on-demand maximum on-demand billing (the messages of the same
 * settings of UpdateTable), and a GSI override a GSI of the table.
 */
static void
check_update(DynTable *t, JsonbValue *action)
{
	JsonbContainer *a = action->val.binary.data;
	bool		provisioned = strcmp(t->billing_mode, "PROVISIONED") == 0;
	JsonbValue *gsis = RqGet(a, "GlobalSecondaryIndexes");
	JsonbValue *elems;
	int			n;

	if (RqGet(a, "ProvisionedThroughputOverride") && !provisioned)
		DynValidationError("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
	DynTablesCheckOnDemand(RqGet(a, "OnDemandThroughputOverride"), NULL, provisioned, DYN_OD_UPDATE);
	if (gsis == NULL)
		return;
	elems = RqArrayElems(gsis, &n);
	for (int i = 0; i < n; i++)
	{
		JsonbContainer *g = elems[i].val.binary.data;
		char	   *name = RqGetString(g, "IndexName");

		if (name == NULL || !is_gsi(t, name))
			DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Requested index %s not found", name ? name : "");
		if (RqGet(g, "ProvisionedThroughputOverride") && !provisioned)
			DynValidationError("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
		DynTablesCheckOnDemand(RqGet(g, "OnDemandThroughputOverride"), name, provisioned, DYN_OD_UPDATE);
	}
}

/*
 * Check ReplicaUpdates: every element names exactly one action and another
 * region of the deployment (declared with dynindex.set_region); a Create
 * names a region the table has no replica in yet, an Update or Delete one it
 * has.  plan is the one Create, Update or Delete accepted (one per request;
 * docs/global-tables.md).
 */
void
DynTablesCheckReplicaUpdates(DynTable *t, JsonbValue *updates, DynReplicaPlan *plan)
{
	JsonbValue *elems;
	int			n;
	int			i;

	memset(plan, 0, sizeof(*plan));
	elems = RqArrayElems(updates, &n);
	for (i = 0; i < n; i++)
	{
		JsonbContainer *u;
		JsonbValue *action = NULL;
		const char *kinds[3] = {"Create", "Update", "Delete"};
		int			nactions = 0;
		int			kind = 0;
		int			k;
		char	   *region;
		char	   *status;

		if (elems[i].type != jbvBinary || JsonContainerSize(elems[i].val.binary.data) == 0)
			DynValidationError("There are no actions specified in the Replica Update Action of the request.");
		u = elems[i].val.binary.data;
		for (k = 0; k < 3; k++)
		{
			JsonbValue *v = RqGet(u, kinds[k]);

			if (v && v->type != jbvNull)
			{
				nactions++;
				action = v;
				kind = k;
			}
		}
		if (nactions > 1)
			DynValidationError("Update table operation with more than one type of replica actions not allowed.");
		if (nactions == 0 || action->type != jbvBinary)
			DynValidationError("There are no actions specified in the Replica Update Action of the request.");
		region = RqGetString(action->val.binary.data, "RegionName");
		/* an Update naming only its region changes nothing */
		if (kind == 1 && JsonContainerSize(action->val.binary.data) <= 1)
			DynValidationError("There are no actions specified in the Replica Update Action of the request.");
		if (region == NULL)		/* RqValidate refused a null RegionName */
			elog(ERROR, "replica update without a region");
		if (strcmp(region, DynRegionLocal()) == 0)
			DynValidationError("Cannot add, delete, or update the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as required.");
		status = replica_status(t, region);
		if (kind == 0 && status)
			DynValidationError("Failed to create a the new replica of table with name: ‘%s’ because one or more replicas already existed as tables.",
							   t->name);
		if (!DynRegionIsDeclared(region))
			DynValidationError("Region %s is not supported. The latest version of global tables are only supported in the following regions: %s",
							   region, supported_regions());
		if (kind != 0 && status == NULL)
			DynValidationError("Update global table operation failed because one or more replicas were not part of the global table. "
							   "Please retry the request without these replicas: [%s].", region);
		if (kind == 1)
			check_update(t, action);
		/* dynindex's own limit: one replica created, updated or deleted at a time */
		if (plan->region)
			DynValidationError("One or more parameter values were invalid: dynindex creates, updates or deletes one replica per UpdateTable request");
		plan->region = region;
		plan->action = kinds[kind];
		plan->update = kind == 1 ? action : NULL;
	}
	if (plan->region && replica_in_transition(t))
		DynError(DYN_ERR_RESOURCE_IN_USE, "Attempt to change a resource which is still in use: Table is being updated: %s", t->name);
}

/*
 * Do the accepted Create, Update or Delete: the replica CREATING, UPDATING or
 * DELETING, and a job of kind "replica" that does the work after this
 * transaction commits (replication/replica.c).  A Create turns the table's
 * stream on (NEW_AND_OLD_IMAGES) if it has none, as DynamoDB does for a
 * global table.
 */
void
DynTablesApplyReplicaUpdates(DynTable *t, const DynReplicaPlan *plan)
{
	Oid			types[5] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, JSONBOID};
	Datum		args[5];
	char		nulls[6] = "     ";	/* 5 and the terminator (GCC 15: -Wunterminated-string-initialization) */
	int64		job;
	const char *sql;

	if (plan->region == NULL)
		return;
	if (strcmp(plan->action, "Create") == 0 && t->stream.id == 0)
		DynStreamEnable(t, DYN_STREAM_NEW_AND_OLD_IMAGES);
	job = DynJobSubmit("replica");
	args[0] = Int64GetDatum(job);
	args[1] = CStringGetTextDatum(t->name);
	args[2] = CStringGetTextDatum(plan->region);
	args[3] = CStringGetTextDatum(plan->action);
	if (plan->update)
		args[4] = JsonbPGetDatum(JsonbValueToJsonb(plan->update));
	else
		nulls[4] = 'n';
	if (SPI_execute_with_args("INSERT INTO dynindex.replica_jobs (job_id, table_name, region_name, action, request) "
							  "VALUES ($1, $2, $3, $4, $5)", 5, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the replica job");
	sql = strcmp(plan->action, "Create") == 0 ?
		"INSERT INTO dynindex.replicas (table_name, region_name, status) VALUES ($2, $3, 'CREATING')" :
		strcmp(plan->action, "Update") == 0 ?
		"UPDATE dynindex.replicas SET status = 'UPDATING' WHERE table_name = $2 AND region_name = $3" :
		"UPDATE dynindex.replicas SET status = 'DELETING' WHERE table_name = $2 AND region_name = $3";
	if (SPI_execute_with_args(sql, 5, types, args, nulls, false, 0) < 0)
		elog(ERROR, "could not record the replica");
	DynCatalogChanged();
}

/*
 * MultiRegionConsistency and GlobalTableWitnessUpdates: a witness needs
 * STRONG (DynamoDB's message); STRONG itself — synchronous replication with
 * ReplicatedWriteConflictException — is not built: dynindex replicates
 * asynchronously (docs/global-tables.md), and says so rather than ignore it.
 */
void
DynTablesCheckConsistency(JsonbContainer *r)
{
	JsonbValue *w = RqGet(r, "GlobalTableWitnessUpdates");

	if (w && !RqStringIs(r, "MultiRegionConsistency", "STRONG"))
		DynValidationError("MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates parameter is present");
	if (w || RqStringIs(r, "MultiRegionConsistency", "STRONG"))
		DynValidationError("One or more parameter values were invalid: MultiRegionConsistency STRONG is not supported: "
						   "replication between regions is asynchronous");
}
