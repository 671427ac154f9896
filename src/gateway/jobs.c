/*
 * jobs.c — what the two ways of running a request share: the libpq pool of
 * dynindex-gateway (pool.c) and the in-server endpoint of dynindex_http
 * (local.c).  A job and its result, how an error of the API call becomes a
 * DbResult, and the access-key cache in front of the key lookup.
 */
#include "gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

GwConfig	gw_config;

/* A new job of this kind; done(job) will be called with the outcome. */
DbJob *
db_job_new(DbJobKind kind, void (*done) (DbJob *), void *arg)
{
	DbJob	   *j = calloc(1, sizeof(DbJob));

	if (j == NULL)
		return NULL;
	j->kind = kind;
	j->done = done;
	j->arg = arg;
	return j;
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

/* The API call answered json (n bytes). */
void
db_result_json(DbJob *j, const char *json, size_t n)
{
	DbResult   *r = &j->result;

	r->json = malloc(n + 1);
	if (r->json == NULL)
	{
		r->status = DB_UNAVAILABLE;
		return;
	}
	memcpy(r->json, json, n);
	r->json[n] = '\0';
	r->json_len = n;
	r->status = DB_OK;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/*
 * Did set_config refuse the role (the endpoint's role is not a member of it,
 * or it does not exist)?  A misconfiguration, not the client's fault.  The
 * messages are check_role()'s in PostgreSQL's variable.c.
 */
static bool
role_refused(const char *sqlstate, const char *message)
{
	if (sqlstate == NULL || message == NULL)
		return false;
	return (strcmp(sqlstate, "42501") == 0 && strncmp(message, "permission denied to set role", 29) == 0) ||
		(strcmp(sqlstate, "22023") == 0 && strncmp(message, "role \"", 6) == 0 &&
		 strstr(message, "\" does not exist") != NULL);
}

/*
 * The API call failed with this PostgreSQL error (context: the error's
 * CONTEXT lines; logged: the whole error on one line, for the log).
 */
void
db_result_error(DbJob *j, const char *sqlstate, const char *message, const char *detail,
				const char *context, const char *logged)
{
	DbResult   *r = &j->result;

	if (j->role && role_refused(sqlstate, message))
	{
		gw_log("cannot switch to role \"%s\" (is the endpoint's role a member?): %s",
			   j->role, message);
		snprintf(r->sqlstate, sizeof(r->sqlstate), "XX000");
		r->status = DB_ERROR;
		return;
	}
	snprintf(r->sqlstate, sizeof(r->sqlstate), "%s", sqlstate ? sqlstate : "XX000");
	r->message = dup_or_null(message);
	r->detail = dup_or_null(detail);
	r->status = DB_ERROR;
	/* The body failed jsonb input: it is not valid JSON. */
	if (context && (strstr(context, j->role ? "portal parameter $4" : "portal parameter $3") ||
					strstr(context, "dynindex request body")) &&
		(strncmp(r->sqlstate, "22", 2) == 0 || strcmp(r->sqlstate, "54001") == 0))
	{
		r->status = DB_SERIALIZATION;
		return;
	}
	if (strcmp(r->sqlstate, "42501") == 0)
	{
		r->table = gw_json_top_string(j->body, "TableName");
		if (r->table == NULL)
			r->table = gw_json_top_string(j->body, "ResourceArn");
	}
	/*
	 * A client error (HTTP 4xx) is traffic, not a server error: counted in
	 * the metrics, logged only with --verbose (as every request).  A server
	 * failure -- InternalServerError, ServiceUnavailable, any PostgreSQL
	 * error outside class YD -- is logged.
	 */
	if ((strncmp(r->sqlstate, "YD", 2) != 0 && strcmp(r->sqlstate, "42501") != 0) ||
		strcmp(r->sqlstate, "YD500") == 0 || strcmp(r->sqlstate, "YD503") == 0)
		gw_log("internal error from dynindex.api: %s", logged ? logged : "");
}

/* ---- access keys: a cache in front of JOB_KEY ---- */

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

static unsigned
key_hash(const char *s)
{
	unsigned	h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h % KEY_CACHE_SIZE;
}

int
keys_cached(const char *access_key, char *secret, size_t secretlen,
			char *role, size_t rolelen)
{
	KeyEntry   *e = &key_cache[key_hash(access_key)];

	if (strlen(access_key) >= sizeof(e->id))
		return 0;
	if (strcmp(e->id, access_key) != 0 || e->expires <= time(NULL))
		return -1;
	if (e->found)
	{
		snprintf(secret, secretlen, "%s", e->secret);
		snprintf(role, rolelen, "%s", e->role);
	}
	return e->found ? 1 : 0;
}

/* The lookup of key job j (its body is the access key id) found secret and role, or not. */
void
keys_store(DbJob *j, bool found, const char *secret, const char *role)
{
	KeyEntry   *e = &key_cache[key_hash(j->body)];

	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", j->body);
	e->found = found;
	if (found)
	{
		snprintf(e->secret, sizeof(e->secret), "%s", secret);
		snprintf(e->role, sizeof(e->role), "%s", role);
		snprintf(j->secret, sizeof(j->secret), "%s", e->secret);
		snprintf(j->key_role, sizeof(j->key_role), "%s", e->role);
	}
	e->expires = time(NULL) + (found ? KEY_TTL_FOUND : KEY_TTL_MISSING);
	j->key_found = found ? 1 : 0;
}
