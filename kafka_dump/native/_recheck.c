/*
 * The compiled twin of the record check that `kdump convert` runs on every v2 batch it writes
 * (_recheck_pure.py is the reference): the records of the batch, as written, are compared with the
 * Records they must hold, field by field, without building a Python object per record. It must give
 * exactly what _recheck_pure gives (the index of the first record that differs, or -1), and
 * tests/test_recheck_twins.py checks that.
 *
 * Memory safety: every read is checked against the record's own length, which is checked against
 * the end of the records, which is checked against the buffer. Nothing is allocated from a length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *s_offset, *s_timestamp, *s_stored, *s_key, *s_value, *s_headers;

/* A zigzag varint of at most max_bytes that must end before limit, as ByteUtils.readVarint/Varlong
 * (bits past 32 or 64 are dropped, as Java's shifts drop them). Returns 0, or -1. */
static int
read_varint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int64_t *out)
{
    uint64_t raw = 0;
    int shift = 0;
    Py_ssize_t start = *pos, i = *pos;
    for (;;) {
        if (i >= limit || i - start >= max_bytes)
            return -1;
        unsigned char b = p[i++];
        if (shift < 64)
            raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80)
            break;
        shift += 7;
    }
    if (max_bytes == 5)
        raw &= 0xFFFFFFFFu;
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    *pos = i;
    return 0;
}

/* 1 when obj is None (n < 0) or the bytes at[0:n], else 0. */
static int
same_bytes(PyObject *obj, const unsigned char *at, int64_t n)
{
    if (n < 0)
        return obj == Py_None;
    if (!PyBytes_Check(obj) || PyBytes_GET_SIZE(obj) != n)
        return 0;
    return n == 0 || memcmp(PyBytes_AS_STRING(obj), at, (size_t)n) == 0;
}

/* 1 when obj is an int equal to v, 0 when not, -1 on an error. */
static int
same_int(PyObject *obj, int64_t v)
{
    if (!PyLong_Check(obj))
        return 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    return !overflow && x == (long long)v;
}

/* The attribute name of rec, as a new reference (NULL with an exception set). */
#define GET(rec, name) PyObject_GetAttr((rec), (name))

/* Check one field: `test` uses o; 1 goes on, 0 ends with "differs", -1 with the error. */
#define CHECK(rec, name, test)          \
    do {                                \
        PyObject *o = GET(rec, name);   \
        if (o == NULL)                  \
            goto error;                 \
        int same_ = (test);             \
        Py_DECREF(o);                   \
        if (same_ < 0)                  \
            goto error;                 \
        if (same_ == 0)                 \
            goto differs;               \
    } while (0)

/* A v2 record's fields up to its header count, read from p[*at:end]; -1 when they do not parse, do
 * not fit in the record, or place an offset or time past int64. */
typedef struct {
    Py_ssize_t body_end;
    int attributes;
    int64_t offset, timestamp, key_len, value_len, count;
    const unsigned char *key, *value;
} RecordHead;

static int
read_record_head(const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, int64_t base_offset,
                 int64_t base_timestamp, RecordHead *r)
{
    Py_ssize_t pos = *at;
    int64_t length, ts_delta, offset_delta;
    if (read_varint(p, &pos, end, 5, &length) < 0 || length < 1 || length > end - pos)
        return -1;
    Py_ssize_t body_end = r->body_end = pos + (Py_ssize_t)length;
    r->attributes = p[pos++];
    if (read_varint(p, &pos, body_end, 10, &ts_delta) < 0 || read_varint(p, &pos, body_end, 5, &offset_delta) < 0 ||
        __builtin_add_overflow(base_offset, offset_delta, &r->offset) ||
        __builtin_add_overflow(base_timestamp, ts_delta, &r->timestamp))
        return -1;
    if (read_varint(p, &pos, body_end, 5, &r->key_len) < 0 || r->key_len > body_end - pos)
        return -1;
    r->key = p + pos;
    if (r->key_len > 0)
        pos += (Py_ssize_t)r->key_len;
    if (read_varint(p, &pos, body_end, 5, &r->value_len) < 0 || r->value_len > body_end - pos)
        return -1;
    r->value = p + pos;
    if (r->value_len > 0)
        pos += (Py_ssize_t)r->value_len;
    if (read_varint(p, &pos, body_end, 5, &r->count) < 0)
        return -1;
    *at = pos;
    return 0;
}

PyObject *
same_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end;
    long long base_offset, base_timestamp;
    PyObject *log_append_time, *expected;
    if (!PyArg_ParseTuple(args, "y*nnLLOO!", &view, &pos, &end, &base_offset, &base_timestamp,
                          &log_append_time, &PyTuple_Type, &expected))
        return NULL;
    if (pos < 0 || end < pos || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        return NULL;
    }
    int64_t lat = 0;
    int has_lat = log_append_time != Py_None;
    if (has_lat) {
        lat = PyLong_AsLongLong(log_append_time);
        if (lat == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t n = PyTuple_GET_SIZE(expected), i = 0;
    for (; i < n; i++) {
        PyObject *rec = PyTuple_GET_ITEM(expected, i);
        RecordHead r;
        if (read_record_head(p, &pos, end, base_offset, base_timestamp, &r) < 0)
            goto differs;
        Py_ssize_t body_end = r.body_end;
        int64_t offset = r.offset, own_ts = r.timestamp, count = r.count;
        const unsigned char *key = r.key, *value = r.value;
        int64_t key_len = r.key_len, value_len = r.value_len;
        if (count < 0 || count > body_end - pos)
            goto differs;
        CHECK(rec, s_offset, same_int(o, offset));
        CHECK(rec, s_timestamp, same_int(o, has_lat ? lat : own_ts));
        /* Under LogAppendTime the bytes keep a record's own time: storedTimestamp, when it has one. */
        CHECK(rec, s_stored, o == Py_None ? 1 : same_int(o, own_ts));
        CHECK(rec, s_key, same_bytes(o, key, key_len));
        CHECK(rec, s_value, same_bytes(o, value, value_len));
        PyObject *headers = GET(rec, s_headers);
        if (headers == NULL)
            goto error;
        if (!PyTuple_Check(headers) || PyTuple_GET_SIZE(headers) != count) {
            Py_DECREF(headers);
            goto differs;
        }
        for (int64_t j = 0; j < count; j++) {
            int64_t hk, hv;
            PyObject *h = PyTuple_GET_ITEM(headers, j);
            if (read_varint(p, &pos, body_end, 5, &hk) < 0 || hk < 0 || hk > body_end - pos) {
                Py_DECREF(headers);
                goto differs;
            }
            const unsigned char *hkey = p + pos;
            pos += (Py_ssize_t)hk;
            if (read_varint(p, &pos, body_end, 5, &hv) < 0 || hv > body_end - pos) {
                Py_DECREF(headers);
                goto differs;
            }
            const unsigned char *hvalue = p + pos;
            if (hv > 0)
                pos += (Py_ssize_t)hv;
            PyObject *o = GET(h, s_key);
            if (o == NULL) {
                Py_DECREF(headers);
                goto error;
            }
            int same = same_bytes(o, hkey, hk);
            Py_DECREF(o);
            if (same) {
                o = GET(h, s_value);
                if (o == NULL) {
                    Py_DECREF(headers);
                    goto error;
                }
                same = same_bytes(o, hvalue, hv);
                Py_DECREF(o);
            }
            if (!same) {
                Py_DECREF(headers);
                goto differs;
            }
        }
        Py_DECREF(headers);
        if (pos != body_end)
            goto differs;
    }
    PyBuffer_Release(&view);
    /* Every record matched: the bytes must end there too. */
    return PyLong_FromSsize_t(pos == end ? -1 : n);
differs:
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(i);
error:
    PyBuffer_Release(&view);
    return NULL;
}

static inline int64_t
get_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return n == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
}

/* The v1 inner message at in[*at..len]: its offset, timestamp, key and value (n < 0: null), and *at
 * past it; -1 when it cannot be read (every length checked against the bytes there). */
static int
read_inner(const unsigned char *in, Py_ssize_t len, Py_ssize_t *at, int64_t *offset, int64_t *ts,
           const unsigned char **key, int64_t *key_len, const unsigned char **value, int64_t *value_len)
{
    Py_ssize_t i = *at;
    if (len - i < 12 + 22)
        return -1;
    int64_t size = get_be(in + i + 8, 4);
    if (size < 22 || size > len - i - 12)
        return -1;
    Py_ssize_t end = i + 12 + (Py_ssize_t)size;
    *offset = get_be(in + i, 8);
    *ts = get_be(in + i + 18, 8);
    Py_ssize_t q = i + 26;
    *key_len = get_be(in + q, 4);
    q += 4;
    if (*key_len > end - q)
        return -1;
    *key = in + q;
    q += *key_len > 0 ? (Py_ssize_t)*key_len : 0;
    if (end - q < 4)
        return -1;
    *value_len = get_be(in + q, 4);
    q += 4;
    if (*value_len > end - q)
        return -1;
    *value = in + q;
    *at = end;
    return 0;
}

/* 1 when a[0:an] (null when an < 0) is b[0:bn] (null when bn < 0). */
static int
same_field(const unsigned char *a, int64_t an, const unsigned char *b, int64_t bn)
{
    if (an < 0 || bn < 0)
        return an < 0 && bn < 0;
    return an == bn && (an == 0 || memcmp(a, b, (size_t)an) == 0);
}

PyObject *
same_as_v1_inner(PyObject *self, PyObject *args)
{
    Py_buffer view, inner;
    Py_ssize_t pos, end;
    long long base_offset, base_timestamp, wrapper_offset;
    if (!PyArg_ParseTuple(args, "y*nnLLy*L", &view, &pos, &end, &base_offset, &base_timestamp, &inner,
                          &wrapper_offset))
        return NULL;
    if (pos < 0 || end < pos || end > view.len) {
        PyBuffer_Release(&view);
        PyBuffer_Release(&inner);
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf, *in = (const unsigned char *)inner.buf;
    Py_ssize_t in_len = inner.len, at = 0, i = 0;
    int64_t off, ts, kl, vl, last = 0, max_ts = INT64_MIN, last_read = INT64_MIN;
    const unsigned char *k, *v;
    /* The inner offsets of a v1 wrapper are relative to the last one, whose absolute offset is the
     * wrapper's (a wrapper offset of 0: base 0). */
    while (at < in_len) {
        if (read_inner(in, in_len, &at, &off, &ts, &k, &kl, &v, &vl) < 0)
            goto differs;
        last = off;
    }
    __int128 base = wrapper_offset != 0 ? (__int128)wrapper_offset - last : 0; /* as Python ints would */
    for (at = 0; at < in_len; i++) {
        read_inner(in, in_len, &at, &off, &ts, &k, &kl, &v, &vl);
        RecordHead r;
        if (read_record_head(p, &pos, end, base_offset, base_timestamp, &r) < 0 ||
            r.attributes != 0) /* attributes: unused, and the transcoder writes 0 */
            goto differs;
        Py_ssize_t body_end = r.body_end;
        int64_t offset = r.offset, own_ts = r.timestamp, count = r.count;
        const unsigned char *key = r.key, *value = r.value;
        int64_t key_len = r.key_len, value_len = r.value_len;
        if (count != 0 || pos != body_end || (__int128)offset != base + off || (i > 0 && offset <= last_read) ||
            own_ts != ts || !same_field(key, key_len, k, kl) || !same_field(value, value_len, v, vl))
            goto differs;
        if (own_ts > max_ts)
            max_ts = own_ts;
        last_read = offset;
    }
    PyBuffer_Release(&view);
    PyBuffer_Release(&inner);
    return Py_BuildValue("nnLL", pos != end ? i : (Py_ssize_t)-1, i, (long long)max_ts, (long long)last_read);
differs:
    PyBuffer_Release(&view);
    PyBuffer_Release(&inner);
    return Py_BuildValue("nnLL", i, i, (long long)max_ts, (long long)last_read);
}

int
recheck_init(PyObject *m)
{
    if (!(s_offset = PyUnicode_InternFromString("offset")) ||
        !(s_timestamp = PyUnicode_InternFromString("timestamp")) ||
        !(s_stored = PyUnicode_InternFromString("storedTimestamp")) ||
        !(s_key = PyUnicode_InternFromString("key")) || !(s_value = PyUnicode_InternFromString("value")) ||
        !(s_headers = PyUnicode_InternFromString("headers")))
        return -1;
    return 0;
}
