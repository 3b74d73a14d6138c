"""mars.dataframe: the lazy, partitioned pandas API.

>>> import mars.dataframe as md
>>> df = md.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]}, chunk_size=2)
>>> df.sum().to_pandas()
a     6.0
b    15.0
dtype: float64
"""

# ruff: noqa: F401,F403 - this module re-exports the public API
from __future__ import annotations

from .core import DataFrame, Index, Series
from .datasource import from_pandas
from .map import map_partitions
from .rows import rechunk_rows

# each family adds its methods to DataFrame / Series / Index when imported
from . import arithmetic, reductions, uniques, basic, indexing, sample, accessors, window, apply  # noqa: E402
from .groupby import *  # noqa: E402
from .merge import *  # noqa: E402
from .concat import *  # noqa: E402
from .sort import *  # noqa: E402
from . import nlargest  # noqa: E402
from .reshape import *  # noqa: E402
from .pivot import *  # noqa: E402
from .io import *  # noqa: E402
from . import methods, assign, convert, index_methods, index_setops, categorical, index_more, arrow_accessors  # noqa: E402  (issue 18's families)
from . import index_join  # noqa: E402  (Index.join)
from .convert import *  # noqa: E402
from .methods import eval, pivot  # noqa: E402,A004  (md.pivot: the function, not the pivot module)
from . import optimizer  # noqa: E402  (rewrites expressions before tiling; adds explain())
from .inventory import install as _install_not_provided  # noqa: E402

_install_not_provided()  # last: every family has added its methods
