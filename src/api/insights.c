/*
 * insights.c — Contributor Insights: UpdateContributorInsights,
 * DescribeContributorInsights, ListContributorInsights, and the SQL function
 * dynindex.contributor_insights() that reads the top keys
 * (docs/contributor-insights.md).
 *
 * The state of each table and GSI (status, mode, when it last changed) is
 * kept in the table's options as "ContributorInsights": {"<index or empty>":
 * {...}}, so a database still at 0.2 has it too; the counting is
 * src/throttle/ (Space-Saving sketches in shared memory, started again by
 * the first request after a restart) and api/throughput.c (what is counted).
 * DynamoDB answers ENABLE with ENABLING and settles in a second or more; here
 * the sketches exist when the call returns, so the answer says ENABLING (or
 * DISABLING) as DynamoDB's does and DescribeContributorInsights shows the
 * settled status at once: ENABLED, DISABLED, or FAILED when the shared
 * memory has no room for the rules (dynindex.contributor_insights_max_rules).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "security/security.h"
#include "throttle/throttle.h"

static const char *const action_enum[] = {"ENABLE", "DISABLE", NULL};
static const char *const mode_enum[] = {"ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS", NULL};

static const RqField update_fields[] = {
	RQ_TABLE_NAME_OR_ARN,
	{.name = "IndexName",.type = RQ_STRING,.minlen = 3,.maxlen = 255,.namepattern = true},
	{.name = "ContributorInsightsAction",.type = RQ_STRING,.notnull = true,.enumvals = action_enum},
	{.name = "ContributorInsightsMode",.type = RQ_STRING,.enumvals = mode_enum},
	{0}
};

static const RqField describe_fields[] = {
	RQ_TABLE_NAME_OR_ARN,
	{.name = "IndexName",.type = RQ_STRING,.minlen = 3,.maxlen = 255,.namepattern = true},
	{0}
};

static const RqField list_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.tablearn = true},
	{.name = "NextToken",.type = RQ_STRING},
	{.name = "MaxResults",.type = RQ_INTEGER,.hasmax = true,.maxval = 100},
	{0}
};

static const char *const rule_codes[DYN_CI__COUNT] = {"PKC", "SKC", "PKT", "SKT"};

#define LIMIT_MESSAGE "Amazon CloudWatch Contributor Insights rule limit reached. Please disable Contributor Insights for other tables/indexes OR disable other CloudWatch Contributor Insights rules before retrying."

/* The state of one table or GSI, as kept in the options. */
typedef struct CiState
{
	char	   *status;			/* NULL: never configured */
	char	   *mode;
	double		updated;		/* LastUpdateDateTime, seconds since 1970 */
	int64		rules_ts;		/* the rule names' timestamp, milliseconds */
} CiState;

/* The index of t named name (-1: none); a missing or local one is ResourceNotFoundException. */
static int
find_gsi(DynTable *t, const char *name)
{
	int			i;

	for (i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global && strcmp(t->indexes[i].name, name) == 0)
			return i;
	DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Index: %s not found for table: %s",
			 name, t->name);
}

/* The table of a request (ResourceNotFoundException naming it when missing). */
static DynTable *
get_table(const char *name)
{
	DynTable   *t = DynCatalogGetTable(name);

	if (t == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Table: %s not found", name);
	return t;
}

/* Read the state of the table ("") or of one of its GSIs. */
static CiState
read_state(DynTable *t, const char *index)
{
	CiState		s = {0};
	JsonbValue *ci;
	JsonbValue *r;
	JsonbValue *v;

	if (t->options == NULL || !JB_ROOT_IS_OBJECT(t->options) ||
		(ci = RqGet(&t->options->root, "ContributorInsights")) == NULL || ci->type != jbvBinary ||
		(r = RqGet(ci->val.binary.data, index ? index : "")) == NULL || r->type != jbvBinary)
		return s;
	s.status = RqGetString(r->val.binary.data, "Status");
	s.mode = RqGetString(r->val.binary.data, "Mode");
	if ((v = RqGet(r->val.binary.data, "LastUpdateDateTime")) != NULL && v->type == jbvNumeric)
		s.updated = DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)));
	s.rules_ts = RqGetInt(r->val.binary.data, "RulesTimestamp", 0);
	return s;
}

/* Write the state of the table ("") or of one of its GSIs into the table's options. */
static void
write_state(DynTable *t, const char *index, const CiState *s)
{
	JsonbParseState *st = NULL;
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		args[2];

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, index ? index : "");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Status");
	RqPushString(&st, WJB_VALUE, s->status);
	RqPushKey(&st, "Mode");
	RqPushString(&st, WJB_VALUE, s->mode);
	RqPushKey(&st, "LastUpdateDateTime");
	RqPushNumeric(&st, WJB_VALUE, s->updated);
	RqPushKey(&st, "RulesTimestamp");
	RqPushInt(&st, WJB_VALUE, s->rules_ts);
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	args[0] = CStringGetTextDatum(t->name);
	args[1] = JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)));
	if (SPI_execute_with_args("UPDATE dynindex.tables SET options = coalesce(options, '{}') || "
							  "jsonb_build_object('ContributorInsights', coalesce(options->'ContributorInsights', '{}') || $2) "
							  "WHERE table_name = $1",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the Contributor Insights state");
	DynCatalogChanged();
}

/* Has the resource (index -1: the table) a sort key? */
static bool
has_sort_key(DynTable *t, int index)
{
	return index < 0 ? t->has_range : t->indexes[index].nrange > 0;
}

/* Does mode count rule? */
static bool
rule_in_mode(DynInsightsRule rule, const char *mode, bool sort_key)
{
	if ((rule == DYN_CI_SKC || rule == DYN_CI_SKT) && !sort_key)
		return false;
	if ((rule == DYN_CI_PKC || rule == DYN_CI_SKC) && mode && strcmp(mode, "THROTTLED_KEYS") == 0)
		return false;
	return true;
}

/* The bucket tag of the table or index (as api/throughput.c computes it). */
static uint64
tag_of(DynTable *t, int index)
{
	return DynThrottleTag(MyDatabaseId, t->num, index < 0 ? NULL : t->indexes[index].name);
}

/* DynamoDB's rule name: DynamoDBContributorInsights-<code>-<table>[-<index>]-<ms>. */
static char *
rule_name(DynTable *t, int index, DynInsightsRule rule, int64 ts)
{
	return psprintf("DynamoDBContributorInsights-%s-%s%s%s-" INT64_FORMAT, rule_codes[rule], t->name,
					index < 0 ? "" : "-", index < 0 ? "" : t->indexes[index].name, ts);
}

/* Start the sketches of mode (stopping the others); false when the shared memory is full. */
static bool
start_rules(DynTable *t, int index, const char *mode)
{
	uint64		tag = tag_of(t, index);
	bool		sk = has_sort_key(t, index);
	int			r;

	for (r = 0; r < DYN_CI__COUNT; r++)
		if (!rule_in_mode(r, mode, sk))
			DynInsightsStop(tag, r);
	for (r = 0; r < DYN_CI__COUNT; r++)
		if (rule_in_mode(r, mode, sk) && !DynInsightsStart(tag, r))
		{
			/* all or nothing, as DynamoDB creates its rules */
			for (r = 0; r < DYN_CI__COUNT; r++)
				DynInsightsStop(tag, r);
			return false;
		}
	return true;
}

/* Stop every sketch of the resource. */
static void
stop_rules(DynTable *t, int index)
{
	int			r;

	for (r = 0; r < DYN_CI__COUNT; r++)
		DynInsightsStop(tag_of(t, index), r);
}

/* Now in seconds since 1970, with milliseconds. */
static double
epoch_now(void)
{
	TimestampTz now = GetCurrentTimestamp();

	return floor((double) now / 1000.0) / 1000.0 +
		(double) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
}

/* Start a response object with TableName and IndexName (when given). */
static void
push_resource(JsonbParseState **st, DynTable *t, const char *index_name)
{
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(st, "TableName");
	RqPushString(st, WJB_VALUE, DynCatalogRequestName(t->name));
	if (index_name)
	{
		RqPushKey(st, "IndexName");
		RqPushString(st, WJB_VALUE, index_name);
	}
}

/* UpdateContributorInsights */
Jsonb *
DynUpdateContributorInsights(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *index_name;
	bool		enable;
	const char *mode;
	DynTable   *t;
	int			index = -1;
	CiState		s;
	const char *answer;
	JsonbParseState *st = NULL;

	RqValidate(req, update_fields);
	index_name = RqGetString(r, "IndexName");
	enable = RqStringIs(r, "ContributorInsightsAction", "ENABLE");
	/* ENABLE without a mode means the default mode (a mode change back), as DynamoDB does */
	mode = RqGetString(r, "ContributorInsightsMode");
	t = get_table(RqGetString(r, "TableName"));
	if (index_name)
	{
		index = find_gsi(t, index_name);
		if (enable && strcmp(t->indexes[index].status, "ACTIVE") != 0)
			DynValidationError("Table or Index is not in a valid state to update Key Access Insights: IndexStatus must be ACTIVE to enable ContributorInsights.");
	}
	s = read_state(t, index_name);
	if (enable)
	{
		if (mode == NULL)
			mode = "ACCESSED_AND_THROTTLED_KEYS";
		if (s.status && strcmp(s.status, "ENABLED") == 0 && s.mode && strcmp(s.mode, mode) == 0)
			answer = "ENABLED";	/* the same mode: nothing changes */
		else
		{
			answer = "ENABLING";
			s.status = start_rules(t, index, mode) ? "ENABLED" : "FAILED";
			s.mode = (char *) mode;
			s.updated = epoch_now();
			s.rules_ts = (int64) (s.updated * 1000.0 + 0.5);
			write_state(t, index_name, &s);
		}
	}
	else
	{
		/* DISABLE answers with the current mode, whatever it sends */
		if (s.status == NULL || strcmp(s.status, "DISABLED") == 0)
			answer = "DISABLED";
		else
		{
			answer = "DISABLING";
			stop_rules(t, index);
			s.status = "DISABLED";
			s.updated = epoch_now();
			write_state(t, index_name, &s);
		}
		mode = s.mode;
	}
	push_resource(&st, t, index_name);
	RqPushKey(&st, "ContributorInsightsStatus");
	RqPushString(&st, WJB_VALUE, answer);
	if (mode)
	{
		RqPushKey(&st, "ContributorInsightsMode");
		RqPushString(&st, WJB_VALUE, mode);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* DescribeContributorInsights */
Jsonb *
DynDescribeContributorInsights(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *index_name;
	DynTable   *t;
	int			index = -1;
	CiState		s;
	JsonbParseState *st = NULL;

	RqValidate(req, describe_fields);
	index_name = RqGetString(r, "IndexName");
	t = get_table(RqGetString(r, "TableName"));
	if (index_name)
		index = find_gsi(t, index_name);
	s = read_state(t, index_name);

	push_resource(&st, t, index_name);
	if (s.status && strcmp(s.status, "ENABLED") == 0)
	{
		int			k;

		RqPushKey(&st, "ContributorInsightsRuleList");
		pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
		for (k = 0; k < DYN_CI__COUNT; k++)
			if (rule_in_mode(k, s.mode, has_sort_key(t, index)))
				RqPushString(&st, WJB_ELEM, rule_name(t, index, k, s.rules_ts));
		pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	}
	RqPushKey(&st, "ContributorInsightsStatus");
	RqPushString(&st, WJB_VALUE, s.status ? s.status : "DISABLED");
	if (s.status)
	{
		RqPushKey(&st, "LastUpdateDateTime");
		RqPushNumeric(&st, WJB_VALUE, s.updated);
	}
	if (s.status && strcmp(s.status, "FAILED") == 0)
	{
		RqPushKey(&st, "FailureException");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "ExceptionName");
		RqPushString(&st, WJB_VALUE, "LimitExceededException");
		RqPushKey(&st, "ExceptionDescription");
		RqPushString(&st, WJB_VALUE, LIMIT_MESSAGE);
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	if (s.mode)
	{
		RqPushKey(&st, "ContributorInsightsMode");
		RqPushString(&st, WJB_VALUE, s.mode);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* Push one summary when the resource's status is not DISABLED; returns whether it did. */
static bool
push_summary(JsonbParseState **st, DynTable *t, const char *index)
{
	CiState		s = read_state(t, index);

	if (s.status == NULL || strcmp(s.status, "DISABLED") == 0)
		return false;
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(st, "TableName");
	RqPushString(st, WJB_VALUE, t->name);
	if (index)
	{
		RqPushKey(st, "IndexName");
		RqPushString(st, WJB_VALUE, index);
	}
	RqPushKey(st, "ContributorInsightsStatus");
	RqPushString(st, WJB_VALUE, s.status);
	RqPushKey(st, "ContributorInsightsMode");
	RqPushString(st, WJB_VALUE, s.mode ? s.mode : "ACCESSED_AND_THROTTLED_KEYS");
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
	return true;
}

/* Push the summaries of a table and its GSIs (the table first); returns how many. */
static int
push_table_summaries(JsonbParseState **st, DynTable *t)
{
	int			n = push_summary(st, t, NULL) ? 1 : 0;
	int			i;

	for (i = 0; i < t->nindexes; i++)
		if (t->indexes[i].is_global && push_summary(st, t, t->indexes[i].name))
			n++;
	return n;
}

/*
 * ListContributorInsights: the tables (and their GSIs) whose Contributor
 * Insights is not DISABLED, in table name order; a page holds at most
 * MaxResults summaries (default 100) and NextToken names the table to go on
 * from.  With TableName: that table's, one page.
 */
Jsonb *
DynListContributorInsights(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *table;
	char	   *token;
	int64		max;
	JsonbParseState *st = NULL;
	char	   *next = NULL;

	RqValidate(req, list_fields);
	table = RqGetString(r, "TableName");
	token = RqGetString(r, "NextToken");
	max = RqGetInt(r, "MaxResults", 100);
	if (max <= 0)
		max = 100;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "ContributorInsightsSummaries");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	if (table)
		(void) push_table_summaries(&st, get_table(table));
	else
	{
		Oid			types[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(token ? token : "")};
		uint64		ntables;
		uint64		i;
		int			n = 0;
		char	  **names;

		/* the tables with a state at all, from the token's on */
		if (SPI_execute_with_args("SELECT table_name FROM dynindex.tables WHERE options ? 'ContributorInsights' "
								  "AND table_name COLLATE \"C\" >= $1 ORDER BY table_name COLLATE \"C\"",
								  1, types, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not list the tables");
		ntables = SPI_processed;
		names = palloc(sizeof(char *) * Max(ntables, 1));
		for (i = 0; i < ntables; i++)
			names[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		for (i = 0; i < ntables; i++)
		{
			DynTable   *t;

			/* a table the caller may not describe is not listed */
			if (!DynSecurityHasRight(DynSecurityCaller(), names[i], InvalidOid, DYN_ACCESS_DESCRIBE))
				continue;
			t = DynCatalogGetTableUnchecked(names[i]);
			if (t == NULL)
				continue;
			if (n >= max)
			{
				next = names[i];
				break;
			}
			n += push_table_summaries(&st, t);
		}
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (next)
	{
		RqPushKey(&st, "NextToken");
		RqPushString(&st, WJB_VALUE, next);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/*
 * The table (and GSI, *index; -1: none) the SQL functions read, with the
 * caller's describe right checked; false when the table or the rules are
 * not enabled.  SPI is connected on return.
 */
static bool
sql_target(FunctionCallInfo fcinfo, DynTable **tp, int *index, CiState *s)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *index_name = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	DynTable   *volatile t = NULL;
	DynSecurityOp sec_op;

	*index = -1;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynCatalogRevalidate();
	DynSecurityEnter("contributor_insights", &sec_op);
	PG_TRY();
	{
		t = get_table(name);
		if (index_name)
			*index = find_gsi(t, index_name);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&sec_op);
	}
	PG_END_TRY();
	*tp = t;
	*s = read_state(t, index_name);
	return s->status && strcmp(s->status, "ENABLED") == 0;
}

PG_FUNCTION_INFO_V1(dynindex_contributor_insights);

/*
 * dynindex.contributor_insights(table_name text, index_name text DEFAULT
 * NULL): the keys each enabled rule of the table (or GSI) holds, most
 * counted first: rule, rule_name, rank, key, count (an upper bound of the
 * key's occurrences since the rule started), max_overcount (count minus it
 * is a lower bound) and total (occurrences the rule counted).
 */
Datum
dynindex_contributor_insights(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DynTable   *t;
	int			index;
	CiState		s;
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();
	if (sql_target(fcinfo, &t, &index, &s))
		for (k = 0; k < DYN_CI__COUNT; k++)
		{
			DynInsightsEntry *e;
			int			n;
			int64		total;
			int			i;

			if (!rule_in_mode(k, s.mode, has_sort_key(t, index)))
				continue;
			e = DynInsightsRead(tag_of(t, index), k, &n, &total);
			for (i = 0; i < n; i++)
			{
				Datum		values[7];
				bool		nulls[7] = {0};

				values[0] = CStringGetTextDatum(rule_codes[k]);
				values[1] = CStringGetTextDatum(rule_name(t, index, k, s.rules_ts));
				values[2] = Int32GetDatum(i + 1);
				values[3] = CStringGetTextDatum(e[i].text);
				values[4] = Int64GetDatum(e[i].count);
				values[5] = Int64GetDatum(e[i].error);
				values[6] = Int64GetDatum(total);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_contributor_insights_minutes);

/*
 * dynindex.contributor_insights_minutes(table_name text, index_name text
 * DEFAULT NULL): the same over time, as CloudWatch shows it per minute: for
 * each enabled rule and each of its last minutes that counted something
 * (dynindex.contributor_insights_minutes of them, the running one last), the
 * minute's most counted keys (ten at most): rule, rule_name, minute (its
 * start), rank, key, count and max_overcount (bounds of the key's
 * occurrences in that minute), total (occurrences counted in the minute).
 */
Datum
dynindex_contributor_insights_minutes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DynTable   *t;
	int			index;
	CiState		s;
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();
	if (sql_target(fcinfo, &t, &index, &s))
		for (k = 0; k < DYN_CI__COUNT; k++)
		{
			DynInsightsMinute *m;
			int			n;
			int			j;

			if (!rule_in_mode(k, s.mode, has_sort_key(t, index)))
				continue;
			m = DynInsightsReadMinutes(tag_of(t, index), k, &n);
			for (j = 0; j < n; j++)
			{
				TimestampTz start = (TimestampTz) (m[j].minute * 60 -
												   (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY) * USECS_PER_SEC;
				int			i;

				for (i = 0; i < m[j].n; i++)
				{
					Datum		values[8];
					bool		nulls[8] = {0};

					values[0] = CStringGetTextDatum(rule_codes[k]);
					values[1] = CStringGetTextDatum(rule_name(t, index, k, s.rules_ts));
					values[2] = TimestampTzGetDatum(start);
					values[3] = Int32GetDatum(i + 1);
					values[4] = CStringGetTextDatum(m[j].top[i].text);
					values[5] = Int64GetDatum(m[j].top[i].count);
					values[6] = Int64GetDatum(m[j].top[i].error);
					values[7] = Int64GetDatum(m[j].total);
					tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
				}
			}
		}
	SPI_finish();
	PG_RETURN_VOID();
}
