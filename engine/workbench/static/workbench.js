// The workbench page: pick, edit (checked as you type), preview, run, compare, save.
"use strict";

const $ = (selector) => document.querySelector(selector);
const state = {
  scorer: null, data: null, files: {}, order: [], original: {}, problems: [], run: null,
  report: null, lastVersion: null, yours: false, catalogName: null, checkSerial: 0,
};
let editors = [];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) node.append(child);
  return node;
}

// Figures as the CLI prints them: three decimals at most, trailing zeros dropped.
function figure(value) {
  if (value === null || value === undefined) return "-";
  return String(Number(Math.round(value * 1000) / 1000));
}
function signed(value) {
  if (value === null || value === undefined) return "-";
  return value === 0 ? "0" : (value > 0 ? "+" : "") + figure(value);
}
function interval(estimate) {
  return estimate && estimate.low !== null && estimate.low !== undefined ? `${figure(estimate.low)} to ${figure(estimate.high)}` : "-";
}
function label(expected) {
  if (expected === null || expected === undefined) return "-";
  return typeof expected === "boolean" ? (expected ? "flag" : "pass") : figure(expected);
}

async function api(name, body) {
  const response = await fetch(`/api/${name}`, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body || {}),
  });
  const payload = await response.json().catch(() => ({error: `the workbench answered ${response.status}`}));
  if (!response.ok) throw new Error(payload.error || `error ${response.status}`);
  return payload;
}

function notice(message) {
  const box = $("#notice");
  box.textContent = message || "";
  box.hidden = !message;
}

// The files edited since they were loaded or saved: what a draft writes over the catalog.
function edits() {
  const changed = {};
  for (const path of state.order) {
    if (state.files[path].text !== state.original[path]) changed[path] = state.files[path].text;
  }
  return changed;
}

// ------------------------------------------------------------------------------ picking

async function init() {
  editors = [...document.querySelectorAll(".pane")].map((pane) => {
    const editor = new CodeEditor(pane.querySelector(".editor"), (text) => edited(pane, text));
    pane.querySelector(".file-pick").addEventListener("change", () => showFile(pane, pane.querySelector(".file-pick").value));
    return editor;
  });
  const found = await api("state");
  $("#catalog").textContent = `your catalog: ${found.catalog}`;
  for (const scorer of found.scorers) {
    $("#scorer").append(el("option", {value: scorer.id, text: `${scorer.id}${scorer.origin === "yours" ? " (yours)" : ""}`}));
  }
  for (const data of found.datasets) $("#data").append(el("option", {value: data.path, text: data.name, title: data.path}));
  const preferred = found.scorers.find((scorer) => scorer.origin === "yours") || found.scorers.find((scorer) => scorer.id === "hallucination") || found.scorers[0];
  $("#scorer").value = preferred.id;
  $("#scorer").addEventListener("change", () => pickScorer($("#scorer").value));
  $("#data").addEventListener("change", () => pickData());
  $("#item").addEventListener("change", () => refreshPreview());
  setupTabs();
  setupRun();
  setupSave();
  await pickScorer(preferred.id);
  await pollRun(true);
}

async function pickScorer(scorerId) {
  if (state.scorer && Object.keys(edits()).length && !confirm("Leave your unsaved edits of this scorer?")) {
    $("#scorer").value = state.scorer;
    return;
  }
  notice("");
  const loaded = await api("scorer", {scorer: scorerId, files: {}});
  state.scorer = scorerId;
  state.yours = loaded.yours;
  state.lastVersion = loaded.last_version;
  state.files = {};
  state.order = [];
  state.original = {};
  for (const file of loaded.files) {
    state.files[file.path] = file;
    state.order.push(file.path);
    state.original[file.path] = file.text;  // a built-in file as the package has it: an edit of it becomes yours
  }
  state.catalogName = loaded.files[0].path;
  $("#make-yours").hidden = loaded.yours;
  for (const pane of document.querySelectorAll(".pane")) {
    const pick = pane.querySelector(".file-pick");
    pick.replaceChildren(...state.order.map((path) => el("option", {value: path, text: `${path}${state.files[path].origin === "built-in" ? " (built-in)" : ""}`})));
  }
  // The panes keep their files when the scorer is loaded again (after a save).
  const shownBefore = $("#pane-b").dataset.path;
  const firstTemplate = state.order.find((path) => state.files[path].role === "template") || state.order[0];
  showFile($("#pane-a"), state.catalogName);
  showFile($("#pane-b"), scorerId === showFile.scorer && state.files[shownBefore] ? shownBefore : firstTemplate);
  showFile.scorer = scorerId;
  renderOrigins(loaded.origins);
  if (state.lastVersion && state.lastVersion.sample) {
    $("#size").value = state.lastVersion.sample.size;
    $("#seed").value = state.lastVersion.sample.seed;
    if ([...$("#data").options].some((option) => option.value === state.lastVersion.sample.data)) $("#data").value = state.lastVersion.sample.data;
  }
  await pickData();
  renderVersions();
  renderAligned();
}

async function pickData() {
  state.data = $("#data").value;
  if (!state.data) return;
  try {
    const found = await api("items", {data: state.data, scorer: state.scorer});
    $("#item").replaceChildren(...found.items.map((item) => el("option", {value: item.id, text: `${item.id} (${label(item.label)})`})));
  } catch (error) {
    notice(error.message);
  }
  await check();
  estimate();
}

function showFile(pane, path) {
  const index = pane.id === "pane-a" ? 0 : 1;
  const file = state.files[path];
  pane.dataset.path = path;
  pane.querySelector(".file-pick").value = path;
  const origin = pane.querySelector(".origin");
  origin.textContent = file.origin === "built-in"
    ? `built-in (${file.shown_from}); an edit is saved in your catalog as ${path}`
    : `yours: ${file.shown_from}`;
  origin.className = `origin ${file.origin === "built-in" ? "builtin" : "yours"}`;
  editors[index].set(file.text, file.language, `Editor: ${path}`);
  markProblems();
}

function edited(pane, text) {
  const path = pane.dataset.path;
  state.files[path].text = text;
  // The same file open in the other pane follows.
  for (const [index, other] of [...document.querySelectorAll(".pane")].entries()) {
    if (other !== pane && other.dataset.path === path) editors[index].set(text, state.files[path].language, `Editor: ${path}`);
  }
  clearTimeout(edited.timer);
  edited.timer = setTimeout(() => check(), 350);
}

function renderOrigins(origins) {
  $("#origins tbody").replaceChildren(...origins.map((part) => el("tr", {}, el("td", {text: part.part}), el("td", {text: part.from}))));
}

// ------------------------------------------------------------------------- check, preview

async function check() {
  const serial = ++state.checkSerial;
  let found;
  try {
    found = await api("check", {files: edits()});
  } catch (error) {
    notice(error.message);
    return;
  }
  if (serial !== state.checkSerial) return;  // a later keystroke's check wins
  state.problems = found.problems;
  const list = $("#problems");
  if (!found.problems.length) {
    $("#problems-title").textContent = "Checks: no problems";
    list.replaceChildren();
  } else {
    $("#problems-title").textContent = `Checks: ${found.problems.length} problem${found.problems.length > 1 ? "s" : ""}`;
    list.replaceChildren(...found.problems.map((problem) => el("li", {},
      el("button", {type: "button", class: "link problem", "data-path": problem.path || "", "data-line": problem.line || "", text: problem.shown,
        onclick: () => jumpTo(problem)}))));
  }
  markProblems();
  if (!found.problems.length) refreshPreview();
}

function markProblems() {
  for (const [index, pane] of [...document.querySelectorAll(".pane")].entries()) {
    const lines = new Map();
    for (const problem of state.problems) {
      if (problem.path === pane.dataset.path && problem.line) lines.set(problem.line, problem.message);
    }
    editors[index].mark(lines);
  }
}

function jumpTo(problem) {
  if (!problem.path || !state.files[problem.path]) return;
  let pane = [...document.querySelectorAll(".pane")].find((one) => one.dataset.path === problem.path);
  if (!pane) { pane = $("#pane-b"); showFile(pane, problem.path); }
  editors[pane.id === "pane-a" ? 0 : 1].goTo(problem.line || 1);
}

async function refreshPreview() {
  const item = $("#item").value;
  if (!item || !state.scorer || state.problems.length) return;
  const serial = state.checkSerial;
  let shown;
  try {
    shown = await api("preview", {scorer: state.scorer, data: state.data, item, files: edits(), run: state.report ? state.report.run : null});
  } catch (error) {
    $("#preview-note").textContent = error.message;
    $("#prompts").replaceChildren();
    return;
  }
  if (serial !== state.checkSerial) return;
  const answers = shown.answers_from ? `, with the judge's answers from run ${shown.answers_from}` : "";
  const note = shown.needs_answer_for
    ? `The prompts up to step ${shown.needs_answer_for}${answers}` + (shown.answers_from ? "." : `; the later steps need the judge's answer to it (run this item to see them).`)
    : `Every step's prompt${answers}; score ${figure(shown.score)}.`;
  $("#preview-note").textContent = note;
  // Each step folds; a step folded stays folded while the preview follows the edits.
  const folded = new Set([...document.querySelectorAll("#prompts details.step:not([open])")].map((step) => step.dataset.step));
  $("#prompts").replaceChildren(...shown.prompts.map((prompt) => el("section", {class: "prompt", "data-step": prompt.step},
    el("details", {class: "step", "data-step": prompt.step, open: !folded.has(prompt.step)},
      el("summary", {}, el("h3", {text: `step ${prompt.step}`})),
      prompt.system ? el("details", {}, el("summary", {text: "system prompt"}), el("pre", {class: "system", text: prompt.system})) : "",
      el("pre", {class: "user", text: prompt.prompt})))));
}

// ---------------------------------------------------------------------------------- tabs

function setupTabs() {
  const tabs = [...document.querySelectorAll("[role=tab]")];
  const select = (tab) => {
    for (const other of tabs) {
      const chosen = other === tab;
      other.setAttribute("aria-selected", chosen);
      other.tabIndex = chosen ? 0 : -1;
      $(`#${other.getAttribute("aria-controls")}`).hidden = !chosen;
    }
    if (tab.id === "tab-run") estimate();
    if (tab.id === "tab-versions") renderVersions();
  };
  for (const tab of tabs) {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (event) => {
      const step = {ArrowRight: 1, ArrowLeft: -1}[event.key];
      if (!step) return;
      const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
      next.focus();
      select(next);
    });
  }
  showTab.select = select;
}
function showTab(id) { showTab.select($(`#${id}`)); }

// ----------------------------------------------------------------------------------- run

function sampleBody() {
  return {scorer: state.scorer, data: state.data, size: Number($("#size").value), seed: Number($("#seed").value), files: edits()};
}

async function estimate() {
  if (!state.scorer || !state.data || state.problems.length) {
    $("#estimate").textContent = state.problems.length ? "Fix the problems first." : "";
    return;
  }
  try {
    const found = await api("estimate", sampleBody());
    const range = found.cost_low_usd !== null && found.cost_high_usd !== null ? ` (from $${found.cost_low_usd.toFixed(4)} to $${found.cost_high_usd.toFixed(4)})` : "";
    const cost = found.cost_usd === null ? "no price known for this model" : `about $${found.cost_usd.toFixed(4)}${range}`;
    $("#estimate").textContent = `${found.items} items: about ${found.calls} judge calls with ${found.model}` +
      (found.cached_calls ? ` (${found.cached_calls} already answered by the response cache, free)` : "") + `, ${cost}.`;
  } catch (error) {
    $("#estimate").textContent = error.message;
  }
}

function setupRun() {
  for (const input of ["#size", "#seed"]) $(input).addEventListener("change", () => estimate());
  $("#run").addEventListener("click", async () => {
    notice("");
    try {
      const started = await api("run", sampleBody());
      state.run = started;
      pollRun();
    } catch (error) {
      notice(error.message);
    }
  });
  $("#stop").addEventListener("click", async () => {
    await api("stop", {});
  });
}

async function pollRun(once = false) {
  const found = await api("status", {});
  const run = found.run;
  if (!run) return;
  state.run = run;
  const running = run.status === "running";
  $("#progress-box").hidden = false;
  $("#progress").max = Math.max(run.total, 1);
  $("#progress").value = run.done;
  const what = run.kind === "version" ? "Recording the version" : "Run";
  let text = `${what}: ${run.done} of ${run.total} items${run.failed ? `, ${run.failed} failed` : ""}`;
  if (!running) {
    text += ` (${run.status}${run.error ? `: ${run.error}` : ""})`;
    const spent = run.cost_usd === null ? "" : `, about $${run.cost_usd.toFixed(4)}`;
    text += `. ${run.judge_calls} judge call(s), ${run.cached_calls} answered by the cache${spent}` + (run.reused ? `; ${run.reused} result(s) reused from the stored run` : "") + ".";
    estimate();
  }
  if (run.status === "stopped") text += ". Run again to finish it: the items done are kept and reused.";
  $("#progress-text").textContent = text;
  $("#run").disabled = running;
  $("#stop").disabled = !running;
  $("#save").disabled = running;
  if (running) {
    setTimeout(() => pollRun(), 400);
  } else if (!once || run.done) {
    if (run.kind === "version") {
      const loaded = await api("versions", {scorer: state.scorer});
      state.lastVersion = loaded.versions[0] || null;
      await renderVersions();
      if (!once) showTab("tab-versions");
    } else if (run.scorer === state.scorer) {
      await showReport(run.run);
    }
  }
}

// ------------------------------------------------------------------------------- results

async function showReport(run) {
  let report;
  try {
    report = await api("report", {scorer: state.scorer, run});
  } catch (error) {
    notice(error.message);
    return;
  }
  state.report = report;
  $("#results-empty").hidden = true;
  $("#results").hidden = false;
  const agreement = report.agreement;
  $("#results-head").textContent = `Run ${report.run} (${report.status}): ${report.items.length} items` +
    (agreement ? `, ${agreement.labelled} labelled` : "") + (report.errors ? `, ${report.errors} failed` : "") +
    `. A score ${report.direction === "lower_is_better" ? "above" : "below"} ${figure(report.threshold)} flags an item (a score on it passes).`;
  const rows = [];
  if (agreement && agreement.binary) {
    const names = {accuracy: "accuracy", balanced_accuracy: "balanced accuracy", precision: "precision", recall: "recall", f1: "F1", kappa: "Cohen's kappa"};
    for (const [name, title] of Object.entries(names)) rows.push([title, agreement.binary[name], name]);
  }
  if (agreement && agreement.numeric) {
    const names = {mean_abs_error: "mean absolute error", pearson: "Pearson's r", spearman: "Spearman's rho"};
    for (const [name, title] of Object.entries(names)) rows.push([title, agreement.numeric[name], name]);
  }
  $("#agreement tbody").replaceChildren(...rows.map(([title, estimate, name]) => el("tr", {"data-figure": name},
    el("th", {scope: "row", text: title}), el("td", {text: figure(estimate.value)}), el("td", {text: interval(estimate)}))));
  renderConfusion(agreement);
  renderDistribution(report.distribution);
  renderComparison(report);
  renderItems(report);
  $("#calibration").textContent = "";
  $("#apply-threshold").hidden = true;
  showTab("tab-results");
  // The preview shows every step for an item the run has answers for.
  const ran = new Set(report.items.map((item) => item.item_id));
  if (!ran.has($("#item").value) && report.items.length && [...$("#item").options].some((option) => option.value === report.items[0].item_id)) {
    $("#item").value = report.items[0].item_id;
  }
  refreshPreview();
}

function renderConfusion(agreement) {
  const table = $("#confusion");
  if (!agreement || !agreement.binary) { table.replaceChildren(el("caption", {text: "(numeric labels: no matrix)"})); return; }
  const c = agreement.binary.confusion;
  table.replaceChildren(
    el("thead", {}, el("tr", {}, el("td"), el("th", {scope: "col", text: "judge flags"}), el("th", {scope: "col", text: "judge passes"}))),
    el("tbody", {},
      el("tr", {}, el("th", {scope: "row", text: "humans flag"}), el("td", {class: "right", text: c.true_positive}), el("td", {class: "wrong", text: c.false_negative})),
      el("tr", {}, el("th", {scope: "row", text: "humans pass"}), el("td", {class: "wrong", text: c.false_positive}), el("td", {class: "right", text: c.true_negative}))));
}

function renderDistribution(bins) {
  const width = 320, height = 120, bar = width / bins.length;
  const top = Math.max(1, ...bins.map((b) => b.flag + b.pass + b.unlabelled));
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height + 18}`);
  svg.setAttribute("class", "histogram");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Score distribution: " + bins.map((b) => `${figure(b.low)} to ${figure(b.high)}: ${b.flag} flagged, ${b.pass} passed by humans`).join("; "));
  bins.forEach((b, index) => {
    let y = height;
    for (const [kind, count] of [["pass", b.pass], ["flag", b.flag], ["unlabelled", b.unlabelled]]) {
      if (!count) continue;
      const h = (count / top) * (height - 4);
      y -= h;
      const rect = document.createElementNS(ns, "rect");
      for (const [name, value] of Object.entries({x: index * bar + 2, y, width: bar - 4, height: h, class: `bar-${kind}`})) rect.setAttribute(name, value);
      svg.append(rect);
    }
  });
  for (const [x, text] of [[0, "0"], [width, figure(bins[bins.length - 1].high)]]) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", x); t.setAttribute("y", height + 14); t.setAttribute("text-anchor", x ? "end" : "start");
    t.textContent = text;
    svg.append(t);
  }
  $("#distribution").replaceChildren(svg, el("p", {class: "legend"}, el("span", {class: "key flag"}), " humans flag ", el("span", {class: "key pass"}), " humans pass"));
}

function renderComparison(report) {
  const box = $("#comparison-box");
  const comparison = report.comparison;
  box.hidden = !comparison;
  if (!comparison) return;
  $("#comparison-title").textContent = `Against ${report.baseline_kind}: ${report.baseline}, on ${comparison.items} shared labelled items`;
  $("#comparison tbody").replaceChildren(...comparison.figures.map((delta) => el("tr", {"data-figure": delta.name},
    el("th", {scope: "row", text: delta.title}), el("td", {text: figure(delta.baseline)}), el("td", {text: figure(delta.variant)}),
    el("td", {class: delta.improved === true ? "better" : delta.improved === false ? "worse" : "", text: signed(delta.delta.value)}),
    el("td", {text: delta.delta.low === null ? "-" : `${figure(delta.delta.low)} to ${figure(delta.delta.high)}`}),
    el("td", {text: delta.beyond_noise === null ? "-" : delta.beyond_noise ? "yes" : "no"}))));
  const flipped = $("#flipped");
  const list = (word, changes) => changes.length
    ? [el("strong", {text: `${word} ${changes.length}: `}), ...changes.flatMap((change, index) => [index ? ", " : "", el("button", {type: "button", class: "link", "data-item": change.item_id, text: `${change.item_id} (${figure(change.baseline_score)} → ${figure(change.variant_score)})`, onclick: () => openItem(change.item_id)})])]
    : [el("strong", {text: `${word} 0`})];
  flipped.replaceChildren(
    el("span", {id: "fixed"}, ...list("fixed", comparison.fixed)), el("br"),
    el("span", {id: "broken"}, ...list("broken", comparison.broken)), el("br"),
    `Scores changed on ${comparison.score_changed} item(s).`);
}

function renderItems(report) {
  const onlyWrong = $("#only-wrong");
  const draw = () => {
    const shown = report.items.filter((item) => !onlyWrong.checked || item.agrees === false);
    $("#items tbody").replaceChildren(...shown.map((item) => el("tr", {"data-item": item.item_id, class: item.agrees === false ? "wrong" : ""},
      el("td", {}, el("button", {type: "button", class: "link", text: item.item_id, onclick: () => openItem(item.item_id)})),
      el("td", {text: label(item.expected)}), el("td", {text: figure(item.score)}),
      el("td", {text: item.error ? "error" : item.flagged === null ? "-" : `${item.flagged ? "flags" : "passes"}${item.agrees === false ? " ✗" : item.agrees ? " ✓" : ""}`}),
      el("td", {class: "reason", text: item.error || item.reason || ""}))));
  };
  onlyWrong.onchange = draw;
  draw();
}

async function openItem(itemId) {
  const found = await api("item", {run: state.report.run, scorer: state.scorer, item: itemId});
  $("#item-title").textContent = `Item ${found.item_id}: score ${figure(found.score)}, label ${label(found.expected)}`;
  const body = [];
  body.push(el("p", {}, el("strong", {text: "Reason: "}), found.reason || found.error || found.not_scorable || "-"));
  for (const [name, value] of [["input", found.input], ["output", found.output], ["context", found.context]]) {
    if (value !== null && value !== undefined) body.push(el("details", {}, el("summary", {text: name}), el("pre", {text: typeof value === "string" ? value : JSON.stringify(value, null, 2)})));
  }
  for (const step of found.steps) {
    const answer = step.result === null || step.result === undefined ? "" : typeof step.result === "string" ? step.result : JSON.stringify(step.result, null, 2);
    body.push(el("section", {class: "step", "data-step": step.id},
      el("h3", {text: `step ${step.id} (${step.kind}${step.skipped ? ", skipped" : ""}${step.cached ? ", from the cache" : ""})`}),
      step.prompt ? el("details", {}, el("summary", {text: "prompt sent"}), el("pre", {class: "prompt", text: step.prompt})) : "",
      answer ? el("pre", {class: "answer", text: answer}) : ""));
  }
  $("#item-body").replaceChildren(...body);
  $("#item-dialog").showModal();
}

// ---------------------------------------------------------------------- save, versions

function setupSave() {
  $("#save").addEventListener("click", async () => {
    if (state.problems.length) { notice("Fix the problems before saving: a scorer with problems cannot be measured."); return; }
    const found = await api("diff", {files: edits()});
    $("#save-where").textContent = found.changes.length
      ? `Into ${found.catalog} (never committed: review it with git as usual). Then the saved scorer is measured on the sample (${$("#size").value} items, seed ${$("#seed").value}); what this draft already ran is answered by the cache.`
      : `Nothing changed since the last save; saving records a version of the scorer as it is, measured on the sample.`;
    $("#diffs").replaceChildren(...found.changes.map((change) => el("section", {class: "diff"},
      el("h3", {text: `${change.shown}${change.new === "yes" ? " (new in your catalog)" : ""}`}),
      el("pre", {}, ...change.diff.split("\n").map((line) => el("span", {class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", text: line + "\n"}))))));
    $("#save-dialog").showModal();
  });
  $("#save-cancel").addEventListener("click", () => $("#save-dialog").close());
  $("#item-close").addEventListener("click", () => $("#item-dialog").close());
  $("#save-confirm").addEventListener("click", async () => {
    $("#save-dialog").close();
    try {
      const saved = await api("save", sampleBody());
      notice("");
      for (const path of state.order) state.original[path] = state.files[path].text;
      await pickScorer(state.scorer);
      $("#progress-text").textContent = `Saved ${saved.written.join(", ") || "no file (unchanged)"}; recording version ${saved.version}…`;
      showTab("tab-run");
      pollRun();
    } catch (error) {
      notice(error.message);
    }
  });
  $("#make-yours").addEventListener("click", async () => {
    const path = state.catalogName;
    const made = await api("variant", {scorer: state.scorer, text: state.files[path].text});
    state.files[path].text = made.text;
    showFile($("#pane-a"), path);
    $("#make-yours").hidden = true;
    check();
  });
  $("#calibrate").addEventListener("click", async () => {
    try {
      const found = await api("calibrate", {scorer: state.scorer, run: state.report.run, files: edits()});
      const best = found.calibration.best;
      if (!best) { $("#calibration").textContent = "No threshold can be measured (needs flag/pass labels and scores)."; return; }
      $("#calibration").textContent = `Best threshold ${figure(best.threshold)}: F1 ${figure(best.f1)}, kappa ${figure(best.kappa)}, accuracy ${figure(best.accuracy)} (now ${figure(state.report.threshold)}).`;
      const apply = $("#apply-threshold");
      apply.textContent = `Set threshold ${figure(best.threshold)} in ${state.catalogName}`;
      apply.hidden = false;
      apply.onclick = async () => {
        try {
          const set = await api("calibrate", {scorer: state.scorer, run: state.report.run, files: edits(), apply: true, text: state.files[state.catalogName].text});
          state.files[state.catalogName].text = set.text;
          showFile($("#pane-a"), state.catalogName);
          apply.hidden = true;
          $("#make-yours").hidden = true;
          $("#calibration").textContent += ` Set in ${state.catalogName} (not saved yet): run again to see the figures there.`;
          check();
        } catch (error) { notice(error.message); }
      };
    } catch (error) { notice(error.message); }
  });
}

async function renderVersions() {
  if (!state.scorer) return;
  const found = await api("versions", {scorer: state.scorer});
  $("#versions tbody").replaceChildren(...found.versions.map((version) => el("tr", {"data-version": version.version},
    el("th", {scope: "row"}, `v${version.version}`, el("br"), el("code", {text: version.run})),
    el("td", {text: version.saved_at.replace("T", " ").slice(5, 16)}), el("td", {text: version.items}),
    el("td", {}, version.f1 ? figure(version.f1.value) : "-", el("br"), el("small", {text: version.f1 ? interval(version.f1) : ""})),
    el("td", {text: version.kappa ? figure(version.kappa.value) : "-"}), el("td", {text: version.accuracy ? figure(version.accuracy.value) : "-"}))));
  if (!found.versions.length) $("#versions tbody").replaceChildren(el("tr", {}, el("td", {colspan: 6, text: "No saved version yet."})));
}

// Aligned variants: align's figures and diff as it wrote them; Accept puts the variant's files
// in the editors and opens the Save dialog (its diff first; Save writes and records a version).
async function renderAligned() {
  if (!state.scorer) return;
  const found = await api("aligned", {scorer: state.scorer});
  if (!found.variants.length) { $("#aligned").replaceChildren(el("p", {class: "muted", text: "None for this scorer."})); return; }
  $("#aligned").replaceChildren(...found.variants.map((variant) => {
    if (variant.error) return el("p", {class: "muted", text: variant.error});
    const rows = (variant.test ? variant.test.figures : []).map((row) => el("tr", {},
      el("th", {scope: "row", text: row.title}), el("td", {text: figure(row.baseline)}), el("td", {text: figure(row.variant)}),
      el("td", {text: signed(row.delta.value)}), el("td", {text: interval(row.delta)})));
    const accept = el("button", {type: "button", text: `Accept ${variant.folder}…`});
    accept.addEventListener("click", async () => {
      try {
        const made = await api("accept", {scorer: state.scorer, folder: variant.folder, files: edits()});
        for (const [path, text] of Object.entries(made.files)) {
          if (!state.files[path]) {
            state.files[path] = {path, role: "template", origin: "yours", shown_from: path, text, language: path.endsWith(".j2") ? "jinja" : path.endsWith(".yaml") ? "yaml" : "text"};
            state.order.push(path);
          }
          state.files[path].text = text;
        }
        showFile($("#pane-a"), state.catalogName);
        $("#save").click();
      } catch (error) { notice(error.message); }
    });
    return el("section", {class: "aligned-variant", "data-folder": variant.folder},
      el("h4", {text: variant.folder}), el("p", {text: variant.verdict}),
      el("table", {class: "figures"}, el("thead", {}, el("tr", {}, ...["figure", "before", "after", "change", "95% interval"].map((name) => el("th", {scope: "col", text: name})))), el("tbody", {}, ...rows)),
      el("pre", {}, ...variant.diff.split("\n").map((line) => el("span", {class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", text: line + "\n"}))),
      accept);
  }));
}

init().catch((error) => notice(error.message));
