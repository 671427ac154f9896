/*
 * standby.c — eventually consistent reads on hot standbys (--standby,
 * --max-standby-lag).
 *
 * Which requests: GetItem, Query and Scan whose ConsistentRead is absent or
 * false, BatchGetItem when no table asks for ConsistentRead, and PartiQL
 * SELECTs (ExecuteStatement, and BatchExecuteStatement of SELECTs only)
 * without ConsistentRead true.  Everything else -- every write, every
 * transaction (TransactGetItems, ExecuteTransaction), strongly consistent
 * reads, table and stream operations -- runs on the primary.  When in doubt
 * (a body this parser does not follow, a member name with escapes), the
 * request goes to the primary, which answers exactly what it always would.
 *
 * Replay lag, measured in time: every probe interval the gateway reads the
 * primary's WAL flush position (pg_current_wal_flush_lsn) and keeps the
 * samples (time sent, position) for a little longer than --max-standby-lag;
 * each standby reports its replay position (pg_last_wal_replay_lsn).  A
 * standby that has replayed position R holds everything the primary had
 * written at the latest sample time t whose position is <= R, so its data is
 * at most now - t old.  The estimate errs on the safe side: a sample's time
 * is when its query was sent (the position was read later), and between
 * probes the estimate grows with the clock.  It needs no clock agreement
 * between servers and no pg_stat_replication privileges, it grows while
 * replay is paused or the standby is cut off from the primary (its position
 * stands still while the primary's moves), and an idle primary leaves a
 * caught-up standby at lag ~0.  If the primary cannot be sampled, no sample
 * is recent and every standby's estimate grows past the bound: reads go to
 * the primary.
 *
 * A standby is used when its last probe answered within the last
 * max(1 s, 4 probe intervals), it is in recovery (a promoted or mistaken
 * server is not a standby of this primary) and its lag estimate is within
 * --max-standby-lag.  Among usable standbys, the least loaded takes the read.
 * A read a standby fails goes to the primary (pool.c).
 *
 * This layer sits above the pool: it sends its probes through the pools and
 * chooses among them, and the pool reaches it only through the router it
 * registers (pool_set_router): standby_choose, standby_count, standby_tick.
 */
#include "gateway.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

#define SAMPLE_SQL "SELECT (pg_catalog.pg_current_wal_flush_lsn() - '0/0'::pg_catalog.pg_lsn)::pg_catalog.int8"
#define PROBE_SQL "SELECT pg_catalog.pg_is_in_recovery(), (pg_catalog.pg_last_wal_replay_lsn() - '0/0'::pg_catalog.pg_lsn)::pg_catalog.int8"
/* a standby that did not answer its probe is probed again this often */
#define DOWN_RETRY 1.0

/* One sample of the primary's WAL flush position. */
typedef struct Sample
{
	double		t;				/* when its query was sent */
	uint64_t	lsn;
} Sample;

/* What the gateway knows of one standby. */
typedef struct Standby
{
	Pool	   *pool;
	bool		probing;		/* a probe is in flight */
	double		probe_sent;
	double		next_probe;
	bool		answered;		/* the last probe answered */
	bool		in_recovery;
	bool		has_lsn;
	uint64_t	replay_lsn;
	double		answered_at;	/* when the last probe's answer came */
	int			logged_state;	/* last state logged: -1 none, 0 not used, 1 used */
	double		logged_at;
	uint64_t	reads;			/* eventually consistent reads it answered */
	uint64_t	rerouted;		/* reads it failed, sent to the primary */
	uint64_t	probe_failures;
} Standby;

static Standby *sbs;
static int	nsbs;
static Sample *ring;
static int	ring_size;
static int	ring_count;
static int	ring_next;			/* where the next sample goes */
static bool sampling;			/* a sample query is in flight */
static double next_sample;
static double interval;			/* probe interval, seconds */
static double stale_after;		/* a probe answer older than this: the standby is not used */
static uint64_t primary_reads;	/* eventually consistent reads the primary answered */
static uint64_t no_standby;		/* ... because no standby was usable when they came */
static uint64_t sample_failures;
static int	rr;

/* ---- which requests are eventually consistent reads ---- */

/* The member test: may the request go to a standby, as far as this member says? */
typedef bool (*MemberFn) (const char *key, size_t klen, const char *val, void *arg);

/*
 * Call fn on each member of the object at p; false if the object is malformed,
 * a member name has an escape (it could spell any name), or fn says false.
 */
static bool
each_member(const char *p, MemberFn fn, void *arg)
{
	p = gw_json_ws(p);
	if (*p != '{')
		return false;
	p = gw_json_ws(p + 1);
	if (*p == '}')
		return true;
	for (;;)
	{
		const char *k = p;
		const char *kend;
		const char *v;
		bool		esc;

		if (*p != '"' || (kend = gw_json_skip_string(p, &esc)) == NULL || esc)
			return false;
		p = gw_json_ws(kend);
		if (*p != ':')
			return false;
		v = gw_json_ws(p + 1);
		if (!fn(k + 1, (size_t) (kend - k - 2), v, arg))
			return false;
		p = gw_json_skip_value(v);
		if (p == NULL)
			return false;
		p = gw_json_ws(p);
		if (*p == '}')
			return true;
		if (*p != ',')
			return false;
		p = gw_json_ws(p + 1);
	}
}

/* Call fn on each element of the array at p (fn's key is NULL); false as each_member. */
static bool
each_element(const char *p, MemberFn fn, void *arg)
{
	p = gw_json_ws(p);
	if (*p != '[')
		return false;
	p = gw_json_ws(p + 1);
	if (*p == ']')
		return true;
	for (;;)
	{
		if (!fn(NULL, 0, p, arg))
			return false;
		p = gw_json_skip_value(p);
		if (p == NULL)
			return false;
		p = gw_json_ws(p);
		if (*p == ']')
			return true;
		if (*p != ',')
			return false;
		p = gw_json_ws(p + 1);
	}
}

/* Is the value at v the literal false? */
static bool
is_false(const char *v)
{
	return strncmp(v, "false", 5) == 0 &&
		(v[5] == ',' || v[5] == '}' || v[5] == ']' || v[5] == ' ' || v[5] == '\t' ||
		 v[5] == '\n' || v[5] == '\r');
}

static bool
key_is(const char *key, size_t klen, const char *name)
{
	return key != NULL && klen == strlen(name) && memcmp(key, name, klen) == 0;
}

/* GetItem, Query, Scan, a BatchGetItem table: ConsistentRead, if given, is false. */
static bool
read_member(const char *key, size_t klen, const char *val, void *arg)
{
	(void) arg;
	return !key_is(key, klen, "ConsistentRead") || is_false(val);
}

/* BatchGetItem's RequestItems: every table's request is eventually consistent. */
static bool
batch_table(const char *key, size_t klen, const char *val, void *arg)
{
	(void) key;
	(void) klen;
	return each_member(val, read_member, arg);
}

/* BatchGetItem: RequestItems as above; any other ConsistentRead is false. */
static bool
batch_member(const char *key, size_t klen, const char *val, void *arg)
{
	if (key_is(key, klen, "RequestItems"))
		return each_member(val, batch_table, arg);
	return read_member(key, klen, val, arg);
}

/* What a PartiQL statement object said. */
typedef struct StmtCheck
{
	bool		select;			/* Statement is a SELECT */
} StmtCheck;

/* Does the JSON string at v hold a statement that begins with the keyword SELECT? */
static bool
select_statement(const char *v)
{
	const char *p = v + 1;

	if (*v != '"')
		return false;
	/* whitespace as JSON escapes (\n, \t, \r) or as itself */
	for (;;)
	{
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		else if (p[0] == '\\' && (p[1] == 'n' || p[1] == 't' || p[1] == 'r'))
			p += 2;
		else
			break;
	}
	if (strncasecmp(p, "select", 6) != 0)
		return false;
	p += 6;
	/* the keyword ends here: not the start of a longer name, nor an escape */
	return !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			 *p == '_' || *p == '\\' || *p == '"' || *p == '\0');
}

/* An ExecuteStatement request, or one statement of BatchExecuteStatement. */
static bool
statement_member(const char *key, size_t klen, const char *val, void *arg)
{
	StmtCheck  *c = arg;

	if (key_is(key, klen, "Statement"))
	{
		if (!select_statement(val))
			return false;
		c->select = true;
		return true;
	}
	return read_member(key, klen, val, arg);
}

/* One element of BatchExecuteStatement's Statements: a SELECT, not consistent. */
static bool
batch_statement(const char *key, size_t klen, const char *val, void *arg)
{
	StmtCheck	c = {false};

	(void) key;
	(void) klen;
	(void) arg;
	return each_member(val, statement_member, &c) && c.select;
}

/* BatchExecuteStatement: Statements are all eventually consistent SELECTs. */
static bool
batch_statements_member(const char *key, size_t klen, const char *val, void *arg)
{
	StmtCheck  *c = arg;

	if (key_is(key, klen, "Statements"))
	{
		if (!each_element(val, batch_statement, NULL))
			return false;
		c->select = true;
		return true;
	}
	return true;
}

bool
gw_eventual_read(const char *op, const char *body)
{
	StmtCheck	c = {false};

	if (op == NULL || body == NULL)
		return false;
	if (strcmp(op, "GetItem") == 0 || strcmp(op, "Query") == 0 || strcmp(op, "Scan") == 0)
		return each_member(body, read_member, NULL);
	if (strcmp(op, "BatchGetItem") == 0)
		return each_member(body, batch_member, NULL);
	if (strcmp(op, "ExecuteStatement") == 0)
		return each_member(body, statement_member, &c) && c.select;
	if (strcmp(op, "BatchExecuteStatement") == 0)
		return each_member(body, batch_statements_member, &c) && c.select;
	return false;
}

double
gw_parse_duration(const char *s)
{
	char	   *end;
	double		v = strtod(s, &end);

	if (end == s || !(v >= 0) || isinf(v))
		return -1;
	while (*end == ' ')
		end++;
	if (*end == '\0' || strcmp(end, "s") == 0 || strcmp(end, "sec") == 0)
		return v;
	if (strcmp(end, "ms") == 0)
		return v / 1000;
	if (strcmp(end, "min") == 0)
		return v * 60;
	return -1;
}

/* ---- lag ---- */

/*
 * Standby s's lag estimate at now (seconds): now minus the time of the latest
 * primary sample its replay position covers.  INFINITY when unknown.
 */
static double
standby_lag(const Standby *s, double now)
{
	if (!s->has_lsn || !s->in_recovery)
		return INFINITY;
	for (int k = 1; k <= ring_count; k++)
	{
		const Sample *x = &ring[(ring_next - k + ring_size) % ring_size];

		if (x->lsn <= s->replay_lsn)
			return now - x->t;
	}
	return INFINITY;
}

/* Why s is not used now (NULL: it is usable); lag gets its estimate. */
static const char *
standby_unusable(const Standby *s, double now, double *lag)
{
	*lag = standby_lag(s, now);
	if (!s->answered || now - s->answered_at > stale_after)
		return "not answering";
	if (!s->in_recovery)
		return "not in recovery (not a standby)";
	if (*lag > gw_config.max_standby_lag)
		return "replay lag over --max-standby-lag";
	return NULL;
}

/* Log a standby's change of state (a change back within 10 s only for the lag). */
static void
standby_log_state(Standby *s, double now)
{
	double		lag;
	const char *why = standby_unusable(s, now, &lag);
	int			state = why == NULL;

	if (state == s->logged_state)
		return;
	/* at start: nothing to say until the first probe answers or fails */
	if (s->logged_state < 0 && !s->answered && s->probe_failures == 0)
		return;
	if (s->logged_state >= 0 && why && strncmp(why, "replay lag", 10) == 0 && now - s->logged_at < 10)
		return;
	s->logged_state = state;
	s->logged_at = now;
	if (why == NULL)
		gw_log("standby %s: serving eventually consistent reads (replay lag %.3f s)", pool_name(s->pool), lag);
	else if (isinf(lag))
		gw_log("standby %s: not used: %s", pool_name(s->pool), why);
	else
		gw_log("standby %s: not used: %s (%.3f s)", pool_name(s->pool), why, lag);
}

/* A sample of the primary's WAL position came back. */
static void
sample_done(DbJob *j)
{
	double	   *sent = j->arg;

	sampling = false;
	if (j->result.status == DB_OK && j->pgres && PQresultStatus(j->pgres) == PGRES_TUPLES_OK &&
		PQntuples(j->pgres) == 1 && !PQgetisnull(j->pgres, 0, 0))
	{
		Sample	   *x = &ring[ring_next];

		x->t = *sent;
		x->lsn = strtoull(PQgetvalue(j->pgres, 0, 0), NULL, 10);
		ring_next = (ring_next + 1) % ring_size;
		if (ring_count < ring_size)
			ring_count++;
	}
	else
		sample_failures++;
	free(sent);
}

/* A standby's probe came back. */
static void
probe_done(DbJob *j)
{
	Standby    *s = j->arg;
	double		now = gw_now();

	s->probing = false;
	if (j->result.status == DB_OK && j->pgres && PQresultStatus(j->pgres) == PGRES_TUPLES_OK &&
		PQntuples(j->pgres) == 1)
	{
		s->answered = true;
		s->answered_at = now;
		s->in_recovery = strcmp(PQgetvalue(j->pgres, 0, 0), "t") == 0;
		s->has_lsn = !PQgetisnull(j->pgres, 0, 1);
		if (s->has_lsn)
			s->replay_lsn = strtoull(PQgetvalue(j->pgres, 0, 1), NULL, 10);
	}
	else
	{
		s->answered = false;
		s->probe_failures++;
		s->next_probe = now + DOWN_RETRY;
	}
	standby_log_state(s, now);
}

/* Probes: the primary's WAL position, each standby's replay position. */
static void
standby_tick(double now)
{
	if (nsbs == 0)
		return;
	if (now >= next_sample && !sampling)
	{
		DbJob	   *j;
		double	   *sent = malloc(sizeof(double));

		next_sample = now + interval;
		j = sent ? db_job_new(JOB_SQL, sample_done, sent) : NULL;
		if (j)
		{
			*sent = now;
			j->sql = SAMPLE_SQL;
			sampling = true;
			db_submit_to(pool_primary(), j);
		}
		else
			free(sent);
	}
	for (int i = 0; i < nsbs; i++)
	{
		Standby    *s = &sbs[i];
		DbJob	   *j;

		if (s->probing)
		{
			/* no answer for a while: not used until it answers */
			if (s->answered && now - s->probe_sent > stale_after)
			{
				s->answered = false;
				standby_log_state(s, now);
			}
			continue;
		}
		if (now < s->next_probe)
			continue;
		s->next_probe = now + interval;
		j = db_job_new(JOB_SQL, probe_done, s);
		if (j == NULL)
			continue;
		j->sql = PROBE_SQL;
		s->probing = true;
		s->probe_sent = now;
		db_submit_to(s->pool, j);
	}
	for (int i = 0; i < nsbs; i++)
		standby_log_state(&sbs[i], now);
}

/* A usable standby with the least load, or NULL (the read goes to the primary). */
static Pool *
standby_choose(void)
{
	double		now = gw_now();
	Standby    *best = NULL;
	int			best_load = 0;

	for (int k = 0; k < nsbs; k++)
	{
		Standby    *s = &sbs[(rr + k) % nsbs];
		double		lag;
		int			load;

		if (standby_unusable(s, now, &lag) != NULL)
			continue;
		load = pool_load(s->pool);
		if (best == NULL || load < best_load)
		{
			best = s;
			best_load = load;
		}
	}
	if (nsbs > 0)
		rr = (rr + 1) % nsbs;
	if (best == NULL)
	{
		no_standby++;
		return NULL;
	}
	return best->pool;
}

/* An eventually consistent read answered by (or rerouted from) pool p. */
static void
standby_count(const Pool *p, ReadEvent e)
{
	if (p == pool_primary())
	{
		if (e == READ_ANSWERED)
			primary_reads++;
		return;
	}
	for (int i = 0; i < nsbs; i++)
		if (sbs[i].pool == p)
		{
			if (e == READ_ANSWERED)
				sbs[i].reads++;
			else
				sbs[i].rerouted++;
		}
}

/* The routing the pool runs (registered by standby_init). */
static const PoolRouter router = {standby_choose, standby_count, standby_tick};

/* Set up the standbys' state; route the pool's eventually consistent reads. */
void
standby_init(void)
{
	if (pool_nstandbys() == 0)
		return;
	pool_set_router(&router);
	nsbs = pool_nstandbys();
	sbs = calloc((size_t) nsbs, sizeof(Standby));
	/* a probe every quarter of the bound, between 20 and 100 ms */
	interval = gw_config.max_standby_lag / 4;
	if (interval > 0.1)
		interval = 0.1;
	if (interval < 0.02)
		interval = 0.02;
	stale_after = 4 * interval > 1.0 ? 4 * interval : 1.0;
	/* samples for the bound and two seconds more */
	ring_size = (int) ((gw_config.max_standby_lag + 2.0) / interval) + 8;
	ring = calloc((size_t) ring_size, sizeof(Sample));
	if (sbs == NULL || ring == NULL)
	{
		gw_log("out of memory: standbys are not used");
		nsbs = 0;
		return;
	}
	for (int i = 0; i < nsbs; i++)
	{
		sbs[i].pool = pool_standby(i);
		sbs[i].logged_state = -1;
	}
}

int
standby_tick_ms(void)
{
	return nsbs > 0 ? (int) (interval * 1000) : -1;
}

void
standby_metrics(Buf *b)
{
	double		now = gw_now();

	if (nsbs == 0)
		return;
	buf_puts(b, "# HELP dynindex_gateway_max_standby_lag_seconds --max-standby-lag\n"
			 "# TYPE dynindex_gateway_max_standby_lag_seconds gauge\n");
	buf_printf(b, "dynindex_gateway_max_standby_lag_seconds %g\n", gw_config.max_standby_lag);
	buf_puts(b, "# HELP dynindex_gateway_standby_up 1: the standby serves eventually consistent reads now "
			 "(answering, in recovery, lag within the bound)\n"
			 "# TYPE dynindex_gateway_standby_up gauge\n");
	for (int i = 0; i < nsbs; i++)
	{
		double		lag;

		buf_puts(b, "dynindex_gateway_standby_up{standby=");
		label_value(b, pool_name(sbs[i].pool));
		buf_printf(b, "} %d\n", standby_unusable(&sbs[i], now, &lag) == NULL);
	}
	buf_puts(b, "# HELP dynindex_gateway_standby_replay_lag_seconds the standby's replay lag as the gateway "
			 "estimates it (an upper bound; NaN: unknown)\n"
			 "# TYPE dynindex_gateway_standby_replay_lag_seconds gauge\n");
	for (int i = 0; i < nsbs; i++)
	{
		double		lag = standby_lag(&sbs[i], now);

		buf_puts(b, "dynindex_gateway_standby_replay_lag_seconds{standby=");
		label_value(b, pool_name(sbs[i].pool));
		if (isinf(lag))
			buf_puts(b, "} NaN\n");
		else
			buf_printf(b, "} %.6f\n", lag);
	}
	buf_puts(b, "# HELP dynindex_gateway_eventual_reads_total eventually consistent reads answered, by the "
			 "server that answered them\n"
			 "# TYPE dynindex_gateway_eventual_reads_total counter\n");
	buf_printf(b, "dynindex_gateway_eventual_reads_total{server=\"primary\"} %llu\n",
			   (unsigned long long) primary_reads);
	for (int i = 0; i < nsbs; i++)
	{
		buf_puts(b, "dynindex_gateway_eventual_reads_total{server=");
		label_value(b, pool_name(sbs[i].pool));
		buf_printf(b, "} %llu\n", (unsigned long long) sbs[i].reads);
	}
	buf_puts(b, "# HELP dynindex_gateway_standby_fallbacks_total eventually consistent reads sent to the "
			 "primary: no standby was usable, or a standby failed the read\n"
			 "# TYPE dynindex_gateway_standby_fallbacks_total counter\n");
	buf_printf(b, "dynindex_gateway_standby_fallbacks_total{reason=\"no_standby\"} %llu\n",
			   (unsigned long long) no_standby);
	{
		uint64_t	failed = 0;

		for (int i = 0; i < nsbs; i++)
			failed += sbs[i].rerouted;
		buf_printf(b, "dynindex_gateway_standby_fallbacks_total{reason=\"standby_failed\"} %llu\n",
				   (unsigned long long) failed);
	}
	buf_puts(b, "# HELP dynindex_gateway_standby_probe_failures_total standby probes that got no answer\n"
			 "# TYPE dynindex_gateway_standby_probe_failures_total counter\n");
	for (int i = 0; i < nsbs; i++)
	{
		buf_puts(b, "dynindex_gateway_standby_probe_failures_total{standby=");
		label_value(b, pool_name(sbs[i].pool));
		buf_printf(b, "} %llu\n", (unsigned long long) sbs[i].probe_failures);
	}
	buf_puts(b, "# HELP dynindex_gateway_primary_wal_sample_failures_total samples of the primary's WAL "
			 "position that failed\n"
			 "# TYPE dynindex_gateway_primary_wal_sample_failures_total counter\n");
	buf_printf(b, "dynindex_gateway_primary_wal_sample_failures_total %llu\n",
			   (unsigned long long) sample_failures);
}
