"""Sparse tensors (2-D, scipy.sparse CSR chunks); see ``core`` and ``routes``."""
