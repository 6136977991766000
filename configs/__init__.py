"""Shipped run configs (JSON), loadable by name with `electra_tf.load_run_config`."""
