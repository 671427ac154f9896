/*
 * items.h — request helpers shared by the item operations (PutItem,
 * GetItem, DeleteItem, UpdateItem), batches and transactions.  The write
 * path itself is src/write/ (write/write.h).
 */
#ifndef DYNINDEX_ITEMS_H
#define DYNINDEX_ITEMS_H

#include "api/capacity.h"
#include "api/request.h"
#include "expr/expr.h"
#include "catalog/dyn_catalog.h"
#include "storage/storage.h"
#include "write/write.h"

/* The table of an item operation, or ResourceNotFoundException. */
extern DynTable *DynItemsGetTable(const char *name);

/* Key parameter (GetItem/DeleteItem/UpdateItem): validated against the schema. */
extern void DynItemsParseKey(DynTable *t, JsonbValue *keyjv, DynKey *key);

/* ProjectionExpression / AttributesToGet of a read; NULL for all attributes. */
extern DynExpr *DynItemsParseProjection(JsonbContainer *r);
/* Refuse a nested path into a key or index key attribute ("Key attributes must be scalars; ..."). */
extern void DynItemsCheckKeyPaths(DynTable *t, DynExpr *e);

/* update_item.c: a new item holding only the key; reject updates of key attributes */
extern DynValue *DynItemsKeyOnlyItem(DynTable *t, const DynKey *key);
extern DynValue *DynItemsApplyUpdate(DynTable *t, DynExpr *update, const DynValue *old,
									 const DynKey *key);
extern void DynItemsCheckUpdateKeys(DynTable *t, DynExpr *update);
/* DynamoDB's message for an update that makes an index key empty, or NULL. */
extern const char *DynItemsUpdatedIndexKeyProblem(DynTable *t, const DynValue *item);

/* Raise ConditionalCheckFailedException (with the old item if asked for). */
extern void DynItemsConditionFailed(const DynValue *old, bool return_old);

/* Push "ItemCollectionMetrics" for ReturnItemCollectionMetrics=SIZE on a table with an LSI. */
extern void DynPushItemCollectionMetrics(JsonbParseState **st, JsonbContainer *r, DynTable *t,
										 const DynKey *key);

#endif
