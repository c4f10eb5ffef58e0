/*
 * The compiled twin of the validating record walk (_walk_pure.py is the reference): the records of
 * one v2 batch are walked, their framing and order checked, and counted, without building any
 * Python object per record. It must give exactly what _walk_pure gives -- the same counts, the same
 * first error with the same reason at the same position -- and tests/test_walk_twins.py checks it.
 *
 * Memory safety: every read is checked against the record's own length, which is checked against
 * the end of the records, which is checked against the buffer. Nothing is allocated from a length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct {
    const char *format; /* NULL: no error */
    long long a, b;     /* the numbers the reason names */
    Py_ssize_t position;
} WalkError;

/* A zigzag varint of at most max_bytes that must end before limit, as ByteUtils.readVarint/Varlong
 * (bits past 32 or 64 are dropped as Java's shifts drop them). Returns 0, or -1 with err set. */
static int
read_varint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int64_t *out,
            WalkError *err)
{
    uint64_t raw = 0;
    int shift = 0;
    Py_ssize_t start = *pos, i = *pos;
    for (;;) {
        if (i >= limit) {
            err->format = "varint runs past the end of its record";
            return -1;
        }
        if (i - start >= max_bytes) {
            err->format = "varint longer than %lld bytes";
            err->a = max_bytes;
            return -1;
        }
        unsigned char b = p[i++];
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

/* Read one varint into out, or fail the record (errors inside a record point at its start). */
#define VARINT(limit, max_bytes, out)                                                  \
    do {                                                                               \
        if (pos < (limit) && p[pos] < 0x80) {                                          \
            unsigned char b_ = p[pos++];                                               \
            (out) = (int64_t)(b_ >> 1) ^ -(int64_t)(b_ & 1);                           \
        }                                                                              \
        else if (read_varint(p, &pos, (limit), (max_bytes), &(out), &err) < 0) {       \
            err.position = start;                                                      \
            goto fail;                                                                 \
        }                                                                              \
    } while (0)

#define FAIL(where, fmt, x, y)  \
    do {                        \
        err.format = (fmt);     \
        err.a = (x);            \
        err.b = (y);            \
        err.position = (where); \
        goto fail;              \
    } while (0)

static PyObject *
walk_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count, last_offset_delta;
    if (!PyArg_ParseTuple(args, "y*nnLL", &view, &pos, &end, &count, &last_offset_delta))
        return NULL;
    if (pos < 0 || end < pos || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    WalkError err = {NULL, 0, 0, 0};
    long long i = 0, keys = 0, values = 0, header_bytes = 0, null_keys = 0, null_values = 0, headers = 0;
    int64_t max_ts = 0, previous = -1;
    int have_ts = 0;
    Py_ssize_t first = pos;
    for (; i < count; i++) {
        Py_ssize_t start = pos;
        int64_t length, ts_delta, offset_delta, key, value, h, n;
        long long record_header_bytes = 0;
        if (pos >= end)
            FAIL(first, "batch declares %lld records but holds %lld", count, i);
        VARINT(end, 5, length);
        if (length < 6 || length > end - pos)
            FAIL(start, "record length %lld does not fit the batch", (long long)length, 0);
        Py_ssize_t body_end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes: unused */
        VARINT(body_end, 10, ts_delta);
        VARINT(body_end, 5, offset_delta);
        VARINT(body_end, 5, key);
        if (key > body_end - pos)
            FAIL(start, "key length %lld runs past the record", (long long)key, 0);
        if (key > 0)
            pos += (Py_ssize_t)key;
        VARINT(body_end, 5, value);
        if (value > body_end - pos)
            FAIL(start, "value length %lld runs past the record", (long long)value, 0);
        if (value > 0)
            pos += (Py_ssize_t)value;
        VARINT(body_end, 5, h);
        if (h < 0 || h > body_end - pos)
            FAIL(start, "invalid header count %lld", (long long)h, 0);
        for (int64_t j = 0; j < h; j++) {
            VARINT(body_end, 5, n);
            if (n < 0)
                FAIL(start, "header key is null", 0, 0);
            if (n > body_end - pos)
                FAIL(start, "header key length %lld runs past the record", (long long)n, 0);
            record_header_bytes += n;
            pos += (Py_ssize_t)n;
            VARINT(body_end, 5, n);
            if (n > body_end - pos)
                FAIL(start, "header value length %lld runs past the record", (long long)n, 0);
            if (n > 0) {
                record_header_bytes += n;
                pos += (Py_ssize_t)n;
            }
        }
        if (pos != body_end)
            FAIL(start, "record declares %lld bytes but its fields take %lld", (long long)length,
                 (long long)(length + pos - body_end));
        if (offset_delta <= previous)
            FAIL(start, "record offset delta %lld is not above the previous one (%lld)", (long long)offset_delta,
                 (long long)previous);
        if (offset_delta > last_offset_delta)
            FAIL(start, "record offset delta %lld is past the batch's lastOffsetDelta %lld",
                 (long long)offset_delta, last_offset_delta);
        previous = offset_delta;
        if (key < 0)
            null_keys++;
        else
            keys += key;
        if (value < 0)
            null_values++;
        else
            values += value;
        header_bytes += record_header_bytes;
        headers += h;
        if (!have_ts || ts_delta > max_ts) {
            max_ts = ts_delta;
            have_ts = 1;
        }
    }
    if (pos != end)
        FAIL(pos, "%lld bytes remain after the batch's %lld declared records", (long long)(end - pos), count);

fail:
    PyBuffer_Release(&view);
    PyObject *ts = have_ts ? PyLong_FromLongLong(max_ts) : Py_NewRef(Py_None);
    if (ts == NULL)
        return NULL;
    PyObject *reason = Py_None;
    Py_INCREF(reason);
    if (err.format != NULL) {
        Py_DECREF(reason);
        reason = PyUnicode_FromFormat(err.format, err.a, err.b);
        if (reason == NULL) {
            Py_DECREF(ts);
            return NULL;
        }
    }
    PyObject *result = Py_BuildValue("(LLLLLLLNNn)", i, keys, values, header_bytes, null_keys, null_values,
                                     headers, ts, reason, err.format != NULL ? err.position : (Py_ssize_t)0);
    return result;
}

static PyMethodDef methods[] = {
    {"walk_v2_records", walk_v2_records, METH_VARARGS,
     "walk_v2_records(data, pos, end, count, last_offset_delta) -> (records, keyBytes, valueBytes, "
     "headerBytes, nullKeys, nullValues, headers, maxTimestampDelta, error, errorPosition)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_walk", "Compiled twin of kafka_dump.format._walk_pure.", -1, methods, NULL, NULL, NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__walk(void)
{
    return PyModule_Create(&module);
}
