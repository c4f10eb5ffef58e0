/*
 * A growing output buffer for the compiled writers (JSON lines, table lines, convert's entries): the
 * output is written straight into a bytes object, resized as it grows and cut to its length at the
 * end (buf_finish), so that the finished bytes are not copied once more. With it, the small calls
 * the twins make alike: a decimal number, a list's append, a function called on a memoryview.
 */
#ifndef KDUMP_BUF_H
#define KDUMP_BUF_H

#include <Python.h> /* after the module's PY_SSIZE_T_CLEAN */
#include <string.h>

typedef struct {
    PyObject *bytes; /* NULL until the first byte */
    char *data;
    Py_ssize_t len, cap;
} Buf;

#define BUF_INIT {NULL, NULL, 0, 0}

/* The slow half of buf_reserve: grow the buffer (doubling) to hold extra more bytes. */
static int
buf_grow(Buf *b, Py_ssize_t extra)
{
    if (extra > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra)
        cap = cap > PY_SSIZE_T_MAX / 2 ? b->len + extra : cap * 2;
    if (b->bytes == NULL)
        b->bytes = PyBytes_FromStringAndSize(NULL, cap);
    else if (_PyBytes_Resize(&b->bytes, cap) < 0)
        b->bytes = NULL; /* freed by _PyBytes_Resize */
    if (b->bytes == NULL) {
        b->data = NULL;
        b->len = b->cap = 0;
        return -1;
    }
    b->data = PyBytes_AS_STRING(b->bytes);
    b->cap = cap;
    return 0;
}

/* Room for extra more bytes; inlined, so that a literal's copy is a few moves and the common case
 * one compare. Returns 0, or -1 with an exception set. */
static inline int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    return extra <= b->cap - b->len ? 0 : buf_grow(b, extra);
}

static inline int
buf_put(Buf *b, const char *s, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n > 0) /* an empty buffer has no data yet, and memcpy takes no null pointer */
        memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

#define PUT_LIT(b, lit) buf_put((b), (lit), (Py_ssize_t)(sizeof(lit) - 1))

static inline void
buf_free(Buf *b)
{
    Py_CLEAR(b->bytes);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* The bytes written, as a bytes object (the buffer is handed over and left empty); NULL with an
 * exception set. */
static inline PyObject *
buf_finish(Buf *b)
{
    PyObject *out = b->bytes;
    Py_ssize_t len = b->len;
    b->bytes = NULL;
    buf_free(b);
    if (out == NULL)
        return PyBytes_FromStringAndSize(NULL, 0);
    if (_PyBytes_Resize(&out, len) < 0)
        return NULL;
    return out;
}

/* The decimal digits of v (any sign), written to end where they end: where they start. Two digits at
 * a time: snprintf would cost more than the rest of a record's JSON. */
static inline char *
decimal(char *end, long long v)
{
    static const char pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char *p = end;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = pairs[d + 1];
        *--p = pairs[d];
    }
    if (u >= 10) {
        *--p = pairs[u * 2 + 1];
        *--p = pairs[u * 2];
    }
    else
        *--p = (char)('0' + u);
    if (v < 0)
        *--p = '-';
    return p;
}

/* list.append(item), taking the item's reference; 0, or -1 with an exception set (item NULL: set
 * already). */
static inline int
append_new(PyObject *list, PyObject *item)
{
    int rc = item == NULL ? -1 : PyList_Append(list, item);
    Py_XDECREF(item);
    return rc;
}

/* What a function that must return bytes (name) returned, r: r when bytes; else NULL with
 * TypeError, or (r NULL) with the call's exception, unless that is refusal (NULL: none): then cleared,
 * and *refused set. */
static inline PyObject *
bytes_result(PyObject *r, const char *name, PyObject *refusal, int *refused)
{
    if (refused != NULL)
        *refused = 0;
    if (r == NULL && refusal != NULL && PyErr_ExceptionMatches(refusal)) {
        PyErr_Clear();
        *refused = 1;
    }
    else if (r != NULL && !PyBytes_Check(r)) {
        Py_DECREF(r);
        PyErr_Format(PyExc_TypeError, "%s must return bytes", name);
        return NULL;
    }
    return r;
}

/* fn(memoryview of p[0:n]), or fn(codec, that view) when codec >= 0: a new reference, or NULL with an
 * exception set. */
static inline PyObject *
call_on_view(PyObject *fn, int codec, const unsigned char *p, Py_ssize_t n)
{
    PyObject *view = PyMemoryView_FromMemory((char *)p, n, PyBUF_READ);
    if (view == NULL)
        return NULL;
    PyObject *r = codec < 0 ? PyObject_CallOneArg(fn, view) : PyObject_CallFunction(fn, "iO", codec, view);
    Py_DECREF(view);
    return r;
}

#endif
