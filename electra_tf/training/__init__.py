"""Training: optimisers and schedules, callbacks, distribution strategies, determinism, FLOPs, and the step's
compilation switches (`xla_step`, `graph_optimizer`)."""
