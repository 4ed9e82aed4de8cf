/* test_redact.c — a corpus of secret shapes that must never survive redaction, and ordinary labels that must
 * come out unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/redact.h"

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
		cmocka_unit_test(test_redact__message_home_as_tilde),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
