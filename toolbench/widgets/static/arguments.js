// The console's argument box: a textarea whose typed text a late example never overwrites,
// and Ctrl+Enter (Cmd+Enter) to call.
//
// Each edit here counts up `edit_seq`. The kernel stamps what it writes with the count it had
// seen (`value_seq`); a text stamped before the person's last edit arrived late (a pick's
// example while they were typing) and is refused: the typed text is sent back instead.
function render({ model, el }) {
  el.classList.add("tb-args");
  const area = document.createElement("textarea");
  area.className = "tb-args-text";
  area.spellcheck = false;
  area.value = model.get("value");
  el.append(area);
  let typed = model.get("edit_seq");

  const sync = () => {
    area.placeholder = model.get("placeholder");
    area.disabled = model.get("disabled");
  };
  const onInput = () => {
    typed = Math.max(typed, model.get("edit_seq")) + 1;
    model.set({ edit_seq: typed, value: area.value });
    model.save_changes();
  };
  const onKey = (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      model.send({ kind: "call", text: area.value });
    }
  };
  const onValue = () => {
    const value = model.get("value");
    if (value === area.value) return;
    if (model.get("value_seq") >= typed) {
      area.value = value;
      return;
    }
    model.set("value", area.value); // written before the kernel saw the last edit: keep what was typed
    model.save_changes();
  };

  area.addEventListener("input", onInput);
  area.addEventListener("keydown", onKey);
  model.on("change:value", onValue);
  model.on("change:placeholder", sync);
  model.on("change:disabled", sync);
  sync();
  return () => {
    model.off("change:value", onValue);
    model.off("change:placeholder", sync);
    model.off("change:disabled", sync);
  };
}

export default { render };
