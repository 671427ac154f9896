/*
 * security.c — the permission model (docs/security.md).
 *
 * Rights on a DynamoDB table are PostgreSQL privileges on its storage
 * relation (SELECT: read; INSERT, UPDATE, DELETE: write) and rows of
 * dynindex.table_rights (admin, stream); account-wide rights come from
 * membership in dynindex_admin (everything) or dynindex_creator
 * (CreateTable).  Every table lookup (DynCatalogGetTable) checks the
 * current operation's right for the caller before anything else reads the
 * table's schema, so an operation gets the check by looking its table up.
 *
 * Item operations then run as the caller, so that PostgreSQL itself enforces
 * the storage privileges and row-level security (LeadingKeys) on every
 * read and write; dynindex's own catalog, queue and token work, and table
 * management, run in internal sections with the extension owner's rights.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "common/arn.h"
#include "common/errors.h"
#include "common/pg_compat.h"
#include "security/security.h"

static const char *current_operation = NULL;
static Oid	current_caller = InvalidOid;
/* DynSecurityIsAccountAdmin(current_caller), once per operation: -1 unknown */
static int	current_caller_admin = -1;
/* is Citus installed in the database, once per operation: -1 unknown */
static int	current_citus = -1;

typedef struct OperationAccess
{
	const char *name;
	DynAccess	access;
	bool		as_caller;		/* runs as the caller (item operations) */
} OperationAccess;

/*
 * The right each operation needs on its tables, after DynamoDB's IAM actions
 * (a read-only policy allows GetItem, BatchGetItem, Query, Scan,
 * TransactGetItems (via GetItem) and DescribeTable).  An operation missing
 * here needs the admin right: new operations are closed until listed.
 */
static const OperationAccess operation_access[] = {
	{"BatchGetItem", DYN_ACCESS_READ, true},
	{"BatchWriteItem", DYN_ACCESS_WRITE, true},
	{"CreateTable", DYN_ACCESS_CREATE, false},
	{"DeleteItem", DYN_ACCESS_WRITE, true},
	{"DeleteTable", DYN_ACCESS_ADMIN, false},
	{"DescribeContinuousBackups", DYN_ACCESS_DESCRIBE, false},
	{"DescribeContributorInsights", DYN_ACCESS_DESCRIBE, false},
	{"ListContributorInsights", DYN_ACCESS_NONE, false},	/* lists the tables the caller may describe */
	{"ExportTableToPointInTime", DYN_ACCESS_READ, false},	/* the job reads the table (docs/security.md) */
	{"DescribeExport", DYN_ACCESS_READ, false},	/* the read right on the export's table */
	{"ListExports", DYN_ACCESS_NONE, false},	/* lists the exports of tables the caller may read */
	{"ListBackups", DYN_ACCESS_NONE, false},	/* lists the backups of tables the caller administers */
	{"RestoreTableFromBackup", DYN_ACCESS_CREATE, false},	/* and admin on the backup's table */
	{"RestoreTableToPointInTime", DYN_ACCESS_CREATE, false},	/* and admin on the source table */
	{"ImportTable", DYN_ACCESS_CREATE, false},	/* and use of the bucket's store */
	{"DescribeImport", DYN_ACCESS_NONE, false},	/* its requester, or admin on its table (api/imports.c) */
	{"ListImports", DYN_ACCESS_NONE, false},	/* lists the imports the caller requested or administers */
	{"DescribeEndpoints", DYN_ACCESS_NONE, false},
	{"DescribeLimits", DYN_ACCESS_NONE, false},
	{"DescribeStream", DYN_ACCESS_STREAM, false},
	{"DescribeTable", DYN_ACCESS_DESCRIBE, false},
	{"DescribeTimeToLive", DYN_ACCESS_DESCRIBE, false},
	{"DescribeTableReplicaAutoScaling", DYN_ACCESS_DESCRIBE, false},
	{"UpdateTableReplicaAutoScaling", DYN_ACCESS_ADMIN, false},
	/*
	 * The legacy global tables (2017.11.29, api/global_tables_legacy.c): no
	 * table is read and every answer is the same for any name (none exists);
	 * CreateGlobalTable would create tables, and needs the right to.
	 */
	{"CreateGlobalTable", DYN_ACCESS_CREATE, false},
	{"DescribeGlobalTable", DYN_ACCESS_NONE, false},
	{"DescribeGlobalTableSettings", DYN_ACCESS_NONE, false},
	{"ListGlobalTables", DYN_ACCESS_NONE, false},
	{"UpdateGlobalTable", DYN_ACCESS_NONE, false},
	{"UpdateGlobalTableSettings", DYN_ACCESS_NONE, false},
	{"GetItem", DYN_ACCESS_READ, true},
	{"GetRecords", DYN_ACCESS_STREAM, false},
	{"GetShardIterator", DYN_ACCESS_STREAM, false},
	{"ListStreams", DYN_ACCESS_NONE, false},	/* lists the streams of tables the caller may read */
	{"stream_changes", DYN_ACCESS_STREAM, false},
	{"ListTables", DYN_ACCESS_NONE, false},
	{"ListTagsOfResource", DYN_ACCESS_DESCRIBE, false},
	{"PutItem", DYN_ACCESS_WRITE, true},
	{"Query", DYN_ACCESS_READ, true},
	{"Scan", DYN_ACCESS_READ, true},
	{"TransactGetItems", DYN_ACCESS_READ, true},
	{"TransactWriteItems", DYN_ACCESS_WRITE, true},
	{"UpdateItem", DYN_ACCESS_WRITE, true},
	/* PartiQL: at least read; the statement's own operation is checked too (storage privileges) */
	{"ExecuteStatement", DYN_ACCESS_READ, true},
	{"BatchExecuteStatement", DYN_ACCESS_READ, true},
	{"ExecuteTransaction", DYN_ACCESS_READ, true},
	/* each PartiQL statement's own action (src/partiql/plan.c) */
	{"PartiQLSelect", DYN_ACCESS_READ, true},
	{"PartiQLInsert", DYN_ACCESS_WRITE, true},
	{"PartiQLUpdate", DYN_ACCESS_WRITE, true},
	{"PartiQLDelete", DYN_ACCESS_WRITE, true},
	/* SQL entry points */
	{"read_all", DYN_ACCESS_READ, true},
	{"expire_items", DYN_ACCESS_WRITE, true},
	{"wait_for_indexes", DYN_ACCESS_DESCRIBE, false},
	{"verify_indexes", DYN_ACCESS_ADMIN, false},
	{"index_stats", DYN_ACCESS_READ, false},
	{"item_history", DYN_ACCESS_ADMIN, false},	/* every version of every key: as a restore */
	{"contributor_insights", DYN_ACCESS_DESCRIBE, false},
	{"throughput_buckets", DYN_ACCESS_DESCRIBE, false},
	{NULL, DYN_ACCESS_ADMIN, false}
};

/* The entry of an operation (the closing entry for an unknown one). */
static const OperationAccess *
find_operation(const char *operation)
{
	const OperationAccess *o;

	for (o = operation_access; o->name; o++)
		if (operation && strcmp(o->name, operation) == 0)
			return o;
	return o;
}

/* The right an operation needs on its tables. */
DynAccess
DynSecurityAccessOf(const char *operation)
{
	return find_operation(operation)->access;
}

/* Does the operation run as its caller? */
bool
DynSecurityRunsAsCaller(const char *operation)
{
	return find_operation(operation)->as_caller;
}

/* At the end of a transaction no operation runs any more (a failed one left its state). */
static void
security_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		current_operation = NULL;
		current_caller = InvalidOid;
		current_caller_admin = -1;
		current_citus = -1;
	}
}

/* Is the citus extension installed in this database? (once per operation) */
static bool
citus_present(void)
{
	if (current_citus < 0)
		current_citus = OidIsValid(get_extension_oid("citus", true)) ? 1 : 0;
	return current_citus == 1;
}

/*
 * Is role (or a role whose rights it has) limited by a LeadingKeys
 * restriction on table (NULL: on any table)?  As PostgreSQL applies a policy
 * TO a role to the role's members.
 */
static bool
leading_keys_restricted(Oid role, const char *table)
{
	DynSecurityState s;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		args[2] = {table ? CStringGetTextDatum(table) : (Datum) 0, ObjectIdGetDatum(role)};
	char		nulls[2] = {table ? ' ' : 'n', ' '};
	bool		found;

	DynSecurityBeginInternal(&s);
	if (SPI_execute_with_args("SELECT 1 FROM dynindex.leading_keys l JOIN pg_catalog.pg_roles g ON g.rolname = l.role_name "
							  "WHERE ($1 IS NULL OR l.table_name = $1) AND pg_catalog.pg_has_role($2, g.oid, 'USAGE') LIMIT 1",
							  2, types, args, nulls, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.leading_keys");
	found = SPI_processed > 0;
	DynSecurityEndInternal(&s);
	return found;
}

/* Is a table's storage a Citus distributed table (Citus installed)? */
static bool
storage_distributed(Oid storage_relid)
{
	DynSecurityState s;
	Oid			types[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(storage_relid)};
	bool		found;

	DynSecurityBeginInternal(&s);
	if (SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1::pg_catalog.regclass",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	found = SPI_processed > 0;
	DynSecurityEndInternal(&s);
	return found;
}

/* Does the operation run with the extension owner's rights? */
bool
DynSecurityRunsInternal(const char *operation)
{
	Oid			caller = DynSecurityCaller();

	if (!DynSecurityRunsAsCaller(operation))
		return true;
	/* superusers hold every privilege anyway; dynindex_admin members hold no storage grants */
	if (superuser_arg(caller))
		return false;
	if (DynSecurityIsAccountAdmin(caller))
		return true;

	/*
	 * With Citus, a statement on a distributed table reaches the workers
	 * over connections of the current user, which application roles (NOLOGIN,
	 * reached through the gateway's role) cannot open, and storage grants
	 * propagated to the shards would let a role write them directly, past
	 * the GSI queue (distributed storage has no write guard).  So in a
	 * database with Citus, item operations run with the owner's rights once
	 * the lookups checked the caller's, and the recipes' grants stay on the
	 * coordinator (dynindex._apply_grant).  Roles restricted by LeadingKeys
	 * keep running as themselves (row-level security needs it): they may not
	 * use distributed tables (DynSecurityCheckTable).
	 */
	return citus_present() && !leading_keys_restricted(caller, NULL);
}

/* Start an operation run for the current user. */
void
DynSecurityEnter(const char *operation, DynSecurityOp *save)
{
	static bool registered = false;

	if (!registered)
	{
		RegisterXactCallback(security_xact_callback, NULL);
		registered = true;
	}
	save->operation = current_operation;
	save->caller = current_caller;
	current_operation = operation;
	current_caller = GetUserId();
	current_caller_admin = -1;
	current_citus = -1;
}

/* Back to the state before DynSecurityEnter. */
void
DynSecurityLeave(const DynSecurityOp *save)
{
	current_operation = save->operation;
	current_caller = save->caller;
	current_caller_admin = -1;
	current_citus = -1;
}

/* Name the operation whose right the next lookups check. */
void
DynSecuritySetOperation(const char *operation)
{
	current_operation = operation;
}

/* The current operation. */
const char *
DynSecurityOperation(void)
{
	return current_operation;
}

/* The role the request runs for. */
Oid
DynSecurityCaller(void)
{
	return OidIsValid(current_caller) ? current_caller : GetUserId();
}

/* The owner of the extension (the owner of schema dynindex). */
static Oid
extension_owner(void)
{
	Oid			nsp = get_namespace_oid("dynindex", false);
	HeapTuple	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for namespace %u", nsp);
	owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	return owner;
}

/* Is role a member (with the rights) of the named role? */
static bool
has_role(Oid role, const char *name)
{
	Oid			r = get_role_oid(name, true);

	return OidIsValid(r) && has_privs_of_role(role, r);
}

/* Account-wide rights: superusers, the extension owner and dynindex_admin. */
bool
DynSecurityIsAccountAdmin(Oid role)
{
	bool		admin;

	if (OidIsValid(current_caller) && role == current_caller && current_caller_admin >= 0)
		return current_caller_admin == 1;
	admin = superuser_arg(role) || has_privs_of_role(role, extension_owner()) ||
		has_role(role, "dynindex_admin");
	if (OidIsValid(current_caller) && role == current_caller)
		current_caller_admin = admin ? 1 : 0;
	return admin;
}

/* Does a row of dynindex.table_rights give role the admin (or stream) right on table? */
static bool
has_table_right(Oid role, const char *table, bool stream)
{
	DynSecurityState s;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		args[2] = {CStringGetTextDatum(table), ObjectIdGetDatum(role)};
	bool		found;

	DynSecurityBeginInternal(&s);
	if (SPI_execute_with_args(stream ?
							  "SELECT 1 FROM dynindex.table_rights r JOIN pg_catalog.pg_roles g ON g.rolname = r.role_name "
							  "WHERE r.table_name = $1 AND (r.stream OR r.admin) "
							  "AND pg_catalog.pg_has_role($2, g.oid, 'USAGE') LIMIT 1" :
							  "SELECT 1 FROM dynindex.table_rights r JOIN pg_catalog.pg_roles g ON g.rolname = r.role_name "
							  "WHERE r.table_name = $1 AND r.admin "
							  "AND pg_catalog.pg_has_role($2, g.oid, 'USAGE') LIMIT 1",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.table_rights");
	found = SPI_processed > 0;
	DynSecurityEndInternal(&s);
	return found;
}

/* Does role hold right on a table (its name and storage relation)? */
bool
DynSecurityHasRight(Oid role, const char *table, Oid storage_relid, DynAccess right)
{
	AclMode		rw = ACL_SELECT | ACL_INSERT | ACL_UPDATE | ACL_DELETE;

	if (DynSecurityIsAccountAdmin(role))
		return true;
	switch (right)
	{
		case DYN_ACCESS_NONE:
			return true;
		case DYN_ACCESS_CREATE:
			return has_role(role, "dynindex_creator");
		case DYN_ACCESS_READ:
			return pg_class_aclcheck(storage_relid, role, ACL_SELECT) == ACLCHECK_OK;
		case DYN_ACCESS_WRITE:
			return pg_class_aclmask(storage_relid, role, rw, ACLMASK_ALL) == rw;
		case DYN_ACCESS_DESCRIBE:
			return pg_class_aclmask(storage_relid, role, rw, ACLMASK_ANY) != 0 ||
				has_table_right(role, table, true);
		case DYN_ACCESS_STREAM:

			/*
			 * DynamoDB's Streams actions (DescribeStream, GetShardIterator,
			 * GetRecords, ListStreams) take no dynamodb:LeadingKeys condition
			 * key (Service Authorization Reference, "Actions, resources, and
			 * condition keys for Amazon DynamoDB"): a stream is granted whole
			 * or not at all, and a principal limited to some partition keys
			 * cannot be given one.  So a role restricted by LeadingKeys on
			 * the table is denied its stream, whatever else it holds.
			 */
			return has_table_right(role, table, true) &&
				!leading_keys_restricted(role, table);
		case DYN_ACCESS_ADMIN:
			return has_table_right(role, table, false);
	}
	return false;
}

/* Raise the AccessDeniedException of the current operation on a table. */
void
DynSecurityDeny(const char *table_name)
{
	const char *op = current_operation ? current_operation : "*";
	char	   *who = GetUserNameFromId(DynSecurityCaller(), true);

	/*
	 * DynamoDB's IAM message (User: ... is not authorized to perform: ...).
	 * SQLSTATE 42501, as PostgreSQL's own permission errors: the gateway
	 * answers both with AccessDeniedException.
	 */
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg_internal("AccessDeniedException: User: arn:aws:iam::%s:user/%s is not authorized to perform: "
							 "dynamodb:%s on resource: %s because no identity-based policy allows the dynamodb:%s action",
							 dynindex_account_id, who ? who : "unknown", op,
							 table_name ? DynTableArn(table_name) : "*", op)));
	pg_unreachable();
}

/* The authorization check of a table lookup. */
void
DynSecurityCheckTable(const char *name, Oid storage_relid)
{
	DynAccess	right = DynSecurityAccessOf(current_operation);
	Oid			caller = DynSecurityCaller();

	if (right == DYN_ACCESS_NONE)
		return;
	if (right == DYN_ACCESS_CREATE)
	{
		/* CreateTable looks its name up to refuse an existing table */
		if (!DynSecurityHasRight(caller, NULL, InvalidOid, DYN_ACCESS_CREATE))
			DynSecurityDeny(name);
		return;
	}
	if (!OidIsValid(storage_relid))
	{
		if (!DynSecurityIsAccountAdmin(caller))
			DynSecurityDeny(name);
		return;
	}
	if (!DynSecurityHasRight(caller, name, storage_relid, right))
		DynSecurityDeny(name);
	/* an item operation running as a LeadingKeys-restricted caller: not on distributed storage */
	if (GetUserId() == caller && !superuser_arg(caller) && DynSecurityRunsAsCaller(current_operation) &&
		citus_present() && storage_distributed(storage_relid))
		DynSecurityDeny(name);
}

/*
 * Switch to the extension owner with a safe search path (pg_catalog only:
 * every name dynindex uses is schema-qualified, and a caller's search_path
 * must not resolve the functions and operators of statements run with the
 * owner's rights).  A superuser caller already holds every right: nothing
 * to switch.  The search path ends with the (sub)transaction on error
 * (common/pg_compat.h: an override search path up to PostgreSQL 16, the
 * search_path setting at a new nesting level from 17).
 */
void
DynSecurityBeginInternal(DynSecurityState *s)
{
	GetUserIdAndSecContext(&s->save_userid, &s->save_sec_context);
	s->switched = !superuser_arg(s->save_userid);
	if (!s->switched)
		return;
	s->search_path_level = DynPushCatalogSearchPath();
	SetUserIdAndSecContext(extension_owner(), s->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

/* Back to the caller. */
void
DynSecurityEndInternal(DynSecurityState *s)
{
	if (!s->switched)
		return;
	SetUserIdAndSecContext(s->save_userid, s->save_sec_context);
	DynPopCatalogSearchPath(s->search_path_level);
}
