"""mars.tensor.linalg"""
