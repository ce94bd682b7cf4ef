/* Small fixes to markup that axe-core reports (tests/site/ runs it on every page).
 * 1. Material's search overlay has role="dialog" but no accessible name: give it one.
 * 2. A wide table (Material wraps each in .md-typeset__scrollwrap) or a notebook code cell
 *    scrolls sideways in a box that a keyboard user cannot reach. Each such box that overflows
 *    becomes focusable (arrow keys then scroll it) and is named. Boxes are re-checked when their
 *    size changes, for instance when a content tab that holds one is opened. */
(function () {
  "use strict";
  var search = document.querySelector(".md-search[role=dialog]");
  if (search && !search.hasAttribute("aria-label")) {
    search.setAttribute("aria-label", "Search");
  }

  var SCROLLERS = ".md-typeset__scrollwrap, .jupyter-wrapper .highlight-ipynb";

  function mark(box) {
    var overflows = box.scrollWidth > box.clientWidth + 1;
    if (overflows && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.matches(".md-typeset__scrollwrap")
        ? "Table, scrolls sideways" : "Code, scrolls sideways");
      box.setAttribute("data-scroll-region", "");
    } else if (!overflows && box.hasAttribute("data-scroll-region")) {
      ["tabindex", "role", "aria-label", "data-scroll-region"].forEach(function (name) {
        box.removeAttribute(name);
      });
    }
  }

  var observer = typeof ResizeObserver === "function"
    ? new ResizeObserver(function (entries) {
      entries.forEach(function (entry) { mark(entry.target); });
    })
    : null;

  function scan() {
    var boxes = document.querySelectorAll(SCROLLERS);
    for (var i = 0; i < boxes.length; i++) {
      mark(boxes[i]);
      if (observer) observer.observe(boxes[i]);
    }
  }

  scan();
  document.addEventListener("DOMContentLoaded", scan);  // after Material has set up the page
  window.addEventListener("load", scan);
})();
