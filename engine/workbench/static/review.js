// The review page: one item at a time, a label by keyboard or click, the judge's view once
// labelled (blind queues), people's agreement and settling, and new queues from stored runs.
"use strict";

const state = {
  reviewer: localStorage.getItem("review-name") || "", queue: null, queues: [], runs: [], item: null,
  choice: null, answers: [], claim: 0, browsing: null,
};

function shown(value) {
  if (value === null || value === undefined) return "-";
  return typeof value === "boolean" ? (value ? "flag" : "pass") : typeof value === "number" ? figure(value) : String(value);
}

async function attempt(work) {
  try {
    notice("");
    return await work();
  } catch (error) {
    notice(error.message);
    return undefined;
  }
}

// ------------------------------------------------------------------------------- the queue

function queueInfo() { return state.queues.find((queue) => queue.name === state.queue) || null; }
function passedKey() { return `review-passed-${state.queue}-${state.reviewer}`; }
function passed() { return JSON.parse(sessionStorage.getItem(passedKey()) || "[]"); }
function pass(itemId) {
  const list = passed();
  if (!list.includes(itemId)) list.push(itemId);
  sessionStorage.setItem(passedKey(), JSON.stringify(list));
}

function showProgress(info) {
  const index = state.queues.findIndex((queue) => queue.name === info.name);
  if (index >= 0) state.queues[index] = info; else state.queues.unshift(info);
  const line = `${info.items} item${info.items === 1 ? "" : "s"} of ${info.source} for ${info.scorer}; ` +
    `${info.labels_per_item} ${info.labels_per_item === 1 ? "person" : "people"} per item. You labelled ${info.mine.length}; ` +
    `${info.done} item${info.done === 1 ? " has its" : "s have their"} label, ${info.disagreed} disagreed on.`;
  $("#progress-line").textContent = line;
}

function fillQueues() {
  const select = $("#queue");
  select.replaceChildren(...state.queues.map((queue) => el("option", {value: queue.name, text: `${queue.name} (${queue.scorer})`})));
  if (!state.queues.length) select.append(el("option", {value: "", text: "no queue yet"}));
  if (state.queue) select.value = state.queue;
}

async function loadState() {
  const found = await api("review/state");
  state.queues = found.queues;
  state.runs = found.runs;
  $("#declared").replaceChildren(...found.declared.map((queue) => el("option", {value: queue.name, text: `declared for ${queue.scorer}`})));
  const kept = localStorage.getItem("review-queue");
  state.queue = state.queues.some((queue) => queue.name === kept) ? kept : (state.queues[0] || {}).name || null;
  fillQueues();
  fillRuns();
}

async function pickQueue(name) {
  state.queue = name;
  localStorage.setItem("review-queue", name);
  state.browsing = null;
  if (!name) { showEmpty("No queue yet: make one from a stored run under New queue."); return; }
  await nextItem();
  if (!$("#view-agreement").hidden) await showAgreement();
}

// -------------------------------------------------------------------------------- the item

function showEmpty(message, again = false) {
  $("#reviewing").hidden = true;
  $("#empty").hidden = false;
  $("#empty").replaceChildren(message, ...(again ? [" ", el("button", {id: "look-again", type: "button", onclick: () => attempt(nextItem)}, "Look again ", el("kbd", {text: "→"}))] : []));
  state.item = null;
}

async function nextItem() {
  const found = await api("review/next", {queue: state.queue, reviewer: state.reviewer, passed: passed()});
  showProgress(found.queue);
  state.browsing = null;
  if (!found.item) {
    const skipped = passed().length;
    const held = found.held_by_others || 0;
    if (held) {
      showEmpty(`${held} item${held === 1 ? " still needs" : "s still need"} your label, but someone else is labelling ${held === 1 ? "it" : "them"} right now. `
        + `${held === 1 ? "It comes" : "They come"} back to you once they are done.`, true);
      return;
    }
    showEmpty(skipped
      ? `Nothing left for you but the ${skipped} item${skipped === 1 ? "" : "s"} you skipped. Reload the page to see ${skipped === 1 ? "it" : "them"} again, or look at the agreement.`
      : "Nothing left for you in this queue: every item has your label, or enough labels. Thank you! The Agreement tab shows where people stand.");
    return;
  }
  showItem(found.item);
}

function textBlock(text, highlights) {
  const block = el("pre", {class: "field-text"});
  if (typeof text !== "string") { block.textContent = JSON.stringify(text, null, 2); return block; }
  let at = 0;
  for (const span of highlights || []) {
    block.append(text.slice(at, span.start));
    block.append(el("mark", {class: "claim", "data-claim": String(span.claim), title: `claim ${span.claim + 1}`},
      text.slice(span.start, span.end), el("sup", {text: String(span.claim + 1)})));
    at = span.end;
  }
  block.append(text.slice(at));
  return block;
}

const FIELD_TITLES = {input: "Input", turns: "Conversation", output: "Output", tool_calls: "Tool calls", context: "Context", ground_truth: "Ground truth", metadata: "Metadata"};

function messageText(message) {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) return message.content.map((part) => part.text || JSON.stringify(part)).join("\n");
  return message.content === undefined || message.content === null ? "" : JSON.stringify(message.content);
}

function fieldBody(name, value, item) {
  if (name === "output") return textBlock(value, item.highlights);
  if (name === "context" && Array.isArray(value)) return el("ol", {class: "passages"}, ...value.map((passage) => el("li", {}, textBlock(passage))));
  if (name === "turns" && Array.isArray(value)) {
    return el("ol", {class: "turns"}, ...value.map((message) => el("li", {class: `turn ${message.role || ""}`},
      el("strong", {text: message.role || "message"}), textBlock(messageText(message)),
      ...(message.tool_calls || []).map((call) => el("code", {class: "call", text: `${(call.function || call).name}(${(call.function || call).arguments || ""})`})))));
  }
  if (name === "tool_calls" && Array.isArray(value)) {
    return el("ol", {class: "calls"}, ...value.map((call) => el("li", {}, el("code", {text: `${call.tool_name || call.name}(${JSON.stringify(call.args ?? call.arguments ?? {})})`}))));
  }
  return textBlock(typeof value === "string" ? value : JSON.stringify(value, null, 2));
}

// An item of an app's trace: one row per span, indented under its parent, the scored span marked;
// a tool span shows its call and result, a retrieval span its documents.
function traceRows(nodes, depth, scored) {
  const short = (value) => { const text = typeof value === "string" ? value : JSON.stringify(value); return text.length > 300 ? text.slice(0, 299) + "…" : text; };
  return nodes.flatMap((span) => {
    const detail = span.tool ? [`${span.tool.name}(${short(span.tool.arguments ?? "")}) -> ${short(span.tool.result ?? "")}`] : (span.documents || []).map(short);
    const row = el("tr", {class: span.span_id === scored ? "scored" : ""},
      el("td", {style: `padding-left: ${8 + depth * 16}px`, text: span.name + (span.status === "error" ? " (error)" : "")}),
      el("td", {text: span.kind || ""}), el("td", {class: "num", text: figure(span.start_ms)}), el("td", {class: "num", text: figure(span.duration_ms)}),
      el("td", {}, ...detail.map((line) => el("div", {class: "span-detail", text: line}))));
    return [row, ...traceRows(span.children || [], depth + 1, scored)];
  });
}

function traceTable(item) {
  const head = el("tr", {}, ...["span", "kind", "start ms", "ms", "what it did"].map((text) => el("th", {text})));
  return el("table", {class: "trace"}, head, ...traceRows(item.trace, 0, item.scored_span));
}

function showItem(item) {
  state.item = item;
  $("#empty").hidden = true;
  $("#reviewing").hidden = false;
  const info = queueInfo();
  $("#item-title").textContent = `Item ${item.item_id}` + (state.browsing !== null ? " (labelled before)" : "");
  $("#fields").replaceChildren(...item.order.map((name) => el("section", {class: `field field-${name}`},
    el("h3", {text: FIELD_TITLES[name] || name}), fieldBody(name, item.fields[name], item))),
    ...(item.trace.length ? [el("section", {class: "field field-trace"}, el("h3", {text: "Trace"}), traceTable(item))] : []));
  $("#instructions").textContent = info ? info.instructions : "";
  const own = item.label;
  state.choice = own ? own.value : null;
  state.answers = own && own.answers.length ? [...own.answers] : item.entries.map(() => null);
  state.claim = 0;
  $("#note").value = own && own.note ? own.note : "";
  $("#save-word").textContent = own ? "Change label" : "Save label";
  $("#note-box").hidden = !(info && info.note);
  renderChoices();
  renderAnswers();
  renderJudge();
}

function labelKinds() {
  const info = queueInfo();
  const label = info ? info.label : {kind: "verdict"};
  if (label.kind === "verdict") return [{value: false, text: "Pass", key: "P"}, {value: true, text: "Flag", key: "F"}];
  if (label.kind === "category") return label.categories.map((name, index) => ({value: name, text: name, key: String(index + 1)}));
  return null;
}

function renderChoices() {
  const box = $("#label-choices");
  const kinds = labelKinds();
  if (kinds === null) {
    const info = queueInfo();
    const input = el("input", {id: "score", type: "number", min: "0", max: String(info.scale), step: "any", inputmode: "decimal",
      "aria-label": `A number from 0 to ${info.scale}`, value: state.choice === null ? "" : String(state.choice)});
    input.addEventListener("input", () => { state.choice = input.value === "" ? null : Number(input.value); });
    box.replaceChildren(el("label", {}, `A number from 0 to ${figure(info.scale)} `, input, el("kbd", {text: "V"})));
    return;
  }
  box.replaceChildren(...kinds.map((kind) => el("button", {
    type: "button", class: `choice ${state.choice === kind.value ? "chosen" : ""}`, "aria-pressed": String(state.choice === kind.value),
    onclick: () => choose(kind.value),
  }, kind.text, " ", el("kbd", {text: kind.key}))));
}

function choose(value) {
  state.choice = value;
  renderChoices();
}

function renderAnswers() {
  const item = state.item;
  const info = queueInfo();
  $("#answers-box").hidden = !item.entries.length;
  $("#answers").replaceChildren(...item.entries.map((entry, index) => {
    const row = el("li", {class: `answer-row ${index === state.claim ? "current" : ""}`, "data-claim": String(index)},
      el("span", {class: "claim-text", text: entry.text}));
    const buttons = el("span", {class: "answer-choices"}, ...info.choices.map((choice, number) => el("button", {
      type: "button", class: `choice small ${state.answers[index] === choice ? "chosen" : ""}`, "aria-pressed": String(state.answers[index] === choice),
      "aria-label": `claim ${index + 1}: ${choice}`, onclick: () => { state.claim = index; answer(choice); },
    }, choice, " ", el("kbd", {text: `⇧${number + 1}`}))));
    row.append(buttons);
    if (entry.judged !== undefined) {
      const differs = state.answers[index] !== null && state.answers[index] !== entry.judged;
      row.append(el("span", {class: `judged ${differs ? "differs" : ""}`, text: `judge: ${entry.judged}${differs ? " (you differ)" : ""}`}));
    }
    return row;
  }));
  for (const mark of document.querySelectorAll("mark.claim")) mark.classList.toggle("current", Number(mark.dataset.claim) === state.claim);
}

function answer(choice) {
  state.answers[state.claim] = state.answers[state.claim] === choice ? null : choice;
  if (state.claim < state.answers.length - 1) state.claim += 1;
  renderAnswers();
}

function renderJudge() {
  const item = state.item;
  const judged = item.judged;
  $("#judge-box").hidden = !judged;
  $("#hidden-judge").hidden = item.revealed || !item.has_judge || !queueInfo() || !queueInfo().blind;
  if (!judged) return;
  if (judged.score === null || judged.score === undefined) {
    $("#judge-line").textContent = `The judge did not score this item: ${judged.error || judged.outcome}.`;
    $("#judge-reason").textContent = "";
    return;
  }
  const verdict = item.judge_flags ? "flag" : "pass";
  let line = `Score ${figure(judged.score)}: the judge would ${verdict} it.`;
  if (item.label) {
    const yours = typeof item.label.value === "boolean" ? (item.label.value ? "flag" : "pass") : null;
    if (yours !== null) line += yours === verdict ? " You agree." : ` You said ${yours}.`;
  }
  $("#judge-line").textContent = line;
  $("#judge-reason").textContent = judged.reason ? `Its reason: ${judged.reason}` : "";
}

async function saveLabel() {
  if (!state.item || $("#reviewing").hasAttribute("aria-busy")) return;
  if (state.choice === null || state.choice === undefined || Number.isNaN(state.choice)) {
    notice("Choose a label first (the keys are listed under the buttons).");
    return;
  }
  const answers = state.answers.some((value) => value !== null) ? state.answers : [];
  const found = await attempt(() => api("review/label", {
    queue: state.queue, reviewer: state.reviewer, item_id: state.item.item_id, value: state.choice, answers, note: $("#note").value,
  }));
  if (!found) return;
  showProgress(found.queue);
  showItem(found.item);
  notice("Label saved. Next item: → or Next.", "info");
}

async function previous() {
  const info = queueInfo();
  const mine = info ? info.mine : [];
  if (!mine.length) { notice("You have not labelled an item of this queue yet.", "info"); return; }
  const at = state.browsing === null ? mine.length : state.browsing;
  const index = state.item && mine.includes(state.item.item_id) && state.browsing === null ? mine.indexOf(state.item.item_id) - 1 : at - 1;
  if (index < 0) { notice("This is the first item you labelled.", "info"); return; }
  if (state.item && !state.item.label && state.browsing === null) await attempt(() => api("review/release", {queue: state.queue, reviewer: state.reviewer}));
  const found = await attempt(() => api("review/open", {queue: state.queue, reviewer: state.reviewer, item_id: mine[index]}));
  if (!found) return;
  showProgress(found.queue);
  state.browsing = index;
  showItem(found.item);
}

async function next() {
  const info = queueInfo();
  if (state.browsing !== null && info && state.browsing + 1 < info.mine.length) {
    const index = state.browsing + 1;
    const found = await attempt(() => api("review/open", {queue: state.queue, reviewer: state.reviewer, item_id: info.mine[index]}));
    if (!found) return;
    state.browsing = index;
    showItem(found.item);
    return;
  }
  if (state.item && !state.item.label && state.browsing === null) pass(state.item.item_id);
  await attempt(nextItem);
}

async function skip() {
  if (!state.item) return;
  if (!state.item.label) pass(state.item.item_id);
  await attempt(() => api("review/release", {queue: state.queue, reviewer: state.reviewer}));
  await attempt(nextItem);
}

function typing(event) {
  const target = event.target;
  return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "checkbox") || target.tagName === "SELECT");
}

function setupKeys() {
  document.addEventListener("keydown", (event) => {
    if ($("#reviewing").hasAttribute("aria-busy")) return;
    if ($("#view-label").hidden || $("#desk").hidden || event.ctrlKey || event.metaKey || event.altKey) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && state.item) { event.preventDefault(); saveLabel(); }
      return;
    }
    if (!state.item) {  // nothing open: only going back to an earlier item
      if (event.key === "ArrowLeft" && !typing(event)) { event.preventDefault(); previous(); }
      if (event.key === "ArrowRight" && !typing(event) && $("#look-again")) { event.preventDefault(); attempt(nextItem); }
      return;
    }
    if (typing(event)) {
      if (event.key === "Escape") event.target.blur();
      if (event.key === "Enter" && event.target.id === "score") { event.preventDefault(); saveLabel(); }
      return;
    }
    const kinds = labelKinds();
    const key = event.key.toUpperCase();
    if (event.shiftKey && /^Digit[1-9]$/.test(event.code) && state.item.entries.length) {
      const choice = queueInfo().choices[Number(event.code.slice(5)) - 1];
      if (choice !== undefined) { event.preventDefault(); answer(choice); }
      return;
    }
    const picked = kinds && kinds.find((kind) => kind.key === key);
    if (picked) { event.preventDefault(); choose(picked.value); return; }
    if (key === "V" && !kinds) { event.preventDefault(); $("#score").focus(); return; }
    if (key === "N" && !$("#note-box").hidden) { event.preventDefault(); $("#note").focus(); return; }
    if (key === "C" && state.item.entries.length) { event.preventDefault(); state.claim = (state.claim + 1) % state.item.entries.length; renderAnswers(); return; }
    if (event.key === "Enter") { event.preventDefault(); saveLabel(); return; }
    if (event.key === "ArrowLeft") { event.preventDefault(); previous(); return; }
    if (event.key === "ArrowRight") { event.preventDefault(); next(); return; }
    if (key === "S") { event.preventDefault(); skip(); }
  });
}

function keysLine() {
  const kinds = labelKinds();
  const main = kinds ? kinds.map((kind) => `${kind.key} ${kind.text}`).join(", ") : "V the number, Enter to save";
  const claims = state.item && state.item.entries.length ? "; C next claim, ⇧1… its answer" : "";
  return `Keys: ${main}${claims}; N note; Enter save; ← previous, → next, S skip.`;
}

// --------------------------------------------------------------------------- the agreement

async function showAgreement() {
  if (!state.queue) return;
  const report = await attempt(() => api("review/report", {queue: state.queue}));
  if (!report) return;
  const people = report.people;
  $("#agreement-head").textContent = `${people.items} items, ${people.labels} labels by ${people.reviewers.length} reviewer${people.reviewers.length === 1 ? "" : "s"} ` +
    `(${people.reviewers.join(", ") || "none yet"}); ${people.complete_items} with their label, ${people.settled} settled.`;
  $("#people tbody").replaceChildren(...people.figures.map((found) => el("tr", {},
    el("th", {scope: "row", text: found.name}), el("td", {class: "left", text: found.what}), el("td", {text: figure(found.estimate.value)}),
    el("td", {text: interval(found.estimate)}), el("td", {text: String(found.items)}))));
  $("#people-empty").hidden = people.figures.length > 0;
  const judge = report.judge;
  const rows = [];
  if (judge && judge.binary) {
    for (const [name, title] of [["accuracy", "accuracy"], ["kappa", "Cohen's kappa"], ["f1", "F1"], ["precision", "precision"], ["recall", "recall"]]) {
      rows.push(el("tr", {}, el("th", {scope: "row", text: title}), el("td", {text: figure(judge.binary[name].value)}), el("td", {text: interval(judge.binary[name])})));
    }
  }
  if (judge && judge.numeric) {
    for (const [name, title] of [["mean_abs_error", "mean absolute error"], ["spearman", "Spearman rho"]]) {
      rows.push(el("tr", {}, el("th", {scope: "row", text: title}), el("td", {text: figure(judge.numeric[name].value)}), el("td", {text: interval(judge.numeric[name])})));
    }
  }
  $("#judge-figures tbody").replaceChildren(...rows);
  $("#judge-title").textContent = judge ? `The judge against people's labels (${judge.labelled} items settled or agreed on)` : "The judge against people's labels";
  $("#judge-empty").hidden = rows.length > 0;
  const answers = report.answers;
  $("#answers-agreement").hidden = !answers;
  if (answers) {
    const same = Math.round(answers.estimate.value * answers.compared);
    $("#answers-line").textContent = `On ${answers.compared} claim${answers.compared === 1 ? "" : "s"} people answered, the judge said what they said on ${same} ` +
      `(${figure(answers.estimate.value)}, 95% interval ${interval(answers.estimate)}).`;
    $("#wrong-answers").hidden = !answers.wrong.length;
    $("#wrong-answers tbody").replaceChildren(...answers.wrong.map((wrong) => el("tr", {},
      el("th", {scope: "row", text: wrong.item_id}), el("td", {class: "reason", text: `${wrong.position}. ${wrong.text}`}),
      el("td", {text: String(wrong.judge)}), el("td", {text: wrong.people}))));
  }
  $("#ceiling").textContent = report.ceiling_note;
  $("#disagreements-empty").hidden = people.disagreements.length > 0;
  $("#disagreements").hidden = !people.disagreements.length;
  $("#disagreements tbody").replaceChildren(...people.disagreements.map(disagreementRow));
}

// A disagreement as the settler needs it: the question, the answer and the context it is
// judged against, each reviewer's label and note, and the buttons that settle it.
function disagreementRow(verdict) {
  const text = (value) => typeof value === "string" ? value : JSON.stringify(value);
  const context = Array.isArray(verdict.context) ? verdict.context : verdict.context ? [verdict.context] : [];
  const item = el("td", {class: "reason"},
    ...(verdict.input ? [el("p", {class: "settle-input"}, el("strong", {text: "Input: "}), text(verdict.input))] : []),
    el("p", {class: "settle-output"}, el("strong", {text: "Output: "}), text(verdict.output)),
    ...(context.length ? [el("details", {class: "settle-context", open: ""}, el("summary", {text: `Context (${context.length})`}),
      el("ul", {}, ...context.map((entry) => el("li", {text: text(entry)}))))] : []));
  return el("tr", {"data-item": verdict.item_id},
    el("th", {scope: "row", text: verdict.item_id}), item,
    el("td", {text: verdict.labels.map((label) => `${label.reviewer}: ${shown(label.value)}${label.note ? ` ("${label.note}")` : ""}`).join("; ")}),
    el("td", {}, settleControls(verdict)));
}

function settleControls(verdict) {
  const kinds = labelKinds();
  const settle = (value) => attempt(async () => {
    await api("review/settle", {queue: state.queue, item_id: verdict.item_id, value, by: state.reviewer});
    await showAgreement();
    const said = `Item ${verdict.item_id} settled as ${shown(value)} by ${state.reviewer}.`;
    notice(said, "info");
    // The way back: the item settled last can be settled again (a settlement replaces the one before).
    $("#settled-last-text").textContent = said;
    $("#settled-last").hidden = false;
    $("#settle-again").onclick = () => {
      $("#settled-last").hidden = true;
      $("#disagreements").hidden = false;
      $("#disagreements-empty").hidden = true;
      $("#disagreements tbody").prepend(disagreementRow(verdict));
    };
  });
  if (kinds) return el("span", {class: "buttons"}, ...kinds.map((kind) => el("button", {type: "button", "aria-label": `settle ${verdict.item_id} as ${kind.text}`, onclick: () => settle(kind.value)}, kind.text)));
  const input = el("input", {type: "number", min: "0", step: "any", "aria-label": `final number for ${verdict.item_id}`});
  return el("span", {class: "buttons"}, input, el("button", {type: "button", onclick: () => settle(Number(input.value))}, "Settle"));
}

// ------------------------------------------------------------------------------ new queues

function fillRuns() {
  const runs = state.runs;
  $("#new-run").replaceChildren(...runs.map((run) => el("option", {value: run.name, text: `${run.name} (${run.kind})`})));
  $("#flips-run").replaceChildren(...runs.map((run) => el("option", {value: run.name, text: run.name})));
  fillScorers();
}

function fillScorers() {
  const run = state.runs.find((found) => found.name === $("#new-run").value);
  $("#new-scorer").replaceChildren(...(run ? run.scorers : []).map((scorer) => el("option", {value: scorer, text: scorer})));
}

async function createQueue(event) {
  event.preventDefault();
  const filters = [...document.querySelectorAll('input[name="filter"]:checked')].map((box) => box.value === "flips" ? `flips:${$("#flips-run").value}` : box.value);
  const created = await attempt(() => api("review/create", {
    name: $("#new-name").value, run: $("#new-run").value, scorer: $("#new-scorer").value, filters,
    sample: $("#new-sample").value || null, seed: $("#new-seed").value || 0, labels_per_item: $("#new-per-item").value || null,
  }));
  if (!created) return;
  showProgress(created);
  fillQueues();
  $("#queue").value = created.name;
  selectTab("label");
  await attempt(() => pickQueue(created.name));
  notice(`Queue ${created.name} made: ${created.items} items.`, "info");
}

// ----------------------------------------------------------------------------------- start

function selectTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const chosen = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(chosen));
    tab.tabIndex = chosen ? 0 : -1;
    $(`#${tab.getAttribute("aria-controls")}`).hidden = !chosen;
  }
  if (name === "agreement") showAgreement();
}

function startDesk() {
  $("#start").hidden = true;
  $("#desk").hidden = false;
  $("#who").textContent = `Reviewing as ${state.reviewer}`;
  $("#change-name").hidden = false;
}

// While another queue's item is on its way, the one shown is marked busy (and the page not
// ready), so neither a reviewer's key nor a test acts on the queue being left.
async function loading(work) {
  window.reviewReady = false;
  $("#reviewing").setAttribute("aria-busy", "true");
  try {
    await attempt(work);
  } finally {
    $("#reviewing").removeAttribute("aria-busy");
    window.reviewReady = true;
  }
}

async function start() {
  setupKeys();
  for (const tab of document.querySelectorAll('[role="tab"]')) tab.addEventListener("click", () => selectTab(tab.id.slice(4)));
  $("#name-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    state.reviewer = $("#name").value.trim().replace(/\s+/g, " ");
    if (!state.reviewer) return;
    localStorage.setItem("review-name", state.reviewer);
    startDesk();
    await loading(() => pickQueue(state.queue));
  });
  $("#change-name").addEventListener("click", () => {
    localStorage.removeItem("review-name");
    location.reload();
  });
  $("#queue").addEventListener("change", () => loading(() => pickQueue($("#queue").value)));
  $("#label-form").addEventListener("submit", (event) => { event.preventDefault(); saveLabel(); });
  $("#previous").addEventListener("click", previous);
  $("#next").addEventListener("click", next);
  $("#skip").addEventListener("click", skip);
  $("#new-run").addEventListener("change", fillScorers);
  $("#new-form").addEventListener("submit", createQueue);
  window.addEventListener("pagehide", () => {
    if (state.queue && state.item && !state.item.label) {
      fetch("/api/review/release", {method: "POST", keepalive: true, headers: {"Content-Type": "application/json", "X-Workbench-Session": SESSION},
        body: JSON.stringify({queue: state.queue, reviewer: state.reviewer})});
    }
  });
  await attempt(loadState);
  const observer = new MutationObserver(() => { $("#keys").textContent = keysLine(); });
  observer.observe($("#label-choices"), {childList: true});
  if (!state.reviewer) {
    $("#start").hidden = false;
    $("#name").focus();
    window.reviewReady = true;
    return;
  }
  startDesk();
  await attempt(() => pickQueue(state.queue));
  window.reviewReady = true;
}

start();
