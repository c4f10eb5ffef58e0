/*
 * The compiled twin of kdump's decoder hot loops, one function for each of decode.py's: the records of
 * a v2 batch, the inner messages of a decompressed v0/v1 wrapper, a sound compressed v0/v1 wrapper as
 * a Batch, and a run of plain v0/v1 messages as Batches. Each gives exactly what its pure twin gives
 * (the same records, the same errors at the same positions), as tests/test_twins.py checks.
 *
 * Memory safety: every read is checked against the record's own length, which is checked against the
 * end of the batch, which is checked against the buffer; no length from the data sizes an allocation
 * before it has been checked against the bytes that are there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_layout.h"
#include "_model.h"
#include "_wire.h"

static PyObject *CorruptRecordError;
static PyObject *CODECS[8];   /* Compression(i) for the attributes' codec bits */
static PyObject *TS_TYPES[3]; /* TimestampType NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME */
static PyObject *MINUS_ONE, *ONE;

/* base + offset as a Python int, exact where int64 would overflow (Python's ints do not): base is an
 * int64 or a legacy_inner_base (0 <= base < 2**64). */
static inline PyObject *
add_exact(__int128 base, int64_t offset)
{
    __int128 r = base + offset;
    if (r >= INT64_MIN && r <= INT64_MAX)
        return PyLong_FromLongLong((long long)r);
    PyObject *pa = base < 0 ? PyLong_FromLongLong((long long)base)
                            : PyLong_FromUnsignedLongLong((unsigned long long)base);
    PyObject *pb = PyLong_FromLongLong(offset);
    PyObject *sum = pa && pb ? PyNumber_Add(pa, pb) : NULL;
    Py_XDECREF(pa);
    Py_XDECREF(pb);
    return sum;
}

/* ---- Record's and Header's deallocation ---------------------------------------------------------
 * The generic deallocator of classes (subtype_dealloc) looks for finalizers, weak references and a
 * __dict__, and walks the class's members for the slots to release. Records and Headers, freed by the
 * million, have none of those (slots_only): releasing their slots and memory is all there is to do.
 * Installed on the classes themselves: a subclass's generic deallocator releases what it adds and then
 * calls this one as its base's (test_twins checks both). */

/* Freed Records' memory, kept for the next ones (as CPython's own freelists do): a batch's records are
 * freed as the next batch's are built. Each kept object is untracked, its slots cleared, and it keeps
 * its reference to its type. */
#ifndef Py_GIL_DISABLED
#define RECORD_FREELIST_MAX 4096
static PyObject *record_freelist[RECORD_FREELIST_MAX];
static int record_nfree;
#endif

/* Memory for a Record, from the freelist or new; new_atomic_record fills every slot. */
static inline PyObject *
record_alloc(void)
{
#ifndef Py_GIL_DISABLED
    if (record_nfree > 0) {
        /* PyObject_Init takes a new reference to the type; the kept object still holds its old one. */
        PyTypeObject *tp = (PyTypeObject *)model.record_type;
        PyObject *obj = PyObject_Init(record_freelist[--record_nfree], tp);
        Py_DECREF(tp);
        return obj;
    }
#endif
    return (PyObject *)PyObject_GC_New(PyObject, (PyTypeObject *)model.record_type);
}

static inline void
slots_clear(PyObject *self, const Py_ssize_t *offsets, Py_ssize_t n)
{
    PyObject_GC_UnTrack(self);
    for (Py_ssize_t i = 0; i < n; i++)
        Py_CLEAR(*(PyObject **)((char *)self + offsets[i]));
}

static inline void
slots_free(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp); /* an instance of a heap type holds a reference to it */
}

/* Also called, as its base's, by the generic deallocator of a subclass's instance. */
static void
record_dealloc(PyObject *self)
{
    slots_clear(self, model.record_offsets, RECORD_FIELDS);
#ifndef Py_GIL_DISABLED
    if (Py_TYPE(self) == (PyTypeObject *)model.record_type && record_nfree < RECORD_FREELIST_MAX) {
        record_freelist[record_nfree++] = self;
        return;
    }
#endif
    slots_free(self);
}

static void
header_dealloc(PyObject *self)
{
    slots_clear(self, model.header_offsets, HEADER_FIELDS);
    slots_free(self);
}

/* ---- Batch's allocation and deallocation -------------------------------------------------------
 * Every plain v0/v1 message is a Batch of its own, a 23-item tuple subclass whose generic deallocator
 * and fresh allocation cost about as much as building its fields. Where the class adds nothing to
 * tuple (model.batch_plain), batch_dealloc keeps the memory of a whole Batch for the next one; a
 * subclass's instance or one of another length is released and freed. Up to 3.13 only: from 3.14
 * tuples cache their hash and new_batch takes tuple.__new__. */
#if !defined(Py_GIL_DISABLED) && PY_VERSION_HEX < 0x030E0000
#define BATCH_FREELIST_MAX 1024
static PyObject *batch_freelist[BATCH_FREELIST_MAX];
static int batch_nfree;
static int batch_fast; /* batch_dealloc is Batch's: plain_batch may take its memory from the freelist */
static int unit_fast;  /* and Record's is record_dealloc: a kept Batch may keep its records, see below */

/* A plain message's batch holds a tuple of one record: when the batch is freed, the tuple and the
 * record (its slots released) stay with it in the freelist for the next plain message's batch. Only an
 * untracked exact tuple holding one untracked exact Record, each held by nothing else, is kept. */
static inline int
records_unit(PyObject *records)
{
    if (!unit_fast || !PyTuple_CheckExact(records) || Py_REFCNT(records) != 1 || PyTuple_GET_SIZE(records) != 1 ||
        PyObject_GC_IsTracked(records))
        return 0;
    PyObject *record = PyTuple_GET_ITEM(records, 0);
    return Py_IS_TYPE(record, (PyTypeObject *)model.record_type) && Py_REFCNT(record) == 1 &&
           !PyObject_GC_IsTracked(record);
}

/* An untracked Batch of BATCH_FIELDS unset items but its records field: NULL, or a kept tuple of one
 * record whose slots are all NULL (see records_unit). The caller fills every item, or else releases
 * the batch with batch_release. */
static inline PyObject *
batch_alloc(void)
{
    PyTypeObject *tp = (PyTypeObject *)model.batch_type;
    if (batch_nfree > 0) {
        /* PyObject_InitVar takes a new reference to the type; the kept object still holds its old one. */
        PyObject *obj = (PyObject *)PyObject_InitVar((PyVarObject *)batch_freelist[--batch_nfree], tp, BATCH_FIELDS);
        Py_DECREF(tp);
        return obj;
    }
    PyObject *obj = (PyObject *)PyObject_GC_NewVar(PyTupleObject, tp, BATCH_FIELDS);
    if (obj != NULL)
        PyTuple_SET_ITEM(obj, model.batch_index[B_RECORDS], NULL);
    return obj;
}

/* Give back a batch from batch_alloc that was not filled: its fields all NULL but its records field,
 * which is left as batch_alloc gave it or NULL. */
static void
batch_release(PyObject *obj)
{
    PyObject **items = ((PyTupleObject *)obj)->ob_item;
    for (int i = 0; i < BATCH_FIELDS; i++)
        if (i != model.batch_index[B_RECORDS])
            items[i] = NULL;
    Py_DECREF(obj);
}

/* tuple's deallocator, with the freelist above; also called, as the base's, by the generic one of a
 * subclass's instance. */
static void
batch_dealloc(PyObject *self)
{
    Py_ssize_t n = Py_SIZE(self);
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, batch_dealloc)
    PyObject **items = ((PyTupleObject *)self)->ob_item;
    int keep = n == BATCH_FIELDS && Py_TYPE(self) == (PyTypeObject *)model.batch_type &&
               batch_nfree < BATCH_FREELIST_MAX;
    Py_ssize_t at = model.batch_index[B_RECORDS];
    PyObject *unit = NULL;
    if (keep && items[at] != NULL && records_unit(items[at])) {
        unit = items[at];
        items[at] = NULL;
    }
    for (Py_ssize_t i = n - 1; i >= 0; i--)
        Py_XDECREF(items[i]);
    if (keep) {
        if (unit != NULL)
            slots_clear(PyTuple_GET_ITEM(unit, 0), model.record_offsets, RECORD_FIELDS);
        items[at] = unit;
        batch_freelist[batch_nfree++] = self;
    }
    else {
        slots_free(self);
    }
    Py_TRASHCAN_END
}
#endif

/* Where the class is nothing but its slots (and has no finalizer), give it the deallocator above. */
static void
plain_dealloc_install(PyObject *cls, int plain, destructor fast)
{
    PyTypeObject *t = (PyTypeObject *)cls;
    if (plain && t->tp_finalize == NULL && t->tp_del == NULL && t->tp_free == PyObject_GC_Del)
        t->tp_dealloc = fast;
}

/* vals (RECORD_FIELDS references, stolen) placed in the slots of obj, a Record from record_alloc. */
static inline void
record_fill(PyObject *obj, PyObject **vals)
{
    if (model.record_in_order)
        memcpy((char *)obj + sizeof(PyObject), vals, RECORD_FIELDS * sizeof(PyObject *));
    else
        for (int i = 0; i < RECORD_FIELDS; i++)
            RECORD_SLOT(obj, i) = vals[i];
}

/* new_record for fields the caller knows are all ints, bytes, None, bools or the empty tuple, as a
 * v0/v1 message's are: such a record can be in no cycle, so where the class allows (record_plain) it is
 * allocated untracked and filled without new_slotted's look at each field. */
static PyObject *
new_atomic_record(PyObject **vals)
{
    if (!model.record_plain)
        return new_record(vals);
    if (vals_failed(vals, RECORD_FIELDS))
        return NULL;
    PyObject *obj = record_alloc();
    if (obj == NULL) {
        vals_release(vals, RECORD_FIELDS);
        return NULL;
    }
    record_fill(obj, vals);
    return obj;
}

/* CorruptRecordError(err's message, position=its position (None unless with_position), check=,
 * expected=, found=); NULL with an exception set if that fails. */
static PyObject *
corrupt_at(const DataError *err, int with_position)
{
    PyObject *args = PyTuple_Pack(1, err->message);
    PyObject *kwargs = Py_BuildValue(
        "{s:N,s:s,s:N,s:N}", "position", with_position ? PyLong_FromSsize_t(err->position) : Py_NewRef(Py_None),
        "check", err->check, "expected",
        err->numbers & HAS_EXPECTED ? PyLong_FromLongLong(err->expected) : Py_NewRef(Py_None), "found",
        err->numbers & HAS_FOUND ? PyLong_FromLongLong(err->found) : Py_NewRef(Py_None));
    PyObject *exc = (args && kwargs) ? PyObject_Call(CorruptRecordError, args, kwargs) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return exc;
}

/* ---- v2 records (the twin of _pure.decode_v2_records) ------------------------------------------ */

/* A key or a value of n bytes at p: None when n is negative, else its bytes, or prev itself (may be
 * NULL) when it is a bytes object holding the same: keys and headers repeat from record to record in
 * real data, and bytes are immutable, so sharing one is invisible. */
static inline PyObject *
nullable_bytes(const unsigned char *p, int64_t n, PyObject *prev)
{
    if (n < 0)
        return Py_NewRef(Py_None);
    if (prev != NULL && PyBytes_CheckExact(prev) && PyBytes_GET_SIZE(prev) == n &&
        memcmp(PyBytes_AS_STRING(prev), p, (size_t)n) == 0)
        return Py_NewRef(prev);
    return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
}

/* The count headers of a record at p[pos:body_end], which v2_record has read, as a new tuple in
 * *headers. Each shares what it holds alike with the header at its index in prev (the batch's last
 * headers, or NULL): its bytes, the whole frozen Header, or prev's tuple. Returns 0, or -1. */
static int
record_headers(const unsigned char *p, Py_ssize_t pos, Py_ssize_t body_end, int64_t count, PyObject *prev,
               PyObject **headers)
{
    PyObject *tuple = PyTuple_New((Py_ssize_t)count);
    if (tuple == NULL)
        return -1;
    Py_ssize_t known = prev == NULL ? 0 : PyTuple_GET_SIZE(prev);
    int all_known = known == (Py_ssize_t)count;
    for (Py_ssize_t j = 0; j < (Py_ssize_t)count; j++) {
        PyObject *was = j < known ? PyTuple_GET_ITEM(prev, j) : NULL;
        PyObject *was_key = was == NULL ? NULL : HEADER_SLOT(was, H_KEY);
        PyObject *was_value = was == NULL ? NULL : HEADER_SLOT(was, H_VALUE);
        int64_t n = 0;
        varint_fast(p, &pos, body_end, VARINT_MAX_BYTES, &n); /* read before: it is there */
        PyObject *key = nullable_bytes(p + pos, n, was_key);
        pos += (Py_ssize_t)n;
        varint_fast(p, &pos, body_end, VARINT_MAX_BYTES, &n);
        PyObject *value = nullable_bytes(p + pos, n, was_value);
        if (n > 0)
            pos += (Py_ssize_t)n;
        PyObject *header;
        if (key != NULL && was != NULL && key == was_key && value == was_value) {
            Py_DECREF(key);
            Py_DECREF(value);
            header = Py_NewRef(was);
        }
        else {
            all_known = 0;
            header = new_header(key, value); /* steals both, either may be NULL */
        }
        if (header == NULL) {
            Py_DECREF(tuple);
            return -1;
        }
        PyTuple_SET_ITEM(tuple, j, header);
    }
    if (all_known && count > 0) {
        Py_DECREF(tuple);
        *headers = Py_NewRef(prev);
        return 0;
    }
    untrack_if_atomic(tuple);
    *headers = tuple;
    return 0;
}

/* A search's rules over a record's raw bytes (wire/match.py's RecordMatch, read from its tuple): exact
 * bytes compared here, a regular expression searched by Python's re over a bytes copy, and only in a
 * field that holds the bytes every match of it holds (key_literal, value_literal), looked for here. */
typedef struct {
    Py_buffer key, header_key, header_value; /* .buf NULL where the rule is not given */
    Py_buffer key_literal, value_literal;    /* .buf NULL where there is none */
    PyObject *key_search, *value_search;     /* borrowed; NULL where not given */
} RecordMatch;

static void
record_match_release(RecordMatch *m)
{
    if (m->key.buf != NULL)
        PyBuffer_Release(&m->key);
    if (m->header_key.buf != NULL)
        PyBuffer_Release(&m->header_key);
    if (m->header_value.buf != NULL)
        PyBuffer_Release(&m->header_value);
    if (m->key_literal.buf != NULL)
        PyBuffer_Release(&m->key_literal);
    if (m->value_literal.buf != NULL)
        PyBuffer_Release(&m->value_literal);
}

/* Read the RecordMatch tuple t into *m (zeroed first). Returns 0, or -1 with an exception set. */
static int
record_match_read(PyObject *t, RecordMatch *m)
{
    memset(m, 0, sizeof *m);
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 7) {
        PyErr_SetString(PyExc_TypeError, "match must be a RecordMatch");
        return -1;
    }
    Py_buffer *exact[5] = {&m->key, &m->header_key, &m->header_value, &m->key_literal, &m->value_literal};
    const int exact_at[5] = {0, 3, 4, 5, 6};
    for (int j = 0; j < 5; j++) {
        PyObject *o = PyTuple_GET_ITEM(t, exact_at[j]);
        if (o != Py_None && PyObject_GetBuffer(o, exact[j], PyBUF_SIMPLE) < 0) {
            record_match_release(m);
            return -1;
        }
    }
    m->key_search = PyTuple_GET_ITEM(t, 1) == Py_None ? NULL : PyTuple_GET_ITEM(t, 1);
    m->value_search = PyTuple_GET_ITEM(t, 2) == Py_None ? NULL : PyTuple_GET_ITEM(t, 2);
    return 0;
}

static inline int
same_bytes(const Py_buffer *b, const unsigned char *p, int64_t n)
{
    return n >= 0 && n == (int64_t)b->len && memcmp(b->buf, p, (size_t)n) == 0;
}

/* p[0:n] holds the bytes of lit (an empty lit: always). */
static int
holds(const Py_buffer *lit, const unsigned char *p, int64_t n)
{
    const unsigned char *needle = lit->buf;
    Py_ssize_t k = lit->len;
    if (k == 0)
        return 1;
    if (n < k)
        return 0;
    for (const unsigned char *end = p + n - k + 1; p < end; p++) {
        p = memchr(p, needle[0], (size_t)(end - p));
        if (p == NULL)
            return 0;
        if (memcmp(p, needle, (size_t)k) == 0)
            return 1;
    }
    return 0;
}

/* search(bytes of p[0:n]) found something: 1, 0 (or a null field, or one without lit's bytes, which
 * every match holds), or -1 with an exception set. */
static int
searched(PyObject *search, const Py_buffer *lit, const unsigned char *p, int64_t n)
{
    if (n < 0 || (lit->buf != NULL && !holds(lit, p, n)))
        return 0;
    PyObject *b = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
    if (b == NULL)
        return -1;
    PyObject *found = PyObject_CallOneArg(search, b);
    Py_DECREF(b);
    if (found == NULL)
        return -1;
    int hit = found != Py_None;
    Py_DECREF(found);
    return hit;
}

/* A record's key p[key_pos:+key_len] and value p[value_pos:+value_len] (a negative length: null) meet
 * m's rules on them: 1, 0, or -1 with an exception set. */
static int
fields_match(const unsigned char *p, Py_ssize_t key_pos, int64_t key_len, Py_ssize_t value_pos, int64_t value_len,
             const RecordMatch *m)
{
    if (m->key.buf != NULL && !same_bytes(&m->key, p + key_pos, key_len))
        return 0;
    int hit = 1;
    if (m->key_search != NULL)
        hit = searched(m->key_search, &m->key_literal, p + key_pos, key_len);
    if (hit == 1 && m->value_search != NULL)
        hit = searched(m->value_search, &m->value_literal, p + value_pos, value_len);
    return hit;
}

/* The record r of p, which v2_record has read (its headers are sound): 1 when it meets every rule
 * of m, 0 when not, -1 with an exception set. */
static int
record_matches(const unsigned char *p, const V2Record *r, const RecordMatch *m)
{
    if (m->header_key.buf != NULL) {
        Py_ssize_t pos = r->headers_pos;
        int found = 0;
        for (int64_t j = 0; j < r->header_count && !found; j++) {
            int64_t kn = 0, vn = 0;
            varint_fast(p, &pos, r->body_end, VARINT_MAX_BYTES, &kn);
            Py_ssize_t key_at = pos;
            pos += (Py_ssize_t)kn;
            varint_fast(p, &pos, r->body_end, VARINT_MAX_BYTES, &vn);
            found = same_bytes(&m->header_key, p + key_at, kn) &&
                    (m->header_value.buf == NULL || same_bytes(&m->header_value, p + pos, vn));
            if (vn > 0)
                pos += (Py_ssize_t)vn;
        }
        if (!found)
            return 0;
    }
    return fields_match(p, r->key_pos, r->key_len, r->value_pos, r->value_len, m);
}

PyObject *
decode_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count, base_offset, base_timestamp, base_sequence, last_offset_delta = INT64_MAX;
    PyObject *log_append_time, *match_tuple = Py_None;
    if (!PyArg_ParseTuple(args, "y*nnLLLOL|LO", &view, &pos, &end, &count, &base_offset, &base_timestamp,
                          &log_append_time, &base_sequence, &last_offset_delta, &match_tuple))
        return NULL;
    if (view_window(&view, pos, end) < 0)
        return NULL;
    RecordMatch match;
    int matching = match_tuple != Py_None;
    if (matching && record_match_read(match_tuple, &match) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    DataError err = {NULL, 0};
    /* Room for every record the batch declares, as far as its bytes can hold them (v2_record refuses one
     * of less than 1 + V2_RECORD_MIN_LENGTH bytes): a lying count sizes nothing beyond the payload. */
    Py_ssize_t room = (end - pos) / (1 + V2_RECORD_MIN_LENGTH), filled = 0;
    PyObject *records = PyList_New(count <= 0 ? 0 : count < room ? (Py_ssize_t)count : room);
    PyObject *key = NULL, *value = NULL, *headers = NULL, *result = NULL;
    /* The previous record's key and value, the last non-empty headers and the last boxed timestamp
     * (own references): the next record shares each where it holds the same (see nullable_bytes). */
    PyObject *last_key = NULL, *last_value = NULL, *last_headers = NULL, *last_time = NULL;
    int64_t last_ts_delta = 0;
    int64_t budget = MAX_DECODED_PER_BATCH; /* records and headers yet to build */
    if (records == NULL)
        goto done;
    /* Untracked while it fills: it holds only untracked records then, and each collection the
     * allocations below trigger would otherwise walk it. Tracked again before it is returned. */
    PyObject_GC_UnTrack(records);
    Py_ssize_t first = pos;
    for (long long i = 0; i < count; i++) {
        Py_ssize_t start = pos;
        if (pos >= end) /* at the start of the records: the batch's count is what is wrong */
            CHECK_ERROR(&err, first, CHECK_COUNT_MISMATCH, HAS_EXPECTED | HAS_FOUND, count, i,
                        "batch declares %lld records but holds %lld", count, i);
        V2Record r;
        if (v2_record(p, &pos, end, &r, NULL, NULL, &err) < 0)
            goto fail;
        int64_t ts_delta = r.ts_delta, offset_delta = r.offset_delta, offset_value;
        if (offset_delta > last_offset_delta)
            CHECK_ERROR(&err, start, CHECK_OFFSET_DELTA, HAS_EXPECTED | HAS_FOUND, last_offset_delta, offset_delta,
                        "record offset delta %lld is past the batch's lastOffsetDelta %lld", (long long)offset_delta,
                        last_offset_delta);
        if (__builtin_add_overflow((int64_t)base_offset, offset_delta, &offset_value))
            CHECK_ERROR(&err, start, CHECK_OFFSET_DELTA, HAS_FOUND, 0, offset_delta,
                        "record offset delta %lld puts its offset past int64 (baseOffset %lld)",
                        (long long)offset_delta, base_offset);
        budget -= 1 + r.header_count;
        if (budget < 0)
            CHECK_ERROR(&err, start, CHECK_TOO_LARGE, HAS_EXPECTED, MAX_DECODED_PER_BATCH, 0,
                        "the batch holds more records and headers than kdump decodes in one batch (%d): its "
                        "records from offset %lld on (%lld of %lld) are not decoded",
                        MAX_DECODED_PER_BATCH, (long long)offset_value, count - i, count);
        if (matching) {
            int hit = record_matches(p, &r, &match);
            if (hit < 0)
                goto fail;
            int64_t ts;
            if (hit == 0 && __builtin_add_overflow((int64_t)base_timestamp, ts_delta, &ts))
                CHECK_ERROR(&err, start, CHECK_TIMESTAMP, HAS_FOUND, 0, ts_delta,
                            "record timestamp delta %lld puts its timestamp past int64 (baseTimestamp %lld)",
                            (long long)ts_delta, base_timestamp);
            if (hit == 0)
                continue;
        }
        key = nullable_bytes(p + r.key_pos, r.key_len, last_key);
        value = nullable_bytes(p + r.value_pos, r.value_len, last_value);
        if (key == NULL || value == NULL)
            goto fail;
        if (r.header_count == 0)
            headers = PyTuple_New(0);
        else if (record_headers(p, r.headers_pos, r.body_end, r.header_count, last_headers, &headers) < 0)
            goto fail;
        if (headers == NULL)
            goto fail;
        Py_XSETREF(last_key, Py_NewRef(key));
        Py_XSETREF(last_value, Py_NewRef(value));
        if (PyTuple_GET_SIZE(headers) > 0)
            Py_XSETREF(last_headers, Py_NewRef(headers));
        int64_t sequence = NO_SEQUENCE;
        if (base_sequence >= 0) {
            sequence = base_sequence + offset_delta;
            if (sequence > INT32_MAX) /* DefaultRecordBatch.incrementSequence wraps to 0 */
                sequence -= (int64_t)INT32_MAX + 1;
        }
        /* Records of a batch often share a timestamp (the same millisecond): one int for a run of them. */
        if (last_time == NULL || ts_delta != last_ts_delta) {
            int64_t ts;
            if (__builtin_add_overflow((int64_t)base_timestamp, ts_delta, &ts))
                CHECK_ERROR(&err, start, CHECK_TIMESTAMP, HAS_FOUND, 0, ts_delta,
                            "record timestamp delta %lld puts its timestamp past int64 (baseTimestamp %lld)",
                            (long long)ts_delta, base_timestamp);
            Py_XSETREF(last_time, PyLong_FromLongLong(ts));
            if (last_time == NULL)
                goto fail;
            last_ts_delta = ts_delta;
        }
        PyObject *offset = PyLong_FromLongLong(offset_value);
        /* A producer's first batches on a partition number their sequences as the log numbers offsets:
         * the record's sequence is then its offset's int. */
        int same = offset != NULL && offset_value == sequence;
        PyObject *vals[RECORD_FIELDS] = {
            [R_OFFSET] = offset,
            [R_TIMESTAMP] = Py_NewRef(log_append_time == Py_None ? last_time : log_append_time),
            [R_KEY] = key,
            [R_VALUE] = value,
            [R_HEADERS] = headers,
            [R_SEQUENCE] = same ? Py_NewRef(offset) : PyLong_FromLongLong(sequence),
            [R_SIZE] = PyLong_FromSsize_t(r.body_end - start),
            [R_CRC] = Py_NewRef(Py_None),
            [R_CRC_VALID] = Py_NewRef(Py_None),
            [R_CONTROL] = Py_NewRef(Py_None),
            [R_STORED_TIMESTAMP] = Py_NewRef(log_append_time == Py_None ? Py_None : last_time),
        };
        key = value = headers = NULL; /* stolen */
        /* Every field but the headers tuple is an int, bytes or None; an untracked tuple makes the
         * record atomic (see new_atomic_record). */
        PyObject *record = gc_tracked(vals[R_HEADERS]) ? new_record(vals) : new_atomic_record(vals);
        if (record == NULL)
            goto fail;
        PyList_SET_ITEM(records, filled++, record); /* the room above holds every record that fits */
    }
    if (pos != end)
        CHECK_ERROR(&err, pos, CHECK_COUNT_MISMATCH, 0, 0, 0,
                    "%lld bytes remain after the batch's %lld declared records", (long long)(end - pos), count);
    if (filled < PyList_GET_SIZE(records) && PyList_SetSlice(records, filled, PY_SSIZE_T_MAX, NULL) < 0)
        goto fail; /* a search kept fewer than the room made */
    PyObject_GC_Track(records);
    result = Py_BuildValue("(OO)", records, Py_None);
    goto done;

fail:
    Py_CLEAR(key);
    Py_CLEAR(value);
    Py_CLEAR(headers);
    if (records != NULL) {
        /* The records before the error stay; the room left for the others goes. */
        if (filled < PyList_GET_SIZE(records) && PyList_SetSlice(records, filled, PY_SSIZE_T_MAX, NULL) < 0)
            Py_CLEAR(records);
        else
            PyObject_GC_Track(records);
    }
    if (err.message != NULL && records != NULL) /* N: corrupt_at's exception, or NULL when it failed */
        result = Py_BuildValue("(ON)", records, corrupt_at(&err, 1));
done:
    Py_XDECREF(last_key);
    Py_XDECREF(last_value);
    Py_XDECREF(last_headers);
    Py_XDECREF(last_time);
    Py_XDECREF(err.message);
    Py_XDECREF(records);
    if (matching)
        record_match_release(&match);
    PyBuffer_Release(&view);
    return result;
}

/* ---- v0/v1 messages (message.py's Message) ------------------------------------------------------ */

typedef LegacyMessage Message;

/* Decode the message p[pos:end] (message.py's Message). Returns LEGACY_OK, or the LEGACY_ status of
 * what is wrong with *reason (or an exception). */
static int
parse_message(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Message *m, PyObject **reason)
{
    static const char *const fixed[] = {
        [LEGACY_SHORT] = "message is shorter than the smallest v0 message",
        [LEGACY_NO_KEY_LENGTH] = "message ends before its key length",
        [LEGACY_NO_VALUE_LENGTH] = "message ends before its value length",
    };
    int status = legacy_message(p, pos, end, m);
    if (status == LEGACY_BAD_MAGIC)
        *reason = PyUnicode_FromFormat("message has magic %d, expected 0 or 1", m->magic);
    else if (status == LEGACY_UNDERSIZED)
        *reason = PyUnicode_FromFormat("message size %d is below the v%d minimum", (int)m->size, m->magic);
    else if (status == LEGACY_KEY_PAST)
        *reason = PyUnicode_FromFormat("key length %d runs past the message", (int)m->key_len);
    else if (status == LEGACY_VALUE_PAST)
        *reason = PyUnicode_FromFormat("value length %d runs past the message", (int)m->value_len);
    else if (status == LEGACY_TRAILING)
        *reason = PyUnicode_FromFormat("message has %zd bytes after its value", end - m->end);
    else if (status != LEGACY_OK)
        *reason = PyUnicode_FromString(fixed[status]);
    return status;
}

/* Room in *array (*room items of size bytes, NULL while 0) for twice as many, or first: 0, or -1 with
 * MemoryError set and the array as it was. */
static int
grow_array(void **array, Py_ssize_t *room, size_t size, Py_ssize_t first)
{
    Py_ssize_t grown = *room ? *room * 2 : first;
    void *more = PyMem_Realloc(*array, (size_t)grown * size);
    if (more == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *array = more;
    *room = grown;
    return 0;
}

/* The CRC-32 a v0/v1 message's header stores: of its bytes from the magic byte to its end. */
static uint32_t
message_crc(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end)
{
    return crc32_ieee(p + pos + LEGACY_MAGIC_OFFSET, end - pos - LEGACY_MAGIC_OFFSET);
}

/* The last int boxed, kept for the next: consecutive messages often share a timestamp or a size. */
typedef struct {
    int64_t value;
    PyObject *obj; /* NULL until the first */
} IntCache;

static PyObject *
cached_int(IntCache *cache, int64_t value)
{
    if (cache->obj != NULL && cache->value == value)
        return Py_NewRef(cache->obj);
    PyObject *obj = PyLong_FromLongLong(value);
    if (obj != NULL) {
        Py_XSETREF(cache->obj, Py_NewRef(obj));
        cache->value = value;
    }
    return obj;
}

/* The fields of message.py's Message.record for the message m, into vals: the objects given (stolen)
 * and its key, value, no headers and no sequence. */
static inline void
legacy_record_fields(PyObject **vals, const unsigned char *p, const Message *m, PyObject *offset,
                     PyObject *ts, PyObject *stored_ts, PyObject *size, PyObject *crc, PyObject *crc_valid)
{
    vals[R_OFFSET] = offset;
    vals[R_TIMESTAMP] = ts;
    vals[R_KEY] = nullable_bytes(p + m->key_pos, m->key_len, NULL);
    vals[R_VALUE] = nullable_bytes(p + m->value_pos, m->value_len, NULL);
    vals[R_HEADERS] = PyTuple_New(0); /* the empty tuple: never NULL */
    vals[R_SEQUENCE] = Py_NewRef(MINUS_ONE);
    vals[R_SIZE] = size;
    vals[R_CRC] = crc;
    vals[R_CRC_VALID] = crc_valid;
    vals[R_CONTROL] = Py_NewRef(Py_None);
    vals[R_STORED_TIMESTAMP] = stored_ts;
}

/* message.py's Message.record: the message p[pos:end] as a Record at offset base + its own; crc is the
 * CRC-32 computed over its bytes. */
static PyObject *
legacy_record(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, const Message *m, uint32_t crc, __int128 base,
              PyObject *log_append_time, IntCache *timestamps)
{
    PyObject *ts = cached_int(timestamps, m->timestamp), *vals[RECORD_FIELDS];
    int lat = log_append_time != Py_None;
    legacy_record_fields(vals, p, m, add_exact(base, m->offset), lat ? Py_NewRef(log_append_time) : ts,
                         lat ? ts : Py_NewRef(Py_None), PyLong_FromSsize_t(end - pos),
                         PyLong_FromUnsignedLong(m->crc), Py_NewRef(crc == m->crc ? Py_True : Py_False));
    /* log_append_time is the wrapper's timestamp, an int; anything else takes the checking path */
    return PyLong_CheckExact(log_append_time) || !lat ? new_atomic_record(vals) : new_record(vals);
}

/* ---- v0/v1 inner message sets (the twin of _pure.decode_legacy_inner) --------------------------- */

/* One inner message as the first pass found it: where it lies, its fields, the CRC of its bytes. */
typedef struct {
    Message m;
    Py_ssize_t pos, end;
    uint32_t crc;
} Inner;

/* Two passes: the first checks every inner message of data[0:total] and learns the last inner offset
 * that v1's relative offsets need; the second builds the records (with match, only those it keeps: a
 * message has no headers, so a header rule keeps none). Sets *records (a new list), *why (its message
 * NULL when the set is sound), *placed (the messages placed, kept or not) and, when some are, *first
 * (a new reference: the first one's offset); returns 0, or -1 with an exception set. */
static int
inner_records(const unsigned char *p, Py_ssize_t total, int wrapper_magic, long long wrapper_offset,
              PyObject *log_append_time, const RecordMatch *match, PyObject **records_out, DataError *why,
              Py_ssize_t *placed, PyObject **first)
{
    Py_ssize_t pos = 0, n_ok = 0, capacity = 0;
    PyObject *reason = NULL, *records = NULL;
    DataError e = {NULL, 0, NULL, 0, 0, 0};
    Inner *inner = NULL, spare; /* spare: each message past MAX_DECODED_PER_BATCH, checked but not kept */
    IntCache timestamps = {0, NULL};
    int64_t last = 0, first_past = 0;
    while (pos < total) {
        if (total - pos < LOG_OVERHEAD) {
            SET_CHECK(&e, CHECK_WRAPPER, 0, 0, 0);
            reason = PyUnicode_FromFormat("%zd stray bytes after the last inner message", total - pos);
            break;
        }
        int32_t size = be32(p + pos + LOG_ENTRY_SIZE_OFFSET);
        if (size < 0 || size > total - pos - LOG_OVERHEAD) {
            SET_CHECK(&e, CHECK_INNER_MESSAGE, 0, 0, 0);
            reason = PyUnicode_FromFormat("inner message at byte %zd of the payload runs past its end", pos);
            break;
        }
        /* Each kept message framed at least LOG_OVERHEAD bytes of data: the array stays a fraction of
         * the records it describes. */
        int kept = n_ok < MAX_DECODED_PER_BATCH;
        if (kept && n_ok == capacity && grow_array((void **)&inner, &capacity, sizeof(Inner), 128) < 0)
            goto done;
        Inner *in = kept ? &inner[n_ok] : &spare;
        Py_ssize_t end = pos + LOG_OVERHEAD + size;
        PyObject *inner_reason = NULL;
        int status = parse_message(p, pos, end, &in->m, &inner_reason);
        if (status != LEGACY_OK) {
            if (status == LEGACY_BAD_MAGIC)
                SET_CHECK(&e, CHECK_INNER_MAGIC, HAS_FOUND, 0, in->m.magic);
            else
                SET_CHECK(&e, CHECK_INNER_MESSAGE, 0, 0, 0);
            if (inner_reason != NULL)
                reason = PyUnicode_FromFormat("inner message at byte %zd of the payload: %U", pos, inner_reason);
            Py_XDECREF(inner_reason);
            break;
        }
        if (in->m.magic != wrapper_magic) {
            SET_CHECK(&e, CHECK_INNER_MAGIC, HAS_EXPECTED | HAS_FOUND, wrapper_magic, in->m.magic);
            reason = PyUnicode_FromFormat("inner message has magic %d in a v%d wrapper", in->m.magic, wrapper_magic);
            break;
        }
        if (in->m.attributes & COMPRESSION_MASK) {
            SET_CHECK(&e, CHECK_CODEC, 0, 0, 0);
            reason = PyUnicode_FromString("inner message is itself compressed");
            break;
        }
        if (!legacy_inner_grows(n_ok, last, in->m.offset)) {
            SET_CHECK(&e, CHECK_INNER_OFFSET, HAS_EXPECTED | HAS_FOUND, last, in->m.offset);
            reason = PyUnicode_FromFormat("inner message at byte %zd of the payload has offset %lld, "
                                          "not above the one before it (%lld)",
                                          pos, (long long)in->m.offset, (long long)last);
            break;
        }
        in->pos = pos;
        in->end = end;
        in->crc = kept ? message_crc(p, pos, end) : 0;
        if (n_ok == MAX_DECODED_PER_BATCH)
            first_past = in->m.offset;
        last = in->m.offset;
        n_ok++;
        pos = end;
    }
    if (PyErr_Occurred())
        goto done;
    int relative = legacy_relative(wrapper_magic, wrapper_offset);
    if (n_ok == 0) {
        if (reason == NULL) {
            SET_CHECK(&e, CHECK_WRAPPER, 0, 0, 0);
            reason = PyUnicode_FromString("compressed wrapper message holds no inner messages");
        }
        records = PyList_New(0);
    }
    else if (reason != NULL && relative) {
        /* v1 offsets are relative to the last inner message; without it none can be placed. */
        PyObject *full = PyUnicode_FromFormat("%U; the %zd inner messages before it have unknown offsets", reason,
                                              n_ok);
        Py_SETREF(reason, full);
        records = PyList_New(0);
    }
    else {
        if (reason == NULL && relative && wrapper_offset < last) {
            SET_CHECK(&e, CHECK_INNER_OFFSET, HAS_EXPECTED | HAS_FOUND, last, wrapper_offset);
            reason = PyUnicode_FromFormat("wrapper offset %lld is below its last inner offset %lld",
                                          wrapper_offset, (long long)last);
        }
        __int128 base = legacy_inner_base(wrapper_magic, wrapper_offset, last);
        Py_ssize_t n_kept = n_ok < MAX_DECODED_PER_BATCH ? n_ok : MAX_DECODED_PER_BATCH;
        if (reason == NULL && n_ok > n_kept) {
            SET_CHECK(&e, CHECK_TOO_LARGE, HAS_EXPECTED, MAX_DECODED_PER_BATCH, 0);
            reason = PyUnicode_FromFormat("the wrapper holds %zd inner messages, more than kdump decodes in one "
                                          "batch (%d): the %zd from offset %lld on are not decoded",
                                          n_ok, MAX_DECODED_PER_BATCH, n_ok - n_kept,
                                          (long long)(base + first_past));
        }
        records = PyList_New(match == NULL ? n_kept : 0);
        for (Py_ssize_t i = 0; records != NULL && i < n_kept; i++) {
            const Inner *in = &inner[i];
            if (match != NULL) {
                int hit = match->header_key.buf != NULL
                              ? 0
                              : fields_match(p, in->m.key_pos, in->m.key_len, in->m.value_pos, in->m.value_len, match);
                if (hit < 0)
                    Py_CLEAR(records);
                if (hit != 1)
                    continue;
            }
            PyObject *record = legacy_record(p, in->pos, in->end, &in->m, in->crc, base, log_append_time, &timestamps);
            if (record == NULL) {
                Py_CLEAR(records);
                break;
            }
            if (match == NULL) {
                PyList_SET_ITEM(records, i, record);
                continue;
            }
            int appended = PyList_Append(records, record);
            Py_DECREF(record);
            if (appended < 0)
                Py_CLEAR(records);
        }
        *placed = n_ok;
        if (records != NULL && (*first = add_exact(base, inner[0].m.offset)) == NULL)
            Py_CLEAR(records);
    }
done:
    PyMem_Free(inner);
    Py_XDECREF(timestamps.obj);
    if (records == NULL || PyErr_Occurred()) {
        Py_XDECREF(records);
        Py_XDECREF(reason);
        return -1;
    }
    *records_out = records;
    *why = e;
    why->message = reason;
    return 0;
}

PyObject *
decode_legacy_inner(PyObject *self, PyObject *args)
{
    PyObject *data;
    int wrapper_magic;
    long long wrapper_offset;
    PyObject *log_append_time;
    if (!PyArg_ParseTuple(args, "SiLO", &data, &wrapper_magic, &wrapper_offset, &log_append_time))
        return NULL;
    PyObject *records = NULL, *error = NULL, *result = NULL;
    DataError why;
    Py_ssize_t placed = 0;
    PyObject *first = NULL;
    if (inner_records((const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), wrapper_magic,
                      wrapper_offset, log_append_time, NULL, &records, &why, &placed, &first) < 0)
        return NULL;
    Py_XDECREF(first);
    if (why.message == NULL || (error = corrupt_at(&why, 0)) != NULL)
        result = PyTuple_Pack(2, records, error ? error : Py_None);
    Py_XDECREF(why.message);
    Py_XDECREF(error);
    Py_DECREF(records);
    return result;
}

/* The fields of a v0/v1 Batch that its message m sets alike for a wrapper and a plain message, and
 * those that no message sets (producer, sequences, leader epoch, transaction, control), into vals. */
static inline void
legacy_batch_fields(PyObject **vals, PyObject *file, const Message *m)
{
    int ts_type = m->magic == 0 ? 0 : (m->attributes & TIMESTAMP_TYPE_BIT) ? 2 : 1;
    vals[B_FILE] = Py_NewRef(file);
    vals[B_MAGIC] = PyLong_FromLong(m->magic); /* 0 or 1: cached small ints */
    vals[B_ATTRIBUTES] = PyLong_FromLong(m->attributes); /* cached unless below -5 (the top bit set) */
    vals[B_COMPRESSION] = Py_NewRef(CODECS[m->attributes & COMPRESSION_MASK]);
    vals[B_TIMESTAMP_TYPE] = Py_NewRef(TS_TYPES[ts_type]);
    vals[B_PRODUCER_ID] = Py_NewRef(MINUS_ONE);
    vals[B_PRODUCER_EPOCH] = Py_NewRef(MINUS_ONE);
    vals[B_BASE_SEQUENCE] = Py_NewRef(MINUS_ONE);
    vals[B_LAST_SEQUENCE] = Py_NewRef(MINUS_ONE);
    vals[B_PARTITION_LEADER_EPOCH] = Py_NewRef(MINUS_ONE);
    vals[B_IS_TRANSACTIONAL] = Py_NewRef(Py_False);
    vals[B_IS_CONTROL] = Py_NewRef(Py_False);
    vals[B_DELETE_HORIZON_MS] = Py_NewRef(Py_None);
}

/* ---- sound compressed v0/v1 wrappers (the twin of _pure.decode_legacy_wrapper) -------------------- */

/* The wrapper entry p[pos:end] as a Batch with its inner records, when it parses, its CRC holds, its
 * codec is one a wrapper may use, its value decompresses (through the codecs module's decompress) and
 * its inner message set is sound; else None, and the long way reports why. */
PyObject *
decode_legacy_wrapper(PyObject *self, PyObject *args)
{
    PyObject *file, *decompress;
    Py_buffer view;
    Py_ssize_t pos, end, file_pos, limit, max_records;
    int with_records;
    PyObject *match_tuple = Py_None;
    if (!PyArg_ParseTuple(args, "Uy*nnnpnnO|O", &file, &view, &pos, &end, &file_pos, &with_records, &limit,
                          &max_records, &decompress, &match_tuple) ||
        view_window(&view, pos, end) < 0)
        return NULL;
    RecordMatch match;
    if (match_tuple != Py_None && record_match_read(match_tuple, &match) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t placed = 0;
    PyObject *first = NULL;
    PyObject *value = NULL, *data = NULL, *records = NULL, *lat = NULL, *tuple = NULL, *result = NULL;
    DataError why = {NULL, 0, NULL, 0, 0, 0};
    Message m;
    int codec = end - pos > LEGACY_ATTRIBUTES_OFFSET ? p[pos + LEGACY_ATTRIBUTES_OFFSET] & COMPRESSION_MASK : 0;
    if (codec < 1 || codec > 3) /* none is no wrapper; zstd and unknown ids are errors in a v0/v1 wrapper */
        goto none;
    /* the long way reports why a wrapper does not parse or its CRC does not hold */
    if (legacy_message(p, pos, end, &m) != LEGACY_OK || message_crc(p, pos, end) != m.crc || m.value_len < 0)
        goto none;
    value = PyBytes_FromStringAndSize((const char *)p + m.value_pos, m.value_len);
    if (value == NULL)
        goto done;
    data = PyObject_CallFunction(decompress, "OOn", CODECS[codec], value, limit);
    if (data == NULL) {
        if (PyErr_ExceptionMatches(CorruptRecordError)) {
            PyErr_Clear();
            goto none;
        }
        goto done;
    }
    /* More inner messages than allowed might fit: the long way counts them and refuses the wrapper. */
    if (!PyBytes_Check(data) || PyBytes_GET_SIZE(data) / (LOG_OVERHEAD + LEGACY_V0_MIN_SIZE) > max_records)
        goto none;
    int log_append = m.magic == 1 && (m.attributes & TIMESTAMP_TYPE_BIT);
    if (log_append && (lat = PyLong_FromLongLong(m.timestamp)) == NULL)
        goto done;
    if (inner_records((const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), m.magic, m.offset,
                      log_append ? lat : Py_None, match_tuple == Py_None ? NULL : &match, &records, &why, &placed,
                      &first) < 0)
        goto done;
    if (why.message != NULL || placed == 0)
        goto none;
    if (with_records && (tuple = PyList_AsTuple(records)) == NULL)
        goto done;
    if (tuple != NULL)
        untrack_if_atomic(tuple);
    PyObject *ts = PyLong_FromLongLong(m.timestamp);
    PyObject *vals[BATCH_FIELDS] = {
        [B_POSITION] = PyLong_FromSsize_t(file_pos),
        [B_BASE_OFFSET] = Py_NewRef(first),
        [B_LAST_OFFSET] = PyLong_FromLongLong(m.offset),
        [B_BASE_TIMESTAMP] = Py_XNewRef(ts),
        [B_MAX_TIMESTAMP] = ts,
        [B_CRC] = PyLong_FromUnsignedLong(m.crc),
        [B_CRC_VALID] = Py_NewRef(Py_True),
        [B_SIZE] = PyLong_FromSsize_t(LOG_OVERHEAD + (Py_ssize_t)be32(p + pos + LEGACY_SIZE_OFFSET)),
        [B_RECORD_COUNT] = PyLong_FromSsize_t(placed),
        [B_RECORDS] = Py_NewRef(with_records ? tuple : Py_None),
    };
    legacy_batch_fields(vals, file, &m);
    result = new_batch(vals); /* untracked: see new_batch */
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(value);
    Py_XDECREF(data);
    Py_XDECREF(records);
    Py_XDECREF(why.message);
    Py_XDECREF(lat);
    Py_XDECREF(tuple);
    Py_XDECREF(first);
    if (match_tuple != Py_None)
        record_match_release(&match);
    PyBuffer_Release(&view);
    return result;
}

/* ---- runs of plain v0/v1 messages (the twin of _pure.decode_legacy_run) ------------------------- */

/* message.py's Message.batch for a plain message: the entry p[pos:end] as a Batch of one record. */
static PyObject *
plain_batch(PyObject *file, Py_ssize_t file_pos, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
            const Message *m, uint32_t crc, int with_records, IntCache *timestamps, IntCache *sizes)
{
    /* The batch's memory first (from the freelist, where Batch's deallocator is batch_dealloc): it may
     * come with a kept tuple and record for its records field (*unit; see records_unit). */
    PyObject *obj = NULL, *no_unit = NULL, **unit = &no_unit;
#ifdef BATCH_FREELIST_MAX
    if (batch_fast) {
        if ((obj = batch_alloc()) == NULL)
            return NULL;
        unit = &((PyTupleObject *)obj)->ob_item[model.batch_index[B_RECORDS]];
    }
#endif
    /* The batch and its one record share the objects of the fields they have in common. */
    PyObject *offset = PyLong_FromLongLong(m->offset), *ts = cached_int(timestamps, m->timestamp);
    PyObject *stored = PyLong_FromUnsignedLong(m->crc), *size = cached_int(sizes, end - pos);
    PyObject *position = PyLong_FromSsize_t(file_pos);
    PyObject *valid = crc == m->crc ? Py_True : Py_False, *records = NULL;
    if (offset == NULL || ts == NULL || stored == NULL || size == NULL || position == NULL)
        goto fail;
    if (with_records) {
        PyObject *rvals[RECORD_FIELDS];
        legacy_record_fields(rvals, p, m, Py_NewRef(offset), Py_NewRef(ts), Py_NewRef(Py_None),
                             Py_NewRef(size), Py_NewRef(stored), Py_NewRef(valid));
        PyObject *record = NULL;
        int sound = rvals[R_KEY] != NULL && rvals[R_VALUE] != NULL; /* the only fields that can fail */
        if (sound && *unit != NULL) {
            records = *unit; /* a kept tuple and record, from a freed batch (see records_unit) */
            *unit = NULL;
            record_fill(PyTuple_GET_ITEM(records, 0), rvals);
        }
        else {
            if (sound && model.record_plain && (record = record_alloc()) != NULL)
                record_fill(record, rvals); /* new_atomic_record's work, its checks done above */
            else
                record = new_atomic_record(rvals);
            if (record == NULL || (records = PyTuple_New(1)) == NULL) {
                Py_XDECREF(record);
                goto fail;
            }
            PyTuple_SET_ITEM(records, 0, record);
            PyObject_GC_UnTrack(records); /* it holds an untracked record */
        }
    }
    else {
        records = Py_NewRef(Py_None);
    }
    PyObject *vals[BATCH_FIELDS] = {
        [B_POSITION] = position,
        [B_BASE_OFFSET] = Py_NewRef(offset),
        [B_LAST_OFFSET] = offset, /* the last reference this function holds: passed on */
        [B_BASE_TIMESTAMP] = Py_NewRef(ts),
        [B_MAX_TIMESTAMP] = ts,
        [B_CRC] = stored,
        [B_CRC_VALID] = Py_NewRef(valid),
        [B_SIZE] = size,
        [B_RECORD_COUNT] = Py_NewRef(ONE),
        [B_RECORDS] = records,
    };
    legacy_batch_fields(vals, file, m); /* the batch is untracked, as new_batch leaves one */
#ifdef BATCH_FREELIST_MAX
    if (obj != NULL) {
        Py_CLEAR(*unit); /* a kept tuple and record not taken (no records asked for): freed */
        if (vals[B_MAGIC] == NULL || vals[B_ATTRIBUTES] == NULL) { /* the only fields not checked yet */
            vals_release(vals, BATCH_FIELDS);
            batch_release(obj);
            return NULL;
        }
        batch_fill(obj, vals);
        return obj;
    }
#endif
    return new_batch(vals);
fail:
    vals_release((PyObject *[]){offset, ts, stored, size, position}, 5);
#ifdef BATCH_FREELIST_MAX
    if (obj != NULL)
        batch_release(obj);
#endif
    return NULL;
}

/* The plain message at p[pos:end] (as plain_entry_end takes it, and sound) read into m, its header
 * once: where it ends, or -1 when it is not one. */
static inline Py_ssize_t
plain_message_end(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Message *m)
{
    if (legacy_header(p, pos, end, m) != LEGACY_OK || (m->attributes & COMPRESSION_MASK) ||
        m->size > end - pos - LOG_OVERHEAD)
        return -1;
    Py_ssize_t entry_end = pos + LOG_OVERHEAD + m->size;
    return legacy_body(p, pos, entry_end, m->magic, m) == LEGACY_OK ? entry_end : -1;
}

PyObject *
decode_legacy_run(PyObject *self, PyObject *args)
{
    PyObject *file;
    Py_buffer view;
    Py_ssize_t pos, end, file_pos;
    int with_records;
    if (!PyArg_ParseTuple(args, "Uy*nnnp", &file, &view, &pos, &end, &file_pos, &with_records) ||
        view_window(&view, pos, end) < 0)
        return NULL;
    const unsigned char *p = (const unsigned char *)view.buf;
    /* The batches are gathered in an array, and their list made at its size at the end: room for as
     * many as a 16 KiB run holds (at most 630), doubled when a longer run needs more. */
    Py_ssize_t start = pos, n = 0, room = 0;
    PyObject **gathered = NULL, *batches = NULL, *result = NULL;
    IntCache timestamps = {0, NULL}, sizes = {0, NULL};
    Message m;
    Py_ssize_t entry_end; /* what is not a plain message ends the run: the segment reader reports it */
    while ((entry_end = plain_message_end(p, pos, end, &m)) >= 0) {
        uint32_t crc = message_crc(p, pos, entry_end);
        if (crc != m.crc)
            break;
        if (n == room && grow_array((void **)&gathered, &room, sizeof(PyObject *),
                                    Py_MIN((end - pos) / (LOG_OVERHEAD + LEGACY_V0_MIN_SIZE) + 1, 1024)) < 0)
            goto done;
        gathered[n] = plain_batch(file, file_pos + pos - start, p, pos, entry_end, &m, crc, with_records,
                                  &timestamps, &sizes);
        if (gathered[n] == NULL)
            goto done;
        n++;
        pos = entry_end;
    }
    if ((batches = PyList_New(n)) != NULL) {
        if (n > 0)
            memcpy(((PyListObject *)batches)->ob_item, gathered, n * sizeof(PyObject *));
        n = 0;
        result = Py_BuildValue("(On)", batches, pos - start);
    }
done:
    for (Py_ssize_t k = 0; k < n; k++) /* still gathered: nothing else holds them */
        Py_DECREF(gathered[k]);
    PyMem_Free(gathered);
    Py_XDECREF(timestamps.obj);
    Py_XDECREF(sizes.obj);
    Py_XDECREF(batches);
    PyBuffer_Release(&view);
    return result;
}

/* ---- the CRC-32 of _wire.h, for the tests that hold both of its paths to zlib.crc32 ------------- */

PyObject *
crc32_paths(PyObject *self, PyObject *args)
{
    Py_buffer view;
    int table_only = 0;
    if (!PyArg_ParseTuple(args, "y*|p", &view, &table_only))
        return NULL;
    uint32_t crc = crc32_ieee_with((const unsigned char *)view.buf, view.len, table_only);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

int
speedups_init(PyObject *m)
{
    if (model_init() < 0)
        return -1;
    CorruptRecordError = model_import("kafka_dump.errors", "CorruptRecordError");
    PyObject *codecs = model_import("kafka_dump.model", "Compression");
    PyObject *ts_types = model_import("kafka_dump.model", "TimestampType");
    static const char *const ts_names[3] = {"NO_TIMESTAMP_TYPE", "CREATE_TIME", "LOG_APPEND_TIME"};
    int ok = CorruptRecordError && codecs && ts_types;
    for (int i = 0; ok && i < 8; i++)
        ok = (CODECS[i] = PyObject_CallFunction(codecs, "i", i)) != NULL;
    for (int i = 0; ok && i < 3; i++)
        ok = (TS_TYPES[i] = PyObject_GetAttrString(ts_types, ts_names[i])) != NULL;
    Py_XDECREF(codecs);
    Py_XDECREF(ts_types);
    MINUS_ONE = PyLong_FromLong(-1);
    ONE = PyLong_FromLong(1);
    if (!ok || !MINUS_ONE || !ONE)
        return -1;
    crc32_init();
    plain_dealloc_install(model.record_type, model.record_plain, record_dealloc);
    plain_dealloc_install(model.header_type, model.header_plain, header_dealloc);
#ifdef BATCH_FREELIST_MAX
    plain_dealloc_install(model.batch_type, model.batch_plain, batch_dealloc);
    batch_fast = ((PyTypeObject *)model.batch_type)->tp_dealloc == batch_dealloc;
    unit_fast = batch_fast && ((PyTypeObject *)model.record_type)->tp_dealloc == record_dealloc;
#endif
    return 0;
}
