// The console's entry: the stylesheet and the shell, rendered into #app.
import "./styles.css";
import { render } from "preact";
import { App } from "./app.tsx";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
