"""End-to-end demo on the embedded default corpus: text → vocab → TFRecords → pre-train → fine-tune → serve.

Runs in about a minute on 2 CPU cores, downloads nothing:

    python -m electra_tf.tools.demo --output_dir=runs/demo

Steps (a re-run keeps what is done: the corpus, the vocabulary, the shards and the pre-training):
1. write the default corpus (standard-library docstrings) as text;
2. learn a WordPiece vocabulary from it;
3. pack it into TFRecord shards (the last shard is held out for evaluation);
4. pre-train a tiny ELECTRA (`configs/electra_tiny.json`) as `electra-pretrain`
   does, with the same call (`electra_tf.pretraining.run.run_pretraining`):
   checkpoints and logs in `<output_dir>/model`, which a re-run resumes, and
   the discriminator and generator in `<output_dir>/model/final`;
5. fine-tune the discriminator on a labelled task from the same corpus (what
   a docstring documents: module, class or function) and print its dev
   accuracy beside the majority class's;
6. export the fine-tuned classifier for TF Serving (raw text in, tokenized in
   the graph) and query the export as the server would.
"""

import json
import os
import sys

from absl import flags

from electra_tf.config import FinetuningConfig, load_run_config
from electra_tf.tools.common import PREEMPTED_EXIT_CODE, exits_cleanly_on_bad_input, run_tool
from electra_tf.text.vocabulary import load_vocabulary, save_vocabulary

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "runs/demo", "Where the corpus, data and models go.")
flags.DEFINE_string("config", "electra_tiny", "A run config: a JSON path or a name in configs/.")
flags.DEFINE_integer("train_steps", 300, "Pre-training steps.")
flags.DEFINE_integer("vocab_size", 4096, "WordPiece vocabulary size.")
flags.DEFINE_integer("num_shards", 4, "TFRecord shards (the last one is the evaluation set).")
flags.DEFINE_integer("seed", 0, "Seed for data packing, initialisation and masking.")
flags.DEFINE_integer("max_documents", None, "Use only the first N documents of the corpus (quick runs).")
flags.DEFINE_bool("deterministic", False, "TensorFlow's op determinism: a re-run gives the same weights (slower).")


def _step(message):
    print(f"\n== {message}", flush=True)


def prepare_data(output_dir, max_seq_length, vocab_size, num_shards, seed, max_documents=None):
    """Corpus, vocabulary and shards under `output_dir`; returns (vocab path, train files, eval file, eval
    examples)."""
    from electra_tf.data.default_corpus import write_default_corpus  # (these load TensorFlow: not for --help)
    from electra_tf.data.pretraining_data import build_pretraining_shards
    from electra_tf.text.vocabulary_learning import build_vocabulary

    corpus = os.path.join(output_dir, "corpus.txt")
    if not os.path.exists(corpus):
        _step("writing the default corpus (standard-library docstrings)")
        print(f"{write_default_corpus(corpus, max_documents)} documents → {corpus}")
    vocab_file = os.path.join(output_dir, "vocab.txt")
    if not os.path.exists(vocab_file):
        _step(f"learning a {vocab_size}-token WordPiece vocabulary")
        save_vocabulary(build_vocabulary([corpus], vocab_size, report=lambda line: print(line, flush=True)),
                        vocab_file)
    data_dir = os.path.join(output_dir, "data")
    _step(f"packing {num_shards} TFRecord shards of length {max_seq_length}")
    shards = build_pretraining_shards([corpus], vocab_file, data_dir, max_seq_length=max_seq_length,
                                      num_shards=num_shards, seed=seed)
    print(f"{sum(s['examples'] for s in shards.values())} examples, "
          f"{sum(s['tokens'] for s in shards.values())} tokens in {data_dir}")
    names = sorted(shards)
    eval_files = os.path.join(data_dir, names[-1])
    train_files = ",".join(os.path.join(data_dir, name) for name in names[:-1])
    return vocab_file, train_files, eval_files, shards[names[-1]]["examples"]


def pretrain(model_dir, config_name, vocab_file, train_files, eval_files, eval_examples, train_steps, seed):
    """Pre-trains as `electra-pretrain` does (`run_pretraining`: checks, checkpoints, resume, `final/`), evaluating
    on the whole held-out shard three times; returns its `RunResult`."""
    from electra_tf.pretraining.run import RunOptions, run_pretraining

    model_config, pretraining_config = load_run_config(config_name)
    vocabulary = load_vocabulary(vocab_file)
    model_config = model_config.replace(vocab_size=len(vocabulary))
    pretraining_config = pretraining_config.replace(
        train_steps=train_steps, warmup_steps=min(pretraining_config.warmup_steps, train_steps // 10), seed=seed)
    every = max(1, train_steps // 3)
    options = RunOptions(model_dir=model_dir, vocab_file=vocab_file, train_files=train_files, eval_files=eval_files,
                         eval_every=every, save_every=every, log_every=max(1, train_steps // 6),
                         eval_steps=max(1, eval_examples // pretraining_config.batch_size))
    _step(f"pre-training a tiny ELECTRA ({config_name}: {model_config.num_layers} layers of width "
          f"{model_config.hidden_size}) for {train_steps} steps, as `electra-pretrain --config={config_name} "
          f"--vocab_file={vocab_file} --train_steps={train_steps} --model_dir={model_dir} ...` would")
    return run_pretraining(model_config, pretraining_config, options, vocabulary)


def finetune_docstring_kinds(output_dir, model_dir, seed):
    """Fine-tunes the discriminator to tell module, class and function docstrings apart, with the default
    settings (the learning rate follows the model's width); returns (dev accuracy, majority-class accuracy)."""
    from electra_tf.finetuning import finetune, make_task
    from electra_tf.checkpoints.tokenizer_files import load_tokenizer

    config = FinetuningConfig.for_task("docstring_kinds", max_seq_length=64, epochs=3.0, seed=seed)
    task = make_task(config, load_tokenizer(model_dir),
                     data_dir=os.path.join(output_dir, "docstring_kinds"))
    train, dev = task.load("train"), task.load("dev")
    _step(f"fine-tuning on a labelled task from the same corpus: is a docstring a module's, a class's or a "
          f"function's? ({len(train)} training, {len(dev)} dev examples, {config.epochs:g} epochs)")
    finetuned = finetune(task, model_dir, train, dev_examples=dev)
    model, accuracy, baseline = finetuned.model, finetuned.dev_history[-1]["accuracy"], finetuned.dev_baseline
    model.save_pretrained(os.path.join(output_dir, "docstring_kinds", "classifier"), tokenizer=task.tokenizer,
                          label_names=task.label_names, task=task.name, max_seq_length=task.sequence_length)
    return model, task, accuracy, baseline


def export_and_query(output_dir, model, task, text):
    """Exports the classifier for TF Serving (raw text in) and queries the export as the server would."""
    from electra_tf.export import export_model, query_export

    path = export_model(model, task.tokenizer, os.path.join(output_dir, "exports"), model_name="docstring_kinds",
                        max_seq_length=task.config.max_seq_length, label_names=task.label_names)
    _step(f"exported for TF Serving → {path}")
    answer = query_export(path, [text])
    print(f"serving_default({text[:70]!r}) → {answer['label'][0]} "
          f"(p = {float(answer['probabilities'][0].max()):.2f})")
    return path


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.training.determinism import enable_determinism

    if FLAGS.deterministic:
        enable_determinism(FLAGS.seed)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    _, pretraining_config = load_run_config(FLAGS.config)
    vocab_file, train_files, eval_files, eval_examples = prepare_data(
        FLAGS.output_dir, pretraining_config.max_seq_length, FLAGS.vocab_size, FLAGS.num_shards, FLAGS.seed,
        FLAGS.max_documents)
    model_dir = os.path.join(FLAGS.output_dir, "model")
    result = pretrain(model_dir, FLAGS.config, vocab_file, train_files, eval_files, eval_examples,
                      FLAGS.train_steps, FLAGS.seed)
    if result.stopped_by:  # saved: a re-run resumes
        sys.exit(PREEMPTED_EXIT_CODE)
    _step("held-out metrics after pre-training")
    if result.metrics:
        print(json.dumps(result.metrics, indent=2))
    else:
        print(f"(pre-trained before: its evaluations are in {os.path.join(model_dir, 'logs')}, for TensorBoard)")
    model, task, accuracy, baseline = finetune_docstring_kinds(FLAGS.output_dir, model_dir, FLAGS.seed)
    _step("fine-tuned dev accuracy")
    print(f"ELECTRA fine-tuned: {accuracy:.3f}   majority class: {baseline:.3f}")
    export_and_query(FLAGS.output_dir, model, task, "Return the number of items in the queue.")


def main():
    """The console script `electra-demo`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.demo
    main()
