"""mars.tensor.reduction"""
