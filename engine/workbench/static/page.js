// What both pages of the workbench (the editor and the review page) need: elements, figures as
// the CLI prints them, the API with this page's session key, and the notice line.
"use strict";

const $ = (selector) => document.querySelector(selector);

// Every API request carries the key the server wrote into this page (see app.py): a page of
// another origin has no way to read it, nor to send the header without the server's consent.
const SESSION = document.querySelector('meta[name="workbench-session"]').content;

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
function interval(estimate) {
  return estimate && estimate.low !== null && estimate.low !== undefined ? `${figure(estimate.low)} to ${figure(estimate.high)}` : "-";
}

async function api(name, body) {
  const response = await fetch(`/api/${name}`, {
    method: "POST", headers: {"Content-Type": "application/json", "X-Workbench-Session": SESSION}, body: JSON.stringify(body || {}),
  });
  const payload = await response.json().catch(() => ({error: `the workbench answered ${response.status}`}));
  if (!response.ok) throw Object.assign(new Error(payload.error || `error ${response.status}`), {payload, status: response.status});
  return payload;
}

// The line under the header: what went wrong (or, as "info", what the page did for you).
function notice(message, kind = "error") {
  const box = $("#notice");
  box.textContent = message || "";
  box.className = kind;
  box.hidden = !message;
}
