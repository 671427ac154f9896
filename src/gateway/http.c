/*
 * http.c — the DynamoDB HTTP JSON 1.0 endpoint on libmicrohttpd.
 *
 * libmicrohttpd runs in external-epoll mode inside the gateway's one event
 * loop (loop.c, through mhd.c): no thread per connection, an idle keep-alive connection
 * costs its socket and a small buffer.  A request that needs the database is
 * suspended (MHD_suspend_connection) while its job runs on the pool and
 * resumed when the answer is in; requests of one connection are answered in
 * order (libmicrohttpd reads the next one only after the answer).
 *
 * Connection limit: when --max-connections are open, each new client closes
 * the connection that has been idle longest (as nginx and DynamoDB do), so a
 * new client is not refused while idle connections exist.  Idle and slow
 * clients are cut off after --timeout.
 *
 * Order of checks (DynamoDB's, as dynalite recorded it from the service):
 * method and path (404), content type (404), body size (413), JSON syntax
 * (SerializationException), target operation (UnknownOperationException),
 * authentication, an empty or non-object body (SerializationException),
 * then the operation itself.
 */
#include "gateway.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
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

/* The operation named op (a pointer into operations[]), or NULL if unknown. */
static const char *
known_operation(const char *op)
{
	for (int i = 0; operations[i]; i++)
		if (strcmp(operations[i], op) == 0)
			return operations[i];
	return NULL;
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

/* One client connection: libmicrohttpd's socket context. */
typedef struct GwConn
{
	int			fd;
	double		idle_since;
	bool		idle;			/* in the idle list (between requests) */
	bool		evicted;		/* shut down by us, closing */
	bool		split_writes;	/* its client sent a body after its headers, separately */
	struct GwConn *prev;
	struct GwConn *next;
} GwConn;

typedef enum ReqStep
{
	STEP_BODY,					/* receiving the body */
	STEP_KEY,					/* suspended: access-key lookup */
	STEP_API,					/* suspended: the API call */
	STEP_DONE					/* answered */
} ReqStep;

/* One request (libmicrohttpd's per-request context). */
typedef struct Req
{
	Buf			body;			/* inflated if the request was compressed */
	Buf			raw;			/* the bytes received, when body was inflated from them */
	bool		too_large;
	size_t		discarded;
	double		start;
	ReqStep		step;
	struct MHD_Connection *c;
	const char *op;				/* points into operations[] */
	const char *resp_ctype;
	char		reqid[53];
	SigAuth		auth;
	char		amz_date[17];
	char		role[64];
	char		region[64];
	char		secret[129];
	int			key_found;
	DbResult	db;
	bool		suspended;		/* waiting for its job (the gateway's pool) */
	unsigned long headers_run;	/* the MHD_run that read its headers */
} Req;

static struct MHD_Daemon *api_daemon;

/* Connections between requests, longest idle first. */
static GwConn *idle_head;
static GwConn *idle_tail;
static int	nconns;				/* open, as libmicrohttpd counts them */
static int	nevicting;			/* of which shut down by us, not yet closed */

/* Take g out of the idle list. */
static void
idle_remove(GwConn *g)
{
	if (!g->idle)
		return;
	if (g->prev)
		g->prev->next = g->next;
	else
		idle_head = g->next;
	if (g->next)
		g->next->prev = g->prev;
	else
		idle_tail = g->prev;
	g->prev = g->next = NULL;
	g->idle = false;
}

/* g is idle from now: append it to the idle list. */
static void
idle_append(GwConn *g)
{
	idle_remove(g);
	if (g->evicted)
		return;
	g->idle_since = gw_now();
	g->prev = idle_tail;
	g->next = NULL;
	if (idle_tail)
		idle_tail->next = g;
	else
		idle_head = g;
	idle_tail = g;
	g->idle = true;
}

/*
 * Over the connection limit: close the connections idle longest (never the
 * new one).  shutdown() makes libmicrohttpd read end-of-file and close the
 * connection on its next pass; the client sees an idle keep-alive connection
 * closed, which HTTP clients handle by opening a new one when they need it.
 */
static void
enforce_limit(GwConn *newest)
{
	while (nconns - nevicting > gw_config.max_connections)
	{
		GwConn	   *v = idle_head;

		if (v == NULL || v == newest)
			return;
		idle_remove(v);
		v->evicted = true;
		nevicting++;
		(void) shutdown(v->fd, SHUT_RDWR);
		metrics_connection(0, 1);
		if (gw_config.verbose)
			gw_log("connection limit (%d) reached: closed the longest idle connection",
				   gw_config.max_connections);
	}
}

/* libmicrohttpd: a connection opened or closed. */
static void
notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
				  enum MHD_ConnectionNotificationCode toe)
{
	(void) cls;
	mhd_progress();
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
	{
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		GwConn	   *g = calloc(1, sizeof(GwConn));

		*socket_context = g;
		nconns++;
		metrics_connection(1, 0);
		if (g == NULL)
			return;
		g->fd = ci ? ci->connect_fd : -1;
		idle_append(g);
		enforce_limit(g);
	}
	else
	{
		GwConn	   *g = *socket_context;

		nconns--;
		metrics_connection(-1, 0);
		if (g)
		{
			if (g->evicted)
				nevicting--;
			idle_remove(g);
			free(g);
		}
		*socket_context = NULL;
	}
}

/* Our context of connection c. */
static GwConn *
conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
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

/* Log (with --verbose) and count a finished request. */
static void
finish_request(Req *req, const char *method, const char *op, int status, const char *error_type)
{
	double		secs = gw_now() - req->start;

	req->step = STEP_DONE;
	metrics_request(op, status, error_type, secs);
	if (gw_config.verbose)
		gw_log("%s %s -> %d%s%s (%.1f ms)", method, op ? op : "-", status,
			   error_type ? " " : "", error_type ? error_type : "", secs * 1000.0);
}

/* Answer with a GwError and account for it. */
static enum MHD_Result
respond_gwerror(struct MHD_Connection *c, Req *req, const char *method, GwError *e)
{
	finish_request(req, method, req->op, e->status, e->type);
	return respond(c, e->status, e->body, e->body_len, req->resp_ctype, req->reqid);
}

/* Answer with DynamoDB error name (message may be NULL). */
static enum MHD_Result
respond_error(struct MHD_Connection *c, Req *req, const char *method,
			  const char *name, const char *message)
{
	GwError		e;

	gw_error_make(&e, name, message, NULL);
	return respond_gwerror(c, req, method, &e);
}

/* HTTP 413, as DynamoDB answers a request over its 16 MB limit. */
static enum MHD_Result
respond_too_large(struct MHD_Connection *c, Req *req, const char *method)
{
	char		m[128];
	GwError		e;

	snprintf(m, sizeof(m), "Request Entity Too Large: the limit is %d bytes", GW_MAX_REQUEST_BYTES);
	gw_error_make(&e, "RequestEntityTooLarge", m, NULL);
	e.status = 413;
	return respond_gwerror(c, req, method, &e);
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

/* The request's X-Amz-Date (or Date, converted) into req->amz_date; false if none. */
static bool
request_amz_date(struct MHD_Connection *c, Req *req)
{
	const char *amz_date = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Date");

	req->amz_date[0] = '\0';
	if (amz_date)
	{
		snprintf(req->amz_date, sizeof(req->amz_date), "%s", amz_date);
		/* longer than 16 characters: keep it invalid */
		if (strlen(amz_date) >= sizeof(req->amz_date))
			snprintf(req->amz_date, sizeof(req->amz_date), "invalid");
		return true;
	}
	{
		const char *d = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Date");

		if (d && http_date_to_amz(d, req->amz_date))
			return true;
	}
	return false;
}

/*
 * First half of SigV4: parse the Authorization header and check the scope
 * and date (no database needed).  SIG_OK or an error status with its message.
 */
static SigStatus
auth_parse(struct MHD_Connection *c, Req *req, char *msg, size_t msglen)
{
	const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *amz_date;
	SigStatus	st;

	if (authz == NULL && MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "X-Amz-Algorithm"))
	{
		snprintf(msg, msglen, "Request is missing Authentication Token");
		return SIG_MISSING;
	}
	amz_date = request_amz_date(c, req) ? req->amz_date : NULL;
	st = sigv4_parse(authz, amz_date, &req->auth, msg, msglen);
	if (st == SIG_MISSING)
		snprintf(msg, msglen, "Request is missing Authentication Token");
	if (st != SIG_OK)
		return st;
	return sigv4_check_scope(&req->auth, amz_date, (long) time(NULL), msg, msglen);
}

/*
 * Second half of SigV4, once the key's secret is known: the body hash and
 * the signature itself.
 */
static SigStatus
auth_verify(struct MHD_Connection *c, const char *method, const char *url, Req *req,
			char *msg, size_t msglen)
{
	char		expected[65];
	char		body_hash[65];
	HeaderList	headers;
	QueryList	query;
	Buf			cq;
	SigRequest	sr;
	SigStatus	st;

	/*
	 * The payload hash of the canonical request is always the hash of the
	 * body received, as DynamoDB computes it: UNSIGNED-PAYLOAD (an S3
	 * option) or any other X-Amz-Content-Sha256 value signed instead of the
	 * body's hash is a signature mismatch (sigv4.c).
	 */
	{
		/* the signature covers the bytes as sent (compressed, if they were) */
		const Buf  *b = req->raw.data ? &req->raw : &req->body;

		sigv4_hex_sha256(b->data ? b->data : "", b->len, body_hash);
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
	sr.payload_hash = body_hash;
	st = SIG_OK;
	if (!sigv4_sign(&sr, &req->auth, req->amz_date, req->secret, expected))
	{
		snprintf(msg, msglen, "Internal server error");
		st = SIG_OK + 100;
	}
	else if (!sigv4_equal(expected, req->auth.signature))
	{
		snprintf(msg, msglen, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
		st = SIG_INVALID;
	}
	memset(req->secret, 0, sizeof(req->secret));
	buf_free(&cq);
	free_headers(&headers);
	return st;
}

/* DynamoDB's exception name for a SigV4 failure. */
static const char *
sig_error_name(SigStatus st)
{
	switch (st)
	{
		case SIG_OK:
			return NULL;
		case SIG_MISSING:
			return "MissingAuthenticationTokenException";
		case SIG_INCOMPLETE:
			return "IncompleteSignatureException";
		case SIG_INVALID:
			return "InvalidSignatureException";
		case SIG_UNRECOGNIZED:
			return "UnrecognizedClientException";
		default:
			return "InternalServerError";
	}
}

/* A database job of this request finished: wake the connection up. */
static void
job_done(DbJob *j)
{
	Req		   *req = j->arg;

	if (req->step == STEP_KEY)
	{
		req->key_found = j->key_found;
		snprintf(req->secret, sizeof(req->secret), "%s", j->secret);
		snprintf(req->role, sizeof(req->role), "%s", j->key_role);
		if (j->result.status == DB_TIMEOUT)
			req->key_found = -1;
	}
	else
	{
		req->db = j->result;
		memset(&j->result, 0, sizeof(j->result));
	}
	if (req->suspended)
	{
		req->suspended = false;
		MHD_resume_connection(req->c);
		mhd_resumed();
	}
}

static enum MHD_Result step_after_job(struct MHD_Connection *c, const char *url,
									  const char *method, Req *req);
static enum MHD_Result step_after_key(struct MHD_Connection *c, const char *url,
									  const char *method, Req *req);
static enum MHD_Result step_after_api(struct MHD_Connection *c, const char *method, Req *req);

/*
 * Run a job for the request.  The gateway suspends the connection until its
 * pool has the answer; dynindex_http runs the job at once, in the handler
 * (db_run_now: a worker runs one request at a time anyway), and goes on with
 * the request without a suspend/resume round through libmicrohttpd.
 */
static enum MHD_Result
run_job(struct MHD_Connection *c, Req *req, const char *url, const char *method, DbJob *j)
{
	if (j == NULL)
		return respond_error(c, req, method, "InternalServerError", "Internal server error");
	if (db_run_now(j))
		return step_after_job(c, url, method, req);
	req->suspended = true;
	MHD_suspend_connection(c);
	db_submit(j);
	return MHD_YES;
}

/* The request's job is done: go on from the step it was in. */
static enum MHD_Result
step_after_job(struct MHD_Connection *c, const char *url, const char *method, Req *req)
{
	if (req->step == STEP_KEY)
		return step_after_key(c, url, method, req);
	return step_after_api(c, method, req);
}

/* The access key is known (or not): verify the signature, then the rest. */
static enum MHD_Result step_after_auth(struct MHD_Connection *c, const char *url,
									   const char *method, Req *req);

/* After the key lookup: the signature check. */
static enum MHD_Result
step_after_key(struct MHD_Connection *c, const char *url, const char *method, Req *req)
{
	char		msg[4096];
	SigStatus	st;

	if (req->key_found < 0)
		return respond_error(c, req, method, "InternalServerError", "Internal server error");
	if (req->key_found == 0)
		return respond_error(c, req, method, "UnrecognizedClientException",
							 "The security token included in the request is invalid.");
	st = auth_verify(c, method, url, req, msg, sizeof(msg));
	if (st != SIG_OK)
		return respond_error(c, req, method, sig_error_name(st), msg);
	snprintf(req->region, sizeof(req->region), "%s", req->auth.region);
	return step_after_auth(c, url, method, req);
}

/* Authenticated: inflate, check the body, run the operation. */
static enum MHD_Result
step_after_auth(struct MHD_Connection *c, const char *url, const char *method, Req *req)
{
	DbJob	   *j;
	const char *gsi_consistency = NULL;

	(void) url;

	/*
	 * An empty body, or JSON that is not an object: DynamoDB checks this
	 * after authentication (its JSON syntax check came before the target).
	 * PostgreSQL's jsonb input checks the rest (\u0000, depth).
	 */
	{
		const char *p = req->body.data ? req->body.data : "";
		const char *end = p + req->body.len;

		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p == end || *p != '{' || memchr(req->body.data, '\0', req->body.len) != NULL)
			return respond_error(c, req, method, "SerializationException", NULL);
	}

	/*
	 * DescribeEndpoints: where to send this service's requests, which only the
	 * gateway knows (DynamoDB names its regional host; we name ours, as the
	 * client reached it).
	 */
	if (strcmp(req->op, "DescribeEndpoints") == 0)
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
		finish_request(req, method, req->op, 200, NULL);
		return respond(c, 200, b.data, b.len, req->resp_ctype, req->reqid);
	}

	/*
	 * X-Dynindex-Gsi-Consistency (beyond DynamoDB, docs/gsi.md): a Query or
	 * Scan of a GSI that waits for the writes committed before it
	 * ("read-your-writes"), or DynamoDB's eventual consistency ("eventual")
	 * whatever the endpoint's default.  Such a read goes to the primary: a
	 * standby replays the writes later than they were acknowledged.
	 */
	{
		const char *gc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, GSI_CONSISTENCY_HEADER);

		if (gc && strcasecmp(gc, "read-your-writes") == 0)
			gsi_consistency = "on";
		else if (gc && strcasecmp(gc, "eventual") == 0)
			gsi_consistency = "off";
		else if (gc)
			return respond_error(c, req, method, "ValidationException",
								 "The value of header " GSI_CONSISTENCY_HEADER " must be read-your-writes or eventual");
	}

	j = db_job_new(JOB_API, job_done, req);
	if (j)
	{
		j->op = req->op;
		j->body = req->body.data;
		j->role = req->role[0] ? req->role : NULL;
		j->region = req->region;
		j->gsi_consistency = gsi_consistency;
		j->eventual = gw_config.nstandbys > 0 && gw_eventual_read(req->op, req->body.data) &&
			!(gsi_consistency ? strcmp(gsi_consistency, "on") == 0 : gw_config.gsi_read_your_writes);
	}
	req->step = STEP_API;
	return run_job(c, req, url, method, j);
}

/* The API call is done: answer. */
static enum MHD_Result
step_after_api(struct MHD_Connection *c, const char *method, Req *req)
{
	DbResult   *db = &req->db;
	enum MHD_Result ret;
	GwError		e;

	switch (db->status)
	{
		case DB_OK:
			/* DynamoDB answers these two with an empty body, not "{}". */
			if (strcmp(req->op, "TagResource") == 0 || strcmp(req->op, "UntagResource") == 0)
				db->json_len = 0;
			else
				db->json_len = gw_json_compact(db->json, db->json_len);
			finish_request(req, method, req->op, 200, NULL);
			ret = respond(c, 200, db->json, db->json_len, req->resp_ctype, req->reqid);
			db->json = NULL;
			return ret;
		case DB_SERIALIZATION:
			return respond_error(c, req, method, "SerializationException", NULL);
		case DB_ERROR:
			gw_error_from_pg(&e, db->sqlstate, db->message, db->detail, req->op, db->table,
							 req->role[0] ? req->role : NULL, req->region);
			return respond_gwerror(c, req, method, &e);
		case DB_UNAVAILABLE:
		case DB_UNKNOWN:
		case DB_TIMEOUT:
		default:
			return respond_error(c, req, method, "InternalServerError", "Internal server error");
	}
}

/*
 * A compressed request (the SDKs' request compression): DynamoDB takes gzip
 * only; another coding, or a body that is not gzip, is its HTTP 500
 * InternalServerError.  The inflated body has the same 16 MB limit as an
 * uncompressed one; the signature is checked over the bytes as received
 * (kept in req->raw).  Returns 0 (fine), 413 or 500.
 */
static int
inflate_body(struct MHD_Connection *c, Req *req)
{
	const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
	Buf			plain;
	int			zr = GW_GUNZIP_CORRUPT;

	if (ce == NULL || *ce == '\0' || strcasecmp(ce, "identity") == 0)
		return 0;
	buf_init(&plain);
	if (strcasecmp(ce, "gzip") == 0)
		zr = gw_gunzip(req->body.data ? req->body.data : "", req->body.len,
					   GW_MAX_REQUEST_BYTES, &plain);
	if (zr != GW_GUNZIP_OK)
	{
		buf_free(&plain);
		return zr == GW_GUNZIP_TOO_LARGE ? 413 : 500;
	}
	req->raw = req->body;
	req->body = plain;
	return 0;
}

/* The health answer, CORS preflight, and DynamoDB's answer to anything but POST /. */
static enum MHD_Result
handle_non_api(struct MHD_Connection *c, const char *url, const char *method, Req *req, bool *handled)
{
	*handled = true;
	if (strcmp(method, "GET") == 0 && strcmp(url, "/") == 0)
	{
		char	   *b = strdup(HEALTH_BODY);

		finish_request(req, method, NULL, 200, NULL);
		return respond(c, 200, b, b ? strlen(HEALTH_BODY) : 0, NULL, req->reqid);
	}
	if (strcmp(method, "OPTIONS") == 0 &&
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"))
	{
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *) "", MHD_RESPMEM_PERSISTENT);
		const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Headers");
		const char *m = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Method");
		enum MHD_Result ret;

		if (r == NULL)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, GW_SERVER_HEADER);
		MHD_add_response_header(r, "x-amzn-RequestId", req->reqid);
		MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
		MHD_add_response_header(r, "Access-Control-Expose-Headers", GW_CORS_EXPOSE);
		if (h)
			MHD_add_response_header(r, "Access-Control-Allow-Headers", h);
		if (m)
			MHD_add_response_header(r, "Access-Control-Allow-Methods", m);
		MHD_add_response_header(r, "Access-Control-Max-Age", "172800");
		ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		finish_request(req, method, NULL, 200, NULL);
		return ret;
	}
	*handled = false;
	return MHD_YES;
}

/* A complete request: the checks that need no database, then the first job. */
static enum MHD_Result
step_start(struct MHD_Connection *c, const char *url, const char *method, Req *req)
{
	const char *ctype_hdr;
	char		ctype[64];
	const char *target;
	bool		handled;
	enum MHD_Result ret;

	ret = handle_non_api(c, url, method, req, &handled);
	if (handled)
		return ret;

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

		finish_request(req, method, NULL, 404, "UnknownOperationException");
		return respond(c, 404, b, b ? strlen(b) : 0, NULL, req->reqid);
	}
	/*
	 * The response's Content-Type follows the request's, as DynamoDB's does:
	 * application/x-amz-json-1.0 if the request said so, else
	 * application/json (also for a request without a body or a type).
	 */
	req->resp_ctype = strcasecmp(ctype, "application/x-amz-json-1.0") == 0 ?
		"application/x-amz-json-1.0" : "application/json";

	if (req->too_large)
		return respond_too_large(c, req, method);

	/*
	 * DynamoDB parses the body before it looks at the target: a body that is
	 * not JSON is a SerializationException even without X-Amz-Target.
	 */
	switch (inflate_body(c, req))
	{
		case 413:
			return respond_too_large(c, req, method);
		case 500:
			return respond_error(c, req, method, "InternalServerError", "Internal server error");
		default:
			break;
	}
	if (req->body.len > 0 && !gw_json_valid(req->body.data, req->body.len))
		return respond_error(c, req, method, "SerializationException", NULL);

	target = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Target");
	if (target && strncmp(target, TARGET_PREFIX, strlen(TARGET_PREFIX)) == 0)
		req->op = known_operation(target + strlen(TARGET_PREFIX));
	else if (target && strncmp(target, STREAMS_TARGET_PREFIX, strlen(STREAMS_TARGET_PREFIX)) == 0)
	{
		for (int i = 0; streams_operations[i]; i++)
			if (strcmp(streams_operations[i], target + strlen(STREAMS_TARGET_PREFIX)) == 0)
				req->op = streams_operations[i];
	}
	if (req->op == NULL)
		return respond_error(c, req, method, "UnknownOperationException", NULL);

	snprintf(req->region, sizeof(req->region), "%s", gw_config.region ? gw_config.region : "");
	if (!gw_config.dev)
	{
		char		msg[4096];
		SigStatus	st = auth_parse(c, req, msg, sizeof(msg));
		DbJob	   *j;

		if (st != SIG_OK)
			return respond_error(c, req, method, sig_error_name(st), msg);
		req->key_found = keys_cached(req->auth.access_key, req->secret, sizeof(req->secret),
									 req->role, sizeof(req->role));
		if (req->key_found >= 0)
			return step_after_key(c, url, method, req);
		j = db_job_new(JOB_KEY, job_done, req);
		if (j)
			j->body = req->auth.access_key;
		req->step = STEP_KEY;
		return run_job(c, req, url, method, j);
	}

	/*
	 * --dev: no authentication, but a signed request still names its region
	 * in the credential scope, and ARNs carry it.
	 */
	{
		const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
		char		msg[256];

		if (authz && sigv4_parse(authz, request_amz_date(c, req) ? req->amz_date : NULL,
								 &req->auth, msg, sizeof(msg)) == SIG_OK && req->auth.region[0])
			snprintf(req->region, sizeof(req->region), "%s", req->auth.region);
	}
	return step_after_auth(c, url, method, req);
}

/*
 * The headers of a request with a body are in: acknowledge them at once.
 * Clients that write the headers and the body separately (Perl's HTTP::Tiny,
 * for one) hold the body back under Nagle's algorithm until the headers are
 * acknowledged, and a delayed ACK would add 40 ms to every request on a
 * keep-alive connection.  TCP_QUICKACK sends the ACK the kernel has pending.
 * It costs a system call and an ACK segment, so only connections whose client
 * was seen writing that way get it: the body of one of its requests arrived in
 * a later read than the headers (the first requests of a connection are
 * acknowledged at once by the kernel anyway: it starts in quick-ack mode).
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
	mhd_progress();
	if (req == NULL)
	{
		const char *cl;
		GwConn	   *g = conn_of(c);

		req = calloc(1, sizeof(Req));
		if (req == NULL)
			return MHD_NO;
		buf_init(&req->body);
		buf_init(&req->raw);
		req->start = gw_now();
		req->c = c;
		req->step = STEP_BODY;
		req->resp_ctype = "application/x-amz-json-1.0";
		gw_request_id(req->reqid);
		*con_cls = req;
		metrics_in_flight(1);
		if (g)
			idle_remove(g);
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		req->headers_run = mhd_run_count();
		if (cl && strcmp(method, "POST") == 0 && g && g->split_writes)
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
				return respond_too_large(c, req, method);
		}
		return MHD_YES;
	}
	if (req->step == STEP_DONE)
	{
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (req->step != STEP_BODY)
		return step_after_job(c, url, method, req);
	if (*upload_data_size > 0)
	{
		size_t		n = *upload_data_size;
		GwConn	   *g = conn_of(c);

		/* the body came in a later read than the headers: see ack_headers_now */
		if (req->body.len == 0 && !req->too_large && mhd_run_count() != req->headers_run && g)
			g->split_writes = true;

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
	return step_start(c, url, method, req);
}

static void
request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
				  enum MHD_RequestTerminationCode toe)
{
	Req		   *req = *con_cls;
	GwConn	   *g = conn_of(c);

	(void) cls;
	mhd_progress();
	if (req)
	{
		buf_free(&req->body);
		buf_free(&req->raw);
		db_result_free(&req->db);
		memset(req->secret, 0, sizeof(req->secret));
		free(req);
		*con_cls = NULL;
		metrics_in_flight(-1);
	}
	if (g && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		idle_append(g);
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

/* Read a whole (PEM) file into a malloc'd string. */
static char *
read_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	Buf			b;
	char		chunk[4096];
	size_t		n;

	if (f == NULL)
	{
		gw_log("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	return buf_steal(&b, NULL);
}

/* Start the API endpoint in the event loop. */
bool
http_start(void)
{
	struct sockaddr_storage ss;
	bool		ipv6;
	unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem opts[16];
	int			n = 0;
	/* room for connections being closed while new ones arrive */
	unsigned int hard_limit = (unsigned int) gw_config.max_connections +
		(unsigned int) (gw_config.max_connections / 4) + 64;

	if (!mhd_sockaddr(gw_config.host, gw_config.port, &ss, &ipv6))
		return false;
	if (ipv6)
		flags |= MHD_USE_IPv6;
	if (gw_config.tls_cert && gw_config.tls_key)
	{
		char	   *cert = read_file(gw_config.tls_cert);
		char	   *key = read_file(gw_config.tls_key);

		if (cert == NULL || key == NULL)
		{
			free(cert);
			free(key);
			return false;
		}
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_CERT, 0, cert};
		opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_KEY, 0, key};
	}
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t) mhd_log, NULL};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_SOCK_ADDR, 0, &ss};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_LIMIT, (intptr_t) hard_limit, NULL};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_TIMEOUT, gw_config.timeout, NULL};
	/*
	 * Per-connection buffer (request line, headers, body chunks): libmicrohttpd
	 * 0.9.75 zeroes the whole buffer between requests, so every kept-alive
	 * connection holds all of it resident (64 KB: 527 MB for 8,000 idle
	 * connections).  16 KB still takes any real request's headers (larger
	 * headers get HTTP 431; bodies are streamed through it in chunks).
	 */
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t) 16 * 1024, NULL};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, NULL};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) request_completed, NULL};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t) notify_connection, NULL};

	/*
	 * The gateway sets no MHD_OPTION_LISTENING_ADDRESS_REUSE: with 1 it sets
	 * SO_REUSEPORT, and a second gateway started on a busy port would then
	 * silently share it (the kernel splits connections between two gateways,
	 * possibly on different databases).  libmicrohttpd's default,
	 * SO_REUSEADDR, still allows an immediate restart on the same port.  The
	 * in-server endpoint's workers need SO_REUSEPORT to share their port.
	 */
	if (gw_config.reuse_port)
		opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL};
	opts[n++] = (struct MHD_OptionItem) {MHD_OPTION_END, 0, NULL};

	api_daemon = MHD_start_daemon(flags, (uint16_t) gw_config.port, NULL, NULL,
								  access_handler, NULL,
								  MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (api_daemon == NULL)
		return false;
	if (!mhd_watch(api_daemon))
	{
		MHD_stop_daemon(api_daemon);
		api_daemon = NULL;
		return false;
	}
	return true;
}

/* The port the API endpoint listens on. */
int
http_bound_port(void)
{
	const union MHD_DaemonInfo *info;

	if (api_daemon == NULL)
		return -1;
	info = MHD_get_daemon_info(api_daemon, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : gw_config.port;
}

/* Stop the API endpoint. */
void
http_stop(void)
{
	if (api_daemon)
	{
		mhd_unwatch(api_daemon);
		MHD_stop_daemon(api_daemon);
		api_daemon = NULL;
	}
}
