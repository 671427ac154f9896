/*
 * errors.h — DynamoDB error types raised as PostgreSQL errors.
 *
 * A failed request raises ERROR with message "<ErrorType>: <DynamoDB message>"
 * and a SQLSTATE of class YD assigned per error type (docs/errors.md).  Extra
 * response members (for example the old Item of a ConditionalCheckFailed, or a
 * transaction's CancellationReasons) travel as a JSON object in DETAIL.
 */
#ifndef DYNINDEX_ERRORS_H
#define DYNINDEX_ERRORS_H

#include "common/pg_compat.h"

typedef enum DynErrorCode
{
	DYN_ERR_VALIDATION = 0,
	DYN_ERR_RESOURCE_NOT_FOUND,
	DYN_ERR_RESOURCE_IN_USE,
	DYN_ERR_CONDITIONAL_CHECK_FAILED,
	DYN_ERR_TRANSACTION_CANCELED,
	DYN_ERR_TRANSACTION_CONFLICT,
	DYN_ERR_LIMIT_EXCEEDED,
	DYN_ERR_ITEM_COLLECTION_SIZE_LIMIT_EXCEEDED,
	DYN_ERR_PROVISIONED_THROUGHPUT_EXCEEDED,
	DYN_ERR_REQUEST_LIMIT_EXCEEDED,
	DYN_ERR_UNKNOWN_OPERATION,
	DYN_ERR_SERIALIZATION,
	DYN_ERR_ACCESS_DENIED,
	DYN_ERR_IDEMPOTENT_PARAMETER_MISMATCH,
	DYN_ERR_TRANSACTION_IN_PROGRESS,
	DYN_ERR_INTERNAL_SERVER_ERROR,
	/* backups (src/api/backups.c) */
	DYN_ERR_TABLE_NOT_FOUND,
	DYN_ERR_TABLE_ALREADY_EXISTS,
	DYN_ERR_BACKUP_NOT_FOUND,
	DYN_ERR_BACKUP_IN_USE,
	DYN_ERR_CONTINUOUS_BACKUPS_UNAVAILABLE,
	/* point-in-time recovery (src/api/pitr.c) */
	DYN_ERR_POINT_IN_TIME_RECOVERY_UNAVAILABLE,
	DYN_ERR_INVALID_RESTORE_TIME,
	DYN_ERR_SOURCE_TABLE_NOT_FOUND,
	DYN_ERR_DUPLICATE_ITEM,		/* PartiQL INSERT of an existing item */
	DYN_ERR_EXPIRED_ITERATOR,	/* DynamoDB Streams */
	DYN_ERR_TRIMMED_DATA_ACCESS,	/* DynamoDB Streams */
	DYN_ERR_SERVICE_UNAVAILABLE,	/* a write sent to a hot standby (src/api/api.c), a GSI not caught up (indexes/gsi_wait.c) */
	DYN_ERR_IMPORT_NOT_FOUND,	/* DescribeImport (src/api/imports.c) */
	DYN_ERR_IMPORT_CONFLICT,	/* ImportTable: a ClientToken reused with other parameters */
	DYN_ERR_THROTTLING,			/* on-demand throughput exceeded (src/api/throughput.c) */
	/* exports (src/api/exports.c) */
	DYN_ERR_EXPORT_NOT_FOUND,
	DYN_ERR_EXPORT_CONFLICT,
	DYN_ERR_INVALID_EXPORT_TIME,
	/* global tables, the legacy operations (src/api/global_tables_legacy.c) */
	DYN_ERR_GLOBAL_TABLE_NOT_FOUND,
	DYN_ERR__COUNT
} DynErrorCode;

/* DynamoDB's name of an error type, e.g. "ValidationException". */
extern const char *DynErrorName(DynErrorCode code);

/* Raise a DynamoDB error; the message is printf-formatted. */
pg_noreturn extern void DynError(DynErrorCode code, const char *fmt,...)
			pg_attribute_printf(2, 3);

/*
 * ServiceUnavailable (HTTP 503, which the SDKs retry) with DynamoDB's text
 * ("The request has failed due to a temporary failure of the server.") and
 * a HINT of ours (printf-formatted).
 */
pg_noreturn extern void DynServiceUnavailable(const char *hint_fmt,...)
			pg_attribute_printf(1, 2);

/* Raise a DynamoDB error carrying extra response members (a JSON object text). */
pg_noreturn extern void DynErrorWithDetail(DynErrorCode code, const char *detail_json,
							   const char *fmt,...)
			pg_attribute_printf(3, 4);

/* Format a message from a va_list (palloc'd). */
extern char *DynFormatVA(const char *fmt, va_list args) pg_attribute_printf(1, 0);

/* dynindex.log_client_errors; DynErrorsInit registers it and the log hook (_PG_init). */
extern bool dynindex_log_client_errors;
extern void DynErrorsInit(void);

/* Shorthand for the most common case. */
#define DynValidationError(...) DynError(DYN_ERR_VALIDATION, __VA_ARGS__)

/*
 * DynamoDB words attribute value errors in one of two validation layers,
 * depending on the operation (docs/errors.md, "Validation layers"): the
 * current one (PutItem, UpdateItem, DeleteItem, GetItem, BatchGetItem, Query)
 * or the older one (the others).  Set per request by RqValidate.
 */
typedef enum DynValidationLayer
{
	DYN_LAYER_OLDER,
	DYN_LAYER_CURRENT
} DynValidationLayer;

extern DynValidationLayer DynValueLayer;

/*
 * While true, a ValidationException is reported inside DynamoDB's
 * "1 validation error detected: " envelope (PutItem, UpdateItem and DeleteItem
 * report their request validation so, until the table is looked up).
 */
extern bool DynValidationEnvelope;

#endif
