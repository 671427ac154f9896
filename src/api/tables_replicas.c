/*
 * tables_replicas.c — UpdateTable's ReplicaUpdates (global tables, version 2019.11.21):
 * the checks of each ReplicationGroupUpdate, with DynamoDB's messages (docs/errors.md).
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "api/request.h"
#include "api/tables.h"
#include "common/errors.h"
#include "replication/replication.h"

/*
 * The regions a replica can be created in, for the "is not supported"
 * message: "[a, b]".  DynamoDB lists its regions; until replication is built
 * (docs/global-tables.md) dynindex can create replicas in none but its own.
 */
static char *
supported_regions(void)
{
	return psprintf("[%s]", DynRegionLocal());
}

/* Has table t a replica in region? */
static bool
is_member(DynTable *t, const char *region)
{
	ListCell   *lc;

	foreach(lc, DynReplicationReplicas(t))
	{
		char	   *r = lfirst(lc);

		*strchr(r, '\t') = '\0';
		if (strcmp(r, region) == 0)
			return true;
	}
	return false;
}

/*
 * Check ReplicaUpdates: every element names exactly one action and another
 * region of the deployment (declared with dynindex.set_region); a Create
 * names a region the table has no replica in yet, an Update or Delete one it
 * has.  What would then change something is not built (creating a replica
 * copies the table there; deleting or updating one): it is refused as
 * DynamoDB refuses a region it cannot replicate to, never answered UPDATING
 * with nothing done (docs/global-tables.md).  Every element fails here.
 */
void
DynTablesCheckReplicaUpdates(DynTable *t, JsonbValue *updates)
{
	JsonbValue *elems;
	int			n;
	int			i;

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
		bool		member;

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
		member = is_member(t, region);
		if (kind == 0 && member)
			DynValidationError("Failed to create a the new replica of table with name: ‘%s’ because one or more replicas already existed as tables.",
							   t->name);
		if (!DynRegionIsDeclared(region) || kind == 0 || member)
			DynValidationError("Region %s is not supported. The latest version of global tables are only supported in the following regions: %s",
							   region, supported_regions());
		/* Update, Delete of a region the table has no replica in */
		DynValidationError("Update global table operation failed because one or more replicas were not part of the global table. "
						   "Please retry the request without these replicas: [%s].", region);
	}
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
