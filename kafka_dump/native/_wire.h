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
#include <string.h>

#include "_layout.h"

/* An error found in the data: its message and position, turned into CorruptRecordError later, with
 * the rule it breaks (a model.Check value) and the numbers that rule compared. */
typedef struct {
    PyObject *message; /* new reference, or NULL when a Python exception is set instead */
    Py_ssize_t position;
    const char *check; /* NULL: none named */
    int numbers;       /* which of expected and found were compared: HAS_EXPECTED | HAS_FOUND */
    int64_t expected, found;
} DataError;

#define HAS_EXPECTED 1
#define HAS_FOUND 2

/* model.Check's values for the rules the compiled decoder checks. */
#define CHECK_COUNT_MISMATCH "count-mismatch"
#define CHECK_VARINT "varint"
#define CHECK_RECORD_LENGTH "record-length"
#define CHECK_FIELD_LENGTH "field-length"
#define CHECK_HEADER_COUNT "header-count"
#define CHECK_CODEC "codec"
#define CHECK_INNER_MESSAGE "inner-message"
#define CHECK_INNER_MAGIC "inner-magic"
#define CHECK_INNER_OFFSET "inner-offset"
#define CHECK_WRAPPER "wrapper"
#define CHECK_OFFSET_DELTA "offset-delta"
#define CHECK_TIMESTAMP "timestamp"
#define CHECK_TOO_LARGE "too-large"

/* Name in err the rule broken and the numbers it compared (numbers_: HAS_ bits, 0 for none). */
#define SET_CHECK(err, check_, numbers_, expected_, found_) \
    do {                                                     \
        (err)->check = (check_);                             \
        (err)->numbers = (numbers_);                         \
        (err)->expected = (expected_);                       \
        (err)->found = (found_);                             \
    } while (0)

/* Fill err and jump to the function's fail label. */
#define DATA_ERROR(err, pos, ...)                           \
    do {                                                    \
        (err)->message = PyUnicode_FromFormat(__VA_ARGS__); \
        (err)->position = (pos);                            \
        goto fail;                                          \
    } while (0)

/* DATA_ERROR for the rule check_, which compared expected_ and found_ (numbers_: HAS_ bits). */
#define CHECK_ERROR(err, pos, check_, numbers_, expected_, found_, ...) \
    do {                                                                 \
        SET_CHECK(err, check_, numbers_, expected_, found_);             \
        DATA_ERROR(err, pos, __VA_ARGS__);                               \
    } while (0)

/* Big-endian reads: one load and a byte swap. (The modules need GCC or Clang anyway, for
 * __builtin_add_overflow and __int128.) */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FROM_BE(bits, v) __builtin_bswap##bits(v)
#else
#define FROM_BE(bits, v) (v)
#endif
#define BE_READER(bits)                                 \
    static inline int##bits##_t be##bits(const unsigned char *p) \
    {                                                   \
        uint##bits##_t v;                               \
        memcpy(&v, p, sizeof v);                        \
        return (int##bits##_t)FROM_BE(bits, v);         \
    }
BE_READER(64)
BE_READER(32)
BE_READER(16)
#undef BE_READER

/* What varint_at found. */
enum { VARINT_OK, VARINT_PAST_END, VARINT_TOO_LONG };

/* Read a zigzag varint of at most max_bytes (VARINT_MAX_BYTES or VARLONG_MAX_BYTES) that must end
 * before limit (ByteUtils.readVarint/Varlong: bits past 32 or 64 are dropped as Java's shifts drop
 * them); *pos moves past it only when it is read. Returns a VARINT_ status. */
static inline int
varint_at(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int64_t *out)
{
    uint64_t raw = 0;
    int shift = 0;
    Py_ssize_t start = *pos, i = *pos;
    for (;;) {
        if (i >= limit)
            return VARINT_PAST_END;
        if (i - start >= max_bytes)
            return VARINT_TOO_LONG;
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
    return VARINT_OK;
}

/* The reason for a varint_at status other than VARINT_OK, in err. */
static inline void
varint_error(DataError *err, int rc, int max_bytes)
{
    SET_CHECK(err, CHECK_VARINT, 0, 0, 0);
    err->message = rc == VARINT_PAST_END ? PyUnicode_FromString("varint runs past the end of its record")
                                         : PyUnicode_FromFormat("varint longer than %d bytes", max_bytes);
}

/* varint_at, with the reason and position of a varint that cannot be read in err. Returns 0, or -1. */
static inline int
read_varint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int64_t *out,
            DataError *err)
{
    int rc = varint_at(p, pos, limit, max_bytes, out);
    if (rc == VARINT_OK)
        return 0;
    varint_error(err, rc, max_bytes);
    err->position = *pos;
    return -1;
}

/* varint_at, with the one- and two-byte cases (deltas and lengths under 64 and 8192) inline. */
static inline int
varint_fast(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int64_t *out)
{
    Py_ssize_t i = *pos;
    if (i < limit && p[i] < 0x80) {
        *out = (int64_t)(p[i] >> 1) ^ -(int64_t)(p[i] & 1);
        *pos = i + 1;
        return VARINT_OK;
    }
    if (i + 1 < limit && p[i + 1] < 0x80) {
        uint32_t u = (uint32_t)(p[i] & 0x7F) | (uint32_t)p[i + 1] << 7;
        *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
        *pos = i + 2;
        return VARINT_OK;
    }
    return varint_at(p, pos, limit, max_bytes, out);
}

/* One v2 record (Kafka's DefaultRecord): where its fields lie. */
typedef struct {
    Py_ssize_t body_end, headers_pos; /* the end of the record; where its first header starts */
    int attributes;
    int64_t length, ts_delta, offset_delta;
    Py_ssize_t key_pos, value_pos;
    int64_t key_len, value_len;         /* negative: null */
    int64_t header_count, header_bytes; /* header_bytes: the bytes of the header keys and values */
} V2Record;

/* Called by v2_record with each header key (never null) and value (value_len negative: null): 0 to go
 * on, -1 to stop with a Python exception set. */
typedef int (*V2HeaderFn)(void *ctx, const unsigned char *key, int64_t key_len, const unsigned char *value,
                          int64_t value_len);

/* Read a varint in v2_record, or fail the record. */
#define V2_VARINT(limit, max_bytes, out)                               \
    do {                                                               \
        int rc_ = varint_fast(p, &pos, (limit), (max_bytes), &(out));  \
        if (rc_ != VARINT_OK) {                                        \
            varint_error(err, rc_, (max_bytes));                       \
            goto fail;                                                 \
        }                                                              \
    } while (0)

/* Read the v2 record at p[*pos:end] as _pure.decode_v2_records reads it, each header
 * handed to on_header (NULL: none). Returns 0 with *pos past the record, or -1 with err filled and its
 * position the record's start (err->message NULL: a Python exception is set instead). */
static inline int
v2_record(const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, V2Record *r, V2HeaderFn on_header, void *ctx,
          DataError *err)
{
    Py_ssize_t start = *at, pos = *at;
    int64_t n;
    V2_VARINT(end, VARINT_MAX_BYTES, r->length);
    if (r->length < V2_RECORD_MIN_LENGTH || r->length > end - pos)
        CHECK_ERROR(err, start, CHECK_RECORD_LENGTH, HAS_FOUND, 0, r->length,
                    "record length %lld does not fit the batch", (long long)r->length);
    Py_ssize_t body_end = r->body_end = pos + (Py_ssize_t)r->length;
    r->attributes = p[pos++];
    V2_VARINT(body_end, VARLONG_MAX_BYTES, r->ts_delta);
    V2_VARINT(body_end, VARINT_MAX_BYTES, r->offset_delta);
    V2_VARINT(body_end, VARINT_MAX_BYTES, r->key_len);
    if (r->key_len > body_end - pos)
        CHECK_ERROR(err, start, CHECK_FIELD_LENGTH, HAS_FOUND, 0, r->key_len, "key length %lld runs past the record",
                    (long long)r->key_len);
    r->key_pos = pos;
    if (r->key_len > 0)
        pos += (Py_ssize_t)r->key_len;
    V2_VARINT(body_end, VARINT_MAX_BYTES, r->value_len);
    if (r->value_len > body_end - pos)
        CHECK_ERROR(err, start, CHECK_FIELD_LENGTH, HAS_FOUND, 0, r->value_len,
                    "value length %lld runs past the record", (long long)r->value_len);
    r->value_pos = pos;
    if (r->value_len > 0)
        pos += (Py_ssize_t)r->value_len;
    r->header_bytes = 0;
    if (pos < body_end && p[pos] == 0) { /* no headers, the common case */
        r->header_count = 0;
        r->headers_pos = ++pos;
    }
    else {
        V2_VARINT(body_end, VARINT_MAX_BYTES, r->header_count);
        if (r->header_count < 0 || r->header_count > body_end - pos)
            CHECK_ERROR(err, start, CHECK_HEADER_COUNT, HAS_FOUND, 0, r->header_count, "invalid header count %lld",
                        (long long)r->header_count);
        if (r->header_count > MAX_DECODED_PER_BATCH) /* a limit on what any reader builds or walks */
            CHECK_ERROR(err, start, CHECK_TOO_LARGE, HAS_EXPECTED | HAS_FOUND, MAX_DECODED_PER_BATCH,
                        r->header_count, "record has %lld headers, more than kdump reads in one batch (%d)",
                        (long long)r->header_count, MAX_DECODED_PER_BATCH);
        r->headers_pos = pos;
        for (int64_t j = 0; j < r->header_count; j++) {
            V2_VARINT(body_end, VARINT_MAX_BYTES, n);
            if (n < 0)
                CHECK_ERROR(err, start, CHECK_FIELD_LENGTH, 0, 0, 0, "header key is null");
            if (n > body_end - pos)
                CHECK_ERROR(err, start, CHECK_FIELD_LENGTH, HAS_FOUND, 0, n,
                            "header key length %lld runs past the record", (long long)n);
            const unsigned char *key = p + pos;
            int64_t key_len = n;
            pos += (Py_ssize_t)n;
            V2_VARINT(body_end, VARINT_MAX_BYTES, n);
            if (n > body_end - pos)
                CHECK_ERROR(err, start, CHECK_FIELD_LENGTH, HAS_FOUND, 0, n,
                            "header value length %lld runs past the record", (long long)n);
            r->header_bytes += key_len + (n > 0 ? n : 0);
            if (on_header != NULL && on_header(ctx, key, key_len, p + pos, n) < 0) {
                err->message = NULL;
                return -1;
            }
            if (n > 0)
                pos += (Py_ssize_t)n;
        }
    }
    if (pos != body_end)
        CHECK_ERROR(err, start, CHECK_RECORD_LENGTH, HAS_EXPECTED | HAS_FOUND, r->length, r->length + pos - body_end,
                    "record declares %lld bytes but its fields take %lld", (long long)r->length,
                    (long long)(r->length + pos - body_end));
    *at = pos;
    return 0;
fail:
    err->position = start;
    return -1;
}
#undef V2_VARINT

/* A v0/v1 message (Kafka's LegacyRecord): its header, then a v1 timestamp, then the key and the value,
 * each an int32 length (any negative: null) and that many bytes; the value ends the message. */
typedef struct {
    int64_t offset, timestamp; /* timestamp -1 for v0 */
    uint32_t crc;
    int magic, attributes;
    int32_t size;
    Py_ssize_t key_pos, key_len;     /* len -1: null; with LEGACY_KEY_PAST, the length that runs past */
    Py_ssize_t value_pos, value_len; /* the same for the value */
    Py_ssize_t end;                  /* where the value ends */
} LegacyMessage;

/* What legacy_message and legacy_body found, in the order they read. */
enum {
    LEGACY_OK,
    LEGACY_SHORT,           /* fewer bytes than the smallest v0 log entry */
    LEGACY_BAD_MAGIC,       /* a magic other than 0 and 1 */
    LEGACY_UNDERSIZED,      /* a size below the magic's minimum */
    LEGACY_NO_KEY_LENGTH,   /* the message ends before its key length */
    LEGACY_KEY_PAST,        /* the key length runs past the message */
    LEGACY_NO_VALUE_LENGTH, /* the same two for the value, in the same order */
    LEGACY_VALUE_PAST,
    LEGACY_TRAILING,        /* bytes follow the value (m->end is where it ends) */
};

/* The int32 length at *q and the bytes it counts, before end (message.py's _read_bytes): LEGACY_OK
 * with *q past them, LEGACY_NO_KEY_LENGTH or LEGACY_KEY_PAST (for a key; the value's statuses follow
 * them in the same order). */
static inline int
legacy_field(const unsigned char *p, Py_ssize_t *q, Py_ssize_t end, Py_ssize_t *at, Py_ssize_t *len)
{
    if (end - *q < 4)
        return LEGACY_NO_KEY_LENGTH;
    int64_t n = be32(p + *q);
    *q += 4;
    *at = *q;
    *len = n < 0 ? -1 : (Py_ssize_t)n;
    if (n > end - *q)
        return LEGACY_KEY_PAST;
    if (n > 0)
        *q += (Py_ssize_t)n;
    return LEGACY_OK;
}

/* Read what follows the header of the v0/v1 log entry p[pos:end] of the given magic (0 or 1): its
 * timestamp, key and value. No length is trusted beyond the bytes before end, and lengths are added
 * in 64 bits. Returns a LEGACY_ status. */
static inline int
legacy_body(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, int magic, LegacyMessage *m)
{
    if (end - pos < LOG_OVERHEAD + LEGACY_V0_MIN_SIZE) /* the header and a v1 timestamp */
        return LEGACY_SHORT;
    Py_ssize_t q = pos + LEGACY_HEADER_SIZE;
    m->timestamp = -1;
    if (magic == 1) {
        m->timestamp = be64(p + pos + LEGACY_V1_TIMESTAMP_OFFSET);
        q = pos + LEGACY_V1_HEADER_SIZE;
    }
    int rc = legacy_field(p, &q, end, &m->key_pos, &m->key_len);
    if (rc != LEGACY_OK)
        return rc;
    rc = legacy_field(p, &q, end, &m->value_pos, &m->value_len);
    if (rc != LEGACY_OK)
        return rc + (LEGACY_NO_VALUE_LENGTH - LEGACY_NO_KEY_LENGTH);
    m->end = q;
    return q == end ? LEGACY_OK : LEGACY_TRAILING;
}

/* Read the header of the v0/v1 log entry p[pos:end], up to its size check. Returns a LEGACY_ status. */
static inline int
legacy_header(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, LegacyMessage *m)
{
    if (end - pos < LOG_OVERHEAD + LEGACY_V0_MIN_SIZE)
        return LEGACY_SHORT;
    m->offset = be64(p + pos + LEGACY_OFFSET_OFFSET);
    m->size = be32(p + pos + LEGACY_SIZE_OFFSET);
    m->crc = (uint32_t)be32(p + pos + LEGACY_CRC_OFFSET);
    m->magic = (signed char)p[pos + LEGACY_MAGIC_OFFSET];
    m->attributes = (signed char)p[pos + LEGACY_ATTRIBUTES_OFFSET];
    if (m->magic != 0 && m->magic != 1)
        return LEGACY_BAD_MAGIC;
    if (m->size < (m->magic == 0 ? LEGACY_V0_MIN_SIZE : LEGACY_V1_MIN_SIZE))
        return LEGACY_UNDERSIZED;
    return LEGACY_OK;
}

/* Read the v0/v1 log entry p[pos:end] whole, as message.py's Message does. Returns a LEGACY_ status. */
static inline int
legacy_message(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, LegacyMessage *m)
{
    int rc = legacy_header(p, pos, end, m);
    return rc == LEGACY_OK ? legacy_body(p, pos, end, m->magic, m) : rc;
}

/* Kafka's rule for the inner offsets of a compressed v0/v1 wrapper (AbstractLegacyRecordBatch): a v1
 * wrapper's are relative, its last inner message standing at the wrapper's own offset, except that a
 * wrapper offset of 0 (as a producer writes it) leaves them absolute, as a v0 wrapper's are. */
static inline int
legacy_relative(int magic, int64_t wrapper_offset)
{
    return magic > 0 && wrapper_offset != 0;
}

/* Kafka's rule for the order of a wrapper's inner messages: each offset, relative or absolute, above
 * the one before it (n: the messages before this one, previous: the last one's offset). A repeat or a
 * step back is corruption; every walker of an inner set asks this, and the decoder reports it. */
static inline int
legacy_inner_grows(Py_ssize_t n, int64_t previous, int64_t offset)
{
    return n == 0 || offset > previous;
}

/* What the decoder adds to every inner offset: wrapper_offset - last when relative and positive, else
 * 0 (a wrapper below its last inner offset is an error, and its records keep their own offsets). In
 * 128 bits: the difference of two int64 need not fit one. */
static inline __int128
legacy_inner_base(int magic, int64_t wrapper_offset, int64_t last)
{
    __int128 shift = legacy_relative(magic, wrapper_offset) ? (__int128)wrapper_offset - last : 0;
    return shift > 0 ? shift : 0;
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

/* Where the plain message at p[pos:end] ends, as its header says (a v0 header's room, magic 0 or 1,
 * no codec, a size within end), for the walkers of runs of plain messages; -1 when it is not one. */
static inline Py_ssize_t
plain_entry_end(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end)
{
    if (end - pos < LOG_OVERHEAD + LEGACY_V0_MIN_SIZE)
        return -1;
    int magic = (signed char)p[pos + LEGACY_MAGIC_OFFSET];
    int attributes = (signed char)p[pos + LEGACY_ATTRIBUTES_OFFSET];
    int32_t size = be32(p + pos + LEGACY_SIZE_OFFSET);
    if ((magic != 0 && magic != 1) || (attributes & COMPRESSION_MASK) || size < 0 || size > end - pos - LOG_OVERHEAD)
        return -1;
    return pos + LOG_OVERHEAD + size;
}

/* check_window for the buffer view a twin was given, released when the window is refused. */
static inline int
view_window(Py_buffer *view, Py_ssize_t pos, Py_ssize_t end)
{
    if (check_window(pos, end, view->len) == 0)
        return 0;
    PyBuffer_Release(view);
    return -1;
}

/* CRC-32 (IEEE, reflected), as zlib.crc32 computes it; call crc32_init at import. On x86-64 CPUs with
 * PCLMULQDQ and SSSE3, a buffer of 16 bytes or more is folded 16 bytes at a time with carry-less
 * multiplies (Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", reflected form),
 * its last partial block shifted in with PSHUFB, several times faster than the tables on a v0/v1
 * message. Everywhere else, and below 16 bytes, tables sliced by 8. */
#define CRC32_POLY 0xEDB88320u
#if defined(__GNUC__)
__attribute__((unused)) /* a module that includes this header for its varints need not use it */
#endif
static uint32_t crc32_table[8][256];

/* The folding path needs one whole 16-byte block; from there it is faster than the tables. */
#define CRC32_FOLD_MIN 16

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KDUMP_CRC32_FOLD 1
#include <emmintrin.h>
#include <tmmintrin.h>
#include <wmmintrin.h>

#if defined(__GNUC__)
__attribute__((unused))
#endif
static int crc32_can_fold; /* set by crc32_init when the CPU has PCLMULQDQ and SSSE3 */

/* The folding constants, x^n mod P bit-reflected and shifted left by one, for a fold across 512 + 64
 * bits (n = 4*128 +- 32), across 128 bits (n = 128 +- 32), and x^64 mod P; then P itself and
 * floor(x^64 / P), both reflected, for the Barrett reduction to 32 bits. */
#define CRC32_K1 0x154442bd4LL
#define CRC32_K2 0x1c6e41596LL
#define CRC32_K3 0x1751997d0LL
#define CRC32_K4 0x0ccaa009eLL
#define CRC32_K5 0x163cd6124LL
#define CRC32_P 0x1db710641LL
#define CRC32_U 0x1f7011641LL

/* acc * x^(distance) mod P, added to the next 16 bytes: the low and high halves of acc each carried
 * forward by the constant in the same half of k. */
__attribute__((target("pclmul,ssse3"))) static inline __m128i
crc32_fold16(__m128i acc, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/* PSHUFB masks: 16 bytes loaded from CRC32_SHIFT_UP + r move a register's bytes up by 16 - r places
 * (its last r bytes first, zeros after them... in memory order: zeros first); from CRC32_SHIFT_DOWN + r,
 * down by r places (zeros coming in at the end). An index with its top bit set yields a zero byte. */
static const unsigned char crc32_shift_masks[64] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};
#define CRC32_SHIFT_UP (crc32_shift_masks)
#define CRC32_SHIFT_DOWN (crc32_shift_masks + 32)

/* The CRC state after p[0:n], from state c (not inverted here); n >= 16. */
__attribute__((target("pclmul,ssse3"))) static uint32_t
crc32_fold(uint32_t c, const unsigned char *p, Py_ssize_t n)
{
    const unsigned char *last = p + n - 16; /* the buffer's last 16 bytes, for its last partial block */
    Py_ssize_t r = n & 15;
    const __m128i k34 = _mm_set_epi64x(CRC32_K4, CRC32_K3);
    __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)c));
    p += 16;
    n -= 16;
    if (n >= 112) { /* four lanes in flight, then folded into one */
        const __m128i k12 = _mm_set_epi64x(CRC32_K2, CRC32_K1);
        __m128i x1 = _mm_loadu_si128((const __m128i *)p), x2 = _mm_loadu_si128((const __m128i *)(p + 16)),
                x3 = _mm_loadu_si128((const __m128i *)(p + 32));
        p += 48;
        n -= 48;
        while (n >= 64) {
            x = crc32_fold16(x, k12, _mm_loadu_si128((const __m128i *)p));
            x1 = crc32_fold16(x1, k12, _mm_loadu_si128((const __m128i *)(p + 16)));
            x2 = crc32_fold16(x2, k12, _mm_loadu_si128((const __m128i *)(p + 32)));
            x3 = crc32_fold16(x3, k12, _mm_loadu_si128((const __m128i *)(p + 48)));
            p += 64;
            n -= 64;
        }
        x = crc32_fold16(x, k34, x1);
        x = crc32_fold16(x, k34, x2);
        x = crc32_fold16(x, k34, x3);
    }
    while (n >= 16) {
        x = crc32_fold16(x, k34, _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    if (r > 0) {
        /* r bytes remain: the last 16 bytes of the message are x's last 16 - r bytes and those r;
         * x's first r bytes, before them, are folded across 128 bits as a block of zeros and them. */
        __m128i up = _mm_loadu_si128((const __m128i *)(CRC32_SHIFT_UP + r));
        __m128i down = _mm_loadu_si128((const __m128i *)(CRC32_SHIFT_DOWN + r));
        __m128i before = _mm_cmplt_epi8(up, _mm_setzero_si128()); /* the first 16 - r bytes */
        __m128i tail = _mm_or_si128(_mm_shuffle_epi8(x, down),
                                    _mm_andnot_si128(before, _mm_loadu_si128((const __m128i *)last)));
        x = crc32_fold16(_mm_shuffle_epi8(x, up), k34, tail);
    }
    /* 128 bits to 64, then to 64 holding 32 more, then Barrett's reduction to the 32-bit remainder */
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    x = _mm_xor_si128(_mm_clmulepi64_si128(x, k34, 0x10), _mm_srli_si128(x, 8));
    x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, mask32), _mm_set_epi64x(0, CRC32_K5), 0x00),
                      _mm_srli_si128(x, 4));
    const __m128i pu = _mm_set_epi64x(CRC32_U, CRC32_P);
    __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), pu, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), pu, 0x00);
    return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(_mm_xor_si128(t, x), 4));
}
#endif

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
#ifdef KDUMP_CRC32_FOLD
    __builtin_cpu_init();
    crc32_can_fold = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3");
#endif
}

/* The CRC state after p[0:n] from state c, through the tables alone. */
static inline uint32_t
crc32_tables(uint32_t c, const unsigned char *p, Py_ssize_t n)
{
    const uint32_t(*t)[256] = (const uint32_t(*)[256])crc32_table;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
            t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

/* zlib.crc32(p[0:n]); with table_only, without the folding path (for the tests of both). */
static inline uint32_t
crc32_ieee_with(const unsigned char *p, Py_ssize_t n, int table_only)
{
    uint32_t c = 0xFFFFFFFFu;
#ifdef KDUMP_CRC32_FOLD
    if (crc32_can_fold && !table_only && n >= CRC32_FOLD_MIN)
        return crc32_fold(c, p, n) ^ 0xFFFFFFFFu;
#else
    (void)table_only;
#endif
    return crc32_tables(c, p, n) ^ 0xFFFFFFFFu;
}

static inline uint32_t
crc32_ieee(const unsigned char *p, Py_ssize_t n)
{
    return crc32_ieee_with(p, n, 0);
}

#endif
