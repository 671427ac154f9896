/*
 * global_tables_legacy.c — the legacy global tables API (version 2017.11.29:
 * CreateGlobalTable, DescribeGlobalTable, ListGlobalTables, UpdateGlobalTable,
 * DescribeGlobalTableSettings, UpdateGlobalTableSettings) and the replica
 * auto scaling operations of version 2019.11.21 (DescribeTableReplicaAutoScaling,
 * UpdateTableReplicaAutoScaling), answered as DynamoDB answers them today.
 *
 * DynamoDB no longer creates 2017.11.29 global tables: CreateGlobalTable is
 * refused in every region, and the other legacy operations do not see
 * 2019.11.21 global tables (GlobalTableNotFoundException; ListGlobalTables
 * lists nothing).  dynindex has only tables of the current version, so these
 * answers are the whole of the legacy API here.  Auto scaling does not exist
 * in dynindex: every setting reads AutoScalingDisabled, disabling succeeds,
 * and enabling is refused.  Messages and their sources: docs/errors.md
 * ("Global tables, legacy operations").
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "api/api.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "replication/replication.h"

/* DynamoDB's answer to creating a 2017.11.29 global table (every region, 2026). */
#define LEGACY_UNSUPPORTED \
	"One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not supported. " \
	"We recommend using DynamoDB global tables version 2019.11.21, instead of version 2017.11.29 (Legacy)."

/* ---- request members (DynamoDB's API model) ---- */

#define GLOBAL_TABLE_NAME \
	{.name = "GlobalTableName",.type = RQ_STRING,.notnull = true,.minlen = 3,.maxlen = 255,.namepattern = true}

static const char *const billing_enum[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};
static const char *const table_class_enum[] = {"STANDARD", "STANDARD_INFREQUENT_ACCESS", NULL};

static const RqField target_tracking_fields[] = {
	{.name = "DisableScaleIn",.type = RQ_BOOLEAN},
	{.name = "ScaleInCooldown",.type = RQ_INTEGER},
	{.name = "ScaleOutCooldown",.type = RQ_INTEGER},
	{.name = "TargetValue",.type = RQ_ANY,.notnull = true},	/* a Double */
	{0}
};

static const RqField policy_update_fields[] = {
	{.name = "PolicyName",.type = RQ_STRING,.minlen = 1,.maxlen = 256},
	{.name = "TargetTrackingScalingPolicyConfiguration",.type = RQ_STRUCT,
	.structname = "AutoScalingTargetTrackingScalingPolicyConfigurationUpdate",.fields = target_tracking_fields,.notnull = true},
	{0}
};

static const RqField settings_update_fields[] = {
	{.name = "MinimumUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	{.name = "MaximumUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	{.name = "AutoScalingDisabled",.type = RQ_BOOLEAN},
	{.name = "AutoScalingRoleArn",.type = RQ_STRING,.minlen = 1,.maxlen = 1600},
	{.name = "ScalingPolicyUpdate",.type = RQ_STRUCT,.structname = "AutoScalingPolicyUpdate",.fields = policy_update_fields},
	{0}
};

#define SETTINGS_UPDATE(member) \
	{.name = member,.type = RQ_STRUCT,.structname = "AutoScalingSettingsUpdate",.fields = settings_update_fields}

static const RqField replica_fields[] = {
	{.name = "RegionName",.type = RQ_STRING},
	{0}
};
static const RqField replica_elem = {.type = RQ_STRUCT,.structname = "Replica",.fields = replica_fields};

static const RqField create_fields[] = {
	GLOBAL_TABLE_NAME,
	{.name = "ReplicationGroup",.type = RQ_LIST,.elem = &replica_elem,.notnull = true},
	{0}
};

static const RqField name_only_fields[] = {
	GLOBAL_TABLE_NAME,
	{0}
};

static const RqField list_fields[] = {
	{.name = "ExclusiveStartGlobalTableName",.type = RQ_STRING,.minlen = 3,.maxlen = 255,.namepattern = true},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1},
	{.name = "RegionName",.type = RQ_STRING},
	{0}
};

static const RqField region_action_fields[] = {
	{.name = "RegionName",.type = RQ_STRING,.notnull = true},
	{0}
};
static const RqField replica_update_fields[] = {
	{.name = "Create",.type = RQ_STRUCT,.structname = "CreateReplicaAction",.fields = region_action_fields},
	{.name = "Delete",.type = RQ_STRUCT,.structname = "DeleteReplicaAction",.fields = region_action_fields},
	{0}
};
static const RqField replica_update_elem = {.type = RQ_STRUCT,.structname = "ReplicaUpdate",.fields = replica_update_fields};

static const RqField update_fields[] = {
	GLOBAL_TABLE_NAME,
	{.name = "ReplicaUpdates",.type = RQ_LIST,.elem = &replica_update_elem,.notnull = true},
	{0}
};

static const RqField gsi_settings_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true,.minlen = 3,.maxlen = 255,.namepattern = true},
	{.name = "ProvisionedWriteCapacityUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	SETTINGS_UPDATE("ProvisionedWriteCapacityAutoScalingSettingsUpdate"),
	{0}
};
static const RqField gsi_settings_elem = {.type = RQ_STRUCT,.structname = "GlobalTableGlobalSecondaryIndexSettingsUpdate",
.fields = gsi_settings_fields};

static const RqField replica_gsi_settings_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true,.minlen = 3,.maxlen = 255,.namepattern = true},
	{.name = "ProvisionedReadCapacityUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	SETTINGS_UPDATE("ProvisionedReadCapacityAutoScalingSettingsUpdate"),
	{0}
};
static const RqField replica_gsi_settings_elem = {.type = RQ_STRUCT,.structname = "ReplicaGlobalSecondaryIndexSettingsUpdate",
.fields = replica_gsi_settings_fields};

static const RqField replica_settings_fields[] = {
	{.name = "RegionName",.type = RQ_STRING,.notnull = true},
	{.name = "ReplicaProvisionedReadCapacityUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	SETTINGS_UPDATE("ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate"),
	{.name = "ReplicaGlobalSecondaryIndexSettingsUpdate",.type = RQ_LIST,.elem = &replica_gsi_settings_elem,.minlen = 1,.maxlen = 20},
	{.name = "ReplicaTableClass",.type = RQ_STRING,.enumvals = table_class_enum},
	{0}
};
static const RqField replica_settings_elem = {.type = RQ_STRUCT,.structname = "ReplicaSettingsUpdate",.fields = replica_settings_fields};

static const RqField update_settings_fields[] = {
	GLOBAL_TABLE_NAME,
	{.name = "GlobalTableBillingMode",.type = RQ_STRING,.enumvals = billing_enum},
	{.name = "GlobalTableProvisionedWriteCapacityUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	SETTINGS_UPDATE("GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate"),
	{.name = "GlobalTableGlobalSecondaryIndexSettingsUpdate",.type = RQ_LIST,.elem = &gsi_settings_elem,.minlen = 1,.maxlen = 20},
	{.name = "ReplicaSettingsUpdate",.type = RQ_LIST,.elem = &replica_settings_elem,.minlen = 1,.maxlen = 50},
	{0}
};

/* UpdateTableReplicaAutoScaling */
static const RqField as_gsi_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.minlen = 3,.maxlen = 255,.namepattern = true},
	SETTINGS_UPDATE("ProvisionedWriteCapacityAutoScalingUpdate"),
	{0}
};
static const RqField as_gsi_elem = {.type = RQ_STRUCT,.structname = "GlobalSecondaryIndexAutoScalingUpdate",.fields = as_gsi_fields};

static const RqField as_replica_gsi_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.minlen = 3,.maxlen = 255,.namepattern = true},
	SETTINGS_UPDATE("ProvisionedReadCapacityAutoScalingUpdate"),
	{0}
};
static const RqField as_replica_gsi_elem = {.type = RQ_STRUCT,.structname = "ReplicaGlobalSecondaryIndexAutoScalingUpdate",
.fields = as_replica_gsi_fields};

static const RqField as_replica_fields[] = {
	{.name = "RegionName",.type = RQ_STRING,.notnull = true},
	{.name = "ReplicaGlobalSecondaryIndexUpdates",.type = RQ_LIST,.elem = &as_replica_gsi_elem},
	SETTINGS_UPDATE("ReplicaProvisionedReadCapacityAutoScalingUpdate"),
	{0}
};
static const RqField as_replica_elem = {.type = RQ_STRUCT,.structname = "ReplicaAutoScalingUpdate",.fields = as_replica_fields};

static const RqField describe_as_fields[] = {
	RQ_TABLE_NAME_OR_ARN,
	{0}
};

static const RqField update_as_fields[] = {
	{.name = "GlobalSecondaryIndexUpdates",.type = RQ_LIST,.elem = &as_gsi_elem,.minlen = 1},
	RQ_TABLE_NAME_OR_ARN,
	SETTINGS_UPDATE("ProvisionedWriteCapacityAutoScalingUpdate"),
	{.name = "ReplicaUpdates",.type = RQ_LIST,.elem = &as_replica_elem,.minlen = 1},
	{0}
};

/* ---- the legacy operations ---- */

/* GlobalTableNotFoundException as the settings operations and UpdateGlobalTable word it. */
pg_noreturn static void
global_table_not_found(const char *name)
{
	DynError(DYN_ERR_GLOBAL_TABLE_NOT_FOUND, "Global table with name: '%s' does not exist.", name);
}

/* The regions of the deployment, "[local, declared...]" (for the enum message). */
static char *
deployment_regions(void)
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

/* Is region this server's or one declared to it? */
static bool
deployment_has(const char *region)
{
	return strcmp(region, DynRegionLocal()) == 0 || DynRegionIsDeclared(region);
}

/*
 * CreateGlobalTable: after the request's shape, a ReplicationGroup region
 * no server of the deployment is fails as DynamoDB's region enum did (up to
 * ten at once); then DynamoDB's refusal of the legacy version, which it
 * answers before looking for the tables.  Never a success: dynindex, like
 * DynamoDB today, creates no 2017.11.29 global table.
 */
Jsonb *
DynCreateGlobalTable(Jsonb *req)
{
	JsonbValue *group;
	JsonbValue *elems;
	StringInfoData msgs;
	int			n;
	int			nbad = 0;

	RqValidate(req, create_fields);
	group = RqGet(RqRoot(req), "ReplicationGroup");
	elems = RqArrayElems(group, &n);
	initStringInfo(&msgs);
	for (int i = 0; i < n; i++)
	{
		char	   *region;

		if (elems[i].type != jbvBinary ||
			(region = RqGetString(elems[i].val.binary.data, "RegionName")) == NULL ||
			deployment_has(region))
			continue;
		if (nbad < 10)
			appendStringInfo(&msgs, "%sValue '%s' at 'replicationGroup.%d.member.regionName' failed to satisfy constraint: "
							 "Member must satisfy enum value set: %s",
							 nbad ? "; " : "", region, i + 1, deployment_regions());
		nbad++;
	}
	if (nbad > 0)
		DynValidationError("One or more parameter values were invalid: %d validation error%s detected: %s",
						   nbad, nbad == 1 ? "" : "s", msgs.data);
	DynValidationError(LEGACY_UNSUPPORTED);
}

/* DescribeGlobalTable: no 2017.11.29 global table exists. */
Jsonb *
DynDescribeGlobalTable(Jsonb *req)
{
	RqValidate(req, name_only_fields);
	DynError(DYN_ERR_GLOBAL_TABLE_NOT_FOUND, "Global table not found: Global table with name: '%s' does not exist.",
			 RqGetString(RqRoot(req), "GlobalTableName"));
}

/* DescribeGlobalTableSettings: no 2017.11.29 global table exists. */
Jsonb *
DynDescribeGlobalTableSettings(Jsonb *req)
{
	RqValidate(req, name_only_fields);
	global_table_not_found(RqGetString(RqRoot(req), "GlobalTableName"));
}

/* UpdateGlobalTableSettings: no 2017.11.29 global table exists. */
Jsonb *
DynUpdateGlobalTableSettings(Jsonb *req)
{
	RqValidate(req, update_settings_fields);
	global_table_not_found(RqGetString(RqRoot(req), "GlobalTableName"));
}

/*
 * UpdateGlobalTable: an empty ReplicaUpdates is DynamoDB's bare "invalid";
 * adding a replica (a Create anywhere in the list) is the legacy version's
 * refusal, answered before the global table is looked for; anything else
 * names a global table that does not exist.
 */
Jsonb *
DynUpdateGlobalTable(Jsonb *req)
{
	JsonbValue *elems;
	int			n;

	RqValidate(req, update_fields);
	elems = RqArrayElems(RqGet(RqRoot(req), "ReplicaUpdates"), &n);
	if (n == 0)
		DynValidationError("One or more parameter values were invalid");
	for (int i = 0; i < n; i++)
	{
		JsonbValue *c = elems[i].type == jbvBinary ? RqGet(elems[i].val.binary.data, "Create") : NULL;

		if (c && c->type != jbvNull)
			DynValidationError(LEGACY_UNSUPPORTED);
	}
	global_table_not_found(RqGetString(RqRoot(req), "GlobalTableName"));
}

/*
 * ListGlobalTables: the 2017.11.29 global tables of the account (of
 * RegionName, when given): none.  DynamoDB answers no
 * LastEvaluatedGlobalTableName then, whatever the Limit.
 */
Jsonb *
DynListGlobalTables(Jsonb *req)
{
	JsonbParseState *st = NULL;

	RqValidate(req, list_fields);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "GlobalTables");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---- replica auto scaling (version 2019.11.21) ---- */

/* The name a request gave (a table ARN's last part), for messages. */
static const char *
given_name(const char *name_or_arn)
{
	const char *slash;

	if (strncmp(name_or_arn, "arn:", 4) == 0 && (slash = strrchr(name_or_arn, '/')) != NULL)
		return slash + 1;
	return name_or_arn;
}

/*
 * The global table of a request: a table with replicas.  A table that does
 * not exist and a table without replicas are the same ResourceNotFoundException.
 */
static DynTable *
global_table(JsonbContainer *r)
{
	const char *name = RqGetString(r, "TableName");
	DynTable   *t = DynCatalogGetTable(name);

	if (t == NULL || DynReplicationReplicas(t) == NIL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Global table with name: '%s' does not exist.",
				 t ? t->name : given_name(name));
	return t;
}

/* {"AutoScalingDisabled": true, "ScalingPolicies": []}: dynindex scales nothing. */
static void
push_disabled(JsonbParseState **st, const char *key)
{
	RqPushKey(st, key);
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(st, "AutoScalingDisabled");
	RqPushBool(st, WJB_VALUE, true);
	RqPushKey(st, "ScalingPolicies");
	pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	pushJsonbValue(st, WJB_END_ARRAY, NULL);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* One replica of a TableAutoScalingDescription. */
static void
push_replica(JsonbParseState **st, DynTable *t, const char *region, const char *status)
{
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	DynTablesPushString(st, "RegionName", region);
	RqPushKey(st, "GlobalSecondaryIndexes");
	pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < t->nindexes; i++)
	{
		if (!t->indexes[i].is_global)
			continue;
		pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
		DynTablesPushString(st, "IndexName", t->indexes[i].name);
		DynTablesPushString(st, "IndexStatus", t->indexes[i].status ? t->indexes[i].status : "ACTIVE");
		push_disabled(st, "ProvisionedReadCapacityAutoScalingSettings");
		push_disabled(st, "ProvisionedWriteCapacityAutoScalingSettings");
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(st, WJB_END_ARRAY, NULL);
	push_disabled(st, "ReplicaProvisionedReadCapacityAutoScalingSettings");
	push_disabled(st, "ReplicaProvisionedWriteCapacityAutoScalingSettings");
	DynTablesPushString(st, "ReplicaStatus", status);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/*
 * {"TableAutoScalingDescription": ...}: every replica, this region's
 * included, sorted by region name as DynamoDB lists them, each with its GSIs.
 */
static Jsonb *
auto_scaling_description(DynTable *t)
{
	JsonbParseState *st = NULL;
	const char *local = DynRegionLocal();
	const char *status = t->importing ? "CREATING" : "ACTIVE";
	bool		local_done = false;
	ListCell   *lc;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "TableAutoScalingDescription");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	DynTablesPushString(&st, "TableName", t->name);
	DynTablesPushString(&st, "TableStatus", status);
	RqPushKey(&st, "Replicas");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, DynReplicationReplicas(t))
	{
		char	   *r = lfirst(lc);
		char	   *tab = strchr(r, '\t');

		*tab = '\0';
		if (!local_done && strcmp(local, r) < 0)
		{
			push_replica(&st, t, local, status);
			local_done = true;
		}
		push_replica(&st, t, r, tab + 1);
	}
	if (!local_done)
		push_replica(&st, t, local, status);
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* DescribeTableReplicaAutoScaling: the replicas' settings, all without auto scaling. */
Jsonb *
DynDescribeTableReplicaAutoScaling(Jsonb *req)
{
	RqValidate(req, describe_as_fields);
	return auto_scaling_description(global_table(RqRoot(req)));
}

/* The settings updates of an UpdateTableReplicaAutoScaling request, with their settings API names. */
typedef struct SettingsUpdate
{
	JsonbContainer *u;
	const char *param;			/* UpdateGlobalTableSettings' name, used in DynamoDB's messages */
} SettingsUpdate;

/* Append the settings update member of obj (if any) to out. */
static void
collect_update(List **out, JsonbContainer *obj, const char *member, const char *param)
{
	JsonbValue *v = RqGet(obj, member);
	SettingsUpdate *s;

	if (v == NULL || v->type != jbvBinary)
		return;
	s = palloc(sizeof(SettingsUpdate));
	s->u = v->val.binary.data;
	s->param = param;
	*out = lappend(*out, s);
}

/* The elements of list member of obj (n: how many). */
static JsonbValue *
list_of(JsonbContainer *obj, const char *member, int *n)
{
	JsonbValue *v = RqGet(obj, member);

	*n = 0;
	return v && v->type == jbvBinary ? RqArrayElems(v, n) : NULL;
}

/* Is name one of t's GSIs? */
static bool
has_gsi(DynTable *t, const char *name)
{
	for (int i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global && strcmp(t->indexes[i].name, name) == 0)
			return true;
	return false;
}

/* Is region a replica of t (this region included)? */
static bool
is_replica(DynTable *t, const char *region)
{
	ListCell   *lc;

	if (strcmp(region, DynRegionLocal()) == 0)
		return true;
	foreach(lc, DynReplicationReplicas(t))
	{
		char	   *r = lfirst(lc);

		if (strncmp(r, region, strlen(region)) == 0 && r[strlen(region)] == '\t')
			return true;
	}
	return false;
}

/* Append name to a comma-separated list. */
static void
append_listed(StringInfo s, const char *name)
{
	appendStringInfo(s, "%s%s", s->len ? ", " : "", name);
}

/*
 * Check one AutoScalingSettingsUpdate as DynamoDB does: disabling takes no
 * MaximumUnits, ScalingPolicyUpdate nor MinimumUnits; anything else needs
 * all three (DynamoDB lists them in this order).  True: it disables.
 */
static bool
check_settings_update(DynTable *t, SettingsUpdate *s)
{
	const char *const members[3] = {"MaximumUnits", "ScalingPolicyUpdate", "MinimumUnits"};
	bool		disabled = RqGetBool(s->u, "AutoScalingDisabled", false);
	StringInfoData listed;

	initStringInfo(&listed);
	for (int k = 0; k < 3; k++)
	{
		JsonbValue *v = RqGet(s->u, members[k]);
		bool		present = v != NULL && v->type != jbvNull;

		if (disabled ? present : !present)
			appendStringInfo(&listed, "%s'%s'", listed.len ? ", " : "", members[k]);
	}
	if (listed.len > 0 && disabled)
		DynValidationError("Failed to update settings for global table with name ‘%s’: Parameters %s must be left blank when disabling auto scaling.",
						   t->name, listed.data);
	if (listed.len > 0)
		DynValidationError("Failed to update settings for global table with name: ‘%s’: Parameters %s are required unless auto scaling is being disabled.",
						   t->name, listed.data);
	return disabled;
}

/*
 * UpdateTableReplicaAutoScaling: the table must be a global table; each
 * settings update is checked; the replicas and GSIs it names must exist
 * (ResourceNotFoundException, DynamoDB's words).  Disabling auto scaling is
 * done (it is never enabled here) and answers the description; enabling it
 * is refused: on an on-demand table with DynamoDB's message, on a
 * provisioned one with dynindex's own (no auto scaling is built).
 */
Jsonb *
DynUpdateTableReplicaAutoScaling(Jsonb *req)
{
	JsonbContainer *r = RqRoot(req);
	DynTable   *t;
	List	   *updates = NIL;
	JsonbValue *elems;
	StringInfoData missing;
	StringInfoData enabling;
	ListCell   *lc;
	int			n;

	RqValidate(req, update_as_fields);
	t = global_table(r);

	/* the settings updates, with the names DynamoDB's messages give them */
	collect_update(&updates, r, "ProvisionedWriteCapacityAutoScalingUpdate",
				   "GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate");
	elems = list_of(r, "GlobalSecondaryIndexUpdates", &n);
	for (int i = 0; i < n; i++)
		if (elems[i].type == jbvBinary)
			collect_update(&updates, elems[i].val.binary.data, "ProvisionedWriteCapacityAutoScalingUpdate",
						   "ProvisionedWriteCapacityAutoScalingSettingsUpdate");
	elems = list_of(r, "ReplicaUpdates", &n);
	for (int i = 0; i < n; i++)
	{
		JsonbValue *gsis;
		int			ng;

		if (elems[i].type != jbvBinary)
			continue;
		collect_update(&updates, elems[i].val.binary.data, "ReplicaProvisionedReadCapacityAutoScalingUpdate",
					   "ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate");
		gsis = list_of(elems[i].val.binary.data, "ReplicaGlobalSecondaryIndexUpdates", &ng);
		for (int j = 0; j < ng; j++)
			if (gsis[j].type == jbvBinary)
				collect_update(&updates, gsis[j].val.binary.data, "ProvisionedReadCapacityAutoScalingUpdate",
							   "ProvisionedReadCapacityAutoScalingSettingsUpdate");
	}
	initStringInfo(&enabling);
	foreach(lc, updates)
	{
		SettingsUpdate *s = lfirst(lc);

		if (!check_settings_update(t, s) && strstr(enabling.data, s->param) == NULL)
			appendStringInfo(&enabling, "%s'%s'", enabling.len ? ", " : "", s->param);
	}

	/* the replicas, then the GSIs, the request names */
	initStringInfo(&missing);
	elems = list_of(r, "ReplicaUpdates", &n);
	for (int i = 0; i < n; i++)
	{
		char	   *region = elems[i].type == jbvBinary ? RqGetString(elems[i].val.binary.data, "RegionName") : NULL;

		if (region && !is_replica(t, region))
			append_listed(&missing, region);
	}
	if (missing.len > 0)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND,
				 "Failed to update settings for global table with name: ‘%s’ because a replica does not exist in regions: ‘[%s]’.",
				 t->name, missing.data);
	elems = list_of(r, "GlobalSecondaryIndexUpdates", &n);
	for (int i = 0; i < n; i++)
	{
		char	   *index = elems[i].type == jbvBinary ? RqGetString(elems[i].val.binary.data, "IndexName") : NULL;

		if (index && !has_gsi(t, index))
			append_listed(&missing, index);
	}
	elems = list_of(r, "ReplicaUpdates", &n);
	for (int i = 0; i < n; i++)
	{
		int			ng = 0;
		JsonbValue *gsis = elems[i].type == jbvBinary ?
			list_of(elems[i].val.binary.data, "ReplicaGlobalSecondaryIndexUpdates", &ng) : NULL;

		for (int j = 0; j < ng; j++)
		{
			char	   *index = gsis[j].type == jbvBinary ? RqGetString(gsis[j].val.binary.data, "IndexName") : NULL;

			if (index && !has_gsi(t, index))
				append_listed(&missing, index);
		}
	}
	if (missing.len > 0)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND,
				 "Failed to update settings for global table with name: ‘%s’ because the global secondary indexes with names: ‘[%s]’ do not exist.",
				 t->name, missing.data);

	/* enabling auto scaling: not built */
	if (enabling.len > 0)
	{
		StringInfoData regions;
		char	   *local = pstrdup(DynRegionLocal());
		bool		local_done = false;

		if (strcmp(t->billing_mode, "PAY_PER_REQUEST") != 0)
			DynValidationError("Failed to update global table with name ‘%s‘. Auto scaling is not supported: "
							   "dynindex does not scale provisioned throughput, set it with UpdateTable. Parameters: %s.",
							   t->name, enabling.data);
		/* DynamoDB's message: every replica's region in capitals, sorted */
		initStringInfo(&regions);
		foreach(lc, DynReplicationReplicas(t))
		{
			char	   *rg = lfirst(lc);

			*strchr(rg, '\t') = '\0';
			if (!local_done && strcmp(local, rg) < 0)
			{
				appendStringInfo(&regions, "%s'%s'", regions.len ? ", " : "", local);
				local_done = true;
			}
			appendStringInfo(&regions, "%s'%s'", regions.len ? ", " : "", rg);
		}
		if (!local_done)
			appendStringInfo(&regions, "%s'%s'", regions.len ? ", " : "", local);
		for (char *p = regions.data; *p; p++)
			*p = pg_toupper((unsigned char) *p);
		DynValidationError("Failed to update global table with name ‘%s‘. Replicas %s BillingMode is PayPerRequest. "
						   "You must convert table's BillingMode to PROVISIONED to set parameters: %s.",
						   t->name, regions.data, enabling.data);
	}
	return auto_scaling_description(t);
}
