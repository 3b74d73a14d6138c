"""mars.tensor: the lazy, chunked NumPy API.

>>> import mars.tensor as mt
>>> a = mt.ones((4, 4), chunk_size=2)
>>> (a * 2).sum().execute().fetch()
np.float64(32.0)
"""

# ruff: noqa: F401 - this module re-exports the public API
from __future__ import annotations

from numpy import (  # noqa: F401 - numpy's dtypes and constants, as numpy users type them
    bool_, complex64, complex128, dtype, e, float16, float32, float64, inf, int8, int16, int32, int64, nan,
    newaxis, pi, uint8, uint16, uint32, uint64,
)
from numpy import (  # noqa: F401 - numpy's scalar types, dtype helpers and index helpers: they need no tensor
    False_, ScalarType, True_, base_repr, binary_repr, byte, bytes_, cdouble, character, clongdouble,
    complexfloating, csingle, datetime64, datetime_data, double, euler_gamma, flexible, floating,
    format_float_positional, format_float_scientific, generic, half, index_exp, inexact, int_, intc, integer,
    intp, little_endian, long, longdouble, longlong, mintypecode, ndindex, number, object_, s_, sctypeDict,
    short, signedinteger, single, str_, timedelta64, typecodes, typename, ubyte, uint, uintc, uintp, ulong,
    ulonglong, unsignedinteger, ushort, void,
)

from . import methods as _methods
from .arithmetic.core import astype, where_ as where
from .base.transpose import transpose
from .core import Tensor
from .datasource.array import array, asarray, tensor
from .datasource.array import asarray as asanyarray  # tensors have no subclasses to keep
from .datasource.core import (
    empty, empty_like, full, full_like, ones, ones_like, zeros, zeros_like,
)
from .rechunk import rechunk
from .reduction.basic import all, any, max, mean, min, prod, sum

# filled in by the operator families below as they land
from .arithmetic.ufuncs import *  # noqa: F401,F403,E402
from .arithmetic.funcs import *  # noqa: F401,F403,E402
from .reduction.stats import *  # noqa: F401,F403,E402
from .reduction.cumulative import *  # noqa: F401,F403,E402
from .reduction.quantile import *  # noqa: F401,F403,E402
from .datasource.creation import *  # noqa: F401,F403,E402
from .linalg.products import *  # noqa: F401,F403,E402
from .base.shape import *  # noqa: F401,F403,E402
from .base.join import *  # noqa: F401,F403,E402
from .base.sort import *  # noqa: F401,F403,E402
from .indexing.api import *  # noqa: F401,F403,E402  (installs __getitem__ and __setitem__)
from .base.einsum import *  # noqa: F401,F403,E402
from .linalg.toplevel import *  # noqa: F401,F403,E402
from .base.setops import *  # noqa: F401,F403,E402
from .base.search import *  # noqa: F401,F403,E402
from .reduction.histogram import *  # noqa: F401,F403,E402
from .base.manip import *  # noqa: F401,F403,E402
from .base.numeric import *  # noqa: F401,F403,E402
from .base.more import *  # noqa: F401,F403,E402
from .base.bits import *  # noqa: F401,F403,E402
from .base.dates import *  # noqa: F401,F403,E402
from .base.poly import *  # noqa: F401,F403,E402
from .base.windows import *  # noqa: F401,F403,E402
from .indexing.functions import *  # noqa: F401,F403,E402
from .indexing.ix import *  # noqa: F401,F403,E402
from .datasource.grids import *  # noqa: F401,F403,E402
from .dtypes import *  # noqa: F401,F403,E402
from .array_api import *  # noqa: F401,F403,E402
from .sparse.routes import *  # noqa: F401,F403,E402  (installs issparse, tosparse, todense)
from .io import *  # noqa: F401,F403,E402
from . import device as _device  # noqa: F401,E402  (installs to_gpu, to_cpu and fetch(gpu=))
from . import fft, linalg, random, spatial, special, stats  # noqa: F401,E402
from .interop import install as _install_interop  # noqa: E402
from .leftout import tensor_getattr as __getattr__  # noqa: E402  (left-out names raise, saying what to use)

amax, amin = max, min
bool = bool_  # noqa: A001 - numpy's spelling for users of mt.bool

_methods.install(__import__(__name__, fromlist=["*"]))
_install_interop(__import__(__name__, fromlist=["*"]))
