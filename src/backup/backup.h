/*
 * backup.h — the storage side of on-demand backups: the item copy of a
 * backup (dynindex_backups.b<num>: pk, sk, size, item) and the restore of
 * such a copy into a new table, its secondary indexes built in the same
 * transaction.  The operations themselves are in src/api/backups.c.
 */
#ifndef DYNINDEX_BACKUP_H
#define DYNINDEX_BACKUP_H

#include "catalog/dyn_catalog.h"

/* Schema holding the item copies of backups. */
#define DYN_BACKUP_SCHEMA "dynindex_backups"

/* ---- backup.c ---- */

/*
 * Copy every item of a table's storage into a new relation copy (one
 * statement: one MVCC snapshot); return the copy's item count and bytes.
 */
extern void DynBackupCopyItems(const char *storage, const char *copy, int64 *count, int64 *bytes);
/* Drop a backup's item copy. */
extern void DynBackupDropCopy(const char *copy);
/*
 * Fill a new, empty table from a backup's item copy and build every
 * secondary index (LSIs and GSIs) of the table from its items.
 */
extern void DynBackupRestoreItems(DynTable *t, const char *copy);

#endif
