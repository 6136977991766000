"""Training: optimisers and schedules, callbacks, distribution strategies, determinism, and the step's
speed switches (`speed`, which chooses them and switches Grappler; `shared_trace`, `xla_step`)."""
