/*
 * The compiled twin of kdump's hot loop: the records of one v2 batch (DefaultRecord, see _pure.py for
 * the wire schema). It must give exactly what _pure.decode_v2_records gives -- the same records, the
 * same error messages at the same positions -- and tests/test_twins.py checks that it does.
 *
 * Memory safety: every read is checked against the record's own length, which is checked against the
 * end of the batch, which is checked against the buffer. No length from the data sizes an allocation
 * before it has been checked against the bytes that are actually there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *RecordType;  /* kafka_dump.model.Record (a NamedTuple) */
static PyObject *HeaderType;  /* kafka_dump.model.Header */
static PyObject *CorruptRecordError;

/* An error found in the data: its message and position, turned into CorruptRecordError later. */
typedef struct {
    PyObject *message; /* new reference, or NULL when a Python exception is set instead */
    Py_ssize_t position;
} DataError;

#define DATA_ERROR(err, pos, ...)                                  \
    do {                                                           \
        (err)->message = PyUnicode_FromFormat(__VA_ARGS__);        \
        (err)->position = (pos);                                   \
        goto fail;                                                 \
    } while (0)

/* Read a zigzag varint of at most max_bytes that must end before limit (ByteUtils.readVarint/Varlong:
 * bits past 32 or 64 are dropped as Java's shifts drop them). Returns 0, or -1 with err filled. */
static int
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
    if (max_bytes == 5)
        raw &= 0xFFFFFFFFu;
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    *pos = i;
    return 0;
}

/* a + b as a Python int, exact even where int64 would overflow (Python's ints do not). */
static PyObject *
add_i64(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return PyLong_FromLongLong(r);
    PyObject *pa = PyLong_FromLongLong(a), *pb = PyLong_FromLongLong(b), *sum = NULL;
    if (pa && pb)
        sum = PyNumber_Add(pa, pb);
    Py_XDECREF(pa);
    Py_XDECREF(pb);
    return sum;
}

/* tuple.__new__(cls, items): the documented way to build a NamedTuple without calling its __new__. */
static PyObject *
new_namedtuple(PyObject *cls, PyObject *items)
{
    if (items == NULL)
        return NULL;
    PyObject *args = PyTuple_Pack(1, items);
    Py_DECREF(items);
    if (args == NULL)
        return NULL;
    PyObject *obj = PyTuple_Type.tp_new((PyTypeObject *)cls, args, NULL);
    Py_DECREF(args);
    return obj;
}

static PyObject *
read_bytes(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t n)
{
    PyObject *b = PyBytes_FromStringAndSize((const char *)p + *pos, n);
    *pos += n;
    return b;
}

/* The headers of one record; *headers gets a new tuple. Returns 0, or -1 (err filled or exception). */
static int
read_headers(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t body_end, Py_ssize_t start,
             PyObject **headers, DataError *err)
{
    int64_t count, n;
    PyObject *tuple = NULL, *key = NULL, *value = NULL;
    if (read_varint(p, pos, body_end, 5, &count, err) < 0)
        return -1;
    if (count < 0 || count > body_end - *pos)
        DATA_ERROR(err, start, "invalid header count %lld", (long long)count);
    tuple = PyTuple_New((Py_ssize_t)count);
    if (tuple == NULL)
        return -1;
    for (Py_ssize_t j = 0; j < (Py_ssize_t)count; j++) {
        if (read_varint(p, pos, body_end, 5, &n, err) < 0)
            goto fail;
        if (n < 0)
            DATA_ERROR(err, start, "header key is null");
        if (n > body_end - *pos)
            DATA_ERROR(err, start, "header key length %lld runs past the record", (long long)n);
        key = read_bytes(p, pos, (Py_ssize_t)n);
        if (key == NULL)
            goto fail;
        if (read_varint(p, pos, body_end, 5, &n, err) < 0)
            goto fail;
        if (n < 0) {
            value = Py_NewRef(Py_None);
        }
        else {
            if (n > body_end - *pos)
                DATA_ERROR(err, start, "header value length %lld runs past the record", (long long)n);
            value = read_bytes(p, pos, (Py_ssize_t)n);
            if (value == NULL)
                goto fail;
        }
        PyObject *header = new_namedtuple(HeaderType, PyTuple_Pack(2, key, value));
        Py_CLEAR(key);
        Py_CLEAR(value);
        if (header == NULL)
            goto fail;
        PyTuple_SET_ITEM(tuple, j, header);
    }
    *headers = tuple;
    return 0;
fail:
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(tuple);
    return -1;
}

/* One-byte varints, the common case, without a call. */
#define FAST_VARINT(limit, max_bytes, out)                                        \
    do {                                                                          \
        if (pos < (limit) && p[pos] < 0x80) {                                     \
            unsigned char b_ = p[pos++];                                          \
            (out) = (int64_t)(b_ >> 1) ^ -(int64_t)(b_ & 1);                      \
        }                                                                         \
        else if (read_varint(p, &pos, (limit), (max_bytes), &(out), &err) < 0) { \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

static PyObject *
decode_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count, base_offset, base_timestamp, base_sequence;
    PyObject *log_append_time;
    if (!PyArg_ParseTuple(args, "y*nnLLLOL", &view, &pos, &end, &count, &base_offset, &base_timestamp,
                          &log_append_time, &base_sequence))
        return NULL;
    if (pos < 0 || end < pos || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    DataError err = {NULL, 0};
    PyObject *records = PyList_New(0), *key = NULL, *value = NULL, *headers = NULL, *result = NULL;
    if (records == NULL)
        goto done;
    for (long long i = 0; i < count; i++) {
        Py_ssize_t start = pos;
        int64_t length, ts_delta, offset_delta, n;
        if (pos >= end)
            DATA_ERROR(&err, pos, "batch declares %lld records but holds %lld", count, i);
        FAST_VARINT(end, 5, length);
        Py_ssize_t body_end = pos + (Py_ssize_t)length;
        if (length < 6 || length > end - pos)
            DATA_ERROR(&err, start, "record length %lld does not fit the batch", (long long)length);
        pos += 1; /* attributes: unused */
        FAST_VARINT(body_end, 10, ts_delta);
        FAST_VARINT(body_end, 5, offset_delta);
        FAST_VARINT(body_end, 5, n);
        if (n < 0) {
            key = Py_NewRef(Py_None);
        }
        else {
            if (n > body_end - pos)
                DATA_ERROR(&err, start, "key length %lld runs past the record", (long long)n);
            if ((key = read_bytes(p, &pos, (Py_ssize_t)n)) == NULL)
                goto fail;
        }
        FAST_VARINT(body_end, 5, n);
        if (n < 0) {
            value = Py_NewRef(Py_None);
        }
        else {
            if (n > body_end - pos)
                DATA_ERROR(&err, start, "value length %lld runs past the record", (long long)n);
            if ((value = read_bytes(p, &pos, (Py_ssize_t)n)) == NULL)
                goto fail;
        }
        if (pos < body_end && p[pos] == 0) {
            headers = PyTuple_New(0);
            pos += 1;
        }
        else if (read_headers(p, &pos, body_end, start, &headers, &err) < 0) {
            goto fail;
        }
        if (headers == NULL)
            goto fail;
        if (pos != body_end)
            DATA_ERROR(&err, start, "record declares %lld bytes but its fields take %lld", (long long)length,
                       (long long)(length + pos - body_end));
        int64_t sequence = -1;
        if (base_sequence >= 0) {
            sequence = base_sequence + offset_delta;
            if (sequence >= ((int64_t)1 << 31))
                sequence -= ((int64_t)1 << 31);
        }
        PyObject *offset_obj = add_i64(base_offset, offset_delta);
        PyObject *ts_obj = log_append_time == Py_None ? add_i64(base_timestamp, ts_delta)
                                                      : Py_NewRef(log_append_time);
        PyObject *seq_obj = PyLong_FromLongLong(sequence);
        PyObject *size_obj = PyLong_FromSsize_t(body_end - start);
        PyObject *items = NULL;
        if (offset_obj && ts_obj && seq_obj && size_obj) {
            items = PyTuple_New(10);
            if (items) {
                PyTuple_SET_ITEM(items, 0, offset_obj);
                PyTuple_SET_ITEM(items, 1, ts_obj);
                PyTuple_SET_ITEM(items, 2, key);
                PyTuple_SET_ITEM(items, 3, value);
                PyTuple_SET_ITEM(items, 4, headers);
                PyTuple_SET_ITEM(items, 5, seq_obj);
                PyTuple_SET_ITEM(items, 6, size_obj);
                PyTuple_SET_ITEM(items, 7, Py_NewRef(Py_None));
                PyTuple_SET_ITEM(items, 8, Py_NewRef(Py_None));
                PyTuple_SET_ITEM(items, 9, Py_NewRef(Py_None));
                key = value = headers = NULL; /* now owned by items */
            }
        }
        if (items == NULL) {
            Py_XDECREF(offset_obj);
            Py_XDECREF(ts_obj);
            Py_XDECREF(seq_obj);
            Py_XDECREF(size_obj);
            goto fail;
        }
        PyObject *record = new_namedtuple(RecordType, items);
        if (record == NULL)
            goto fail;
        int appended = PyList_Append(records, record);
        Py_DECREF(record);
        if (appended < 0)
            goto fail;
    }
    if (pos != end)
        DATA_ERROR(&err, pos, "%lld bytes remain after the batch's %lld declared records",
                   (long long)(end - pos), count);
    result = Py_BuildValue("(OO)", records, Py_None);
    goto done;

fail:
    Py_CLEAR(key);
    Py_CLEAR(value);
    Py_CLEAR(headers);
    if (err.message != NULL && records != NULL) {
        PyObject *eargs = PyTuple_Pack(1, err.message);
        PyObject *kwargs = Py_BuildValue("{s:n}", "position", err.position);
        PyObject *exc = (eargs && kwargs) ? PyObject_Call(CorruptRecordError, eargs, kwargs) : NULL;
        Py_XDECREF(eargs);
        Py_XDECREF(kwargs);
        if (exc != NULL) {
            result = Py_BuildValue("(OO)", records, exc);
            Py_DECREF(exc);
        }
    }
done:
    Py_XDECREF(err.message);
    Py_XDECREF(records);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"decode_v2_records", decode_v2_records, METH_VARARGS,
     "decode_v2_records(data, pos, end, count, base_offset, base_timestamp, log_append_time, base_sequence)\n"
     "-> (records, error or None); the compiled twin of kafka_dump.format._pure.decode_v2_records."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods};

static PyObject *
import_attr(const char *module_name, const char *name)
{
    PyObject *mod = PyImport_ImportModule(module_name);
    if (mod == NULL)
        return NULL;
    PyObject *attr = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    return attr;
}

PyMODINIT_FUNC
PyInit__speedups(void)
{
    RecordType = import_attr("kafka_dump.model", "Record");
    HeaderType = import_attr("kafka_dump.model", "Header");
    CorruptRecordError = import_attr("kafka_dump.errors", "CorruptRecordError");
    if (!RecordType || !HeaderType || !CorruptRecordError)
        return NULL;
    return PyModule_Create(&module);
}
