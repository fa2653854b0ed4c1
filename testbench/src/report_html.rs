//! The static page of `sbrp reproduce` (`DIR/index.html`): one section per
//! step with the exact command, its verdict and time, the end of its
//! output, and links to every file it wrote (images shown inline). No
//! server, no network: relative links only, no external script or style.
//! A small inline script counts the images that loaded into
//! `<body data-images-loaded data-images-broken>`, which the headless
//! browser test reads.

use std::fmt::Write;

/// One step as run.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    /// Short name, also the anchor and the log's name.
    pub id: String,
    pub title: String,
    /// What the step checks or produces, one sentence.
    pub what: String,
    /// The command line, as a user would type it in the output directory.
    pub command: String,
    /// Exit status; `None` when the step could not be started or was killed.
    pub status: Option<i32>,
    pub secs: f64,
    /// The end of the step's output.
    pub summary: String,
    /// Files the step wrote, relative to the page.
    pub files: Vec<String>,
}

impl StepReport {
    /// Exit 0: passed. 1: a check failed. Anything else: an error.
    pub fn verdict(&self) -> &'static str {
        match self.status {
            Some(0) => "pass",
            Some(1) => "FAILED",
            _ => "ERROR",
        }
    }
}

/// HTML-escaped text.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A relative path as a URL path: each segment percent-encoded where
/// needed (`%`, `#`, `?`, spaces would otherwise change its meaning).
pub fn href(path: &str) -> String {
    let mut o = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' | b'~' => {
                o.push(b as char)
            }
            _ => {
                let _ = write!(o, "%{b:02X}");
            }
        }
    }
    o
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}\
pre{background:#f4f4f4;padding:.6em;overflow-x:auto;font-size:12px}\
code{background:#f4f4f4;padding:0 .2em}\
.pass{color:#176f2c}.FAILED,.ERROR{color:#b00020;font-weight:bold}\
img{max-width:100%;border:1px solid #ddd;margin:.4em 0}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}";

const SCRIPT: &str = "window.addEventListener('load',function(){var ok=0,bad=0;\
document.querySelectorAll('img').forEach(function(i){if(i.complete&&i.naturalWidth>0){ok++}else{bad++}});\
document.body.dataset.imagesLoaded=ok;document.body.dataset.imagesBroken=bad;});";

/// The page. `meta` rows (name, value) go in the header's table.
pub fn index_html(title: &str, meta: &[(String, String)], steps: &[StepReport]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{t}</title><style>{STYLE}</style><script>{SCRIPT}</script></head>\n<body>\n<h1>{t}</h1>\n",
        t = escape(title)
    );
    h += "<table>\n";
    for (k, v) in meta {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    h += "</table>\n<h2>Steps</h2>\n<table>\n<tr><th>step</th><th>verdict</th><th>seconds</th></tr>\n";
    for s in steps {
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#{id}\">{t}</a></td><td class=\"{v}\">{v}</td><td>{secs:.1}</td></tr>",
            id = href(&s.id),
            t = escape(&s.title),
            v = s.verdict(),
            secs = s.secs
        );
    }
    h += "</table>\n";
    for s in steps {
        let _ = write!(
            h,
            "<h2 id=\"{id}\">{t} <span class=\"{v}\">({v})</span></h2>\n<p>{what}</p>\n\
             <p>Command (in this directory), {secs:.1} s, exit {status}:</p>\n<pre>{cmd}</pre>\n",
            id = href(&s.id),
            t = escape(&s.title),
            v = s.verdict(),
            what = escape(&s.what),
            secs = s.secs,
            status = s
                .status
                .map(|c| c.to_string())
                .unwrap_or_else(|| "none (not started or killed)".into()),
            cmd = escape(&s.command)
        );
        if !s.summary.is_empty() {
            let _ = writeln!(h, "<pre>{}</pre>", escape(&s.summary));
        }
        for f in s.files.iter().filter(|f| f.ends_with(".png")) {
            let _ = writeln!(
                h,
                "<p><a href=\"{u}\"><img src=\"{u}\" alt=\"{a}\"></a></p>",
                u = href(f),
                a = escape(f)
            );
        }
        if !s.files.is_empty() {
            h += "<ul>\n";
            for f in &s.files {
                let _ = writeln!(h, "<li><a href=\"{}\">{}</a></li>", href(f), escape(f));
            }
            h += "</ul>\n";
        }
    }
    h += "</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, status: Option<i32>, files: &[&str]) -> StepReport {
        StepReport {
            id: id.into(),
            title: format!("Step {id}"),
            what: "checks <things> & more".into(),
            command: "sbrp suite --out suite".into(),
            status,
            secs: 1.25,
            summary: "a < b".into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn the_page_escapes_text_links_every_file_and_shows_images() {
        let h = index_html(
            "Report",
            &[("host".into(), "x<y".into())],
            &[
                step("suite", Some(0), &["suite/fig6.png", "suite/fig6.csv"]),
                step("lint", Some(1), &["rtl/a b#1.v"]),
                step("prove", None, &[]),
            ],
        );
        assert!(h.contains("x&lt;y") && h.contains("checks &lt;things&gt; &amp; more"));
        assert!(h.contains("<img src=\"suite/fig6.png\""));
        assert!(h.contains("<a href=\"suite/fig6.csv\">"));
        assert!(h.contains("href=\"rtl/a%20b%231.v\""), "{h}");
        assert!(h.contains("class=\"pass\">pass") && h.contains("class=\"FAILED\">FAILED"));
        assert!(h.contains("class=\"ERROR\">ERROR") && h.contains("none (not started"));
        // Nothing outside the page: no absolute or remote reference.
        for bad in ["http:", "https:", "src=\"/", "href=\"/"] {
            assert!(!h.contains(bad), "{bad}");
        }
    }
}
