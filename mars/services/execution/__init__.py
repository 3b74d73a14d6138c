"""The execution service: a worker runs subtasks in its slots (one sub pool process per slot)."""
