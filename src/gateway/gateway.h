/*
 * gateway.h — dynindex-gateway: a DynamoDB wire-protocol endpoint that runs
 * each request through dynindex.api() over a pool of libpq connections.
 *
 * Modules:
 *   main.c   options, daemon start and shutdown
 *   http.c   the libmicrohttpd request handler (protocol checks, responses)
 *   pool.c   libpq connection pool, the API call, access-key lookup
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

/* ---- errmap.c ---- */

/* An error response to send: HTTP status and JSON body. */
typedef struct GwError
{
	int			status;
	char	   *body;			/* malloc'd JSON */
	size_t		body_len;
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

/* ---- pool.c ---- */
typedef struct GwConfig
{
	const char *host;
	int			port;
	const char *conninfo;
	int			pool_size;
	int			max_connections;
	int			timeout;		/* seconds, idle HTTP connection */
	int			acquire_timeout;	/* seconds to wait for a free db connection */
	bool		dev;
	bool		verbose;
} GwConfig;

extern GwConfig gw_config;

typedef enum DbStatus
{
	DB_OK,						/* json holds the result */
	DB_ERROR,					/* a PostgreSQL error: sqlstate, message, detail */
	DB_SERIALIZATION,			/* the request body is not valid JSON */
	DB_UNAVAILABLE				/* no connection (server down, pool exhausted) */
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

extern bool pool_init(void);
extern void pool_shutdown(void);
/* Run dynindex.api(op, body) as role (NULL: as the gateway's own role). */
extern void db_call_api(const char *op, const char *body, const char *role, DbResult *r);
extern void db_result_free(DbResult *r);

/* Look an access key up (cached).  1 found, 0 unknown, -1 database error. */
extern int	keys_lookup(const char *access_key, char *secret, size_t secretlen,
						char *role, size_t rolelen);

/* ---- http.c ---- */
struct MHD_Daemon;
extern struct MHD_Daemon *http_start(void);

/* ---- selftest.c ---- */
extern int	gw_self_test(void);

#endif
