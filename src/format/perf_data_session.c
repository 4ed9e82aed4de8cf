/* perf_data_session.c — the records of a perf.data stream made into the profile (format/perf_data.h): the maps of
 * every process from MMAP/MMAP2/FORK/COMM, the names of threads, each sample's stack (the callchain as recorded,
 * the user part unwound from the registers and stack copy by unwind/ when the file has them), each distinct
 * address symbolized once (symbol/). Binaries are found by build ID; memory grows with distinct addresses and
 * stacks, never with the number of records. */
#include "format/perf_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "symbol/maps.h"
#include "symbol/symbol.h"
#include "unwind/unwind.h"

#define PD_DEPTH 1024              /* frames kept of each part (kernel, user) of a stack */
#define PD_PID_KEY(pid) ((pid_t)(((uint32_t)(pid) & 0x3fffffffu) | 0x40000000u))
#define BUILD_ID_MAX 20

/* A file the recording names, its build ID when known, and the file plumb reads for it. */
struct pd_session {
	struct profile *out;              /* borrowed */
	const struct fmt_read_opts *opts; /* borrowed */
	struct profile *raw;              /* raw frames (symbol/symbol.h conventions) */
	struct maps *maps;
	struct unwinder *unwinder;        /* made at the first sample with user registers */
	struct sym_resolver *resolver;
	str_id s_unknown, s_kernel;
	/* raw frame id -> its resolved frames in out: res_ids[res_off[id] .. + res_len[id]) */
	uint32_t *res_off;
	uint8_t *res_len;
	size_t res_cap;
	uint32_t *res_ids;
	size_t res_nids, res_ids_cap;
	struct hmap comm;                 /* tid -> str_id in raw of its name */
	struct hmap threads;              /* pid << 32 | tid -> thread id in out */
	struct pd_files *files;
	uint64_t *ips;                    /* 2 * PD_DEPTH */
	uint32_t *frames;                 /* the stack built, outermost first */
	size_t frames_cap;
	uint64_t *aligned;                /* a copy of a record that is not 8-byte aligned */
	size_t aligned_cap;
	uint64_t samples, other_events, lost, throttled, bad_samples;
	uint64_t first_time, last_time;
	bool have_time, dwarf, fp;
};
struct pd_session *fmt_pd_session_new(struct profile *out, const struct fmt_read_opts *opts)
{
	struct pd_session *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->out = out;
	s->opts = opts;
	s->raw = profile_new();
	s->maps = maps_new();
	struct sym_opts so = { 0 };
	s->resolver = sym_resolver_new(&so);
	s->ips = malloc(2 * PD_DEPTH * sizeof *s->ips);
	s->frames_cap = 2 * PD_DEPTH * SYM_MAX_FRAMES;
	s->frames = malloc(s->frames_cap * sizeof *s->frames);
	s->files = fmt_pd_files_new(opts);
	if (!s->raw || !s->maps || !s->resolver || !s->ips || !s->frames || !s->files) {
		fmt_pd_session_free(s);
		return NULL;
	}
	s->s_unknown = profile_intern_cstr(s->raw, "[unknown]");
	s->s_kernel = profile_intern_cstr(s->raw, "[kernel.kallsyms]");
	return s;
}

void fmt_pd_session_free(struct pd_session *s)
{
	if (!s)
		return;
	unwinder_free(s->unwinder);
	maps_free(s->maps);
	sym_resolver_free(s->resolver);
	profile_free(s->raw);
	fmt_pd_files_free(s->files);
	hmap_release(&s->comm);
	hmap_release(&s->threads);
	free(s->res_off);
	free(s->res_len);
	free(s->res_ids);
	free(s->ips);
	free(s->frames);
	free(s->aligned);
	free(s);
}
/* A kernel address as a raw frame: left for the symbolizer (the running kernel's names) when the recorded kernel
 * is the running one, else named here from perf's copy of the recorded kernel's symbols, or said unnamed. */
static uint32_t kernel_raw_frame(struct pd_session *s, uint64_t addr)
{
	struct frame f = { 0 };
	f.kind = FRAME_KERNEL;
	f.module = s->s_kernel;
	f.addr = addr;
	bool running;
	const char *name = fmt_pd_files_kernel_name(s->files, addr, &running);
	if (!running) {
		f.func = profile_intern_cstr(s->raw, name ? name : "[unknown]"); /* as the symbolizer names them */
		f.module = 0;
		f.addr = name ? addr : 0;
	}
	return profile_frame(s->raw, &f);
}

/* --- task records ------------------------------------------------------------------------------------------------ */

/* A NUL-terminated string at p within the record's end (cut there when it has no NUL), copied into buf. */
static const char *rec_string(const char *p, const char *end, char *buf, size_t n)
{
	size_t len = p < end ? strnlen(p, (size_t)(end - p)) : 0;
	if (len >= n)
		len = n - 1;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}

static void on_mmap(struct pd_session *s, const char *rec, size_t len, bool v2)
{
	size_t fixed = v2 ? 8 + 8 + 24 + 24 + 8 : 8 + 8 + 24;
	if (len < fixed)
		return;
	int32_t pid = (int32_t)rd32(rec + 8);
	uint64_t addr = rd64(rec + 16), mlen = rd64(rec + 24), pgoff = rd64(rec + 32);
	bool exec = true;
	if (v2) {
		uint32_t prot = rd32(rec + 64);
		exec = (prot & 4) != 0; /* PROT_EXEC */
		if (rec_misc(rec) & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			uint8_t idlen = (uint8_t)rec[40];
			char name[4096];
			rec_string(rec + fixed, rec + len, name, sizeof name);
			if (idlen && idlen <= BUILD_ID_MAX && name[0] == '/')
				fmt_pd_files_build_id(s->files, name, (const uint8_t *)rec + 44, idlen);
		}
	} else {
		exec = !(rec_misc(rec) & PERF_RECORD_MISC_MMAP_DATA);
	}
	char name[4096];
	rec_string(rec + fixed, rec + len, name, sizeof name);
	if (pid == -1 || (rec_misc(rec) & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		if (strcmp(name, "[kernel.kallsyms]_text") == 0) /* perf puts _text's address in pgoff */
			fmt_pd_files_kernel_text(s->files, pgoff);
		return; /* the kernel and its modules: named from kallsyms */
	}
	if (!exec || !name[0] || mlen == 0)
		return;
	maps_add(s->maps, PD_PID_KEY(pid), addr, mlen, pgoff, fmt_pd_files_use(s->files, name), true);
}

static void on_comm(struct pd_session *s, const char *rec, size_t len)
{
	if (len < 16)
		return;
	uint32_t pid = rd32(rec + 8), tid = rd32(rec + 12);
	char name[256];
	rec_string(rec + 16, rec + len, name, sizeof name);
	str_id id = profile_intern_cstr(s->raw, name);
	if (id != PROFILE_NOMEM)
		hmap_put(&s->comm, tid, id);
	uint32_t thread;
	if (hmap_get(&s->threads, ((uint64_t)pid << 32) | tid, &thread)) { /* renamed (exec, prctl): the last name */
		profile_thread(s->out, pid, tid, name);
		if (pid == tid)
			profile_thread_set_process(s->out, thread, name, strlen(name));
	}
	if (rec_misc(rec) & PERF_RECORD_MISC_COMM_EXEC)
		maps_forget(s->maps, PD_PID_KEY(pid)); /* the new image's mappings follow */
}

static void on_fork(struct pd_session *s, const char *rec, size_t len)
{
	if (len < 32)
		return;
	uint32_t pid = rd32(rec + 8), ppid = rd32(rec + 12), tid = rd32(rec + 16), ptid = rd32(rec + 20);
	uint32_t name;
	if (hmap_get(&s->comm, ptid, &name))
		hmap_put(&s->comm, tid, name);
	if (pid != ppid)
		maps_fork(s->maps, PD_PID_KEY(ppid), PD_PID_KEY(pid));
}

/* --- samples ---------------------------------------------------------------------------------------------------- */

struct pd_sample {
	uint64_t ip, time, period;
	uint32_t pid, tid;
	bool has_period;
	uint64_t nr;
	const uint64_t *chain;
	uint64_t abi;
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t stack_dyn;
};

/* Reads the fields of a PERF_RECORD_SAMPLE as attr lays them out (linux/perf_event.h), up to the user stack;
 * false when the record is shorter than its fields say. rec is 8-byte aligned. */
static bool sample_parse(const struct perf_event_attr *attr, const char *rec, size_t len, struct pd_sample *sv)
{
	uint64_t t = attr->sample_type;
	const uint64_t *p = (const uint64_t *)(const void *)(rec + 8), *end = p + (len - 8) / 8;
	memset(sv, 0, sizeof *sv);
#define NEED(n) do { if ((size_t)(end - p) < (size_t)(n)) return false; } while (0)
	if (t & PERF_SAMPLE_IDENTIFIER) { NEED(1); p++; }
	if (t & PERF_SAMPLE_IP) { NEED(1); sv->ip = *p++; }
	if (t & PERF_SAMPLE_TID) { NEED(1); sv->pid = (uint32_t)*p; sv->tid = (uint32_t)(*p >> 32); p++; }
	if (t & PERF_SAMPLE_TIME) { NEED(1); sv->time = *p++; }
	if (t & PERF_SAMPLE_ADDR) { NEED(1); p++; }
	if (t & PERF_SAMPLE_ID) { NEED(1); p++; }
	if (t & PERF_SAMPLE_STREAM_ID) { NEED(1); p++; }
	if (t & PERF_SAMPLE_CPU) { NEED(1); p++; }
	if (t & PERF_SAMPLE_PERIOD) { NEED(1); sv->period = *p++; sv->has_period = true; }
	if (t & PERF_SAMPLE_READ) {
		uint64_t rf = attr->read_format;
		size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		size_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
		if (rf & PERF_FORMAT_GROUP) {
			NEED(1);
			uint64_t n = *p++;
			if (n > (uint64_t)(end - p))
				return false;
			NEED(times + (size_t)n * per);
			p += times + (size_t)n * per;
		} else {
			NEED(times + per);
			p += times + per;
		}
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		NEED(1);
		sv->nr = *p++;
		if (sv->nr > (uint64_t)(end - p))
			return false;
		sv->chain = p;
		p += sv->nr;
	}
	if (t & PERF_SAMPLE_RAW) {
		NEED(1);
		uint32_t size = (uint32_t)*p; /* u32 size, then size bytes, the whole padded to 8 */
		size_t words = ((size_t)size + 4 + 7) / 8;
		NEED(words);
		p += words;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		NEED(1);
		uint64_t n = *p++;
		if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) { NEED(1); p++; }
		if (n > (uint64_t)(end - p) / 3)
			return false;
		p += n * 3;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		NEED(1);
		sv->abi = *p++;
		if (sv->abi) {
			size_t nregs = (size_t)__builtin_popcountll(attr->sample_regs_user);
			NEED(nregs);
			sv->regs = p;
			p += nregs;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		NEED(1);
		uint64_t size = *p++;
		if (size) {
			if (size > (uint64_t)(end - p) * 8)
				return false;
			sv->stack = (const uint8_t *)p;
			p += (size + 7) / 8;
			NEED(1);
			sv->stack_dyn = *p++;
			if (sv->stack_dyn > size)
				sv->stack_dyn = size;
		}
	}
#undef NEED
	return true;
}

/* The registers of a sample in unwind/'s order, from the file's register mask. */
static void sample_regs(const struct perf_event_attr *attr, const struct pd_sample *sv, struct unwind_regs *out)
{
	memset(out, 0, sizeof *out);
	size_t k = 0;
	for (int r = 0; r < 64; r++) {
		if (!(attr->sample_regs_user & (1ULL << r)))
			continue;
		if (r < UREG_COUNT)
			out->r[r] = sv->regs[k];
		k++;
	}
}

/* The frames of out that raw frame id resolves to, appended to s->frames at *n (outermost first). */
static bool resolve(struct pd_session *s, uint32_t id, size_t *n)
{
	if (id >= s->res_cap) {
		size_t nc = grow_cap((size_t)id + 1, s->res_cap);
		uint32_t *no = realloc_array(s->res_off, nc, sizeof *no);
		if (!no)
			return false;
		s->res_off = no;
		uint8_t *nl = realloc_array(s->res_len, nc, 1);
		if (!nl)
			return false;
		s->res_len = nl;
		memset(s->res_len + s->res_cap, 0, nc - s->res_cap);
		s->res_cap = nc;
	}
	if (!s->res_len[id]) {
		uint32_t ids[SYM_MAX_FRAMES];
		size_t got = sym_resolver_frame(s->resolver, s->raw, id, s->out, ids, SYM_MAX_FRAMES);
		if (!got || got > SYM_MAX_FRAMES)
			return false;
		for (size_t i = 0; i < got; i++)
			if (ids[i] == PROFILE_NOMEM)
				return false;
		if (s->res_nids + got > s->res_ids_cap) {
			size_t nc = grow_cap(s->res_nids + got, s->res_ids_cap);
			uint32_t *ni = realloc_array(s->res_ids, nc, sizeof *ni);
			if (!ni)
				return false;
			s->res_ids = ni;
			s->res_ids_cap = nc;
		}
		memcpy(s->res_ids + s->res_nids, ids, got * sizeof *ids);
		s->res_off[id] = (uint32_t)s->res_nids;
		s->res_nids += got;
		s->res_len[id] = (uint8_t)got;
	}
	if (*n + s->res_len[id] > s->frames_cap)
		return true; /* deeper than kept: the outermost frames stay */
	memcpy(s->frames + *n, s->res_ids + s->res_off[id], s->res_len[id] * sizeof *s->frames);
	*n += s->res_len[id];
	return true;
}

static uint32_t thread_of(struct pd_session *s, uint32_t pid, uint32_t tid)
{
	uint64_t key = ((uint64_t)pid << 32) | tid;
	uint32_t id, name;
	if (hmap_get(&s->threads, key, &id))
		return id;
	const char *comm = hmap_get(&s->comm, tid, &name) ? profile_str(s->raw, name) : "";
	id = profile_thread(s->out, pid, tid, comm);
	if (id == PROFILE_NOMEM)
		return id;
	if (hmap_get(&s->comm, pid, &name)) {
		const char *proc = profile_str(s->raw, name);
		profile_thread_set_process(s->out, id, proc, strlen(proc));
	}
	return hmap_put(&s->threads, key, id) ? id : PROFILE_NOMEM;
}

static enum plumb_err on_sample(struct pd_session *s, const struct pd_attr *a, const char *rec, size_t len,
				struct perr *e)
{
	struct pd_sample sv;
	const struct perf_event_attr *attr = &a->attr;
	if (!sample_parse(attr, rec, len, &sv)) {
		s->bad_samples++;
		return PLUMB_OK;
	}
	struct unwind_regs regs;
	struct unwind_sample us = { 0 };
	us.pid = PD_PID_KEY(sv.pid);
	us.ip = sv.ip;
	us.chain = sv.chain;
	us.nr = sv.nr;
	bool copies = attr->sample_type & PERF_SAMPLE_STACK_USER; /* --call-graph dwarf: plumb unwinds */
	bool dwarf = copies && sv.regs && sv.abi == PERF_SAMPLE_REGS_ABI_64;
	if (copies && !s->unwinder && !(s->unwinder = unwinder_new(s->maps)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (dwarf) {
		sample_regs(attr, &sv, &regs);
		us.regs = &regs;
		us.stack = sv.stack;
		us.stack_len = sv.stack ? sv.stack_dyn : 0;
		s->dwarf = true;
	} else {
		s->fp = true;
	}
	uint64_t *kern = s->ips, *user = s->ips + PD_DEPTH;
	size_t nk, nu;
	unwind_sample_stack(copies ? s->unwinder : NULL, &us, kern, &nk, user, &nu, PD_DEPTH);
	if (!sv.chain && !nu && !nk && sv.ip) { /* no callchain at all: the sampled IP alone */
		if (sv.ip >= 0xffff800000000000ULL)
			kern[nk++] = sv.ip;
		else
			user[nu++] = sv.ip;
	}
	size_t n = 0;
	for (size_t i = nu; i-- > 0;) {
		const struct map_entry *m = maps_find(s->maps, PD_PID_KEY(sv.pid), user[i]);
		uint32_t f = maps_raw_frame(s->raw, m, user[i], i > 0, s->s_unknown);
		if (f == PROFILE_NOMEM || !resolve(s, f, &n))
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	for (size_t i = nk; i-- > 0;) {
		uint32_t f = kernel_raw_frame(s, kern[i]);
		if (f == PROFILE_NOMEM || !resolve(s, f, &n))
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	uint32_t stack = profile_stack_from(s->out, s->frames, n);
	uint32_t thread = thread_of(s, sv.pid, sv.tid);
	if (stack == PROFILE_NOMEM || thread == PROFILE_NOMEM)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	uint64_t weight = sv.has_period ? sv.period : (attr->freq ? 1 : attr->sample_period);
	if (!weight)
		weight = 1;
	if (!profile_add_weighted(s->out, stack, thread, sv.time, weight, 1))
		return profile_overflowed(s->out)
			       ? perr_set(e, PLUMB_EFORMAT, "the samples' total weight passes 2^63 - 1")
			       : perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (attr->sample_type & PERF_SAMPLE_TIME) {
		if (!s->have_time || sv.time < s->first_time)
			s->first_time = sv.time;
		if (sv.time > s->last_time)
			s->last_time = sv.time;
		s->have_time = true;
	}
	s->samples++;
	return PLUMB_OK;
}

bool fmt_pd_record_time(const struct perf_event_attr *attr, const char *rec, size_t len, uint64_t *time)
{
	uint64_t t = attr->sample_type;
	if (!(t & PERF_SAMPLE_TIME) || len < 16)
		return false;
	if (rec_type(rec) == PERF_RECORD_SAMPLE) {
		size_t off = 8 + 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID));
		if (off + 8 > len)
			return false;
		*time = rd64(rec + off);
		return true;
	}
	if (!attr->sample_id_all || rec_type(rec) >= PERF_RECORD_USER_TYPE_START)
		return false;
	/* the sample_id_all trailer: { pid, tid } { time } { id } { stream_id } { cpu, res } { identifier } */
	size_t after = 8 * (!!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
			    !!(t & PERF_SAMPLE_IDENTIFIER));
	if (after + 16 > len)
		return false;
	*time = rd64(rec + len - after - 8);
	return true;
}

enum plumb_err fmt_pd_session_record(struct pd_session *s, const struct pd_attr *attr, const char *rec, size_t len,
				     struct perr *e)
{
	if ((uintptr_t)rec & 7) { /* fields are read in place as 64-bit words */
		size_t words = (len + 7) / 8;
		if (words > s->aligned_cap) {
			uint64_t *na = realloc_array(s->aligned, words, 8);
			if (!na)
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			s->aligned = na;
			s->aligned_cap = words;
		}
		memcpy(s->aligned, rec, len);
		rec = (const char *)s->aligned;
	}
	switch (rec_type(rec)) {
	case PERF_RECORD_SAMPLE:
		return attr ? on_sample(s, attr, rec, len, e) : PLUMB_OK;
	case PERF_RECORD_MMAP:
		on_mmap(s, rec, len, false);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap(s, rec, len, true);
		break;
	case PERF_RECORD_COMM:
		on_comm(s, rec, len);
		break;
	case PERF_RECORD_FORK:
		on_fork(s, rec, len);
		break;
	case PERF_RECORD_LOST:
		if (len >= 24)
			s->lost += rd64(rec + 16);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len >= 16)
			s->lost += rd64(rec + 8);
		break;
	case PERF_RECORD_THROTTLE:
		s->throttled++;
		break;
	default: /* EXIT keeps the maps (samples of the exiting task may follow), the rest says nothing of stacks */
		break;
	}
	return PLUMB_OK;
}

void fmt_pd_session_build_id(struct pd_session *s, const char *path, const uint8_t *id, size_t len)
{
	fmt_pd_files_build_id(s->files, path, id, len);
}

void fmt_pd_session_other_event(struct pd_session *s)
{
	s->other_events++;
}

/* What a weight of this event counts: time for the clock events, else the event itself. */
static void event_unit(const struct pd_attr *a, char *out, size_t n)
{
	const struct perf_event_attr *attr = &a->attr;
	if (!(attr->sample_type & PERF_SAMPLE_PERIOD) && attr->freq)
		snprintf(out, n, "samples");
	else if (attr->type == PERF_TYPE_SOFTWARE &&
		 (attr->config == PERF_COUNT_SW_CPU_CLOCK || attr->config == PERF_COUNT_SW_TASK_CLOCK))
		snprintf(out, n, "nanoseconds");
	else
		snprintf(out, n, "%.*s", (int)strcspn(a->name, ":"), a->name); /* "cycles" for "cycles:P" */
}

enum plumb_err fmt_pd_session_finish(struct pd_session *s, const struct pd_attr *attr, size_t nattrs,
				     const char *cmdline, struct perr *e)
{
	struct profile_meta *m = profile_meta(s->out);
	m->backend = profile_intern_cstr(s->out, "perf.data");
	m->unwinder = profile_intern_cstr(s->out, s->dwarf ? "dwarf" : "fp");
	m->ticks = s->samples;
	m->lost = s->lost;
	if (cmdline && cmdline[0])
		m->command = profile_intern_cstr(s->out, cmdline);
	if (s->have_time) {
		m->clock_origin_ns = s->first_time;
		m->duration_s = (double)(s->last_time - s->first_time) / 1e9;
	}
	if (attr) {
		char unit[80];
		event_unit(attr, unit, sizeof unit);
		m->weight_unit = profile_intern_cstr(s->out, unit);
		m->mode = profile_intern_cstr(s->out, attr->name);
		if (strcmp(unit, "nanoseconds") == 0 && s->samples)
			m->interval_ns = (profile_total_weight(s->out) + s->samples / 2) / s->samples;
		if (nattrs > 1)
			fmt_pd_warn(s->opts, "the recording has %zu events: read %s (%llu samples, skipped %llu of the "
					     "others); choose another with --sample-index", nattrs, attr->name,
				    (unsigned long long)s->samples, (unsigned long long)s->other_events);
	}
	if (s->bad_samples)
		fmt_pd_warn(s->opts, "skipped %llu samples shorter than their fields", (unsigned long long)s->bad_samples);
	if (s->lost)
		fmt_pd_warn(s->opts, "perf lost %llu samples while recording", (unsigned long long)s->lost);
	if (s->throttled)
		fmt_pd_warn(s->opts, "the kernel throttled sampling %llu times while recording (no samples while it was)",
			    (unsigned long long)s->throttled);
	if (!maps_to_profile(s->maps, s->out, 0)) /* the recording's mappings, for re-symbolizing viewers */
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	fmt_pd_files_finish(s->files);
	if (m->weight_unit == PROFILE_NOMEM || m->backend == PROFILE_NOMEM || m->unwinder == PROFILE_NOMEM ||
	    m->command == PROFILE_NOMEM || m->mode == PROFILE_NOMEM)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}
