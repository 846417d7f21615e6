package api

import "strings"

// escapeHTML escapes s for HTML text and quoted attributes as
// html.EscapeString does. Neither html/template nor html is linked into the
// API: the template packages are the deliver function's, and html's entity
// tables would weigh on every API function's bootstrap (the pages the API
// serves are written by hand).
var escapeHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace
