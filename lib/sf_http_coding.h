/* sf_http_coding.h - HTTP content codings (RFC 9110 section 8.4.1) undone on a body held
 * in memory: gzip (and x-gzip), deflate (the zlib format, as RFC 9110 says; a raw deflate
 * stream, which some servers send instead, is taken too), br (RFC 7932), zstd (RFC 8878),
 * identity.  A Content-Encoding that lists several was applied in that order, so they
 * are undone last to first.
 *
 * Bounded: the decoded body may not grow past the buffer's max (a decompression bomb
 * stops there with SF_E_LIMIT), and the work is linear in the bytes in and out.
 */
#ifndef SF_HTTP_CODING_H
#define SF_HTTP_CODING_H

#include <stddef.h>
#include <stdint.h>

#include "sf_buf.h"
#include "sf_err.h"

/* 1 when every coding the Content-Encoding value v[0..n) names is one of these, 0 when
 * one is not (the body cannot be read). */
int sf_http_coding_known(const char *v, size_t n);

/* Undo the codings v[0..n) names on in[0..len) into out (reset first; its max bounds
 * the result).  Returns 0, or SF_E_UNSUPPORTED (a coding not known), SF_E_MALFORMED
 * (the data is not that coding: err names the coding and the byte where it failed),
 * SF_E_LIMIT (past out's max), SF_E_NOMEM. */
int sf_http_decode(const char *v, size_t n, const uint8_t *in, size_t len, struct sf_buf *out,
                   struct sf_err *err);

#endif
