/*
 * api.h — DynamoDB operations.  Each takes the request (validated by its
 * schema) and returns the response document.  They run inside an SPI
 * connection opened by dynindex.api.
 */
#ifndef DYNINDEX_API_H
#define DYNINDEX_API_H

#include "utils/jsonb.h"

typedef Jsonb *(*DynOperation) (Jsonb *req);

/* tables.c */
extern Jsonb *DynCreateTable(Jsonb *req);
extern Jsonb *DynDescribeTable(Jsonb *req);
extern Jsonb *DynListTables(Jsonb *req);
extern Jsonb *DynDeleteTable(Jsonb *req);
extern Jsonb *DynUpdateTable(Jsonb *req);

/* items.c */
extern Jsonb *DynPutItem(Jsonb *req);
extern Jsonb *DynGetItem(Jsonb *req);
extern Jsonb *DynDeleteItem(Jsonb *req);

/* update_item.c */
extern Jsonb *DynUpdateItem(Jsonb *req);

/* batch.c */
extern Jsonb *DynBatchGetItem(Jsonb *req);
extern Jsonb *DynBatchWriteItem(Jsonb *req);

/* query_scan.c */
extern Jsonb *DynQuery(Jsonb *req);
extern Jsonb *DynScan(Jsonb *req);

/* tags.c */
extern Jsonb *DynTagResource(Jsonb *req);
extern Jsonb *DynUntagResource(Jsonb *req);
extern Jsonb *DynListTagsOfResource(Jsonb *req);
extern Jsonb *DynDescribeLimits(Jsonb *req);
/* CreateTable's Tags: checked before anything is created, stored after the table row */
extern void DynCheckCreateTableTags(JsonbValue *tags);
extern void DynStoreCreateTableTags(const char *table, JsonbValue *tags);

/* ttl.c */
extern Jsonb *DynUpdateTimeToLive(Jsonb *req);
extern Jsonb *DynDescribeTimeToLive(Jsonb *req);

/* transact.c */
extern Jsonb *DynTransactWriteItems(Jsonb *req);
extern Jsonb *DynTransactGetItems(Jsonb *req);

#endif
