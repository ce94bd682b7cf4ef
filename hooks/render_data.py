"""MkDocs hook: render tables, charts and figures from files under docs/data/ at build time.

A page binds its data files once in its front matter (`data: x.json`, and `topic: x` for its
figures' short names) and asks for a block with
`<!-- render NAME ... -->` on a line of its own (outside code fences) and for one figure inside a
sentence with `{{ NAME ... }}` (syntax: renderers/page.py); the `renderers` package
(hooks/renderers/, installed with the project) registers the names. An unknown name, argument,
field or row, a missing data file or a renderer error fails the build: no page shows a stale,
empty or typed figure.
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
        data, topic = page.meta.get("data"), page.meta.get("topic")
        return (render_markdown(markdown, docs_dir, page.file.src_uri, data, topic)
                + provenance(markdown, docs_dir, page.file.src_uri, data, topic))
    except RenderError as exc:  # names the page and the placeholder already
        raise PluginError(str(exc)) from exc
    except (ValueError, OSError) as exc:
        raise PluginError(f"{page.file.src_uri}: {exc}") from exc


def on_page_context(context, page, config, nav):
    # Notebook pages have no front matter: take their description from the notebook's metadata.
    if page.file.src_uri.endswith(".ipynb") and not page.meta.get("description"):
        notebook = json.loads(Path(page.file.abs_src_path).read_text())
        description = notebook.get("metadata", {}).get("description")
        if description:
            page.meta["description"] = description
    return context
