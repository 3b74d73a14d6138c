"""Reading and writing files and databases: CSV, Parquet, JSON, HDF5, SQL.

``read_csv``, ``read_parquet``, ``read_json``, ``read_hdf``,
``read_sql``/``read_sql_table``/``read_sql_query`` make lazy DataFrames read
in parallel chunks. Importing this package also installs the lazy writers
``to_csv``, ``to_parquet``, ``to_json``, ``to_hdf`` and ``to_sql`` on
DataFrame (and Series, where pandas has them): each returns an object whose
``.execute()`` writes on the workers. Paths may be fsspec URLs.
"""

from __future__ import annotations

from . import parquet_write, sql_write  # noqa: F401 - they install DataFrame.to_parquet and to_sql
from .csv import read_csv
from .hdf import read_hdf
from .json import read_json
from .parquet import read_parquet
from .sql import read_sql, read_sql_query, read_sql_table

__all__ = ["read_csv", "read_hdf", "read_json", "read_parquet", "read_sql", "read_sql_query", "read_sql_table"]
