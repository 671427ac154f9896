/*
 * export.h — table exports in DynamoDB's layout and formats
 * (docs/import-export.md, "Export"): the background job that writes an
 * export (export.c) and the item encoders (json_write.c: DynamoDB JSON,
 * ion_write.c: Amazon Ion text).
 *
 * An export is a row of dynindex.exports (export_id = its job's id in
 * dynindex.jobs), recorded by ExportTableToPointInTime (src/api/exports.c);
 * the job runner (src/worker/jobs.c) calls DynExportRun in the job's own
 * process and DynExportFail when the run failed or cannot run again.
 *
 * Files, under <S3Prefix>/AWSDynamoDB/<ExportId>/ of the bucket's store:
 *   _started                        empty, first (the store is writable)
 *   data/<name>.json.gz | .ion.gz   full exports: the items as of ExportTime
 *   manifest-files.json (+ .checksum: MD5 hex)   one JSON line per data file
 *   manifest-summary.json (+ .checksum)          written last
 * Incremental exports write their data files under <S3Prefix>/AWSDynamoDB/data/
 * (shared by incremental exports), one line per changed key.
 */
#ifndef DYNINDEX_EXPORT_H
#define DYNINDEX_EXPORT_H

#include "lib/stringinfo.h"
#include "utils/jsonb.h"

/* ---- export.c ---- */

/* dynindex.export_nice: the export job's CPU priority (nice value, 0 = the server's) */
extern int	dynindex_export_nice;
/* dynindex.export_sched_idle: run the export job under SCHED_IDLE (Linux); export_nice otherwise */
extern bool dynindex_export_sched_idle;
/* dynindex.export_yield: percent of its time the export job pauses while other sessions write */
extern int	dynindex_export_yield;
/* dynindex.export_file_size: uncompressed bytes (MB) after which a new data file is started */
extern int	dynindex_export_file_size_mb;

/* Run export job id (in the job's process, outside a transaction). */
extern void DynExportRun(int64 id);
/* Mark export job id FAILED with a failure message ("<S3Code>: <text>" gives FailureCode S3Code). */
extern void DynExportFail(int64 id, const char *message);

/* ---- json_write.c ---- */

/* Append an item (a map of AttributeValues) as compact DynamoDB JSON text (U+0000 restored). */
extern void DynExportJsonItem(StringInfo out, Jsonb *item);

/* ---- ion_write.c ---- */

/* Append an item (a map of AttributeValues) as an Amazon Ion text struct. */
extern void DynIonWriteItem(StringInfo out, JsonbContainer *item);
/* Append an Ion text value of one AttributeValue ({"S": ...}, {"N": ...}, ...). */
extern void DynIonWriteValue(StringInfo out, JsonbContainer *attrvalue);

#endif
