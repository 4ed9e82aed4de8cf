/* readall.c — see readall.h. */
#include "base/readall.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/grow.h"

int read_fd_whole(int fd, size_t cap, size_t max, char **out, size_t *len)
{
	size_t n = 0;
	if (cap < 2)
		cap = 2;
	if (max && cap > max)
		cap = max;
	char *buf = malloc(cap);
	if (!buf)
		return ENOMEM;
	for (;;) {
		if (n + 1 >= cap) {
			if (max && cap >= max) {
				free(buf);
				return EFBIG;
			}
			size_t nc = grow_cap(cap + 1, cap);
			if (max && nc > max)
				nc = max;
			if (!REALLOC_ARRAY(buf, nc)) {
				free(buf);
				return ENOMEM;
			}
			cap = nc;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}
