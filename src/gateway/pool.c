/*
 * pool.c — a small pool of non-blocking libpq connections in pipeline mode,
 * driven by the event loop; the dynindex.api() call and the access-key lookup.
 *
 * A request becomes a DbJob.  It is sent on an idle connection if there is
 * one, else on a connection being opened, else pipelined behind the requests
 * already sent on the least busy connection (at most --pipeline-depth), else
 * it waits in a queue.  Every request is followed by its own Sync, so each is
 * its own implicit transaction: a failing request affects no other, and the
 * role and region set with set_config(..., true) end with it.
 *
 * Failures: a job that was never sent (no connection, or the connection was
 * found closed before sending) is sent again elsewhere.  A job that was sent
 * when its connection failed may or may not have committed: it is answered
 * DB_UNKNOWN (InternalServerError) and never re-sent, as a non-idempotent
 * write must not apply twice.  Only the read-only key lookup is re-sent.
 * While no connection can be opened (an outage: PostgreSQL stopped, killed,
 * restarting), every waiting job fails at once with DB_UNAVAILABLE, and at
 * most one connection attempt of the pool is in flight: the next job's, or
 * the pool's own, retried with back-off (BACKOFF_MIN doubling up to
 * BACKOFF_MAX) so that the end of the outage is noticed without traffic.
 * An outage is logged once when it starts and once when it ends.  A job
 * unanswered after --request-timeout gets DB_TIMEOUT (its statement is
 * cancelled).
 *
 * Standbys (--standby): each has a pool of its own, the same kind.  A job
 * marked eventual (an eventually consistent read) goes to the pool its router
 * chooses (standby.c, the layer above, registers it with pool_set_router: a
 * usable standby -- up, in recovery, replay lag within --max-standby-lag),
 * else to the primary.  A read is safe to run twice, so a job a standby did
 * not answer with a result -- its connection failed, it could not be sent, or
 * an error came back (the standby may not have replayed the table yet) -- is
 * sent again to the primary, which answers it: a standby that fails loses no
 * request.
 */
#include "gateway.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include <libpq-fe.h>


/*
 * The API call is a prepared statement on each connection: parsing and
 * planning once instead of per request saves about a fifth of a GetItem's
 * backend time.  If preparing fails (the extension is not installed yet) the
 * call is sent with PQsendQueryParams and preparing is tried again on the next
 * connection.
 *
 * The statements (API_SQL, API_ROLE_SQL, KEY_SQL) are in gateway.h: the
 * in-server endpoint (local.c) runs the same ones.
 */
#define API_STMT "dynindex_api"
#define API_ROLE_STMT "dynindex_api_role"
/* the same for a database still at extension version 0.1 (no api_text, no U+0000 in strings) */
#define API_SQL_01 "SELECT dynindex.api($2::text, $3::jsonb) FROM pg_catalog.set_config('dynindex.region', $1, true) AS g"
#define API_ROLE_SQL_01 "SELECT dynindex.api($3::text, $4::jsonb) FROM pg_catalog.set_config('role', $1, true) AS r, pg_catalog.set_config('dynindex.region', $2, true) AS g"
#define API_RYW_SQL_01 "SELECT dynindex.api($3::text, $4::jsonb) FROM pg_catalog.set_config('dynindex.region', $1, true) AS g, pg_catalog.set_config('dynindex.gsi_read_your_writes', $2, true) AS c"
#define API_ROLE_RYW_SQL_01 "SELECT dynindex.api($4::text, $5::jsonb) FROM pg_catalog.set_config('role', $1, true) AS r, pg_catalog.set_config('dynindex.region', $2, true) AS g, pg_catalog.set_config('dynindex.gsi_read_your_writes', $3, true) AS c"
#define PROBE_SQL "SELECT pg_catalog.to_regprocedure('dynindex.api_text(text,text)') IS NULL"

#define SETUP_PROBE 0			/* is the extension at 0.2 (dynindex.api_text)? */
#define SETUP_PREPARE_API 1
#define SETUP_PREPARE_ROLE 2
#define SETUP_ACCOUNT 3
#define SETUP_GSI_RYW 4			/* --gsi-read-your-writes: the connection's default */

/* during an outage, the pool's own connection attempts: every 0.25 s, doubling up to 5 s */
#define BACKOFF_MIN 0.25
#define BACKOFF_MAX 5.0

typedef enum SlotState
{
	SLOT_DOWN,
	SLOT_CONNECTING,
	SLOT_SETUP,					/* connected; prepares in flight */
	SLOT_READY
} SlotState;

struct Pool;

typedef struct PgSlot
{
	int			id;
	struct Pool *pool;
	PGconn	   *conn;
	SlotState	state;
	LoopWatch	watch;
	DbJob	   *head;			/* sent, awaiting results, in order */
	DbJob	   *tail;
	int			inflight;
	bool		prepared;
	bool		v01;			/* the database's extension is at 0.1: call dynindex.api */
	bool		cancel_sent;
	bool		ever_connected;
	double		connect_deadline;
} PgSlot;

/* The connections to one server (the primary, or one standby) and its queue. */
struct Pool
{
	const char *name;			/* "primary", or the standby's host:port */
	const char *conninfo;
	bool		standby;
	PgSlot	   *slots;
	int			nslots;
	DbJob	   *wait_head;		/* waiting for a connection */
	DbJob	   *wait_tail;
	int			nwaiting;
	PoolStats	stats;
	bool		outage;			/* no connection could be opened: jobs fail at once */
	double		outage_since;
	double		retry_at;		/* the pool's next own attempt during the outage */
	double		backoff;		/* seconds from a failed attempt to the next own one */
	long		outage_attempts;	/* failed attempts during the outage */
};

static Pool primary;
static Pool *standbys;
static int	nstandbys;
static double next_tick;
static int	busy_depth;			/* > 0: inside pool processing; dispatch later */
static const PoolRouter *router;	/* the standbys' routing (standby.c), or NULL */

static void dispatch_all(void);
static void slot_event(void *arg, uint32_t events);
static void waitq_push(Pool *p, DbJob *j, bool front);

/* Free a job the pool owns (its done() has run or will never run). */
static void
job_free(DbJob *j)
{
	if (j->res)
		PQclear(j->res);
	if (j->pgres)
		PQclear(j->pgres);
	db_result_free(&j->result);
	memset(j->secret, 0, sizeof(j->secret));
	free(j);
}

/*
 * An eventually consistent read a standby did not answer with a result goes
 * to the primary (a read may run twice).  A body that is not JSON is refused
 * the same way by any server: that answer stands.
 */
static bool
job_reroute(DbJob *j)
{
	if (j->abandoned || j->kind != JOB_API || j->pool == NULL || !j->pool->standby ||
		j->result.status == DB_OK || j->result.status == DB_SERIALIZATION ||
		j->result.status == DB_TIMEOUT)
		return false;
	if (router)
		router->count(j->pool, READ_REROUTED);
	if (gw_config.verbose)
		gw_log("standby %s did not answer a %s (%s): sent to the primary", j->pool->name, j->op,
			   j->result.status == DB_ERROR ? j->result.sqlstate : "connection");
	if (j->res)
	{
		PQclear(j->res);
		j->res = NULL;
	}
	db_result_free(&j->result);
	j->slot = NULL;
	j->sent = false;
	j->stage = 0;
	j->pool = &primary;
	waitq_push(&primary, j, true);
	return true;
}

/* Hand the outcome to the job's owner (once), then free the job. */
static void
job_complete(DbJob *j)
{
	if (job_reroute(j))
		return;
	if (!j->abandoned && j->kind == JOB_API && j->eventual && j->pool && router)
		router->count(j->pool, READ_ANSWERED);
	if (!j->abandoned && j->done)
		j->done(j);
	job_free(j);
}

/* Complete j with a status and no result. */
static void
job_fail(DbJob *j, DbStatus st)
{
	j->result.status = st;
	if (j->kind == JOB_KEY)
		j->key_found = -1;
	job_complete(j);
}

/* Queue j on p to wait for a connection (front: it has waited already). */
static void
waitq_push(Pool *p, DbJob *j, bool front)
{
	j->next = NULL;
	j->pool = p;
	if (p->wait_head == NULL)
		p->wait_head = p->wait_tail = j;
	else if (front)
	{
		j->next = p->wait_head;
		p->wait_head = j;
	}
	else
	{
		p->wait_tail->next = j;
		p->wait_tail = j;
	}
	p->nwaiting++;
}

/* The first job waiting on p, taken off the queue (NULL: none). */
static DbJob *
waitq_pop(Pool *p)
{
	DbJob	   *j = p->wait_head;

	if (j)
	{
		p->wait_head = j->next;
		if (p->wait_head == NULL)
			p->wait_tail = NULL;
		j->next = NULL;
		p->nwaiting--;
	}
	return j;
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

/* Log a libpq message on one line (of a standby's pool: naming the standby). */
static void
log_pq_of(const Pool *p, const char *what, const char *m)
{
	char	   *c = strdup(m ? m : "");

	trim_newline(c);
	if (p && p->standby)
		gw_log("standby %s: %s: %s", p->name, what, c ? c : "");
	else
		gw_log("%s: %s", what, c ? c : "");
	free(c);
}

/* Log a libpq message on one line. */
static void
log_pq(const char *what, const char *m)
{
	log_pq_of(NULL, what, m);
}

/* Has p a connection that is open (READY, or SETUP: its statements run once set up)? */
static bool
pool_usable(const Pool *p)
{
	for (int i = 0; i < p->nslots; i++)
		if (p->slots[i].state == SLOT_READY || p->slots[i].state == SLOT_SETUP)
			return true;
	return false;
}

/* Is a connection of p being opened? */
static bool
pool_connecting(const Pool *p)
{
	for (int i = 0; i < p->nslots; i++)
		if (p->slots[i].state == SLOT_CONNECTING)
			return true;
	return false;
}

/*
 * A connection attempt of p failed: count it.  With no other connection
 * open, this is an outage: log it once, when it starts, and schedule the
 * pool's next own attempt with back-off.
 */
static void
connect_failed(Pool *p, const char *m)
{
	p->stats.connect_failures++;
	if (pool_usable(p))
	{
		/* the server is up but refused one more connection (max_connections...) */
		log_pq_of(p, "cannot open another connection to PostgreSQL", m);
		return;
	}
	if (!p->outage)
	{
		p->outage = true;
		p->outage_since = gw_now();
		p->outage_attempts = 0;
		p->backoff = BACKOFF_MIN;
		log_pq_of(p, "cannot connect to PostgreSQL: requests fail with InternalServerError until it is back (logged once)", m);
	}
	else
		p->backoff = p->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : p->backoff * 2;
	p->outage_attempts++;
	p->retry_at = gw_now() + p->backoff;
}

/* Watch the slot's socket for input, and for output while libpq has unsent data. */
static void
slot_watch_update(PgSlot *s)
{
	uint32_t	ev = EPOLLIN | EPOLLRDHUP;

	if (s->conn == NULL || s->watch.fd < 0)
		return;
	if (s->state == SLOT_CONNECTING)
		return;					/* slot_connect_poll sets the events */
	if (PQflush(s->conn) > 0)
		ev |= EPOLLOUT;
	loop_mod(&s->watch, ev);
}

/* Close the slot's connection (no jobs are attached). */
static void
slot_close(PgSlot *s)
{
	loop_del(&s->watch);
	if (s->conn)
		PQfinish(s->conn);
	s->conn = NULL;
	s->state = SLOT_DOWN;
	s->prepared = false;
	s->cancel_sent = false;
}

/*
 * The connection broke.  Jobs sent on it have an unknown outcome: answered
 * DB_UNKNOWN, except key lookups (read-only), which go back to the queue.
 */
static void
slot_broken(PgSlot *s, const char *why)
{
	DbJob	   *j = s->head;
	Pool	   *p = s->pool;

	if (s->state == SLOT_READY || s->state == SLOT_SETUP)
		p->stats.lost++;
	if (why)
		log_pq_of(p, j ? "lost the database connection with requests in flight (not retried: their outcome is unknown)" :
			   "lost the database connection", why);
	s->head = s->tail = NULL;
	s->inflight = 0;
	slot_close(s);
	while (j)
	{
		DbJob	   *next = j->next;

		j->next = NULL;
		j->slot = NULL;
		if (j->res)
		{
			PQclear(j->res);
			j->res = NULL;
		}
		j->stage = 0;
		if (j->kind == JOB_SETUP)
			job_free(j);
		else if (j->abandoned)
			job_free(j);
		else if ((j->kind == JOB_KEY || j->kind == JOB_SQL) && ++j->attempts < 2)
		{
			j->sent = false;
			p->stats.retried++;
			waitq_push(p, j, true);
		}
		else if (j->kind == JOB_KEY || j->kind == JOB_SQL)
			job_fail(j, DB_UNAVAILABLE);
		else
		{
			if (!p->standby)
				p->stats.unknown_outcome++;
			job_fail(j, DB_UNKNOWN);
		}
		j = next;
	}
}

/* libpq's notices (WARNINGs from the extension) go to the gateway's log. */
static void
notice_processor(void *arg, const char *message)
{
	(void) arg;
	if (gw_config.verbose)
		log_pq("notice", message);
}

/* Start opening a connection on slot s. */
static bool
slot_connect_start(PgSlot *s)
{
	Pool	   *p = s->pool;
	const char *keys[] = {"dbname", "fallback_application_name", "connect_timeout", NULL};
	const char *vals[] = {p->conninfo, "dynindex-gateway", "5", NULL};
	int			fd;

	/* dbname may be a full connection string; later keywords only fill gaps. */
	if (p->conninfo == NULL || p->conninfo[0] == '\0')
	{
		keys[0] = "fallback_application_name";
		vals[0] = "dynindex-gateway";
		keys[1] = "connect_timeout";
		vals[1] = "5";
		keys[2] = NULL;
		vals[2] = NULL;
	}
	s->conn = PQconnectStartParams(keys, vals, 1);
	if (s->conn == NULL || PQstatus(s->conn) == CONNECTION_BAD ||
		(fd = PQsocket(s->conn)) < 0)
	{
		connect_failed(p, s->conn ? PQerrorMessage(s->conn) : "out of memory");
		slot_close(s);
		return false;
	}
	s->state = SLOT_CONNECTING;
	s->connect_deadline = gw_now() + 5.0;
	s->watch.fn = slot_event;
	s->watch.arg = s;
	if (!loop_add(&s->watch, fd, EPOLLOUT))
	{
		p->stats.connect_failures++;
		slot_close(s);
		return false;
	}
	return true;
}

/* Queue one setup statement (its own Sync); false if libpq refused it. */
static bool
send_setup_one(PgSlot *s, int kind)
{
	DbJob	   *j = db_job_new(JOB_SETUP, NULL, NULL);
	int			ok;

	if (j == NULL)
		return false;
	j->setup = kind;
	if (kind == SETUP_PROBE)
		ok = PQsendQueryParams(s->conn, PROBE_SQL, 0, NULL, NULL, NULL, NULL, 0);
	else if (kind == SETUP_PREPARE_API)
		ok = PQsendPrepare(s->conn, API_STMT, s->v01 ? API_SQL_01 : API_SQL, 3, NULL);
	else if (kind == SETUP_PREPARE_ROLE)
		ok = PQsendPrepare(s->conn, API_ROLE_STMT, s->v01 ? API_ROLE_SQL_01 : API_ROLE_SQL, 4, NULL);
	else if (kind == SETUP_GSI_RYW)
		ok = PQsendQueryParams(s->conn, "SELECT pg_catalog.set_config('dynindex.gsi_read_your_writes', 'on', false)",
							   0, NULL, NULL, NULL, NULL, 0);
	else
	{
		const char *p[1] = {gw_config.account_id};

		ok = PQsendQueryParams(s->conn, "SELECT pg_catalog.set_config('dynindex.account_id', $1, false)",
							   1, NULL, p, NULL, NULL, 0);
	}
	if (!ok || !PQpipelineSync(s->conn))
	{
		job_free(j);
		return false;
	}
	j->sent = true;
	j->slot = s;
	if (s->tail)
		s->tail->next = j;
	else
		s->head = j;
	s->tail = j;
	s->inflight++;
	return true;
}

/*
 * Queue the statements every new connection runs first: the probe for the
 * extension's version; when it answers, the prepares (take_setup_result).
 */
static bool
send_setup(PgSlot *s)
{
	return send_setup_one(s, SETUP_PROBE);
}

/* The connection is open: switch to non-blocking pipeline mode and prepare. */
static void
slot_connected(PgSlot *s)
{
	PQsetNoticeProcessor(s->conn, notice_processor, NULL);
	if (PQsetnonblocking(s->conn, 1) != 0 || PQenterPipelineMode(s->conn) != 1)
	{
		log_pq_of(s->pool, "cannot enter pipeline mode", PQerrorMessage(s->conn));
		s->pool->stats.connect_failures++;
		slot_close(s);
		return;
	}
	s->state = SLOT_SETUP;
	s->prepared = true;			/* until a prepare fails */
	s->pool->stats.connects++;
	if (s->pool->outage)
	{
		gw_log("%s%s%sconnected to PostgreSQL again after %.1f s (%ld failed connection attempts)",
			   s->pool->standby ? "standby " : "", s->pool->standby ? s->pool->name : "",
			   s->pool->standby ? ": " : "", gw_now() - s->pool->outage_since, s->pool->outage_attempts);
		s->pool->outage = false;
	}
	if (s->ever_connected)
		s->pool->stats.reconnects++;
	s->ever_connected = true;
	if (!send_setup(s))
	{
		slot_broken(s, PQerrorMessage(s->conn));
		return;
	}
	slot_watch_update(s);
}

/*
 * A connection attempt of p failed: with no connection of p open, nothing
 * waiting there can run now, and it fails at once (not after the outage,
 * nor after --request-timeout), even while other attempts are in flight.
 */
static void
fail_waiting_if_down(Pool *p)
{
	if (pool_usable(p))
		return;
	while (p->wait_head)
		job_fail(waitq_pop(p), DB_UNAVAILABLE);
}

/* Drive a connection attempt. */
static void
slot_connect_poll(PgSlot *s)
{
	PostgresPollingStatusType st = PQconnectPoll(s->conn);
	int			fd = PQsocket(s->conn);

	switch (st)
	{
		case PGRES_POLLING_OK:
			loop_del(&s->watch);
			if (fd < 0 || !loop_add(&s->watch, fd, EPOLLIN | EPOLLRDHUP))
			{
				slot_close(s);
				break;
			}
			slot_connected(s);
			break;
		case PGRES_POLLING_READING:
		case PGRES_POLLING_WRITING:
			{
				uint32_t	ev = st == PGRES_POLLING_READING ? EPOLLIN : EPOLLOUT;

				/* libpq may have moved to another socket (another host or address) */
				if (fd != s->watch.fd)
				{
					loop_del(&s->watch);
					if (fd < 0 || !loop_add(&s->watch, fd, ev))
					{
						s->pool->stats.connect_failures++;
						slot_close(s);
					}
				}
				else
					loop_mod(&s->watch, ev);
				return;
			}
		case PGRES_POLLING_FAILED:
		default:
			connect_failed(s->pool, PQerrorMessage(s->conn));
			slot_close(s);
			break;
	}
	if (s->state == SLOT_DOWN)
		fail_waiting_if_down(s->pool);
}

/* Did this result mean the connection is gone? */
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

/* Fill j->result from the API call's result. */
static void
take_api_result(DbJob *j, PGresult *res)
{
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
	{
		db_result_json(j, PQgetvalue(res, 0, 0), (size_t) PQgetlength(res, 0, 0));
		return;
	}
	if (PQresultStatus(res) == PGRES_FATAL_ERROR)
	{
		char	   *logged = strdup(PQresultErrorMessage(res));

		trim_newline(logged);
		db_result_error(j, PQresultErrorField(res, PG_DIAG_SQLSTATE),
						PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
						PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL),
						PQresultErrorField(res, PG_DIAG_CONTEXT), logged);
		free(logged);
		return;
	}
	gw_log("dynindex.api returned no result (status %s)", PQresStatus(PQresultStatus(res)));
	snprintf(j->result.sqlstate, sizeof(j->result.sqlstate), "XX000");
	j->result.status = DB_ERROR;
}

/* ---- access keys (the cache is in jobs.c) ---- */

/* Fill a key job from the lookup's result and cache it. */
static void
take_key_result(DbJob *j, PGresult *res)
{
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		log_pq("cannot look up access keys (is dynindex installed?)", PQresultErrorMessage(res));
		j->key_found = -1;
		return;
	}
	if (PQntuples(res) == 1)
		keys_store(j, true, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1));
	else
		keys_store(j, false, NULL, NULL);
}

/* A setup statement's answer. */
static void
take_setup_result(PgSlot *s, DbJob *j, PGresult *res)
{
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (j->setup == SETUP_PROBE)
	{
		/* a database still at extension version 0.1 has no dynindex.api_text */
		s->v01 = st != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
			strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		if (!send_setup_one(s, SETUP_PREPARE_API) || !send_setup_one(s, SETUP_PREPARE_ROLE) ||
			(gw_config.account_id && !send_setup_one(s, SETUP_ACCOUNT)) ||
			(gw_config.gsi_read_your_writes && !send_setup_one(s, SETUP_GSI_RYW)))
			s->prepared = false;
		slot_watch_update(s);
	}
	else if (j->setup == SETUP_PREPARE_API || j->setup == SETUP_PREPARE_ROLE)
	{
		if (st != PGRES_COMMAND_OK)
			s->prepared = false;
	}
	else if (st != PGRES_TUPLES_OK)
		log_pq(j->setup == SETUP_GSI_RYW ? "cannot set dynindex.gsi_read_your_writes" : "cannot set dynindex.account_id",
			   res ? PQresultErrorMessage(res) : "");
}

/* The head job of s has all its results: finish it. */
static void
finish_head(PgSlot *s)
{
	DbJob	   *j = s->head;
	PGresult   *res = j->res;

	s->head = j->next;
	if (s->head == NULL)
		s->tail = NULL;
	s->inflight--;
	j->next = NULL;
	j->slot = NULL;
	j->res = NULL;
	if (j->kind == JOB_SETUP)
	{
		take_setup_result(s, j, res);
		if (res)
			PQclear(res);
		job_free(j);
		if (s->state == SLOT_SETUP && (s->head == NULL || s->head->kind != JOB_SETUP))
			s->state = SLOT_READY;
		return;
	}
	if (j->abandoned)
	{
		if (res)
			PQclear(res);
		job_free(j);
		return;
	}
	if (res == NULL)
	{
		j->result.status = DB_ERROR;
		snprintf(j->result.sqlstate, sizeof(j->result.sqlstate), "XX000");
		j->key_found = -1;
	}
	else if (j->kind == JOB_API)
		take_api_result(j, res);
	else if (j->kind == JOB_KEY)
		take_key_result(j, res);
	else
	{
		j->pgres = res;
		res = NULL;
	}
	if (res)
		PQclear(res);
	job_complete(j);
}

/*
 * Read what the server sent and finish the jobs whose results are complete.
 * Each job's results are: one PGresult (tuples or error), NULL, then the
 * pipeline's Sync.
 */
static void
slot_read(PgSlot *s)
{
	if (!PQconsumeInput(s->conn))
	{
		slot_broken(s, PQerrorMessage(s->conn));
		return;
	}
	while (s->head && !PQisBusy(s->conn))
	{
		DbJob	   *j = s->head;
		PGresult   *res = PQgetResult(s->conn);

		if (res == NULL)
		{
			if (j->stage == 1)
			{
				j->stage = 2;
				continue;
			}
			break;
		}
		if (PQresultStatus(res) == PGRES_PIPELINE_SYNC)
		{
			PQclear(res);
			if (j->res && connection_lost(s->conn, j->res))
			{
				slot_broken(s, PQresultErrorMessage(j->res));
				return;
			}
			finish_head(s);
			continue;
		}
		if (j->stage == 0)
		{
			j->res = res;
			j->stage = 1;
			if (connection_lost(s->conn, res) && PQstatus(s->conn) != CONNECTION_OK)
			{
				slot_broken(s, PQresultErrorMessage(res));
				return;
			}
		}
		else
			PQclear(res);
	}
	if (s->conn == NULL)
		return;
	if (PQstatus(s->conn) != CONNECTION_OK)
	{
		slot_broken(s, PQerrorMessage(s->conn));
		return;
	}
	if (s->head == NULL)
		s->cancel_sent = false;
}

/* Socket events of a slot. */
static void
slot_event(void *arg, uint32_t events)
{
	PgSlot	   *s = arg;

	if (s->conn == NULL)
		return;
	busy_depth++;
	if (s->state == SLOT_CONNECTING)
		slot_connect_poll(s);
	else
	{
		if ((events & EPOLLOUT) && PQflush(s->conn) < 0)
			slot_broken(s, PQerrorMessage(s->conn));
		if (s->conn && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
			slot_read(s);
		if (s->conn)
			slot_watch_update(s);
	}
	busy_depth--;
	dispatch_all();
}

/* Send job j on s (READY).  False: nothing was sent, the connection is bad. */
static bool
slot_send(PgSlot *s, DbJob *j)
{
	int			ok;

	if (j->kind == JOB_API)
	{
		/* no region: set_config(..., NULL, true) keeps the database's dynindex.region */
		const char *region = j->region && j->region[0] ? j->region : NULL;
		const char *params[4] = {j->role, region, j->op, j->body};
		const char *const *p = j->role ? params : params + 1;
		int			n = j->role ? 4 : 3;

		if (j->gsi_consistency)
		{
			/* the request's X-Dynindex-Gsi-Consistency, set for its transaction */
			const char *rparams[5] = {j->role, region, j->gsi_consistency, j->op, j->body};
			const char *const *rp = j->role ? rparams : rparams + 1;

			ok = PQsendQueryParams(s->conn, j->role ? (s->v01 ? API_ROLE_RYW_SQL_01 : API_ROLE_RYW_SQL) :
								   (s->v01 ? API_RYW_SQL_01 : API_RYW_SQL), n + 1, NULL, rp,
								   NULL, NULL, 0);
		}
		else if (s->prepared)
			ok = PQsendQueryPrepared(s->conn, j->role ? API_ROLE_STMT : API_STMT, n, p,
									 NULL, NULL, 0);
		else
			ok = PQsendQueryParams(s->conn, j->role ? (s->v01 ? API_ROLE_SQL_01 : API_ROLE_SQL) :
								   (s->v01 ? API_SQL_01 : API_SQL), n, NULL, p,
								   NULL, NULL, 0);
	}
	else if (j->kind == JOB_KEY)
	{
		const char *params[1] = {j->body};

		ok = PQsendQueryParams(s->conn, KEY_SQL, 1, NULL, params, NULL, NULL, 0);
	}
	else
		ok = PQsendQueryParams(s->conn, j->sql, 0, NULL, NULL, NULL, NULL, 0);
	if (!ok)
		return false;
	/*
	 * From here the request may reach the server: if the connection fails
	 * now, its outcome is unknown.
	 */
	j->sent = true;
	j->slot = s;
	j->stage = 0;
	j->next = NULL;
	if (s->tail)
		s->tail->next = j;
	else
		s->head = j;
	s->tail = j;
	s->inflight++;
	if (!PQpipelineSync(s->conn))
	{
		slot_broken(s, PQerrorMessage(s->conn));
		return true;
	}
	slot_watch_update(s);
	return true;
}

/* Give p's waiting jobs to its connections; open connections as needed. */
static void
dispatch(Pool *p)
{
	bool		connect_failed = false;

	while (p->wait_head)
	{
		PgSlot	   *best = NULL;
		PgSlot	   *down = NULL;
		int			opening = 0;
		DbJob	   *j;

		for (int i = 0; i < p->nslots; i++)
		{
			PgSlot	   *s = &p->slots[i];

			if (s->state == SLOT_READY)
			{
				if (best == NULL || s->inflight < best->inflight)
					best = s;
			}
			else if (s->state == SLOT_DOWN)
			{
				if (down == NULL)
					down = s;
			}
			else
				opening++;
		}
		/* An idle connection: send at once. */
		if (best == NULL || best->inflight > 0)
		{
			/*
			 * Open another connection while the pool is not full (during
			 * an outage one attempt at a time: the jobs wait for it)...
			 */
			if (down && !connect_failed && opening < p->nwaiting && !(p->outage && opening > 0))
			{
				if (slot_connect_start(down))
					continue;
				connect_failed = true;
				fail_waiting_if_down(p);
				continue;
			}
			/* ... and wait for one being opened. */
			if (opening > 0 || best == NULL || best->inflight >= gw_config.pipeline_depth)
				break;
		}
		j = waitq_pop(p);
		if (!slot_send(best, j))
		{
			/* nothing sent: the connection was bad before the request */
			p->stats.retried++;
			waitq_push(p, j, true);
			slot_broken(best, PQerrorMessage(best->conn));
		}
	}
}

/*
 * Dispatch every pool: the standbys first, as a job a standby fails goes to
 * the primary's queue.
 */
static void
dispatch_all(void)
{
	if (busy_depth > 0)
		return;
	busy_depth++;
	for (int i = 0; i < nstandbys; i++)
		dispatch(&standbys[i]);
	dispatch(&primary);
	busy_depth--;
}

/* Run j on a connection of p. */
void
db_submit_to(Pool *p, DbJob *j)
{
	j->deadline = gw_now() + gw_config.request_timeout;
	waitq_push(p, j, false);
	dispatch_all();
}

/*
 * Run j on a pooled connection: an eventually consistent read on a usable
 * standby, everything else on the primary.
 */
void
db_submit(DbJob *j)
{
	Pool	   *p = NULL;

	if (j->kind == JOB_API && j->eventual && nstandbys > 0 && router)
		p = router->choose();
	db_submit_to(p ? p : &primary, j);
}

/* Cancel the statement running on s (blocking, but short: a local connect). */
static void
slot_cancel(PgSlot *s)
{
	PGcancel   *c;
	char		err[256];

	if (s->cancel_sent || s->conn == NULL)
		return;
	s->cancel_sent = true;
	c = PQgetCancel(s->conn);
	if (c)
	{
		if (!PQcancel(c, err, sizeof(err)))
			gw_log("cannot cancel a timed-out request: %s", err);
		PQfreeCancel(c);
	}
}

/* Timers of pool p: requests past their deadline, connection attempts that hang. */
static void
pool_tick(Pool *p, double now)
{
	DbJob	   *keep_head = NULL;
	DbJob	   *keep_tail = NULL;
	int			kept = 0;

	while (p->wait_head)
	{
		DbJob	   *j = waitq_pop(p);

		if (j->deadline <= now)
		{
			p->stats.timeouts++;
			if (j->kind != JOB_SQL || !p->standby)
				gw_log("a request waited %d s for a database connection", gw_config.request_timeout);
			job_fail(j, DB_TIMEOUT);
			continue;
		}
		j->next = NULL;
		if (keep_tail)
			keep_tail->next = j;
		else
			keep_head = j;
		keep_tail = j;
		kept++;
	}
	p->wait_head = keep_head;
	p->wait_tail = keep_tail;
	p->nwaiting = kept;
	/* an outage: the pool's own attempt, with back-off, notices its end without traffic */
	if (p->outage && now >= p->retry_at && !pool_usable(p) && !pool_connecting(p))
	{
		for (int i = 0; i < p->nslots; i++)
			if (p->slots[i].state == SLOT_DOWN)
			{
				if (!slot_connect_start(&p->slots[i]))
					fail_waiting_if_down(p);
				break;
			}
	}
	for (int i = 0; i < p->nslots; i++)
	{
		PgSlot	   *s = &p->slots[i];

		if (s->state == SLOT_CONNECTING && now > s->connect_deadline)
		{
			connect_failed(p, "timeout");
			slot_close(s);
			fail_waiting_if_down(p);
			continue;
		}
		for (DbJob *j = s->head; j; j = j->next)
		{
			if (j->kind == JOB_SETUP || j->abandoned || j->deadline > now)
				continue;
			/* answered now; the result is dropped when it arrives */
			p->stats.timeouts++;
			gw_log("%s%s%sa request got no answer within %d s: cancelled",
				   p->standby ? "standby " : "", p->standby ? p->name : "", p->standby ? ": " : "",
				   gw_config.request_timeout);
			j->result.status = DB_TIMEOUT;
			j->key_found = -1;
			if (j->done)
				j->done(j);
			j->abandoned = true;
			slot_cancel(s);
		}
	}
}

/* The pool answers later, through done(): the caller suspends its connection. */
bool
db_run_now(DbJob *j)
{
	(void) j;
	return false;
}

/* Timers: requests past their deadline, connection attempts that hang; the router's (probes). */
void
db_tick(void)
{
	double		now = gw_now();

	if (nstandbys > 0 && router)
	{
		busy_depth++;
		router->tick(now);
		busy_depth--;
	}
	if (now < next_tick)
	{
		dispatch_all();
		return;
	}
	next_tick = now + 0.1;
	busy_depth++;
	pool_tick(&primary, now);
	for (int i = 0; i < nstandbys; i++)
		pool_tick(&standbys[i], now);
	busy_depth--;
	dispatch_all();
}

/* Route eventually consistent reads and run the routing's timers through r. */
void
pool_set_router(const PoolRouter *r)
{
	router = r;
}

/* Set up pool p of nslots connections to conninfo (none opened yet). */
static bool
pool_setup(Pool *p, const char *name, const char *conninfo, bool standby, int nslots)
{
	p->name = name;
	p->conninfo = conninfo;
	p->standby = standby;
	p->nslots = nslots;
	p->slots = calloc((size_t) nslots, sizeof(PgSlot));
	if (p->slots == NULL)
		return false;
	for (int i = 0; i < nslots; i++)
	{
		p->slots[i].id = i;
		p->slots[i].pool = p;
		p->slots[i].watch.fd = -1;
	}
	return true;
}

/*
 * A short name of a standby for logs and metrics: host:port of its
 * connection string (never the password).
 */
static const char *
standby_name(const char *conninfo, int i)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	const char *host = NULL;
	const char *port = NULL;
	Buf			b;

	for (PQconninfoOption *o = opts; o && o->keyword; o++)
	{
		if (strcmp(o->keyword, "host") == 0 && o->val && *o->val)
			host = o->val;
		else if (strcmp(o->keyword, "hostaddr") == 0 && o->val && *o->val && host == NULL)
			host = o->val;
		else if (strcmp(o->keyword, "port") == 0 && o->val && *o->val)
			port = o->val;
	}
	buf_init(&b);
	if (host || port)
		buf_printf(&b, "%s:%s", host ? host : "", port ? port : "");
	else
		buf_printf(&b, "standby%d", i);
	PQconninfoFree(opts);
	return buf_steal(&b, NULL);
}

bool
pool_init(void)
{
	if (!pool_setup(&primary, "primary", gw_config.conninfo, false, gw_config.pool_size))
		return false;
	if (gw_config.nstandbys > 0)
	{
		standbys = calloc((size_t) gw_config.nstandbys, sizeof(Pool));
		if (standbys == NULL)
			return false;
		for (int i = 0; i < gw_config.nstandbys; i++)
		{
			const char *name = standby_name(gw_config.standbys[i], i);

			if (name == NULL ||
				!pool_setup(&standbys[i], name, gw_config.standbys[i], true, gw_config.pool_size))
				return false;
		}
		nstandbys = gw_config.nstandbys;
	}
	/* Open one connection up front, so configuration errors show at start. */
	{
		PGconn	   *c;
		PgSlot	   *s0 = &primary.slots[0];
		const char *keys[] = {"dbname", "fallback_application_name", "connect_timeout", NULL};
		const char *vals[] = {gw_config.conninfo, "dynindex-gateway", "5", NULL};

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
		if (c == NULL || PQstatus(c) != CONNECTION_OK)
		{
			if (c)
				log_pq("cannot connect to PostgreSQL", PQerrorMessage(c));
			PQfinish(c);
			return false;
		}
		s0->conn = c;
		s0->watch.fn = slot_event;
		s0->watch.arg = s0;
		if (!loop_add(&s0->watch, PQsocket(c), EPOLLIN | EPOLLRDHUP))
		{
			slot_close(s0);
			return false;
		}
		slot_connected(s0);
	}
	return true;
}

/* Close p's connections, dropping its jobs. */
static void
pool_close(Pool *p)
{
	for (int i = 0; i < p->nslots; i++)
	{
		DbJob	   *j = p->slots[i].head;

		while (j)
		{
			DbJob	   *next = j->next;

			j->abandoned = true;
			job_free(j);
			j = next;
		}
		p->slots[i].head = p->slots[i].tail = NULL;
		slot_close(&p->slots[i]);
	}
	while (p->wait_head)
	{
		DbJob	   *j = waitq_pop(p);

		j->abandoned = true;
		job_free(j);
	}
}

void
pool_shutdown(void)
{
	for (int i = 0; i < nstandbys; i++)
		pool_close(&standbys[i]);
	pool_close(&primary);
}

/* The figures of pool p. */
void
pool_stats_of(const Pool *p, PoolStats *out)
{
	*out = p->stats;
	out->size = p->nslots;
	out->ready = out->connecting = out->busy = out->inflight = 0;
	for (int i = 0; i < p->nslots; i++)
	{
		if (p->slots[i].state == SLOT_READY)
			out->ready++;
		else if (p->slots[i].state != SLOT_DOWN)
			out->connecting++;
		if (p->slots[i].inflight > 0)
			out->busy++;
		out->inflight += p->slots[i].inflight;
	}
	out->queued = p->nwaiting;
}

/* The primary's figures. */
void
pool_stats(PoolStats *out)
{
	pool_stats_of(&primary, out);
}

/* The primary's pool. */
Pool *
pool_primary(void)
{
	return &primary;
}

/* Standby i's pool (0 <= i < pool_nstandbys()). */
Pool *
pool_standby(int i)
{
	return &standbys[i];
}

int
pool_nstandbys(void)
{
	return nstandbys;
}

/* p's name: "primary" or a standby's host:port. */
const char *
pool_name(const Pool *p)
{
	return p->name;
}

/* Requests sent to p and not answered, plus those waiting for its connections. */
int
pool_load(const Pool *p)
{
	int			n = p->nwaiting;

	for (int i = 0; i < p->nslots; i++)
		n += p->slots[i].inflight;
	return n;
}
