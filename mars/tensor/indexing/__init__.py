"""mars.tensor.indexing"""
