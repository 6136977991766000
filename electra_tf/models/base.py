"""`ElectraNetwork`: what every ELECTRA network and task model shares: config, backbone, label names, raw text in
`fit`/`predict`, `from_pretrained` (any checkpoint format) and `save_pretrained` (a self-describing folder). Each class
declares what the checkpoint code needs of it (`hf_class`, `hf_architecture`, `serving_task`, `hf_complete`), so
that code never looks at model classes.

Example:
>>> import tempfile
>>> from electra_tf import ElectraConfig
>>> from electra_tf.models.discriminator import ElectraDiscriminator
>>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=1, num_heads=2,
...                        intermediate_size=32)
>>> folder = tempfile.mkdtemp()
>>> ElectraDiscriminator(config).save_pretrained(folder)
>>> model = ElectraDiscriminator.from_pretrained(folder)
>>> model.hf_architecture, model.backbone.name, model.serving_task
('ElectraForPreTraining', 'electra', 'discriminator')
"""

import os
import tempfile

import keras
import numpy as np
import tensorflow as tf

from electra_tf.util.atomic import atomic_folder
from electra_tf.checkpoints import hf, ours, publish, sources, transfer
from electra_tf.checkpoints.model_card import write_model_card
from electra_tf.checkpoints.tokenizer_files import NoTokenizerFiles, load_tokenizer, write_tokenizer_files
from electra_tf.config import ElectraConfig
from electra_tf.text.preprocessor import ElectraPreprocessor, TextPredictor, is_pair, is_text
from electra_tf.text.vocabulary import vocabulary_hash

# The length a preprocessor cuts and pads texts to, when nothing says otherwise (fine-tuning's default).
DEFAULT_SEQUENCE_LENGTH = 128
# What `save_pretrained` itself says of a model in `electra_tf.json`.
_DESCRIBED = ("class", "serving_task", "hf_architecture", "label_names", "vocabulary_size", "vocabulary_sha256")
# The facts of a folder's `info` that its model card also shows (`checkpoints.model_card.write_model_card`).
_CARD_FACTS = ("base_model", "language", "dataset", "scores", "command", "model_name")

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
    """The base of every ELECTRA model. A subclass builds its graph, calls `super().__init__(inputs=...,
    outputs=...)` and `keep_encoder_call`, sets `config`, `backbone` and its constructor arguments as attributes and
    extends `get_config`. A model that reads text (`takes_text`) takes a `preprocessor=` and then raw strings.
    """

    hf_class = None
    serving_task = None
    checkpoint_arguments = ()  # what a checkpoint of this very class implies, where the caller left it out
    takes_text = False

    def __init__(self, *args, preprocessor=None, **kwargs):
        super().__init__(*args, **kwargs)
        if preprocessor is not None and not self.takes_text:
            raise ValueError(f"{type(self).__name__} does not read one text or a text pair: it takes no preprocessor")
        self.preprocessor = preprocessor
        self._label_names = None

    @property
    def hf_architecture(self):
        """The Hugging Face class with this model's weight layout, or `None` when it has none."""
        return self.hf_class

    @property
    def hf_complete(self):
        """Whether a Hugging Face folder describes this model entirely (a task model with Hugging Face's head)."""
        return "head" in self.checkpoint_arguments and self.head == "huggingface"

    def keep_encoder_call(self, encoder_inputs, encoded):
        """Records where the backbone runs in this model's graph, for `with_outputs` (not state Keras saves)."""
        self.__dict__["_encoder_call"] = (encoder_inputs, encoded)

    def with_outputs(self, *names):
        """A Keras model on this model's own layers with more outputs: `"hidden_states"` `[batch, L + 1, sequence, H]`
        and/or `"attentions"` `[batch, L, heads, sequence, sequence]`.

        >>> from electra_tf import ElectraConfig
        >>> from electra_tf.models.discriminator import ElectraDiscriminator
        >>> config = ElectraConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_layers=2, num_heads=2,
        ...                        intermediate_size=32)
        >>> sorted(ElectraDiscriminator(config).with_outputs("hidden_states", "attentions").output)
        ['attentions', 'hidden_states', 'last_hidden_state', 'logits']
        """
        unknown = set(names) - {"hidden_states", "attentions"}
        if unknown:
            raise ValueError(f"with_outputs takes 'hidden_states' and 'attentions', not {sorted(unknown)}")
        names = tuple(name for name in ("hidden_states", "attentions") if name in names and name not in self.output)
        if not names:
            return self
        graphs = self.__dict__.setdefault("_with_outputs", {})
        if names not in graphs:
            graphs[names] = self._build_with_outputs(names)
        return graphs[names]

    def _build_with_outputs(self, names):
        encoder_inputs, encoded = self.__dict__["_encoder_call"]
        head_outputs = {key: value for key, value in self.output.items() if key not in encoded}
        head = keras.Model((self.input, encoded["last_hidden_state"]), head_outputs)  # the graph past the encoder
        states = self.backbone.with_outputs(*names)(encoder_inputs)
        outputs = {key: states[key] for key in self.output if key in encoded}
        outputs.update(head((self.input, states["last_hidden_state"])))
        return keras.Model(self.input, {**outputs, **{name: states[name] for name in names}})

    @property
    def label_names(self):
        """The class or tag names in id order (from the folder it was loaded from), or None when unknown."""
        return self._label_names

    @label_names.setter
    def label_names(self, names):
        self._label_names = None if self._checked_labels(names) is None else tuple(str(name) for name in names)

    def _checked_labels(self, names):
        num_labels = getattr(self, "num_labels", None)
        if names is not None and num_labels is not None and len(names) != num_labels:
            raise ValueError(f"{len(names)} label names for a model with {num_labels} labels")
        return names

    @property
    def id2label(self):
        """`{id: name}` (transformers' `LABEL_<i>` where the names are unknown); `{}` for a model without labels."""
        num_labels = getattr(self, "num_labels", None) or 0
        return dict(enumerate(self.label_names or [f"LABEL_{i}" for i in range(num_labels)]))

    @property
    def label2id(self):
        return {name: i for i, name in self.id2label.items()}

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable, "config": self.config.to_dict()}
        if self.preprocessor is not None:
            config["preprocessor"] = keras.saving.serialize_keras_object(self.preprocessor)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("preprocessor") is not None:
            config["preprocessor"] = keras.saving.deserialize_keras_object(config["preprocessor"])
        return cls(**config)

    def _text_dataset(self, x, y=None, batch_size=None, shuffle=False):
        features = tuple(np.asarray(part, object) for part in x) if is_pair(x) else np.asarray(x, object)
        dataset = tf.data.Dataset.from_tensor_slices(features if y is None else (features, y))
        if shuffle:
            dataset = dataset.shuffle(len(features[0] if is_pair(x) else features), reshuffle_each_iteration=True)
        preprocess = self.preprocessor
        dataset = dataset.batch(batch_size or 32)
        if y is None:
            return dataset.map(lambda *texts: preprocess(texts if len(texts) == 2 else texts[0]))
        return dataset.map(lambda texts, labels: (preprocess(texts), labels))

    def _reads(self, x):
        return self.preprocessor is not None and x is not None and is_text(x)

    def fit(self, x=None, y=None, batch_size=None, shuffle=True, validation_data=None, **kwargs):
        if self._reads(x):
            x, y, batch_size = self._text_dataset(x, y, batch_size, shuffle), None, None
        if isinstance(validation_data, tuple) and self._reads(validation_data[0]):
            validation_data = self._text_dataset(*validation_data[:2])
        if isinstance(x, tf.data.Dataset):
            shuffle = False  # a dataset brings its own order (Keras would only warn that it ignores shuffle)
        return super().fit(x, y, batch_size=batch_size, shuffle=shuffle, validation_data=validation_data, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
        if self._reads(x):
            x, y, batch_size = self._text_dataset(x, y, batch_size), None, None
        return super().evaluate(x, y, batch_size=batch_size, **kwargs)

    def predict(self, x, batch_size=None, verbose="auto", **kwargs):
        """Keras's `predict`; raw text (without `callbacks` or `steps`) runs a `TextPredictor`: one graph traced
        once, batch after batch, no progress bar."""
        if self._reads(x) and not kwargs:
            predictor = self.__dict__.get("_text_predictor")  # a plain attribute: not state Keras tracks or saves
            if predictor is None or predictor.preprocessor is not self.preprocessor:
                predictor = self.__dict__["_text_predictor"] = TextPredictor(self)
            return predictor(x, batch_size or 32)
        if self._reads(x):
            x, batch_size = self._text_dataset(x, batch_size=batch_size), None
        return super().predict(x, batch_size=batch_size, verbose=verbose, **kwargs)

    @classmethod
    def from_pretrained(cls, path, allow_missing=False, allow_unexpected=False, preprocessor="auto", revision=None,
                        cache_dir=None, token=None, local_files_only=None, force_download=False, label_names=None,
                        config_overrides=None, **arguments):
        """This model with the weights of a checkpoint in any format, or a hub id (docs/checkpoints.md).

        `arguments` go to the constructor; those a checkpoint of this class implies (its head, `num_labels`) are
        taken from it when left out. `config_overrides`: `ElectraConfig` fields to change. `preprocessor="auto"`:
        one of the checkpoint's tokenizer files for a model that reads text (`max_seq_length=` sets its length).
        """
        source = sources.read_source(path, revision=revision, cache_dir=cache_dir, token=token,
                                     local_files_only=local_files_only, force_download=force_download)
        given = arguments.pop("max_seq_length", None)
        length, positions = given or source.info.get("max_seq_length"), source.config.max_position_embeddings
        if length is not None and not 3 <= length <= positions:  # before any work: longer texts would fail later
            raise ValueError(f"max_seq_length={length}{'' if given else ' (its electra_tf.json)'} but {source.path} "
                             f"has {positions} positions; pass max_seq_length={positions} or less")
        model = cls.from_source(source, allow_missing, allow_unexpected, config_overrides, **arguments)
        if preprocessor == "auto":
            preprocessor = model.preprocessor if model.preprocessor is not None else \
                cls._saved_preprocessor(source, length) if cls.takes_text else None
            word_unit = source.info.get("word_unit")  # a tagger reads raw text cut into its training words
            if preprocessor is not None and word_unit is not None and preprocessor.word_unit != word_unit:
                preprocessor = ElectraPreprocessor(preprocessor.tokenizer, preprocessor.sequence_length, word_unit)
        model.preprocessor = preprocessor
        saved_names = source.info.get("label_names")
        if label_names is not None:
            model.label_names = label_names
        elif saved_names and getattr(model, "num_labels", None) in (None, len(saved_names)):
            model.label_names = saved_names  # (a head of another size given by the caller has new labels)
        return model

    @staticmethod
    def _saved_preprocessor(source, length=None):
        """An `ElectraPreprocessor` of the tokenizer files beside a checkpoint, or None when there are none."""
        try:
            tokenizer = load_tokenizer(source.folder)
        except NoTokenizerFiles:
            return None
        return ElectraPreprocessor(tokenizer, length or min(DEFAULT_SEQUENCE_LENGTH,
                                                            source.config.max_position_embeddings))

    @classmethod
    def from_source(cls, source, allow_missing=False, allow_unexpected=False, config_overrides=None, **arguments):
        """`from_pretrained` on a checkpoint already read (`electra_tf.checkpoints.sources.read_source`)."""
        saved = source.model
        if saved is not None and not config_overrides and cls._is_built_as(saved, arguments):
            return saved if type(saved) is cls else cls._same_model_as(saved)
        network = source.network_for(cls.hf_class)
        config = network.config.replace(**config_overrides) if config_overrides else network.config
        model = cls(config, **cls._implied_arguments(source, network, arguments))
        transfer.load_state(model, network.state, network.architecture, allow_missing=allow_missing,
                            allow_unexpected=allow_unexpected, source=f"{source.path} ({source.format})")
        return model

    @classmethod
    def _same_model_as(cls, model):
        """`model` (of the same network: ours, or its `electra_tf.transformers` subclass) as this class."""
        copy = cls.from_config({**model.get_config(), "preprocessor": None})  # (its vocabulary is an asset)
        copy.set_weights(model.get_weights())
        copy.preprocessor = model.preprocessor
        return copy

    @classmethod
    def _implied_arguments(cls, source, network, arguments):
        """Constructor arguments a checkpoint of this very class implies, where the caller left them out."""
        arguments = dict(arguments)
        if network.architecture != cls.hf_class:
            return arguments
        implied = {"head": "huggingface" if source.format != sources.OURS else None,
                   "num_labels": source.num_labels, "classifier_dropout": source.classifier_dropout}
        for name in cls.checkpoint_arguments:
            if implied[name] is not None:
                arguments.setdefault(name, implied[name])
        return arguments

    def without_optimizer(self):
        """This model, or (once compiled) an uncompiled copy: Keras 3 writes a compiled model's optimizer into
        `.keras` files and has no `include_optimizer=False` for them."""
        return self if getattr(self, "optimizer", None) is None else type(self)._same_model_as(self)

    @classmethod
    def _is_built_as(cls, model, arguments):
        """Whether `model` (loaded as saved) is what `cls(…, **arguments)` asks for."""
        return (issubclass(cls, type(model)) or isinstance(model, cls)) and \
            all(getattr(model, key, None) == value for key, value in arguments.items())

    def save_pretrained(self, folder, tokenizer=None, label_names=None, **info):
        """Writes a self-describing model folder, whole or not at all (docs/finetuning.md): the weights once
        (`model.safetensors` with `config.json` where a Hugging Face class has them all, else `model.keras`), the
        tokenizer files (`tokenizer`'s, else the preprocessor's), a model card, and `electra_tf.json` (class,
        serving task, label names, and `info` such as `max_seq_length`).
        """
        tokenizer = tokenizer or (self.preprocessor.tokenizer if self.preprocessor is not None else None)
        info = {key: value for key, value in info.items() if key not in _DESCRIBED}  # (re-saving a folder's info)
        label_names = self._checked_labels(self.label_names if label_names is None else label_names)
        with atomic_folder(folder) as tmp:  # whole or not at all; an older folder stays until then
            if not self.hf_complete:
                self.without_optimizer().save(os.path.join(tmp, ours.SINGLE_MODEL_FILE))
            vocabulary = None if tokenizer is None else tokenizer.get_vocabulary()
            if tokenizer is not None:
                write_tokenizer_files(tmp, vocabulary, bool(tokenizer.lowercase), bool(tokenizer.strip_accents),
                                      self.config.max_position_embeddings)
            if self.hf_architecture is not None:
                hf.save_huggingface(self, tmp, label_names=label_names, pad_token_id=(
                    vocabulary.index("[PAD]") if vocabulary else 0))
            if self.preprocessor is not None:
                info.setdefault("max_seq_length", self.preprocessor.sequence_length)
            facts = {fact: info[fact] for fact in _CARD_FACTS if fact in info}
            facts.setdefault("model_name", os.path.basename(os.path.normpath(os.path.abspath(folder))))
            write_model_card(tmp, serving_task=self.serving_task, label_names=label_names,
                             model_format="safetensors" if self.hf_complete else "keras", **facts)
            ours.write_model_info(tmp, {
                "class": type(self).__name__, "serving_task": self.serving_task,
                "hf_architecture": self.hf_architecture,
                "label_names": None if label_names is None else [str(name) for name in label_names],
                "vocabulary_size": None if vocabulary is None else len(vocabulary),
                "vocabulary_sha256": None if vocabulary is None else vocabulary_hash(vocabulary), **info})

    def push_to_hub(self, repo_id, commit_message=None, private=None, token=None, revision=None, create_pr=False,
                    tokenizer=None, **info):
        """Saves this model (`save_pretrained`) and uploads the folder to the hub repository `repo_id`, as
        transformers' `push_to_hub`; returns the commit's URL."""
        publish.check_push_target(repo_id, token)
        with tempfile.TemporaryDirectory() as folder:
            saved = os.path.join(folder, repo_id.rstrip("/").rpartition("/")[2])
            self.save_pretrained(saved, tokenizer=tokenizer, **info)
            return publish.push_to_hub(saved, repo_id, token=token, private=private, revision=revision,
                                       commit_message=commit_message, create_pr=create_pr)
