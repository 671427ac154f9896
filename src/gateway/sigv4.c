/*
 * sigv4.c — AWS Signature Version 4 (AWS4-HMAC-SHA256) verification.
 *
 * Canonical request, string to sign and signing key as AWS documents them
 * ("Create a signed AWS API request", SigV4).  The service is "dynamodb";
 * any region is accepted (the gateway serves them all).  As DynamoDB does
 * (it is not S3), the payload hash of the canonical request is always the
 * SHA-256 of the body received, whatever X-Amz-Content-Sha256 says: a
 * request signed with UNSIGNED-PAYLOAD, or a body replaced after signing,
 * fails with InvalidSignatureException ("The request signature we
 * calculated does not match ...").  Host must be signed; X-Amz-Date (or
 * Date) is within 15 minutes of the gateway's clock.
 */
#include "gateway.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define ALGORITHM "AWS4-HMAC-SHA256"
#define SKEW_SECONDS (15 * 60)

static void
to_hex(const unsigned char *d, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++)
	{
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * n] = '\0';
}

/*
 * SHA-256 and HMAC-SHA256 on a digest fetched once.  OpenSSL 3's one-shot
 * SHA256() and HMAC() look the algorithm up in the provider store (under a
 * lock) on every call; with six HMACs and two hashes per request that was a
 * tenth of the gateway's CPU in authenticated mode.  Each thread keeps its
 * own digest context.
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static pthread_key_t sha256_ctx_key;	/* frees a thread's context when it exits */
static __thread EVP_MD_CTX *sha256_ctx;

static void
sha256_ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void
sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (pthread_key_create(&sha256_ctx_key, sha256_ctx_free) != 0)
	{
		EVP_MD_free(sha256_md);
		sha256_md = NULL;		/* every call takes the fallback path */
	}
}

/* Hash the concatenation of two pieces (b may be NULL). */
static void
sha256_2(const void *a, size_t alen, const void *b, size_t blen, unsigned char out[32])
{
	unsigned int outlen = 32;

	pthread_once(&sha256_once, sha256_fetch);
	if (sha256_ctx == NULL && sha256_md != NULL)
	{
		sha256_ctx = EVP_MD_CTX_new();
		if (sha256_ctx && pthread_setspecific(sha256_ctx_key, sha256_ctx) != 0)
		{
			EVP_MD_CTX_free(sha256_ctx);
			sha256_ctx = NULL;
		}
	}
	if (sha256_md == NULL || sha256_ctx == NULL ||
		!EVP_DigestInit_ex2(sha256_ctx, sha256_md, NULL) ||
		!EVP_DigestUpdate(sha256_ctx, a, alen) ||
		(b && !EVP_DigestUpdate(sha256_ctx, b, blen)) ||
		!EVP_DigestFinal_ex(sha256_ctx, out, &outlen))
	{
		/* out of memory in OpenSSL: fall back to the one-shot call */
		EVP_MD_CTX *c = EVP_MD_CTX_new();

		memset(out, 0, 32);
		if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) && EVP_DigestUpdate(c, a, alen) &&
			(!b || EVP_DigestUpdate(c, b, blen)))
			EVP_DigestFinal_ex(c, out, &outlen);
		EVP_MD_CTX_free(c);
	}
}

void
sigv4_hex_sha256(const void *data, size_t len, char out[65])
{
	unsigned char md[32];

	sha256_2(data, len, NULL, 0, md);
	to_hex(md, sizeof(md), out);
}

/* HMAC-SHA256 (RFC 2104; block size 64). */
static void
hmac256(const unsigned char *key, size_t keylen, const char *msg, size_t msglen,
		unsigned char out[32])
{
	unsigned char k[64];
	unsigned char pad[64];
	unsigned char inner[32];

	memset(k, 0, sizeof(k));
	if (keylen > sizeof(k))
		sha256_2(key, keylen, NULL, 0, k);
	else
		memcpy(k, key, keylen);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_2(pad, 64, msg, msglen, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_2(pad, 64, inner, 32, out);
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
}

/*
 * The signing key depends only on the secret, the scope date, region and
 * service: each connection thread remembers the last one it derived (a
 * client keeps using one key), which saves four of the five HMACs.
 */
typedef struct SigningKeyCache
{
	unsigned char secret_hash[32];	/* of "AWS4" + secret, not the secret */
	char		scope[sizeof(((SigAuth *) 0)->date) + sizeof(((SigAuth *) 0)->region) +
					  sizeof(((SigAuth *) 0)->service) + sizeof(((SigAuth *) 0)->terminator)];
	unsigned char key[32];
	bool		valid;
} SigningKeyCache;

static __thread SigningKeyCache signing_cache;

static void
signing_key(const SigAuth *a, const Buf *k, unsigned char key[32])
{
	char		scope[sizeof(signing_cache.scope)];
	unsigned char h[32];

	snprintf(scope, sizeof(scope), "%s/%s/%s/%s", a->date, a->region, a->service, a->terminator);
	sha256_2(k->data, k->len, NULL, 0, h);
	if (signing_cache.valid && strcmp(signing_cache.scope, scope) == 0 &&
		CRYPTO_memcmp(signing_cache.secret_hash, h, 32) == 0)
	{
		memcpy(key, signing_cache.key, 32);
		return;
	}
	hmac256((unsigned char *) k->data, k->len, a->date, strlen(a->date), key);
	hmac256(key, 32, a->region, strlen(a->region), key);
	hmac256(key, 32, a->service, strlen(a->service), key);
	hmac256(key, 32, a->terminator, strlen(a->terminator), key);
	memcpy(signing_cache.secret_hash, h, 32);
	memcpy(signing_cache.scope, scope, sizeof(scope));
	memcpy(signing_cache.key, key, 32);
	signing_cache.valid = true;
}

bool
sigv4_equal(const char *a, const char *b)
{
	size_t		la = strlen(a);
	size_t		lb = strlen(b);

	if (la != lb)
		return false;
	return CRYPTO_memcmp(a, b, la) == 0;
}

void
sigv4_uri_encode(Buf *b, const char *s, bool encode_slash)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
			(*p == '/' && !encode_slash))
			buf_append(b, (const char *) p, 1);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

/* Append a header value trimmed, with runs of spaces collapsed to one. */
static void
append_trimmed(Buf *b, const char *v)
{
	bool		space = false;
	bool		any = false;

	for (; *v; v++)
	{
		if (*v == ' ' || *v == '\t')
		{
			space = true;
			continue;
		}
		if (space && any)
			buf_append(b, " ", 1);
		space = false;
		any = true;
		buf_append(b, v, 1);
	}
}

bool
sigv4_canonical_request(const SigRequest *r, const char *signed_headers, Buf *out)
{
	Buf			once;
	const char *p;

	buf_puts(out, r->method);
	buf_puts(out, "\n");
	/* Canonical URI: each path segment URI-encoded twice (non-S3 services). */
	buf_init(&once);
	sigv4_uri_encode(&once, (r->path && *r->path) ? r->path : "/", false);
	sigv4_uri_encode(out, once.data ? once.data : "/", false);
	buf_free(&once);
	buf_puts(out, "\n");
	buf_puts(out, r->canonical_query ? r->canonical_query : "");
	buf_puts(out, "\n");

	/* Canonical headers, in the order of SignedHeaders (which is sorted). */
	p = signed_headers;
	while (*p)
	{
		const char *end = strchr(p, ';');
		size_t		n = end ? (size_t) (end - p) : strlen(p);
		bool		first = true;

		buf_append(out, p, n);
		buf_puts(out, ":");
		for (int i = 0; i < r->nheaders; i++)
		{
			if (strlen(r->headers[i].name) == n &&
				strncasecmp(r->headers[i].name, p, n) == 0)
			{
				if (!first)
					buf_puts(out, ",");
				append_trimmed(out, r->headers[i].value);
				first = false;
			}
		}
		buf_puts(out, "\n");
		p += n;
		if (*p == ';')
			p++;
	}
	buf_puts(out, "\n");
	buf_puts(out, signed_headers);
	buf_puts(out, "\n");
	buf_puts(out, r->payload_hash);
	return !out->oom;
}

bool
sigv4_sign(const SigRequest *r, const SigAuth *a, const char *amz_date,
		   const char *secret, char out[65])
{
	Buf			creq;
	Buf			sts;
	Buf			k;
	char		creq_hash[65];
	unsigned char key[32];
	unsigned char sig[32];
	bool		ok;

	buf_init(&creq);
	buf_init(&sts);
	buf_init(&k);
	ok = sigv4_canonical_request(r, a->signed_headers, &creq);
	if (ok)
	{
		sigv4_hex_sha256(creq.data, creq.len, creq_hash);
		buf_printf(&sts, "%s\n%s\n%s/%s/%s/%s\n%s", ALGORITHM, amz_date,
				   a->date, a->region, a->service, a->terminator, creq_hash);
		buf_printf(&k, "AWS4%s", secret);
		ok = !sts.oom && !k.oom;
	}
	if (ok)
	{
		signing_key(a, &k, key);
		hmac256(key, 32, sts.data, sts.len, sig);
		to_hex(sig, 32, out);
		OPENSSL_cleanse(key, sizeof(key));
		OPENSSL_cleanse(k.data, k.len);
	}
	buf_free(&creq);
	buf_free(&sts);
	buf_free(&k);
	return ok;
}

/* Copy the value of "Name=value" from the parameter list; false if absent. */
static bool
auth_param(const char *params, const char *name, char *out, size_t outlen)
{
	size_t		nlen = strlen(name);
	const char *p = params;

	while (*p)
	{
		const char *end;
		size_t		n;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		end = p;
		while (*end && *end != ',' && *end != ' ' && *end != '\t')
			end++;
		n = (size_t) (end - p);
		if (n > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=')
		{
			size_t		vlen = n - nlen - 1;

			if (vlen == 0)
				return false;
			if (vlen >= outlen)
				vlen = outlen - 1;
			memcpy(out, p + nlen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		p = end;
	}
	return false;
}

SigStatus
sigv4_parse(const char *authorization, const char *amz_date, SigAuth *a,
			char *msg, size_t msglen)
{
	const char *h = authorization;
	char		algorithm[64];
	char		credential[512];
	size_t		n;
	const char *params;
	Buf			m;
	SigStatus	st = SIG_OK;

	memset(a, 0, sizeof(*a));
	msg[0] = '\0';
	if (h == NULL)
		return SIG_MISSING;
	while (*h == ' ')
		h++;
	if (strncmp(h, "AWS4-", 5) != 0)
		return SIG_MISSING;

	n = strcspn(h, " \t");
	if (n >= sizeof(algorithm))
		n = sizeof(algorithm) - 1;
	memcpy(algorithm, h, n);
	algorithm[n] = '\0';
	params = h + strcspn(h, " \t");

	buf_init(&m);
	if (!auth_param(params, "Credential", credential, sizeof(credential)))
		buf_puts(&m, "Authorization header requires 'Credential' parameter. ");
	if (!auth_param(params, "Signature", a->signature, sizeof(a->signature)))
		buf_puts(&m, "Authorization header requires 'Signature' parameter. ");
	if (!auth_param(params, "SignedHeaders", a->signed_headers, sizeof(a->signed_headers)))
		buf_puts(&m, "Authorization header requires 'SignedHeaders' parameter. ");
	if (amz_date == NULL)
		buf_puts(&m, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ");
	if (m.len)
	{
		buf_printf(&m, "Authorization=%s", authorization);
		snprintf(msg, msglen, "%s", m.data ? m.data : "");
		buf_free(&m);
		return SIG_INCOMPLETE;
	}
	buf_free(&m);

	if (strcmp(algorithm, ALGORITHM) != 0)
	{
		snprintf(msg, msglen, "Unsupported AWS 'algorithm': '%s' (only AWS4-HMAC-SHA256 for now). ",
				 algorithm);
		return SIG_INCOMPLETE;
	}

	/* Credential: keyid/date/region/service/terminator (trailing '/' ignored). */
	{
		char	   *parts[5];
		int			np = 0;
		char		copy[512];
		char	   *s;
		size_t		len;

		snprintf(copy, sizeof(copy), "%s", credential);
		len = strlen(copy);
		while (len > 0 && copy[len - 1] == '/')
			copy[--len] = '\0';
		s = copy;
		for (;;)
		{
			char	   *slash = strchr(s, '/');

			if (np < 5)
				parts[np] = s;
			np++;
			if (!slash)
				break;
			*slash = '\0';
			s = slash + 1;
		}
		if (np != 5)
		{
			snprintf(msg, msglen,
					 "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '%s'",
					 credential);
			return SIG_INCOMPLETE;
		}
		snprintf(a->access_key, sizeof(a->access_key), "%s", parts[0]);
		snprintf(a->date, sizeof(a->date), "%s", parts[1]);
		snprintf(a->region, sizeof(a->region), "%s", parts[2]);
		snprintf(a->service, sizeof(a->service), "%s", parts[3]);
		snprintf(a->terminator, sizeof(a->terminator), "%s", parts[4]);
		if (strlen(parts[1]) != 8)
			a->date[0] = '?';	/* cannot match the request date */
	}
	return st;
}

/* Parse YYYYMMDDTHHMMSSZ; -1 if malformed. */
static long
parse_amz_date(const char *d)
{
	struct tm	tm;

	if (d == NULL || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return -1;
	for (int i = 0; i < 15; i++)
		if (i != 8 && !isdigit((unsigned char) d[i]))
			return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (d[0] - '0') * 1000 + (d[1] - '0') * 100 + (d[2] - '0') * 10 + (d[3] - '0') - 1900;
	tm.tm_mon = (d[4] - '0') * 10 + (d[5] - '0') - 1;
	tm.tm_mday = (d[6] - '0') * 10 + (d[7] - '0');
	tm.tm_hour = (d[9] - '0') * 10 + (d[10] - '0');
	tm.tm_min = (d[11] - '0') * 10 + (d[12] - '0');
	tm.tm_sec = (d[13] - '0') * 10 + (d[14] - '0');
	if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
		tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	return (long) timegm(&tm);
}

static void
fmt_amz_date(long t, char out[17])
{
	time_t		tt = (time_t) t;
	struct tm	tm;

	gmtime_r(&tt, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

SigStatus
sigv4_check_scope(const SigAuth *a, const char *amz_date, long now,
				  char *msg, size_t msglen)
{
	long		t = parse_amz_date(amz_date);
	Buf			m;
	bool		host_signed = false;

	if (t < 0)
	{
		snprintf(msg, msglen,
				 "Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601",
				 amz_date ? amz_date : "");
		return SIG_INCOMPLETE;
	}
	if (t < now - SKEW_SECONDS || t > now + SKEW_SECONDS)
	{
		char		nowbuf[17];
		char		limit[17];

		fmt_amz_date(now, nowbuf);
		if (t < now - SKEW_SECONDS)
		{
			fmt_amz_date(now - SKEW_SECONDS, limit);
			snprintf(msg, msglen, "Signature expired: %s is now earlier than %s (%s - 15 min.)",
					 amz_date, limit, nowbuf);
		}
		else
		{
			fmt_amz_date(now + SKEW_SECONDS, limit);
			snprintf(msg, msglen, "Signature not yet current: %s is still later than %s (%s + 15 min.)",
					 amz_date, limit, nowbuf);
		}
		return SIG_INVALID;
	}

	for (const char *p = a->signed_headers; *p;)
	{
		size_t		n = strcspn(p, ";");

		if (n == 4 && strncasecmp(p, "host", 4) == 0)
			host_signed = true;
		p += n;
		if (*p == ';')
			p++;
	}
	if (!host_signed)
	{
		/* DynamoDB's wording since 2022 (aws/aws-sdk-php#2469: GetItem on dynamodb.us-west-1) */
		snprintf(msg, msglen, "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
		return SIG_INVALID;
	}

	buf_init(&m);
	if (strcmp(a->service, "dynamodb") != 0)
		buf_puts(&m, "Credential should be scoped to correct service: 'dynamodb'. ");
	if (strcmp(a->terminator, "aws4_request") != 0)
		buf_printf(&m, "Credential should be scoped with a valid terminator: 'aws4_request', not '%s'. ",
				   a->terminator);
	if (strncmp(a->date, amz_date, 8) != 0)
		buf_printf(&m, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%.8s', from '%s'.",
				   a->date, amz_date, amz_date);
	if (m.len)
	{
		size_t		len = m.len;

		/* drop a trailing space */
		if (m.data[len - 1] == ' ')
			m.data[len - 1] = '\0';
		snprintf(msg, msglen, "%s", m.data);
		buf_free(&m);
		return SIG_INVALID;
	}
	buf_free(&m);
	return SIG_OK;
}
