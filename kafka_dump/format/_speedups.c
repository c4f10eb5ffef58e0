/*
 * The compiled twin of kdump's hot loops: the records of one v2 batch (DefaultRecord) and the inner
 * messages of a v0/v1 wrapper (LegacyRecord); see _pure.py for both. It must give exactly what _pure
 * gives -- the same records, the same error messages at the same positions -- and
 * tests/test_twins.py checks that it does.
 *
 * Memory safety: every read is checked against the record's own length, which is checked against the
 * end of the batch, which is checked against the buffer. No length from the data sizes an allocation
 * before it has been checked against the bytes that are actually there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "_layout.h"

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
    if (max_bytes == VARINT_MAX_BYTES) /* an int32: bits past 32 dropped */
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

/* Records, headers and header tuples hold only ints, bytes, None and untracked objects like
 * themselves: they can never be part of a reference cycle, so the cycle collector need not track
 * them. Without this, a million records cost a third of the decoding time in collections that find
 * nothing (CPython untracks such plain tuples itself, but only later, and never class instances). */
static void
untrack_if_atomic(PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (PyObject_IS_GC(item) && PyObject_GC_IsTracked(item))
            return;
    }
    if (PyObject_GC_IsTracked(tuple))
        PyObject_GC_UnTrack(tuple);
}

/* kafka_dump.model.Record is a frozen, slotted dataclass. Its slots are filled directly, at the
 * offsets its member descriptors give, as object.__new__ plus the slot setters would (the decoders'
 * pure twin does exactly that); the frozen __init__ is skipped. */
#define RECORD_FIELDS 11
static const char *record_fields[RECORD_FIELDS] = {"offset",   "timestamp", "key",      "value",
                                                   "headers",  "sequence",  "sizeInBytes", "crc",
                                                   "crcValid", "control",   "storedTimestamp"};
static Py_ssize_t record_offsets[RECORD_FIELDS];

/* The offsets of a slotted class's fields, from its member descriptors. */
static int
slot_offsets(PyObject *cls, const char **names, int n, Py_ssize_t *offsets)
{
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyObject_GetAttrString(cls, names[i]);
        if (descr == NULL)
            return -1;
        int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
                 ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX;
        if (ok)
            offsets[i] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
        if (!ok) {
            PyErr_Format(PyExc_ImportError, "kafka_dump.model field %s is not a slot", names[i]);
            return -1;
        }
    }
    return 0;
}

static const char *header_fields[2] = {"key", "value"};
static Py_ssize_t header_offsets[2];

#define RECORD_SLOT(obj, i) (*(PyObject **)((char *)(obj) + record_offsets[i]))

/* An instance of a slotted class from n new references (stolen; any may be NULL after a failed
 * allocation, and then all are released and NULL is returned). */
static PyObject *
new_slotted(PyObject *cls, const Py_ssize_t *offsets, int n, PyObject **vals)
{
    int atomic = 1;
    for (int i = 0; i < n; i++) {
        if (vals[i] == NULL) {
            for (int j = 0; j < n; j++)
                Py_XDECREF(vals[j]);
            return NULL;
        }
        if (PyObject_IS_GC(vals[i]) && PyObject_GC_IsTracked(vals[i]))
            atomic = 0;
    }
    PyObject *obj = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (obj == NULL) {
        for (int j = 0; j < n; j++)
            Py_DECREF(vals[j]);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        *(PyObject **)((char *)obj + offsets[i]) = vals[i];
    if (atomic && PyObject_GC_IsTracked(obj))
        PyObject_GC_UnTrack(obj); /* ints, bytes, None and untracked objects: it can be in no cycle */
    return obj;
}

static PyObject *
new_record(PyObject **vals)
{
    return new_slotted(RecordType, record_offsets, RECORD_FIELDS, vals);
}

static PyObject *
read_bytes(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t n)
{
    PyObject *b = PyBytes_FromStringAndSize((const char *)p + *pos, n);
    *pos += n;
    return b;
}

/* A key or a value whose length n was just read: None when negative, else the next n bytes, which
 * must lie within the record. Returns 0, or -1 with err filled (or an exception set). */
static int
read_nullable(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t body_end, int64_t n, Py_ssize_t start,
              const char *what, PyObject **out, DataError *err)
{
    if (n < 0) {
        *out = Py_NewRef(Py_None);
        return 0;
    }
    if (n > body_end - *pos) {
        err->message = PyUnicode_FromFormat("%s length %lld runs past the record", what, (long long)n);
        err->position = start;
        return -1;
    }
    *out = read_bytes(p, pos, (Py_ssize_t)n);
    return *out == NULL ? -1 : 0;
}

/* The headers of one record; *headers gets a new tuple. Returns 0, or -1 (err filled or exception). */
static int
read_headers(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t body_end, Py_ssize_t start,
             PyObject **headers, DataError *err)
{
    int64_t count, n;
    PyObject *tuple = NULL, *key = NULL, *value = NULL;
    if (read_varint(p, pos, body_end, VARINT_MAX_BYTES, &count, err) < 0)
        return -1;
    if (count < 0 || count > body_end - *pos)
        DATA_ERROR(err, start, "invalid header count %lld", (long long)count);
    tuple = PyTuple_New((Py_ssize_t)count);
    if (tuple == NULL)
        return -1;
    for (Py_ssize_t j = 0; j < (Py_ssize_t)count; j++) {
        if (read_varint(p, pos, body_end, VARINT_MAX_BYTES, &n, err) < 0)
            goto fail;
        if (n < 0)
            DATA_ERROR(err, start, "header key is null");
        if (read_nullable(p, pos, body_end, n, start, "header key", &key, err) < 0 ||
            read_varint(p, pos, body_end, VARINT_MAX_BYTES, &n, err) < 0 ||
            read_nullable(p, pos, body_end, n, start, "header value", &value, err) < 0)
            goto fail;
        PyObject *pair[2] = {key, value};
        key = value = NULL; /* stolen */
        PyObject *header = new_slotted(HeaderType, header_offsets, 2, pair);
        if (header == NULL)
            goto fail;
        PyTuple_SET_ITEM(tuple, j, header);
    }
    untrack_if_atomic(tuple);
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
            err.position = start; /* errors inside a record point at its start */ \
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
    Py_ssize_t first = pos;
    for (long long i = 0; i < count; i++) {
        Py_ssize_t start = pos;
        int64_t length, ts_delta, offset_delta, n;
        if (pos >= end) /* at the start of the records: the batch's count is what is wrong */
            DATA_ERROR(&err, first, "batch declares %lld records but holds %lld", count, i);
        FAST_VARINT(end, VARINT_MAX_BYTES, length);
        Py_ssize_t body_end = pos + (Py_ssize_t)length;
        if (length < V2_RECORD_MIN_LENGTH || length > end - pos)
            DATA_ERROR(&err, start, "record length %lld does not fit the batch", (long long)length);
        pos += 1; /* attributes: unused */
        FAST_VARINT(body_end, VARLONG_MAX_BYTES, ts_delta);
        FAST_VARINT(body_end, VARINT_MAX_BYTES, offset_delta);
        FAST_VARINT(body_end, VARINT_MAX_BYTES, n);
        if (read_nullable(p, &pos, body_end, n, start, "key", &key, &err) < 0)
            goto fail;
        FAST_VARINT(body_end, VARINT_MAX_BYTES, n);
        if (read_nullable(p, &pos, body_end, n, start, "value", &value, &err) < 0)
            goto fail;
        if (pos < body_end && p[pos] == 0) {
            headers = PyTuple_New(0);
            pos += 1;
        }
        else if (read_headers(p, &pos, body_end, start, &headers, &err) < 0) {
            err.position = start;
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
            if (sequence > INT32_MAX) /* DefaultRecordBatch.incrementSequence wraps to 0 */
                sequence -= (int64_t)INT32_MAX + 1;
        }
        PyObject *vals[RECORD_FIELDS] = {
            add_i64(base_offset, offset_delta),
            log_append_time == Py_None ? add_i64(base_timestamp, ts_delta) : Py_NewRef(log_append_time),
            key,
            value,
            headers,
            PyLong_FromLongLong(sequence),
            PyLong_FromSsize_t(body_end - start),
            Py_NewRef(Py_None),
            Py_NewRef(Py_None),
            Py_NewRef(Py_None),
            log_append_time == Py_None ? Py_NewRef(Py_None) : add_i64(base_timestamp, ts_delta),
        };
        key = value = headers = NULL; /* stolen */
        PyObject *record = new_record(vals);
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


/* ---- v0/v1 inner message sets ------------------------------------------------------------------ */

/* CRC-32 (IEEE, reflected), slicing by 8, as zlib.crc32 computes it; tables built at import. */
static uint32_t crc_table[8][256];

static void
crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

static uint32_t
crc32_ieee(const unsigned char *p, Py_ssize_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
            crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static int64_t
be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static int32_t
be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

typedef struct {
    int64_t offset, timestamp;
    uint32_t crc;
    int magic, attributes;
    Py_ssize_t key_pos, key_len, value_pos, value_len; /* len -1: null */
} Message;

/* Read the length-prefixed bytes at *p_pos (message.py's _read_bytes). Returns 0, or -1 with *reason. */
static int
message_bytes(const unsigned char *p, Py_ssize_t *p_pos, Py_ssize_t end, const char *what, Py_ssize_t *at,
              Py_ssize_t *len, PyObject **reason)
{
    Py_ssize_t pos = *p_pos;
    if (pos + 4 > end) {
        *reason = PyUnicode_FromFormat("message ends before its %s length", what);
        return -1;
    }
    int32_t n = be32(p + pos);
    pos += 4;
    if (n < 0) {
        *at = pos;
        *len = -1;
    }
    else {
        if (n > end - pos) {
            *reason = PyUnicode_FromFormat("%s length %d runs past the message", what, (int)n);
            return -1;
        }
        *at = pos;
        *len = n;
        pos += n;
    }
    *p_pos = pos;
    return 0;
}

/* Decode the message p[pos:end] (message.py's Message). Returns 0, or -1 with *reason (or an exception). */
static int
parse_message(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Message *m, PyObject **reason)
{
    if (end - pos < LOG_OVERHEAD + LEGACY_V0_MIN_SIZE) {
        *reason = PyUnicode_FromString("message is shorter than the smallest v0 message");
        return -1;
    }
    m->offset = be64(p + pos + LEGACY_OFFSET_OFFSET);
    int32_t size = be32(p + pos + LEGACY_SIZE_OFFSET);
    m->crc = (uint32_t)be32(p + pos + LEGACY_CRC_OFFSET);
    m->magic = (signed char)p[pos + LEGACY_MAGIC_OFFSET];
    m->attributes = (signed char)p[pos + LEGACY_ATTRIBUTES_OFFSET];
    if (m->magic != 0 && m->magic != 1) {
        *reason = PyUnicode_FromFormat("message has magic %d, expected 0 or 1", m->magic);
        return -1;
    }
    if (size < (m->magic == 0 ? LEGACY_V0_MIN_SIZE : LEGACY_V1_MIN_SIZE)) {
        *reason = PyUnicode_FromFormat("message size %d is below the v%d minimum", (int)size, m->magic);
        return -1;
    }
    Py_ssize_t q = pos + LEGACY_HEADER_SIZE;
    m->timestamp = -1;
    if (m->magic == 1) {
        m->timestamp = be64(p + pos + LEGACY_V1_TIMESTAMP_OFFSET);
        q = pos + LEGACY_V1_HEADER_SIZE;
    }
    if (message_bytes(p, &q, end, "key", &m->key_pos, &m->key_len, reason) < 0 ||
        message_bytes(p, &q, end, "value", &m->value_pos, &m->value_len, reason) < 0)
        return -1;
    if (q != end) {
        *reason = PyUnicode_FromFormat("message has %zd bytes after its value", end - q);
        return -1;
    }
    return 0;
}

static PyObject *
bytes_or_none(const unsigned char *p, Py_ssize_t at, Py_ssize_t len)
{
    if (len < 0)
        return Py_NewRef(Py_None);
    return PyBytes_FromStringAndSize((const char *)p + at, len);
}

static PyObject *
legacy_record(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, const Message *m, int64_t base,
              PyObject *log_append_time)
{
    uint32_t crc = crc32_ieee(p + pos + LEGACY_MAGIC_OFFSET, end - pos - LEGACY_MAGIC_OFFSET);
    PyObject *vals[RECORD_FIELDS] = {
        add_i64(base, m->offset),
        log_append_time == Py_None ? PyLong_FromLongLong(m->timestamp) : Py_NewRef(log_append_time),
        bytes_or_none(p, m->key_pos, m->key_len),
        bytes_or_none(p, m->value_pos, m->value_len),
        PyTuple_New(0),
        PyLong_FromLong(-1),
        PyLong_FromSsize_t(end - pos),
        PyLong_FromUnsignedLong(m->crc),
        Py_NewRef(crc == m->crc ? Py_True : Py_False),
        Py_NewRef(Py_None),
        log_append_time == Py_None ? Py_NewRef(Py_None) : PyLong_FromLongLong(m->timestamp),
    };
    return new_record(vals);
}

static PyObject *
corrupt(PyObject *reason)
{
    if (reason == NULL)
        return NULL;
    PyObject *exc = PyObject_CallOneArg(CorruptRecordError, reason);
    Py_DECREF(reason);
    return exc;
}

/* The twin of _pure.decode_legacy_inner: (records, error or None). Two passes: the first frames and
 * checks every inner message (and so learns the last inner offset), the second builds the records. */
static PyObject *
decode_legacy_inner(PyObject *self, PyObject *args)
{
    Py_buffer view;
    int wrapper_magic;
    long long wrapper_offset;
    PyObject *log_append_time;
    if (!PyArg_ParseTuple(args, "y*iLO", &view, &wrapper_magic, &wrapper_offset, &log_append_time))
        return NULL;
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t total = view.len, pos = 0, n_ok = 0, good_end = 0;
    PyObject *reason = NULL, *error = NULL, *records = NULL, *result = NULL;
    Message m;
    int64_t last = 0;
    while (pos < total) {
        if (total - pos < LOG_OVERHEAD) {
            reason = PyUnicode_FromFormat("%zd stray bytes after the last inner message", total - pos);
            break;
        }
        int32_t size = be32(p + pos + LOG_ENTRY_SIZE_OFFSET);
        if (size < 0 || size > total - pos - LOG_OVERHEAD) {
            reason = PyUnicode_FromFormat("inner message at byte %zd of the payload runs past its end", pos);
            break;
        }
        Py_ssize_t end = pos + LOG_OVERHEAD + size;
        PyObject *inner_reason = NULL;
        if (parse_message(p, pos, end, &m, &inner_reason) < 0) {
            if (inner_reason != NULL)
                reason = PyUnicode_FromFormat("inner message at byte %zd of the payload: %U", pos, inner_reason);
            Py_XDECREF(inner_reason);
            break;
        }
        if (m.magic != wrapper_magic) {
            reason = PyUnicode_FromFormat("inner message has magic %d in a v%d wrapper", m.magic, wrapper_magic);
            break;
        }
        if (m.attributes & COMPRESSION_MASK) {
            reason = PyUnicode_FromString("inner message is itself compressed");
            break;
        }
        last = m.offset;
        n_ok++;
        pos = good_end = end;
    }
    if (PyErr_Occurred())
        goto done;
    int relative = wrapper_magic > 0 && wrapper_offset != 0;
    if (n_ok == 0) {
        if (reason == NULL)
            reason = PyUnicode_FromString("compressed wrapper message holds no inner messages");
        records = PyList_New(0);
    }
    else if (reason != NULL && relative) {
        PyObject *full = PyUnicode_FromFormat("%U; the %zd inner messages before it have unknown offsets", reason,
                                              n_ok);
        Py_SETREF(reason, full);
        records = PyList_New(0);
    }
    else {
        if (reason == NULL && relative && wrapper_offset < last)
            reason = PyUnicode_FromFormat("wrapper offset %lld is below its last inner offset %lld",
                                          wrapper_offset, (long long)last);
        int64_t base = 0;
        if (relative && wrapper_offset - last > 0)
            base = wrapper_offset - last;
        records = PyList_New(n_ok);
        for (Py_ssize_t i = 0, at = 0; records != NULL && i < n_ok; i++) {
            Py_ssize_t end = at + LOG_OVERHEAD + be32(p + at + LOG_ENTRY_SIZE_OFFSET);
            PyObject *ignored = NULL;
            parse_message(p, at, end, &m, &ignored); /* checked in the first pass */
            PyObject *record = legacy_record(p, at, end, &m, base, log_append_time);
            if (record == NULL) {
                Py_CLEAR(records);
                break;
            }
            PyList_SET_ITEM(records, i, record);
            at = end;
        }
        (void)good_end;
    }
    if (records == NULL || PyErr_Occurred())
        goto done;
    if (reason != NULL) {
        error = corrupt(reason);
        reason = NULL;
        if (error == NULL)
            goto done;
    }
    result = PyTuple_Pack(2, records, error ? error : Py_None);
done:
    Py_XDECREF(reason);
    Py_XDECREF(error);
    Py_XDECREF(records);
    PyBuffer_Release(&view);
    return result;
}

/* ---- JSON of records (render/jsonl.py's records_json) ------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    if (extra > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            cap = b->len + extra;
            break;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int
buf_put(Buf *b, const char *s, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

#define PUT_LIT(b, lit) buf_put((b), (lit), (Py_ssize_t)(sizeof(lit) - 1))

/* A Python int (or None) in decimal. */
static int
buf_number(Buf *b, PyObject *n)
{
    if (n == Py_None)
        return PUT_LIT(b, "null");
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        /* Decimal by hand: snprintf costs more than the rest of a record's JSON. */
        char tmp[24];
        char *end = tmp + sizeof tmp, *p = end;
        unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        do {
            *--p = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0)
            *--p = '-';
        return buf_put(b, p, end - p);
    }
    PyObject *text = PyObject_Str(n);
    if (text == NULL)
        return -1;
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &len);
    int rc = utf8 == NULL ? -1 : buf_put(b, utf8, len);
    Py_DECREF(text);
    return rc;
}

static const char HEX[] = "0123456789abcdef";

/* One code point's worth of JSON string escaping, as json.encoder.encode_basestring (ensure_ascii off). */
static int
json_escape_ascii(Buf *b, unsigned char c)
{
    switch (c) {
    case '"': return PUT_LIT(b, "\\\"");
    case '\\': return PUT_LIT(b, "\\\\");
    case '\n': return PUT_LIT(b, "\\n");
    case '\r': return PUT_LIT(b, "\\r");
    case '\t': return PUT_LIT(b, "\\t");
    case '\b': return PUT_LIT(b, "\\b");
    case '\f': return PUT_LIT(b, "\\f");
    default:
        if (c < 0x20) {
            char u[6] = {'\\', 'u', '0', '0', HEX[c >> 4], HEX[c & 15]};
            return buf_put(b, u, 6);
        }
        return buf_put(b, (const char *)&c, 1);
    }
}

/* Length of the valid UTF-8 sequence at p[0..n), or 0 if p[0] does not start one (RFC 3629, as
 * Python's decoder: no overlong forms, no surrogates, nothing past U+10FFFF). */
static int
utf8_sequence(const unsigned char *p, Py_ssize_t n)
{
    unsigned char c = p[0];
    int len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    }
    else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    }
    else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return len;
}

/* bytes.decode("utf-8", "backslashreplace"), then JSON-quoted: text stays text, a byte that is not
 * UTF-8 becomes the four characters \xNN (escaped for JSON as \\xNN). */
static int
json_text(Buf *b, const unsigned char *p, Py_ssize_t n)
{
    if (PUT_LIT(b, "\"") < 0)
        return -1;
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            if (json_escape_ascii(b, c) < 0)
                return -1;
            i++;
            continue;
        }
        int len = utf8_sequence(p + i, n - i);
        if (len > 0) {
            if (buf_put(b, (const char *)p + i, len) < 0)
                return -1;
            i += len;
        }
        else {
            char esc[6] = {'\\', '\\', 'x', HEX[c >> 4], HEX[c & 15]};
            if (buf_put(b, esc, 5) < 0)
                return -1;
            i++;
        }
    }
    return PUT_LIT(b, "\"");
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
json_base64(Buf *b, const unsigned char *p, Py_ssize_t n)
{
    if (buf_reserve(b, (n + 2) / 3 * 4 + 2) < 0)
        return -1;
    char *o = b->data + b->len;
    *o++ = '"';
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = B64[v >> 18];
        *o++ = B64[(v >> 12) & 63];
        *o++ = B64[(v >> 6) & 63];
        *o++ = B64[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *o++ = B64[v >> 18];
        *o++ = B64[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    }
    else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *o++ = B64[v >> 18];
        *o++ = B64[(v >> 12) & 63];
        *o++ = B64[(v >> 6) & 63];
        *o++ = '=';
    }
    *o++ = '"';
    b->len = o - b->data;
    return 0;
}

static int
json_hex(Buf *b, const unsigned char *p, Py_ssize_t n)
{
    if (n > (PY_SSIZE_T_MAX - 2) / 2 || buf_reserve(b, 2 * n + 2) < 0)
        return -1;
    char *o = b->data + b->len;
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        *o++ = HEX[p[i] >> 4];
        *o++ = HEX[p[i] & 15];
    }
    *o++ = '"';
    b->len = o - b->data;
    return 0;
}

/* A key, value or header value: null, or its bytes in the --payload encoding. */
static int
json_payload(Buf *b, PyObject *data, int mode)
{
    if (data == Py_None)
        return PUT_LIT(b, "null");
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "record keys and values must be bytes or None");
        return -1;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    return mode == 1 ? json_base64(b, p, n) : mode == 2 ? json_hex(b, p, n) : json_text(b, p, n);
}

static int
json_attr_number(Buf *b, PyObject *obj, const char *name)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL)
        return -1;
    int rc = buf_number(b, v);
    Py_DECREF(v);
    return rc;
}

static int
json_control(Buf *b, PyObject *control)
{
    PyObject *name = PyObject_GetAttrString(control, "type_name");
    if (name == NULL)
        return -1;
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
    int rc = utf8 == NULL || PUT_LIT(b, ",\"control\":{\"type\":") < 0 ||
             json_text(b, (const unsigned char *)utf8, len) < 0 || PUT_LIT(b, ",\"version\":") < 0 ||
             json_attr_number(b, control, "version") < 0 || PUT_LIT(b, ",\"coordinatorEpoch\":") < 0 ||
             json_attr_number(b, control, "coordinatorEpoch") < 0 || PUT_LIT(b, "}") < 0
                 ? -1
                 : 0;
    Py_DECREF(name);
    return rc;
}

static int
json_record(Buf *b, PyObject *r, int magic, int mode)
{
    if (!Py_IS_TYPE(r, (PyTypeObject *)RecordType)) {
        PyErr_SetString(PyExc_TypeError, "records_json takes Record values");
        return -1;
    }
    for (int i = 0; i < RECORD_FIELDS; i++) {
        if (RECORD_SLOT(r, i) == NULL) {
            PyErr_Format(PyExc_AttributeError, "Record.%s is not set", record_fields[i]);
            return -1;
        }
    }
    PyObject *headers = RECORD_SLOT(r, 4);
    if (!PyTuple_Check(headers)) {
        PyErr_SetString(PyExc_TypeError, "record headers must be a tuple");
        return -1;
    }
    if (PUT_LIT(b, "{\"offset\":") < 0 || buf_number(b, RECORD_SLOT(r, 0)) < 0 ||
        PUT_LIT(b, ",\"timestamp\":") < 0 || buf_number(b, RECORD_SLOT(r, 1)) < 0 ||
        PUT_LIT(b, ",\"key\":") < 0 || json_payload(b, RECORD_SLOT(r, 2), mode) < 0 ||
        PUT_LIT(b, ",\"value\":") < 0 || json_payload(b, RECORD_SLOT(r, 3), mode) < 0 ||
        PUT_LIT(b, ",\"headers\":[") < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(headers); i++) {
        PyObject *h = PyTuple_GET_ITEM(headers, i);
        if (!Py_IS_TYPE(h, (PyTypeObject *)HeaderType)) {
            PyErr_SetString(PyExc_TypeError, "headers must be Header values");
            return -1;
        }
        PyObject *key = *(PyObject **)((char *)h + header_offsets[0]);
        PyObject *hvalue = *(PyObject **)((char *)h + header_offsets[1]);
        if (key == NULL || hvalue == NULL || !PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "a Header needs a bytes key and a value");
            return -1;
        }
        if ((i > 0 && PUT_LIT(b, ",") < 0) || PUT_LIT(b, "{\"key\":") < 0 ||
            json_text(b, (const unsigned char *)PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)) < 0 ||
            PUT_LIT(b, ",\"value\":") < 0 || json_payload(b, hvalue, mode) < 0 ||
            PUT_LIT(b, "}") < 0)
            return -1;
    }
    if (PUT_LIT(b, "]") < 0)
        return -1;
    if (magic >= 2) {
        if (PUT_LIT(b, ",\"sequence\":") < 0 || buf_number(b, RECORD_SLOT(r, 5)) < 0)
            return -1;
    }
    else {
        PyObject *valid = RECORD_SLOT(r, 8);
        if (PUT_LIT(b, ",\"crc\":") < 0 || buf_number(b, RECORD_SLOT(r, 7)) < 0 ||
            PUT_LIT(b, ",\"crcValid\":") < 0 ||
            (valid == Py_None ? PUT_LIT(b, "null") : valid == Py_True ? PUT_LIT(b, "true") : PUT_LIT(b, "false")) < 0)
            return -1;
    }
    PyObject *control = RECORD_SLOT(r, 9);
    if (control != Py_None && json_control(b, control) < 0)
        return -1;
    return PUT_LIT(b, "}");
}

static PyObject *
records_json(PyObject *self, PyObject *args)
{
    PyObject *records;
    int magic, mode;
    if (!PyArg_ParseTuple(args, "Oii", &records, &magic, &mode))
        return NULL;
    PyObject *seq = PySequence_Fast(records, "records_json takes a sequence of records");
    if (seq == NULL)
        return NULL;
    Buf b = {NULL, 0, 0};
    PyObject *result = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (PUT_LIT(&b, "[") < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((i > 0 && PUT_LIT(&b, ",") < 0) || json_record(&b, PySequence_Fast_GET_ITEM(seq, i), magic, mode) < 0)
            goto done;
    }
    if (PUT_LIT(&b, "]") < 0)
        goto done;
    result = PyBytes_FromStringAndSize(b.data, b.len);
done:
    PyMem_Free(b.data);
    Py_DECREF(seq);
    return result;
}

/* ---- runs of plain v0/v1 messages (the twin of _pure.decode_legacy_run) ------------------------- */

static PyObject *BatchType;              /* kafka_dump.model.Batch, a NamedTuple */
static PyObject *CODEC_NONE;             /* Compression.NONE */
static PyObject *TS_TYPES[3];            /* NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME */
static PyObject *MINUS_ONE, *ONE;

/* A NamedTuple instance from n new references (stolen, none NULL). Up to 3.13 this is what
 * tuple.__new__(cls, items) does inside: tp_alloc, then fill, nothing allocated in between. From
 * 3.14 tuples cache their hash, so the documented tuple.__new__ path is taken there. */
static PyObject *
new_namedtuple(PyObject *cls, Py_ssize_t n, PyObject **vals)
{
#if PY_VERSION_HEX < 0x030E0000
    PyObject *obj = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, n);
    if (obj != NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(obj, i, vals[i]);
        return obj;
    }
#else
    PyObject *items = PyTuple_New(n);
    if (items != NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(items, i, vals[i]);
        PyObject *args = PyTuple_Pack(1, items);
        Py_DECREF(items);
        if (args == NULL)
            return NULL;
        PyObject *obj = PyTuple_Type.tp_new((PyTypeObject *)cls, args, NULL);
        Py_DECREF(args);
        return obj;
    }
#endif
    for (Py_ssize_t i = 0; i < n; i++)
        Py_DECREF(vals[i]);
    return NULL;
}

#define BATCH_FIELDS 23

/* message.py's Message.batch for a plain message: the entry as a Batch of one record. */
static PyObject *
plain_batch(PyObject *file, Py_ssize_t file_pos, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
            const Message *m, uint32_t crc, int with_records)
{
    /* The batch and its one record share the objects of the fields they have in common. */
    PyObject *offset = PyLong_FromLongLong(m->offset), *ts = PyLong_FromLongLong(m->timestamp);
    PyObject *stored = PyLong_FromUnsignedLong(m->crc), *size = PyLong_FromSsize_t(end - pos);
    PyObject *valid = crc == m->crc ? Py_True : Py_False, *records = NULL;
    if (offset == NULL || ts == NULL || stored == NULL || size == NULL)
        goto fail;
    if (with_records) {
        PyObject *rvals[RECORD_FIELDS] = {
            Py_NewRef(offset),
            Py_NewRef(ts),
            bytes_or_none(p, m->key_pos, m->key_len),
            bytes_or_none(p, m->value_pos, m->value_len),
            PyTuple_New(0),
            Py_NewRef(MINUS_ONE),
            Py_NewRef(size),
            Py_NewRef(stored),
            Py_NewRef(valid),
            Py_NewRef(Py_None),
            Py_NewRef(Py_None),
        };
        PyObject *record = new_record(rvals);
        if (record == NULL)
            goto fail;
        records = PyTuple_Pack(1, record);
        Py_DECREF(record);
        if (records == NULL)
            goto fail;
        untrack_if_atomic(records);
    }
    else {
        records = Py_NewRef(Py_None);
    }
    int ts_type = m->magic == 0 ? 0 : (m->attributes & TIMESTAMP_TYPE_BIT) ? 2 : 1;
    PyObject *vals[BATCH_FIELDS] = {
        Py_NewRef(file),
        PyLong_FromSsize_t(file_pos),
        Py_NewRef(offset),
        offset, /* the last reference this function holds: passed on */
        PyLong_FromLong(m->magic),
        PyLong_FromLong(m->attributes),
        Py_NewRef(CODEC_NONE),
        Py_NewRef(TS_TYPES[ts_type]),
        Py_NewRef(ts),
        ts,
        Py_NewRef(MINUS_ONE),
        Py_NewRef(MINUS_ONE),
        Py_NewRef(MINUS_ONE),
        Py_NewRef(MINUS_ONE),
        Py_NewRef(MINUS_ONE),
        Py_NewRef(Py_False),
        Py_NewRef(Py_False),
        Py_NewRef(Py_None),
        stored,
        Py_NewRef(valid),
        size,
        Py_NewRef(ONE),
        records,
    };
    for (int i = 0; i < BATCH_FIELDS; i++) {
        if (vals[i] == NULL) {
            for (int j = 0; j < BATCH_FIELDS; j++)
                Py_XDECREF(vals[j]);
            return NULL;
        }
    }
    PyObject *batch = new_namedtuple(BatchType, BATCH_FIELDS, vals);
    /* A batch refers to its file name, ints, bools, None, enum members and an untracked records
     * tuple, all made before it and none able to refer back to it: it can be in no cycle. Tracked,
     * a run of 200k such batches spends three quarters of its time in the cycle collector. */
    if (batch != NULL && PyObject_GC_IsTracked(batch))
        PyObject_GC_UnTrack(batch);
    return batch;
fail:
    Py_XDECREF(offset);
    Py_XDECREF(ts);
    Py_XDECREF(stored);
    Py_XDECREF(size);
    return NULL;
}

static PyObject *
decode_legacy_run(PyObject *self, PyObject *args)
{
    PyObject *file;
    Py_buffer view;
    Py_ssize_t pos, end, file_pos;
    int with_records;
    if (!PyArg_ParseTuple(args, "Uy*nnnp", &file, &view, &pos, &end, &file_pos, &with_records))
        return NULL;
    if (pos < 0 || end < pos || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t start = pos;
    PyObject *batches = PyList_New(0), *result = NULL;
    Message m;
    while (batches != NULL && end - pos >= LOG_OVERHEAD + LEGACY_V0_MIN_SIZE) {
        int magic = (signed char)p[pos + LEGACY_MAGIC_OFFSET];
        int attributes = (signed char)p[pos + LEGACY_ATTRIBUTES_OFFSET];
        int32_t size = be32(p + pos + LEGACY_SIZE_OFFSET);
        if ((magic != 0 && magic != 1) || (attributes & COMPRESSION_MASK) || size < 0 ||
            size > end - pos - LOG_OVERHEAD)
            break;
        Py_ssize_t entry_end = pos + LOG_OVERHEAD + size;
        PyObject *reason = NULL;
        if (parse_message(p, pos, entry_end, &m, &reason) < 0) {
            Py_XDECREF(reason);
            if (PyErr_Occurred())
                goto done;
            break;
        }
        uint32_t crc = crc32_ieee(p + pos + LEGACY_MAGIC_OFFSET, entry_end - pos - LEGACY_MAGIC_OFFSET);
        if (crc != m.crc)
            break;
        PyObject *batch = plain_batch(file, file_pos + pos - start, p, pos, entry_end, &m, crc, with_records);
        if (batch == NULL)
            goto done;
        int appended = PyList_Append(batches, batch);
        Py_DECREF(batch);
        if (appended < 0)
            goto done;
        pos = entry_end;
    }
    if (batches != NULL)
        result = Py_BuildValue("(On)", batches, pos - start);
done:
    Py_XDECREF(batches);
    PyBuffer_Release(&view);
    return result;
}

/* A Batch's labels, as model.py's Compression.label and TimestampType.label give them. */
static int
put_label(Buf *b, PyObject *code, int is_compression)
{
    long v = PyLong_AsLong(code);
    if (v == -1 && PyErr_Occurred())
        return -1;
    static const char *codecs[] = {"\"none\"", "\"gzip\"", "\"snappy\"", "\"lz4\"", "\"zstd\""};
    static const char *ts_types[] = {"\"NoTimestampType\"", "\"CreateTime\"", "\"LogAppendTime\""};
    const char *label;
    if (is_compression)
        label = v >= 0 && v <= 4 ? codecs[v] : "\"unknown\"";
    else if (v >= -1 && v <= 1)
        label = ts_types[v + 1];
    else {
        PyErr_SetString(PyExc_ValueError, "unknown timestamp type");
        return -1;
    }
    return buf_put(b, label, (Py_ssize_t)strlen(label));
}

static int
put_bool(Buf *b, PyObject *v)
{
    return v == Py_True ? PUT_LIT(b, "true") : v == Py_False ? PUT_LIT(b, "false") : PUT_LIT(b, "null");
}

/* The twin of render/jsonl.py's batch_json: one batch's whole JSON line. */
static PyObject *
batch_json(PyObject *self, PyObject *args)
{
    const char *file_json;
    Py_ssize_t file_len;
    PyObject *batch, *records;
    int mode;
    if (!PyArg_ParseTuple(args, "y#OOi", &file_json, &file_len, &batch, &records, &mode))
        return NULL;
    if (!PyTuple_Check(batch) || PyTuple_GET_SIZE(batch) < BATCH_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "batch_json takes a Batch");
        return NULL;
    }
#define F(i) PyTuple_GET_ITEM(batch, (i))
    Buf b = {NULL, 0, 0};
    PyObject *result = NULL, *seq = NULL;
    int magic = (int)PyLong_AsLong(F(4));
    if (magic == -1 && PyErr_Occurred())
        goto done;
    if (PUT_LIT(&b, "{\"type\":\"batch\",\"file\":") < 0 || buf_put(&b, file_json, file_len) < 0 ||
        PUT_LIT(&b, ",\"position\":") < 0 || buf_number(&b, F(1)) < 0 ||
        PUT_LIT(&b, ",\"baseOffset\":") < 0 || buf_number(&b, F(2)) < 0 ||
        PUT_LIT(&b, ",\"lastOffset\":") < 0 || buf_number(&b, F(3)) < 0 ||
        PUT_LIT(&b, ",\"magic\":") < 0 || buf_number(&b, F(4)) < 0 ||
        PUT_LIT(&b, ",\"compression\":") < 0 || put_label(&b, F(6), 1) < 0 ||
        PUT_LIT(&b, ",\"timestampType\":") < 0 || put_label(&b, F(7), 0) < 0 ||
        PUT_LIT(&b, ",\"baseTimestamp\":") < 0 || buf_number(&b, F(8)) < 0 ||
        PUT_LIT(&b, ",\"maxTimestamp\":") < 0 || buf_number(&b, F(9)) < 0 ||
        PUT_LIT(&b, ",\"producerId\":") < 0 || buf_number(&b, F(10)) < 0 ||
        PUT_LIT(&b, ",\"producerEpoch\":") < 0 || buf_number(&b, F(11)) < 0 ||
        PUT_LIT(&b, ",\"baseSequence\":") < 0 || buf_number(&b, F(12)) < 0 ||
        PUT_LIT(&b, ",\"lastSequence\":") < 0 || buf_number(&b, F(13)) < 0 ||
        PUT_LIT(&b, ",\"partitionLeaderEpoch\":") < 0 || buf_number(&b, F(14)) < 0 ||
        PUT_LIT(&b, ",\"isTransactional\":") < 0 || put_bool(&b, F(15)) < 0 ||
        PUT_LIT(&b, ",\"isControl\":") < 0 || put_bool(&b, F(16)) < 0 ||
        PUT_LIT(&b, ",\"deleteHorizonMs\":") < 0 || buf_number(&b, F(17)) < 0 ||
        PUT_LIT(&b, ",\"crc\":") < 0 || buf_number(&b, F(18)) < 0 ||
        PUT_LIT(&b, ",\"crcValid\":") < 0 || put_bool(&b, F(19)) < 0 ||
        PUT_LIT(&b, ",\"sizeInBytes\":") < 0 || buf_number(&b, F(20)) < 0 ||
        PUT_LIT(&b, ",\"recordCount\":") < 0 || buf_number(&b, F(21)) < 0 ||
        PUT_LIT(&b, ",\"records\":") < 0)
        goto done;
#undef F
    if (records == Py_None) {
        if (PUT_LIT(&b, "null") < 0)
            goto done;
    }
    else {
        seq = PySequence_Fast(records, "batch_json takes a sequence of records");
        if (seq == NULL || PUT_LIT(&b, "[") < 0)
            goto done;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
            if ((i > 0 && PUT_LIT(&b, ",") < 0) ||
                json_record(&b, PySequence_Fast_GET_ITEM(seq, i), magic, mode) < 0)
                goto done;
        }
        if (PUT_LIT(&b, "]") < 0)
            goto done;
    }
    if (PUT_LIT(&b, "}\n") < 0)
        goto done;
    result = PyBytes_FromStringAndSize(b.data, b.len);
done:
    Py_XDECREF(seq);
    PyMem_Free(b.data);
    return result;
}

static PyMethodDef methods[] = {
    {"decode_v2_records", decode_v2_records, METH_VARARGS,
     "decode_v2_records(data, pos, end, count, base_offset, base_timestamp, log_append_time, base_sequence)\n"
     "-> (records, error or None); the compiled twin of kafka_dump.format._pure.decode_v2_records."},
    {"decode_legacy_inner", decode_legacy_inner, METH_VARARGS,
     "decode_legacy_inner(data, wrapper_magic, wrapper_offset, log_append_time) -> (records, error or None);\n"
     "the compiled twin of kafka_dump.format._pure.decode_legacy_inner."},
    {"decode_legacy_run", decode_legacy_run, METH_VARARGS,
     "decode_legacy_run(file, data, pos, end, file_pos, with_records) -> (batches, bytes used);\n"
     "the compiled twin of kafka_dump.format._pure.decode_legacy_run."},
    {"batch_json", batch_json, METH_VARARGS,
     "batch_json(file_json, batch, records, payload) -> bytes; the compiled twin of\n"
     "kafka_dump.render.jsonl.batch_json."},
    {"records_json", records_json, METH_VARARGS,
     "records_json(records, magic, payload) -> bytes; the compiled twin of kafka_dump.render.jsonl.records_json\n"
     "(which returns the same text as str)."},
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
    BatchType = import_attr("kafka_dump.model", "Batch");
    PyObject *codecs = import_attr("kafka_dump.model", "Compression");
    PyObject *ts_types = import_attr("kafka_dump.model", "TimestampType");
    if (!RecordType || !HeaderType || !CorruptRecordError || !BatchType || !codecs || !ts_types)
        return NULL;
    CODEC_NONE = PyObject_GetAttrString(codecs, "NONE");
    TS_TYPES[0] = PyObject_GetAttrString(ts_types, "NO_TIMESTAMP_TYPE");
    TS_TYPES[1] = PyObject_GetAttrString(ts_types, "CREATE_TIME");
    TS_TYPES[2] = PyObject_GetAttrString(ts_types, "LOG_APPEND_TIME");
    Py_DECREF(codecs);
    Py_DECREF(ts_types);
    MINUS_ONE = PyLong_FromLong(-1);
    ONE = PyLong_FromLong(1);
    if (!CODEC_NONE || !TS_TYPES[0] || !TS_TYPES[1] || !TS_TYPES[2] || !MINUS_ONE || !ONE)
        return NULL;
    if (slot_offsets(RecordType, record_fields, RECORD_FIELDS, record_offsets) < 0 ||
        slot_offsets(HeaderType, header_fields, 2, header_offsets) < 0)
        return NULL;
    crc32_init();
    return PyModule_Create(&module);
}
