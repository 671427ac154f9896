/*
 * pg_compat.h — what differs between the PostgreSQL majors dynindex supports
 * (15, 16, 17, 18; docs/versions.md).  Every PG_VERSION_NUM test of the
 * extension is here: the rest of the code is written against the newest
 * names, and this header gives them to the older majors.  Include it after
 * postgres.h; common/errors.h and types/types.h include it, so nearly every
 * file has it.  It includes only light headers: a macro for a newer name
 * needs the older declaration only where it is used.
 */
#ifndef DYNINDEX_PG_COMPAT_H
#define DYNINDEX_PG_COMPAT_H

#include "utils/guc.h"
#include "utils/regproc.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "dynindex supports PostgreSQL 15, 16, 17 and 18"
#endif

/* 18: pg_noreturn, before the declaration, replaces pg_attribute_noreturn(). */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 18: base64 takes bytes as uint8 (pg_b64_encode's source, pg_b64_decode's target). */
#if PG_VERSION_NUM < 180000
#include "common/base64.h"
#define pg_b64_encode(src, len, dst, dstlen) pg_b64_encode((const char *) (src), len, dst, dstlen)
#define pg_b64_decode(src, len, dst, dstlen) pg_b64_decode(src, len, (char *) (dst), dstlen)
#endif

/* 17: LogLogicalMessage() takes a flush flag (false: as before). */
#if PG_VERSION_NUM < 170000
#include "replication/message.h"
#define LogLogicalMessage(prefix, msg, size, transactional, flush) LogLogicalMessage(prefix, msg, size, transactional)
#endif

/* 16: replorigin_session_setup() takes the pid that may share the origin (0: none). */
#if PG_VERSION_NUM < 160000
#include "replication/origin.h"
#define replorigin_session_setup(origin, acquired_by) replorigin_session_setup(origin)
#endif

/* 17: IsBackgroundWorker became AmBackgroundWorkerProcess(). */
#if PG_VERSION_NUM < 170000
#define AmBackgroundWorkerProcess() (IsBackgroundWorker)
#endif

/* 17: PGPROC's pgprocno became GetNumberFromPGProc() (a ProcNumber). */
#if PG_VERSION_NUM < 170000
#define GetNumberFromPGProc(proc) ((proc)->pgprocno)
#endif

/* 16: ExecInsertIndexTuples() takes onlySummarizing (after a HOT update: only the summarizing indexes). */
#if PG_VERSION_NUM >= 160000
#define DynExecInsertIndexTuples(rri, slot, estate, update, noDupErr, specConflict, arbiterIndexes, onlySummarizing) \
	ExecInsertIndexTuples(rri, slot, estate, update, noDupErr, specConflict, arbiterIndexes, onlySummarizing)
#else
#define DynExecInsertIndexTuples(rri, slot, estate, update, noDupErr, specConflict, arbiterIndexes, onlySummarizing) \
	ExecInsertIndexTuples(rri, slot, estate, update, noDupErr, specConflict, arbiterIndexes)
#endif

/* 16: stringToQualifiedNameList() takes a soft-error context (NULL: throw). */
#if PG_VERSION_NUM < 160000
#define stringToQualifiedNameList(string, escontext) stringToQualifiedNameList(string)
#endif

/*
 * A search path of pg_catalog alone for the statements that run with the
 * extension owner's rights (security.c).  On 15 an override search path
 * (no GUC work).  17 removed PushOverrideSearchPath(); from 16 on (16 cannot
 * be built here, and the setting works there too: it takes the path that 17
 * and 18 test) the search_path setting is set at a new GUC nesting level,
 * undone by DynPopCatalogSearchPath() or by the (sub)transaction's abort.
 * Returns what the pop needs.
 */
#if PG_VERSION_NUM >= 160000
static inline int
DynPushCatalogSearchPath(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

static inline void
DynPopCatalogSearchPath(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
}
#else
#include "catalog/namespace.h"

static inline int
DynPushCatalogSearchPath(void)
{
	OverrideSearchPath *path = palloc0(sizeof(OverrideSearchPath));

	path->schemas = NIL;
	path->addCatalog = true;
	path->addTemp = false;
	PushOverrideSearchPath(path);
	return 0;
}

static inline void
DynPopCatalogSearchPath(int nestlevel)
{
	PopOverrideSearchPath();
}
#endif

#endif							/* DYNINDEX_PG_COMPAT_H */
