/*
 * indexes.c — what every secondary index shares: key checks on writes,
 * index key encoding, projection, and the dispatch of maintenance to LSIs
 * (synchronous) and GSIs (queued).
 */
#include "postgres.h"

#include "common/errors.h"
#include "indexes/indexes.h"

/* Largest value of an index key attribute, in bytes (as a table key's). */
#define INDEX_HASH_KEY_MAX	2048
#define INDEX_RANGE_KEY_MAX 1024

/* Check one index key attribute of an item. */
static void
check_key_attr(const DynValue *item, const DynKeyAttr *ka, const char *index_name, bool is_range)
{
	DynValue   *v = DynMapGetStr(item, ka->name);

	if (v == NULL)
		return;
	if (v->type != ka->type)
		DynValidationError("One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s",
						   ka->name, DynTypeName(ka->type), DynTypeName(v->type), index_name);
	if (v->type != DYN_N && v->u.str.len == 0)
		DynValidationError("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s",
						   v->type == DYN_S ? "string" : "binary", index_name, ka->name);
	if (v->type != DYN_N && v->u.str.len > (is_range ? INDEX_RANGE_KEY_MAX : INDEX_HASH_KEY_MAX))
		DynValidationError("One or more parameter values were invalid: Size limit exceeded for Index Key %s Actual Size: %d bytes Max Size: %d bytes IndexName: %s",
						   ka->name, (int) v->u.str.len, is_range ? INDEX_RANGE_KEY_MAX : INDEX_HASH_KEY_MAX, index_name);
}

/* qsort comparator: indexes by name. */
static int
index_name_cmp(const void *a, const void *b)
{
	return strcmp((*(DynIndex *const *) a)->name, (*(DynIndex *const *) b)->name);
}

/*
 * Check an item against every index's key attributes, indexes in name order:
 * when an attribute keys several indexes, DynamoDB's message names the
 * alphabetically first.
 */
void
DynIndexesCheckItem(DynTable *t, const DynValue *item)
{
	DynIndex  **order;
	int			i;
	int			j;

	if (t->nindexes == 0)
		return;
	order = palloc(sizeof(DynIndex *) * t->nindexes);
	for (i = 0; i < t->nindexes; i++)
		order[i] = &t->indexes[i];
	qsort(order, t->nindexes, sizeof(DynIndex *), index_name_cmp);
	for (i = 0; i < t->nindexes; i++)
	{
		DynIndex   *idx = order[i];

		for (j = 0; j < idx->nhash; j++)
			check_key_attr(item, &idx->hash[j], idx->name, false);
		for (j = 0; j < idx->nrange; j++)
			check_key_attr(item, &idx->range[j], idx->name, true);
	}
}

/*
 * Encode n key attributes of an item; false if one is missing or cannot be an
 * index key (wrong type, empty or oversized string or binary).  Writes reject such values
 * (DynIndexesCheckItem), but items written before the index existed may hold
 * them: a backfill leaves those out of the index, as DynamoDB does.
 */
static bool
encode_attrs(const DynValue *item, const DynKeyAttr *attrs, int n, int max_bytes, bytea **out)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < n; i++)
	{
		DynValue   *v = DynMapGetStr(item, attrs[i].name);

		if (v == NULL || v->type != attrs[i].type)
			return false;
		if (v->type != DYN_N && (v->u.str.len == 0 || v->u.str.len > max_bytes))
			return false;
		DynKeyEncode(&buf, v, n > 1);
	}
	*out = palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(*out, VARHDRSZ + buf.len);
	memcpy(VARDATA(*out), buf.data, buf.len);
	return true;
}

/* Encoded index key of an item; false when the item is not in the index. */
bool
DynIndexEntryKey(DynTable *t, DynIndex *idx, const DynValue *item, bytea **ipk, bytea **isk)
{
	return encode_attrs(item, idx->hash, idx->nhash, INDEX_HASH_KEY_MAX, ipk) &&
		encode_attrs(item, idx->range, idx->nrange, INDEX_RANGE_KEY_MAX, isk);
}

/* Is name one of the index's or the table's key attributes? */
static bool
is_key_attr(DynTable *t, DynIndex *idx, const char *name, int namelen)
{
	int			j;

#define SAME(s) ((int) strlen(s) == namelen && memcmp((s), name, namelen) == 0)
	if (SAME(t->hash.name) || (t->has_range && SAME(t->range.name)))
		return true;
	for (j = 0; j < idx->nhash; j++)
		if (SAME(idx->hash[j].name))
			return true;
	for (j = 0; j < idx->nrange; j++)
		if (SAME(idx->range[j].name))
			return true;
#undef SAME
	return false;
}

/* Is attribute name projected into the index? */
bool
DynIndexProjects(DynTable *t, DynIndex *idx, const char *name, int namelen)
{
	int			j;

	if (idx->projection == DYN_PROJ_ALL || is_key_attr(t, idx, name, namelen))
		return true;
	if (idx->projection == DYN_PROJ_INCLUDE)
		for (j = 0; j < idx->nnonkey; j++)
			if ((int) strlen(idx->nonkey[j]) == namelen && memcmp(idx->nonkey[j], name, namelen) == 0)
				return true;
	return false;
}

/* The projected index entry of an item. */
DynValue *
DynIndexProject(DynTable *t, DynIndex *idx, const DynValue *item)
{
	DynValue   *entry;
	int			i;

	if (idx->projection == DYN_PROJ_ALL)
		return (DynValue *) item;
	entry = DynMakeMap(item->n);
	for (i = 0; i < item->n; i++)
	{
		const DynAttr *a = &item->u.attrs[i];

		if (DynIndexProjects(t, idx, a->name, a->namelen))
			DynMapAppend(entry, a->name, a->namelen, a->value);
	}
	return entry;
}

/* Maintain every index after a write. */
void
DynIndexesOnWrite(DynTable *t, const DynKey *key, const DynValue *old, const DynValue *new)
{
	int			i;
	bool		has_gsi = false;

	for (i = 0; i < t->nindexes; i++)
	{
		if (t->indexes[i].is_global)
			has_gsi = true;
		else
			DynLsiOnWrite(t, &t->indexes[i], key, old, new);
	}
	if (has_gsi)
		DynGsiCapture(t, key);
}
