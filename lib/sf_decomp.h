/* sf_decomp.h - read a file through its compression (gzip, xz, zstd) or as it is.
 *
 *   struct sf_dz *z; unsigned char buf[65536]; ssize_t n;
 *   if (sf_dz_open(&z, path, &err) < 0) ...;
 *   while ((n = sf_dz_read(z, buf, sizeof(buf), &err)) > 0) use(buf, n);
 *   sf_dz_close(z);
 *
 * The compression is found from the first bytes (sf_sniff_compression); concatenated
 * members and frames (`cat a.gz b.gz`) read as one stream.  Errors name the byte offset
 * in the compressed file where decoding failed.
 */
#ifndef SF_DECOMP_H
#define SF_DECOMP_H

#include <sys/types.h>

#include "sf_err.h"
#include "sf_sniff.h"

struct sf_dz;

/* Open path ("-" is not accepted: the front end needs to read heads twice). */
int sf_dz_open(struct sf_dz **out, const char *path, struct sf_err *err);

/* The compression found when opening. */
enum sf_comp sf_dz_comp(const struct sf_dz *z);

/* Up to n decompressed bytes into buf: the count, 0 at the end, or a negative SF_E_*. */
ssize_t sf_dz_read(struct sf_dz *z, unsigned char *buf, size_t n, struct sf_err *err);

void sf_dz_close(struct sf_dz *z);

/* The first cap decompressed bytes of path into buf; *complete = 1 when that is the
 * whole content.  Returns the count or a negative SF_E_*. */
ssize_t sf_dz_head(const char *path, unsigned char *buf, size_t cap, enum sf_comp *comp,
                   int *complete, struct sf_err *err);

/* Decompress all of path into the open file descriptor fd.  Returns 0 or SF_E_*. */
int sf_dz_copy(const char *path, int fd, struct sf_err *err);

#endif
