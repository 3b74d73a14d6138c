"""The public face of indexing: ``t[index]``, ``t[index] = value`` and the index functions.

``mars.tensor`` does ``from .indexing.api import *``. Importing this module
installs ``Tensor.__getitem__`` and ``Tensor.__setitem__``; the operators
live beside it (``basic``: slices of the touched chunks; ``fancy`` /
``fancy_set``: integer arrays; ``mask``: boolean masks; ``nonzero``), and
``getitem`` / ``setitem`` split an index into those kinds as numpy does.

>>> import mars.tensor as mt
>>> t = mt.arange(6, chunk_size=4)
>>> t[t % 2 == 1] = 0
>>> t[::-1].execute().fetch().tolist()
[0, 4, 0, 2, 0, 0]
"""

from __future__ import annotations

from ..core import Tensor
from .getitem import argwhere, compress, flatnonzero, getitem, nonzero, take
from .setitem import install_views, setitem

__all__ = ["take", "nonzero", "flatnonzero", "argwhere", "compress"]

# set here too (getitem / setitem install them on import) so that importing this
# module alone is enough, whatever order the package imports its modules in
Tensor.__getitem__ = getitem  # type: ignore[method-assign]
Tensor.__setitem__ = setitem  # type: ignore[method-assign]
install_views()  # basic indexing returns views whose writes reach their base, as numpy's do
