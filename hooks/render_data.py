"""MkDocs hook: render tables and charts from files under docs/data/ at build time.

A page asks for a rendering with a one-line comment, outside code fences:

    <!-- render NAME key=value key="value with spaces" -->

NAME is a function registered with ``@renderer("NAME")`` in a module of the
``renderers`` package (hooks/renderers/, installed with the project). It receives the docs
folder and the key=value pairs and returns Markdown/HTML that replaces the comment: a table, a
chart, a details box. Pages own their sentences; a figure inside a sentence is a placeholder
that renders one number from a results file:

    The fastest kernel reaches {{ saxpy.share variant=cuda_c_float4 }} of the copy.

where ``saxpy.share`` is registered with ``@value("saxpy.share")`` and returns a short string
(``91.9 %``). An unknown NAME, a missing data file or a renderer error fails the build, so a
page can never show a stale or hand-typed figure in place of the measured one.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
# the project's package (uv installs it)
from renderers.page import RenderError, provenance, render_markdown, shown_files

ROOT = Path(__file__).resolve().parents[1]


def on_files(files, config):
    """Serve every snippet a page shows with the site, at /snippets/..., for download."""
    shown = {f for page in Path(config["docs_dir"]).rglob("*.md")
             for f in shown_files(page.read_text())}
    for rel in sorted(shown):
        files.append(File.generated(config, rel, abs_src_path=str(ROOT / rel)))
    return files


def on_page_markdown(markdown, page, config, files):
    docs_dir = Path(config["docs_dir"])
    try:
        return (render_markdown(markdown, docs_dir, page.file.src_uri)
                + provenance(markdown, docs_dir, page.file.src_uri))
    except (RenderError, ValueError, OSError) as exc:
        raise PluginError(f"{page.file.src_uri}: {exc}") from exc


def on_page_context(context, page, config, nav):
    # Notebook pages have no front matter: take their description from the notebook's metadata.
    if page.file.src_uri.endswith(".ipynb") and not page.meta.get("description"):
        notebook = json.loads(Path(page.file.abs_src_path).read_text())
        description = notebook.get("metadata", {}).get("description")
        if description:
            page.meta["description"] = description
    return context
