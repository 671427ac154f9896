/*
 * tables_replicas.c — UpdateTable's ReplicaUpdates (global tables, version 2019.11.21):
 * the checks of each ReplicationGroupUpdate, with DynamoDB's messages (docs/errors.md).
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "api/request.h"
#include "api/tables.h"
#include "common/arn.h"
#include "common/errors.h"

/* The regions a replica may be created in, for the "is not supported" message: "[a, b]". */
static char *
supported_regions(void)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "[%s]", dynindex_region);
	return s.data;
}

/*
 * Check ReplicaUpdates: every element names exactly one action, and the
 * region each names is one this server can replicate to.  No region besides
 * the local one can be declared yet, so every request that names a region
 * fails here: a replica dynindex cannot create is never answered UPDATING.
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
		if (strcmp(region, dynindex_region) == 0)
			DynValidationError("Cannot add, delete, or update the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as required.");
		DynValidationError("Region %s is not supported. The latest version of global tables are only supported in the following regions: %s",
						   region, supported_regions());
	}
}
