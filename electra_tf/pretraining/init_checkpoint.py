"""Starting a pre-training from another checkpoint's weights (continued pre-training), checked against the
pre-trainer's config before anything is assigned: a model holding both networks (ours, Google's), a discriminator
with its generator given apart, or another run's training checkpoint (weights only: a new schedule).

Example:
>>> load_initial_weights(pretrainer, "runs/small")  # doctest: +SKIP
'runs/small/checkpoints/ckpt-1000'
"""

import os

import tensorflow as tf

from electra_tf.checkpoints import sources, transfer
from electra_tf.checkpoints.loading import apply
from electra_tf.checkpoints.ours import run_config_file
from electra_tf.config import load_run_config
from electra_tf.pretraining.generator_sources import check_masked_lm

# Dropout rates do not change the weights: a checkpoint trained with other rates still fits.
_DROPOUT_FIELDS = ("hidden_dropout", "attention_dropout")


def load_pretrainer_weights(pretrainer, path, allow_missing=False, allow_unexpected=False, generator_path=None):
    """Loads `pretrainer`'s networks from a checkpoint that holds both (ours, Google's), or from a discriminator
    and, at `generator_path`, its masked LM; all-or-nothing. Returns `{network: LoadReport}`."""
    source = sources.read_source(path)
    name = f"{os.fspath(path)} ({source.format})"
    if generator_path is not None:
        if "generator" in source.networks:
            raise ValueError(f"{name}: holds a generator already; give --init_generator_checkpoint only with a "
                             "discriminator")
        generator = sources.read_source(generator_path).networks["model"]
        check_masked_lm(generator, os.fspath(generator_path), "this pre-training's generator")
        source.networks["generator"] = generator
    sharing = pretrainer.source.sharing
    if sharing.fold is not None:  # GDES
        raise ValueError("weight_sharing='gdes' keeps embedding residuals that a pre-trained model does not hold; "
                         "start it from another GDES run's model_dir, or from scratch")
    parts = ([("discriminator", "model")] + ([("generator", "generator")] if _trains_a_generator(pretrainer) else [])
             if pretrainer.is_electra else [("generator", "model")])
    if any(key not in source.networks for _, key in parts):  # the roles first, then the configs
        raise ValueError(f"{name}: has no generator to initialise this pre-training's generator from "
                         "(continued pre-training needs both networks: give the generator's folder or hub id as "
                         "--init_generator_checkpoint)")
    planned = []
    for attribute, key in parts:
        network = getattr(pretrainer, attribute)
        if attribute == "generator":
            check_masked_lm(source.networks[key], name, "this pre-training's generator")
        differing = source.networks[key].config.differences(network.config, ignore=_DROPOUT_FIELDS)
        if differing:
            raise ValueError(f"{name}: its {attribute} has another model config (field: (checkpoint, this run)): "
                             f"{differing}")
        planned.append((attribute, network, source.networks[key]))
    if len(planned) == 2 and sharing.ties_embeddings:
        differing = transfer.differing_embeddings(planned[0][2].state, planned[1][2].state)
        if differing:
            raise ValueError(f"{name}: the generator's embeddings differ from the discriminator's ({differing[:3]}), "
                             "but this pre-training ties them (set untied_generator_embeddings to keep both)")
    reports, assignments = {}, []
    for attribute, network, checkpoint in planned:
        report, pending = transfer.plan_state(network, checkpoint.state, checkpoint.architecture, allow_missing,
                                              allow_unexpected, f"{name} {attribute}")
        reports[attribute] = report
        assignments += pending
    apply(assignments)
    for attribute, network, _ in planned:
        transfer.log_report(network, reports[attribute], name)
    return reports


def pair_configs(init_checkpoint, init_generator_checkpoint):
    """`(ElectraConfig, PretrainingConfig fields)` of a pair given apart: the discriminator's config and the
    generator's width and depth as shares of it, so that a run needs no config of its own to continue them."""
    discriminator = sources.read_source(init_checkpoint).networks["model"].config
    generator = sources.read_source(init_generator_checkpoint).networks["model"].config
    return discriminator, {"generator_hidden_size": generator.hidden_size / discriminator.hidden_size,
                           "generator_layers": generator.num_layers / discriminator.num_layers}


def _trains_a_generator(pretrainer):
    """Whether `pretrainer` has a generator a start initialises (a frozen one stays its `generator_checkpoint`)."""
    return pretrainer.generator is not None and pretrainer.source.trained


def _is_training_checkpoint(prefix):
    """A prefix of a checkpoint `tools/run_pretraining.py` wrote (object-based names, not Google's TF1 ones)."""
    if not os.path.exists(prefix + ".index"):
        return False
    try:
        names = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    except tf.errors.OpError:
        return False  # damaged: read_source names the problem
    return not any(name.startswith(("electra/", "generator/")) for name in names)


def load_initial_weights(pretrainer, init_checkpoint, init_generator_checkpoint=None):
    """Starts `pretrainer`'s weights (not its optimizer) from `init_checkpoint` (and `init_generator_checkpoint`);
    returns what was loaded; a ValueError when it does not fit."""
    run_checkpoint = os.path.isdir(init_checkpoint) and tf.train.latest_checkpoint(
        os.path.join(init_checkpoint, "checkpoints"))
    is_a_run = bool(run_checkpoint) or _is_training_checkpoint(init_checkpoint)
    if init_generator_checkpoint and is_a_run:
        raise ValueError(f"--init_generator_checkpoint: --init_checkpoint {init_checkpoint} is a pre-training run, "
                         "which holds its generator; give --init_generator_checkpoint only with a discriminator")
    if not is_a_run:
        try:
            load_pretrainer_weights(pretrainer, init_checkpoint, generator_path=init_generator_checkpoint)
        except ValueError as e:
            raise ValueError(f"--init_checkpoint {init_checkpoint}: {e}") from None
        return init_checkpoint + (f" and {init_generator_checkpoint}" if init_generator_checkpoint else "")
    prefix = init_checkpoint
    if run_checkpoint:
        config_file = run_config_file(init_checkpoint)
        if os.path.exists(config_file):
            differing = load_run_config(config_file)[0].differences(pretrainer.config, ignore=_DROPOUT_FIELDS)
            if differing:
                raise ValueError(f"--init_checkpoint {init_checkpoint} has another model config "
                                 f"(field: (checkpoint, this run)): {differing}")
        prefix = run_checkpoint
    # The networks only: the optimizer (and its step) hangs off the model too.
    networks = {name: network for name, network in (("discriminator", pretrainer.discriminator),
                                                    ("generator", pretrainer.generator))
                if network is not None and (name == "discriminator" or _trains_a_generator(pretrainer))}
    try:
        status = tf.train.Checkpoint(model=tf.train.Checkpoint(**networks)).restore(prefix)
        status.expect_partial().assert_existing_objects_matched()
    except (ValueError, AssertionError, tf.errors.OpError) as e:
        raise ValueError(f"--init_checkpoint {init_checkpoint} does not fit this model: {e}") from None
    return prefix
