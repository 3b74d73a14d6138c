"""mars.core: the graph model (tileables, chunks, operators, tiling, local executor)."""
