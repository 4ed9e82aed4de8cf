/* http.c — one bounded HTTP request through libcurl, loaded on first use (http.h). The credentials are read into
 * memory that is wiped after the request; libcurl's verbose output is never turned on, so nothing it sends is
 * written anywhere. */
#include "os/http.h"

#include <ctype.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "os/fs.h"

enum plumb_err http_check_url(const char *url, struct perr *e)
{
	const char *rest = NULL;
	if (url && strncasecmp(url, "http://", 7) == 0)
		rest = url + 7;
	else if (url && strncasecmp(url, "https://", 8) == 0)
		rest = url + 8;
	if (!rest)
		return perr_set(e, PLUMB_EINVAL, "the push URL must begin with http:// or https://");
	size_t host_end = strcspn(rest, "/?#");
	if (host_end == 0)
		return perr_set(e, PLUMB_EINVAL, "the push URL has no host");
	if (memchr(rest, '@', host_end))
		return perr_set(e, PLUMB_EINVAL, "the push URL carries credentials; put them in PLUMB_PUSH_USERNAME and "
						 "PLUMB_PUSH_PASSWORD_FILE (or PLUMB_PUSH_BEARER_TOKEN_FILE) instead");
	if (strpbrk(rest, "?#"))
		return perr_set(e, PLUMB_EINVAL, "the push URL must not have a query or a fragment (give the gateway's base URL)");
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return perr_set(e, PLUMB_EINVAL, "the push URL has a space or a control character");
	return PLUMB_OK;
}

#if __has_include(<curl/curl.h>) /* else pushing is unsupported (below), everything else works */

/* ---- credentials ---- */

#define SECRET_MAX 4096

/* One credential: the variable NAME, else the file NAME_FILE names (its first line). *out is malloc'd or NULL. */
static enum plumb_err read_secret(const char *name, char **out, struct perr *e)
{
	*out = NULL;
	const char *v = getenv(name);
	if (v && *v) {
		*out = strdup(v);
		return *out ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	char file_var[64];
	snprintf(file_var, sizeof file_var, "%s_FILE", name);
	const char *path = getenv(file_var);
	if (!path || !*path)
		return PLUMB_OK;
	char *data;
	size_t len;
	enum plumb_err rc = fs_read_trusted(AT_FDCWD, path, getuid(), SECRET_MAX, &data, &len, e);
	if (rc != PLUMB_OK) {
		struct perr inner = *e;
		return perr_set(e, rc, "%s: %s", file_var, inner.msg);
	}
	len = strcspn(data, "\r\n");
	data[len] = '\0';
	if (!len) {
		free(data);
		return perr_set(e, PLUMB_EFORMAT, "%s: %s is empty", file_var, path);
	}
	*out = data;
	return PLUMB_OK;
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

struct creds {
	char *token, *user, *password;
};

static enum plumb_err creds_read(struct creds *c, struct perr *e)
{
	memset(c, 0, sizeof *c);
	const char *user = getenv("PLUMB_PUSH_USERNAME");
	enum plumb_err rc = read_secret("PLUMB_PUSH_BEARER_TOKEN", &c->token, e);
	if (rc == PLUMB_OK && user && *user) {
		rc = read_secret("PLUMB_PUSH_PASSWORD", &c->password, e);
		if (rc == PLUMB_OK && !(c->user = strdup(user)))
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	if (rc == PLUMB_OK && c->token && c->user)
		rc = perr_set(e, PLUMB_EINVAL, "give a bearer token or a user name for the push, not both");
	return rc;
}

static void creds_release(struct creds *c)
{
	wipe_free(c->token);
	wipe_free(c->password);
	free(c->user);
	memset(c, 0, sizeof *c);
}

/* The credentials http_ready read, kept for the requests of this process: the secret variables are removed from
 * the environment then, so the programs a `bench run` starts before it pushes never see them. */
static struct creds kept;
static bool have_kept;

static void creds_keep(struct creds *c)
{
	creds_release(&kept);
	kept = *c;
	memset(c, 0, sizeof *c);
	have_kept = true;
	unsetenv("PLUMB_PUSH_BEARER_TOKEN");
	unsetenv("PLUMB_PUSH_PASSWORD");
}

/* The credentials of a request: those kept, or read now (a copy either way; creds_release frees it). */
static enum plumb_err creds_get(struct creds *c, struct perr *e)
{
	if (!have_kept)
		return creds_read(c, e);
	memset(c, 0, sizeof *c);
	if ((kept.token && !(c->token = strdup(kept.token))) || (kept.user && !(c->user = strdup(kept.user))) ||
	    (kept.password && !(c->password = strdup(kept.password))))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

static double timeout_s(void)
{
	const char *t = getenv("PLUMB_PUSH_TIMEOUT");
	double s = t ? strtod(t, NULL) : 0;
	return s >= 0.1 && s <= 300 ? s : HTTP_DEFAULT_TIMEOUT_S;
}

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

/* The part of libcurl's API used here (stable since 7.x), found in libcurl.so.4 at first use. */
static struct {
	int state; /* 0 untried, 1 loaded, -1 absent */
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	const char *(*easy_strerror)(CURLcode code);
} api;

static bool load_curl(void)
{
	if (api.state)
		return api.state > 0;
	api.state = -1;
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	struct { void **slot; const char *name; } syms[] = {
		{ (void **)&api.global_init, "curl_global_init" }, { (void **)&api.easy_init, "curl_easy_init" },
		{ (void **)&api.easy_setopt, "curl_easy_setopt" }, { (void **)&api.easy_perform, "curl_easy_perform" },
		{ (void **)&api.easy_getinfo, "curl_easy_getinfo" }, { (void **)&api.easy_cleanup, "curl_easy_cleanup" },
		{ (void **)&api.slist_append, "curl_slist_append" }, { (void **)&api.slist_free_all, "curl_slist_free_all" },
		{ (void **)&api.easy_strerror, "curl_easy_strerror" },
	};
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
		if (!(*syms[i].slot = dlsym(h, syms[i].name)))
			return false;
	if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return false;
	api.state = 1;
	return true;
}

#define NO_CURL "pushing needs libcurl (libcurl.so.4; Debian: apt-get install libcurl4), which cannot be loaded"

enum plumb_err http_ready(struct perr *e)
{
	if (!load_curl())
		return perr_set(e, PLUMB_EUNSUPPORTED, NO_CURL);
	struct creds c;
	enum plumb_err rc = creds_read(&c, e);
	if (rc == PLUMB_OK)
		creds_keep(&c);
	creds_release(&c);
	return rc;
}

/* The start of the answer, kept for the message. */
struct answer {
	char *buf;
	size_t len;
};

static size_t on_answer(char *data, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t total = size * n;
	for (size_t i = 0; i < total && a->len < HTTP_ANSWER_MAX; i++) {
		unsigned char c = (unsigned char)data[i];
		a->buf[a->len++] = c == '\n' || c == '\t' ? ' ' : c < ' ' || c >= 0x7f ? '?' : (char)c;
	}
	a->buf[a->len] = '\0';
	return total;
}

/* One attempt; the status in *status (0 when no answer came), libcurl's reason in reason. */
static CURLcode attempt(const struct http_request *rq, const struct creds *cr, struct curl_slist *headers,
			struct http_response *resp, char reason[CURL_ERROR_SIZE])
{
	CURL *c = api.easy_init();
	if (!c)
		return CURLE_OUT_OF_MEMORY;
	long ms = (long)(timeout_s() * 1000);
	struct answer a = { resp->answer, 0 };
	resp->answer[0] = reason[0] = '\0';
	api.easy_setopt(c, CURLOPT_URL, rq->url);
	api.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https"); /* no file://, no other scheme, ever */
	api.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);          /* credentials never follow a redirect */
	api.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	api.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms);
	api.easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
	api.easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	api.easy_setopt(c, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
	api.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	api.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	api.easy_setopt(c, CURLOPT_USERAGENT, "plumb");
	api.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
	api.easy_setopt(c, CURLOPT_WRITEDATA, &a);
	api.easy_setopt(c, CURLOPT_ERRORBUFFER, reason);
	api.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	api.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	const char *ca = getenv("PLUMB_PUSH_CA_FILE");
	if (ca && *ca)
		api.easy_setopt(c, CURLOPT_CAINFO, ca);
	if (cr->token) {
		api.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		api.easy_setopt(c, CURLOPT_XOAUTH2_BEARER, cr->token);
	} else if (cr->user) {
		api.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		api.easy_setopt(c, CURLOPT_USERNAME, cr->user);
		api.easy_setopt(c, CURLOPT_PASSWORD, cr->password ? cr->password : "");
	}
	CURLcode rc = api.easy_perform(c);
	resp->status = 0;
	if (rc == CURLE_OK)
		api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	api.easy_cleanup(c);
	return rc;
}

static bool worth_retrying(CURLcode rc, long status)
{
	if (rc != CURLE_OK)
		return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_SEND_ERROR ||
		       rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_COULDNT_RESOLVE_HOST ||
		       rc == CURLE_PARTIAL_FILE;
	return status >= 500 || status == 429;
}

enum plumb_err http_send(const struct http_request *rq, struct http_response *resp, struct perr *e)
{
	struct http_response local;
	if (!resp)
		resp = &local;
	memset(resp, 0, sizeof *resp);
	enum plumb_err err = http_check_url(rq->url, e);
	if (err != PLUMB_OK)
		return err;
	if (!load_curl())
		return perr_set(e, PLUMB_EUNSUPPORTED, NO_CURL);
	struct creds cr;
	if ((err = creds_get(&cr, e)) != PLUMB_OK) {
		creds_release(&cr);
		return err;
	}
	char ctype[128];
	struct curl_slist *headers = api.slist_append(NULL, "Expect:"); /* no 100-continue round trip */
	if (headers && rq->content_type) {
		snprintf(ctype, sizeof ctype, "Content-Type: %s", rq->content_type);
		struct curl_slist *more = api.slist_append(headers, ctype);
		if (!more) {
			api.slist_free_all(headers);
			headers = NULL;
		} else {
			headers = more;
		}
	}
	for (const char *const *h = rq->headers; h && *h && headers; h++) {
		struct curl_slist *more = api.slist_append(headers, *h);
		if (!more)
			api.slist_free_all(headers);
		headers = more;
	}
	if (!headers) {
		creds_release(&cr);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	char reason[CURL_ERROR_SIZE];
	CURLcode rc = CURLE_OK;
	for (resp->attempts = 1;; resp->attempts++) {
		rc = attempt(rq, &cr, headers, resp, reason);
		bool ok = rc == CURLE_OK && resp->status >= 200 && resp->status < 300;
		if (ok || resp->attempts == 2 || !worth_retrying(rc, resp->status))
			break;
		struct timespec half = { 0, 500 * 1000 * 1000 };
		nanosleep(&half, NULL);
	}
	api.slist_free_all(headers);
	creds_release(&cr);
	const char *tries = resp->attempts == 2 ? " (tried twice)" : "";
	if (rc != CURLE_OK)
		return perr_set(e, PLUMB_EOUTPUT, "%s %s failed: %s%s", rq->method, rq->url,
				reason[0] ? reason : api.easy_strerror(rc), tries);
	if (resp->status < 200 || resp->status >= 300)
		return perr_set(e, PLUMB_EOUTPUT, "%s %s: the server answered HTTP %ld%s%s%s", rq->method, rq->url,
				resp->status, resp->answer[0] ? ": " : "", resp->answer, tries);
	return PLUMB_OK;
}

#else /* built without libcurl's headers: pushing is unsupported, everything else works */

#define NO_CURL_BUILD "this plumb was built without libcurl's headers (Debian: libcurl4-openssl-dev), so it cannot push"

enum plumb_err http_ready(struct perr *e)
{
	return perr_set(e, PLUMB_EUNSUPPORTED, NO_CURL_BUILD);
}

enum plumb_err http_send(const struct http_request *rq, struct http_response *resp, struct perr *e)
{
	(void)rq;
	if (resp)
		memset(resp, 0, sizeof *resp);
	return perr_set(e, PLUMB_EUNSUPPORTED, NO_CURL_BUILD);
}

#endif
