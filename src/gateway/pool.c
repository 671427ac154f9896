/*
 * pool.c — a fixed pool of libpq connections, the dynindex.api() call and the
 * access-key lookup (with a short cache).
 *
 * A connection found broken (server restart, network) is closed and opened
 * again on next use; a call that lost its connection is retried once on a
 * fresh one.  While the server is down, calls fail fast with DB_UNAVAILABLE.
 */
#include "gateway.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

GwConfig	gw_config;

typedef struct Slot
{
	PGconn	   *conn;
	bool		busy;
	bool		prepared;		/* API_STMT and API_ROLE_STMT are prepared on conn */
} Slot;

/*
 * The API call is a prepared statement on each pooled connection: parsing and
 * planning `SELECT dynindex.api($1, $2)` once instead of per request saves
 * about a fifth of a GetItem's time in the backend (measured with pgbench:
 * 0.103 ms simple vs 0.081 ms prepared).  If preparing fails (e.g. the
 * extension is not installed yet) the call falls back to PQexecParams, and
 * preparing is tried again on the next connection.  PostgreSQL re-plans the
 * statement by itself if the function is replaced.
 */
/* api_text: JSON text in and out, so strings may hold U+0000 (src/types/nulstr.c) */
#define API_SQL "SELECT dynindex.api_text($1::text, $2::text)"
#define API_STMT "dynindex_api"

/*
 * The same call as an access key's role, in one round trip: the function scan
 * in FROM runs set_config first, then the target list calls the API as that
 * role; is_local makes the role last only until the statement's implicit
 * transaction ends (commit or abort), so the connection goes back to the
 * pool in the gateway's own role without a RESET ROLE.
 */
#define API_ROLE_SQL "SELECT dynindex.api_text($2::text, $3::text) FROM pg_catalog.set_config('role', $1, true) AS r"
/* the same for a database still at extension version 0.1 (no U+0000 in strings there) */
#define API_SQL_01 "SELECT dynindex.api($1::text, $2::jsonb)"
#define API_ROLE_SQL_01 "SELECT dynindex.api($2::text, $3::jsonb) FROM pg_catalog.set_config('role', $1, true) AS r"
#define API_ROLE_STMT "dynindex_api_role"

static Slot *slots;
static int	nslots;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;

static PGconn *
connect_db(void)
{
	const char *keys[] = {"dbname", "fallback_application_name", "connect_timeout", NULL};
	const char *vals[] = {gw_config.conninfo, "dynindex-gateway", "5", NULL};
	PGconn	   *c;

	/* dbname may be a full connection string; later keywords only fill gaps. */
	if (gw_config.conninfo == NULL || gw_config.conninfo[0] == '\0')
	{
		keys[0] = "fallback_application_name";
		vals[0] = "dynindex-gateway";
		keys[1] = "connect_timeout";
		vals[1] = "5";
		keys[2] = NULL;
		vals[2] = NULL;
	}
	c = PQconnectdbParams(keys, vals, 1);
	if (c == NULL)
		return NULL;
	if (PQstatus(c) != CONNECTION_OK)
	{
		char	   *m = PQerrorMessage(c);
		size_t		n = strlen(m);

		while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
			m[--n] = '\0';
		gw_log("cannot connect to PostgreSQL: %s", m);
		PQfinish(c);
		return NULL;
	}
	return c;
}

static bool slot_connect(Slot *s);

bool
pool_init(void)
{
	nslots = gw_config.pool_size;
	slots = calloc((size_t) nslots, sizeof(Slot));
	if (slots == NULL)
		return false;
	/* Open one connection up front so configuration errors show at start. */
	return slot_connect(&slots[0]);
}

void
pool_shutdown(void)
{
	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < nslots; i++)
	{
		if (slots[i].conn && !slots[i].busy)
		{
			PQfinish(slots[i].conn);
			slots[i].conn = NULL;
		}
	}
	pthread_mutex_unlock(&pool_lock);
}

/* Take a slot; NULL if none became free within the acquire timeout. */
static Slot *
pool_acquire(void)
{
	struct timespec deadline;
	Slot	   *s = NULL;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += gw_config.acquire_timeout;
	pthread_mutex_lock(&pool_lock);
	for (;;)
	{
		/* Prefer a slot with an open connection. */
		for (int i = 0; i < nslots && !s; i++)
			if (!slots[i].busy && slots[i].conn)
				s = &slots[i];
		for (int i = 0; i < nslots && !s; i++)
			if (!slots[i].busy)
				s = &slots[i];
		if (s)
		{
			s->busy = true;
			break;
		}
		if (pthread_cond_timedwait(&pool_cond, &pool_lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&pool_lock);
	return s;
}

static void
pool_release(Slot *s)
{
	pthread_mutex_lock(&pool_lock);
	s->busy = false;
	pthread_cond_signal(&pool_cond);
	pthread_mutex_unlock(&pool_lock);
}

/* Make sure the slot has a usable connection. */
static bool
slot_connect(Slot *s)
{
	if (s->conn && PQstatus(s->conn) == CONNECTION_OK)
		return true;
	if (s->conn)
		PQfinish(s->conn);
	s->prepared = false;
	s->conn = connect_db();
	if (s->conn)
	{
		PGresult   *res = PQprepare(s->conn, API_STMT, API_SQL, 2, NULL);
		bool		v01 = false;
		/* a database still at extension version 0.1 has no dynindex.api_text */
		const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

		if (st && strcmp(st, "42883") == 0)
		{
			PQclear(res);
			res = PQprepare(s->conn, API_STMT, API_SQL_01, 2, NULL);
			v01 = true;
		}
		s->prepared = res && PQresultStatus(res) == PGRES_COMMAND_OK;
		PQclear(res);
		if (s->prepared)
		{
			res = PQprepare(s->conn, API_ROLE_STMT, v01 ? API_ROLE_SQL_01 : API_ROLE_SQL, 3, NULL);
			s->prepared = res && PQresultStatus(res) == PGRES_COMMAND_OK;
			PQclear(res);
		}
	}
	return s->conn != NULL;
}

static void
slot_drop(Slot *s)
{
	if (s->conn)
		PQfinish(s->conn);
	s->conn = NULL;
	s->prepared = false;
}

/* Did this result (or its absence) mean the connection is gone? */
static bool
connection_lost(PGconn *c, PGresult *res)
{
	const char *st;

	if (res == NULL || PQstatus(c) != CONNECTION_OK)
		return true;
	if (PQresultStatus(res) != PGRES_FATAL_ERROR)
		return false;
	st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	if (st == NULL)
		return true;			/* client-side failure, e.g. server closed */
	return strncmp(st, "08", 2) == 0 || strcmp(st, "57P01") == 0 ||
		strcmp(st, "57P02") == 0 || strcmp(st, "57P03") == 0;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void
trim_newline(char *s)
{
	size_t		n;

	if (!s)
		return;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

void
db_result_free(DbResult *r)
{
	free(r->json);
	free(r->message);
	free(r->detail);
	free(r->table);
	memset(r, 0, sizeof(*r));
}

/* Fill r from a failed API call. */
static void
take_error(PGconn *c, PGresult *res, const char *body, bool with_role, DbResult *r)
{
	const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *ctx = PQresultErrorField(res, PG_DIAG_CONTEXT);

	snprintf(r->sqlstate, sizeof(r->sqlstate), "%s", st ? st : "XX000");
	r->message = dup_or_null(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
	r->detail = dup_or_null(PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL));
	r->status = DB_ERROR;

	/* The body failed jsonb input: it is not valid JSON. */
	if (ctx && (strstr(ctx, with_role ? "portal parameter $3" : "portal parameter $2") ||
				strstr(ctx, "dynindex request body")) &&
		(strncmp(r->sqlstate, "22", 2) == 0 || strcmp(r->sqlstate, "54001") == 0))
	{
		r->status = DB_SERIALIZATION;
		return;
	}
	if (strcmp(r->sqlstate, "42501") == 0)
	{
		const char *params[1] = {body};
		PGresult   *t = PQexecParams(c, "SELECT coalesce($1::jsonb ->> 'TableName', $1::jsonb ->> 'ResourceArn')", 1, NULL,
									 params, NULL, NULL, 0);

		if (t && PQresultStatus(t) == PGRES_TUPLES_OK && PQntuples(t) == 1 &&
			!PQgetisnull(t, 0, 0))
			r->table = strdup(PQgetvalue(t, 0, 0));
		PQclear(t);
	}
	if (strncmp(r->sqlstate, "YD", 2) != 0 && strcmp(r->sqlstate, "42501") != 0)
	{
		char	   *m = PQresultErrorMessage(res);

		gw_log("internal error from dynindex.api: %s%s", m, "");
	}
}

/*
 * Did set_config refuse the role (the gateway's role is not a member of it,
 * or it does not exist)?  A misconfiguration, not the client's fault.  The
 * messages are check_role()'s in PostgreSQL's variable.c.
 */
static bool
role_refused(PGresult *res)
{
	const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (PQresultStatus(res) != PGRES_FATAL_ERROR || st == NULL || m == NULL)
		return false;
	return (strcmp(st, "42501") == 0 && strncmp(m, "permission denied to set role", 29) == 0) ||
		(strcmp(st, "22023") == 0 && strncmp(m, "role \"", 6) == 0 &&
		 strstr(m, "\" does not exist") != NULL);
}

void
db_call_api(const char *op, const char *body, const char *role, DbResult *r)
{
	Slot	   *s;

	memset(r, 0, sizeof(*r));
	r->status = DB_UNAVAILABLE;
	s = pool_acquire();
	if (s == NULL)
	{
		gw_log("no database connection free within %d s", gw_config.acquire_timeout);
		return;
	}
	for (int attempt = 0; attempt < 2; attempt++)
	{
		const char *params[3] = {role, op, body};
		PGresult   *res;

		if (!slot_connect(s))
			break;

		if (s->prepared)
			res = role ? PQexecPrepared(s->conn, API_ROLE_STMT, 3, params, NULL, NULL, 0)
				: PQexecPrepared(s->conn, API_STMT, 2, params + 1, NULL, NULL, 0);
		else
			res = role ? PQexecParams(s->conn, API_ROLE_SQL, 3, NULL, params, NULL, NULL, 0)
				: PQexecParams(s->conn, API_SQL, 2, NULL, params + 1, NULL, NULL, 0);
		if (connection_lost(s->conn, res))
		{
			if (res && PQresultStatus(res) == PGRES_FATAL_ERROR)
			{
				char	   *m = strdup(PQresultErrorMessage(res));

				trim_newline(m);
				gw_log("lost the database connection%s: %s",
					   attempt == 0 ? ", retrying once" : "", m ? m : "");
				free(m);
			}
			PQclear(res);
			slot_drop(s);
			continue;
		}
		if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
			!PQgetisnull(res, 0, 0))
		{
			size_t		n = (size_t) PQgetlength(res, 0, 0);

			r->json = malloc(n + 1);
			if (r->json)
			{
				memcpy(r->json, PQgetvalue(res, 0, 0), n + 1);
				r->json_len = n;
				r->status = DB_OK;
			}
			else
				r->status = DB_UNAVAILABLE;
		}
		else if (role && role_refused(res))
		{
			char	   *m = strdup(PQresultErrorMessage(res));

			trim_newline(m);
			gw_log("cannot switch to role \"%s\" (is the gateway's role a member?): %s",
				   role, m ? m : "");
			free(m);
			snprintf(r->sqlstate, sizeof(r->sqlstate), "XX000");
			r->status = DB_ERROR;
		}
		else if (PQresultStatus(res) == PGRES_FATAL_ERROR)
			take_error(s->conn, res, body, role != NULL, r);
		else
		{
			gw_log("dynindex.api returned no result (status %s)",
				   PQresStatus(PQresultStatus(res)));
			snprintf(r->sqlstate, sizeof(r->sqlstate), "XX000");
			r->status = DB_ERROR;
		}
		PQclear(res);
		break;
	}
	pool_release(s);
}

/* ---- access keys ---- */

#define KEY_CACHE_SIZE 256
#define KEY_TTL_FOUND 10
#define KEY_TTL_MISSING 2

typedef struct KeyEntry
{
	char		id[129];
	char		secret[129];
	char		role[64];
	bool		found;
	time_t		expires;
} KeyEntry;

static KeyEntry key_cache[KEY_CACHE_SIZE];
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned
key_hash(const char *s)
{
	unsigned	h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h % KEY_CACHE_SIZE;
}

int
keys_lookup(const char *access_key, char *secret, size_t secretlen,
			char *role, size_t rolelen)
{
	unsigned	h = key_hash(access_key);
	time_t		now = time(NULL);
	KeyEntry	e;
	Slot	   *s;
	int			result = -1;

	if (strlen(access_key) >= sizeof(e.id))
		return 0;
	pthread_mutex_lock(&key_lock);
	if (strcmp(key_cache[h].id, access_key) == 0 && key_cache[h].expires > now)
	{
		e = key_cache[h];
		pthread_mutex_unlock(&key_lock);
		if (e.found)
		{
			snprintf(secret, secretlen, "%s", e.secret);
			snprintf(role, rolelen, "%s", e.role);
		}
		return e.found ? 1 : 0;
	}
	pthread_mutex_unlock(&key_lock);

	s = pool_acquire();
	if (s == NULL)
		return -1;
	for (int attempt = 0; attempt < 2; attempt++)
	{
		const char *params[1] = {access_key};
		PGresult   *res;

		if (!slot_connect(s))
			break;
		res = PQexecParams(s->conn,
						   "SELECT secret_access_key, role_name FROM dynindex.access_keys WHERE access_key_id = $1",
						   1, NULL, params, NULL, NULL, 0);
		if (connection_lost(s->conn, res))
		{
			PQclear(res);
			slot_drop(s);
			continue;
		}
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
		{
			memset(&e, 0, sizeof(e));
			snprintf(e.id, sizeof(e.id), "%s", access_key);
			e.found = PQntuples(res) == 1;
			if (e.found)
			{
				snprintf(e.secret, sizeof(e.secret), "%s", PQgetvalue(res, 0, 0));
				snprintf(e.role, sizeof(e.role), "%s", PQgetvalue(res, 0, 1));
				snprintf(secret, secretlen, "%s", e.secret);
				snprintf(role, rolelen, "%s", e.role);
			}
			e.expires = now + (e.found ? KEY_TTL_FOUND : KEY_TTL_MISSING);
			pthread_mutex_lock(&key_lock);
			key_cache[h] = e;
			pthread_mutex_unlock(&key_lock);
			result = e.found ? 1 : 0;
		}
		else
		{
			char	   *m = strdup(PQresultErrorMessage(res));

			trim_newline(m);
			gw_log("cannot look up access keys (is dynindex installed?): %s", m ? m : "");
			free(m);
		}
		PQclear(res);
		break;
	}
	pool_release(s);
	return result;
}
