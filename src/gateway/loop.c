/*
 * loop.c — the gateway's one event loop (epoll): client sockets (through
 * libmicrohttpd's own epoll set), PostgreSQL sockets, signals and timers all
 * wake one thread, so a request moves from HTTP to PostgreSQL and back without
 * a thread hand-off.  The loop knows watched descriptors and hooks, nothing of
 * what they serve: the layers above register a hook for their timers
 * (loop_hook), the HTTP daemons (mhd.c) and the database pool alike.
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
#define LOOP_MAX_HOOKS 4
/* The loop waits at most this long (ms), hooks or not. */
#define LOOP_MAX_WAIT 250

static int	epfd = -1;
static int	sigfd = -1;
static volatile int stop_signal;
static LoopWatch sig_watch;
static struct
{
	int			(*timeout_ms) (void);
	void		(*after_pass) (void);
}			hooks[LOOP_MAX_HOOKS];
static int	nhooks;

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
 * Add a hook: before each wait, timeout_ms (may be NULL) says how soon it
 * needs the loop (ms, -1: no timer); after each pass, after_pass (may be
 * NULL) runs.  Hooks run in the order they were added.
 */
bool
loop_hook(int (*timeout_ms) (void), void (*after_pass) (void))
{
	if (nhooks == LOOP_MAX_HOOKS)
		return false;
	hooks[nhooks].timeout_ms = timeout_ms;
	hooks[nhooks].after_pass = after_pass;
	nhooks++;
	return true;
}

/*
 * Run until a signal: wait for events (at most until the first timer of a
 * hook), dispatch them, run the hooks.  Returns the signal.
 */
int
loop_run(void)
{
	struct epoll_event evs[LOOP_MAX_EVENTS];

	while (!stop_signal)
	{
		int			timeout = LOOP_MAX_WAIT;
		int			n;

		for (int h = 0; h < nhooks; h++)
		{
			int			t = hooks[h].timeout_ms ? hooks[h].timeout_ms() : -1;

			if (t >= 0 && t < timeout)
				timeout = t;
		}
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
		for (int h = 0; h < nhooks; h++)
			if (hooks[h].after_pass)
				hooks[h].after_pass();
	}
	return stop_signal;
}
