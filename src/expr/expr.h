/*
 * expr.h — DynamoDB's expression language: one lexer/parser and AST for
 * ConditionExpression, FilterExpression, KeyConditionExpression,
 * UpdateExpression and ProjectionExpression; the evaluator; and the legacy
 * parameters (Expected, AttributeUpdates, AttributesToGet, KeyConditions,
 * QueryFilter, ScanFilter) translated onto the same AST.
 *
 * Errors are raised with DynError(DYN_ERR_VALIDATION, ...) and DynamoDB's
 * exact messages.
 */
#ifndef DYNINDEX_EXPR_H
#define DYNINDEX_EXPR_H

#include "types/types.h"

typedef struct DynExpr DynExpr;		/* an AST node (see expr internals) */

/*
 * Per-request expression state: the ExpressionAttributeNames and
 * ExpressionAttributeValues of the request and which of them were used.
 */
typedef struct DynExprContext DynExprContext;

/*
 * Validate ExpressionAttributeNames / ExpressionAttributeValues (either may
 * be NULL: absent) and make a context.  Raises DynamoDB's messages.
 */
extern DynExprContext *DynExprContextCreate(JsonbValue *names, JsonbValue *values);

/* Parse an expression; kind is the request parameter name, e.g. "ConditionExpression". */
extern DynExpr *DynParseCondition(DynExprContext *ctx, const char *kind, const char *text, int len);
extern DynExpr *DynParseUpdate(DynExprContext *ctx, const char *text, int len);
extern DynExpr *DynParseProjection(DynExprContext *ctx, const char *text, int len);

/* After all expressions of a request are parsed: reject unused names/values. */
extern void DynExprCheckUnused(DynExprContext *ctx);

/* Evaluate a condition against an item (NULL: the item does not exist). */
extern bool DynEvalCondition(DynExpr *cond, const DynValue *item);

/*
 * Apply an update to an item (the existing item, or a new item holding only
 * the key).  Returns the new item.
 */
extern DynValue *DynApplyUpdate(DynExpr *update, const DynValue *item);

/* Project an item (returns a new map holding only the projected paths). */
extern DynValue *DynApplyProjection(DynExpr *projection, const DynValue *item);

/*
 * The distinct top-level attribute names an update writes (SET, REMOVE, ADD,
 * DELETE targets), in textual order; for the "Cannot update attribute pk.
 * This attribute is part of the key" check.  Returns the count.
 */
extern int	DynUpdateTopLevelNames(DynExpr *update, const char ***names, int **namelens);

/*
 * UpdateItem's UPDATED_OLD / UPDATED_NEW: the attributes of item that an
 * update touched (top-level attributes, nested paths projected as written).
 */
extern DynValue *DynUpdatedAttributes(DynExpr *update, const DynValue *item);

/* The kind name an expression was parsed as ("ConditionExpression", ...). */
extern const char *DynExprKindName(DynExpr *expr);

/* ---- legacy (non-expression) parameters: expr_legacy.c ---- */

/* Whether a request carries one parameter (for DynExprCheckParamMix). */
typedef struct DynParamPresence
{
	const char *name;
	bool		present;
} DynParamPresence;

/*
 * Reject mixing expression and non-expression parameters, and names/values
 * without expressions, with DynamoDB's messages.  exprs: the operation's
 * expression parameters in DynamoDB's order (e.g. UpdateItem:
 * UpdateExpression, ConditionExpression); legacy: its non-expression
 * parameters (AttributeUpdates, Expected).
 */
extern void DynExprCheckParamMix(const DynParamPresence *exprs, int nexprs,
								 const DynParamPresence *legacy, int nlegacy,
								 bool has_names, bool has_values);

/* Expected (+ ConditionalOperator "AND"/"OR" or NULL) as a condition. */
extern DynExpr *DynLegacyExpected(JsonbValue *expected, const char *conditional_operator);

/*
 * ConditionalOperator needs a legacy condition map (Expected, QueryFilter,
 * ScanFilter; NULL when absent) of two or more entries.
 */
extern void DynLegacyCheckConditionalOperator(JsonbValue *conditional_operator,
											  JsonbValue *conditions);

/* QueryFilter / ScanFilter (param is the parameter name) as a condition. */
extern DynExpr *DynLegacyFilter(const char *param, JsonbValue *conditions,
								const char *conditional_operator);

/*
 * KeyConditions as a condition shaped like a parsed KeyConditionExpression:
 * an AND of comparisons (path first), BETWEEN and begins_with.
 */
extern DynExpr *DynLegacyKeyConditions(JsonbValue *conditions);

/* AttributeUpdates as an update. */
extern DynExpr *DynLegacyAttributeUpdates(JsonbValue *updates);

/* AttributesToGet as a projection. */
extern DynExpr *DynLegacyAttributesToGet(JsonbValue *list);

/* ---- helpers shared with other modules: expr_util.c ---- */

/*
 * The members of a JSON object (a jbvObject or a jbvBinary object).  Returns
 * the count and palloc'd arrays; values of nested containers are jbvBinary.
 * Returns -1 when jv is not an object.
 */
extern int	DynJsonObjectMembers(JsonbValue *jv, char ***keys, int **keylens,
								 JsonbValue **values);
/* The elements of a JSON array (jbvArray or jbvBinary); -1 when not an array. */
extern int	DynJsonArrayElements(JsonbValue *jv, JsonbValue **elems);

#endif
