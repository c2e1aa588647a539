// The file view's browser side: a virtualised scroll box over rows the kernel renders.
//
// The kernel owns the text and every rule of how a row looks (line number, search marks, the
// line gone to, the preview's end); this side only lays rows out. It draws the rows in view,
// asks the kernel for the ones it has not got (in chunks, a little past the view), and scrolls
// a row into view when the kernel moves `focus`. A file of any length scrolls: past what a
// browser can make tall, the scroll range is scaled onto the rows.
const LINE_PX = 18; // one row; the stylesheet gives .tb-fv-row the same height
const VIEW_ROWS = 24; // the box's height in rows, at most
const CHUNK = 200; // rows asked for at once
const MAX_CACHE = 20000; // rows kept per view
const MAX_PX = 8000000; // under Chromium's and Firefox's largest element heights

function render({ model, el }) {
  el.classList.add("tb-fv");
  const box = document.createElement("div");
  box.className = "tb-fv-scroll";
  box.tabIndex = 0; // focusable: PageUp / PageDown / Home / End page through the file
  const spacer = document.createElement("div");
  spacer.className = "tb-fv-spacer";
  const win = document.createElement("div");
  win.className = "tb-fv-window";
  box.append(spacer, win);
  el.append(box);

  let version = model.get("version");
  let cache = new Map();
  let asked = new Set();
  let frame = 0;
  let report = 0;

  const rowCount = () => model.get("count");
  const viewPx = () => Math.min(Math.max(rowCount(), 1), VIEW_ROWS) * LINE_PX;
  function geometry() {
    const rows = rowCount();
    const view = box.clientHeight || viewPx();
    const full = rows * LINE_PX;
    const tall = Math.min(full, MAX_PX);
    const ratio = full > view && tall > view ? (full - view) / (tall - view) : 1;
    return { rows, view, full, tall, ratio };
  }

  function draw() {
    frame = 0;
    const g = geometry();
    box.style.height = viewPx() + 18 + "px"; // the rows, and room for a horizontal scroll bar
    spacer.style.height = g.tall + "px";
    const at = box.scrollTop * g.ratio;
    const first = Math.min(Math.max(0, Math.floor(at / LINE_PX)), Math.max(0, g.rows - 1));
    const last = Math.min(g.rows, first + Math.ceil(g.view / LINE_PX) + 1);
    win.style.transform = `translateY(${box.scrollTop - (at - first * LINE_PX)}px)`;
    const parts = [];
    let missing = false;
    for (let row = first; row < last; row++) {
      const html = cache.get(row);
      if (html === undefined) missing = true;
      parts.push(`<div class="tb-fv-row" data-row="${row}">${html ?? "<span class='tb-fv-wait'>…</span>"}</div>`);
    }
    win.innerHTML = parts.join("");
    if (missing) want(first, last);
    clearTimeout(report);
    report = setTimeout(() => { // where the person is reading, for the page label
      model.set("top_row", first);
      model.set("shown", last - first);
      model.save_changes();
    }, 120);
  }
  const redraw = () => { if (!frame) frame = requestAnimationFrame(draw); };

  function want(first, last) {
    const from = Math.floor(Math.max(0, first - CHUNK / 2) / CHUNK);
    const to = Math.floor(Math.min(rowCount() - 1, last + CHUNK / 2) / CHUNK);
    let lo = -1, hi = -1;
    for (let chunk = from; chunk <= to; chunk++) {
      if (asked.has(chunk)) continue;
      asked.add(chunk);
      if (lo < 0) lo = chunk;
      hi = chunk;
    }
    if (lo >= 0) model.send({ kind: "want", version, first: lo * CHUNK, last: (hi + 1) * CHUNK });
  }

  function scrollTo(focus) {
    if (!focus || typeof focus.row !== "number") return;
    const g = geometry();
    let at = focus.row * LINE_PX;
    if (focus.align === "center") at -= (g.view - LINE_PX) / 2;
    at = Math.min(Math.max(0, at), Math.max(0, g.full - g.view));
    box.scrollTop = at / g.ratio;
    draw();
  }

  function onMessage(msg) {
    if (!msg || msg.kind !== "rows" || msg.version !== version) return;
    if (cache.size > MAX_CACHE) { cache = new Map(); asked = new Set(); }
    msg.html.forEach((html, i) => cache.set(msg.first + i, html));
    redraw();
  }
  function onVersion() {
    version = model.get("version");
    cache = new Map();
    asked = new Set();
    redraw();
  }
  const onFocus = () => scrollTo(model.get("focus"));

  model.on("msg:custom", onMessage);
  model.on("change:version", onVersion);
  model.on("change:count", redraw);
  model.on("change:focus", onFocus);
  box.addEventListener("scroll", redraw, { passive: true });
  const resized = new ResizeObserver(redraw); // shown after being hidden (a tab, a collapsed box)
  resized.observe(box);
  draw();
  requestAnimationFrame(onFocus);

  return () => {
    resized.disconnect();
    model.off("msg:custom", onMessage);
    model.off("change:version", onVersion);
    model.off("change:count", redraw);
    model.off("change:focus", onFocus);
  };
}

export default { render };
