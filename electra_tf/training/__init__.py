"""Training: optimisers and schedules."""
