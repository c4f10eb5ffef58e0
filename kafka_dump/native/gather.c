/*
 * The compiled twin of the statistics walk over the records of one v2 batch; _gather_pure.py is
 * the reference and says what it does. Same checks, same reasons, same positions, same figures:
 * tests/test_gather_twins.py compares the two.
 *
 * Memory safety: every read is checked against the record's own length, which is checked against
 * the end of the batch, which is checked against the buffer. Histogram indexes come from
 * bucket_of, which maps every non-negative int64 below NBUCKETS. Nothing is allocated from a length
 * read in the data except a header key, after its length has been checked against its record.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buf.h"
#include "_gzip.h"
#include "_layout.h"
#include "_wire.h"

#define EXACT 128
#define SUB_BITS 6
#define SUB 64
#define NBUCKETS 3712
#define SLOTS (NBUCKETS + 4)
#define H_COUNT NBUCKETS
#define H_TOTAL (NBUCKETS + 1)
#define H_MIN (NBUCKETS + 2)
#define H_MAX (NBUCKETS + 3)
#define NHISTS 5
#define NHISTS_WRAPPERS 7 /* and records per batch, bytes per batch */

static inline int
bucket_of(int64_t v) /* v >= 0 */
{
    if (v < EXACT)
        return (int)v;
    int bits = 64 - __builtin_clzll((uint64_t)v);
    int shift = bits - SUB_BITS - 1;
    return EXACT + (shift - 1) * SUB + (int)((v >> shift) - SUB);
}

static inline void
hist_add(int64_t *h, int64_t v)
{
    h[bucket_of(v)]++;
    h[H_COUNT]++;
    h[H_TOTAL] += v;
    if (v < h[H_MIN])
        h[H_MIN] = v;
    if (v > h[H_MAX])
        h[H_MAX] = v;
}

typedef struct {
    int64_t *hists[NHISTS_WRAPPERS]; /* record, key, value, header bytes, header count[, per batch] */
    PyObject *times;        /* dict */
    PyObject *keys;         /* dict */
    Py_ssize_t key_limit;
    int64_t width;
    int64_t null_keys, null_values, first_od, last_od, gaps, missing, others;
    int64_t min_ts, max_ts;
    int have_ts;
    int64_t run_k, run_n; /* consecutive timestamps in one bucket, added to times at once */
    int64_t kmin, kmax;   /* the least and greatest key of times (when have_k), for the fit */
    int have_k;
    Py_buffer bufs[NHISTS_WRAPPERS]; /* the histograms' buffers: got of them held */
    int got, has_lat;
    int64_t lat; /* the append time, when has_lat */
} Acc;

/* k counted among the keys of times, for the fit's span. */
static inline void
key_seen(Acc *a, int64_t k)
{
    if (!a->have_k || k < a->kmin)
        a->kmin = k;
    if (!a->have_k || k > a->kmax)
        a->kmax = k;
    a->have_k = 1;
}

/* dict[k] += n, from 0 when k is absent and may_add (else 1, and dict unchanged); 0, or -1 with a
 * Python exception set. */
static int
dict_add(PyObject *dict, PyObject *k, long long n, int may_add)
{
    PyObject *old = PyDict_GetItemWithError(dict, k);
    if (old == NULL && (PyErr_Occurred() || !may_add))
        return PyErr_Occurred() ? -1 : 1;
    if (old != NULL) {
        long long o = PyLong_AsLongLong(old);
        if (o == -1 && PyErr_Occurred())
            return -1;
        n += o;
    }
    PyObject *v = PyLong_FromLongLong(n);
    int rc = v ? PyDict_SetItem(dict, k, v) : -1;
    Py_XDECREF(v);
    return rc;
}

static int
flush_run(Acc *a)
{
    if (a->run_n == 0)
        return 0;
    PyObject *k = PyLong_FromLongLong(a->run_k);
    if (!k)
        return -1;
    int rc = dict_add(a->times, k, a->run_n, 1);
    Py_DECREF(k);
    key_seen(a, a->run_k);
    a->run_n = 0;
    return rc;
}

/* A header key counted in a->keys, or in others once a->keys holds key_limit keys (a V2HeaderFn; the
 * value is not counted). */
static int
key_counted(void *ctx, const unsigned char *key, int64_t key_len, const unsigned char *value, int64_t value_len)
{
    Acc *a = ctx;
    PyObject *k = PyBytes_FromStringAndSize((const char *)key, (Py_ssize_t)key_len);
    if (!k)
        return -1;
    int rc = dict_add(a->keys, k, 1, PyDict_GET_SIZE(a->keys) < a->key_limit);
    Py_DECREF(k);
    if (rc > 0) {
        a->others++;
        rc = 0;
    }
    return rc;
}

/* A record's size, key and value lengths (-1: null) added to the first three histograms. */
static inline void
acc_sizes(Acc *a, int64_t size, int64_t key, int64_t value)
{
    hist_add(a->hists[0], size);
    if (key < 0)
        a->null_keys++;
    else
        hist_add(a->hists[1], key);
    if (value < 0)
        a->null_values++;
    else
        hist_add(a->hists[2], value);
}

/* A record's timestamp t counted in the run of times and the least and greatest (none when t < 0).
 * Returns 0, or -1 with a Python exception set. */
static inline int
acc_time(Acc *a, int64_t t)
{
    if (t < 0)
        return 0;
    int64_t k = t / a->width;
    if (a->run_n && k != a->run_k && flush_run(a) < 0)
        return -1;
    a->run_k = k;
    a->run_n++;
    if (!a->have_ts || t < a->min_ts)
        a->min_ts = t;
    if (!a->have_ts || t > a->max_ts)
        a->max_ts = t;
    a->have_ts = 1;
    return 0;
}

/* A data error: its reason and position in err, and -1 returned (-2 if the reason could not be built). */
#define FAIL(pos_, ...)                                    \
    do {                                                   \
        err->message = PyUnicode_FromFormat(__VA_ARGS__);  \
        err->position = (pos_);                            \
        return err->message ? -1 : -2;                     \
    } while (0)

/* Returns 0, -1 with err filled (data error), or -2 with a Python exception set. */
static int
walk(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, int64_t count, int64_t base_ts, int64_t last_delta,
     Acc *a, DataError *err)
{
    Py_ssize_t first = pos;
    int64_t prev = -1;
    for (int64_t i = 0; i < count; i++) {
        if (pos >= end)
            FAIL(first, "batch declares %lld records but holds %lld", (long long)count, (long long)i);
        Py_ssize_t start = pos;
        V2Record r;
        if (v2_record(p, &pos, end, &r, a ? key_counted : NULL, a, err) < 0)
            return err->message ? -1 : -2;
        int64_t od = r.offset_delta, key = r.key_len, value = r.value_len, nh = r.header_count, t;
        if (od > last_delta)
            FAIL(start, "record offset delta %lld is past the batch's lastOffsetDelta %lld", (long long)od,
                 (long long)last_delta);
        if (__builtin_add_overflow(base_ts, r.ts_delta, &t))
            FAIL(start, "record timestamp delta %lld puts its timestamp past int64 (baseTimestamp %lld)",
                 (long long)r.ts_delta, (long long)base_ts);
        if (!a)
            continue;
        acc_sizes(a, (int64_t)(r.body_end - start), key, value);
        if (nh)
            hist_add(a->hists[3], r.header_bytes);
        hist_add(a->hists[4], nh);
        if (i == 0) {
            a->first_od = od;
        } else if (od != prev + 1) {
            a->gaps++;
            if (od > prev + 1)
                a->missing += od - prev - 1;
        }
        prev = a->last_od = od;
        if (a->has_lat)
            t = a->lat;
        if (acc_time(a, t) < 0)
            return -2;
    }
    if (pos != end)
        FAIL(pos, "%lld bytes remain after the batch's %lld declared records", (long long)(end - pos),
             (long long)count);
    if (a && flush_run(a) < 0)
        return -2;
    return 0;
}

/* Refuse the arguments with ValueError(refused) unless it is NULL; else open the histograms (a tuple
 * of nhists array('q')) into acc, with its times (a dict) and their width, and read the append time
 * (an int, or None for none). Returns 0, or -1 with a Python exception set; release_all frees. */
static int
acc_open(Acc *acc, const char *refused, PyObject *hist_objs, int nhists, PyObject *lat_obj, PyObject *times,
         int64_t width)
{
    if (refused != NULL) {
        PyErr_SetString(PyExc_ValueError, refused);
        return -1;
    }
    acc->times = times;
    acc->width = width;
    if (PyTuple_GET_SIZE(hist_objs) != nhists) {
        PyErr_Format(PyExc_ValueError, "%d histograms are needed", nhists);
        return -1;
    }
    acc->has_lat = lat_obj != Py_None;
    if (acc->has_lat) {
        acc->lat = PyLong_AsLongLong(lat_obj);
        if (acc->lat == -1 && PyErr_Occurred())
            return -1;
    }
    for (; acc->got < nhists; acc->got++) {
        Py_buffer *b = &acc->bufs[acc->got];
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(hist_objs, acc->got), b, PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
            return -1;
        if (b->len != (Py_ssize_t)(SLOTS * sizeof(int64_t)) || b->itemsize != 8 || !b->format ||
            strcmp(b->format, "q") != 0) {
            PyErr_SetString(PyExc_ValueError, "a histogram is an array('q') of SLOTS items");
            acc->got++;
            return -1;
        }
        acc->hists[acc->got] = (int64_t *)b->buf;
    }
    return 0;
}

/* result, after the histogram buffers acc holds and data are released. */
static PyObject *
release_all(Acc *acc, Py_buffer *data, PyObject *result)
{
    for (int i = 0; i < acc->got; i++)
        PyBuffer_Release(&acc->bufs[i]);
    PyBuffer_Release(data);
    return result;
}

/* v as an int, or None when there is none. */
static PyObject *
opt_int(int have, int64_t v)
{
    return have ? PyLong_FromLongLong(v) : Py_NewRef(Py_None);
}

PyObject *
gather_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos, end, key_limit;
    long long count, base_ts, width, last_delta = INT64_MAX;
    PyObject *lat_obj, *hist_objs, *times, *keys;
    if (!PyArg_ParseTuple(args, "y*nnLLOLO!O!O!n|L", &data, &pos, &end, &count, &base_ts, &lat_obj, &width,
                          &PyTuple_Type, &hist_objs, &PyDict_Type, &times, &PyDict_Type, &keys, &key_limit,
                          &last_delta))
        return NULL;
    Acc acc = {0};
    PyObject *result = NULL;
    int bad = pos < 0 || end < pos || end > data.len || width < 1;
    if (acc_open(&acc, bad ? "need 0 <= pos <= end <= len(data) and width >= 1" : NULL, hist_objs, NHISTS,
                 lat_obj, times, width) < 0)
        goto done;
    acc.keys = keys;
    acc.key_limit = key_limit;
    DataError err = {NULL, 0};
    const unsigned char *p = (const unsigned char *)data.buf;
    int rc = walk(p, pos, end, count, base_ts, last_delta, NULL, &err);
    if (rc == 0)
        rc = walk(p, pos, end, count, base_ts, last_delta, &acc, &err);
    if (rc == -2)
        goto done;
    if (rc == -1) {
        result = Py_BuildValue("iiiiiiOOiNn", 0, 0, 0, 0, 0, 0, Py_None, Py_None, 0, err.message, err.position);
        goto done;
    }
    /* N: Py_BuildValue takes the times, and releases both if either is NULL */
    result = Py_BuildValue("LLLLLLNNLOi", (long long)acc.null_keys, (long long)acc.null_values,
                           (long long)acc.first_od, (long long)acc.last_od, (long long)acc.gaps, (long long)acc.missing,
                           opt_int(acc.have_ts, acc.min_ts), opt_int(acc.have_ts, acc.max_ts), (long long)acc.others,
                           Py_None, 0);
done:
    return release_all(&acc, &data, result);
}

/* One pass over a decompressed v0/v1 inner message set (see gather_legacy_inner in _gather_pure.py).
 * Returns the number of messages, or 0 when the set is not the plain case. With a != NULL (second
 * pass), adds each message to the histograms and times; base is added to every inner offset. */
static Py_ssize_t
legacy_walk(const unsigned char *p, Py_ssize_t end, int magic, int64_t *first_offset, int64_t *last_offset,
            int64_t *max_offset, int64_t *missing_total, Acc *a, int64_t base, int *failed)
{
    static const Py_ssize_t min_size[2] = {LEGACY_V0_MIN_SIZE, LEGACY_V1_MIN_SIZE};
    Py_ssize_t pos = 0, n = 0;
    int64_t prev = 0;
    *failed = 0;
    while (pos < end) {
        if (end - pos < LOG_OVERHEAD)
            return 0;
        int64_t size = be32(p + pos + LOG_ENTRY_SIZE_OFFSET);
        if (size < min_size[magic] || size > end - pos - LOG_OVERHEAD)
            return 0;
        Py_ssize_t entry_end = pos + LOG_OVERHEAD + (Py_ssize_t)size;
        if (p[pos + LEGACY_MAGIC_OFFSET] != magic || (p[pos + LEGACY_ATTRIBUTES_OFFSET] & COMPRESSION_MASK))
            return 0;
        LegacyMessage m;
        if (legacy_body(p, pos, entry_end, magic, &m) != LEGACY_OK)
            return 0;
        int64_t ts = m.timestamp, key_len = m.key_len, value_len = m.value_len;
        int64_t offset = be64(p + pos);
        if (n > 0 && !a) {
            /* The gaps must be countable in int64 (Python's ints would not overflow). */
            int64_t d, total;
            if (!legacy_inner_grows(n, *last_offset, offset))
                return 0;
            if (__builtin_sub_overflow(offset, *last_offset, &d))
                return 0;
            if (d > 1 && __builtin_add_overflow(*missing_total, d - 1, &total))
                return 0;
            if (d > 1)
                *missing_total = total;
        }
        *last_offset = offset;
        if (n == 0)
            *first_offset = offset;
        if (n == 0 || offset > *max_offset)
            *max_offset = offset;
        if (a) {
            acc_sizes(a, LOG_OVERHEAD + size, key_len, value_len);
            hist_add(a->hists[4], 0);
            int64_t abs_offset = offset + base; /* no overflow: base >= 0 and max_offset + base was checked */
            int64_t d = abs_offset - prev; /* fits: the first pass checked every difference */
            if (n == 0) {
                a->first_od = abs_offset;
            } else if (d != 1) {
                a->gaps++;
                if (d > 1)
                    a->missing += d - 1;
            }
            prev = a->last_od = abs_offset;
            if (acc_time(a, a->has_lat ? a->lat : ts) < 0) {
                *failed = 2;
                return 0;
            }
        }
        n++;
        pos = entry_end;
    }
    return n;
}

/* The first pass over an inner message set (_plain_inner in _gather_pure.py): the number of messages,
 * or 0 when the set is not the plain case or a figure would pass int64; with the first and last
 * inner offsets, the greatest, the missing offsets inside, and the base to add to each. */
static Py_ssize_t
plain_inner(const unsigned char *p, Py_ssize_t len, int magic, int64_t wrapper_offset, int64_t *first,
            int64_t *last, int64_t *max_offset, int64_t *missing, int64_t *base)
{
    int failed = 0;
    *missing = 0;
    Py_ssize_t n = legacy_walk(p, len, magic, first, last, max_offset, missing, NULL, 0, &failed);
    if (n == 0 || (legacy_relative(magic, wrapper_offset) && wrapper_offset < *last))
        return 0;
    __int128 b = legacy_inner_base(magic, wrapper_offset, *last);
    if (b > INT64_MAX || b + *max_offset > INT64_MAX) /* offsets past int64: the decoder reads them */
        return 0;
    *base = (int64_t)b;
    return n;
}

PyObject *
gather_legacy_inner(PyObject *self, PyObject *args)
{
    Py_buffer data;
    int magic;
    long long wrapper_offset, width;
    PyObject *lat_obj, *hist_objs, *times;
    if (!PyArg_ParseTuple(args, "y*iLOLO!O!", &data, &magic, &wrapper_offset, &lat_obj, &width, &PyTuple_Type,
                          &hist_objs, &PyDict_Type, &times))
        return NULL;
    Acc acc = {0};
    PyObject *result = NULL;
    int bad = (magic != 0 && magic != 1) || width < 1;
    if (acc_open(&acc, bad ? "magic must be 0 or 1 and width at least 1" : NULL, hist_objs, NHISTS, lat_obj,
                 times, width) < 0)
        goto done;
    const unsigned char *p = (const unsigned char *)data.buf;
    int64_t first = 0, last = 0, max_offset = 0, missing_total = 0, base = 0;
    int failed = 0;
    Py_ssize_t n = plain_inner(p, data.len, magic, wrapper_offset, &first, &last, &max_offset, &missing_total, &base);
    if (n == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    n = legacy_walk(p, data.len, magic, &first, &last, &max_offset, &missing_total, &acc, base, &failed);
    if (failed || flush_run(&acc) < 0)
        goto done; /* a Python exception is set */
    result = Py_BuildValue("nLLLLLLNN", n, (long long)acc.null_keys, (long long)acc.null_values,
                           (long long)acc.first_od, (long long)acc.last_od, (long long)acc.gaps, (long long)acc.missing,
                           opt_int(acc.have_ts, acc.min_ts), opt_int(acc.have_ts, acc.max_ts));
done:
    return release_all(&acc, &data, result);
}

/* -- a run of v0/v1 wrapper messages (gather_legacy_wrappers in _gather_pure.py) ------------------ */

/* Looked up on first use: codecs.decompress, the Compression members 0-7 and
 * CorruptRecordError (what a refused payload raises). Module state kept for the process. */
static PyObject *g_decompress, *g_codecs[8], *g_corrupt;

static int
load_helpers(void)
{
    if (g_corrupt)
        return 0;
    PyObject *codecs = PyImport_ImportModule("kafka_dump.wire.codecs");
    PyObject *model = codecs ? PyImport_ImportModule("kafka_dump.model") : NULL;
    PyObject *errors = model ? PyImport_ImportModule("kafka_dump.errors") : NULL;
    PyObject *compression = model ? PyObject_GetAttrString(model, "Compression") : NULL;
    int rc = -1;
    if (errors && compression) {
        g_decompress = PyObject_GetAttrString(codecs, "decompress");
        rc = g_decompress ? 0 : -1;
        for (int i = 0; i < 8 && rc == 0; i++) {
            g_codecs[i] = PyObject_CallFunction(compression, "i", i);
            rc = g_codecs[i] ? 0 : -1;
        }
        if (rc == 0) {
            g_corrupt = PyObject_GetAttrString(errors, "CorruptRecordError");
            rc = g_corrupt ? 0 : -1;
        }
    }
    Py_XDECREF(codecs);
    Py_XDECREF(model);
    Py_XDECREF(errors);
    Py_XDECREF(compression);
    return rc;
}

/* fn(codec, value, limit) on a copy of the value v[0:n], fn being codecs.decompress (named "decompress")
 * or the segment reader's unpack, which may have inflated the payload ahead (log/ahead.py): a new bytes
 * object; NULL with *refused set when fn refuses it (CorruptRecordError, as stats' own reading
 * catches); NULL with an exception otherwise. */
static PyObject *
unpack_value(PyObject *fn, const char *name, const unsigned char *v, Py_ssize_t n, int codec, Py_ssize_t limit,
             int *refused)
{
    PyObject *value = PyBytes_FromStringAndSize((const char *)v, n);
    PyObject *out = value ? PyObject_CallFunction(fn, "OOn", g_codecs[codec], value, limit) : NULL;
    Py_XDECREF(value);
    return bytes_result(out, name, g_corrupt, refused);
}

/* The decompressed value of a wrapper, as unpack_value gives it through codecs.decompress; a gzip one
 * inflated here when it is a plain member (transcode.c's zlib_gunzip), else left to codecs. */
static PyObject *
wrapper_value(const unsigned char *v, Py_ssize_t n, int codec, Py_ssize_t limit, int *refused)
{
    *refused = 0;
    if (codec == 1 && limit >= 0 && gzip_plain_header(v, n)) {
        PyObject *out = NULL;
        Py_ssize_t used = 0;
        int rc = zlib_gunzip(v, n, limit, &out, &used);
        if (rc < 0)
            return NULL;
        if (rc == 0 && !gzip_more(v, n, used))
            return out;
        Py_XDECREF(out);
    }
    return unpack_value(g_decompress, "decompress", v, n, codec, limit, refused);
}

/* Double the width of times until its keys span at most limit buckets (TimeHistogram.fit). */
static int
times_fit(Acc *a, int64_t limit)
{
    while (a->have_k && a->kmax - a->kmin >= limit) {
        PyObject *items = PyDict_Items(a->times);
        if (!items)
            return -1;
        PyDict_Clear(a->times);
        Py_ssize_t n = PyList_GET_SIZE(items);
        a->have_k = 0;
        a->width *= 2; /* no overflow: a span past limit >= 2 needs width <= INT64_MAX / 2 */
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *kv = PyList_GET_ITEM(items, i);
            long long k = PyLong_AsLongLong(PyTuple_GET_ITEM(kv, 0));
            long long c = PyLong_AsLongLong(PyTuple_GET_ITEM(kv, 1));
            if ((k == -1 || c == -1) && PyErr_Occurred()) {
                Py_DECREF(items);
                return -1;
            }
            a->run_k = k >> 1;
            a->run_n = c;
            if (flush_run(a) < 0) {
                Py_DECREF(items);
                return -1;
            }
        }
        Py_DECREF(items);
    }
    return 0;
}

/* The least and greatest key of times, as the fit needs them. */
static int
times_range(Acc *a)
{
    PyObject *k, *v;
    Py_ssize_t i = 0;
    a->have_k = 0;
    while (PyDict_Next(a->times, &i, &k, &v)) {
        long long key = PyLong_AsLongLong(k);
        if (key == -1 && PyErr_Occurred())
            return -1;
        key_seen(a, key);
    }
    return 0;
}

typedef struct {
    int64_t batches, records, disk, uncompressed;
} FormatFig;

PyObject *
gather_legacy_wrappers(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos, end, max_batch_bytes, max_records, time_limit;
    long long width;
    PyObject *hist_objs, *times, *unpack = Py_None;
    if (!PyArg_ParseTuple(args, "y*nnnnLnO!O!|O", &data, &pos, &end, &max_batch_bytes, &max_records, &width,
                          &time_limit, &PyTuple_Type, &hist_objs, &PyDict_Type, &times, &unpack))
        return NULL;
    Acc acc = {0};
    PyObject *result = NULL;
    int bad = pos < 0 || end < pos || end > data.len || width < 1 || time_limit < 2;
    if (acc_open(&acc, bad ? "need 0 <= pos <= end <= len(data), width >= 1 and time_limit >= 2" : NULL, hist_objs,
                 NHISTS_WRAPPERS, Py_None, times, width) < 0 ||
        load_helpers() < 0 || times_range(&acc) < 0)
        goto done;
    static const Py_ssize_t min_size[2] = {LEGACY_V0_MIN_SIZE, LEGACY_V1_MIN_SIZE};
    const unsigned char *p = (const unsigned char *)data.buf;
    Py_ssize_t start = pos;
    FormatFig formats[2][4] = {{{0}}};
    int64_t ts_types[3] = {0, 0, 0};
    int64_t batches = 0, records = 0, first = 0, low = 0, high = 0, last = 0;
    int counted = 0;
    while (end - pos >= V2_HEADER_SIZE) {
        const unsigned char *e = p + pos;
        int64_t length = be32(e + LOG_ENTRY_SIZE_OFFSET);
        if (length < LEGACY_V0_MIN_SIZE || length > end - pos - LOG_OVERHEAD)
            break;
        Py_ssize_t entry = LOG_OVERHEAD + (Py_ssize_t)length;
        int magic = e[LEGACY_MAGIC_OFFSET], attributes = e[LEGACY_ATTRIBUTES_OFFSET];
        int codec = attributes & COMPRESSION_MASK;
        if (magic > 1 || codec < 1 || codec > 3 || length < min_size[magic])
            break;
        /* The message (wire/message.py): CRC, key and value within it, nothing after the value. */
        if ((uint32_t)be32(e + LEGACY_CRC_OFFSET) != crc32_ieee(e + LEGACY_MAGIC_OFFSET, entry - LEGACY_MAGIC_OFFSET))
            break;
        LegacyMessage m;
        if (legacy_body(e, 0, entry, magic, &m) != LEGACY_OK || m.value_len < 0)
            break;
        Py_ssize_t q = m.value_pos, vlen = m.value_len;
        int refused;
        PyObject *inner = unpack == Py_None ? wrapper_value(e + q, (Py_ssize_t)vlen, codec, max_batch_bytes, &refused)
                                            : unpack_value(unpack, "unpack", e + q, (Py_ssize_t)vlen, codec, max_batch_bytes,
                                                           &refused);
        if (!inner) {
            if (refused)
                break;
            goto done;
        }
        const unsigned char *ip = (const unsigned char *)PyBytes_AS_STRING(inner);
        Py_ssize_t ilen = PyBytes_GET_SIZE(inner);
        int64_t offset = be64(e + LOG_ENTRY_OFFSET_OFFSET);
        int64_t ifirst, ilast, imax, imissing, base;
        Py_ssize_t n = plain_inner(ip, ilen, magic, offset, &ifirst, &ilast, &imax, &imissing, &base);
        int64_t f = ifirst + base, la = ilast + base; /* no overflow: plain_inner checked imax + base */
        int64_t next, d = 0, total, seam_missing = 0;
        int ok = n > 0 && n <= max_records;
        if (ok && counted) {
            ok = !__builtin_add_overflow(last, 1, &next) && !__builtin_sub_overflow(f, next, &d);
            seam_missing = d > 0 ? d : 0;
        }
        ok = ok && !__builtin_add_overflow(acc.missing, seam_missing, &total) &&
             !__builtin_add_overflow(total, imissing, &total);
        if (!ok) {
            Py_DECREF(inner);
            break;
        }
        int failed = 0;
        acc.has_lat = magic == 1 && (attributes & TIMESTAMP_TYPE_BIT);
        acc.lat = be64(e + LEGACY_V1_TIMESTAMP_OFFSET);
        legacy_walk(ip, ilen, magic, &ifirst, &ilast, &imax, &imissing, &acc, base, &failed);
        Py_DECREF(inner);
        if (failed || flush_run(&acc) < 0 || times_fit(&acc, time_limit) < 0)
            goto done;
        if (counted && d != 0) {
            acc.gaps++;
            acc.missing += seam_missing;
        }
        hist_add(acc.hists[5], n);
        hist_add(acc.hists[6], entry);
        FormatFig *fig = &formats[magic][codec];
        fig->batches++;
        fig->records += n;
        fig->disk += entry;
        fig->uncompressed += ilen;
        ts_types[magic == 0 ? 0 : acc.has_lat ? 2 : 1]++;
        batches++;
        records += n;
        if (!counted || f < low)
            low = f;
        if (!counted || la > high)
            high = la;
        if (!counted)
            first = f;
        last = la;
        counted = 1;
        pos += entry;
    }
    PyObject *figs = PyList_New(0);
    for (int m = 0; figs && m < 2; m++)
        for (int c = 1; c < 4; c++) {
            FormatFig *fig = &formats[m][c];
            if (fig->batches && append_new(figs, Py_BuildValue("iiLLLL", m, c, (long long)fig->batches,
                                                               (long long)fig->records, (long long)fig->disk,
                                                               (long long)fig->uncompressed)) < 0) {
                Py_CLEAR(figs);
                break;
            }
        }
    PyObject *fig_tuple = figs ? PyList_AsTuple(figs) : NULL;
    Py_XDECREF(figs);
    /* N: Py_BuildValue takes the seven, and releases them all if any is NULL */
    result = Py_BuildValue("nLLLLLLLNNNNNNN(LLL)", pos - start, (long long)acc.width, (long long)batches,
                           (long long)records, (long long)acc.null_keys, (long long)acc.null_values,
                           (long long)acc.gaps, (long long)acc.missing, opt_int(counted, first),
                           opt_int(counted, low), opt_int(counted, high), opt_int(counted, last),
                           opt_int(acc.have_ts, acc.min_ts), opt_int(acc.have_ts, acc.max_ts), fig_tuple,
                           (long long)ts_types[0], (long long)ts_types[1], (long long)ts_types[2]);
done:
    return release_all(&acc, &data, result);
}

int
gather_init(PyObject *m)
{
    crc32_init();
    return PyModule_AddIntConstant(m, "NBUCKETS", NBUCKETS) < 0 || PyModule_AddIntConstant(m, "SLOTS", SLOTS) < 0 ? -1 : 0;
}
