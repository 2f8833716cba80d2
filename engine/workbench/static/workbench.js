// The workbench page: pick, edit (checked as you type), preview, run, compare, save.
"use strict";

// Every file the page holds, by its path in the catalog folder: the current scorer's, and any
// edited one (edits of the catalog's files outlive a change of scorer). Each has its `text`,
// the `original` text the editor started from (a built-in file's own text for a file not yet
// in the catalog), the `base` saved text it was edited from (null: no file) and its `version`.
const state = {
  scorer: null, data: null, files: {}, order: [], problems: [], run: null,
  report: null, lastVersion: null, yours: false, catalogName: null, checkSerial: 0, warned: {},
};
let editors = [];

// This tab's id: its unsaved work is kept on the server under it (a reload finds it again).
const TAB = sessionStorage.getItem("workbench-tab") || (() => {
  const id = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2));
  sessionStorage.setItem("workbench-tab", id);
  return id;
})();

function signed(value) {
  if (value === null || value === undefined) return "-";
  return value === 0 ? "0" : (value > 0 ? "+" : "") + figure(value);
}
function label(expected) {
  if (expected === null || expected === undefined) return "-";
  return typeof expected === "boolean" ? (expected ? "flag" : "pass") : figure(expected);
}

// A file's text as it is written: the editor holds "\n" line ends, a file written with "\r\n" keeps them.
function written(file) { return file.crlf ? file.text.replace(/\n/g, "\r\n") : file.text; }
function isEdited(file) { return file.text !== file.original; }

// The files edited since they were loaded or saved: what a draft writes over the catalog.
function edits() {
  const changed = {};
  for (const [path, file] of Object.entries(state.files)) if (isEdited(file)) changed[path] = written(file);
  return changed;
}
// For each edited file, the saved text it was edited from: a save over a newer one is refused.
function bases() {
  const found = {};
  for (const [path, file] of Object.entries(state.files)) if (isEdited(file)) found[path] = file.base;
  return found;
}
function versions() {
  return Object.fromEntries(Object.entries(state.files).map(([path, file]) => [path, file.version]));
}

// A file as the server sends it, made ready for the editor (see `state`).
function fileOf(sent) {
  const crlf = sent.text.includes("\r\n");
  const text = sent.text.replace(/\r\n/g, "\n");
  return {...sent, crlf, text, original: text};
}

// ------------------------------------------------------------------------- unsaved work

// What the server keeps of this tab's work (drafts.py): the edited files with the texts they
// were edited from, and what is picked. Sent at every pause in typing and every change of pick.
function draftBody() {
  const files = {};
  for (const [path, file] of Object.entries(state.files)) {
    if (isEdited(file)) files[path] = {text: file.text, original: file.original, base: file.base, crlf: file.crlf, role: file.role, origin: file.origin, shown_from: file.shown_from, language: file.language};
  }
  return {scorer: state.scorer, data: state.data, size: Number($("#size").value), seed: Number($("#seed").value), run: state.report ? state.report.run : null, files};
}
// Unsaved work comes back as it was left: its files, data set, sample and seed.
function restoreDraft(draft) {
  for (const [path, file] of Object.entries(draft.files || {})) state.files[path] = {...file, path, version: undefined};
  if (draft.data && [...$("#data").options].some((option) => option.value === draft.data)) $("#data").value = draft.data;
  if (draft.size) $("#size").value = draft.size;
  if (draft.seed !== undefined && draft.seed !== null) $("#seed").value = draft.seed;
}

// Another tab's unsaved edits (it may still be open): told of, and taken here only on request,
// as a copy this tab then keeps as its own.
function offerOtherDraft(other) {
  const count = Object.keys(other.files || {}).length;
  const at = String(other.updated || "").replace("T", " ").slice(11, 16);
  $("#other-draft-text").textContent = `Another tab has unsaved edits of ${count} file${count > 1 ? "s" : ""} (last typed at ${at} UTC); this tab shows the files as saved.`;
  $("#other-draft").hidden = false;
  $("#other-draft-open").onclick = async () => {
    $("#other-draft").hidden = true;
    restoreDraft(other);
    if (other.scorer && [...$("#scorer").options].some((option) => option.value === other.scorer)) $("#scorer").value = other.scorer;
    await pickScorer($("#scorer").value);
    keepDraft(true);
    notice(`The other tab's edits of ${count} file${count > 1 ? "s" : ""} are open here too; each tab saves its own.`, "info");
  };
}

function keepDraft(now = false) {
  clearTimeout(keepDraft.timer);
  keepDraft.pending = true;
  const send = async () => {
    keepDraft.pending = false;
    try { await api("draft", {tab: TAB, draft: draftBody()}); } catch (error) { notice(`Your unsaved work could not be kept on the server: ${error.message}`); }
  };
  if (now) return send();
  keepDraft.timer = setTimeout(send, 250);
}

function renderEdited() {
  const count = Object.values(state.files).filter(isEdited).length;
  $("#save").textContent = count ? `Save… (${count} edited)` : "Save…";
  for (const pane of document.querySelectorAll(".pane")) {
    for (const option of pane.querySelector(".file-pick").options) {
      const file = state.files[option.value];
      option.textContent = `${isEdited(file) ? "● " : ""}${option.value}${file.origin === "built-in" ? " (built-in)" : ""}${isEdited(file) ? " (edited)" : ""}`;
    }
  }
}

// ------------------------------------------------------------------------------ picking

async function init() {
  editors = [...document.querySelectorAll(".pane")].map((pane) => {
    const editor = new CodeEditor(pane.querySelector(".editor"), (text) => edited(pane, text));
    pane.querySelector(".file-pick").addEventListener("change", () => showFile(pane, pane.querySelector(".file-pick").value));
    return editor;
  });
  const found = await api("state", {tab: TAB});
  $("#catalog").textContent = `your catalog: ${found.catalog}`;
  for (const scorer of found.scorers) {
    $("#scorer").append(el("option", {value: scorer.id, text: `${scorer.id}${scorer.origin === "yours" ? " (yours)" : ""}`}));
  }
  for (const data of found.datasets) $("#data").append(el("option", {value: data.path, text: data.name, title: data.path}));
  const draft = found.draft;
  const preferred = (draft && found.scorers.find((scorer) => scorer.id === draft.scorer))
    || found.scorers.find((scorer) => scorer.origin === "yours") || found.scorers.find((scorer) => scorer.id === "hallucination") || found.scorers[0];
  $("#scorer").value = preferred.id;
  if (draft) restoreDraft(draft);
  $("#scorer").addEventListener("change", () => pickScorer($("#scorer").value));
  $("#data").addEventListener("change", () => { pickData(); keepDraft(); });
  $("#item").addEventListener("change", () => refreshPreview());
  for (const input of ["#size", "#seed"]) $(input).addEventListener("input", () => keepDraft());
  setupTabs();
  setupRun();
  setupSave();
  setupLeaving();
  await pickScorer(preferred.id);
  const restored = Object.keys(edits()).length;
  if (restored) notice(`Your unsaved edits of ${restored} file${restored > 1 ? "s" : ""} are back (kept by the workbench as you typed). Save writes them into your catalog.`, "info");
  else if (found.other_draft) offerOtherDraft(found.other_draft);
  await pollRun(true);
  if (!state.report && draft && draft.run) await showReport(draft.run, true);
  window.workbenchReady = true;
}

// Leaving with unsaved edits asks first; what is pending is sent to the server on the way out.
function setupLeaving() {
  window.addEventListener("beforeunload", (event) => {
    if (!Object.keys(edits()).length) return;
    event.preventDefault();
    event.returnValue = "";
  });
  window.addEventListener("pagehide", () => {
    if (!keepDraft.pending) return;
    clearTimeout(keepDraft.timer);
    fetch("/api/draft", {method: "POST", keepalive: true, headers: {"Content-Type": "application/json", "X-Workbench-Session": SESSION}, body: JSON.stringify({tab: TAB, draft: draftBody()})});
  });
  // Ctrl+S (Cmd+S) saves, through the diff as the Save button does.
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
      event.preventDefault();
      if (!document.querySelector("dialog[open]")) openSave();
    }
  });
}

async function pickScorer(scorerId) {
  notice("");
  let loaded;
  try {
    loaded = await api("scorer", {scorer: scorerId, files: edits()});
  } catch (error) {
    notice(error.message);
    $("#scorer").value = state.scorer || scorerId;
    return;
  }
  state.scorer = scorerId;
  state.yours = loaded.yours;
  state.lastVersion = loaded.last_version;
  // An edited file keeps its text and the version it was edited from; the others are as saved.
  for (const path of Object.keys(state.files)) if (!isEdited(state.files[path])) delete state.files[path];
  state.order = [];
  for (const sent of loaded.files) {
    const kept = state.files[sent.path];
    state.files[sent.path] = kept ? {...fileOf(sent), text: kept.text, original: kept.original, base: kept.base, crlf: kept.crlf, version: kept.version === undefined ? (kept.base === sent.base ? sent.version : null) : kept.version} : fileOf(sent);
    state.order.push(sent.path);
  }
  state.catalogName = loaded.files[0].path;
  $("#make-yours").hidden = loaded.yours;
  for (const pane of document.querySelectorAll(".pane")) {
    const pick = pane.querySelector(".file-pick");
    pick.replaceChildren(...state.order.map((path) => el("option", {value: path, text: path})));
  }
  // The panes keep their files when the scorer is loaded again (after a save).
  const shownBefore = $("#pane-b").dataset.path;
  const firstTemplate = state.order.find((path) => state.files[path].role === "template") || state.order[0];
  showFile($("#pane-a"), state.catalogName);
  showFile($("#pane-b"), scorerId === showFile.scorer && state.order.includes(shownBefore) ? shownBefore : firstTemplate);
  showFile.scorer = scorerId;
  renderEdited();
  renderOrigins(loaded.origins);
  await pickData();
  renderVersions();
  renderAligned();
  keepDraft();
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
  origin.textContent = file.read_only
    ? `${file.shown_from}: the definition your catalog extends; make the scorer yours (its YAML) to change it`
    : file.origin === "built-in" ? `${file.shown_from}; an edit is saved in your catalog as ${path}` : `yours: ${file.shown_from}`;
  origin.className = `origin ${file.origin === "built-in" ? "builtin" : "yours"}`;
  editors[index].set(file.text, file.language, `Editor: ${path}`);
  editors[index].readOnly = Boolean(file.read_only);
  markProblems();
}

// A file's text changed by the page (a threshold set, a variant accepted): as if typed.
function setText(path, text) {
  state.files[path].text = text;
  for (const [index, pane] of [...document.querySelectorAll(".pane")].entries()) {
    if (pane.dataset.path === path) editors[index].set(text, state.files[path].language, `Editor: ${path}`);
  }
  renderEdited();
  keepDraft();
  check();
}

function edited(pane, text) {
  const path = pane.dataset.path;
  state.files[path].text = text;
  // The same file open in the other pane follows.
  for (const [index, other] of [...document.querySelectorAll(".pane")].entries()) {
    if (other !== pane && other.dataset.path === path) editors[index].set(text, state.files[path].language, `Editor: ${path}`);
  }
  renderEdited();
  keepDraft();
  $("#prompts").classList.add("stale");  // until the check and the preview of this edit are back
  clearTimeout(edited.timer);
  edited.timer = setTimeout(() => check(), 350);
}

// What the scorer scores answers made from its own schemas, as `scorers show` prints it:
// asked after the check, never holding it up; a later check's table wins.
async function showTruth(serial, broken) {
  if (broken || !state.scorer) return renderTruth([]);
  try {
    const found = await api("truth", {files: edits(), scorer: state.scorer});
    if (serial === state.checkSerial) renderTruth(found.truth_table);
  } catch (error) {
    renderTruth([]);
  }
}

function renderTruth(rows) {
  $("#truth-box").hidden = !rows.length;
  $("#truth tbody").replaceChildren(...rows.map((row) => el("tr", {class: row.outcome.replace(" ", "-")},
    el("td", {text: row.answer}), el("td", {text: row.score === null ? "-" : String(row.score)}), el("td", {text: row.outcome}))));
}

function renderOrigins(origins) {
  $("#origins tbody").replaceChildren(...origins.map((part) => el("tr", {}, el("td", {text: part.part}), el("td", {text: part.from}))));
}

// ------------------------------------------------------------------------- check, preview

async function check() {
  const serial = ++state.checkSerial;
  let found;
  try {
    found = await api("check", {files: edits(), versions: versions(), scorer: state.scorer});
  } catch (error) {
    notice(error.message);
    return;
  }
  if (serial !== state.checkSerial) return;  // a later keystroke's check wins
  state.problems = [...found.problems, ...(found.warnings || []), ...(found.notes || [])];
  if (found.definition) state.definition = found.definition;
  const list = $("#problems");
  if (!state.problems.length) {
    $("#problems-title").textContent = "Checks: no problems";
    list.replaceChildren();
  } else {
    const count = (severity, word) => { const n = state.problems.filter((problem) => problem.severity === severity).length; return n ? plural(n, word) : ""; };
    $("#problems-title").textContent = `Checks: ${[count("error", "problem"), count("warning", "warning"), count("note", "note")].filter(Boolean).join(", ")}`;
    list.replaceChildren(...state.problems.map((problem) => el("li", {class: problem.severity},
      el("button", {type: "button", class: `link problem ${problem.severity}`, "data-path": problem.path || "", "data-line": problem.line || "",
        text: problem.shown, disabled: !problem.path, onclick: () => jumpTo(problem)}))));
  }
  markProblems();
  showTruth(serial, found.problems.length > 0);
  await savedElsewhere(found.changed || []);
  refreshPreview();
}

// Files saved by someone else (another tab, another person) since this page loaded them: one
// not edited here is shown as saved now; an edited one is said to be in conflict, which Save
// shows in full before anything is written.
async function savedElsewhere(paths) {
  const fresh = paths.filter((path) => state.files[path] && !isEdited(state.files[path]));
  const clashing = paths.filter((path) => state.files[path] && isEdited(state.files[path]) && state.warned[path] !== state.files[path].version);
  if (fresh.length) {
    for (const path of fresh) delete state.files[path];
    await pickScorer(state.scorer);
    notice(`${fresh.join(", ")} ${fresh.length > 1 ? "were" : "was"} saved elsewhere (another tab or person): shown as saved now.`, "info");
  }
  if (clashing.length) {
    for (const path of clashing) state.warned[path] = state.files[path].version;
    notice(`${clashing.join(", ")} ${clashing.length > 1 ? "were" : "was"} saved elsewhere since you began editing: Save will show yours, theirs and the text you started from, and write nothing until you choose.`);
  }
}

// The findings that stop the draft from loading (warnings and notes do not).
function errors() { return state.problems.filter((problem) => problem.severity === "error"); }

function markProblems() {
  for (const [index, pane] of [...document.querySelectorAll(".pane")].entries()) {
    const lines = new Map();
    for (const problem of state.problems) {
      if (problem.path === pane.dataset.path && problem.line) lines.set(problem.line, problem.message);
    }
    editors[index].mark(lines);
  }
}

// A problem opens its file at its line: one of the scorer's files, another file of the
// catalog, a built-in template or schema, or the built-in catalog file (read-only).
async function jumpTo(problem) {
  if (!problem.path) return;
  if (!state.files[problem.path]) {
    try { state.files[problem.path] = fileOf(await api("file", {path: problem.path})); } catch (error) { notice(error.message); return; }
  }
  let pane = [...document.querySelectorAll(".pane")].find((one) => one.dataset.path === problem.path);
  if (!pane) {
    pane = $("#pane-b");
    const pick = pane.querySelector(".file-pick");
    if (![...pick.options].some((option) => option.value === problem.path)) pick.append(el("option", {value: problem.path, text: problem.path}));
    showFile(pane, problem.path);
    renderEdited();
  }
  editors[pane.id === "pane-a" ? 0 : 1].goTo(problem.line || 1);
}

// The preview says when it no longer shows the draft in the editors, and why.
function previewIsOld(why) {
  if (!$("#prompts").children.length) { $("#preview-note").textContent = `No preview: ${why}.`; return; }
  $("#preview-note").textContent = `Out of date: these prompts are of an earlier draft; ${why}.`;
  $("#preview-note").className = "stale";
  $("#prompts").classList.add("stale");
  if ($("#run-item")) $("#run-item").disabled = true;  // it would run the draft with its problems
}

async function refreshPreview() {
  const item = $("#item").value;
  if (!item || !state.scorer) return;
  if (errors().length) { previewIsOld("the draft has problems to fix (see Checks)"); return; }
  const serial = state.checkSerial;
  let shown;
  try {
    shown = await api("preview", {scorer: state.scorer, data: state.data, item, files: edits(), run: state.report ? state.report.run : null});
  } catch (error) {
    if (serial === state.checkSerial) previewIsOld(error.message);
    return;
  }
  if (serial !== state.checkSerial) return;  // an edit since: its own preview follows
  state.definition = shown.definition;
  $("#preview-note").className = "muted";
  $("#prompts").classList.remove("stale");
  renderPreview(shown);
}

function answerText(answer) {
  return typeof answer === "string" ? answer : JSON.stringify(answer, null, 2);
}

function renderPreview(shown) {
  if (shown.not_scorable) {
    $("#preview-note").textContent = `This item is not scorable by ${state.scorer}: ${shown.not_scorable}`;
    $("#prompts").replaceChildren();
    return;
  }
  const from = [...new Set(shown.prompts.map((prompt) => prompt.answer_from).filter(Boolean))];
  $("#preview-note").textContent = shown.needs_answer_for
    ? `The prompts up to step ${shown.needs_answer_for}: the steps after it need its answer, which neither the response cache nor a run of this item holds.`
    : `Every step's prompt${from.length ? `, with the answers from ${from.join(" and ")}` : ""}; score ${figure(shown.score)}.`;
  // Each step folds; a step folded stays folded while the preview follows the edits.
  const folded = new Set([...document.querySelectorAll("#prompts details.step:not([open])")].map((step) => step.dataset.step));
  const sections = shown.prompts.map((prompt) => el("section", {class: "prompt", "data-step": prompt.step},
    el("details", {class: "step", "data-step": prompt.step, open: !folded.has(prompt.step)},
      el("summary", {}, el("h3", {text: `step ${prompt.step}`})),
      prompt.system ? el("details", {}, el("summary", {text: "system prompt"}), el("pre", {class: "system", text: prompt.system})) : "",
      el("pre", {class: "user", text: prompt.prompt}),
      prompt.answer !== null && prompt.answer !== undefined
        ? el("details", {class: "answer"}, el("summary", {},
            `its answer, from ${prompt.answer_from}`, prompt.asked_differently ? el("strong", {class: "stale-answer", text: " (asked with an earlier wording of this prompt)"}) : ""),
            el("pre", {class: "answer", text: answerText(prompt.answer)}))
        : "")));
  if (shown.needs_answer_for) sections.push(runItemOffer(shown));
  $("#prompts").replaceChildren(...sections);
}

// No answer for a step yet: run this one item (its cost shown first) to see the steps after it.
function runItemOffer(shown) {
  const cost = shown.run_item || {};
  if (cost.error) return el("p", {class: "run-item", text: `Running this item would need a judge: ${cost.error}`});
  const price = cost.cost_usd === null || cost.cost_usd === undefined ? "no price known for this model" : `about $${cost.cost_usd.toFixed(4)}`;
  const button = el("button", {type: "button", id: "run-item", text: `Run this item (${plural(cost.calls || 0, "judge call")}, ${price})`});
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await api("run_item", {scorer: state.scorer, data: state.data, item: $("#item").value, files: edits()});
      pollRun();
    } catch (error) { notice(error.message); button.disabled = false; }
  });
  return el("section", {class: "run-item"}, el("p", {class: "muted", text: `The steps after ${shown.needs_answer_for} need its answer.`}), button);
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
  if (!state.scorer || !state.data || errors().length) {
    $("#estimate").textContent = errors().length ? "Fix the problems first." : "";
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

function plural(count, word) { return `${count} ${word}${count === 1 ? "" : "s"}`; }
function sentence(text) { return text ? text[0].toUpperCase() + text.slice(1) : ""; }
const STATUS_WORDS = {complete: "complete", incomplete: "incomplete", failed: "failed", stopped: "stopped", interrupted: "stopped", running: "running"};

// Whether running now would continue `run` (the same draft on the same sample), so that "run
// again to finish it" is true; a run of an earlier draft or another sample is not continued.
function continues(run) {
  const sample = run.sample || {};
  return run.definition && run.definition === state.definition && sample.data === state.data
    && Number(sample.size) === Number($("#size").value) && Number(sample.seed) === Number($("#seed").value);
}

// A run that did not score every item says why at the top of every view, with what its
// figures stand on.
function renderBanner(run) {
  const banner = $("#run-banner");
  const partial = run && run.status !== "running" && (run.status !== "complete" || (run.scored !== undefined && run.scored < run.total));
  banner.hidden = !partial;
  if (!partial) return;
  const status = STATUS_WORDS[run.status] || run.status;
  banner.replaceChildren(
    el("strong", {text: `Run ${status}: `}), `${run.coverage || ""}.`,
    run.cause ? ` ${sentence(run.cause)}${/[.!?]$/.test(run.cause) ? "" : "."}` : "",
    el("span", {class: "muted", text: ` (${run.run})`}));
  banner.className = run.status === "failed" ? "failed" : "partial";
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
  const what = run.kind === "version" ? "Recording the version" : run.kind === "item" ? "Running one item" : "Run";
  let text = `${what}: ${run.done} of ${run.total} items${run.failed ? `, ${run.failed} failed` : ""}`;
  if (!running) {
    const status = STATUS_WORDS[run.status] || run.status;
    text = `${what} ${status}: ${run.coverage || `${run.done} of ${run.total} items`}.`;
    if (run.error) text += ` ${sentence(run.error)}${/[.!?]$/.test(run.error) ? "" : "."}`;
    const spent = run.cost_usd === null ? ", cost unknown (no price for this model)" : `, about $${run.cost_usd.toFixed(4)}`;
    text += ` ${plural(run.judge_calls, "judge call")} sent (answered or not), ${run.cached_calls} answered by the cache${spent} (as the results store records it)` + (run.reused ? `; ${run.reused} result(s) reused from the stored run` : "") + ".";
    if (run.status === "stopped" || run.status === "interrupted") {
      text += continues(run) ? " Run again to finish it: the items done are kept and reused." : " It was of an earlier draft or another sample: Run now starts a new run of the draft as it is.";
    }
    estimate();
  }
  $("#progress-text").textContent = text;
  $("#run").disabled = running;
  $("#stop").disabled = !running;
  $("#save").disabled = running;
  if (running) {
    renderBanner(null);
    setTimeout(() => pollRun(), 400);
    return;
  }
  renderBanner({...run, cause: run.error});
  if (!once || run.done) {
    if (run.kind === "version") {
      const loaded = await api("versions", {scorer: state.scorer});
      state.lastVersion = loaded.versions[0] || null;
      await renderVersions();
      await renderAligned();
      if (!once) showTab("tab-versions");
    } else if (run.kind === "item") {
      refreshPreview();
    } else if (run.scorer === state.scorer) {
      await showReport(run.run, once);
    }
  }
}

// ------------------------------------------------------------------------------- results

async function showReport(run, quietly = false) {
  let report;
  try {
    report = await api("report", {scorer: state.scorer, run});
  } catch (error) {
    if (!quietly) notice(error.message);
    return;
  }
  state.report = report;
  keepDraft();
  renderBanner(report);
  $("#results-empty").hidden = true;
  $("#results").hidden = false;
  const agreement = report.agreement;
  const earlier = report.definition && state.definition && report.definition !== state.definition ? " It was of an earlier draft than the one in the editors." : "";
  $("#results-head").textContent = `Run ${report.run} (${STATUS_WORDS[report.status] || report.status}): ${report.coverage}.` +
    ` A score ${report.direction === "lower_is_better" ? "above" : "below"} ${figure(report.threshold)} flags an item (a score on it passes).${earlier}`;
  // No figure without the items it stands on.
  const labelled = agreement ? agreement.labelled : 0;
  $("#agreement-coverage").textContent = agreement
    ? `On ${report.scored} of ${report.total} items (those scored${labelled < report.scored ? `; ${labelled} of them labelled` : ", all labelled"}).`
    : `No figure: ${report.scored ? "none of the items scored is labelled" : "no item was scored"} (${report.coverage}).`;
  $("#agreement-coverage").className = report.scored < report.total ? "coverage partial" : "coverage";
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
  $("#calibration-warning").hidden = true;
  $("#apply-threshold").hidden = true;
  $("#despite-box").hidden = true;
  if (!quietly) showTab("tab-results");
  // The preview shows every step for an item the run has answers for.
  const ran = new Set(report.items.map((item) => item.item_id));
  if (!ran.has($("#item").value) && report.items.length && [...$("#item").options].some((option) => option.value === report.items[0].item_id)) {
    $("#item").value = report.items[0].item_id;
  }
  refreshPreview();
}

function renderCalibration(agreement) {
  // How well the judge's confidence tells when people agree with it: its figures and reliability curve.
  const table = $("#confusion");
  document.getElementById("confidence-calibration")?.remove();
  const calibration = agreement && agreement.calibration;
  if (!calibration) return;
  const ns = "http://www.w3.org/2000/svg", side = 150;
  const svg = document.createElementNS(ns, "svg");
  for (const [name, value] of Object.entries({viewBox: `-4 -4 ${side + 8} ${side + 8}`, class: "reliability", role: "img", width: side, height: side,
    "aria-label": "Reliability: " + calibration.curve.map((p) => `confidence ${Math.round(p.confidence * 100)}%: ${Math.round(p.agreement * 100)}% agreed of ${p.items}`).join("; ")})) svg.setAttribute(name, value);
  const diagonal = document.createElementNS(ns, "line");
  for (const [name, value] of Object.entries({x1: 0, y1: side, x2: side, y2: 0, stroke: "currentColor", "stroke-dasharray": "3 3"})) diagonal.setAttribute(name, value);
  svg.append(diagonal);
  for (const point of calibration.curve) {
    const dot = document.createElementNS(ns, "circle");
    for (const [name, value] of Object.entries({cx: point.confidence * side, cy: side - point.agreement * side, r: Math.max(3, Math.sqrt(point.items) * 2), class: "bar-pass"})) dot.setAttribute(name, value);
    svg.append(dot);
  }
  const interval = (estimate) => estimate.low === null ? "" : ` (${figure(estimate.low)} to ${figure(estimate.high)})`;
  table.after(el("div", {id: "confidence-calibration"},
    el("p", {text: `Confidence against people (${calibration.items} items): calibration error ${figure(calibration.ece.value)}${interval(calibration.ece)}, AUROC ${figure(calibration.auroc.value)}${interval(calibration.auroc)}`}), svg));
}

function renderConfusion(agreement) {
  renderCalibration(agreement);
  const table = $("#confusion");
  if (!agreement || !agreement.binary) { table.replaceChildren(el("caption", {text: agreement ? "(labels are scores, not flag/pass: no matrix)" : "(no labelled item scored)"})); return; }
  const c = agreement.binary.confusion;
  table.replaceChildren(
    el("thead", {}, el("tr", {}, el("td"), el("th", {scope: "col", text: "judge flags"}), el("th", {scope: "col", text: "judge passes"}))),
    el("tbody", {},
      el("tr", {}, el("th", {scope: "row", text: "humans flag"}), el("td", {class: "right", "data-cell": "true_positive", text: c.true_positive}), el("td", {class: "wrong", "data-cell": "false_negative", text: c.false_negative})),
      el("tr", {}, el("th", {scope: "row", text: "humans pass"}), el("td", {class: "wrong", "data-cell": "false_positive", text: c.false_positive}), el("td", {class: "right", "data-cell": "true_negative", text: c.true_negative}))));
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
  $("#comparison").hidden = !comparison.items;
  $("#flipped").hidden = !comparison.items;
  if (!comparison.items) { $("#comparison-title").textContent += " (none: they ran on other items, so there is nothing to compare)"; return; }
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
      el("td", {text: label(item.expected)}), el("td", {text: figure(item.score) + (item.confidence === null ? "" : ` (${item.confidence_shown})`)}),
      el("td", {text: item.error ? "error" : item.flagged === null ? "-" : `${item.flagged ? "flags" : "passes"}${item.agrees === false ? " ✗" : item.agrees ? " ✓" : ""}`}),
      el("td", {class: "reason", text: item.error || item.reason || ""}))));
  };
  onlyWrong.onchange = draw;
  draw();
}

async function openItem(itemId) {
  const found = await api("item", {run: state.report.run, scorer: state.scorer, item: itemId});
  $("#item-title").textContent = `Item ${found.item_id}: score ${figure(found.score)}${found.confidence === null ? "" : `, ${found.confidence_shown}`}, label ${label(found.expected)}`;
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

// Save: the diff of every edited file first; then the files are written (unless one was saved
// elsewhere meanwhile: the three texts are shown and nothing is written until you choose) and
// the version is recorded.
async function openSave() {
  if (errors().length) { notice("Fix the problems before saving: a scorer with problems cannot be measured."); return; }
  let found;
  try { found = await api("diff", {files: edits()}); } catch (error) { notice(error.message); return; }
  $("#save-where").textContent = found.changes.length
    ? `Into ${found.catalog} (never committed: review it with git as usual). Then the saved scorer is measured on the sample (${$("#size").value} items, seed ${$("#seed").value}); what this draft already ran is answered by the cache.`
    : `Nothing changed since the last save; saving records a version of the scorer as it is, measured on the sample.`;
  $("#diffs").replaceChildren(...found.changes.map((change) => el("section", {class: "diff"},
    el("h3", {text: `${change.shown}${change.new === "yes" ? " (new in your catalog)" : ""}`}), diffBlock(change.diff))));
  $("#save-dialog").showModal();
}

function diffBlock(diff) {
  return el("pre", {}, ...diff.split("\n").map((line) => el("span", {class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", text: line + "\n"})));
}

async function save() {
  let saved;
  try {
    saved = await api("save", {...sampleBody(), bases: bases(), accepted: state.accepting || null});
  } catch (error) {
    if (error.status === 409 && error.payload.conflicts) { showConflicts(error.payload.conflicts); return; }
    notice(error.message);
    return;
  }
  notice("");
  state.accepting = null;
  for (const [path, version] of Object.entries(saved.versions)) {
    const file = state.files[path];
    if (!file) continue;
    file.original = file.text;
    file.base = written(file);
    file.version = version;
  }
  await pickScorer(state.scorer);
  await keepDraft(true);
  const what = saved.written.join(", ") || "no file (unchanged)";
  if (saved.version === null) {
    $("#progress-text").textContent = `Saved ${what}. The version is not measured: ${saved.version_error}`;
    notice(`Saved ${what}. The version is not measured: ${saved.version_error}`);
    return;
  }
  $("#progress-text").textContent = `Saved ${what}; recording version ${saved.version}…`;
  showTab("tab-run");
  pollRun();
}

// A save refused because a file changed on disk since it was edited here: yours, theirs and
// the text both started from, side by side; nothing is written until one is chosen.
function showConflicts(conflicts) {
  $("#conflicts").replaceChildren(...conflicts.map((conflict) => el("section", {class: "conflict", "data-path": conflict.path},
    el("h3", {text: conflict.shown}),
    el("div", {class: "three"},
      el("div", {class: "yours"}, el("h4", {text: "Yours (changes from the base)"}), diffBlock(conflict.yours_diff || "(no change)")),
      el("div", {class: "theirs"}, el("h4", {text: conflict.theirs === null ? "Theirs: the file was deleted" : "Theirs, saved meanwhile (changes from the base)"}), diffBlock(conflict.theirs_diff || "(no change)")),
      el("div", {class: "base"}, el("h4", {text: conflict.base === null ? "Base: the built-in text you began from (no file in your catalog then)" : "Base: the text you began from"}), el("pre", {text: conflict.began_from}))))));
  state.conflicts = conflicts;
  $("#conflict-dialog").showModal();
}

function setupConflicts() {
  $("#conflict-cancel").addEventListener("click", () => { $("#conflict-dialog").close(); notice("Nothing was written: your edits are kept here (and on the server) as they were."); });
  $("#conflict-mine").addEventListener("click", async () => {
    $("#conflict-dialog").close();
    for (const conflict of state.conflicts) {
      const file = state.files[conflict.path];
      file.base = conflict.theirs;  // yours now replaces theirs, knowingly
      file.version = conflict.theirs_version;
    }
    await save();
  });
  $("#conflict-theirs").addEventListener("click", async () => {
    $("#conflict-dialog").close();
    for (const conflict of state.conflicts) {
      const file = state.files[conflict.path];
      if (conflict.theirs === null) { file.text = file.original; continue; }
      file.text = file.original = conflict.theirs.replace(/\r\n/g, "\n");
      file.base = conflict.theirs;
      file.version = conflict.theirs_version;
    }
    await pickScorer(state.scorer);
    notice(`Took the saved ${state.conflicts.map((conflict) => conflict.shown).join(", ")}; your edits of ${state.conflicts.length > 1 ? "them are" : "it are"} dropped.`, "info");
    check();
  });
}

function setupSave() {
  setupConflicts();
  $("#save").addEventListener("click", () => openSave());
  $("#save-cancel").addEventListener("click", () => $("#save-dialog").close());
  $("#item-close").addEventListener("click", () => $("#item-dialog").close());
  $("#save-confirm").addEventListener("click", async () => {
    $("#save-dialog").close();
    await save();
  });
  $("#make-yours").addEventListener("click", async () => {
    const path = state.catalogName;
    const made = await api("variant", {scorer: state.scorer, text: state.files[path].text});
    setText(path, made.text);
    showFile($("#pane-a"), path);
    $("#make-yours").hidden = true;
  });
  $("#calibrate").addEventListener("click", async () => {
    try {
      const found = await api("calibrate", {scorer: state.scorer, run: state.report.run, files: edits()});
      const best = found.calibration.best;
      if (!best) { $("#calibration").textContent = "No threshold can be measured (needs flag/pass labels and scores)."; return; }
      $("#calibration").textContent = `Best threshold ${figure(best.threshold)}: F1 ${figure(best.f1)}, kappa ${figure(best.kappa)}, accuracy ${figure(best.accuracy)}, flags ${best.flagged} of ${found.calibration.labelled} (now ${figure(state.report.threshold)}; on ${state.report.coverage}).`;
      $("#calibration-warning").textContent = found.caution || "";
      $("#calibration-warning").hidden = !found.caution;
      const apply = $("#apply-threshold");
      // A threshold no better than chance is never one click from the file: it takes a tick first.
      const despite = $("#despite");
      despite.checked = false;
      $("#despite-box").hidden = !found.caution;
      apply.disabled = Boolean(found.caution);
      despite.onchange = () => { apply.disabled = !despite.checked; };
      apply.textContent = `Set threshold ${figure(best.threshold)} in ${state.catalogName}${found.caution ? " anyway" : ""}`;
      apply.hidden = false;
      apply.onclick = async () => {
        try {
          const set = await api("calibrate", {scorer: state.scorer, run: state.report.run, files: edits(), apply: true, despite: despite.checked,
            text: state.files[state.catalogName].text});
          setText(state.catalogName, set.text);
          showFile($("#pane-a"), state.catalogName);
          apply.hidden = true;
          $("#despite-box").hidden = true;
          $("#make-yours").hidden = true;
          $("#calibration").textContent += ` Set in ${state.catalogName} (not saved yet): run again to see the figures there.`;
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
    el("td", {text: version.saved_at.replace("T", " ").slice(5, 16)}), el("td", {class: `coverage-cell${version.cause ? " partial" : ""}`, title: version.cause || "", text: version.coverage}),
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
            const base = made.bases[path] === undefined ? null : made.bases[path];
            state.files[path] = {path, role: "template", origin: "yours", shown_from: path, text, original: base === null ? "" : base, base, version: null, crlf: false,
              language: path.endsWith(".j2") ? "jinja" : path.endsWith(".yaml") ? "yaml" : "text"};
          }
          setText(path, text.replace(/\r\n/g, "\n"));
        }
        state.accepting = variant.folder;
        showFile($("#pane-a"), state.catalogName);
        openSave();
      } catch (error) { notice(error.message); }
    });
    return el("section", {class: "aligned-variant", "data-folder": variant.folder},
      el("h4", {text: variant.folder}), el("p", {text: variant.verdict}),
      variant.warning ? el("p", {class: "warning", role: "note", text: sentence(variant.warning) + "."}) : "",
      el("table", {class: "figures"}, el("thead", {}, el("tr", {}, ...["figure", "before", "after", "change", "95% interval"].map((name) => el("th", {scope: "col", text: name})))), el("tbody", {}, ...rows)),
      el("pre", {}, ...variant.diff.split("\n").map((line) => el("span", {class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", text: line + "\n"}))),
      variant.accepted_in ? el("p", {class: "accepted", text: `Accepted in v${variant.accepted_in}: it is in your catalog.`}) : accept);
  }));
}

init().catch((error) => notice(error.message));
