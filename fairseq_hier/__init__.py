"""fairseq-hier: hierarchical Transformers for long and multi-document inputs.

Load with ``--user-dir path/to/fairseq_hier`` or after ``pip install -e .`` with
``--user-dir $(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')``.
Importing the package registers, by name:

- task ``hierarchical_summarization`` (fairseq_hier/tasks/hierarchical_summarization.py)
- models/architectures ``pht``, ``pht_1layer``, ``vht``, ``vht_1layer``
  (fairseq_hier/models/hierarchical_transformer.py)
- task ``attention_prediction`` (fairseq_hier/tasks/attention_prediction.py), model/architecture
  ``attention_predictor`` (fairseq_hier/models/attention_predictor.py) and criterion
  ``attention_mse`` (fairseq_hier/criterions/attention_mse.py): the attention-prediction model of
  attention alignment (001 Sec. 4.2.1)
"""

from . import compat

compat.patch_checkpoint_loading()
compat.patch_ngram_blocking()
compat.patch_batch_by_size()

from . import criterions, models, tasks  # noqa: E402,F401  (registration side effects)

__version__ = "0.1.0"
