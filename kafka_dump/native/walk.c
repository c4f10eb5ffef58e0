/*
 * The compiled twin of the validating walks (_walk_pure.py is the reference; tests/test_walk_twins.py
 * and tests/test_entry_walk.py hold them to it): walk_v2_records checks and counts the records of one
 * v2 batch without a Python object per record; walk_entries takes the sound entries at the start of a
 * window (framing, CRCs, offsets in order, gaps counted; deep, the records or a wrapper's inner
 * messages too) and stops before the first that is anything else, which verify-crc then reads the
 * slow way; given a file descriptor instead of a window, it reads the headers itself with pread (ls).
 * Each gives its pure twin's counts, first error, reason, position and stopping place.
 *
 * Memory safety: every read is checked against the length that frames it, which is checked against
 * the end of the window or buffer it lies in. Nothing is allocated from a length read from the data
 * (a walk of a file holds one header, or one window of a fixed size).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>

#include "_buf.h"
#include "_layout.h"
#include "_wire.h"

/* Fail the walk with a reason at a position (DATA_ERROR jumps to fail). */
#define FAIL(where, ...)                         \
    do {                                         \
        failed = 1;                              \
        DATA_ERROR(&err, (where), __VA_ARGS__);  \
    } while (0)

/* What a walk over one batch's records counted (the whole records before any error). */
typedef struct {
    long long records, keys, values, header_bytes, null_keys, null_values, headers;
    int64_t max_ts;
    int have_ts;
} WalkCounts;

/* Walk count records in p[pos:end]; 0 when all is well, 1 with err filled (err.message NULL when a
 * Python exception is set instead). */
static int
walk_records(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, long long count, long long last_offset_delta,
             int64_t base_ts, WalkCounts *out, DataError *error)
{
    DataError err = {NULL, 0};
    int failed = 0;
    long long i = 0, keys = 0, values = 0, header_bytes = 0, null_keys = 0, null_values = 0, headers = 0;
    int64_t max_ts = 0, previous = -1;
    int have_ts = 0;
    Py_ssize_t first = pos;
    for (; i < count; i++) {
        Py_ssize_t start = pos;
        if (pos >= end)
            FAIL(first, "batch declares %lld records but holds %lld", count, i);
        V2Record r;
        if (v2_record(p, &pos, end, &r, NULL, NULL, &err) < 0) {
            failed = 1;
            goto fail;
        }
        int64_t offset_delta = r.offset_delta;
        if (offset_delta <= previous)
            FAIL(start, "record offset delta %lld is not above the previous one (%lld)", (long long)offset_delta,
                 (long long)previous);
        if (offset_delta > last_offset_delta)
            FAIL(start, "record offset delta %lld is past the batch's lastOffsetDelta %lld",
                 (long long)offset_delta, last_offset_delta);
        int64_t ts;
        if (__builtin_add_overflow(base_ts, r.ts_delta, &ts))
            FAIL(start, "record timestamp delta %lld puts its timestamp past int64 (baseTimestamp %lld)",
                 (long long)r.ts_delta, (long long)base_ts);
        previous = offset_delta;
        null_keys += r.key_len < 0; /* a null key or value: length -1 */
        keys += r.key_len < 0 ? 0 : r.key_len;
        null_values += r.value_len < 0;
        values += r.value_len < 0 ? 0 : r.value_len;
        header_bytes += r.header_bytes;
        headers += r.header_count;
        if (!have_ts || r.ts_delta > max_ts) {
            max_ts = r.ts_delta;
            have_ts = 1;
        }
    }
    if (pos != end)
        FAIL(pos, "%lld bytes remain after the batch's %lld declared records", (long long)(end - pos), count);

fail:
    *out = (WalkCounts){i, keys, values, header_bytes, null_keys, null_values, headers, max_ts, have_ts};
    *error = err;
    return failed;
}

PyObject *
walk_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end;
    long long count, last_offset_delta, base_ts;
    if (!PyArg_ParseTuple(args, "y*nnLLL", &view, &pos, &end, &count, &last_offset_delta, &base_ts) ||
        view_window(&view, pos, end) < 0)
        return NULL;
    WalkCounts c;
    DataError err;
    int failed =
        walk_records((const unsigned char *)view.buf, pos, end, count, last_offset_delta, base_ts, &c, &err);
    PyBuffer_Release(&view);
    if (failed && err.message == NULL)
        return NULL; /* the reason could not be built: a Python exception is set */
    /* N: Py_BuildValue takes the time and the reason, and releases both if either is NULL */
    return Py_BuildValue("(LLLLLLLNNn)", c.records, c.keys, c.values, c.header_bytes, c.null_keys, c.null_values,
                         c.headers, c.have_ts ? PyLong_FromLongLong(c.max_ts) : Py_NewRef(Py_None),
                         failed ? err.message : Py_NewRef(Py_None), failed ? err.position : (Py_ssize_t)0);
}


/* --- the entry walk (walk_entries in _walk_pure.py, the reference: its docstring says what it takes) --- */

#define SMALLEST_ENTRY (LOG_OVERHEAD + LEGACY_V0_MIN_SIZE)
#define SMALL_CRC 4096 /* without the folding path: below this, CRC-32 by table; above, zlib's */

/* 1 when fn(memoryview of p[0:n]) == stored, 0 when not, -1 with a Python exception set. */
static int
crc_call_matches(PyObject *fn, const unsigned char *p, Py_ssize_t n, uint32_t stored)
{
    if (fn == Py_None)
        return 1; /* not computed: the stored CRC is trusted */
    PyObject *r = call_on_view(fn, -1, p, n);
    if (r == NULL)
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(r, &overflow);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred())
        return -1;
    return !overflow && v == (long long)stored;
}

/* CRC-32 by folding (_wire.h) where the CPU can: faster than zlib's on a v0/v1 gzip wrapper of a few
 * KiB, which is most of what a shallow check of such a file computes. Else by the tables below
 * SMALL_CRC, and by zlib.crc32 (fn) above it. */
static int
crc32_matches(PyObject *fn, const unsigned char *p, Py_ssize_t n, uint32_t stored)
{
    if (fn == Py_None)
        return 1; /* not computed: the stored CRC is trusted */
#ifdef KDUMP_CRC32_FOLD
    if (crc32_can_fold)
        return crc32_ieee(p, n) == stored;
#endif
    if (n < SMALL_CRC)
        return crc32_ieee(p, n) == stored;
    return crc_call_matches(fn, p, n, stored);
}

/* The value (start, length or -1) of the v0/v1 message p[pos:end] when it frames exactly as
 * message.Message reads it; -1 when it does not. */
static int
legacy_value(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, int magic, Py_ssize_t *vstart, int32_t *vlen)
{
    Py_ssize_t min_size = magic == 1 ? LEGACY_V1_MIN_SIZE : LEGACY_V0_MIN_SIZE;
    if (end - pos < SMALLEST_ENTRY || end - pos - LOG_OVERHEAD < min_size)
        return -1;
    LegacyMessage m;
    if (legacy_body(p, pos, end, magic, &m) != LEGACY_OK)
        return -1;
    *vstart = m.value_pos;
    *vlen = (int32_t)m.value_len;
    return 0;
}

/* A wrapper's decompressed inner messages, when every one is sound: 1 with (count, first, last
 * offset), 0 when one is not, -1 with a Python exception set. */
static int
inner_span(const unsigned char *d, Py_ssize_t size_all, int magic, PyObject *crc32_fn, long long *count,
           int64_t *first, int64_t *last)
{
    Py_ssize_t pos = 0, vstart;
    int32_t vlen;
    long long n = 0;
    while (pos < size_all) {
        if (size_all - pos < LOG_OVERHEAD)
            return 0;
        int64_t offset = be64(d + pos);
        int32_t size = be32(d + pos + LOG_ENTRY_SIZE_OFFSET);
        if (size < 0 || size > size_all - pos - LOG_OVERHEAD || !legacy_inner_grows(n, *last, offset))
            return 0;
        Py_ssize_t end = pos + LOG_OVERHEAD + size;
        if (end - pos < SMALLEST_ENTRY)
            return 0;
        if (d[pos + LEGACY_MAGIC_OFFSET] != magic || (d[pos + LEGACY_ATTRIBUTES_OFFSET] & COMPRESSION_MASK))
            return 0;
        if (legacy_value(d, pos, end, magic, &vstart, &vlen) < 0)
            return 0;
        int ok = crc32_matches(crc32_fn, d + pos + MAGIC_OFFSET, end - pos - MAGIC_OFFSET,
                               (uint32_t)be32(d + pos + LEGACY_CRC_OFFSET));
        if (ok <= 0)
            return ok;
        if (n == 0)
            *first = offset;
        *last = offset;
        n++;
        pos = end;
    }
    *count = n;
    return n > 0;
}

/* fn(codec, memoryview of p[0:n]) held in *out (to be released): 1; 0 when fn raised an Exception
 * (cleared: the decoder reports the entry); -1 with an exception set. */
static int
call_decompress(PyObject *fn, int codec, const unsigned char *p, Py_ssize_t n, Py_buffer *out)
{
    PyObject *r = call_on_view(fn, codec, p, n);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int rc = PyObject_GetBuffer(r, out, PyBUF_SIMPLE);
    Py_DECREF(r);
    return rc < 0 ? -1 : 1;
}

/* What an entry walk carries from entry to entry, and from one read of a file to the next. */
typedef struct {
    int64_t last;            /* the last offset taken (or given), when have_last */
    int have_last, after_damage;
    long long batches, records, gaps, max_entries;
    Py_ssize_t last_size;    /* the last entry taken's size */
} EntryWalk;

/* Take the sound entries at p[pos:end] (limit: where they must end; file_pos: p's position in the file)
 * into *w and rows; the position where the walk stopped. The first entry not taken ends the walk, and
 * a Python exception then set fails it. */
static Py_ssize_t
walk_span(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t limit, Py_ssize_t file_pos, int deep,
          int headers, long long max_records, Py_ssize_t entry_limit, PyObject *crc32c_fn, PyObject *crc32_fn,
          PyObject *decompress_fn, PyObject *rows, EntryWalk *w)
{
    while (end - pos > MAGIC_OFFSET && w->batches < w->max_entries) {
        const unsigned char *q = p + pos;
        int64_t offset = be64(q);
        int32_t length = be32(q + LOG_ENTRY_SIZE_OFFSET);
        int magic = q[MAGIC_OFFSET];
        if (length < LEGACY_V0_MIN_SIZE || length > limit - pos - LOG_OVERHEAD || LOG_OVERHEAD + length > entry_limit)
            break;
        Py_ssize_t entry = LOG_OVERHEAD + (Py_ssize_t)length, entry_end = pos + entry;
        int64_t base = 0, last_offset, row_ts, first_ts, producer = -1;
        int have_base = 1, attributes, epoch = -1, p_epoch = -1, sequence = -1;
        uint32_t crc;
        long long n = 0;
        if (magic == 2) {
            if (entry < V2_HEADER_SIZE || end - pos < V2_HEADER_SIZE)
                break;
            crc = (uint32_t)be32(q + V2_CRC_OFFSET);
            attributes = be16(q + V2_ATTRIBUTES_OFFSET);
            epoch = (int32_t)be32(q + V2_PARTITION_LEADER_EPOCH_OFFSET);
            p_epoch = (int16_t)be16(q + V2_PRODUCER_EPOCH_OFFSET);
            sequence = (int32_t)be32(q + V2_BASE_SEQUENCE_OFFSET);
            int32_t last_delta = be32(q + V2_LAST_OFFSET_DELTA_OFFSET);
            int64_t base_ts = be64(q + V2_BASE_TIMESTAMP_OFFSET);
            int64_t max_ts = be64(q + V2_MAX_TIMESTAMP_OFFSET);
            int32_t count = be32(q + V2_RECORD_COUNT_OFFSET);
            if (count < 0 || count > max_records || last_delta < 0)
                break;
            if (!headers && crc_call_matches(crc32c_fn, q + V2_ATTRIBUTES_OFFSET, entry - V2_ATTRIBUTES_OFFSET, crc) <= 0)
                break;
            producer = be64(q + V2_PRODUCER_ID_OFFSET);
            first_ts = base_ts;
            base = offset;
            if (__builtin_add_overflow(offset, (int64_t)last_delta, &last_offset))
                break;
            if (w->have_last && base <= w->last)
                break;
            n = count;
            row_ts = max_ts;
            if (deep) {
                int codec = attributes & COMPRESSION_MASK;
                if ((attributes & CONTROL_BIT) || codec > 4)
                    break;
                WalkCounts c;
                DataError err = {NULL, 0};
                int failed;
                if (codec) {
                    Py_buffer pb;
                    const unsigned char *body = q + V2_HEADER_SIZE;
                    if (call_decompress(decompress_fn, codec, body, entry - V2_HEADER_SIZE, &pb) <= 0)
                        break;
                    failed = walk_records((const unsigned char *)pb.buf, 0, pb.len, count, last_delta, base_ts, &c, &err);
                    PyBuffer_Release(&pb);
                }
                else {
                    failed = walk_records(p, pos + V2_HEADER_SIZE, entry_end, count, last_delta, base_ts, &c, &err);
                }
                if (failed) {
                    Py_XDECREF(err.message); /* NULL: an exception is set */
                    break;
                }
                if (c.have_ts && !(attributes & (TIMESTAMP_TYPE_BIT | DELETE_HORIZON_BIT))) {
                    int64_t latest;
                    if (__builtin_add_overflow(base_ts, c.max_ts, &latest) ? c.max_ts > 0 : latest > max_ts)
                        break;
                }
            }
        }
        else if (magic < 2) {
            Py_ssize_t vstart = 0;
            int32_t vlen = 0;
            crc = (uint32_t)be32(q + LEGACY_CRC_OFFSET);
            if (headers) {
                int min_size = magic ? LEGACY_V1_MIN_SIZE : LEGACY_V0_MIN_SIZE;
                if (length < min_size || end - pos < LOG_OVERHEAD + min_size)
                    break;
            }
            else {
                if (legacy_value(p, pos, entry_end, magic, &vstart, &vlen) < 0)
                    break;
                if (crc32_matches(crc32_fn, q + MAGIC_OFFSET, entry - MAGIC_OFFSET, crc) <= 0)
                    break;
            }
            row_ts = magic == 1 ? be64(q + LEGACY_V1_TIMESTAMP_OFFSET) : -1;
            first_ts = row_ts;
            attributes = q[LEGACY_ATTRIBUTES_OFFSET];
            int codec = attributes & COMPRESSION_MASK;
            last_offset = offset;
            if (codec == 0) {
                base = offset;
                n = 1;
            }
            else if (codec > 3 || vlen < 0) {
                break; /* zstd or an unknown codec in a wrapper, or no value: the decoder reports it */
            }
            else if (deep) {
                Py_buffer ib;
                if (call_decompress(decompress_fn, codec, p + vstart, vlen, &ib) <= 0)
                    break;
                int64_t first = 0, last_inner = 0;
                int sound = 0;
                if (ib.len / SMALLEST_ENTRY <= max_records)
                    sound = inner_span((const unsigned char *)ib.buf, ib.len, magic, crc32_fn, &n, &first,
                                       &last_inner);
                PyBuffer_Release(&ib);
                if (sound <= 0)
                    break;
                if (legacy_relative(magic, offset) && offset < last_inner)
                    break;
                __int128 b = legacy_inner_base(magic, offset, last_inner) + first;
                if (b > last_offset)
                    break;
                base = (int64_t)b;
            }
            else {
                have_base = 0; /* shallow: a wrapper's header holds only its last offset */
                n = 0;
            }
            if (w->have_last && (have_base ? base : last_offset) <= w->last)
                break;
        }
        else {
            break;
        }
        if (have_base && w->have_last && base > w->last + 1 && !w->after_damage)
            w->gaps++;
        int64_t low = have_base ? base : (w->have_last ? w->last + 1 : 0);
        if (rows != Py_None &&
            append_new(rows, Py_BuildValue("(nLLLniiLLLkiii)", file_pos + pos, (long long)low, (long long)last_offset,
                                           (long long)row_ts, entry, magic, attributes, (long long)first_ts,
                                           have_base ? n : -1LL, (long long)producer, (unsigned long)crc, epoch,
                                           p_epoch, sequence)) < 0)
            break;
        w->last = last_offset;
        w->have_last = 1;
        w->after_damage = 0;
        w->batches++;
        w->records += n;
        pos = entry_end;
        w->last_size = entry;
    }
    return pos;
}

/* How a walk of a file descriptor reads (as _walk_pure.py's _read_size): a window where entries are
 * small or the rest of the file is; one header after an entry this large. */
#define FILE_WINDOW (256 * 1024)
#define HEADER_READ 64
#define LARGE_ENTRY 4096
#define SMALL_REST (16 * 1024)

/* pread as os.pread does it (retried on EINTR once signals are handled): the bytes read, or -1 with
 * an exception set. */
static Py_ssize_t
pread_into(int fd, unsigned char *buf, Py_ssize_t n, Py_ssize_t at)
{
    Py_ssize_t got;
    int saved;
    do {
        Py_BEGIN_ALLOW_THREADS
        got = pread(fd, buf, (size_t)n, (off_t)at);
        Py_END_ALLOW_THREADS
        saved = errno;
    } while (got < 0 && saved == EINTR && PyErr_CheckSignals() == 0);
    if (got < 0 && !PyErr_Occurred()) {
        errno = saved;
        PyErr_SetFromErrno(PyExc_OSError);
    }
    return got;
}

/* The walk of the file fd from pos to end (headers only), each read walked as a buffer; the bytes
 * used, or -1 with an exception set. Memory: one header, or one window of at most FILE_WINDOW bytes. */
static Py_ssize_t
walk_file(int fd, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t file_pos, Py_ssize_t file_end, long long max_records,
          Py_ssize_t entry_limit, PyObject *rows, EntryWalk *w)
{
    unsigned char head[HEADER_READ], *window = NULL;
    Py_ssize_t at = pos, size = LARGE_ENTRY; /* the first read is a header's, unless the file is small */
    while (at < end && w->batches < w->max_entries) {
        Py_ssize_t rest = end - at;
        Py_ssize_t want = rest <= SMALL_REST || size < LARGE_ENTRY ? FILE_WINDOW : HEADER_READ;
        if (want > rest)
            want = rest;
        unsigned char *buf = head;
        if (want > HEADER_READ) {
            if (window == NULL) {
                window = PyMem_Malloc((size_t)(end - pos < FILE_WINDOW ? end - pos : FILE_WINDOW));
                if (window == NULL) {
                    PyErr_NoMemory();
                    break;
                }
            }
            buf = window;
        }
        Py_ssize_t n = pread_into(fd, buf, want, at);
        if (n < 0)
            break;
        Py_ssize_t used = walk_span(buf, 0, n, file_end - at, file_pos + at, 0, 1, max_records, entry_limit, Py_None,
                                    Py_None, Py_None, rows, w);
        if (PyErr_Occurred() || used == 0)
            break;
        at += used;
        size = w->last_size;
    }
    PyMem_Free(window);
    return PyErr_Occurred() ? -1 : at - pos;
}

PyObject *
walk_entries(PyObject *self, PyObject *args)
{
    PyObject *data;
    Py_ssize_t pos, end, file_pos, entry_limit, file_end = 0;
    int deep, after_damage;
    long long max_records;
    PyObject *last_obj, *crc32c_fn, *crc32_fn, *decompress_fn, *rows, *file_end_obj = Py_None,
                                                                      *max_entries_obj = Py_None;
    if (!PyArg_ParseTuple(args, "OnnnpOpLnOOOO|OO", &data, &pos, &end, &file_pos, &deep, &last_obj, &after_damage,
                          &max_records, &entry_limit, &crc32c_fn, &crc32_fn, &decompress_fn, &rows, &file_end_obj,
                          &max_entries_obj))
        return NULL;
    /* data: a buffer, or a file descriptor read with pread */
    int fd = -1;
    Py_buffer view = {NULL};
    if (PyLong_Check(data)) {
        long v = PyLong_AsLong(data);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v > INT_MAX) {
            PyErr_SetString(PyExc_OverflowError, "fd is greater than maximum");
            return NULL;
        }
        fd = (int)v;
        if (v < 0 || pos < 0 || end < pos || file_end_obj == Py_None) {
            PyErr_SetString(PyExc_ValueError, "a walk of a file needs fd >= 0, 0 <= pos <= end and file_end");
            return NULL;
        }
    }
    else if (!PyArg_Parse(data, "y*", &view) || view_window(&view, pos, end) < 0)
        return NULL;
    /* headers only (file_end given): an entry is taken when its header is in the window and it ends by
     * file_end; no CRC, nothing decompressed */
    int headers = file_end_obj != Py_None;
    EntryWalk w = {0, last_obj != Py_None, after_damage, 0, 0, 0, LLONG_MAX, 0};
    int overflow = 0;
    if (headers) {
        file_end = PyLong_AsSsize_t(file_end_obj);
        if (file_end == -1 && PyErr_Occurred())
            goto error;
        deep = 0;
    }
    if (max_entries_obj != Py_None) {
        w.max_entries = PyLong_AsLongLong(max_entries_obj);
        if (w.max_entries == -1 && PyErr_Occurred())
            goto error;
    }
    if (rows != Py_None && !PyList_Check(rows)) {
        PyErr_SetString(PyExc_TypeError, "rows must be a list or None");
        goto error;
    }
    if (w.have_last) {
        w.last = PyLong_AsLongLongAndOverflow(last_obj, &overflow);
        if (w.last == -1 && PyErr_Occurred())
            goto error;
        if (overflow)
            goto done; /* past int64: no offset can follow it, so no entry is taken */
    }
    Py_ssize_t stop = pos;
    if (fd >= 0) {
        Py_ssize_t used = walk_file(fd, pos, end, file_pos, file_end, max_records, entry_limit, rows, &w);
        if (used < 0)
            goto error;
        stop = pos + used;
    }
    else {
        stop = walk_span((const unsigned char *)view.buf, pos, end, headers ? file_end : end, file_pos, deep, headers,
                         max_records, entry_limit, crc32c_fn, crc32_fn, decompress_fn, rows, &w);
        if (PyErr_Occurred())
            goto error;
    }
    pos = stop - pos;
    goto result;
done:
    pos = 0;
result:
    if (view.obj != NULL)
        PyBuffer_Release(&view);
    PyObject *last_out = w.have_last && !overflow ? PyLong_FromLongLong(w.last) : Py_NewRef(last_obj);
    if (last_out == NULL)
        return NULL;
    return Py_BuildValue("(nLLLNO)", pos, w.batches, w.records, w.gaps, last_out, w.after_damage ? Py_True : Py_False);
error:
    if (view.obj != NULL)
        PyBuffer_Release(&view);
    return NULL;
}

int
walk_init(PyObject *m)
{
    crc32_init();
    return 0;
}
