/* output.c — the one call that writes a profile in any output kind (render/output.h): an SVG flame graph is
 * rendered here, into a file written whole through base/atomic; the rest is format/'s fmt_write_file. */
#include "render/output.h"

#include <errno.h>

#include "os/atomic.h"

enum plumb_err render_write_file(const struct profile *p, const char *path, enum fmt_kind kind,
				 const struct fmt_write_opts *wo, const struct flame_opts *fo, struct perr *e)
{
	if (kind != FMT_SVG)
		return fmt_write_file(p, path, kind, wo, e);
	struct flame_opts defaults = { 0 };
	if (!fo) {
		defaults.min_width = -1;
		defaults.label_flags = wo ? wo->label_flags : 0;
		fo = &defaults;
	}
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc)
		return rc;
	errno = 0;
	rc = flame_write_svg(p, af.fp, fo, e);
	if (rc == PLUMB_EOUTPUT)
		fmt_write_failed(path, errno, e);
	if (rc) {
		atomic_abort(&af);
		return rc;
	}
	return atomic_commit(&af, e);
}
