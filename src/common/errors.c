/*
 * errors.c — DynamoDB error types and their SQLSTATEs.
 */
#include "postgres.h"

#include "common/string.h"
#include "lib/stringinfo.h"

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
	[DYN_ERR_DUPLICATE_ITEM] = {"DuplicateItemException", "YD020"},
	[DYN_ERR_EXPIRED_ITERATOR] = {"ExpiredIteratorException", "YD040"},
	[DYN_ERR_TRIMMED_DATA_ACCESS] = {"TrimmedDataAccessException", "YD041"},
	[DYN_ERR_SERVICE_UNAVAILABLE] = {"ServiceUnavailable", "YD503"},
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
