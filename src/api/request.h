/*
 * request.h — request schemas and DynamoDB's two-stage request validation,
 * plus helpers to read request members.
 *
 * DynamoDB (its "coral" framework) first deserializes the whole request
 * (a member of the wrong JSON kind is a SerializationException), then checks
 * member constraints, reporting up to ten as
 * "N validation error(s) detected: Value '...' at 'path' failed to satisfy
 * constraint: ...", and only then runs the operation's own checks.  Each
 * operation declares its members once as an RqField array; RqValidate does
 * both stages.
 */
#ifndef DYNINDEX_REQUEST_H
#define DYNINDEX_REQUEST_H

#include "utils/jsonb.h"

#include "common/json.h"
#include "types/types.h"

typedef enum RqType
{
	RQ_END = 0,					/* ends a field list */
	RQ_STRING,
	RQ_BOOLEAN,
	RQ_INTEGER,
	RQ_LONG,
	RQ_LIST,
	RQ_MAP,
	RQ_STRUCT,
	RQ_ATTRVALUE,				/* an AttributeValue (checked by types/attrval.c) */
	RQ_ANY						/* accepted unchecked (documents we take as they are) */
} RqType;

typedef struct RqField RqField;

struct RqField
{
	const char *name;			/* member name as in the API, e.g. "TableName" */
	RqType		type;
	const char *structname;		/* RQ_STRUCT: class name used in messages */
	const RqField *fields;		/* RQ_STRUCT: members, ended by RQ_END */
	const RqField *elem;		/* RQ_LIST / RQ_MAP: the element */
	bool		notnull;		/* "Member must not be null" */
	bool		required;		/* "The parameter 'X' is required but was not present in the request" */
	bool		tablename;		/* the same as tablearn (older name) */
	int			minlen;			/* 0: none */
	int			maxlen;			/* 0: none */
	bool		hasmin;
	int64		minval;
	bool		hasmax;
	int64		maxval;
	bool		namepattern;	/* must match [a-zA-Z0-9_.-]+ */
	const char *const *enumvals;	/* NULL-terminated */
	bool		mapkeys_tablename;	/* RQ_MAP: keys are table names or ARNs */
	bool		mapkeys_json;	/* mapkeys_tablename: a bad name in the newer form (value as JSON, min 3) */
	bool		mapkeys_yield;	/* mapkeys_tablename: a bad name reported only if nothing else fails */
	bool		tablearn;		/* a table name or ARN (1..1024; a name: <= 255 and the pattern) */
	bool		empty_name_min3;	/* tablearn: an empty name fails a minimum of 3 and the pattern (DescribeTable) */
	const char *empty_msg;		/* RQ_MAP/RQ_LIST: DynamoDB's message for an empty one */
	uint8		newform;		/* RQ_NEWFORM_*: "Value at 'Member'" form (no value, member as named) */
};

/* Constraints DynamoDB reports in its newer form, without the value. */
#define RQ_NEWFORM_MIN 0x01		/* minimum value or length */
#define RQ_NEWFORM_MAX 0x02		/* maximum value or length */

/* TableName of every operation but CreateTable: a table name or its ARN. */
#define RQ_TABLE_NAME_OR_ARN {.name = "TableName",.type = RQ_STRING,.notnull = true,.tablearn = true}

/* Common member shapes. */
extern const RqField RqTableNameField;	/* "TableName": notnull, pattern, 3..255 */
extern const RqField RqAttrValueField;
/* An element of AttributesToGet: a string, never null (api/request.c). */
extern const RqField RqAttributeNameElem;
extern const char *const RqReturnConsumedCapacityEnum[];
extern const char *const RqReturnItemCollectionMetricsEnum[];
extern const char *const RqReturnValuesEnum[];

/* Validate a request against its schema (both stages); raises on error. */
extern void RqValidate(Jsonb *req, const RqField *fields);

/* ---- reading members ---- */

/* RqGet, RqGetJv, RqGetString, RqStringIs, RqArrayElems, RqObjectMembers: common/json.h */
/* Typed readers (validated requests only). */
extern bool RqGetBool(JsonbContainer *obj, const char *name, bool dflt);
extern int64 RqGetInt(JsonbContainer *obj, const char *name, int64 dflt);
/* Container of a jsonb datum. */
#define RqRoot(jb) (&(jb)->root)

/* Parse a map of AttributeValues, raising DynamoDB's message on error. */
extern DynValue *RqParseItem(JsonbValue *jv);

/* Set DynamoDB's validation layer of operation op (NULL: none) (common/errors.h). */
extern void RqSetValidationLayer(const char *op);

/* ---- building responses ---- */
extern void RqPushKey(JsonbParseState **st, const char *key);
extern void RqPushString(JsonbParseState **st, JsonbIteratorToken tok, const char *s);
extern void RqPushNumeric(JsonbParseState **st, JsonbIteratorToken tok, double d);
extern void RqPushInt(JsonbParseState **st, JsonbIteratorToken tok, int64 i);
extern void RqPushBool(JsonbParseState **st, JsonbIteratorToken tok, bool b);
extern void RqPushJsonb(JsonbParseState **st, JsonbIteratorToken tok, Jsonb *jb);
extern Jsonb *RqEmptyObject(void);
/* {"<key>": value} */
extern Jsonb *RqWrap(const char *key, Jsonb *value);
/* An SPI query's one jsonb result (NULL: no row, or NULL), copied out of SPI's memory. */
extern Jsonb *RqQueryJsonb(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls);
/*
 * A page of a List operation from the last SPI query, which asked for
 * page_size + 1 rows of (summary jsonb, position int8): {"<list_key>": [the
 * first page_size summaries], "NextToken": token(position of the last one)
 * when there was one more row}.
 */
extern Jsonb *RqListPage(const char *list_key, int64 page_size, char *(*token) (int64 position));

#endif
