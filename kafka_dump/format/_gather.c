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
    int64_t *hists[NHISTS]; /* record, key, value, header bytes, header count; NULL: validate only */
    PyObject *times;        /* dict */
    PyObject *keys;         /* dict */
    Py_ssize_t key_limit;
    int64_t width;
    int64_t null_keys, null_values, first_od, last_od, gaps, missing, others;
    int64_t min_ts, max_ts;
    int have_ts;
    int64_t run_k, run_n; /* consecutive timestamps in one bucket, added to times at once */
} Acc;

static int
flush_run(Acc *a)
{
    if (a->run_n == 0)
        return 0;
    PyObject *k = PyLong_FromLongLong(a->run_k);
    if (!k)
        return -1;
    PyObject *old = PyDict_GetItemWithError(a->times, k);
    long long n = a->run_n;
    if (old) {
        long long o = PyLong_AsLongLong(old);
        if (o == -1 && PyErr_Occurred()) {
            Py_DECREF(k);
            return -1;
        }
        n += o;
    } else if (PyErr_Occurred()) {
        Py_DECREF(k);
        return -1;
    }
    PyObject *v = PyLong_FromLongLong(n);
    int rc = v ? PyDict_SetItem(a->times, k, v) : -1;
    Py_XDECREF(v);
    Py_DECREF(k);
    a->run_n = 0;
    return rc;
}

static int
count_key(Acc *a, const unsigned char *p, Py_ssize_t n)
{
    PyObject *k = PyBytes_FromStringAndSize((const char *)p, n);
    if (!k)
        return -1;
    PyObject *old = PyDict_GetItemWithError(a->keys, k);
    int rc = 0;
    if (old) {
        long long o = PyLong_AsLongLong(old);
        PyObject *v = (o == -1 && PyErr_Occurred()) ? NULL : PyLong_FromLongLong(o + 1);
        rc = v ? PyDict_SetItem(a->keys, k, v) : -1;
        Py_XDECREF(v);
    } else if (PyErr_Occurred()) {
        rc = -1;
    } else if (PyDict_GET_SIZE(a->keys) < a->key_limit) {
        PyObject *one = PyLong_FromLong(1);
        rc = one ? PyDict_SetItem(a->keys, k, one) : -1;
        Py_XDECREF(one);
    } else {
        a->others++;
    }
    Py_DECREF(k);
    return rc;
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
walk(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, int64_t count, int64_t base_ts, int has_lat,
     int64_t lat, Acc *a, DataError *err)
{
    Py_ssize_t first = pos;
    int64_t prev = -1;
    for (int64_t i = 0; i < count; i++) {
        if (pos >= end)
            FAIL(first, "batch declares %lld records but holds %lld", (long long)count, (long long)i);
        Py_ssize_t start = pos;
        int64_t length, ts_delta, od, key, value, nh, n;
        if (read_varint(p, &pos, end, VARINT_MAX_BYTES, &length, err) < 0)
            goto at_start;
        Py_ssize_t body_end = pos + (Py_ssize_t)length;
        if (length < V2_RECORD_MIN_LENGTH || length > end - pos)
            FAIL(start, "record length %lld does not fit the batch", (long long)length);
        pos += 1; /* attributes: unused */
        if (read_varint(p, &pos, body_end, VARLONG_MAX_BYTES, &ts_delta, err) < 0 ||
            read_varint(p, &pos, body_end, VARINT_MAX_BYTES, &od, err) < 0 ||
            read_varint(p, &pos, body_end, VARINT_MAX_BYTES, &key, err) < 0)
            goto at_start;
        if (key > body_end - pos)
            FAIL(start, "key length %lld runs past the record", (long long)key);
        if (key > 0)
            pos += (Py_ssize_t)key;
        if (read_varint(p, &pos, body_end, VARINT_MAX_BYTES, &value, err) < 0)
            goto at_start;
        if (value > body_end - pos)
            FAIL(start, "value length %lld runs past the record", (long long)value);
        if (value > 0)
            pos += (Py_ssize_t)value;
        if (read_varint(p, &pos, body_end, VARINT_MAX_BYTES, &nh, err) < 0)
            goto at_start;
        if (nh < 0 || nh > body_end - pos)
            FAIL(start, "invalid header count %lld", (long long)nh);
        int64_t header_bytes = 0;
        for (int64_t h = 0; h < nh; h++) {
            if (read_varint(p, &pos, body_end, VARINT_MAX_BYTES, &n, err) < 0)
                goto at_start;
            if (n < 0)
                FAIL(start, "header key is null");
            if (n > body_end - pos)
                FAIL(start, "header key length %lld runs past the record", (long long)n);
            if (a && count_key(a, p + pos, (Py_ssize_t)n) < 0)
                return -2;
            header_bytes += n;
            pos += (Py_ssize_t)n;
            if (read_varint(p, &pos, body_end, VARINT_MAX_BYTES, &n, err) < 0)
                goto at_start;
            if (n > body_end - pos)
                FAIL(start, "header value length %lld runs past the record", (long long)n);
            if (n > 0) {
                header_bytes += n;
                pos += (Py_ssize_t)n;
            }
        }
        if (pos != body_end)
            FAIL(start, "record declares %lld bytes but its fields take %lld", (long long)length,
                 (long long)(length + (pos - body_end)));
        if (!a)
            continue;
        hist_add(a->hists[0], (int64_t)(body_end - start));
        if (key < 0)
            a->null_keys++;
        else
            hist_add(a->hists[1], key);
        if (value < 0)
            a->null_values++;
        else
            hist_add(a->hists[2], value);
        if (nh)
            hist_add(a->hists[3], header_bytes);
        hist_add(a->hists[4], nh);
        if (i == 0) {
            a->first_od = od;
        } else if (od != prev + 1) {
            a->gaps++;
            if (od > prev + 1)
                a->missing += od - prev - 1;
        }
        prev = a->last_od = od;
        int64_t t;
        int ok = 1;
        if (has_lat)
            t = lat;
        else
            ok = !__builtin_add_overflow(base_ts, ts_delta, &t);
        if (ok && t >= 0) {
            int64_t k = t / a->width;
            if (a->run_n && k != a->run_k && flush_run(a) < 0)
                return -2;
            a->run_k = k;
            a->run_n++;
            if (!a->have_ts || t < a->min_ts)
                a->min_ts = t;
            if (!a->have_ts || t > a->max_ts)
                a->max_ts = t;
            a->have_ts = 1;
        }
        continue;
    at_start:
        err->position = start; /* every error inside a record is reported at the record's start */
        return err->message ? -1 : -2;
    }
    if (pos != end)
        FAIL(pos, "%lld bytes remain after the batch's %lld declared records", (long long)(end - pos),
             (long long)count);
    if (a && flush_run(a) < 0)
        return -2;
    return 0;
}

/* Open the five histograms (a tuple of array('q')) into acc and read the append time (an int, or
 * None for none). Returns 0, or -1 with a Python exception set; *got buffers are to be released. */
static int
acc_open(Acc *acc, PyObject *hist_objs, Py_buffer *bufs, int *got, PyObject *lat_obj, int *has_lat, int64_t *lat)
{
    if (PyTuple_GET_SIZE(hist_objs) != NHISTS) {
        PyErr_SetString(PyExc_ValueError, "five histograms are needed");
        return -1;
    }
    *has_lat = lat_obj != Py_None;
    *lat = 0;
    if (*has_lat) {
        *lat = PyLong_AsLongLong(lat_obj);
        if (*lat == -1 && PyErr_Occurred())
            return -1;
    }
    for (; *got < NHISTS; (*got)++) {
        Py_buffer *b = &bufs[*got];
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(hist_objs, *got), b, PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
            return -1;
        if (b->len != (Py_ssize_t)(SLOTS * sizeof(int64_t)) || b->itemsize != 8 || !b->format ||
            strcmp(b->format, "q") != 0) {
            PyErr_SetString(PyExc_ValueError, "a histogram is an array('q') of SLOTS items");
            (*got)++;
            return -1;
        }
        acc->hists[*got] = (int64_t *)b->buf;
    }
    return 0;
}

static PyObject *
gather_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos, end, key_limit;
    long long count, base_ts, width;
    PyObject *lat_obj, *hist_objs, *times, *keys;
    if (!PyArg_ParseTuple(args, "y*nnLLOLO!O!O!n", &data, &pos, &end, &count, &base_ts, &lat_obj, &width,
                          &PyTuple_Type, &hist_objs, &PyDict_Type, &times, &PyDict_Type, &keys, &key_limit))
        return NULL;
    Py_buffer bufs[NHISTS];
    int got = 0;
    PyObject *result = NULL;
    if (pos < 0 || end < pos || end > data.len || width < 1) {
        PyErr_SetString(PyExc_ValueError, "need 0 <= pos <= end <= len(data) and width >= 1");
        goto done;
    }
    Acc acc = {0};
    int has_lat;
    int64_t lat;
    if (acc_open(&acc, hist_objs, bufs, &got, lat_obj, &has_lat, &lat) < 0)
        goto done;
    acc.times = times;
    acc.keys = keys;
    acc.key_limit = key_limit;
    acc.width = width;
    DataError err = {NULL, 0};
    const unsigned char *p = (const unsigned char *)data.buf;
    int rc = walk(p, pos, end, count, base_ts, has_lat, lat, NULL, &err);
    if (rc == 0)
        rc = walk(p, pos, end, count, base_ts, has_lat, lat, &acc, &err);
    if (rc == -2)
        goto done;
    if (rc == -1) {
        result = Py_BuildValue("iiiiiiOOiNn", 0, 0, 0, 0, 0, 0, Py_None, Py_None, 0, err.message, err.position);
        goto done;
    }
    PyObject *min_ts = acc.have_ts ? PyLong_FromLongLong(acc.min_ts) : Py_NewRef(Py_None);
    PyObject *max_ts = acc.have_ts ? PyLong_FromLongLong(acc.max_ts) : Py_NewRef(Py_None);
    if (min_ts && max_ts)
        result = Py_BuildValue("LLLLLLOOLOi", (long long)acc.null_keys, (long long)acc.null_values,
                               (long long)acc.first_od, (long long)acc.last_od, (long long)acc.gaps,
                               (long long)acc.missing, min_ts, max_ts, (long long)acc.others, Py_None, 0);
    Py_XDECREF(min_ts);
    Py_XDECREF(max_ts);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&bufs[i]);
    PyBuffer_Release(&data);
    return result;
}

/* One pass over a decompressed v0/v1 inner message set (see gather_legacy_inner in _gather_pure.py).
 * Returns the number of messages, or 0 when the set is not the plain case. With a != NULL (second
 * pass), adds each message to the histograms and times; base is added to every inner offset. */
static Py_ssize_t
legacy_walk(const unsigned char *p, Py_ssize_t end, int magic, int64_t *last_offset, int64_t *max_offset,
            int64_t *missing_total, Acc *a, int64_t base, int has_lat, int64_t lat, int *failed)
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
        Py_ssize_t q = pos + LEGACY_HEADER_SIZE;
        int64_t ts = -1;
        if (magic == 1) {
            ts = be64(p + q);
            q += LEGACY_V1_TIMESTAMP_LENGTH;
        }
        int64_t len[2] = {-1, -1};
        for (int k = 0; k < 2; k++) {
            if (q + 4 > entry_end)
                return 0;
            int64_t m = be32(p + q);
            q += 4;
            if (m >= 0) {
                if (m > entry_end - q)
                    return 0;
                len[k] = m;
                q += (Py_ssize_t)m;
            }
        }
        if (q != entry_end)
            return 0;
        int64_t offset = be64(p + pos);
        if (n > 0 && !a) {
            /* The gaps must be countable in int64 (Python's ints would not overflow). */
            int64_t d, total;
            if (__builtin_sub_overflow(offset, *last_offset, &d))
                return 0;
            if (d > 1 && __builtin_add_overflow(*missing_total, d - 1, &total))
                return 0;
            if (d > 1)
                *missing_total = total;
        }
        *last_offset = offset;
        if (n == 0 || offset > *max_offset)
            *max_offset = offset;
        if (a) {
            hist_add(a->hists[0], LOG_OVERHEAD + size);
            if (len[0] < 0)
                a->null_keys++;
            else
                hist_add(a->hists[1], len[0]);
            if (len[1] < 0)
                a->null_values++;
            else
                hist_add(a->hists[2], len[1]);
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
            int64_t t = has_lat ? lat : ts;
            if (t >= 0) {
                int64_t k = t / a->width;
                if (a->run_n && k != a->run_k && flush_run(a) < 0) {
                    *failed = 2;
                    return 0;
                }
                a->run_k = k;
                a->run_n++;
                if (!a->have_ts || t < a->min_ts)
                    a->min_ts = t;
                if (!a->have_ts || t > a->max_ts)
                    a->max_ts = t;
                a->have_ts = 1;
            }
        }
        n++;
        pos = entry_end;
    }
    return n;
}

static PyObject *
gather_legacy_inner(PyObject *self, PyObject *args)
{
    Py_buffer data;
    int magic;
    long long wrapper_offset, width;
    PyObject *lat_obj, *hist_objs, *times;
    if (!PyArg_ParseTuple(args, "y*iLOLO!O!", &data, &magic, &wrapper_offset, &lat_obj, &width, &PyTuple_Type,
                          &hist_objs, &PyDict_Type, &times))
        return NULL;
    Py_buffer bufs[NHISTS];
    int got = 0;
    PyObject *result = NULL;
    if ((magic != 0 && magic != 1) || width < 1) {
        PyErr_SetString(PyExc_ValueError, "magic must be 0 or 1 and width at least 1");
        goto done;
    }
    Acc acc = {0};
    int has_lat;
    int64_t lat;
    if (acc_open(&acc, hist_objs, bufs, &got, lat_obj, &has_lat, &lat) < 0)
        goto done;
    acc.times = times;
    acc.width = width;
    const unsigned char *p = (const unsigned char *)data.buf;
    int64_t last = 0, max_offset = 0, missing_total = 0;
    int failed = 0;
    Py_ssize_t n = legacy_walk(p, data.len, magic, &last, &max_offset, &missing_total, NULL, 0, has_lat, lat, &failed);
    int relative = magic > 0 && wrapper_offset != 0;
    if (n == 0 || (relative && wrapper_offset < last)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    int64_t base = relative ? wrapper_offset - last : 0;
    int64_t check;
    if (__builtin_add_overflow(max_offset, base, &check)) { /* offsets past int64: the decoder reads them */
        result = Py_NewRef(Py_None);
        goto done;
    }
    n = legacy_walk(p, data.len, magic, &last, &max_offset, &missing_total, &acc, base, has_lat, lat, &failed);
    if (failed || flush_run(&acc) < 0)
        goto done; /* a Python exception is set */
    PyObject *min_ts = acc.have_ts ? PyLong_FromLongLong(acc.min_ts) : Py_NewRef(Py_None);
    PyObject *max_ts = acc.have_ts ? PyLong_FromLongLong(acc.max_ts) : Py_NewRef(Py_None);
    if (min_ts && max_ts)
        result = Py_BuildValue("nLLLLLLOO", n, (long long)acc.null_keys, (long long)acc.null_values,
                               (long long)acc.first_od, (long long)acc.last_od, (long long)acc.gaps,
                               (long long)acc.missing, min_ts, max_ts);
    Py_XDECREF(min_ts);
    Py_XDECREF(max_ts);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&bufs[i]);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"gather_v2_records", gather_v2_records, METH_VARARGS,
     "Validate, then add to histograms the records of one v2 batch (see _gather_pure.py)."},
    {"gather_legacy_inner", gather_legacy_inner, METH_VARARGS,
     "Add to histograms the inner messages of a decompressed v0/v1 wrapper, in the plain case (see "
     "_gather_pure.py); None otherwise."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gather", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__gather(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddIntConstant(m, "NBUCKETS", NBUCKETS) < 0 || PyModule_AddIntConstant(m, "SLOTS", SLOTS) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
