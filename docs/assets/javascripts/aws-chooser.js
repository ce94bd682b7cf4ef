/* The instance chooser of the GPUs-on-AWS page, in the browser: the same arithmetic as
 * snippets/aws/choose_instance.py (count_params, lora_params, kv_cache_bytes, model_state_bytes,
 * estimate; usable, split_for, speedup, parallelism_of, option, rank, closest), reading the same two tables,
 * data/aws-instances.csv and data/accelerator-specs.csv, served with the site. Nothing leaves
 * the page. tests/site/test_site_chooser.py fills this form with a table of cases and compares
 * every answer with the CLI's, so the two cannot drift apart unnoticed.
 */
(function () {
  "use strict";
  var form = document.getElementById("aws-chooser");
  if (!form) return;

  var GIB = Math.pow(1024, 3);
  var BYTES = { fp32: 4, bf16: 2, fp16: 2, fp8: 1, int8: 1, int4: 0.5 };
  var ADAM_MOMENTS = 8;  // two fp32 moments per parameter
  var MASTER = 4;        // fp32 master weights, kept when the weights are below fp32
  var ADAPTER = 16;      // a LoRA adapter parameter: fp32 weight, gradient, two Adam moments
  var NF4 = 4.127 / 8;   // QLoRA's frozen weights, 4-bit NormalFloat + double quantisation
  var REFERENCE = "NVIDIA H100 SXM";
  var PCIE_ONLY = "PCIe only";  // the spec table's link for a GPU without NVLink
  var SPLITS = [1, 2, 4, 8];
  var FIGURE = { inference: "bandwidth_gbs", fp32: "fp32_tflops", bf16: "bf16_tflops",
                 fp16: "bf16_tflops", fp8: "fp8_tflops" };
  var FIGURE_NAME = { bandwidth_gbs: "memory bandwidth", fp32_tflops: "FP32 throughput",
                      bf16_tflops: "dense BF16/FP16 tensor throughput",
                      fp8_tflops: "dense FP8 tensor throughput" };
  // choose_instance.MODELS: each preset's shape from its config.json (the page's models excerpt
  // gives the sources): layers, hidden, intermediate, heads, KV heads, head dim, vocabulary,
  // tied embeddings, q/k/v biases.
  var MODELS = {
    "llama-3.1-8b": [32, 4096, 14336, 32, 8, 128, 128256, false, false],
    "llama-3.1-70b": [80, 8192, 28672, 64, 8, 128, 128256, false, false],
    "mistral-7b-v0.3": [32, 4096, 14336, 32, 8, 128, 32768, false, false],
    "qwen2.5-7b": [28, 3584, 18944, 28, 4, 128, 152064, false, true],
    "qwen2.5-72b": [80, 8192, 29568, 64, 8, 128, 152064, false, true]
  };
  var out = document.getElementById("aws-chooser-result");
  var instances = null, specs = null;

  // ------------------------------------------------------------ the tables

  function parseCsv(text) {  // RFC 4180: quoted fields may hold commas, quotes and newlines
    var rows = [], row = [], field = "", quoted = false;
    for (var i = 0; i < text.length; i++) {
      var c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
        else if (c === '"') quoted = false;
        else field += c;
      } else if (c === '"') quoted = true;
      else if (c === ",") { row.push(field); field = ""; }
      else if (c === "\n" || c === "\r") {
        if (c === "\r" && text[i + 1] === "\n") i++;
        row.push(field); rows.push(row); row = []; field = "";
      } else field += c;
    }
    if (field || row.length) { row.push(field); rows.push(row); }
    return rows.filter(function (r) { return r.length > 1 || r[0]; });
  }

  function records(text, need, what) {
    var rows = parseCsv(text), head = rows[0];
    need.forEach(function (c) {
      if (head.indexOf(c) < 0) throw new Error("the " + what + " has no column " + c);
    });
    return rows.slice(1).map(function (cells) {
      var r = {};
      head.forEach(function (name, k) { r[name] = cells[k] || ""; });
      return r;
    });
  }

  function loadInstances(text) {
    return records(text, ["instance_type", "accelerator", "accelerator_count",
                          "accelerator_memory_gib", "on_demand_usd_per_hour", "low_precision",
                          "workloads", "status", "price_as_of"], "instance table")
      .map(function (r) {
        return {
          type: r.instance_type, accelerator: r.accelerator,
          count: Number(r.accelerator_count), memory: Number(r.accelerator_memory_gib),
          price: Number(r.on_demand_usd_per_hour), low: r.low_precision.split(";"),
          workloads: r.workloads.split(";"), status: r.status, asOf: r.price_as_of,
          unconfirmed: (r.unconfirmed || "").split(";").map(function (f) { return f.trim(); })
        };
      });
  }

  function loadSpecs(text) {
    var table = {};
    records(text, ["accelerator", "bandwidth_gbs", "fp32_tflops", "bf16_tflops", "fp8_tflops"],
            "spec table").forEach(function (r) {
      var row = { unconfirmed: (r.unconfirmed || "").split(";").map(function (f) { return f.trim(); }),
                  link: (r.link || "").trim() };
      ["bandwidth_gbs", "fp32_tflops", "bf16_tflops", "fp8_tflops"].forEach(function (c) {
        row[c] = r[c].trim() ? Number(r[c]) : null;
      });
      table[r.accelerator] = row;
    });
    return table;
  }

  function specFor(accelerator) {  // choose_instance.spec_for
    if (specs[accelerator]) return specs[accelerator];
    var variants = Object.keys(specs).filter(function (k) { return k.indexOf(accelerator + " ") === 0; });
    return variants.length === 1 ? specs[variants[0]] : null;
  }

  // ------------------------------------------------------------ the memory

  function countParams(m) {
    var q = m[3] * m[5], kv = m[4] * m[5];
    var attention = m[1] * q + 2 * m[1] * kv + q * m[1] + (m[8] ? q + 2 * kv : 0);
    var perLayer = attention + 3 * m[1] * m[2] + 2 * m[1];
    return m[0] * perLayer + m[1] + m[6] * m[1] * (m[7] ? 1 : 2);
  }

  function loraParams(m, rank) {
    var q = m[3] * m[5], kv = m[4] * m[5], h = m[1], f = m[2];
    var dims = [[h, q], [h, kv], [h, kv], [q, h], [h, f], [h, f], [f, h]];
    return m[0] * rank * dims.reduce(function (s, d) { return s + d[0] + d[1]; }, 0);
  }

  function trainingBytesPerParam(precision) {
    if (precision === "int8" || precision === "int4") {
      throw new Error("full training with Adam is not done in " + precision +
                      "; use fp32, bf16, fp16 or fp8 (int8/int4 are for inference)");
    }
    var w = BYTES[precision];
    return w + w + ADAM_MOMENTS + (w < 4 ? MASTER : 0);
  }

  function estimate(job) {  // choose_instance.estimate: {total, state, kv} in GiB and bytes
    if (job.model === "memory") {
      if (job.context || job.mode === "lora" || job.mode === "qlora") {
        throw new Error("--memory-gib is the total already: --context, --lora and --qlora need " +
                        "--params or --model");
      }
      return { total: job.size, state: 0, kv: 0 };
    }
    if (job.mode === "qlora" && ["int8", "int4", "fp8"].indexOf(job.precision) >= 0) {
      throw new Error("--qlora stores the weights in 4-bit NF4; --precision is its compute " +
                      "precision (bf16, fp16 or fp32)");
    }
    var shape = MODELS[job.model] || null;
    var params = shape ? countParams(shape) : job.size * 1e9;
    var state, trainable = 0;
    if (job.mode === "lora" || job.mode === "qlora") {
      if (shape) trainable = loraParams(shape, job.rank);
      else if (job.fraction) trainable = params * job.fraction;
      else throw new Error("--" + job.mode + " with --params needs --trainable-fraction (or use --model)");
    }
    if (job.mode === "inference") state = params * BYTES[job.precision];
    else if (job.mode === "full") state = params * trainingBytesPerParam(job.precision);
    else state = params * (job.mode === "qlora" ? NF4 : BYTES[job.precision]) + trainable * ADAPTER;
    var kv = 0;
    if (job.context) {
      if (job.mode !== "inference") {
        throw new Error("--context sizes the KV cache of inference; training activations are " +
                        "covered by --overhead");
      }
      if (!shape) {
        throw new Error("--context needs the model's shape: --model, or --layers, --kv-heads " +
                        "and --head-dim");
      }
      kv = 2 * shape[0] * shape[4] * shape[5] * job.context * job.batch * BYTES[job.kvPrecision];
    }
    return { total: (state + kv) * job.overhead / GIB, state: state, kv: kv };
  }

  // ------------------------------------------------------------ the ranking

  function canRun(inst, job) {  // choose_instance.usable
    if (inst.status === "retired" && !job.retired) return false;
    if (job.nvidiaOnly && inst.accelerator.indexOf("NVIDIA") !== 0) return false;
    if (inst.workloads.indexOf(job.workload) < 0) return false;
    return ["bf16", "fp16", "fp8"].indexOf(job.precision) < 0 || inst.low.indexOf(job.precision) >= 0;
  }

  function splitFor(inst, job, total) {
    var tries = job.gpus ? [job.gpus] : SPLITS.filter(function (n) { return n <= Math.max(inst.count, 1); });
    for (var k = 0; k < tries.length; k++) {
      var n = tries[k];
      var ok = inst.count >= n || (n === 1 && inst.count < 1);
      if (ok && inst.memory - job.reserve >= total / n) return n;
    }
    return null;
  }

  function speedup(gpus, scaling) {
    return gpus > 1 ? gpus * Math.pow(scaling, Math.log2(gpus)) : gpus;
  }

  function round2(x) {  // Python's round(x, 2): a tie (x = odd / 8) goes to the even hundredth
    if (Number.isInteger(x * 8) && !Number.isInteger(x * 4)) {
      var n = Math.floor(x * 100);
      return (n % 2 === 0 ? n : n + 1) / 100;
    }
    return Number(x.toFixed(2));
  }

  function g(x) { return String(Number(x.toPrecision(6))); }  // Python's :g for these values

  function figureColumn(job) {
    return FIGURE[job.workload === "inference" ? "inference" : job.precision || "bf16"];
  }

  function parallelismOf(workload, n, copies) {  // choose_instance.parallelism_of
    if (workload === "inference") {
      var split = n > 1 ? "tensor parallel over " + n : copies > 1 ? "one GPU each" : "one GPU";
      return split + (copies > 1 ? ", " + copies + " replicas" : "");
    }
    if (n === 1) return copies > 1 ? "data parallel over " + copies : "one GPU";
    return "FSDP over " + n + (copies > 1 ? ", " + copies + " data-parallel replicas" : "");
  }

  function option(inst, job, n, total) {
    var count = inst.count;
    var copies = job.onReference ? Math.max(Math.floor(count / n), 1) : 1;
    var used = count >= 1 ? n * copies : count;
    var warnings = [], hours = job.hours;
    if (job.onReference) {
      var column = figureColumn(job), spec = specFor(inst.accelerator);
      if (!spec || spec[column] === null) {
        return "no " + FIGURE_NAME[column] + " for the " + inst.accelerator + " in the spec table";
      }
      var ratio = specs[REFERENCE][column] / spec[column];
      // Serving replicas never talk, so they add up; training replicas sync every step.
      var serving = job.workload === "inference" && count >= 1;
      hours = job.hours * ratio / (serving ? copies * speedup(n, job.scaling) : speedup(used, job.scaling));
      if (spec.unconfirmed.indexOf(column) >= 0) warnings.push("its " + FIGURE_NAME[column] + " is unconfirmed");
      var talks = job.workload === "inference" ? n : used;  // training syncs every replica
      if (talks > 1 && spec.link === PCIE_ONLY) {
        warnings.push("no NVLink: over PCIe it scales below the " + g(job.scaling) + " per doubling assumed");
      }
    }
    var perGpu = total / n, room = inst.memory - job.reserve;
    if (room - perGpu < 0.1 * room) warnings.push("under 10% memory headroom");
    if (count >= 1 && count > used) {
      warnings.push("pays for " + g(count - used) + " idle GPU" + (count - used > 1 ? "s" : ""));
    }
    if (inst.status !== "current") {
      warnings.push(inst.status + (inst.unconfirmed.indexOf("status") >= 0 ? " (status unconfirmed)" : ""));
    }
    return {
      inst: inst, used: used, split: n, copies: copies,
      parallelism: parallelismOf(job.workload, n, copies),
      perGpu: round2(perGpu), usable: round2(room), hours: round2(hours),
      total: round2(inst.price * hours), warnings: warnings
    };
  }

  function rank(job) {
    var est = estimate(job);
    var candidates = instances.filter(function (i) { return canRun(i, job); });
    var options = [], unpriced = {};
    candidates.forEach(function (inst) {
      var n = splitFor(inst, job, est.total);
      if (n === null) return;
      var made = option(inst, job, n, est.total);
      if (typeof made === "string") unpriced[inst.type] = made;
      else options.push(made);
    });
    options.sort(function (a, b) {
      return a.total - b.total || (a.inst.type < b.inst.type ? -1 : a.inst.type > b.inst.type ? 1 : 0);
    });
    return { est: est, options: options, candidates: candidates, unpriced: unpriced };
  }

  function closest(candidates, gpus) {  // choose_instance.closest
    function best(list, key) {
      return list.reduce(function (a, b) {
        var ka = key(a), kb = key(b);
        return kb[0] > ka[0] || (kb[0] === ka[0] && kb[1] > ka[1]) ? b : a;
      });
    }
    var enough = candidates.filter(function (i) { return i.count >= gpus; });
    if (enough.length) return best(enough, function (i) { return [i.memory, -i.price]; });
    if (candidates.length) return best(candidates, function (i) { return [i.count * i.memory, -i.price]; });
    return null;
  }

  function refusal(job, result) {  // the CLI's "no instance fits" line
    var total = result.est.total;
    var reserve = "+ " + g(job.reserve) + " GiB reserve";
    var need = job.gpus ? job.gpus + " x " + (total / job.gpus).toFixed(2) + " GiB (" + reserve + ")"
      : total.toFixed(2) + " GiB on up to 8 GPUs (" + (total / 8).toFixed(2) + " GiB each, " + reserve + ")";
    var near = closest(result.candidates, job.gpus || 8);
    var hint = near ? "; closest: " + near.type + " (" + g(near.count) + " x " + g(near.memory) +
      " GiB " + near.accelerator + ", $" + g(near.price) + "/h)" : "";
    var names = Object.keys(result.unpriced).sort();
    if (names.length) {
      hint = "; " + names.join(", ") + " would fit but " + result.unpriced[names[0]] +
        " (give --instance-hours)";
    }
    return "no instance fits " + need + " for " + job.workload + (job.precision ? " in " + job.precision : "") + hint;
  }

  // ------------------------------------------------------------ the form

  function money(x) {
    return x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }

  function readForm() {  // a field greyed out (sync) does not apply to the job: left out
    var el = form.elements;
    var value = function (name) { return el[name].disabled ? "" : el[name].value.trim(); };
    var mode = value("mode");
    return {
      model: value("model"), size: Number(value("size")), precision: value("precision"),
      mode: mode, workload: mode === "inference" ? "inference" : "training",
      rank: value("rank") ? Number(value("rank")) : 16,
      fraction: value("fraction") ? Number(value("fraction")) : 0,
      context: value("context") ? Number(value("context")) : 0,
      batch: value("batch") ? Number(value("batch")) : 1, kvPrecision: value("kv") || "bf16",
      gpus: value("gpus") === "auto" ? null : Number(value("gpus")),
      hours: Number(value("hours")), onReference: value("hours-on") === "reference",
      scaling: value("scaling") ? Number(value("scaling")) : 0.9, overhead: Number(value("overhead")),
      reserve: Number(value("reserve")), nvidiaOnly: el.nvidia.checked, retired: el.retired.checked,
      top: 10
    };
  }

  // The CLI's bounds (choose_instance.build_parser): [field, what, low, high, whole number]
  var BOUNDS = [["hours", "hours", 0.001, 100000, false], ["overhead", "overhead factor", 1, 100, false],
                ["reserve", "reserve per GPU", 0, 64, false], ["scaling", "scaling per doubling", 0.5, 1, false],
                ["batch", "batch", 1, 100000, true], ["rank", "adapter rank", 1, 4096, true]];

  function invalid(job) {
    var checks = BOUNDS.slice();
    if (job.model === "memory") checks.push(["size", "GPU memory, GiB", 0.001, 1e6, false]);
    else if (!MODELS[job.model]) checks.push(["size", "model size, billions", 1e-9, 1e4, false]);
    if (job.context) checks.push(["context", "context", 1, 100000000, true]);
    if (job.fraction) checks.push(["fraction", "adapter share", 1e-9, 1, false]);
    for (var k = 0; k < checks.length; k++) {
      var c = checks[k], x = job[c[0]];
      if (c[4] && !Number.isInteger(x)) return c[1] + ": not a whole number";
      if (!(x >= c[2] && x <= c[3])) return c[1] + ": must be from " + c[2] + " to " + c[3] + ", got " + x;
    }
    return "";
  }

  // Inline styles, the few this table needs beyond the site's: numbers right-aligned (Material's
  // table rule outranks a class); no minimum width per header and a tighter padding (Material's
  // 5rem and 1.25em would make seven columns wider than the text column at 1280 px).
  function cell(row, text, numeric, tag) {
    var td = document.createElement(tag || "td");
    td.textContent = text;
    td.style.padding = "0.4em 0.6em";
    if (numeric) { td.className = "numeric"; td.style.textAlign = "right"; }
    if (tag === "th") td.style.minWidth = "0";
    row.appendChild(td);
  }

  function paragraph(text, cls) {
    var p = document.createElement("p");
    p.className = cls;
    p.textContent = text;
    out.appendChild(p);
    return p;
  }

  function show() {
    out.textContent = "";
    var job = readForm(), message = invalid(job), result = null;
    if (!message) {
      try { result = rank(job); } catch (err) { message = err.message; }
    }
    if (!message && !result.options.length) message = refusal(job, result);
    var summary = paragraph("", "aws-chooser-summary");
    if (message) {
      summary.textContent = message;
      summary.setAttribute("data-error", "");
      return;
    }
    var asOf = instances.reduce(function (a, i) { return i.asOf > a ? i.asOf : a; }, "");
    var shown = result.options.slice(0, job.top), total = result.est.total;
    var splits = job.gpus ? [job.gpus] : SPLITS;
    summary.textContent = "The job needs " + total.toFixed(2) + " GiB; per GPU, split over " +
      splits.join(" / ") + " GPUs: " + splits.map(function (n) { return (total / n).toFixed(2); }).join(" / ") +
      " GiB. " + result.options.length + (result.options.length > 1 ? " instances fit" : " instance fits") +
      "; cheapest " + shown.length +
      " (on-demand, us-east-1, prices as of " + asOf + "). " +
      (job.onReference
        ? "Hours: " + g(job.hours) + " on one " + REFERENCE + ", scaled by " + FIGURE_NAME[figureColumn(job)] +
          (job.workload === "inference" ? " (decode-bound inference)" : "") + "; n GPUs run n \u00d7 " +
          g(job.scaling) + "^log2(n) times as fast as one" +
          (job.workload === "inference" ? " (a split; replicas add up)." : ".")
        : "Hours: " + g(job.hours) + " on each instance, as given (not scaled).");
    if (result.est.kv > result.est.state && job.mode === "inference" && result.est.state > 0) {
      paragraph("Warning: the KV cache (" + (result.est.kv / GIB).toFixed(2) + " GiB) is larger than the weights (" +
                (result.est.state / GIB).toFixed(2) + " GiB): a shorter context, a smaller batch or " +
                "--kv-precision fp8 shrinks it", "aws-chooser-warning");
    }
    // The job's cost and price first: on a phone the rest scrolls, with the site's cue above
    // (accessibility.js marks a .md-typeset__scrollwrap that overflows).
    var wrap = document.createElement("div"), inner = document.createElement("div");
    wrap.className = "md-typeset__scrollwrap";
    inner.className = "md-typeset__table";
    var table = document.createElement("table");
    var head = table.createTHead().insertRow();
    ["instance", "job $", "$/hour", "hours", "GPUs used/paid", "GiB/GPU, usable", "split, notes"]
      .forEach(function (name, k) { cell(head, name, k > 0 && k < 6 && k !== 4, "th"); });
    var body = table.createTBody();
    shown.forEach(function (o) {
      var row = body.insertRow();
      cell(row, o.inst.type);
      row.cells[0].style.whiteSpace = "nowrap";  // an instance name never breaks at its hyphen
      cell(row, money(o.total), true);
      cell(row, o.inst.price.toFixed(4), true);
      cell(row, money(o.hours), true);
      cell(row, g(o.used) + "/" + g(o.inst.count) + " " + o.inst.accelerator);
      cell(row, o.perGpu.toFixed(2) + " of " + o.usable.toFixed(2), true);
      cell(row, [o.parallelism].concat(o.warnings).join("; "));
    });
    inner.appendChild(table);
    wrap.appendChild(inner);
    out.appendChild(wrap);
    var byReason = {};
    Object.keys(result.unpriced).sort().forEach(function (k) {
      (byReason[result.unpriced[k]] = byReason[result.unpriced[k]] || []).push(k);
    });
    Object.keys(byReason).forEach(function (reason) {
      paragraph("Not priced: " + byReason[reason].join(", ") + ": " + reason + ".", "aws-chooser-unpriced");
    });
  }

  function sync() {  // fields that do not apply to the job are greyed out, as the CLI ignores them
    var el = form.elements, model = el.model.value, mode = el.mode.value;
    el.size.disabled = !!MODELS[model];
    document.getElementById("aws-chooser-size-unit").textContent =
      model === "memory" ? "GiB of GPU memory in all" : "billion parameters";
    el.rank.disabled = !MODELS[model] || (mode !== "lora" && mode !== "qlora");
    el.fraction.disabled = model !== "params" || (mode !== "lora" && mode !== "qlora");
    // the KV cache needs a preset's shape (the CLI's --layers, --kv-heads and --head-dim are not here)
    el.context.disabled = el.batch.disabled = el.kv.disabled = mode !== "inference" || !MODELS[model];
    el.scaling.disabled = el["hours-on"].value !== "reference";
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); show(); });
  form.addEventListener("input", function () { sync(); if (instances) show(); });
  form.addEventListener("change", sync);
  sync();

  function get(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status + " for " + url);
      return response.text();
    });
  }

  Promise.all([get(form.getAttribute("data-table")), get(form.getAttribute("data-specs"))])
    .then(function (texts) {
      instances = loadInstances(texts[0]);
      specs = loadSpecs(texts[1]);
      if (!specs[REFERENCE]) throw new Error("the spec table has no row for " + REFERENCE);
      form.setAttribute("data-ready", "");
      show();
    })
    .catch(function (err) {
      out.textContent = "The tables could not be read (" + err.message +
        "): use the command line below.";
    });
})();
