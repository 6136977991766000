"""Training: optimisers and schedules, callbacks, distribution strategies, determinism, FLOPs, and the step's
speed switches (`speed`, which chooses them; `xla_step`, `graph_optimizer`)."""
