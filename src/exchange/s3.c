/*
 * s3.c — S3-compatible object stores through libcurl (docs/import-export.md,
 * "Object stores"): PUT, multipart upload (CreateMultipartUpload, UploadPart,
 * CompleteMultipartUpload, AbortMultipartUpload), ranged GET, ListObjectsV2
 * with continuation tokens.
 *
 * Requests are signed with AWS Signature Version 4 by dynindex itself
 * (s3sign.c), not by libcurl (CURLOPT_AWS_SIGV4): libcurl rewrites the
 * query string before signing it, differently from one version to the next,
 * and 8.14 (Debian 13) signs a '+' of a query value as a space, so S3
 * refused its listings of any continuation token with a '+'.  We write every
 * path and query string already canonical (keys URI-encoded with '/' kept;
 * names sorted, values URI-encoded, "name=" for a name without value), send
 * them as they are (CURLOPT_PATH_AS_IS: no dot-segment removal either) with
 * our own Host, X-Amz-Date and x-amz-content-sha256 headers, and sign exactly
 * that.  The secret never reaches libcurl, nor any message; verbose output
 * stays off.
 *
 * Memory: an upload holds one part (dynindex.s3_part_size), a reader one
 * ranged GET of the same size, a listing one page.  libcurl never sees a
 * PostgreSQL error: its callbacks only copy bytes and report interrupts,
 * which are then served after curl returns.
 */
#include "postgres.h"

#include <curl/curl.h>
#include <time.h>

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "exchange/objstore_int.h"

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* attempts of a request that failed to connect, lost its connection or got a 5xx */
#define S3_ATTEMPTS 3

/* A response: status, body (bounded), the headers we need. */
typedef struct S3Response
{
	long		status;
	char	   *body;
	size_t		len;
	size_t		cap;
	size_t		limit;			/* more than this fails the request */
	bool		overflow;
	char		etag[256];
	char		content_range[128];
	MemoryContext cxt;
} S3Response;

/* What an upload sends. */
typedef struct S3Upload
{
	const char *data;
	size_t		len;
	size_t		pos;
} S3Upload;

static bool curl_ready = false;

/* Release a store's curl handle with its memory context. */
static void
curl_cleanup_cb(void *arg)
{
	DynObjStore *s = arg;

	if (s->curl)
		curl_easy_cleanup((CURL *) s->curl);
	s->curl = NULL;
}

/* The store's curl handle (one per store: connections are kept alive). */
static CURL *
store_curl(DynObjStore *s)
{
	if (!curl_ready)
	{
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			DynObjFail(DYN_OBJ_UNAVAILABLE, "Could not initialize libcurl");
		curl_ready = true;
	}
	if (s->curl == NULL)
	{
		MemoryContextCallback *cb = MemoryContextAllocZero(GetMemoryChunkContext(s), sizeof(MemoryContextCallback));

		s->curl = curl_easy_init();
		if (s->curl == NULL)
			DynObjFail(DYN_OBJ_UNAVAILABLE, "Could not initialize libcurl");
		cb->func = curl_cleanup_cb;
		cb->arg = s;
		MemoryContextRegisterResetCallback(GetMemoryChunkContext(s), cb);
	}
	return (CURL *) s->curl;
}

/* Append to a response body (curl's write callback: no PostgreSQL error may escape). */
static size_t
body_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	S3Response *r = userdata;
	size_t		n = size * nmemb;

	if (r->len + n > r->limit)
	{
		r->overflow = true;
		return 0;
	}
	if (r->len + n + 1 > r->cap)
	{
		size_t		cap = Max(r->cap * 2, r->len + n + 1);
		char	   *nb;

		cap = Max(cap, 8192);
		nb = MemoryContextAllocExtended(r->cxt, cap, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (nb == NULL)
		{
			r->overflow = true;
			return 0;
		}
		if (r->len)
			memcpy(nb, r->body, r->len);
		if (r->body)
			pfree(r->body);
		r->body = nb;
		r->cap = cap;
	}
	memcpy(r->body + r->len, ptr, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

/* Copy a header's value if it is one we keep. */
static void
keep_header(const char *line, size_t n, const char *name, char *out, size_t outlen)
{
	size_t		k = strlen(name);
	size_t		v;

	if (n <= k + 1 || pg_strncasecmp(line, name, k) != 0 || line[k] != ':')
		return;
	line += k + 1;
	n -= k + 1;
	while (n > 0 && (*line == ' ' || *line == '\t'))
		line++, n--;
	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
		n--;
	v = Min(n, outlen - 1);
	memcpy(out, line, v);
	out[v] = '\0';
}

static size_t
header_cb(char *buffer, size_t size, size_t nitems, void *userdata)
{
	S3Response *r = userdata;
	size_t		n = size * nitems;

	keep_header(buffer, n, "ETag", r->etag, sizeof(r->etag));
	keep_header(buffer, n, "Content-Range", r->content_range, sizeof(r->content_range));
	return n;
}

static size_t
read_cb(char *buffer, size_t size, size_t nitems, void *userdata)
{
	S3Upload   *u = userdata;
	size_t		n = Min(size * nitems, u->len - u->pos);

	memcpy(buffer, u->data + u->pos, n);
	u->pos += n;
	return n;
}

/* Abort a transfer when the backend is asked to stop (served after curl returns). */
static int
progress_cb(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	return (InterruptPending || ProcDiePending || QueryCancelPending) ? 1 : 0;
}

/* AWS's URI encoding: unreserved characters stay, '/' stays in paths. */
static void
uri_encode(StringInfo out, const char *s, bool keep_slash)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~' || (keep_slash && *p == '/'))
			appendStringInfoChar(out, *p);
		else
			appendStringInfo(out, "%%%02X", *p);
	}
}

/* Where a request goes: its URL, and the Host header and path it is signed with. */
typedef struct S3Target
{
	char	   *url;
	char	   *host;
	char	   *path;
} S3Target;

/*
 * The target of a key (NULL key: the bucket) with an already canonical query:
 * path style http(s)://host/bucket/key, or virtual-hosted style
 * http(s)://bucket.host/key.  A path in the endpoint comes first, as written.
 */
static S3Target
s3_target(DynObjStore *s, const char *key, const char *query)
{
	const char *authority = strstr(s->endpoint, "://") + 3;
	const char *prefix = authority + strcspn(authority, "/");
	const char *at = memchr(authority, '@', prefix - authority);
	StringInfoData p;
	S3Target	t;

	if (at)
		authority = at + 1;		/* user info is not part of Host */
	if (s->path_style)
		t.host = pnstrdup(authority, prefix - authority);
	else
		t.host = psprintf("%s.%.*s", s->remote_bucket, (int) (prefix - authority), authority);
	initStringInfo(&p);
	appendStringInfoString(&p, prefix);
	if (s->path_style)
		appendStringInfo(&p, "/%s", s->remote_bucket);
	appendStringInfoChar(&p, '/');
	if (key)
		uri_encode(&p, key, true);
	t.path = p.data;
	t.url = psprintf("%.*s://%s%s%s%s", (int) (strstr(s->endpoint, "://") - s->endpoint), s->endpoint,
					 t.host, t.path, query ? "?" : "", query ? query : "");
	return t;
}

/*
 * The first <tag> element at or after *pos, raw: its content is xml[*start,
 * *end); false if none.  Moves *pos past it.  Text holds no raw '<' or '&'
 * (they are entities), so an element inside another (a <Key> in <Contents>)
 * is found in the raw bytes: decoding the outer one first turned a key's
 * "&amp;" into a '&' that the inner parse then refused.
 */
static bool
xml_element(const char *xml, size_t len, size_t *pos, const char *tag, size_t *start, size_t *end)
{
	char	   *open = psprintf("<%s>", tag);
	char	   *close = psprintf("</%s>", tag);
	size_t		ol = strlen(open);
	size_t		cl = strlen(close);
	size_t		i;
	bool		found = false;

	for (i = *pos; i + ol <= len; i++)
		if (memcmp(xml + i, open, ol) == 0)
		{
			found = true;
			*start = i + ol;
			break;
		}
	if (!found)
		return false;
	for (i = *start; i + cl <= len; i++)
		if (memcmp(xml + i, close, cl) == 0)
			break;
	if (i + cl > len)
		return false;
	*end = i;
	*pos = i + cl;
	return true;
}

/* The text of the first <tag> element at or after *pos, entities decoded; NULL if none. */
char *
DynS3XmlNext(const char *xml, size_t len, size_t *pos, const char *tag)
{
	size_t		start;
	size_t		i;
	StringInfoData out;

	if (!xml_element(xml, len, pos, tag, &start, &i))
		return NULL;
	initStringInfo(&out);
	for (size_t j = start; j < i; j++)
	{
		if (xml[j] == '&')
		{
			const char *e = xml + j + 1;
			size_t		rest = i - j - 1;
			const char *semi = memchr(e, ';', Min(rest, 12));
			size_t		el;

			if (semi == NULL)
				DynObjFail(DYN_OBJ_INVALID, "The object store sent malformed XML");
			el = semi - e;
			if (el == 3 && memcmp(e, "amp", 3) == 0)
				appendStringInfoChar(&out, '&');
			else if (el == 2 && memcmp(e, "lt", 2) == 0)
				appendStringInfoChar(&out, '<');
			else if (el == 2 && memcmp(e, "gt", 2) == 0)
				appendStringInfoChar(&out, '>');
			else if (el == 4 && memcmp(e, "quot", 4) == 0)
				appendStringInfoChar(&out, '"');
			else if (el == 4 && memcmp(e, "apos", 4) == 0)
				appendStringInfoChar(&out, '\'');
			else if (el >= 2 && e[0] == '#')
			{
				bool		hex = (e[1] == 'x' || e[1] == 'X');
				pg_wchar	cp = 0;
				unsigned char utf8[8];
				size_t		k;

				for (k = hex ? 2 : 1; k < el; k++)
				{
					int			d;

					if (e[k] >= '0' && e[k] <= '9')
						d = e[k] - '0';
					else if (hex && e[k] >= 'a' && e[k] <= 'f')
						d = e[k] - 'a' + 10;
					else if (hex && e[k] >= 'A' && e[k] <= 'F')
						d = e[k] - 'A' + 10;
					else
						DynObjFail(DYN_OBJ_INVALID, "The object store sent malformed XML");
					cp = cp * (hex ? 16 : 10) + d;
					if (cp > 0x10FFFF)
						DynObjFail(DYN_OBJ_INVALID, "The object store sent malformed XML");
				}
				if (k == (hex ? 2u : 1u) || cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
					DynObjFail(DYN_OBJ_INVALID, "The object store sent malformed XML");
				unicode_to_utf8(cp, utf8);
				appendBinaryStringInfo(&out, (char *) utf8, pg_utf_mblen(utf8));
			}
			else
				DynObjFail(DYN_OBJ_INVALID, "The object store sent malformed XML");
			j += el + 1;
		}
		else if (xml[j] == '\0')
			DynObjFail(DYN_OBJ_INVALID, "The object store sent malformed XML");
		else
			appendStringInfoChar(&out, xml[j]);
	}
	return out.data;
}

/* Raise the failure an S3 error response describes. */
static void
fail_response(S3Response *r)
{
	size_t		pos = 0;
	char	   *code = r->body ? DynS3XmlNext(r->body, r->len, &pos, "Code") : NULL;
	char	   *message;

	pos = 0;
	message = r->body ? DynS3XmlNext(r->body, r->len, &pos, "Message") : NULL;
	if (code == NULL)
		code = psprintf("HTTP %ld", r->status);
	if (strcmp(code, "NoSuchBucket") == 0)
		DynObjFail(DYN_OBJ_NO_SUCH_BUCKET, "The specified bucket does not exist");
	if (strcmp(code, "NoSuchKey") == 0)
		DynObjFail(DYN_OBJ_NO_SUCH_KEY, "The specified key does not exist.");
	if (strcmp(code, "AccessDenied") == 0 || strcmp(code, "InvalidAccessKeyId") == 0 ||
		strcmp(code, "SignatureDoesNotMatch") == 0 || strcmp(code, "AllAccessDisabled") == 0 ||
		strcmp(code, "AccountProblem") == 0 || strcmp(code, "InvalidToken") == 0 ||
		strcmp(code, "ExpiredToken") == 0 || r->status == 403)
		DynObjFail(DYN_OBJ_ACCESS_DENIED, "Access Denied (%s)", code);
	if (r->status >= 500)
		DynObjFail(DYN_OBJ_UNAVAILABLE, "The object store failed: %s%s%s", code,
				   message ? ": " : "", message ? message : "");
	DynObjFail(DYN_OBJ_INVALID, "The object store refused a request: %s%s%s", code,
			   message ? ": " : "", message ? message : "");
}

/* The time now as X-Amz-Date wants it: YYYYMMDDTHHMMSSZ, UTC. */
static void
amz_date_now(char out[17])
{
	time_t		now = time(NULL);
	struct tm	tm;

	if (gmtime_r(&now, &tm) == NULL || strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
		elog(ERROR, "could not format the time of an S3 request");
}

/* Append to a curl header list; false when out of memory (the list is kept). */
static bool
add_header(struct curl_slist **list, const char *header)
{
	struct curl_slist *l = curl_slist_append(*list, header);

	if (l == NULL)
		return false;
	*list = l;
	return true;
}

/*
 * Send one request: method, key (NULL: the bucket), canonical query, body;
 * extra headers (NULL-terminated "Name: value" list, signed with the others).
 * Retries connection failures and 5xx; returns the response of any other
 * status (the caller decides), with the body bounded by limit.
 */
static S3Response *
s3_request(DynObjStore *s, const char *method, const char *key, const char *query,
		   const char *body, size_t bodylen, const char *const *extra, size_t limit)
{
	CURL	   *c = store_curl(s);
	S3Target	t = s3_target(s, key, query);
	const char *region = s->region ? s->region : "us-east-1";
	char		hash[65];
	int			nextra = 0;
	const char **signed_headers;
	S3Response *r = NULL;
	CURLcode	rc = CURLE_OK;

	if (body && bodylen > 0)
		DynS3Sha256Hex(body, bodylen, hash);
	else
		strcpy(hash, EMPTY_SHA256);
	for (const char *const *e = extra; e && *e; e++)
		nextra++;
	signed_headers = palloc(sizeof(char *) * (nextra + 3));

	for (int attempt = 1; attempt <= S3_ATTEMPTS; attempt++)
	{
		struct curl_slist *headers = NULL;
		S3Upload	up = {body, bodylen, 0};
		char		amz_date[17];
		char	   *auth;
		int			n = 0;
		bool		oom = false;

		CHECK_FOR_INTERRUPTS();
		r = palloc0(sizeof(S3Response));
		r->cxt = CurrentMemoryContext;
		r->limit = limit;

		/* what is signed is what is sent: Host, the date, the payload hash, the extras */
		amz_date_now(amz_date);
		signed_headers[n++] = psprintf("Host: %s", t.host);
		signed_headers[n++] = psprintf("X-Amz-Date: %s", amz_date);
		signed_headers[n++] = psprintf("x-amz-content-sha256: %s", hash);
		for (int i = 0; i < nextra; i++)
			signed_headers[n++] = extra[i];
		auth = psprintf("Authorization: %s",
						DynS3Authorization(method, t.path, query ? query : "", signed_headers, n, hash,
										   amz_date, s->access_key_id, s->secret_access_key, region));
		for (int i = 0; i < n && !oom; i++)
			oom = !add_header(&headers, signed_headers[i]);
		oom = oom || !add_header(&headers, auth);
		/* no "Expect: 100-continue" round trip; no default form content type */
		oom = oom || !add_header(&headers, "Expect:") || !add_header(&headers, "Content-Type:");
		if (oom)
		{
			curl_slist_free_all(headers);
			DynObjFail(DYN_OBJ_UNAVAILABLE, "Could not build a request (out of memory)");
		}

		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, t.url);
		curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long) dynindex_s3_timeout_s);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long) dynindex_s3_timeout_s);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		if (strcmp(method, "PUT") == 0)
		{
			curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
			curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
			curl_easy_setopt(c, CURLOPT_READDATA, &up);
			curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t) bodylen);
		}
		else if (strcmp(method, "POST") == 0)
		{
			curl_easy_setopt(c, CURLOPT_POST, 1L);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) bodylen);
		}
		else if (strcmp(method, "DELETE") == 0)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
		else if (strcmp(method, "HEAD") == 0)
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);

		rc = curl_easy_perform(c);
		curl_slist_free_all(headers);
		pfree(auth);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		CHECK_FOR_INTERRUPTS();
		if (rc == CURLE_WRITE_ERROR && r->overflow)
			DynObjFail(DYN_OBJ_INVALID, "The object store sent a response larger than expected");
		if (rc == CURLE_OK && r->status < 500)
			return r;
		if (attempt < S3_ATTEMPTS)
			pg_usleep(250000L * attempt);
	}
	if (rc != CURLE_OK)
		DynObjFail(DYN_OBJ_UNAVAILABLE, "Could not reach the object store: %s", curl_easy_strerror(rc));
	fail_response(r);
	pg_unreachable();
}

/* Fail unless the response has status 200 (or 204 / 206 when allowed). */
static void
expect_ok(S3Response *r)
{
	if (r->status == 200 || r->status == 204 || r->status == 206)
		return;
	fail_response(r);
}

/* PUT an object in one request. */
void
DynS3Put(DynObjStore *s, const char *key, const char *data, size_t len)
{
	S3Response *r = s3_request(s, "PUT", key, NULL, data, len, s->sse, 1024 * 1024);

	expect_ok(r);
}

/* An ETag without its quotes. */
static char *
unquote(const char *etag)
{
	size_t		n = strlen(etag);

	if (n >= 2 && etag[0] == '"' && etag[n - 1] == '"')
		return pnstrdup(etag + 1, n - 2);
	return pstrdup(etag);
}

/* DELETE an object (204, or 404 for none). */
void
DynS3Delete(DynObjStore *s, const char *key)
{
	S3Response *r = s3_request(s, "DELETE", key, NULL, NULL, 0, NULL, 1024 * 1024);

	if (r->status == 404 && r->body && strstr(r->body, "NoSuchKey"))
		return;
	expect_ok(r);
}

/* Part size in bytes. */
static size_t
part_size(void)
{
	return (size_t) dynindex_s3_part_size_mb * 1024 * 1024;
}

void
DynS3WriterInit(DynObjWriter *w)
{
	initStringInfo(&w->buf);
}

/* The canonical query of a multipart upload's requests: [partNumber=N&]uploadId=<id> (part 0: none). */
static char *
upload_query(DynObjWriter *w, int part)
{
	StringInfoData q;

	initStringInfo(&q);
	if (part > 0)
		appendStringInfo(&q, "partNumber=%d&", part);
	appendStringInfoString(&q, "uploadId=");
	uri_encode(&q, w->upload_id, false);
	return q.data;
}

/* Send the filled part (starting the multipart upload with the first). */
static void
upload_part(DynObjWriter *w)
{
	S3Response *r;

	if (w->upload_id == NULL)
	{
		size_t		pos = 0;

		r = s3_request(w->store, "POST", w->key, "uploads=", NULL, 0, w->store->sse, 1024 * 1024);
		expect_ok(r);
		if (r->body == NULL || (w->upload_id = DynS3XmlNext(r->body, r->len, &pos, "UploadId")) == NULL ||
			w->upload_id[0] == '\0')
			DynObjFail(DYN_OBJ_INVALID, "The object store did not start a multipart upload");
	}
	r = s3_request(w->store, "PUT", w->key, upload_query(w, w->nparts + 1), w->buf.data, w->buf.len, NULL, 1024 * 1024);
	expect_ok(r);
	if (r->etag[0] == '\0')
		DynObjFail(DYN_OBJ_INVALID, "The object store sent no ETag for a part");
	if (w->nparts == w->etags_cap)
	{
		w->etags_cap = w->etags_cap ? w->etags_cap * 2 : 16;
		w->etags = w->etags ? repalloc(w->etags, sizeof(char *) * w->etags_cap)
			: palloc(sizeof(char *) * w->etags_cap);
	}
	w->etags[w->nparts++] = pstrdup(r->etag);
	resetStringInfo(&w->buf);
}

void
DynS3Write(DynObjWriter *w, const char *data, size_t len)
{
	size_t		ps = part_size();

	while (len > 0)
	{
		size_t		n = Min(len, ps - w->buf.len);

		appendBinaryStringInfo(&w->buf, data, n);
		data += n;
		len -= n;
		if (w->buf.len >= ps)
			upload_part(w);
	}
}

void
DynS3WriterClose(DynObjWriter *w)
{
	StringInfoData x;
	S3Response *r;

	if (w->upload_id == NULL)
	{
		r = s3_request(w->store, "PUT", w->key, NULL, w->buf.data, w->buf.len, w->store->sse, 1024 * 1024);
		expect_ok(r);
		w->etag = unquote(r->etag);
		return;
	}
	if (w->buf.len > 0)
		upload_part(w);
	initStringInfo(&x);
	appendStringInfoString(&x, "<CompleteMultipartUpload>");
	for (int i = 0; i < w->nparts; i++)
	{
		appendStringInfo(&x, "<Part><PartNumber>%d</PartNumber><ETag>", i + 1);
		for (const char *p = w->etags[i]; *p; p++)
		{
			if (*p == '&')
				appendStringInfoString(&x, "&amp;");
			else if (*p == '<')
				appendStringInfoString(&x, "&lt;");
			else if (*p == '>')
				appendStringInfoString(&x, "&gt;");
			else if (*p == '"')
				appendStringInfoString(&x, "&quot;");
			else
				appendStringInfoChar(&x, *p);
		}
		appendStringInfoString(&x, "</ETag></Part>");
	}
	appendStringInfoString(&x, "</CompleteMultipartUpload>");
	r = s3_request(w->store, "POST", w->key, upload_query(w, 0), x.data, x.len, NULL, 1024 * 1024);
	expect_ok(r);
	/* S3 may answer 200 and report the failure in the body */
	if (r->body && strstr(r->body, "<Error>") != NULL)
		fail_response(r);
	{
		size_t		pos = 0;
		char	   *etag = r->body ? DynS3XmlNext(r->body, r->len, &pos, "ETag") : NULL;

		w->etag = unquote(etag ? etag : "");
	}
	pfree(w->buf.data);
	w->buf.data = NULL;
}

/* Abort a multipart upload; never raises a store failure (the job is failing already). */
void
DynS3WriterAbort(DynObjWriter *w)
{
	MemoryContext cxt = CurrentMemoryContext;

	if (w->upload_id == NULL)
		return;
	PG_TRY();
	{
		(void) s3_request(w->store, "DELETE", w->key, upload_query(w, 0), NULL, 0, NULL, 1024 * 1024);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		if (e->sqlerrcode != DYN_OBJ_ERRCODE)
			PG_RE_THROW();
		FlushErrorState();
	}
	PG_END_TRY();
}

/* Fetch the next range of an object into r->buf. */
static void
fetch_range(DynObjReader *r)
{
	S3Response *resp;
	char	   *range;
	const char *hdr[2];
	size_t		ps = part_size();

	range = psprintf("Range: bytes=%lld-%lld", (long long) r->pos, (long long) (r->pos + ps - 1));
	hdr[0] = range;
	hdr[1] = NULL;
	resp = s3_request(r->store, "GET", r->key, NULL, NULL, 0, hdr, ps + 1);
	if (resp->status == 416)
	{
		/* an empty object (or the end) */
		if (r->size < 0)
			r->size = 0;
		resetStringInfo(&r->buf);
		r->bufpos = 0;
		return;
	}
	expect_ok(resp);
	if (r->size < 0)
	{
		if (resp->status == 200)
			r->size = resp->len;
		else
		{
			const char *slash = strchr(resp->content_range, '/');

			if (slash == NULL || slash[1] < '0' || slash[1] > '9')
				DynObjFail(DYN_OBJ_INVALID, "The object store sent no object size");
			r->size = strtoll(slash + 1, NULL, 10);
		}
	}
	else if (resp->status == 200 && r->pos > 0)
		DynObjFail(DYN_OBJ_INVALID, "The object store ignored a range request");
	resetStringInfo(&r->buf);
	if (resp->len > 0)
		appendBinaryStringInfo(&r->buf, resp->body, resp->len);
	r->bufpos = 0;
	if (resp->body)
		pfree(resp->body);
}

void
DynS3ReaderInit(DynObjReader *r)
{
	initStringInfo(&r->buf);
	r->size = -1;
	fetch_range(r);
}

size_t
DynS3Read(DynObjReader *r, char *buf, size_t len)
{
	size_t		n;

	if (r->bufpos >= r->buf.len)
	{
		if (r->pos >= r->size)
			return 0;
		fetch_range(r);
		if (r->buf.len == 0)
			DynObjFail(DYN_OBJ_INVALID, "The object store sent fewer bytes than the object's size");
	}
	n = Min(len, (size_t) (r->buf.len - r->bufpos));
	memcpy(buf, r->buf.data + r->bufpos, n);
	r->bufpos += n;
	r->pos += n;
	return n;
}

/* ListObjectsV2, every page. */
void
DynS3List(DynObjStore *s, const char *prefix, DynObjListFn fn, void *arg)
{
	char	   *token = NULL;
	MemoryContext page_cxt = AllocSetContextCreate(CurrentMemoryContext, "dynindex S3 listing",
												   ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = CurrentMemoryContext;

	for (;;)
	{
		StringInfoData q;
		S3Response *r;
		size_t		pos = 0;
		size_t		bstart;
		size_t		bend;
		char	   *truncated;
		char	   *next;

		MemoryContextSwitchTo(page_cxt);
		initStringInfo(&q);
		if (token)
		{
			appendStringInfoString(&q, "continuation-token=");
			uri_encode(&q, token, false);
			appendStringInfoChar(&q, '&');
		}
		appendStringInfoString(&q, "list-type=2&prefix=");
		uri_encode(&q, prefix ? prefix : "", false);
		r = s3_request(s, "GET", NULL, q.data, NULL, 0, NULL, 64 * 1024 * 1024);
		expect_ok(r);
		if (r->body == NULL || strstr(r->body, "<ListBucketResult") == NULL || strstr(r->body, "</ListBucketResult>") == NULL)
			DynObjFail(DYN_OBJ_INVALID, "The object store sent no listing");
		while (xml_element(r->body, r->len, &pos, "Contents", &bstart, &bend))
		{
			/* Key and Size in the raw element: a key's "&amp;" is decoded once */
			const char *block = r->body + bstart;
			size_t		bp = 0;
			char	   *key = DynS3XmlNext(block, bend - bstart, &bp, "Key");
			char	   *size;
			char	   *end;
			long long	sz;

			bp = 0;
			size = DynS3XmlNext(block, bend - bstart, &bp, "Size");
			if (key == NULL || size == NULL)
				DynObjFail(DYN_OBJ_INVALID, "The object store sent a listing entry without key or size");
			errno = 0;
			sz = strtoll(size, &end, 10);
			if (errno != 0 || *end != '\0' || end == size || sz < 0)
				DynObjFail(DYN_OBJ_INVALID, "The object store sent a listing entry with a bad size");
			MemoryContextSwitchTo(old);
			fn(key, (int64) sz, arg);
			MemoryContextSwitchTo(page_cxt);
		}
		pos = 0;
		truncated = DynS3XmlNext(r->body, r->len, &pos, "IsTruncated");
		if (truncated == NULL || strcmp(truncated, "true") != 0)
			break;
		pos = 0;
		next = DynS3XmlNext(r->body, r->len, &pos, "NextContinuationToken");
		if (next == NULL || next[0] == '\0')
			DynObjFail(DYN_OBJ_INVALID, "The object store sent a truncated listing without a continuation token");
		MemoryContextSwitchTo(old);
		token = pstrdup(next);
		MemoryContextReset(page_cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(page_cxt);
}

PG_FUNCTION_INFO_V1(dynindex__parse_s3_xml);

/*
 * dynindex._parse_s3_xml(body text, tag text) RETURNS text[]: every <tag>
 * element's text as the S3 client reads it, or one element "ERROR: <message>"
 * for a body the client refuses.  For the fuzz suite (test/fuzz/api_fuzz.py)
 * and tests: S3 responses are outside input.
 */
Datum
dynindex__parse_s3_xml(PG_FUNCTION_ARGS)
{
	text	   *body;
	char	   *tag;
	char	   *xml;
	size_t		len;
	size_t		pos = 0;
	MemoryContext cxt = CurrentMemoryContext;
	ArrayBuildState *astate = NULL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	body = PG_GETARG_TEXT_PP(0);
	tag = text_to_cstring(PG_GETARG_TEXT_PP(1));
	xml = VARDATA_ANY(body);
	len = VARSIZE_ANY_EXHDR(body);
	/* a tag is a plain name */
	for (const char *p = tag; *p; p++)
		if (!isalnum((unsigned char) *p))
			PG_RETURN_ARRAYTYPE_P(construct_array((Datum[]) {CStringGetTextDatum("ERROR: a tag is letters and digits")},
												  1, TEXTOID, -1, false, TYPALIGN_INT));
	/*
	 * The reader raises only its own failures (palloc'd strings, no other
	 * resources), so catching them without a subtransaction is safe; any
	 * other error goes on.
	 */
	PG_TRY();
	{
		char	   *v;

		while (tag[0] != '\0' && (v = DynS3XmlNext(xml, len, &pos, tag)) != NULL)
			astate = accumArrayResult(astate, CStringGetTextDatum(v), false, TEXTOID, cxt);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		if (e->sqlerrcode != DYN_OBJ_ERRCODE)
			PG_RE_THROW();
		FlushErrorState();
		astate = accumArrayResult(NULL, CStringGetTextDatum(psprintf("ERROR: %s", e->message)), false, TEXTOID, cxt);
	}
	PG_END_TRY();
	if (astate == NULL)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(TEXTOID));
	PG_RETURN_DATUM(makeArrayResult(astate, cxt));
}
