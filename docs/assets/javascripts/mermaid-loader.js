/* Load the site's own copy of Mermaid (mermaid.min.js, 3.5 MB) only on pages with a diagram.
 *
 * Material for MkDocs renders each `.mermaid` block once the document is loaded. It uses a
 * global `mermaid` when one exists and otherwise fetches Mermaid from a CDN. This script runs
 * before that (it is listed in extra_javascript, which runs before DOMContentLoaded) and, only
 * when the page has a diagram, sets `mermaid` to a small stand-in with the two calls Material
 * makes, `initialize` and `render`. The stand-in starts loading mermaid.min.js from this site
 * and forwards the calls once it has arrived. Pages without a diagram download nothing more.
 */
(function () {
  "use strict";
  if (typeof window.mermaid !== "undefined" && !(window.mermaid instanceof Element)) return;
  if (!document.querySelector(".mermaid")) return;

  var src = new URL("mermaid.min.js", document.currentScript.src).href;
  var settings = {};
  var loaded = new Promise(function (resolve, reject) {
    var script = document.createElement("script");
    script.src = src;
    script.onload = function () { resolve(window.mermaid); };
    script.onerror = function () { reject(new Error("could not load " + src)); };
    document.head.appendChild(script);
  }).then(function (mermaid) {
    mermaid.initialize(settings);
    return mermaid;
  });

  window.mermaid = {
    initialize: function (options) { settings = options; },
    render: function (id, text) {
      return loaded.then(function (mermaid) { return mermaid.render(id, text); });
    }
  };
})();
