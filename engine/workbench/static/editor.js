// A small code editor: a textarea over a highlighted copy of its text, with a gutter of line
// numbers. The textarea does the editing (undo, selection, IME, screen readers); the copy
// beneath it only colours YAML and Jinja and marks the lines with a problem.
"use strict";

(function () {
  function escapeHtml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // Each rule: a regular expression (sticky) and the class of what it matches.
  const RULES = {
    yaml: [
      [/#.*/y, "c-comment"],
      [/"(?:[^"\\\n]|\\.)*"?|'(?:[^'\n]|'')*'?/y, "c-string"],
      [/(?:^|(?<=\s))-(?=\s)/y, "c-punct"],
      [/[A-Za-z_][\w.-]*(?=\s*:(?:\s|$))/y, "c-key"],
      [/\b(?:true|false|null)\b/y, "c-literal"],
      [/-?\b\d+(?:\.\d+)?\b/y, "c-number"],
      [/\{\{.*?\}\}/y, "c-jinja"],
    ],
    jinja: [
      [/\{#[\s\S]*?(?:#\}|$)/y, "c-comment"],
      [/\{%-?[\s\S]*?(?:-?%\}|$)/y, "c-tag"],
      [/\{\{-?[\s\S]*?(?:-?\}\}|$)/y, "c-jinja"],
      [/<\/?[A-Za-z_][\w-]*>/y, "c-punct"],
    ],
    text: [],
  };

  function highlightLine(line, language) {
    const rules = RULES[language] || [];
    let out = "";
    let plain = "";
    let at = 0;
    outer: while (at < line.length) {
      for (const [pattern, cls] of rules) {
        pattern.lastIndex = at;
        const found = pattern.exec(line);
        if (found && found[0].length) {
          out += escapeHtml(plain);
          plain = "";
          out += `<span class="${cls}">${escapeHtml(found[0])}</span>`;
          at += found[0].length;
          continue outer;
        }
      }
      plain += line[at];
      at += 1;
    }
    return out + escapeHtml(plain);
  }

  class CodeEditor {
    constructor(host, onChange) {
      this.host = host;
      this.onChange = onChange;
      this.language = "text";
      this.problems = new Map();
      host.classList.add("code-editor");
      host.innerHTML = '<div class="gutter-box" aria-hidden="true"><div class="gutter"></div></div><div class="code"><pre class="shade" aria-hidden="true"></pre><textarea spellcheck="false" autocapitalize="off" autocomplete="off" wrap="off"></textarea></div>';
      this.gutter = host.querySelector(".gutter");
      this.shade = host.querySelector(".shade");
      this.area = host.querySelector("textarea");
      this.area.addEventListener("input", () => { this.render(); this.onChange(this.area.value); });
      this.area.addEventListener("scroll", () => this.syncScroll());
      this.area.addEventListener("keydown", (event) => this.keydown(event));
    }

    set(text, language, label) {
      this.language = language;
      this.area.value = text;
      this.area.setAttribute("aria-label", label);
      this.area.scrollTop = 0;
      this.render();
    }

    get value() { return this.area.value; }

    set readOnly(flag) { this.area.readOnly = flag; this.host.classList.toggle("read-only", flag); }

    // line number -> message, for the lines a check found wrong
    mark(problems) {
      this.problems = problems;
      this.render();
    }

    render() {
      const lines = this.area.value.split("\n");
      let numbers = "";
      let shaded = "";
      lines.forEach((line, index) => {
        const problem = this.problems.get(index + 1);
        const attrs = problem ? ` class="bad" title="${escapeHtml(problem).replace(/"/g, "&quot;")}"` : "";
        numbers += `<div${attrs} data-line="${index + 1}">${index + 1}</div>`;
        shaded += `<div class="line${problem ? " bad" : ""}">${highlightLine(line, this.language) || " "}</div>`;
      });
      this.gutter.innerHTML = numbers;
      this.shade.innerHTML = shaded;
      this.syncScroll();
    }

    syncScroll() {
      this.shade.style.transform = `translate(${-this.area.scrollLeft}px, ${-this.area.scrollTop}px)`;
      this.gutter.style.transform = `translateY(${-this.area.scrollTop}px)`;
    }

    keydown(event) {
      // Tab indents by two spaces (YAML needs spaces); Escape then Tab leaves the editor.
      if (event.key === "Escape") { this.escaped = true; return; }
      if (event.key === "Tab" && !event.shiftKey && !this.escaped && !this.area.readOnly) {
        event.preventDefault();
        document.execCommand("insertText", false, "  ");
      }
      if (event.key !== "Tab") this.escaped = false;
    }

    goTo(line) {
      const lines = this.area.value.split("\n");
      const offset = lines.slice(0, Math.max(line - 1, 0)).reduce((sum, text) => sum + text.length + 1, 0);
      this.area.focus();
      this.area.setSelectionRange(offset, offset + (lines[line - 1] || "").length);
      const lineHeight = parseFloat(getComputedStyle(this.area).lineHeight) || 18;
      this.area.scrollTop = Math.max((line - 4) * lineHeight, 0);
      this.syncScroll();
    }
  }

  window.CodeEditor = CodeEditor;
})();
