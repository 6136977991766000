"""Picking a tf.distribute strategy by name, and where each worker may write.

Example:
>>> get_strategy("default").num_replicas_in_sync
1
"""

import os

import tensorflow as tf

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")


def get_strategy(name="default", tpu=None):
    """`default` (one device), `mirrored` (all local GPUs or CPUs), `multi_worker` (from `TF_CONFIG`), `tpu`."""
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ValueError("--strategy=multi_worker needs the TF_CONFIG environment variable (cluster and task)")
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu or "")
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ValueError(f"unknown strategy {name!r}; choose one of {STRATEGIES}")


def is_chief(strategy):
    """Whether this worker writes the shared outputs (always true on one machine)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    return resolver.task_type == "chief" or (resolver.task_type == "worker" and resolver.task_id == 0
                                             and "chief" not in resolver.cluster_spec().as_dict())


def worker_dir(model_dir, strategy):
    """`model_dir` on the chief; a private folder on other workers (they must write too, to stay in sync)."""
    if is_chief(strategy):
        return model_dir
    return os.path.join(model_dir, f".worker_{strategy.cluster_resolver.task_id}")
