/*
 * items.h — the item write path and request helpers shared by the item
 * operations (PutItem, GetItem, DeleteItem, UpdateItem) and batches.
 */
#ifndef DYNINDEX_ITEMS_H
#define DYNINDEX_ITEMS_H

#include "api/capacity.h"
#include "api/request.h"
#include "expr/expr.h"
#include "catalog/catalog.h"
#include "storage/storage.h"

/* The table of an item operation, or ResourceNotFoundException. */
extern DynTable *DynItemsGetTable(const char *name);

/* Key parameter (GetItem/DeleteItem/UpdateItem): validated against the schema. */
extern void DynItemsParseKey(DynTable *t, JsonbValue *keyjv, DynKey *key);
/* Key of a whole item (PutItem): missing/type/empty/size checks. */
extern void DynItemsKeyFromItem(DynTable *t, DynValue *item, DynKey *key);

/*
 * Compute the new item from the current one (NULL: absent).  Return NULL to
 * delete (or leave absent); raise to fail (e.g. ConditionalCheckFailed).
 */
typedef DynValue *(*DynItemMutator) (DynTable *t, const DynValue *old, void *arg);

/* A mutator's answer for "leave the item as it is" (nothing is written). */
extern DynValue DynItemsKeepItem;
#define DYN_ITEMS_KEEP (&DynItemsKeepItem)

typedef struct DynWriteResult
{
	DynValue   *old;			/* item before, NULL if absent */
	int32		oldsize;
	DynValue   *new;			/* item after, NULL if absent */
	int32		newsize;
} DynWriteResult;

/*
 * Read the item with a row lock, compute its new state and write it, in the
 * current transaction.  size_msg is the message for an item over 400 KB.
 */
extern void DynItemsModify(DynTable *t, const DynKey *key, DynItemMutator fn, void *arg,
						   const char *size_msg, DynWriteResult *res);

/* ProjectionExpression / AttributesToGet of a read; NULL for all attributes. */
extern DynExpr *DynItemsParseProjection(JsonbContainer *r);

/* update_item.c: a new item holding only the key; reject updates of key attributes */
extern DynValue *DynItemsKeyOnlyItem(DynTable *t, const DynKey *key);
extern DynValue *DynItemsApplyUpdate(DynTable *t, DynExpr *update, const DynValue *old,
									 const DynKey *key);
extern void DynItemsCheckUpdateKeys(DynTable *t, DynExpr *update);

/* After a write made without DynItemsModify (no LSI, old item not needed): queue it for GSIs. */
extern void DynItemsFastWriteDone(DynTable *t, const DynKey *key);

/* Raise ConditionalCheckFailedException (with the old item if asked for). */
extern void DynItemsConditionFailed(const DynValue *old, bool return_old);

/* Push "ItemCollectionMetrics" for ReturnItemCollectionMetrics=SIZE on a table with an LSI. */
extern void DynPushItemCollectionMetrics(JsonbParseState **st, JsonbContainer *r, DynTable *t,
										 const DynKey *key);

#endif
