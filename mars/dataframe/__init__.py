"""mars.dataframe: the lazy, partitioned pandas API."""
