/* kafka_dump.native._native: the one compiled module. Each C file twins one pure module: it gives the
 * functions listed below under its name, and an init (the Python names, types and constants it
 * needs); this file makes them one module. The pure modules bind these functions through
 * kafka_dump/native/__init__.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define EACH_FILE(X) X(speedups) X(walk) X(jsonfast) X(encoder) X(gather) X(recheck) X(transcode) X(ahead) X(tablefast) X(redact)
#define EACH_FUNCTION(X) \
    X(decode_v2_records) X(decode_legacy_inner) X(decode_legacy_wrapper) X(decode_legacy_run) X(crc32_paths) \
    X(walk_v2_records) X(walk_entries) \
    X(batch_json) X(run_json) X(plain_run_json) \
    X(encode_v2_records) X(encode_v2_entry) X(v2_records_size) X(encode_legacy_messages) \
    X(legacy_messages_size) X(v1_inner_to_v2) \
    X(gather_v2_records) X(gather_legacy_inner) X(gather_legacy_wrappers) \
    X(same_v2_records) X(same_as_v1_inner) \
    X(gunzip) X(lz4_frame) X(unlz4_frame) X(read_wrappers) X(write_wrappers) \
    X(compressed_spans) \
    X(cells) X(lines) X(messages) \
    X(redact_v2_records) X(pseudonym_stream)
#define DECLARE_INIT(stem) int stem##_init(PyObject *m);
#define DECLARE_FUNCTION(name) PyObject *name(PyObject *self, PyObject *args);
EACH_FILE(DECLARE_INIT)
EACH_FUNCTION(DECLARE_FUNCTION)

/* A method whose docstring starts with its name (doc: the rest), and one that twins module's function. */
#define FN(name, doc) {#name, name, METH_VARARGS, #name doc}
#define TWIN(name, doc, module) FN(name, doc "; the compiled twin of kafka_dump." module "." #name ".")

static PyMethodDef methods[] = {
    /* decode.c */
    TWIN(decode_v2_records, "(data, pos, end, count, base_offset, base_timestamp, log_append_time, "
                            "base_sequence, last_offset_delta=INT64_MAX)\n-> (records, error or None)", "wire.decode"),
    TWIN(decode_legacy_inner, "(data: bytes, wrapper_magic, wrapper_offset, log_append_time) -> (records, "
                              "error or None)", "wire.decode"),
    TWIN(decode_legacy_wrapper, "(file, buf, pos, end, file_pos, with_records, max_batch_bytes, max_records, "
                                "decompress)\n-> Batch or None", "wire.decode"),
    TWIN(decode_legacy_run, "(file, data, pos, end, file_pos, with_records) -> (batches, bytes used)",
         "wire.decode"),
    {"crc32", crc32_paths, METH_VARARGS,
     "crc32(data, table_only=False) -> zlib.crc32(data), by the path the decoders take (folding with\n"
     "PCLMULQDQ where the CPU has it) or by the tables alone; for the tests."},
    /* walk.c */
    FN(walk_v2_records, "(data, pos, end, count, last_offset_delta, base_timestamp) -> (records, keyBytes, valueBytes, "
                        "headerBytes, nullKeys, nullValues, headers, maxTimestampDelta, error, "
                        "errorPosition)"),
    FN(walk_entries, "(data, pos, end, file_pos, deep, last, after_damage, max_records, entry_limit, crc32c, "
                     "crc32, decompress, rows, file_end=None, max_entries=None) -> (used, batches, records, gaps, last, "
                     "after_damage); data may be a file descriptor, read by pread"),
    /* jsonl.c */
    TWIN(batch_json, "(file_json, batch, records, payload) -> bytes", "render.jsonl"),
    TWIN(run_json, "(file, file_json, batches, payload) -> bytes", "render.jsonl"),
    TWIN(plain_run_json, "(file_json, data, pos, end, file_pos, with_records, payload) -> (bytes, batches, "
                         "bytes used)", "render.jsonl"),
    /* rows.c */
    TWIN(cells, "(records, max_bytes, time_mode, first, columns) -> (blank, widths)", "render.rows"),
    TWIN(lines, "(columns, widths, drawn, sections) -> bytes", "render.rows"),
    TWIN(messages, "(batches, start, stop) -> (records, invalid, stop)", "render.rows"),
    /* encoder.c */
    FN(encode_v2_records, "(records, base_offset, base_timestamp, log_append_time) -> bytes"),
    FN(encode_v2_entry, "(header, records, base_offset, base_timestamp, log_append_time) -> bytes"),
    FN(v2_records_size, "(records, base_offset, base_timestamp, log_append_time) -> int"),
    FN(encode_legacy_messages, "(records, magic, attributes, offset_shift, log_append_time) -> bytes"),
    FN(legacy_messages_size, "(records, magic) -> int"),
    FN(v1_inner_to_v2, "(data, wrapper_offset, max_records) -> (records, count, first_offset, last_offset, "
                       "base_timestamp, max_timestamp) | None"),
    /* gather.c */
    {"gather_v2_records", gather_v2_records, METH_VARARGS,
     "Validate, then add to histograms the records of one v2 batch (see _gather_pure.py)."},
    {"gather_legacy_inner", gather_legacy_inner, METH_VARARGS,
     "Add to histograms the inner messages of a decompressed v0/v1 wrapper, in the plain case (see "
     "_gather_pure.py); None otherwise."},
    {"gather_legacy_wrappers", gather_legacy_wrappers, METH_VARARGS,
     "Count the run of compressed v0/v1 wrappers at pos whose inner messages are the plain case (see "
     "_gather_pure.py)."},
    /* recheck.c */
    FN(same_v2_records, "(data, pos, end, base_offset, base_timestamp, log_append_time, expected) -> int\n"
                        "The index of the first record of data[pos:end] that differs from expected, or -1."),
    FN(same_as_v1_inner, "(data, pos, end, base_offset, base_timestamp, inner, wrapper_offset) -> (int, int, "
                         "int, int)\nThe index of the first v2 record of data[pos:end] that differs from the "
                         "v1 inner messages of a\ndecompressed wrapper, or whose offset is not above the "
                         "previous one's (or -1); the records found\nthe same; the largest record time and "
                         "the last offset among them."),
    /* transcode.c */
    FN(gunzip, "(payload, limit) -> bytes | None: a gzip payload as codecs.decompress\n"
               "inflates it, or None where it cannot vouch for that (then ask codecs.decompress)."),
    FN(lz4_frame, "(header, data) -> bytes: Kafka's LZ4 frame of data at lz4's default level "
                  "(codecs' bytes)."),
    FN(unlz4_frame, "(header, payload, limit) -> bytes | None: a one-block frame with that header, as "
                    "codecs\nreads it; None for any other (then ask codecs)."),
    FN(read_wrappers, "(buf, pos, end, file_pos, entry_limit, max_records, run_limit, decompress, "
                      "transcode)\n-> (used, want, codec, items): the sound v1 CreateTime wrappers of one "
                      "codec at buf[pos:end],\ntaken until run_limit bytes are used."),
    FN(write_wrappers, "(items, codec, compress, decompress, crc32c, same, last_offset)\n"
                       "-> (data, rows, last_offset, failure): read_wrappers' items as checked v2 entries."),
    /* ahead.c */
    FN(compressed_spans, "(data, pos, end) -> list of (codec, start, length): ahead.py's scan (gzip "
                         "wanted),\nas the engine's scan() finds them."),
    /* redact.c */
    TWIN(redact_v2_records, "(secret, data, count, keep_prefix) -> (bytes, counts, kept) | None",
         "analysis.redact_records"),
    FN(pseudonym_stream, "(secret, domain, data, n, portable) -> bytes: Pseudonyms(secret).stream(data, n, "
                         "bytes([domain]))\nby the compiled digests (portable: without the SHA extensions); "
                         "for the tests."),
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "kdump's compiled readers and writers (see kafka_dump/native/__init__.py).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
#define INIT(stem)              \
    if (stem##_init(m) < 0) {   \
        Py_DECREF(m);           \
        return NULL;            \
    }
    EACH_FILE(INIT)
    return m;
}
