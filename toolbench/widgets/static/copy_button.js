// A button that copies its `text` to the clipboard in the click itself (the browser allows the
// clipboard only within a person's gesture), then tells the kernel how it went.
function render({ model, el }) {
  const button = document.createElement("button");
  button.className = "jupyter-button widget-button";
  el.classList.add("widget-inline-hbox");
  el.append(button);
  const sync = () => {
    button.textContent = model.get("description");
    button.title = model.get("tooltip");
    button.disabled = model.get("disabled");
  };
  const onClick = async () => {
    try {
      await navigator.clipboard.writeText(model.get("text"));
      model.send({ kind: "copied" });
    } catch (error) {
      model.send({ kind: "refused", why: String(error && error.message ? error.message : error) });
    }
  };
  button.addEventListener("click", onClick);
  model.on("change:description change:tooltip change:disabled", sync);
  sync();
  return () => model.off("change:description change:tooltip change:disabled", sync);
}

export default { render };
