/*
 * tables.h — what the table operations' files (tables*.c) share; private to
 * src/api/.  Prototypes grouped by file.
 */
#ifndef DYNINDEX_API_TABLES_H
#define DYNINDEX_API_TABLES_H

#include "utils/jsonb.h"

#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "streams/streams.h"

#define MAX_LSIS 5
#define MAX_PROJECTED_ATTRIBUTES 100	/* NonKeyAttributes over all indexes */
#define MAX_GSIS 20

/* The throughput changes UpdateTable is making, as its response shows them. */
typedef struct ThroughputChange
{
	bool		capacity;		/* a provisioned-throughput change, under way: */
	int64		old_rcu;		/* the values in force until the change completes */
	int64		old_wcu;
	bool		decrease;		/* counted in NumberOfDecreasesToday once done */
	Jsonb	   *on_demand;		/* OnDemandThroughput merged, a removed member as -1; NULL: as stored */
} ThroughputChange;

/* Where an OnDemandThroughput is checked (DynamoDB's rules and messages differ). */
typedef enum DynOnDemandUse
{
	DYN_OD_CREATE,				/* CreateTable, ImportTable, a GSI's Create: each member at least 1 */
	DYN_OD_UPDATE,				/* UpdateTable, a GSI's Update: at least 1, or -1 (no maximum) */
	DYN_OD_RESTORE				/* a restore's OnDemandThroughputOverride */
} DynOnDemandUse;

/* tables_validate.c: request shapes */
extern const RqField DynCreateTableFields[];
extern const RqField DynUpdateTableFields[];
extern const RqField DynTableNameOnlyFields[];
extern const RqField DynDescribeTableFields[];
extern const RqField DynListTablesFields[];
/* tables_validate.c: rules */
extern bool DynTablesIsDefined(JsonbValue *defs, int ndefs, const char *name);
extern void DynTablesCheckKeysDefined(JsonbValue *keys, int nkeys, JsonbValue *defs, int ndefs);
extern void DynTablesCheckProjection(JsonbValue *proj);
extern void DynTablesCheckGsiKeySchema(JsonbValue *keys, int n);
extern void DynTablesCheckCreate(Jsonb *req);
extern DynStreamView DynTablesCheckStreamSpecification(JsonbValue *spec, bool create);
extern void DynTablesCheckOnDemand(JsonbValue *odt, const char *index, bool provisioned, DynOnDemandUse use);

/* tables_describe.c */
extern void DynTablesPushInt(JsonbParseState **st, const char *key, int64 v);
extern void DynTablesPushString(JsonbParseState **st, const char *key, const char *v);
extern char *DynTablesUtcDay(void);
extern double DynTablesEpochSeconds(TimestampTz ts);
extern Jsonb *DynTablesDescribeAs(DynTable *t, const char *status, bool with_stats, const ThroughputChange *change);
extern Jsonb *DynTablesDescribe(DynTable *t, const char *status, bool with_stats);
extern Jsonb *DynTablesWrap(const char *wrapper, Jsonb *desc);

/* tables_create.c */
extern Jsonb *DynTablesValueJsonb(JsonbValue *v);
extern void DynTablesCreateIndex(const char *table, int64 num, int position, bool global, JsonbValue *def);
extern Jsonb *DynTablesOnDemandMerge(Jsonb *current, JsonbValue *request, bool show_removed);

/* tables_replicas.c */
/* The one replica action of a request's ReplicaUpdates (region NULL: none). */
typedef struct DynReplicaPlan
{
	const char *region;
	const char *action;			/* "Create", "Update", "Delete" */
	JsonbValue *update;			/* an Update: its action */
} DynReplicaPlan;
extern void DynTablesCheckReplicaUpdates(DynTable *t, JsonbValue *updates, DynReplicaPlan *plan);
extern void DynTablesApplyReplicaUpdates(DynTable *t, const DynReplicaPlan *plan);
extern void DynTablesCheckConsistency(JsonbContainer *r);

/* tables.c */
extern DynTable *DynTablesForChange(const char *name);

#endif							/* DYNINDEX_API_TABLES_H */
