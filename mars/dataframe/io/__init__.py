"""Reading and writing files and databases: CSV, Parquet, SQL.

``read_csv``, ``read_parquet``, ``read_sql``/``read_sql_table``/``read_sql_query``
make lazy DataFrames read in parallel chunks; importing this package also
installs ``DataFrame.to_csv``/``Series.to_csv`` and ``DataFrame.to_parquet``.
"""

from __future__ import annotations

from .csv import read_csv
from .parquet import read_parquet
from .sql import read_sql, read_sql_query, read_sql_table

__all__ = ["read_csv", "read_parquet", "read_sql", "read_sql_query", "read_sql_table"]
