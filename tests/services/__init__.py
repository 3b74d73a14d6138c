"""Tests of the supervisor and worker services."""
