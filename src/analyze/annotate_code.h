/* annotate_code.h — inside analyze/: what annotate_code.c frees of a function (its rows and instructions). */
#ifndef PLUMB_ANALYZE_ANNOTATE_CODE_H
#define PLUMB_ANALYZE_ANNOTATE_CODE_H

#include "analyze/annotate.h"

void annot_code_release(struct annot_func *f);

#endif
