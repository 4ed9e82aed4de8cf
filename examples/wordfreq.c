/* wordfreq.c — the bundled example for `make demo`: builds a synthetic text, splits it into words, counts
 * them in a hash table and sorts the counts. Its time splits across recognisable functions, so a profile of
 * it reads like a profile of a real program. Usage: wordfreq [ROUNDS] (default 6). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define TABLE_SIZE (1u << 16)

struct entry {
	char word[24];
	unsigned count;
};

static struct entry table[TABLE_SIZE];

NOINLINE static char *generate_text(size_t words, uint64_t seed)
{
	static const char *const vocab[] = { "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog",
		"profile", "stack", "sample", "frame", "kernel", "thread", "cache", "branch", "memory", "latency" };
	char *text = malloc(words * 12 + 1), *p = text;
	for (size_t i = 0; i < words; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		const char *w = vocab[(seed >> 33) % (sizeof vocab / sizeof vocab[0])];
		size_t n = strlen(w);
		memcpy(p, w, n);
		p += n;
		/* a numeric suffix makes the vocabulary large enough to exercise the table */
		p += sprintf(p, "%u ", (unsigned)((seed >> 20) % 97));
	}
	*p = '\0';
	return text;
}

NOINLINE static uint32_t hash_word(const char *w, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)w[i]) * 16777619u;
	return h;
}

NOINLINE static void count_word(const char *w, size_t n)
{
	if (n >= sizeof table[0].word)
		n = sizeof table[0].word - 1;
	uint32_t i = hash_word(w, n) & (TABLE_SIZE - 1);
	while (table[i].count && (strncmp(table[i].word, w, n) != 0 || table[i].word[n] != '\0'))
		i = (i + 1) & (TABLE_SIZE - 1);
	if (!table[i].count)
		memcpy(table[i].word, w, n);
	table[i].count++;
}

NOINLINE static size_t tokenize_and_count(const char *text)
{
	size_t words = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *start = p;
		while (*p && *p != ' ')
			p++;
		if (p > start) {
			count_word(start, (size_t)(p - start));
			words++;
		}
	}
	return words;
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->count != y->count ? (x->count < y->count ? 1 : -1) : strcmp(x->word, y->word);
}

NOINLINE static size_t sort_counts(struct entry *out)
{
	size_t n = 0;
	for (size_t i = 0; i < TABLE_SIZE; i++)
		if (table[i].count)
			out[n++] = table[i];
	qsort(out, n, sizeof *out, by_count);
	return n;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 6;
	static struct entry sorted[TABLE_SIZE];
	size_t total = 0, distinct = 0;
	for (int r = 0; r < rounds; r++) {
		char *text = generate_text(2000000, (uint64_t)r + 1);
		total += tokenize_and_count(text);
		for (int k = 0; k < 20; k++)
			distinct = sort_counts(sorted);
		free(text);
	}
	printf("%zu words, %zu distinct; most frequent: %s (%u)\n", total, distinct, sorted[0].word, sorted[0].count);
	return 0;
}
