/*
 * The compiled twin of render/jsonl.py: batch_json (one batch's JSON line, byte for byte the pure
 * twin's), run_json (a run of batches in one call) and plain_run_json (a run of plain v0/v1 messages
 * straight from their bytes, under decode_legacy_run's conditions, with no Batch or Record made);
 * tests/test_twins.py and tests/test_json_runs.py check them. It reads Batch, Record and Header fields
 * through _model.h; it renders output, so it is a module of the render layer, apart from decode.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h> /* an int's digits, read by small_long (Python.h has them from 3.11) */
#endif
#include <stdint.h>
#include <string.h>

#include "_buf.h"
#include "_model.h"
#include "_wire.h"

/* --payload, as render/jsonl.py's _PAYLOAD_CODES numbers it. */
enum { PAYLOAD_TEXT = 0, PAYLOAD_BASE64 = 1, PAYLOAD_HEX = 2 };

/* v in decimal, copied 20 bytes at once (a constant size: a few moves, not a call); the bytes past
 * the number are written over by what follows. */
static inline int
buf_long(Buf *b, long long v)
{
    if (buf_reserve(b, 20) < 0)
        return -1;
    char tmp[40];
    char *end = tmp + 20, *p = decimal(end, v);
    memcpy(b->data + b->len, p, 20);
    b->len += end - p;
    return 0;
}

/* The value of an exact int of at most two digits (every offset, time and size), read without a
 * call; 0 when it is anything else, for the general path. */
static inline int
small_long(PyObject *n, long long *v)
{
    if (!PyLong_CheckExact(n))
        return 0;
#if PY_VERSION_HEX >= 0x030C0000
    if (!PyUnstable_Long_IsCompact((PyLongObject *)n))
        return 0;
    *v = (long long)PyUnstable_Long_CompactValue((PyLongObject *)n);
    return 1;
#else
    Py_ssize_t size = Py_SIZE(n);
    const digit *d = ((PyLongObject *)n)->ob_digit;
    if (size == 0)
        *v = 0;
    else if (size == 1 || size == -1)
        *v = (long long)d[0];
    else if (size == 2 || size == -2)
        *v = (long long)(d[0] | (uint64_t)d[1] << PyLong_SHIFT);
    else
        return 0;
    if (size < 0)
        *v = -*v;
    return 1;
#endif
}

/* A Python int (or None) in decimal. */
static int
buf_number(Buf *b, PyObject *n)
{
    long long v;
    if (small_long(n, &v))
        return buf_long(b, v);
    if (n == Py_None)
        return PUT_LIT(b, "null");
    int overflow = 0;
    v = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow)
        return buf_long(b, v);
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
    int len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0)
        return 0;
    /* The second byte's range: narrower after E0 (overlong), ED (surrogates), F0 (overlong), F4 (past U+10FFFF). */
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
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

/* Two base64 characters for each 12 bits: half the lookups of one a character (made at import). */
static char B64_PAIRS[4096][2];

static void
b64_pairs_init(void)
{
    for (int i = 0; i < 4096; i++) {
        B64_PAIRS[i][0] = B64[i >> 6];
        B64_PAIRS[i][1] = B64[i & 63];
    }
}

static int
json_base64(Buf *b, const unsigned char *p, Py_ssize_t n)
{
    if (n > (PY_SSIZE_T_MAX - 8) / 4 * 3 || buf_reserve(b, (n + 2) / 3 * 4 + 2) < 0)
        return -1;
    char *o = b->data + b->len;
    *o++ = '"';
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        memcpy(o, B64_PAIRS[v >> 12], 2);
        memcpy(o + 2, B64_PAIRS[v & 4095], 2);
        o += 4;
    }
    if (n > i) { /* one or two bytes left */
        uint32_t v = (uint32_t)p[i] << 16 | (n - i == 2 ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = B64[v >> 18];
        *o++ = B64[(v >> 12) & 63];
        *o++ = n - i == 2 ? B64[(v >> 6) & 63] : '=';
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

/* Bytes in the --payload encoding. */
static inline int
json_data(Buf *b, const unsigned char *p, Py_ssize_t n, int mode)
{
    return mode == PAYLOAD_BASE64 ? json_base64(b, p, n) : mode == PAYLOAD_HEX ? json_hex(b, p, n) : json_text(b, p, n);
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
    return json_data(b, (const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), mode);
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
    if (!Py_IS_TYPE(r, (PyTypeObject *)model.record_type)) {
        PyErr_SetString(PyExc_TypeError, "batch_json takes Record values");
        return -1;
    }
    for (int i = 0; i < RECORD_FIELDS; i++) {
        if (RECORD_SLOT(r, i) == NULL) {
            PyErr_Format(PyExc_AttributeError, "Record.%s is not set", record_field_names[i]);
            return -1;
        }
    }
    PyObject *headers = RECORD_SLOT(r, R_HEADERS);
    if (!PyTuple_Check(headers)) {
        PyErr_SetString(PyExc_TypeError, "record headers must be a tuple");
        return -1;
    }
    if (PUT_LIT(b, "{\"offset\":") < 0 || buf_number(b, RECORD_SLOT(r, R_OFFSET)) < 0 ||
        PUT_LIT(b, ",\"timestamp\":") < 0 || buf_number(b, RECORD_SLOT(r, R_TIMESTAMP)) < 0 ||
        PUT_LIT(b, ",\"key\":") < 0 || json_payload(b, RECORD_SLOT(r, R_KEY), mode) < 0 ||
        PUT_LIT(b, ",\"value\":") < 0 || json_payload(b, RECORD_SLOT(r, R_VALUE), mode) < 0 ||
        PUT_LIT(b, ",\"headers\":[") < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(headers); i++) {
        PyObject *h = PyTuple_GET_ITEM(headers, i);
        if (!Py_IS_TYPE(h, (PyTypeObject *)model.header_type)) {
            PyErr_SetString(PyExc_TypeError, "headers must be Header values");
            return -1;
        }
        PyObject *key = HEADER_SLOT(h, H_KEY), *hvalue = HEADER_SLOT(h, H_VALUE);
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
        if (PUT_LIT(b, ",\"sequence\":") < 0 || buf_number(b, RECORD_SLOT(r, R_SEQUENCE)) < 0)
            return -1;
    }
    else {
        PyObject *valid = RECORD_SLOT(r, R_CRC_VALID);
        if (PUT_LIT(b, ",\"crc\":") < 0 || buf_number(b, RECORD_SLOT(r, R_CRC)) < 0 ||
            PUT_LIT(b, ",\"crcValid\":") < 0 ||
            (valid == Py_None ? PUT_LIT(b, "null") : valid == Py_True ? PUT_LIT(b, "true") : PUT_LIT(b, "false")) < 0)
            return -1;
    }
    PyObject *control = RECORD_SLOT(r, R_CONTROL);
    if (control != Py_None && json_control(b, control) < 0)
        return -1;
    return PUT_LIT(b, "}");
}

static const char *const TS_LABELS[] = {"\"NoTimestampType\"", "\"CreateTime\"", "\"LogAppendTime\""};

/* A Batch's labels, as model.py's Compression.label and TimestampType.label give them. */
static int
put_label(Buf *b, PyObject *code, int is_compression)
{
    long v = PyLong_AsLong(code);
    if (v == -1 && PyErr_Occurred())
        return -1;
    static const char *codecs[] = {"\"none\"", "\"gzip\"", "\"snappy\"", "\"lz4\"", "\"zstd\""};
    const char *label;
    if (is_compression)
        label = v >= 0 && v <= 4 ? codecs[v] : "\"unknown\"";
    else if (v >= -1 && v <= 1)
        label = TS_LABELS[v + 1];
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

/* One batch's whole JSON line, appended to b: the twin of render/jsonl.py's batch_json. */
static int
put_batch(Buf *b, const char *file_json, Py_ssize_t file_len, PyObject *batch, PyObject *records, int mode)
{
    if (!Py_IS_TYPE(batch, (PyTypeObject *)model.batch_type) || PyTuple_GET_SIZE(batch) != BATCH_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "batch_json takes a Batch");
        return -1;
    }
    int magic = (int)PyLong_AsLong(BATCH_ITEM(batch, B_MAGIC));
    if (magic == -1 && PyErr_Occurred())
        return -1;
    if (PUT_LIT(b, "{\"type\":\"batch\",\"file\":") < 0 || buf_put(b, file_json, file_len) < 0 ||
        PUT_LIT(b, ",\"position\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_POSITION)) < 0 ||
        PUT_LIT(b, ",\"baseOffset\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_BASE_OFFSET)) < 0 ||
        PUT_LIT(b, ",\"lastOffset\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_LAST_OFFSET)) < 0 ||
        PUT_LIT(b, ",\"magic\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_MAGIC)) < 0 ||
        PUT_LIT(b, ",\"compression\":") < 0 || put_label(b, BATCH_ITEM(batch, B_COMPRESSION), 1) < 0 ||
        PUT_LIT(b, ",\"timestampType\":") < 0 || put_label(b, BATCH_ITEM(batch, B_TIMESTAMP_TYPE), 0) < 0 ||
        PUT_LIT(b, ",\"baseTimestamp\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_BASE_TIMESTAMP)) < 0 ||
        PUT_LIT(b, ",\"maxTimestamp\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_MAX_TIMESTAMP)) < 0 ||
        PUT_LIT(b, ",\"producerId\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_PRODUCER_ID)) < 0 ||
        PUT_LIT(b, ",\"producerEpoch\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_PRODUCER_EPOCH)) < 0 ||
        PUT_LIT(b, ",\"baseSequence\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_BASE_SEQUENCE)) < 0 ||
        PUT_LIT(b, ",\"lastSequence\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_LAST_SEQUENCE)) < 0 ||
        PUT_LIT(b, ",\"partitionLeaderEpoch\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_PARTITION_LEADER_EPOCH)) < 0 ||
        PUT_LIT(b, ",\"isTransactional\":") < 0 || put_bool(b, BATCH_ITEM(batch, B_IS_TRANSACTIONAL)) < 0 ||
        PUT_LIT(b, ",\"isControl\":") < 0 || put_bool(b, BATCH_ITEM(batch, B_IS_CONTROL)) < 0 ||
        PUT_LIT(b, ",\"deleteHorizonMs\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_DELETE_HORIZON_MS)) < 0 ||
        PUT_LIT(b, ",\"crc\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_CRC)) < 0 ||
        PUT_LIT(b, ",\"crcValid\":") < 0 || put_bool(b, BATCH_ITEM(batch, B_CRC_VALID)) < 0 ||
        PUT_LIT(b, ",\"sizeInBytes\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_SIZE)) < 0 ||
        PUT_LIT(b, ",\"recordCount\":") < 0 || buf_number(b, BATCH_ITEM(batch, B_RECORD_COUNT)) < 0 ||
        PUT_LIT(b, ",\"records\":") < 0)
        return -1;
    if (records == Py_None) {
        if (PUT_LIT(b, "null") < 0)
            return -1;
    }
    else {
        PyObject *seq = PySequence_Fast(records, "batch_json takes a sequence of records");
        if (seq == NULL)
            return -1;
        int rc = PUT_LIT(b, "[");
        for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
            if ((i > 0 && PUT_LIT(b, ",") < 0) || json_record(b, PySequence_Fast_GET_ITEM(seq, i), magic, mode) < 0)
                rc = -1;
        }
        Py_DECREF(seq);
        if (rc < 0 || PUT_LIT(b, "]") < 0)
            return -1;
    }
    return PUT_LIT(b, "}\n");
}

/* The twin of render/jsonl.py's batch_json: one batch's whole JSON line. */
PyObject *
batch_json(PyObject *self, PyObject *args)
{
    const char *file_json;
    Py_ssize_t file_len;
    PyObject *batch, *records;
    int mode;
    if (!PyArg_ParseTuple(args, "y#OOi", &file_json, &file_len, &batch, &records, &mode))
        return NULL;
    Buf b = BUF_INIT;
    PyObject *result = NULL;
    if (put_batch(&b, file_json, file_len, batch, records, mode) == 0)
        result = buf_finish(&b);
    Py_XDECREF(b.bytes);
    return result;
}

/* The twin of render/jsonl.py's run_json: the lines of a run of batches of one file, each with all
 * its records, as one bytes object (one call and one write for a whole read window). */
PyObject *
run_json(PyObject *self, PyObject *args)
{
    PyObject *file, *batches;
    const char *file_json;
    Py_ssize_t file_len;
    int mode;
    if (!PyArg_ParseTuple(args, "Uy#Oi", &file, &file_json, &file_len, &batches, &mode))
        return NULL;
    PyObject *seq = PySequence_Fast(batches, "run_json takes a sequence of batches");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Buf b = BUF_INIT;
    PyObject *result = NULL;
    /* About 700 bytes a line for a plain message of 100 bytes: one allocation for most runs. */
    if (n > 0 && buf_reserve(&b, n < PY_SSIZE_T_MAX / 1024 ? n * 1024 : n) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *batch = PySequence_Fast_GET_ITEM(seq, i);
        if (!Py_IS_TYPE(batch, (PyTypeObject *)model.batch_type) || PyTuple_GET_SIZE(batch) != BATCH_FIELDS) {
            PyErr_SetString(PyExc_TypeError, "run_json takes Batch values");
            goto done;
        }
        PyObject *name = BATCH_ITEM(batch, B_FILE);
        if (name != file) {
            int same = PyUnicode_Check(name) ? PyUnicode_Compare(name, file) : -1;
            if (same == -1 && PyErr_Occurred())
                goto done;
            if (same != 0) {
                PyErr_SetString(PyExc_ValueError, "run_json takes the batches of one file");
                goto done;
            }
        }
        if (put_batch(&b, file_json, file_len, batch, BATCH_ITEM(batch, B_RECORDS), mode) < 0)
            goto done;
    }
    result = buf_finish(&b);
done:
    Py_DECREF(seq);
    Py_XDECREF(b.bytes);
    return result;
}


/* ---- a run of plain v0/v1 messages, from their bytes straight to JSON ------------------------------ */

/* A plain message (uncompressed, whole, well formed, valid CRC: what decode.c's decode_legacy_run
 * makes a one-record Batch of) as read from the wire; len -1 is null. */
typedef LegacyMessage Plain;

/* The message p[pos:end], under the conditions of decode.c's parse_message and a valid CRC (no
 * reason is kept: the segment reader decodes, and reports, an entry that fails). */
static inline int
plain_message(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Plain *m)
{
    if (legacy_message(p, pos, end, m) != LEGACY_OK)
        return -1;
    if (crc32_ieee(p + pos + LEGACY_MAGIC_OFFSET, end - pos - LEGACY_MAGIC_OFFSET) != m->crc)
        return -1;
    return 0;
}

/* v in decimal into out (20 bytes or more); returns its length. */
static inline Py_ssize_t
fmt_long(char *out, long long v)
{
    Buf b = {NULL, out, 0, 40};
    buf_long(&b, v); /* cannot fail: the room is there */
    return b.len;
}

#define PUT_RAW(b, s, n)                                \
    do {                                                \
        memcpy((b)->data + (b)->len, (s), (size_t)(n)); \
        (b)->len += (n);                                \
    } while (0)
#define PUT_RAW_LIT(b, lit) PUT_RAW((b), (lit), sizeof(lit) - 1)

/* One plain message's line: what put_batch writes for the Batch decode_legacy_run makes of it. */
static int
put_plain(Buf *b, const char *file_json, Py_ssize_t file_len, const unsigned char *p, const Plain *m,
          Py_ssize_t position, Py_ssize_t size, int with_records, int mode)
{
    char offset[40], ts[40], crc[40], num[40];
    Py_ssize_t offset_len = fmt_long(offset, m->offset), ts_len = fmt_long(ts, m->timestamp);
    Py_ssize_t crc_len = fmt_long(crc, m->crc), n;
    if (file_len > PY_SSIZE_T_MAX - 1024 || buf_reserve(b, file_len + 1024) < 0)
        return -1;
    PUT_RAW_LIT(b, "{\"type\":\"batch\",\"file\":");
    PUT_RAW(b, file_json, file_len);
    PUT_RAW_LIT(b, ",\"position\":");
    n = fmt_long(num, position);
    PUT_RAW(b, num, n);
    PUT_RAW_LIT(b, ",\"baseOffset\":");
    PUT_RAW(b, offset, offset_len);
    PUT_RAW_LIT(b, ",\"lastOffset\":");
    PUT_RAW(b, offset, offset_len);
    if (m->magic == 0)
        PUT_RAW_LIT(b, ",\"magic\":0,\"compression\":\"none\",\"timestampType\":");
    else
        PUT_RAW_LIT(b, ",\"magic\":1,\"compression\":\"none\",\"timestampType\":");
    const char *label = TS_LABELS[m->magic == 0 ? 0 : (m->attributes & TIMESTAMP_TYPE_BIT) ? 2 : 1];
    PUT_RAW(b, label, strlen(label));
    PUT_RAW_LIT(b, ",\"baseTimestamp\":");
    PUT_RAW(b, ts, ts_len);
    PUT_RAW_LIT(b, ",\"maxTimestamp\":");
    PUT_RAW(b, ts, ts_len);
    PUT_RAW_LIT(b, ",\"producerId\":-1,\"producerEpoch\":-1,\"baseSequence\":-1,\"lastSequence\":-1,"
                   "\"partitionLeaderEpoch\":-1,\"isTransactional\":false,\"isControl\":false,"
                   "\"deleteHorizonMs\":null,\"crc\":");
    PUT_RAW(b, crc, crc_len);
    PUT_RAW_LIT(b, ",\"crcValid\":true,\"sizeInBytes\":");
    n = fmt_long(num, size);
    PUT_RAW(b, num, n);
    if (!with_records) {
        PUT_RAW_LIT(b, ",\"recordCount\":1,\"records\":null}\n");
        return 0;
    }
    PUT_RAW_LIT(b, ",\"recordCount\":1,\"records\":[{\"offset\":");
    PUT_RAW(b, offset, offset_len);
    PUT_RAW_LIT(b, ",\"timestamp\":");
    PUT_RAW(b, ts, ts_len);
    PUT_RAW_LIT(b, ",\"key\":");
    if (m->key_len < 0)
        PUT_RAW_LIT(b, "null");
    else if (json_data(b, p + m->key_pos, m->key_len, mode) < 0)
        return -1;
    if (PUT_LIT(b, ",\"value\":") < 0)
        return -1;
    if (m->value_len < 0) {
        if (PUT_LIT(b, "null") < 0)
            return -1;
    }
    else if (json_data(b, p + m->value_pos, m->value_len, mode) < 0)
        return -1;
    if (buf_reserve(b, 128) < 0)
        return -1;
    PUT_RAW_LIT(b, ",\"headers\":[],\"crc\":");
    PUT_RAW(b, crc, crc_len);
    PUT_RAW_LIT(b, ",\"crcValid\":true}]}\n");
    return 0;
}

/* The twin of render/jsonl.py's plain_run_json: the run of plain messages that starts at data[pos]
 * (file position file_pos), decoded and written in one pass, without a Batch or Record made: the
 * lines run_json writes for the batches decode_legacy_run makes of the same bytes, and the same stop. */
PyObject *
plain_run_json(PyObject *self, PyObject *args)
{
    const char *file_json;
    Py_ssize_t file_len, pos, end, file_pos;
    Py_buffer view;
    int with_records, mode;
    if (!PyArg_ParseTuple(args, "y#y*nnnpi", &file_json, &file_len, &view, &pos, &end, &file_pos, &with_records,
                          &mode) ||
        view_window(&view, pos, end) < 0)
        return NULL;
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t start = pos, count = 0;
    Buf b = BUF_INIT;
    PyObject *result = NULL, *data = NULL;
    Plain m;
    Py_ssize_t entry_end;
    while ((entry_end = plain_entry_end(p, pos, end)) >= 0 && plain_message(p, pos, entry_end, &m) == 0) {
        /* About five times the bytes left, for messages of 100 bytes in base64: one allocation for
         * most runs, made once the first message is known to be plain (a wrapper's entry needs none). */
        if (count == 0 && buf_reserve(&b, (end - pos) < PY_SSIZE_T_MAX / 8 ? (end - pos) * 6 : end - pos) < 0)
            goto done;
        if (put_plain(&b, file_json, file_len, p, &m, file_pos + pos - start, entry_end - pos, with_records, mode) < 0)
            goto done;
        count++;
        pos = entry_end;
    }
    data = buf_finish(&b);
    if (data != NULL)
        result = Py_BuildValue("(Nnn)", data, count, pos - start);
done:
    Py_XDECREF(b.bytes);
    PyBuffer_Release(&view);
    return result;
}


int
jsonfast_init(PyObject *m)
{
    if (model_init() < 0)
        return -1;
    b64_pairs_init();
    crc32_init();
    return 0;
}
