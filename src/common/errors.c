/*
 * errors.c — DynamoDB error types and their SQLSTATEs.
 */
#include "postgres.h"

#include "common/string.h"
#include "lib/stringinfo.h"
#include "utils/guc.h"

#include "common/errors.h"

typedef struct DynErrorInfo
{
	const char *name;
	char		sqlstate[6];
} DynErrorInfo;

/* Class YD is implementation-defined (SQL standard: classes I-Z are free). */
static const DynErrorInfo error_info[DYN_ERR__COUNT] = {
	[DYN_ERR_VALIDATION] = {"ValidationException", "YD001"},
	[DYN_ERR_RESOURCE_NOT_FOUND] = {"ResourceNotFoundException", "YD002"},
	[DYN_ERR_RESOURCE_IN_USE] = {"ResourceInUseException", "YD003"},
	[DYN_ERR_CONDITIONAL_CHECK_FAILED] = {"ConditionalCheckFailedException", "YD004"},
	[DYN_ERR_TRANSACTION_CANCELED] = {"TransactionCanceledException", "YD005"},
	[DYN_ERR_TRANSACTION_CONFLICT] = {"TransactionConflictException", "YD006"},
	[DYN_ERR_LIMIT_EXCEEDED] = {"LimitExceededException", "YD007"},
	[DYN_ERR_ITEM_COLLECTION_SIZE_LIMIT_EXCEEDED] = {"ItemCollectionSizeLimitExceededException", "YD008"},
	[DYN_ERR_PROVISIONED_THROUGHPUT_EXCEEDED] = {"ProvisionedThroughputExceededException", "YD009"},
	[DYN_ERR_REQUEST_LIMIT_EXCEEDED] = {"RequestLimitExceeded", "YD010"},
	[DYN_ERR_UNKNOWN_OPERATION] = {"UnknownOperationException", "YD011"},
	[DYN_ERR_SERIALIZATION] = {"SerializationException", "YD012"},
	[DYN_ERR_ACCESS_DENIED] = {"AccessDeniedException", "YD013"},
	[DYN_ERR_IDEMPOTENT_PARAMETER_MISMATCH] = {"IdempotentParameterMismatchException", "YD014"},
	[DYN_ERR_TRANSACTION_IN_PROGRESS] = {"TransactionInProgressException", "YD015"},
	[DYN_ERR_INTERNAL_SERVER_ERROR] = {"InternalServerError", "YD500"},
	[DYN_ERR_TABLE_NOT_FOUND] = {"TableNotFoundException", "YD030"},
	[DYN_ERR_TABLE_ALREADY_EXISTS] = {"TableAlreadyExistsException", "YD031"},
	[DYN_ERR_BACKUP_NOT_FOUND] = {"BackupNotFoundException", "YD032"},
	[DYN_ERR_BACKUP_IN_USE] = {"BackupInUseException", "YD033"},
	[DYN_ERR_CONTINUOUS_BACKUPS_UNAVAILABLE] = {"ContinuousBackupsUnavailableException", "YD034"},
	[DYN_ERR_POINT_IN_TIME_RECOVERY_UNAVAILABLE] = {"PointInTimeRecoveryUnavailableException", "YD035"},
	[DYN_ERR_INVALID_RESTORE_TIME] = {"InvalidRestoreTimeException", "YD036"},
	[DYN_ERR_SOURCE_TABLE_NOT_FOUND] = {"SourceTableNotFoundException", "YD037"},
	[DYN_ERR_DUPLICATE_ITEM] = {"DuplicateItemException", "YD020"},
	[DYN_ERR_EXPIRED_ITERATOR] = {"ExpiredIteratorException", "YD040"},
	[DYN_ERR_TRIMMED_DATA_ACCESS] = {"TrimmedDataAccessException", "YD041"},
	[DYN_ERR_SERVICE_UNAVAILABLE] = {"ServiceUnavailable", "YD503"},
	[DYN_ERR_IMPORT_NOT_FOUND] = {"ImportNotFoundException", "YD050"},
	[DYN_ERR_IMPORT_CONFLICT] = {"ImportConflictException", "YD051"},
	[DYN_ERR_THROTTLING] = {"ThrottlingException", "YD016"},
	[DYN_ERR_EXPORT_NOT_FOUND] = {"ExportNotFoundException", "YD060"},
	[DYN_ERR_EXPORT_CONFLICT] = {"ExportConflictException", "YD061"},
	[DYN_ERR_INVALID_EXPORT_TIME] = {"InvalidExportTimeException", "YD062"},
	[DYN_ERR_GLOBAL_TABLE_NOT_FOUND] = {"GlobalTableNotFoundException", "YD070"},
};

/* DynamoDB's name of an error type. */
const char *
DynErrorName(DynErrorCode code)
{
	Assert(code >= 0 && code < DYN_ERR__COUNT);
	return error_info[code].name;
}

DynValidationLayer DynValueLayer = DYN_LAYER_OLDER;
bool		DynValidationEnvelope = false;

pg_noreturn static void raise_error(DynErrorCode code, const char *detail_json, const char *msg);

/* Does msg already carry the "N validation error(s) detected" envelope? */
static bool
has_envelope(const char *msg)
{
	while (*msg >= '0' && *msg <= '9')
		msg++;
	return strncmp(msg, " validation error", 17) == 0;
}

/* Raise the error with an already formatted message. */
static void
raise_error(DynErrorCode code, const char *detail_json, const char *msg)
{
	const char *s = error_info[code].sqlstate;

	if (code == DYN_ERR_VALIDATION && DynValidationEnvelope && !has_envelope(msg))
		msg = psprintf("1 validation error detected: %s", msg);

	/*
	 * The extra members (an old Item, CancellationReasons with items) go to
	 * the client only: the server log gets a placeholder instead, so that
	 * item data never lands in it (errdetail_log replaces the DETAIL of the
	 * log line, the client still receives the full DETAIL).
	 */
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4])),
			 errmsg_internal("%s: %s", error_info[code].name, msg),
			 detail_json ? errdetail_internal("%s", detail_json) : 0,
			 detail_json ? errdetail_log("(%zu bytes of response members not logged)", strlen(detail_json)) : 0));
	pg_unreachable();
}

/* Format a message from a va_list (palloc'd). */
char *
DynFormatVA(const char *fmt, va_list args)
{
	size_t		len = 128;

	for (;;)
	{
		char	   *buf = palloc(len);
		va_list		copy;
		size_t		needed;

		va_copy(copy, args);
		needed = pvsnprintf(buf, len, fmt, copy);
		va_end(copy);
		if (needed < len)
			return buf;
		pfree(buf);
		len = needed;
	}
}

/* Raise a DynamoDB error. */
void
DynError(DynErrorCode code, const char *fmt,...)
{
	va_list		args;
	char	   *msg;

	va_start(args, fmt);
	msg = DynFormatVA(fmt, args);
	va_end(args);
	raise_error(code, NULL, msg);
}

/* ServiceUnavailable with DynamoDB's text (API reference, Common Errors) and a hint. */
void
DynServiceUnavailable(const char *hint_fmt,...)
{
	const char *s = error_info[DYN_ERR_SERVICE_UNAVAILABLE].sqlstate;
	va_list		args;
	char	   *hint;

	va_start(args, hint_fmt);
	hint = DynFormatVA(hint_fmt, args);
	va_end(args);
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4])),
			 errmsg_internal("%s: The request has failed due to a temporary failure of the server.",
							 error_info[DYN_ERR_SERVICE_UNAVAILABLE].name),
			 errhint("%s", hint)));
	pg_unreachable();
}

/* Raise a DynamoDB error with extra response members in DETAIL. */
void
DynErrorWithDetail(DynErrorCode code, const char *detail_json, const char *fmt,...)
{
	va_list		args;
	char	   *msg;

	va_start(args, fmt);
	msg = DynFormatVA(fmt, args);
	va_end(args);
	raise_error(code, detail_json, msg);
}

/* ---- client errors are traffic, not server errors ---- */

bool		dynindex_log_client_errors = false;
static emit_log_hook_type prev_emit_log_hook = NULL;

/*
 * Is e a DynamoDB client error, answered with HTTP 4xx: a YD error but
 * InternalServerError (YD500) and ServiceUnavailable (YD503), dynindex's own
 * AccessDeniedException, or a request body that is not JSON (parse_request_body
 * in api.c)?  PostgreSQL's own errors (permission denied by a policy, a
 * missing relation, a crash) are not: they say something about the server.
 */
static bool
client_error(const ErrorData *e)
{
	const char *s;

	if (e->elevel != ERROR)
		return false;
	s = unpack_sql_state(e->sqlerrcode);
	if (s[0] == 'Y' && s[1] == 'D')
		return strcmp(s, "YD500") != 0 && strcmp(s, "YD503") != 0;
	if (e->sqlerrcode == ERRCODE_INSUFFICIENT_PRIVILEGE)
		return e->message && strncmp(e->message, "AccessDeniedException: ", 23) == 0;
	return (ERRCODE_TO_CATEGORY(e->sqlerrcode) == ERRCODE_DATA_EXCEPTION ||
			ERRCODE_TO_CATEGORY(e->sqlerrcode) == ERRCODE_PROGRAM_LIMIT_EXCEEDED) &&
		e->context && strstr(e->context, "dynindex request body") != NULL;
}

/*
 * emit_log_hook: a DynamoDB client error goes to the client only, unless
 * dynindex.log_client_errors.  A busy table with optimistic locking answers
 * ConditionalCheckFailedException all day; as ERROR lines (with their
 * STATEMENT) they would bury the server's own errors in the log.
 */
static void
dyn_emit_log(ErrorData *e)
{
	if (e->output_to_server && !dynindex_log_client_errors && client_error(e))
		e->output_to_server = false;
	if (prev_emit_log_hook)
		prev_emit_log_hook(e);
}

/* Register dynindex.log_client_errors and the log hook. */
void
DynErrorsInit(void)
{
	DefineCustomBoolVariable("dynindex.log_client_errors",
							 "Write DynamoDB client errors (HTTP 4xx answers: ValidationException, ConditionalCheckFailedException, ...) to the server log as ERRORs.",
							 "Off: the caller gets them, the server log does not; InternalServerError and PostgreSQL's own errors are always logged.",
							 &dynindex_log_client_errors, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = dyn_emit_log;
}
