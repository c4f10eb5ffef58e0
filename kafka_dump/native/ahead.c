/*
 * The compiled engine of log/ahead.py's Ahead: a read window's gzip payloads inflated on a POSIX
 * thread that never takes the GIL (a Python thread would wait for the GIL the decoder holds), while
 * the decoder reads the entries before them.
 *
 * scan() (or start() with the spans) lists a window's compressed payloads as ahead.py's
 * compressed_spans does. The reader (GIL held) makes an output bytes object of each gzip span's ISIZE
 * (at most the limit), within a budget of bytes ahead of where it reads; the worker inflates spans
 * into them in file order. take() gives the reader each payload in file order; when the worker is
 * still on the one asked for, the reader inflates the next unclaimed span meanwhile, so both cores
 * inflate. One reader thread per engine.
 *
 * A span's bytes are given only where _transcode.gunzip would give the same bytes; anything else (a
 * payload not the span foreseen, another limit or codec, a declined member) goes to the decompress
 * function given, so the bytes or the exception are always that function's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "_buf.h"
#include "_gzip.h"
#include "_wire.h"

#define GZIP_CODEC 1
#define QUIET_ENTRIES 64 /* ahead.py's _QUIET_ENTRIES: entries in a row without gzip end the scan */
#define V2_CODECS 4      /* the highest codec id of a v2 batch (zstd) */
#define LEGACY_CODECS 3  /* and of a v0/v1 wrapper (lz4) */
#define WAIT_BASE_NS 1000000L  /* the longest the reader waits for the worker's span: this, */
#define WAIT_PER_BYTE_NS 20L   /* plus this per inflated byte; then it inflates the span itself */

/* A span's life: S_NONE (decompressed where asked), or S_LATER (its output not made yet: the budget)
 * -> S_PENDING (made, for the worker or the reader to claim) -> S_WORKER or S_READER -> S_DONE or
 * S_DECLINED -> S_TAKEN. */
enum { S_NONE, S_LATER, S_PENDING, S_WORKER, S_READER, S_DONE, S_DECLINED, S_TAKEN };

typedef struct {
    Py_ssize_t start, length, size; /* the payload in the window; the output's size */
    int codec, state, made; /* made: its output was made (counted in the bytes waiting) */
    PyObject *out;          /* the output, ISIZE bytes (S_PENDING to S_DONE); NULL otherwise */
    unsigned char *dst; /* its buffer, so that the worker reads no Python object */
} Span;

typedef struct {
    PyObject_HEAD
    PyObject *decompress; /* codecs.decompress: every payload not given from here */
    Py_ssize_t limit, budget;
    pthread_mutex_t mu;
    pthread_cond_t work; /* the worker waits here for a span to claim */
    pthread_cond_t done; /* the reader (and finish) wait here for the worker's span */
    pthread_t thread;
    int started, closing, sync_ready;
    Py_ssize_t busy; /* spans the worker is inflating (0 or 1) */
    Py_buffer view;  /* the window */
    int has_view;
    Span *spans;
    Py_ssize_t n, next, claim; /* spans; the reader's next; the first the worker may claim */
    Py_ssize_t fill, waiting;  /* the next span to make an output for; bytes made and not yet passed */
    z_stream z;                /* the reader's inflater, reset for each span */
    int z_ready;
    Py_ssize_t by_worker, by_reader, declined, late, fallbacks; /* counts, for tests */
} Ahead;

/* Inflate the gzip member at p[0:n] into dst[0:cap] with z (initialised for gzip, reset here): 1 when
 * it ends having made exactly cap bytes, its trailer sound and no second member after it; else 0.
 * Called without the GIL. */
static int
gunzip_into(z_stream *z, const unsigned char *p, Py_ssize_t n, unsigned char *dst, Py_ssize_t cap)
{
    if (inflateReset(z) != Z_OK)
        return 0;
    z->next_in = (unsigned char *)p;
    z->avail_in = (uInt)n;
    z->next_out = dst;
    z->avail_out = (uInt)cap;
    int rc = inflate(z, Z_FINISH); /* one call: zlib keeps no window copy when the member ends in it */
    Py_ssize_t total = (Py_ssize_t)z->total_out, used = n - (Py_ssize_t)z->avail_in;
    if (rc != Z_STREAM_END || total != cap || !gzip_trailer_ok(p, used, dst, total))
        return 0;
    return !gzip_more(p, n, used); /* a second member: codecs' */
}

/* The output size to make for a payload, or 0 when it is left to the decompress function: the
 * members _transcode.gunzip reads (deflate, no header CRC nor reserved flags), whose ISIZE is at
 * least 1 (an empty bytes object is shared), within the limit and within deflate's reach. */
static Py_ssize_t
isize_of(const unsigned char *p, Py_ssize_t n, Py_ssize_t limit)
{
    if (!gzip_plain_header(p, n))
        return 0;
    Py_ssize_t size = (Py_ssize_t)le32(p + n - 4);
    if (size < 1 || size > limit || size / DEFLATE_MAX_RATIO > n)
        return 0;
    return size;
}

/* Whether the span at claim can be claimed (mutex held): claim moves past the spans nobody will
 * inflate here, and stops at one whose output is not made yet (in file order, it is next). */
static int
next_pending(Ahead *a)
{
    while (a->claim < a->n && a->spans[a->claim].state != S_PENDING && a->spans[a->claim].state != S_LATER)
        a->claim++;
    return a->claim < a->n && a->spans[a->claim].state == S_PENDING;
}

static void *
work(void *arg)
{
    Ahead *a = (Ahead *)arg;
    z_stream z;
    int ready = gzip_open(&z);
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->closing && !next_pending(a))
            pthread_cond_wait(&a->work, &a->mu);
        if (a->closing)
            break;
        Span *s = &a->spans[a->claim++];
        s->state = S_WORKER;
        a->busy++;
        const unsigned char *p = (const unsigned char *)a->view.buf + s->start;
        pthread_mutex_unlock(&a->mu);
        int ok = ready && gunzip_into(&z, p, s->length, s->dst, s->size);
        pthread_mutex_lock(&a->mu);
        s->state = ok ? S_DONE : S_DECLINED;
        a->busy--;
        a->by_worker++;
        pthread_cond_broadcast(&a->done);
    }
    pthread_mutex_unlock(&a->mu);
    if (ready)
        inflateEnd(&z);
    return NULL;
}

/* Wait on done for at most ns nanoseconds (mutex held). */
static void
wait_done(Ahead *a, long ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += ns % 1000000000L;
    t.tv_sec += ns / 1000000000L + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&a->done, &a->mu, &t);
}

static long
now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* The reader inflates span s itself (mutex held on entry and exit; released meanwhile). */
static void
reader_inflates(Ahead *a, Span *s)
{
    s->state = S_READER;
    const unsigned char *p = (const unsigned char *)a->view.buf + s->start;
    pthread_mutex_unlock(&a->mu);
    int ok = a->z_ready && gunzip_into(&a->z, p, s->length, s->dst, s->size);
    pthread_mutex_lock(&a->mu);
    s->state = ok ? S_DONE : S_DECLINED;
    a->by_reader++;
}

/* Span i's outcome once the worker or the reader has made it: S_DONE, S_DECLINED, or S_WORKER when
 * the worker took too long (descheduled on a busy machine: the span is then inflated where asked).
 * Called without the GIL. */
static int
resolve(Ahead *a, Py_ssize_t i)
{
    Span *s = &a->spans[i];
    long deadline = 0;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        if (s->state == S_PENDING) {
            if (a->claim <= i)
                a->claim = i + 1;
            reader_inflates(a, s);
        }
        if (s->state != S_WORKER)
            break;
        if (next_pending(a)) { /* the worker is on i: inflate the next one meanwhile */
            Span *other = &a->spans[a->claim++];
            reader_inflates(a, other);
            continue;
        }
        long now = now_ns();
        if (deadline == 0)
            deadline = now + WAIT_BASE_NS + WAIT_PER_BYTE_NS * (long)s->size;
        else if (now >= deadline)
            break;
        wait_done(a, deadline - now);
    }
    int state = s->state;
    if (state == S_DONE || state == S_DECLINED)
        s->state = S_TAKEN;
    pthread_mutex_unlock(&a->mu);
    return state;
}

/* Stop the window: the worker claims nothing more; wait for the span it is on. GIL held on entry. */
static void
finish(Ahead *a)
{
    if (a->spans == NULL)
        return;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&a->mu);
    a->claim = a->n;
    while (a->busy)
        pthread_cond_wait(&a->done, &a->mu);
    pthread_mutex_unlock(&a->mu);
    Py_END_ALLOW_THREADS
    Span *spans = a->spans;
    Py_ssize_t n = a->n;
    pthread_mutex_lock(&a->mu);
    a->spans = NULL;
    a->n = a->next = a->claim = a->fill = a->waiting = 0;
    pthread_mutex_unlock(&a->mu);
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(spans[i].out);
    PyMem_Free(spans);
    if (a->has_view) {
        PyBuffer_Release(&a->view);
        a->has_view = 0;
    }
}

static void
stop_thread(Ahead *a)
{
    if (!a->started)
        return;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&a->mu);
    a->closing = 1;
    pthread_cond_broadcast(&a->work);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    Py_END_ALLOW_THREADS
    a->started = 0;
}

/* Make the outputs of the spans from fill on while they fit in the budget with those waiting, so
 * that memory stays flat however large the window; 0, or -1 with an exception set. GIL held. */
static int
top_up(Ahead *a)
{
    int added = 0;
    for (; a->fill < a->n; a->fill++) {
        Span *s = &a->spans[a->fill];
        if (s->state != S_LATER)
            continue;
        if (s->size > a->budget - a->waiting)
            break; /* it fits once the reader has passed those before it (each fits alone) */
        PyObject *out = PyBytes_FromStringAndSize(NULL, s->size);
        if (out == NULL)
            return -1;
        s->out = out;
        s->dst = (unsigned char *)PyBytes_AS_STRING(out);
        s->made = 1;
        a->waiting += s->size;
        pthread_mutex_lock(&a->mu);
        s->state = S_PENDING;
        pthread_mutex_unlock(&a->mu);
        added = 1;
    }
    if (added) {
        pthread_mutex_lock(&a->mu);
        pthread_cond_signal(&a->work);
        pthread_mutex_unlock(&a->mu);
    }
    return 0;
}

/* The reader passes span s: its bytes no longer wait; one never made is no longer to be made. */
static void
passed(Ahead *a, Span *s, Py_ssize_t i)
{
    if (a->fill <= i)
        a->fill = i + 1;
    if (s->made) {
        a->waiting -= s->size;
        return;
    }
    if (s->state == S_LATER) {
        pthread_mutex_lock(&a->mu);
        s->state = S_NONE;
        pthread_mutex_unlock(&a->mu);
    }
}

static PyObject *
fallback(Ahead *a, PyObject *const *args, Py_ssize_t nargs)
{
    if (a->decompress == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "InflateEngine is not initialised");
        return NULL;
    }
    a->fallbacks++;
    return PyObject_Vectorcall(a->decompress, args, (size_t)nargs, NULL);
}

/* ---- the scan ------------------------------------------------------------------------------- */

/* A span found: (codec, start, length), appended to a list or to the engine's spans. */
typedef int (*Found)(void *ctx, int codec, Py_ssize_t start, Py_ssize_t length);

/* ahead.py's compressed_spans(d, pos, end) with gzip the codec wanted, in C: the same spans, in the
 * same order, each handed to found (which returns -1 to stop with an exception set). */
static int
scan(const unsigned char *d, Py_ssize_t pos, Py_ssize_t end, Found found, void *ctx)
{
    int quiet = 0;
    while (end - pos >= MAGIC_OFFSET + 1 && quiet < QUIET_ENTRIES) {
        int64_t entry = LOG_OVERHEAD + (int64_t)be32(d + pos + LOG_ENTRY_SIZE_OFFSET);
        if (entry < LOG_OVERHEAD + LEGACY_V0_MIN_SIZE || entry > end - pos)
            return 0;
        int magic = d[pos + MAGIC_OFFSET], codec;
        Py_ssize_t start, length;
        if (magic == 2) {
            if (entry < V2_HEADER_SIZE)
                return 0;
            int attributes = d[pos + V2_ATTRIBUTES_OFFSET + 1];
            codec = attributes & COMPRESSION_MASK;
            if ((attributes & CONTROL_BIT) || codec > V2_CODECS)
                return 0; /* the deep walk stops at a control batch and at an unknown codec */
            start = pos + V2_HEADER_SIZE;
            length = (Py_ssize_t)entry - V2_HEADER_SIZE;
        }
        else if (magic < 2) {
            codec = d[pos + LEGACY_ATTRIBUTES_OFFSET] & COMPRESSION_MASK;
            if (codec > LEGACY_CODECS)
                return 0;
            if (codec) { /* the key, then the value, which must end the message */
                if (entry - LOG_OVERHEAD < (magic ? LEGACY_V1_MIN_SIZE : LEGACY_V0_MIN_SIZE))
                    return 0;
                LegacyMessage m;
                if (legacy_body(d, pos, pos + (Py_ssize_t)entry, magic, &m) != LEGACY_OK || m.value_len < 0)
                    return 0;
                start = m.value_pos;
                length = m.value_len;
            }
        }
        else
            return 0;
        if (codec) {
            quiet = codec == GZIP_CODEC ? 0 : quiet + 1;
            if (found(ctx, codec, start, length) < 0)
                return -1;
        }
        else
            quiet++;
        pos += (Py_ssize_t)entry;
    }
    return 0;
}

static int
found_tuple(void *ctx, int codec, Py_ssize_t start, Py_ssize_t length)
{
    return append_new((PyObject *)ctx, Py_BuildValue("(inn)", codec, start, length));
}

/* compressed_spans(data, pos, end) -> list of (codec, start, length): the scan the engine starts a
 * window with, for the tests that hold it to ahead.py's. */
PyObject *
compressed_spans(PyObject *self, PyObject *args)
{
    Py_buffer in;
    Py_ssize_t pos, end;
    if (!PyArg_ParseTuple(args, "y*nn", &in, &pos, &end))
        return NULL;
    PyObject *list = NULL;
    if (check_window(pos, end, in.len) == 0 && (list = PyList_New(0)) != NULL &&
        scan((const unsigned char *)in.buf, pos, end, found_tuple, list) < 0)
        Py_CLEAR(list);
    PyBuffer_Release(&in);
    return list;
}

/* ---- the type ------------------------------------------------------------------------------- */

static int
Ahead_init(Ahead *a, PyObject *args, PyObject *kwds)
{
    PyObject *decompress;
    Py_ssize_t limit, budget;
    if (!PyArg_ParseTuple(args, "Onn", &decompress, &limit, &budget))
        return -1;
    if (a->sync_ready) {
        PyErr_SetString(PyExc_RuntimeError, "InflateEngine is initialised once");
        return -1;
    }
    pthread_condattr_t attr;
    if (pthread_mutex_init(&a->mu, NULL) != 0 || pthread_condattr_init(&attr) != 0) {
        PyErr_SetString(PyExc_OSError, "cannot make the inflate-ahead locks");
        return -1;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&a->done, &attr);
    pthread_cond_init(&a->work, NULL);
    pthread_condattr_destroy(&attr);
    a->sync_ready = 1;
    Py_INCREF(decompress);
    a->decompress = decompress;
    a->limit = limit;
    a->budget = budget;
    a->z_ready = gzip_open(&a->z);
    return 0;
}

static void
Ahead_dealloc(Ahead *a)
{
    if (a->sync_ready) {
        finish(a);
        stop_thread(a);
        pthread_cond_destroy(&a->work);
        pthread_cond_destroy(&a->done);
        pthread_mutex_destroy(&a->mu);
    }
    if (a->z_ready)
        inflateEnd(&a->z);
    Py_XDECREF(a->decompress);
    Py_TYPE(a)->tp_free((PyObject *)a);
}

/* A window's spans as they are found (start's list, or the scan). */
typedef struct {
    Ahead *a;
    Span *spans;
    Py_ssize_t n, cap, later;
} Build;

static int
add_span(void *ctx, int codec, Py_ssize_t start, Py_ssize_t length)
{
    Build *b = (Build *)ctx;
    Ahead *a = b->a;
    if (start < 0 || length < 0 || start > a->view.len - length) {
        PyErr_SetString(PyExc_ValueError, "a span lies outside the window");
        return -1;
    }
    if (b->n == b->cap) {
        Py_ssize_t cap = b->cap ? 2 * b->cap : 64;
        Span *more = PyMem_Realloc(b->spans, (size_t)cap * sizeof(Span));
        if (more == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->spans = more;
        b->cap = cap;
    }
    Span *s = &b->spans[b->n++];
    memset(s, 0, sizeof *s);
    s->codec = codec;
    s->start = start;
    s->length = length;
    Py_ssize_t size = codec == GZIP_CODEC ? isize_of((const unsigned char *)a->view.buf + start, length, a->limit) : 0;
    if (size > 0 && size <= a->budget) { /* else S_NONE: decompressed where it is asked */
        s->size = size;
        s->state = S_LATER;
        b->later++;
    }
    return 0;
}

/* The end of the previous window, and the new one's buffer: 1, or 0 when closed, -1 on error. */
static int
begin(Ahead *a, PyObject *window)
{
    if (!a->sync_ready) {
        PyErr_SetString(PyExc_RuntimeError, "InflateEngine is not initialised");
        return -1;
    }
    finish(a);
    if (a->closing)
        return 0;
    if (PyObject_GetBuffer(window, &a->view, PyBUF_SIMPLE) < 0)
        return -1;
    a->has_view = 1;
    return 1;
}

/* Hand the window's spans to the thread (started for the first one to inflate): whether any is.
 * Also the way out of a window begun in vain (failed, or the engine closed: no spans). */
static PyObject *
publish(Ahead *a, Build *b, int failed)
{
    if (failed || b->n == 0) {
        PyMem_Free(b->spans);
        PyBuffer_Release(&a->view);
        a->has_view = 0;
        if (failed)
            return NULL;
        Py_RETURN_FALSE;
    }
    pthread_mutex_lock(&a->mu);
    a->spans = b->spans;
    a->n = b->n;
    a->next = a->claim = a->fill = a->waiting = 0;
    pthread_mutex_unlock(&a->mu);
    if (top_up(a) < 0)
        return NULL; /* the spans are published: the next finish frees them */
    if (b->later && !a->started && pthread_create(&a->thread, NULL, work, a) == 0)
        a->started = 1; /* else the reader inflates every span itself */
    return PyBool_FromLong(b->later > 0);
}

static PyObject *
Ahead_start(Ahead *a, PyObject *args)
{
    PyObject *window, *list;
    if (!PyArg_ParseTuple(args, "OO!", &window, &PyList_Type, &list))
        return NULL;
    Build b = {a, NULL, 0, 0, 0};
    int rc = begin(a, window);
    for (Py_ssize_t i = 0; rc > 0 && i < PyList_GET_SIZE(list); i++) {
        PyObject *t = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            PyErr_SetString(PyExc_TypeError, "a span is a tuple (codec, start, length)");
            rc = -1;
            break;
        }
        long codec = PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
        Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 1));
        Py_ssize_t length = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 2));
        rc = PyErr_Occurred() != NULL || add_span(&b, (int)codec, start, length) < 0 ? -1 : 1;
    }
    return publish(a, &b, rc < 0);
}

static PyObject *
Ahead_scan(Ahead *a, PyObject *args)
{
    PyObject *window;
    Py_ssize_t pos, end;
    if (!PyArg_ParseTuple(args, "Onn", &window, &pos, &end))
        return NULL;
    Build b = {a, NULL, 0, 0, 0};
    int rc = begin(a, window);
    int failed = rc < 0 || (rc > 0 && (check_window(pos, end, a->view.len) < 0 ||
                                       scan((const unsigned char *)a->view.buf, pos, end, add_span, &b) < 0));
    return publish(a, &b, failed);
}

/* take(codec, payload[, limit]): decompress(codec, payload[, limit]), inflated ahead when it is the
 * next span's payload (and the limit, if given, the engine's). */
static PyObject *
Ahead_take(Ahead *a, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 && nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "take(codec, payload[, limit])");
        return NULL;
    }
    if (a->next >= a->n)
        return fallback(a, args, nargs);
    long codec = PyLong_AsLong(args[0]);
    Py_ssize_t limit = nargs == 3 ? PyLong_AsSsize_t(args[2]) : a->limit;
    if (PyErr_Occurred())
        return NULL;
    Span *s = &a->spans[a->next];
    Py_buffer pb;
    if (PyObject_GetBuffer(args[1], &pb, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *at = (const unsigned char *)a->view.buf + s->start;
    int same = s->codec == codec && pb.len == s->length && (pb.buf == at || memcmp(pb.buf, at, pb.len) == 0);
    PyBuffer_Release(&pb);
    if (!same) {
        /* Not the payload the scan foresaw: from here on each is decompressed where it is asked. */
        pthread_mutex_lock(&a->mu);
        a->claim = a->n;
        pthread_mutex_unlock(&a->mu);
        a->next = a->n;
        return fallback(a, args, nargs);
    }
    Py_ssize_t i = a->next++;
    passed(a, s, i);
    if (top_up(a) < 0)
        return NULL;
    if (!s->made || limit != a->limit)
        return fallback(a, args, nargs); /* one made: dropped at finish, if the worker took it */
    int state;
    pthread_mutex_lock(&a->mu); /* the worker holds it only briefly and never waits for the GIL */
    state = s->state;
    if (state == S_DONE)
        s->state = S_TAKEN;
    pthread_mutex_unlock(&a->mu);
    if (state != S_DONE) {
        Py_BEGIN_ALLOW_THREADS
        state = resolve(a, i);
        Py_END_ALLOW_THREADS
    }
    if (state != S_DONE) {
        if (state == S_DECLINED)
            a->declined++;
        else
            a->late++; /* the worker was descheduled past the deadline */
        return fallback(a, args, nargs);
    }
    PyObject *out = s->out;
    s->out = NULL;
    return out;
}

static PyObject *
Ahead_finish(Ahead *a, PyObject *unused)
{
    if (a->sync_ready)
        finish(a);
    Py_RETURN_NONE;
}

static PyObject *
Ahead_close(Ahead *a, PyObject *unused)
{
    if (a->sync_ready) {
        finish(a);
        stop_thread(a);
        a->closing = 1;
    }
    Py_RETURN_NONE;
}

static PyObject *
Ahead_counts(Ahead *a, PyObject *unused)
{
    return Py_BuildValue("{snsnsnsnsn}", "worker", a->by_worker, "reader", a->by_reader, "declined", a->declined,
                         "late", a->late, "fallbacks", a->fallbacks);
}

static PyMethodDef Ahead_methods[] = {
    {"start", (PyCFunction)Ahead_start, METH_VARARGS,
     "start(window, spans) -> bool: begin a window whose payloads (codec, start, length) the reader will\n"
     "ask for in this order; whether any is inflated ahead (else take only calls decompress)."},
    {"scan", (PyCFunction)Ahead_scan, METH_VARARGS,
     "scan(window, pos, end) -> bool: start with the spans compressed_spans finds in window[pos:end]."},
    {"take", (PyCFunction)(void (*)(void))Ahead_take, METH_FASTCALL,
     "take(codec, payload[, limit]) -> bytes: decompress(codec, payload[, limit]), inflated ahead when\n"
     "the payload is the next span's."},
    {"finish", (PyCFunction)Ahead_finish, METH_NOARGS,
     "finish(): end the window (start does too): the window's buffer is no longer read or held."},
    {"close", (PyCFunction)Ahead_close, METH_NOARGS, "close(): end the window, stop and join the thread."},
    {"counts", (PyCFunction)Ahead_counts, METH_NOARGS,
     "counts() -> dict: spans inflated by the worker and by the reader, declined, waited out, and decompress calls."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject AheadType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafka_dump.native._native.InflateEngine",
    .tp_basicsize = sizeof(Ahead),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "InflateEngine(decompress, limit, budget): gzip payloads inflated ahead on a thread without\n"
              "the GIL (see log/ahead.py's Ahead).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Ahead_init,
    .tp_dealloc = (destructor)Ahead_dealloc,
    .tp_methods = Ahead_methods,
};

int
ahead_init(PyObject *m)
{
    if (PyType_Ready(&AheadType) < 0)
        return -1;
    crc32_init();
    Py_INCREF(&AheadType);
    if (PyModule_AddObject(m, "InflateEngine", (PyObject *)&AheadType) < 0) {
        Py_DECREF(&AheadType);
        return -1;
    }
    return 0;
}
