/* redact.c: the compiled twin of kafka_dump.analysis.redact_records: the records of a v2 batch with
 * every key, value and header value replaced in place by its pseudonym (analysis/pseudonyms.py's:
 * HMAC-SHA256 under the secret, stretched by SHA-256 in counter mode, printable ASCII as letters and
 * digits, a Schema Registry prefix or --keep-prefix's bytes kept). SHA-256 is computed here (with the
 * CPU's SHA extensions where it has them, portable C otherwise) because hashlib, called once a field
 * from Python, was most of redact's time; the tests hold both against hashlib. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_wire.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define SHA_EXTENSIONS 1
#endif

/* ---- SHA-256 (FIPS 180-4) --------------------------------------------------------------------- */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
static const uint32_t SHA256_IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static inline uint32_t
load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
sha256_portable(uint32_t h[8], const unsigned char *p, size_t blocks)
{
    uint32_t w[64];
    for (; blocks > 0; blocks--, p += 64) {
        for (int t = 0; t < 16; t++)
            w[t] = load_be32(p + 4 * t);
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = ROR32(w[t - 15], 7) ^ ROR32(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = ROR32(w[t - 2], 17) ^ ROR32(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
        for (int t = 0; t < 64; t++) {
            uint32_t t1 = k + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) + ((e & f) ^ (~e & g)) + K256[t] + w[t];
            uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            k = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
    }
}

#ifdef SHA_EXTENSIONS
/* The same compression with the SHA extensions (SHA-NI): four rounds an instruction pair. */
__attribute__((target("sha,sse4.1,ssse3"))) static void
sha256_shani(uint32_t h[8], const unsigned char *p, size_t blocks)
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1); /* CDAB */
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);  /* EFGH */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);                                       /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);                                            /* CDGH */
    for (; blocks > 0; blocks--, p += 64) {
        __m128i abef = s0, cdgh = s1, g[4];
        for (int i = 0; i < 16; i++) {
            __m128i w;
            if (i < 4)
                w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
            else
                w = _mm_sha256msg2_epu32(
                    _mm_add_epi32(_mm_sha256msg1_epu32(g[i & 3], g[(i + 1) & 3]), _mm_alignr_epi8(g[(i + 3) & 3], g[(i + 2) & 3], 4)),
                    g[(i + 3) & 3]);
            g[i & 3] = w;
            __m128i m = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K256[4 * i]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    tmp = _mm_shuffle_epi32(s0, 0x1B);   /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);    /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xF0); /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);    /* HGFE */
    _mm_storeu_si128((__m128i *)&h[0], s0);
    _mm_storeu_si128((__m128i *)&h[4], s1);
}

/* Two independent compressions of one block each, interleaved: a compression is a chain of
 * dependent rounds, so two chains keep the SHA unit busy where one leaves it waiting. */
__attribute__((target("sha,sse4.1,ssse3"))) static void
sha256_shani_x2(uint32_t *const h[2], const unsigned char *const p[2])
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i s0[2], s1[2], abef[2], cdgh[2], g[2][4];
#pragma GCC unroll 2
    for (int l = 0; l < 2; l++) {
        __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[l][0]), 0xB1);
        s1[l] = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[l][4]), 0x1B);
        s0[l] = _mm_alignr_epi8(tmp, s1[l], 8);
        s1[l] = _mm_blend_epi16(s1[l], tmp, 0xF0);
        abef[l] = s0[l], cdgh[l] = s1[l];
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) {
        __m128i k = _mm_loadu_si128((const __m128i *)&K256[4 * i]);
#pragma GCC unroll 2
        for (int l = 0; l < 2; l++) {
            __m128i w;
            if (i < 4)
                w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p[l] + 16 * i)), swap);
            else
                w = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(g[l][i & 3], g[l][(i + 1) & 3]),
                                                       _mm_alignr_epi8(g[l][(i + 3) & 3], g[l][(i + 2) & 3], 4)),
                                         g[l][(i + 3) & 3]);
            g[l][i & 3] = w;
            __m128i m = _mm_add_epi32(w, k);
            s1[l] = _mm_sha256rnds2_epu32(s1[l], s0[l], m);
            s0[l] = _mm_sha256rnds2_epu32(s0[l], s1[l], _mm_shuffle_epi32(m, 0x0E));
        }
    }
#pragma GCC unroll 2
    for (int l = 0; l < 2; l++) {
        __m128i a = _mm_add_epi32(s0[l], abef[l]), c = _mm_add_epi32(s1[l], cdgh[l]);
        __m128i tmp = _mm_shuffle_epi32(a, 0x1B);
        c = _mm_shuffle_epi32(c, 0xB1);
        _mm_storeu_si128((__m128i *)&h[l][0], _mm_blend_epi16(tmp, c, 0xF0));
        _mm_storeu_si128((__m128i *)&h[l][4], _mm_alignr_epi8(c, tmp, 8));
    }
}

static int
has_sha_extensions(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    int sha = (b >> 29) & 1;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    return sha && (c >> 19) & 1 && (c >> 9) & 1; /* SSE4.1 and SSSE3 as well */
}
#endif

typedef void (*Sha256Blocks)(uint32_t h[8], const unsigned char *p, size_t blocks);
static Sha256Blocks sha256_blocks = sha256_portable;

/* Pad and hash the last len (< 64) bytes of a message of total bytes in all; the digest to out. */
static void
sha256_finish(uint32_t h[8], const unsigned char *tail, size_t len, uint64_t total, unsigned char out[32])
{
    unsigned char block[128] = {0};
    memcpy(block, tail, len);
    block[len] = 0x80;
    size_t n = len < 56 ? 64 : 128;
    uint64_t bits = total * 8;
    for (int i = 0; i < 8; i++)
        block[n - 1 - i] = (unsigned char)(bits >> (8 * i));
    sha256_blocks(h, block, n / 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}

static void
sha256(const unsigned char *p, size_t n, unsigned char out[32])
{
    uint32_t h[8];
    memcpy(h, SHA256_IV, sizeof h);
    sha256_blocks(h, p, n / 64);
    sha256_finish(h, p + n / 64 * 64, n % 64, n, out);
}

/* ---- pseudonyms -------------------------------------------------------------------------------- */

#define SR_PREFIX 5 /* pseudonyms.SR_PREFIX */
#define LANES 2

enum { KEY, VALUE, HEADER, FIELDS };
static const char *const FIELD_NAMES[FIELDS] = {"key", "value", "header"};

/* Bytes whose pseudonym is wanted: n of them at data, m pseudonym bytes to out. */
typedef struct {
    const unsigned char *data;
    unsigned char *out;
    size_t n, m;
} Field;

/* One secret's HMAC states (after the padded key's block), what was replaced, and the field of each
 * kind waiting for a second of its length, to be hashed beside it. */
typedef struct {
    uint32_t inner[8], outer[8];
    int64_t keep_prefix; /* negative: none */
    int64_t bytes[FIELDS], seen[FIELDS];
    int64_t kept, values; /* prefix bytes kept; values with a prefix rule applied */
    const unsigned char *in;
    unsigned char *out;
    Field waiting[FIELDS];
    int has_waiting[FIELDS];
} Redactor;

static void
redactor_init(Redactor *r, const unsigned char *secret, size_t n, int64_t keep_prefix)
{
    unsigned char key[64] = {0}, pad[64];
    memset(r, 0, sizeof *r);
    if (n > 64)
        sha256(secret, n, key);
    else
        memcpy(key, secret, n);
    for (int i = 0; i < 64; i++)
        pad[i] = key[i] ^ 0x36;
    memcpy(r->inner, SHA256_IV, sizeof r->inner);
    sha256_blocks(r->inner, pad, 1);
    for (int i = 0; i < 64; i++)
        pad[i] = key[i] ^ 0x5C;
    memcpy(r->outer, SHA256_IV, sizeof r->outer);
    sha256_blocks(r->outer, pad, 1);
    r->keep_prefix = keep_prefix;
}

/* One block of each of `lanes` states. */
static void
compress_lanes(int lanes, uint32_t h[][8], const unsigned char *const p[])
{
#ifdef SHA_EXTENSIONS
    if (lanes == 2 && sha256_blocks == sha256_shani) {
        uint32_t *const hs[2] = {h[0], h[1]};
        sha256_shani_x2(hs, p);
        return;
    }
#endif
    for (int l = 0; l < lanes; l++)
        sha256_blocks(h[l], p[l], 1);
}

static void
put_be32s(const uint32_t h[8], unsigned char *out)
{
    for (int i = 0; i < 8; i++)
        out[4 * i] = (unsigned char)(h[i] >> 24), out[4 * i + 1] = (unsigned char)(h[i] >> 16),
        out[4 * i + 2] = (unsigned char)(h[i] >> 8), out[4 * i + 3] = (unsigned char)h[i];
}

/* Block j (of `blocks`) of the padded message domain, 0, data[:n] that follows HMAC's key block: a
 * pointer into data where the block lies whole inside it, else built in scratch. */
static const unsigned char *
message_block(size_t j, unsigned char domain, const unsigned char *data, size_t n, size_t blocks,
              unsigned char scratch[64])
{
    size_t start = 64 * j; /* in the message, which is data with the two bytes before it */
    if (start >= 2 && start + 62 <= n)
        return data + start - 2;
    memset(scratch, 0, 64);
    size_t k = 0;
    if (start == 0) {
        scratch[0] = domain;
        k = 2;
    }
    if (start + k - 2 < n) {
        size_t take = n - (start + k - 2) < 64 - k ? n - (start + k - 2) : 64 - k;
        memcpy(scratch + k, data + start + k - 2, take);
    }
    if (n + 2 >= start && n + 2 < start + 64)
        scratch[n + 2 - start] = 0x80;
    if (j == blocks - 1) {
        uint64_t bits = (64 + 2 + (uint64_t)n) * 8; /* the key block counts */
        for (int i = 0; i < 8; i++)
            scratch[63 - i] = (unsigned char)(bits >> (8 * i));
    }
    return scratch;
}

/* Pseudonyms.stream(f.data[:n], m, domain) of `lanes` fields of one n and one m, hashed side by side:
 * the HMAC, then SHA-256 of the MAC and a big-endian counter (1, 2, ...) while more bytes are wanted. */
static void
streams(const Redactor *r, unsigned char domain, int lanes, const Field f[])
{
    uint32_t h[LANES][8];
    unsigned char scratch[LANES][64], mac[LANES][32];
    const unsigned char *p[LANES];
    size_t n = f[0].n, m = f[0].m, blocks = (n + 2 + 9 + 63) / 64;
    for (int l = 0; l < lanes; l++)
        memcpy(h[l], r->inner, sizeof h[l]);
    for (size_t j = 0; j < blocks; j++) {
        for (int l = 0; l < lanes; l++)
            p[l] = message_block(j, domain, f[l].data, n, blocks, scratch[l]);
        compress_lanes(lanes, h, p);
    }
    for (int l = 0; l < lanes; l++) { /* the outer hash: its key block, then the inner digest, padded */
        memset(scratch[l], 0, 64);
        put_be32s(h[l], scratch[l]);
        scratch[l][32] = 0x80;
        scratch[l][62] = (96 * 8) >> 8, scratch[l][63] = (96 * 8) & 0xFF;
        memcpy(h[l], r->outer, sizeof h[l]);
        p[l] = scratch[l];
    }
    compress_lanes(lanes, h, p);
    for (int l = 0; l < lanes; l++) {
        put_be32s(h[l], mac[l]);
        memcpy(f[l].out, mac[l], m < 32 ? m : 32);
        memcpy(scratch[l], mac[l], 32); /* the counter blocks: the MAC, the counter, 36 bytes' padding */
        scratch[l][36] = 0x80;
        scratch[l][62] = (36 * 8) >> 8, scratch[l][63] = (36 * 8) & 0xFF;
    }
    for (uint32_t i = 1; (size_t)i * 32 < m; i++) {
        for (int l = 0; l < lanes; l++) {
            scratch[l][32] = (unsigned char)(i >> 24), scratch[l][33] = (unsigned char)(i >> 16);
            scratch[l][34] = (unsigned char)(i >> 8), scratch[l][35] = (unsigned char)i;
            memcpy(h[l], SHA256_IV, sizeof h[l]);
        }
        compress_lanes(lanes, h, p);
        size_t at = (size_t)i * 32, k = m - at < 32 ? m - at : 32;
        for (int l = 0; l < lanes; l++) {
            put_be32s(h[l], mac[l]);
            memcpy(f[l].out + at, mac[l], k);
        }
    }
}

/* Pseudonyms._bytes' last step: printable ASCII becomes letters and digits (TO_ALNUM's, computed
 * rather than looked up, and no branch a byte, so that the compiler vectorises both loops). */
__attribute__((optimize("O3"))) static void
as_text(const Field *f)
{
    const unsigned char *d = f->data;
    unsigned char *o = f->out, other = 0;
    size_t n = f->n; /* a local: a store to o might otherwise be a store to f->n */
    for (size_t i = 0; i < n; i++)
        other |= (unsigned char)(d[i] - 0x20) > 0x5E;
    if (other)
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)(o[i] % 62);
        o[i] = (unsigned char)(c < 26 ? 'A' + c : c < 52 ? 'a' + c - 26 : '0' + c - 52);
    }
}

/* The fields of one kind waiting, hashed (two of one length side by side) and written. */
static void
hash_fields(Redactor *r, int lanes, const Field f[])
{
    streams(r, 'b', lanes, f);
    for (int l = 0; l < lanes; l++)
        as_text(&f[l]);
}

static void
flush(Redactor *r)
{
    for (int k = 0; k < FIELDS; k++)
        if (r->has_waiting[k]) {
            hash_fields(r, 1, &r->waiting[k]);
            r->has_waiting[k] = 0;
        }
}

/* Pseudonyms.replace(data[:n], field) to out: the prefix rules here; the bytes after them hashed
 * beside the next field of the same kind and length, or alone (at the latest in flush). */
static void
replace(Redactor *r, int field, const unsigned char *data, int64_t n, unsigned char *out)
{
    if (n <= 0) /* null and empty stay */
        return;
    int64_t keep = 0;
    if (field == VALUE) {
        if (r->keep_prefix >= 0) {
            keep = r->keep_prefix < n ? r->keep_prefix : n;
            r->values++;
        }
        else if (n >= SR_PREFIX && data[0] == 0) {
            keep = SR_PREFIX;
            r->values++;
        }
        r->kept += keep;
    }
    r->seen[field]++;
    r->bytes[field] += n - keep;
    if (n == keep)
        return;
    Field f = {data + keep, out + keep, (size_t)(n - keep), (size_t)(n - keep)};
    if (!r->has_waiting[field]) {
        r->waiting[field] = f;
        r->has_waiting[field] = 1;
        return;
    }
    Field *w = &r->waiting[field];
    if (w->n == f.n) {
        Field two[LANES] = {*w, f};
        hash_fields(r, 2, two);
        r->has_waiting[field] = 0;
        return;
    }
    hash_fields(r, 1, w);
    *w = f;
}

static int
header_value(void *ctx, const unsigned char *key, int64_t key_len, const unsigned char *value, int64_t value_len)
{
    Redactor *r = ctx;
    replace(r, HEADER, value, value_len, r->out + (value - r->in));
    return 0;
}

/* (data, counts, kept) as redact_records returns them. */
static PyObject *
tallies(const Redactor *r, PyObject *data)
{
    PyObject *counts = PyDict_New(), *kept = PyDict_New();
    if (counts == NULL || kept == NULL)
        goto fail;
    for (int f = 0; f < FIELDS; f++) {
        if (r->seen[f] == 0)
            continue;
        PyObject *v = PyLong_FromLongLong(r->bytes[f]);
        if (v == NULL || PyDict_SetItemString(counts, FIELD_NAMES[f], v) < 0) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    if (r->values > 0) {
        PyObject *v = PyLong_FromLongLong(r->kept);
        const char *why = r->keep_prefix >= 0 ? "--keep-prefix" : "Schema Registry prefix (magic byte 0, schema id)";
        if (v == NULL || PyDict_SetItemString(kept, why, v) < 0) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    return Py_BuildValue("(ONN)", data, counts, kept);
fail:
    Py_XDECREF(counts);
    Py_XDECREF(kept);
    return NULL;
}

/* redact_v2_records(secret, data, count, keep_prefix) -> (bytes, counts, kept) | None */
PyObject *
redact_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer secret, data;
    Py_ssize_t count, keep_prefix;
    if (!PyArg_ParseTuple(args, "y*y*nn", &secret, &data, &count, &keep_prefix))
        return NULL;
    PyObject *result = NULL, *out = NULL;
    if (secret.len == 0) {
        PyErr_SetString(PyExc_ValueError, "the secret is empty");
        goto done;
    }
    Redactor r;
    redactor_init(&r, secret.buf, (size_t)secret.len, keep_prefix);
    out = PyBytes_FromStringAndSize(data.buf, data.len);
    if (out == NULL)
        goto done;
    r.in = data.buf;
    r.out = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t pos = 0, end = data.len;
    int ok = count >= 0;
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        V2Record rec;
        DataError err = {0};
        if (pos >= end || v2_record(r.in, &pos, end, &rec, header_value, &r, &err) < 0) {
            Py_XDECREF(err.message);
            ok = 0;
            break;
        }
        replace(&r, KEY, r.in + rec.key_pos, rec.key_len, r.out + rec.key_pos);
        replace(&r, VALUE, r.in + rec.value_pos, rec.value_len, r.out + rec.value_pos);
    }
    flush(&r);
    if (!ok || pos != end) { /* not as the reader read it: the caller's slow path tells why */
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = tallies(&r, out);
done:
    Py_XDECREF(out);
    PyBuffer_Release(&secret);
    PyBuffer_Release(&data);
    return result;
}

/* pseudonym_stream(secret, domain, data, n, portable) -> bytes: Pseudonyms.stream, for the tests
 * (portable: the C compression even where the CPU has SHA extensions). */
PyObject *
pseudonym_stream(PyObject *self, PyObject *args)
{
    Py_buffer secret, data;
    unsigned char domain;
    Py_ssize_t n;
    int portable;
    if (!PyArg_ParseTuple(args, "y*by*np", &secret, &domain, &data, &n, &portable))
        return NULL;
    PyObject *out = NULL;
    if (secret.len == 0 || n < 0) {
        PyErr_SetString(PyExc_ValueError, "an empty secret or a negative length");
        goto done;
    }
    Sha256Blocks chosen = sha256_blocks;
    if (portable)
        sha256_blocks = sha256_portable;
    Redactor r;
    redactor_init(&r, secret.buf, (size_t)secret.len, -1);
    out = PyBytes_FromStringAndSize(NULL, n);
    if (out != NULL) {
        Field f = {data.buf, (unsigned char *)PyBytes_AS_STRING(out), (size_t)data.len, (size_t)n};
        streams(&r, domain, 1, &f);
    }
    sha256_blocks = chosen;
done:
    PyBuffer_Release(&secret);
    PyBuffer_Release(&data);
    return out;
}

int
redact_init(PyObject *m)
{
#ifdef SHA_EXTENSIONS
    if (has_sha_extensions())
        sha256_blocks = sha256_shani;
#endif
    return PyModule_AddStringConstant(m, "SHA256_PATH", sha256_blocks == sha256_portable ? "portable" : "sha-ni");
}
