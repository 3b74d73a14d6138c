"""mars.tensor.datasource"""
