"""mars.tensor.arithmetic"""
