"""Converts ELECTRA checkpoints between our format, Hugging Face folders and original Google checkpoints.

    # A released Google checkpoint → our pre-training folder (for --init_checkpoint or from_pretrained)
    python -m electra_tf.tools.convert_checkpoint --input=electra_small/model.ckpt-1000000 --to=ours \\
        --output=models/electra_small
    # A Hugging Face discriminator + generator pair → our pre-training folder
    python -m electra_tf.tools.convert_checkpoint --input=hf/electra-small-discriminator \\
        --input_generator=hf/electra-small-generator --to=ours --output=models/electra_small
    # Ours → Hugging Face (both networks: <output>/discriminator and <output>/generator)
    python -m electra_tf.tools.convert_checkpoint --input=runs/small/final --to=huggingface \\
        --networks=both --output=hf/my-electra-small
    # Ours or Hugging Face → Google TF1 names (the discriminator and generator in one checkpoint)
    python -m electra_tf.tools.convert_checkpoint --input=runs/small/final --to=google --output=google/model.ckpt

--input is anything `from_pretrained` takes: our run folder (`<model_dir>/final`)
or `.keras` file, a Hugging Face folder (`config.json` + `model.safetensors`;
ELECTRA, or BERT as an encoder) or a Google checkpoint prefix or folder. The
weights are loaded strictly into our models and written from them, so a
conversion checks them on the way. The vocabulary beside the input (or
--vocab_file) is written beside the output. A Google checkpoint's config is
inferred from its shapes (64-wide heads, as all released models) unless
our `run_config.json` (`config.json` in folders written before it was so named)
sits beside it or --config names one.
`pytorch_model.bin` is never unpickled: convert it to safetensors first (the
error says how).
"""

import os

from absl import flags

from electra_tf.config import load_run_config
from electra_tf.util.folder_lock import lock_folder
from electra_tf.tools.common import (
    command_line,
    ensure_new_output,
    exits_cleanly_on_bad_input,
    resolve_checkpoint_flags,
    run_tool,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("input", None, "The checkpoint to convert (our folder or .keras, Hugging Face folder, Google "
                    "prefix or folder).", required=True)
flags.DEFINE_string("input_generator", None, "With a Hugging Face discriminator --input: its generator's folder.")
flags.DEFINE_enum("to", None, ["ours", "huggingface", "google"], "The output format.", required=True)
flags.DEFINE_string("output", None, "Output folder (Google: a checkpoint prefix, or a folder for model.ckpt).",
                    required=True)
flags.DEFINE_enum("networks", "discriminator", ["discriminator", "generator", "both"],
                  "--to=huggingface from a pre-training pair: which network(s) to write.")
flags.DEFINE_string("config", None, "A run config (JSON path or name in configs/) for a Google checkpoint "
                    "without run_config.json, instead of inferring it.")
flags.DEFINE_string("vocab_file", None, "The vocabulary, when it is not beside --input.")
flags.DEFINE_bool("overwrite", False, "Replace an existing --output.")
flags.DEFINE_enum("dtype", "float32", ["float32", "float16", "bfloat16"],
                  "--to=huggingface: the weights' dtype in model.safetensors (ours and Google hold float32).")


@exits_cleanly_on_bad_input
def run(argv):
    del argv
    from electra_tf.checkpoints.convert import convert  # imports TensorFlow: not for --help

    from electra_tf.checkpoints.model_card import write_model_card

    base_model, command = FLAGS.input, command_line("electra-convert-checkpoint")
    resolve_checkpoint_flags("input", "input_generator")
    lock_folder(FLAGS.output)  # one conversion per output: another one is refused, naming its pid
    ensure_new_output(FLAGS.output, FLAGS.overwrite)
    if FLAGS.to == "google":  # a prefix is no file of its own: its index says it exists
        ensure_new_output(FLAGS.output + ".index", FLAGS.overwrite)
    run_config = load_run_config(FLAGS.config) if FLAGS.config else None
    written = convert(FLAGS.input, FLAGS.output, FLAGS.to, input_generator=FLAGS.input_generator,
                      networks=FLAGS.networks, run_config=run_config, vocab_file=FLAGS.vocab_file, dtype=FLAGS.dtype)
    if os.path.isdir(FLAGS.output):  # a folder (not a Google checkpoint prefix): its model card
        write_model_card(FLAGS.output, base_model=base_model, command=command,
                         model_format="safetensors" if FLAGS.to == "huggingface" else FLAGS.to)
    print(f"converted {FLAGS.input} → {', '.join(written)} ({FLAGS.to})", flush=True)


def main():
    """The console script `electra-convert-checkpoint`."""
    run_tool(run, __name__)


if __name__ == "__main__":  # python -m electra_tf.tools.convert_checkpoint
    main()
