/* Small fixes to markup that axe-core reports (tests/site/ runs it on every page).
 * 1. Material's search overlay has role="dialog" but no accessible name: give it one.
 * 2. A wide table (Material wraps each in .md-typeset__scrollwrap) or a notebook code cell
 *    scrolls sideways in a box that a keyboard user cannot reach. Each such box that overflows
 *    becomes focusable (arrow keys then scroll it) and is named; a table that scrolls also gets
 *    a visible cue above it (and a shadow at its edge, extra.css). Boxes are re-checked when their
 *    size changes, for instance when a content tab that holds one is opened.
 * 3. A table cell of long notes is marked, so that a phone gives it a reading width (extra.css). */
(function () {
  "use strict";
  var search = document.querySelector(".md-search[role=dialog]");
  if (search && !search.hasAttribute("aria-label")) {
    search.setAttribute("aria-label", "Search");
  }

  var SCROLLERS = ".md-typeset__scrollwrap, .jupyter-wrapper .highlight-ipynb, .md-typeset .mermaid";

  function mark(box) {
    var overflows = box.scrollWidth > box.clientWidth + 1;
    if (overflows && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.matches(".md-typeset__scrollwrap")
        ? "Table, scrolls sideways"
        : box.matches(".mermaid") ? "Diagram, scrolls sideways" : "Code, scrolls sideways");
      box.setAttribute("data-scroll-region", "");
      hint(box, true);
    } else if (!overflows) {
      if (box.hasAttribute("data-scroll-region")) {
        ["tabindex", "role", "aria-label", "data-scroll-region"].forEach(function (name) {
          box.removeAttribute(name);
        });
      }
      hint(box, false);  // also a cue left by the element this one replaced (a drawn diagram)
    }
  }

  // A visible cue above a table or diagram that scrolls (a diagram does on a phone): a reader
  // must not take the part they can see for the whole. Code blocks scroll without one.
  function hint(box, show) {
    if (!box.matches(".md-typeset__scrollwrap, .mermaid")) return;
    var prev = box.previousElementSibling;
    var has = prev && prev.classList.contains("scroll-hint");
    if (show && !has) {
      var p = document.createElement("p");
      p.className = "scroll-hint";
      p.setAttribute("aria-hidden", "true");
      p.textContent = box.matches(".mermaid")
        ? "Wide diagram: scroll sideways to see all of it \u2192"
        : "Wide table: scroll sideways for more columns \u2192";
      box.parentNode.insertBefore(p, box);
    } else if (!show && has) {
      prev.remove();
    }
  }

  var observer = typeof ResizeObserver === "function"
    ? new ResizeObserver(function (entries) {
      entries.forEach(function (entry) { mark(entry.target); });
    })
    : null;

  // A table cell of long notes (extra.css gives it a reading width on a phone).
  var LONG_CELL = 160;  // characters

  function scan() {
    var cells = document.querySelectorAll(".md-typeset table:not([class]) td:not([data-long-cell])");
    for (var k = 0; k < cells.length; k++) {
      if (cells[k].textContent.length > LONG_CELL) cells[k].setAttribute("data-long-cell", "");
    }
    var boxes = document.querySelectorAll(SCROLLERS);
    for (var i = 0; i < boxes.length; i++) {
      mark(boxes[i]);
      if (observer) observer.observe(boxes[i]);
    }
  }

  scan();
  document.addEventListener("DOMContentLoaded", scan);  // after Material has set up the page
  // Material swaps each Mermaid block for a new element once the diagram is drawn.
  if (typeof MutationObserver === "function") {
    new MutationObserver(function (records) {
      if (records.some(function (r) { return r.addedNodes.length; })) scan();
    }).observe(document.documentElement, { childList: true, subtree: true });
  }
  window.addEventListener("load", scan);
})();
