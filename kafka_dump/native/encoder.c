/*
 * The compiled twin of encoder.py's loops: v2 records (DefaultRecord.writeTo) and v0/v1 message sets
 * (LegacyRecord.write), with their sizes; the same bytes, sizes and UnsupportedEncodingError messages
 * (tests/test_encoder_twins.py). Two passes: the first validates every record and sums the sizes, the
 * second writes into a bytes object of that size, each write checked against its end, so that nothing
 * a record's fields do in between can make it write past it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "_buf.h"
#include "_layout.h"
#include "_model.h"
#include "_wire.h"

static PyObject *UnsupportedEncodingError; /* kafka_dump.errors.UnsupportedEncodingError */

/* The Record slots read here (their offsets are in _model.h's model). */
static const int record_read[] = {R_OFFSET, R_TIMESTAMP, R_KEY, R_VALUE, R_HEADERS, R_STORED_TIMESTAMP};
#define RECORD_READ ((int)(sizeof record_read / sizeof record_read[0]))

/* A record's fields, borrowed; the record's type and every slot checked. */
typedef struct {
    PyObject *offset, *timestamp, *key, *value, *headers, *stored;
} Fields;

static int
record_fields_of(PyObject *r, Fields *f)
{
    if (!Py_IS_TYPE(r, (PyTypeObject *)model.record_type)) {
        PyErr_SetString(PyExc_TypeError, "the encoders take Record values");
        return -1;
    }
    for (int i = 0; i < RECORD_READ; i++) {
        if (RECORD_SLOT(r, record_read[i]) == NULL) {
            PyErr_Format(PyExc_AttributeError, "Record.%s is not set", record_field_names[record_read[i]]);
            return -1;
        }
    }
    f->offset = RECORD_SLOT(r, R_OFFSET);
    f->timestamp = RECORD_SLOT(r, R_TIMESTAMP);
    f->key = RECORD_SLOT(r, R_KEY);
    f->value = RECORD_SLOT(r, R_VALUE);
    f->headers = RECORD_SLOT(r, R_HEADERS);
    f->stored = RECORD_SLOT(r, R_STORED_TIMESTAMP);
    if ((f->key != Py_None && !PyBytes_Check(f->key)) || (f->value != Py_None && !PyBytes_Check(f->value))) {
        PyErr_SetString(PyExc_TypeError, "a record's key and value must be bytes or None");
        return -1;
    }
    if (!PyTuple_Check(f->headers)) {
        PyErr_SetString(PyExc_TypeError, "a record's headers must be a tuple");
        return -1;
    }
    return 0;
}

/* a - b for two ints: 0 and *out when it fits an int64, 1 when it does not, -1 with an exception. */
static int
sub_i64(PyObject *a, PyObject *b, int64_t *out)
{
    int oa = 0, ob = 0;
    long long x = PyLong_AsLongLongAndOverflow(a, &oa);
    if (x == -1 && PyErr_Occurred())
        return -1;
    long long y = PyLong_AsLongLongAndOverflow(b, &ob);
    if (y == -1 && PyErr_Occurred())
        return -1;
    if (!oa && !ob) {
        long long d;
        if (__builtin_sub_overflow(x, y, &d))
            return 1;
        *out = d;
        return 0;
    }
    PyObject *diff = PyNumber_Subtract(a, b);
    if (diff == NULL)
        return -1;
    int od = 0;
    long long v = PyLong_AsLongLongAndOverflow(diff, &od);
    Py_DECREF(diff);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (od)
        return 1;
    *out = v;
    return 0;
}

static PyObject *ZERO, *MINUS_ONE; /* the ints 0 and -1 */

static int
refuse(const char *format, ...)
{
    va_list vargs;
    va_start(vargs, format);
    PyObject *msg = PyUnicode_FromFormatV(format, vargs);
    va_end(vargs);
    if (msg != NULL) {
        PyErr_SetObject(UnsupportedEncodingError, msg);
        Py_DECREF(msg);
    }
    return -1;
}

static inline int
varint_size(int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    int n = 1;
    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

static inline unsigned char *
put_varint(unsigned char *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (z >= 0x80) {
        *p++ = (unsigned char)(z | 0x80);
        z >>= 7;
    }
    *p++ = (unsigned char)z;
    return p;
}

static inline unsigned char *
put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
    return p + n;
}

/* ---- v2 records -------------------------------------------------------------------------------- */

/* One v2 record's deltas and body length (after its length varint), as wire/encoder.py's _v2_deltas. */
typedef struct {
    int64_t ts_delta, offset_delta, body;
} V2Sizes;

static int
v2_sizes(const Fields *f, PyObject *base_offset, PyObject *base_timestamp, int log_append, V2Sizes *s)
{
    PyObject *ts = (log_append && f->stored != Py_None) ? f->stored : f->timestamp;
    int rc = sub_i64(ts, base_timestamp, &s->ts_delta);
    if (rc < 0)
        return -1;
    if (rc > 0)
        return refuse("record at offset %S: timestamp %S is too far from the batch's baseTimestamp %S for a "
                      "64-bit delta",
                      f->offset, ts, base_timestamp);
    rc = sub_i64(f->offset, base_offset, &s->offset_delta);
    if (rc < 0)
        return -1;
    if (rc > 0 || s->offset_delta < 0 || s->offset_delta > INT32_MAX) {
        PyObject *delta = PyNumber_Subtract(f->offset, base_offset);
        if (delta == NULL)
            return -1;
        refuse("record at offset %S: offset delta %S from baseOffset %S is not between 0 and 2^31-1", f->offset,
               delta, base_offset);
        Py_DECREF(delta);
        return -1;
    }
    Py_ssize_t nh = PyTuple_GET_SIZE(f->headers);
    int64_t n = 1 + varint_size(s->ts_delta) + varint_size(s->offset_delta) + varint_size(nh);
    n += f->key == Py_None ? 1 : varint_size(PyBytes_GET_SIZE(f->key)) + PyBytes_GET_SIZE(f->key);
    n += f->value == Py_None ? 1 : varint_size(PyBytes_GET_SIZE(f->value)) + PyBytes_GET_SIZE(f->value);
    for (Py_ssize_t i = 0; i < nh; i++) {
        PyObject *h = PyTuple_GET_ITEM(f->headers, i);
        PyObject *hk = Py_IS_TYPE(h, (PyTypeObject *)model.header_type) ? HEADER_SLOT(h, H_KEY) : NULL;
        PyObject *hv = hk != NULL ? HEADER_SLOT(h, H_VALUE) : NULL;
        if (hk == NULL || hv == NULL || !PyBytes_Check(hk) || (hv != Py_None && !PyBytes_Check(hv))) {
            PyErr_SetString(PyExc_TypeError, "headers must be Header values of bytes (the value may be None)");
            return -1;
        }
        n += varint_size(PyBytes_GET_SIZE(hk)) + PyBytes_GET_SIZE(hk);
        n += hv == Py_None ? 1 : varint_size(PyBytes_GET_SIZE(hv)) + PyBytes_GET_SIZE(hv);
    }
    s->body = n;
    return 0;
}

static unsigned char *
put_field(unsigned char *p, PyObject *field)
{
    if (field == Py_None)
        return put_varint(p, -1);
    Py_ssize_t n = PyBytes_GET_SIZE(field);
    p = put_varint(p, n);
    memcpy(p, PyBytes_AS_STRING(field), n);
    return p + n;
}

static int
changed_meanwhile(void)
{
    PyErr_SetString(PyExc_RuntimeError, "records changed while they were being encoded");
    return -1;
}

/* One v2 record, its sizes known, written at p: where it ends. */
static unsigned char *
put_v2_record(unsigned char *p, const Fields *f, const V2Sizes *s)
{
    p = put_varint(p, s->body);
    *p++ = 0; /* attributes: unused */
    p = put_varint(p, s->ts_delta);
    p = put_varint(p, s->offset_delta);
    p = put_field(p, f->key);
    p = put_field(p, f->value);
    Py_ssize_t nh = PyTuple_GET_SIZE(f->headers);
    p = put_varint(p, nh);
    for (Py_ssize_t j = 0; j < nh; j++) {
        PyObject *h = PyTuple_GET_ITEM(f->headers, j);
        p = put_field(p, HEADER_SLOT(h, H_KEY));
        p = put_field(p, HEADER_SLOT(h, H_VALUE));
    }
    return p;
}

/* ---- v0/v1 messages ---------------------------------------------------------------------------- */

/* A message's offset and timestamp as written, as wire/encoder.py's _legacy_fields. */
static int
legacy_fields(const Fields *f, int magic, PyObject *shift, int log_append, int64_t *offset, int64_t *ts)
{
    if (PyTuple_GET_SIZE(f->headers) > 0)
        return refuse("record at offset %S has headers, which magic %d cannot carry", f->offset, magic);
    if (magic == 0) {
        int cmp = PyObject_RichCompareBool(f->timestamp, MINUS_ONE, Py_NE);
        if (cmp < 0)
            return -1;
        if (cmp)
            return refuse("record at offset %S has timestamp %S, which magic 0 cannot carry", f->offset,
                          f->timestamp);
    }
    PyObject *t = (log_append && f->stored != Py_None) ? f->stored : f->timestamp;
    int rc_offset = sub_i64(f->offset, shift, offset);
    if (rc_offset < 0)
        return -1;
    int rc_ts = sub_i64(t, ZERO, ts);
    if (rc_ts < 0)
        return -1;
    if (rc_offset || rc_ts)
        return refuse("record at offset %S: offset or timestamp past 64 bits", f->offset);
    return 0;
}

static Py_ssize_t
message_size(const Fields *f, int magic)
{
    return LOG_OVERHEAD + (magic == 1 ? LEGACY_V1_MIN_SIZE : LEGACY_V0_MIN_SIZE) +
           (f->key == Py_None ? 0 : PyBytes_GET_SIZE(f->key)) +
           (f->value == Py_None ? 0 : PyBytes_GET_SIZE(f->value));
}

static unsigned char *
put_legacy_field(unsigned char *p, PyObject *field)
{
    if (field == Py_None)
        return put_be(p, 0xFFFFFFFFu, 4);
    Py_ssize_t n = PyBytes_GET_SIZE(field);
    p = put_be(p, (uint64_t)n, 4);
    memcpy(p, PyBytes_AS_STRING(field), n);
    return p + n;
}

/* One message of n bytes written at p: where it ends. */
static unsigned char *
put_message(unsigned char *p, const Fields *f, int magic, int attributes, Py_ssize_t n, int64_t offset,
            int64_t ts)
{
    p = put_be(p, (uint64_t)offset, 8);
    p = put_be(p, (uint64_t)(n - LOG_OVERHEAD), 4);
    unsigned char *crc_at = p;
    p += 4;
    *p++ = (unsigned char)magic;
    *p++ = (unsigned char)attributes;
    if (magic == 1)
        p = put_be(p, (uint64_t)ts, 8);
    p = put_legacy_field(p, f->key);
    p = put_legacy_field(p, f->value);
    put_be(crc_at, crc32_ieee(crc_at + 4, p - crc_at - 4), 4);
    return p;
}

/* ---- v2 records and v0/v1 messages, in two passes ---------------------------------------------- */

/* One pass over the records, as v2 records (magic 2) or v0/v1 messages (base_offset: the shift taken
 * from each offset). With p NULL: the bytes they take, or -1 with an exception. Else they are written
 * into p..end, which the first pass sized: 0, or -1 with an exception. */
static int64_t
records_pass(PyObject *seq, int magic, int attributes, PyObject *base_offset, PyObject *base_timestamp,
             int log_append, unsigned char *p, unsigned char *end)
{
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        Fields f;
        V2Sizes s = {0, 0, 0};
        int64_t offset = 0, ts = 0, n;
        if (record_fields_of(PySequence_Fast_GET_ITEM(seq, i), &f) < 0 ||
            (magic == 2 ? v2_sizes(&f, base_offset, base_timestamp, log_append, &s)
                        : legacy_fields(&f, magic, base_offset, log_append, &offset, &ts)) < 0)
            return -1;
        n = magic == 2 ? varint_size(s.body) + s.body : message_size(&f, magic);
        total += n;
        if (p == NULL)
            continue;
        if (n > end - p)
            return changed_meanwhile();
        p = magic == 2 ? put_v2_record(p, &f, &s) : put_message(p, &f, magic, attributes, n, offset, ts);
    }
    if (p == NULL)
        return total;
    return p == end ? 0 : changed_meanwhile();
}

/* The records (records_pass's), after `prefix` bytes of room, in a new bytes object (the int of their
 * size alone when size_only); NULL with an exception. */
static PyObject *
records_after(PyObject *records, int magic, int attributes, PyObject *base_offset, PyObject *base_timestamp,
              int log_append, Py_ssize_t prefix, int size_only)
{
    PyObject *seq = PySequence_Fast(records, "records must be a sequence");
    if (seq == NULL)
        return NULL;
    int64_t total = records_pass(seq, magic, attributes, base_offset, base_timestamp, log_append, NULL, NULL);
    PyObject *out = NULL;
    if (size_only && total >= 0)
        out = PyLong_FromLongLong(total);
    else if (total >= 0 && total > PY_SSIZE_T_MAX - prefix)
        PyErr_NoMemory();
    else if (total >= 0)
        out = PyBytes_FromStringAndSize(NULL, prefix + total);
    if (out != NULL && !size_only) {
        unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
        if (records_pass(seq, magic, attributes, base_offset, base_timestamp, log_append, p + prefix,
                         p + prefix + total) < 0)
            Py_CLEAR(out);
    }
    Py_DECREF(seq);
    return out;
}

/* v2_records_size and encode_v2_records: their arguments are the same. */
static PyObject *
v2_records(PyObject *args, int size_only)
{
    PyObject *records, *base_offset, *base_timestamp;
    int log_append;
    if (!PyArg_ParseTuple(args, "OOOp", &records, &base_offset, &base_timestamp, &log_append))
        return NULL;
    return records_after(records, 2, 0, base_offset, base_timestamp, log_append, 0, size_only);
}

PyObject *
v2_records_size(PyObject *self, PyObject *args)
{
    return v2_records(args, 1);
}

PyObject *
encode_v2_records(PyObject *self, PyObject *args)
{
    return v2_records(args, 0);
}

static PyObject *Crc32c; /* kafka_dump.wire.checksum.crc32c: the crc32c package, hardware-accelerated */

/* The whole uncompressed entry in one buffer: header, records, then batchLength and the CRC-32C
 * written into it (as wire/encoder.py's finish_v2_entry), so that the records are never copied. */
PyObject *
encode_v2_entry(PyObject *self, PyObject *args)
{
    PyObject *records, *base_offset, *base_timestamp;
    Py_buffer header;
    int log_append;
    if (!PyArg_ParseTuple(args, "y*OOOp", &header, &records, &base_offset, &base_timestamp, &log_append))
        return NULL;
    if (header.len != V2_HEADER_SIZE) {
        PyErr_Format(PyExc_ValueError, "a v2 header is %d bytes, not %zd", V2_HEADER_SIZE, header.len);
        PyBuffer_Release(&header);
        return NULL;
    }
    PyObject *out = records_after(records, 2, 0, base_offset, base_timestamp, log_append, V2_HEADER_SIZE, 0);
    if (out == NULL) {
        PyBuffer_Release(&header);
        return NULL;
    }
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
    memcpy(p, header.buf, V2_HEADER_SIZE);
    PyBuffer_Release(&header);
    Py_ssize_t length = PyBytes_GET_SIZE(out) - LOG_OVERHEAD;
    if (length > INT32_MAX) {
        refuse("a batch of %zd bytes does not fit Kafka's 32-bit batch length", length);
        Py_DECREF(out);
        return NULL;
    }
    put_be(p + LOG_ENTRY_SIZE_OFFSET, (uint64_t)length, 4);
    if (Crc32c == NULL) /* on first use: the module loads with the package, start-up too */
        Crc32c = model_import("kafka_dump.wire.checksum", "crc32c");
    PyObject *crc = Crc32c == NULL ? NULL
                                   : call_on_view(Crc32c, -1, p + V2_ATTRIBUTES_OFFSET,
                                                  PyBytes_GET_SIZE(out) - V2_ATTRIBUTES_OFFSET);
    unsigned long value = crc == NULL ? 0 : PyLong_AsUnsignedLong(crc);
    Py_XDECREF(crc);
    if (crc == NULL || PyErr_Occurred()) {
        Py_DECREF(out);
        return NULL;
    }
    put_be(p + V2_CRC_OFFSET, value, 4);
    return out;
}

static int
check_magic(int magic)
{
    if (magic == 0 || magic == 1)
        return 0;
    PyErr_Format(PyExc_ValueError, "magic %d has no v0/v1 messages", magic);
    return -1;
}

PyObject *
legacy_messages_size(PyObject *self, PyObject *args)
{
    PyObject *records;
    int magic;
    if (!PyArg_ParseTuple(args, "Oi", &records, &magic) || check_magic(magic) < 0)
        return NULL;
    return records_after(records, magic, 0, ZERO, NULL, 0, 0, 1);
}

PyObject *
encode_legacy_messages(PyObject *self, PyObject *args)
{
    PyObject *records, *shift;
    int magic, attributes, log_append;
    if (!PyArg_ParseTuple(args, "OiiOp", &records, &magic, &attributes, &shift, &log_append) ||
        check_magic(magic) < 0)
        return NULL;
    return records_after(records, magic, attributes, shift, NULL, log_append, 0, 0);
}

/* ---- v1 inner messages straight to v2 records (kdump convert's fast path) ---------------------- */

/* One inner message of a decompressed v1 wrapper, as the fast path accepts it. */
typedef struct {
    int64_t offset, timestamp;
    int64_t key_len, value_len; /* -1: null */
    const unsigned char *key, *value;
} Inner;

/* Read the inner message at p[*pos..]; 1 and *pos past it when it is a plain, sound v1 message that
 * the decoder reads with no problem (uncompressed, attributes 0, CRC valid, nothing after its value),
 * 0 for anything else. Every length is checked against the bytes there before it is used. */
static int
next_inner(const unsigned char *p, Py_ssize_t len, Py_ssize_t *pos, Inner *m, int check_crc)
{
    Py_ssize_t at = *pos;
    if (len - at < LOG_OVERHEAD + LEGACY_V1_MIN_SIZE)
        return 0;
    int32_t size = be32(p + at + LEGACY_SIZE_OFFSET);
    if (size < LEGACY_V1_MIN_SIZE || size > len - at - LOG_OVERHEAD)
        return 0;
    Py_ssize_t end = at + LOG_OVERHEAD + size;
    if (p[at + LEGACY_MAGIC_OFFSET] != 1 || p[at + LEGACY_ATTRIBUTES_OFFSET] != 0)
        return 0;
    if (check_crc && (uint32_t)be32(p + at + LEGACY_CRC_OFFSET) !=
        crc32_ieee(p + at + LEGACY_MAGIC_OFFSET, end - at - LEGACY_MAGIC_OFFSET))
        return 0;
    m->offset = be64(p + at);
    LegacyMessage b;
    if (legacy_body(p, at, end, 1, &b) != LEGACY_OK)
        return 0;
    m->timestamp = b.timestamp;
    m->key_len = b.key_len;
    m->key = p + b.key_pos;
    m->value_len = b.value_len;
    m->value = p + b.value_pos;
    *pos = end;
    return 1;
}

/* A varint length (-1: null) and the bytes it counts. */
static inline unsigned char *
put_span(unsigned char *w, const unsigned char *data, int64_t len)
{
    w = put_varint(w, len);
    if (len > 0) {
        memcpy(w, data, (size_t)len);
        w += len;
    }
    return w;
}

/* What v1_inner_to_v2's pass found: the records' bounds, times and count. */
typedef struct {
    Py_ssize_t n;
    int64_t first, last, highest, base_ts, max_ts;
} Transcoding;

/* The pass of v1_inner_to_v2 over p[0:len], writing at start: the bytes written, or -1 to decline.
 * Touches no Python object, so that it runs without the GIL (convert inflates the next wrapper
 * meanwhile). A v2 record is never longer than the v1 message it comes from (32 bytes of framing at
 * most against 34), so the records fit in len bytes; the deltas do not depend on where the wrapper
 * places the offsets (the base cancels out), which is known only at the last message. */
static Py_ssize_t
transcode_pass(const unsigned char *p, Py_ssize_t len, Py_ssize_t max_records, unsigned char *start, Transcoding *t)
{
    unsigned char *w = start;
    Py_ssize_t pos = 0;
    Inner m;
    t->n = 0;
    while (pos < len) {
        if (!next_inner(p, len, &pos, &m, 1) || t->n >= max_records)
            return -1;
        if (t->n == 0) {
            t->first = t->highest = m.offset;
            t->base_ts = t->max_ts = m.timestamp;
        }
        int64_t od, td;
        if (__builtin_sub_overflow(m.offset, t->first, &od) || od < 0 || od > INT32_MAX ||
            __builtin_sub_overflow(m.timestamp, t->base_ts, &td) || (t->n > 0 && m.offset <= t->last))
            return -1; /* (offsets that do not grow: the reader's Records, and verify-crc, say so) */
        if (m.timestamp > t->max_ts)
            t->max_ts = m.timestamp;
        if (m.offset > t->highest)
            t->highest = m.offset;
        t->last = m.offset;
        t->n++;
        int64_t body = 1 + varint_size(td) + varint_size(od) + 1;
        body += m.key_len < 0 ? 1 : varint_size(m.key_len) + m.key_len;
        body += m.value_len < 0 ? 1 : varint_size(m.value_len) + m.value_len;
        if (varint_size(body) + body > pos - (w - start)) /* cannot happen (see above); never past len */
            return -1;
        w = put_varint(w, body);
        *w++ = 0; /* attributes: unused */
        w = put_varint(w, td);
        w = put_varint(w, od);
        w = put_span(w, m.key, m.key_len);
        w = put_span(w, m.value, m.value_len);
        *w++ = 0; /* no headers */
    }
    return t->n == 0 ? -1 : w - start;
}

PyObject *
v1_inner_to_v2(PyObject *self, PyObject *args)
{
    Py_buffer view;
    long long wrapper_offset;
    Py_ssize_t max_records;
    if (!PyArg_ParseTuple(args, "y*Ln", &view, &wrapper_offset, &max_records))
        return NULL;
    if (view.len == 0) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, view.len);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Transcoding t = {0, 0, 0, 0, 0, 0};
    Py_ssize_t written;
    Py_BEGIN_ALLOW_THREADS
    written = transcode_pass((const unsigned char *)view.buf, view.len, max_records,
                             (unsigned char *)PyBytes_AS_STRING(out), &t);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    /* The decoder's placing: relative to the last inner offset, which is the wrapper's (0: base 0),
     * in 128 bits as the decoder's Python ints. */
    int relative = legacy_relative(1, wrapper_offset);
    __int128 base = written < 0 ? 0 : legacy_inner_base(1, wrapper_offset, t.last);
    __int128 first_offset = base + t.first, last_offset = base + t.last, top = base + t.highest;
    if (written < 0 || (relative && wrapper_offset < t.last) || first_offset < INT64_MIN || top > INT64_MAX) {
        Py_DECREF(out);
        Py_RETURN_NONE; /* (the last offset lies between the first and the highest) */
    }
    if (_PyBytes_Resize(&out, written) < 0)
        return NULL;
    return Py_BuildValue("NnLLLL", out, t.n, (long long)first_offset, (long long)last_offset, (long long)t.base_ts,
                         (long long)t.max_ts);
}

int
encoder_init(PyObject *m)
{
    if (model_init() < 0)
        return -1;
    UnsupportedEncodingError = model_import("kafka_dump.errors", "UnsupportedEncodingError");
    ZERO = PyLong_FromLong(0);
    MINUS_ONE = PyLong_FromLong(-1);
    if (!UnsupportedEncodingError || !ZERO || !MINUS_ONE)
        return -1;
    crc32_init();
    return 0;
}
