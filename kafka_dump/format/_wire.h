/*
 * Reading Kafka's wire format in C, for every compiled twin: big-endian integers, zigzag varints
 * (ByteUtils), CRC-32 (LegacyRecord's checksum) and the check of a (pos, end) window. Header-only:
 * each extension module includes its own copy. Offsets and sizes come from _layout.h.
 *
 * Every reader here is given the limit it must stay below; a length read from the data is checked
 * against the bytes that are there before it is used to size or slice anything.
 */
#ifndef KDUMP_WIRE_H
#define KDUMP_WIRE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <stdint.h>

#include "_layout.h"

/* An error found in the data: its message and position, turned into CorruptRecordError later. */
typedef struct {
    PyObject *message; /* new reference, or NULL when a Python exception is set instead */
    Py_ssize_t position;
} DataError;

/* Fill err and jump to the function's fail label. */
#define DATA_ERROR(err, pos, ...)                           \
    do {                                                    \
        (err)->message = PyUnicode_FromFormat(__VA_ARGS__); \
        (err)->position = (pos);                            \
        goto fail;                                          \
    } while (0)

static inline int64_t
be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static inline int32_t
be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

static inline int16_t
be16(const unsigned char *p)
{
    return (int16_t)((uint16_t)p[0] << 8 | (uint16_t)p[1]);
}

/* Read a zigzag varint of at most max_bytes (VARINT_MAX_BYTES or VARLONG_MAX_BYTES) that must end
 * before limit (ByteUtils.readVarint/Varlong: bits past 32 or 64 are dropped as Java's shifts drop
 * them). Returns 0, or -1 with err filled. */
static inline int
read_varint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int64_t *out,
            DataError *err)
{
    uint64_t raw = 0;
    int shift = 0;
    Py_ssize_t start = *pos, i = *pos;
    for (;;) {
        if (i >= limit) {
            err->message = PyUnicode_FromString("varint runs past the end of its record");
            err->position = start;
            return -1;
        }
        if (i - start >= max_bytes) {
            err->message = PyUnicode_FromFormat("varint longer than %d bytes", max_bytes);
            err->position = start;
            return -1;
        }
        unsigned char b = p[i++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80)
            break;
        shift += 7;
    }
    if (max_bytes == VARINT_MAX_BYTES)
        raw &= 0xFFFFFFFFu; /* an int32 */
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    *pos = i;
    return 0;
}

/* 0 <= pos <= end <= len, else ValueError: the window a twin was given must lie in its buffer. */
static inline int
check_window(Py_ssize_t pos, Py_ssize_t end, Py_ssize_t len)
{
    if (pos < 0 || end < pos || end > len) {
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        return -1;
    }
    return 0;
}

/* CRC-32 (IEEE, reflected), slicing by 8, as zlib.crc32 computes it; call crc32_init at import. */
#define CRC32_POLY 0xEDB88320u
#if defined(__GNUC__)
__attribute__((unused)) /* a module that includes this header for its varints need not use it */
#endif
static uint32_t crc32_table[8][256];

static inline void
crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? CRC32_POLY ^ (c >> 1) : c >> 1;
        crc32_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc32_table[t][i] = (crc32_table[t - 1][i] >> 8) ^ crc32_table[0][crc32_table[t - 1][i] & 0xFF];
}

static inline uint32_t
crc32_ieee(const unsigned char *p, Py_ssize_t n)
{
    const uint32_t(*t)[256] = (const uint32_t(*)[256])crc32_table;
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
            t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

#endif
