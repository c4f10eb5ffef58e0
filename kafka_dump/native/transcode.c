/*
 * The compiled twin of transcode.py: kdump convert's fast path, a run of v1 wrappers per call.
 * read_wrappers gives each sound v1 CreateTime wrapper's inner messages (from the decompress function
 * it is given) and v2 records (from the transcode function); write_wrappers makes each a v2 entry and
 * checks it where it lies (header read back, CRC-32C again, body decompressed and compared with the
 * inner messages, offsets growing). The heavy work is the functions'; this saves the Python between
 * them. gunzip is the default decompress function's faster gzip inflate (zlib, declining whatever
 * codecs would read otherwise); lz4_frame and unlz4_frame are Kafka's LZ4 frame.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buf.h"
#include "_gzip.h"
#include "_layout.h"
#include "_wire.h"

#define SMALLEST (LOG_OVERHEAD + LEGACY_V1_MIN_SIZE) /* a v1 wrapper's header, up to its value */
#define KEY_AT (LEGACY_V1_TIMESTAMP_OFFSET + 8)     /* the key's length, after the timestamp */

static PyObject *CorruptRecordError;

/* fn(codec, memoryview of p[0:n]): bytes; NULL with *refused set (no exception) when fn raised
 * CorruptRecordError, NULL with the exception set for anything else. */
static PyObject *
call_codec_fn(PyObject *fn, int codec, const unsigned char *p, Py_ssize_t n, int *refused)
{
    return bytes_result(call_on_view(fn, codec, p, n), "a codec function", CorruptRecordError, refused);
}

PyObject *
read_wrappers(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end, file_pos, entry_limit, max_records, run_limit;
    PyObject *decompress, *transcode;
    if (!PyArg_ParseTuple(args, "y*nnnnnnOO", &view, &pos, &end, &file_pos, &entry_limit, &max_records,
                          &run_limit, &decompress, &transcode) ||
        view_window(&view, pos, end) < 0)
        return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t start = pos, want = 0;
    int run_codec = -1;
    PyObject *items = PyList_New(0);
    if (items == NULL)
        goto error;
    while (pos < end && pos - start < run_limit) {
        const unsigned char *p = buf + pos;
        if (end - pos < SMALLEST) {
            want = pos + SMALLEST;
            break;
        }
        int64_t offset = be64(p);
        int32_t length = be32(p + LOG_ENTRY_SIZE_OFFSET);
        int64_t entry = (int64_t)LOG_OVERHEAD + length;
        int attributes = p[LEGACY_ATTRIBUTES_OFFSET], codec = attributes & COMPRESSION_MASK;
        if (p[LEGACY_MAGIC_OFFSET] != 1 || length < LEGACY_V1_MIN_SIZE || entry > entry_limit)
            break;
        if ((attributes & ~COMPRESSION_MASK) || codec < 1 || codec > 3 || (run_codec >= 0 && codec != run_codec))
            break; /* LogAppendTime, bits the fast path does not vouch for, zstd, or another codec's run */
        int32_t key_len = be32(p + KEY_AT), value_len = be32(p + KEY_AT + 4);
        if (key_len != -1 || value_len < 0 || (int64_t)SMALLEST + value_len != entry)
            break;
        if (entry > end - pos) {
            want = pos + (Py_ssize_t)entry;
            break;
        }
        if ((uint32_t)be32(p + LEGACY_CRC_OFFSET) !=
            crc32_ieee(p + LEGACY_MAGIC_OFFSET, (Py_ssize_t)entry - LEGACY_MAGIC_OFFSET))
            break;
        int refused;
        PyObject *inner = call_codec_fn(decompress, codec, p + SMALLEST, value_len, &refused);
        if (inner == NULL) {
            if (refused)
                break;
            goto error;
        }
        PyObject *item = NULL,
                 *found = PyObject_CallFunction(transcode, "OLn", inner, (long long)offset, max_records);
        if (found == Py_None) {
            Py_DECREF(inner);
            Py_DECREF(found);
            break;
        }
        if (found != NULL && (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != 6))
            PyErr_SetString(PyExc_TypeError, "transcode must return a 6-tuple or None");
        else if (found != NULL) { /* (position, size, wrapper offset, inner messages) and transcode's six */
            PyObject *head = Py_BuildValue("(nLLO)", file_pos + pos, (long long)entry, (long long)offset,
                                           inner);
            item = head == NULL ? NULL : PySequence_Concat(head, found);
            Py_XDECREF(head);
        }
        Py_DECREF(inner);
        Py_XDECREF(found);
        if (append_new(items, item) < 0)
            goto error;
        run_codec = codec;
        pos += (Py_ssize_t)entry;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("nniN", pos - start, want, run_codec < 0 ? 0 : run_codec, items);
error:
    PyBuffer_Release(&view);
    Py_XDECREF(items);
    return NULL;
}

/* ---- gzip ---------------------------------------------------------------------------------- */

#define GUNZIP_FIRST (8 << 20) /* codecs._GUNZIP_STEP: the most allocated before the output proves larger */

/* The first output size to try: ISIZE, when nothing trails the member and it is a size deflate can
 * reach from n bytes; else a modest start that grows. At most limit + 1 (room to see it passed). */
static Py_ssize_t
first_cap(const unsigned char *p, Py_ssize_t n, Py_ssize_t limit, int whole)
{
    Py_ssize_t guess = (Py_ssize_t)le32(p + n - 4), most = n > PY_SSIZE_T_MAX / DEFLATE_MAX_RATIO ? PY_SSIZE_T_MAX : n * DEFLATE_MAX_RATIO;
    Py_ssize_t cap = guess < 64 || guess > most ? 64 * 1024 : guess;
    if (!whole && cap > GUNZIP_FIRST)
        cap = GUNZIP_FIRST;
    return cap > limit ? limit + 1 : cap + 1;
}

/* The member inflated into *out (a new bytes object), its input bytes in *used; 0, or 1 to decline,
 * 2 when zlib gave limit + 1 bytes without fault (codecs would refuse it too: no second pass over a
 * bomb), or -1 with an exception set. zlib's own check of the trailer is replaced by _wire.h's CRC-32. */
int
zlib_gunzip(const unsigned char *p, Py_ssize_t n, Py_ssize_t limit, PyObject **out, Py_ssize_t *used)
{
    z_stream z;
    if (!gzip_open(&z))
        return 1;
    Py_ssize_t cap = first_cap(p, n, limit, 0);
    PyObject *o = PyBytes_FromStringAndSize(NULL, cap);
    if (o == NULL) {
        inflateEnd(&z);
        return -1;
    }
    z.next_in = (unsigned char *)p;
    z.avail_in = (uInt)n;
    int rc;
    for (;;) {
        z.next_out = (unsigned char *)PyBytes_AS_STRING(o) + z.total_out;
        z.avail_out = (uInt)(cap - (Py_ssize_t)z.total_out);
        Py_BEGIN_ALLOW_THREADS
        rc = inflate(&z, Z_NO_FLUSH);
        Py_END_ALLOW_THREADS
        if (rc == Z_STREAM_END)
            break;
        if (rc == Z_OK && z.avail_out == 0 && cap > limit && z.avail_in > 0) {
            /* Stopped for room with input left, so not in the trailer, where zlib alone checks. */
            inflateEnd(&z);
            Py_DECREF(o);
            return 2; /* past the limit */
        }
        if ((rc != Z_OK && rc != Z_BUF_ERROR) || z.avail_out != 0 || cap > limit)
            goto decline; /* bad data, or cut short */
        cap = cap > PY_SSIZE_T_MAX / 2 || cap * 2 > limit ? limit + 1 : cap * 2;
        if (_PyBytes_Resize(&o, cap) < 0) {
            inflateEnd(&z);
            return -1;
        }
    }
    Py_ssize_t total = (Py_ssize_t)z.total_out, in_used = n - (Py_ssize_t)z.avail_in;
    int sound;
    Py_BEGIN_ALLOW_THREADS
    sound = gzip_trailer_ok(p, in_used, (const unsigned char *)PyBytes_AS_STRING(o), total);
    Py_END_ALLOW_THREADS
    if (!sound)
        goto decline; /* zlib would say: incorrect data check, or incorrect length check */
    inflateEnd(&z);
    if (total > limit) {
        /* Ended at limit + 1 bytes: zlib checked the trailer in the call that filled codecs' buffer. */
        Py_DECREF(o);
        return 2;
    }
    if (_PyBytes_Resize(&o, total) < 0)
        return -1;
    *out = o;
    *used = in_used;
    return 0;
decline:
    inflateEnd(&z);
    Py_DECREF(o);
    return 1;
}

/* A gzip payload inflated as codecs._gunzip inflates it; False when its first member alone passes
 * the limit (codecs then refuses it without inflating it again); None when it cannot vouch for the
 * answer (another member follows, a header CRC, any error), which the caller then asks of
 * codecs.decompress. The GIL is released while inflating. */
PyObject *
gunzip(PyObject *self, PyObject *args)
{
    Py_buffer in;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*n", &in, &limit))
        return NULL;
    const unsigned char *p = (const unsigned char *)in.buf;
    Py_ssize_t n = in.len, used = 0;
    PyObject *out = NULL;
    int rc = 1;
    if (limit >= 0 && gzip_plain_header(p, n))
        rc = zlib_gunzip(p, n, limit, &out, &used);
    if (rc == 0 && gzip_more(p, n, used))
        rc = 1; /* a further member: codecs reads it */
    PyBuffer_Release(&in);
    if (rc < 0)
        return NULL;
    if (rc == 0)
        return out;
    Py_XDECREF(out);
    if (rc == 2)
        Py_RETURN_FALSE;
    Py_RETURN_NONE;
}

/* ---- Kafka's LZ4 frame ------------------------------------------------------------------------ */

#define LZ4_BLOCK (64 * 1024)  /* codecs._LZ4_BLOCK: Lz4BlockOutputStream's 64 KiB blocks */
#define LZ4_HEADER 7           /* magic, FLG, BD, header checksum: the frame codecs writes */
#define LZ4_RAW 0x80000000u    /* a block stored as it is */

static PyObject *lz4_compress, *lz4_decompress, *kw_store_size, *kw_size;

/* lz4.block's compress and decompress, looked up on first use; 0, or -1 with an exception set. */
static int
lz4_ready(void)
{
    if (lz4_decompress != NULL)
        return 0;
    PyObject *mod = PyImport_ImportModule("lz4.block");
    lz4_compress = mod == NULL ? NULL : PyObject_GetAttrString(mod, "compress");
    lz4_decompress = lz4_compress ? PyObject_GetAttrString(mod, "decompress") : NULL;
    Py_XDECREF(mod);
    kw_store_size = lz4_decompress ? Py_BuildValue("{s:O}", "store_size", Py_False) : NULL;
    kw_size = kw_store_size ? Py_BuildValue("{s:i}", "uncompressed_size", LZ4_BLOCK) : NULL;
    if (lz4_decompress == NULL || kw_store_size == NULL || kw_size == NULL) {
        Py_CLEAR(lz4_compress);
        Py_CLEAR(lz4_decompress);
        return -1;
    }
    return 0;
}

static void
put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* lz4_frame(header, data): codecs._lz4_kafka(data, None, magic) for the magic whose frame header
 * is given: independent 64 KiB blocks of lz4's fast compressor, each stored raw when it does not
 * shrink, then an end mark. */
PyObject *
lz4_frame(PyObject *self, PyObject *args)
{
    Py_buffer head, data;
    if (!PyArg_ParseTuple(args, "y*y*", &head, &data))
        return NULL;
    PyObject *out = NULL;
    Buf b = BUF_INIT;
    if (head.len != LZ4_HEADER) {
        PyErr_SetString(PyExc_ValueError, "an LZ4 frame header is 7 bytes here");
        goto done;
    }
    if (lz4_ready() < 0)
        goto done;
    const unsigned char *p = (const unsigned char *)data.buf;
    Py_ssize_t n = data.len;
    /* Room for the worst case (lz4's bound for every block), so that the bytes are never moved. */
    Py_ssize_t blocks = n / LZ4_BLOCK + 1;
    if (buf_reserve(&b, LZ4_HEADER + n + n / 255 + blocks * (16 + 4) + 4) < 0)
        goto done;
    memcpy((unsigned char *)b.data, head.buf, LZ4_HEADER);
    b.len = LZ4_HEADER;
    for (Py_ssize_t at = 0; at < n; at += LZ4_BLOCK) {
        Py_ssize_t len = n - at < LZ4_BLOCK ? n - at : LZ4_BLOCK;
        PyObject *view = PyMemoryView_FromMemory((char *)p + at, len, PyBUF_READ);
        if (view == NULL)
            goto done;
        PyObject *argv[] = {view};
        PyObject *block = PyObject_VectorcallDict(lz4_compress, argv, 1, kw_store_size);
        Py_DECREF(view);
        if ((block = bytes_result(block, "lz4.block.compress", NULL, NULL)) == NULL)
            goto done;
        Py_ssize_t got = PyBytes_GET_SIZE(block);
        int raw = got >= len;
        if (buf_reserve(&b, 4 + (raw ? len : got) + 4) < 0) {
            Py_DECREF(block);
            goto done;
        }
        put_le32((unsigned char *)b.data + b.len, raw ? (uint32_t)len | LZ4_RAW : (uint32_t)got);
        memcpy((unsigned char *)b.data + b.len + 4, raw ? p + at : (const unsigned char *)PyBytes_AS_STRING(block), (size_t)(raw ? len : got));
        b.len += 4 + (raw ? len : got);
        Py_DECREF(block);
    }
    if (buf_reserve(&b, 4) < 0)
        goto done;
    put_le32((unsigned char *)b.data + b.len, 0);
    b.len += 4;
    out = buf_finish(&b);
done:
    buf_free(&b);
    PyBuffer_Release(&head);
    PyBuffer_Release(&data);
    return out;
}

/* unlz4_frame(header, payload, limit): the frame of one compressed block behind that header, as
 * codecs._unlz4 reads it; None for any other frame, or a block that does not decompress (the caller
 * then asks codecs, which reads it, or says why not). */
PyObject *
unlz4_frame(PyObject *self, PyObject *args)
{
    Py_buffer head, data;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*y*n", &head, &data, &limit))
        return NULL;
    const unsigned char *p = (const unsigned char *)data.buf;
    Py_ssize_t n = data.len;
    PyObject *out = NULL;
    if (head.len == LZ4_HEADER && n > LZ4_HEADER + 8 && limit >= LZ4_BLOCK &&
        memcmp(p, head.buf, LZ4_HEADER) == 0 && le32(p + n - 4) == 0) {
        uint32_t word = le32(p + LZ4_HEADER);
        if (word > 0 && word <= LZ4_BLOCK && (Py_ssize_t)word == n - LZ4_HEADER - 8) {
            if (lz4_ready() < 0)
                goto done;
            PyObject *view = PyMemoryView_FromMemory((char *)p + LZ4_HEADER + 4, word, PyBUF_READ);
            if (view == NULL)
                goto done;
            PyObject *argv[] = {view};
            out = PyObject_VectorcallDict(lz4_decompress, argv, 1, kw_size);
            Py_DECREF(view);
            if (out == NULL && PyErr_ExceptionMatches(PyExc_Exception))
                PyErr_Clear(); /* codecs reads it again, and says why */
            else if (out != NULL && !PyBytes_Check(out))
                Py_CLEAR(out);
            if (out == NULL && PyErr_Occurred())
                goto done;
        }
    }
    if (out == NULL)
        out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&head);
    PyBuffer_Release(&data);
    return out;
}

static void
put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xFF);
        v >>= 8;
    }
}

static int
as_i64(PyObject *o, int64_t *v)
{
    long long x = PyLong_AsLongLong(o);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *v = (int64_t)x;
    return 0;
}

/* crc32c(memoryview of p[0:n]) as an unsigned 32-bit value, or -1 with an exception set. */
static int64_t
call_crc(PyObject *fn, const unsigned char *p, Py_ssize_t n)
{
    PyObject *r = call_on_view(fn, -1, p, n);
    if (r == NULL)
        return -1;
    unsigned long v = PyLong_AsUnsignedLong(r);
    Py_DECREF(r);
    if (v == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    return (int64_t)(v & 0xFFFFFFFFu);
}

/* The header fields an entry was meant to have, in V2_HEADER's order (the CRC at index 4). */
#define NFIELDS 13
static const int field_at[NFIELDS] = {
    V2_BASE_OFFSET_OFFSET,   V2_BATCH_LENGTH_OFFSET,   V2_PARTITION_LEADER_EPOCH_OFFSET,
    V2_MAGIC_OFFSET,         V2_CRC_OFFSET,            V2_ATTRIBUTES_OFFSET,
    V2_LAST_OFFSET_DELTA_OFFSET, V2_BASE_TIMESTAMP_OFFSET, V2_MAX_TIMESTAMP_OFFSET,
    V2_PRODUCER_ID_OFFSET,   V2_PRODUCER_EPOCH_OFFSET, V2_BASE_SEQUENCE_OFFSET,
    V2_RECORD_COUNT_OFFSET,
};
static const int field_len[NFIELDS] = {
    V2_BASE_OFFSET_LENGTH,   V2_BATCH_LENGTH_LENGTH,   V2_PARTITION_LEADER_EPOCH_LENGTH,
    V2_MAGIC_LENGTH,         V2_CRC_LENGTH,            V2_ATTRIBUTES_LENGTH,
    V2_LAST_OFFSET_DELTA_LENGTH, V2_BASE_TIMESTAMP_LENGTH, V2_MAX_TIMESTAMP_LENGTH,
    V2_PRODUCER_ID_LENGTH,   V2_PRODUCER_EPOCH_LENGTH, V2_BASE_SEQUENCE_LENGTH,
    V2_RECORD_COUNT_LENGTH,
};

static int64_t
get_field(const unsigned char *p, int i)
{
    int n = field_len[i];
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v = v << 8 | p[field_at[i] + k];
    if (i == 4)
        return (int64_t)v; /* the CRC: unsigned */
    if (n < 8 && (v >> (8 * n - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    return (int64_t)v;
}

/* Why entry i fails its check: a new str in why, then the failure's return (NULL why: an error). */
#define FAIL(...)                                          \
    do {                                                   \
        why = PyUnicode_FromFormat(__VA_ARGS__);           \
        goto failed;                                       \
    } while (0)

PyObject *
write_wrappers(PyObject *self, PyObject *args)
{
    PyObject *items, *compress, *decompress, *crc32c_fn, *same, *last_obj;
    int codec;
    if (!PyArg_ParseTuple(args, "O!iOOOOO", &PyList_Type, &items, &codec, &compress, &decompress, &crc32c_fn,
                          &same, &last_obj))
        return NULL;
    int have_last = last_obj != Py_None;
    int64_t previous = 0;
    if (have_last && as_i64(last_obj, &previous) < 0)
        return NULL;
    Buf out = BUF_INIT;
    PyObject *rows = PyList_New(0), *why = NULL, *body = NULL, *records = NULL, *res = NULL;
    Py_ssize_t n_items = PyList_GET_SIZE(items), i = 0, good = 0;
    if (rows == NULL)
        return NULL;
    for (; i < n_items; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 10) {
            PyErr_SetString(PyExc_TypeError, "items must be read_wrappers' 10-tuples");
            goto error;
        }
        PyObject *inner = PyTuple_GET_ITEM(item, 3), *transcoded = PyTuple_GET_ITEM(item, 4);
        int64_t woff, count, first, last, base_ts, max_ts;
        if (as_i64(PyTuple_GET_ITEM(item, 2), &woff) < 0 || as_i64(PyTuple_GET_ITEM(item, 5), &count) < 0 ||
            as_i64(PyTuple_GET_ITEM(item, 6), &first) < 0 || as_i64(PyTuple_GET_ITEM(item, 7), &last) < 0 ||
            as_i64(PyTuple_GET_ITEM(item, 8), &base_ts) < 0 || as_i64(PyTuple_GET_ITEM(item, 9), &max_ts) < 0)
            goto error;
        if (!PyBytes_Check(transcoded) || !PyBytes_Check(inner)) {
            PyErr_SetString(PyExc_TypeError, "an item's inner messages and records must be bytes");
            goto error;
        }
        if (codec != 0) {
            body = PyObject_CallFunctionObjArgs(compress, transcoded, NULL);
            body = bytes_result(body, "compress", NULL, NULL);
            if (body == NULL)
                goto error;
        } else {
            Py_INCREF(transcoded);
            body = transcoded;
        }
        Py_ssize_t body_len = PyBytes_GET_SIZE(body), size = V2_HEADER_SIZE + body_len;
        if (size - LOG_OVERHEAD > INT32_MAX)
            FAIL("the entry at offset %lld does not fit Kafka's 32-bit batch length", (long long)first);
        if (buf_reserve(&out, size) < 0)
            goto error;
        unsigned char *e = (unsigned char *)out.data + out.len;
        int64_t meant[NFIELDS] = {first, size - LOG_OVERHEAD, -1, 2, 0, codec, last - first, base_ts, max_ts,
                                  -1, -1, -1, count};
        for (int f = 0; f < NFIELDS; f++)
            put_be(e + field_at[f], (uint64_t)meant[f], field_len[f]);
        memcpy(e + V2_HEADER_SIZE, PyBytes_AS_STRING(body), (size_t)body_len);
        Py_CLEAR(body);
        int64_t crc = call_crc(crc32c_fn, e + V2_ATTRIBUTES_OFFSET, size - V2_ATTRIBUTES_OFFSET);
        if (crc < 0)
            goto error;
        put_be(e + V2_CRC_OFFSET, (uint64_t)crc, V2_CRC_LENGTH);

        /* The check: the entry read back where it lies. */
        meant[4] = crc;
        int64_t again = call_crc(crc32c_fn, e + V2_ATTRIBUTES_OFFSET, size - V2_ATTRIBUTES_OFFSET);
        if (again < 0)
            goto error;
        if (get_field(e, 4) != again)
            FAIL("the entry at offset %lld fails its CRC-32C", (long long)first);
        for (int f = 0; f < NFIELDS; f++)
            if (get_field(e, f) != meant[f])
                FAIL("the entry at offset %lld has other batch fields than the input's", (long long)first);
        Py_ssize_t rstart = V2_HEADER_SIZE, rend = size;
        if (codec != 0) {
            int refused;
            records = call_codec_fn(decompress, codec, e + V2_HEADER_SIZE, body_len, &refused);
            if (records == NULL && !refused)
                goto error;
            if (records == NULL)
                FAIL("the entry at offset %lld does not decompress", (long long)first);
            rstart = 0;
            rend = PyBytes_GET_SIZE(records);
        } else {
            records = PyMemoryView_FromMemory((char *)e, size, PyBUF_READ);
            if (records == NULL)
                goto error;
        }
        res = PyObject_CallFunction(same, "OnnLLOL", records, rstart, rend, (long long)first, (long long)base_ts,
                                    inner, (long long)woff);
        Py_CLEAR(records);
        if (res == NULL)
            goto error;
        Py_ssize_t at, same_n;
        long long latest, last_read;
        if (!PyArg_ParseTuple(res, "nnLL", &at, &same_n, &latest, &last_read))
            goto error;
        Py_CLEAR(res);
        if (at >= 0)
            FAIL("the record at index %zd of the entry at offset %lld differs from the input's, or does not "
                 "follow the one before",
                 at, (long long)first);
        if (same_n != count)
            FAIL("the entry at offset %lld holds %zd records, not the %lld its header declares", (long long)first,
                 same_n, (long long)count);
        if (latest > max_ts)
            FAIL("the entry at offset %lld holds a record time past its maxTimestamp %lld", (long long)first,
                 (long long)max_ts);
        if (last_read > last)
            FAIL("the entry at offset %lld holds a record offset past its lastOffset %lld", (long long)first,
                 (long long)last);
        if (last < first)
            FAIL("the entry at offset %lld: lastOffset %lld is below its baseOffset", (long long)first,
                 (long long)last);
        if (have_last && first <= previous)
            FAIL("the entry at offset %lld does not follow the previous entry's last offset %lld",
                 (long long)first, (long long)previous);
        previous = last;
        have_last = 1;
        PyObject *row = Py_BuildValue("nLLLL", size, (long long)first, (long long)last, (long long)max_ts,
                                      (long long)count);
        if (append_new(rows, row) < 0)
            goto error;
        out.len += size;
        good = out.len;
    }
    /* N: Py_BuildValue takes the three, and releases them all if any is NULL */
    return Py_BuildValue("NNNO", buf_finish(&out), rows,
                         have_last ? PyLong_FromLongLong(previous) : Py_NewRef(Py_None), Py_None);
failed:
error: /* why is set only on the way to failed */
    Py_XDECREF(body);
    Py_XDECREF(records);
    Py_XDECREF(res);
    buf_free(&out);
    Py_DECREF(rows);
    if (why == NULL)
        return NULL;
    return Py_BuildValue("y#[]O(nnN)", "", (Py_ssize_t)0, Py_None, i, good, why);
}

int
transcode_init(PyObject *m)
{
    PyObject *errors = PyImport_ImportModule("kafka_dump.errors");
    if (errors == NULL)
        return -1;
    CorruptRecordError = PyObject_GetAttrString(errors, "CorruptRecordError");
    Py_DECREF(errors);
    if (CorruptRecordError == NULL)
        return -1;
    crc32_init();
    return 0;
}
