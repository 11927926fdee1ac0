/**
 * Attachments that would act in the console's origin if a browser ever ran
 * them: each sets the page title to "ran" and creates a topic named
 * `pwned-…` through the REST API.
 *
 * @module
 */

/** An SVG that would create a topic from the console's origin if it ever ran. */
export const HOSTILE_SVG = `<svg xmlns="http://www.w3.org/2000/svg"><script>
document.title = "ran";
fetch("/api/topics", {method: "POST", headers: {"content-type": "application/json"},
  body: JSON.stringify({name: "pwned-by-svg"})});
</script></svg>`;
/** The same as an HTML page. */
export const HOSTILE_HTML = `<!doctype html><title>x</title><script>
document.title = "ran";
fetch("/api/topics", {method: "POST", headers: {"content-type": "application/json"},
  body: JSON.stringify({name: "pwned-by-html"})});
</script>`;
