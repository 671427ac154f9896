/*
 * bgworker.c — dynindex_http: DynamoDB's HTTP endpoint served by background
 * workers inside PostgreSQL.
 *
 * Loaded through shared_preload_libraries, it starts dynindex_http.workers
 * background workers.  Each runs the gateway's event loop and HTTP layer
 * (libmicrohttpd in external-epoll mode, the same protocol checks, SigV4,
 * error mapping and compression as dynindex-gateway) on a listening socket
 * shared through SO_REUSEPORT, and runs each request in its own transaction
 * right there (local.c): no gateway process and no PostgreSQL protocol
 * between them, so a request crosses two process boundaries instead of four.
 * A worker runs one request at a time; the kernel spreads new connections
 * over the workers.
 *
 * With dynindex_http.metrics_port, one more worker serves Prometheus metrics
 * there: each request worker counts into its own slot of shared memory
 * (metrics.c), the metrics worker sums them and reads dynindex.table_metrics.
 */
#include "postgres.h"

#include <sys/socket.h>
#include <sys/epoll.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procsignal.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "gateway.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void dynindex_http_main(Datum arg);

static int	http_port = 8000;
static char *http_host = NULL;
static int	http_workers = 2;
static char *http_database = NULL;
static char *http_user = NULL;
static bool http_dev = false;
static char *http_region = NULL;
static int	http_max_connections = 10000;
static int	http_timeout = 120;
static int	http_request_timeout = 30;
static char *http_tls_cert = NULL;
static char *http_tls_key = NULL;
static bool http_verbose = false;
static bool http_gsi_read_your_writes = false;
static int	http_metrics_port = 0;
static char *http_metrics_host = NULL;

static LoopWatch postmaster_watch;
static void *counters;			/* the workers' metrics counters (shared memory) */
static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;

/* Ask for the shared memory of the workers' counters. */
static void
http_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(metrics_shared_size(http_workers));
}

/* Create (zeroed) or attach the workers' counters. */
static void
http_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	counters = ShmemInitStruct("dynindex_http counters", metrics_shared_size(http_workers), &found);
	if (!found)
		memset(counters, 0, metrics_shared_size(http_workers));
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	BackgroundWorker bgw;

	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex_http must be loaded through shared_preload_libraries")));

	DefineCustomIntVariable("dynindex_http.port", "TCP port of the DynamoDB HTTP endpoint.",
							NULL, &http_port, 8000, 1, 65535, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.host", "Address the DynamoDB HTTP endpoint listens on.",
							   "An IPv4 or IPv6 address, or localhost.",
							   &http_host, "127.0.0.1", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex_http.workers", "Background workers serving the HTTP endpoint.",
							"Each runs one request at a time.",
							&http_workers, 2, 1, 128, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.database", "Database whose dynindex tables the endpoint serves.",
							   NULL, &http_database, "postgres", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.user", "Role the endpoint's workers connect as.",
							   "Empty: the bootstrap superuser.  With SigV4, each request runs as its access key's role.",
							   &http_user, "", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("dynindex_http.dev", "Development mode: no authentication.",
							 "Every request runs as dynindex_http.user.",
							 &http_dev, false, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.region", "Region in ARNs for requests whose SigV4 scope names none.",
							   "Empty: the database's dynindex.region.", &http_region, "", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex_http.max_connections", "Open HTTP connections per worker.",
							"When reached, a new client closes the longest-idle connection.",
							&http_max_connections, 10000, 1, 1000000, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex_http.timeout", "An idle or this slow HTTP connection is closed.",
							NULL, &http_timeout, 120, 1, 86400, PGC_POSTMASTER, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex_http.request_timeout", "A request running longer is cancelled (HTTP 500).",
							NULL, &http_request_timeout, 30, 1, 86400, PGC_POSTMASTER, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.tls_cert", "PEM certificate (chain): serve HTTPS.",
							   NULL, &http_tls_cert, "", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.tls_key", "PEM key of dynindex_http.tls_cert.",
							   NULL, &http_tls_key, "", PGC_POSTMASTER, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
	DefineCustomBoolVariable("dynindex_http.verbose", "Log every request.",
							 NULL, &http_verbose, false, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("dynindex_http.gsi_read_your_writes",
							 "Every Query or Scan of a global secondary index waits for the writes committed before it (beyond DynamoDB).",
							 "Sets dynindex.gsi_read_your_writes for each request; a request's X-Dynindex-Gsi-Consistency header wins.",
							 &http_gsi_read_your_writes, false, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex_http.metrics_port", "TCP port of the Prometheus metrics endpoint.",
							"0: no metrics endpoint.  One more background worker serves it.",
							&http_metrics_port, 0, 0, 65535, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex_http.metrics_host", "Address the metrics endpoint listens on.",
							   "An IPv4 or IPv6 address, or localhost.",
							   &http_metrics_host, "127.0.0.1", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("dynindex_http");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = http_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = http_shmem_startup;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 5;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "dynindex_http");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "dynindex_http_main");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "dynindex http");
	for (int i = 0; i < http_workers; i++)
	{
		snprintf(bgw.bgw_name, BGW_MAXLEN, "dynindex http %d", i + 1);
		bgw.bgw_main_arg = Int32GetDatum(i + 1);
		RegisterBackgroundWorker(&bgw);
	}
	if (http_metrics_port > 0)
	{
		snprintf(bgw.bgw_name, BGW_MAXLEN, "dynindex http metrics");
		snprintf(bgw.bgw_type, BGW_MAXLEN, "dynindex http metrics");
		bgw.bgw_main_arg = Int32GetDatum(0);
		RegisterBackgroundWorker(&bgw);
	}
}

/* The HTTP layer's messages, in PostgreSQL's log. */
static void
http_log(const char *msg)
{
	ereport(LOG, (errmsg_internal("dynindex_http: %s", msg)));
}

/* SIGTERM (server shutdown, pg_terminate_backend): stop after this pass. */
static void
http_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	loop_stop(SIGTERM);
	errno = save_errno;
}

/*
 * After each pass of the event loop: absorb a ProcSignalBarrier the server
 * waits for (DROP DATABASE, ALTER DATABASE SET TABLESPACE, ... wait until
 * every process has released its file handles).  PostgreSQL's SIGUSR1
 * handler sets the flag, and the signal ends epoll_wait with EINTR, so a
 * worker idle in the loop answers at once instead of never.
 */
static void
absorb_barriers(void)
{
	if (ProcSignalBarrierPending)
		ProcessProcSignalBarrier();
}

/* The postmaster died: stop at once, as every backend does. */
static void
postmaster_died(void *arg, uint32_t events)
{
	(void) arg;
	(void) events;
	proc_exit(1);
}

/*
 * The metrics worker: the metrics endpoint alone on the event loop.  Its
 * scrapes sum the request workers' counters and read dynindex.table_metrics
 * in a transaction of this worker.  Does not return.
 */
static void
metrics_main(void)
{
	gw_config.metrics_port = http_metrics_port;
	metrics_use_shared(counters, http_workers, 0);
	if (!metrics_start())
		ereport(FATAL, (errmsg("dynindex_http: cannot listen for metrics on %s:%d",
							   http_metrics_host, http_metrics_port)));
	ereport(LOG, (errmsg("dynindex_http metrics on http://%s:%d/metrics", http_metrics_host,
						 http_metrics_port)));
	(void) loop_run();
	metrics_stop();
	proc_exit(1);
}

/* A background worker: arg 1..dynindex_http.workers serves requests, 0 the metrics. */
void
dynindex_http_main(Datum arg)
{
	pqsignal(SIGTERM, http_sigterm);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(http_database, http_user[0] ? http_user : NULL, 0);

	gw_log_hook = http_log;
	memset(&gw_config, 0, sizeof(gw_config));
	gw_config.host = http_host;
	gw_config.port = http_port;
	gw_config.pool_size = 1;
	gw_config.max_connections = http_max_connections;
	gw_config.timeout = http_timeout;
	gw_config.request_timeout = http_request_timeout;
	gw_config.region = http_region[0] ? http_region : NULL;
	gw_config.tls_cert = http_tls_cert[0] ? http_tls_cert : NULL;
	gw_config.tls_key = http_tls_key[0] ? http_tls_key : NULL;
	gw_config.metrics_host = http_metrics_host;
	gw_config.metrics_port = -1;
	gw_config.dev = http_dev;
	gw_config.verbose = http_verbose;
	gw_config.gsi_read_your_writes = http_gsi_read_your_writes;
	gw_config.reuse_port = true;
	gw_config.max_standby_lag = 1;

	if (!loop_init(false))
		ereport(FATAL, (errmsg("dynindex_http: cannot set up the event loop: %m")));
	postmaster_watch.fn = postmaster_died;
	if (!loop_add(&postmaster_watch, postmaster_alive_fds[POSTMASTER_FD_WATCH], EPOLLIN))
		ereport(FATAL, (errmsg("dynindex_http: cannot watch the postmaster: %m")));
	(void) loop_hook(NULL, absorb_barriers);
	if (DatumGetInt32(arg) == 0)
		metrics_main();
	/* PostgreSQL's own files (its descriptor cache of at most max_safe_fds) come first */
	gw_config.max_connections = gw_fit_file_limit(gw_config.max_connections, (long) max_safe_fds + 64);
	metrics_use_shared(counters, http_workers, DatumGetInt32(arg));
	pool_init();
	(void) loop_hook(NULL, db_tick);
	if (!http_start())
		ereport(FATAL, (errmsg("dynindex_http: cannot listen on %s:%d", http_host, http_port)));
	if (DatumGetInt32(arg) == 1 && http_dev)
		ereport(WARNING,
				(errmsg("dynindex_http: development mode (dynindex_http.dev): authentication is OFF"),
				 errdetail("Any request, signed or not, runs as the workers' role.  Never expose this port beyond your machine.")));
	if (DatumGetInt32(arg) == 1)
		ereport(LOG, (errmsg("dynindex_http listening on %s://%s:%d (%s, %d workers)",
							 gw_config.tls_cert ? "https" : "http", http_host, http_port,
							 http_dev ? "dev mode, no authentication" : "SigV4 authentication",
							 http_workers)));
	/*
	 * Only SIGTERM ends the loop: server shutdown, or pg_terminate_backend.
	 * Exit code 1 asks the postmaster to start the worker again (after
	 * bgw_restart_time), so terminating a worker never loses the endpoint;
	 * at shutdown nothing is restarted anyway.
	 */
	(void) loop_run();
	http_stop();
	pool_shutdown();
	proc_exit(1);
}
