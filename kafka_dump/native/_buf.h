/*
 * A growing output buffer for the compiled writers (JSON lines, table lines, convert's entries): the
 * output is written straight into a bytes object, resized as it grows and cut to its length at the
 * end (buf_finish), so that the finished bytes are not copied once more.
 */
#ifndef KDUMP_BUF_H
#define KDUMP_BUF_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
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

static void
buf_free(Buf *b)
{
    Py_CLEAR(b->bytes);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* The bytes written, as a bytes object (the buffer is handed over and left empty); NULL with an
 * exception set. */
static PyObject *
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

#endif
