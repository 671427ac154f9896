/*
 * replication.h — global tables' regions: the dynindex servers of a
 * deployment, each named by its region (docs/global-tables.md).
 *
 * regions.c: the catalog dynindex.regions (region name -> libpq connection
 * string, readable by the extension's owner only) and the administrators'
 * SQL functions set_region, drop_region, list_regions.
 */
#ifndef DYNINDEX_REPLICATION_H
#define DYNINDEX_REPLICATION_H

#include "nodes/pg_list.h"

/* regions.c */
/* This server's own region: dynindex.region as configured (not a session's SET). */
extern const char *DynRegionLocal(void);
/* The regions declared to this server, sorted by name (empty before version 0.3). */
extern List *DynRegionsDeclared(void);
/* Is region declared to this server? */
extern bool DynRegionIsDeclared(const char *region);
/* Is the catalog of regions there (version 0.3)? */
extern bool DynRegionsCatalogPresent(void);
/* A declared region's connection string (NULL: not declared).  Never log it. */
extern char *DynRegionConninfo(const char *region);

#endif
