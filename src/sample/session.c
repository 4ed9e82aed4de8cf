/* session.c — one sampling session under record, top and metrics record (session.h). Invariant: a command the
 * session launched never outlives plumb: while plumb runs it is ended by backend_end_command when sampling stops
 * early; when plumb dies without cleaning up, the keeper ends it and everything it started. */
#include "sample/session.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "base/clock.h"

void session_init(struct session *s)
{
	memset(s, 0, sizeof *s);
	s->run = (struct backend_outcome)BACKEND_OUTCOME_INIT;
	s->keeper = (struct keeper)KEEPER_INIT;
	s->err = (struct perr)PERR_INIT;
}

static bool launches(const struct session *s)
{
	return s->opts.target == TARGET_COMMAND || s->opts.target == TARGET_CALL;
}

/* A launched command gets a keeper; without one (it could not start) the command's parent-death signal is all
 * that ends it when plumb is killed (backend_command). */
static void keeper_begin(struct session *s)
{
	struct perr e = PERR_INIT;
	if (launches(s) && !keeper_running(&s->keeper) && keeper_start(&s->keeper, &e) != PLUMB_OK)
		s->keeper = (struct keeper)KEEPER_INIT;
	s->opts.keeper = &s->keeper;
	s->opts.launched = &s->launched;
}

enum plumb_err session_run(struct session *s)
{
	keeper_begin(s);
	s->err = (struct perr)PERR_INIT;
	s->rc = backend_run_auto(&s->opts, s->keep_timeline, &s->raw, &s->res, &s->run, &s->err);
	keeper_end(&s->keeper); /* every backend has reaped or ended its command by now */
	return s->rc;
}

static void *session_thread(void *arg)
{
	struct session *s = arg;
	session_run(s);
	if (s->ended)
		s->ended(s->ended_ctx);
	return NULL;
}

enum plumb_err session_start_thread(struct session *s, struct perr *e)
{
	/* the keeper is started here, not in the thread: the command's parent-death signal (without a keeper) goes
	 * with the thread that started it, which is the sampling thread either way */
	keeper_begin(s);
	int err = pthread_create(&s->thread, NULL, session_thread, s);
	if (err) {
		keeper_end(&s->keeper);
		return perr_set(e, PLUMB_EIO, "cannot start the sampling thread: %s", strerror(err));
	}
	s->threaded = true;
	return PLUMB_OK;
}

void session_join(struct session *s)
{
	if (s->threaded)
		pthread_join(s->thread, NULL);
	s->threaded = false;
}

enum plumb_err session_launch(struct session *s, struct child *c, struct perr *e)
{
	keeper_begin(s);
	struct backend_env env;
	backend_command(&s->opts, c, &env);
	s->res.start_ns = mono_ns();
	enum plumb_err rc = backend_start(&s->opts, c, e);
	if (rc)
		keeper_end(&s->keeper);
	return rc;
}

void session_launch_ended(struct session *s, struct child *c, int status)
{
	(void)c;
	backend_ended_with(&s->res, status);
	s->res.end_ns = mono_ns();
	keeper_end(&s->keeper);
}

void session_launch_stop(struct session *s, struct child *c)
{
	s->res.end_ns = mono_ns();
	backend_end_command(&s->opts, c, &s->res);
	keeper_end(&s->keeper);
}

void session_fate(const struct session *s, const char *subject, char *buf, size_t n)
{
	if (s->res.ended[0])
		snprintf(buf, n, "%s %s.", subject, s->res.ended);
	else if (s->opts.target == TARGET_PID)
		snprintf(buf, n, "%s is still running.", subject);
	else if (n)
		buf[0] = '\0';
}

pid_t session_launched(const struct session *s)
{
	return __atomic_load_n(&s->launched, __ATOMIC_ACQUIRE);
}

const char *session_backend(const struct session *s)
{
	const struct backend *b = __atomic_load_n(&s->run.trying, __ATOMIC_ACQUIRE);
	return b ? b->name : "?";
}

void session_release(struct session *s)
{
	session_join(s);
	keeper_end(&s->keeper);
	profile_free(s->raw);
	s->raw = NULL;
	backend_outcome_release(&s->run);
}
