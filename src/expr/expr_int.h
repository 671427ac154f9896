/*
 * expr_int.h — internals shared by the files of src/expr: the request
 * context, the tokenizer/parser entry and the reserved-word check.
 */
#ifndef DYNINDEX_EXPR_INT_H
#define DYNINDEX_EXPR_INT_H

#include "expr/expr_ast.h"

#define DYN_MAX_EXPR_SIZE		4096
#define DYN_MAX_EXPR_OPERATORS	300
#define DYN_MAX_IN_OPERANDS		100
#define DYN_MAX_PATH_DEPTH		32
#define DYN_MAX_PLACEHOLDER_LEN	255

/* One ExpressionAttributeNames entry. */
typedef struct DynExprName
{
	char	   *key;
	int			keylen;
	char	   *value;
	int			valuelen;
	bool		used;
} DynExprName;

/* One ExpressionAttributeValues entry. */
typedef struct DynExprVal
{
	char	   *key;
	int			keylen;
	DynValue   *value;
	bool		used;
} DynExprVal;

struct DynExprContext
{
	bool		has_names;
	bool		has_values;
	int			nnames;
	DynExprName *names;
	int			nvalues;
	DynExprVal *values;
};

typedef enum DynParseMode
{
	DYN_PARSE_CONDITION,
	DYN_PARSE_UPDATE,
	DYN_PARSE_PROJECTION
} DynParseMode;

/* expr_parse.c: tokenize and parse; raises syntax and redundant-parens errors. */
extern DynExpr *DynExprParseText(const char *kind, DynParseMode mode, const char *text, int len);

/* expr_reserved.c: whether a bare name is one of DynamoDB's reserved words. */
extern bool DynIsReservedWord(const char *name, int len);

/* expr_util.c */
pg_noreturn extern void DynExprRaise(const char *kind, const char *fmt,...) pg_attribute_printf(2, 3);
extern DynValue *DynMakeNumberFromInt(int64 v);
extern void DynAppendBoundForMessage(StringInfo buf, const DynValue *v);
extern const char *DynLongTypeName(DynType t);

#endif
