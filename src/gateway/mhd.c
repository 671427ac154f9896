/*
 * mhd.c — libmicrohttpd daemons driven by the event loop: the API endpoint
 * (http.c) and the metrics endpoint (metrics.c) each start a daemon in
 * external-epoll mode and hand it here.  Its epoll set becomes one watch of
 * the loop, and a loop hook runs its timeouts and the connections resumed
 * during a pass.  Also the listen address parser both endpoints use.
 */
#include "gateway.h"

#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <microhttpd.h>

/* The daemons the loop drives (the API endpoint, the metrics endpoint). */
#define MAX_DAEMONS 2
static struct
{
	struct MHD_Daemon *d;
	LoopWatch	watch;
	bool		ran;			/* MHD_run already called in this pass of the loop */
}			daemons[MAX_DAEMONS];
static int	ndaemons;
static bool hooked;
static bool resume_pending;
static unsigned long runs;		/* MHD_run calls so far */

/*
 * libmicrohttpd asks for an immediate pass (timeout 0) while a connection is
 * in its "ready" list, which includes every keep-alive connection between the
 * answer and the next request.  Passes that reach none of the endpoint's
 * callbacks (mhd_progress) are counted: after one, the loop waits (up to
 * 1 ms, or until an event) instead of spinning; new data on any connection is
 * an event of libmicrohttpd's epoll set and wakes the loop at once.
 */
static unsigned long progress;
static unsigned long last_progress;
static int	idle_zero_passes;

/* A callback of an endpoint ran: the last pass did some work. */
void
mhd_progress(void)
{
	progress++;
}

/* MHD_run calls so far (a request's headers and body read in different runs). */
unsigned long
mhd_run_count(void)
{
	return runs;
}

/* Events on a daemon's epoll set: let libmicrohttpd work. */
static void
daemon_event(void *arg, uint32_t events)
{
	(void) events;
	for (int i = 0; i < ndaemons; i++)
		if (daemons[i].d == arg)
			daemons[i].ran = true;
	runs++;
	MHD_run(arg);
}

/* The loop hook: milliseconds until a daemon has timeouts to process (-1: none). */
static int
mhd_timeout_ms(void)
{
	int			best = -1;

	if (resume_pending)
		return 0;
	for (int i = 0; i < ndaemons; i++)
	{
		MHD_UNSIGNED_LONG_LONG t;

		if (MHD_get_timeout(daemons[i].d, &t) == MHD_YES)
		{
			int			ms = t > 250 ? 250 : (int) t;

			if (best < 0 || ms < best)
				best = ms;
		}
	}
	if (best == 0)
	{
		if (progress != last_progress)
		{
			last_progress = progress;
			idle_zero_passes = 0;
		}
		else if (++idle_zero_passes > 0)
			best = 1;
	}
	return best;
}

/* The loop hook, after each pass: resumed connections, expired timeouts. */
static void
mhd_tick(void)
{
	bool		resumed = resume_pending;

	resume_pending = false;
	for (int i = 0; i < ndaemons; i++)
	{
		MHD_UNSIGNED_LONG_LONG t;

		/* once per pass: a second MHD_run right after the first finds nothing new */
		if (resumed || (!daemons[i].ran && MHD_get_timeout(daemons[i].d, &t) == MHD_YES && t == 0))
		{
			runs++;
			MHD_run(daemons[i].d);
		}
		daemons[i].ran = false;
	}
}

/* Drive daemon d from the event loop (its epoll set, its timeouts). */
bool
mhd_watch(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);

	if (info == NULL || ndaemons >= MAX_DAEMONS)
		return false;
	if (!hooked && !loop_hook(mhd_timeout_ms, mhd_tick))
		return false;
	hooked = true;
	daemons[ndaemons].d = d;
	daemons[ndaemons].watch.fn = daemon_event;
	daemons[ndaemons].watch.arg = d;
	if (!loop_add(&daemons[ndaemons].watch, info->epoll_fd, EPOLLIN))
		return false;
	ndaemons++;
	return true;
}

/* Stop driving d. */
void
mhd_unwatch(struct MHD_Daemon *d)
{
	for (int i = 0; i < ndaemons; i++)
		if (daemons[i].d == d)
		{
			loop_del(&daemons[i].watch);
			daemons[i] = daemons[--ndaemons];
			break;
		}
}

/*
 * A connection was resumed: libmicrohttpd in external-epoll mode notices it
 * only on its next MHD_run, which mhd_tick makes at the end of this pass.
 */
void
mhd_resumed(void)
{
	resume_pending = true;
}

/* Parse host (IPv4, IPv6 or localhost) and port into a socket address. */
bool
mhd_sockaddr(const char *host, int port, struct sockaddr_storage *ss, bool *ipv6)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *) ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *) ss;

	memset(ss, 0, sizeof(*ss));
	*ipv6 = false;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1)
	{
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t) port);
		return true;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1)
	{
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t) port);
		*ipv6 = true;
		return true;
	}
	if (strcmp(host, "localhost") == 0)
	{
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t) port);
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return true;
	}
	gw_log("a listen address must be an IPv4 or IPv6 address (or localhost): %s", host);
	return false;
}
