"""mars.deploy: how the engine is started (command lines, local clusters, Kubernetes)."""
