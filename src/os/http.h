/* http.h — one HTTP request with a body, for pushing figures to a metrics service (docs/bench.md "Prometheus").
 * libcurl does the work (TLS, proxies, timeouts); it is loaded when a request is first made (dlopen of
 * libcurl.so.4), so no other command pays for its thirty libraries at start-up and plumb runs where libcurl is
 * not installed. Credentials come from the environment or a file, never from argv, and never reach a message:
 *   PLUMB_PUSH_BEARER_TOKEN, PLUMB_PUSH_BEARER_TOKEN_FILE     Authorization: Bearer
 *   PLUMB_PUSH_USERNAME with PLUMB_PUSH_PASSWORD(_FILE)       basic authentication
 *   PLUMB_PUSH_CA_FILE                                        the CA bundle that checks the server (https)
 *   PLUMB_PUSH_TIMEOUT                                        seconds an attempt may take (default 10, 0.1-300)
 * Every request is bounded: an attempt ends after the timeout, and one failed by the network, a timeout or a
 * 5xx/429 answer is tried once more after half a second, so the worst case is twice the timeout and 0.5 s.
 * Library code: errors come back in a struct perr, nothing is printed. */
#ifndef PLUMB_OS_HTTP_H
#define PLUMB_OS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define HTTP_DEFAULT_TIMEOUT_S 10.0
#define HTTP_ANSWER_MAX 200 /* bytes of a refusing server's answer kept for the message */

struct http_request {
	const char *method;       /* "PUT", "POST", "DELETE" */
	const char *url;          /* checked by http_check_url */
	const char *content_type; /* NULL: none */
	const char *body;         /* len bytes, not copied */
	size_t len;
	const char *const *headers; /* more "Name: value" lines, NULL-terminated; NULL for none */
};

struct http_response {
	long status;                     /* the last attempt's HTTP status, 0 when none came */
	int attempts;                    /* 1 or 2 */
	char answer[HTTP_ANSWER_MAX + 1]; /* the start of the last answer's body, control characters made '?' */
};

/* PLUMB_OK when url is http:// or https:// with a host and no user-info (credentials belong in the environment:
 * a URL is an argument, and arguments are visible to every user of the machine); PLUMB_EINVAL saying why. */
enum plumb_err http_check_url(const char *url, struct perr *e);
/* PLUMB_OK when libcurl can be loaded and the credentials of the environment can be read (a missing or unreadable
 * token file is found before any work is done); PLUMB_EUNSUPPORTED without libcurl, the file's code otherwise. The
 * credentials read are kept for this process's requests and PLUMB_PUSH_BEARER_TOKEN and PLUMB_PUSH_PASSWORD are
 * removed from its environment, so no program it starts afterwards (a bench case) inherits them. */
enum plumb_err http_ready(struct perr *e);
/* Sends rq. PLUMB_OK on a 2xx answer; PLUMB_EOUTPUT when the server refused it or could not be reached in time
 * (e says which, with the server's answer or libcurl's reason and the attempts made), PLUMB_EUNSUPPORTED
 * without libcurl, PLUMB_EINVAL for a bad URL, the credentials file's code when it cannot be read. *resp (when not
 * NULL) gets the status and the answer. */
enum plumb_err http_send(const struct http_request *rq, struct http_response *resp, struct perr *e);

#endif
