"""The registry of the HAT recipes' published summarization layouts: format name (``--format``
of ``fairseq-hier-sentence-bos``, ``examples/common/bart_prepare.sh``) -> reader. Each reader
yields :class:`~fairseq_hier.readers.records.Record`\\ s in file order. Imports the layout
modules of this package.
"""

from typing import Callable, Dict, Iterator

from fairseq_hier.readers.cnndm import read_presumm, read_source_target
from fairseq_hier.readers.cohan import read_cohan
from fairseq_hier.readers.qmsum import read_qmsum
from fairseq_hier.readers.records import Record
from fairseq_hier.readers.samsum import read_samsum

READERS: Dict[str, Callable[..., Iterator[Record]]] = {
    "cohan": read_cohan,
    "source_target": read_source_target,
    "samsum": read_samsum,
    "qmsum": read_qmsum,
    "presumm": read_presumm,
}
#: the readers that take ``max_span_words`` (their sources may hold ``<t>`` spans)
SPAN_READERS = ("cohan", "source_target", "presumm")
