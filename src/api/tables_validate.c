/*
 * tables_validate.c — the request shapes of the table operations and their
 * DynamoDB rules (key schemas, projections, attribute definitions, streams).
 */
#include "postgres.h"

#include "api/api.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "streams/streams.h"

/* ---------------------------------------------------------------- schemas */

static const char *const billing_enum[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};
static const char *const key_type_enum[] = {"HASH", "RANGE", NULL};
static const char *const attr_type_enum[] = {"B", "N", "S", NULL};
static const char *const projection_enum[] = {"ALL", "INCLUDE", "KEYS_ONLY", NULL};
static const char *const table_class_enum[] = {"STANDARD", "STANDARD_INFREQUENT_ACCESS", NULL};
/* in the order DynamoDB lists them in its enum message */
static const char *const stream_view_enum[] = {"OLD_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES", "NEW_IMAGE", NULL};
static const char *const sse_type_enum[] = {"AES256", "KMS", NULL};

/* a null name is refused here: the catalog's projection holds names only (catalog.c) */
static const RqField nonkey_elem = {.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 255};

static const RqField attr_def_fields[] = {
	{.name = "AttributeName",.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 255},
	{.name = "AttributeType",.type = RQ_STRING,.notnull = true,.enumvals = attr_type_enum},
	{0}
};
static const RqField attr_def_elem = {.type = RQ_STRUCT,.structname = "AttributeDefinition",.fields = attr_def_fields};

static const RqField key_elem_fields[] = {
	{.name = "AttributeName",.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 255},
	{.name = "KeyType",.type = RQ_STRING,.notnull = true,.enumvals = key_type_enum},
	{0}
};
static const RqField key_elem = {.type = RQ_STRUCT,.structname = "KeySchemaElement",.fields = key_elem_fields};

static const RqField throughput_fields[] = {
	{.name = "ReadCapacityUnits",.type = RQ_LONG,.notnull = true,.hasmin = true,.minval = 1},
	{.name = "WriteCapacityUnits",.type = RQ_LONG,.notnull = true,.hasmin = true,.minval = 1},
	{0}
};
static const RqField on_demand_fields[] = {
	{.name = "MaxReadRequestUnits",.type = RQ_LONG},
	{.name = "MaxWriteRequestUnits",.type = RQ_LONG},
	{0}
};
static const RqField warm_fields[] = {
	{.name = "ReadUnitsPerSecond",.type = RQ_LONG},
	{.name = "WriteUnitsPerSecond",.type = RQ_LONG},
	{0}
};
static const RqField projection_fields[] = {
	{.name = "ProjectionType",.type = RQ_STRING,.enumvals = projection_enum},
	{.name = "NonKeyAttributes",.type = RQ_LIST,.elem = &nonkey_elem,.minlen = 1,.maxlen = 20},
	{0}
};

static const RqField lsi_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "KeySchema",.type = RQ_LIST,.elem = &key_elem,.notnull = true,.minlen = 1,.maxlen = 2},
	{.name = "Projection",.type = RQ_STRUCT,.structname = "Projection",.fields = projection_fields,.notnull = true},
	{0}
};
static const RqField lsi_elem = {.type = RQ_STRUCT,.structname = "LocalSecondaryIndex",.fields = lsi_fields};

static const RqField gsi_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "KeySchema",.type = RQ_LIST,.elem = &key_elem,.notnull = true,.minlen = 1,.maxlen = 8},
	{.name = "Projection",.type = RQ_STRUCT,.structname = "Projection",.fields = projection_fields,.notnull = true},
	{.name = "ProvisionedThroughput",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",.fields = throughput_fields},
	{.name = "OnDemandThroughput",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = on_demand_fields},
	{.name = "WarmThroughput",.type = RQ_STRUCT,.structname = "WarmThroughput",.fields = warm_fields},
	{0}
};
static const RqField gsi_elem = {.type = RQ_STRUCT,.structname = "GlobalSecondaryIndex",.fields = gsi_fields};

static const RqField stream_fields[] = {
	{.name = "StreamEnabled",.type = RQ_BOOLEAN,.notnull = true},
	{.name = "StreamViewType",.type = RQ_STRING,.enumvals = stream_view_enum},
	{0}
};
static const RqField sse_fields[] = {
	{.name = "Enabled",.type = RQ_BOOLEAN},
	{.name = "SSEType",.type = RQ_STRING,.enumvals = sse_type_enum},
	{.name = "KMSMasterKeyId",.type = RQ_STRING},
	{0}
};
/* no constraints: bad tags get DynamoDB's own messages (src/api/tags.c) */
static const RqField tag_fields[] = {
	{.name = "Key",.type = RQ_STRING},
	{.name = "Value",.type = RQ_STRING},
	{0}
};
static const RqField tag_elem = {.type = RQ_STRUCT,.structname = "Tag",.fields = tag_fields};

const RqField DynCreateTableFields[] = {
	{.name = "AttributeDefinitions",.type = RQ_LIST,.elem = &attr_def_elem,.notnull = true},
	{.name = "TableName",.type = RQ_STRING,.required = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "KeySchema",.type = RQ_LIST,.elem = &key_elem,.notnull = true,.minlen = 1,.maxlen = 2},
	{.name = "LocalSecondaryIndexes",.type = RQ_LIST,.elem = &lsi_elem},
	{.name = "GlobalSecondaryIndexes",.type = RQ_LIST,.elem = &gsi_elem},
	{.name = "BillingMode",.type = RQ_STRING,.enumvals = billing_enum},
	{.name = "ProvisionedThroughput",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",.fields = throughput_fields},
	{.name = "StreamSpecification",.type = RQ_STRUCT,.structname = "StreamSpecification",.fields = stream_fields},
	{.name = "SSESpecification",.type = RQ_STRUCT,.structname = "SSESpecification",.fields = sse_fields},
	{.name = "Tags",.type = RQ_LIST,.elem = &tag_elem},
	{.name = "TableClass",.type = RQ_STRING,.enumvals = table_class_enum},
	{.name = "DeletionProtectionEnabled",.type = RQ_BOOLEAN},
	{.name = "ResourcePolicy",.type = RQ_STRING},
	{.name = "OnDemandThroughput",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = on_demand_fields},
	{.name = "WarmThroughput",.type = RQ_STRUCT,.structname = "WarmThroughput",.fields = warm_fields},
	{0}
};

/* Shapes RestoreTableFromBackup's overrides share with CreateTable (src/api/backups.c). */
const RqField DynLsiElemField = {.type = RQ_STRUCT,.structname = "LocalSecondaryIndex",.fields = lsi_fields};
const RqField DynGsiElemField = {.type = RQ_STRUCT,.structname = "GlobalSecondaryIndex",.fields = gsi_fields};
const RqField DynThroughputField = {.type = RQ_STRUCT,.structname = "ProvisionedThroughput",.fields = throughput_fields};
const RqField DynOnDemandThroughputField = {.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = on_demand_fields};
const RqField DynSseSpecificationField = {.type = RQ_STRUCT,.structname = "SSESpecification",.fields = sse_fields};

const RqField DynTableNameOnlyFields[] = {
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablearn = true},
	{0}
};

/* DescribeTable: as DynTableNameOnlyFields; an empty name is reported as DynamoDB does today. */
const RqField DynDescribeTableFields[] = {
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablearn = true,.empty_name_min3 = true},
	{0}
};

const RqField DynListTablesFields[] = {
	{.name = "ExclusiveStartTableName",.type = RQ_STRING,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 100},
	{0}
};

/* UpdateTable */
static const RqField gsi_update_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "ProvisionedThroughput",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",.fields = throughput_fields},
	{.name = "OnDemandThroughput",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = on_demand_fields},
	{.name = "WarmThroughput",.type = RQ_STRUCT,.structname = "WarmThroughput",.fields = warm_fields},
	{0}
};
static const RqField gsi_delete_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true,.namepattern = true,.minlen = 3,.maxlen = 255},
	{0}
};
static const RqField gsi_update_action_fields[] = {
	{.name = "Update",.type = RQ_STRUCT,.structname = "UpdateGlobalSecondaryIndexAction",.fields = gsi_update_fields},
	{.name = "Create",.type = RQ_STRUCT,.structname = "CreateGlobalSecondaryIndexAction",.fields = gsi_fields},
	{.name = "Delete",.type = RQ_STRUCT,.structname = "DeleteGlobalSecondaryIndexAction",.fields = gsi_delete_fields},
	{0}
};
static const RqField gsi_update_elem = {
	.type = RQ_STRUCT,.structname = "GlobalSecondaryIndexUpdate",.fields = gsi_update_action_fields
};
static const RqField any_elem = {.type = RQ_ANY};
static const char *const consistency_enum[] = {"EVENTUAL", "STRONG", NULL};

/* ReplicaUpdates (global tables 2019.11.21): ReplicationGroupUpdate and its three actions */
static const RqField replica_pt_fields[] = {
	{.name = "ReadCapacityUnits",.type = RQ_LONG,.hasmin = true,.minval = 1},
	{0}
};
static const RqField replica_od_fields[] = {
	{.name = "MaxReadRequestUnits",.type = RQ_LONG},
	{0}
};
static const RqField replica_gsi_fields[] = {
	{.name = "IndexName",.type = RQ_STRING,.notnull = true},
	{.name = "ProvisionedThroughputOverride",.type = RQ_STRUCT,.structname = "ProvisionedThroughputOverride",.fields = replica_pt_fields},
	{.name = "OnDemandThroughputOverride",.type = RQ_STRUCT,.structname = "OnDemandThroughputOverride",.fields = replica_od_fields},
	{0}
};
static const RqField replica_gsi_elem = {
	.type = RQ_STRUCT,.structname = "ReplicaGlobalSecondaryIndex",.fields = replica_gsi_fields
};
static const RqField replica_member_fields[] = {
	{.name = "RegionName",.type = RQ_STRING,.notnull = true},
	{.name = "KMSMasterKeyId",.type = RQ_STRING},
	{.name = "ProvisionedThroughputOverride",.type = RQ_STRUCT,.structname = "ProvisionedThroughputOverride",.fields = replica_pt_fields},
	{.name = "OnDemandThroughputOverride",.type = RQ_STRUCT,.structname = "OnDemandThroughputOverride",.fields = replica_od_fields},
	{.name = "GlobalSecondaryIndexes",.type = RQ_LIST,.elem = &replica_gsi_elem,.minlen = 1},
	{.name = "TableClassOverride",.type = RQ_STRING,.enumvals = table_class_enum},
	{0}
};
static const RqField replica_delete_fields[] = {
	{.name = "RegionName",.type = RQ_STRING,.notnull = true},
	{0}
};
static const RqField replica_update_action_fields[] = {
	{.name = "Create",.type = RQ_STRUCT,.structname = "CreateReplicationGroupMemberAction",.fields = replica_member_fields},
	{.name = "Update",.type = RQ_STRUCT,.structname = "UpdateReplicationGroupMemberAction",.fields = replica_member_fields},
	{.name = "Delete",.type = RQ_STRUCT,.structname = "DeleteReplicationGroupMemberAction",.fields = replica_delete_fields},
	{0}
};
static const RqField replica_update_elem = {
	.type = RQ_STRUCT,.structname = "ReplicationGroupUpdate",.fields = replica_update_action_fields
};

const RqField DynUpdateTableFields[] = {
	{.name = "AttributeDefinitions",.type = RQ_LIST,.elem = &attr_def_elem},
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablearn = true},
	{.name = "BillingMode",.type = RQ_STRING,.enumvals = billing_enum},
	{.name = "ProvisionedThroughput",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",.fields = throughput_fields},
	{.name = "GlobalSecondaryIndexUpdates",.type = RQ_LIST,.elem = &gsi_update_elem},
	{.name = "StreamSpecification",.type = RQ_STRUCT,.structname = "StreamSpecification",.fields = stream_fields},
	{.name = "SSESpecification",.type = RQ_STRUCT,.structname = "SSESpecification",.fields = sse_fields},
	{.name = "ReplicaUpdates",.type = RQ_LIST,.elem = &replica_update_elem,.minlen = 1},
	{.name = "TableClass",.type = RQ_STRING,.enumvals = table_class_enum},
	{.name = "DeletionProtectionEnabled",.type = RQ_BOOLEAN},
	{.name = "OnDemandThroughput",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = on_demand_fields},
	{.name = "WarmThroughput",.type = RQ_STRUCT,.structname = "WarmThroughput",.fields = warm_fields},
	{.name = "MultiRegionConsistency",.type = RQ_STRING,.enumvals = consistency_enum},
	{.name = "GlobalTableWitnessUpdates",.type = RQ_LIST,.elem = &any_elem},
	{0}
};

/* ---------------------------------------------------------------- helpers */

/* Names of a KeySchema list's attributes, for messages: "[a, b]". */
static char *
key_names(JsonbValue *elems, int n)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (i = 0; i < n; i++)
	{
		char	   *an = RqGetString(elems[i].val.binary.data, "AttributeName");

		appendStringInfo(&buf, "%s%s", i ? ", " : "", an ? an : "null");
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/* Is name among the attribute definitions? */
bool
DynTablesIsDefined(JsonbValue *defs, int ndefs, const char *name)
{
	int			i;

	for (i = 0; i < ndefs; i++)
	{
		char	   *an = RqGetString(defs[i].val.binary.data, "AttributeName");

		if (an && strcmp(an, name) == 0)
			return true;
	}
	return false;
}

/* Check that every key attribute is defined. */
void
DynTablesCheckKeysDefined(JsonbValue *keys, int nkeys, JsonbValue *defs, int ndefs)
{
	int			i;

	for (i = 0; i < nkeys; i++)
	{
		char	   *an = RqGetString(keys[i].val.binary.data, "AttributeName");

		if (!DynTablesIsDefined(defs, ndefs, an))
			DynValidationError("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: %s, AttributeDefinitions: %s",
							   key_names(keys, nkeys), key_names(defs, ndefs));
	}
}

/* Check a Projection member. */
void
DynTablesCheckProjection(JsonbValue *proj)
{
	char	   *pt = RqGetString(proj->val.binary.data, "ProjectionType");

	JsonbValue *nk = RqGetJv(proj, "NonKeyAttributes");
	JsonbValue *names;
	int			n;
	int			i;
	int			j;

	if (pt == NULL)
		DynValidationError("One or more parameter values were invalid: Unknown ProjectionType: null");
	if (nk && strcmp(pt, "INCLUDE") != 0)
		DynValidationError("One or more parameter values were invalid: ProjectionType is %s, but NonKeyAttributes is specified", pt);
	if (nk == NULL && strcmp(pt, "INCLUDE") == 0)
		DynValidationError("One or more parameter values were invalid: ProjectionType is INCLUDE, but NonKeyAttributes is not specified");
	/* key attributes may be named: they are projected anyway */
	names = RqArrayElems(nk, &n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (names[i].type == jbvString && names[j].type == jbvString &&
				names[i].val.string.len == names[j].val.string.len &&
				memcmp(names[i].val.string.val, names[j].val.string.val, names[i].val.string.len) == 0)
				DynValidationError("One or more parameter values were invalid: Duplicate element in NonKeyAttributes: %.*s",
								   names[i].val.string.len, names[i].val.string.val);
}

/* Check the multi-attribute KeySchema of a GSI: HASH elements, then RANGE. */
void
DynTablesCheckGsiKeySchema(JsonbValue *keys, int n)
{
	int			nhash = 0;
	int			nrange = 0;
	int			i;
	int			j;

	for (i = 0; i < n; i++)
	{
		char	   *an = RqGetString(keys[i].val.binary.data, "AttributeName");

		for (j = 0; j < i; j++)
		{
			char	   *other = RqGetString(keys[j].val.binary.data, "AttributeName");

			if (strcmp(an, other) != 0)
				continue;
			/* the classic message for a HASH and a RANGE element of one name */
			if (n == 2 && !RqStringIs(keys[0].val.binary.data, "KeyType", "RANGE") &&
				RqStringIs(keys[1].val.binary.data, "KeyType", "RANGE"))
				DynValidationError("Both the Hash Key and the Range Key element in the KeySchema have the same name");
			DynValidationError("The KeySchema contains multiple key attributes with the same name");
		}
		if (RqStringIs(keys[i].val.binary.data, "KeyType", "HASH"))
		{
			if (nrange > 0)
			{
				if (nhash == 0)
					DynValidationError("Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
				DynValidationError("One or more parameter values were invalid: All HASH key attributes must precede RANGE key attributes in the KeySchema");
			}
			nhash++;
		}
		else
			nrange++;
	}
	if (nhash == 0)
		DynValidationError("Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
	if (nhash > DYN_MAX_KEY_ATTRS)
		DynValidationError("One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of HASH key attributes");
	if (nrange > DYN_MAX_KEY_ATTRS)
		DynValidationError("One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of RANGE key attributes");
}

/* Check the classic (one HASH, optional RANGE) KeySchema. */
static void
check_key_schema(JsonbValue *keys, int n)
{
	if (n > 1)
	{
		char	   *a = RqGetString(keys[0].val.binary.data, "AttributeName");
		char	   *b = RqGetString(keys[1].val.binary.data, "AttributeName");

		if (strcmp(a, b) == 0)
			DynValidationError("Both the Hash Key and the Range Key element in the KeySchema have the same name");
	}
	if (!RqStringIs(keys[0].val.binary.data, "KeyType", "HASH"))
		DynValidationError("Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
	if (n > 1 && !RqStringIs(keys[1].val.binary.data, "KeyType", "RANGE"))
		DynValidationError("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
}

/* Every attribute definition must be used by a table or index key, once. */
static void
check_definitions_used(JsonbValue *defs, int ndefs, JsonbValue *keys, int nkeys,
					   JsonbValue *lsis, int nlsi, JsonbValue *gsis, int ngsi)
{
	int			i;
	int			j;

	for (i = 0; i < ndefs; i++)
	{
		char	   *an = RqGetString(defs[i].val.binary.data, "AttributeName");
		bool		used = false;
		int			k;

		for (j = 0; j < nkeys && !used; j++)
			used = strcmp(an, RqGetString(keys[j].val.binary.data, "AttributeName")) == 0;
		for (k = 0; k < nlsi + ngsi && !used; k++)
		{
			JsonbValue *idx = k < nlsi ? &lsis[k] : &gsis[k - nlsi];
			JsonbValue *ik;
			int			nik;

			ik = RqArrayElems(RqGetJv(idx, "KeySchema"), &nik);
			for (j = 0; j < nik && !used; j++)
				used = strcmp(an, RqGetString(ik[j].val.binary.data, "AttributeName")) == 0;
		}
		if (!used)
		{
			if (nlsi == 0 && ngsi == 0)
				DynValidationError("One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions");
			DynValidationError("One or more parameter values were invalid: Some AttributeDefinitions are not used. AttributeDefinitions: %s, keys used: %s",
							   key_names(defs, ndefs), key_names(keys, nkeys));
		}
		for (j = 0; j < i; j++)
			if (strcmp(an, RqGetString(defs[j].val.binary.data, "AttributeName")) == 0)
				DynValidationError("Attribute Name is duplicated: %s", an);
	}
}

/* Validate the operation-level rules of CreateTable (after the schema). */
void
DynTablesCheckCreate(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *defs;
	JsonbValue *keys;
	JsonbValue *lsis;
	JsonbValue *gsis;
	JsonbValue *pt = RqGet(r, "ProvisionedThroughput");
	int			ndefs;
	int			nkeys;
	int			nlsi = 0;
	int			ngsi = 0;
	int			i;
	int			j;
	bool		ppr = RqStringIs(r, "BillingMode", "PAY_PER_REQUEST");

	defs = RqArrayElems(RqGet(r, "AttributeDefinitions"), &ndefs);
	keys = RqArrayElems(RqGet(r, "KeySchema"), &nkeys);
	lsis = RqArrayElems(RqGet(r, "LocalSecondaryIndexes"), &nlsi);
	gsis = RqArrayElems(RqGet(r, "GlobalSecondaryIndexes"), &ngsi);

	if (ppr)
	{
		if (pt)
			DynValidationError("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
	}
	else
	{
		int64		rcu;
		int64		wcu;

		if (pt == NULL)
			DynValidationError("One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED");
		rcu = RqGetInt(pt->val.binary.data, "ReadCapacityUnits", 0);
		wcu = RqGetInt(pt->val.binary.data, "WriteCapacityUnits", 0);
		if (rcu > INT64CONST(1000000000000))
			DynValidationError("Given value " INT64_FORMAT " for ReadCapacityUnits is out of bounds", rcu);
		if (wcu > INT64CONST(1000000000000))
			DynValidationError("Given value " INT64_FORMAT " for WriteCapacityUnits is out of bounds", wcu);
	}

	if (nkeys > ndefs)
		DynValidationError("Invalid KeySchema: Some index key attribute have no definition");
	DynTablesCheckKeysDefined(keys, nkeys, defs, ndefs);
	check_key_schema(keys, nkeys);

	/*
	 * Without indexes every definition must be a table key attribute; with
	 * indexes, unused definitions are reported after the index checks (as
	 * DynamoDB orders its messages).
	 */
	if (RqGet(r, "LocalSecondaryIndexes") == NULL && RqGet(r, "GlobalSecondaryIndexes") == NULL)
		check_definitions_used(defs, ndefs, keys, nkeys, NULL, 0, NULL, 0);

	if (RqGet(r, "LocalSecondaryIndexes"))
	{
		char	   *table_hash = RqGetString(keys[0].val.binary.data, "AttributeName");

		if (nlsi == 0)
			DynValidationError("One or more parameter values were invalid: List of LocalSecondaryIndexes is empty");
		if (nkeys != 2)
			DynValidationError("One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex");
		for (i = 0; i < nlsi; i++)
		{
			char	   *name = RqGetString(lsis[i].val.binary.data, "IndexName");
			JsonbValue *ik;
			int			nik;
			char	   *ihash;

			ik = RqArrayElems(RqGetJv(&lsis[i], "KeySchema"), &nik);
			DynTablesCheckKeysDefined(ik, nik, defs, ndefs);
			check_key_schema(ik, nik);
			if (nik != 2)
				DynValidationError("One or more parameter values were invalid: Index KeySchema does not have a range key for index: %s", name);
			ihash = RqGetString(ik[0].val.binary.data, "AttributeName");
			if (strcmp(ihash, table_hash) != 0)
				DynValidationError("One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s",
								   name, ihash, table_hash);
			DynTablesCheckProjection(RqGetJv(&lsis[i], "Projection"));
			for (j = 0; j < i; j++)
				if (strcmp(name, RqGetString(lsis[j].val.binary.data, "IndexName")) == 0)
					DynValidationError("One or more parameter values were invalid: Duplicate index name: %s", name);
		}
		if (nlsi > MAX_LSIS)
			DynValidationError("One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds per-table limit of %d", MAX_LSIS);
	}
	if (RqGet(r, "GlobalSecondaryIndexes"))
	{
		if (ngsi == 0)
			DynValidationError("One or more parameter values were invalid: List of GlobalSecondaryIndexes is empty");
		for (i = 0; i < ngsi; i++)
		{
			char	   *name = RqGetString(gsis[i].val.binary.data, "IndexName");
			JsonbValue *ik;
			int			nik;

			ik = RqArrayElems(RqGetJv(&gsis[i], "KeySchema"), &nik);
			DynTablesCheckKeysDefined(ik, nik, defs, ndefs);
			DynTablesCheckGsiKeySchema(ik, nik);
			DynTablesCheckProjection(RqGetJv(&gsis[i], "Projection"));
			if (ppr && RqGetJv(&gsis[i], "ProvisionedThroughput"))
				DynValidationError("One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", name);
			if (!ppr && RqGetJv(&gsis[i], "ProvisionedThroughput") == NULL)
				DynValidationError("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", name);
			DynTablesCheckOnDemand(RqGetJv(&gsis[i], "OnDemandThroughput"), name, !ppr, DYN_OD_CREATE);
			for (j = 0; j < nlsi; j++)
				if (strcmp(name, RqGetString(lsis[j].val.binary.data, "IndexName")) == 0)
					DynValidationError("One or more parameter values were invalid: Duplicate index name: %s", name);
			for (j = 0; j < i; j++)
				if (strcmp(name, RqGetString(gsis[j].val.binary.data, "IndexName")) == 0)
					DynValidationError("One or more parameter values were invalid: Duplicate index name: %s", name);
		}
		if (ngsi > MAX_GSIS)
			DynValidationError("One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of %d", MAX_GSIS);
	}
	check_definitions_used(defs, ndefs, keys, nkeys, lsis, nlsi, gsis, ngsi);
	/* NonKeyAttributes summed over all indexes (the same name twice counts twice) */
	{
		int			nproj = 0;

		for (i = 0; i < nlsi + ngsi; i++)
		{
			JsonbValue *nk = RqGetJv(RqGetJv(i < nlsi ? &lsis[i] : &gsis[i - nlsi], "Projection"),
									 "NonKeyAttributes");

			if (nk && nk->type == jbvBinary)
				nproj += JsonContainerSize(nk->val.binary.data);
		}
		if (nproj > MAX_PROJECTED_ATTRIBUTES)
			DynValidationError("One or more parameter values were invalid: Number of projected attributes in all indexes exceeds limit of %d",
							   MAX_PROJECTED_ATTRIBUTES);
	}
}

/*
 * Check a StreamSpecification (already validated member by member): a view
 * type exactly when the stream is enabled, with DynamoDB's messages for
 * CreateTable and UpdateTable.  Returns the view type to enable, or
 * DYN_STREAM_NONE (absent, or disabling).
 */
DynStreamView
DynTablesCheckStreamSpecification(JsonbValue *spec, bool create)
{
	bool		enabled;
	char	   *view;

	if (spec == NULL)
		return DYN_STREAM_NONE;
	enabled = RqGetBool(spec->val.binary.data, "StreamEnabled", false);
	view = RqGetString(spec->val.binary.data, "StreamViewType");
	if (enabled && view == NULL)
		DynValidationError(create ? "One or more parameter values were invalid: Table is being created with a stream enabled, UpdateViewType is required" :
						   "One or more parameter values were invalid: If stream is being enabled then UpdateViewType is required");
	if (!enabled && view != NULL)
		DynValidationError(create ? "One or more parameter values were invalid: Table is being created with a stream disabled, UpdateViewType should not be specified" :
						   "One or more parameter values were invalid: If stream is being disabled, then UpdateViewType must not be specified");
	return enabled ? DynStreamViewFromName(view) : DYN_STREAM_NONE;
}

/*
 * Check an OnDemandThroughput (of the table, or of GSI index): none on a
 * PROVISIONED table (the message names its first member), and each member at
 * least 1 or, on UpdateTable, -1 ("no maximum", which removes the member).
 * DynamoDB's messages (docs/errors.md "Tables"): CreateTable's and
 * ImportTable's billing message says "table BillingMode" and ends with a
 * period, UpdateTable's says "the table BillingMode" and does not; the range
 * message names the index as "index : <name>"; a restore's override has
 * messages of its own.
 */
void
DynTablesCheckOnDemand(JsonbValue *odt, const char *index, bool provisioned, DynOnDemandUse use)
{
	static const char *const members[] = {"MaxReadRequestUnits", "MaxWriteRequestUnits", NULL};
	const char *const *m;
	bool		restore = use == DYN_OD_RESTORE && index == NULL;
	bool		update = use == DYN_OD_UPDATE;

	if (odt == NULL || odt->type != jbvBinary)
		return;
	for (m = members; provisioned && *m; m++)
	{
		JsonbValue *v = RqGetJv(odt, *m);

		if (v == NULL || v->type == jbvNull)
			continue;
		if (restore)
			DynValidationError("Invalid Request: Cannot override %s for OnDemandThroughput unless BillingModeOverride is PAY_PER_REQUEST", *m);
		DynValidationError("One or more parameter values were invalid: %s for OnDemandThroughput%s cannot be specified when %stable BillingMode is PROVISIONED%s",
						   *m, index ? psprintf(" for index: %s", index) : "", update ? "the " : "", update ? "" : ".");
	}
	for (m = members; *m; m++)
	{
		JsonbValue *v = RqGetJv(odt, *m);
		int64		n;

		if (v == NULL || v->type != jbvNumeric)
			continue;
		n = RqGetInt(odt->val.binary.data, *m, 0);
		if (n >= 1 || (n == -1 && update))
			continue;
		if (restore)
			DynValidationError("Invalid Request: Requested %s for OnDemandThroughput is outside of valid range", *m);
		DynValidationError("One or more parameter values were invalid: Requested %s for OnDemandThroughput for %s is outside of valid range",
						   *m, index ? psprintf("index : %s", index) : "table");
	}
}
