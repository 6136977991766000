"""Converting a checkpoint from any format into any other (tools/convert_checkpoint.py): loaded strictly into our
matching model, then written, whole or not at all.

Example:
>>> import tempfile
>>> out = tempfile.mkdtemp()
>>> convert("tests/fixtures/hf/discriminator", out + "/ours", to="ours") == [out + "/ours"]
True
>>> sorted(os.listdir(out + "/ours"))
['discriminator.keras', 'run_config.json', 'vocab.txt']
>>> prefix = convert(out + "/ours", out + "/google/model.ckpt", to="google")[0]
>>> sorted(os.listdir(out + "/google"))
['checkpoint', 'model.ckpt.data-00000-of-00001', 'model.ckpt.index', 'run_config.json', 'vocab.txt']
"""

import os

from electra_tf.util.atomic import atomic_folder
from electra_tf.checkpoints import ours, sources, tokenizer_files, transfer
from electra_tf.checkpoints.google import prefix_written_whole, save_google
from electra_tf.checkpoints.hf import save_huggingface
from electra_tf.config import PretrainingConfig, generator_config
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.encoder import ElectraModel
from electra_tf.models.generator import ElectraGenerator
from electra_tf.models.multiple_choice import ElectraChoiceClassifier
from electra_tf.models.question_answering import ElectraQuestionAnswerer
from electra_tf.models.sequence_classification import ElectraSequenceClassifier
from electra_tf.models.token_classification import ElectraTokenClassifier
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import VOCAB_FILE, load_vocabulary, save_vocabulary, validate_vocabulary

FORMATS = ("ours", "huggingface", "google")
# Our model for each Hugging Face class; BERT's encoder is ours (its own heads are not ELECTRA's).
_CLASSES = {cls.hf_class: cls for cls in (
    ElectraModel, ElectraDiscriminator, ElectraGenerator, ElectraSequenceClassifier,
    ElectraTokenClassifier, ElectraQuestionAnswerer, ElectraChoiceClassifier)}
_CLASSES.update(dict.fromkeys(("BertModel", "BertForPreTraining", "BertForMaskedLM"), ElectraModel))


def _our_class(architecture):
    if architecture not in _CLASSES:
        raise ValueError(f"no model of ours for a {architecture} checkpoint")
    return _CLASSES[architecture]


def load_model(path):
    """`(model, info)`: the model a checkpoint holds, as its own class (a pre-training checkpoint's discriminator), with
    what its folder says of it."""
    source = sources.read_source(path)
    if source.model is not None:
        return source.model, source.info
    architecture = source.networks["model"].architecture
    cls = ElectraDiscriminator if "generator" in source.networks or source.format == sources.GOOGLE \
        else _our_class(architecture)
    return cls.from_source(source), source.info


def _pair_pretraining(discriminator, generator, source_name):
    """The `PretrainingConfig` under which the original recipe builds this generator for this discriminator."""
    width, depth = (generator.config.hidden_size / discriminator.config.hidden_size,
                    generator.config.num_layers / discriminator.config.num_layers)
    pretraining = PretrainingConfig(generator_hidden_size=width, generator_layers=depth)
    expected = generator_config(discriminator.config, pretraining)
    if generator.config.replace(hidden_dropout=expected.hidden_dropout,
                                attention_dropout=expected.attention_dropout) != expected:
        raise ValueError(f"{source_name}: the generator ({generator.config}) is not one the ELECTRA recipe derives "
                         f"from the discriminator (expected {expected}); convert them separately")
    return pretraining


def _networks(source, name):
    """`(discriminator, generator or None, pretraining)` models of ours loaded from a pair source."""
    main, gen = source.networks["model"], source.networks["generator"]
    pretraining = source.pretraining
    if pretraining is None:
        pretraining = _pair_pretraining(main, gen, name)
    tied = pretraining.sharing != "none"
    if tied and transfer.differing_embeddings(main.state, gen.state):
        pretraining = pretraining.replace(untied_generator_embeddings=True)
        tied = False
    discriminator = ElectraDiscriminator(main.config, name="discriminator")
    generator = ElectraGenerator(gen.config, embedding=discriminator.backbone.embedding if tied else None,
                                 name="generator")
    transfer.load_state(discriminator, main.state, main.architecture, source=f"{name} (discriminator)")
    transfer.load_state(generator, gen.state, gen.architecture, source=f"{name} (generator)")
    return discriminator, generator, pretraining


def _tokenizer(path, vocab_file):
    """`(vocabulary list or None, lowercase, strip_accents)` beside the input (or from `vocab_file`)."""
    try:
        vocabulary, lowercase, strip_accents = tokenizer_files.tokenizer_arguments(vocab_file or path)
    except ValueError:
        return None, True, None
    if isinstance(vocabulary, str):
        vocabulary = load_vocabulary(vocabulary)
    validate_vocabulary(vocabulary, source=vocab_file or path)
    return vocabulary, True if lowercase is None else lowercase, strip_accents


def _write_google(output, vocabulary, discriminator, generator=None, pretraining=None):
    """Writes a Google checkpoint whole at `output` (a prefix, or a folder that gets `model.ckpt`), `vocab.txt` too."""
    prefix = os.path.join(output, "model.ckpt") if os.path.isdir(output) or output.endswith(os.sep) else output
    with prefix_written_whole(prefix) as tmp_prefix:
        save_google(tmp_prefix, discriminator, generator, pretraining)
        if vocabulary is not None:
            save_vocabulary(vocabulary, os.path.join(os.path.dirname(tmp_prefix), VOCAB_FILE))
    return [prefix]


def _write_pair(discriminator, generator, pretraining, output, to, networks, tokenizer, dtype):
    vocabulary, lowercase, strip_accents = tokenizer
    if to == "ours":
        ours.write_run_folder(output, {"discriminator": discriminator, "generator": generator}, discriminator.config,
                              pretraining, vocabulary)
        return [output]
    if to == "google":
        return _write_google(output, vocabulary, discriminator, generator, pretraining)
    chosen = {"discriminator": [("discriminator", discriminator)], "generator": [("generator", generator)],
              "both": [("discriminator", discriminator), ("generator", generator)]}[networks]
    with atomic_folder(output) as tmp:
        for part, model in chosen:
            save_huggingface(model, os.path.join(tmp, part) if networks == "both" else tmp, vocabulary, lowercase,
                             strip_accents, dtype=dtype)
    return [os.path.join(output, part) if networks == "both" else output for part, _ in chosen]


def _write_single(model, output, to, tokenizer, info, dtype):
    vocabulary, lowercase, strip_accents = tokenizer
    if to == "huggingface":
        with atomic_folder(output) as tmp:
            save_huggingface(model, tmp, vocabulary, lowercase, strip_accents, label_names=info.get("label_names"),
                             dtype=dtype)
    elif to == "google":
        if not isinstance(model, (ElectraDiscriminator, ElectraModel)):
            raise ValueError(f"the Google format holds pre-training networks (a discriminator and its generator); "
                             f"a lone {type(model).__name__} has no place in it")
        return _write_google(output, vocabulary, model)
    elif isinstance(model, ElectraDiscriminator):  # (our run folders and model folders are written whole)
        ours.write_run_folder(output, {"discriminator": model}, model.config, PretrainingConfig(), vocabulary)
    elif isinstance(model, ElectraGenerator):  # a generator alone: the full model of an MLM run
        ours.write_run_folder(output, {"generator": model}, model.config, PretrainingConfig(objective="mlm"),
                              vocabulary)
    else:
        tokenizer = None if vocabulary is None else WordPieceTokenizer(vocabulary, lowercase, strip_accents)
        model.save_pretrained(output, tokenizer=tokenizer, **info)
    return [output]


def convert(input_path, output, to, input_generator=None, networks="discriminator", run_config=None,
            vocab_file=None, dtype="float32"):
    """Converts the checkpoint at `input_path` into format `to` ("ours", "huggingface", "google") at `output` (a
    folder; for Google a prefix, or a folder that gets `model.ckpt`); returns what it wrote. `dtype`: the Hugging
    Face weights' ("float32", "float16", "bfloat16")."""
    if to not in FORMATS:
        raise ValueError(f"to must be one of {FORMATS}, got {to!r}")
    if networks not in ("discriminator", "generator", "both"):
        raise ValueError(f"networks must be discriminator, generator or both, got {networks!r}")
    name = os.fspath(input_path)
    source = sources.read_source(input_path, run_config=run_config)
    if input_generator is not None:
        if source.format != sources.HUGGINGFACE:
            raise ValueError("input_generator pairs a Hugging Face generator folder with a Hugging Face "
                             f"discriminator folder; {name} is a {source.format} checkpoint")
        generator_source = sources.read_source(input_generator)
        if generator_source.format != sources.HUGGINGFACE or \
                generator_source.networks["model"].architecture != "ElectraForMaskedLM":
            raise ValueError(f"{input_generator}: not a Hugging Face ElectraForMaskedLM folder")
        source.networks["generator"] = generator_source.networks["model"]
    tokenizer = _tokenizer(name, vocab_file)
    if tokenizer[0] is not None and len(tokenizer[0]) != source.config.vocab_size:
        raise ValueError(f"the vocabulary has {len(tokenizer[0])} tokens, the model {source.config.vocab_size}")
    if "generator" in source.networks:
        discriminator, generator, pretraining = _networks(source, name)
        return _write_pair(discriminator, generator, pretraining, output, to, networks, tokenizer, dtype)
    if networks != "discriminator" and "generator" not in source.networks:
        raise ValueError(f"{name} holds one network, not a discriminator and generator pair (networks={networks!r})")
    model = _our_class(source.networks["model"].architecture).from_source(source) \
        if source.model is None else source.model
    return _write_single(model, output, to, tokenizer, source.info, dtype)
