/*
 * tables.c — CreateTable, DescribeTable, ListTables, DeleteTable.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "security/security.h"
#include "storage/storage.h"
#include "streams/streams.h"
#include "worker/worker.h"

#define MAX_LSIS 5
#define MAX_PROJECTED_ATTRIBUTES 100	/* NonKeyAttributes over all indexes */
#define MAX_GSIS 20

/* ---------------------------------------------------------------- schemas */

static const char *const billing_enum[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};
static const char *const key_type_enum[] = {"HASH", "RANGE", NULL};
static const char *const attr_type_enum[] = {"B", "N", "S", NULL};
static const char *const projection_enum[] = {"ALL", "INCLUDE", "KEYS_ONLY", NULL};
static const char *const table_class_enum[] = {"STANDARD", "STANDARD_INFREQUENT_ACCESS", NULL};
/* in the order DynamoDB lists them in its enum message */
static const char *const stream_view_enum[] = {"OLD_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES", "NEW_IMAGE", NULL};
static const char *const sse_type_enum[] = {"AES256", "KMS", NULL};

static const RqField nonkey_elem = {.type = RQ_STRING,.minlen = 1,.maxlen = 255};

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

static const RqField create_table_fields[] = {
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

static const RqField table_name_only_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablearn = true},
	{0}
};

static const RqField list_tables_fields[] = {
	{.name = "ExclusiveStartTableName",.type = RQ_STRING,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 100},
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
static bool
is_defined(JsonbValue *defs, int ndefs, const char *name)
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
static void
check_keys_defined(JsonbValue *keys, int nkeys, JsonbValue *defs, int ndefs)
{
	int			i;

	for (i = 0; i < nkeys; i++)
	{
		char	   *an = RqGetString(keys[i].val.binary.data, "AttributeName");

		if (!is_defined(defs, ndefs, an))
			DynValidationError("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: %s, AttributeDefinitions: %s",
							   key_names(keys, nkeys), key_names(defs, ndefs));
	}
}

/* Check a Projection member. */
static void
check_projection(JsonbValue *proj)
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
static void
check_gsi_key_schema(JsonbValue *keys, int n)
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

/* ---------------------------------------------------------------- describe */

/* Push a jsonb member "key": <jsonb>. */
static void
push_member_jsonb(JsonbParseState **st, const char *key, Jsonb *jb)
{
	RqPushKey(st, key);
	RqPushJsonb(st, WJB_VALUE, jb);
}

/* Push an int member. */
static void
push_member_int(JsonbParseState **st, const char *key, int64 v)
{
	RqPushKey(st, key);
	RqPushInt(st, WJB_VALUE, v);
}

/* Push a string member. */
static void
push_member_string(JsonbParseState **st, const char *key, const char *v)
{
	RqPushKey(st, key);
	RqPushString(st, WJB_VALUE, v);
}

/* Today (UTC) as "YYYY-MM-DD", the day NumberOfDecreasesToday counts. */
static char *
utc_day(void)
{
	return DatumGetCString(DirectFunctionCall1(textout,
											   DirectFunctionCall2(timestamptz_to_char,
																   TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()),
																   CStringGetTextDatum("YYYY-MM-DD"))));
}

/*
 * Push ProvisionedThroughput as DescribeTable shows it; history is the
 * table's "ThroughputHistory" option (LastIncreaseDateTime,
 * LastDecreaseDateTime, and the decreases of DecreasesDay), or NULL.
 */
static void
push_throughput_history(JsonbParseState **st, int64 rcu, int64 wcu, JsonbValue *history, bool pending_decrease)
{
	JsonbValue *v;
	int64		decreases = 0;

	RqPushKey(st, "ProvisionedThroughput");
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	if (history && (v = RqGetJv(history, "LastDecreaseDateTime")) != NULL)
	{
		RqPushKey(st, "LastDecreaseDateTime");
		pushJsonbValue(st, WJB_VALUE, v);
	}
	if (history && (v = RqGetJv(history, "LastIncreaseDateTime")) != NULL)
	{
		RqPushKey(st, "LastIncreaseDateTime");
		pushJsonbValue(st, WJB_VALUE, v);
	}
	if (history && RqGetJv(history, "DecreasesDay") &&
		strcmp(RqGetString(history->val.binary.data, "DecreasesDay"), utc_day()) == 0)
		decreases = RqGetInt(history->val.binary.data, "NumberOfDecreasesToday", 0);
	/* a decrease counts once it is done: not yet in UpdateTable's own response */
	if (pending_decrease && decreases > 0)
		decreases--;
	push_member_int(st, "NumberOfDecreasesToday", decreases);
	push_member_int(st, "ReadCapacityUnits", rcu);
	push_member_int(st, "WriteCapacityUnits", wcu);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Push ProvisionedThroughput without history (indexes, on-demand tables). */
static void
push_throughput(JsonbParseState **st, int64 rcu, int64 wcu)
{
	push_throughput_history(st, rcu, wcu, NULL, false);
}

/* Seconds since the epoch as DynamoDB's timestamps. */
static double
epoch_seconds(TimestampTz ts)
{
	return (double) (ts - ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * -USECS_PER_SEC)) / 1e6;
}

/* A provisioned-throughput change UpdateTable is making (its response shows it under way). */
typedef struct ThroughputChange
{
	int64		old_rcu;		/* the values in force until the change completes */
	int64		old_wcu;
	bool		decrease;		/* counted in NumberOfDecreasesToday once done */
} ThroughputChange;

/*
 * Build a TableDescription; change, when not NULL, is a throughput change
 * under way, shown as DynamoDB's UpdateTable response shows it.
 */
static Jsonb *
describe_as(DynTable *t, const char *status, bool with_stats, const ThroughputChange *change)
{
	JsonbParseState *st = NULL;
	int64		count = 0;
	int64		bytes = 0;
	int			pass;
	int			i;
	bool		provisioned = strcmp(t->billing_mode, "PROVISIONED") == 0;
	/* DeleteTable's description leaves out the schema, creation time and indexes */
	bool		deleting = strcmp(status, "DELETING") == 0;
	JsonbValue *opt;

	if (with_stats)
		DynStorageStats(t->storage, &count, &bytes);

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (!deleting)
		push_member_jsonb(&st, "AttributeDefinitions", t->attribute_definitions);
	push_member_string(&st, "TableName", t->name);
	if (!deleting)
		push_member_jsonb(&st, "KeySchema", t->key_schema);
	push_member_string(&st, "TableStatus", status);
	if (!deleting)
	{
		RqPushKey(&st, "CreationDateTime");
		RqPushNumeric(&st, WJB_VALUE, epoch_seconds(t->created_at));
	}
	push_throughput_history(&st, !provisioned ? 0 : change ? change->old_rcu : t->read_capacity,
							!provisioned ? 0 : change ? change->old_wcu : t->write_capacity,
							provisioned ? RqGet(&t->options->root, "ThroughputHistory") : NULL,
							change && change->decrease);
	push_member_int(&st, "TableSizeBytes", bytes);
	push_member_int(&st, "ItemCount", count);
	push_member_string(&st, "TableArn", DynTableArn(t->name));
	push_member_string(&st, "TableId", t->table_id);
	if (!provisioned)
	{
		RqPushKey(&st, "BillingModeSummary");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		push_member_string(&st, "BillingMode", "PAY_PER_REQUEST");
		RqPushKey(&st, "LastUpdateToPayPerRequestDateTime");
		RqPushNumeric(&st, WJB_VALUE, epoch_seconds(t->created_at));
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	for (pass = 0; pass < (deleting ? 0 : 2); pass++)
	{
		bool		global = pass == 1;
		bool		any = false;

		for (i = 0; i < t->nindexes; i++)
		{
			DynIndex   *idx = &t->indexes[i];
			int64		icount = 0;
			int64		ibytes = 0;

			if (idx->is_global != global)
				continue;
			if (with_stats && !DynCatalogLockIndex(idx))
				continue;		/* deleted by a concurrent UpdateTable */
			if (!any)
			{
				RqPushKey(&st, global ? "GlobalSecondaryIndexes" : "LocalSecondaryIndexes");
				pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
				any = true;
			}
			if (with_stats)
				DynStorageStats(idx->storage, &icount, &ibytes);
			pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
			push_member_string(&st, "IndexName", idx->name);
			push_member_jsonb(&st, "KeySchema", idx->key_schema);
			push_member_jsonb(&st, "Projection", idx->projection_json);
			if (global)
			{
				push_member_string(&st, "IndexStatus", strcmp(status, "CREATING") == 0 ? "CREATING" : idx->status);
				if (idx->backfilling)
				{
					RqPushKey(&st, "Backfilling");
					RqPushBool(&st, WJB_VALUE, true);
				}
				if (provisioned && idx->throughput)
					push_throughput(&st, RqGetInt(&idx->throughput->root, "ReadCapacityUnits", 0),
									RqGetInt(&idx->throughput->root, "WriteCapacityUnits", 0));
				else
					push_throughput(&st, 0, 0);
			}
			push_member_int(&st, "IndexSizeBytes", ibytes);
			push_member_int(&st, "ItemCount", icount);
			push_member_string(&st, "IndexArn", psprintf("%s/index/%s", DynTableArn(t->name), idx->name));
			pushJsonbValue(&st, WJB_END_OBJECT, NULL);
		}
		if (any)
			pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	}
	/* the enabled stream; the latest stream's label and ARN stay after it is disabled */
	if (t->stream.id != 0)
	{
		RqPushKey(&st, "StreamSpecification");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "StreamEnabled");
		RqPushBool(&st, WJB_VALUE, true);
		push_member_string(&st, "StreamViewType", DynStreamViewName(t->stream.view));
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	{
		char	   *label = DynStreamLatestLabel(t->num);

		if (label)
		{
			push_member_string(&st, "LatestStreamLabel", label);
			push_member_string(&st, "LatestStreamArn", DynStreamArn(t->name, label));
		}
	}
	opt = RqGet(&t->options->root, "TableClass");
	if (opt)
	{
		RqPushKey(&st, "TableClassSummary");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "TableClass");
		pushJsonbValue(&st, WJB_VALUE, opt);
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	RqPushKey(&st, "DeletionProtectionEnabled");
	RqPushBool(&st, WJB_VALUE, RqGetBool(&t->options->root, "DeletionProtectionEnabled", false));
	/* a table restored from a backup (src/api/backups.c) */
	opt = RqGet(&t->options->root, "RestoreSummary");
	if (opt && !deleting)
	{
		RqPushKey(&st, "RestoreSummary");
		pushJsonbValue(&st, WJB_VALUE, opt);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* Build a TableDescription of the table as it is. */
static Jsonb *
describe(DynTable *t, const char *status, bool with_stats)
{
	return describe_as(t, status, with_stats, NULL);
}

/* Wrap a description: {"<wrapper>": description}. */
static Jsonb *
wrap(const char *wrapper, Jsonb *desc)
{
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_member_jsonb(&st, wrapper, desc);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- CreateTable */

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
static void
check_create_table(Jsonb *req)
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
	check_keys_defined(keys, nkeys, defs, ndefs);
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
			check_keys_defined(ik, nik, defs, ndefs);
			check_key_schema(ik, nik);
			if (nik != 2)
				DynValidationError("One or more parameter values were invalid: Index KeySchema does not have a range key for index: %s", name);
			ihash = RqGetString(ik[0].val.binary.data, "AttributeName");
			if (strcmp(ihash, table_hash) != 0)
				DynValidationError("One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s",
								   name, ihash, table_hash);
			check_projection(RqGetJv(&lsis[i], "Projection"));
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
			check_keys_defined(ik, nik, defs, ndefs);
			check_gsi_key_schema(ik, nik);
			check_projection(RqGetJv(&gsis[i], "Projection"));
			if (ppr && RqGetJv(&gsis[i], "ProvisionedThroughput"))
				DynValidationError("One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", name);
			if (!ppr && RqGetJv(&gsis[i], "ProvisionedThroughput") == NULL)
				DynValidationError("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", name);
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
static Jsonb *
value_jsonb(JsonbValue *v)
{
	return JsonbValueToJsonb(v);
}

/* Insert one secondary index into the catalog and create its storage. */
static void
create_index(const char *table, int64 num, int position, bool global, JsonbValue *def)
{
	Oid			types[8] = {TEXTOID, TEXTOID, INT4OID, BOOLOID, JSONBOID, JSONBOID, TEXTOID, JSONBOID};
	Datum		args[8];
	char		nulls[8] = "        ";
	char	   *storage = psprintf("%s.t%lld_i%d", DYN_DATA_SCHEMA, (long long) num, position);
	JsonbValue *tp = RqGetJv(def, "ProvisionedThroughput");

	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(RqGetString(def->val.binary.data, "IndexName"));
	args[2] = Int32GetDatum(position);
	args[3] = BoolGetDatum(global);
	args[4] = JsonbPGetDatum(value_jsonb(RqGetJv(def, "KeySchema")));
	args[5] = JsonbPGetDatum(value_jsonb(RqGetJv(def, "Projection")));
	args[6] = CStringGetTextDatum(storage);
	if (tp)
		args[7] = JsonbPGetDatum(value_jsonb(tp));
	else
		nulls[7] = 'n';
	if (SPI_execute_with_args("INSERT INTO dynindex.indexes (table_name, index_name, position, is_global, "
							  "key_schema, projection, storage, throughput) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
							  8, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record index");
	/* index entries: encoded index key, base key, projected item */
	DynStorageCreateIndexTable(storage, global, psprintf("%s.t%lld", DYN_DATA_SCHEMA, (long long) num));
}

/*
 * Check a StreamSpecification (already validated member by member): a view
 * type exactly when the stream is enabled, with DynamoDB's messages for
 * CreateTable and UpdateTable.  Returns the view type to enable, or
 * DYN_STREAM_NONE (absent, or disabling).
 */
static DynStreamView
check_stream_specification(JsonbValue *spec, bool create)
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
		"DeletionProtectionEnabled", "ResourcePolicy", "OnDemandThroughput", "WarmThroughput", NULL
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

	RqValidate(req, create_table_fields);
	check_create_table(req);
	view = check_stream_specification(RqGet(r, "StreamSpecification"), true);
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
	args[2] = JsonbPGetDatum(value_jsonb(RqGet(r, "AttributeDefinitions")));
	args[3] = JsonbPGetDatum(value_jsonb(RqGet(r, "KeySchema")));
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
		create_index(name, num, i, false, &elems[i]);
	{
		int			nl = n;

		elems = RqArrayElems(RqGet(r, "GlobalSecondaryIndexes"), &n);
		for (i = 0; i < n; i++)
			create_index(name, num, nl + i, true, &elems[i]);
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
	return wrap("TableDescription", describe(DynTableCreate(req, NULL, false), "CREATING", false));
}

/* A TableDescription of a table (for src/api/backups.c). */
Jsonb *
DynTableDescription(DynTable *t, const char *status, bool with_stats)
{
	return describe(t, status, with_stats);
}

/* ---------------------------------------------------------------- others */

/*
 * The table a DeleteTable or UpdateTable changes: its catalog row is locked
 * first, before any of its storage relations, so that two such requests on one
 * table wait for each other instead of deadlocking over the storage locks (or
 * failing on a relation the other one dropped).
 */
static DynTable *
table_for_change(const char *name)
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

/* DescribeTable */
Jsonb *
DynDescribeTable(Jsonb *req)
{
	RqValidate(req, table_name_only_fields);
	return wrap("Table", describe(DynCatalogGetTableOrNotFound(RqGetString(&req->root, "TableName")), "ACTIVE", true));
}

/* DeleteTable */
Jsonb *
DynDeleteTable(Jsonb *req)
{
	DynTable   *t;
	Jsonb	   *desc;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	int			i;

	RqValidate(req, table_name_only_fields);
	t = table_for_change(RqGetString(&req->root, "TableName"));
	if (RqGetBool(&t->options->root, "DeletionProtectionEnabled", false))
		DynValidationError("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.");
	desc = describe(t, "DELETING", true);

	/* lock the catalog row so concurrent writers of this table serialize with us */
	args[0] = CStringGetTextDatum(t->name);
	if (SPI_execute_with_args("DELETE FROM dynindex.tables WHERE table_name = $1", 1, types, args, NULL, false, 0)
		!= SPI_OK_DELETE)
		elog(ERROR, "could not delete table");
	if (SPI_processed == 0)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Table: %s not found", t->name);
	/* the table first, then its indexes: the order in which requests lock them */
	DynStorageDropTable(t->storage);
	for (i = 0; i < t->nindexes; i++)
		DynStorageDropTable(t->indexes[i].storage);
	/* its stream is disabled; the records stay readable until they expire */
	DynStreamDisable(t);
	DynCatalogChanged();
	return wrap("TableDescription", desc);
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

	RqValidate(req, list_tables_fields);
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
		push_member_string(&st, "LastEvaluatedTableName",
						   TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[shown - 1],
															 SPI_tuptable->tupdesc, 1, &isnull)));
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- UpdateTable */

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

static const RqField update_table_fields[] = {
	{.name = "AttributeDefinitions",.type = RQ_LIST,.elem = &attr_def_elem},
	{.name = "TableName",.type = RQ_STRING,.required = true,.tablearn = true},
	{.name = "BillingMode",.type = RQ_STRING,.enumvals = billing_enum},
	{.name = "ProvisionedThroughput",.type = RQ_STRUCT,.structname = "ProvisionedThroughput",.fields = throughput_fields},
	{.name = "GlobalSecondaryIndexUpdates",.type = RQ_LIST,.elem = &gsi_update_elem},
	{.name = "StreamSpecification",.type = RQ_STRUCT,.structname = "StreamSpecification",.fields = stream_fields},
	{.name = "SSESpecification",.type = RQ_STRUCT,.structname = "SSESpecification",.fields = sse_fields},
	{.name = "ReplicaUpdates",.type = RQ_LIST,.elem = &any_elem},
	{.name = "TableClass",.type = RQ_STRING,.enumvals = table_class_enum},
	{.name = "DeletionProtectionEnabled",.type = RQ_BOOLEAN},
	{.name = "OnDemandThroughput",.type = RQ_STRUCT,.structname = "OnDemandThroughput",.fields = on_demand_fields},
	{.name = "WarmThroughput",.type = RQ_STRUCT,.structname = "WarmThroughput",.fields = warm_fields},
	{.name = "MultiRegionConsistency",.type = RQ_STRING},
	{.name = "GlobalTableWitnessUpdates",.type = RQ_LIST,.elem = &any_elem},
	{0}
};

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
		if (!is_defined(add, nadd, an))
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
		check_keys_defined(ik, nik, req_defs, nreq);
	}
	check_gsi_key_schema(ik, nik);
	check_projection(RqGetJv(create, "Projection"));
	if (strcmp(t->billing_mode, "PAY_PER_REQUEST") == 0 && RqGetJv(create, "ProvisionedThroughput"))
		DynValidationError("One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", name);
	if (strcmp(t->billing_mode, "PROVISIONED") == 0 && RqGetJv(create, "ProvisionedThroughput") == NULL)
		DynValidationError("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", name);

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
		create_index(t->name, t->num, position, true, create);
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
	char	   *today = utc_day();
	int64		decreases = 0;
	double		now = epoch_seconds(GetCurrentTransactionStartTimestamp());
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
	push_member_string(&st, "DecreasesDay", today);
	push_member_int(&st, "NumberOfDecreasesToday", decreases + (decrease ? 1 : 0));
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	args[0] = CStringGetTextDatum(t->name);
	args[1] = JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
	if (SPI_execute_with_args("UPDATE dynindex.tables SET options = options || $2 WHERE table_name = $1",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the throughput change");
}

/* UpdateTable */
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
	bool		throughput_change = false;
	ThroughputChange change = {0};
	static const char *const simple_options[] = {
		"SSESpecification", "TableClass", "DeletionProtectionEnabled",
		"OnDemandThroughput", "WarmThroughput", NULL
	};
	const char *const *opt;

	RqValidate(req, update_table_fields);
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
	view = check_stream_specification(stream, false);
	if (stream && (pt || RqStringIs(r, "BillingMode", "PROVISIONED")))
		DynValidationError("One or more parameter values were invalid: You cannot modify stream status while updating table IOPS");
	if (stream && online > 0)
		DynValidationError("One or more parameter values were invalid: You cannot create or delete index while changing stream status");

	t = table_for_change(RqGetString(r, "TableName"));
	billing = RqGetString(r, "BillingMode");
	if (pt && strcmp(billing ? billing : t->billing_mode, "PAY_PER_REQUEST") == 0)
		DynValidationError("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
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
		change.old_rcu = t->read_capacity;
		change.old_wcu = t->write_capacity;
		change.decrease = rcu < t->read_capacity || wcu < t->write_capacity;
		throughput_change = true;
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

			if (idx == NULL || !idx->is_global)
				DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Requested index %s not found", name);
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
				Datum		args[3] = {JsonbPGetDatum(value_jsonb(ipt)), CStringGetTextDatum(t->name),
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
	for (opt = simple_options; *opt; opt++)
		update_option(t, r, *opt);
	if (stream && view != DYN_STREAM_NONE)
		DynStreamEnable(t, view);
	else if (stream)
		DynStreamDisable(t);

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
	if (index_change)
		DynWorkerWake(MyDatabaseId);
	/* the response shows the throughput in force until the change completes */
	return wrap("TableDescription", describe_as(t, "UPDATING", false, throughput_change ? &change : NULL));
}
