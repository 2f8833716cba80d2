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
      // Focus that arrives by the keyboard (tabbing through the page) leaves by the keyboard:
      // its first Tab moves on; a click or any other key starts editing.
      this.area.addEventListener("pointerdown", () => { this.clicked = true; this.passing = false; });
      this.area.addEventListener("focus", () => { this.passing = !this.clicked; this.clicked = false; });
    }

    set(text, language, label) {
      this.language = language;
      this.area.value = text;
      this.area.setSelectionRange(0, 0);
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

    // Tab indents (two spaces: YAML allows no tabs) only where the indentation is allowed: the
    // caret in a line's indentation, at most one level deeper than the line above opens (a key
    // ending in ":" or a list's "-" opens one; the first line, none). Anywhere else Tab moves
    // the focus on, as on the rest of the page, so tabbing through never edits a file. With
    // lines selected, Tab indents them and Shift+Tab takes two spaces off them. Escape, then
    // Tab, always moves on.
    keydown(event) {
      const escaped = this.escaped;
      const passing = this.passing;
      this.escaped = event.key === "Escape";
      if (event.key !== "Shift") this.passing = false;
      if (event.key !== "Tab" || escaped || passing || this.area.readOnly || event.ctrlKey || event.altKey || event.metaKey) return;
      const change = event.shiftKey ? this.dedent() : this.indent();
      if (change === null) return;  // nothing to indent here: the focus moves on
      event.preventDefault();
      this.area.setSelectionRange(change.start, change.end);
      document.execCommand("insertText", false, change.text);
      if (change.caret !== undefined) this.area.setSelectionRange(change.caret, change.caret);
    }

    // The selected lines (or the caret's): their start and end offsets and their text.
    lines() {
      const value = this.area.value;
      const start = value.lastIndexOf("\n", this.area.selectionStart - 1) + 1;
      let end = value.indexOf("\n", this.area.selectionEnd - (this.area.selectionEnd > this.area.selectionStart && value[this.area.selectionEnd - 1] === "\n" ? 1 : 0));
      if (end === -1) end = value.length;
      return {start, end, text: value.slice(start, end)};
    }

    // The deepest indentation line `index` may have: what the line above it opens.
    allowedIndent(all, index) {
      for (let above = index - 1; above >= 0; above -= 1) {
        const line = all[above];
        const bare = line.replace(/\s+#.*$/, "").trimEnd();
        if (!bare.trim() || bare.trim().startsWith("#")) continue;
        const indent = line.length - line.trimStart().length;
        const item = /^\s*-(\s|$)/.test(line);
        const content = item ? indent + 2 : indent;
        const opens = /:$/.test(bare) || /:\s*[|>][-+0-9]*$/.test(bare) || /^\s*-$/.test(bare) || (this.language !== "yaml" && /(%\}|\{\{-?|\[|\{)$/.test(bare));
        return content + (opens ? 2 : 0);
      }
      return 0;
    }

    indent() {
      const value = this.area.value;
      const {start, end, text} = this.lines();
      const all = value.slice(0, start).split("\n");
      const first = all.length - 1;
      const selected = text.split("\n");
      const multi = selected.length > 1;
      const lead = selected[0].length - selected[0].trimStart().length;
      if (!multi && this.area.selectionStart - start > lead) return null;  // inside the text of the line
      if (!multi && this.area.selectionEnd !== this.area.selectionStart) return null;
      const lines = value.split("\n");
      if (lead + 2 > this.allowedIndent(lines, first)) return null;
      if (multi) {
        const indented = selected.map((line) => (line.trim() ? "  " + line : line)).join("\n");
        return {start, end, text: indented};
      }
      const caret = this.area.selectionStart;
      return {start: caret, end: caret, text: "  "};
    }

    dedent() {
      const {start, end, text} = this.lines();
      const selected = text.split("\n");
      if (!selected.some((line) => line.startsWith(" "))) return null;
      const caret = this.area.selectionStart;
      const taken = Math.min(2, selected[0].length - selected[0].trimStart().length);
      const dedented = selected.map((line) => line.replace(/^ {1,2}/, "")).join("\n");
      return {start, end, text: dedented, caret: selected.length > 1 ? undefined : Math.max(start, caret - taken)};
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
