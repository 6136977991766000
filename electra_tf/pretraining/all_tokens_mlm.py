"""All-Tokens MLM (Clark et al., 2020, §3.5): every token's identity predicted from the corrupted batch with
the copy mechanism (`objectives.copy_log_probabilities`): the RTD head's sigmoid is the copy probability.

Example:
>>> AllTokensMLM().trains_rtd
True
"""

import tensorflow as tf

from electra_tf.pretraining import objectives
from electra_tf.pretraining.objective import ReplacedTokenDetection
from electra_tf.pretraining.replace_mlm import ReplaceMLM
from electra_tf.training.flops import encoder_forward_flops, masked_lm_head_flops, rtd_head_flops


class AllTokensMLM(ReplaceMLM):
    """Objective `all_tokens_mlm`: the kept masked LM at every position, mixed with copying the input."""

    trains_rtd = True
    untrained_variables = ReplacedTokenDetection.untrained_variables  # the RTD head is the copy gate

    def discriminated_outputs(self, discriminated, outputs):
        ids = outputs.corrupted_ids
        every_position = tf.broadcast_to(tf.range(tf.shape(ids)[1]), tf.shape(ids))
        logits = self.main_mlm_head(discriminated["last_hidden_state"], mask_positions=every_position)
        return {"main_mlm_logits": tf.cast(logits, tf.float32)}

    main_mlm_loss = staticmethod(objectives.copy_mlm_loss)

    @staticmethod
    def main_mlm_predictions(outputs):
        return outputs.input_ids, objectives.copy_predictions(outputs), outputs.real_tokens

    def main_forward_flops(self, config, pretraining_config):
        return (encoder_forward_flops(config, pretraining_config.max_seq_length) + rtd_head_flops(config)
                + masked_lm_head_flops(config))
