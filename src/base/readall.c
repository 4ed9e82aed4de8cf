/* readall.c — see readall.h. */
#include "base/readall.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

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
			size_t nc = max && cap * 2 > max ? max : cap * 2;
			char *nb = realloc(buf, nc);
			if (!nb) {
				free(buf);
				return ENOMEM;
			}
			buf = nb;
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
