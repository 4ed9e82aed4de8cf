/* perf_script.h — the state of one `perf script` reader (format/perf_script_parse.c reads lines into it,
 * format/perf_script_frames.c names the frames of a stack line the way stackcollapse-perf's options say, and
 * format/perf_script.c feeds it the blocks of a stream). Internal to format/.
 *
 * Ownership: ps_init() starts a reader on a profile it fills but does not own; ps_release() frees the rest. Cache
 * keys and the event name are copied into key blocks the reader owns: nothing points into a block of text once
 * the next block is read. */
#ifndef PLUMB_FORMAT_PERF_SCRIPT_H
#define PLUMB_FORMAT_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"
#include "base/u32vec.h"
#include "format/format.h"
#include "format/textcache.h"
#include "profile/profile.h"

#define WARN_MAX 400

/* Copies of cache keys, packed in blocks that never move. */
struct key_block {
	struct key_block *next;
	size_t used;
	char data[65536];
};

/* What the event lines of one file hold (perf script -F): taken from the first one. */
struct ps_layout {
	bool known;
	bool comm;       /* a process name first */
	bool pid;        /* then pid/tid, pid or tid */
	bool headerless; /* no header fields at all: an event is its stack lines (-F ip,sym) */
};

/* The fields of one event line (pointers into the line; NULL or 0 when the field is not there). */
struct ps_fields {
	const char *comm, *pid, *tid, *time, *period, *ev, *rest;
	size_t comm_len, pid_len, tid_len, time_len, period_len, ev_len;
	size_t hdr_len;  /* the line's start to the end of the thread fields: the header cache's key */
};

struct header {
	uint32_t root_frame;  /* PROFILE_NOMEM: no root frame (the lines have no comm) */
	uint32_t thread;
	uint32_t idx;      /* index in ps.hdrs / ps.last */
};

/* The last stack seen for one header (thread): consecutive samples of a thread share most outer frames, so
 * the walk down the prefix tree resumes where the new stack leaves the old one. */
struct last_stack {
	uint32_t *prev, *nodes;   /* outermost first; nodes[i] is the tree node after prev[0..i] */
	uint32_t *frames;         /* scratch: the new stack's frames */
	size_t n, cap;
};

struct ps {
	struct profile *p;
	const struct fmt_read_opts *o;
	struct perr *e;
	bool oom;
	bool capped;             /* a stack passed FMT_MAX_FRAMES (the message is in e) */
	/* caches */
	struct tcache lines;     /* stack-line text -> index into groups */
	struct tcache headers;   /* "comm pid/tid" -> index into hdrs */
	struct u32vec groups;    /* [n, frame...] records */
	struct header *hdrs;
	struct last_stack *last;
	size_t nhdrs, cap_hdrs;
	/* the event being read */
	bool in_event, skip;
	bool java;               /* the process name starts with "java" (tidy Java signatures) */
	struct header cur;
	uint64_t period;
	bool have_period;        /* the event line carried a period */
	uint64_t time_ns;
	struct u32vec stack;     /* frames innermost first (each line's group pushed reversed) */
	/* the event filter: the first event type seen */
	const char *event;
	size_t event_len;
	bool have_event;
	uint64_t filtered;       /* events of other types skipped */
	uint64_t samples, with_period; /* events kept; of those, how many carried a period */
	struct ps_layout layout;
	bool layout_confirmed;   /* an event read with the layout gave a sample: it holds for the rest */
	uint64_t events;         /* event lines of the kept type */
	uint64_t sym_lines, nosym_lines; /* stack lines with a function name, and with an address (or module) only */
	bool warned_event, warned_stack;
	char msg_event[WARN_MAX], msg_stack[WARN_MAX];
	uint64_t first_time;
	bool have_time;
	struct sbuf scratch, scratch2;
	struct key_block *keys;
};

static inline bool is_ws(char c)
{
	return c == ' ' || (unsigned char)(c - '\t') <= '\r' - '\t'; /* \t \n \v \f \r */
}

static inline bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Starts a reader on p (which may be NULL until the caller sets s->p) with the read options. */
void ps_init(struct ps *s, struct profile *p, const struct fmt_read_opts *opts, struct perr *e);
/* Reads the lines of buf..end (whole lines; an event may go on in the next block); s->oom tells whether memory
 * ran out. ps_end() ends the last event at the end of the text. */
void ps_run(struct ps *s, const char *buf, const char *end);
void ps_end(struct ps *s);
void ps_release(struct ps *s);

/* Builds the frames of one stack line (several when "a->b" marks inlining) as the collapse options say and
 * appends a group record [count, frame...] to s->groups; returns the record's index (s->oom on failure).
 * pc is the address, raw the symbol text without its offset, mod the module without its parentheses. */
uint32_t ps_line_frames(struct ps *s, const char *pc, size_t pc_len, const char *raw, size_t raw_len,
			const char *mod, size_t mod_len);

#endif
