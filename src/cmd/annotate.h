/* annotate.h — inside cmd/: the annotation pages `plumb flame --annotate-dir DIR` writes beside a flame graph
 * (docs/design.md §6.8), one per hot function, and the link from a box's label to its page.
 *
 * Ownership: cmd_annotate_pages() fills links, which the caller releases with cmd_annotate_links_release(). */
#ifndef PLUMB_CMD_ANNOTATE_H
#define PLUMB_CMD_ANNOTATE_H

#include <stddef.h>

#include "profile/profile.h"

#define CMD_ANNOTATE_PAGES 30 /* pages for at most this many functions, the most inclusive of >= 1% */

struct cmd_annotate_links {
	char **keys;   /* a function's label without its line, as drawn */
	char **paths;  /* its page: DIR/fN.html */
	size_t n;
};

/* Writes DIR/fN.html for the hottest functions of p and fills links. Returns an exit code (the message printed). */
int cmd_annotate_pages(const struct profile *p, const char *dir, struct cmd_annotate_links *links);
/* The page of a drawn label (ctx: the links), or NULL (flame_opts.annotate_link). */
const char *cmd_annotate_link(void *ctx, const char *label, size_t len);
void cmd_annotate_links_release(struct cmd_annotate_links *links);

#endif
