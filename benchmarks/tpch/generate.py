"""TPC-H tables as Parquet files that every engine reads alike.

Run: ``.venv/bin/python benchmarks/tpch/generate.py [--scale 1] [--data-dir DIR]``.

``tpchgen-cli`` (PyPI) writes the eight tables; each is then rewritten once
with plain types, so that pandas, mars, dask and DuckDB see the same data:
decimals become float64, dates become ``timestamp[ns]`` (pandas'
``datetime64[ns]``: a ``date32`` column reads as Python ``date`` objects,
which do not compare with timestamps) and ``string_view`` becomes ``string``.
Row groups hold at most ``ROW_GROUP_ROWS`` rows, so ``read_parquet`` readers
that split by row group see several partitions. Files land in
``DIR/sf<scale>/<table>.parquet``; an existing complete set is kept.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
ROW_GROUP_ROWS = 500_000
DEFAULT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def scale_dir(data_dir: str, scale: float) -> str:
    """The folder holding the tables of one scale factor.

    >>> scale_dir("/d", 1.0), scale_dir("/d", 0.1)
    ('/d/sf1', '/d/sf0.1')
    """
    return os.path.join(data_dir, f"sf{scale:g}")


def plain_type(t: pa.DataType) -> pa.DataType:
    """The type a column is stored with: float64, timestamp[ns] or string for TPC-H's special types.

    >>> plain_type(pa.decimal128(15, 2)), plain_type(pa.date32()), plain_type(pa.int32())
    (DataType(double), TimestampType(timestamp[ns]), DataType(int32))
    """
    if pa.types.is_decimal(t):
        return pa.float64()
    if pa.types.is_date(t):
        return pa.timestamp("ns")
    if pa.types.is_string_view(t) or pa.types.is_large_string(t):
        return pa.string()
    return t


def normalize(src: str, dst: str) -> int:
    """Rewrite the Parquet file ``src`` as ``dst`` with :func:`plain_type` columns; returns its row count."""
    table = pq.read_table(src)
    schema = pa.schema([pa.field(f.name, plain_type(f.type)) for f in table.schema])
    table = table.cast(schema)
    pq.write_table(table, dst + ".part", row_group_size=ROW_GROUP_ROWS)
    os.replace(dst + ".part", dst)
    return table.num_rows


def tpchgen() -> str:
    """The ``tpchgen-cli`` next to this interpreter, else the one on ``PATH``."""
    here = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    found = here if os.path.exists(here) else shutil.which("tpchgen-cli")
    if found is None:
        raise FileNotFoundError("tpchgen-cli not found: pip install tpchgen-cli (or pymars[bench])")
    return found


def generate(scale: float, data_dir: str = DEFAULT_DIR, force: bool = False) -> str:
    """Make (or find) the tables of scale factor ``scale``; returns their folder."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    out = scale_dir(data_dir, scale)
    if not force and all(os.path.exists(os.path.join(out, f"{t}.parquet")) for t in TABLES):
        return out
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=data_dir) as raw:
        subprocess.run([tpchgen(), "parquet", "-s", f"{scale:g}", "--output-dir", raw, "--no-progress"],
                       check=True)
        for t in TABLES:
            rows = normalize(os.path.join(raw, f"{t}.parquet"), os.path.join(out, f"{t}.parquet"))
            print(f"{t:<9} {rows:>10,} rows")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (1: about 1 GB)")
    parser.add_argument("--data-dir", default=DEFAULT_DIR)
    parser.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    args = parser.parse_args()
    print(generate(args.scale, args.data_dir, args.force))


if __name__ == "__main__":
    main()
