/*
 * tables_describe.c — TableDescription (DescribeTable and the other
 * operations' responses).
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "replication/replication.h"
#include "storage/storage.h"
#include "streams/streams.h"

/* ---------------------------------------------------------------- describe */

/* Push a jsonb member "key": <jsonb>. */
static void
push_member_jsonb(JsonbParseState **st, const char *key, Jsonb *jb)
{
	RqPushKey(st, key);
	RqPushJsonb(st, WJB_VALUE, jb);
}

/* Push an int member. */
void
DynTablesPushInt(JsonbParseState **st, const char *key, int64 v)
{
	RqPushKey(st, key);
	RqPushInt(st, WJB_VALUE, v);
}

/* Push a string member. */
void
DynTablesPushString(JsonbParseState **st, const char *key, const char *v)
{
	RqPushKey(st, key);
	RqPushString(st, WJB_VALUE, v);
}

/* Today (UTC) as "YYYY-MM-DD", the day NumberOfDecreasesToday counts. */
char *
DynTablesUtcDay(void)
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
		strcmp(RqGetString(history->val.binary.data, "DecreasesDay"), DynTablesUtcDay()) == 0)
		decreases = RqGetInt(history->val.binary.data, "NumberOfDecreasesToday", 0);
	/* a decrease counts once it is done: not yet in UpdateTable's own response */
	if (pending_decrease && decreases > 0)
		decreases--;
	DynTablesPushInt(st, "NumberOfDecreasesToday", decreases);
	DynTablesPushInt(st, "ReadCapacityUnits", rcu);
	DynTablesPushInt(st, "WriteCapacityUnits", wcu);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Push ProvisionedThroughput without history (indexes, on-demand tables). */
static void
push_throughput(JsonbParseState **st, int64 rcu, int64 wcu)
{
	push_throughput_history(st, rcu, wcu, NULL, false);
}

/*
 * Push OnDemandThroughput as DynamoDB shows it: only the members set (at
 * least 1; with removed, also those UpdateTable's response shows removed, as
 * -1), nothing when there is none.
 */
static void
push_on_demand(JsonbParseState **st, JsonbContainer *od, bool removed)
{
	static const char *const members[] = {"MaxReadRequestUnits", "MaxWriteRequestUnits", NULL};
	const char *const *m;
	bool		any = false;

	if (od == NULL || !JsonContainerIsObject(od))
		return;
	for (m = members; *m; m++)
	{
		int64		v = RqGetInt(od, *m, 0);

		if (v < 1 && !(removed && v == -1))
			continue;
		if (!any)
		{
			RqPushKey(st, "OnDemandThroughput");
			pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
			any = true;
		}
		DynTablesPushInt(st, *m, v);
	}
	if (any)
		pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* Seconds since the epoch as DynamoDB's timestamps. */
double
DynTablesEpochSeconds(TimestampTz ts)
{
	return (double) (ts - ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * -USECS_PER_SEC)) / 1e6;
}

/*
 * Build a TableDescription; change, when not NULL, is a throughput change
 * under way, shown as DynamoDB's UpdateTable response shows it.
 */
Jsonb *
DynTablesDescribeAs(DynTable *t, const char *status, bool with_stats, const ThroughputChange *change)
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
	DynTablesPushString(&st, "TableName", t->name);
	if (!deleting)
		push_member_jsonb(&st, "KeySchema", t->key_schema);
	DynTablesPushString(&st, "TableStatus", status);
	if (!deleting)
	{
		RqPushKey(&st, "CreationDateTime");
		RqPushNumeric(&st, WJB_VALUE, DynTablesEpochSeconds(t->created_at));
	}
	push_throughput_history(&st, !provisioned ? 0 : change && change->capacity ? change->old_rcu : t->read_capacity,
							!provisioned ? 0 : change && change->capacity ? change->old_wcu : t->write_capacity,
							provisioned ? RqGet(&t->options->root, "ThroughputHistory") : NULL,
							change && change->capacity && change->decrease);
	DynTablesPushInt(&st, "TableSizeBytes", bytes);
	DynTablesPushInt(&st, "ItemCount", count);
	DynTablesPushString(&st, "TableArn", DynTableArn(t->name));
	DynTablesPushString(&st, "TableId", t->table_id);
	if (!provisioned)
	{
		RqPushKey(&st, "BillingModeSummary");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		DynTablesPushString(&st, "BillingMode", "PAY_PER_REQUEST");
		RqPushKey(&st, "LastUpdateToPayPerRequestDateTime");
		RqPushNumeric(&st, WJB_VALUE, DynTablesEpochSeconds(t->created_at));
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
			DynTablesPushString(&st, "IndexName", idx->name);
			push_member_jsonb(&st, "KeySchema", idx->key_schema);
			push_member_jsonb(&st, "Projection", idx->projection_json);
			if (global)
			{
				DynTablesPushString(&st, "IndexStatus", strcmp(status, "CREATING") == 0 ? "CREATING" : idx->status);
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
				if (!provisioned && idx->on_demand)
					push_on_demand(&st, &idx->on_demand->root, false);
			}
			DynTablesPushInt(&st, "IndexSizeBytes", ibytes);
			DynTablesPushInt(&st, "ItemCount", icount);
			DynTablesPushString(&st, "IndexArn", psprintf("%s/index/%s", DynTableArn(t->name), idx->name));
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
		DynTablesPushString(&st, "StreamViewType", DynStreamViewName(t->stream.view));
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	{
		char	   *label = DynStreamLatestLabel(t->num);

		if (label)
		{
			DynTablesPushString(&st, "LatestStreamLabel", label);
			DynTablesPushString(&st, "LatestStreamArn", DynStreamArn(t->name, label));
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
	/* an on-demand table's maximum (UpdateTable's response: as merged, removed members as -1) */
	if (!provisioned && change && change->on_demand)
		push_on_demand(&st, &change->on_demand->root, true);
	else if (!provisioned && (opt = RqGet(&t->options->root, "OnDemandThroughput")) != NULL && opt->type == jbvBinary)
		push_on_demand(&st, opt->val.binary.data, false);
	/* a global table (docs/global-tables.md): its other regions, never this one */
	{
		List	   *replicas = DynReplicationReplicas(t);
		ListCell   *lc;

		if (replicas != NIL)
		{
			DynTablesPushString(&st, "GlobalTableVersion", "2019.11.21");
			RqPushKey(&st, "Replicas");
			pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
			foreach(lc, replicas)
			{
				char	   *r = lfirst(lc);
				char	   *tab = strchr(r, '\t');

				*tab = '\0';
				pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
				DynTablesPushString(&st, "RegionName", r);
				DynTablesPushString(&st, "ReplicaStatus", tab + 1);
				/* its settings overrides (ReplicaUpdates Update) */
				{
					Jsonb	   *o = DynReplicationReplicaOverrides(t, r);

					if (o)
					{
						JsonbIterator *it = JsonbIteratorInit(&o->root);
						JsonbValue	v;
						JsonbIteratorToken tok;

						while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
							if (tok == WJB_KEY || tok == WJB_VALUE)
								pushJsonbValue(&st, tok, &v);
					}
				}
				pushJsonbValue(&st, WJB_END_OBJECT, NULL);
			}
			pushJsonbValue(&st, WJB_END_ARRAY, NULL);
		}
	}
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
Jsonb *
DynTablesDescribe(DynTable *t, const char *status, bool with_stats)
{
	return DynTablesDescribeAs(t, status, with_stats, NULL);
}

/* Wrap a description: {"<wrapper>": description}. */
Jsonb *
DynTablesWrap(const char *wrapper, Jsonb *desc)
{
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_member_jsonb(&st, wrapper, desc);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* A TableDescription of a table (for src/api/backups.c). */
Jsonb *
DynTableDescription(DynTable *t, const char *status, bool with_stats)
{
	return DynTablesDescribe(t, status, with_stats);
}

/* DescribeTable */
Jsonb *
DynDescribeTable(Jsonb *req)
{
	DynTable   *t;
	ListCell   *lc;

	RqValidate(req, DynDescribeTableFields);
	t = DynCatalogGetTableOrNotFound(RqGetString(&req->root, "TableName"));

	/* a table an import is loading is CREATING until every item is in (docs/import-export.md) */
	if (t->importing)
		return DynTablesWrap("Table", DynTablesDescribe(t, "CREATING", true));
	/* UPDATING while a replica is being created or deleted (docs/global-tables.md) */
	foreach(lc, DynReplicationReplicas(t))
		if (strstr(lfirst(lc), "\tCREATING") || strstr(lfirst(lc), "\tDELETING") || strstr(lfirst(lc), "\tUPDATING"))
			return DynTablesWrap("Table", DynTablesDescribe(t, "UPDATING", true));
	return DynTablesWrap("Table", DynTablesDescribe(t, "ACTIVE", true));
}
