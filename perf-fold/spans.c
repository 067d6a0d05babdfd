#include "perf_fold.h"
int spans_fold(struct perf_fold_ctx *c) { (void)c; return 2; }
