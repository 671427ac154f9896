/*
 * s3sign.c — AWS Signature Version 4 of the S3 client's requests
 * (docs/import-export.md, "Signing").
 *
 * dynindex signs its S3 requests itself, for every libcurl: libcurl's own
 * signer (CURLOPT_AWS_SIGV4) rewrites the query string before signing it,
 * differently from one version to the next, and libcurl 8.14 (Debian 13)
 * signs a '+' of a query value ("%2B" in the URL, as in a continuation
 * token) as a space ("%20"): S3 then answers SignatureDoesNotMatch, and no
 * spelling of a '+' in the URL makes it sign what S3 computes.  Here the
 * caller gives the canonical path and query it sends, byte for byte, and the
 * headers it signs; the signature is AWS's header-based SigV4 for service
 * "s3" ("Authenticating Requests: Using the Authorization Header"), checked
 * against the examples of S3's documentation (sql/93_object_stores.sql).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "exchange/objstore_int.h"

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"

/* Lower-case hex of n bytes. */
static void
to_hex(const uint8 *d, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++)
	{
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Lower-case hex SHA-256 of data (S3's payload hash, the canonical request's hash). */
void
DynS3Sha256Hex(const char *data, size_t len, char out[65])
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute SHA-256");
	pg_cryptohash_free(ctx);
	to_hex(digest, sizeof(digest), out);
}

/* HMAC-SHA256 of data under key, into out (32 bytes). */
static void
hmac_sha256(const uint8 *key, size_t keylen, const char *data, uint8 out[PG_SHA256_DIGEST_LENGTH])
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);

	if (ctx == NULL || pg_hmac_init(ctx, key, keylen) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) data, strlen(data)) < 0 ||
		pg_hmac_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute HMAC-SHA256");
	pg_hmac_free(ctx);
}

/* RFC 3986's unreserved characters, which SigV4 never encodes. */
static bool
unreserved(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_' || c == '.' || c == '~';
}

/* The value of an upper-case hex digit, or -1. */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* True for a query string in SigV4's canonical form (what we send is what we sign). */
static bool
query_is_canonical(const char *q)
{
	const char *prev = NULL;
	size_t		prevlen = 0;

	if (q[0] == '\0')
		return true;
	for (;;)
	{
		const char *name = q;
		size_t		namelen = 0;
		bool		eq = false;

		for (; *q && *q != '&'; q++)
		{
			if (*q == '=')
			{
				if (eq || q == name)
					return false;
				eq = true;
				namelen = q - name;
			}
			else if (*q == '%')
			{
				/* upper-case hex, and only of a byte that must be encoded */
				if (hexval(q[1]) < 0 || hexval(q[2]) < 0 || unreserved(hexval(q[1]) * 16 + hexval(q[2])))
					return false;
				q += 2;
			}
			else if (!unreserved((unsigned char) *q))
				return false;
		}
		if (!eq)
			return false;		/* "name=" even without a value */
		/* names in byte order (the same name twice: values in order too) */
		if (prev != NULL)
		{
			int			c = strncmp(prev, name, Min(prevlen, namelen));

			if (c > 0 || (c == 0 && prevlen > namelen))
				return false;
		}
		prev = name;
		prevlen = namelen;
		if (*q == '\0')
			return true;
		q++;
	}
}

/* A header to sign: lower-case name, value. */
typedef struct SignedHeader
{
	char	   *name;
	const char *value;
} SignedHeader;

/* Order of headers by name (the canonical request's order). */
static int
header_cmp(const void *a, const void *b)
{
	return strcmp(((const SignedHeader *) a)->name, ((const SignedHeader *) b)->name);
}

/* A header's canonical value: trimmed, every run of spaces and tabs made one space. */
static void
append_canonical_value(StringInfo out, const char *v)
{
	bool		space = false;

	while (*v == ' ' || *v == '\t')
		v++;
	for (; *v; v++)
	{
		if (*v == ' ' || *v == '\t')
			space = true;
		else
		{
			if (space)
				appendStringInfoChar(out, ' ');
			space = false;
			appendStringInfoChar(out, *v);
		}
	}
}

/*
 * The Authorization header's value of an S3 request: method; path and query
 * exactly as sent (the path URI-encoded with '/' kept; the query canonical:
 * names sorted, RFC 3986 encoding with upper-case hex, "name=" for no value —
 * anything else is a bug of the caller and an error); the headers to sign as
 * "Name: value" (host, x-amz-content-sha256 and x-amz-date among them, each
 * name once); the payload hash; amz_date the request's X-Amz-Date
 * (YYYYMMDDTHHMMSSZ).  The secret only keys the HMACs.
 */
char *
DynS3Authorization(const char *method, const char *path, const char *query,
				   const char *const *headers, int nheaders, const char *payload_hash,
				   const char *amz_date, const char *key_id, const char *secret, const char *region)
{
	SignedHeader *h = palloc(sizeof(SignedHeader) * Max(nheaders, 1));
	StringInfoData canon;
	StringInfoData names;
	StringInfoData to_sign;
	char		date[9];
	char		hash[65];
	char	   *kdate;
	uint8		k1[PG_SHA256_DIGEST_LENGTH];
	uint8		k2[PG_SHA256_DIGEST_LENGTH];
	char		signature[2 * PG_SHA256_DIGEST_LENGTH + 1];
	char	   *auth;

	if (strlen(amz_date) != 16 || amz_date[8] != 'T' || amz_date[15] != 'Z')
		elog(ERROR, "an X-Amz-Date is YYYYMMDDTHHMMSSZ");
	if (path[0] != '/')
		elog(ERROR, "an S3 request's path starts with '/'");
	if (!query_is_canonical(query))
		elog(ERROR, "an S3 request's query string is not canonical: \"%s\"", query);
	for (int i = 0; i < nheaders; i++)
	{
		const char *colon = strchr(headers[i], ':');

		if (colon == NULL || colon == headers[i])
			elog(ERROR, "a header to sign is \"Name: value\"");
		h[i].name = pnstrdup(headers[i], colon - headers[i]);
		for (char *p = h[i].name; *p; p++)
			*p = pg_ascii_tolower((unsigned char) *p);
		h[i].value = colon + 1;
	}
	qsort(h, nheaders, sizeof(SignedHeader), header_cmp);

	initStringInfo(&canon);
	initStringInfo(&names);
	appendStringInfo(&canon, "%s\n%s\n%s\n", method, path, query);
	for (int i = 0; i < nheaders; i++)
	{
		if (i > 0 && strcmp(h[i - 1].name, h[i].name) == 0)
			elog(ERROR, "header \"%s\" is signed twice", h[i].name);
		appendStringInfo(&canon, "%s:", h[i].name);
		append_canonical_value(&canon, h[i].value);
		appendStringInfoChar(&canon, '\n');
		appendStringInfo(&names, "%s%s", i > 0 ? ";" : "", h[i].name);
	}
	appendStringInfo(&canon, "\n%s\n%s", names.data, payload_hash);
	DynS3Sha256Hex(canon.data, canon.len, hash);

	memcpy(date, amz_date, 8);
	date[8] = '\0';
	initStringInfo(&to_sign);
	appendStringInfo(&to_sign, SIGV4_ALGORITHM "\n%s\n%s/%s/s3/aws4_request\n%s", amz_date, date, region, hash);

	/* the signing key: HMAC("AWS4" + secret, date), then region, service, "aws4_request" */
	kdate = psprintf("AWS4%s", secret);
	hmac_sha256((const uint8 *) kdate, strlen(kdate), date, k1);
	explicit_bzero(kdate, strlen(kdate));
	pfree(kdate);
	hmac_sha256(k1, sizeof(k1), region, k2);
	hmac_sha256(k2, sizeof(k2), "s3", k1);
	hmac_sha256(k1, sizeof(k1), "aws4_request", k2);
	hmac_sha256(k2, sizeof(k2), to_sign.data, k1);
	to_hex(k1, sizeof(k1), signature);
	explicit_bzero(k1, sizeof(k1));
	explicit_bzero(k2, sizeof(k2));

	auth = psprintf(SIGV4_ALGORITHM " Credential=%s/%s/%s/s3/aws4_request, SignedHeaders=%s, Signature=%s",
					key_id, date, region, names.data, signature);
	pfree(canon.data);
	pfree(names.data);
	pfree(to_sign.data);
	for (int i = 0; i < nheaders; i++)
		pfree(h[i].name);
	pfree(h);
	return auth;
}

PG_FUNCTION_INFO_V1(dynindex__s3_authorization);

/*
 * dynindex._s3_authorization(method, path, query, headers text[],
 * payload_hash, amz_date, access_key_id, secret_access_key, region) RETURNS
 * text: the Authorization header the S3 client sends for that request.  For
 * the tests (S3's documented examples); the client never takes a secret from
 * SQL but from dynindex.object_stores.
 */
Datum
dynindex__s3_authorization(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(3);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	const char **headers;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	headers = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("a header cannot be null")));
		headers[i] = TextDatumGetCString(elems[i]);
	}
	PG_RETURN_TEXT_P(cstring_to_text(DynS3Authorization(text_to_cstring(PG_GETARG_TEXT_PP(0)),
														text_to_cstring(PG_GETARG_TEXT_PP(1)),
														text_to_cstring(PG_GETARG_TEXT_PP(2)),
														headers, n,
														text_to_cstring(PG_GETARG_TEXT_PP(4)),
														text_to_cstring(PG_GETARG_TEXT_PP(5)),
														text_to_cstring(PG_GETARG_TEXT_PP(6)),
														text_to_cstring(PG_GETARG_TEXT_PP(7)),
														text_to_cstring(PG_GETARG_TEXT_PP(8)))));
}
