/*
 * loop.c — the gateway's one event loop (epoll): client sockets (through
 * libmicrohttpd's own epoll set), PostgreSQL sockets, signals and timers all
 * wake one thread, so a request moves from HTTP to PostgreSQL and back without
 * a thread hand-off.
 */
#include "gateway.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define LOOP_MAX_EVENTS 256

static int	epfd = -1;
static int	sigfd = -1;
static volatile int stop_signal;
static LoopWatch sig_watch;

/* Monotonic time in seconds. */
double
gw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A SIGINT or SIGTERM arrived: stop the loop. */
static void
on_signal(void *arg, uint32_t events)
{
	struct signalfd_siginfo si;

	(void) arg;
	(void) events;
	while (read(sigfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
		stop_signal = (int) si.ssi_signo;
}

/*
 * Create the epoll set; with take_signals, take SIGINT and SIGTERM through a
 * signalfd.  A background worker keeps PostgreSQL's signal handling (SIGINT
 * cancels the running request) and calls loop_stop from its SIGTERM handler.
 */
bool
loop_init(bool take_signals)
{
	sigset_t	sigs;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return false;
	if (!take_signals)
		return true;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		return false;
	sig_watch.fn = on_signal;
	return loop_add(&sig_watch, sigfd, EPOLLIN);
}

/*
 * Stop the loop after this pass (async-signal-safe: a signal handler may call
 * it; epoll_wait returns EINTR when a handler runs).
 */
void
loop_stop(int sig)
{
	stop_signal = sig;
}

/* Watch fd for events; w must stay valid until loop_del. */
bool
loop_add(LoopWatch *w, int fd, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = w;
	w->fd = fd;
	w->events = events;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
	{
		w->fd = -1;
		return false;
	}
	return true;
}

/* Change the events watched on w's fd (no system call if unchanged). */
bool
loop_mod(LoopWatch *w, uint32_t events)
{
	struct epoll_event ev;

	if (w->fd < 0 || w->events == events)
		return true;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = w;
	w->events = events;
	return epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev) == 0;
}

/* Stop watching w's fd (call before closing it). */
void
loop_del(LoopWatch *w)
{
	if (w->fd >= 0)
		(void) epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->fd = -1;
	w->events = 0;
}

/*
 * Run until a signal: wait for events (at most until the next timer of the
 * HTTP layer or the pool), dispatch them, run the timers.  Returns the signal.
 */
int
loop_run(void)
{
	struct epoll_event evs[LOOP_MAX_EVENTS];

	while (!stop_signal)
	{
		int			timeout = http_timeout_ms();
		int			tick = standby_tick_ms();
		int			n;

		if (timeout < 0 || timeout > 250)
			timeout = 250;
		/* with standbys, wake up for their probes */
		if (tick >= 0 && timeout > tick)
			timeout = tick;
		n = epoll_wait(epfd, evs, LOOP_MAX_EVENTS, timeout);
		if (n < 0 && errno != EINTR)
		{
			gw_log("epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++)
		{
			LoopWatch  *w = evs[i].data.ptr;

			if (w->fd >= 0)
				w->fn(w->arg, evs[i].events);
		}
		db_tick();
		http_tick();
	}
	return stop_signal;
}
