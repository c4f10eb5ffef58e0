/*
 * The compiled twin of wire/recheck.py, the record check `kdump convert` runs on every v2 batch it
 * writes: the batch's records, as written, compared field by field with the Records they must hold,
 * without a Python object per record; the same answer, the index of the first record that differs or
 * -1 (tests/test_recheck_twins.py). Every read is checked against the record's length, which is
 * checked against the end of the records and the buffer. Nothing is allocated from a length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_wire.h"

static PyObject *s_offset, *s_timestamp, *s_stored, *s_key, *s_value, *s_headers;

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

/* Check one field: `test` uses o; 1 goes on, 0 ends with "differs", -1 with the error. */
#define CHECK(rec, name, test)                     \
    do {                                           \
        PyObject *o = PyObject_GetAttr(rec, name); \
        if (o == NULL)                             \
            goto error;                            \
        int same_ = (test);                        \
        Py_DECREF(o);                              \
        if (same_ < 0)                             \
            goto error;                            \
        if (same_ == 0)                            \
            goto differs;                          \
    } while (0)

/* A v2 record read from p[*at:end] (v2_record) and placed: its absolute offset and time. Returns 0,
 * -1 when it does not parse or places an offset or time past int64, -2 with a Python exception set. */
typedef struct {
    V2Record f;
    int64_t offset, timestamp;
} RecordHead;

static int
read_record_head(const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, int64_t base_offset,
                 int64_t base_timestamp, RecordHead *r)
{
    DataError err = {NULL, 0, NULL, 0, 0, 0};
    if (v2_record(p, at, end, &r->f, NULL, NULL, &err) < 0) {
        if (err.message == NULL)
            return -2;
        Py_DECREF(err.message);
        return -1;
    }
    if (__builtin_add_overflow(base_offset, r->f.offset_delta, &r->offset) ||
        __builtin_add_overflow(base_timestamp, r->f.ts_delta, &r->timestamp))
        return -1;
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
                          &log_append_time, &PyTuple_Type, &expected) ||
        view_window(&view, pos, end) < 0)
        return NULL;
    PyObject *headers = NULL, *result = NULL;
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t n = PyTuple_GET_SIZE(expected), i = 0;
    int64_t lat = 0;
    int has_lat = log_append_time != Py_None;
    if (has_lat) {
        lat = PyLong_AsLongLong(log_append_time);
        if (lat == -1 && PyErr_Occurred())
            goto error;
    }
    for (; i < n; i++) {
        PyObject *rec = PyTuple_GET_ITEM(expected, i);
        RecordHead r;
        int rc = read_record_head(p, &pos, end, base_offset, base_timestamp, &r);
        if (rc == -2)
            goto error;
        if (rc < 0)
            goto differs;
        int64_t count = r.f.header_count;
        CHECK(rec, s_offset, same_int(o, r.offset));
        CHECK(rec, s_timestamp, same_int(o, has_lat ? lat : r.timestamp));
        /* Under LogAppendTime the bytes keep a record's own time: storedTimestamp, when it has one. */
        CHECK(rec, s_stored, o == Py_None ? 1 : same_int(o, r.timestamp));
        CHECK(rec, s_key, same_bytes(o, p + r.f.key_pos, r.f.key_len));
        CHECK(rec, s_value, same_bytes(o, p + r.f.value_pos, r.f.value_len));
        headers = PyObject_GetAttr(rec, s_headers);
        if (headers == NULL)
            goto error;
        if (!PyTuple_Check(headers) || PyTuple_GET_SIZE(headers) != count)
            goto differs;
        Py_ssize_t at = r.f.headers_pos; /* the headers are read already: they lie within the record */
        for (int64_t j = 0; j < count; j++) {
            int64_t hk = 0, hv = 0;
            PyObject *h = PyTuple_GET_ITEM(headers, j);
            varint_at(p, &at, r.f.body_end, VARINT_MAX_BYTES, &hk);
            const unsigned char *hkey = p + at;
            at += (Py_ssize_t)hk;
            varint_at(p, &at, r.f.body_end, VARINT_MAX_BYTES, &hv);
            const unsigned char *hvalue = p + at;
            if (hv > 0)
                at += (Py_ssize_t)hv;
            CHECK(h, s_key, same_bytes(o, hkey, hk));
            CHECK(h, s_value, same_bytes(o, hvalue, hv));
        }
        Py_CLEAR(headers);
    }
    if (pos == end)
        i = -1; /* every record matched, and the bytes end there too */
differs:
    result = PyLong_FromSsize_t(i);
error:
    Py_XDECREF(headers);
    PyBuffer_Release(&view);
    return result;
}

/* The v1 inner message at in[*at..len]: its offset, timestamp, key and value (n < 0: null), and *at
 * past it; -1 when it cannot be read (every length checked against the bytes there). Its magic and
 * what follows its value are not looked at: the comparison with the records decides. */
static int
read_inner(const unsigned char *in, Py_ssize_t len, Py_ssize_t *at, LegacyMessage *m)
{
    Py_ssize_t i = *at;
    if (len - i < LOG_OVERHEAD + LEGACY_V1_MIN_SIZE)
        return -1;
    int64_t size = be32(in + i + LEGACY_SIZE_OFFSET);
    if (size < LEGACY_V1_MIN_SIZE || size > len - i - LOG_OVERHEAD)
        return -1;
    Py_ssize_t end = i + LOG_OVERHEAD + (Py_ssize_t)size;
    m->offset = be64(in + i);
    int rc = legacy_body(in, i, end, 1, m);
    if (rc != LEGACY_OK && rc != LEGACY_TRAILING)
        return -1;
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
    PyObject *result = NULL;
    if (check_window(pos, end, view.len) < 0)
        goto done;
    const unsigned char *p = (const unsigned char *)view.buf, *in = (const unsigned char *)inner.buf;
    Py_ssize_t in_len = inner.len, at = 0, i = 0;
    int64_t last = 0, max_ts = INT64_MIN, last_read = INT64_MIN;
    LegacyMessage m;
    RecordHead r;
    /* The inner offsets of a v1 wrapper are relative to the last one, whose absolute offset is the
     * wrapper's (a wrapper offset of 0: base 0). */
    while (at < in_len) {
        if (read_inner(in, in_len, &at, &m) < 0)
            goto differs;
        last = m.offset;
    }
    __int128 base = legacy_relative(1, wrapper_offset) ? (__int128)wrapper_offset - last : 0; /* as Python ints */
    for (at = 0; at < in_len; i++) {
        read_inner(in, in_len, &at, &m);
        int rc = read_record_head(p, &pos, end, base_offset, base_timestamp, &r);
        if (rc == -2)
            goto done;
        int64_t offset = r.offset, own_ts = r.timestamp;
        if (rc < 0 || r.f.attributes != 0 || /* attributes: unused, and the transcoder writes 0 */
            r.f.header_count != 0 || (__int128)offset != base + m.offset || (i > 0 && offset <= last_read) ||
            own_ts != m.timestamp || !same_field(p + r.f.key_pos, r.f.key_len, in + m.key_pos, m.key_len) ||
            !same_field(p + r.f.value_pos, r.f.value_len, in + m.value_pos, m.value_len))
            goto differs;
        if (own_ts > max_ts)
            max_ts = own_ts;
        last_read = offset;
    }
    Py_ssize_t differs_at = pos != end ? i : -1; /* every record matched: the bytes must end there too */
    result = Py_BuildValue("nnLL", differs_at, i, (long long)max_ts, (long long)last_read);
    goto done;
differs:
    result = Py_BuildValue("nnLL", i, i, (long long)max_ts, (long long)last_read);
done:
    PyBuffer_Release(&view);
    PyBuffer_Release(&inner);
    return result;
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
