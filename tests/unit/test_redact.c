/* test_redact.c — a corpus of secret shapes that must never survive redaction (full-length and short tokens,
 * the short keys of process and thread names, a secret in a directory name), ordinary text that must come out
 * unchanged, and labels redacted part by part: a symbol kept, only the secret of a path replaced, marks kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/redact.h"
#include "profile/label.h"
#include "profile/profile.h"

/* Each case: the input, and the secret part that must not appear in the output. */
static const struct {
	const char *input;
	const char *secret;
} secrets[] = {
	{ "fetch (https://alice:hunter2pass@example.com/repo.git)", "hunter2pass" },
	{ "GET https://api.example.com/v1/items?token=abc123def456&page=2", "abc123def456" },
	{ "https://example.com/cb#access_token=zzTopSecretFrag", "zzTopSecretFrag" },
	{ "connect key=Kx9sd8f7a6s5d4f3", "Kx9sd8f7a6s5d4f3" },
	{ "login secret=s3cr3t-value-here", "s3cr3t-value-here" },
	{ "db password=CorrectHorseBattery", "CorrectHorseBattery" },
	{ "s3 url sig=AbCdEf0123456789xyz", "AbCdEf0123456789xyz" },
	{ "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payloadpart.signaturepart", "payloadpart" },
	{ "header Bearer 0123456789abcdefghij", "0123456789abcdefghij" },
	{ "aws AKIAIOSFODNN7EXAMPLE in env", "AKIAIOSFODNN7EXAMPLE" },
	{ "gh ghp_1234567890abcdefghijABCDEFGHIJ123456 token", "ghp_1234567890abcdefghijABCDEFGHIJ123456" },
	{ "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789" },
	{ "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012" },
	{ "openai sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKlMnOpQrStUvWxYz" },
	{ "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	  "dozjgNryP4J3jVmNHl0w5N" },
	{ "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98s\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7bq98s" },
	{ "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
	  "b3BlbnNzaC1rZXktdjEAAAAA" },
	{ "postgres://app:dbpassw0rd@db.internal:5432/prod", "dbpassw0rd" },
	{ "api_key=AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdefghijklmnopqrst" },
	{ "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc" },
	{ "upload https://evil.example/collect?d=c2Vuc2l0aXZlLWRhdGE", "c2Vuc2l0aXZlLWRhdGE" },
	{ "X-Amz-Signature=f00dfeedbeef0123456789abcdef", "f00dfeedbeef0123456789abcdef" },
	{ "client_secret=QwErTy123456", "QwErTy123456" },
	/* the short keys and short tokens that fit a 15-byte process or thread name (docs/design.md §3.6) */
	{ "pw=hunter2COMM", "hunter2COMM" },
	{ "tok=ghp_THRD01", "ghp_THRD01" },
	{ "pwd=s3cretWord", "s3cretWord" },
	{ "passwd=opensesame1", "opensesame1" },
	{ "DB_PW=xyz789abc", "xyz789abc" },
	{ "api-tok=zz9Top", "zz9Top" },
	{ "db_pass=letMeIn42", "letMeIn42" },
	{ "ghp_ab12", "ghp_ab12" },
	{ "worker ghs_Q1 up", "ghs_Q1" },
	{ "xoxb-9876", "xoxb-9876" },
	{ "AKIA2Z7Q", "AKIA2Z7Q" },
	{ "pat github_pat_11AB", "github_pat_11AB" },
	{ "glpat-xY9", "glpat-xY9" },
	{ "stripe sk_live_4eC3", "4eC3" },
	/* a directory named after a secret, in a path */
	{ "/srv/app/token=ghp_DIR123/src/main.c", "ghp_DIR123" },
	/* issue 27: the shapes a stage name, a bench sample name, a tag and a command line carried verbatim */
	{ "stage ghp_STAGE0123456789abcdefABCDEF0123", "ghp_STAGE0123456789abcdefABCDEF0123" },
	{ "load AKIASTAGE7EXAMPLE42", "AKIASTAGE7EXAMPLE42" },
	{ "post xoxb-1111-2222-StageSlackTok", "xoxb-1111-2222-StageSlackTok" },
	{ "call sk-proj-StageOpenAiKey0123456789abcdef", "StageOpenAiKey0123456789abcdef" },
	{ "auth eyJhbGciOiJIUzI1NiJ9.eyJzdGFnZSI6MX0.StageJwtSignature0", "StageJwtSignature0" },
	{ "fetch https://u:StagePassw0rd@h.example/x", "StagePassw0rd" },
	{ "step token=StageTokenValue9", "StageTokenValue9" },
	{ "login --password=StagePwValue7", "StagePwValue7" },
	{ "ghp_SampleName0123456789abcdef0123456789", "ghp_SampleName0123456789abcdef0123456789" },
	{ "/opt/token=CANARY1234/api_key=XKEY5678/sectarget --password=PwCanary42", "CANARY1234" },
	{ "/opt/token=CANARY1234/api_key=XKEY5678/sectarget --password=PwCanary42", "XKEY5678" },
	{ "/opt/token=CANARY1234/api_key=XKEY5678/sectarget --password=PwCanary42", "PwCanary42" },
};

static const char *const ordinary[] = {
	"burn (targets/split.c:42)",
	"std::vector<int, std::allocator<int> >::push_back(int const&) (bits/stl_vector.h:1189)",
	"core::ptr::drop_in_place<alloc::vec::Vec<u8>> (src/ptr.rs:497)",
	"[unknown] (libfoo.so.1)",
	"schedule_[k]",
	"LazyCompile:*main /tmp/x.js_[j]",
	"operator=(Foo const&) (foo/bar.cc:10)",
	"main (src/main.c:12)",
	"__libc_start_call_main (nptl/libc_start_call_main.h:58)",
	"Bearer",
	"tokenize (lexer/token.c:88)",
	"get_key (hash/table.c:5)",
	"std::map<std::string, int>::operator[] (bits/stl_map.h:511)",
	"python3.11 (pid 1234)",
	"ask (sk-short)",
	/* words that end like the short keys, and prefixes that are also words, are not secrets */
	"stock=5 katok=1 bypass=2 npw=3",
	"ASIAN markets (geo/asia.c:3)",
	"AKIA alone, ghp_ alone, xoxb- alone",
	"TOKYO=1",
};

static char *redact(const char *s)
{
	char *r = redact_dup(s);
	assert_non_null(r);
	return r;
}

static void test_redact__secrets_never_appear(void **state)
{
	(void)state;
	assert_true(sizeof secrets / sizeof secrets[0] >= 15);
	for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
		char *r = redact(secrets[i].input);
		if (strstr(r, secrets[i].secret) || !strstr(r, REDACTED))
			fail_msg("case %zu leaked or was not marked: '%s' -> '%s'", i, secrets[i].input, r);
		free(r);
	}
}

static void test_redact__ordinary_labels_untouched(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ordinary / sizeof ordinary[0]; i++) {
		char *r = redact(ordinary[i]);
		if (strcmp(r, ordinary[i]) != 0)
			fail_msg("ordinary label changed: '%s' -> '%s'", ordinary[i], r);
		free(r);
	}
}

static void test_redact__keeps_context(void **state)
{
	(void)state;
	char *r = redact("fetch (https://alice:pw@example.com/repo.git)");
	assert_string_equal(r, "fetch (https://[REDACTED]@example.com/repo.git)");
	free(r);
	r = redact("GET https://example.com/a/b?token=x&y=1 done");
	assert_string_equal(r, "GET https://example.com/a/b?[REDACTED] done");
	free(r);
}

static void test_redact__home_prefix_dropped(void **state)
{
	(void)state;
	redact_set_home("/home/alice");
	char *r = redact("parse (/home/alice/src/app/parse.c:10)");
	assert_string_equal(r, "parse (src/app/parse.c:10)");
	free(r);
	r = redact("/home/bob/work/x.c");
	assert_string_equal(r, "work/x.c");
	free(r);
	r = redact("/homework/x.c");
	assert_string_equal(r, "/homework/x.c");
	free(r);
	/* the home directory itself, bare: "~" (but not a longer name that starts like it) */
	r = redact("cd /home/alice; make -C /home/alice/src (in /home/alice)");
	assert_string_equal(r, "cd ~; make -C src (in ~)");
	free(r);
	r = redact("/home/bob");
	assert_string_equal(r, "~");
	free(r);
	r = redact("/home/");
	assert_string_equal(r, "/home/");
	free(r);
	redact_set_home("/srv/alice");
	r = redact("/srv/alice.bak /srv/alicex /srv/alice:/srv/alice/x");
	assert_string_equal(r, "/srv/alice.bak /srv/alicex ~:x");
	free(r);
	redact_set_home(NULL);
}

/* A path keeps everything but the secret: the directory named after a token loses its value only. */
static void test_redact__paths_keep_the_rest(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "work/token=ghp_abc123/file.c", "work/token=[REDACTED]/file.c" },
		{ "/opt/pw=hunter2/lib/libx.so", "/opt/pw=[REDACTED]/lib/libx.so" },
		{ "/opt/ghp_abc123/lib/libx.so", "/opt/[REDACTED]/lib/libx.so" },
		{ "plain/dir/file.c", "plain/dir/file.c" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *r = redact_path_dup(cases[i].in);
		assert_non_null(r);
		assert_string_equal(r, cases[i].out);
		free(r);
	}
	/* as text (a command line) a value runs to the blank: a token with a '/' in it is not cut in half */
	char *r = redact_dup("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCY next");
	assert_string_equal(r, "aws_secret_access_key=[REDACTED] next");
	free(r);
	/* ...but a key that is a path component ends at the next '/': the program's name stays (issue 27) */
	r = redact_dup("/opt/token=CANARY/api_key=X/sectarget --password=hunter2");
	assert_string_equal(r, "/opt/token=[REDACTED]/api_key=[REDACTED]/sectarget --password=[REDACTED]");
	free(r);
}

/* Frame labels as outputs show them: the function is code and kept (ghp_ and aws_AKIA alike), the path loses only
 * its secret, the line and the _[k] / _[j] marks stay, a JIT name and a thread root's name are redacted. */
static void test_redact__labels_part_by_part(void **state)
{
	(void)state;
	static const struct {
		const char *func, *file;
		unsigned line;
		const char *module;
		enum frame_kind kind;
		bool is_label;
		const char *shown;
	} cases[] = {
		{ "ghp_init_tables", "/src/app/init.c", 7, "", FRAME_USER, false, "ghp_init_tables (app/init.c:7)" },
		{ "aws_AKIAIOSFODNN7EXAMPLE_fn", "", 0, "/lib/libaws.so", FRAME_USER, false,
		  "aws_AKIAIOSFODNN7EXAMPLE_fn (libaws.so)" },
		{ "ghp_kernel_fn", "", 0, "", FRAME_KERNEL, false, "ghp_kernel_fn_[k]" },
		{ "main", "/w/token=ghp_abc123/file.c", 12, "", FRAME_USER, false, "main (token=[REDACTED]/file.c:12)" },
		{ "tok=ghp_JIT001", "", 0, "", FRAME_JIT, false, "tok=[REDACTED]_[j]" },
		{ "fetch https://u:pw@h.example/x", "", 0, "/tmp/perf-9.map", FRAME_JIT, false,
		  "fetch https://[REDACTED]@h.example/x (perf-9.map)_[j]" },
		/* a frame's name that code cannot be: still data, symbol or not */
		{ "connect https://bob:hunter2@db.example.com/x", "/app/db/conn.py", 3, "", FRAME_USER, false,
		  "connect https://[REDACTED]@db.example.com/x (db/conn.py:3)" },
		{ "connect https://bob:hunter2@db.example.com/x (db/conn.py:3)", "", 0, "", FRAME_USER, true,
		  "connect https://[REDACTED]@db.example.com/x (db/conn.py:3)" },
		{ "ghp_kept (x.py:1)", "", 0, "", FRAME_USER, true, "ghp_kept (x.py:1)" },
		/* finished labels, read from text */
		{ "main (token=ghp_abc123/file.c:12)", "", 0, "", FRAME_USER, true, "main (token=[REDACTED]/file.c:12)" },
		{ "ghp_init_tables (app/init.c:7)", "", 0, "", FRAME_USER, true, "ghp_init_tables (app/init.c:7)" },
		{ "tok=ghp_JIT001_[j]", "", 0, "", FRAME_USER, true, "tok=[REDACTED]_[j]" },
		{ "tok=ghp_THRD01 (4242)", "", 0, "", FRAME_USER, true, "tok=[REDACTED] (4242)" },
		{ "pw=hunter2COMM (17)", "", 0, "", FRAME_USER, true, "pw=[REDACTED] (17)" },
	};
	struct profile *p = profile_new();
	assert_non_null(p);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct frame f = { 0 };
		f.func = profile_intern_cstr(p, cases[i].func);
		f.file = profile_intern_cstr(p, cases[i].file);
		f.module = profile_intern_cstr(p, cases[i].module);
		f.line = cases[i].line;
		f.kind = (uint8_t)cases[i].kind;
		/* a finished label (text input) is read into the model's fields, as every reader does */
		uint32_t id = cases[i].is_label ? label_frame(p, cases[i].func, strlen(cases[i].func))
						: profile_frame(p, &f);
		struct sbuf out = SBUF_INIT;
		label_append_shown(&out, p, id, 0);
		assert_false(out.oom);
		if (strcmp(out.buf, cases[i].shown) != 0)
			fail_msg("case %zu: '%s' shown as '%s', want '%s'", i, cases[i].func, out.buf, cases[i].shown);
		sbuf_release(&out);
	}
	profile_free(p);
}

/* In a message, a path under the home directory keeps its place: ~/... (not a relative-looking path). */
static void test_redact__message_home_as_tilde(void **state)
{
	(void)state;
	redact_set_home("/home/alice");
	char *r = redact_dup_message("wrote /home/alice/.local/state/plumb/metrics/sh.json (token=abc123)");
	assert_string_equal(r, "wrote ~/.local/state/plumb/metrics/sh.json (token=[REDACTED])");
	free(r);
	r = redact_dup_message("cd /home/alice; ls /home/bob/x");
	assert_string_equal(r, "cd ~; ls ~/x");
	free(r);
	redact_set_home(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact__secrets_never_appear),
		cmocka_unit_test(test_redact__ordinary_labels_untouched),
		cmocka_unit_test(test_redact__keeps_context),
		cmocka_unit_test(test_redact__home_prefix_dropped),
		cmocka_unit_test(test_redact__paths_keep_the_rest),
		cmocka_unit_test(test_redact__labels_part_by_part),
		cmocka_unit_test(test_redact__message_home_as_tilde),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
