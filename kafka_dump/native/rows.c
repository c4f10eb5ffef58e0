/*
 * The compiled twin of render/rows.py: the cells of plain records, and the lines of a table's rows
 * at known widths, both exactly what the pure twin makes (tests/test_table_twins.py checks that they
 * are, on fixtures, on the bad corpus and on random values). It reads Record and Header fields by
 * name, through _model.h; it renders output, so it is a module of the render layer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buf.h"
#include "_model.h"

/* render/rows.py's numbering. */
enum { TIME_ISO = 0, TIME_MS = 1, TIME_BOTH = 2 };
enum { COL_OFFSET = 0, COL_TIME = 1, COL_KEY = 2, COL_VALUE = 3, COL_HEADERS = 4 };
#define COLUMN_BITS 3
static const long long YEAR_10000 = 253402300800000LL; /* epoch ms: ISO times end at 9999-12-31 */

/* n spaces into b (none when n <= 0). */
static int
buf_spaces(Buf *b, Py_ssize_t n)
{
    if (n <= 0)
        return 0;
    if (buf_reserve(b, n) < 0)
        return -1;
    memset(b->data + b->len, ' ', (size_t)n);
    b->len += n;
    return 0;
}


/* ---- cells -------------------------------------------------------------------------------------- */

/* Printable ASCII (what str.isprintable accepts below 0x80): a space to a tilde. */
static int
printable_ascii(const char *p, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c > 0x7e)
            return 0;
    }
    return 1;
}

/* An ASCII str of n bytes. */
static PyObject *
ascii_str(const char *p, Py_ssize_t n)
{
    PyObject *s = PyUnicode_New(n, 127);
    if (s != NULL)
        memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
    return s;
}

/* n ASCII bytes and an ellipsis (U+2026): a cell cut at --max-bytes. */
static PyObject *
cut_str(const char *p, Py_ssize_t n)
{
    PyObject *s = PyUnicode_New(n + 1, 0xFFFF);
    if (s == NULL)
        return NULL;
    Py_UCS2 *d = PyUnicode_2BYTE_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++)
        d[i] = (unsigned char)p[i];
    d[n] = 0x2026;
    return s;
}

/* A key or value's cell when it is printable ASCII (cut at max_bytes), else NULL with no error
 * set: the caller leaves it blank. */
static PyObject *
data_cell(PyObject *data, Py_ssize_t max_bytes)
{
    const char *p = PyBytes_CheckExact(data) ? PyBytes_AS_STRING(data) : NULL;
    Py_ssize_t n = p == NULL ? 0 : PyBytes_GET_SIZE(data), shown = n <= max_bytes ? n : max_bytes;
    if (p == NULL || !printable_ascii(p, shown))
        return NULL;
    return n <= max_bytes ? ascii_str(p, n) : cut_str(p, shown);
}

/* ``k=v, k=null`` into b when every header key and value is printable ASCII and no value is cut;
 * returns 1 when written, 0 when not plain, -1 on error. */
static int
headers_cell(Buf *b, PyObject *headers, Py_ssize_t max_bytes)
{
    Py_ssize_t n = PyTuple_GET_SIZE(headers);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *h = PyTuple_GET_ITEM(headers, i);
        if (!Py_IS_TYPE(h, (PyTypeObject *)model.header_type))
            return 0;
        PyObject *key = HEADER_SLOT(h, H_KEY), *value = HEADER_SLOT(h, H_VALUE);
        if (key == NULL || value == NULL || !PyBytes_CheckExact(key))
            return 0;
        if (!printable_ascii(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)))
            return 0;
        if (value != Py_None) {
            if (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) > max_bytes ||
                !printable_ascii(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)))
                return 0;
        }
        if ((i > 0 && PUT_LIT(b, ", ") < 0) || buf_put(b, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)) < 0 ||
            PUT_LIT(b, "=") < 0)
            return -1;
        if (value == Py_None ? PUT_LIT(b, "null") < 0
                             : buf_put(b, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)) < 0)
            return -1;
    }
    return 1;
}

static void
two(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
}

/* 2023-11-14T22:13:20.000Z for 0 <= ms < YEAR_10000: proleptic Gregorian, UTC (days to a civil date
 * as in H. Hinnant's chrono algorithms). Writes 24 characters. */
static void
iso_time(char *out, long long ms)
{
    long long secs = ms / 1000, z = secs / 86400 + 719468;
    unsigned sod = (unsigned)(secs % 86400);
    long long era = z / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned day = doy - (153 * mp + 2) / 5 + 1;
    unsigned month = mp < 10 ? mp + 3 : mp - 9;
    unsigned year = (unsigned)(yoe + era * 400) + (month <= 2);
    unsigned milli = (unsigned)(ms % 1000);
    two(out, year / 100);
    two(out + 2, year % 100);
    out[4] = '-';
    two(out + 5, month);
    out[7] = '-';
    two(out + 8, day);
    out[10] = 'T';
    two(out + 11, sod / 3600);
    out[13] = ':';
    two(out + 14, sod / 60 % 60);
    out[16] = ':';
    two(out + 17, sod % 60);
    out[19] = '.';
    out[20] = (char)('0' + milli / 100);
    two(out + 21, milli % 100);
    out[23] = 'Z';
}

/* The time cell as --time asks, or NULL with no error set when it is left blank (not an int, or
 * an ISO time before 1970 or past the ISO years); "-" for -1, no timestamp. */
static PyObject *
time_cell(PyObject *stamp, int mode)
{
    if (!PyLong_Check(stamp))
        return NULL;
    int overflow = 0;
    long long ts = PyLong_AsLongLongAndOverflow(stamp, &overflow);
    if (overflow || (ts == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return NULL;
    }
    if (ts == -1) /* no timestamp */
        return ascii_str("-", 1);
    char text[64];
    char *end = text + sizeof text;
    if (mode == TIME_MS) {
        char *p = decimal(end, ts);
        return ascii_str(p, end - p);
    }
    if (ts < 0 || ts >= YEAR_10000) /* before 1970 or past the ISO years: the Rich path shows it */
        return NULL;
    iso_time(text, ts);
    if (mode == TIME_ISO)
        return ascii_str(text, 24);
    /* both: ``ISO (ms)`` */
    char *p = decimal(end - 1, ts);
    *(end - 1) = ')';
    Py_ssize_t digits = end - p;
    text[24] = ' ';
    text[25] = '(';
    memmove(text + 26, p, (size_t)digits);
    return ascii_str(text, 26 + digits);
}

/* Append cell (a new reference, or NULL for a blank cell) to column; a blank is listed, the
 * longest cell of each column kept in widths. */
static int
append_cell(PyObject *column, PyObject *cell, PyObject *blank, Py_ssize_t row, int col, PyObject *empty,
            Py_ssize_t *widths)
{
    if (cell == NULL) {
        if (PyErr_Occurred())
            return -1;
        if (append_new(blank, PyLong_FromSsize_t(row << COLUMN_BITS | col)) < 0)
            return -1;
        return PyList_Append(column, empty);
    }
    if (PyUnicode_GET_LENGTH(cell) > widths[col])
        widths[col] = PyUnicode_GET_LENGTH(cell);
    return append_new(column, cell);
}

PyObject *
cells(PyObject *self, PyObject *args)
{
    PyObject *records, *columns_arg;
    Py_ssize_t max_bytes, first;
    int mode;
    if (!PyArg_ParseTuple(args, "OninO:cells", &records, &max_bytes, &mode, &first, &columns_arg))
        return NULL;
    if (mode < TIME_ISO || mode > TIME_BOTH || max_bytes < 1) {
        PyErr_SetString(PyExc_ValueError, "cells: time_mode is 0, 1 or 2 and max_bytes at least 1");
        return NULL;
    }
    PyObject *seq = NULL, *cols = NULL, *blank = NULL, *empty = NULL, *result = NULL;
    PyObject *last_time = NULL, *last_stamp = NULL; /* the previous time cell and its timestamp */
    Buf hb = BUF_INIT;
    seq = PySequence_Fast(records, "cells takes a sequence of records");
    cols = seq == NULL ? NULL : PySequence_Fast(columns_arg, "cells takes a sequence of columns");
    if (cols == NULL)
        goto done;
    if (PySequence_Fast_GET_SIZE(cols) < 5) {
        PyErr_SetString(PyExc_ValueError, "cells: five columns at least");
        goto done;
    }
    PyObject *col[5];
    for (int i = 0; i < 5; i++) {
        col[i] = PySequence_Fast_GET_ITEM(cols, i);
        if (!PyList_Check(col[i])) {
            PyErr_SetString(PyExc_TypeError, "cells: each column is a list");
            goto done;
        }
    }
    blank = PyList_New(0);
    empty = PyUnicode_New(0, 0);
    if (blank == NULL || empty == NULL)
        goto done;
    Py_ssize_t widths[5] = {0, 0, 0, 0, 0};
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *r = PySequence_Fast_GET_ITEM(seq, i);
        Py_ssize_t row = first + i;
        if (!Py_IS_TYPE(r, (PyTypeObject *)model.record_type)) {
            PyErr_Format(PyExc_TypeError, "cells: a Record, not %.100s", Py_TYPE(r)->tp_name);
            goto done;
        }
        PyObject *offset = RECORD_SLOT(r, R_OFFSET), *stamp = RECORD_SLOT(r, R_TIMESTAMP);
        PyObject *key = RECORD_SLOT(r, R_KEY), *value = RECORD_SLOT(r, R_VALUE);
        PyObject *headers = RECORD_SLOT(r, R_HEADERS);
        if (!offset || !stamp || !key || !value || !headers) {
            PyErr_SetString(PyExc_AttributeError, "cells: a Record with a field unset");
            goto done;
        }
        /* offset: str(r.offset) */
        PyObject *cell;
        int overflow = 0;
        long long off = PyLong_Check(offset) ? PyLong_AsLongLongAndOverflow(offset, &overflow) : 0;
        if (PyLong_Check(offset) && !overflow && !(off == -1 && PyErr_Occurred())) {
            char digits[24];
            char *p = decimal(digits + sizeof digits, off);
            cell = ascii_str(p, digits + sizeof digits - p);
        }
        else {
            PyErr_Clear();
            cell = PyObject_Str(offset);
        }
        if (cell == NULL || append_cell(col[COL_OFFSET], cell, blank, row, COL_OFFSET, empty, widths) < 0)
            goto done;
        /* time: neighbouring records often share a timestamp, and then a cell */
        if (last_time != NULL && PyLong_CheckExact(stamp) && PyLong_CheckExact(last_stamp) &&
            PyObject_RichCompareBool(stamp, last_stamp, Py_EQ) == 1) {
            cell = Py_NewRef(last_time);
        }
        else {
            cell = time_cell(stamp, mode);
            Py_CLEAR(last_time);
            last_time = Py_XNewRef(cell);
            last_stamp = stamp;
        }
        if (append_cell(col[COL_TIME], cell, blank, row, COL_TIME, empty, widths) < 0)
            goto done;
        /* key and value */
        cell = key == Py_None ? NULL : data_cell(key, max_bytes);
        if (append_cell(col[COL_KEY], cell, blank, row, COL_KEY, empty, widths) < 0)
            goto done;
        cell = value == Py_None ? NULL : data_cell(value, max_bytes);
        if (append_cell(col[COL_VALUE], cell, blank, row, COL_VALUE, empty, widths) < 0)
            goto done;
        /* headers */
        if (!PyTuple_Check(headers)) {
            cell = NULL;
        }
        else if (PyTuple_GET_SIZE(headers) == 0) {
            cell = Py_NewRef(empty);
        }
        else {
            hb.len = 0;
            int plain = headers_cell(&hb, headers, max_bytes);
            if (plain < 0)
                goto done;
            cell = plain ? ascii_str(hb.data, hb.len) : NULL;
            if (plain && cell == NULL)
                goto done;
        }
        if (append_cell(col[COL_HEADERS], cell, blank, row, COL_HEADERS, empty, widths) < 0)
            goto done;
    }
    result = Py_BuildValue("(O[nnnnn])", blank, widths[0], widths[1], widths[2], widths[3], widths[4]);
done:
    buf_free(&hb);
    Py_XDECREF(last_time);
    Py_XDECREF(seq);
    Py_XDECREF(cols);
    Py_XDECREF(blank);
    Py_XDECREF(empty);
    return result;
}

/* ---- lines -------------------------------------------------------------------------------------- */

#define BAR "\xe2\x94\x82" /* U+2502, rich.box.HEAVY_HEAD's mid_vertical */

typedef struct {
    Py_ssize_t row;
    PyObject *text; /* borrowed */
} Placed;

static int
by_row(const void *a, const void *b)
{
    Py_ssize_t x = ((const Placed *)a)->row, y = ((const Placed *)b)->row;
    return (x > y) - (x < y);
}

/* The code point c (not a surrogate) in UTF-8 at out: where it ends. */
static inline unsigned char *
put_utf8(unsigned char *out, Py_UCS4 c)
{
    if (c < 0x80)
        *out++ = (unsigned char)c;
    else if (c < 0x800) {
        *out++ = (unsigned char)(0xC0 | (c >> 6));
        *out++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    else if (c < 0x10000) {
        *out++ = (unsigned char)(0xE0 | (c >> 12));
        *out++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *out++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    else {
        *out++ = (unsigned char)(0xF0 | (c >> 18));
        *out++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        *out++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *out++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    return out;
}

#define SURROGATE(c) ((c) >= 0xD800 && (c) <= 0xDFFF)

/* A str as UTF-8, encoded straight into b (PyUnicode_AsUTF8AndSize would keep a copy in every cell
 * cut with an ellipsis); a lone surrogate takes Python's encoder, which raises as the pure twin does. */
static int
put_str(Buf *b, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "lines: a line or a cell is a str");
        return -1;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text))
        return buf_put(b, (const char *)PyUnicode_DATA(text), n);
    if (n > PY_SSIZE_T_MAX / 4 || buf_reserve(b, 4 * n) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    unsigned char *out = (unsigned char *)b->data + b->len;
    if (kind == PyUnicode_2BYTE_KIND) {
        /* The common case: ASCII cut with an ellipsis, or box-drawing lines. */
        const Py_UCS2 *u = (const Py_UCS2 *)data;
        Py_ssize_t i = 0;
        for (; i < n && !SURROGATE(u[i]); i++)
            out = put_utf8(out, u[i]);
        if (i == n) {
            b->len = (Py_ssize_t)(out - (unsigned char *)b->data);
            return 0;
        }
        out = (unsigned char *)b->data + b->len; /* a surrogate: start again, the slow way */
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (SURROGATE(c)) {
            Py_ssize_t len; /* b->len is still where this text starts */
            const char *utf8 = PyUnicode_AsUTF8AndSize(text, &len);
            return utf8 == NULL ? -1 : buf_put(b, utf8, len);
        }
        out = put_utf8(out, c);
    }
    b->len = (Py_ssize_t)(out - (unsigned char *)b->data);
    return 0;
}

PyObject *
lines(PyObject *self, PyObject *args)
{
    PyObject *columns_arg, *widths_arg, *drawn, *sections_arg;
    if (!PyArg_ParseTuple(args, "OOO!O:lines", &columns_arg, &widths_arg, &PyDict_Type, &drawn, &sections_arg))
        return NULL;
    PyObject *cols = NULL, *widths_seq = NULL, *sections = NULL, *result = NULL;
    PyObject **column = NULL;
    Py_ssize_t *width = NULL;
    Placed *placed = NULL;
    Buf b = BUF_INIT;
    cols = PySequence_Fast(columns_arg, "lines takes a sequence of columns");
    widths_seq = cols == NULL ? NULL : PySequence_Fast(widths_arg, "lines takes a sequence of widths");
    sections = widths_seq == NULL ? NULL : PySequence_Fast(sections_arg, "lines takes a sequence of sections");
    if (sections == NULL)
        goto done;
    Py_ssize_t ncols = PySequence_Fast_GET_SIZE(cols);
    if (ncols != PySequence_Fast_GET_SIZE(widths_seq) || ncols == 0) {
        PyErr_SetString(PyExc_ValueError, "lines: one width per column, one column at least");
        goto done;
    }
    column = PyMem_Calloc((size_t)ncols, sizeof *column);
    width = PyMem_Calloc((size_t)ncols, sizeof *width);
    if (column == NULL || width == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t nrows = -1;
    for (Py_ssize_t c = 0; c < ncols; c++) {
        column[c] = PySequence_Fast(PySequence_Fast_GET_ITEM(cols, c), "lines: a column is a sequence");
        if (column[c] == NULL)
            goto done;
        width[c] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(widths_seq, c));
        if (width[c] == -1 && PyErr_Occurred())
            goto done;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(column[c]);
        if (nrows >= 0 && n != nrows) {
            PyErr_SetString(PyExc_ValueError, "lines: columns of different lengths");
            goto done;
        }
        nrows = n;
    }
    /* The rows drawn by the caller, in row order. */
    Py_ssize_t ndrawn = PyDict_GET_SIZE(drawn), k = 0, pos = 0;
    placed = PyMem_Calloc((size_t)ndrawn + 1, sizeof *placed);
    if (placed == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *dk, *dv;
    while (PyDict_Next(drawn, &pos, &dk, &dv)) {
        Py_ssize_t row = PyLong_AsSsize_t(dk);
        if (row == -1 && PyErr_Occurred())
            goto done;
        if (row < 0 || row >= nrows) {
            PyErr_SetString(PyExc_IndexError, "lines: a drawn row out of range");
            goto done;
        }
        placed[k].row = row;
        placed[k++].text = dv;
    }
    qsort(placed, (size_t)ndrawn, sizeof *placed, by_row);
    Py_ssize_t nsections = PySequence_Fast_GET_SIZE(sections), s = 0, d = 0;
    for (Py_ssize_t row = 0; row <= nrows; row++) {
        while (s < nsections) {
            PyObject *item = PySequence_Fast_GET_ITEM(sections, s);
            if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
                PyErr_SetString(PyExc_TypeError, "lines: a section is (row, text)");
                goto done;
            }
            Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0));
            if (at == -1 && PyErr_Occurred())
                goto done;
            if (at < 0) {
                PyErr_SetString(PyExc_ValueError, "lines: a section before the first row");
                goto done;
            }
            if (at > row && row < nrows)
                break;
            if (put_str(&b, PyTuple_GET_ITEM(item, 1)) < 0)
                goto done;
            s++;
        }
        if (row == nrows)
            break;
        if (d < ndrawn && placed[d].row == row) {
            if (put_str(&b, placed[d].text) < 0)
                goto done;
            d++;
            continue;
        }
        for (Py_ssize_t c = 0; c < ncols; c++) {
            PyObject *cell = PySequence_Fast_GET_ITEM(column[c], row);
            if (!PyUnicode_Check(cell)) {
                PyErr_SetString(PyExc_TypeError, "lines: a cell is a str");
                goto done;
            }
            Py_ssize_t pad = width[c] - PyUnicode_GET_LENGTH(cell);
            if (c == 0) {
                if (PUT_LIT(&b, BAR " ") < 0 || buf_spaces(&b, pad) < 0 || put_str(&b, cell) < 0)
                    goto done;
            }
            else if (PUT_LIT(&b, " " BAR " ") < 0 || put_str(&b, cell) < 0 || buf_spaces(&b, pad) < 0)
                goto done;
        }
        if (PUT_LIT(&b, " " BAR "\n") < 0)
            goto done;
    }
    result = buf_finish(&b);
done:
    buf_free(&b);
    PyMem_Free(placed);
    if (column != NULL) {
        for (Py_ssize_t c = 0; c < ncols; c++)
            Py_XDECREF(column[c]);
    }
    PyMem_Free(column);
    PyMem_Free(width);
    Py_XDECREF(cols);
    Py_XDECREF(widths_seq);
    Py_XDECREF(sections);
    return result;
}

/* ---- messages ----------------------------------------------------------------------------------- */

PyObject *
messages(PyObject *self, PyObject *args)
{
    PyObject *batches;
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "Onn:messages", &batches, &start, &stop))
        return NULL;
    PyObject *seq = PySequence_Fast(batches, "messages takes a sequence of batches");
    if (seq == NULL)
        return NULL;
    PyObject *records = NULL, *invalid = NULL, *result = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (start < 0 || start >= n) {
        PyErr_SetString(PyExc_IndexError, "messages: start out of range");
        goto done;
    }
    if (stop > n)
        stop = n;
    records = PyList_New(0);
    invalid = PyList_New(0);
    if (records == NULL || invalid == NULL)
        goto done;
    PyObject *magic = NULL, *compression = NULL, *kind = NULL;
    Py_ssize_t i;
    for (i = start; i < stop; i++) {
        PyObject *b = PySequence_Fast_GET_ITEM(seq, i);
        if (!Py_IS_TYPE(b, (PyTypeObject *)model.batch_type)) {
            PyErr_Format(PyExc_TypeError, "messages: a Batch, not %.100s", Py_TYPE(b)->tp_name);
            goto done;
        }
        PyObject *m = BATCH_ITEM(b, B_MAGIC), *c = BATCH_ITEM(b, B_COMPRESSION), *t = BATCH_ITEM(b, B_TIMESTAMP_TYPE);
        if (i == start) {
            magic = m;
            compression = c;
            kind = t;
        }
        else {
            int same = PyObject_RichCompareBool(m, magic, Py_EQ);
            if (same < 0)
                goto done;
            if (!same || c != compression || t != kind)
                break;
        }
        PyObject *got = BATCH_ITEM(b, B_RECORDS);
        if (got == Py_None || PyObject_Length(got) != 1) {
            if (PyErr_Occurred())
                goto done;
            break;
        }
        int valid = PyObject_IsTrue(BATCH_ITEM(b, B_CRC_VALID));
        if (valid < 0)
            goto done;
        if ((!valid && append_new(invalid, PyLong_FromSsize_t(i - start)) < 0) ||
            append_new(records, PySequence_GetItem(got, 0)) < 0)
            goto done;
    }
    result = Py_BuildValue("(OOn)", records, invalid, start + PyList_GET_SIZE(records));
done:
    Py_DECREF(seq);
    Py_XDECREF(records);
    Py_XDECREF(invalid);
    return result;
}

int
tablefast_init(PyObject *m)
{
    return model_init();
}
