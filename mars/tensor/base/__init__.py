"""mars.tensor.base"""
