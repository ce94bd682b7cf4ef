/* Load the site's own copy of Mermaid (mermaid.min.js, 3.5 MB) only on pages with a diagram,
 * and draw the diagrams without holding up the page.
 *
 * Material for MkDocs renders each `.mermaid` block once the document is loaded. It uses a
 * global `mermaid` when one exists and otherwise fetches Mermaid from a CDN. This script runs
 * before that (it is listed in extra_javascript, which runs before DOMContentLoaded) and, only
 * when the page has a diagram, sets `mermaid` to a small stand-in with the two calls Material
 * makes, `initialize` and `render`. Each `render` waits until its diagram is within a screen of
 * the viewport, or until the browser is idle after the page has loaded, whichever comes first;
 * then it loads mermaid.min.js from this site (once) and forwards the call. So the page shows
 * before Mermaid is parsed, and every diagram is drawn soon after, also those far down: a
 * printed page or a saved PDF has them all. `beforeprint` draws any still waiting.
 * Pages without a diagram download nothing more.
 */
(function () {
  "use strict";
  if (typeof window.mermaid !== "undefined" && !(window.mermaid instanceof Element)) return;
  var blocks = Array.prototype.slice.call(document.querySelectorAll(".mermaid"));
  if (!blocks.length) return;

  var src = new URL("mermaid.min.js", document.currentScript.src).href;
  var PRINT_RULE = "<style>@media print { svg { max-width: 100% !important; height: auto !important; } }</style>";
  var settings = {};
  var loading = null;

  function load() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = src;
        script.onload = function () { resolve(window.mermaid); };
        script.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(script);
      }).then(function (mermaid) {
        mermaid.initialize(settings);
        return mermaid;
      });
    }
    return loading;
  }

  // Diagrams not yet near the screen: their release functions, run once the page is idle.
  var waiting = [];
  var released = false;

  function releaseAll() {
    released = true;
    waiting.splice(0).forEach(function (release) { release(); });
  }

  // Resolves once `element` is within one viewport height of the screen, or at releaseAll.
  function nearView(element) {
    if (released || !element || typeof IntersectionObserver !== "function") return Promise.resolve();
    return new Promise(function (resolve) {
      var observer = new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) release();
      }, { rootMargin: "100% 0px" });
      function release() {
        observer.disconnect();
        resolve();
      }
      waiting.push(release);
      observer.observe(element);
    });
  }

  window.addEventListener("load", function () {
    if (typeof window.requestIdleCallback === "function") {
      window.requestIdleCallback(releaseAll, { timeout: 3000 });
    } else {
      setTimeout(releaseAll, 1000);
    }
  });
  window.addEventListener("beforeprint", releaseAll);

  // Material passes a diagram's text, not its element: find the block that holds that text.
  function blockFor(text) {
    for (var i = 0; i < blocks.length; i++) {
      if (blocks[i] && blocks[i].textContent === text) {
        var block = blocks[i];
        blocks[i] = null;
        return block;
      }
    }
    return null;
  }

  window.mermaid = {
    // Diagrams at their own size (scrolling when wider than the column, extra.css): with
    // useMaxWidth a wide diagram was shrunk until its labels were 7-9 px.
    initialize: function (options) {
      settings = Object.assign({}, options, {
        flowchart: Object.assign({}, options && options.flowchart, { useMaxWidth: false }),
        sequence: Object.assign({}, options && options.sequence, { useMaxWidth: false })
      });
    },
    // On paper a diagram shrinks to the printable width (nothing scrolls there). Material draws
    // it into a closed shadow root, out of reach of the site's stylesheet: the rule goes inside.
    render: function (id, text) {
      return nearView(blockFor(text)).then(load).then(function (mermaid) {
        return mermaid.render(id, text);
      }).then(function (result) {
        result.svg = result.svg.replace(/<svg\b[^>]*>/, function (open) {
          return open + PRINT_RULE;
        });
        return result;
      });
    }
  };
})();
