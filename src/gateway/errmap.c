/*
 * errmap.c — PostgreSQL errors raised by dynindex.api() -> DynamoDB errors.
 *
 * The extension raises "<ErrorType>: <message>" with a SQLSTATE of class YD
 * (src/common/errors.c) and optional extra response members as a JSON object
 * in DETAIL.  Everything else is either a permission error (42501 ->
 * AccessDeniedException) or an InternalServerError (HTTP 500).
 */
#include "gateway.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Error types DynamoDB sends from its service framework, not the API. */
static const char *const service_errors[] = {
	"SerializationException",
	"UnknownOperationException",
	"MissingAuthenticationTokenException",
	"InvalidSignatureException",
	"IncompleteSignatureException",
	"UnrecognizedClientException",
	"AccessDeniedException",
	"RequestEntityTooLarge",
	NULL
};

const char *
gw_error_namespace(const char *name)
{
	if (strcmp(name, "ValidationException") == 0)
		return "com.amazon.coral.validate#";
	for (int i = 0; service_errors[i]; i++)
		if (strcmp(name, service_errors[i]) == 0)
			return "com.amazon.coral.service#";
	return "com.amazonaws.dynamodb.v20120810#";
}

/*
 * DynamoDB capitalises the message member of these errors: its service
 * framework's SerializationException ("Start of list found where not
 * expected") and AccessDeniedException (IAM's "User: arn:aws:iam::... is not
 * authorized to perform: ..."), and TransactionCanceledException.  The
 * framework's authentication errors (MissingAuthenticationTokenException,
 * IncompleteSignatureException, InvalidSignatureException,
 * UnrecognizedClientException) and DynamoDB's own exceptions use "message".
 */
static bool
capital_message(const char *name)
{
	return strcmp(name, "TransactionCanceledException") == 0 ||
		strcmp(name, "SerializationException") == 0 ||
		strcmp(name, "AccessDeniedException") == 0;
}

/* If s (trimmed) is a JSON object with at least one member, return a pointer to
 * its members (after '{') and their length (up to the final '}'). */
static bool
object_members(const char *s, const char **start, size_t *len)
{
	const char *b;
	const char *e;

	if (s == NULL)
		return false;
	b = s;
	while (isspace((unsigned char) *b))
		b++;
	if (*b != '{')
		return false;
	e = b + strlen(b);
	while (e > b && isspace((unsigned char) e[-1]))
		e--;
	if (e - b < 2 || e[-1] != '}')
		return false;
	b++;
	e--;
	while (b < e && isspace((unsigned char) *b))
		b++;
	if (b == e)
		return false;
	*start = b;
	*len = (size_t) (e - b);
	return true;
}

/*
 * Strings holding U+0000 travel escaped in the extension's messages and
 * DETAIL (U+0000 as U+E000 '0', U+E000 as U+E000 'E'; src/types/nulstr.c).
 * They only occur inside JSON strings of the error body: turn them back.
 */
static void
nul_unescape(GwError *e)
{
	static const char esc[] = "\xEE\x80\x80";
	Buf			b;
	size_t		i = 0;

	if (memmem(e->body, e->body_len, esc, 3) == NULL)
		return;
	buf_init(&b);
	while (i < e->body_len)
	{
		if (i + 3 < e->body_len && memcmp(e->body + i, esc, 3) == 0 &&
			(e->body[i + 3] == '0' || e->body[i + 3] == 'E'))
		{
			if (e->body[i + 3] == '0')
				buf_puts(&b, "\\u0000");
			else
				buf_append(&b, esc, 3);
			i += 4;
		}
		else
			buf_append(&b, e->body + i++, 1);
	}
	if (b.data)
	{
		free(e->body);
		e->body = buf_steal(&b, &e->body_len);
	}
	else
		buf_free(&b);
}

void
gw_error_make(GwError *e, const char *name, const char *message, const char *detail_json)
{
	Buf			b;
	const char *members;
	size_t		mlen;

	buf_init(&b);
	buf_puts(&b, "{\"__type\":");
	{
		Buf			t;

		buf_init(&t);
		buf_puts(&t, gw_error_namespace(name));
		buf_puts(&t, name);
		buf_json_string(&b, t.data ? t.data : name);
		buf_free(&t);
	}
	if (message)
	{
		buf_puts(&b, capital_message(name) ? ",\"Message\":" : ",\"message\":");
		buf_json_string(&b, message);
	}
	if (object_members(detail_json, &members, &mlen))
	{
		buf_puts(&b, ",");
		buf_append(&b, members, mlen);
	}
	buf_puts(&b, "}");
	snprintf(e->type, sizeof(e->type), "%s", name);
	if (strcmp(name, "InternalServerError") == 0)
		e->status = 500;
	else
		e->status = 400;
	e->body = buf_steal(&b, &e->body_len);
	if (e->body)
		e->body_len = gw_json_compact(e->body, e->body_len);	/* DETAIL is jsonb output */
	if (e->body)
		nul_unescape(e);
	if (e->body == NULL)
	{
		e->status = 500;
		snprintf(e->type, sizeof(e->type), "InternalServerError");
		e->body = strdup("{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\",\"message\":\"Internal server error\"}");
		e->body_len = e->body ? strlen(e->body) : 0;
	}
}

/* Is name a plausible error type name (letters and digits)? */
static bool
valid_type_name(const char *s, size_t n)
{
	if (n == 0 || n > 100)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char) s[i]))
			return false;
	return true;
}

void
gw_error_from_pg(GwError *e, const char *sqlstate, const char *message,
				 const char *detail, const char *op, const char *table,
				 const char *principal, const char *region)
{
	if (sqlstate && strncmp(sqlstate, "YD", 2) == 0 && message)
	{
		const char *colon = strstr(message, ": ");
		size_t		n = colon ? (size_t) (colon - message) : 0;

		if (colon && valid_type_name(message, n))
		{
			char		name[101];

			memcpy(name, message, n);
			name[n] = '\0';
			gw_error_make(e, name, colon + 2, detail);
			if (strcmp(sqlstate, "YD500") == 0)
				e->status = 500;
			else if (strcmp(sqlstate, "YD503") == 0)
				e->status = 503;	/* ServiceUnavailable: a write sent to a standby */
			return;
		}
		/* A YD error without the "<Type>: " prefix: keep the text. */
		gw_error_make(e, strcmp(sqlstate, "YD500") == 0 ? "InternalServerError" : "ValidationException",
					  message, detail);
		return;
	}
	if (sqlstate && strcmp(sqlstate, "42501") == 0 && message &&
		strncmp(message, "AccessDeniedException: User: ", 29) == 0)
	{
		/*
		 * The extension's own check (src/security/) names the table it
		 * denied (in a batch or transaction, the one that failed); the ARN
		 * takes the request's region, as the other resource ARNs do.
		 */
		Buf			m;
		const char *text = message + 23;
		const char *arn = strstr(text, " on resource: arn:aws:dynamodb:");

		buf_init(&m);
		if (arn && region && *region && strchr(arn + 31, ':'))
		{
			buf_append(&m, text, (size_t) (arn - text) + 31);
			buf_puts(&m, region);
			buf_puts(&m, strchr(arn + 31, ':'));
		}
		else
			buf_puts(&m, text);
		gw_error_make(e, "AccessDeniedException", m.data ? m.data : "Access denied", NULL);
		buf_free(&m);
		return;
	}
	if (sqlstate && strcmp(sqlstate, "42501") == 0)
	{
		Buf			m;
		const char *who = (principal && *principal) ? principal : "dynindex-gateway";
		const char *action = (op && *op) ? op : "*";
		const char *account = gw_config.account_id ? gw_config.account_id : "000000000000";

		buf_init(&m);
		buf_printf(&m, "User: arn:aws:iam::%s:user/%s is not authorized to perform: dynamodb:%s on resource: ",
				   account, who, action);
		/* the tagging operations name their table by its ARN */
		if (table && strncmp(table, "arn:", 4) == 0)
			buf_puts(&m, table);
		else
			buf_printf(&m, "arn:aws:dynamodb:%s:%s:table/%s",
					   (region && *region) ? region : "us-east-1", account,
					   (table && *table) ? table : "*");
		buf_printf(&m, " because no identity-based policy allows the dynamodb:%s action", action);
		gw_error_make(e, "AccessDeniedException", m.data ? m.data : "Access denied", NULL);
		buf_free(&m);
		return;
	}
	gw_error_make(e, "InternalServerError", "Internal server error", NULL);
}
