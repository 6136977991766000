"""`ElectraGenerator`: a small masked-LM tied to the word embeddings (Hugging Face's `ElectraForMaskedLM`), its logits
computed only at the masked positions, as the original.
"""

import keras

from electra_tf.layers.heads import masked_lm_head
from electra_tf.models.base import ElectraNetwork, as_config, model_inputs
from electra_tf.models.encoder import ElectraModel


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraGenerator(ElectraNetwork):
    """Masked-LM `logits` `[batch, predictions, vocab]` at the `mask_positions` input `[batch, predictions]`.

    Args:
        embedding: the discriminator's `ElectraEmbedding` to share (the original ties the whole block).
        backbone: an `ElectraModel` to run instead of a new one (the paper's "tie all weights").

    Example:
    >>> import numpy as np
    >>> from electra_tf import ElectraConfig, ElectraGenerator
    >>> config = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=16,
    ...                        num_layers=1, num_heads=1, intermediate_size=64)
    >>> batch = {"input_ids": np.array([[2, 4, 9, 3]]),
    ...          "attention_mask": np.ones((1, 4), "int32"),
    ...          "token_type_ids": np.zeros((1, 4), "int32"),
    ...          "mask_positions": np.array([[1, 2]])}
    >>> ElectraGenerator(config)(batch)["logits"].shape
    TensorShape([1, 2, 100])
    """

    hf_class = "ElectraForMaskedLM"

    def __init__(self, config, embedding=None, output_hidden_states=False, backbone=None, **kwargs):
        config = as_config(config)
        if backbone is None:
            backbone = ElectraModel(config, embedding=embedding,
                                    output_hidden_states=output_hidden_states, name="electra")
        elif embedding is not None or backbone.config != config:
            raise ValueError("a shared backbone brings its own embedding and must have the generator's config")
        head = masked_lm_head(backbone.embedding.word_embeddings, config)
        inputs = model_inputs()
        inputs["mask_positions"] = keras.Input(shape=(None,), dtype="int32", name="mask_positions")
        encoder_inputs = {name: inputs[name] for name in ("input_ids", "attention_mask", "token_type_ids")}
        encoded = backbone(encoder_inputs)
        outputs = {**encoded, "logits": head(encoded["last_hidden_state"], mask_positions=inputs["mask_positions"])}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.keep_encoder_call(encoder_inputs, encoded)
        self.config = config
        self.output_hidden_states = output_hidden_states
        self.backbone = backbone
        self.head = head

    def get_config(self):
        return {**super().get_config(), "output_hidden_states": self.output_hidden_states}
