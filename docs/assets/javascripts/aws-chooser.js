/* The instance chooser of the GPUs-on-AWS page, in the browser: the same arithmetic as
 * snippets/aws/choose_instance.py (estimate_memory_gib, usable, fits, rank, closest), reading
 * the same table, data/aws-instances.csv, served with the site. Nothing leaves the page.
 * tests/site/test_site_chooser.py drives this form with a table of cases and compares every
 * answer with the CLI's, so the two cannot drift apart unnoticed.
 */
(function () {
  "use strict";
  var form = document.getElementById("aws-chooser");
  if (!form) return;

  var GIB = Math.pow(1024, 3);
  var BYTES = { fp32: 4, bf16: 2, fp16: 2, fp8: 1, int8: 1, int4: 0.5 };
  var ADAM_MOMENTS = 8;  // two fp32 moments per parameter
  var MASTER = 4;        // fp32 master weights, kept when the weights are below fp32
  var out = document.getElementById("aws-chooser-result");
  var instances = null;

  // ------------------------------------------------------------ the table

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

  function loadInstances(text) {
    var rows = parseCsv(text), head = rows[0];
    var need = ["instance_type", "accelerator", "accelerator_count", "accelerator_memory_gib",
                "on_demand_usd_per_hour", "low_precision", "workloads", "status", "price_as_of"];
    need.forEach(function (c) {
      if (head.indexOf(c) < 0) throw new Error("the instance table has no column " + c);
    });
    return rows.slice(1).map(function (cells) {
      var r = {};
      head.forEach(function (name, k) { r[name] = cells[k]; });
      return {
        type: r.instance_type, accelerator: r.accelerator,
        count: Number(r.accelerator_count), memory: Number(r.accelerator_memory_gib),
        price: Number(r.on_demand_usd_per_hour), low: r.low_precision.split(";"),
        workloads: r.workloads.split(";"), status: r.status, asOf: r.price_as_of
      };
    });
  }

  // ------------------------------------------------------------ the arithmetic

  function trainingBytesPerParam(precision) {
    if (precision === "int8" || precision === "int4") {
      throw new Error("full training with Adam is not done in " + precision +
                      "; use fp32, bf16, fp16 or fp8 (int8/int4 are for inference)");
    }
    var w = BYTES[precision];
    return w + w + ADAM_MOMENTS + (w < 4 ? MASTER : 0);
  }

  function memoryGib(job) {
    if (job.kind === "memory") return job.size;
    var params = job.size * 1e9;
    var perParam = job.training ? trainingBytesPerParam(job.precision) : BYTES[job.precision];
    return params * perParam * job.overhead / GIB;
  }

  function canRun(inst, workload, precision, nvidiaOnly) {
    if (inst.status === "retired") return false;
    if (nvidiaOnly && inst.accelerator.indexOf("NVIDIA") !== 0) return false;
    if (inst.workloads.indexOf(workload) < 0) return false;
    return ["bf16", "fp16", "fp8"].indexOf(precision) < 0 || inst.low.indexOf(precision) >= 0;
  }

  function fits(inst, perGpu, gpus, reserve) {
    var enough = inst.count < 1 ? gpus === 1 : inst.count >= gpus;
    return enough && inst.memory - reserve >= perGpu;
  }

  function round2(x) { return Number(x.toFixed(2)); }

  function rank(job) {
    var total = memoryGib(job), perGpu = total / job.gpus;
    var workload = job.training ? "training" : "inference";
    var candidates = instances.filter(function (i) {
      return canRun(i, workload, job.precision, job.nvidiaOnly);
    });
    var options = candidates.filter(function (i) {
      return fits(i, perGpu, job.gpus, job.reserve);
    }).map(function (i) {
      return { inst: i, usable: i.memory - job.reserve, total: round2(i.price * job.hours) };
    });
    options.sort(function (a, b) {
      return a.total - b.total || (a.inst.type < b.inst.type ? -1 : a.inst.type > b.inst.type ? 1 : 0);
    });
    return { total: total, perGpu: perGpu, workload: workload, options: options,
             candidates: candidates };
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

  // ------------------------------------------------------------ the form

  function g(x) { return String(Number(x.toPrecision(6))); }  // Python's :g for these values
  function money(x) {
    return x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }

  function readForm() {
    var value = function (name) { return form.elements[name].value; };
    return {
      kind: value("kind"), size: Number(value("size")), precision: value("precision"),
      training: value("mode") === "training", gpus: Number(value("gpus")),
      hours: Number(value("hours")), overhead: Number(value("overhead")),
      reserve: Number(value("reserve")), nvidiaOnly: form.elements.nvidia.checked,
      top: 10
    };
  }

  function invalid(job) {
    if (!(job.size > 0)) return "give the model size or the memory, a number above 0";
    if (!(job.hours > 0)) return "give the hours, a number above 0";
    if (!(job.overhead >= 1)) return "the overhead factor is 1 or more";
    if (!(job.reserve >= 0)) return "the reserve is 0 GiB or more";
    return "";
  }

  function cell(row, text, numeric) {
    var td = document.createElement("td");
    td.textContent = text;
    if (numeric) td.className = "numeric";
    row.appendChild(td);
  }

  function show() {
    out.textContent = "";
    var job = readForm(), message = invalid(job), result = null;
    if (!message) {
      try { result = rank(job); } catch (err) { message = err.message; }
    }
    var summary = document.createElement("p");
    summary.className = "aws-chooser-summary";
    out.appendChild(summary);
    if (message) {
      summary.textContent = message;
      summary.setAttribute("data-error", "");
      return;
    }
    var need = g(job.gpus) + " x " + result.perGpu.toFixed(2) + " GiB";
    if (!result.options.length) {
      var near = closest(result.candidates, job.gpus);
      summary.textContent = "no instance fits " + need + " (+ " + g(job.reserve) +
        " GiB reserve) for " + result.workload +
        (job.precision ? " in " + job.precision : "") +
        (near ? "; closest: " + near.type + " (" + g(near.count) + " x " + g(near.memory) +
                " GiB " + near.accelerator + ", $" + g(near.price) + "/h)" : "");
      summary.setAttribute("data-error", "");
      return;
    }
    var asOf = instances.reduce(function (a, i) { return i.asOf > a ? i.asOf : a; }, "");
    var shown = result.options.slice(0, job.top);
    summary.textContent = "The job needs " + result.total.toFixed(2) + " GiB, " + need +
      " per GPU. " + result.options.length + " instances fit; cheapest " + shown.length +
      " for " + g(job.hours) + " h (on-demand, us-east-1, prices as of " + asOf + "):";
    var table = document.createElement("table");
    var head = table.createTHead().insertRow();
    ["#", "instance", "accelerators", "usable/GPU", "$/hour", "hours", "job $"]
      .forEach(function (name, k) {
        var th = document.createElement("th");
        th.textContent = name;
        if (k === 0 || k > 2) th.className = "numeric";
        head.appendChild(th);
      });
    var body = table.createTBody();
    shown.forEach(function (o, n) {
      var row = body.insertRow();
      cell(row, String(n + 1), true);
      cell(row, o.inst.type);
      cell(row, g(o.inst.count) + " x " + g(o.inst.memory) + " GiB " + o.inst.accelerator);
      cell(row, o.usable.toFixed(2), true);
      cell(row, o.inst.price.toFixed(4), true);
      cell(row, g(job.hours), true);
      cell(row, money(o.total), true);
    });
    out.appendChild(table);
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); show(); });
  form.addEventListener("input", function () { if (instances) show(); });
  form.elements.kind.addEventListener("change", function () {
    var memory = form.elements.kind.value === "memory";
    document.getElementById("aws-chooser-size-unit").textContent =
      memory ? "GiB of GPU memory in all" : "billion parameters";
  });

  fetch(form.getAttribute("data-table"))
    .then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.text();
    })
    .then(function (text) {
      instances = loadInstances(text);
      form.setAttribute("data-ready", "");
      show();
    })
    .catch(function (err) {
      out.textContent = "The instance table could not be read (" + err.message +
        "): use the command line below.";
    });
})();
