/*
 * worker.h — background workers: a launcher started from
 * shared_preload_libraries and one GSI worker per database that uses
 * dynindex.  A driver above the layers it runs (GSI apply, TTL sweep,
 * stream maintenance); the shared memory where writers wake their database's
 * worker at commit is below them all, in common/wakeup.h.
 */
#ifndef DYNINDEX_WORKER_H
#define DYNINDEX_WORKER_H

#include "fmgr.h"

/* Register GUCs, shared memory hooks and the launcher (from _PG_init). */
extern void DynWorkerInit(void);

/* bgworker entry points */
extern PGDLLEXPORT void dynindex_launcher_main(Datum arg);
extern PGDLLEXPORT void dynindex_worker_main(Datum arg);
extern PGDLLEXPORT void dynindex_apply_main(Datum arg);

/* apply.c: start the missing apply workers of global tables (the database's worker, each round) */
extern void DynApplyLaunch(void);

/* GUCs */
extern int	dynindex_worker_naptime_ms;
extern int	dynindex_gsi_batch_size;
extern int	dynindex_ttl_interval_s;

#endif
