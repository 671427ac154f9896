/*
 * tags.c — TagResource, UntagResource, ListTagsOfResource (tags of tables,
 * stored in dynindex.tags, removed with the table) and DescribeLimits.
 *
 * Checks come in DynamoDB's order: deserialization, the member constraint on
 * Tags / TagKeys, the ResourceArn, the member lists, each tag, then the
 * table, then the 50-tag limit on the merged set (docs/errors.md lists the
 * messages and their sources).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"

#define MAX_TAGS 50
#define MAX_TAG_KEY_CHARS 128
#define MAX_TAG_VALUE_CHARS 256

/* ---------------------------------------------------------------- schemas */

/* No constraints here: DynamoDB answers bad tags with its own messages. */
static const RqField tag_fields[] = {
	{.name = "Key",.type = RQ_STRING},
	{.name = "Value",.type = RQ_STRING},
	{0}
};
static const RqField tag_elem = {.type = RQ_STRUCT,.structname = "Tag",.fields = tag_fields};
static const RqField tag_key_elem = {.type = RQ_STRING};

static const RqField tag_resource_fields[] = {
	{.name = "ResourceArn",.type = RQ_STRING},
	{.name = "Tags",.type = RQ_LIST,.elem = &tag_elem},
	{0}
};
static const RqField untag_resource_fields[] = {
	{.name = "ResourceArn",.type = RQ_STRING},
	{.name = "TagKeys",.type = RQ_LIST,.elem = &tag_key_elem},
	{0}
};
static const RqField list_tags_fields[] = {
	{.name = "ResourceArn",.type = RQ_STRING},
	{.name = "NextToken",.type = RQ_STRING},
	{0}
};
static const RqField describe_limits_fields[] = {
	{0}
};

/* ---------------------------------------------------------------- checks */

/* A string member value as a C string, or NULL for absent / JSON null. */
static char *
jv_cstring(JsonbValue *v)
{
	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * AWS's tag character set: letters, numbers and white space of any script,
 * and + - = . _ : / @.  ASCII is checked here; other characters by
 * PostgreSQL's regex with ICU character classes.
 */
static bool
tag_chars_ok(const char *s)
{
	const unsigned char *p;
	bool		ascii = true;
	bool		ok;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	bool		isnull;

	for (p = (const unsigned char *) s; *p; p++)
	{
		if (*p >= 0x80)
		{
			ascii = false;
			continue;
		}
		if (!(isalnum(*p) || *p == ' ' || strchr("+-=._:/@", *p) != NULL))
			return false;
	}
	if (ascii)
		return true;
	args[0] = CStringGetTextDatum(s);
	if (SPI_execute_with_args("SELECT $1 ~ ('^[[:alpha:][:digit:][:space:]_.:/=+@-]*$' COLLATE \"und-x-icu\")",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not check tag characters");
	ok = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return !isnull && ok;
}

static bool
tag_key_ok(const char *k)
{
	int			len;

	if (k == NULL)
		return false;
	len = pg_mbstrlen(k);
	return len >= 1 && len <= MAX_TAG_KEY_CHARS && tag_chars_ok(k);
}

static bool
tag_value_ok(const char *v)
{
	return v != NULL && pg_mbstrlen(v) <= MAX_TAG_VALUE_CHARS && tag_chars_ok(v);
}

/*
 * Check a list of tags (TagResource, CreateTable): each key and value, the
 * reserved "aws:" prefix, duplicate keys.  Returns the keys and values.
 */
static int
check_tag_list(JsonbValue *list, char ***keys_out, char ***values_out)
{
	int			n;
	int			i;
	int			j;
	JsonbValue *elems = RqArrayElems(list, &n);
	char	  **keys = palloc0(sizeof(char *) * Max(n, 1));
	char	  **values = palloc0(sizeof(char *) * Max(n, 1));

	for (i = 0; i < n; i++)
	{
		bool		isobj = elems[i].type == jbvBinary;

		keys[i] = isobj ? jv_cstring(RqGetJv(&elems[i], "Key")) : NULL;
		values[i] = isobj ? jv_cstring(RqGetJv(&elems[i], "Value")) : NULL;
		if (!tag_key_ok(keys[i]))
			DynValidationError("The Tag Key provided is invalid, Key: %s", keys[i] ? keys[i] : "null");
		if (strncmp(keys[i], "aws:", 4) == 0)
			DynValidationError("Tag Key cannot be prefixed with aws:, Key: %s", keys[i]);
		if (!tag_value_ok(values[i]))
			DynValidationError("The Tag Value provided is invalid, Value: %s", values[i] ? values[i] : "null");
		for (j = 0; j < i; j++)
			if (strcmp(keys[j], keys[i]) == 0)
				DynValidationError("Duplicate Tag Keys provided as input: Duplicate Tag Key found %s", keys[i]);
	}
	*keys_out = keys;
	*values_out = values;
	return n;
}

/* The ARN's own checks, before the member lists are looked at. */
static void
check_arn_start(const char *arn)
{
	if (arn == NULL)
		DynValidationError("Invalid TableArn");
	if (strncmp(arn, "arn:", 4) != 0)
		DynValidationError("One or more parameter values were invalid: ARNs must start with 'arn:': %s", arn);
}

/*
 * The table an ARN names (after check_arn_start), or a ValidationException:
 * only this endpoint's table ARNs (DescribeTable's TableArn) are accepted.
 * Another account's ARN is AccessDeniedException "Access is denied", before
 * its region or name is looked at (DynamoDB, us-west-2, 2026-10-08: the ACK
 * DynamoDB controller's behaviour catalogue, DDB-TABLE-071).
 */
static char *
arn_table_name(const char *arn)
{
	char	   *prefix = DynTableArn("");
	const char *p;
	const char *service;
	int			colons = 0;

	for (p = arn; *p; p++)
		if (*p == ':')
			colons++;
	service = strchr(arn + 4, ':');	/* after the partition */
	if (colons >= 5 && service && strncmp(service + 1, "dynamodb:", 9) != 0)
		DynValidationError("One or more parameter values were invalid: Provided Arn is not a DynamoDB resource arn: %s", arn);
	/* another account's table: denied before anything else is told about it */
	if (colons >= 5 && service && strncmp(service + 1, "dynamodb:", 9) == 0)
	{
		const char *region = service + 10;
		const char *account = strchr(region, ':');
		const char *end = account ? strchr(account + 1, ':') : NULL;

		if (end && ((size_t) (end - account - 1) != strlen(dynindex_account_id) ||
					strncmp(account + 1, dynindex_account_id, end - account - 1) != 0))
			DynError(DYN_ERR_ACCESS_DENIED, "Access is denied");
	}
	if (strncmp(arn, prefix, strlen(prefix)) == 0)
	{
		const char *name = arn + strlen(prefix);
		const char *slash = strchr(name, '/');

		if (slash)
		{
			if (strncmp(slash, "/stream/", 8) == 0)
				DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: ResourceArn: %s not found", arn);
			DynValidationError("One or more parameter values were invalid: Invalid resource arn provided, "
							   "only table or stream is accepted. Provided resource arn: %s", arn);
		}
		if (pg_mbstrlen(name) >= 3)
			return pstrdup(name);
	}
	DynValidationError("Invalid TableArn: Invalid ResourceArn provided as input %s", arn);
	return NULL;				/* not reached */
}

/*
 * A table that does not exist: ResourceNotFoundException naming the ARN
 * (DynamoDB, us-west-2, 2026-10-08, DDB-TABLE-070).  A caller without
 * account-wide rights was already denied by the lookup's authorization check,
 * and learns nothing (docs/security.md).
 */
static void
table_not_found(const char *arn)
{
	DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: ResourceArn: %s not found", arn);
}

/* The table of a validated ARN, locked against concurrent tag changes. */
static char *
existing_table(const char *arn, const char *name)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1];

	if (DynCatalogGetTable(name) == NULL)
		table_not_found(arn);
	args[0] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("SELECT pg_advisory_xact_lock(4475214, hashtext($1))",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the table's tags");
	return (char *) name;
}

static Datum
text_array(char **strs, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		d[i] = CStringGetTextDatum(strs[i]);
	return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* Store tags (after check_tag_list), enforcing the 50-tag limit on the merged set. */
static void
store_tags(const char *table, char **keys, char **values, int n)
{
	Oid			types[3] = {TEXTOID, TEXTARRAYOID, TEXTARRAYOID};
	Datum		args[3];
	bool		isnull;
	int64		kept;

	if (n == 0)
		return;
	args[0] = CStringGetTextDatum(table);
	args[1] = text_array(keys, n);
	args[2] = text_array(values, n);
	if (SPI_execute_with_args("SELECT count(*) FROM dynindex.tags WHERE table_name = $1 AND tag_key <> ALL ($2)",
							  2, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not count tags");
	kept = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (kept + n > MAX_TAGS)
		DynValidationError("Number of Tags exceed the current limit for the provided ResourceArn");
	if (SPI_execute_with_args("INSERT INTO dynindex.tags (table_name, tag_key, tag_value) "
							  "SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS u(k, v) "
							  "ON CONFLICT (table_name, tag_key) DO UPDATE SET tag_value = EXCLUDED.tag_value",
							  3, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store tags");
}

/* ---------------------------------------------------------------- CreateTable */

void
DynCheckCreateTableTags(JsonbValue *tags)
{
	char	  **keys;
	char	  **values;
	int			n = check_tag_list(tags, &keys, &values);

	if (n > MAX_TAGS)
		DynValidationError("Number of Tags exceed the current limit for the provided ResourceArn");
}

void
DynStoreCreateTableTags(const char *table, JsonbValue *tags)
{
	char	  **keys;
	char	  **values;
	int			n = check_tag_list(tags, &keys, &values);

	store_tags(table, keys, values, n);
}

/* ---------------------------------------------------------------- operations */

/* TagResource */
Jsonb *
DynTagResource(Jsonb *req)
{
	char	   *arn;
	char	   *name;
	JsonbValue *tags;
	char	  **keys;
	char	  **values;
	int			n;

	RqValidate(req, tag_resource_fields);
	arn = RqGetString(&req->root, "ResourceArn");
	tags = RqGet(&req->root, "Tags");
	if (tags == NULL)
		DynValidationError("1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null");
	check_arn_start(arn);
	name = arn_table_name(arn);
	if (JsonContainerSize(tags->val.binary.data) == 0)
		DynValidationError("Atleast one Tag needs to be provided as Input.");
	n = check_tag_list(tags, &keys, &values);
	existing_table(arn, name);
	store_tags(name, keys, values, n);
	return RqEmptyObject();
}

/* UntagResource */
Jsonb *
DynUntagResource(Jsonb *req)
{
	char	   *arn;
	char	   *name;
	JsonbValue *list;
	JsonbValue *elems;
	char	  **keys;
	int			n;
	int			i;
	Oid			types[2] = {TEXTOID, TEXTARRAYOID};
	Datum		args[2];

	RqValidate(req, untag_resource_fields);
	arn = RqGetString(&req->root, "ResourceArn");
	list = RqGet(&req->root, "TagKeys");
	if (list == NULL)
		DynValidationError("1 validation error detected: Value null at 'tagKeys' failed to satisfy constraint: Member must not be null");
	check_arn_start(arn);
	name = arn_table_name(arn);
	elems = RqArrayElems(list, &n);
	if (n == 0)
		DynValidationError("Atleast one Tag Key needs to be provided as Input.");
	keys = palloc(sizeof(char *) * n);
	for (i = 0; i < n; i++)
	{
		keys[i] = jv_cstring(&elems[i]);
		if (!tag_key_ok(keys[i]))
			DynValidationError("The Tag Key provided is invalid, Key: %s", keys[i] ? keys[i] : "null");
	}
	if (n > MAX_TAGS)
		DynValidationError("Number of Tags exceed the current limit for the provided ResourceArn");
	existing_table(arn, name);
	args[0] = CStringGetTextDatum(name);
	args[1] = text_array(keys, n);
	if (SPI_execute_with_args("DELETE FROM dynindex.tags WHERE table_name = $1 AND tag_key = ANY ($2)",
							  2, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete tags");
	return RqEmptyObject();
}

/* ListTagsOfResource: every tag (at most 50) in one page, by key. */
Jsonb *
DynListTagsOfResource(Jsonb *req)
{
	char	   *arn;
	char	   *name;
	JsonbParseState *st = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	uint64		i;

	RqValidate(req, list_tags_fields);
	arn = RqGetString(&req->root, "ResourceArn");
	check_arn_start(arn);
	name = arn_table_name(arn);
	if (DynCatalogGetTable(name) == NULL)
		table_not_found(arn);
	args[0] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("SELECT tag_key, tag_value FROM dynindex.tags WHERE table_name = $1 "
							  "ORDER BY tag_key COLLATE \"C\"",
							  1, types, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read tags");

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Tags");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < SPI_processed; i++)
	{
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "Key");
		RqPushString(&st, WJB_VALUE, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		RqPushKey(&st, "Value");
		RqPushString(&st, WJB_VALUE, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* DescribeLimits: DynamoDB's default quotas (per account and per table, per region). */
Jsonb *
DynDescribeLimits(Jsonb *req)
{
	JsonbParseState *st = NULL;

	RqValidate(req, describe_limits_fields);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "AccountMaxReadCapacityUnits");
	RqPushInt(&st, WJB_VALUE, 80000);
	RqPushKey(&st, "AccountMaxWriteCapacityUnits");
	RqPushInt(&st, WJB_VALUE, 80000);
	RqPushKey(&st, "TableMaxReadCapacityUnits");
	RqPushInt(&st, WJB_VALUE, 40000);
	RqPushKey(&st, "TableMaxWriteCapacityUnits");
	RqPushInt(&st, WJB_VALUE, 40000);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
