"""mars.tensor: the lazy, chunked NumPy API."""
