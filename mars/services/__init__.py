"""mars.services: supervisor and worker services, each with a typed API, actors and a mock."""
