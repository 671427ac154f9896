/*
 * http.c — the DynamoDB HTTP JSON 1.0 endpoint on libmicrohttpd.
 *
 * One thread per client connection (bounded by --max-connections), HTTP/1.1
 * keep-alive, idle and slow clients cut off by --timeout.  A request body is
 * collected up to DynamoDB's 16 MB limit; the database work happens on a
 * pooled libpq connection only while the request runs.
 *
 * Order of checks (as DynamoDB): method and content type, target operation,
 * authentication, body, then the operation itself.
 */
#include "gateway.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>

#include <microhttpd.h>
#include <zlib.h>

#define TARGET_PREFIX "DynamoDB_20120810."
/* DynamoDB Streams on the same endpoint (its SigV4 service name is "dynamodb" too) */
#define STREAMS_TARGET_PREFIX "DynamoDBStreams_20120810."
#define HEALTH_BODY "healthy: dynamodb.us-east-1.amazonaws.com "
/* DynamoDB's responses carry "Server: Server". */
#define GW_SERVER_HEADER "Server"
/*
 * Response headers a browser script may read (CORS), sent with
 * Access-Control-Allow-Origin; the list AWS's JSON-protocol endpoints send.
 */
#define GW_CORS_EXPOSE "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
#define MAX_HEADERS 128
/* After the body passed the limit, discard at most this much more. */
#define MAX_DISCARD ((size_t) 4 * GW_MAX_REQUEST_BYTES)

/* Operations of the DynamoDB 2012-08-10 API.  Others: UnknownOperation. */
static const char *const operations[] = {
	"BatchExecuteStatement", "BatchGetItem", "BatchWriteItem", "CreateBackup",
	"CreateGlobalTable", "CreateTable", "DeleteBackup", "DeleteItem",
	"DeleteResourcePolicy", "DeleteTable", "DescribeBackup",
	"DescribeContinuousBackups", "DescribeContributorInsights",
	"DescribeEndpoints", "DescribeExport", "DescribeGlobalTable",
	"DescribeGlobalTableSettings", "DescribeImport",
	"DescribeKinesisStreamingDestination", "DescribeLimits", "DescribeTable",
	"DescribeTableReplicaAutoScaling", "DescribeTimeToLive",
	"DisableKinesisStreamingDestination", "EnableKinesisStreamingDestination",
	"ExecuteStatement", "ExecuteTransaction", "ExportTableToPointInTime",
	"GetItem", "GetResourcePolicy", "ImportTable", "ListBackups",
	"ListContributorInsights", "ListExports", "ListGlobalTables", "ListImports",
	"ListTables", "ListTagsOfResource", "PutItem", "PutResourcePolicy", "Query",
	"RestoreTableFromBackup", "RestoreTableToPointInTime", "Scan", "TagResource",
	"TransactGetItems", "TransactWriteItems", "UntagResource",
	"UpdateContinuousBackups", "UpdateContributorInsights", "UpdateGlobalTable",
	"UpdateGlobalTableSettings", "UpdateItem",
	"UpdateKinesisStreamingDestination", "UpdateTable",
	"UpdateTableReplicaAutoScaling", "UpdateTimeToLive",
	NULL
};

/* Operations of the DynamoDB Streams 2012-08-10 API. */
static const char *const streams_operations[] = {
	"DescribeStream", "GetRecords", "GetShardIterator", "ListStreams", NULL
};

typedef struct Req
{
	Buf			body;
	bool		too_large;
	bool		answered;
	size_t		discarded;
	struct timespec start;
} Req;

typedef struct HeaderList
{
	SigHeader	h[MAX_HEADERS];
	int			n;
} HeaderList;

typedef struct QueryList
{
	char	   *items[MAX_HEADERS];
	int			n;
} QueryList;

static bool
known_operation(const char *op)
{
	for (int i = 0; operations[i]; i++)
		if (strcmp(operations[i], op) == 0)
			return true;
	return false;
}

static enum MHD_Result
collect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	HeaderList *l = cls;
	char	   *name;

	(void) kind;
	if (l->n >= MAX_HEADERS || key == NULL)
		return MHD_YES;
	name = strdup(key);
	if (name == NULL)
		return MHD_NO;
	for (char *p = name; *p; p++)
		*p = (char) tolower((unsigned char) *p);
	l->h[l->n].name = name;
	l->h[l->n].value = strdup(value ? value : "");
	if (l->h[l->n].value == NULL)
	{
		free(name);
		return MHD_NO;
	}
	l->n++;
	return MHD_YES;
}

static enum MHD_Result
collect_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	QueryList  *l = cls;
	Buf			b;

	(void) kind;
	if (l->n >= MAX_HEADERS || key == NULL)
		return MHD_YES;
	buf_init(&b);
	sigv4_uri_encode(&b, key, true);
	buf_puts(&b, "=");
	sigv4_uri_encode(&b, value ? value : "", true);
	l->items[l->n] = buf_steal(&b, NULL);
	if (l->items[l->n])
		l->n++;
	return MHD_YES;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static void
free_headers(HeaderList *l)
{
	for (int i = 0; i < l->n; i++)
	{
		free(l->h[i].name);
		free(l->h[i].value);
	}
	l->n = 0;
}

/* Queue a response; body is malloc'd and owned by the response afterwards. */
static enum MHD_Result
respond(struct MHD_Connection *c, int status, char *body, size_t len,
		const char *content_type, const char *reqid)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char		crc[16];
	const char *origin;
	int			enc = GW_ENC_NONE;

	if (body == NULL)
	{
		body = strdup("");
		len = 0;
		if (body == NULL)
			return MHD_NO;
	}
	/*
	 * A client that accepts gzip or deflate gets bodies of 4 KB or more
	 * compressed; x-amz-crc32 is then the CRC of the compressed bytes.
	 */
	if (len >= GW_COMPRESS_THRESHOLD)
	{
		enc = gw_accept_encoding(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
															 MHD_HTTP_HEADER_ACCEPT_ENCODING));
		if (enc != GW_ENC_NONE)
		{
			char	   *z;
			size_t		zlen;

			if (gw_compress(enc, body, len, &z, &zlen))
			{
				free(body);
				body = z;
				len = zlen;
			}
			else
				enc = GW_ENC_NONE;
		}
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL)
	{
		free(body);
		return MHD_NO;
	}
	if (enc != GW_ENC_NONE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
								enc == GW_ENC_GZIP ? "gzip" : "deflate");
	snprintf(crc, sizeof(crc), "%lu", crc32(crc32(0L, Z_NULL, 0), (const Bytef *) body, (uInt) len));
	MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, GW_SERVER_HEADER);
	MHD_add_response_header(r, "x-amzn-RequestId", reqid);
	MHD_add_response_header(r, "x-amz-crc32", crc);
	if (content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (origin)
	{
		MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
		MHD_add_response_header(r, "Access-Control-Expose-Headers", GW_CORS_EXPOSE);
	}
	ret = MHD_queue_response(c, (unsigned int) status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
respond_error(struct MHD_Connection *c, const char *name, const char *message,
			  const char *content_type, const char *reqid, int *status_out)
{
	GwError		e;

	gw_error_make(&e, name, message, NULL);
	*status_out = e.status;
	return respond(c, e.status, e.body, e.body_len, content_type, reqid);
}

/* Text "Date" header (RFC 1123) to ISO-8601 basic format. */
static bool
http_date_to_amz(const char *date, char out[17])
{
	struct tm	tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (end == NULL)
		return false;
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
	return true;
}

/*
 * Verify the request's SigV4 signature.  Returns SIG_OK and the role, or an
 * error status with the message to send.
 */
static SigStatus
authenticate(struct MHD_Connection *c, const char *method, const char *url,
			 const Req *req, SigAuth *auth, char *role, size_t rolelen,
			 char *msg, size_t msglen)
{
	const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *amz_date = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Date");
	const char *content_sha = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Content-Sha256");
	char		date_buf[17];
	SigStatus	st;
	char		secret[129];
	char		expected[65];
	char		body_hash[65];
	HeaderList	headers;
	QueryList	query;
	Buf			cq;
	SigRequest	sr;
	int			found;

	if (authz == NULL && MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "X-Amz-Algorithm"))
	{
		snprintf(msg, msglen, "Request is missing Authentication Token");
		return SIG_MISSING;
	}
	if (amz_date == NULL)
	{
		const char *d = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Date");

		if (d && http_date_to_amz(d, date_buf))
			amz_date = date_buf;
	}
	st = sigv4_parse(authz, amz_date, auth, msg, msglen);
	if (st == SIG_MISSING)
		snprintf(msg, msglen, "Request is missing Authentication Token");
	if (st != SIG_OK)
		return st;
	st = sigv4_check_scope(auth, amz_date, (long) time(NULL), msg, msglen);
	if (st != SIG_OK)
		return st;

	found = keys_lookup(auth->access_key, secret, sizeof(secret), role, rolelen);
	if (found < 0)
	{
		snprintf(msg, msglen, "Internal server error");
		return SIG_OK + 100;	/* internal */
	}
	if (found == 0)
	{
		snprintf(msg, msglen, "The security token included in the request is invalid.");
		return SIG_UNRECOGNIZED;
	}

	sigv4_hex_sha256(req->body.data ? req->body.data : "", req->body.len, body_hash);
	if (content_sha && strcmp(content_sha, "UNSIGNED-PAYLOAD") != 0 &&
		strcasecmp(content_sha, body_hash) != 0)
	{
		snprintf(msg, msglen, "The provided 'x-amz-content-sha256' header does not match what was computed.");
		return SIG_INVALID;
	}

	memset(&headers, 0, sizeof(headers));
	memset(&query, 0, sizeof(query));
	MHD_get_connection_values(c, MHD_HEADER_KIND, collect_header, &headers);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_query, &query);
	qsort(query.items, (size_t) query.n, sizeof(char *), cmp_str);
	buf_init(&cq);
	for (int i = 0; i < query.n; i++)
	{
		if (i)
			buf_puts(&cq, "&");
		buf_puts(&cq, query.items[i]);
		free(query.items[i]);
	}

	sr.method = method;
	sr.path = url;
	sr.canonical_query = cq.data ? cq.data : "";
	sr.headers = headers.h;
	sr.nheaders = headers.n;
	sr.payload_hash = content_sha ? content_sha : body_hash;
	st = SIG_OK;
	if (!sigv4_sign(&sr, auth, amz_date, secret, expected))
	{
		snprintf(msg, msglen, "Internal server error");
		st = SIG_OK + 100;
	}
	else if (!sigv4_equal(expected, auth->signature))
	{
		snprintf(msg, msglen, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
		st = SIG_INVALID;
	}
	memset(secret, 0, sizeof(secret));
	buf_free(&cq);
	free_headers(&headers);
	return st;
}

static void
log_request(const Req *req, const char *method, const char *op, int status)
{
	struct timespec now;
	double		ms;

	if (!gw_config.verbose)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double) (now.tv_sec - req->start.tv_sec) * 1000.0 +
		(double) (now.tv_nsec - req->start.tv_nsec) / 1e6;
	gw_log("%s %s -> %d (%.1f ms)", method, op ? op : "-", status, ms);
}

static enum MHD_Result
handle(struct MHD_Connection *c, const char *url, const char *method, Req *req)
{
	char		reqid[53];
	const char *ctype_hdr;
	char		ctype[64];
	const char *resp_ctype;
	const char *target;
	const char *op = NULL;
	char		role[64];
	const char *region = "us-east-1";
	SigAuth		auth;
	int			status = 200;
	enum MHD_Result ret;
	DbResult	db;

	gw_request_id(reqid);
	role[0] = '\0';

	if (strcmp(method, "GET") == 0)
	{
		char	   *b = strdup(HEALTH_BODY);

		ret = respond(c, 200, b, strlen(HEALTH_BODY), NULL, reqid);
		log_request(req, method, NULL, 200);
		return ret;
	}
	if (strcmp(method, "OPTIONS") == 0 &&
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"))
	{
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *) "", MHD_RESPMEM_PERSISTENT);
		const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Headers");
		const char *m = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Method");

		if (r == NULL)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, GW_SERVER_HEADER);
		MHD_add_response_header(r, "x-amzn-RequestId", reqid);
		MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
		MHD_add_response_header(r, "Access-Control-Expose-Headers", GW_CORS_EXPOSE);
		if (h)
			MHD_add_response_header(r, "Access-Control-Allow-Headers", h);
		if (m)
			MHD_add_response_header(r, "Access-Control-Allow-Methods", m);
		MHD_add_response_header(r, "Access-Control-Max-Age", "172800");
		ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}

	ctype_hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	{
		size_t		n = ctype_hdr ? strcspn(ctype_hdr, ";") : 0;

		while (n > 0 && ctype_hdr[n - 1] == ' ')
			n--;
		if (n >= sizeof(ctype))
			n = sizeof(ctype) - 1;
		memcpy(ctype, ctype_hdr ? ctype_hdr : "", n);
		ctype[n] = '\0';
	}
	if (strcmp(method, "POST") != 0 ||
		(req->body.len > 0 && strcasecmp(ctype, "application/json") != 0 &&
		 strcasecmp(ctype, "application/x-amz-json-1.0") != 0))
	{
		char	   *b = strdup("<UnknownOperationException/>\n");

		ret = respond(c, 404, b, b ? strlen(b) : 0, NULL, reqid);
		log_request(req, method, NULL, 404);
		return ret;
	}
	resp_ctype = strcasecmp(ctype, "application/json") == 0 ?
		"application/json" : "application/x-amz-json-1.0";

	if (req->too_large)
	{
		char		m[128];

		snprintf(m, sizeof(m), "Request Entity Too Large: the limit is %d bytes",
				 GW_MAX_REQUEST_BYTES);
		GwError		e;

		/* DynamoDB answers an over-long request with HTTP 413. */
		gw_error_make(&e, "RequestEntityTooLarge", m, NULL);
		ret = respond(c, 413, e.body, e.body_len, resp_ctype, reqid);
		log_request(req, method, NULL, 413);
		return ret;
	}

	target = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Target");
	if (target && strncmp(target, TARGET_PREFIX, strlen(TARGET_PREFIX)) == 0 &&
		known_operation(target + strlen(TARGET_PREFIX)))
		op = target + strlen(TARGET_PREFIX);
	else if (target && strncmp(target, STREAMS_TARGET_PREFIX, strlen(STREAMS_TARGET_PREFIX)) == 0)
	{
		for (int i = 0; streams_operations[i]; i++)
			if (strcmp(streams_operations[i], target + strlen(STREAMS_TARGET_PREFIX)) == 0)
				op = streams_operations[i];
	}
	if (op == NULL)
	{
		ret = respond_error(c, "UnknownOperationException", NULL, resp_ctype, reqid, &status);
		log_request(req, method, target, status);
		return ret;
	}

	if (!gw_config.dev)
	{
		char		msg[4096];
		SigStatus	st = authenticate(c, method, url, req, &auth, role, sizeof(role),
									  msg, sizeof(msg));
		const char *name = NULL;

		switch (st)
		{
			case SIG_OK:
				break;
			case SIG_MISSING:
				name = "MissingAuthenticationTokenException";
				break;
			case SIG_INCOMPLETE:
				name = "IncompleteSignatureException";
				break;
			case SIG_INVALID:
				name = "InvalidSignatureException";
				break;
			case SIG_UNRECOGNIZED:
				name = "UnrecognizedClientException";
				break;
			default:
				name = "InternalServerError";
				break;
		}
		if (name)
		{
			ret = respond_error(c, name, msg, resp_ctype, reqid, &status);
			log_request(req, method, op, status);
			return ret;
		}
		if (auth.region[0])
			region = auth.region;
	}

	/*
	 * A compressed request (the SDKs' request compression): DynamoDB takes
	 * gzip only; another coding, or a body that is not gzip, is its HTTP 500
	 * InternalServerError.  The signature covers the compressed bytes, so
	 * this comes after authentication.  The inflated body has the same 16 MB
	 * limit as an uncompressed one.
	 */
	{
		const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
													 MHD_HTTP_HEADER_CONTENT_ENCODING);

		if (ce && *ce && strcasecmp(ce, "identity") != 0)
		{
			Buf			plain;
			int			zr = GW_GUNZIP_CORRUPT;

			buf_init(&plain);
			if (strcasecmp(ce, "gzip") == 0)
				zr = gw_gunzip(req->body.data ? req->body.data : "", req->body.len,
							   GW_MAX_REQUEST_BYTES, &plain);
			if (zr != GW_GUNZIP_OK)
			{
				buf_free(&plain);
				if (zr == GW_GUNZIP_TOO_LARGE)
				{
					char		m[128];
					GwError		e;

					snprintf(m, sizeof(m), "Request Entity Too Large: the limit is %d bytes",
							 GW_MAX_REQUEST_BYTES);
					gw_error_make(&e, "RequestEntityTooLarge", m, NULL);
					status = 413;
					ret = respond(c, 413, e.body, e.body_len, resp_ctype, reqid);
				}
				else
					ret = respond_error(c, "InternalServerError", "Internal server error",
										resp_ctype, reqid, &status);
				log_request(req, method, op, status);
				return ret;
			}
			buf_free(&req->body);
			req->body = plain;
		}
	}

	/* The body must be a JSON object; PostgreSQL's jsonb input checks the rest. */
	{
		const char *p = req->body.data ? req->body.data : "";
		const char *end = p + req->body.len;

		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p == end || *p != '{' || memchr(req->body.data, '\0', req->body.len) != NULL)
		{
			ret = respond_error(c, "SerializationException", NULL, resp_ctype, reqid, &status);
			log_request(req, method, op, status);
			return ret;
		}
	}

	/*
	 * DescribeEndpoints: where to send this service's requests, which only the
	 * gateway knows (DynamoDB names its regional host; we name ours, as the
	 * client reached it).
	 */
	if (strcmp(op, "DescribeEndpoints") == 0)
	{
		const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
		Buf			b;

		buf_init(&b);
		buf_puts(&b, "{\"Endpoints\":[{\"Address\":");
		buf_json_string(&b, host && *host ? host : gw_config.host);
		buf_puts(&b, ",\"CachePeriodInMinutes\":1440}]}");
		if (b.oom)
		{
			buf_free(&b);
			return MHD_NO;
		}
		status = 200;
		ret = respond(c, 200, b.data, b.len, resp_ctype, reqid);
		log_request(req, method, op, status);
		return ret;
	}

	db_call_api(op, req->body.data, role[0] ? role : NULL, &db);
	switch (db.status)
	{
		case DB_OK:
			/* DynamoDB answers these two with an empty body, not "{}". */
			if (strcmp(op, "TagResource") == 0 || strcmp(op, "UntagResource") == 0)
				db.json_len = 0;
			else
				db.json_len = gw_json_compact(db.json, db.json_len);
			ret = respond(c, 200, db.json, db.json_len, resp_ctype, reqid);
			db.json = NULL;
			status = 200;
			break;
		case DB_SERIALIZATION:
			ret = respond_error(c, "SerializationException", NULL, resp_ctype, reqid, &status);
			break;
		case DB_ERROR:
			{
				GwError		e;

				gw_error_from_pg(&e, db.sqlstate, db.message, db.detail, op, db.table,
								 role[0] ? role : NULL, region);
				status = e.status;
				ret = respond(c, e.status, e.body, e.body_len, resp_ctype, reqid);
				break;
			}
		case DB_UNAVAILABLE:
		default:
			ret = respond_error(c, "InternalServerError", "Internal server error",
								resp_ctype, reqid, &status);
			break;
	}
	db_result_free(&db);
	log_request(req, method, op, status);
	return ret;
}

/*
 * The headers of a request with a body are in: acknowledge them at once.
 * Clients that write the headers and the body separately (Perl's HTTP::Tiny,
 * for one) hold the body back under Nagle's algorithm until the headers are
 * acknowledged, and a delayed ACK would add 40 ms to every request on a
 * keep-alive connection.  TCP_QUICKACK sends the ACK the kernel has pending.
 */
static void
ack_headers_now(struct MHD_Connection *c)
{
#ifdef TCP_QUICKACK
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	int			one = 1;

	if (ci)
		(void) setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
#else
	(void) c;
#endif
}

static enum MHD_Result
access_handler(void *cls, struct MHD_Connection *c, const char *url,
			   const char *method, const char *version, const char *upload_data,
			   size_t *upload_data_size, void **con_cls)
{
	Req		   *req = *con_cls;

	(void) cls;
	(void) version;
	if (req == NULL)
	{
		const char *cl;

		req = calloc(1, sizeof(Req));
		if (req == NULL)
			return MHD_NO;
		buf_init(&req->body);
		clock_gettime(CLOCK_MONOTONIC, &req->start);
		*con_cls = req;
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strcmp(method, "POST") == 0)
			ack_headers_now(c);
		if (cl && strtoull(cl, NULL, 10) > (unsigned long long) GW_MAX_REQUEST_BYTES &&
			strcmp(method, "POST") == 0)
		{
			/*
			 * Over the limit: read and drop the body, then answer 413, so the
			 * client sees the answer instead of a broken pipe.  Bodies too
			 * large even to drop are refused at once (connection closed).
			 */
			req->too_large = true;
			if (strtoull(cl, NULL, 10) > (unsigned long long) MAX_DISCARD)
			{
				char		reqid[53];
				char		m[128];
				GwError		e;

				gw_request_id(reqid);
				snprintf(m, sizeof(m), "Request Entity Too Large: the limit is %d bytes",
						 GW_MAX_REQUEST_BYTES);
				gw_error_make(&e, "RequestEntityTooLarge", m, NULL);
				req->answered = true;
				log_request(req, method, NULL, 413);
				return respond(c, 413, e.body, e.body_len, "application/x-amz-json-1.0", reqid);
			}
		}
		return MHD_YES;
	}
	if (req->answered)
	{
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0)
	{
		size_t		n = *upload_data_size;

		if (!req->too_large && req->body.len + n > GW_MAX_REQUEST_BYTES)
		{
			req->too_large = true;
			buf_free(&req->body);
		}
		if (req->too_large)
		{
			req->discarded += n;
			if (req->discarded > MAX_DISCARD)
				return MHD_NO;	/* close the connection */
		}
		else
		{
			buf_append(&req->body, upload_data, n);
			if (req->body.oom)
				return MHD_NO;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	req->answered = true;
	return handle(c, url, method, req);
}

static void
request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
				  enum MHD_RequestTerminationCode toe)
{
	Req		   *req = *con_cls;

	(void) cls;
	(void) c;
	(void) toe;
	if (req)
	{
		buf_free(&req->body);
		free(req);
		*con_cls = NULL;
	}
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char		m[512];
	size_t		n;

	(void) cls;
	vsnprintf(m, sizeof(m), fmt, ap);
	n = strlen(m);
	while (n > 0 && m[n - 1] == '\n')
		m[--n] = '\0';
	if (gw_config.verbose)
		gw_log("http: %s", m);
}

struct MHD_Daemon *
http_start(void)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	struct sockaddr *sa;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
		MHD_USE_AUTO | MHD_USE_ERROR_LOG;

	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (inet_pton(AF_INET, gw_config.host, &a4.sin_addr) == 1)
	{
		a4.sin_family = AF_INET;
		a4.sin_port = htons((uint16_t) gw_config.port);
		sa = (struct sockaddr *) &a4;
	}
	else if (inet_pton(AF_INET6, gw_config.host, &a6.sin6_addr) == 1)
	{
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons((uint16_t) gw_config.port);
		sa = (struct sockaddr *) &a6;
		flags |= MHD_USE_IPv6;
	}
	else if (strcmp(gw_config.host, "localhost") == 0)
	{
		a4.sin_family = AF_INET;
		a4.sin_port = htons((uint16_t) gw_config.port);
		a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa = (struct sockaddr *) &a4;
	}
	else
	{
		gw_log("--host must be an IPv4 or IPv6 address (or localhost): %s", gw_config.host);
		return NULL;
	}

	/*
	 * No MHD_OPTION_LISTENING_ADDRESS_REUSE: with 1 it sets SO_REUSEPORT, and
	 * a second gateway started on a busy port then silently shares it (the
	 * kernel splits connections between two gateways, possibly on different
	 * databases).  libmicrohttpd's default, SO_REUSEADDR, still allows an
	 * immediate restart on the same port.
	 */
	return MHD_start_daemon(flags, (uint16_t) gw_config.port, NULL, NULL,
							access_handler, NULL,
							MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
							MHD_OPTION_SOCK_ADDR, sa,
							MHD_OPTION_CONNECTION_LIMIT, (unsigned int) gw_config.max_connections,
							MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) gw_config.timeout,
							MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 64 * 1024,
							MHD_OPTION_THREAD_STACK_SIZE, (size_t) 512 * 1024,
							MHD_OPTION_NOTIFY_COMPLETED, request_completed, NULL,
							MHD_OPTION_END);
}
