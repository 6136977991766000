"""Training: optimisers and schedules, callbacks, distribution strategies, determinism, and the step's
speed switches (`speed`, which chooses them and sets XLA's and Grappler's; `shared_trace`)."""
