/*
 * gateway.h — dynindex-gateway: a DynamoDB wire-protocol endpoint that runs
 * each request through dynindex.api() over a pool of libpq connections.
 *
 * Modules:
 *   main.c   options, start and shutdown
 *   loop.c   the event loop (epoll) everything runs on, one thread; knows
 *            descriptors and hooks, nothing of HTTP or PostgreSQL
 *   mhd.c    libmicrohttpd daemons (external-epoll mode) driven by the loop
 *   http.c   the DynamoDB endpoint on libmicrohttpd: protocol checks,
 *            suspend/resume around database work, connection limit
 *   pool.c   non-blocking libpq connections in pipeline mode, the API call,
 *            access-key lookup; a pool per server (the primary, each standby);
 *            eventually consistent reads go where its router (standby.c) says
 *   jobs.c   jobs and their results, the access-key cache (shared with local.c)
 *   local.c  dynindex_http only: runs the jobs inside the server, through SPI
 *   bgworker.c  dynindex_http only: the background workers and their settings
 *   standby.c  eventually consistent reads on standbys: which requests, the
 *            standbys' replay lag, the choice of a standby; above the pool,
 *            which calls it only through the router it registers
 *   metrics.c  Prometheus metrics on a separate port; the counts are pushed
 *            to it (metrics_request, ...); in dynindex_http they are kept
 *            per worker in shared memory and summed by the scrape
 *   sigv4.c  AWS Signature Version 4 verification
 *   errmap.c PostgreSQL error -> DynamoDB error response
 *   util.c   growable buffer, JSON string escaping, request ids
 *   selftest.c  unit tests (`dynindex-gateway --self-test`)
 */
#ifndef DYNINDEX_GATEWAY_H
#define DYNINDEX_GATEWAY_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE			/* strptime, timegm */
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DynamoDB's limit on the size of one HTTP request body (16 MB). */
#define GW_MAX_REQUEST_BYTES (16 * 1024 * 1024)

/* ---- compress.c ---- */
/* DynamoDB compresses responses of this many bytes or more, if asked to. */
#define GW_COMPRESS_THRESHOLD 4096
#define GW_ENC_NONE 0
#define GW_ENC_GZIP 1
#define GW_ENC_DEFLATE 2
#define GW_GUNZIP_OK 0
#define GW_GUNZIP_CORRUPT (-1)
#define GW_GUNZIP_TOO_LARGE (-2)
#define GW_GUNZIP_OOM (-3)
struct Buf;
/* Inflate one or more concatenated gzip members into out (at most max_out bytes). */
extern int	gw_gunzip(const char *in, size_t len, size_t max_out, struct Buf *out);
/* The coding to answer with, from an Accept-Encoding header (NULL: none). */
extern int	gw_accept_encoding(const char *header);
/* Compress (GW_ENC_GZIP or GW_ENC_DEFLATE) into a malloc'd *out. */
extern bool gw_compress(int enc, const char *in, size_t len, char **out, size_t *out_len);

/* ---- util.c ---- */
typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		oom;			/* an allocation failed; contents unusable */
} Buf;

extern void buf_init(Buf *b);
extern void buf_free(Buf *b);
extern void buf_append(Buf *b, const char *s, size_t n);
extern void buf_puts(Buf *b, const char *s);
extern void buf_printf(Buf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. */
extern void buf_json_string(Buf *b, const char *s);
/* Detach the data (NUL-terminated); the caller frees it. */
extern char *buf_steal(Buf *b, size_t *len);
/*
 * Remove the whitespace outside strings from JSON text (in place; the result
 * is NUL-terminated if s[len] was): PostgreSQL's jsonb output puts a space
 * after every ':' and ',', DynamoDB's responses have none.  Returns the new
 * length.
 */
extern size_t gw_json_compact(char *s, size_t len);

/* 52 random uppercase letters and digits, NUL-terminated (buffer of 53). */
extern void gw_request_id(char out[53]);
extern void gw_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern void (*gw_log_hook) (const char *msg);
/* max_connections lowered to what the open-file limit allows (raised first), reserved files aside. */
extern int	gw_fit_file_limit(int max_connections, long reserved);
/* Append s as a Prometheus label value (quoted, escaped). */
extern void label_value(Buf *b, const char *s);

/* ---- errmap.c ---- */

/* An error response to send: HTTP status and JSON body. */
typedef struct GwError
{
	int			status;
	char	   *body;			/* malloc'd JSON */
	size_t		body_len;
	char		type[101];		/* the error's name, e.g. ValidationException */
} GwError;

/* Build a DynamoDB error body: __type from name (service-qualified), message
 * (NULL: no message member), extra members from detail_json (a JSON object
 * text, or NULL). */
extern void gw_error_make(GwError *e, const char *name, const char *message,
						  const char *detail_json);

/*
 * Map a PostgreSQL error (sqlstate, primary message, detail) to a DynamoDB
 * error.  op and table name (may be NULL) and principal (role name, may be
 * NULL) feed AccessDeniedException's message.
 */
extern void gw_error_from_pg(GwError *e, const char *sqlstate, const char *message,
							 const char *detail, const char *op,
							 const char *table, const char *principal,
							 const char *region);

/* __type prefix for an error name, e.g. "com.amazon.coral.validate#". */
extern const char *gw_error_namespace(const char *name);

/* ---- sigv4.c ---- */
typedef struct SigHeader
{
	char	   *name;			/* lowercase */
	char	   *value;
} SigHeader;

typedef struct SigRequest
{
	const char *method;
	const char *path;			/* decoded path, e.g. "/" */
	const char *canonical_query;	/* already canonical ("" if none) */
	SigHeader  *headers;
	int			nheaders;
	const char *payload_hash;	/* lowercase hex SHA-256 of the body */
} SigRequest;

typedef struct SigAuth
{
	char		access_key[129];
	char		date[9];		/* scope date YYYYMMDD */
	char		region[64];
	char		service[64];
	char		terminator[64];
	char		signed_headers[2048];
	char		signature[65];
} SigAuth;

typedef enum SigStatus
{
	SIG_OK = 0,
	SIG_MISSING,				/* MissingAuthenticationTokenException */
	SIG_INCOMPLETE,				/* IncompleteSignatureException */
	SIG_INVALID,				/* InvalidSignatureException */
	SIG_UNRECOGNIZED			/* UnrecognizedClientException */
} SigStatus;

/* Parse an Authorization header; on failure fills msg. */
extern SigStatus sigv4_parse(const char *authorization, const char *amz_date,
							 SigAuth *out, char *msg, size_t msglen);
/* Checks the scope, date and clock skew (now: unix time). */
extern SigStatus sigv4_check_scope(const SigAuth *a, const char *amz_date, long now,
								   char *msg, size_t msglen);
/* Compute the expected signature (64 hex chars + NUL) for request r. */
extern bool sigv4_sign(const SigRequest *r, const SigAuth *a, const char *amz_date,
					   const char *secret, char out[65]);
/* Canonical request and string to sign (for tests and diagnostics). */
extern bool sigv4_canonical_request(const SigRequest *r, const char *signed_headers, Buf *out);
extern void sigv4_hex_sha256(const void *data, size_t len, char out[65]);
/* SigV4 URI encoding of s (encode_slash: also '/'). */
extern void sigv4_uri_encode(Buf *b, const char *s, bool encode_slash);
/* Constant-time comparison of two NUL-terminated strings. */
extern bool sigv4_equal(const char *a, const char *b);

/* ---- loop.c ---- */
typedef void (*LoopHandler) (void *arg, uint32_t events);

/* One watched file descriptor of the event loop. */
typedef struct LoopWatch
{
	int			fd;
	uint32_t	events;
	LoopHandler fn;
	void	   *arg;
} LoopWatch;

extern double gw_now(void);
extern bool loop_init(bool take_signals);
extern void loop_stop(int sig);
extern bool loop_add(LoopWatch *w, int fd, uint32_t events);
extern bool loop_mod(LoopWatch *w, uint32_t events);
extern void loop_del(LoopWatch *w);
extern bool loop_hook(int (*timeout_ms) (void), void (*after_pass) (void));
extern int	loop_run(void);

/* ---- mhd.c ---- */
struct MHD_Daemon;
struct sockaddr_storage;
extern bool mhd_watch(struct MHD_Daemon *d);
extern void mhd_unwatch(struct MHD_Daemon *d);
extern void mhd_resumed(void);
extern void mhd_progress(void);
extern unsigned long mhd_run_count(void);
extern bool mhd_sockaddr(const char *host, int port, struct sockaddr_storage *ss, bool *ipv6);

/* ---- pool.c ---- */
typedef struct GwConfig
{
	const char *host;
	int			port;
	const char *conninfo;
	int			pool_size;
	int			pipeline_depth; /* requests sent ahead on one database connection */
	int			max_connections;
	int			timeout;		/* seconds, idle HTTP connection */
	int			request_timeout;	/* seconds a request may wait for its answer */
	const char *region;			/* default region (no SigV4 scope) */
	const char *account_id;		/* account id in ARNs */
	const char *tls_cert;		/* PEM files; both set: HTTPS */
	const char *tls_key;
	const char *metrics_host;
	int			metrics_port;	/* 0: no metrics endpoint */
	bool		dev;
	bool		verbose;
	bool		reuse_port;		/* SO_REUSEPORT: dynindex_http's workers share the port */
	const char **standbys;		/* --standby conninfos (hot standbys of the primary) */
	int			nstandbys;
	double		max_standby_lag;	/* seconds; a standby lagging more is not used */
	bool		gsi_read_your_writes;	/* every GSI read waits for the writes before it (docs/gsi.md) */
} GwConfig;

extern GwConfig gw_config;

typedef enum DbStatus
{
	DB_OK,						/* json holds the result */
	DB_ERROR,					/* a PostgreSQL error: sqlstate, message, detail */
	DB_SERIALIZATION,			/* the request body is not valid JSON */
	DB_UNAVAILABLE,				/* no connection (server down); the request did not run */
	DB_UNKNOWN,					/* the connection failed after the request was sent */
	DB_TIMEOUT					/* no answer within --request-timeout */
} DbStatus;

typedef struct DbResult
{
	DbStatus	status;
	char	   *json;
	size_t		json_len;
	char		sqlstate[6];
	char	   *message;
	char	   *detail;
	char	   *table;			/* TableName (or ResourceArn) of the request, on 42501 */
} DbResult;

/*
 * The statements a request runs.  The function scans in FROM run set_config
 * first (role, region), then the target list calls the API; is_local makes
 * both last only until the statement's transaction ends (commit or abort).
 * api_text: JSON text in and out, so strings may hold U+0000
 * (src/types/nulstr.c).
 */
#define API_SQL "SELECT dynindex.api_text($2::text, $3::text) FROM pg_catalog.set_config('dynindex.region', $1, true) AS g"
#define API_ROLE_SQL "SELECT dynindex.api_text($3::text, $4::text) FROM pg_catalog.set_config('role', $1, true) AS r, pg_catalog.set_config('dynindex.region', $2, true) AS g"
/*
 * The same with dynindex.gsi_read_your_writes set for the request (header
 * X-Dynindex-Gsi-Consistency), $3 / $4: not prepared, so that a server whose
 * library predates the setting never sees it unless a client asks for it.
 */
#define API_RYW_SQL "SELECT dynindex.api_text($3::text, $4::text) FROM pg_catalog.set_config('dynindex.region', $1, true) AS g, pg_catalog.set_config('dynindex.gsi_read_your_writes', $2, true) AS c"
#define API_ROLE_RYW_SQL "SELECT dynindex.api_text($4::text, $5::text) FROM pg_catalog.set_config('role', $1, true) AS r, pg_catalog.set_config('dynindex.region', $2, true) AS g, pg_catalog.set_config('dynindex.gsi_read_your_writes', $3, true) AS c"
/* The request header that asks for read-your-writes GSI reads, and its values. */
#define GSI_CONSISTENCY_HEADER "X-Dynindex-Gsi-Consistency"
#define KEY_SQL "SELECT secret_access_key, role_name FROM dynindex.access_keys WHERE access_key_id = $1"

typedef enum DbJobKind
{
	JOB_API,					/* dynindex.api(op, body) as role, in region */
	JOB_KEY,					/* look an access key up */
	JOB_SQL,					/* a query without parameters (metrics) */
	JOB_SETUP					/* internal: statements run once per connection */
} DbJobKind;

struct PgSlot;
struct pg_result;
typedef struct Pool Pool;		/* the connections to one server (pool.c) */

/*
 * One unit of database work.  The caller fills the inputs and db_submit()s
 * it; done() is called exactly once, on the loop thread, with result (or
 * pgres for JOB_SQL) filled.  The inputs must stay valid until done() runs;
 * after it returns the pool owns (and frees) the job.
 */
typedef struct DbJob
{
	DbJobKind	kind;
	const char *op;
	const char *body;
	const char *role;			/* NULL: the gateway's own role */
	const char *region;
	const char *sql;
	bool		eventual;		/* JOB_API: an eventually consistent read (may go to a standby) */
	const char *gsi_consistency;	/* JOB_API: "on"/"off" for dynindex.gsi_read_your_writes
									 * (header X-Dynindex-Gsi-Consistency), NULL: the endpoint's */
	DbResult	result;
	struct pg_result *pgres;	/* JOB_SQL: the result (done() takes it) */
	char		secret[129];	/* JOB_KEY: found secret and role */
	char		key_role[64];
	int			key_found;		/* JOB_KEY: 1 found, 0 unknown, -1 error */
	void		(*done) (struct DbJob *j);
	void	   *arg;
	/* pool-internal */
	double		deadline;
	int			attempts;
	int			stage;
	int			setup;
	bool		sent;
	bool		abandoned;
	struct pg_result *res;
	struct PgSlot *slot;
	Pool	   *pool;			/* the server it was given to */
	struct DbJob *next;
} DbJob;

extern bool pool_init(void);
extern void pool_shutdown(void);
extern DbJob *db_job_new(DbJobKind kind, void (*done) (DbJob *), void *arg);
extern void db_submit(DbJob *j);
extern void db_submit_to(Pool *p, DbJob *j);
extern void db_tick(void);
/* Run j at once if this process can (dynindex_http): done() has run, j is freed. */
extern bool db_run_now(DbJob *j);
extern void db_result_free(DbResult *r);
/* jobs.c: the API call's answer or error into j->result, for pool.c and local.c */
extern void db_result_json(DbJob *j, const char *json, size_t n);
extern void db_result_error(DbJob *j, const char *sqlstate, const char *message,
							const char *detail, const char *context, const char *logged);
extern void keys_store(DbJob *j, bool found, const char *secret, const char *role);

/* Access keys: a cache in front of JOB_KEY.  1 found, 0 unknown, -1 not cached. */
extern int	keys_cached(const char *access_key, char *secret, size_t secretlen,
						char *role, size_t rolelen);

/* Pool figures for the metrics endpoint. */
typedef struct PoolStats
{
	int			size;
	int			ready;
	int			connecting;
	int			busy;			/* connections with requests in flight */
	int			inflight;		/* requests sent, not answered */
	int			queued;			/* requests waiting for a connection */
	uint64_t	connects;		/* successful connections (the first included) */
	uint64_t	reconnects;		/* successful connections replacing a lost one */
	uint64_t	connect_failures;
	uint64_t	lost;			/* connections lost while open */
	uint64_t	timeouts;
	uint64_t	unknown_outcome;
	uint64_t	retried;		/* requests re-sent: they had certainly not run */
} PoolStats;
extern void pool_stats(PoolStats *s);
extern void pool_stats_of(const Pool *p, PoolStats *s);
extern Pool *pool_primary(void);
extern Pool *pool_standby(int i);
extern int	pool_nstandbys(void);
extern const char *pool_name(const Pool *p);
extern int	pool_load(const Pool *p);

/* What became of an eventually consistent read (the pool tells its router). */
typedef enum ReadEvent
{
	READ_ANSWERED,				/* the server it was given to answered it */
	READ_REROUTED				/* a standby did not answer it: it went to the primary */
} ReadEvent;

/*
 * The routing of eventually consistent reads among the pools, which the layer
 * above (standby.c) fills in: the pool calls nothing of it by name.  Without
 * a router every request goes to the primary.
 */
typedef struct PoolRouter
{
	/* The pool for an eventually consistent read, or NULL: the primary. */
	Pool	   *(*choose) (void);
	/* A read answered by (or rerouted from) pool p. */
	void		(*count) (const Pool *p, ReadEvent e);
	/* In db_tick, before the pool's timers: the router's own jobs (probes). */
	void		(*tick) (double now);
} PoolRouter;
/* Route through r (static storage; NULL: no routing). */
extern void pool_set_router(const PoolRouter *r);

/* ---- standby.c ---- */
/* Is this request an eventually consistent read (it may be served by a standby)? */
extern bool gw_eventual_read(const char *op, const char *body);
/* Parse a duration ("1s", "500ms", "2.5", "1min"): seconds, or -1 if invalid. */
extern double gw_parse_duration(const char *s);
/*
 * After pool_init: set up the standbys' state and become the pool's router
 * (pool_set_router) when the pool has standbys.  The router sends the probes
 * (the primary's WAL position, each standby's replay position), chooses a
 * usable standby with the least load for each eventually consistent read, and
 * counts the reads.
 */
extern void standby_init(void);
/* The standbys' state and counters, in Prometheus text. */
extern void standby_metrics(Buf *b);
/* How often the loop must run for the probes (ms), or -1 without standbys. */
extern int	standby_tick_ms(void);

/* ---- http.c ---- */
extern bool http_start(void);
extern void http_stop(void);
extern int	http_bound_port(void);

/* ---- metrics.c ---- */
/* The callers push what is counted (http.c: requests, connections). */
extern bool metrics_start(void);
extern void metrics_stop(void);
extern void metrics_request(const char *op, int status, const char *error_type, double seconds);
extern void metrics_connection(int delta_open, int evicted);
extern void metrics_in_flight(int delta);
extern int	metrics_bound_port(void);
/* dynindex_http: the workers' counters in shared memory (see metrics.c). */
extern size_t metrics_shared_size(int nworkers);
extern void metrics_use_shared(void *mem, int nworkers, int worker);

/* ---- util.c (JSON) ---- */
/* Skip JSON whitespace; a JSON string (p at its quote; *escaped: it holds a backslash,
 * unless NULL); one JSON value of any kind.  The skips return NULL if malformed. */
extern const char *gw_json_ws(const char *p);
extern const char *gw_json_skip_string(const char *p, bool *escaped);
extern const char *gw_json_skip_value(const char *p);
/* The value of a top-level string member of a JSON object text (malloc'd), or NULL. */
extern char *gw_json_top_string(const char *json, const char *name);
/* Is s[0..len) one syntactically valid JSON text? */
extern bool gw_json_valid(const char *s, size_t len);

/* ---- selftest.c ---- */
extern int	gw_self_test(void);

#endif
