/*
 * query.h — Query and Scan: key-condition analysis against a key schema
 * (keycond.c) and the paged range reader (query_scan.c).
 *
 * A key schema is the table's (1 HASH, 0–1 RANGE), an LSI's, or a GSI's
 * (1–4 HASH, 0–4 RANGE).  Its encoded key columns are (pk, sk) for a table
 * and (ipk, isk) for an index: one attribute is encoded raw, several are the
 * concatenation of their terminated encodings (types/keyenc.c).
 */
#ifndef DYNINDEX_QUERY_H
#define DYNINDEX_QUERY_H

#include "catalog/dyn_catalog.h"
#include "expr/expr.h"

typedef struct DynKeySchema
{
	int			nhash;
	DynKeyAttr	hash[DYN_MAX_KEY_ATTRS];
	int			nrange;
	DynKeyAttr	range[DYN_MAX_KEY_ATTRS];
} DynKeySchema;

typedef enum DynKeyOp
{
	DYN_KEY_EQ,
	DYN_KEY_LT,
	DYN_KEY_LE,
	DYN_KEY_GT,
	DYN_KEY_GE,
	DYN_KEY_BETWEEN,
	DYN_KEY_BEGINS_WITH
} DynKeyOp;

/* An analysed key condition: values in key-schema order. */
typedef struct DynKeyCond
{
	DynValue   *hash[DYN_MAX_KEY_ATTRS];	/* = value of each HASH attribute */
	int			nrange;			/* RANGE attributes constrained (a prefix) */
	DynKeyOp	op[DYN_MAX_KEY_ATTRS];	/* all EQ but the last */
	DynValue   *v1[DYN_MAX_KEY_ATTRS];
	DynValue   *v2[DYN_MAX_KEY_ATTRS];	/* BETWEEN upper bound */
} DynKeyCond;

/* An encoded key range: pk = hash and lo <= sk < hi (hi NULL: unbounded). */
typedef struct DynKeyRange
{
	bytea	   *hash;
	bytea	   *lo;
	bytea	   *hi;
} DynKeyRange;

/* ---- keycond.c ---- */

/* The key schema of the table (idx NULL) or of one of its indexes. */
extern void DynKeySchemaOf(DynTable *t, DynIndex *idx, DynKeySchema *ks);

/*
 * Check a parsed KeyConditionExpression (or translated KeyConditions)
 * against a key schema with DynamoDB's rules and messages; fill kc.
 */
extern void DynKeyCondAnalyse(DynExpr *cond, const DynKeySchema *ks, DynKeyCond *kc);

/* The encoded byte range a key condition selects. */
extern void DynKeyCondRange(const DynKeySchema *ks, const DynKeyCond *kc, DynKeyRange *r);

/* Encode values (one per attribute) as a hash or range key column. */
extern bytea *DynKeyEncodeAttrs(DynValue **vals, int n);

/* The smallest byte string greater than every string starting with b; NULL if none. */
extern bytea *DynBytesPrefixSuccessor(const bytea *b);

/* b followed by one 0x00 byte: the smallest string greater than b. */
extern bytea *DynBytesSuccessor(const bytea *b);

/* Compare two byte strings as PostgreSQL's bytea does. */
extern int	DynBytesCompare(const bytea *a, const bytea *b);

/* ---- query_scan.c ---- */
extern Jsonb *DynQuery(Jsonb *req);
extern Jsonb *DynScan(Jsonb *req);
/* ExecuteStatement's reading of a Query or Scan page (src/api/partiql.c). */
typedef struct DynPartiQLRead
{
	/* pushes "NextToken" for a page that stopped after last_key (or NULL) */
	void		(*push_token) (JsonbParseState **st, void *arg, Jsonb *last_key);
	void	   *arg;
	int64		max_items;		/* stop once this many items matched (0: no such stop) */
	int64		max_bytes;		/* stop once this many bytes were read (0: 1 MB) */
	int64		scanned;		/* set by the read: items read */
	int64		returned;		/* set by the read: items in the page */
	int64		bytes;			/* set by the read: bytes read */
} DynPartiQLRead;

/* Query or Scan in ExecuteStatement's shape; its filter may name key attributes. */
extern Jsonb *DynReadForPartiQL(Jsonb *req, bool is_query, DynPartiQLRead *pr);

#endif
