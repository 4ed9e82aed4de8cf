/* prom_rw.h — Prometheus' remote-write protocol (version 0.1.0) for setups without a Pushgateway: the series of an
 * exposition text (as os/prom.h writes it) as a WriteRequest protobuf, snappy-compressed, POSTed to a receiver
 * (Prometheus with --web.enable-remote-write-receiver: http://HOST:9090/api/v1/write, or any compatible store).
 * The protobuf is written here (four small messages); libsnappy is loaded when a request is first made (dlopen
 * of libsnappy.so.1), as libcurl is (os/http.h). Every sample gets the time of the push. */
#ifndef PLUMB_OS_PROM_RW_H
#define PLUMB_OS_PROM_RW_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "os/prom.h"
#include "base/sbuf.h"

/* The WriteRequest of text's samples, each with the labels of `add` as well (a job: what a gateway's grouping
 * key would have added), labels sorted by name, at time t_ms, uncompressed, appended to out. PLUMB_EFORMAT when
 * text is not the format prom.h writes, PLUMB_ENOMEM. */
enum plumb_err prom_rw_encode(const struct sbuf *text, const struct prom_label *add, size_t nadd, int64_t t_ms,
			      struct sbuf *out, struct perr *e);
/* Encodes, compresses and POSTs to url (the receiver's endpoint, whole). PLUMB_EUNSUPPORTED without libsnappy,
 * os/http.h's codes otherwise. */
enum plumb_err prom_rw_push(const char *url, const struct sbuf *text, const struct prom_label *add, size_t nadd,
			    struct perr *e);
/* PLUMB_OK when libsnappy can be loaded (checked before a long run); PLUMB_EUNSUPPORTED otherwise. */
enum plumb_err prom_rw_ready(struct perr *e);

#endif
