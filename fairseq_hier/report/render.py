"""The report's blocks, and their two renderings: one self-contained HTML page and Markdown.

    write_report(blocks, "demo_work/report", title="fairseq-hier demo")
    # -> demo_work/report/report.html, report.md, report_files/*.png

Blocks are plain dataclasses (:class:`Heading`, :class:`Text`, :class:`Note`, :class:`Code`,
:class:`Table`, :class:`Image`); :mod:`fairseq_hier.report.sections` builds them. HTML: inline
CSS, every image a ``data:image/png;base64`` URI, no external CSS, script, font or link, so the
page can be mailed or archived alone. A tiny inline script counts, once the page has loaded, the
``<img>`` elements that did not decode (``naturalWidth == 0``) and sets ``document.title`` to
``report: images ok N`` or ``report: images failed K/N``: ``scripts/report_check.sh`` reads it
from headless Chromium's ``--dump-dom``. Markdown: GitHub pipe tables, images written as PNG
files under ``report_files/`` and linked relatively.
"""

import base64
import html
import os
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Union

from ..errors import HierError
from ..io import check_outputs, staged_outputs

FILES_DIR = "report_files"


@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Text:
    text: str


@dataclass
class Note:
    """Something missing or to be read with care: shown boxed."""
    text: str


@dataclass
class Code:
    """A command line to run."""
    text: str


@dataclass
class Table:
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    caption: Optional[str] = None
    align: Optional[str] = None  # "l"/"r" per column; default: first left, the others right

    def alignment(self) -> str:
        return self.align or "l" + "r" * (len(self.header) - 1)


@dataclass
class Image:
    name: str  # file stem, unique in the report (letters, digits, '-', '_')
    png: bytes
    caption: str


Block = Union[Heading, Text, Note, Code, Table, Image]

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1150px; color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #ddd; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #eee; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f3f3f3; } .l { text-align: left; } .r { text-align: right; }
caption { caption-side: bottom; text-align: left; font-size: .85em; color: #555; padding: .3em 0; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: .4em .8em; margin: .6em 0; }
pre { background: #f6f8fa; padding: .6em .8em; overflow-x: auto; font-size: .88em; }
figure { display: inline-table; vertical-align: top; margin: .6em 1em .6em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { display: table-caption; caption-side: bottom; font-size: .85em; color: #555; }
"""

# Runs after every image has loaded or failed: the title tells a headless browser the outcome.
CHECK_SCRIPT = """
window.addEventListener("load", function () {
  var images = document.images, failed = 0;
  for (var i = 0; i < images.length; i++) {
    if (!images[i].complete || images[i].naturalWidth === 0) { failed++; }
  }
  document.title = failed ? "report: images failed " + failed + "/" + images.length
                          : "report: images ok " + images.length;
});
"""


def _check_names(blocks: Sequence[Block]) -> None:
    names = [b.name for b in blocks if isinstance(b, Image)]
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise HierError(f"image name {name!r}: letters, digits, '-' and '_' only")
    if len(set(names)) != len(names):
        raise HierError("two images of the report have the same name")


def to_html(blocks: Sequence[Block], title: str) -> str:
    """The self-contained page."""
    esc = html.escape
    parts = [f"<h1>{esc(title)}</h1>"]
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{esc(b.text)}</h{b.level}>")
        elif isinstance(b, Text):
            parts.append(f"<p>{esc(b.text)}</p>")
        elif isinstance(b, Note):
            parts.append(f'<p class="note">{esc(b.text)}</p>')
        elif isinstance(b, Code):
            parts.append(f"<pre>{esc(b.text)}</pre>")
        elif isinstance(b, Table):
            align = b.alignment()
            head = "".join(f'<th class="{a}">{esc(h)}</th>' for h, a in zip(b.header, align))
            body = "".join("<tr>" + "".join(f'<td class="{a}">{esc(c)}</td>'
                                            for c, a in zip(row, align)) + "</tr>"
                           for row in b.rows)
            caption = f"<caption>{esc(b.caption)}</caption>" if b.caption else ""
            parts.append(f"<table>{caption}<thead><tr>{head}</tr></thead>"
                         f"<tbody>{body}</tbody></table>")
        elif isinstance(b, Image):
            data = base64.b64encode(b.png).decode("ascii")
            parts.append(f'<figure><img alt="{esc(b.caption)}" '
                         f'src="data:image/png;base64,{data}">'
                         f"<figcaption>{esc(b.caption)}</figcaption></figure>")
        else:
            raise TypeError(f"not a report block: {b!r}")
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n"
            f"<script>{CHECK_SCRIPT}</script>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: Sequence[Block], title: str) -> str:
    """Markdown; images are linked as ``report_files/<name>.png`` (written by
    :func:`write_report`)."""
    parts = [f"# {title}"]
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Text):
            parts.append(b.text)
        elif isinstance(b, Note):
            parts.append(f"> **Note:** {b.text}")
        elif isinstance(b, Code):
            parts.append(f"```\n{b.text}\n```")
        elif isinstance(b, Table):
            lines = ["| " + " | ".join(map(_md_cell, b.header)) + " |",
                     "|" + "|".join(":--" if a == "l" else "--:" for a in b.alignment()) + "|"]
            lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in b.rows]
            if b.caption:
                lines.append(f"\n*{b.caption}*")
            parts.append("\n".join(lines))
        elif isinstance(b, Image):
            parts.append(f"![{b.caption}]({FILES_DIR}/{b.name}.png)\n\n*{b.caption}*")
        else:
            raise TypeError(f"not a report block: {b!r}")
    return "\n\n".join(parts) + "\n"


def report_paths(output_dir: str) -> List[str]:
    """report.html and report.md under ``output_dir``."""
    return [os.path.join(output_dir, "report.html"), os.path.join(output_dir, "report.md")]


def check_report_outputs(output_dir: str, inputs: Iterable[str] = ()) -> None:
    """:func:`check_outputs` of ``--output-dir`` (report_files/ included), before any score."""
    check_outputs("--output-dir", output_dir, report_paths(output_dir), inputs)
    files = os.path.join(output_dir, FILES_DIR)
    if os.path.lexists(files) and not os.path.isdir(files):
        raise HierError(f"--output-dir {output_dir}: {files} is a file (the folder of the "
                        f"report's images is expected)")


def write_report(blocks: Sequence[Block], output_dir: str, title: str,
                 inputs: Iterable[str] = ()) -> List[str]:
    """report.html, report.md and report_files/*.png under ``output_dir``, moved into place
    together (:class:`fairseq_hier.io.OutputSet`; none of them may be one of ``inputs``); returns
    the paths of the two documents. PNGs of an earlier report that this one does not write are
    then removed (report_files/ holds exactly the Markdown's images)."""
    _check_names(blocks)
    files = os.path.join(output_dir, FILES_DIR)
    images = {f"{b.name}.png": b.png for b in blocks if isinstance(b, Image)}
    paths = report_paths(output_dir)
    texts = (to_html(blocks, title), to_markdown(blocks, title))
    with staged_outputs([*paths, *(os.path.join(files, name) for name in images)],
                        inputs) as staged:
        for tmp, text in zip(staged, texts):
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
        for tmp, png in zip(staged[len(paths):], images.values()):
            with open(tmp, "wb") as f:
                f.write(png)
    for stale in set(os.listdir(files) if os.path.isdir(files) else ()) - set(images):
        if stale.endswith(".png"):
            os.remove(os.path.join(files, stale))
    return paths
