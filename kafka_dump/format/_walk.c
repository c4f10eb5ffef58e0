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

#include "_layout.h"
#include "_wire.h"

/* Read one varint into out, or fail the record (errors inside a record point at its start). */
#define VARINT(limit, max_bytes, out)                                                  \
    do {                                                                               \
        if (pos < (limit) && p[pos] < 0x80) {                                          \
            unsigned char b_ = p[pos++];                                               \
            (out) = (int64_t)(b_ >> 1) ^ -(int64_t)(b_ & 1);                           \
        }                                                                              \
        else if (read_varint(p, &pos, (limit), (max_bytes), &(out), &err) < 0) {       \
            err.position = start;                                                      \
            failed = 1;                                                                \
            goto fail;                                                                 \
        }                                                                              \
    } while (0)

/* Fail the walk with a reason at a position (DATA_ERROR jumps to fail). */
#define FAIL(where, ...)                         \
    do {                                         \
        failed = 1;                              \
        DATA_ERROR(&err, (where), __VA_ARGS__);  \
    } while (0)

static PyObject *
walk_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count, last_offset_delta;
    if (!PyArg_ParseTuple(args, "y*nnLL", &view, &pos, &end, &count, &last_offset_delta))
        return NULL;
    if (check_window(pos, end, view.len) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    DataError err = {NULL, 0};
    int failed = 0;
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
        VARINT(end, VARINT_MAX_BYTES, length);
        if (length < V2_RECORD_MIN_LENGTH || length > end - pos)
            FAIL(start, "record length %lld does not fit the batch", (long long)length);
        Py_ssize_t body_end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes: unused */
        VARINT(body_end, VARLONG_MAX_BYTES, ts_delta);
        VARINT(body_end, VARINT_MAX_BYTES, offset_delta);
        VARINT(body_end, VARINT_MAX_BYTES, key);
        if (key > body_end - pos)
            FAIL(start, "key length %lld runs past the record", (long long)key);
        if (key > 0)
            pos += (Py_ssize_t)key;
        VARINT(body_end, VARINT_MAX_BYTES, value);
        if (value > body_end - pos)
            FAIL(start, "value length %lld runs past the record", (long long)value);
        if (value > 0)
            pos += (Py_ssize_t)value;
        VARINT(body_end, VARINT_MAX_BYTES, h);
        if (h < 0 || h > body_end - pos)
            FAIL(start, "invalid header count %lld", (long long)h);
        for (int64_t j = 0; j < h; j++) {
            VARINT(body_end, VARINT_MAX_BYTES, n);
            if (n < 0)
                FAIL(start, "header key is null");
            if (n > body_end - pos)
                FAIL(start, "header key length %lld runs past the record", (long long)n);
            record_header_bytes += n;
            pos += (Py_ssize_t)n;
            VARINT(body_end, VARINT_MAX_BYTES, n);
            if (n > body_end - pos)
                FAIL(start, "header value length %lld runs past the record", (long long)n);
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
    if (failed && err.message == NULL)
        return NULL; /* the reason could not be built: a Python exception is set */
    PyObject *ts = have_ts ? PyLong_FromLongLong(max_ts) : Py_NewRef(Py_None);
    if (ts == NULL) {
        Py_XDECREF(err.message);
        return NULL;
    }
    PyObject *reason = failed ? err.message : Py_NewRef(Py_None);
    return Py_BuildValue("(LLLLLLLNNn)", i, keys, values, header_bytes, null_keys, null_values, headers, ts, reason,
                         failed ? err.position : (Py_ssize_t)0);
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
