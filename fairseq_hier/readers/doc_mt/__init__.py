"""Readers of the published document-level MT layouts (paper 004 Sec. 4.2) -> lists of
:class:`~fairseq_hier.readers.documents.Document`: one module per layout (:mod:`.mteval`: WMT
fake SGML and IWSLT TED XML; :mod:`.wmt_xml`: WMT21+ XML; :mod:`.doc_split`: document-split
TSV or plain files; :mod:`.folders`: document folders; :mod:`.ted_tags`: IWSLT ``train.tags``;
:mod:`.jsonl`: JSON lines of one's own), what they share (:mod:`.common`) and the registry
``--format`` -> reader (:mod:`.layouts`). The layouts and the text policy are in
docs/data-formats.md, section "Document translation inputs". Imports the standard library and
the rest of :mod:`fairseq_hier.readers`.
"""
