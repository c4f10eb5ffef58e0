/*
 * The gzip members the compiled inflaters read with zlib (_transcode.gunzip, the inflate-ahead engine
 * in ahead.c): deflate, no header CRC nor reserved flags, one member, its trailer checked here with
 * _wire.h's CRC-32 instead of zlib's. Anything else is left to codecs.decompress.
 */
#ifndef KDUMP_GZIP_H
#define KDUMP_GZIP_H

#include <string.h>
#include <zlib.h>

#include "_wire.h"

#define DEFLATE_MAX_RATIO 1032 /* deflate never inflates one byte to more than this */

static inline uint32_t
le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 1 when p[0:n] may be a member read here: a gzip header for deflate without a header CRC or reserved
 * flags, and a size that zlib's 32-bit counts and the trailer's ISIZE can hold. */
static inline int
gzip_plain_header(const unsigned char *p, Py_ssize_t n)
{
    return n >= 18 && n <= (Py_ssize_t)UINT32_MAX && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8 && !(p[3] & 0xE2);
}

/* z made ready to inflate gzip members, without zlib's trailer check (gzip_trailer_ok's is faster):
 * 1, or 0 when zlib cannot. */
static inline int
gzip_open(z_stream *z)
{
    memset(z, 0, sizeof *z);
    if (inflateInit2(z, 16 + MAX_WBITS) != Z_OK)
        return 0;
    if (inflateValidate(z, 0) != Z_OK) {
        inflateEnd(z);
        return 0;
    }
    return 1;
}

/* 1 when the member that took p[0:used] ends with the CRC-32 and ISIZE of out[0:total]. */
static inline int
gzip_trailer_ok(const unsigned char *p, Py_ssize_t used, const unsigned char *out, Py_ssize_t total)
{
    return used >= 8 && crc32_ieee(out, total) == le32(p + used - 8) && (uint32_t)total == le32(p + used - 4);
}

/* 1 when another member follows the one that took p[0:used] of p[0:n]. */
static inline int
gzip_more(const unsigned char *p, Py_ssize_t n, Py_ssize_t used)
{
    return n - used >= 2 && p[used] == 0x1f && p[used + 1] == 0x8b;
}

/* A plain member inflated into *out (a new bytes object) with its input bytes in *used: 0, 1 to
 * decline, 2 past limit, -1 with an exception set (in transcode.c). */
int zlib_gunzip(const unsigned char *p, Py_ssize_t n, Py_ssize_t limit, PyObject **out, Py_ssize_t *used);

#endif
