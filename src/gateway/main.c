/*
 * main.c — dynindex-gateway: options, start, shutdown.
 *
 *   dynindex-gateway [--host ADDR] [--port N] [--dbname CONNINFO]
 *                    [--pool-size N] [--max-connections N] [--timeout S]
 *                    [--dev] [--verbose] [--self-test]
 *
 * Every option can also come from the environment (DYNINDEX_GATEWAY_HOST,
 * _PORT, _DBNAME, _POOL_SIZE, _MAX_CONNECTIONS, _TIMEOUT, _DEV, _VERBOSE); a
 * flag wins over the environment.  The database connection otherwise follows
 * libpq's defaults and PG* variables.
 */
#include "gateway.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

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
			"  --max-connections N    concurrent HTTP connections (default 512)\n"
			"  --timeout S            idle/slow HTTP connection timeout, seconds (default 120)\n"
			"  --dev                  development mode: NO authentication\n"
			"  --verbose              log every request\n"
			"  --self-test            run the unit tests and exit\n"
			"  --help                 this text\n\n"
			"Environment: DYNINDEX_GATEWAY_HOST, _PORT, _DBNAME, _POOL_SIZE,\n"
			"_MAX_CONNECTIONS, _TIMEOUT, _DEV=1, _VERBOSE=1.\n");
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

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"host", required_argument, NULL, 'h'},
		{"port", required_argument, NULL, 'p'},
		{"dbname", required_argument, NULL, 'd'},
		{"pool-size", required_argument, NULL, 'P'},
		{"max-connections", required_argument, NULL, 'm'},
		{"timeout", required_argument, NULL, 't'},
		{"dev", no_argument, NULL, 'D'},
		{"verbose", no_argument, NULL, 'v'},
		{"self-test", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, '?'},
		{NULL, 0, NULL, 0}
	};
	const char *v;
	int			ch;
	sigset_t	sigs;
	int			sig;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;

	gw_config.host = "127.0.0.1";
	gw_config.port = 8000;
	gw_config.conninfo = NULL;
	gw_config.pool_size = 8;
	gw_config.max_connections = 512;
	gw_config.timeout = 120;
	gw_config.acquire_timeout = 30;
	if ((v = getenv("DYNINDEX_GATEWAY_HOST")) && *v)
		gw_config.host = v;
	if ((v = getenv("DYNINDEX_GATEWAY_PORT")) && *v)
		gw_config.port = parse_int(v, "DYNINDEX_GATEWAY_PORT", 0, 65535);
	if ((v = getenv("DYNINDEX_GATEWAY_DBNAME")) && *v)
		gw_config.conninfo = v;
	if ((v = getenv("DYNINDEX_GATEWAY_POOL_SIZE")) && *v)
		gw_config.pool_size = parse_int(v, "DYNINDEX_GATEWAY_POOL_SIZE", 1, 1000);
	if ((v = getenv("DYNINDEX_GATEWAY_MAX_CONNECTIONS")) && *v)
		gw_config.max_connections = parse_int(v, "DYNINDEX_GATEWAY_MAX_CONNECTIONS", 1, 100000);
	if ((v = getenv("DYNINDEX_GATEWAY_TIMEOUT")) && *v)
		gw_config.timeout = parse_int(v, "DYNINDEX_GATEWAY_TIMEOUT", 1, 86400);
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
			case 'm':
				gw_config.max_connections = parse_int(optarg, "--max-connections", 1, 100000);
				break;
			case 't':
				gw_config.timeout = parse_int(optarg, "--timeout", 1, 86400);
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

	/* Signals are taken by sigwait below; worker threads inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (gw_config.dev)
	{
		fprintf(stderr,
				"dynindex-gateway: WARNING: development mode (--dev): authentication is OFF.\n"
				"dynindex-gateway: WARNING: any request, signed or not, runs as the gateway's own database role.\n"
				"dynindex-gateway: WARNING: never expose this port beyond your machine.\n");
	}
	if (!pool_init())
		gw_log("the database is not reachable yet; requests will get InternalServerError until it is");

	d = http_start();
	if (d == NULL)
	{
		gw_log("cannot listen on %s:%d", gw_config.host, gw_config.port);
		pool_shutdown();
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("dynindex-gateway listening on http://%s:%u (%s, pool %d)\n",
		   gw_config.host, info ? (unsigned) info->port : (unsigned) gw_config.port,
		   gw_config.dev ? "dev mode, no authentication" : "SigV4 authentication",
		   gw_config.pool_size);
	fflush(stdout);

	sigwait(&sigs, &sig);
	gw_log("received signal %d, shutting down", sig);
	MHD_stop_daemon(d);
	pool_shutdown();
	return 0;
}
