"""Moving a checkpoint's weights into one of our models, as `transformers` does: the encoder always loads; the head
loads when the checkpoint is of the model's class, else it is new and a pre-training head of the checkpoint is
dropped (a task head of another class is unexpected).

Example:
>>> from electra_tf import ElectraConfig, ElectraDiscriminator, ElectraForTokenClassification
>>> from electra_tf.checkpoints.mapping import model_state
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1,
...                        num_heads=2, intermediate_size=32)
>>> state = model_state(ElectraDiscriminator(config))
>>> report = load_state(ElectraForTokenClassification(config, num_labels=3), state, "ElectraForPreTraining")
>>> report.new, report.dropped[:1]
(['classifier/kernel', 'classifier/bias'], ['discriminator_predictions.dense.weight'])
"""

import functools
import logging

from electra_tf.checkpoints import mapping
from electra_tf.checkpoints.loading import Slot, apply, plan

logger = logging.getLogger("electra_tf")


def load_state(model, state, architecture, allow_missing=False, allow_unexpected=False, source="checkpoint"):
    """Loads `state` (from a checkpoint of Hugging Face class `architecture`) into `model`; a `LoadReport`."""
    report, assignments = plan_state(model, state, architecture, allow_missing, allow_unexpected, source)
    apply(assignments)
    log_report(model, report, source)
    return report


def plan_state(model, state, architecture, allow_missing=False, allow_unexpected=False, source="checkpoint"):
    """`load_state` without assigning: `(LoadReport, assignments)` for `loading.apply`."""
    same_class = architecture == model.hf_architecture
    slots = {entry.hf: Slot(entry.variable, entry.hf_shape,
                            functools.partial(mapping.from_hf, layout=entry.layout, shape=entry.shape))
             for entry in mapping.model_entries(model) if same_class or entry.part == "encoder"}
    arrays = dict(state)
    dropped = []
    if not same_class:
        prefixes = mapping.PRETRAINING_HEADS.get(architecture, ())
        dropped = [name for name in arrays if name.startswith(prefixes)] if prefixes else []
        for name in dropped:
            del arrays[name]
    report, assignments = plan(slots, arrays, allow_missing=allow_missing, allow_unexpected=allow_unexpected,
                               source=source)
    loaded = {id(slots[name].variable) for name in report.loaded}
    report.new = [v.path for v in model.weights if id(v) not in loaded]
    report.dropped = dropped
    return report, assignments


def log_report(model, report, source):
    """Tells what a load left new (a warning: train it) and what it dropped (info)."""
    name = type(model).__name__
    if report.new:
        logger.warning("%s from %s: new weights, initialised at random (train them before use): %s", name,
                       source, ", ".join(report.new))
    if report.dropped:
        logger.info("%s from %s: the checkpoint's pre-training head is not used: %s", name, source,
                    ", ".join(report.dropped))


def differing_embeddings(discriminator_state, generator_state):
    """The embedding keys on which a discriminator's and its generator's state dicts differ (empty: they may share)."""
    keys = [key for key in discriminator_state if key.startswith(mapping.ENCODER_PREFIX + "embeddings.")]
    return [key for key in keys if key in generator_state
            and (discriminator_state[key].shape != generator_state[key].shape
                 or (discriminator_state[key] != generator_state[key]).any())]
