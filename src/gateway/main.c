/*
 * main.c — dynindex-gateway: options, start, shutdown.
 *
 *   dynindex-gateway [--host ADDR] [--port N] [--dbname CONNINFO]
 *                    [--pool-size N] [--pipeline-depth N] [--max-connections N]
 *                    [--timeout S] [--request-timeout S] [--region R]
 *                    [--account-id ID] [--tls-cert FILE --tls-key FILE]
 *                    [--metrics-port N] [--metrics-host ADDR]
 *                    [--standby CONNINFO]... [--max-standby-lag DURATION]
 *                    [--gsi-read-your-writes] [--dev] [--verbose] [--self-test]
 *
 * Every option can also come from the environment (DYNINDEX_GATEWAY_HOST,
 * _PORT, _DBNAME, ...); a flag wins over the environment.  The database
 * connection otherwise follows libpq's defaults and PG* variables.
 */
#include "gateway.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void
usage(FILE *f)
{
	fprintf(f,
			"Usage: dynindex-gateway [OPTIONS]\n"
			"A DynamoDB wire-protocol endpoint for PostgreSQL with the dynindex extension.\n\n"
			"  --host ADDR            address to listen on (default 127.0.0.1)\n"
			"  --port N               port to listen on (default 8000; 0 picks a free one)\n"
			"  --dbname CONNINFO      database name or libpq connection string\n"
			"                         (default: libpq defaults and PG* variables)\n"
			"  --pool-size N          database connections (default 8)\n"
			"  --pipeline-depth N     requests sent ahead on one database connection (default 16)\n"
			"  --max-connections N    open HTTP connections; beyond, the longest idle one is\n"
			"                         closed for each new client (default 10000)\n"
			"  --timeout S            idle/slow HTTP connection timeout, seconds (default 120)\n"
			"  --request-timeout S    a request unanswered this long gets InternalServerError (default 30)\n"
			"  --region R             region in ARNs when a request names none (default: dynindex.region)\n"
			"  --account-id ID        account id in ARNs (default 000000000000)\n"
			"  --tls-cert FILE        serve HTTPS with this certificate (PEM) ...\n"
			"  --tls-key FILE         ... and this private key (PEM)\n"
			"  --metrics-port N       serve Prometheus metrics on this port (default: off; 0 picks one)\n"
			"  --metrics-host ADDR    address of the metrics endpoint (default 127.0.0.1)\n"
			"  --standby CONNINFO     a hot standby of the database: eventually consistent reads\n"
			"                         go there (repeat for more standbys)\n"
			"  --max-standby-lag D    use a standby only while its replay lag is at most D\n"
			"                         (e.g. 1s, 500ms; default 1s)\n"
			"  --gsi-read-your-writes every Query/Scan of a GSI waits for the writes committed\n"
			"                         before it (beyond DynamoDB; default: eventual consistency)\n"
			"  --dev                  development mode: NO authentication\n"
			"  --verbose              log every request\n"
			"  --self-test            run the unit tests and exit\n"
			"  --help                 this text\n\n"
			"Environment: DYNINDEX_GATEWAY_HOST, _PORT, _DBNAME, _POOL_SIZE, _PIPELINE_DEPTH,\n"
			"_MAX_CONNECTIONS, _TIMEOUT, _REQUEST_TIMEOUT, _REGION, _ACCOUNT_ID, _TLS_CERT,\n"
			"_TLS_KEY, _METRICS_PORT, _METRICS_HOST, _GSI_READ_YOUR_WRITES=1, _DEV=1, _VERBOSE=1,\n"
			"_STANDBY (connection strings separated by ';'), _MAX_STANDBY_LAG.\n");
}

static int
parse_int(const char *s, const char *what, int min, int max)
{
	char	   *end;
	long		v;

	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < min || v > max)
	{
		fprintf(stderr, "dynindex-gateway: invalid %s: %s (expected %d..%d)\n", what, s, min, max);
		exit(2);
	}
	return (int) v;
}

static bool
env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 &&
		strcasecmp(v, "no") != 0;
}

/* A valid region name (it ends up in ARNs and in a GUC): letters, digits, '-'. */
static bool
valid_region(const char *r)
{
	if (*r == '\0' || strlen(r) > 63)
		return false;
	for (; *r; r++)
		if (!((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') || (*r >= '0' && *r <= '9') || *r == '-'))
			return false;
	return true;
}

/* Add a --standby connection string. */
static void
add_standby(const char *conninfo)
{
	const char **n = realloc(gw_config.standbys, sizeof(char *) * (size_t) (gw_config.nstandbys + 1));

	if (n == NULL)
	{
		fprintf(stderr, "dynindex-gateway: out of memory\n");
		exit(1);
	}
	gw_config.standbys = n;
	gw_config.standbys[gw_config.nstandbys++] = conninfo;
}

/* --max-standby-lag: a duration of 0 to 1 hour. */
static double
parse_lag(const char *s, const char *what)
{
	double		v = gw_parse_duration(s);

	if (v < 0 || v > 3600)
	{
		fprintf(stderr, "dynindex-gateway: invalid %s: %s (expected a duration such as 1s, 500ms, 2.5s; at most 1 hour)\n",
				what, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"host", required_argument, NULL, 'h'},
		{"port", required_argument, NULL, 'p'},
		{"dbname", required_argument, NULL, 'd'},
		{"pool-size", required_argument, NULL, 'P'},
		{"pipeline-depth", required_argument, NULL, 'L'},
		{"max-connections", required_argument, NULL, 'm'},
		{"timeout", required_argument, NULL, 't'},
		{"request-timeout", required_argument, NULL, 'R'},
		{"region", required_argument, NULL, 'g'},
		{"account-id", required_argument, NULL, 'a'},
		{"tls-cert", required_argument, NULL, 'C'},
		{"tls-key", required_argument, NULL, 'K'},
		{"metrics-port", required_argument, NULL, 'M'},
		{"metrics-host", required_argument, NULL, 'H'},
		{"standby", required_argument, NULL, 'S'},
		{"max-standby-lag", required_argument, NULL, 'l'},
		{"gsi-read-your-writes", no_argument, NULL, 'G'},
		{"dev", no_argument, NULL, 'D'},
		{"verbose", no_argument, NULL, 'v'},
		{"self-test", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, '?'},
		{NULL, 0, NULL, 0}
	};
	const char *v;
	int			ch;
	int			sig;
	bool		standby_from_flag = false;

	gw_config.host = "127.0.0.1";
	gw_config.port = 8000;
	gw_config.conninfo = NULL;
	gw_config.pool_size = 8;
	gw_config.pipeline_depth = 16;
	gw_config.max_connections = 10000;
	gw_config.timeout = 120;
	gw_config.request_timeout = 30;
	gw_config.region = NULL;	/* the database's dynindex.region */
	gw_config.account_id = NULL;
	gw_config.metrics_host = "127.0.0.1";
	gw_config.metrics_port = -1;
	gw_config.max_standby_lag = 1.0;
	if ((v = getenv("DYNINDEX_GATEWAY_HOST")) && *v)
		gw_config.host = v;
	if ((v = getenv("DYNINDEX_GATEWAY_PORT")) && *v)
		gw_config.port = parse_int(v, "DYNINDEX_GATEWAY_PORT", 0, 65535);
	if ((v = getenv("DYNINDEX_GATEWAY_DBNAME")) && *v)
		gw_config.conninfo = v;
	if ((v = getenv("DYNINDEX_GATEWAY_POOL_SIZE")) && *v)
		gw_config.pool_size = parse_int(v, "DYNINDEX_GATEWAY_POOL_SIZE", 1, 1000);
	if ((v = getenv("DYNINDEX_GATEWAY_PIPELINE_DEPTH")) && *v)
		gw_config.pipeline_depth = parse_int(v, "DYNINDEX_GATEWAY_PIPELINE_DEPTH", 1, 1000);
	if ((v = getenv("DYNINDEX_GATEWAY_MAX_CONNECTIONS")) && *v)
		gw_config.max_connections = parse_int(v, "DYNINDEX_GATEWAY_MAX_CONNECTIONS", 1, 1000000);
	if ((v = getenv("DYNINDEX_GATEWAY_TIMEOUT")) && *v)
		gw_config.timeout = parse_int(v, "DYNINDEX_GATEWAY_TIMEOUT", 1, 86400);
	if ((v = getenv("DYNINDEX_GATEWAY_REQUEST_TIMEOUT")) && *v)
		gw_config.request_timeout = parse_int(v, "DYNINDEX_GATEWAY_REQUEST_TIMEOUT", 1, 86400);
	if ((v = getenv("DYNINDEX_GATEWAY_REGION")) && *v)
		gw_config.region = v;
	if ((v = getenv("DYNINDEX_GATEWAY_ACCOUNT_ID")) && *v)
		gw_config.account_id = v;
	if ((v = getenv("DYNINDEX_GATEWAY_TLS_CERT")) && *v)
		gw_config.tls_cert = v;
	if ((v = getenv("DYNINDEX_GATEWAY_TLS_KEY")) && *v)
		gw_config.tls_key = v;
	if ((v = getenv("DYNINDEX_GATEWAY_METRICS_PORT")) && *v)
		gw_config.metrics_port = parse_int(v, "DYNINDEX_GATEWAY_METRICS_PORT", 0, 65535);
	if ((v = getenv("DYNINDEX_GATEWAY_METRICS_HOST")) && *v)
		gw_config.metrics_host = v;
	if ((v = getenv("DYNINDEX_GATEWAY_STANDBY")) && *v)
	{
		char	   *list = strdup(v);

		for (char *tok = strtok(list, ";"); tok; tok = strtok(NULL, ";"))
			if (tok[strspn(tok, " \t")] != '\0')
				add_standby(tok);
	}
	if ((v = getenv("DYNINDEX_GATEWAY_MAX_STANDBY_LAG")) && *v)
		gw_config.max_standby_lag = parse_lag(v, "DYNINDEX_GATEWAY_MAX_STANDBY_LAG");
	gw_config.gsi_read_your_writes = env_true("DYNINDEX_GATEWAY_GSI_READ_YOUR_WRITES");
	gw_config.dev = env_true("DYNINDEX_GATEWAY_DEV");
	gw_config.verbose = env_true("DYNINDEX_GATEWAY_VERBOSE");

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'h':
				gw_config.host = optarg;
				break;
			case 'p':
				gw_config.port = parse_int(optarg, "--port", 0, 65535);
				break;
			case 'd':
				gw_config.conninfo = optarg;
				break;
			case 'P':
				gw_config.pool_size = parse_int(optarg, "--pool-size", 1, 1000);
				break;
			case 'L':
				gw_config.pipeline_depth = parse_int(optarg, "--pipeline-depth", 1, 1000);
				break;
			case 'm':
				gw_config.max_connections = parse_int(optarg, "--max-connections", 1, 1000000);
				break;
			case 't':
				gw_config.timeout = parse_int(optarg, "--timeout", 1, 86400);
				break;
			case 'R':
				gw_config.request_timeout = parse_int(optarg, "--request-timeout", 1, 86400);
				break;
			case 'g':
				gw_config.region = optarg;
				break;
			case 'a':
				gw_config.account_id = optarg;
				break;
			case 'C':
				gw_config.tls_cert = optarg;
				break;
			case 'K':
				gw_config.tls_key = optarg;
				break;
			case 'M':
				gw_config.metrics_port = parse_int(optarg, "--metrics-port", 0, 65535);
				break;
			case 'H':
				gw_config.metrics_host = optarg;
				break;
			case 'S':
				if (!standby_from_flag)
				{
					/* --standby replaces the environment's list */
					gw_config.nstandbys = 0;
					standby_from_flag = true;
				}
				add_standby(optarg);
				break;
			case 'l':
				gw_config.max_standby_lag = parse_lag(optarg, "--max-standby-lag");
				break;
			case 'G':
				gw_config.gsi_read_your_writes = true;
				break;
			case 'D':
				gw_config.dev = true;
				break;
			case 'v':
				gw_config.verbose = true;
				break;
			case 'T':
				return gw_self_test();
			case '?':
			default:
				usage(ch == '?' && optopt == 0 ? stdout : stderr);
				return ch == '?' && optopt == 0 ? 0 : 2;
		}
	}
	if (optind < argc)
	{
		usage(stderr);
		return 2;
	}
	if (gw_config.region && !valid_region(gw_config.region))
	{
		fprintf(stderr, "dynindex-gateway: invalid --region: %s\n", gw_config.region);
		return 2;
	}
	if (gw_config.account_id && strspn(gw_config.account_id, "0123456789") != strlen(gw_config.account_id))
	{
		fprintf(stderr, "dynindex-gateway: invalid --account-id (digits only): %s\n", gw_config.account_id);
		return 2;
	}
	if ((gw_config.tls_cert == NULL) != (gw_config.tls_key == NULL))
	{
		fprintf(stderr, "dynindex-gateway: --tls-cert and --tls-key go together\n");
		return 2;
	}

	signal(SIGPIPE, SIG_IGN);
	if (!loop_init(true))
	{
		gw_log("cannot set up the event loop");
		return 1;
	}
	gw_config.max_connections = gw_fit_file_limit(gw_config.max_connections,
											   (long) gw_config.pool_size * (1 + gw_config.nstandbys));

	if (gw_config.dev)
	{
		fprintf(stderr,
				"dynindex-gateway: WARNING: development mode (--dev): authentication is OFF.\n"
				"dynindex-gateway: WARNING: any request, signed or not, runs as the gateway's own database role.\n"
				"dynindex-gateway: WARNING: never expose this port beyond your machine.\n");
	}
	if (!pool_init())
		gw_log("the database is not reachable yet; requests will get InternalServerError until it is");
	/* the standbys' routing, on top of the pools (the pool calls it through its router) */
	standby_init();
	/* the pool's timers and the standbys' probes; before the HTTP daemons' hook */
	(void) loop_hook(standby_tick_ms, db_tick);

	if (!http_start())
	{
		gw_log("cannot listen on %s:%d", gw_config.host, gw_config.port);
		pool_shutdown();
		return 1;
	}
	if (!metrics_start())
	{
		http_stop();
		pool_shutdown();
		return 1;
	}
	printf("dynindex-gateway listening on %s://%s:%d (%s, pool %d)\n",
		   gw_config.tls_cert ? "https" : "http",
		   gw_config.host, http_bound_port(),
		   gw_config.dev ? "dev mode, no authentication" : "SigV4 authentication",
		   gw_config.pool_size);
	for (int i = 0; i < pool_nstandbys(); i++)
		printf("dynindex-gateway standby %s for eventually consistent reads (max lag %g s)\n",
			   pool_name(pool_standby(i)), gw_config.max_standby_lag);
	if (metrics_bound_port() >= 0)
		printf("dynindex-gateway metrics on http://%s:%d/metrics\n", gw_config.metrics_host,
			   metrics_bound_port());
	fflush(stdout);

	sig = loop_run();
	gw_log("received signal %d, shutting down", sig);
	pool_shutdown();
	metrics_stop();
	http_stop();
	return 0;
}
