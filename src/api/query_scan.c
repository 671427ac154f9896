/*
 * query_scan.c — Query and Scan: one paged range reader over a table's or an
 * index's storage relation, forward or backward, with DynamoDB's Limit
 * (counted before the filter), 1 MB page, filter, projection, Select,
 * LastEvaluatedKey / ExclusiveStartKey, parallel-scan segments and capacity.
 *
 * Reading is keyset paging over the btree: each batch is one prepared
 *   SELECT <key cols>, size, item FROM rel WHERE [hash = $1 AND]
 *     (cols) >= (lo) [AND (cols) < (hi)] ORDER BY cols [DESC] LIMIT n
 * and the next batch starts just after the last row read, so the cost of a
 * page grows with the rows read, never with the table size.  A table's
 * columns are (pk | sk); an index's are (ipk | isk, pk, sk), so ties on the
 * index key are ordered by the base key, also backwards.  The successor of a
 * tuple (.., x) in that order is (.., x || '\x00').
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "api/api.h"
#include "api/items.h"
#include "api/query.h"
#include "common/errors.h"
#include "security/security.h"
#include "expr/expr_ast.h"
#include "indexes/indexes.h"
#include "metrics/metrics.h"

#define PAGE_BYTES		(1024 * 1024)
#define FIRST_BATCH		64
#define MAX_BATCH		1024
#define MAX_KEY_COLS	4

/* ---------------------------------------------------------------- schemas */

static const char *const select_enum[] = {
	"SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", NULL
};
static const char *const conditional_operator_enum[] = {"OR", "AND", NULL};
static const char *const comparison_operator_enum[] = {
	"IN", "NULL", "BETWEEN", "LT", "NOT_CONTAINS", "EQ", "GT", "NOT_NULL", "NE", "LE",
	"BEGINS_WITH", "GE", "CONTAINS", NULL
};
static const RqField attrvalue_elem = {.type = RQ_ATTRVALUE};
static const RqField string_elem = {.type = RQ_STRING};
static const RqField condition_fields[] = {
	{.name = "AttributeValueList",.type = RQ_LIST,.elem = &attrvalue_elem},
	{.name = "ComparisonOperator",.type = RQ_STRING,.enumvals = comparison_operator_enum},
	{0}
};
static const RqField condition_elem = {.type = RQ_STRUCT,.structname = "Condition",.fields = condition_fields};

#define TABLE_NAME_FIELD RQ_TABLE_NAME_OR_ARN
#define INDEX_NAME_FIELD {.name = "IndexName",.type = RQ_STRING,.namepattern = true,.minlen = 3,.maxlen = 255}

static const RqField query_fields[] = {
	{.name = "Select",.type = RQ_STRING,.enumvals = select_enum},
	INDEX_NAME_FIELD,
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	{.name = "QueryFilter",.type = RQ_MAP,.elem = &condition_elem},
	TABLE_NAME_FIELD,
	{.name = "ConditionalOperator",.type = RQ_STRING,.enumvals = conditional_operator_enum},
	{.name = "AttributesToGet",.type = RQ_LIST,.elem = &RqAttributeNameElem,.minlen = 1,.maxlen = 255},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.newform = RQ_NEWFORM_MIN},	/* Scan's: older form */
	{.name = "KeyConditions",.type = RQ_MAP,.elem = &condition_elem},
	{.name = "ExclusiveStartKey",.type = RQ_MAP,.elem = &attrvalue_elem},
	{.name = "ConsistentRead",.type = RQ_BOOLEAN},
	{.name = "ScanIndexForward",.type = RQ_BOOLEAN},
	{.name = "KeyConditionExpression",.type = RQ_STRING},
	{.name = "FilterExpression",.type = RQ_STRING},
	{.name = "ProjectionExpression",.type = RQ_STRING},
	{.name = "ExpressionAttributeValues",.type = RQ_MAP,.elem = &attrvalue_elem},
	{.name = "ExpressionAttributeNames",.type = RQ_MAP,.elem = &string_elem},
	{0}
};

static const RqField scan_fields[] = {
	{.name = "Select",.type = RQ_STRING,.enumvals = select_enum},
	INDEX_NAME_FIELD,
	{.name = "TotalSegments",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 1000000},
	{.name = "ReturnConsumedCapacity",.type = RQ_STRING,.enumvals = RqReturnConsumedCapacityEnum},
	TABLE_NAME_FIELD,
	{.name = "ConditionalOperator",.type = RQ_STRING,.enumvals = conditional_operator_enum},
	{.name = "ScanFilter",.type = RQ_MAP,.elem = &condition_elem},
	{.name = "Segment",.type = RQ_INTEGER,.hasmin = true,.minval = 0,.hasmax = true,.maxval = 999999},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1},
	{.name = "AttributesToGet",.type = RQ_LIST,.elem = &RqAttributeNameElem,.minlen = 1,.maxlen = 255},
	{.name = "ExclusiveStartKey",.type = RQ_MAP,.elem = &attrvalue_elem},
	{.name = "ConsistentRead",.type = RQ_BOOLEAN},
	{.name = "FilterExpression",.type = RQ_STRING},
	{.name = "ProjectionExpression",.type = RQ_STRING},
	{.name = "ExpressionAttributeValues",.type = RQ_MAP,.elem = &attrvalue_elem},
	{.name = "ExpressionAttributeNames",.type = RQ_MAP,.elem = &string_elem},
	{0}
};

/* ---------------------------------------------------------------- request state */

typedef enum SelectKind
{
	SEL_ALL_ATTRIBUTES,
	SEL_ALL_PROJECTED,
	SEL_SPECIFIC,
	SEL_COUNT
} SelectKind;

/* Everything a page read needs. */
typedef struct ReadSpec
{
	DynTable   *t;
	DynIndex   *idx;			/* NULL: the table itself */
	DynKeySchema ks;
	bool		is_query;
	int			legacy_key_conditions;	/* entries of KeyConditions */
	JsonbValue *legacy_kc;		/* KeyConditions, judged after the table and index */
	bool		forward;
	bool		consistent;
	int64		limit;			/* 0: none */
	DynExpr    *filter;
	DynExpr    *proj;
	SelectKind	select;
	bool		fetch_base;		/* LSI: read each base item */
	DynCapacityMode cap;
	int			segment;
	int			total_segments; /* 0: not a parallel scan */
	bool		seg_index;		/* read the segment's hash range by the segment index */

	/* the relation and its key columns: [hash |] tuple */
	const char *rel;
	int			nfixed;			/* 1 for Query (the hash column), 0 for Scan */
	int			ncols;			/* key columns in all */
	const char *cols[MAX_KEY_COLS];
	bytea	   *fixed;			/* Query: the hash column value */
	bytea	   *lo[MAX_KEY_COLS];	/* tuple lower bound (inclusive) */
	bytea	   *hi[MAX_KEY_COLS];	/* tuple upper bound (exclusive), hi[0] NULL: none */

	/* LastEvaluatedKey attributes */
	int			nlek;
	const char *lek[2 + 2 * DYN_MAX_KEY_ATTRS];
} ReadSpec;

/* ---------------------------------------------------------------- plans */

typedef struct PlanEntry
{
	char		sql[1024];		/* hash key */
	SPIPlanPtr	plan;
} PlanEntry;

static HTAB *plan_cache = NULL;

/*
 * ExecuteStatement's read (src/api/partiql.c), set around one Query or Scan:
 * its WHERE may filter on key attributes, and the page is answered in
 * ExecuteStatement's shape.
 */
static DynPartiQLRead *partiql_read = NULL;
static uint64 plan_cache_generation = 0;

/*
 * A kept plan for sql, prepared on first use (always its generic plan when
 * generic_rel, the relation it reads, is this node's).  The texts name
 * storage relations: the cache is emptied whenever the catalog changes, or a
 * backend that sees many tables created and deleted would keep their plans
 * forever.
 */
static SPIPlanPtr
cached_plan(const char *sql, int nargs, Oid *types, const char *generic_rel)
{
	PlanEntry  *e;
	bool		found;
	SPIPlanPtr	plan;

	if (plan_cache != NULL && plan_cache_generation != DynCatalogGeneration())
	{
		HASH_SEQ_STATUS seq;

		hash_seq_init(&seq, plan_cache);
		while ((e = hash_seq_search(&seq)) != NULL)
			if (e->plan)
				SPI_freeplan(e->plan);
		hash_destroy(plan_cache);
		plan_cache = NULL;
	}
	if (plan_cache == NULL)
	{
		HASHCTL		ctl;

		plan_cache_generation = DynCatalogGeneration();
		ctl.keysize = sizeof(((PlanEntry *) 0)->sql);
		ctl.entrysize = sizeof(PlanEntry);
		plan_cache = hash_create("dynindex query plans", 64, &ctl, HASH_ELEM | HASH_STRINGS);
	}
	if (strlen(sql) >= sizeof(((PlanEntry *) 0)->sql))
		elog(ERROR, "query text too long");
	e = hash_search(plan_cache, sql, HASH_FIND, NULL);
	if (e && e->plan)
		return e->plan;
	plan = SPI_prepare_cursor(sql, nargs, types, generic_rel && !DynStorageIsDistributed(generic_rel) ?
							  CURSOR_OPT_GENERIC_PLAN : 0);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep plan");
	e = hash_search(plan_cache, sql, HASH_ENTER, &found);
	e->plan = plan;
	return plan;
}

/*
 * One batch of an index relation keyed by DYN_INDEX_KEY (0.3): the key tuple
 * bounds as a range of that one key (storage.c DynIndexKey).  A Query's range
 * stays inside its partition key; a Scan's inside its segment's hashes, a
 * whole Scan being one segment (the index's order: DynamoDB's Scan order).
 */
static void
run_keyed_batch(ReadSpec *rs, bool has_hi, int64 n)
{
	StringInfoData sql;
	Datum		args[4];
	Oid			types[4] = {BYTEAOID, BYTEAOID, BYTEAOID, INT8OID};
	int			nargs = 0;
	bytea	   *hi = NULL;
	int			ret;

	if (rs->nfixed)
	{
		args[nargs++] = PointerGetDatum(DynIndexKey(rs->fixed, rs->lo[0], rs->lo[1], rs->lo[2]));
		hi = has_hi ? DynIndexKey(rs->fixed, rs->hi[0], rs->hi[1], rs->hi[2]) : DynIndexKeyAfter(rs->fixed);
	}
	else
	{
		int			segment = rs->total_segments > 0 ? rs->segment : 0;
		int			total = Max(rs->total_segments, 1);

		Assert(!has_hi);
		/* from the segment's first hash, or just after the last key read */
		args[nargs++] = PointerGetDatum(VARSIZE_ANY_EXHDR(rs->lo[0]) > 0 ?
										DynIndexKey(rs->lo[0], rs->lo[1], rs->lo[2], rs->lo[3]) :
										DynIndexKeyOfHash(DynSegmentLowHash(segment, total)));
		if (segment + 1 < total)
			hi = DynIndexKeyOfHash(DynSegmentLowHash(segment + 1, total));
	}
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT ipk, isk, pk, sk, size, item FROM %s WHERE " DYN_INDEX_KEY " >= $1", rs->rel);
	if (hi)
	{
		args[nargs++] = PointerGetDatum(hi);
		appendStringInfo(&sql, " AND " DYN_INDEX_KEY " < $%d", nargs);
	}
	if (rs->nfixed)
	{
		/* implied by the range; Citus sends the read to ipk's shard only when it is named */
		args[nargs++] = PointerGetDatum(rs->fixed);
		appendStringInfo(&sql, " AND ipk = $%d", nargs);
	}
	types[nargs] = INT8OID;
	args[nargs++] = Int64GetDatum(n);
	appendStringInfo(&sql, " ORDER BY " DYN_INDEX_KEY "%s LIMIT $%d", rs->forward ? "" : " DESC", nargs);

	/*
	 * The generic plan, where the relation is this node's: the index range
	 * in the key's order.  A custom plan estimates the rows of one range from
	 * the key's histogram, may find a handful, and read them by a bitmap and
	 * sort them: every row of a large partition for one page when the guess
	 * is wrong.  (Citus plans a read of several shards only with the values.)
	 */
	ret = SPI_execute_plan(cached_plan(sql.data, nargs, types, rs->rel), args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "range read failed: %s", SPI_result_code_string(ret));
	pfree(sql.data);
}

/* Build and run one batch; leaves the rows in SPI_tuptable. */
static void
run_batch(ReadSpec *rs, bool has_hi, int64 n)
{
	StringInfoData sql;
	Datum		args[2 * MAX_KEY_COLS + 4];
	Oid			types[2 * MAX_KEY_COLS + 4];
	int			nargs = 0;
	int			ntuple = rs->ncols - rs->nfixed;
	int			i;
	int			ret;

	if (rs->idx && rs->idx->keyed)
	{
		run_keyed_batch(rs, has_hi, n);
		return;
	}
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (i = 0; i < rs->ncols; i++)
		appendStringInfo(&sql, "%s, ", rs->cols[i]);
	appendStringInfo(&sql, "size, item FROM %s WHERE ", rs->rel);
	if (rs->nfixed)
	{
		types[nargs] = BYTEAOID;
		args[nargs++] = PointerGetDatum(rs->fixed);
		appendStringInfo(&sql, "%s = $%d AND ", rs->cols[0], nargs);
	}
	if (rs->total_segments > 0 && rs->seg_index)
	{
		/*
		 * One segment: the hashes [low, next segment's low) in (hash, key)
		 * order, from the segment's first hash or just after the last key
		 * read (a Scan reads forward and has no upper key bound).
		 */
		bool		resumed = VARSIZE_ANY_EXHDR(rs->lo[0]) > 0;

		Assert(!has_hi && rs->nfixed == 0);
		types[nargs] = INT4OID;
		args[nargs++] = Int32GetDatum(resumed ? DynKeyHash(rs->lo[0]) :
									  (int32) DynSegmentLowHash(rs->segment, rs->total_segments));
		appendStringInfo(&sql, "(dynindex.key_hash(%s), ", rs->cols[0]);
		for (i = 0; i < ntuple; i++)
			appendStringInfo(&sql, "%s%s", i ? ", " : "", rs->cols[i]);
		appendStringInfo(&sql, ") >= ($%d", nargs);
		for (i = 0; i < ntuple; i++)
		{
			types[nargs] = BYTEAOID;
			args[nargs++] = PointerGetDatum(rs->lo[i]);
			appendStringInfo(&sql, ", $%d", nargs);
		}
		appendStringInfoChar(&sql, ')');
		if (rs->segment + 1 < rs->total_segments)
		{
			types[nargs] = INT4OID;
			args[nargs++] = Int32GetDatum((int32) DynSegmentLowHash(rs->segment + 1, rs->total_segments));
			appendStringInfo(&sql, " AND dynindex.key_hash(%s) < $%d", rs->cols[0], nargs);
		}
		appendStringInfo(&sql, " ORDER BY dynindex.key_hash(%s)", rs->cols[0]);
		for (i = 0; i < ntuple; i++)
			appendStringInfo(&sql, ", %s", rs->cols[i]);
		types[nargs] = INT8OID;
		args[nargs++] = Int64GetDatum(n);
		appendStringInfo(&sql, " LIMIT $%d", nargs);
		ret = SPI_execute_plan(cached_plan(sql.data, nargs, types, NULL), args, NULL, true, 0);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "range read failed: %s", SPI_result_code_string(ret));
		pfree(sql.data);
		return;
	}
	for (int pass = 0; pass < (has_hi ? 2 : 1); pass++)
	{
		bytea	  **b = pass == 0 ? rs->lo : rs->hi;

		if (pass == 1)
			appendStringInfoString(&sql, " AND ");
		appendStringInfoChar(&sql, '(');
		for (i = 0; i < ntuple; i++)
			appendStringInfo(&sql, "%s%s", i ? ", " : "", rs->cols[rs->nfixed + i]);
		appendStringInfo(&sql, ") %s (", pass == 0 ? ">=" : "<");
		for (i = 0; i < ntuple; i++)
		{
			types[nargs] = BYTEAOID;
			args[nargs++] = PointerGetDatum(b[i]);
			appendStringInfo(&sql, "%s$%d", i ? ", " : "", nargs);
		}
		appendStringInfoChar(&sql, ')');
	}
	if (rs->total_segments > 0)
	{
		types[nargs] = INT4OID;
		args[nargs++] = Int32GetDatum(rs->total_segments);
		types[nargs] = INT4OID;
		args[nargs++] = Int32GetDatum(rs->segment);
		appendStringInfo(&sql, " AND dynindex.key_segment(%s, $%d) = $%d",
						 rs->cols[0], nargs - 1, nargs);
	}
	appendStringInfoString(&sql, " ORDER BY ");
	for (i = 0; i < ntuple; i++)
		appendStringInfo(&sql, "%s%s%s", i ? ", " : "", rs->cols[rs->nfixed + i],
						 rs->forward ? "" : " DESC");
	types[nargs] = INT8OID;
	args[nargs++] = Int64GetDatum(n);
	appendStringInfo(&sql, " LIMIT $%d", nargs);

	ret = SPI_execute_plan(cached_plan(sql.data, nargs, types, NULL), args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "range read failed: %s", SPI_result_code_string(ret));
	pfree(sql.data);
}

/* ---------------------------------------------------------------- keys */

/* Compare two key tuples of n columns. */
static int
tuple_compare(bytea **a, bytea **b, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		int			c = DynBytesCompare(a[i], b[i]);

		if (c != 0)
			return c;
	}
	return 0;
}

/* The empty bytea. */
static bytea *
empty_bytea(void)
{
	bytea	   *b = palloc(VARHDRSZ);

	SET_VARSIZE(b, VARHDRSZ);
	return b;
}

/* Add an attribute name to the LastEvaluatedKey list unless present. */
static void
add_lek_attr(ReadSpec *rs, const char *name)
{
	int			i;

	for (i = 0; i < rs->nlek; i++)
		if (strcmp(rs->lek[i], name) == 0)
			return;
	rs->lek[rs->nlek++] = name;
}

/* Set up the relation, key columns and LastEvaluatedKey names. */
static void
setup_relation(ReadSpec *rs)
{
	int			i;

	add_lek_attr(rs, rs->t->hash.name);
	if (rs->t->has_range)
		add_lek_attr(rs, rs->t->range.name);
	if (rs->idx)
	{
		for (i = 0; i < rs->idx->nhash; i++)
			add_lek_attr(rs, rs->idx->hash[i].name);
		for (i = 0; i < rs->idx->nrange; i++)
			add_lek_attr(rs, rs->idx->range[i].name);
		rs->rel = rs->idx->storage;
		rs->ncols = 4;
		rs->cols[0] = "ipk";
		rs->cols[1] = "isk";
		rs->cols[2] = "pk";
		rs->cols[3] = "sk";
	}
	else
	{
		rs->rel = rs->t->storage;
		rs->ncols = 2;
		rs->cols[0] = "pk";
		rs->cols[1] = "sk";
	}
	for (i = 0; i < MAX_KEY_COLS; i++)
	{
		rs->lo[i] = empty_bytea();
		rs->hi[i] = NULL;
	}
}

/* Raise an ExclusiveStartKey attribute-value problem as DynamoDB words it. */
static DynValue *
parse_start_key(JsonbValue *jv)
{
	const char *msg;
	DynValue   *v = DynItemFromJsonb(jv, &msg);

	if (v == NULL)
	{
		if (strstr(msg, "contains duplicates") || strstr(msg, "number set") ||
			strstr(msg, "numeric value") || strstr(msg, "significant digits") ||
			strstr(msg, "number with magnitude"))
			DynValidationError("%s", msg);
		DynValidationError("The provided starting key is invalid: %s", msg);
	}
	return v;
}

/* Check one key attribute of a start key (DynamoDB's key-piece checks); prefix messages. */
static DynValue *
start_key_piece(DynValue *esk, const DynKeyAttr *ka, bool is_hash, const char *prefix)
{
	DynValue   *v = DynMapGetStr(esk, ka->name);

	if (v == NULL || v->type != ka->type)
		DynValidationError("%sThe provided key element does not match the schema", prefix);
	if (v->type != DYN_N && v->u.str.len == 0)
		DynValidationError("%sOne or more parameter values were invalid: The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						   prefix, v->type == DYN_S ? "string" : "binary", ka->name);
	if (v->type != DYN_N && is_hash && v->u.str.len > DYN_MAX_HASH_KEY_SIZE)
		DynValidationError("%sOne or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes", prefix);
	if (v->type != DYN_N && !is_hash && v->u.str.len > DYN_MAX_RANGE_KEY_SIZE)
		DynValidationError("%sOne or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes", prefix);
	return v;
}

/*
 * Validate ExclusiveStartKey and encode it as a full key tuple
 * ([ipk, isk,] pk, sk).  Returns the number of columns.
 */
static int
encode_start_key(ReadSpec *rs, JsonbValue *eskjv, bytea **tuple)
{
	DynValue   *esk = parse_start_key(eskjv);
	DynValue   *hv[DYN_MAX_KEY_ATTRS];
	DynValue   *rv[DYN_MAX_KEY_ATTRS];
	DynValue   *th,
			   *tr = NULL;
	int			i,
				n = 0;

	if (esk->n != rs->nlek)
	{
		if (!rs->is_query && rs->idx == NULL)
			DynValidationError("The provided starting key is invalid: The provided key element does not match the schema");
		DynValidationError("The provided starting key is invalid");
	}
	if (rs->is_query || rs->idx)
	{
		/* the queried schema's attributes first: missing is "invalid", then key pieces */
		for (i = 0; i < rs->ks.nhash + rs->ks.nrange; i++)
		{
			bool		is_hash = i < rs->ks.nhash;
			const DynKeyAttr *ka = is_hash ? &rs->ks.hash[i] : &rs->ks.range[i - rs->ks.nhash];

			if (DynMapGetStr(esk, ka->name) == NULL)
				DynValidationError("The provided starting key is invalid");
			if (is_hash)
				hv[i] = start_key_piece(esk, ka, true, "");
			else
				rv[i - rs->ks.nhash] = start_key_piece(esk, ka, false, "");
		}
	}
	th = start_key_piece(esk, &rs->t->hash, true, "The provided starting key is invalid: ");
	if (rs->t->has_range)
		tr = start_key_piece(esk, &rs->t->range, false, "The provided starting key is invalid: ");
	if (rs->idx)
	{
		tuple[n++] = DynKeyEncodeAttrs(hv, rs->ks.nhash);
		tuple[n++] = DynKeyEncodeAttrs(rv, rs->ks.nrange);
	}
	tuple[n++] = DynEncodeKeyBytes(th, false);
	tuple[n++] = DynEncodeKeyBytes(tr, false);
	return n;
}

/* Start after the key tuple (forward) or before it (backward). */
static void
resume_from(ReadSpec *rs, bytea **tuple)
{
	int			ntuple = rs->ncols - rs->nfixed;
	bytea	  **t = tuple + rs->nfixed;
	int			i;

	if (rs->forward)
	{
		bytea	   *succ[MAX_KEY_COLS];

		for (i = 0; i < ntuple; i++)
			succ[i] = t[i];
		succ[ntuple - 1] = DynBytesSuccessor(t[ntuple - 1]);
		if (tuple_compare(succ, rs->lo, ntuple) > 0)
			for (i = 0; i < ntuple; i++)
				rs->lo[i] = succ[i];
	}
	else if (rs->hi[0] == NULL || tuple_compare(t, rs->hi, ntuple) < 0)
	{
		for (i = 0; i < ntuple; i++)
			rs->hi[i] = t[i];
	}
}

/* ---------------------------------------------------------------- expressions */

/* Collect the top-level attribute names of an expression's paths. */
static void
collect_names(DynExpr *e, List **names)
{
	int			i;

	if (e == NULL)
		return;
	check_stack_depth();
	if (e->kind == DYN_EXPR_PATH && e->npath > 0 && !e->path[0].is_index)
		*names = lappend(*names, pnstrdup(e->path[0].name, e->path[0].namelen));
	for (i = 0; i < e->nargs; i++)
		collect_names(e->args[i], names);
}

/* Is name among the collected names? */
static bool
names_contain(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp((char *) lfirst(lc), name) == 0)
		return true;
	return false;
}

/* Query filters may not name key attributes of the queried schema. */
static void
check_filter_keys(ReadSpec *rs, const char *what)
{
	List	   *names = NIL;
	int			i;

	collect_names(rs->filter, &names);
	for (i = 0; i < rs->ks.nhash; i++)
		if (names_contain(names, rs->ks.hash[i].name))
			DynValidationError("%s can only contain non-primary key attributes: Primary key attribute: %s",
							   what, rs->ks.hash[i].name);
	for (i = 0; i < rs->ks.nrange; i++)
		if (names_contain(names, rs->ks.range[i].name))
			DynValidationError("%s can only contain non-primary key attributes: Primary key attribute: %s",
							   what, rs->ks.range[i].name);
}

/* Is a top-level attribute stored in the index entry? */
static bool
index_projects(ReadSpec *rs, const char *name)
{
	DynIndex   *idx = rs->idx;
	int			i;

	if (idx->projection == DYN_PROJ_ALL)
		return true;
	for (i = 0; i < rs->nlek; i++)
		if (strcmp(rs->lek[i], name) == 0)
			return true;
	if (idx->projection == DYN_PROJ_INCLUDE)
		for (i = 0; i < idx->nnonkey; i++)
			if (strcmp(idx->nonkey[i], name) == 0)
				return true;
	return false;
}

/* Does an LSI read need the base items (non-projected attributes asked for)? */
static bool
needs_base_items(ReadSpec *rs)
{
	List	   *names = NIL;
	ListCell   *lc;

	if (rs->idx == NULL || rs->idx->is_global || rs->idx->projection == DYN_PROJ_ALL)
		return false;
	if (rs->select == SEL_ALL_ATTRIBUTES)
		return true;
	if (rs->select == SEL_SPECIFIC)
		collect_names(rs->proj, &names);
	collect_names(rs->filter, &names);
	foreach(lc, names)
		if (!index_projects(rs, (char *) lfirst(lc)))
		return true;
	return false;
}

/* Select with DynamoDB's checks (Query messages carry the constraint prefix). */
static SelectKind
parse_select(JsonbContainer *r, bool is_query, bool has_pe, bool has_atg)
{
	const char *sel = RqGetString(r, "Select");
	const char *pre = is_query ? "1 validation error detected: " : "";
	const char *given = has_atg ? "AttributesToGet" : "ProjectionExpression";
	bool		has_index = RqGet(r, "IndexName") != NULL;

	if (sel == NULL)
		return (has_pe || has_atg) ? SEL_SPECIFIC : (has_index ? SEL_ALL_PROJECTED : SEL_ALL_ATTRIBUTES);
	if (strcmp(sel, "ALL_ATTRIBUTES") == 0)
	{
		if (has_pe || has_atg)
			DynValidationError("%sCannot specify the %s when choosing to get ALL_ATTRIBUTES", pre, given);
		return SEL_ALL_ATTRIBUTES;
	}
	if (strcmp(sel, "ALL_PROJECTED_ATTRIBUTES") == 0)
	{
		if (has_pe || has_atg)
			DynValidationError("%sCannot specify the %s when choosing to get ALL_PROJECTED_ATTRIBUTES", pre, given);
		if (!has_index)
			DynValidationError("%sALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName", pre);
		return SEL_ALL_PROJECTED;
	}
	if (strcmp(sel, "COUNT") == 0)
	{
		if (has_pe || has_atg)
			DynValidationError("%sCannot specify the %s when choosing to get only the Count", pre, given);
		return SEL_COUNT;
	}
	if (!has_pe && !has_atg)
		DynValidationError("%sMust specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES", pre);
	return SEL_SPECIFIC;
}

/* Find IndexName in the table, with DynamoDB's checks. */
static void
resolve_index(ReadSpec *rs, JsonbContainer *r)
{
	const char *name = RqGetString(r, "IndexName");
	int			i;

	rs->idx = NULL;
	if (name == NULL)
		return;
	for (i = 0; i < rs->t->nindexes; i++)
		if (strcmp(rs->t->indexes[i].name, name) == 0)
			rs->idx = &rs->t->indexes[i];
	/* a concurrent UpdateTable may have just deleted it: then it is not there */
	if (rs->idx == NULL || !DynCatalogLockIndex(rs->idx))
	{
		/* PartiQL's SELECT names no index in it (docs/errors.md) */
		if (partiql_read)
			DynValidationError("The table does not have the specified index");
		DynValidationError("The table does not have the specified index: %s", name);
	}
	if (rs->idx->is_global)
	{
		if (rs->consistent)
			DynValidationError("Consistent reads are not supported on global secondary indexes");
		if (rs->idx->status && strcmp(rs->idx->status, "CREATING") == 0)
			DynValidationError("Cannot read from backfilling global secondary index: %s", name);
	}
}

/*
 * Reject Select=ALL_ATTRIBUTES on a GSI that does not project everything, and
 * a projection naming attributes the GSI does not project (a GSI never reads
 * the base table; DynamoDB: "Global secondary index X does not project [a, b]").
 */
static void
check_gsi_select(ReadSpec *rs, JsonbContainer *r)
{
	List	   *names = NIL;
	ListCell   *lc;
	StringInfoData missing;

	if (rs->idx == NULL || !rs->idx->is_global || rs->idx->projection == DYN_PROJ_ALL)
		return;
	if (rs->select == SEL_ALL_ATTRIBUTES)
		DynValidationError("%sOne or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL",
						   rs->is_query ? "1 validation error detected: " : "", rs->idx->name);
	if (rs->select != SEL_SPECIFIC)
		return;
	collect_names(rs->proj, &names);
	initStringInfo(&missing);
	foreach(lc, names)
		if (!index_projects(rs, (char *) lfirst(lc)))
			appendStringInfo(&missing, "%s%s", missing.len ? ", " : "", (char *) lfirst(lc));
	if (missing.len)
		DynValidationError("One or more parameter values were invalid: Global secondary index %s does not project [%s]",
						   rs->idx->name, missing.data);
}

/* ---------------------------------------------------------------- reading a page */

/* Push an object of the key attributes of an item; returns what the last push returned. */
static JsonbValue *
push_key_object(JsonbParseState **st, ReadSpec *rs, Jsonb *item)
{
	int			i;

	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < rs->nlek; i++)
	{
		JsonbValue *v = getKeyJsonValueFromContainer(&item->root, rs->lek[i],
													 strlen(rs->lek[i]), NULL);

		if (v == NULL)
			continue;
		RqPushKey(st, rs->lek[i]);
		pushJsonbValue(st, WJB_VALUE, v);
	}
	return pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* "LastEvaluatedKey": the key attributes of the last item read. */
static void
push_last_key(JsonbParseState **st, ReadSpec *rs, Jsonb *item)
{
	RqPushKey(st, "LastEvaluatedKey");
	(void) push_key_object(st, rs, item);
}

/*
 * Push ConsumedCapacity (capacity.c): a table read charges the table; an
 * index read charges the index (entry sizes) and, for LSI fetches, the table
 * (whole base items, each rounded).  On an index read INDEXES always shows
 * the table's share, "Table": {"CapacityUnits": 0.0} when nothing was
 * fetched from it, as DynamoDB does.
 */
static void
push_capacity(JsonbParseState **st, ReadSpec *rs, double table_units, double index_units)
{
	DynCapacity c;

	/* built even when not asked for: DynCapacityPush counts the metrics */
	DynCapacityInit(&c, rs->t, rs->cap, true);
	if (rs->idx == NULL)
		DynCapacityAddTable(&c, table_units + index_units);
	else
	{
		DynCapacityAddTable(&c, table_units);
		DynCapacityAddIndex(&c, (int) (rs->idx - rs->t->indexes), index_units);
	}
	DynCapacityPush(st, &c);
}

/* A key column of a result row, detoasted. */
static bytea *
row_bytes(HeapTuple tup, TupleDesc desc, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);

	return (bytea *) PG_DETOAST_DATUM_PACKED(d);
}

/*
 * Read one page and build the response.  Rows stay in their SPI tuple tables
 * until the response is built (pushed items point into them); a page holds
 * at most Limit rows or a little over 1 MB.
 */
static Jsonb *
read_page(ReadSpec *rs)
{
	JsonbParseState *st = NULL;
	int64		scanned = 0,
				count = 0,
				bytes = 0,
				index_bytes = 0;
	double		table_units = 0;
	Jsonb	   *last_item = NULL;
	bool		stopped = false;
	bool		exhausted = false;
	int64		batch = FIRST_BATCH;
	int			ntuple = rs->ncols - rs->nfixed;
	bool		plain = rs->filter == NULL && rs->proj == NULL && !rs->fetch_base;
	int64		max_items = partiql_read ? partiql_read->max_items : 0;
	int64		page_bytes = partiql_read && partiql_read->max_bytes > 0 ? partiql_read->max_bytes : PAGE_BYTES;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (rs->select != SEL_COUNT)
	{
		RqPushKey(&st, "Items");
		pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	}
	while (!stopped && !exhausted)
	{
		int64		want = batch;
		SPITupleTable *tt;
		uint64		nrows,
					i;

		CHECK_FOR_INTERRUPTS();
		if (rs->limit > 0)
			want = Min(want, rs->limit - scanned);
		run_batch(rs, rs->hi[0] != NULL, want);
		tt = SPI_tuptable;
		nrows = SPI_processed;
		if ((int64) nrows < want)
			exhausted = true;
		for (i = 0; i < nrows && !stopped; i++)
		{
			HeapTuple	tup = tt->vals[i];
			TupleDesc	desc = tt->tupdesc;
			bool		isnull;
			int32		size = DatumGetInt32(SPI_getbinval(tup, desc, rs->ncols + 1, &isnull));
			Jsonb	   *item = DatumGetJsonbP(SPI_getbinval(tup, desc, rs->ncols + 2, &isnull));
			Jsonb	   *out = item;

			scanned++;
			bytes += size;
			index_bytes += size;
			last_item = item;
			if (rs->fetch_base)
			{
				DynKey		key;
				DynStoredItem base;

				memset(&key, 0, sizeof(key));
				key.pk = row_bytes(tup, desc, rs->ncols - 1);
				key.sk = row_bytes(tup, desc, rs->ncols);
				if (DynStorageGet(rs->t, &key, false, &base))
				{
					out = base.item;
					table_units += DynReadUnits(base.size, rs->consistent);
				}
			}
			if (plain)
			{
				count++;
				if (rs->select != SEL_COUNT)
					RqPushJsonb(&st, WJB_ELEM, out);
			}
			else
			{
				DynValue   *v = DynItemFromStored(out);

				if (rs->filter == NULL || DynEvalCondition(rs->filter, v))
				{
					count++;
					if (rs->select != SEL_COUNT)
					{
						if (rs->proj)
							v = DynApplyProjection(rs->proj, v);
						RqPushJsonb(&st, WJB_ELEM, DynItemToJsonb(v));
					}
				}
			}
			if ((rs->limit > 0 && scanned >= rs->limit) || bytes >= page_bytes ||
				(max_items > 0 && count >= max_items))
				stopped = true;
		}
		if (!stopped && !exhausted && nrows > 0)
		{
			/* continue just after (before) the last row */
			HeapTuple	tup = tt->vals[nrows - 1];
			bytea	   *t[MAX_KEY_COLS];
			int			k;

			/* copies: with Select=COUNT the tuple table is freed below */
			for (k = 0; k < ntuple; k++)
				t[k] = DatumGetByteaPCopy(PointerGetDatum(row_bytes(tup, tt->tupdesc, rs->nfixed + k + 1)));
			if (rs->forward)
			{
				for (k = 0; k < ntuple; k++)
					rs->lo[k] = t[k];
				rs->lo[ntuple - 1] = DynBytesSuccessor(t[ntuple - 1]);
			}
			else
				for (k = 0; k < ntuple; k++)
					rs->hi[k] = t[k];
			batch = Min(batch * 4, MAX_BATCH);
		}
		if (rs->select == SEL_COUNT)
		{
			/* nothing points into the rows but last_item: keep a copy of it */
			if (last_item)
			{
				Jsonb	   *copy = palloc(VARSIZE(last_item));

				memcpy(copy, last_item, VARSIZE(last_item));
				last_item = copy;
			}
			SPI_freetuptable(tt);
		}
	}
	if (rs->select != SEL_COUNT)
		pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (partiql_read)
	{
		partiql_read->scanned = scanned;
		partiql_read->returned = count;
		partiql_read->bytes = bytes;
	}
	else
	{
		RqPushKey(&st, "Count");
		RqPushInt(&st, WJB_VALUE, count);
		RqPushKey(&st, "ScannedCount");
		RqPushInt(&st, WJB_VALUE, scanned);
	}
	if (stopped && last_item)
	{
		push_last_key(&st, rs, last_item);
		if (partiql_read && partiql_read->push_token)
		{
			JsonbParseState *kst = NULL;

			partiql_read->push_token(&st, partiql_read->arg,
									 JsonbValueToJsonb(push_key_object(&kst, rs, last_item)));
		}
	}
	push_capacity(&st, rs, table_units, DynReadUnits(index_bytes, rs->consistent));
	if (rs->select != SEL_COUNT)
		DynMetricsAdd(rs->t->name, NULL, DYN_M_RETURNED_ITEMS, count);	/* ReturnedItemCount */
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- requests */

/* Parse the expressions of a Query or Scan. */
static DynExpr *
parse_expressions(ReadSpec *rs, JsonbContainer *r, bool *has_pe, bool *has_atg)
{
	JsonbValue *names = RqGet(r, "ExpressionAttributeNames");
	JsonbValue *values = RqGet(r, "ExpressionAttributeValues");
	JsonbValue *kce = rs->is_query ? RqGet(r, "KeyConditionExpression") : NULL;
	JsonbValue *fe = RqGet(r, "FilterExpression");
	JsonbValue *pe = RqGet(r, "ProjectionExpression");
	JsonbValue *atg = RqGet(r, "AttributesToGet");
	const char *legacy_filter = rs->is_query ? "QueryFilter" : "ScanFilter";
	JsonbValue *lf = RqGet(r, legacy_filter);
	JsonbValue *kc = rs->is_query ? RqGet(r, "KeyConditions") : NULL;
	JsonbValue *co = RqGet(r, "ConditionalOperator");
	DynParamPresence exprs[3] = {
		{"ProjectionExpression", pe != NULL}, {"FilterExpression", fe != NULL},
		{"KeyConditionExpression", kce != NULL}
	};
	DynParamPresence legacy[4] = {
		{"AttributesToGet", atg != NULL}, {legacy_filter, lf != NULL},
		{"ConditionalOperator", co != NULL}, {"KeyConditions", kc != NULL}
	};
	DynExprContext *ctx;
	DynExpr    *keycond = NULL;

	DynExprCheckParamMix(exprs, rs->is_query ? 3 : 2, legacy, rs->is_query ? 4 : 3,
						 names != NULL, values != NULL);
	/* before the missing-KeyConditions error, as DynamoDB orders them */
	DynLegacyCheckConditionalOperator(co, lf);
	if (lf)
		rs->filter = DynLegacyFilter(legacy_filter, lf, RqGetString(r, "ConditionalOperator"));
	if (atg)
		rs->proj = DynLegacyAttributesToGet(atg);
	if (rs->is_query && kce == NULL && kc == NULL)
		DynValidationError("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.");
	ctx = DynExprContextCreate(names, values);
	if (kce)
		keycond = DynParseCondition(ctx, "KeyConditionExpression", kce->val.string.val, kce->val.string.len);
	if (fe)
		rs->filter = DynParseCondition(ctx, "FilterExpression", fe->val.string.val, fe->val.string.len);
	if (pe)
		rs->proj = DynParseProjection(ctx, pe->val.string.val, pe->val.string.len);
	DynExprCheckUnused(ctx);
	if (kc)
	{
		char	  **kckeys;
		int		   *kclens;
		JsonbValue *kcvals;

		/* DynamoDB: KeyConditions: {} is "Conditions can be of length 1 or 2 only" */
		rs->legacy_key_conditions = DynJsonObjectMembers(kc, &kckeys, &kclens, &kcvals);
		if (rs->legacy_key_conditions == 0)
			DynValidationError("Conditions can be of length 1 or 2 only");

		/*
		 * A missing ComparisonOperator is a member constraint, reported now;
		 * the operators themselves are judged after the table and the index
		 * are looked up (begin_read), as DynamoDB orders them.
		 */
		for (int i = 0; i < rs->legacy_key_conditions; i++)
			if (kcvals[i].type == jbvBinary && RqGetJv(&kcvals[i], "ComparisonOperator") == NULL)
				(void) DynLegacyKeyConditions(kc);
		rs->legacy_kc = kc;
	}
	*has_pe = pe != NULL;
	*has_atg = atg != NULL;
	return keycond;
}

/* Scan's Segment and TotalSegments: each requires the other, Segment < TotalSegments. */
static void
scan_segments(ReadSpec *rs, JsonbContainer *r)
{
	bool		has_seg = RqGet(r, "Segment") != NULL;
	bool		has_total = RqGet(r, "TotalSegments") != NULL;

	if (has_seg && !has_total)
		DynValidationError("The TotalSegments parameter is required but was not present in the request when Segment parameter is present");
	if (!has_total)
		return;
	rs->total_segments = (int) RqGetInt(r, "TotalSegments", 1);
	if (!has_seg)
		DynValidationError("The Segment parameter is required but was not present in the request when parameter TotalSegments is present");
	rs->segment = (int) RqGetInt(r, "Segment", 0);
	if (rs->segment >= rs->total_segments)
		DynValidationError("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d",
						   rs->segment, rs->total_segments);
	if (rs->total_segments == 1)
		rs->total_segments = 0;
	rs->seg_index = rs->total_segments > 0 && DynStorageHasSegmentIndexes();
}

/* Common start of Query and Scan: validation, table, index, select. */
static DynExpr *
begin_read(ReadSpec *rs, Jsonb *req, bool is_query)
{
	JsonbContainer *r = &req->root;
	bool		has_pe,
				has_atg;
	DynExpr    *keycond;

	memset(rs, 0, sizeof(*rs));
	rs->is_query = is_query;

	/*
	 * Query reports a ConditionalOperator outside its enum on its own, before
	 * the other member constraints, bare and with this odd set (us-east-1 and
	 * eu-west-2, 2026-10-09: the DynamoDB conformance suite's
	 * validation-ordering/query.test.ts).
	 */
	if (is_query && JB_ROOT_IS_OBJECT(req) && !JB_ROOT_IS_SCALAR(req))
	{
		JsonbValue *op = RqGet(r, "ConditionalOperator");

		if (op && op->type == jbvString &&
			!(op->val.string.len == 3 && memcmp(op->val.string.val, "AND", 3) == 0) &&
			!(op->val.string.len == 2 && memcmp(op->val.string.val, "OR", 2) == 0))
			DynValidationError("Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]");
	}
	RqValidate(req, is_query ? query_fields : scan_fields);

	/*
	 * Scan judges Segment/TotalSegments and the values of ExclusiveStartKey
	 * before the expressions and their attribute maps (docs/errors.md,
	 * "Validation order").
	 */
	if (!is_query)
	{
		JsonbValue *esk = RqGet(r, "ExclusiveStartKey");

		scan_segments(rs, r);
		if (esk)
			(void) parse_start_key(esk);
	}
	keycond = parse_expressions(rs, r, &has_pe, &has_atg);
	rs->select = parse_select(r, is_query, has_pe, has_atg);
	rs->forward = RqGetBool(r, "ScanIndexForward", true);
	rs->consistent = RqGetBool(r, "ConsistentRead", false);
	rs->limit = RqGetInt(r, "Limit", 0);
	rs->cap = DynCapacityModeOf(r);
	rs->t = DynItemsGetTable(RqGetString(r, "TableName"));
	resolve_index(rs, r);
	/* legacy KeyConditions: their operators after the table and index */
	if (rs->legacy_kc)
		keycond = DynLegacyKeyConditions(rs->legacy_kc);
	DynKeySchemaOf(rs->t, rs->idx, &rs->ks);
	setup_relation(rs);
	if (rs->select == SEL_ALL_PROJECTED && rs->idx == NULL)
		rs->select = SEL_ALL_ATTRIBUTES;
	return keycond;
}

/*
 * Read the page.  Under dynindex.gsi_read_your_writes a read of a GSI first
 * waits until the changes committed so far are applied to it
 * (src/indexes/gsi_wait.c), then reads with a snapshot taken after the wait.
 */
static Jsonb *
read_page_after_writes(ReadSpec *rs)
{
	Jsonb	   *res;

	if (!DynGsiReadYourWrites(rs->t, rs->idx))
		return read_page(rs);
	PushActiveSnapshot(GetTransactionSnapshot());
	res = read_page(rs);
	PopActiveSnapshot();
	return res;
}

/*
 * Throughput (api/throughput.c): a Query or Scan is admitted while the read
 * bucket of what it reads (the table, or its GSI) is not empty, and charged
 * when done (push_capacity).  Contributor Insights counts a Query's
 * partition key on the table, or on the GSI it reads.
 */
static void
admit_read(ReadSpec *rs, const DynValue *pk)
{
	int			index = rs->idx ? (int) (rs->idx - rs->t->indexes) : -1;
	DynThrottleReason why = DynThroughputCheck(rs->t, true, index, NULL);

	if (pk)
		DynThroughputCountQueryKey(rs->t, rs->idx && rs->idx->is_global ? index : -1, pk, why.throttled);
	if (why.throttled)
		DynThroughputRaise(rs->t, &why);
}

/* Query */
Jsonb *
DynQuery(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	ReadSpec	rs;
	DynExpr    *keycond = begin_read(&rs, req, true);
	DynKeyCond	kc;
	DynKeyRange range;
	JsonbValue *esk = RqGet(r, "ExclusiveStartKey");

	/*
	 * Legacy KeyConditions name at most two attributes on a key of one or two
	 * attributes (DynamoDB's message); a multi-attribute GSI key takes one
	 * condition per key attribute, as KeyConditionExpression does.
	 */
	if (rs.legacy_key_conditions > 2 && rs.ks.nhash + rs.ks.nrange <= 2)
		DynValidationError("Conditions can be of length 1 or 2 only");
	DynKeyCondAnalyse(keycond, &rs.ks, &kc);
	DynKeyCondRange(&rs.ks, &kc, &range);
	rs.nfixed = 1;
	rs.fixed = range.hash;
	rs.lo[0] = range.lo;
	rs.hi[0] = range.hi;
	if (range.hi)
	{
		int			i;

		for (i = 1; i < MAX_KEY_COLS; i++)
			rs.hi[i] = empty_bytea();
	}
	if (esk)
	{
		bytea	   *tuple[MAX_KEY_COLS];

		encode_start_key(&rs, esk, tuple);
		if (kc.nrange > 0 &&
			(DynBytesCompare(tuple[1], range.lo) < 0 ||
			 (range.hi && DynBytesCompare(tuple[1], range.hi) >= 0)))
			DynValidationError("The provided starting key does not match the range key predicate");
		if (DynBytesCompare(tuple[0], range.hash) != 0)
			DynValidationError("The provided starting key is outside query boundaries based on provided conditions");
		resume_from(&rs, tuple);
	}
	if (RqGet(r, "QueryFilter"))
		check_filter_keys(&rs, "QueryFilter");
	else if (rs.filter && partiql_read == NULL)
		check_filter_keys(&rs, "Filter Expression");
	DynItemsCheckKeyPaths(rs.t, rs.proj);
	DynItemsCheckKeyPaths(rs.t, rs.filter);
	check_gsi_select(&rs, r);
	rs.fetch_base = needs_base_items(&rs);
	admit_read(&rs, kc.hash[0]);
	return read_page_after_writes(&rs);
}

/*
 * A Query or Scan for ExecuteStatement (src/api/partiql.c): a SELECT's WHERE
 * may hold conditions on key attributes beyond the key condition, which
 * DynamoDB's PartiQL evaluates as a filter (the JSON API refuses them in a
 * FilterExpression); the page has no Count/ScannedCount (pr->scanned,
 * returned and bytes get what was read), it also stops at pr->max_items
 * matching items or pr->max_bytes read (an IN's page), and when it stops
 * early pr->push_token adds NextToken.
 */
Jsonb *
DynReadForPartiQL(Jsonb *req, bool is_query, DynPartiQLRead *pr)
{
	Jsonb	   *volatile res = NULL;

	partiql_read = pr;
	PG_TRY();
	{
		res = is_query ? DynQuery(req) : DynScan(req);
	}
	PG_FINALLY();
	{
		partiql_read = NULL;
	}
	PG_END_TRY();
	return res;
}

/* Scan */
Jsonb *
DynScan(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	ReadSpec	rs;
	JsonbValue *esk = RqGet(r, "ExclusiveStartKey");

	(void) begin_read(&rs, req, false);
	rs.forward = true;
	DynItemsCheckKeyPaths(rs.t, rs.proj);
	DynItemsCheckKeyPaths(rs.t, rs.filter);
	check_gsi_select(&rs, r);
	if (esk)
	{
		bytea	   *tuple[MAX_KEY_COLS];

		encode_start_key(&rs, esk, tuple);
		if (rs.total_segments > 0 && DynKeySegment(tuple[0], rs.total_segments) != rs.segment)
			DynValidationError("The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: %d Segment: %d",
							   rs.total_segments, rs.segment);
		resume_from(&rs, tuple);
	}
	rs.fetch_base = needs_base_items(&rs);
	admit_read(&rs, NULL);
	return read_page_after_writes(&rs);
}

/* ---------------------------------------------------------------- SQL functions */

PG_FUNCTION_INFO_V1(dynindex_key_segment);

/*
 * dynindex.key_segment(key bytea, total int4): the parallel-scan segment of a
 * partition key: segment s of n holds the keys whose hash is in the s-th of n
 * equal ranges of the hash space (DynKeySegment).
 */
Datum
dynindex_key_segment(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(DynKeySegment(PG_GETARG_BYTEA_PP(0), PG_GETARG_INT32(1)));
}

PG_FUNCTION_INFO_V1(dynindex_key_hash);

/* dynindex.key_hash(key bytea): the hash of an encoded partition key (signed int4). */
Datum
dynindex_key_hash(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(DynKeyHash(PG_GETARG_BYTEA_PP(0)));
}

PG_FUNCTION_INFO_V1(dynindex_read_all);

/*
 * dynindex.read_all(operation text, request jsonb) RETURNS SETOF jsonb: run
 * a Query or Scan page after page (ExclusiveStartKey = the previous page's
 * LastEvaluatedKey) and return every item.  Each page runs in its own SPI
 * connection, so memory stays bounded by one page.
 */
Datum
dynindex_read_all(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *opname;
	DynOperation fn;
	Jsonb	   *volatile req;
	MemoryContext pagecxt;
	DynSecurityOp sec_op;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	opname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strcmp(opname, "Query") == 0)
		fn = DynQuery;
	else if (strcmp(opname, "Scan") == 0)
		fn = DynScan;
	else
		DynError(DYN_ERR_UNKNOWN_OPERATION, "An unknown operation was requested.");
	req = PG_GETARG_JSONB_P(1);

	/* materialize: a one-column (jsonb) tuplestore in the per-query context */
	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("set-valued function called in context that cannot accept a set")));
	{
		MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
		TupleDesc	desc = CreateTemplateTupleDesc(1);

		TupleDescInitEntry(desc, (AttrNumber) 1, "item", JSONBOID, -1, 0);
		rsinfo->returnMode = SFRM_Materialize;
		rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
		rsinfo->setDesc = BlessTupleDesc(desc);
		MemoryContextSwitchTo(old);
	}
	DynCatalogRevalidate();
	pagecxt = AllocSetContextCreate(CurrentMemoryContext, "dynindex read_all page",
									ALLOCSET_DEFAULT_SIZES);
	DynSecurityEnter(opname, &sec_op);
	PG_TRY();
	{
	for (;;)
	{
		MemoryContext old = MemoryContextSwitchTo(pagecxt);
		Jsonb	   *res;
		JsonbValue *items;
		JsonbValue *lek;
		Jsonb	   *next = NULL;

		CHECK_FOR_INTERRUPTS();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (DynSecurityRunsInternal(opname))
		{
			DynSecurityState sec;

			DynSecurityBeginInternal(&sec);
			res = fn(req);
			DynSecurityEndInternal(&sec);
		}
		else
			res = fn(req);
		items = getKeyJsonValueFromContainer(&res->root, "Items", 5, NULL);
		if (items && items->type == jbvBinary)
		{
			JsonbIterator *it = JsonbIteratorInit(items->val.binary.data);
			JsonbValue	v;
			JsonbIteratorToken tok;

			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				Datum		d;
				bool		isnull = false;

				if (tok != WJB_ELEM)
					continue;
				d = JsonbPGetDatum(JsonbValueToJsonb(&v));
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &d, &isnull);
			}
		}
		lek = getKeyJsonValueFromContainer(&res->root, "LastEvaluatedKey", 16, NULL);
		if (lek)
		{
			JsonbParseState *st = NULL;
			JsonbIterator *it = JsonbIteratorInit(&req->root);
			JsonbValue	v;
			JsonbIteratorToken tok;
			int			depth = 0;
			bool		skip = false;

			/* the request with ExclusiveStartKey replaced */
			MemoryContextSwitchTo(old);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				if (tok == WJB_BEGIN_OBJECT)
				{
					depth++;
					pushJsonbValue(&st, tok, NULL);
					continue;
				}
				if (tok == WJB_END_OBJECT && depth == 1)
					break;
				if (tok == WJB_KEY && depth == 1)
				{
					skip = v.val.string.len == 17 &&
						memcmp(v.val.string.val, "ExclusiveStartKey", 17) == 0;
					if (!skip)
						pushJsonbValue(&st, tok, &v);
					continue;
				}
				if (!skip)
					pushJsonbValue(&st, tok, &v);
			}
			RqPushKey(&st, "ExclusiveStartKey");
			pushJsonbValue(&st, WJB_VALUE, lek);
			next = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
		}
		SPI_finish();
		MemoryContextSwitchTo(old);
		if (next == NULL)
			break;
		req = next;
		MemoryContextReset(pagecxt);
	}
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&sec_op);
	}
	PG_END_TRY();
	MemoryContextDelete(pagecxt);
	return (Datum) 0;
}
