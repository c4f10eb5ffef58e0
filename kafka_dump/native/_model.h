/*
 * kafka_dump.model's Record, Header and Batch as the compiled twins see them: each field by name, its
 * place (a slot's offset, a NamedTuple's index) read from the class at import, so that a field added,
 * removed or renamed makes model_init fail with ImportError naming it instead of shifting what C reads
 * or writes. Header-only: each extension module keeps its own copy, filled by its own model_init.
 */
#ifndef KDUMP_MODEL_H
#define KDUMP_MODEL_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <structmember.h>

#define FIELD_ID(id, name) id,
#define FIELD_NAME(id, name) name,

/* Record: a frozen, slotted dataclass, built and read through its slots. */
#define RECORD_FIELD_LIST(X)     \
    X(R_OFFSET, "offset")        \
    X(R_TIMESTAMP, "timestamp")  \
    X(R_KEY, "key")              \
    X(R_VALUE, "value")          \
    X(R_HEADERS, "headers")      \
    X(R_SEQUENCE, "sequence")    \
    X(R_SIZE, "sizeInBytes")     \
    X(R_CRC, "crc")              \
    X(R_CRC_VALID, "crcValid")   \
    X(R_CONTROL, "control")      \
    X(R_STORED_TIMESTAMP, "storedTimestamp")
enum RecordField { RECORD_FIELD_LIST(FIELD_ID) RECORD_FIELDS };

/* Header: a frozen, slotted dataclass. */
#define HEADER_FIELD_LIST(X) \
    X(H_KEY, "key")          \
    X(H_VALUE, "value")
enum HeaderField { HEADER_FIELD_LIST(FIELD_ID) HEADER_FIELDS };

/* Batch: a NamedTuple. */
#define BATCH_FIELD_LIST(X)                              \
    X(B_FILE, "file")                                    \
    X(B_POSITION, "position")                            \
    X(B_BASE_OFFSET, "baseOffset")                       \
    X(B_LAST_OFFSET, "lastOffset")                       \
    X(B_MAGIC, "magic")                                  \
    X(B_ATTRIBUTES, "attributes")                        \
    X(B_COMPRESSION, "compression")                      \
    X(B_TIMESTAMP_TYPE, "timestampType")                 \
    X(B_BASE_TIMESTAMP, "baseTimestamp")                 \
    X(B_MAX_TIMESTAMP, "maxTimestamp")                   \
    X(B_PRODUCER_ID, "producerId")                       \
    X(B_PRODUCER_EPOCH, "producerEpoch")                 \
    X(B_BASE_SEQUENCE, "baseSequence")                   \
    X(B_LAST_SEQUENCE, "lastSequence")                   \
    X(B_PARTITION_LEADER_EPOCH, "partitionLeaderEpoch")  \
    X(B_IS_TRANSACTIONAL, "isTransactional")             \
    X(B_IS_CONTROL, "isControl")                         \
    X(B_DELETE_HORIZON_MS, "deleteHorizonMs")            \
    X(B_CRC, "crc")                                      \
    X(B_CRC_VALID, "crcValid")                           \
    X(B_SIZE, "sizeInBytes")                             \
    X(B_RECORD_COUNT, "recordCount")                     \
    X(B_RECORDS, "records")
enum BatchField { BATCH_FIELD_LIST(FIELD_ID) BATCH_FIELDS };

static const char *const record_field_names[RECORD_FIELDS] = {RECORD_FIELD_LIST(FIELD_NAME)};
static const char *const header_field_names[HEADER_FIELDS] = {HEADER_FIELD_LIST(FIELD_NAME)};
static const char *const batch_field_names[BATCH_FIELDS] = {BATCH_FIELD_LIST(FIELD_NAME)};

typedef struct {
    PyObject *record_type, *header_type, *batch_type;
    Py_ssize_t record_offsets[RECORD_FIELDS]; /* each field's slot offset in a Record */
    Py_ssize_t header_offsets[HEADER_FIELDS];
    Py_ssize_t batch_index[BATCH_FIELDS]; /* each field's position in a Batch */
    int record_plain, header_plain; /* slots_only(): new_slotted may allocate them untracked */
    int batch_plain; /* a tuple subclass adding nothing: new_batch may allocate it untracked */
    int record_in_order; /* a Record's slots are its fields in RecordField order, one after another */
    int batch_in_order;  /* a Batch's items are its fields in BatchField order */
} ModelLayout;

static ModelLayout model;

#define RECORD_SLOT(obj, f) (*(PyObject **)((char *)(obj) + model.record_offsets[(f)]))
#define HEADER_SLOT(obj, f) (*(PyObject **)((char *)(obj) + model.header_offsets[(f)]))
#define BATCH_ITEM(batch, f) PyTuple_GET_ITEM((batch), model.batch_index[(f)])

/* The number of names in cls.<attr> (a slotted class's __slots__, a NamedTuple's _fields) must be
 * n: a field C does not know would be left unset or read at the wrong place. */
static inline PyObject *
model_names(PyObject *cls, const char *attr, Py_ssize_t n)
{
    PyObject *names = PyObject_GetAttrString(cls, attr);
    if (names == NULL)
        return NULL;
    PyObject *tuple = PySequence_Tuple(names);
    Py_DECREF(names);
    if (tuple != NULL && PyTuple_GET_SIZE(tuple) != n) {
        PyErr_Format(PyExc_ImportError,
                     "kafka_dump.model.%s has %zd fields %R; the compiled twins know %zd (see _model.h)",
                     ((PyTypeObject *)cls)->tp_name, PyTuple_GET_SIZE(tuple), tuple, n);
        Py_CLEAR(tuple);
    }
    return tuple;
}

/* Where each named field of cls lives: its index in a NamedTuple's _fields or, when slotted, its slot
 * offset in a slotted class, from its member descriptor. */
static inline int
model_places(PyObject *cls, const char *const *names, Py_ssize_t n, Py_ssize_t *places, int slotted)
{
    PyObject *fields = model_names(cls, slotted ? "__slots__" : "_fields", n);
    int rc = fields == NULL ? -1 : 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        PyObject *name = PyUnicode_FromString(names[i]), *descr = NULL;
        if (name == NULL) {
            rc = -1;
            break;
        }
        if (slotted && (descr = PyObject_GetAttr(cls, name)) != NULL) {
            int slot = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
                       ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX;
            places[i] = slot ? ((PyMemberDescrObject *)descr)->d_member->offset : -2; /* -2: not a slot */
            Py_DECREF(descr);
        }
        else {
            places[i] = slotted ? -1 : PySequence_Index(fields, name);
        }
        Py_DECREF(name);
        if (places[i] == -2)
            PyErr_Format(PyExc_ImportError, "kafka_dump.model field %s is not a slot", names[i]);
        else if (places[i] < 0)
            PyErr_Format(PyExc_ImportError, "kafka_dump.model.%s has no field %s",
                         ((PyTypeObject *)cls)->tp_name, names[i]);
        rc = places[i] < 0 ? -1 : 0;
    }
    Py_XDECREF(fields);
    return rc;
}

static inline PyObject *
model_import(const char *module_name, const char *name)
{
    PyObject *mod = PyImport_ImportModule(module_name);
    if (mod == NULL)
        return NULL;
    PyObject *attr = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    return attr;
}

/* True when cls's instances are exactly its n slots after the object header (no __dict__, no
 * __weakref__, nothing else): then new_slotted may allocate one without zeroing or tracking it,
 * since it fills every slot at once. A model class that grows anything else takes tp_alloc. */
static inline int
slots_only(PyObject *cls, Py_ssize_t n)
{
    PyTypeObject *t = (PyTypeObject *)cls;
    return PyType_IS_GC(t) && t->tp_alloc == PyType_GenericAlloc && t->tp_itemsize == 0 &&
           t->tp_dictoffset == 0 && t->tp_weaklistoffset == 0 &&
           t->tp_basicsize == (Py_ssize_t)sizeof(PyObject) + n * (Py_ssize_t)sizeof(PyObject *);
}

/* Call from the module's init function: reads the model's classes and where each field lives. */
static inline int
model_init(void)
{
    model.record_type = model_import("kafka_dump.model", "Record");
    model.header_type = model_import("kafka_dump.model", "Header");
    model.batch_type = model_import("kafka_dump.model", "Batch");
    if (!model.record_type || !model.header_type || !model.batch_type)
        return -1;
    if (model_places(model.record_type, record_field_names, RECORD_FIELDS, model.record_offsets, 1) < 0 ||
        model_places(model.header_type, header_field_names, HEADER_FIELDS, model.header_offsets, 1) < 0 ||
        model_places(model.batch_type, batch_field_names, BATCH_FIELDS, model.batch_index, 0) < 0)
        return -1;
    model.record_plain = slots_only(model.record_type, RECORD_FIELDS);
    model.record_in_order = model.batch_in_order = 1;
    for (int i = 0; i < RECORD_FIELDS; i++)
        if (model.record_offsets[i] != (Py_ssize_t)sizeof(PyObject) + i * (Py_ssize_t)sizeof(PyObject *))
            model.record_in_order = 0;
    for (int i = 0; i < BATCH_FIELDS; i++)
        if (model.batch_index[i] != i)
            model.batch_in_order = 0;
    model.header_plain = slots_only(model.header_type, HEADER_FIELDS);
    PyTypeObject *bt = (PyTypeObject *)model.batch_type;
    model.batch_plain = PyType_IS_GC(bt) && bt->tp_alloc == PyType_GenericAlloc && bt->tp_dictoffset == 0 &&
                        bt->tp_weaklistoffset == 0 && bt->tp_basicsize == PyTuple_Type.tp_basicsize &&
                        bt->tp_itemsize == PyTuple_Type.tp_itemsize;
    return 0;
}

/* Tracked by the cycle collector: only a GC type's instances can be (ints, bytes and None never are).
 * The type test is a flag read, so the common field costs no call. */
static inline int
gc_tracked(PyObject *obj)
{
    return PyType_IS_GC(Py_TYPE(obj)) && PyObject_GC_IsTracked(obj);
}

/* Records, headers and header tuples hold only ints, bytes, None and untracked objects like
 * themselves: they can be in no reference cycle, so the cycle collector need not track them (CPython
 * untracks such tuples itself, but only later, and never class instances). */
static inline void
untrack_if_atomic(PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++)
        if (gc_tracked(PyTuple_GET_ITEM(tuple, i)))
            return;
    if (PyObject_GC_IsTracked(tuple))
        PyObject_GC_UnTrack(tuple);
}

/* Release the n references in vals (any may be NULL). */
static inline void
vals_release(PyObject **vals, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(vals[i]);
}

/* True, with all n of vals released, when any is NULL (an allocation that failed). */
static inline int
vals_failed(PyObject **vals, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (vals[i] == NULL) {
            vals_release(vals, n);
            return 1;
        }
    }
    return 0;
}

/* An instance of a slotted class from n new references (stolen; any may be NULL, and then all are
 * released and NULL is returned), filled as object.__new__ plus the slot setters would (as the pure
 * twin does). An instance whose fields are all atomic is left untracked by the cycle collector. */
static inline PyObject *
new_slotted(PyObject *cls, const Py_ssize_t *offsets, Py_ssize_t n, PyObject **vals, int plain)
{
    int atomic = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (vals[i] == NULL) {
            vals_release(vals, n);
            return NULL;
        }
        if (atomic && gc_tracked(vals[i]))
            atomic = 0;
    }
    PyObject *obj = plain ? PyObject_GC_New(PyObject, (PyTypeObject *)cls)
                          : ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (obj == NULL) {
        vals_release(vals, n);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        *(PyObject **)((char *)obj + offsets[i]) = vals[i];
    if (plain) {
        if (!atomic)
            PyObject_GC_Track(obj);
    }
    else if (atomic && PyObject_GC_IsTracked(obj)) {
        PyObject_GC_UnTrack(obj);
    }
    return obj;
}

/* A Record from RECORD_FIELDS new references, indexed by RecordField (stolen, any may be NULL). */
static inline PyObject *
new_record(PyObject **vals)
{
    return new_slotted(model.record_type, model.record_offsets, RECORD_FIELDS, vals, model.record_plain);
}

/* A Header from its key and value (stolen, either may be NULL). */
static inline PyObject *
new_header(PyObject *key, PyObject *value)
{
    PyObject *vals[HEADER_FIELDS] = {[H_KEY] = key, [H_VALUE] = value};
    return new_slotted(model.header_type, model.header_offsets, HEADER_FIELDS, vals, model.header_plain);
}

/* vals (BATCH_FIELDS references, stolen) placed at their fields' positions in the new batch obj. */
static inline void
batch_fill(PyObject *obj, PyObject **vals)
{
    if (model.batch_in_order)
        memcpy(((PyTupleObject *)obj)->ob_item, vals, BATCH_FIELDS * sizeof(PyObject *));
    else
        for (int i = 0; i < BATCH_FIELDS; i++)
            PyTuple_SET_ITEM(obj, model.batch_index[i], vals[i]);
}

/* A Batch from BATCH_FIELDS new references, indexed by BatchField (stolen, any may be NULL), as
 * tuple.__new__(cls, items) makes it (up to 3.13 its steps inline; from 3.14, which caches a tuple's
 * hash, the call). Returned untracked by the cycle collector: build one only from fields that cannot
 * refer back to it (a file name, ints, bools, None, enum members, an untracked records tuple). */
static inline PyObject *
new_batch(PyObject **vals)
{
    if (vals_failed(vals, BATCH_FIELDS))
        return NULL;
    PyTypeObject *cls = (PyTypeObject *)model.batch_type;
#if PY_VERSION_HEX < 0x030E0000
    /* Allocated untracked where the class allows it (see the note above: the caller's to keep). */
    PyObject *obj = model.batch_plain ? (PyObject *)PyObject_GC_NewVar(PyTupleObject, cls, BATCH_FIELDS)
                                      : cls->tp_alloc(cls, BATCH_FIELDS);
    if (obj != NULL) {
        batch_fill(obj, vals);
        if (PyObject_GC_IsTracked(obj))
            PyObject_GC_UnTrack(obj);
        return obj;
    }
#else
    PyObject *items = PyTuple_New(BATCH_FIELDS);
    if (items != NULL) {
        for (int i = 0; i < BATCH_FIELDS; i++)
            PyTuple_SET_ITEM(items, model.batch_index[i], vals[i]);
        PyObject *args = PyTuple_Pack(1, items);
        Py_DECREF(items);
        if (args == NULL)
            return NULL;
        PyObject *obj = PyTuple_Type.tp_new(cls, args, NULL);
        Py_DECREF(args);
        if (obj != NULL && PyObject_GC_IsTracked(obj))
            PyObject_GC_UnTrack(obj);
        return obj;
    }
#endif
    vals_release(vals, BATCH_FIELDS);
    return NULL;
}

#endif
