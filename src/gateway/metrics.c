/*
 * metrics.c — Prometheus metrics of the endpoint on a separate port
 * (--metrics-port, dynindex_http.metrics_port; off by default): requests,
 * errors by DynamoDB error type and latency histograms per operation,
 * requests in flight, client connections, the gateway's PostgreSQL pool and
 * its reconnects (dynindex_http: the requests of each worker instead), the
 * per-table counters of the view dynindex.table_metrics and the top keys of
 * dynindex.contributor_insights_top (queried at scrape time as jobs, one
 * after the other; skipped while a view does not exist).
 *
 * The HTTP layer pushes what it counts (metrics_request, metrics_connection,
 * metrics_in_flight); this file calls nothing of it.
 */
#include "gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libpq-fe.h>
#include <microhttpd.h>

#define MAX_OPS 128
#define MAX_ERRS 512
#define NBUCKETS 14

static const double bucket_le[NBUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
};

typedef struct OpStats
{
	char		name[64];
	uint64_t	requests;
	uint64_t	errors;
	uint64_t	buckets[NBUCKETS];	/* not cumulative; summed when written */
	double		sum;
} OpStats;

typedef struct ErrStats
{
	int			op;				/* index into ops */
	char		type[101];
	uint64_t	count;
} ErrStats;

/*
 * What one process counts.  The gateway has one, in its own memory.  In
 * dynindex_http each worker writes its own in shared memory and the metrics
 * worker sums them all (metrics_use_shared): one writer per Counters, so no
 * lock; a reader sees each field whole (COUNT_*), and a new operation's or
 * error's name before its slot is counted in nops or nerrs.
 */
typedef struct Counters
{
	int			nops;
	int			nerrs;
	int64_t		conns_open;
	uint64_t	conns_accepted;
	uint64_t	conns_evicted;
	int64_t		in_flight;
	OpStats		ops[MAX_OPS];
	ErrStats	errs[MAX_ERRS];
} Counters;

#define COUNT_READ(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define COUNT_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define COUNT_ADD(x, n) COUNT_SET(x, (x) + (n))

static Counters own;
static Counters *mine = &own;	/* what this process counts */
static Counters *all = &own;	/* what a scrape sums: nall Counters */
static int	nall = 1;
static bool shared;				/* dynindex_http: all holds every worker's */
static uint64_t scrapes;
static struct MHD_Daemon *metrics_daemon;

/* Bytes of shared memory for the counters of nworkers workers. */
size_t
metrics_shared_size(int nworkers)
{
	return sizeof(Counters) * (size_t) nworkers;
}

/*
 * dynindex_http: the counters of nworkers workers are in mem (zeroed when
 * the server started); worker (1..nworkers) counts into its own, 0 only
 * reads them.  A restarted worker's counters go on from where they were;
 * its gauges start again from zero.
 */
void
metrics_use_shared(void *mem, int nworkers, int worker)
{
	all = mem;
	nall = nworkers;
	shared = true;
	if (worker >= 1 && worker <= nworkers)
	{
		mine = &all[worker - 1];
		COUNT_SET(mine->conns_open, 0);
		COUNT_SET(mine->in_flight, 0);
	}
}

/* The statistics slot of operation name (created on first use). */
static int
op_index(const char *name)
{
	int			n = mine->nops;

	for (int i = 0; i < n; i++)
		if (strcmp(mine->ops[i].name, name) == 0)
			return i;
	if (n == MAX_OPS)
		return MAX_OPS - 1;		/* the last slot collects the overflow */
	snprintf(mine->ops[n].name, sizeof(mine->ops[n].name), "%s", name);
	COUNT_SET(mine->nops, n + 1);
	return n;
}

/* A request was answered: count it, its error type, its latency. */
void
metrics_request(const char *op, int status, const char *error_type, double seconds)
{
	OpStats    *o = &mine->ops[op_index(op ? op : "-")];
	int			b;

	/* requests before its bucket: a reader sees the bucket's total <= requests */
	COUNT_ADD(o->requests, 1);
	o->sum += seconds;
	for (b = 0; b < NBUCKETS && seconds > bucket_le[b]; b++)
		;
	if (b < NBUCKETS)
		COUNT_ADD(o->buckets[b], 1);
	if (status >= 400)
	{
		int			i = (int) (o - mine->ops);
		int			e;

		COUNT_ADD(o->errors, 1);
		if (error_type == NULL)
			error_type = status >= 500 ? "InternalServerError" : "HTTP";
		for (e = 0; e < mine->nerrs; e++)
			if (mine->errs[e].op == i && strcmp(mine->errs[e].type, error_type) == 0)
				break;
		if (e == mine->nerrs)
		{
			if (e == MAX_ERRS)
				return;
			mine->errs[e].op = i;
			snprintf(mine->errs[e].type, sizeof(mine->errs[e].type), "%s", error_type);
			COUNT_SET(mine->nerrs, e + 1);
		}
		COUNT_ADD(mine->errs[e].count, 1);
	}
}

/* Client connections opened (+1) or closed (-1); evicted: closed by the limit. */
void
metrics_connection(int delta_open, int evicted)
{
	COUNT_ADD(mine->conns_open, delta_open);
	if (delta_open > 0)
		COUNT_ADD(mine->conns_accepted, (uint64_t) delta_open);
	COUNT_ADD(mine->conns_evicted, (uint64_t) evicted);
}

/* A request started (+1) or ended (-1). */
void
metrics_in_flight(int delta)
{
	COUNT_ADD(mine->in_flight, delta);
}

/* HELP and TYPE lines. */
static void
header(Buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A metric name from a column name: letters, digits and '_' only. */
static void
metric_name(char *out, size_t outlen, const char *prefix, const char *col)
{
	size_t		n = (size_t) snprintf(out, outlen, "%s", prefix);

	for (; *col && n + 1 < outlen; col++)
	{
		char		ch = *col;

		out[n++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
					(ch >= '0' && ch <= '9') || ch == '_') ? ch : '_';
	}
	out[n] = '\0';
}

/* Is this column's type a number (int2/4/8, float4/8, numeric, oid)? */
static bool
numeric_type(Oid t)
{
	return t == 20 || t == 21 || t == 23 || t == 700 || t == 701 || t == 1700 || t == 26;
}

/* Does this column of dynindex.table_metrics count up (a counter), by its name? */
static bool
counter_column(const char *col)
{
	static const char *const suffixes[] = {"_units", "_count", "_requests", "_errors", "_sum", "_changes", "_events", NULL};
	size_t		n = strlen(col);

	for (int i = 0; suffixes[i]; i++)
	{
		size_t		k = strlen(suffixes[i]);

		if (n >= k && strcmp(col + n - k, suffixes[i]) == 0)
			return true;
	}
	return false;
}

/* Does this column of dynindex.replication_metrics() count up?  (pending_count is a gauge.) */
static bool
replication_counter_column(const char *col)
{
	return strcmp(col, "applied_changes") == 0;
}

/*
 * A view's rows (dynindex.table_metrics, dynindex.contributor_insights_top,
 * dynindex.replication_metrics()): one sample per numeric column and row,
 * named prefix + column, labelled with the row's text columns (table,
 * index, ...); a counter when is_counter says so by the column's name.
 */
static void
write_view_metrics(Buf *b, PGresult *res, const char *prefix, const char *help,
				   bool (*is_counter) (const char *col))
{
	int			nf = PQnfields(res);
	int			nt = PQntuples(res);

	for (int f = 0; f < nf; f++)
	{
		char		name[160];

		if (!numeric_type(PQftype(res, f)))
			continue;
		metric_name(name, sizeof(name), prefix, PQfname(res, f));
		header(b, name, is_counter(PQfname(res, f)) ? "counter" : "gauge", help);
		for (int r = 0; r < nt; r++)
		{
			bool		first = true;

			if (PQgetisnull(res, r, f))
				continue;
			buf_puts(b, name);
			for (int l = 0; l < nf; l++)
			{
				char		lname[128];

				if (numeric_type(PQftype(res, l)) || PQgetisnull(res, r, l))
					continue;
				metric_name(lname, sizeof(lname), "", PQfname(res, l));
				buf_puts(b, first ? "{" : ",");
				buf_puts(b, lname);
				buf_puts(b, "=");
				label_value(b, PQgetvalue(res, r, l));
				first = false;
			}
			if (!first)
				buf_puts(b, "}");
			buf_printf(b, " %s\n", PQgetvalue(res, r, f));
		}
	}
}

/* Add the counters of every process (all) into t. */
static void
sum_counters(Counters *t)
{
	memset(t, 0, sizeof(*t));
	for (int w = 0; w < nall; w++)
	{
		Counters   *c = &all[w];
		int			n = COUNT_READ(c->nops);
		int			ne = COUNT_READ(c->nerrs);
		int			map[MAX_OPS];	/* c's operation i is t's map[i] */

		for (int i = 0; i < n; i++)
		{
			OpStats    *o = &c->ops[i];
			int			k;

			for (k = 0; k < t->nops; k++)
				if (strcmp(t->ops[k].name, o->name) == 0)
					break;
			if (k == MAX_OPS)
				k = MAX_OPS - 1;	/* the overflow, as op_index */
			else if (k == t->nops)
				snprintf(t->ops[t->nops++].name, sizeof(t->ops[k].name), "%s", o->name);
			map[i] = k;
			/* the buckets before requests: never more in the buckets than requests */
			for (int bk = 0; bk < NBUCKETS; bk++)
				t->ops[k].buckets[bk] += COUNT_READ(o->buckets[bk]);
			t->ops[k].requests += COUNT_READ(o->requests);
			t->ops[k].errors += COUNT_READ(o->errors);
			t->ops[k].sum += o->sum;
		}
		for (int e = 0; e < ne; e++)
		{
			ErrStats   *x = &c->errs[e];
			int			op = x->op < n ? map[x->op] : -1;
			int			k;

			if (op < 0)
				continue;		/* its operation's name is not visible yet */
			for (k = 0; k < t->nerrs; k++)
				if (t->errs[k].op == op && strcmp(t->errs[k].type, x->type) == 0)
					break;
			if (k == MAX_ERRS)
				continue;
			if (k == t->nerrs)
			{
				t->errs[k].op = op;
				snprintf(t->errs[k].type, sizeof(t->errs[k].type), "%s", x->type);
				t->nerrs++;
			}
			t->errs[k].count += COUNT_READ(x->count);
		}
		t->conns_open += COUNT_READ(c->conns_open);
		t->conns_accepted += COUNT_READ(c->conns_accepted);
		t->conns_evicted += COUNT_READ(c->conns_evicted);
		t->in_flight += COUNT_READ(c->in_flight);
	}
}

/* dynindex_http: requests answered by each worker (their sum is the requests_total). */
static void
write_workers(Buf *b)
{
	header(b, "dynindex_http_worker_requests_total", "counter",
		   "requests answered, by dynindex_http worker (dynindex_http.workers)");
	for (int w = 0; w < nall; w++)
	{
		uint64_t	n = 0;
		int			nops = COUNT_READ(all[w].nops);

		for (int i = 0; i < nops; i++)
			n += COUNT_READ(all[w].ops[i].requests);
		buf_printf(b, "dynindex_http_worker_requests_total{worker=\"%d\"} %llu\n", w + 1,
				   (unsigned long long) n);
	}
}

/* The gateway's PostgreSQL pool and standbys. */
static void
write_pool(Buf *b)
{
	PoolStats	ps;

	pool_stats(&ps);
	header(b, "dynindex_gateway_pool_size", "gauge", "--pool-size");
	buf_printf(b, "dynindex_gateway_pool_size %d\n", ps.size);
	header(b, "dynindex_gateway_pool_connections", "gauge", "PostgreSQL connections, by state");
	buf_printf(b, "dynindex_gateway_pool_connections{state=\"ready\"} %d\n", ps.ready);
	buf_printf(b, "dynindex_gateway_pool_connections{state=\"connecting\"} %d\n", ps.connecting);
	buf_printf(b, "dynindex_gateway_pool_connections{state=\"busy\"} %d\n", ps.busy);
	header(b, "dynindex_gateway_pool_requests_in_flight", "gauge", "requests sent to PostgreSQL, not yet answered");
	buf_printf(b, "dynindex_gateway_pool_requests_in_flight %d\n", ps.inflight);
	header(b, "dynindex_gateway_pool_requests_queued", "gauge", "requests waiting for a PostgreSQL connection");
	buf_printf(b, "dynindex_gateway_pool_requests_queued %d\n", ps.queued);
	header(b, "dynindex_gateway_postgres_connects_total", "counter", "PostgreSQL connections opened");
	buf_printf(b, "dynindex_gateway_postgres_connects_total %llu\n", (unsigned long long) ps.connects);
	header(b, "dynindex_gateway_postgres_reconnects_total", "counter",
		   "PostgreSQL connections opened to replace a lost one");
	buf_printf(b, "dynindex_gateway_postgres_reconnects_total %llu\n", (unsigned long long) ps.reconnects);
	header(b, "dynindex_gateway_postgres_connect_failures_total", "counter", "failed attempts to connect to PostgreSQL");
	buf_printf(b, "dynindex_gateway_postgres_connect_failures_total %llu\n", (unsigned long long) ps.connect_failures);
	header(b, "dynindex_gateway_postgres_connections_lost_total", "counter", "open PostgreSQL connections that failed");
	buf_printf(b, "dynindex_gateway_postgres_connections_lost_total %llu\n", (unsigned long long) ps.lost);
	header(b, "dynindex_gateway_request_timeouts_total", "counter", "requests answered InternalServerError after --request-timeout");
	buf_printf(b, "dynindex_gateway_request_timeouts_total %llu\n", (unsigned long long) ps.timeouts);
	header(b, "dynindex_gateway_requests_outcome_unknown_total", "counter",
		   "requests whose connection failed after they were sent (answered InternalServerError, never re-sent)");
	buf_printf(b, "dynindex_gateway_requests_outcome_unknown_total %llu\n", (unsigned long long) ps.unknown_outcome);
	header(b, "dynindex_gateway_requests_resent_total", "counter",
		   "read-only lookups re-sent after their connection failed");
	buf_printf(b, "dynindex_gateway_requests_resent_total %llu\n", (unsigned long long) ps.retried);
	standby_metrics(b);
}

/* The whole exposition text. */
static char *
render(PGresult *table_res, int table_state, PGresult *ci_res, PGresult *repl_res, size_t *len)
{
	static Counters total;		/* static: about 90 KB */
	Counters   *t = &total;
	Buf			b;

	sum_counters(t);
	buf_init(&b);
	header(&b, "dynindex_gateway_requests_total", "counter", "requests answered, by operation");
	for (int i = 0; i < t->nops; i++)
	{
		buf_puts(&b, "dynindex_gateway_requests_total{operation=");
		label_value(&b, t->ops[i].name);
		buf_printf(&b, "} %llu\n", (unsigned long long) t->ops[i].requests);
	}
	header(&b, "dynindex_gateway_errors_total", "counter", "error responses, by operation and DynamoDB error type");
	for (int e = 0; e < t->nerrs; e++)
	{
		buf_puts(&b, "dynindex_gateway_errors_total{operation=");
		label_value(&b, t->ops[t->errs[e].op].name);
		buf_puts(&b, ",error=");
		label_value(&b, t->errs[e].type);
		buf_printf(&b, "} %llu\n", (unsigned long long) t->errs[e].count);
	}
	header(&b, "dynindex_gateway_request_duration_seconds", "histogram",
		   "time from the request's headers to its answer, by operation");
	for (int i = 0; i < t->nops; i++)
	{
		uint64_t	cum = 0;

		for (int k = 0; k < NBUCKETS; k++)
		{
			cum += t->ops[i].buckets[k];
			buf_puts(&b, "dynindex_gateway_request_duration_seconds_bucket{operation=");
			label_value(&b, t->ops[i].name);
			buf_printf(&b, ",le=\"%g\"} %llu\n", bucket_le[k], (unsigned long long) cum);
		}
		buf_puts(&b, "dynindex_gateway_request_duration_seconds_bucket{operation=");
		label_value(&b, t->ops[i].name);
		buf_printf(&b, ",le=\"+Inf\"} %llu\n", (unsigned long long) t->ops[i].requests);
		buf_puts(&b, "dynindex_gateway_request_duration_seconds_sum{operation=");
		label_value(&b, t->ops[i].name);
		buf_printf(&b, "} %.6f\n", t->ops[i].sum);
		buf_puts(&b, "dynindex_gateway_request_duration_seconds_count{operation=");
		label_value(&b, t->ops[i].name);
		buf_printf(&b, "} %llu\n", (unsigned long long) t->ops[i].requests);
	}
	header(&b, "dynindex_gateway_requests_in_flight", "gauge", "requests received and not yet answered");
	buf_printf(&b, "dynindex_gateway_requests_in_flight %lld\n", (long long) t->in_flight);
	header(&b, "dynindex_gateway_connections", "gauge", "open client connections");
	buf_printf(&b, "dynindex_gateway_connections %lld\n", (long long) t->conns_open);
	header(&b, "dynindex_gateway_connections_max", "gauge",
		   shared ? "dynindex_http.max_connections times dynindex_http.workers" : "--max-connections");
	buf_printf(&b, "dynindex_gateway_connections_max %lld\n", (long long) gw_config.max_connections * nall);
	header(&b, "dynindex_gateway_connections_accepted_total", "counter", "client connections accepted");
	buf_printf(&b, "dynindex_gateway_connections_accepted_total %llu\n", (unsigned long long) t->conns_accepted);
	header(&b, "dynindex_gateway_connections_evicted_total", "counter",
		   "idle client connections closed to make room for new ones (connection limit)");
	buf_printf(&b, "dynindex_gateway_connections_evicted_total %llu\n", (unsigned long long) t->conns_evicted);

	if (shared)
		write_workers(&b);
	else
		write_pool(&b);
	header(&b, "dynindex_gateway_scrapes_total", "counter", "scrapes of this endpoint");
	buf_printf(&b, "dynindex_gateway_scrapes_total %llu\n", (unsigned long long) scrapes);

	header(&b, "dynindex_gateway_table_metrics_up", "gauge",
		   "1: dynindex.table_metrics was read for this scrape; 0: the view does not exist; -1: the query failed");
	buf_printf(&b, "dynindex_gateway_table_metrics_up %d\n", table_state);
	if (table_res)
		write_view_metrics(&b, table_res, "dynindex_table_", "column of the view dynindex.table_metrics",
						   counter_column);
	if (ci_res)
		write_view_metrics(&b, ci_res, "dynindex_contributor_insights_",
						   "Contributor Insights: a top key's count (view dynindex.contributor_insights_top)",
						   counter_column);
	if (repl_res)
		write_view_metrics(&b, repl_res, "dynindex_replication_",
						   "global tables, per pair of regions (column of dynindex.replication_metrics())",
						   replication_counter_column);
	return buf_steal(&b, len);
}

/* One scrape in progress. */
typedef struct Scrape
{
	struct MHD_Connection *c;
	bool		done;
	int			table_state;
	PGresult   *res;
	PGresult   *ci_res;			/* dynindex.contributor_insights_top, when there */
	PGresult   *repl_res;		/* dynindex.replication_metrics(), when there */
} Scrape;

/* The replication query finished (a database before 0.3 has no function: nothing). */
static void
scrape_repl_done(DbJob *j)
{
	Scrape	   *s = j->arg;

	s->done = true;
	if (j->pgres && PQresultStatus(j->pgres) == PGRES_TUPLES_OK)
	{
		s->repl_res = j->pgres;
		j->pgres = NULL;
	}
	MHD_resume_connection(s->c);
	mhd_resumed();
}

/* The Contributor Insights query finished (a database before 0.3 has no view: nothing); then replication's. */
static void
scrape_ci_done(DbJob *j)
{
	Scrape	   *s = j->arg;
	DbJob	   *repl;

	s->done = true;
	if (j->pgres && PQresultStatus(j->pgres) == PGRES_TUPLES_OK)
	{
		s->ci_res = j->pgres;
		j->pgres = NULL;
		repl = db_job_new(JOB_SQL, scrape_repl_done, s);
		if (repl != NULL)
		{
			s->done = false;
			repl->sql = "SELECT * FROM dynindex.replication_metrics()";
			db_submit(repl);
			return;
		}
	}
	MHD_resume_connection(s->c);
	mhd_resumed();
}

/* The table metrics query finished: then the Contributor Insights one. */
static void
scrape_done(DbJob *j)
{
	Scrape	   *s = j->arg;

	s->done = true;
	if (j->pgres && PQresultStatus(j->pgres) == PGRES_TUPLES_OK)
	{
		s->res = j->pgres;
		j->pgres = NULL;
		s->table_state = 1;
	}
	else if (j->pgres && PQresultErrorField(j->pgres, PG_DIAG_SQLSTATE) &&
			 strcmp(PQresultErrorField(j->pgres, PG_DIAG_SQLSTATE), "42P01") == 0)
		s->table_state = 0;		/* the view is not there (yet) */
	else if (j->pgres == NULL && strcmp(j->result.sqlstate, "42P01") == 0)
		s->table_state = 0;		/* the same, from dynindex_http (local.c) */
	else
		s->table_state = -1;
	if (s->table_state == 1)
	{
		DbJob	   *ci = db_job_new(JOB_SQL, scrape_ci_done, s);

		if (ci != NULL)
		{
			s->done = false;
			ci->sql = "SELECT * FROM dynindex.contributor_insights_top";
			db_submit(ci);
			return;
		}
	}
	MHD_resume_connection(s->c);
	mhd_resumed();
}

static enum MHD_Result
metrics_handler(void *cls, struct MHD_Connection *c, const char *url,
				const char *method, const char *version, const char *upload_data,
				size_t *upload_data_size, void **con_cls)
{
	Scrape	   *s = *con_cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char	   *body;
	size_t		len = 0;

	(void) cls;
	(void) version;
	(void) upload_data;
	if (strcmp(method, "GET") != 0 || (strcmp(url, "/metrics") != 0 && strcmp(url, "/") != 0))
	{
		static const char nf[] = "not found: GET /metrics\n";

		*upload_data_size = 0;
		r = MHD_create_response_from_buffer(sizeof(nf) - 1, (void *) nf, MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(c, 404, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (s == NULL)
	{
		DbJob	   *j;

		s = calloc(1, sizeof(Scrape));
		if (s == NULL)
			return MHD_NO;
		s->c = c;
		*con_cls = s;
		j = db_job_new(JOB_SQL, scrape_done, s);
		if (j == NULL)
		{
			s->done = true;
			s->table_state = -1;
			return MHD_YES;
		}
		j->sql = "SELECT * FROM dynindex.table_metrics";
		MHD_suspend_connection(c);
		db_submit(j);
		return MHD_YES;
	}
	if (!s->done)
		return MHD_YES;
	scrapes++;
	body = render(s->res, s->table_state, s->ci_res, s->repl_res, &len);
	if (body == NULL)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL)
	{
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

/* A scrape ended: free its state. */
static void
scrape_completed(void *cls, struct MHD_Connection *c, void **con_cls,
				 enum MHD_RequestTerminationCode toe)
{
	Scrape	   *s = *con_cls;

	(void) cls;
	(void) c;
	(void) toe;
	if (s)
	{
		if (s->res)
			PQclear(s->res);
		if (s->ci_res)
			PQclear(s->ci_res);
		if (s->repl_res)
			PQclear(s->repl_res);
		free(s);
		*con_cls = NULL;
	}
}

/* Start the metrics endpoint if --metrics-port was given. */
bool
metrics_start(void)
{
	struct sockaddr_storage ss;
	bool		ipv6;
	unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	if (gw_config.metrics_port < 0)
		return true;
	if (!mhd_sockaddr(gw_config.metrics_host, gw_config.metrics_port, &ss, &ipv6))
		return false;
	if (ipv6)
		flags |= MHD_USE_IPv6;
	metrics_daemon = MHD_start_daemon(flags, (uint16_t) gw_config.metrics_port, NULL, NULL,
									  metrics_handler, NULL,
									  MHD_OPTION_SOCK_ADDR, &ss,
									  MHD_OPTION_CONNECTION_LIMIT, (unsigned int) 64,
									  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 30,
									  MHD_OPTION_NOTIFY_COMPLETED, scrape_completed, NULL,
									  MHD_OPTION_END);
	if (metrics_daemon == NULL)
	{
		gw_log("cannot listen for metrics on %s:%d", gw_config.metrics_host, gw_config.metrics_port);
		return false;
	}
	if (!mhd_watch(metrics_daemon))
	{
		MHD_stop_daemon(metrics_daemon);
		metrics_daemon = NULL;
		return false;
	}
	return true;
}

/* The port the metrics endpoint listens on (-1: none). */
int
metrics_bound_port(void)
{
	const union MHD_DaemonInfo *info;

	if (metrics_daemon == NULL)
		return -1;
	info = MHD_get_daemon_info(metrics_daemon, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : gw_config.metrics_port;
}

/* Stop the metrics endpoint. */
void
metrics_stop(void)
{
	if (metrics_daemon)
	{
		mhd_unwatch(metrics_daemon);
		MHD_stop_daemon(metrics_daemon);
		metrics_daemon = NULL;
	}
}
