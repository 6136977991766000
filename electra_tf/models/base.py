"""`ElectraNetwork`: what every ELECTRA network and task model shares — config, backbone, checkpoints.

Every model of the package is a functional Keras model over one
`ElectraModel` encoder, held as `self.backbone` (keras-hub's name; the encoder
layer itself is named `electra`, Hugging Face's `base_model_prefix`); the
encoder is its own backbone (`checkpoints.mapping.backbone_of`). Each
class *declares* what the checkpoint code needs to know of it, so that code
never looks at model classes:

- `hf_class`: the Hugging Face class of the same architecture, and
  `hf_architecture`: that class when this instance's weights are laid out as
  Hugging Face's (an original ELECTRA head has none);
- `serving_task`: the kind of SavedModel signatures it is exported with
  (`electra_tf.export`), `None` when it is not served.

Constructor arguments are public attributes and `get_config` lists them, so a
model saves and loads as any Keras model; `from_pretrained` reads a checkpoint
in any format (our own, Hugging Face, Google; see `electra_tf.checkpoints`)
and `save_pretrained` writes a Hugging Face folder.

Example:
>>> import tempfile
>>> from electra_tf import ElectraConfig, ElectraDiscriminator
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> folder = tempfile.mkdtemp()
>>> ElectraDiscriminator(config).save_pretrained(folder)
>>> model = ElectraDiscriminator.from_pretrained(folder)
>>> model.hf_architecture, model.backbone.name, model.serving_task
('ElectraForPreTraining', 'electra', 'discriminator')
"""

import inspect

import keras

from electra_tf.checkpoints import hf, sources, transfer
from electra_tf.config import ElectraConfig

INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def as_config(config):
    """Accepts an `ElectraConfig` or its dict (as `get_config` stores it)."""
    return config if isinstance(config, ElectraConfig) else ElectraConfig.from_dict(config)


def model_inputs():
    """The three int32 `[batch, sequence]` inputs, named as Hugging Face names them."""
    return {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}


def truncated_normal(config):
    return keras.initializers.TruncatedNormal(stddev=config.initializer_range)


class ElectraNetwork(keras.Model):
    """The base of every ELECTRA model: a functional Keras model with a config and a backbone.

    Subclasses build their graph, call `super().__init__(inputs=..., outputs=...)`, then set
    `self.config`, `self.backbone` and their other constructor arguments as attributes, and extend
    `get_config` with those arguments.
    """

    hf_class = None
    serving_task = None

    @property
    def hf_architecture(self):
        """The Hugging Face class with this model's weight layout, or `None` when it has none."""
        return self.hf_class

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @classmethod
    def from_pretrained(cls, path, allow_missing=False, allow_unexpected=False, **arguments):
        """This model with the weights of a checkpoint: our own saved model, a Hugging Face folder
        (ELECTRA, or BERT for the encoder) or a Google checkpoint prefix; see `electra_tf.checkpoints`.

        `arguments` go to the constructor (e.g. `num_labels=3`, `output_hidden_states=True`); those a
        checkpoint of the same class implies (a Hugging Face head and its `num_labels`) are taken from
        it when left out. A checkpoint of another class gives its encoder; a head it lacks is new.
        Strict: a ValueError lists missing, unexpected or mis-shaped weights (`allow_missing` /
        `allow_unexpected` relax it), and a failed load builds nothing.
        """
        return cls.from_source(sources.read_source(path), allow_missing, allow_unexpected, **arguments)

    @classmethod
    def from_source(cls, source, allow_missing=False, allow_unexpected=False, **arguments):
        """`from_pretrained` on a checkpoint already read (`electra_tf.checkpoints.sources.read_source`)."""
        if source.model is not None and cls._is_built_as(source.model, arguments):
            return source.model
        network = source.network_for(cls.hf_class)
        model = cls(network.config, **cls._implied_arguments(source, network, arguments))
        transfer.load_state(model, network.state, network.architecture, allow_missing=allow_missing,
                            allow_unexpected=allow_unexpected, source=f"{source.path} ({source.format})")
        return model

    @classmethod
    def _implied_arguments(cls, source, network, arguments):
        """Constructor arguments a checkpoint of this very class implies, where the caller left them out."""
        arguments = dict(arguments)
        if network.architecture != cls.hf_class:
            return arguments
        parameters = inspect.signature(cls.__init__).parameters
        implied = {"head": "huggingface" if source.format != sources.OURS else None,
                   "num_labels": source.num_labels, "classifier_dropout": source.classifier_dropout}
        for name, value in implied.items():
            if name in parameters and value is not None:
                arguments.setdefault(name, value)
        return arguments

    @classmethod
    def _is_built_as(cls, model, arguments):
        """Whether `model` (one of ours, loaded as saved) is what `cls(…, **arguments)` asks for."""
        return type(model) is cls and all(getattr(model, key, None) == value for key, value in arguments.items())

    def save_pretrained(self, folder, vocabulary=None, lowercase=True, strip_accents=None):
        """Writes this model as a Hugging Face folder (`config.json`, `model.safetensors`, and given a
        vocabulary `vocab.txt` and `tokenizer_config.json`) that `transformers` loads into `hf_class`.

        A ValueError when the model has no Hugging Face layout (an original ELECTRA head: build it with
        `head="huggingface"`).
        """
        hf.save_huggingface(self, folder, vocabulary=vocabulary, lowercase=lowercase, strip_accents=strip_accents)
