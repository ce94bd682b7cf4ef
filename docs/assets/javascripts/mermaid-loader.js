/* Load the site's own copy of Mermaid (mermaid.min.js, 3.5 MB) only on pages with a diagram,
 * and only once a diagram is about to scroll into view.
 *
 * Material for MkDocs renders each `.mermaid` block once the document is loaded. It uses a
 * global `mermaid` when one exists and otherwise fetches Mermaid from a CDN. This script runs
 * before that (it is listed in extra_javascript, which runs before DOMContentLoaded) and, only
 * when the page has a diagram, sets `mermaid` to a small stand-in with the two calls Material
 * makes, `initialize` and `render`. Each `render` waits until its diagram is within a screen of
 * the viewport, then loads mermaid.min.js from this site (once) and forwards the call. Pages
 * without a diagram download nothing more; a page whose diagrams are further down starts
 * without the cost of parsing Mermaid.
 */
(function () {
  "use strict";
  if (typeof window.mermaid !== "undefined" && !(window.mermaid instanceof Element)) return;
  var blocks = Array.prototype.slice.call(document.querySelectorAll(".mermaid"));
  if (!blocks.length) return;

  var src = new URL("mermaid.min.js", document.currentScript.src).href;
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

  // Resolves once `element` is within one viewport height of the screen.
  function nearView(element) {
    if (!element || typeof IntersectionObserver !== "function") return Promise.resolve();
    return new Promise(function (resolve) {
      var observer = new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) {
          observer.disconnect();
          resolve();
        }
      }, { rootMargin: "100% 0px" });
      observer.observe(element);
    });
  }

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
    render: function (id, text) {
      return nearView(blockFor(text)).then(load).then(function (mermaid) {
        return mermaid.render(id, text);
      });
    }
  };
})();
