/*
 * partiql.h — DynamoDB's PartiQL: lexer, parser and AST (parse.c) and the
 * planner (plan.c) that turns a statement into the request of an existing
 * operation (GetItem, Query, Scan, PutItem, UpdateItem, DeleteItem, or a
 * TransactWriteItems/TransactGetItems action).  Nothing here runs a request:
 * src/api/partiql.c does, through the operations themselves, so validation,
 * capacity, indexes, streams and limits are the JSON operations' own.
 */
#ifndef DYNINDEX_PARTIQL_H
#define DYNINDEX_PARTIQL_H

#include "lib/stringinfo.h"

/* A bound `?` parameter: its AttributeValue as typed JSON text and its type name. */
typedef struct PqParam
{
	const char *json;			/* {"S":"x"} */
	const char *type;			/* "S", "N", ... (the member name) */
} PqParam;

typedef enum PqNodeKind
{
	PQ_PATH,					/* a.b[2].c */
	PQ_VALUE,					/* literal or parameter (typed JSON) */
	PQ_MISSING,					/* MISSING */
	PQ_LIST,					/* [ ... ] */
	PQ_TUPLE,					/* { 'k': v, ... } */
	PQ_BAG,						/* << ... >> */
	PQ_CMP,						/* a op b */
	PQ_BETWEEN,					/* a BETWEEN b AND c */
	PQ_IN,						/* a IN [ ... ] */
	PQ_IS,						/* a IS [NOT] type */
	PQ_FUNC,					/* f(args) */
	PQ_ARITH,					/* a + b, a - b */
	PQ_AND,
	PQ_OR,
	PQ_NOT
} PqNodeKind;

typedef enum PqCmpOp
{
	PQ_EQ,
	PQ_NE,
	PQ_LT,
	PQ_LE,
	PQ_GT,
	PQ_GE
} PqCmpOp;

/* One step of a path: a name or a list index. */
typedef struct PqPathElem
{
	char	   *name;			/* NULL: an index */
	int			index;
} PqPathElem;

typedef struct PqNode PqNode;

struct PqNode
{
	PqNodeKind	kind;
	int			op;				/* CMP: PqCmpOp; ARITH: '+' or '-' */
	bool		negated;		/* IS NOT, NOT BETWEEN, NOT IN */
	/* PQ_VALUE */
	char	   *json;			/* typed JSON text */
	const char *vtype;			/* "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", ... */
	int			param;			/* a `?`: its number (1, 2, ...); 0: a literal */
	/* PQ_PATH */
	int			npath;
	PqPathElem *path;
	/* PQ_FUNC name (lower case), PQ_IS type name (upper case) */
	char	   *name;
	/* children: operands, elements, arguments; PQ_TUPLE keys */
	int			nargs;
	PqNode	  **args;
	char	  **keys;
};

typedef enum PqStmtKind
{
	PQ_SELECT,
	PQ_INSERT,
	PQ_UPDATE,
	PQ_DELETE,
	PQ_EXISTS					/* EXISTS(SELECT ...): a transaction's condition check */
} PqStmtKind;

typedef enum PqReturning
{
	PQ_RET_NONE,
	PQ_RET_ALL_OLD,
	PQ_RET_ALL_NEW,
	PQ_RET_MODIFIED_OLD,
	PQ_RET_MODIFIED_NEW
} PqReturning;

/* One SET or REMOVE of an UPDATE. */
typedef struct PqAssign
{
	bool		remove;
	PqNode	   *target;			/* a path */
	PqNode	   *value;			/* SET: the new value */
} PqAssign;

typedef struct PqStatement
{
	PqStmtKind	kind;
	char	   *table;
	char	   *index;			/* FROM "t"."index" */
	bool		star;			/* SELECT * */
	int			nproj;
	PqNode	  **proj;
	PqNode	   *where;
	int			norder;
	PqNode	  **order;
	bool	   *order_desc;
	PqNode	   *value;			/* INSERT */
	int			nassign;
	PqAssign   *assign;
	PqReturning returning;
	int			nparams;		/* `?` bound */
} PqStatement;

/* ---- parse.c ---- */

/*
 * Parse one statement, binding params to its `?` in order.  Raises
 * ValidationException with DynamoDB's message on any error, including fewer
 * parameters than placeholders.
 */
extern PqStatement *PqParse(const char *text, int len, const PqParam *params, int nparams);

/* ---- plan.c ---- */

typedef enum PqOp
{
	PQ_OP_GET,					/* GetItem / TransactGetItems Get */
	PQ_OP_QUERY,
	PQ_OP_SCAN,
	PQ_OP_PUT,					/* INSERT: PutItem with attribute_not_exists */
	PQ_OP_UPDATE,
	PQ_OP_DELETE,
	PQ_OP_CHECK					/* EXISTS: TransactWriteItems ConditionCheck */
} PqOp;

/* Where a statement is run (what the planner must allow). */
typedef enum PqContext
{
	PQ_CTX_STATEMENT,			/* ExecuteStatement */
	PQ_CTX_BATCH,				/* BatchExecuteStatement */
	PQ_CTX_TRANSACTION			/* ExecuteTransaction */
} PqContext;

/*
 * A planned statement: the operation and its request members.  Each body is
 * the text of the request object's members without the braces, so the caller
 * adds its own (Limit, ExclusiveStartKey, ReturnConsumedCapacity, ...).  A
 * SELECT whose partition key is pinned by IN (or an OR of equalities) is one
 * Query per value, in the order they are read.
 */
typedef struct PqPlan
{
	PqOp		op;
	PqStatement *stmt;
	char	   *table;
	bool		is_read;
	bool		forward;		/* Query: ScanIndexForward */
	int			nbodies;
	char	  **bodies;
	const char *return_values;	/* UpdateItem/DeleteItem ReturnValues, or NULL */
	/* PQ_OP_GET: the key attributes and the value nodes they are equal to */
	int			nkeys;
	const char *key_names[2];
	PqNode	   *key_values[2];
	/* a one-body Query or Scan: the `?` of each :v value, and whether that is all */
	bool		reusable;
	int			nvalues;
	int		   *value_params;
} PqPlan;

/* Plan a parsed statement against the catalog; raises DynamoDB's errors. */
extern PqPlan *PqPlanStatement(PqStatement *stmt, PqContext ctx, bool consistent_read);

/* Append s as a JSON string literal. */
extern void PqAppendJsonString(StringInfo buf, const char *s);

#endif
