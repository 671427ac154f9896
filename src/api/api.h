/*
 * api.h — DynamoDB operations.  Each takes the request (validated by its
 * schema) and returns the response document.  They run inside an SPI
 * connection opened by dynindex.api.
 */
#ifndef DYNINDEX_API_H
#define DYNINDEX_API_H

#include "utils/jsonb.h"

typedef Jsonb *(*DynOperation) (Jsonb *req);

/* tables.c, tables_create.c, tables_describe.c, tables_update.c (tables.h: what they share) */
extern Jsonb *DynCreateTable(Jsonb *req);
extern Jsonb *DynDescribeTable(Jsonb *req);
extern Jsonb *DynListTables(Jsonb *req);
extern Jsonb *DynDeleteTable(Jsonb *req);
extern Jsonb *DynUpdateTable(Jsonb *req);
/* Create a table from a CreateTable request (shared with RestoreTableFromBackup). */
extern struct DynTable *DynTableCreate(Jsonb *req, Jsonb *extra_options, bool restoring);
/* Request member shapes shared with RestoreTableFromBackup's overrides. */
extern const struct RqField DynLsiElemField;
extern const struct RqField DynGsiElemField;
extern const struct RqField DynThroughputField;
extern const struct RqField DynOnDemandThroughputField;
extern const struct RqField DynSseSpecificationField;
/* A TableDescription of a table. */
extern Jsonb *DynTableDescription(struct DynTable *t, const char *status, bool with_stats);

/* items.c */
extern Jsonb *DynPutItem(Jsonb *req);
extern Jsonb *DynGetItem(Jsonb *req);
extern Jsonb *DynDeleteItem(Jsonb *req);
/* GetItem answering {"Items": [item]} (PartiQL's SELECT by key) */
extern Jsonb *DynGetItemForPartiQL(Jsonb *req);
/* the same from a kept plan: table, key object, planned request (its projection) */
extern Jsonb *DynGetItemByKeyForPartiQL(struct DynTable *t, JsonbValue *keyjv, JsonbContainer *projreq,
										bool consistent, JsonbContainer *r);

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

/* backups.c */
extern Jsonb *DynCreateBackup(Jsonb *req);
extern Jsonb *DynDescribeBackup(Jsonb *req);
extern Jsonb *DynListBackups(Jsonb *req);
extern Jsonb *DynDeleteBackup(Jsonb *req);
extern Jsonb *DynRestoreTableFromBackup(Jsonb *req);
/* A restore's request schema: its override structs get CreateTable's members. */
extern const struct RqField *DynBackupsRestoreSchema(struct RqField *fields);
/* A table's full definition as CreateBackup records it (catalog row locked FOR SHARE); NULL if missing. */
extern Jsonb *DynBackupsTableDefinition(const char *name);
/* The CreateTable request restoring a definition as target, with a restore request's overrides. */
extern Jsonb *DynBackupsRestoreRequest(Jsonb *definition, const char *target, JsonbContainer *r);
/* A restore's response: the new table CREATING, RestoreInProgress true. */
extern Jsonb *DynBackupsRestoredDescription(struct DynTable *t);

/* pitr.c: point-in-time recovery */
extern Jsonb *DynDescribeContinuousBackups(Jsonb *req);
extern Jsonb *DynUpdateContinuousBackups(Jsonb *req);
extern Jsonb *DynRestoreTableToPointInTime(Jsonb *req);

/* imports.c (ImportTable: docs/import-export.md) */
extern Jsonb *DynImportTable(Jsonb *req);
extern Jsonb *DynDescribeImport(Jsonb *req);
extern Jsonb *DynListImports(Jsonb *req);

/* insights.c */
extern Jsonb *DynUpdateContributorInsights(Jsonb *req);
extern Jsonb *DynDescribeContributorInsights(Jsonb *req);
extern Jsonb *DynListContributorInsights(Jsonb *req);

/* exports.c */
extern Jsonb *DynExportTableToPointInTime(Jsonb *req);
extern Jsonb *DynDescribeExport(Jsonb *req);
extern Jsonb *DynListExports(Jsonb *req);

/* transact.c */
extern Jsonb *DynTransactWriteItems(Jsonb *req);
extern Jsonb *DynTransactGetItems(Jsonb *req);

/* partiql.c */
extern Jsonb *DynExecuteStatement(Jsonb *req);
extern Jsonb *DynBatchExecuteStatement(Jsonb *req);
extern Jsonb *DynExecuteTransaction(Jsonb *req);
/* global_tables_legacy.c: the 2017.11.29 operations and replica auto scaling */
extern Jsonb *DynCreateGlobalTable(Jsonb *req);
extern Jsonb *DynDescribeGlobalTable(Jsonb *req);
extern Jsonb *DynListGlobalTables(Jsonb *req);
extern Jsonb *DynUpdateGlobalTable(Jsonb *req);
extern Jsonb *DynDescribeGlobalTableSettings(Jsonb *req);
extern Jsonb *DynUpdateGlobalTableSettings(Jsonb *req);
extern Jsonb *DynDescribeTableReplicaAutoScaling(Jsonb *req);
extern Jsonb *DynUpdateTableReplicaAutoScaling(Jsonb *req);
/* streams.c (DynamoDB Streams) */
extern Jsonb *DynListStreams(Jsonb *req);
extern Jsonb *DynDescribeStream(Jsonb *req);
extern Jsonb *DynGetShardIterator(Jsonb *req);
extern Jsonb *DynGetRecords(Jsonb *req);

#endif
