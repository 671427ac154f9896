/*
 * capture.c — stream records, written by the writing transaction.
 *
 * One row of dynindex.stream_records per item-level change that modified the
 * item: INSERT (absent before), MODIFY (present before and after, and not
 * equal), REMOVE (present before, absent after).  Keys always; NewImage and
 * OldImage as the stream's view type says; SizeBytes as DynamoDB computes it:
 * the size of Keys plus the size of each image the record carries (AWS's
 * example: Keys {Id: N 101} and NewImage {Message: S "New item!", Id: N 101}
 * is 5 + 21 = 26 bytes).  A TTL deletion carries the service identity.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "storage/storage.h"
#include "streams/streams.h"
#include "security/security.h"

#define TTL_USER_IDENTITY "{\"type\": \"Service\", \"principalId\": \"dynamodb.amazonaws.com\"}"

static SPIPlanPtr insert_plan = NULL;
static Jsonb *ttl_identity = NULL;

/* The record insert, prepared once per backend. */
static SPIPlanPtr
get_insert_plan(void)
{
	Oid			types[10] = {INT8OID, INT4OID, INT8OID, TIMESTAMPTZOID, TEXTOID,
		JSONBOID, JSONBOID, JSONBOID, INT4OID, JSONBOID};
	SPIPlanPtr	plan;

	if (insert_plan)
		return insert_plan;
	plan = SPI_prepare("INSERT INTO dynindex.stream_records (stream_id, bucket, seq, created_at, event_name, "
					   "keys, new_image, old_image, size_bytes, user_identity) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", 10, types);
	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "could not prepare the stream record insert");
	insert_plan = plan;
	return plan;
}

/* {"type": "Service", "principalId": "dynamodb.amazonaws.com"}, built once. */
static Datum
ttl_identity_datum(void)
{
	if (ttl_identity == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		ttl_identity = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(TTL_USER_IDENTITY)));
		MemoryContextSwitchTo(old);
	}
	return JsonbPGetDatum(ttl_identity);
}

/* The key attributes of an item as a map. */
static DynValue *
key_map(DynTable *t, const DynKey *key)
{
	DynValue   *m = DynMakeMap(2);

	DynMapAppend(m, t->hash.name, strlen(t->hash.name), key->hash);
	if (t->has_range)
		DynMapAppend(m, t->range.name, strlen(t->range.name), key->range);
	return m;
}

/* Write the stream record of one change. */
void
DynStreamCapture(DynTable *t, const DynStreamInfo *s, const DynStreamChange *c)
{
	const char *event;
	bool		with_new = s->view == DYN_STREAM_NEW_IMAGE || s->view == DYN_STREAM_NEW_AND_OLD_IMAGES;
	bool		with_old = s->view == DYN_STREAM_OLD_IMAGE || s->view == DYN_STREAM_NEW_AND_OLD_IMAGES;
	DynValue   *keys;
	int64		size;
	Datum		args[10];
	char		nulls[11] = "          ";
	DynSecurityState sec;

	if (s->id == 0)
		return;
	if (c->old == NULL && c->old_json == NULL)
	{
		if (c->new == NULL)
			return;				/* absent before and after */
		event = "INSERT";
	}
	else if (c->new == NULL)
		event = "REMOVE";
	else
	{
		/* a write that changes nothing writes no record */
		if (c->old_size == c->new_size && c->old && DynValueEquals(c->old, c->new))
			return;
		event = "MODIFY";
	}
	if (c->new == NULL)
		with_new = false;
	if (c->old == NULL && c->old_json == NULL)
		with_old = false;

	keys = key_map(t, c->key);
	size = DynItemSize(keys) + (with_new ? c->new_size : 0) + (with_old ? c->old_size : 0);

	args[0] = Int64GetDatum(s->id);
	args[1] = Int32GetDatum(DynStreamBucket(c->key->pk, s->shard_count));
	args[2] = Int64GetDatum(DynStreamNextSeq());
	args[3] = TimestampTzGetDatum(GetCurrentTimestamp());
	args[4] = CStringGetTextDatum(event);
	args[5] = JsonbPGetDatum(DynItemToJsonb(keys));
	if (with_new)
		args[6] = JsonbPGetDatum(c->new_json ? c->new_json : DynItemToJsonb(c->new));
	else
		nulls[6] = 'n';
	if (with_old)
		args[7] = JsonbPGetDatum(c->old_json ? c->old_json : DynItemToJsonb(c->old));
	else
		nulls[7] = 'n';
	args[8] = Int32GetDatum((int32) size);
	if (c->by_ttl)
		args[9] = ttl_identity_datum();
	else
		nulls[9] = 'n';
	/* stream records are internal: written with the extension owner's rights (writers run as their caller) */
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_plan(get_insert_plan(), args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write a stream record");
	DynSecurityEndInternal(&sec);
	DynStorageCommitWithLocal();	/* on Citus: the record commits with the item */
}
