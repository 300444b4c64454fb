"""What the report takes from a study's README (``experiments/<study>/README.md``): its protocol choices and
ambiguities, and the section that describes an experiment's figures; rendered to HTML with markdown-it-py.

Sections are found by their headings, never by a study's name: the protocol choices are the sections whose heading
matches :data:`CHOICES` (with their subsections); a figure's description is the most specific section whose heading
names the figure or its experiment in backquotes (`` `<figure>` ``, `` `<experiment>` ``) and that describes the
original: neither it nor a section it sits in is about something else (:data:`NOT_ORIGINAL`: our reproduction
results, the claims and verdicts, the protocol choices), so a figure never stands beside our own account of it.
Links to files of the repository are shown as paths, not links (the site is read away from the checkout); links to
the web are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CHOICES = re.compile(r"protocol|ambigu|choice|transcription|deviation|not done|not reproduced", re.IGNORECASE)
#: Headings of sections that describe something other than the original figures: our results, the claims and how
#: they are judged, the protocol choices and ambiguities (:data:`CHOICES`), what was not done.
NOT_ORIGINAL = re.compile(r"result|reproduc|claim|verdict|gap|benchmark|" + CHOICES.pattern, re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Section:
    """A README section: heading level (1-6), heading text, and its Markdown up to the next heading of the same or
    a higher level (subsections included)."""

    level: int
    title: str
    markdown: str


@cache
def sections(path: Path) -> tuple[Section, ...]:
    """Every section of the Markdown file ``path`` (none when it does not exist)."""
    if not path.is_file():
        return ()
    lines = path.read_text(encoding="utf-8").splitlines()
    heads: list[tuple[int, int, str]] = []  # (line index, level, title)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            heads.append((i, len(m.group(1)), m.group(2)))
    out = []
    for n, (start, level, title) in enumerate(heads):
        end = next((i for i, lv, _ in heads[n + 1:] if lv <= level), len(lines))
        out.append(Section(level, title, "\n".join(lines[start + 1:end]).strip("\n")))
    return tuple(out)


def choices(path: Path) -> list[Section]:
    """The protocol-choices and ambiguities sections of a README (a matched section's subsections come with it,
    not again on their own)."""
    out: list[Section] = []
    covered_below: int | None = None  # level of the last matched section, while inside it
    for sec in sections(path):
        if covered_below is not None and sec.level > covered_below:
            continue
        covered_below = None
        if CHOICES.search(sec.title):
            out.append(sec)
            covered_below = sec.level
    return out


def figure_section(path: Path, experiment: str, figure: str | None = None) -> Section | None:
    """The section of the README describing the original of a figure: the most specific one whose heading names
    ``figure`` in backquotes, else ``experiment``, among the sections neither under nor titled by a heading of
    :data:`NOT_ORIGINAL` (None when none qualifies: the report then says the README has no such section)."""
    describing: list[Section] = []
    above: list[tuple[int, bool]] = []  # (level, about something else) of the sections enclosing the current one
    for sec in sections(path):
        while above and above[-1][0] >= sec.level:
            above.pop()
        other = bool(NOT_ORIGINAL.search(sec.title)) or any(o for _, o in above)
        above.append((sec.level, other))
        if not other:
            describing.append(sec)
    for name in (figure, experiment):
        hits = [s for s in describing if name and f"`{name}`" in s.title]
        if hits:
            return max(hits, key=lambda s: s.level)
    return None


@cache
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _is_web(href: str) -> bool:
    return bool(re.match(r"^(https?:|mailto:)", href))


def inline_html(markdown: str) -> str:
    """HTML of one line of Markdown (a heading's text: `code`, emphasis), raw HTML escaped."""
    return _parser().renderInline(markdown)


def to_html(markdown: str, *, shift: int = 0) -> str:
    """HTML of ``markdown``, headings ``shift`` levels deeper (at most h6); raw HTML is escaped; a link to anything
    but the web becomes its text with the target as a tooltip (the site must have no broken link)."""
    md = _parser()
    tokens = md.parse(markdown)
    for tok in tokens:
        if tok.type in ("heading_open", "heading_close") and shift:
            tok.tag = f"h{min(6, int(tok.tag[1]) + shift)}"
        local: list[bool] = []  # per open link: whether it was turned into a span (its close must follow)
        for child in tok.children or []:
            if child.type == "link_open":
                target = str(child.attrGet("href") or "")
                local.append(not _is_web(target))
                if local[-1]:
                    child.tag = "span"
                    child.attrs = {"class": "repo-path", "title": f"in the repository: {target}"}
            elif child.type == "link_close" and local and local.pop():
                child.tag = "span"
            elif child.type == "image":
                child.type = "text"
                child.content = f"[image: {child.content or child.attrGet('src')}]"
    return md.renderer.render(tokens, md.options, {})
