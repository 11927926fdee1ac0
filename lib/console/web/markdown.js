// @ts-nocheck: browser code, served as is (checked by the browser tests)
// Message bodies to safe DOM: marked turns Markdown into HTML, DOMPurify
// removes everything that could run or load (scripts, handlers, javascript:
// links, forms, styles), highlight.js colours code, and Mermaid draws
// diagrams (loaded only when a message has one, rendered in strict mode and
// sanitised again). No other HTML from a message ever reaches the page.

// A URL the page resolves (the file is served from the embedded library).
const MARKED_URL = "/assets/marked.js";
const { marked } = await import(MARKED_URL);

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "iframe"],
  FORBID_ATTR: ["style", "srcset"],
};

let hooked = false;
function purify() {
  const dompurify = globalThis.DOMPurify;
  if (!hooked) {
    hooked = true;
    dompurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && node.hasAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
      // Only embedded images: a remote one would tell a stranger who reads.
      if (node.tagName === "IMG" && !/^data:image\//.test(node.getAttribute("src") ?? "")) {
        node.replaceWith(
          document.createTextNode(`[image: ${node.getAttribute("alt") || "remote"}]`),
        );
      }
    });
  }
  return dompurify;
}

/** Render `text` (Markdown) into `container`. */
export function renderMarkdown(text, container) {
  const html = marked.parse(text, { gfm: true, async: false });
  container.innerHTML = purify().sanitize(html, PURIFY);
  for (const code of container.querySelectorAll("pre > code")) {
    if (code.classList.contains("language-mermaid")) {
      drawMermaid(code.parentElement, code.textContent ?? "");
    } else if (globalThis.hljs) {
      globalThis.hljs.highlightElement(code);
    }
  }
}

let mermaidReady;
let diagrams = 0;

function loadMermaid() {
  mermaidReady ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = "/assets/mermaid.js";
    script.onload = () => {
      const dark = matchMedia("(prefers-color-scheme: dark)").matches;
      globalThis.mermaid.initialize({
        startOnLoad: false,
        securityLevel: "strict",
        theme: dark ? "dark" : "default",
        // Labels as SVG text, not HTML: the sanitiser keeps SVG only.
        htmlLabels: false,
        flowchart: { htmlLabels: false },
      });
      resolve(globalThis.mermaid);
    };
    script.onerror = () => reject(new Error("Mermaid could not be loaded"));
    document.head.append(script);
  });
  return mermaidReady;
}

async function drawMermaid(pre, source) {
  const figure = document.createElement("figure");
  figure.className = "diagram";
  figure.setAttribute("aria-label", "Diagram");
  pre.replaceWith(figure);
  try {
    const mermaid = await loadMermaid();
    const { svg } = await mermaid.render(`diagram-${++diagrams}`, source);
    figure.innerHTML = purify().sanitize(svg, {
      USE_PROFILES: { svg: true, svgFilters: true },
      ADD_TAGS: ["style"],
    });
  } catch (error) {
    const fallback = document.createElement("pre");
    fallback.textContent = source;
    const note = document.createElement("figcaption");
    note.textContent = `Diagram not drawn: ${error.message ?? error}`;
    figure.replaceChildren(fallback, note);
  }
}
