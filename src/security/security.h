/*
 * security.h — who may do what: the calling role's rights on a table, checked
 * once at the table lookup, and the switch to the extension owner's rights
 * for dynindex's own catalog and queue work (docs/security.md).
 *
 * Below the catalog (docs/layers.md): the catalog calls security — every
 * lookup checks the caller's right (DynSecurityCheckTable), and the catalog
 * reads its tables in an internal section (DynSecurityBeginInternal) — and
 * security never calls the catalog.  It knows roles, privileges and its own
 * tables (table_rights, leading_keys), and a table only as a name and a
 * storage relation.  That way the check sits in the one place every
 * operation passes (the lookup) and cannot be forgotten, and the policy
 * stays independent of how table metadata is loaded and cached.  The SQL
 * functions that manage rights (grant_table, ...) look tables up, so they
 * live above both, in src/api/rights.c.
 */
#ifndef DYNINDEX_SECURITY_H
#define DYNINDEX_SECURITY_H

#include "common/pg_compat.h"

/* A right on a table (docs/security.md, "Recipes"). */
typedef enum DynAccess
{
	DYN_ACCESS_NONE = 0,		/* account-level operation (ListTables, DescribeLimits) */
	DYN_ACCESS_DESCRIBE,		/* any right on the table (DescribeTable, ListTagsOfResource) */
	DYN_ACCESS_READ,			/* SELECT on the table's storage */
	DYN_ACCESS_WRITE,			/* INSERT, UPDATE, DELETE on the table's storage */
	DYN_ACCESS_STREAM,			/* the table's stream (dynindex.table_rights.stream) */
	DYN_ACCESS_ADMIN,			/* table administration (dynindex.table_rights.admin) */
	DYN_ACCESS_CREATE			/* CreateTable: dynindex_admin or dynindex_creator */
} DynAccess;

/* Saved state of DynSecurityBeginInternal. */
typedef struct DynSecurityState
{
	Oid			save_userid;
	int			save_sec_context;
	bool		switched;		/* false for superuser callers: nothing to switch */
	int			search_path_level;	/* DynPushCatalogSearchPath's */
} DynSecurityState;

/* ---- src/security/security.c ---- */

/* The operation and caller of the request being run (saved by DynSecurityEnter). */
typedef struct DynSecurityOp
{
	const char *operation;
	Oid			caller;
} DynSecurityOp;

/*
 * Start an operation (dynindex.api, and every other SQL entry point that
 * reaches tables): the operation decides the right the table lookups check,
 * and the current user is its caller.  Leave restores the previous state
 * (call it in PG_FINALLY).
 */
extern void DynSecurityEnter(const char *operation, DynSecurityOp *save);
extern void DynSecurityLeave(const DynSecurityOp *save);
/* Name the operation whose right the next lookups check (PartiQL statements). */
extern void DynSecuritySetOperation(const char *operation);
/* The current operation (NULL outside one). */
extern const char *DynSecurityOperation(void);
/* Does the operation run as its caller (item operations: PostgreSQL enforces storage privileges)? */
extern bool DynSecurityRunsAsCaller(const char *operation);
/* The right an operation needs on its tables. */
extern DynAccess DynSecurityAccessOf(const char *operation);
/*
 * Does the operation run with the extension owner's rights (table
 * management; and item operations of account-wide administrators, who hold
 * no storage grants) rather than as its caller?
 */
extern bool DynSecurityRunsInternal(const char *operation);
/* The role the request runs for (the caller, also inside internal sections). */
extern Oid	DynSecurityCaller(void);
/* Has the caller account-wide rights (superuser or member of dynindex_admin)? */
extern bool DynSecurityIsAccountAdmin(Oid role);
/*
 * Does role hold right on a table, given by its name and its storage
 * relation?  (table NULL and InvalidOid for DYN_ACCESS_CREATE and NONE.)
 */
extern bool DynSecurityHasRight(Oid role, const char *table, Oid storage_relid, DynAccess right);

/*
 * The authorization check of a table lookup, called by DynCatalogGetTable
 * with the table found (its storage relation, or InvalidOid when it does not
 * exist): raises AccessDeniedException (SQLSTATE 42501) unless the caller
 * holds the operation's right on it.  A missing table is reported missing
 * only to callers with account-wide rights; others get
 * AccessDeniedException, so that a denied role learns nothing, not even
 * whether the table exists.  (The checks of a right by table name, which
 * look the table up, are the catalog's: DynCatalogCheckTableRight,
 * DynCatalogCheckStream, DynCatalogCheckBackup.)
 */
extern void DynSecurityCheckTable(const char *name, Oid storage_relid);
/* Raise the AccessDeniedException of the current operation on a table. */
pg_noreturn extern void DynSecurityDeny(const char *table_name);

/*
 * Run dynindex's own work (catalog, queues, tokens, table management) with
 * the extension owner's rights and a safe search_path, after the caller's
 * rights were checked.  End restores the caller; an error ends the section
 * with the (sub)transaction.
 */
extern void DynSecurityBeginInternal(DynSecurityState *s);
extern void DynSecurityEndInternal(DynSecurityState *s);

#endif
