/*
 * expr_ast.h — the AST of DynamoDB expressions, public for code that analyses
 * an expression itself (the Query engine checks a KeyConditionExpression
 * against the key schema by walking this tree).
 *
 * Every node carries byte offsets into the expression text (start/end, and
 * for operators the operator token) so that callers can report "the first
 * problem in textual order": sort candidate problems by node->start.
 *
 * Parentheses are not nodes: a parenthesised node has nparens > 0 (DynamoDB
 * rejects two pairs around the same thing, so nparens is 0 or 1).
 */
#ifndef DYNINDEX_EXPR_AST_H
#define DYNINDEX_EXPR_AST_H

#include "expr/expr.h"

typedef enum DynExprKind
{
	DYN_EXPR_PATH,				/* document path: a.b[2].#c */
	DYN_EXPR_VALUE,				/* :placeholder, or a literal (legacy parameters) */
	DYN_EXPR_FUNC,				/* function call */
	DYN_EXPR_CMP,				/* args[0] <op> args[1] */
	DYN_EXPR_BETWEEN,			/* args[0] BETWEEN args[1] AND args[2] */
	DYN_EXPR_IN,				/* args[0] IN (args[1..]) */
	DYN_EXPR_AND,				/* args[0] AND args[1] */
	DYN_EXPR_OR,				/* args[0] OR args[1] */
	DYN_EXPR_NOT,				/* NOT args[0] */
	DYN_EXPR_ARITH,				/* SET value: args[0] + args[1] / args[0] - args[1] */
	DYN_EXPR_UPDATE,			/* UpdateExpression: actions */
	DYN_EXPR_PROJECTION			/* ProjectionExpression: args are paths */
} DynExprKind;

typedef enum DynCmpOp
{
	DYN_CMP_EQ,					/* = */
	DYN_CMP_NE,					/* <> */
	DYN_CMP_LT,					/* < */
	DYN_CMP_LE,					/* <= */
	DYN_CMP_GT,					/* > */
	DYN_CMP_GE					/* >= */
} DynCmpOp;

typedef enum DynFunc
{
	DYN_FN_UNKNOWN,				/* not a DynamoDB function (rejected by the checks) */
	DYN_FN_ATTRIBUTE_EXISTS,
	DYN_FN_ATTRIBUTE_NOT_EXISTS,
	DYN_FN_ATTRIBUTE_TYPE,
	DYN_FN_BEGINS_WITH,
	DYN_FN_CONTAINS,
	DYN_FN_SIZE,
	DYN_FN_IF_NOT_EXISTS,
	DYN_FN_LIST_APPEND,
	DYN_FN_NOT_CONTAINS			/* legacy NOT_CONTAINS only (never parsed) */
} DynFunc;

/* One step of a document path. */
typedef struct DynPathElem
{
	bool		is_index;		/* [n] */
	int			index;			/* is_index: the list index */
	const char *name;			/* !is_index: the attribute name (placeholder resolved) */
	int			namelen;
	const char *placeholder;	/* "#n" when written as a placeholder, else NULL */
	int			start;			/* token offsets in the text */
	int			end;
} DynPathElem;

typedef enum DynUpdateOp
{
	DYN_UPD_SET,
	DYN_UPD_REMOVE,
	DYN_UPD_ADD,
	DYN_UPD_DELETE
} DynUpdateOp;

/* One action of an update (SET path = value, REMOVE path, ADD/DELETE path value). */
typedef struct DynUpdateAction
{
	DynUpdateOp op;
	int			clause;			/* index of the clause in the text (0, 1, ...) */
	DynExpr    *path;			/* DYN_EXPR_PATH */
	DynExpr    *value;			/* SET: operand; ADD/DELETE: value; REMOVE: NULL */
	bool		legacy;			/* from AttributeUpdates (ADD appends lists, etc.) */
} DynUpdateAction;

struct DynExpr
{
	DynExprKind kind;
	const char *exprkind;		/* root only: "ConditionExpression", ... */
	int			start;			/* byte offsets of the node in the text */
	int			end;
	int			op_start;		/* operator / function-name token */
	int			op_end;
	int			nparens;		/* parentheses around this node */
	bool		bare;			/* parser internal: an operand standing alone in ( ) */

	/* DYN_EXPR_PATH */
	int			npath;
	DynPathElem *path;

	/* DYN_EXPR_VALUE */
	const char *placeholder;	/* ":v"; NULL for a literal */
	DynValue   *value;			/* resolved after checks */

	/* DYN_EXPR_FUNC */
	DynFunc		func;
	const char *fname;			/* as written */
	int			fnamelen;

	/* DYN_EXPR_CMP */
	DynCmpOp	cmp;

	/* DYN_EXPR_ARITH */
	bool		subtract;

	/* operands: CMP (2), BETWEEN (3), IN (1 + n), AND/OR (2), NOT (1), FUNC, ARITH (2), PROJECTION */
	int			nargs;
	DynExpr   **args;

	/* DYN_EXPR_UPDATE */
	int			nactions;
	DynUpdateAction *actions;
	int			nclauses;
};

/* The text of an operator, "=" ... ">=". */
extern const char *DynCmpOpName(DynCmpOp op);
/* The name of a function ("attribute_exists", ...). */
extern const char *DynFuncName(DynFunc f);
/* Render a path as DynamoDB prints it in messages: [a, b, [2]]. */
extern void DynPathAppendForMessage(StringInfo buf, const DynExpr *path);
/* The value of a path in an item (NULL: absent). */
extern DynValue *DynPathLookup(const DynValue *item, const DynExpr *path);
/* Strip nothing but return the node (parentheses are not nodes); for symmetry. */
#define DynExprUnwrap(e) (e)

/* Build nodes (legacy parameters, other modules). */
extern DynExpr *DynExprMakePath(const char *name, int namelen);
extern DynExpr *DynExprMakeConst(DynValue *value);
extern DynExpr *DynExprMakeNode(DynExprKind kind, int nargs);

#endif
