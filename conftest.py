"""Runs before any test or doctest imports TensorFlow's runtime: two logical CPU devices."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

# MirroredStrategy tests run on CPU:0 and CPU:1. Must precede device initialisation.
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)
