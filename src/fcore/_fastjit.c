/* jit's cached call in C: the part of ``Jitted._dispatch`` (src/fcore/api/jit.py) that runs on
 * every call of a jitted function whose arguments are positional fcore arrays on one device.
 *
 * Why C: that path is ~150 bytecodes of Python (~30 machine instructions each), and measured
 * against jax's own C++ dispatch (``PjitFunction``, closed to fcore: see docs/design.md, "jit's
 * cached call") no Python version reaches 1.0x. This file does exactly what the Python fast
 * path does, in the same order, and nothing else:
 *   1. every argument is an ``ArrayImpl`` (exact type) whose ``_device`` is a ``DeviceBuffer``;
 *      collect each one's ``_aval`` and jaxlib array (``_device._array``);
 *   2. read the dispatch state: the current trace and the context's settings snapshot
 *      (``eager_checks().jit_key``), both from their ``ContextVar``s;
 *   3. find the candidate (``Jitted._fast_flat``: (avals, state, run, handlers, wraps, unflatten))
 *      whose avals and state equal the call's, run it, wrap each result as
 *      ``ArrayImpl(None, weak, DeviceBuffer(out, rt_aval), aval)`` does, and unflatten them.
 * Anything else -- keywords, pytrees, NumPy arguments, no candidate, an ``XlaRuntimeError`` --
 * goes to the Python ``Jitted._dispatch``, which handles every call (and is what runs where this
 * extension was not built). The Python class owns all the state; this type only reads it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *fast_flat; /* ``Jitted._fast_flat``: the candidates, most recent first (a list) */
} FastCall;

/* Set once by ``configure``: what every call compares against and builds. */
static PyObject *trace_var;          /* ``CURRENT_TRACE`` */
static PyObject *checks_var;         /* ``config._checks`` */
static PyTypeObject *array_type;     /* ``fcore.interpreters.array.ArrayImpl`` */
static PyTypeObject *buffer_type;    /* ``fcore.backend.runtime.DeviceBuffer`` */
static Py_ssize_t array_np, array_device, array_weak, array_aval; /* slot offsets */
static Py_ssize_t buffer_array, buffer_aval;
static PyObject *str_jit_key, *str_consume, *str_dispatch, *str_failed;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))
#define MAX_FAST_ARGS 32

static PyObject *
slow_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *dispatch = PyObject_GetAttr(self, str_dispatch);
    if (dispatch == NULL)
        return NULL;
    PyObject *result = PyObject_Call(dispatch, args, kwargs);
    Py_DECREF(dispatch);
    return result;
}

/* ``ArrayImpl(None, weak, DeviceBuffer(raw, rt_aval), aval)`` without running ``__init__``
 * (the Python path does the same with ``object.__new__`` and slot assignments). */
static PyObject *
wrap_result(PyObject *raw, PyObject *rt_aval, PyObject *weak, PyObject *aval)
{
    PyObject *buffer = buffer_type->tp_alloc(buffer_type, 0);
    if (buffer == NULL)
        return NULL;
    SLOT(buffer, buffer_array) = Py_NewRef(raw);
    SLOT(buffer, buffer_aval) = Py_NewRef(rt_aval);
    PyObject *out = array_type->tp_alloc(array_type, 0);
    if (out == NULL) {
        Py_DECREF(buffer);
        return NULL;
    }
    SLOT(out, array_np) = Py_NewRef(Py_None);
    SLOT(out, array_device) = buffer; /* the reference tp_alloc gave us */
    SLOT(out, array_weak) = Py_NewRef(weak);
    SLOT(out, array_aval) = Py_NewRef(aval);
    return out;
}

/* The exception being raised, as an object with its traceback; the error indicator cleared. */
static PyObject *
take_error(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL)
        PyException_SetTraceback(value, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return value;
#endif
}

/* ``ArrayImpl(None, weak, DeviceBuffer(raw, rt_aval), aval)`` for each (raw, wrap): a list. */
static PyObject *
wrap_results(PyObject *outs, PyObject *wraps)
{
    if (!PyList_Check(outs) || !PyTuple_Check(wraps) || PyList_GET_SIZE(outs) != PyTuple_GET_SIZE(wraps)) {
        PyErr_SetString(PyExc_SystemError, "fcore._fastjit: a launch returned other results than it declared");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(outs);
    PyObject *results = PyList_New(n);
    if (results == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *wrap = PyTuple_GET_ITEM(wraps, i);
        PyObject *out = NULL;
        if (PyTuple_Check(wrap) && PyTuple_GET_SIZE(wrap) == 3)
            out = wrap_result(PyList_GET_ITEM(outs, i), PyTuple_GET_ITEM(wrap, 0), PyTuple_GET_ITEM(wrap, 1),
                              PyTuple_GET_ITEM(wrap, 2));
        else
            PyErr_SetString(PyExc_SystemError, "fcore._fastjit: a result's wrap is not (rt_aval, weak, aval)");
        if (out == NULL) {
            Py_DECREF(results);
            return NULL;
        }
        PyList_SET_ITEM(results, i, out);
    }
    return results;
}

/* Run ``candidate`` on ``raw`` and return the call's result (``Jitted._dispatch`` does the same). */
static PyObject *
run_candidate(PyObject *candidate, PyObject *raw)
{
    PyObject *run = PyTuple_GET_ITEM(candidate, 2);
    PyObject *handlers = PyTuple_GET_ITEM(candidate, 3);
    PyObject *wraps = PyTuple_GET_ITEM(candidate, 4);
    PyObject *unflatten = PyTuple_GET_ITEM(candidate, 5);
    PyObject *launched = PyObject_CallOneArg(run, raw);
    if (launched == NULL)
        return NULL;
    PyObject *outs = PyObject_CallMethodOneArg(launched, str_consume, handlers);
    Py_DECREF(launched);
    if (outs == NULL)
        return NULL;
    PyObject *out;
    if (unflatten != Py_None) {
        PyObject *results = wrap_results(outs, wraps);
        out = results == NULL ? NULL : PyObject_CallOneArg(unflatten, results);
        Py_XDECREF(results);
    } else if (PyList_Check(outs) && PyList_GET_SIZE(outs) == 1 && PyTuple_Check(wraps) && PyTuple_GET_SIZE(wraps) == 1
               && PyTuple_Check(PyTuple_GET_ITEM(wraps, 0)) && PyTuple_GET_SIZE(PyTuple_GET_ITEM(wraps, 0)) == 3) {
        PyObject *wrap = PyTuple_GET_ITEM(wraps, 0); /* the one result is the call's */
        out = wrap_result(PyList_GET_ITEM(outs, 0), PyTuple_GET_ITEM(wrap, 0), PyTuple_GET_ITEM(wrap, 1),
                          PyTuple_GET_ITEM(wrap, 2));
    } else {
        PyErr_SetString(PyExc_SystemError, "fcore._fastjit: a launch without unflatten has other than one result");
        out = NULL;
    }
    Py_DECREF(outs);
    return out;
}

/* 1 when ``candidate`` (a 6-tuple) was made for these avals in this state, 0 when not, -1 on error. */
static int
matches(PyObject *candidate, PyObject **avals, Py_ssize_t nargs, PyObject *trace, PyObject *jit_key)
{
    if (!PyTuple_Check(candidate) || PyTuple_GET_SIZE(candidate) != 6)
        return 0;
    PyObject *c_avals = PyTuple_GET_ITEM(candidate, 0);
    PyObject *c_state = PyTuple_GET_ITEM(candidate, 1);
    if (!PyList_Check(c_avals) || PyList_GET_SIZE(c_avals) != nargs)
        return 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *a = PyList_GET_ITEM(c_avals, i);
        if (a != avals[i]) { /* avals are interned: equal ones are almost always identical */
            int eq = PyObject_RichCompareBool(a, avals[i], Py_EQ);
            if (eq <= 0)
                return eq;
        }
    }
    if (!PyTuple_Check(c_state) || PyTuple_GET_SIZE(c_state) != 2 || PyTuple_GET_ITEM(c_state, 0) != trace)
        return 0;
    PyObject *c_key = PyTuple_GET_ITEM(c_state, 1);
    return c_key == jit_key ? 1 : PyObject_RichCompareBool(c_key, jit_key, Py_EQ);
}

static PyObject *
fastcall_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *candidates = ((FastCall *)self)->fast_flat;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) || candidates == NULL || !PyList_Check(candidates)
        || PyList_GET_SIZE(candidates) == 0 || nargs > MAX_FAST_ARGS || array_type == NULL)
        return slow_call(self, args, kwargs);

    PyObject *avals[MAX_FAST_ARGS]; /* borrowed from the arguments, which ``args`` holds */
    PyObject *raw = PyList_New(nargs);
    if (raw == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *x = PyTuple_GET_ITEM(args, i);
        if (Py_TYPE(x) != array_type)
            goto slow;
        PyObject *device = SLOT(x, array_device);
        PyObject *aval = SLOT(x, array_aval);
        if (device == NULL || aval == NULL || Py_TYPE(device) != buffer_type)
            goto slow;
        PyObject *array = SLOT(device, buffer_array);
        if (array == NULL)
            goto slow;
        avals[i] = aval;
        PyList_SET_ITEM(raw, i, Py_NewRef(array));
    }

    PyObject *trace, *checks;
    if (PyContextVar_Get(trace_var, NULL, &trace) < 0)
        goto error;
    if (PyContextVar_Get(checks_var, NULL, &checks) < 0) {
        Py_XDECREF(trace);
        goto error;
    }
    if (trace == NULL || checks == NULL) { /* no value and no default: cannot happen in fcore */
        Py_XDECREF(trace);
        Py_XDECREF(checks);
        goto slow;
    }
    PyObject *jit_key = PyObject_GetAttr(checks, str_jit_key);
    Py_DECREF(checks);
    if (jit_key == NULL) {
        Py_DECREF(trace);
        goto error;
    }
    PyObject *found = NULL;
    int failed = 0;
    Py_INCREF(candidates); /* a comparison may run Python code that replaces the list */
    for (Py_ssize_t c = 0; c < PyList_GET_SIZE(candidates); c++) {
        PyObject *candidate = Py_NewRef(PyList_GET_ITEM(candidates, c));
        int m = matches(candidate, avals, nargs, trace, jit_key);
        Py_DECREF(candidate);
        if (m != 0) {
            failed = m < 0;
            found = m > 0 ? Py_NewRef(candidate) : NULL;
            break;
        }
    }
    Py_DECREF(candidates);
    Py_DECREF(trace);
    Py_DECREF(jit_key);
    if (failed)
        goto error;
    if (found == NULL)
        goto slow;
    PyObject *out = run_candidate(found, raw);
    Py_DECREF(found);
    Py_DECREF(raw);
    /* An error is ``Jitted._fast_path_failed``'s to judge (an ``XlaRuntimeError`` for arguments
     * committed to another device runs the call the slow way: XLA checks devices first). */
    if (out == NULL && PyErr_ExceptionMatches(PyExc_Exception)) {
        PyObject *error = take_error();
        out = PyObject_CallMethodObjArgs(self, str_failed, error, args, kwargs != NULL ? kwargs : Py_None, NULL);
        Py_DECREF(error);
    }
    return out;

slow:
    Py_DECREF(raw);
    return slow_call(self, args, kwargs);
error:
    Py_DECREF(raw);
    return NULL;
}

static int
fastcall_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((FastCall *)self)->fast_flat);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
fastcall_clear(PyObject *self)
{
    Py_CLEAR(((FastCall *)self)->fast_flat);
    return 0;
}

static void
fastcall_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    fastcall_clear(self);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyMemberDef fastcall_members[] = {
    {"_fast_flat", T_OBJECT, offsetof(FastCall, fast_flat), 0,
     "the cached call's candidates for positional array arguments (most recent first)"},
    {NULL},
};

static PyType_Slot fastcall_slots[] = {
    {Py_tp_doc, "The C half of jit's cached call: subclassed by ``fcore.api.jit.Jitted``."},
    {Py_tp_call, fastcall_call},
    {Py_tp_traverse, fastcall_traverse},
    {Py_tp_clear, fastcall_clear},
    {Py_tp_dealloc, fastcall_dealloc},
    {Py_tp_members, fastcall_members},
    {0, NULL},
};

static PyType_Spec fastcall_spec = {
    .name = "fcore._fastjit.FastCall",
    .basicsize = sizeof(FastCall),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = fastcall_slots,
};

/* The offset of slot ``name`` of ``type`` (a ``__slots__`` member descriptor), or -1. */
static Py_ssize_t
slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX)
            offset = member->offset;
    }
    Py_DECREF(descr);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "fcore._fastjit: %s.%s is not a __slots__ slot", type->tp_name, name);
    return offset;
}

static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyContextVar_CheckExact(args[0]) || !PyContextVar_CheckExact(args[1]) || !PyType_Check(args[2])
        || !PyType_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "configure(trace_var, checks_var, ArrayImpl, DeviceBuffer)");
        return NULL;
    }
    PyTypeObject *arrays = (PyTypeObject *)args[2], *buffers = (PyTypeObject *)args[3];
    Py_ssize_t offsets[6] = {
        slot_offset(arrays, "_np"), slot_offset(arrays, "_device"), slot_offset(arrays, "_weak"),
        slot_offset(arrays, "_aval"), slot_offset(buffers, "_array"), slot_offset(buffers, "_aval"),
    };
    for (int i = 0; i < 6; i++)
        if (offsets[i] < 0)
            return NULL;
    array_np = offsets[0], array_device = offsets[1], array_weak = offsets[2], array_aval = offsets[3];
    buffer_array = offsets[4], buffer_aval = offsets[5];
    Py_XSETREF(trace_var, Py_NewRef(args[0]));
    Py_XSETREF(checks_var, Py_NewRef(args[1]));
    Py_XSETREF(buffer_type, (PyTypeObject *)Py_NewRef(args[3]));
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(args[2]));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(trace_var, checks_var, ArrayImpl, DeviceBuffer): what the cached call reads and builds."},
    {NULL},
};

static int
module_exec(PyObject *module)
{
    str_jit_key = PyUnicode_InternFromString("jit_key");
    str_consume = PyUnicode_InternFromString("consume_with_handlers");
    str_dispatch = PyUnicode_InternFromString("_dispatch");
    str_failed = PyUnicode_InternFromString("_fast_path_failed");
    if (str_jit_key == NULL || str_consume == NULL || str_dispatch == NULL || str_failed == NULL)
        return -1;
    PyObject *type = PyType_FromModuleAndSpec(module, &fastcall_spec, NULL);
    if (type == NULL)
        return -1;
    int rc = PyModule_AddObjectRef(module, "FastCall", type);
    Py_DECREF(type);
    return rc;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef fastjit_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "fcore._fastjit",
    .m_doc = "jit's cached call in C (see the comment at the top of _fastjit.c).",
    .m_size = 0,
    .m_methods = module_methods,
    .m_slots = module_slots,
};

PyMODINIT_FUNC
PyInit__fastjit(void)
{
    return PyModuleDef_Init(&fastjit_module);
}
