/* kafka_dump.native._native: the one compiled module. Each C file twins one pure module and gives
 * its method table and an init (the Python names, types and constants it needs); this file adds
 * them all to one module. The pure modules bind these functions through kafka_dump/native/__init__.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define EACH_FILE(X) X(speedups) X(walk) X(jsonfast) X(encoder) X(gather) X(recheck) X(transcode) X(ahead) X(tablefast)
#define DECLARE(stem)                      \
    extern PyMethodDef stem##_methods[];   \
    int stem##_init(PyObject *m);
EACH_FILE(DECLARE)

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "kdump's compiled readers and writers (see kafka_dump/native/__init__.py).", -1,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
#define ADD(stem)                                                               \
    if (PyModule_AddFunctions(m, stem##_methods) < 0 || stem##_init(m) < 0) { \
        Py_DECREF(m);                                                           \
        return NULL;                                                            \
    }
    EACH_FILE(ADD)
    return m;
}
