"""Chunked, lazy storage of tensors: zarr (``to_zarr``/``from_zarr``) and HDF5 (``to_hdf5``/``from_hdf5``)."""

from __future__ import annotations

from .hdf5 import from_hdf5, fromhdf5, to_hdf5, tohdf5
from .zarr import from_zarr, fromzarr, to_zarr, tozarr

__all__ = ["from_hdf5", "from_zarr", "fromhdf5", "fromzarr", "to_hdf5", "to_zarr", "tohdf5", "tozarr"]
